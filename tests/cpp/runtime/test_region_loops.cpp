// The region-loop compiler (src/emulator/compile_time/region_loops): which kernels it
// splits at their barriers and why it leaves others on fibers; and, through
// the JIT, that split kernels give exactly the fiber engine's results.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "emulator/compile_time/region_loops/region_loops.h"
#include "lockstep/emu/options.h"
#include "lockstep/runtime.h"

namespace fs = std::filesystem;
using lockstep::buffer;
using lockstep::device;
namespace region_loops = lockstep::emu::region_loops;

namespace {

const device cpu = device::cpu();

region_loops::split_result split(const std::string& kernels) {
  return region_loops::split_kernels("#include \"lockstep/cuda.h\"\n" + kernels, "test.cu",
                                     {"-std=c++20", "-I" + std::string(LOCKSTEP_SOURCE_INCLUDE_DIR)});
}
// The same, with lockstep's CUDA headers on the path (<cooperative_groups.h>, <mma.h>), as the JIT has them.
region_loops::split_result split_with_cuda_headers(const std::string& kernels) {
  return region_loops::split_kernels(
      "#include \"lockstep/cuda.h\"\n" + kernels, "test.cu",
      {"-std=c++20", "-I" + std::string(LOCKSTEP_SOURCE_INCLUDE_DIR), "-I" + std::string(LOCKSTEP_SOURCE_INCLUDE_DIR) + "/lockstep/cuda_include"});
}

bool notes_mention(const region_loops::split_result& r, const std::string& what) {
  for (const auto& n : r.notes)
    if (n.find(what) != std::string::npos) return true;
  return false;
}

TEST(RegionLoops, SplitsBarriersInUniformLoopsAndBranches) {
  const auto r = split(R"(
__global__ void tree_sum(float* out, const float* in) {
  __shared__ float partial[256];
  partial[threadIdx.x] = in[blockIdx.x * 256 + threadIdx.x];
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    __syncthreads();
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
  }
  if (gridDim.x > 1) { __syncthreads(); }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}
)");
  ASSERT_EQ(r.split.size(), 1u) << (r.notes.empty() ? "" : r.notes[0]);
  EXPECT_EQ(r.split[0], "tree_sum");
  EXPECT_NE(r.source.find("loop_claim_block"), std::string::npos);
}

// A register tile (an array of more than 128 bytes each thread keeps across
// a barrier) lives in a copy while each region runs, so only one whose
// elements' addresses stay inside the thread's expressions (a whole tile
// handed to a call is alive only during the call) can run as loops.
TEST(RegionLoops, RegisterTilesSplitUnlessAnAddressOutlivesARegion) {
  const auto r = split(R"(
__global__ void tile_8x8(float* out, const float* in) {
  __shared__ float staged[64];
  float acc[8][8] = {};
  for (int t = 0; t < 4; ++t) {
    staged[threadIdx.x] = in[t * 64 + threadIdx.x];
    __syncthreads();
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 8; ++j) acc[i][j] += staged[i * 8 + j];
    __syncthreads();
  }
  out[threadIdx.x] = acc[threadIdx.x % 8][threadIdx.x / 8];
}
__global__ void row_pointer_kept(float* out, const float* in) {
  __shared__ float staged[64];
  float acc[8][8] = {};
  float* mine = acc[threadIdx.x % 8];
  for (int t = 0; t < 4; ++t) {
    staged[threadIdx.x] = in[t * 64 + threadIdx.x];
    __syncthreads();
    for (int j = 0; j < 8; ++j) mine[j] += staged[j];
    __syncthreads();
  }
  out[threadIdx.x] = acc[1][2];
}
__global__ void element_address_kept(float* out, const float* in) {
  __shared__ float staged[64];
  float acc[8][8] = {};
  float* first = &acc[0][0];
  staged[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  *first += staged[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = acc[0][0];
}
)");
  EXPECT_EQ(r.split, std::vector<std::string>{"tile_8x8"}) << (r.notes.empty() ? "" : r.notes[0]);
  EXPECT_TRUE(notes_mention(r, "'acc' (256 bytes) is an array each thread keeps across a barrier and reaches other than by its elements"))
      << (r.notes.empty() ? "" : r.notes[0]);
}

// libclang installs LLVM's crash handlers; left in front of the emulator's,
// they re-raise a kernel's fault without its address.
// LLVM's handlers, put in front by a parse or by writing the precompiled
// prelude (its files to remove on a signal), would meet SIGINT or a fault
// before the emulator's, restore the handlers they found and raise it again:
// Ctrl-C on a spinning kernel killed the process (tests/python/test_faults.py
// after a module built with a fresh prelude).
TEST(RegionLoops, ParsingLeavesTheSignalHandlersAsTheyWere) {
  constexpr int signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGINT, SIGHUP, SIGTERM, SIGQUIT, SIGABRT, SIGTRAP};
  constexpr int n = int(std::size(signals));
  struct sigaction before[n] {
  }, after[n]{};
  for (int i = 0; i < n; ++i) sigaction(signals[i], nullptr, &before[i]);
  ASSERT_EQ(split("__global__ void k(float* a) { __syncthreads(); a[threadIdx.x] = 1; }\n").split.size(), 1u);
  const fs::path prelude = fs::temp_directory_path() / ("lockstep-prelude-signals-" + std::to_string(getpid()) + ".pch");
  region_loops::precompile_prelude("#include \"lockstep/cuda.h\"\n", {"-std=c++20", "-I" + std::string(LOCKSTEP_SOURCE_INCLUDE_DIR)},
                                   prelude.string());
  fs::remove(prelude);
  for (int i = 0; i < n; ++i) {
    sigaction(signals[i], nullptr, &after[i]);
    EXPECT_EQ(reinterpret_cast<void*>(after[i].sa_sigaction), reinterpret_cast<void*>(before[i].sa_sigaction)) << "signal " << signals[i];
  }
}

// GCC 13's assumption attribute, which libstdc++ 13 and CCCL write into every
// unit GCC 13 preprocesses (Ubuntu 24.04's), is Clang's OpenMP one to libclang:
// the parse failed and every kernel stayed on fibers.
TEST(RegionLoops, GccAssumptionsDoNotStopTheParse) {
  const auto r = split(R"(
inline int positive(int n) { __attribute__((__assume__(n > 0))); return n; }
__global__ void k(float* a) { __syncthreads(); a[threadIdx.x] = 1; }
)");
  EXPECT_EQ(r.split.size(), 1u) << (r.notes.empty() ? "" : r.notes.front());
}

TEST(RegionLoops, LeavesDivergentBarriersOnFibersAndSaysWhy) {
  const auto divergent = split(R"(
__global__ void half_block(float* a) {
  if (threadIdx.x < 16) { __syncthreads(); }
  a[threadIdx.x] = 1;
}
)");
  EXPECT_TRUE(divergent.split.empty());
  EXPECT_TRUE(notes_mention(divergent, "may differ between the block's threads")) << divergent.notes.at(0);

  const auto per_thread_trip_count = split(R"(
__global__ void rounds(float* a, const int* counts) {
  for (int i = 0; i < counts[threadIdx.x]; ++i) { a[threadIdx.x] += 1; __syncthreads(); }
}
)");
  EXPECT_TRUE(per_thread_trip_count.split.empty());
  EXPECT_TRUE(notes_mention(per_thread_trip_count, "may differ"));

  const auto break_out = split(R"(
__global__ void leave(float* a, int n) {
  for (int i = 0; i < n; ++i) {
    if (a[threadIdx.x] > 0) break;
    __syncthreads();
  }
}
)");
  EXPECT_TRUE(break_out.split.empty());
  EXPECT_TRUE(notes_mention(break_out, "break or continue"));

  const auto per_thread_rounds = split(R"(
__global__ void warp_rounds(float* a, const int* counts) {
  float v = a[threadIdx.x];
  for (int i = 0; i < counts[threadIdx.x]; ++i) v += __shfl_down_sync(0xffffffffu, v, 1);
  a[threadIdx.x] = v;
}
)");
  EXPECT_TRUE(per_thread_rounds.split.empty());
  EXPECT_TRUE(notes_mention(per_thread_rounds, "may differ"));

  const auto twice = split(R"(
__global__ void same_values(const int* a, unsigned* out) {
  int all_same = 0;
  out[threadIdx.x] = __match_all_sync(0xffffffffu, a[threadIdx.x], &all_same);
}
)");
  EXPECT_TRUE(twice.split.empty());
  EXPECT_TRUE(notes_mention(twice, "uses __match_all_sync"));
  EXPECT_TRUE(notes_mention(twice, "warp-level operations run on fibers"));
}

// A kernel without barriers is one region: a loop over the block's threads;
// warp shuffles split it (in templates too, whose calls no cursor resolves),
// except where a call is evaluated only sometimes.
TEST(RegionLoops, AKernelWithoutBarriersIsOneLoopAndShufflesSplitIt) {
  const auto r = split(R"(
__global__ void scale(float* a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= 2.0f;
}
template <class T>
__global__ void rotate(T* a) {
  a[threadIdx.x] = __shfl_sync(0xffffffffu, a[threadIdx.x], threadIdx.x + 1);
}
__global__ void rotate_floats(float* a) { a[threadIdx.x] = __shfl_down_sync(0xffffffffu, a[threadIdx.x], 1); }
__global__ void sometimes(float* a) { a[threadIdx.x] = a[0] > 0 ? __shfl_down_sync(0xffffffffu, a[threadIdx.x], 1) : 0.0f; }
)");
  EXPECT_EQ(r.split, (std::vector<std::string>{"scale", "rotate", "rotate_floats"}));
  EXPECT_TRUE(notes_mention(r, "kernel sometimes ")) << r.notes.size();
  EXPECT_NE(r.source.find("loop_shuffle<decltype(__shfl_sync("), std::string::npos);
}

// Kernels whose threads keep values across barriers in every way the
// splitter handles: per-thread scalars and arrays, a parameter each thread
// changes, a device function with barriers called once for the block,
// 2-D blocks.
const char* kernels = R"(
#define TILE 16
__global__ void tiled_matmul(const float* a, const float* b, float* c, int n) {
  __shared__ float as[TILE][TILE], bs[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float sum = 0.0f;
  for (int t = 0; t < (n + TILE - 1) / TILE; ++t) {
    as[ty][tx] = (row < n && t * TILE + tx < n) ? a[row * n + t * TILE + tx] : 0.0f;
    bs[ty][tx] = (col < n && t * TILE + ty < n) ? b[(t * TILE + ty) * n + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) sum += as[ty][k] * bs[k][tx];
    __syncthreads();
  }
  if (row < n && col < n) c[row * n + col] = sum;
}

__device__ void block_reverse(float* data, int n) {
  __shared__ float staged[256];
  const int i = threadIdx.x;
  if (i < n) staged[i] = data[i];
  __syncthreads();
  if (i < n) data[i] = staged[n - 1 - i];
  __syncthreads();
}

__global__ void stencil_rounds(float* data, float* reversed, int rounds, int n) {
  data += blockIdx.x * n;  // each thread's own copy of the parameter
  __shared__ float cur[256];
  float history[3] = {0.0f, 0.0f, 0.0f};
  const bool inside = threadIdx.x < n;
  if (inside) cur[threadIdx.x] = data[threadIdx.x];
  for (int r = 0; r < rounds; ++r) {
    __syncthreads();
    if (inside) {
      const float left = cur[(threadIdx.x + n - 1) % n], right = cur[(threadIdx.x + 1) % n];
      history[r % 3] = 0.25f * left + 0.5f * cur[threadIdx.x] + 0.25f * right;
    }
    __syncthreads();
    if (inside) cur[threadIdx.x] = history[r % 3];
  }
  if (inside) data[threadIdx.x] = reversed[blockIdx.x * n + threadIdx.x] = cur[threadIdx.x] + history[0] + history[1] + history[2];
  __syncthreads();
  block_reverse(reversed + blockIdx.x * n, n);
}
)";

// Runs `kernel` over `in`, copied to the device, into a poisoned output of
// `count` elements; `rest` follows those two pointers in the launch.
template <class Out, class In, class... Rest>
std::vector<Out> run_into(const lockstep::module& m, const char* kernel, dim3 grid, dim3 block, const std::vector<In>& in, std::size_t count,
                          Rest... rest) {
  buffer din(cpu, in.size() * sizeof(In)), dout(cpu, count * sizeof(Out));
  din.copy_from_host(in.data(), in.size() * sizeof(In));
  dout.fill_bytes(0xff);
  m.get(kernel)(grid, block, 0, din.data_as<const In>(), dout.data_as<Out>(), rest...);
  std::vector<Out> out(count);
  dout.copy_to_host(out.data(), count * sizeof(Out));
  return out;
}

class RegionLoopsRun : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_dir_ = fs::temp_directory_path() / ("lockstep-region-loops-" + std::to_string(getpid()));
    fs::create_directories(cache_dir_);
    setenv("LOCKSTEP_CACHE_DIR", cache_dir_.c_str(), 1);
    setenv("LOCKSTEP_REGION_LOOPS_STRICT", "1", 1);  // a split the host compiler refuses fails the test
    saved_ = lockstep::emu::get_options();
  }
  void TearDown() override {
    unsetenv("LOCKSTEP_REGION_LOOPS_STRICT");
    lockstep::emu::set_options(saved_);
    fs::remove_all(cache_dir_);
  }
  static void use_loops(bool on) {
    lockstep::emu::options o = lockstep::emu::get_options();
    o.region_loops = on;
    lockstep::emu::set_options(o);
  }
  fs::path cache_dir_;
  lockstep::emu::options saved_;
};

// `got`, a rows x cols product, against a float64 product of a (rows x depth) and b (depth x cols).
void expect_product(const float* got, const std::vector<float>& a, const std::vector<float>& b, int rows, int depth, int cols) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      double want = 0;
      for (int q = 0; q < depth; ++q) want += double(a[r * depth + q]) * b[q * cols + c];
      ASSERT_NEAR(got[r * cols + c], want, 1e-4) << r << ", " << c;
    }
}

std::vector<float> run_matmul(const lockstep::module& m, const std::vector<float>& a, const std::vector<float>& b, int n) {
  buffer da(cpu, a.size() * 4), db(cpu, b.size() * 4), dc(cpu, a.size() * 4);
  da.copy_from_host(a.data(), a.size() * 4);
  db.copy_from_host(b.data(), b.size() * 4);
  dc.fill_bytes(0xff);  // NaN: an unwritten element fails
  const unsigned tiles = unsigned(n + 15) / 16;
  m.get("tiled_matmul")(dim3(tiles, tiles), dim3(16, 16), 0, da.data_as<const float>(), db.data_as<const float>(), dc.data_as<float>(), n);
  std::vector<float> c(a.size());
  dc.copy_to_host(c.data(), c.size() * 4);
  return c;
}

