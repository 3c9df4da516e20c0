// The region-loop compiler's privatisation of locals reached through another
// name (aliasing.cpp): a local array a view, a pointer, a reference, a
// lambda or an array of structs reaches across a barrier keeps one address
// per thread. Each kernel writes a value of its thread's own before the
// barrier and reads it back after; run as loops, on fibers and in check
// mode, the three must agree with the host's answer, and the kernels must
// run as loops (the split says so).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
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

// Every kernel: in[t] is the thread's input, out[t] what it reads back after the barrier.
const char* aliased_locals = R"(
struct view {
  int* p;
  __device__ int& operator[](int i) const { return p[i]; }
};
struct holder { int* p; };
struct pair_of { int a, b; };
__device__ void store_through(view v, int x) { v[0] = x; v[1] = x + 1; }

// The issue's C++ twin of lockstep.cuda's cuda.local.array: a view over the storage.
__global__ void through_view(const int* in, int* out) {
  int storage[4];
  view idx{storage};
  idx[0] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = idx[0];
}
// The same, written by a device function.
__global__ void through_view_in_call(const int* in, int* out) {
  int storage[4];
  view idx{storage};
  store_through(idx, in[threadIdx.x]);
  __syncthreads();
  out[threadIdx.x] = idx[0] + idx[1];
}
// A struct holding a pointer to a local array, the array written before the barrier.
__global__ void struct_holding_pointer(const int* in, int* out) {
  int storage[2];
  storage[0] = in[threadIdx.x];
  holder h{storage};
  __syncthreads();
  out[threadIdx.x] = h.p[0];
}
// A pointer to a local scalar.
__global__ void pointer_to_scalar(const int* in, int* out) {
  int x = in[threadIdx.x];
  int* p = &x;
  __syncthreads();
  out[threadIdx.x] = *p;
}
// A pointer into a local array, written through after the barrier.
__global__ void decayed_array(const int* in, int* out) {
  int storage[3] = {0, 0, 0};
  int* p = storage + 1;
  __syncthreads();
  *p = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = p[0] * 2;
}
// A struct holding a reference to a local.
struct ref_holder { int& r; };
__global__ void reference_member(const int* in, int* out) {
  int x = in[threadIdx.x];
  ref_holder h{x};
  __syncthreads();
  out[threadIdx.x] = h.r + 1;
}
// A lambda capturing by reference, kept in a variable and called after the barrier.
__global__ void lambda_by_reference(const int* in, int* out) {
  __shared__ int staged[256];
  int mine[2] = {in[threadIdx.x], 0};
  auto add = [&](int v) { mine[1] += v; };
  staged[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  add(staged[(threadIdx.x + 1) % blockDim.x]);
  out[threadIdx.x] = mine[0] + mine[1];
}
// An array of structs, one member's address kept.
__global__ void array_of_structs(const int* in, int* out) {
  pair_of pairs[2];
  pairs[1].b = in[threadIdx.x];
  int* q = &pairs[1].b;
  __syncthreads();
  out[threadIdx.x] = *q - 3;
}
)";

// The host's answer for each kernel, given the thread's input (and its neighbour's).
int expected(const std::string& kernel, const std::vector<int>& in, int t) {
  const int x = in[t], n = int(in.size());
  if (kernel == "through_view_in_call") return 2 * x + 1;
  if (kernel == "decayed_array") return 2 * x;
  if (kernel == "reference_member") return x + 1;
  if (kernel == "lambda_by_reference") return x + in[(t + 1) % n];
  if (kernel == "array_of_structs") return x - 3;
  return x;
}

class RegionLoopAliasing : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_dir_ = fs::temp_directory_path() / ("lockstep-region-loop-aliasing-" + std::to_string(getpid()));
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

const char* const kernels[] = {"through_view",  "through_view_in_call", "struct_holding_pointer", "pointer_to_scalar",
                               "decayed_array", "reference_member",     "lambda_by_reference",    "array_of_structs"};

TEST_F(RegionLoopAliasing, AliasedLocalsRunAsLoopsWithEachThreadsOwnValues) {
  const auto decided = region_loops::split_kernels(std::string("#include \"lockstep/cuda.h\"\n") + aliased_locals, "aliasing.cu",
                                                   {"-std=c++20", "-I" + std::string(LOCKSTEP_SOURCE_INCLUDE_DIR)});
  for (const char* kernel : kernels)
    EXPECT_NE(std::find(decided.split.begin(), decided.split.end(), kernel), decided.split.end())
        << kernel << " stays on fibers: " << (decided.notes.empty() ? "" : decided.notes.back());

  const lockstep::module m = lockstep::compile(aliased_locals, {}, cpu);
  const lockstep::module checked = [&] {
    lockstep::compile_options o;
    o.checked = true;
    return lockstep::compile(aliased_locals, o, cpu);
  }();
  std::mt19937 rng(std::random_device{}());
  const int threads = 64;
  std::vector<int> in(threads);
  for (int& x : in) x = int(rng() % 100000) - 50000;
  auto run = [&](const lockstep::module& mod, const char* kernel, bool loops, unsigned checks = 0) {
    lockstep::emu::options o = lockstep::emu::get_options();
    o.region_loops = loops;
    o.checks = checks;
    lockstep::emu::set_options(o);
    buffer din(cpu, threads * sizeof(int)), dout(cpu, threads * sizeof(int));
    din.copy_from_host(in.data(), threads * sizeof(int));
    dout.fill_bytes(0xa5);
    mod.get(kernel)(dim3(1), dim3(threads), 0, din.data_as<const int>(), dout.data_as<int>());
    std::vector<int> out(threads);
    dout.copy_to_host(out.data(), threads * sizeof(int));
    return out;
  };
  for (const char* kernel : kernels) {
    const std::vector<int> loops = run(m, kernel, true), fibers = run(m, kernel, false),
                           check = run(checked, kernel, false, lockstep::emu::all_checks);
    for (int t = 0; t < threads; ++t) {
      ASSERT_EQ(loops[t], expected(kernel, in, t)) << kernel << " as loops, thread " << t;
      ASSERT_EQ(fibers[t], loops[t]) << kernel << " on fibers, thread " << t;
      ASSERT_EQ(check[t], loops[t]) << kernel << " in check mode, thread " << t;
    }
  }
}

}  // namespace
