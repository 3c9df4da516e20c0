// The GPU's launch limits and the one check that applies them, used by the
// emulator (with an H100's limits) and before a real launch (with the card's).
#pragma once
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>

namespace lockstep {

struct device_limits {
  const char* device_name;
  unsigned max_threads_per_block;
  unsigned max_block_dim[3];
  unsigned max_grid_dim[3];
  std::size_t static_shared_per_block;  // also the default dynamic limit
  std::size_t shared_per_block_optin;   // static + dynamic after opting in
};

// NVIDIA H100 (sm_90), as cudaGetDeviceProperties reports it.
inline constexpr device_limits h100_limits{"H100 (sm_90)", 1024, {1024, 1024, 64}, {2147483647u, 65535u, 65535u}, 48 * 1024, 227 * 1024};

// What one streaming multiprocessor holds at once: the numbers CUDA's
// occupancy rules (cuda_occupancy.h) divide a block's needs into.
struct sm_limits {
  unsigned multiprocessors;
  unsigned max_threads;  // resident threads per SM
  unsigned max_blocks;   // resident blocks per SM
  unsigned warp_size;
  unsigned registers;                     // 32-bit registers per SM, split over `register_partitions`
  unsigned register_partitions;           // warps take registers in one of these quarters
  unsigned register_granularity;          // registers are given to a warp in units of this many
  unsigned registers_per_block;           // at most this many per block
  std::size_t shared_bytes;               // shared memory per SM (the largest carveout)
  std::size_t shared_granularity;         // a block's shared memory is rounded up to this
  std::size_t reserved_shared_per_block;  // what the driver keeps for itself in each block
  unsigned clock_khz;                     // the SM clock clock()/clock64() count (cudaDeviceProp::clockRate)
};

// NVIDIA H100 SXM (sm_90): 132 SMs of 2048 threads, 32 blocks, 64K registers, 228 KiB shared, 1.98 GHz boost clock.
inline constexpr sm_limits h100_sm_limits{132, 2048, 32, 32, 65536, 4, 256, 65536, 228 * 1024, 128, 1024, 1980000};

// The registers per thread the emulator reports for every kernel (cudaFuncGetAttributes' numRegs) and
// assumes in occupancy answers: host-compiled kernels have no register count, and 32 is the most at
// which registers never limit residency on an H100 (2048 threads x 32 = 64K), so threads, blocks and
// shared memory decide, as they do for most kernels.
inline constexpr unsigned emulated_registers_per_thread = 32;

// How many blocks of `threads_per_block` threads, each using `registers_per_thread` registers and
// `shared_bytes_per_block` bytes of shared memory (static plus dynamic), one SM holds at once, by
// CUDA's occupancy rules with the largest shared-memory carveout; 0 if one block does not fit.
// Whether the block is a legal launch at all (1024 threads, the 48 KiB opt-in) is check_launch's.
constexpr unsigned max_blocks_per_sm(const sm_limits& sm, unsigned threads_per_block, unsigned registers_per_thread,
                                     std::size_t shared_bytes_per_block) {
  if (threads_per_block == 0) return 0;
  const unsigned warps = (threads_per_block + sm.warp_size - 1) / sm.warp_size;
  unsigned blocks = sm.max_blocks;
  const unsigned by_warps = sm.max_threads / sm.warp_size / warps;
  if (by_warps < blocks) blocks = by_warps;
  const unsigned per_warp = (registers_per_thread * sm.warp_size + sm.register_granularity - 1) / sm.register_granularity * sm.register_granularity;
  if (per_warp > 0) {
    if (per_warp * warps > sm.registers_per_block) return 0;
    const unsigned warps_by_registers = sm.registers / sm.register_partitions / per_warp * sm.register_partitions;
    if (warps_by_registers / warps < blocks) blocks = warps_by_registers / warps;
  }
  const std::size_t shared =
      (shared_bytes_per_block + sm.reserved_shared_per_block + sm.shared_granularity - 1) / sm.shared_granularity * sm.shared_granularity;
  if (shared > sm.shared_bytes) return 0;
  if (sm.shared_bytes / shared < blocks) blocks = static_cast<unsigned>(sm.shared_bytes / shared);
  return blocks;
}

struct launch_shape {
  unsigned grid[3];
  unsigned block[3];
  std::size_t dynamic_shared_bytes;
  std::size_t static_shared_bytes;       // what the kernel's __shared__ arrays take
  std::size_t max_dynamic_shared_bytes;  // the kernel's attribute (48 KiB unless raised)
};

struct launch_problem {
  int cuda_error;  // cudaErrorInvalidValue (1) or cudaErrorCooperativeLaunchTooLarge (720)
  std::string message;
};

// Returns what is wrong with a launch, or nothing; the message names the limit
// and what to change.
inline std::optional<launch_problem> check_launch(const device_limits& limits, const launch_shape& s, const std::string& kernel_name) {
  // An H100 with CUDA 13 answers cudaErrorInvalidValue to every shape it refuses, empty or too large
  // (tests/programs/launch_forms.cu, run on it: bench/RESULTS.md).
  constexpr int invalid_value = 1;
  const char* axis = "xyz";
  // No iostreams here: this header is compiled into kernel modules, and a
  // module whose compiler linked libstdc++ statically has no initialised
  // locale for them (seen with GCC 13 on the H100 image).
  auto extents = [](const unsigned* e) { return "(" + std::to_string(e[0]) + ", " + std::to_string(e[1]) + ", " + std::to_string(e[2]) + ")"; };
  auto problem = [&](int code, const std::string& what) {
    return launch_problem{code,
                          "launch of kernel '" + kernel_name + "' with grid " + extents(s.grid) + " and block " + extents(s.block) + ": " + what};
  };
  for (int d = 0; d < 3; ++d) {
    if (s.block[d] == 0 || s.grid[d] == 0)
      return problem(invalid_value, std::string(s.block[d] == 0 ? "block" : "grid") + " dimension " + axis[d] +
                                        " is 0; every grid and block dimension must be at least 1");
  }
  unsigned long long threads = 1ull * s.block[0] * s.block[1] * s.block[2];
  if (threads > limits.max_threads_per_block)
    return problem(invalid_value, "the block has " + std::to_string(threads) + " threads but the limit is " +
                                      std::to_string(limits.max_threads_per_block) + " threads per block on " + limits.device_name +
                                      "; use smaller blocks and more of them");
  for (int d = 0; d < 3; ++d) {
    if (s.block[d] > limits.max_block_dim[d])
      return problem(invalid_value, std::string("block dimension ") + axis[d] + " is " + std::to_string(s.block[d]) + " but the limit is " +
                                        std::to_string(limits.max_block_dim[d]) + " on " + limits.device_name);
    if (s.grid[d] > limits.max_grid_dim[d])
      return problem(invalid_value, std::string("grid dimension ") + axis[d] + " is " + std::to_string(s.grid[d]) + " but the limit is " +
                                        std::to_string(limits.max_grid_dim[d]) + " on " + limits.device_name +
                                        (d == 0 ? "" : "; put the large extent in grid x"));
  }
  if (s.static_shared_bytes > limits.static_shared_per_block)
    return problem(invalid_value, "the kernel declares " + std::to_string(s.static_shared_bytes) +
                                      " bytes of static __shared__ memory but the limit is " + std::to_string(limits.static_shared_per_block) +
                                      " bytes (48 KiB) per block; move large arrays to dynamic shared memory "
                                      "(extern __shared__) and opt in with cudaFuncSetAttribute");
  if (s.dynamic_shared_bytes > s.max_dynamic_shared_bytes)
    return problem(invalid_value, "the launch asks for " + std::to_string(s.dynamic_shared_bytes) +
                                      " bytes of dynamic shared memory but the kernel allows " + std::to_string(s.max_dynamic_shared_bytes) +
                                      "; above 48 KiB call cudaFuncSetAttribute(kernel, "
                                      "cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) first (at most " +
                                      std::to_string(limits.shared_per_block_optin - s.static_shared_bytes) + " bytes on " + limits.device_name +
                                      ")");
  if (s.static_shared_bytes + s.dynamic_shared_bytes > limits.shared_per_block_optin)
    return problem(invalid_value, "static plus dynamic shared memory is " + std::to_string(s.static_shared_bytes + s.dynamic_shared_bytes) +
                                      " bytes but the limit is " + std::to_string(limits.shared_per_block_optin) + " bytes per block on " +
                                      limits.device_name);
  return std::nullopt;
}

// A cooperative launch whose blocks cannot all be resident fails on the GPU
// with cudaErrorCooperativeLaunchTooLarge (720).
// (grid.sync() needs every block resident; registers are counted as
// emulated_registers_per_thread, so a GPU may allow fewer for a kernel that uses more).
inline std::optional<launch_problem> check_cooperative_launch(const device_limits& device, const sm_limits& sm, const launch_shape& s,
                                                              const std::string& kernel_name) {
  constexpr int cooperative_launch_too_large = 720;
  const unsigned threads = s.block[0] * s.block[1] * s.block[2];
  const std::size_t shared = s.static_shared_bytes + s.dynamic_shared_bytes;
  const unsigned per_sm = max_blocks_per_sm(sm, threads, emulated_registers_per_thread, shared);
  const unsigned long long blocks = 1ull * s.grid[0] * s.grid[1] * s.grid[2];
  const unsigned long long most = 1ull * per_sm * sm.multiprocessors;
  if (blocks <= most) return std::nullopt;
  return launch_problem{cooperative_launch_too_large,
                        "cooperative launch of kernel '" + kernel_name + "' with " + std::to_string(blocks) + " blocks of " +
                            std::to_string(threads) + " threads and " + std::to_string(shared) + " bytes of shared memory: at most " +
                            std::to_string(most) + " blocks can be resident at once on " + device.device_name + " (" + std::to_string(per_sm) +
                            " per SM x " + std::to_string(sm.multiprocessors) + " SMs, each SM holding " + std::to_string(sm.max_threads) +
                            " threads, " + std::to_string(sm.max_blocks) + " blocks and " + std::to_string(sm.shared_bytes) +
                            " bytes of shared memory with " + std::to_string(sm.reserved_shared_per_block) +
                            " reserved per block), and grid.sync() needs them all; launch fewer blocks (size the grid with "
                            "cudaOccupancyMaxActiveBlocksPerMultiprocessor x the SM count) and loop over the work"};
}

}  // namespace lockstep