TEST_F(RegionLoopsRun, SplitKernelsGiveTheFiberEnginesResults) {
  const auto decided = split(kernels);
  EXPECT_EQ(decided.split, (std::vector<std::string>{"tiled_matmul", "stencil_rounds"})) << (decided.notes.empty() ? "" : decided.notes.back());
  const lockstep::module m = lockstep::compile(kernels, {}, cpu);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);

  const int n = 37;  // not a multiple of the tile
  std::vector<float> a(n * n), b(n * n);
  for (auto* v : {&a, &b})
    for (float& x : *v) x = value(rng);
  use_loops(true);
  const std::vector<float> loops = run_matmul(m, a, b, n);
  use_loops(false);
  const std::vector<float> fibers = run_matmul(m, a, b, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double reference = 0;
      for (int k = 0; k < n; ++k) reference += double(a[i * n + k]) * b[k * n + j];
      ASSERT_EQ(loops[i * n + j], fibers[i * n + j]) << i << ", " << j;
      ASSERT_NEAR(loops[i * n + j], reference, 1e-4) << i << ", " << j;
    }

  const int width = 200, blocks = 3, rounds = 7;
  std::vector<float> data(width * blocks);
  for (float& x : data) x = value(rng);
  auto run_stencil = [&](bool on) {
    use_loops(on);
    buffer d(cpu, data.size() * 4), r(cpu, data.size() * 4);
    d.copy_from_host(data.data(), data.size() * 4);
    r.fill_bytes(0xff);
    m.get("stencil_rounds")(dim3(blocks), dim3(256), 0, d.data_as<float>(), r.data_as<float>(), rounds, width);
    std::vector<float> out(2 * data.size());
    d.copy_to_host(out.data(), data.size() * 4);
    r.copy_to_host(out.data() + data.size(), data.size() * 4);
    return out;
  };
  const std::vector<float> stencil_loops = run_stencil(true), stencil_fibers = run_stencil(false);
  ASSERT_EQ(stencil_loops, stencil_fibers);
  // The host's version of the same rounds.
  for (int blk = 0; blk < blocks; ++blk) {
    std::vector<float> cur(data.begin() + blk * width, data.begin() + (blk + 1) * width), history(3 * width, 0.0f);
    for (int r = 0; r < rounds; ++r) {
      std::vector<float> next(width);
      for (int t = 0; t < width; ++t) next[t] = 0.25f * cur[(t + width - 1) % width] + 0.5f * cur[t] + 0.25f * cur[(t + 1) % width];
      for (int t = 0; t < width; ++t) history[t * 3 + r % 3] = next[t];
      cur = next;
    }
    for (int t = 0; t < width; ++t) {
      const float expected = cur[t] + history[t * 3] + history[t * 3 + 1] + history[t * 3 + 2];
      ASSERT_NEAR(stencil_loops[blk * width + t], expected, 1e-5) << blk << ", " << t;
      ASSERT_EQ(stencil_loops[data.size() + blk * width + (width - 1 - t)], stencil_loops[blk * width + t]) << blk << ", " << t;
    }
  }
}

// A cooperative-groups block's sync is a barrier: cg::sync(block) and
// block.sync() split as __syncthreads does (the CUDA samples' scan).
const char* group_scan = R"(
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void block_scan(const unsigned* in, unsigned* out) {
  cg::thread_block cta = cg::this_thread_block();
  __shared__ unsigned buffers[2][256];
  const unsigned t = cta.thread_rank();
  int from = 0;
  buffers[0][t] = in[blockIdx.x * blockDim.x + t];
  for (unsigned offset = 1; offset < blockDim.x; offset *= 2) {
    cg::sync(cta);
    buffers[1 - from][t] = buffers[from][t] + (t >= offset ? buffers[from][t - offset] : 0u);
    from = 1 - from;
  }
  cta.sync();
  out[blockIdx.x * blockDim.x + t] = buffers[from][t];
}
)";

TEST_F(RegionLoopsRun, CooperativeGroupsBlockSyncIsABarrier) {
  const auto decided = split_with_cuda_headers(group_scan);
  EXPECT_EQ(decided.split, std::vector<std::string>{"block_scan"}) << (decided.notes.empty() ? "" : decided.notes.back());
  const lockstep::module m = lockstep::compile(group_scan, {}, cpu);
  const unsigned threads = 256, blocks = 5;
  std::mt19937 rng(std::random_device{}());
  std::vector<unsigned> in(threads * blocks);
  for (unsigned& x : in) x = rng() % 1000;
  auto run = [&](bool on) {
    use_loops(on);
    buffer d_in(cpu, in.size() * 4), d_out(cpu, in.size() * 4);
    d_in.copy_from_host(in.data(), in.size() * 4);
    d_out.fill_bytes(0xff);
    m.get("block_scan")(dim3(blocks), dim3(threads), 0, d_in.data_as<const unsigned>(), d_out.data_as<unsigned>());
    std::vector<unsigned> out(in.size());
    d_out.copy_to_host(out.data(), out.size() * 4);
    return out;
  };
  const std::vector<unsigned> loops = run(true), fibers = run(false);
  ASSERT_EQ(loops, fibers);
  for (unsigned b = 0; b < blocks; ++b) {
    unsigned running = 0;
    for (unsigned t = 0; t < threads; ++t) {
      running += in[b * threads + t];
      ASSERT_EQ(loops[b * threads + t], running) << b << ", " << t;
    }
  }
}

// CUDA by Example's dot product: the tree's counter is halved by every
// thread inside the loop's body, the same change in each, so it is run once
// for the block; a local each thread changes differently stays per thread.
const char* counters = R"(
#define THREADS 256
__global__ void dot(const float* a, const float* b, float* c, int n) {
  __shared__ float cache[THREADS];
  int tid = threadIdx.x + blockIdx.x * blockDim.x;
  const int cache_index = threadIdx.x;
  float temp = 0;
  while (tid < n) {
    temp += a[tid] * b[tid];
    tid += blockDim.x * gridDim.x;
  }
  cache[cache_index] = temp;
  __syncthreads();
  int i = blockDim.x / 2;
  while (i != 0) {
    if (cache_index < i) cache[cache_index] += cache[cache_index + i];
    __syncthreads();
    i /= 2;
  }
  if (cache_index == 0) c[blockIdx.x] = cache[0];
}

__global__ void shifted(int* out) {
  __shared__ int staged[THREADS];
  int k = threadIdx.x;
  staged[threadIdx.x] = k * 3;
  __syncthreads();
  k += 1;
  out[blockIdx.x * blockDim.x + threadIdx.x] = staged[k % blockDim.x] + k;
}
)";

TEST_F(RegionLoopsRun, CountersEveryThreadChangesAlikeRunOnceForTheBlock) {
  const auto decided = split(counters);
  EXPECT_EQ(decided.split, (std::vector<std::string>{"dot", "shifted"})) << (decided.notes.empty() ? "" : decided.notes.back());
  EXPECT_NE(decided.source.find("\ni /= 2;"), std::string::npos);  // at block level, outside the loops over threads
  const lockstep::module m = lockstep::compile(counters, {}, cpu);
  const int n = 33 * 1024 + 5, blocks = 32, threads = 256;
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> a(n), b(n);
  for (int i = 0; i < n; ++i) a[i] = value(rng), b[i] = value(rng);
  auto run = [&](bool on) {
    use_loops(on);
    buffer da(cpu, n * 4), db(cpu, n * 4), dc(cpu, blocks * 4), shifted(cpu, blocks * threads * 4);
    da.copy_from_host(a.data(), n * 4);
    db.copy_from_host(b.data(), n * 4);
    dc.fill_bytes(0xff);
    shifted.fill_bytes(0xff);
    m.get("dot")(dim3(blocks), dim3(threads), 0, da.data_as<const float>(), db.data_as<const float>(), dc.data_as<float>(), n);
    m.get("shifted")(dim3(blocks), dim3(threads), 0, shifted.data_as<int>());
    std::vector<float> partial(blocks);
    std::vector<int> out(blocks * threads);
    dc.copy_to_host(partial.data(), blocks * 4);
    shifted.copy_to_host(out.data(), out.size() * 4);
    return std::pair{partial, out};
  };
  const auto loops = run(true), fibers = run(false);
  ASSERT_EQ(loops.first, fibers.first);
  ASSERT_EQ(loops.second, fibers.second);
  double sum = 0, reference = 0;
  for (float p : loops.first) sum += p;
  for (int i = 0; i < n; ++i) reference += double(a[i]) * b[i];
  EXPECT_NEAR(sum, reference, 1e-3);
  for (int blk = 0; blk < blocks; ++blk)
    for (int t = 0; t < threads; ++t) ASSERT_EQ(loops.second[blk * threads + t], ((t + 1) % threads) * 3 + t + 1) << blk << ", " << t;
}

// Regions `int i = ...; if (guard on i) body`: rows whose threads all pass run
// without the branch, the others as written (a guard that fails mid-row, one
// that fails and passes again, a return in the body); an index summed in int
// where the program converts it to int (negative terms too); and a device
// function that reads threadIdx still sees each thread's own.
const char* guarded = R"(
__device__ int thread_code() { return int(threadIdx.x) * 3 + 1; }
__device__ float twice(float v) { return 2.0f * v; }
__global__ void scale_tail(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = twice(in[i]);
}
__global__ void codes(int* out, int n) {
  const int i = threadIdx.x + blockDim.x * blockIdx.x;
  if (i < n) out[i] = thread_code();
}
__global__ void every_third_skipped(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i % 3 != 1) {
    if (i >= n) return;
    out[i] = float(i);
  }
}
__global__ void shifted_index(int* out, int first_block) {
  int i = (blockIdx.x - first_block) * blockDim.x + threadIdx.x;
  out[blockIdx.x * blockDim.x + threadIdx.x] = i;
}
)";

TEST_F(RegionLoopsRun, GuardedRegionsRunTheirPassingRowsWithoutTheBranch) {
  const auto decided = split(guarded);
  EXPECT_EQ(decided.split.size(), 4u) << (decided.notes.empty() ? "" : decided.notes.back());
  EXPECT_NE(decided.source.find("__ls_failing"), std::string::npos);
  EXPECT_NE(decided.source.find("offset_x()"), std::string::npos);
  // scale_tail calls only a function that does not read the record; codes one that does.
  const std::size_t scale_at = decided.source.find("void scale_tail"), codes_at = decided.source.find("void codes");
  ASSERT_LT(scale_at, codes_at);
  EXPECT_NE(decided.source.substr(scale_at, codes_at - scale_at).find("move_to(__ls_x"), std::string::npos);
  EXPECT_NE(decided.source.substr(codes_at).find("enter(__ls_x"), std::string::npos);

  const lockstep::module m = lockstep::compile(guarded, {}, cpu);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  const int n = 5 * 128 + 37, blocks = 6, threads = 128;
  std::vector<float> in(blocks * threads);
  for (float& x : in) x = value(rng);
  auto run = [&](bool on) {
    use_loops(on);
    buffer din(cpu, in.size() * 4), scaled(cpu, in.size() * 4), coded(cpu, in.size() * 4), skipped(cpu, in.size() * 4), shifted(cpu, in.size() * 4);
    din.copy_from_host(in.data(), in.size() * 4);
    for (buffer* b : {&scaled, &coded, &skipped, &shifted}) b->fill_bytes(0xff);
    m.get("scale_tail")(dim3(blocks), dim3(threads), 0, scaled.data_as<float>(), din.data_as<const float>(), n);
    m.get("codes")(dim3(blocks), dim3(threads), 0, coded.data_as<int>(), n);
    m.get("every_third_skipped")(dim3(blocks), dim3(threads), 0, skipped.data_as<float>(), n);
    m.get("shifted_index")(dim3(blocks), dim3(threads), 0, shifted.data_as<int>(), 2);
    std::vector<std::uint32_t> out(4 * in.size());
    for (int k = 0; buffer * b : {&scaled, &coded, &skipped, &shifted}) b->copy_to_host(out.data() + in.size() * k++, in.size() * 4);
    return out;
  };
  const std::vector<std::uint32_t> loops = run(true), fibers = run(false);
  ASSERT_EQ(loops, fibers);
  const std::size_t total = in.size();
  for (std::size_t i = 0; i < total; ++i) {
    float scaled, skipped;
    std::memcpy(&scaled, &loops[i], 4);
    std::memcpy(&skipped, &loops[2 * total + i], 4);
    const bool written = int(i) < n;
    if (written)
      EXPECT_EQ(scaled, 2.0f * in[i]) << i;
    else
      EXPECT_EQ(loops[i], 0xffffffffu) << i;  // still poisoned
    EXPECT_EQ(loops[total + i], written ? std::uint32_t(int(i % threads) * 3 + 1) : 0xffffffffu) << i;
    if (written && i % 3 != 1)
      EXPECT_EQ(skipped, float(i)) << i;
    else
      EXPECT_EQ(loops[2 * total + i], 0xffffffffu) << i;
    EXPECT_EQ(int(loops[3 * total + i]), int(i) - 2 * threads) << i;
  }
}

// Locals of type int computed from the coordinates (`int tx =
// threadIdx.x;`) summed with a shared unsigned value (`blockIdx.x * 16 +
// tx`) sum in int (thread_offset), which the host compiler sees is linear
// in the thread, as the tiled matmul writes its tile loads: the same values
// as the unsigned sum, negative terms among them. The sums' guard is
// affine in the coordinates, so it is asked at the block's corners.
const char* offset_locals = R"(
__global__ void offset_locals(const int* in, int* out, int n) {
  int tx = threadIdx.x, below = int(threadIdx.x) - 8;
  int i = blockIdx.x * blockDim.x + tx;
  int shifted = blockIdx.x * blockDim.x + below;
  __syncthreads();
  if (i < n) out[i] = shifted * 3 + (shifted >= 0 ? in[shifted] : -1);
}
)";

TEST_F(RegionLoopsRun, IntLocalsOfTheCoordinatesSumInIntWithSharedValues) {
  const auto decided = split(offset_locals);
  ASSERT_EQ(decided.split.size(), 1u) << (decided.notes.empty() ? "" : decided.notes.back());
  EXPECT_NE(decided.source.find("thread_offset{tx}"), std::string::npos);
  EXPECT_NE(decided.source.find("thread_offset{below}"), std::string::npos);
  EXPECT_NE(decided.source.find("__ls_failing_somewhere"), std::string::npos);

  const lockstep::module m = lockstep::compile(offset_locals, {}, cpu);
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> value(-1000, 1000);
  const int blocks = 5, threads = 96, n = (blocks - 1) * threads + 41;
  std::vector<int> in(blocks * threads);
  for (int& x : in) x = value(rng);
  auto run = [&](bool on) {
    use_loops(on);
    return run_into<int>(m, "offset_locals", dim3(blocks), dim3(threads), in, in.size(), n);
  };
  const std::vector<int> loops = run(true), fibers = run(false);
  ASSERT_EQ(loops, fibers);
  for (int i = 0; i < blocks * threads; ++i) {
    const int shifted = i - 8;
    EXPECT_EQ(loops[i], i < n ? shifted * 3 + (shifted >= 0 ? in[shifted] : -1) : -1) << i;  // -1: still poisoned (0xff bytes)
  }
}

