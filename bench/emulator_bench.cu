// The lectures' kernels timed on whatever this file was built for: the
// emulator (host compiler) or the GPU (nvcc). Each row is compared in the same
// run with the same computation as a plain single-threaded C++ loop, which is
// also the reference its result is checked against.
//
//   emulator_bench [--repeats N] [--workers N]
//
// --workers sets the emulator's OS threads (default: one per core); with 1
// the ratios are per core, as the host loop runs on one.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#if !defined(__CUDACC__)
#include "lockstep/emu/options.h"
#endif

#include "grayscale.cu"
#include "matmul.cu"

using namespace lockstep::kernels;

namespace {

#if defined(__CUDACC__)
constexpr const char* target = "GPU (nvcc)";
#else
constexpr const char* target = "emulator (host compiler)";
#endif

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// Median seconds of `repeats` runs after one warm-up.
double median_seconds(int repeats, const std::function<void()>& run) {
  run();
  check(cudaDeviceSynchronize(), "warm-up");
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
#if defined(__CUDACC__)
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaEventRecord(start);
    run();
    cudaEventRecord(stop);
    check(cudaEventSynchronize(stop), "run");
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    times.push_back(ms / 1e3);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
#else
    const auto t0 = std::chrono::steady_clock::now();
    run();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
#endif
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

template <class T>
struct device_array {
  T* ptr = nullptr;
  explicit device_array(const std::vector<T>& host) {
    check(cudaMalloc(&ptr, host.size() * sizeof(T)), "cudaMalloc");
    check(cudaMemcpy(ptr, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  ~device_array() { cudaFree(ptr); }
};

struct row {
  std::string name, reference_name;
  double seconds, reference_seconds, max_error;
};

std::vector<float> random_floats(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

template <class T>
std::vector<T> download(const T* device, std::size_t n) {
  std::vector<T> host(n);
  check(cudaMemcpy(host.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
  return host;
}

row bench_matmul(const char* variant, int size, int repeats, std::mt19937& rng) {
  const int m = size, n = size, k = size;
  auto a = random_floats(std::size_t(m) * k, rng), b = random_floats(std::size_t(k) * n, rng);
  std::vector<float> c_host(std::size_t(m) * n, 0.0f);
  device_array<float> da(a), db(b), dc(c_host);
  const dim3 grid((n + 15) / 16, (m + 15) / 16), block(16, 16);
  const std::string which = variant;
  const double seconds = median_seconds(repeats, [&] {
    if (which == "naive")
      lockstep::launch(matmul_naive, grid, block)(da.ptr, db.ptr, dc.ptr, m, n, k);
    else if (which == "tiled static")
      lockstep::launch(matmul_tiled_static<16>, grid, block)(da.ptr, db.ptr, dc.ptr, m, n, k);
    else
      lockstep::launch(matmul_tiled_dynamic, grid, block, 2 * 16 * 16 * sizeof(float))(da.ptr, db.ptr, dc.ptr, m, n, k);
  });
  // Reference: the same product as a plain host loop, in i-k-j order.
  const double reference_seconds = median_seconds(repeats, [&] {
    std::fill(c_host.begin(), c_host.end(), 0.0f);
    for (int i = 0; i < m; ++i)
      for (int p = 0; p < k; ++p) {
        const float aip = a[std::size_t(i) * k + p];
        for (int j = 0; j < n; ++j) c_host[std::size_t(i) * n + j] += aip * b[std::size_t(p) * n + j];
      }
  });
  auto c = download(dc.ptr, c_host.size());
  double max_error = 0;
  for (std::size_t i = 0; i < c.size(); ++i) max_error = std::max(max_error, double(std::abs(c[i] - c_host[i])));
  return {std::string("matmul ") + variant + " 16x16, " + std::to_string(size) + "^3", "host loop", seconds, reference_seconds, max_error};
}

row bench_grayscale(bool two_d, int height, int width, int repeats, std::mt19937& rng) {
  const int pixels = height * width;
  std::uniform_int_distribution<int> d(0, 255);
  std::vector<unsigned char> rgb(3 * std::size_t(pixels)), gray_host(pixels, 0);
  for (auto& x : rgb) x = static_cast<unsigned char>(d(rng));
  device_array<unsigned char> in(rgb), out(gray_host);
  const double seconds = median_seconds(repeats, [&] {
    if (two_d)
      lockstep::launch(rgb_to_grayscale_2d, dim3((width + 15) / 16, (height + 15) / 16), dim3(16, 16))(out.ptr, in.ptr, width, height);
    else
      lockstep::launch(rgb_to_grayscale_1d, (pixels + 255) / 256, 256)(out.ptr, in.ptr, pixels);
  });
  const double reference_seconds = median_seconds(repeats, [&] {
    for (int i = 0; i < pixels; ++i)
      gray_host[i] = static_cast<unsigned char>(0.2989f * rgb[i] + 0.5870f * rgb[i + pixels] + 0.1140f * rgb[i + 2 * pixels]);
  });
  auto gray = download(out.ptr, gray_host.size());
  double max_error = 0;
  for (int i = 0; i < pixels; ++i) max_error = std::max(max_error, std::abs(double(gray[i]) - gray_host[i]));
  return {std::string("grayscale ") + (two_d ? "2-D 16x16" : "1-D 256") + ", " + std::to_string(height) + "x" + std::to_string(width), "host loop",
          seconds, reference_seconds, max_error};
}

// A block's sum by a tree in shared memory: 9 barriers per block of 512 threads.
constexpr int sum_threads = 512;
__global__ void block_sum(float* block_sums, const float* in, int n) {
  __shared__ float partial[sum_threads];
  const int i = blockIdx.x * sum_threads + threadIdx.x;
  partial[threadIdx.x] = i < n ? in[i] : 0.0f;
  for (int half = sum_threads / 2; half > 0; half /= 2) {
    __syncthreads();
    if (int(threadIdx.x) < half) partial[threadIdx.x] += partial[threadIdx.x + half];
  }
  if (threadIdx.x == 0) block_sums[blockIdx.x] = partial[0];
}

row bench_block_sum(int n, int repeats, std::mt19937& rng) {
  const int blocks = (n + sum_threads - 1) / sum_threads;
  auto in = random_floats(n, rng);
  std::vector<float> sums_host(blocks, 0.0f);
  device_array<float> din(in), dsums(sums_host);
  const double seconds = median_seconds(repeats, [&] { lockstep::launch(block_sum, blocks, sum_threads)(dsums.ptr, din.ptr, n); });
  // Reference: the same tree per block, as a host loop.
  std::vector<float> partial(sum_threads);
  const double reference_seconds = median_seconds(repeats, [&] {
    for (int b = 0; b < blocks; ++b) {
      for (int t = 0; t < sum_threads; ++t) partial[t] = b * sum_threads + t < n ? in[std::size_t(b) * sum_threads + t] : 0.0f;
      for (int half = sum_threads / 2; half > 0; half /= 2)
        for (int t = 0; t < half; ++t) partial[t] += partial[t + half];
      sums_host[b] = partial[0];
    }
  });
  auto sums = download(dsums.ptr, sums_host.size());
  double max_error = 0;
  for (int b = 0; b < blocks; ++b) max_error = std::max(max_error, double(std::abs(sums[b] - sums_host[b])));
  return {"block sum 512 threads, 9 barriers, " + std::to_string(n), "host loop", seconds, reference_seconds, max_error};
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 5;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
      repeats = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--workers") == 0 && i + 1 < argc) {
#if !defined(__CUDACC__)
      auto opts = lockstep::emu::get_options();
      opts.workers = static_cast<unsigned>(std::atoi(argv[++i]));
      lockstep::emu::set_options(opts);
#else
      ++i;
#endif
    }
  std::mt19937 rng(std::random_device{}());
  std::vector<row> rows;
  for (int size : {64, 256})
    for (const char* variant : {"naive", "tiled static", "tiled dynamic"}) rows.push_back(bench_matmul(variant, size, repeats, rng));
  rows.push_back(bench_grayscale(false, 1066, 1600, repeats, rng));
  rows.push_back(bench_grayscale(true, 1066, 1600, repeats, rng));
  rows.push_back(bench_block_sum(1 << 22, repeats, rng));

#if defined(__CUDACC__)
  std::printf("lockstep emulator_bench on %s, median of %d runs\n\n", target, repeats);
#else
  const unsigned chosen = lockstep::emu::get_options().workers, workers = chosen ? chosen : std::thread::hardware_concurrency();
  std::printf("lockstep emulator_bench on %s, %u workers, median of %d runs\n\n", target, workers, repeats);
#endif
  std::printf("| kernel | time (ms) | host loop (ms) | time / host loop | max abs diff |\n|---|---:|---:|---:|---:|\n");
  for (const row& r : rows)
    std::printf("| %s | %.3f | %.3f | %.3g | %.2g |\n", r.name.c_str(), r.seconds * 1e3, r.reference_seconds * 1e3, r.seconds / r.reference_seconds,
                r.max_error);
  return 0;
}
