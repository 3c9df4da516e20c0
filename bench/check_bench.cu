// Check mode's cost on the lecture's 16x16 tiled matmul at 256^3.
//
// Built twice from this file: check_bench_normal (an ordinary emulator
// build) and check_bench (compiled for check mode, see lockstep_check_sources).
// Each prints the median time of the same launch; the check-mode build runs
// it with checks off (the cost of the instrumentation alone), with each
// checker alone, and with all four.
//
//   check_bench_normal [--repeats N]; check_bench [--repeats N]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "lockstep/emu/check.h"
#include "lockstep/emu/options.h"
#include "matmul.cu"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

struct matrices {
  static constexpr int size = 256;
  float *a = nullptr, *b = nullptr, *c = nullptr;
  std::vector<float> host_a, host_b;
  matrices() : host_a(size * size), host_b(size * size) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> d(-1, 1);
    for (auto& x : host_a) x = d(rng);
    for (auto& x : host_b) x = d(rng);
  }
  // Allocated under the options in force, so check mode gets its records.
  void allocate() {
    const std::size_t bytes = sizeof(float) * size * size;
    check(cudaMalloc(&a, bytes), "cudaMalloc");
    check(cudaMalloc(&b, bytes), "cudaMalloc");
    check(cudaMalloc(&c, bytes), "cudaMalloc");
    check(cudaMemcpy(a, host_a.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemcpy(b, host_b.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  void release() {
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
  void launch() const {
    const dim3 grid(size / 16, size / 16), block(16, 16);
    lockstep::launch(lockstep::kernels::matmul_tiled_static<16>, grid, block)(a, b, c, size, size, size);
  }
  // The largest difference from a float64 host product.
  double max_error() const {
    std::vector<float> out(size * size);
    check(cudaMemcpy(out.data(), c, sizeof(float) * out.size(), cudaMemcpyDeviceToHost), "cudaMemcpy");
    double worst = 0;
    for (int i = 0; i < size; i += 37)
      for (int j = 0; j < size; ++j) {
        double ref = 0;
        for (int p = 0; p < size; ++p) ref += double(host_a[i * size + p]) * host_b[p * size + j];
        worst = std::max(worst, std::abs(ref - out[i * size + j]));
      }
    return worst;
  }
};

// Median seconds of `repeats` launches after a warm-up, under `checks`.
double median_seconds(matrices& m, unsigned checks, int repeats) {
  lockstep::emu::options o = lockstep::emu::get_options();
  o.checks = checks;
  lockstep::emu::set_options(o);
  m.allocate();
  m.launch();
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    m.launch();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  if (m.max_error() > 1e-3) {
    std::fprintf(stderr, "wrong product\n");
    std::exit(1);
  }
  m.release();
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 5;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) repeats = std::atoi(argv[++i]);
  matrices m;
  std::printf("| build | checks | time (ms) |\n|---|---|---:|\n");
#if defined(__SANITIZE_THREAD__)
  using lockstep::emu::check_tool;
  const struct {
    const char* name;
    unsigned checks;
  } runs[] = {{"none", 0},
              {"memcheck", unsigned(check_tool::memcheck)},
              {"racecheck", unsigned(check_tool::racecheck)},
              {"synccheck", unsigned(check_tool::synccheck)},
              {"initcheck", unsigned(check_tool::initcheck)},
              {"all four", lockstep::emu::all_checks}};
  for (const auto& run : runs) std::printf("| check mode | %s | %.1f |\n", run.name, 1e3 * median_seconds(m, run.checks, repeats));
#else
  std::printf("| normal | (none) | %.1f |\n", 1e3 * median_seconds(m, 0, repeats));
#endif
  return 0;
}