// A region's selects (`x = c ? a[i] : 0`) whose conditions read no memory
// are decided per row, as guards are: where all the row's threads take the
// same arm, the row runs the region with that arm alone, a load GCC
// vectorises (it does not under a mask with an int index, as the tiled
// matmul's tile loads are). The arm keeps the select's type (a double
// here), an arm taken where the condition fails (`i >= n ? 0.5f : ...`)
// counts too, and rows where the threads differ (the last block, a
// `width` below the block) run the selects as written.
const char* selects = R"(
__global__ void selects(const float* in, float* out, int n, int width) {
  __shared__ float tile[2][128];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  int tx = threadIdx.x;
  int col = blockIdx.x * 128 + tx;
  tile[0][tx] = (col < n && tx < width) ? in[col] : -1.0f;
  tile[1][tx] = i >= n ? 0.5f : in[i] * 2.0f;
  __syncthreads();
  double wide = 0.25 + (i < n ? tile[0][(tx + 1) % blockDim.x] : 0.0);
  out[i] = float(wide) + tile[1][blockDim.x - 1 - tx];
}
)";

TEST_F(RegionLoopsRun, SelectsAllARowsThreadsTakeRunAsTheirArm) {
  const auto decided = split(selects);
  ASSERT_EQ(decided.split.size(), 1u) << (decided.notes.empty() ? "" : decided.notes.back());
  std::size_t versioned = 0;
  for (std::size_t at = 0; (at = decided.source.find("static_cast<decltype(", at)) != std::string::npos; ++at) ++versioned;
  EXPECT_EQ(versioned, 3u);

  const lockstep::module m = lockstep::compile(selects, {}, cpu);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  const int blocks = 4, threads = 128, n = (blocks - 1) * threads + 53;
  std::vector<float> in(blocks * threads);
  for (float& x : in) x = value(rng);
  for (const int width : {threads, 100}) {
    auto run = [&](bool on) {
      use_loops(on);
      return run_into<float>(m, "selects", dim3(blocks), dim3(threads), in, in.size(), n, width);
    };
    const std::vector<float> loops = run(true), fibers = run(false);
    ASSERT_EQ(0, std::memcmp(loops.data(), fibers.data(), loops.size() * 4)) << "width " << width;
    for (int b = 0; b < blocks; ++b)
      for (int t = 0; t < threads; ++t) {
        const auto tile0 = [&](int u) { return b * threads + u < n && u < width ? in[b * threads + u] : -1.0f; };
        const auto tile1 = [&](int u) { return b * threads + u >= n ? 0.5f : in[b * threads + u] * 2.0f; };
        const int i = b * threads + t;
        const double wide = 0.25 + (i < n ? double(tile0((t + 1) % threads)) : 0.0);
        EXPECT_EQ(loops[i], float(wide) + tile1(threads - 1 - t)) << "width " << width << ", thread " << i;
      }
  }
}

// A function template that waits with an explicit specialization
// (`warp_total<int>` by __reduce_add_sync beside the template's shuffles,
// as the CUDA samples' reduction writes warpReduceSum): a variant made of
// the template would stand for the specialization too, so the template
// and the kernels that call it stay on fibers, and each instance runs its
// own code.
const char* specialized = R"(
template <class T> __device__ T warp_total(unsigned mask, T v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(mask, v, offset);
  return v;
}
template <> __device__ int warp_total<int>(unsigned mask, int v) { return __reduce_add_sync(mask, v); }
template <class T> __global__ void totals(const T* in, T* out) {
  T v = in[blockIdx.x * blockDim.x + threadIdx.x];
  const unsigned low = __ballot_sync(0xffffffffu, threadIdx.x % 32 < 8);
  if (threadIdx.x % 32 < 8) v = warp_total<T>(low, v);
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
)";

TEST_F(RegionLoopsRun, ExplicitSpecializationsOfAFunctionTemplateThatWaitsRunAsWritten) {
  const auto decided = split(specialized);
  EXPECT_TRUE(decided.split.empty());
  EXPECT_TRUE(notes_mention(decided, "explicit specializations"));
  lockstep::compile_options names;
  names.names = {"totals<int>"};
  use_loops(true);
  const lockstep::module m = lockstep::compile(specialized, names, cpu);
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> value(-1000, 1000);
  const int blocks = 2, threads = 96;
  std::vector<int> in(blocks * threads);
  for (int& x : in) x = value(rng);
  const std::vector<int> out = run_into<int>(m, "totals<int>", dim3(blocks), dim3(threads), in, in.size());
  for (int i = 0; i < blocks * threads; ++i) {
    int want = in[i];
    if (i % 32 < 8) {
      want = 0;
      for (int lane = 0; lane < 8; ++lane) want += in[i / 32 * 32 + lane];
    }
    EXPECT_EQ(out[i], want) << i;
  }
}

// A value-returning function whose barriers' loop counts a parameter (the
// CUDA samples' scan1Inclusive): its callers pass one value for the block,
// which the lanes variant reads once. A return that calls it, and a caller
// whose value differs between threads, which stays on fibers.
const char* uniform_parameters = R"(
__device__ int windowed_sum(int value, int* buffer, int width) {
  buffer[threadIdx.x] = value;
  for (int step = 1; step < width; step *= 2) {
    __syncthreads();
    const int add = threadIdx.x >= step ? buffer[threadIdx.x - step] : 0;
    __syncthreads();
    buffer[threadIdx.x] += add;
  }
  __syncthreads();
  const int sum = buffer[threadIdx.x];
  __syncthreads();
  return sum;
}
__device__ int windowed_before(int value, int* buffer, int width) { return windowed_sum(value, buffer, width) - value; }
__global__ void windows(const int* in, int* out, int width) {
  __shared__ int buffer[256];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int half = width / 2;
  out[i] = windowed_before(in[i], buffer, 2 * half) + 1000000 * windowed_sum(1, buffer, half);
}
__global__ void per_thread_windows(const int* in, int* out, int width) {
  __shared__ int buffer[256];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = windowed_sum(in[i], buffer, threadIdx.x % 2 ? width : width + 1);
}
)";

TEST_F(RegionLoopsRun, BarriersCountedByAParameterRunForTheBlockWhereCallersPassOneValue) {
  const auto decided = split(uniform_parameters);
  ASSERT_EQ(decided.split, (std::vector<std::string>{"windows"})) << (decided.notes.empty() ? "" : decided.notes.back());
  EXPECT_TRUE(notes_mention(decided, "passes a value that may differ between the block's threads where windowed_sum's barriers need one value"));
  use_loops(true);
  const lockstep::module m = lockstep::compile(uniform_parameters, {}, cpu);
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> value(-1000, 1000);
  const int blocks = 3, threads = 192, width = 64;
  std::vector<int> in(blocks * threads);
  for (int& x : in) x = value(rng);
  auto windowed = [&](bool on) {
    use_loops(on);
    return run_into<int>(m, "windows", dim3(blocks), dim3(threads), in, in.size(), width);
  };
  const std::vector<int> loops = windowed(true);
  EXPECT_EQ(loops, windowed(false));
  for (int i = 0; i < blocks * threads; ++i) {
    const int t = i % threads;
    int before = 0;
    for (int j = std::max(0, t - (width - 1)); j < t; ++j) before += in[i - t + j];
    EXPECT_EQ(loops[i], before + 1000000 * std::min(t + 1, width / 2)) << i;
  }
}

// Lambdas that capture by reference (the library's double_buffered matmul
// stages its next tile through them) are made again in each region that
// calls them, over the thread's own variables: a tile loaded into registers
// before a barrier and stored after it, and a counter the lambda changes.
// `constexpr` locals of a template and a const local passed to a lambda stay
// uniform, so the barrier's condition is the block's. A lambda that copies
// what it captures is a value the loops cannot keep: it stays on fibers.
const char* closures = R"(
template <int width>
__global__ void staged_sums(const float* in, float* out, int tiles) {
  __shared__ float stage[2][width];
  constexpr int last = width - 1;
  float next[2];
  float acc = 0.0f;
  int loads = 0;
  auto load = [&](int t) {
    next[0] = in[(blockIdx.x * tiles + t) * width + threadIdx.x];
    next[1] = 0.5f * next[0];
    ++loads;
  };
  auto store = [&](int s) { stage[s][threadIdx.x] = next[0] + next[1]; };
  load(0);
  store(0);
  __syncthreads();
  for (int t = 0; t < tiles; ++t) {
    const int s = t & 1;
    const bool more = t + 1 < tiles;
    if (more) load(t + 1);
    for (int p = 0; p < width; ++p) {
      acc += stage[s][(threadIdx.x + p) % width] * float(p + 1);
      if (p == last && more) {
        store(s ^ 1);
        __syncthreads();
      }
    }
  }
  out[blockIdx.x * width + threadIdx.x] = acc + 1000.0f * float(loads);
}
__global__ void copied(const float* in, float* out) {
  const float v = in[threadIdx.x];
  auto twice = [v] { return 2.0f * v; };
  __syncthreads();
  out[threadIdx.x] = twice();
}
)";

TEST_F(RegionLoopsRun, LambdasCapturingByReferenceAreMadeAgainInEachRegionThatCallsThem) {
  const auto decided = split(closures);
  ASSERT_EQ(decided.split, (std::vector<std::string>{"staged_sums"})) << (decided.notes.empty() ? "" : decided.notes.back());
  EXPECT_TRUE(notes_mention(decided, "'twice'"));
  lockstep::compile_options names;
  names.names = {"staged_sums<32>"};
  use_loops(true);
  const lockstep::module m = lockstep::compile(closures, names, cpu);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  const int blocks = 3, width = 32, tiles = 5;
  std::vector<float> in(blocks * tiles * width);
  for (float& x : in) x = value(rng);
  auto sums = [&](bool on) {
    use_loops(on);
    return run_into<float>(m, "staged_sums<32>", dim3(blocks), dim3(width), in, blocks * width, tiles);
  };
  const std::vector<float> loops = sums(true);
  EXPECT_EQ(0, std::memcmp(loops.data(), sums(false).data(), loops.size() * sizeof(float)));
  for (int b = 0; b < blocks; ++b)
    for (int i = 0; i < width; ++i) {
      double want = 1000.0 * tiles;
      for (int t = 0; t < tiles; ++t)
        for (int p = 0; p < width; ++p) want += 1.5 * in[(b * tiles + t) * width + (i + p) % width] * (p + 1);
      EXPECT_NEAR(loops[b * width + i], want, 1e-3) << b << ", " << i;
    }
}

// A guard that holds on a convex set of threads (comparisons of values
// affine in the coordinates, in int, joined by &&) is asked at the block's
// corners, then at each row's two ends; others of every thread. Here guards
// that pass at a row's ends and fail between (unsigned wrap-around, a square,
// !=, a cast to a narrower type: 3 * i + 200 as a signed char passes at both
// ends of the first block and fails between) must still be asked of every thread; a
// coordinate cast to long long, as lockstep.cuda writes it, stays affine.
const char* convex_guards = R"(
__global__ void fill_2d(int* out, int width, int height) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (col >= 3 && col < width && row < height) out[row * width + col] = row * 1000 + col;
}
__global__ void wide_index(int* out, long long n) {
  const long long i = static_cast<long long>(threadIdx.x) + static_cast<long long>(blockIdx.x) * blockDim.x;
  if (i < n) out[i] = 4;
}
__global__ void outside_a_gap(int* out, int gap) {
  unsigned u = threadIdx.x - 5u;
  if (u >= unsigned(gap)) out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}
__global__ void away_from_the_middle(int* out, int middle, int squared_radius) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int d = i - middle;
  if (d * d > squared_radius) out[i] = 2;
}
__global__ void all_but_one(int* out, int skipped) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i != skipped) out[i] = 3;
}
__global__ void narrowed_index(int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (static_cast<signed char>(3 * i + 200) >= 0) out[i] = 5;
}
__global__ void narrowed_coordinate(int* out) {
  const long long t = static_cast<signed char>(threadIdx.x);
  if (t >= 0) out[threadIdx.x] = 7;
}
__global__ void narrowed_implicitly(int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  signed char narrowed = 3 * i + 200;
  if (narrowed < 0) out[i] = 6;
}
)";

TEST_F(RegionLoopsRun, ConvexGuardsAreAskedAtCornersOthersOfEveryThread) {
  const auto decided = split(convex_guards);
  ASSERT_EQ(decided.split.size(), 8u) << (decided.notes.empty() ? "" : decided.notes.back());
  const std::string& source = decided.source;
  const std::size_t gap_at = source.find("void outside_a_gap");
  ASSERT_NE(gap_at, std::string::npos);
  EXPECT_NE(source.substr(0, gap_at).find("__ls_failing_somewhere"), std::string::npos);
  EXPECT_EQ(source.find("__ls_failing_somewhere", gap_at), std::string::npos);
  EXPECT_NE(source.find("__ls_failing", gap_at), std::string::npos);
  EXPECT_NE(source.find("__ls_failing_somewhere", source.find("void wide_index")), std::string::npos);

  const lockstep::module m = lockstep::compile(convex_guards, {}, cpu);
  const int width = 37, height = 21, threads = 64, blocks = 3, n = threads * blocks, middle = 80, squared_radius = 9 * 9, skipped = 100, wide_n = 150;
  auto run = [&](bool on) {
    use_loops(on);
    buffer image(cpu, width * height * 4), gap(cpu, n * 4), away(cpu, n * 4), but_one(cpu, n * 4), wide(cpu, n * 4), narrowed(cpu, n * 4);
    for (buffer* b : {&image, &gap, &away, &but_one, &wide, &narrowed}) b->fill_bytes(0xff);
    m.get("fill_2d")(dim3(3, 3), dim3(16, 8), 0, image.data_as<int>(), width, height);
    m.get("outside_a_gap")(dim3(blocks), dim3(threads), 0, gap.data_as<int>(), 7);
    m.get("away_from_the_middle")(dim3(blocks), dim3(threads), 0, away.data_as<int>(), middle, squared_radius);
    m.get("all_but_one")(dim3(blocks), dim3(threads), 0, but_one.data_as<int>(), skipped);
    m.get("wide_index")(dim3(blocks), dim3(threads), 0, wide.data_as<int>(), static_cast<long long>(wide_n));
    m.get("narrowed_index")(dim3(blocks), dim3(threads), 0, narrowed.data_as<int>());
    m.get("narrowed_implicitly")(dim3(blocks), dim3(threads), 0, narrowed.data_as<int>());
    std::vector<int> out(width * height + 5 * n);
    image.copy_to_host(out.data(), width * height * 4);
    for (int k = 0; buffer * b : {&gap, &away, &but_one, &wide, &narrowed}) b->copy_to_host(out.data() + width * height + n * k++, n * 4);
    return out;
  };
  const std::vector<int> loops = run(true), fibers = run(false);
  ASSERT_EQ(loops, fibers);
  // One row of 300 threads: (signed char)threadIdx.x passes at both ends (0, 43) and fails at 128..255.
  use_loops(true);
  buffer coordinate(cpu, 300 * 4);
  coordinate.fill_bytes(0xff);
  m.get("narrowed_coordinate")(dim3(1), dim3(300), 0, coordinate.data_as<int>());
  std::vector<int> narrowed_coordinate(300);
  coordinate.copy_to_host(narrowed_coordinate.data(), 300 * 4);
  for (int t = 0; t < 300; ++t) EXPECT_EQ(narrowed_coordinate[t], static_cast<signed char>(t) >= 0 ? 7 : -1) << t;
  for (int row = 0; row < height; ++row)
    for (int col = 0; col < width; ++col) EXPECT_EQ(loops[row * width + col], col >= 3 ? row * 1000 + col : -1) << row << ", " << col;
  const int* gap = loops.data() + width * height;
  for (int i = 0; i < n; ++i) {
    const int t = i % threads;
    EXPECT_EQ(gap[i], t >= 5 && t < 5 + 7 ? -1 : 1) << i;
    EXPECT_EQ(gap[n + i], (i - middle) * (i - middle) > squared_radius ? 2 : -1) << i;
    EXPECT_EQ(gap[2 * n + i], i != skipped ? 3 : -1) << i;
    EXPECT_EQ(gap[3 * n + i], i < wide_n ? 4 : -1) << i;
    EXPECT_EQ(gap[4 * n + i], static_cast<signed char>(3 * i + 200) >= 0 ? 5 : 6) << i;
  }
}

