// Uniformity through calls (uniformity.cpp, pure_function): the lecture's
// tiled matmuls, unchanged, bound their tile loop with `cdiv(k, tw)`, an
// inline __host__ __device__ function of the kernel's parameters, and so
// run as loops; a declaration of uniform and per-thread locals at once is
// cut into its declarators; a tile size declared in the kernel (`constexpr int T`)
// sizes a __shared__ array, and so does one reached through `using namespace`
// (moved in front of the bodies with the arrays); a function that reads memory or the thread's
// index stays non-uniform. Run as loops, on fibers and in check mode on
// fresh random inputs, against a float64 product.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "emulator/compile_time/region_loops/region_loops.h"
#include "lockstep/emu/check.h"
#include "lockstep/emu/options.h"
#include "lockstep/runtime.h"

namespace fs = std::filesystem;
using lockstep::buffer;
using lockstep::device;
namespace region_loops = lockstep::emu::region_loops;

namespace {

const device cpu = device::cpu();

// The lecture's kernels as written there (GPU MODE lecture 3), with a kernel-local tile size beside them.
const char* lecture_matmuls = R"(
__host__ __device__ inline unsigned int cdiv(unsigned int a, unsigned int b) { return (a + b - 1) / b; }

__global__ void matmul_k(float *m, float *n, float *out, int h, int w, int k, int tw) {
    int tc=threadIdx.x, tr=threadIdx.y,
        r=blockIdx.y*blockDim.y+tr, c=blockIdx.x*blockDim.x+tc;

    extern __shared__ float ms[];
    float *ns = &ms[tw*tw];

    float p = 0.0f;
    for (int ph = 0; ph < cdiv(k,tw); ++ph) {
        int idx = ph*tw;
        ms[tr*tw + tc] = r<h && idx+tc<k ? m[ tc+idx + r*k ] : 0.0f;
        ns[tr*tw + tc] = c<w && idx+tr<k ? n[(tr+idx)*w + c] : 0.0f;
        __syncthreads();
        for (int i=0; i<tw; ++i) p += ms[tr*tw + i] * ns[tw*i + tc];
        __syncthreads();
    }
    if (r<h && c<w) out[r*w + c] = p;
}

constexpr int tw = 16;
__global__ void matmul_ks(float *m, float *n, float *out, int h, int w, int k) {
    __shared__ float ms[tw][tw], ns[tw][tw];
    int tc=threadIdx.x, tr=threadIdx.y,
        r=blockIdx.y*blockDim.y+tr, c=blockIdx.x*blockDim.x+tc;
    float p=0.0f;
    for (int ph=0; ph < cdiv(k,tw); ++ph) {
        int idx = ph*tw;
        ms[tr][tc] = r<h && idx+tc<k ? m[ tc+idx + r*k ] : 0.0f;
        ns[tr][tc] = c<w && idx+tr<k ? n[(tr+idx)*w + c] : 0.0f;
        __syncthreads();
        for (int i=0; i<tw; ++i) p += ms[tr][i] * ns[i][tc];
        __syncthreads();
    }
    if (r<h && c<w) out[r*w + c] = p;
}

__global__ void matmul_local_tile(float *m, float *n, float *out, int h, int w, int k) {
    constexpr int T = 16;
    __shared__ float as[T][T], bs[T][T];
    int tc=threadIdx.x, tr=threadIdx.y, r=blockIdx.y*T+tr, c=blockIdx.x*T+tc;
    float p=0.0f;
    for (int ph=0; ph < cdiv(k,T); ++ph) {
        as[tr][tc] = r<h && ph*T+tc<k ? m[ph*T+tc + r*k] : 0.0f;
        bs[tr][tc] = c<w && ph*T+tr<k ? n[(ph*T+tr)*w + c] : 0.0f;
        __syncthreads();
        for (int i=0; i<T; ++i) p += as[tr][i] * bs[i][tc];
        __syncthreads();
    }
    if (r<h && c<w) out[r*w + c] = p;
}

// examples/lecture.py's: one declaration of the uniform tile size and the
// thread's coordinates, and one of pointers into the tiles, uniform and not.
__global__ void matmul_block_tile(const float* m, const float* n, float* out, int h, int w, int k) {
    extern __shared__ float tile_pair[];
    const int tile = blockDim.x, tr = threadIdx.y, tc = threadIdx.x;
    float *ta = tile_pair, *ta_row = tile_pair + tr * blockDim.x, *tb = tile_pair + tile * tile;
    const int r = blockIdx.y * tile + tr, c = blockIdx.x * tile + tc;
    float p = 0;
    for (int ph = 0; ph < k; ph += tile) {
        ta_row[tc] = (r < h && ph + tc < k) ? m[r * k + ph + tc] : 0.0f;
        tb[tr * tile + tc] = (ph + tr < k && c < w) ? n[(ph + tr) * w + c] : 0.0f;
        __syncthreads();
        for (int i = 0; i < tile; ++i) p += ta[tr * tile + i] * tb[i * tile + tc];
        __syncthreads();
    }
    if (r < h && c < w) out[r * w + c] = p;
}

namespace tiles { constexpr int side = 16; }
__global__ void matmul_using_tiles(float *m, float *n, float *out, int h, int w, int k) {
    using namespace tiles;  // what the __shared__ sizes resolve through, moved with them
    __shared__ float as[side][side], bs[side][side];
    int tc=threadIdx.x, tr=threadIdx.y, r=blockIdx.y*side+tr, c=blockIdx.x*side+tc;
    float p=0.0f;
    for (int ph=0; ph < cdiv(k,side); ++ph) {
        as[tr][tc] = r<h && ph*side+tc<k ? m[ph*side+tc + r*k] : 0.0f;
        bs[tr][tc] = c<w && ph*side+tr<k ? n[(ph*side+tr)*w + c] : 0.0f;
        __syncthreads();
        for (int i=0; i<side; ++i) p += as[tr][i] * bs[i][tc];
        __syncthreads();
    }
    if (r<h && c<w) out[r*w + c] = p;
}
)";

