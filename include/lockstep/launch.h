// lockstep::launch(kernel, grid, block, shared_bytes)(args...): one spelling of
// a kernel launch for both targets. Under nvcc it is kernel<<<...>>> with the
// launch checked first; under a host compiler it runs the kernel on the
// emulator. Either way a bad launch throws lockstep::launch_error naming the
// limit, and arguments convert to the kernel's parameter types as in a call.
// A launch_config with `cooperative` set is a cooperative launch (what
// cudaLaunchCooperativeKernel does): every block resident at once, so that
// cooperative_groups' grid.sync() can wait for the whole grid.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "lockstep/errors.h"
#include "lockstep/launch_limits.h"

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#else
#include "lockstep/emu/runtime_api.h"
#include "lockstep/emu/vector_types.h"
#endif

namespace lockstep {

struct launch_config {
  dim3 grid;
  dim3 block;
  std::size_t shared_bytes = 0;
  cudaStream_t stream = nullptr;
  // All blocks run at once (grid.sync() allowed); fails with
  // cudaErrorCooperativeLaunchTooLarge when they cannot all be resident.
  bool cooperative = false;
};

namespace detail {
// A launch's argument as its parameter's type. NULL passed for a pointer (GCC's
// __null has an integer type once it is forwarded) is the null pointer it stands for.
template <class Param, class Arg>
Param to_parameter(Arg&& arg) {
  if constexpr (std::is_pointer_v<Param> && std::is_integral_v<std::remove_cvref_t<Arg>>)
    return arg == 0 ? nullptr : reinterpret_cast<Param>(static_cast<std::uintptr_t>(arg));
  else
    return static_cast<Param>(std::forward<Arg>(arg));
}

inline launch_shape shape_of(const launch_config& c, std::size_t static_shared, std::size_t max_dynamic) {
  return {{c.grid.x, c.grid.y, c.grid.z}, {c.block.x, c.block.y, c.block.z}, c.shared_bytes, static_shared, max_dynamic};
}
}  // namespace detail

#if defined(__CUDACC__)
namespace detail {
inline void check_cuda(cudaError_t code, const std::string& what) {
  if (code != cudaSuccess) throw launch_error(code, what + ": " + cudaGetErrorString(code));
}

// The card's launch limits, read once per device (cudaGetDeviceProperties is
// far too slow to call per launch).
inline const device_limits& gpu_limits(int device) {
  struct cached {
    bool read = false;
    char name[256];
    device_limits limits;
  };
  static cached cache[64];
  cached& c = cache[device & 63];
  if (!c.read) {
    cudaDeviceProp p{};
    check_cuda(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
    std::snprintf(c.name, sizeof c.name, "%s", p.name);
    c.limits = {c.name,
                static_cast<unsigned>(p.maxThreadsPerBlock),
                {unsigned(p.maxThreadsDim[0]), unsigned(p.maxThreadsDim[1]), unsigned(p.maxThreadsDim[2])},
                {unsigned(p.maxGridSize[0]), unsigned(p.maxGridSize[1]), unsigned(p.maxGridSize[2])},
                p.sharedMemPerBlock,
                p.sharedMemPerBlockOptin};
    c.read = true;
  }
  return c.limits;
}

// Checks the launch against the current card's limits before <<<>>>, so the
// error names the limit instead of CUDA's bare "invalid configuration".
inline void check_gpu_launch(const void* kernel, const launch_config& c) {
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  cudaFuncAttributes attr{};
  check_cuda(cudaFuncGetAttributes(&attr, kernel), "cudaFuncGetAttributes");
  const launch_shape shape = shape_of(c, attr.sharedSizeBytes, attr.maxDynamicSharedSizeBytes);
  if (auto problem = check_launch(gpu_limits(device), shape, "?")) {
    const char* name = nullptr;
    if (cudaFuncGetName(&name, kernel) != cudaSuccess || !name) name = "?";
    problem = check_launch(gpu_limits(device), shape, name);
    throw launch_error(static_cast<cudaError_t>(problem->cuda_error), problem->message);
  }
}
}  // namespace detail
#else
namespace emu {
// Runs thunk(params) once per thread of the grid; throws launch_error for a
// bad configuration and kernel_error when a thread fails.
void launch_kernel(const void* kernel, const launch_config& config, void (*thunk)(const void*), const void* params);
}  // namespace emu
#endif

template <class... Params>
class kernel_launch {
 public:
  kernel_launch(void (*kernel)(Params...), launch_config config) : kernel_(kernel), config_(config) {}

  template <class... Args>
  void operator()(Args&&... args) const {
    static_assert(sizeof...(Args) == sizeof...(Params), "lockstep::launch: the number of arguments must match the kernel's parameters");
#if defined(__CUDACC__)
    detail::check_gpu_launch(reinterpret_cast<const void*>(kernel_), config_);
    if (config_.cooperative) {
      // The runtime copies the arguments from this array of pointers to them.
      std::tuple<Params...> values(detail::to_parameter<Params>(std::forward<Args>(args))...);
      std::apply(
          [this](auto&... value) {
            void* pointers[] = {static_cast<void*>(&value)..., nullptr};
            detail::check_cuda(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel_), config_.grid, config_.block, pointers,
                                                           config_.shared_bytes, config_.stream),
                               "cudaLaunchCooperativeKernel");
          },
          values);
      return;
    }
    kernel_<<<config_.grid, config_.block, config_.shared_bytes, config_.stream>>>(detail::to_parameter<Params>(std::forward<Args>(args))...);
    detail::check_cuda(cudaGetLastError(), "kernel launch");
#else
    // Each emulated thread gets its own copy of the parameters, as on the GPU.
    const packed_call call{kernel_, std::tuple<Params...>(detail::to_parameter<Params>(std::forward<Args>(args))...)};
    emu::launch_kernel(reinterpret_cast<const void*>(kernel_), config_, &run_packed, &call);
#endif
  }

 private:
#if !defined(__CUDACC__)
  struct packed_call {
    void (*kernel)(Params...);
    std::tuple<Params...> args;
  };
  static void run_packed(const void* packed) {
    const auto& call = *static_cast<const packed_call*>(packed);
    std::apply([&call](const Params&... a) { call.kernel(a...); }, call.args);
  }
#endif
  void (*kernel_)(Params...);
  launch_config config_;
};

template <class... Params>
kernel_launch<Params...> launch(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared_bytes = 0, cudaStream_t stream = nullptr) {
  return kernel_launch<Params...>(kernel, launch_config{grid, block, shared_bytes, stream});
}

// lockstep::launch(kernel, launch_config{grid, block, shared, stream, /*cooperative=*/true})(args...)
template <class... Params>
kernel_launch<Params...> launch(void (*kernel)(Params...), const launch_config& config) {
  return kernel_launch<Params...>(kernel, config);
}

// A cooperative launch: every block resident at once, as cudaLaunchCooperativeKernel.
template <class... Params>
kernel_launch<Params...> launch_cooperative(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared_bytes = 0,
                                            cudaStream_t stream = nullptr) {
  return kernel_launch<Params...>(kernel, launch_config{grid, block, shared_bytes, stream, true});
}

}  // namespace lockstep