// With a precompiled prelude (the headers the source begins with, as Clang
// read them once) the split is the same as with a parse of everything; a
// prelude file Clang refuses costs a second parse, not the split.
// A header not found, even in a system header (a libclang installed without
// its own headers lacks stddef.h), leaves what follows it undeclared: with
// threadIdx unknown every thread's index looked alike, and the kernel was
// split with `i` computed once for the block (wrong results with libclang 16
// there). Such a unit is not split.
TEST(RegionLoops, AHeaderNotFoundInASystemHeaderKeepsKernelsOnFibers) {
  const fs::path dir = fs::temp_directory_path() / ("lockstep-broken-system-" + std::to_string(getpid()));
  fs::create_directories(dir);
  { std::ofstream(dir / "broken_system_header.h") << "#include <lockstep_no_such_header.h>\n"; }
  const std::string kernel = R"(
__global__ void indexed(int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = i;
  __syncthreads();
}
)";
  const std::vector<std::string> flags{"-std=c++20", "-I" + std::string(LOCKSTEP_SOURCE_INCLUDE_DIR), "-isystem", dir.string()};
  const auto broken = region_loops::split_kernels("#include <broken_system_header.h>\n#include \"lockstep/cuda.h\"\n" + kernel, "test.cu", flags);
  EXPECT_TRUE(broken.split.empty());
  EXPECT_TRUE(notes_mention(broken, "lockstep_no_such_header.h")) << (broken.notes.empty() ? "" : broken.notes[0]);
  const auto whole = region_loops::split_kernels("#include \"lockstep/cuda.h\"\n" + kernel, "test.cu", flags);
  EXPECT_EQ(whole.split, std::vector<std::string>{"indexed"});
  fs::remove_all(dir);
}

TEST(RegionLoops, APrecompiledPreludeGivesTheSameSplit) {
  const std::string prelude = "#include \"lockstep/cuda.h\"\n";
  const std::vector<std::string> flags{"-std=c++20", "-I" + std::string(LOCKSTEP_SOURCE_INCLUDE_DIR)};
  const std::string source = prelude + guarded;
  const fs::path dir = fs::temp_directory_path() / ("lockstep-prelude-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string pch = (dir / "prelude.pch").string(), garbage = (dir / "garbage.pch").string();
  region_loops::precompile_prelude(prelude, flags, pch);
  ASSERT_GT(fs::file_size(pch), 0u);
  { std::ofstream(garbage) << "not a precompiled header"; }
  const auto plain = region_loops::split_kernels(source, "test.cu", flags);
  const auto with_prelude = region_loops::split_kernels(source, "test.cu", flags, pch);
  const auto refused = region_loops::split_kernels(source, "test.cu", flags, garbage);
  EXPECT_EQ(plain.split.size(), 4u);
  EXPECT_EQ(with_prelude.split, plain.split);
  EXPECT_EQ(with_prelude.source, plain.source);
  EXPECT_EQ(refused.source, plain.source);
  EXPECT_THROW(region_loops::precompile_prelude("#include \"no/such/header.h\"\n", flags, (dir / "bad.pch").string()), std::runtime_error);
  EXPECT_FALSE(region_loops::libclang_version().empty());
  fs::remove_all(dir);
}

// Variables declared first and assigned later, as lockstep.cuda writes
// Python's (the lecture's tiled matmul): an assignment of a uniform value,
// run by every thread at the kernel's sequence level, keeps the variable
// shared, so a loop bound read from it is the block's; one in a branch does
// not. `count = count + n` must run once, not once per thread.
const char* assigned_later = R"(
#define TILE 16
__global__ void lecture_tiled(const float* A, const float* B, float* C, int n) {
  __shared__ float sA[TILE][TILE];
  __shared__ float sB[TILE][TILE];
  long long x{}; long long y{}; int tx{}; int ty{}; int tiles{}; double tmp{}; long long i{};
  x = threadIdx.x + (long long)blockIdx.x * blockDim.x;
  y = threadIdx.y + (long long)blockIdx.y * blockDim.y;
  tx = threadIdx.x;
  ty = threadIdx.y;
  tiles = gridDim.x;
  if (x >= n && y >= n) return;
  tmp = 0.0;
  for (long long t = 0, bound = tiles; t < bound; ++t) {
    i = t;
    sA[tx][ty] = (x < n && ty + i * TILE < n) ? A[x * n + ty + i * TILE] : 0.0f;
    sB[tx][ty] = (tx + i * TILE < n && y < n) ? B[(tx + i * TILE) * n + y] : 0.0f;
    __syncthreads();
    for (int j = 0; j < TILE; ++j) tmp += sA[tx][j] * sB[j][ty];
    __syncthreads();
  }
  if (x < n && y < n) C[x * n + y] = (float)tmp;
}
struct extents {
  int shape[2];
};
// An element of an array in a by-value parameter is the block's (lockstep.cuda passes arrays so) ...
__global__ void bound_from_a_shape(float* out, extents e) {
  int total{};
  for (int t = 0; t < e.shape[1]; ++t) {
    total += t;
    __syncthreads();
  }
  out[threadIdx.x] = total;
}
// ... unless the kernel writes one.
__global__ void shape_written(float* out, extents e) {
  e.shape[1] = threadIdx.x;
  for (int t = 0; t < e.shape[1]; ++t) __syncthreads();
  out[threadIdx.x] = 1;
}
__global__ void accumulated_by_every_thread(float* out, int n) {
  int mine{}; int count{};
  mine = threadIdx.x;  // a thread's own value: its statements stay in the region
  count = count + n;
  for (int t = 0; t < count; ++t) __syncthreads();
  out[mine] = count;
}
__global__ void assigned_in_a_branch(float* out, int n) {
  int count{};
  if (threadIdx.x == 0) count = n;
  for (int t = 0; t < count; ++t) __syncthreads();
  out[threadIdx.x] = count;
}
)";

struct extents_arg {  // the kernels' `extents`, as the host passes it
  int shape[2];
};

TEST_F(RegionLoopsRun, AVariableAssignedAUniformValueByEveryThreadStaysShared) {
  const auto decided = split(assigned_later);
  // accumulated_by_every_thread: `count = count + n` runs once for the block (an update step), `mine = threadIdx.x` in its region.
  ASSERT_EQ(decided.split, (std::vector<std::string>{"lecture_tiled", "bound_from_a_shape", "accumulated_by_every_thread"}))
      << (decided.notes.empty() ? "" : decided.notes.back());
  EXPECT_TRUE(notes_mention(decided, "shape_written"));
  EXPECT_TRUE(notes_mention(decided, "assigned_in_a_branch")) << decided.notes.at(0);

  const lockstep::module m = lockstep::compile(assigned_later, {}, cpu);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  const int n = 40, tiles = 3;  // edges inside the last tiles
  std::vector<float> a(n * n), b(n * n);
  for (float& v : a) v = value(rng);
  for (float& v : b) v = value(rng);
  auto run = [&](bool on) {
    use_loops(on);
    buffer da(cpu, a.size() * 4), db(cpu, b.size() * 4), dc(cpu, a.size() * 4);
    da.copy_from_host(a.data(), a.size() * 4);
    db.copy_from_host(b.data(), b.size() * 4);
    dc.fill_bytes(0xff);
    m.get("lecture_tiled")(dim3(tiles, tiles), dim3(16, 16), 0, da.data_as<const float>(), db.data_as<const float>(), dc.data_as<float>(), n);
    std::vector<float> c(a.size());
    dc.copy_to_host(c.data(), c.size() * 4);
    return c;
  };
  const std::vector<float> loops = run(true), fibers = run(false);
  ASSERT_EQ(0, std::memcmp(loops.data(), fibers.data(), loops.size() * 4));
  for (bool on : {true, false}) {
    use_loops(on);
    buffer shaped(cpu, 64 * 4), accumulated(cpu, 64 * 4);
    shaped.fill_bytes(0xff);
    accumulated.fill_bytes(0xff);
    m.get("bound_from_a_shape")(dim3(2), dim3(64), 0, shaped.data_as<float>(), extents_arg{{3, 5}});
    m.get("accumulated_by_every_thread")(dim3(2), dim3(64), 0, accumulated.data_as<float>(), 7);
    std::vector<float> got(64), counts(64);
    shaped.copy_to_host(got.data(), 64 * 4);
    accumulated.copy_to_host(counts.data(), 64 * 4);
    for (int t = 0; t < 64; ++t) {
      EXPECT_EQ(got[t], 0 + 1 + 2 + 3 + 4) << on << ", " << t;
      EXPECT_EQ(counts[t], 7.0f) << on << ", " << t;
    }
  }
  expect_product(loops.data(), a, b, n, n, n);
}

// Loops without barriers whose headers every thread evaluates alike run once
// for the block, the threads' loop inside (loop interchange), so the host
// compiler vectorises across threads; loops whose headers differ between
// threads, loops a break leaves and loops of a known small count stay in
// their threads' loop, as do loops that would gather across a row's threads
// (each thread walking a row of its own).
const char* interchanged = R"(
__global__ void tiled_runtime(const float* a, const float* b, float* c, int n) {
  extern __shared__ float tiles[];
  const int tile = blockDim.x;
  float* as = tiles;
  float* bs = tiles + tile * tile;
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * tile + ty, col = blockIdx.x * tile + tx;
  float acc = 0.0f;
  for (int t0 = 0; t0 < n; t0 += tile) {
    as[ty * tile + tx] = (row < n && t0 + tx < n) ? a[row * n + t0 + tx] : 0.0f;
    bs[ty * tile + tx] = (t0 + ty < n && col < n) ? b[(t0 + ty) * n + col] : 0.0f;
    __syncthreads();
    for (int i = 0; i < tile; ++i) acc += as[ty * tile + i] * bs[i * tile + tx];
    __syncthreads();
  }
  if (row < n && col < n) c[row * n + col] = acc;
}
__global__ void mixed_loops(const float* in, float* out, int n) {
  __shared__ float partial[64];
  float strided = 0.0f, first_big = -1.0f, small = 0.0f, stepped = 0.0f, own_row = 0.0f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) strided += in[i];
  for (int i = 0; i < n; ++i)
    if (in[i] * float(threadIdx.x) > 2.0f) { first_big = float(i); break; }
  for (int i = 0; i < 4; ++i) small += in[i * 3 + threadIdx.x % 3];
  for (int i = 0; i < n; ++i) { stepped += in[i] * float(threadIdx.x + 1); if (threadIdx.x % 5 == 0) ++i; }
  for (int i = 0; i < n; ++i) own_row += in[(threadIdx.x * 7 + i) % n];
  partial[threadIdx.x] = strided;
  __syncthreads();
  out[threadIdx.x] = strided + partial[(threadIdx.x + 1) % blockDim.x] + first_big + small + stepped + own_row;
}
// The header's increment of each thread's pointer runs at the end of the body, per thread.
__global__ void walking_pointers(const float* in, float* out, int n) {
  __shared__ float tile[32];
  const float* p = in + threadIdx.x;
  float acc = 0.0f;
  for (int t0 = 0; t0 < n; t0 += 32, p += 32) {
    tile[threadIdx.x] = *p;
    __syncthreads();
    acc += tile[31 - threadIdx.x] * float(t0 + 1);
    __syncthreads();
  }
  out[blockIdx.x * 32 + threadIdx.x] = acc;
}
)";

TEST_F(RegionLoopsRun, LoopsWithoutBarriersRunOnceForTheBlockWithTheThreadsInside) {
  const auto decided = split(interchanged);
  ASSERT_EQ(decided.split, (std::vector<std::string>{"tiled_runtime", "mixed_loops", "walking_pointers"}))
      << (decided.notes.empty() ? "" : decided.notes.back());
  EXPECT_NE(decided.source.find("for (int t0 = 0; t0 < n; t0 += 32) {"), std::string::npos);
  EXPECT_NE(decided.source.find("p += 32;"), std::string::npos);
  // The tile's loop runs around each row's threads.
  EXPECT_NE(decided.source.find("for (int i = 0; i < tile; ++i) {for (int __ls_x = __ls_x0"), std::string::npos);
  // The others stay whole in the kernel's first region, one loop over the threads.
  const std::string mixed = decided.source.substr(decided.source.find("void mixed_loops"));
  const std::size_t first_region_end = mixed.find("__ls_next_0");
  for (const char* kept : {"strided += in[i]", "first_big = float(i); break;", "small += in[", "stepped += in[i]", "own_row += in["})
    EXPECT_LT(mixed.find(kept), first_region_end) << kept;
  EXPECT_EQ(mixed.substr(0, first_region_end).find("for (int __ls_x"), mixed.substr(0, first_region_end).rfind("for (int __ls_x"));

  const lockstep::module m = lockstep::compile(interchanged, {}, cpu);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  const int n = 45;  // not a multiple of the tile
  std::vector<float> a(n * n), b(n * n);
  for (auto* v : {&a, &b})
    for (float& x : *v) x = value(rng);
  auto run = [&](bool on) {
    use_loops(on);
    buffer da(cpu, a.size() * 4), db(cpu, b.size() * 4), dc(cpu, a.size() * 4), mixed_out(cpu, 64 * 4), walked(cpu, 64 * 4);
    da.copy_from_host(a.data(), a.size() * 4);
    db.copy_from_host(b.data(), b.size() * 4);
    dc.fill_bytes(0xff);
    mixed_out.fill_bytes(0xff);
    walked.fill_bytes(0xff);
    const unsigned tile = 8, tiles = (n + tile - 1) / tile;
    m.get("tiled_runtime")(dim3(tiles, tiles), dim3(tile, tile), 2 * tile * tile * 4, da.data_as<const float>(), db.data_as<const float>(),
                           dc.data_as<float>(), n);
    m.get("mixed_loops")(dim3(1), dim3(64), 0, da.data_as<const float>(), mixed_out.data_as<float>(), n);
    m.get("walking_pointers")(dim3(2), dim3(32), 0, da.data_as<const float>(), walked.data_as<float>(), 64);
    std::vector<float> out(a.size() + 128);
    dc.copy_to_host(out.data(), a.size() * 4);
    mixed_out.copy_to_host(out.data() + a.size(), 64 * 4);
    walked.copy_to_host(out.data() + a.size() + 64, 64 * 4);
    return out;
  };
  const std::vector<float> loops = run(true), fibers = run(false);
  ASSERT_EQ(0, std::memcmp(loops.data(), fibers.data(), loops.size() * 4));
  expect_product(loops.data(), a, b, n, n, n);
  // mixed_loops, thread by thread on the host.
  for (int t = 0; t < 64; ++t) {
    auto strided_of = [&](int u) {
      float s = 0.0f;
      for (int i = u; i < n; i += 64) s += a[i];
      return s;
    };
    float first_big = -1.0f, small = 0.0f, stepped = 0.0f;
    for (int i = 0; i < n; ++i)
      if (a[i] * float(t) > 2.0f) {
        first_big = float(i);
        break;
      }
    for (int i = 0; i < 4; ++i) small += a[i * 3 + t % 3];
    for (int i = 0; i < n; ++i) {
      stepped += a[i] * float(t + 1);
      if (t % 5 == 0) ++i;
    }
    float own_row = 0.0f;
    for (int i = 0; i < n; ++i) own_row += a[(t * 7 + i) % n];
    EXPECT_EQ(loops[n * n + t], strided_of(t) + strided_of((t + 1) % 64) + first_big + small + stepped + own_row) << t;
    float walked = 0.0f;
    for (int t0 = 0; t0 < 64; t0 += 32) walked += a[t0 + 31 - t % 32] * float(t0 + 1);
    EXPECT_EQ(loops[n * n + 64 + t], walked) << t;
  }
}