// A bound computed by a function that reads memory, or the thread's index: not uniform.
const char* impure_bounds = R"(
__device__ int first_of(const int* p) { return p[0]; }
__device__ int lane_bound(int k) { return k + (threadIdx.x & 1); }
__global__ void reads_memory(const int* bounds, float* out) {
  __shared__ float s[64];
  for (int i = 0; i < first_of(bounds); ++i) { s[threadIdx.x] = i; __syncthreads(); }
  out[threadIdx.x] = s[threadIdx.x];
}
__global__ void reads_thread_index(int k, float* out) {
  __shared__ float s[64];
  for (int i = 0; i < lane_bound(k); ++i) { s[threadIdx.x] = i; __syncthreads(); }
  out[threadIdx.x] = s[threadIdx.x];
}
)";

region_loops::split_result split(const std::string& kernels) {
  return region_loops::split_kernels("#include \"lockstep/cuda.h\"\n" + kernels, "calls.cu",
                                     {"-std=c++20", "-I" + std::string(LOCKSTEP_SOURCE_INCLUDE_DIR)});
}

TEST(RegionLoopCalls, FunctionsThatReadMemoryOrTheThreadIndexStayNonUniform) {
  const auto r = split(impure_bounds);
  EXPECT_TRUE(r.split.empty()) << r.split.front();
}

class RegionLoopCallsRun : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_dir_ = fs::temp_directory_path() / ("lockstep-region-loop-calls-" + std::to_string(getpid()));
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
  fs::path cache_dir_;
  lockstep::emu::options saved_;
};

TEST_F(RegionLoopCallsRun, TheLecturesTiledMatmulsRunAsLoopsUnchanged) {
  const auto decided = split(lecture_matmuls);
  for (const char* kernel : {"matmul_k", "matmul_ks", "matmul_local_tile", "matmul_block_tile", "matmul_using_tiles"})
    EXPECT_NE(std::find(decided.split.begin(), decided.split.end(), kernel), decided.split.end())
        << kernel << " stays on fibers: " << (decided.notes.empty() ? "" : decided.notes.back());

  const lockstep::module m = lockstep::compile(lecture_matmuls, {}, cpu);
  lockstep::compile_options instrumented;
  instrumented.checked = true;
  const lockstep::module checked = lockstep::compile(lecture_matmuls, instrumented, cpu);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  const int h = 37, w = 29, k = 45;  // no multiples of the tile
  std::vector<float> a(h * k), b(k * w);
  for (float& x : a) x = value(rng);
  for (float& x : b) x = value(rng);
  auto run = [&](const lockstep::module& mod, const char* kernel, bool loops, unsigned checks) {
    lockstep::emu::options o = lockstep::emu::get_options();
    o.region_loops = loops;
    o.checks = checks;
    lockstep::emu::set_options(o);
    buffer da(cpu, a.size() * 4), db(cpu, b.size() * 4), dc(cpu, h * w * 4);
    da.copy_from_host(a.data(), a.size() * 4);
    db.copy_from_host(b.data(), b.size() * 4);
    dc.fill_bytes(0xff);  // NaN: an unwritten element fails
    const dim3 grid((w + 15) / 16, (h + 15) / 16), block(16, 16);
    if (std::string(kernel) == "matmul_k")
      mod.get(kernel)(grid, block, 2 * 16 * 16 * 4, da.data_as<float>(), db.data_as<float>(), dc.data_as<float>(), h, w, k, 16);
    else
      mod.get(kernel)(grid, block, std::string(kernel) == "matmul_block_tile" ? 2 * 16 * 16 * 4 : 0, da.data_as<float>(), db.data_as<float>(),
                      dc.data_as<float>(), h, w, k);
    std::vector<float> c(h * w);
    dc.copy_to_host(c.data(), c.size() * 4);
    return c;
  };
  for (const char* kernel : {"matmul_k", "matmul_ks", "matmul_local_tile", "matmul_block_tile", "matmul_using_tiles"}) {
    const std::vector<float> loops = run(m, kernel, true, 0), fibers = run(m, kernel, false, 0),
                             check = run(checked, kernel, false, lockstep::emu::all_checks);
    for (int i = 0; i < h; ++i)
      for (int j = 0; j < w; ++j) {
        double want = 0;
        for (int q = 0; q < k; ++q) want += double(a[i * k + q]) * b[q * w + j];
        ASSERT_NEAR(loops[i * w + j], want, 1e-4) << kernel << " " << i << ", " << j;
        ASSERT_EQ(fibers[i * w + j], loops[i * w + j]) << kernel << " " << i << ", " << j;
        ASSERT_EQ(check[i * w + j], loops[i * w + j]) << kernel << " " << i << ", " << j;
      }
  }
}

}  // namespace
