// Cold and warm compile+load time of a small kernel through lockstep::compile
// on each available device: cold = an empty cache and a source never seen;
// warm = the same source again in this process after its module was released
// (found on disk: read, checked, loaded); memo = while the module is alive.
// On cpu also a kernel with barriers, whose source the region-loop compiler
// parses before the host compiler builds it, cold beside the same source
// built without that parse (the fiber engine chosen), and its first compile
// in an empty cache, which also writes the parse's precompiled prelude.
// bench/load_inline_bench.py times torch's load_inline for comparison.
//
//   jit_bench [--cold N] [--warm N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "lockstep/emu/options.h"
#include "lockstep/runtime.h"

namespace {

double median_ms(int repeats, const std::function<void(int)>& run) {
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    run(i);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

const char* kernel = R"(
__global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

const char* barrier_kernel = R"(
__global__ void tree_sum(float* out, const float* in) {
  __shared__ float partial[256];
  partial[threadIdx.x] = in[blockIdx.x * 256 + threadIdx.x];
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    __syncthreads();
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}
)";

void use_region_loops(bool on) {
  lockstep::emu::options o = lockstep::emu::get_options();
  o.region_loops = on;
  lockstep::emu::set_options(o);
}

}  // namespace

int main(int argc, char** argv) {
  int cold_runs = 3, warm_runs = 20;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--cold") == 0) cold_runs = std::atoi(argv[++i]);
    if (std::strcmp(argv[i], "--warm") == 0) warm_runs = std::atoi(argv[++i]);
  }
  const auto cache = std::filesystem::temp_directory_path() / ("lockstep-jit-bench-" + std::to_string(std::random_device{}()));
  setenv("LOCKSTEP_CACHE_DIR", cache.c_str(), 1);
  std::vector<lockstep::device> devices{lockstep::device::cpu()};
  if (lockstep::cuda_available()) devices.push_back(lockstep::device::cuda(0));
  const std::string run_tag = std::to_string(std::random_device{}());

  // First, while the cache is empty: the kernel with barriers, then its precompiled prelude exists.
  const lockstep::device cpu = lockstep::device::cpu();
  lockstep::buffer in(cpu, 4 * 256 * 4), out(cpu, 4 * 4);
  auto sum_source = [&](const char* what, int i) { return "// " + run_tag + " " + what + " " + std::to_string(i) + "\n" + barrier_kernel; };
  auto sum_once = [&](const lockstep::module& m) { m.get("tree_sum")(dim3(4), dim3(256), 0, out.data_as<float>(), in.data_as<const float>()); };
  const double first = median_ms(1, [&](int) { sum_once(lockstep::compile(sum_source("first", 0), {}, cpu)); });
  const double split = median_ms(cold_runs, [&](int i) { sum_once(lockstep::compile(sum_source("split", i), {}, cpu)); });
  use_region_loops(false);
  const double unsplit = median_ms(cold_runs, [&](int i) { sum_once(lockstep::compile(sum_source("fibers", i), {}, cpu)); });
  use_region_loops(true);
  lockstep::synchronize(cpu);

  std::printf("| device | cold compile+load (ms) | warm, from disk (ms) | warm, in process (ms) |\n|---|---:|---:|---:|\n");
  for (const auto& d : devices) {
    lockstep::buffer x(d, 4096), y(d, 4096);
    auto source_for = [&](int i) { return "// " + run_tag + " " + d.str() + " " + std::to_string(i) + "\n" + kernel; };
    auto launch_once = [&](const lockstep::module& m) {
      m.get("saxpy")(dim3(8), dim3(128), 0, 2.0f, x.data_as<const float>(), y.data_as<float>(), 1024);
    };
    const double cold = median_ms(cold_runs, [&](int i) { launch_once(lockstep::compile(source_for(i), {}, d)); });
    const double warm = median_ms(warm_runs, [&](int) { launch_once(lockstep::compile(source_for(0), {}, d)); });
    lockstep::module alive = lockstep::compile(source_for(0), {}, d);
    const double memo = median_ms(warm_runs, [&](int) { launch_once(lockstep::compile(source_for(0), {}, d)); });
    lockstep::synchronize(d);
    std::printf("| %s (%s) | %.1f | %.2f | %.3f |\n", d.str().c_str(), lockstep::device_name(d).c_str(), cold, warm, memo);
  }
  std::printf(
      "\n| cpu, kernel with barriers | cold compile+load (ms) | / without the parse |\n|---|---:|---:|\n"
      "| split into region loops | %.1f | %.2f |\n| without the parse (fiber engine) | %.1f | 1 |\n"
      "| first in an empty cache (writes the precompiled prelude) | %.1f | %.2f |\n",
      split, split / unsplit, unsplit, first, first / unsplit);
  std::filesystem::remove_all(cache);
  return 0;
}