// Rows of up to 32 threads run such a loop in chunks of 16, the loop's
// per-thread scalars in local arrays; the rest of a row (24 threads: 8),
// rows longer than 32 and rows a mask leaves threads out of (row 1 here)
// run each step over the row. With a thread that returned before the barrier.
const char* short_rows = R"(
__global__ void weighted_rows(const float* w, const float* x, float* out, int depth, int active) {
  extern __shared__ float xs[];  // depth rows of blockDim.x
  const int tx = threadIdx.x, ty = threadIdx.y, width = blockDim.x;
  const int t = (blockIdx.x * blockDim.y + ty) * width + tx;
  for (int i = ty; i < depth; i += blockDim.y) xs[i * width + tx] = x[(blockIdx.x * depth + i) * width + tx];
  if (blockIdx.x == 1 && ty == 0 && tx == 5) return;
  __syncthreads();
  float acc = 0.5f * float(tx);
  int positive = 0;
  if (ty != 1 || tx < active)
    for (int i = 0; i < depth; ++i) {
      acc += w[ty * depth + i] * xs[i * width + tx];
      positive += xs[i * width + tx] > 0.0f;
    }
  out[t] = acc + float(positive);
}
)";

TEST_F(RegionLoopsRun, ShortRowsOfAnInterchangedLoopRunInChunksOfSixteen) {
  const auto decided = split(short_rows);
  ASSERT_EQ(decided.split, std::vector<std::string>{"weighted_rows"}) << (decided.notes.empty() ? "" : decided.notes.back());
  EXPECT_NE(decided.source.find("if (__ls_block.extent_x() <= 32 && !__ls_masked_out) for (; __ls_x0 + 16 <= __ls_block.extent_x(); __ls_x0 += 16)"),
            std::string::npos);
  const lockstep::module m = lockstep::compile(short_rows, {}, cpu);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  const int depth = 37, blocks = 3;
  for (const dim3 block : {dim3(16, 2), dim3(24, 3), dim3(32, 2), dim3(48, 2), dim3(8, 4)}) {
    const int width = int(block.x), rows = int(block.y), active = width - 3, threads = blocks * rows * width;
    std::vector<float> w(rows * depth), x(blocks * depth * width);
    for (auto* v : {&w, &x})
      for (float& e : *v) e = value(rng);
    auto run = [&](bool on) {
      use_loops(on);
      buffer dw(cpu, w.size() * 4), dx(cpu, x.size() * 4), dout(cpu, threads * 4);
      dw.copy_from_host(w.data(), w.size() * 4);
      dx.copy_from_host(x.data(), x.size() * 4);
      dout.fill_bytes(0xff);
      m.get("weighted_rows")(dim3(blocks), block, depth * width * 4, dw.data_as<const float>(), dx.data_as<const float>(), dout.data_as<float>(),
                             depth, active);
      std::vector<float> out(threads);
      dout.copy_to_host(out.data(), threads * 4);
      return out;
    };
    const std::vector<float> loops = run(true), fibers = run(false);
    ASSERT_EQ(0, std::memcmp(loops.data(), fibers.data(), loops.size() * 4)) << block.x << "x" << block.y;
    for (int b = 0; b < blocks; ++b)
      for (int ty = 0; ty < rows; ++ty)
        for (int tx = 0; tx < width; ++tx) {
          const float got = loops[(b * rows + ty) * width + tx];
          if (b == 1 && ty == 0 && tx == 5) {
            EXPECT_TRUE(std::isnan(got));  // returned: unwritten
            continue;
          }
          double acc = 0.5 * tx;
          int positive = 0;
          if (ty != 1 || tx < active)
            for (int i = 0; i < depth; ++i) {
              acc += double(w[ty * depth + i]) * x[(b * depth + i) * width + tx];
              positive += x[(b * depth + i) * width + tx] > 0.0f;
            }
          ASSERT_NEAR(got, acc + positive, 1e-4) << block.x << "x" << block.y << " block " << b << " thread " << tx << ", " << ty;
        }
  }
}

// An if whose condition differs between threads, with such a loop inside:
// each thread's condition goes into a mask and the arms' regions run the
// threads it admits; a device function without barriers whose loops
// interchange gets a block variant that a kernel calls once. Assignments
// and updates under a mask stay each thread's own; a call whose arguments
// differ between threads stays in its region.
const char* masked = R"(
__device__ void naive_product(const float* a, const float* b, float* c, int m, int n, int k) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < m && col < n) {
    float acc = 0.0f;
    for (int i = 0; i < k; ++i) acc += a[row * k + i] * b[i * n + col];
    c[row * n + col] = acc;
  }
}
__global__ void naive(const float* a, const float* b, float* c, int m, int n, int k) { naive_product(a, b, c, m, n, k); }

__device__ void add_all(float* out, const float* in, int at, int n) {
  for (int i = 0; i < n; ++i) out[at] += in[i];
}
__global__ void arms(const float* in, float* out, int n) {
  __shared__ float seen[64];
  const int t = threadIdx.x;
  int count{};
  int hits = 0;
  float acc = 0.0f;
  out[t] = 0.0f;
  if (t % 3 == 0) {
    count = n;
    ++hits;
    for (int i = 0; i < n; ++i) acc += in[i] * float(t);
    if (t % 2 == 0)
      for (int i = 0; i < n; ++i) acc -= in[i];
  } else {
    for (int i = 1; i < n; i += 2) acc += in[i];
  }
  add_all(out, in, t, n / 4);
  seen[t] = acc;
  __syncthreads();
  out[t] += seen[(t + 1) % blockDim.x] + float(count + hits);
}
__global__ void early(const float* in, float* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  if (t < n) {
    for (int i = 0; i < 8 + n % 3; ++i) acc += in[(t + i) % n];
    if (acc > 1.0f) {
      out[t] = -1.0f;
      return;
    }
    out[t] = acc;
  }
}
// A header run once for the block must not divide where no thread would:
// with d == 0 every thread skips the loop.
__global__ void divided(const float* in, float* out, int n, int d) {
  float acc = 0.0f;
  if (d != 0)
    for (int i = 0; i < n / d; ++i) acc += in[i];
  out[threadIdx.x] = acc;
}
// A block variant runs for every thread: under a mask the call stays each thread's.
__device__ void bump(float* out, int n) {
  for (int i = 0; i < n; ++i) out[blockIdx.x * blockDim.x + threadIdx.x] += 1.0f;
}
__global__ void some_threads(float* out, int n) {
  if (threadIdx.x < 5) bump(out, n);
}
)";

TEST_F(RegionLoopsRun, DivergentBranchesAroundLoopsRunUnderMasks) {
  const auto decided = split(masked);
  ASSERT_EQ(decided.split, (std::vector<std::string>{"naive", "arms", "early", "divided", "some_threads"}))
      << (decided.notes.empty() ? "" : decided.notes.back());
  EXPECT_NE(decided.source.find("naive_product__ls_block(__ls_block, a, b, c, m, n, k)"), std::string::npos);
  EXPECT_NE(decided.source.find("__ls_mask_"), std::string::npos);
  const std::string arms =
      decided.source.substr(decided.source.find("void arms"), decided.source.find("void early") - decided.source.find("void arms"));
  EXPECT_EQ(arms.find("add_all__ls_block"), std::string::npos);  // called with the thread's own index

  const lockstep::module m = lockstep::compile(masked, {}, cpu);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  const int rows = 37, cols = 29, depth = 23, n = 50;
  std::vector<float> a(rows * depth), b(depth * cols), in(n);
  for (auto* v : {&a, &b, &in})
    for (float& x : *v) x = value(rng);
  auto run = [&](bool on) {
    use_loops(on);
    buffer da(cpu, a.size() * 4), db(cpu, b.size() * 4), dc(cpu, rows * cols * 4), din(cpu, n * 4), arms_out(cpu, 64 * 4), early_out(cpu, 128 * 4),
        bumped(cpu, 128 * 4);
    bumped.fill_bytes(0);
    da.copy_from_host(a.data(), a.size() * 4);
    db.copy_from_host(b.data(), b.size() * 4);
    din.copy_from_host(in.data(), n * 4);
    for (buffer* p : {&dc, &arms_out, &early_out}) p->fill_bytes(0xff);
    m.get("naive")(dim3((cols + 15) / 16, (rows + 15) / 16), dim3(16, 16), 0, da.data_as<const float>(), db.data_as<const float>(),
                   dc.data_as<float>(), rows, cols, depth);
    m.get("arms")(dim3(1), dim3(64), 0, din.data_as<const float>(), arms_out.data_as<float>(), n);
    m.get("early")(dim3(2), dim3(64), 0, din.data_as<const float>(), early_out.data_as<float>(), n);
    m.get("some_threads")(dim3(2), dim3(64), 0, bumped.data_as<float>(), 3);
    for (int d : {0, 2}) {
      buffer quotient(cpu, 32 * 4);
      quotient.fill_bytes(0xff);
      m.get("divided")(dim3(1), dim3(32), 0, din.data_as<const float>(), quotient.data_as<float>(), n, d);  // no fault with d == 0
      std::vector<float> got(32);
      quotient.copy_to_host(got.data(), 32 * 4);
      float want = 0.0f;
      for (int i = 0; d != 0 && i < n / d; ++i) want += in[i];
      for (int t = 0; t < 32; ++t) EXPECT_EQ(got[t], want) << d << ", " << t;
    }
    std::vector<float> out(rows * cols + 64 + 128 + 128);
    dc.copy_to_host(out.data(), rows * cols * 4);
    arms_out.copy_to_host(out.data() + rows * cols, 64 * 4);
    early_out.copy_to_host(out.data() + rows * cols + 64, 128 * 4);
    bumped.copy_to_host(out.data() + rows * cols + 64 + 128, 128 * 4);
    return out;
  };
  const std::vector<float> loops = run(true), fibers = run(false);
  ASSERT_EQ(0, std::memcmp(loops.data(), fibers.data(), loops.size() * 4));
  expect_product(loops.data(), a, b, rows, depth, cols);
  // arms and early, thread by thread on the host.
  auto arm_value = [&](int t) {
    float acc = 0.0f;
    if (t % 3 == 0) {
      for (int i = 0; i < n; ++i) acc += in[i] * float(t);
      if (t % 2 == 0)
        for (int i = 0; i < n; ++i) acc -= in[i];
    } else {
      for (int i = 1; i < n; i += 2) acc += in[i];
    }
    return acc;
  };
  for (int t = 0; t < 64; ++t) {
    float added = 0.0f;
    for (int i = 0; i < n / 4; ++i) added += in[i];
    const float counted = t % 3 == 0 ? float(n + 1) : 0.0f;  // count and hits only where the branch ran
    EXPECT_NEAR(loops[rows * cols + t], added + arm_value((t + 1) % 64) + counted, 1e-4) << t;
  }
  for (int t = 0; t < 128; ++t) {
    const float got = loops[rows * cols + 64 + t];
    if (t >= n) {
      std::uint32_t bits;
      std::memcpy(&bits, &got, 4);
      EXPECT_EQ(bits, 0xffffffffu) << t;  // still poisoned
      continue;
    }
    float acc = 0.0f;
    for (int i = 0; i < 8 + n % 3; ++i) acc += in[(t + i) % n];
    EXPECT_EQ(got, acc > 1.0f ? -1.0f : acc) << t;
    EXPECT_EQ(loops[rows * cols + 64 + 128 + t], t % 64 < 5 ? 3.0f : 0.0f) << t;
  }
}

// Kernels that read threadIdx.x and blockIdx.x only as blockIdx.x *
// blockDim.x + threadIdx.x run several blocks along x as one call (rows
// spanning them); kernels that read either alone, use shared memory, call
// what reads blockIdx, or have a loop each thread runs whole (grid_stride), do not.
const char* along_x = R"(
__global__ void scale_2d(const float* in, float* out, int width, int height) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (col < width && row < height) out[row * width + col] = 2.0f * in[row * width + col] + float(row);
}
__global__ void python_style(float* out, long long n) {
  const long long i = (static_cast<long long>(threadIdx.x) + static_cast<long long>(blockIdx.x) * blockDim.x);
  if (i < n) out[i] = float(i % 7);
}
__global__ void grid_stride(float* out, int n) {
  for (unsigned i = threadIdx.x + blockDim.x * blockIdx.x; i < unsigned(n); i += blockDim.x * gridDim.x) out[i] += 1.0f;
}
__device__ void row_dot(const float* a, const float* b, float* c, int m, int n, int k) {
  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < m && col < n) {
    float acc = 0.0f;
    for (int i = 0; i < k; ++i) acc += a[row * k + i] * b[i * n + col];
    c[row * n + col] = acc;
  }
}
__global__ void naive(const float* a, const float* b, float* c, int m, int n, int k) { row_dot(a, b, c, m, n, k); }

__global__ void thread_x_alone(float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = float(threadIdx.x);
}
__global__ void block_x_alone(float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = float(blockIdx.x);
}
__device__ float block_of() { return float(blockIdx.x); }
__global__ void block_x_in_a_call(float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = block_of();
}
__global__ void block_sized_sum(float* out) {
  int i = (blockIdx.x * 64) + threadIdx.x;  // the block's size as a constant: not blockDim.x
  out[i] = float(i);
}
__global__ void shared_counter(float* out) {
  __shared__ int seen;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i % 64 == 0) seen = i;
  out[i] = float(i);
}
)";

TEST_F(RegionLoopsRun, BlocksAlongXRunAsOneWhereXIsReadOnlyAsAGlobalIndex) {
  const auto decided = split(along_x);
  EXPECT_EQ(decided.along_x, (std::vector<std::string>{"scale_2d", "python_style", "naive"}));
  EXPECT_EQ(decided.split.size(), 9u);
  EXPECT_NE(decided.source.find("loop_claim_block({true, "), std::string::npos);
  EXPECT_NE(decided.source.find("row_dot__ls_block(__ls_block, a, b, c, m, n, k)"), std::string::npos);

  const lockstep::module m = lockstep::compile(along_x, {}, cpu);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  // Enough blocks that one worker's chunks hold runs of many (a chunk is a
  // 64th of the blocks), rows of the grid that end inside a chunk, and
  // blocks past the data's edge.
  const int width = 1001, height = 9, n = 64 * 700 - 13, rows = 19, cols = 1000, depth = 7;
  std::vector<float> image(width * height), a(rows * depth), b(depth * cols);
  for (auto* v : {&image, &a, &b})
    for (float& x : *v) x = value(rng);
  auto run = [&](bool on, unsigned workers) {
    use_loops(on);
    lockstep::emu::options o = lockstep::emu::get_options();
    o.workers = workers;
    lockstep::emu::set_options(o);
    buffer din(cpu, image.size() * 4), dout(cpu, image.size() * 4), flat(cpu, n * 4), strided(cpu, n * 4), da(cpu, a.size() * 4),
        db(cpu, b.size() * 4), dc(cpu, rows * cols * 4), alone(cpu, 5 * 64 * 300 * 4);
    din.copy_from_host(image.data(), image.size() * 4);
    da.copy_from_host(a.data(), a.size() * 4);
    db.copy_from_host(b.data(), b.size() * 4);
    for (buffer* p : {&dout, &flat, &dc, &alone}) p->fill_bytes(0xff);  // NaN: an unwritten element fails
    strided.fill_bytes(0);
    m.get("scale_2d")(dim3((width + 7) / 8, (height + 3) / 4), dim3(8, 4), 0, din.data_as<const float>(), dout.data_as<float>(), width, height);
    m.get("python_style")(dim3((n + 63) / 64), dim3(64), 0, flat.data_as<float>(), static_cast<long long>(n));
    m.get("grid_stride")(dim3(300), dim3(32), 0, strided.data_as<float>(), n);
    m.get("naive")(dim3((cols + 15) / 16, (rows + 15) / 16), dim3(16, 16), 0, da.data_as<const float>(), db.data_as<const float>(),
                   dc.data_as<float>(), rows, cols, depth);
    int k = 0;
    for (const char* name : {"thread_x_alone", "block_x_alone", "block_x_in_a_call", "block_sized_sum", "shared_counter"})
      m.get(name)(dim3(300), dim3(64), 0, alone.data_as<float>() + 64 * 300 * k++);
    std::vector<float> out(image.size() + 2 * n + rows * cols + 5 * 64 * 300);
    float* at = out.data();
    dout.copy_to_host(at, image.size() * 4), at += image.size();
    flat.copy_to_host(at, n * 4), at += n;
    strided.copy_to_host(at, n * 4), at += n;
    dc.copy_to_host(at, rows * cols * 4), at += rows * cols;
    alone.copy_to_host(at, 5 * 64 * 300 * 4);
    return out;
  };
  const std::vector<float> fibers = run(false, 1);
  for (unsigned workers : {1u, 2u}) {
    const std::vector<float> loops = run(true, workers);
    ASSERT_EQ(0, std::memcmp(loops.data(), fibers.data(), loops.size() * 4)) << workers;
  }
  const float* at = fibers.data();
  for (int i = 0; i < width * height; ++i) ASSERT_EQ(at[i], 2.0f * image[i] + float(i / width)) << i;
  at += width * height;
  for (int i = 0; i < n; ++i) ASSERT_EQ(at[i], float(i % 7)) << i;
  at += n;
  for (int i = 0; i < n; ++i) ASSERT_EQ(at[i], 1.0f) << i;
  at += n;
  expect_product(at, a, b, rows, depth, cols);
  at += rows * cols;
  for (int i = 0; i < 64 * 300; ++i) {
    ASSERT_EQ(at[i], float(i % 64)) << i;
    ASSERT_EQ(at[64 * 300 + i], float(i / 64)) << i;
    ASSERT_EQ(at[2 * 64 * 300 + i], float(i / 64)) << i;
    ASSERT_EQ(at[3 * 64 * 300 + i], float(i)) << i;
    ASSERT_EQ(at[4 * 64 * 300 + i], float(i)) << i;
  }
}

// An element read through a `const T* __restrict__` parameter at an index
// the block shares is the block's (read-only for the launch): a batch's
// offset, a loop bound around a barrier. Without __restrict__, or with the
// pointer changed, it may differ, and the kernel stays on fibers.
const char* restrict_reads = R"(
__global__ void batched_sums(const float* in, float* out, const int* __restrict__ starts, const int* __restrict__ counts) {
  __shared__ float staged[64];
  const int z = blockIdx.y;
  float acc = 0.0f;
  for (int at = 0; at < counts[z]; at += 64) {
    __syncthreads();
    staged[threadIdx.x] = at + threadIdx.x < counts[z] ? in[starts[z] + at + threadIdx.x] : 0.0f;
    __syncthreads();
    if (threadIdx.x == 0)
      for (int i = 0; i < 64; ++i) acc += staged[i];
  }
  if (threadIdx.x == 0) out[z] = acc;
}
__global__ void without_restrict(float* out, const int* counts) {
  for (int i = 0; i < counts[blockIdx.x]; ++i) __syncthreads();
  out[threadIdx.x] = 1.0f;
}
__global__ void moved_pointer(float* out, const int* __restrict__ counts) {
  counts += threadIdx.x % 2;
  for (int i = 0; i < counts[blockIdx.x]; ++i) __syncthreads();
  out[threadIdx.x] = 1.0f;
}
)";

TEST_F(RegionLoopsRun, ReadOnlyRestrictParametersAreTheBlocks) {
  const auto decided = split(restrict_reads);
  EXPECT_EQ(decided.split, std::vector<std::string>{"batched_sums"});
  EXPECT_TRUE(notes_mention(decided, "kernel without_restrict "));
  EXPECT_TRUE(notes_mention(decided, "kernel moved_pointer "));

  const lockstep::module m = lockstep::compile(restrict_reads, {}, cpu);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  const std::vector<int> starts = {0, 100, 100, 350}, counts = {100, 0, 250, 37};
  std::vector<float> in(400);
  for (float& x : in) x = value(rng);
  auto run = [&](bool on) {
    use_loops(on);
    buffer din(cpu, in.size() * 4), dout(cpu, 4 * 4), dstarts(cpu, 4 * 4), dcounts(cpu, 4 * 4);
    din.copy_from_host(in.data(), in.size() * 4);
    dstarts.copy_from_host(starts.data(), 4 * 4);
    dcounts.copy_from_host(counts.data(), 4 * 4);
    dout.fill_bytes(0xff);
    m.get("batched_sums")(dim3(1, 4), dim3(64), 0, din.data_as<const float>(), dout.data_as<float>(), dstarts.data_as<const int>(),
                          dcounts.data_as<const int>());
    std::vector<float> out(4);
    dout.copy_to_host(out.data(), 4 * 4);
    return out;
  };
  const std::vector<float> loops = run(true), fibers = run(false);
  ASSERT_EQ(0, std::memcmp(loops.data(), fibers.data(), 4 * 4));
  for (int z = 0; z < 4; ++z) {
    double want = 0;
    for (int i = 0; i < counts[z]; ++i) want += in[starts[z] + i];
    EXPECT_NEAR(loops[z], want, 1e-4) << z;
  }
}

// A constructor that reads the thread's coordinates makes a value of each
// thread's own, not one the block shares (it was computed once for the block).
const char* constructed = R"(
struct lane_of {
  int v;
  __device__ explicit lane_of(int base) : v(base + threadIdx.x) {}
};
struct scaled {
  int v;
  __device__ explicit scaled(int x) : v(3 * x) {}
};
__global__ void constructed_per_thread(int* out, int base) {
  __shared__ int staged[64];
  const lane_of mine(base);
  const scaled shared_value(base);
  staged[threadIdx.x] = mine.v;
  __syncthreads();
  out[threadIdx.x] = staged[63 - threadIdx.x] * 1000 + mine.v + shared_value.v;
}
)";

TEST_F(RegionLoopsRun, AConstructorThatReadsTheThreadMakesAPerThreadValue) {
  const auto decided = split(constructed);
  ASSERT_EQ(decided.split, std::vector<std::string>{"constructed_per_thread"}) << (decided.notes.empty() ? "" : decided.notes.back());
  const lockstep::module m = lockstep::compile(constructed, {}, cpu);
  auto run = [&](bool on) {
    use_loops(on);
    buffer out(cpu, 64 * 4);
    out.fill_bytes(0xff);
    m.get("constructed_per_thread")(dim3(1), dim3(64), 0, out.data_as<int>(), 7);
    std::vector<int> got(64);
    out.copy_to_host(got.data(), 64 * 4);
    return got;
  };
  const std::vector<int> loops = run(true), fibers = run(false);
  EXPECT_EQ(loops, fibers);
  for (int t = 0; t < 64; ++t) EXPECT_EQ(loops[t], (7 + 63 - t) * 1000 + 7 + t + 21) << t;
}

// A template's call that resolves to a function template with a parameter
// pack, which lists fewer parameters than the call has arguments, may write
// any of them: `acc` and `other` here are changed between the barriers.
const char* variadic = R"(
template <class... T>
__device__ void add_to(float v, T&... xs) { ((xs += v), ...); }
template <class T>
__global__ void bumped(T* out) {
  __shared__ T staged[64];
  T acc = T(threadIdx.x), other = T(2 * threadIdx.x);
  staged[threadIdx.x] = acc;
  __syncthreads();
  add_to(2.0f, acc, other);
  __syncthreads();
  out[threadIdx.x] = acc + other + staged[63 - threadIdx.x];
}
template __global__ void bumped<float>(float*);
)";

TEST_F(RegionLoopsRun, ATemplatesCallOfAVariadicTemplateMayWriteItsArguments) {
  const auto decided = split(variadic);
  ASSERT_EQ(decided.split, std::vector<std::string>{"bumped"}) << (decided.notes.empty() ? "" : decided.notes.back());
  lockstep::compile_options names;
  names.names = {"bumped<float>"};
  const lockstep::module m = lockstep::compile(variadic, names, cpu);
  auto run = [&](bool on) {
    use_loops(on);
    buffer out(cpu, 64 * 4);
    out.fill_bytes(0xff);
    m.get("bumped<float>")(dim3(1), dim3(64), 0, out.data_as<float>());
    std::vector<float> got(64);
    out.copy_to_host(got.data(), 64 * 4);
    return got;
  };
  const std::vector<float> loops = run(true), fibers = run(false);
  EXPECT_EQ(loops, fibers);
  for (int t = 0; t < 64; ++t) EXPECT_EQ(loops[t], float(2 * t + 67)) << t;
}

// Warp collectives as steps over the lanes: each lane's call gathered, the
// warps answered as the fiber engine answers the lanes that meet, then the
// statement with the answers. Shuffles in uniform loops and under a mask
// (`if (warp == 0)`), every shuffle and vote on a partial warp, lanes that
// exited before, two calls in one statement, divergent arms, a vote as a
// branch's condition.
const char* collectives = R"(
__global__ void block_sum(const float* in, float* out) {
  __shared__ float partial[32];
  float v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < blockDim.x / 32 ? partial[lane] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    if (lane == 0) out[blockIdx.x] = v;
  }
}
template <class T>
__global__ void lanes(const T* in, T* out, unsigned* votes, int n) {
  const int i = threadIdx.x;
  if (i >= n) return;
  const unsigned active = __activemask();
  const T v = in[i];
  out[i * 4 + 0] = __shfl_sync(active, v, (i * 7) % 32) + __shfl_up_sync(active, v, 3, 16);
  out[i * 4 + 1] = __shfl_down_sync(active, v, 5, 8);
  T x = __shfl_xor_sync(active, v, 9);
  __syncwarp(active);
  out[i * 4 + 2] = x;
  votes[i * 8 + 0] = __ballot_sync(active, v > T(0));
  votes[i * 8 + 1] = __any_sync(active, v > T(50)) + 2 * __all_sync(active, v > T(-90));
  votes[i * 8 + 2] = active;
  if (i % 3 == 0)
    votes[i * 8 + 3] = __activemask();
  else
    votes[i * 8 + 3] = __activemask() << 1;
  votes[i * 8 + 4] = __reduce_add_sync(active, unsigned(i));
  votes[i * 8 + 5] = __reduce_min_sync(active, int(v));
  votes[i * 8 + 6] = __match_any_sync(active, int(v) % 4);
  if (i % 2 == 1) out[i * 4 + 3] = __shfl_down_sync(0xaaaaaaaau & active, v, 2);
  else out[i * 4 + 3] = __shfl_up_sync(0x55555555u & active, v, 2);
  votes[i * 8 + 7] = __ballot_sync(active, (i & 1) != 0);
  if (__any_sync(active, v > T(90))) out[i * 4 + 3] += T(1000);
}
// A value-returning device function whose waits are shuffles and votes:
// called by every lane, and by one warp's lanes only.
__device__ float warp_total(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}
__device__ int lanes_above(int v, int limit) {
  if (v == limit) return -1;
  const unsigned active = __activemask();
  const unsigned above = __ballot_sync(active, v > limit);
  return __popc(above);
}
__global__ void warp_totals(const float* in, float* out, int* counts) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float v = warp_total(in[i]);
  if (threadIdx.x % 32 == 0) out[i / 32] = v;
  if (threadIdx.x / 32 == 1) out[64 + blockIdx.x * 32 + threadIdx.x % 32] = warp_total(in[i] * 2.0f);
  counts[i] = lanes_above(int(in[i]), 0);
}
// Misuses the fiber engine names: a lane missing from its own mask, and a
// mask naming lanes that have exited.
__global__ void without_self(int* out) {
  out[threadIdx.x] = __shfl_sync(threadIdx.x == 5 ? 0xffffffdfu : 0xffffffffu, out[threadIdx.x], 0);
}
__global__ void after_exit(int* out) {
  if (threadIdx.x == 3) return;
  out[threadIdx.x] = __shfl_sync(0xffffffffu, out[threadIdx.x], 0);
}
)";

TEST_F(RegionLoopsRun, WarpCollectivesRunAsStepsOverTheLanes) {
  const auto decided = split(collectives);
  ASSERT_EQ(decided.split, (std::vector<std::string>{"block_sum", "lanes", "warp_totals", "without_self", "after_exit"}))
      << (decided.notes.empty() ? "" : decided.notes.back());
  lockstep::compile_options names;
  names.names = {"block_sum", "lanes<int>", "lanes<double>", "warp_totals", "without_self", "after_exit"};
  use_loops(true);  // the module is split whatever LOCKSTEP_EMU_ENGINE says (the fibers' run of the suite sets it)
  const lockstep::module m = lockstep::compile(collectives, names, cpu);
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> value(-100, 100);

  const int blocks = 3, threads = 256;
  std::vector<float> in(blocks * threads);
  for (float& x : in) x = float(value(rng));  // integers: every order of the sum is exact
  auto sums = [&](bool on) {
    use_loops(on);
    buffer din(cpu, in.size() * 4), dout(cpu, blocks * 4);
    din.copy_from_host(in.data(), in.size() * 4);
    dout.fill_bytes(0xff);
    m.get("block_sum")(dim3(blocks), dim3(threads), 0, din.data_as<const float>(), dout.data_as<float>());
    std::vector<float> out(blocks);
    dout.copy_to_host(out.data(), blocks * 4);
    return out;
  };
  const std::vector<float> loops = sums(true);
  EXPECT_EQ(loops, sums(false));
  for (int b = 0; b < blocks; ++b) {
    double want = 0;
    for (int t = 0; t < threads; ++t) want += in[b * threads + t];
    EXPECT_EQ(loops[b], want) << b;
  }

  // Device functions called by the lanes: two blocks of 128 threads.
  auto totals = [&](bool on) {
    use_loops(on);
    buffer din(cpu, 256 * 4), dout(cpu, 128 * 4), dcounts(cpu, 256 * 4);
    din.copy_from_host(in.data(), 256 * 4);
    dout.fill_bytes(0xff);
    dcounts.fill_bytes(0xff);
    m.get("warp_totals")(dim3(2), dim3(128), 0, din.data_as<const float>(), dout.data_as<float>(), dcounts.data_as<int>());
    std::vector<float> out(128);
    std::vector<int> counts(256);
    dout.copy_to_host(out.data(), 128 * 4);
    dcounts.copy_to_host(counts.data(), 256 * 4);
    return std::make_pair(out, counts);
  };
  const auto totals_loops = totals(true), totals_fibers = totals(false);
  EXPECT_EQ(0, std::memcmp(totals_loops.first.data(), totals_fibers.first.data(), 128 * 4));
  EXPECT_EQ(totals_loops.second, totals_fibers.second);
  for (int w = 0; w < 8; ++w) {
    double sum = 0;
    int above = 0;
    for (int l = 0; l < 32; ++l) {
      sum += in[w * 32 + l];
      above += in[w * 32 + l] > 0;
    }
    EXPECT_EQ(totals_loops.first[w], sum) << w;
    for (int l = 0; l < 32; ++l) EXPECT_EQ(totals_loops.second[w * 32 + l], in[w * 32 + l] == 0 ? -1 : above) << w << ", " << l;
    if (w % 4 == 1) {  // warp 1 of each block, its lanes' doubled sums down the tree
      std::vector<float> tree(32);
      for (int l = 0; l < 32; ++l) tree[l] = in[w * 32 + l] * 2.0f;
      for (int offset = 16; offset > 0; offset /= 2) {
        std::vector<float> moved(32);
        for (int l = 0; l < 32; ++l) moved[l] = l + offset < 32 ? tree[l + offset] : tree[l];
        for (int l = 0; l < 32; ++l) tree[l] += moved[l];
      }
      for (int l = 0; l < 32; ++l) EXPECT_EQ(totals_loops.first[64 + (w / 4) * 32 + l], tree[l]) << w << ", " << l;
    }
  }

  // 48 threads: a full warp and a partial one; lanes from n on return first.
  const int lanes_in_block = 48;
  std::vector<int> ints(lanes_in_block);
  for (int& x : ints) x = value(rng);
  for (int n : {48, 40, 29}) {
    auto run = [&](bool on, auto zero) {
      using T = decltype(zero);
      use_loops(on);
      std::vector<T> values(ints.begin(), ints.end());
      buffer din(cpu, lanes_in_block * sizeof(T)), dout(cpu, lanes_in_block * 4 * sizeof(T)), dvotes(cpu, lanes_in_block * 8 * 4);
      din.copy_from_host(values.data(), values.size() * sizeof(T));
      dout.fill_bytes(0xff);
      dvotes.fill_bytes(0xff);
      m.get(std::is_same_v<T, int> ? "lanes<int>" : "lanes<double>")(dim3(1), dim3(lanes_in_block), 0, din.data_as<const T>(), dout.data_as<T>(),
                                                                     dvotes.data_as<unsigned>(), n);
      std::vector<T> out(lanes_in_block * 4);
      std::vector<unsigned> votes(lanes_in_block * 8);
      dout.copy_to_host(out.data(), out.size() * sizeof(T));
      dvotes.copy_to_host(votes.data(), votes.size() * 4);
      return std::make_pair(out, votes);
    };
    // __activemask() in divergent arms: the fibers let both arms' lanes meet,
    // the loops answer each arm's lanes, as a GPU's independent threads do.
    auto but_arms = [](std::vector<unsigned> votes) {
      for (std::size_t i = 3; i < votes.size(); i += 8) votes[i] = 0;
      return votes;
    };
    const auto loops_double = run(true, 0.0), fibers_double = run(false, 0.0);
    EXPECT_EQ(0, std::memcmp(loops_double.first.data(), fibers_double.first.data(), loops_double.first.size() * sizeof(double))) << n;
    EXPECT_EQ(but_arms(loops_double.second), but_arms(fibers_double.second)) << n;
    const auto got = run(true, 0), fibers = run(false, 0);
    EXPECT_EQ(got.first, fibers.first) << n;
    ASSERT_EQ(but_arms(got.second), but_arms(fibers.second)) << n;
    // A few answers from the host: the lanes that came, a ballot, a sum, the arms' masks.
    for (int i = 0; i < n; ++i) {
      const int warp = i / 32, first = warp * 32, last = std::min(n, first + 32);
      unsigned active = 0, positive = 0, odd = 0, sum = 0, third = 0;
      for (int l = first; l < last; ++l) {
        active |= 1u << (l - first);
        positive |= (ints[l] > 0 ? 1u : 0u) << (l - first);
        odd |= unsigned(l & 1) << (l - first);
        third |= (l % 3 == 0 ? 1u : 0u) << (l - first);
        sum += unsigned(l);
      }
      const unsigned* v = &got.second[i * 8];
      EXPECT_EQ(v[0], positive) << n << ", " << i;
      EXPECT_EQ(v[2], active) << n << ", " << i;
      EXPECT_EQ(v[3], i % 3 == 0 ? third : (active & ~third) << 1) << n << ", " << i;
      EXPECT_EQ(v[4], sum) << n << ", " << i;
      EXPECT_EQ(v[7], odd) << n << ", " << i;
      const int source = first + ((i - first) ^ 9);
      EXPECT_EQ(got.first[i * 4 + 2], source < last ? ints[source] : ints[i]) << n << ", " << i;
      const bool any_above = std::any_of(ints.begin() + first, ints.begin() + last, [](int x) { return x > 90; });
      const int arm = i % 2 == 1 ? (i + 2 < last && (i + 2 - first) < 32 ? ints[i + 2] : ints[i]) : (i - 2 >= first ? ints[i - 2] : ints[i]);
      EXPECT_EQ(got.first[i * 4 + 3], arm + (any_above ? 1000 : 0)) << n << ", " << i;
    }
    for (int i = n; i < lanes_in_block; ++i) EXPECT_EQ(got.second[i * 8], 0xffffffffu) << n << ", " << i;  // exited: still poisoned
  }

  // The loops leave a misuse to the fibers, which name the lane.
  for (const char* kernel : {"without_self", "after_exit"}) {
    std::string said[2];
    for (bool on : {true, false}) {
      use_loops(on);
      buffer out(cpu, 64 * 4);
      out.fill_bytes(0);
      try {
        m.get(kernel)(dim3(1), dim3(64), 0, out.data_as<int>());
        lockstep::synchronize(cpu);
      } catch (const std::exception& e) {
        said[on] = e.what();
      }
    }
    EXPECT_FALSE(said[false].empty()) << kernel;
    EXPECT_EQ(said[true], said[false]) << kernel;
  }
}

// A 2-D register-tiled product: 64 threads, each an 8x8 tile of C kept in
// registers across the k-tiles' barriers, stored through a device function
// that takes the whole tile by reference.
const char* register_tiled = R"(
__device__ void store_tile(float* c, int m, int n, int row0, int col0, const float (&acc)[8][8]) {
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j)
      if (row0 + i < m && col0 + j < n) c[(row0 + i) * n + col0 + j] = acc[i][j];
}
__global__ void register_tiled(const float* a, const float* b, float* c, int m, int n, int k) {
  __shared__ float a_tile[64][8];
  __shared__ float b_tile[8][64];
  const int tid = threadIdx.x;
  const int row0 = blockIdx.y * 64 + tid / 8 * 8, col0 = blockIdx.x * 64 + tid % 8 * 8;
  const int a_row = blockIdx.y * 64 + tid, b_col = blockIdx.x * 64 + tid;
  float acc[8][8] = {};
  float a_regs[8], b_regs[8];
  for (int t0 = 0; t0 < k; t0 += 8) {
    for (int q = 0; q < 8; ++q) {
      a_tile[tid][q] = a_row < m && t0 + q < k ? a[a_row * k + t0 + q] : 0.0f;
      b_tile[q][tid] = t0 + q < k && b_col < n ? b[(t0 + q) * n + b_col] : 0.0f;
    }
    __syncthreads();
    for (int p = 0; p < 8; ++p) {
      for (int i = 0; i < 8; ++i) a_regs[i] = a_tile[tid / 8 * 8 + i][p];
      for (int j = 0; j < 8; ++j) b_regs[j] = b_tile[p][tid % 8 * 8 + j];
      for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 8; ++j) acc[i][j] += a_regs[i] * b_regs[j];
    }
    __syncthreads();
  }
  store_tile(c, m, n, row0, col0, acc);
}
)";

TEST_F(RegionLoopsRun, RegisterTilesRunInCopiesOfTheirArrays) {
  const auto decided = split(register_tiled);
  ASSERT_EQ(decided.split, std::vector<std::string>{"register_tiled"}) << (decided.notes.empty() ? "" : decided.notes.back());
  use_loops(true);  // the module is split whatever LOCKSTEP_EMU_ENGINE says
  const lockstep::module m = lockstep::compile(register_tiled, {}, cpu);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  const int rows = 70, depth = 37, cols = 75;  // partial tiles on every side, a partial k-tile
  std::vector<float> a(rows * depth), b(depth * cols);
  for (float& x : a) x = value(rng);
  for (float& x : b) x = value(rng);
  auto product = [&](bool on) {
    use_loops(on);
    buffer da(cpu, a.size() * 4), db(cpu, b.size() * 4), dc(cpu, rows * cols * 4);
    da.copy_from_host(a.data(), a.size() * 4);
    db.copy_from_host(b.data(), b.size() * 4);
    dc.fill_bytes(0xff);  // NaN: an unwritten element fails
    m.get("register_tiled")(dim3(2, 2), dim3(64), 0, da.data_as<const float>(), db.data_as<const float>(), dc.data_as<float>(), rows, cols, depth);
    std::vector<float> c(rows * cols);
    dc.copy_to_host(c.data(), c.size() * 4);
    return c;
  };
  const std::vector<float> loops = product(true);
  EXPECT_EQ(0, std::memcmp(loops.data(), product(false).data(), loops.size() * 4));
  expect_product(loops.data(), a, b, rows, depth, cols);
}

// Value-returning device functions that wait at block barriers, a function
// and a template, called by a kernel and by a kernel template (whose calls
// resolve only when it is instantiated).
const char* block_functions = R"(
__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}
// The block's sum, in every thread.
__device__ float block_sum(float v) {
  __shared__ float partial[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_sum(v);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = threadIdx.x < (blockDim.x + 31) / 32 ? partial[lane] : 0.0f;
  if (warp == 0) v = warp_sum(v);
  if (threadIdx.x == 0) partial[0] = v;
  __syncthreads();
  const float total = partial[0];
  __syncthreads();
  return total;
}
template <class T>
__device__ T block_max(T v, T* scratch) {
  scratch[threadIdx.x] = v;
  __syncthreads();
#pragma unroll
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s && scratch[threadIdx.x + s] > scratch[threadIdx.x]) scratch[threadIdx.x] = scratch[threadIdx.x + s];
    __syncthreads();
  }
  const T m = scratch[0];
  __syncthreads();
  return m;
}
// out[i] = x[i] / the block's sum, then each round adds the sum of the shifted row.
__global__ void normalize(const float* x, float* out, int rounds) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float v = x[i];
  float acc = v / block_sum(v);
  for (int r = 1; r <= rounds; ++r) acc += block_sum(x[blockIdx.x * blockDim.x + (threadIdx.x + r) % blockDim.x]) + block_sum(float(r));
  out[i] = acc;
}
template <class T>
__global__ void max_minus(const T* x, T* out, int n) {
  __shared__ T scratch[256];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const T v = i < n ? x[i] : T(-1000);
  const T m = block_max(v, scratch);
  const float total = block_sum(float(v));
  if (i < n) out[i] = m - v + T(total > 0);
}
// Barriers that answer a vote, after threads from n on returned.
__global__ void votes(const int* flags, int* out, int n) {
  if (threadIdx.x >= n) return;
  const int i = blockIdx.x * blockDim.x + threadIdx.x, p = flags[i];
  const int counted = __syncthreads_count(p) + 1000 * __syncthreads_and(p);
  out[i] = counted + 100000 * __syncthreads_or(p && threadIdx.x % 7 == 3);
}
__global__ void divergent_call(float* out) {
  float v = threadIdx.x;
  if (threadIdx.x < 100) v = block_sum(v);
  out[threadIdx.x] = v;
}
)";

TEST_F(RegionLoopsRun, ValueReturningFunctionsWithBarriersRunForTheBlock) {
  const auto decided = split(block_functions);
  ASSERT_EQ(decided.split, (std::vector<std::string>{"normalize", "max_minus", "votes"})) << (decided.notes.empty() ? "" : decided.notes.back());
  EXPECT_TRUE(notes_mention(decided, "divergent_call")) << "a call of a function with barriers under a divergent branch stays on fibers";
  lockstep::compile_options names;
  names.names = {"normalize", "max_minus<double>", "max_minus<int>", "votes"};
  use_loops(true);  // the module is split whatever LOCKSTEP_EMU_ENGINE says
  const lockstep::module m = lockstep::compile(block_functions, names, cpu);
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> value(-100, 100), positive(1, 100);

  const int blocks = 3, threads = 256, rounds = 3;
  std::vector<float> in(blocks * threads), signed_in(blocks * threads);
  for (float& x : in) x = float(positive(rng));
  for (float& x : signed_in) x = float(value(rng));
  auto normalized = [&](bool on) {
    use_loops(on);
    return run_into<float>(m, "normalize", dim3(blocks), dim3(threads), in, in.size(), rounds);
  };
  const std::vector<float> loops = normalized(true);
  EXPECT_EQ(0, std::memcmp(loops.data(), normalized(false).data(), loops.size() * 4));
  for (int b = 0; b < blocks; ++b) {
    double sum = 0;
    for (int t = 0; t < threads; ++t) sum += in[b * threads + t];
    for (int t = 0; t < threads; ++t) {
      double want = in[b * threads + t] / sum;
      for (int r = 1; r <= rounds; ++r) want += sum + double(r) * threads;
      EXPECT_NEAR(loops[b * threads + t], want, 1e-5 * std::abs(want) + 1e-4) << b << ", " << t;
    }
  }

  // The template, on a partial last block (n = 700 of 768): its idle threads pass -1000.
  const int n = 700;
  auto maxima = [&](bool on, auto zero) {
    using T = decltype(zero);
    use_loops(on);
    std::vector<T> x(blocks * threads);
    for (int i = 0; i < n; ++i) x[i] = T(signed_in[i]);
    return run_into<T>(m, std::is_same_v<T, int> ? "max_minus<int>" : "max_minus<double>", dim3(blocks), dim3(threads), x, x.size(), n);
  };
  const std::vector<int> integers = maxima(true, 0);
  EXPECT_EQ(integers, maxima(false, 0));
  const std::vector<double> reals = maxima(true, 0.0);
  EXPECT_EQ(0, std::memcmp(reals.data(), maxima(false, 0.0).data(), reals.size() * sizeof(double)));
  for (int b = 0; b < blocks; ++b) {
    double top = -1000, total = 0;
    for (int t = 0; t < threads; ++t) {
      const int i = b * threads + t;
      const double v = i < n ? double(signed_in[i]) : -1000.0;
      top = std::max(top, v);
      total += v;  // integers: exact in any order
    }
    for (int t = 0; t < threads && b * threads + t < n; ++t) {
      const int i = b * threads + t;
      EXPECT_EQ(reals[i], top - signed_in[i] + (total > 0)) << i;
      EXPECT_EQ(integers[i], int(top - signed_in[i]) + (total > 0)) << i;
    }
  }
  EXPECT_TRUE(std::isnan(reals[n])) << "an element no thread writes stays poisoned";
  EXPECT_EQ(integers[n], -1);

  // Votes: all true, all false, and random flags, over the threads below n.
  for (const int pattern : {0, 1, 2})
    for (const int came : {256, 200, 33}) {
      std::vector<int> flags(blocks * threads);
      for (int& f : flags) f = pattern == 2 ? int(positive(rng) > 50) : pattern;
      auto voted = [&](bool on) {
        use_loops(on);
        return run_into<int>(m, "votes", dim3(blocks), dim3(threads), flags, flags.size(), came);
      };
      const std::vector<int> got = voted(true);
      EXPECT_EQ(got, voted(false)) << pattern << ", " << came;
      for (int b = 0; b < blocks; ++b) {
        int count = 0, any = 0;
        for (int t = 0; t < came; ++t) count += flags[b * threads + t], any |= flags[b * threads + t] && t % 7 == 3;
        for (int t = 0; t < threads; ++t)
          EXPECT_EQ(got[b * threads + t], t < came ? count + 1000 * (count == came) + 100000 * any : -1) << pattern << ", " << came << ", " << t;
      }
    }
}

// Cooperative groups' tiles of one warp and coalesced groups: each call that
// meets its warp once is a collective step whose statement runs again with
// the lanes' answers (a tile's ballot is shifted to its ranks, any and all
// compare it with the mask); cg::reduce with cooperative groups' operators
// takes each lane's value and gives each tile's xor butterfly, bit for bit.
const char* tiles = R"(
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void tile_ops(const float* x, float* sums, unsigned* ballots, int* votes, float* neighbours) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  cg::thread_block_tile<8> eight = cg::tiled_partition<8>(block);
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[i];
  for (int offset = warp.size() / 2; offset > 0; offset /= 2) v += warp.shfl_down(v, offset);
  const int any = warp.any(x[i] > 90);
  const unsigned b = eight.ballot(x[i] > 0);
  const int all = eight.all(x[i] > -90);
  warp.sync();
  cg::sync(eight);
  const float next = eight.shfl_xor(x[i], 1);
  neighbours[i] = next + eight.shfl(x[i], eight.size() - 1);
  votes[2 * i + 1] = -1;
  if (x[i] > 0) {
    cg::coalesced_group positive = cg::coalesced_threads();
    votes[2 * i + 1] = positive.ballot(x[i] > 50) + 1000 * positive.thread_rank();
  }
  if (warp.thread_rank() == 0) sums[i / 32] = v;
  ballots[i] = b;
  votes[2 * i] = any * 10 + all;
}
// A template's call resolves only when it is instantiated (the CUDA samples' reduce4).
template <class T>
__global__ void tile_sum_of(const T* x, T* out) {
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
  T v = x[blockIdx.x * blockDim.x + threadIdx.x];
  for (int offset = warp.size() / 2; offset > 0; offset /= 2) v += warp.shfl_down(v, offset);
  if (warp.thread_rank() == 0) out[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = v;
}
__global__ void tile_reduce(const float* x, float* out, int* largest, int n) {
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
  auto eight = cg::tiled_partition<8>(cg::this_thread_block());
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float v = i < n ? x[i] : 0.0f;
  out[i] = cg::reduce(warp, v, cg::plus<float>());
  largest[i] = cg::reduce(eight, int(v * 100), cg::greater<int>());
}
)";

TEST_F(RegionLoopsRun, CooperativeGroupsTileCollectivesRunAsSteps) {
  const auto decided = split_with_cuda_headers(tiles);
  EXPECT_EQ(decided.split, (std::vector<std::string>{"tile_ops", "tile_sum_of", "tile_reduce"}))
      << (decided.notes.empty() ? "" : decided.notes.front());
  lockstep::compile_options names;
  names.names = {"tile_ops", "tile_sum_of<float>", "tile_sum_of<double>", "tile_reduce"};
  use_loops(true);  // the module is split whatever LOCKSTEP_EMU_ENGINE says
  const lockstep::module m = lockstep::compile(tiles, names, cpu);
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> value(-100, 100);
  const int blocks = 3, threads = 96, n = blocks * threads;
  std::vector<float> in(n);
  for (float& x : in) x = float(value(rng));
  struct results {
    std::vector<float> sums, neighbours;
    std::vector<unsigned> ballots;
    std::vector<int> votes;
  };
  auto run = [&](bool on) {
    use_loops(on);
    buffer dx(cpu, n * 4), dsums(cpu, n / 32 * 4), dballots(cpu, n * 4), dvotes(cpu, n * 8), dneighbours(cpu, n * 4);
    dx.copy_from_host(in.data(), n * 4);
    for (buffer* b : {&dsums, &dballots, &dvotes, &dneighbours}) b->fill_bytes(0xff);
    m.get("tile_ops")(dim3(blocks), dim3(threads), 0, dx.data_as<const float>(), dsums.data_as<float>(), dballots.data_as<unsigned>(),
                      dvotes.data_as<int>(), dneighbours.data_as<float>());
    results r{std::vector<float>(n / 32), std::vector<float>(n), std::vector<unsigned>(n), std::vector<int>(2 * n)};
    dsums.copy_to_host(r.sums.data(), n / 32 * 4);
    dneighbours.copy_to_host(r.neighbours.data(), n * 4);
    dballots.copy_to_host(r.ballots.data(), n * 4);
    dvotes.copy_to_host(r.votes.data(), n * 8);
    return r;
  };
  const results loops = run(true), fibers = run(false);
  EXPECT_EQ(loops.sums, fibers.sums);
  EXPECT_EQ(loops.neighbours, fibers.neighbours);
  EXPECT_EQ(loops.ballots, fibers.ballots);
  EXPECT_EQ(loops.votes, fibers.votes);
  for (int w = 0; w < n / 32; ++w) {
    float sum = 0;
    int any = 0;
    for (int l = 0; l < 32; ++l) sum += in[w * 32 + l], any |= in[w * 32 + l] > 90;
    EXPECT_EQ(loops.sums[w], sum) << w;  // integers: exact in any order
    for (int l = 0; l < 32; ++l) {
      const int i = w * 32 + l, first = i / 8 * 8;
      unsigned ballot = 0, positive = 0, above = 0, rank = 0;
      int all = 1;
      for (int k = 0; k < 8; ++k) ballot |= unsigned(in[first + k] > 0) << k, all &= in[first + k] > -90;
      for (int k = 0; k < 32; ++k)
        if (in[w * 32 + k] > 0) {
          above |= unsigned(in[w * 32 + k] > 50) << positive;
          rank += k < l;
          ++positive;
        }
      EXPECT_EQ(loops.ballots[i], ballot) << i;
      EXPECT_EQ(loops.votes[2 * i], any * 10 + all) << i;
      EXPECT_EQ(loops.votes[2 * i + 1], in[i] > 0 ? int(above + 1000 * rank) : -1) << i;
      EXPECT_EQ(loops.neighbours[i], in[i ^ 1] + in[first + 7]) << i;
    }
  }

  // The template, for float and double: each warp's sum.
  auto warp_sums = [&](bool on, auto zero) {
    using T = decltype(zero);
    use_loops(on);
    const std::vector<T> x(in.begin(), in.end());
    return run_into<T>(m, std::is_same_v<T, float> ? "tile_sum_of<float>" : "tile_sum_of<double>", dim3(blocks), dim3(threads), x, n / 32);
  };
  EXPECT_EQ(warp_sums(true, 0.0f), loops.sums);
  const std::vector<double> double_sums = warp_sums(true, 0.0);
  EXPECT_EQ(double_sums, warp_sums(false, 0.0));
  for (int w = 0; w < n / 32; ++w) EXPECT_EQ(double_sums[w], double(loops.sums[w])) << w;

  // cg::reduce: fractions, so the order of the sums shows; the last 5
  // threads of the grid pass 0. Blocks of 80 threads end in a half warp,
  // whose tile of 32 the GPU leaves undefined: there loops and fibers agree.
  std::uniform_real_distribution<float> real(-10.0f, 10.0f);
  const int reduce_threads = 80, count = blocks * reduce_threads;
  std::vector<float> fractions(count);
  for (float& x : fractions) x = real(rng);
  auto reduced = [&](bool on) {
    use_loops(on);
    buffer dx(cpu, count * 4), dout(cpu, count * 4), dlargest(cpu, count * 4);
    dx.copy_from_host(fractions.data(), count * 4);
    dout.fill_bytes(0xff);
    dlargest.fill_bytes(0xff);
    m.get("tile_reduce")(dim3(blocks), dim3(reduce_threads), 0, dx.data_as<const float>(), dout.data_as<float>(), dlargest.data_as<int>(), count - 5);
    std::pair<std::vector<float>, std::vector<int>> r{std::vector<float>(count), std::vector<int>(count)};
    dout.copy_to_host(r.first.data(), count * 4);
    dlargest.copy_to_host(r.second.data(), count * 4);
    return r;
  };
  const auto reduced_loops = reduced(true), reduced_fibers = reduced(false);
  EXPECT_EQ(0, std::memcmp(reduced_loops.first.data(), reduced_fibers.first.data(), count * 4));
  EXPECT_EQ(reduced_loops.second, reduced_fibers.second);
  for (int i = 0; i < count; ++i) {
    const int block_first = i / reduce_threads * reduce_threads, warp_first = block_first + (i - block_first) / 32 * 32;
    const int eight_first = block_first + (i - block_first) / 8 * 8;
    double sum = 0;
    int largest = -2147483647;
    for (int k = warp_first; k < warp_first + 32; ++k) sum += k < count - 5 ? fractions[k] : 0.0f;
    for (int k = eight_first; k < eight_first + 8; ++k) largest = std::max(largest, k < count - 5 ? int(fractions[k] * 100) : 0);
    if (warp_first + 32 <= block_first + reduce_threads) EXPECT_NEAR(reduced_loops.first[i], sum, 1e-4) << i;
    EXPECT_EQ(reduced_loops.second[i], largest) << i;
  }
}

// The warp matrix functions run as collective steps: each call recorded,
// the warp answered, then the call again doing the lane's work; mma_sync's
// lanes read each other's fragments in the block's per-thread arrays.
// Inputs are multiples of 1/8 in [-2, 2]: exact in half, their products
// and sums exact in float, so the product is exact.
const char* warp_matrices = R"(
#include <mma.h>
using namespace nvcuda;
// Each of the block's warps makes one 16x16 tile of c = a * b, k deep: a is
// (warps * 16) x k row-major, b is k x 16 column-major (leading dimension k).
template <class Operand>
__global__ void warp_tiles(const float* a, const float* b, float* c, int k, float scale) {
  extern __shared__ __align__(32) unsigned char shared[];
  Operand* const staged = reinterpret_cast<Operand*>(shared);
  const int warp = threadIdx.x / 32, rows = blockDim.x / 2;
  for (int e = threadIdx.x; e < rows * k; e += blockDim.x) staged[e] = Operand(a[blockIdx.x * rows * k + e]);
  for (int e = threadIdx.x; e < 16 * k; e += blockDim.x) staged[rows * k + e] = Operand(b[e]);
  __syncthreads();
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2];
  for (int h = 0; h < 2; ++h) wmma::fill_fragment(acc[h], 0.0f);
  for (int kk = 0; kk < k; kk += 16) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, Operand, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, Operand, wmma::col_major> fb;
    wmma::load_matrix_sync(fa, staged + warp * 16 * k + kk, k);
    wmma::load_matrix_sync(fb, staged + rows * k + kk, k);
    wmma::mma_sync(acc[kk / 16 % 2], fa, fb, acc[kk / 16 % 2]);
  }
  for (int e = 0; e < acc[0].num_elements; ++e) acc[0].x[e] = scale * (acc[0].x[e] + acc[1].x[e]);
  __syncthreads();
  wmma::store_matrix_sync(c + (blockIdx.x * rows + warp * 16) * 16, acc[0], 16, wmma::mem_row_major);
}
template __global__ void warp_tiles<__half>(const float*, const float*, float*, int, float);
template __global__ void warp_tiles<__nv_bfloat16>(const float*, const float*, float*, int, float);
)";

TEST_F(RegionLoopsRun, WarpMatrixFunctionsRunAsStepsOverTheLanes) {
  const auto decided = split_with_cuda_headers(warp_matrices);
  EXPECT_EQ(decided.split, std::vector<std::string>{"warp_tiles"}) << (decided.notes.empty() ? "" : decided.notes.front());
  lockstep::compile_options names;
  names.names = {"warp_tiles<__half>", "warp_tiles<__nv_bfloat16>"};
  const lockstep::module m = lockstep::compile(warp_matrices, names, cpu);
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> eighths(-16, 16);
  const int k = 64, warps = 4, blocks = 3, rows = warps * 16;
  std::vector<float> a(blocks * rows * k), b(k * 16);
  for (auto* v : {&a, &b})
    for (float& x : *v) x = float(eighths(rng)) / 8.0f;
  for (const char* kernel : {"warp_tiles<__half>", "warp_tiles<__nv_bfloat16>"}) {
    auto run = [&](bool on) {
      use_loops(on);
      buffer da(cpu, a.size() * 4), db(cpu, b.size() * 4), dc(cpu, blocks * rows * 16 * 4);
      da.copy_from_host(a.data(), a.size() * 4);
      db.copy_from_host(b.data(), b.size() * 4);
      dc.fill_bytes(0xff);
      m.get(kernel)(dim3(blocks), dim3(warps * 32), (rows + 16) * k * 2, da.data_as<const float>(), db.data_as<const float>(), dc.data_as<float>(), k,
                    0.5f);
      std::vector<float> c(blocks * rows * 16);
      dc.copy_to_host(c.data(), c.size() * 4);
      return c;
    };
    const std::vector<float> loops = run(true), fibers = run(false);
    ASSERT_EQ(0, std::memcmp(loops.data(), fibers.data(), loops.size() * 4)) << kernel;
    for (int r = 0; r < blocks * rows; ++r)
      for (int col = 0; col < 16; ++col) {
        double want = 0;
        for (int q = 0; q < k; ++q) want += double(a[r * k + q]) * b[col * k + q];
        ASSERT_EQ(loops[r * 16 + col], float(0.5 * want)) << kernel << " " << r << ", " << col;
      }
  }
}

}  // namespace
