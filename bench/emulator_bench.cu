// The lectures' kernels timed on whatever this file was built for: the
// emulator (host compiler) or the GPU (nvcc). Each row is compared in the same
// run with the same computation as a plain single-threaded C++ loop, which is
// also the reference its result is checked against, and, on the emulator,
// with the same kernel as OpenCL C run by PoCL where it is installed
// (opencl_reference.h), checked against the same reference.
//
//   emulator_bench [--repeats N] [--workers N] [--tsv]
//
// --workers sets the emulator's OS threads and PoCL's (default: one per
// core); with 1 the ratios are per core, as the host loop runs on one.
// --tsv prints the rows tab-separated, for `lockstep bench`.
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
#if defined(LOCKSTEP_BENCH_OPENCL)
#include "opencl_reference.h"
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
  double pocl_seconds = 0, pocl_max_error = 0;  // 0 seconds: PoCL did not run it
};

template <class T>
double max_abs_diff(const std::vector<T>& a, const std::vector<T>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(double(a[i]) - double(b[i])));
  return worst;
}

// The same kernel on PoCL: `inputs` uploaded, `output` (sized as `expected`)
// poisoned first, then compared with it.
struct pocl_launch {
  const char* kernel;
  std::vector<std::size_t> global, local;
  std::size_t local_bytes = 0;  // a __local buffer as the last argument
};
#if defined(LOCKSTEP_BENCH_OPENCL)
opencl_reference::session* pocl = nullptr;

template <class Out, class In, class... Values>
void run_on_pocl(row& r, const pocl_launch& launch, const std::vector<Out>& expected, bool output_first, const std::vector<std::vector<In>>& inputs,
                 int repeats, Values... values) {
  if (!pocl) return;
  namespace cl = opencl_reference;
  std::vector<cl::argument> arguments;
  const std::vector<Out> poison(expected.size(), Out(77));
  const int out = pocl->upload(poison.data(), poison.size() * sizeof(Out));
  if (output_first) arguments.push_back(cl::buffer(out));
  for (const auto& in : inputs) arguments.push_back(cl::buffer(pocl->upload(in.data(), in.size() * sizeof(In))));
  if (!output_first) arguments.push_back(cl::buffer(out));
  (arguments.push_back(cl::value(values)), ...);
  if (launch.local_bytes) arguments.push_back(cl::local(launch.local_bytes));
  r.pocl_seconds = pocl->time(launch.kernel, launch.global, launch.local, arguments, repeats);
  std::vector<Out> got(expected.size());
  pocl->download(out, got.data(), got.size() * sizeof(Out));
  r.pocl_max_error = max_abs_diff(got, expected);
  pocl->release_buffers();
}
#else
template <class... Any>
void run_on_pocl(row&, const pocl_launch&, Any&&...) {}
#endif

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

// The plain C++ references, each a function of its own, so that what the
// bench does around them cannot change how the host compiler builds them;
// written plainly (no __restrict__: bench/RESULTS.md has what it changes).
[[gnu::noinline]] void host_matmul(const float* a, const float* b, float* c, int m, int n, int k) {
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < k; ++p) {
      const float aip = a[std::size_t(i) * k + p];
      for (int j = 0; j < n; ++j) c[std::size_t(i) * n + j] += aip * b[std::size_t(p) * n + j];
    }
}

[[gnu::noinline]] void host_grayscale(const unsigned char* rgb, unsigned char* gray, int pixels) {
  for (int i = 0; i < pixels; ++i) gray[i] = static_cast<unsigned char>(0.2989f * rgb[i] + 0.5870f * rgb[i + pixels] + 0.1140f * rgb[i + 2 * pixels]);
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
    host_matmul(a.data(), b.data(), c_host.data(), m, n, k);
  });
  row r{std::string("matmul ") + variant + " 16x16, " + std::to_string(size) + "^3", "host loop", seconds, reference_seconds,
        max_abs_diff(download(dc.ptr, c_host.size()), c_host)};
  const std::string kernel = which == "naive" ? "matmul_naive" : which == "tiled static" ? "matmul_tiled_static" : "matmul_tiled_dynamic";
  const pocl_launch launch{kernel.c_str(), {grid.x * 16u, grid.y * 16u}, {16, 16}, which == "tiled dynamic" ? 2 * 16 * 16 * sizeof(float) : 0};
  run_on_pocl(r, launch, c_host, false, std::vector<std::vector<float>>{a, b}, repeats, m, n, k);
  return r;
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
  const double reference_seconds = median_seconds(repeats, [&] { host_grayscale(rgb.data(), gray_host.data(), pixels); });
  row r{std::string("grayscale ") + (two_d ? "2-D 16x16" : "1-D 256") + ", " + std::to_string(height) + "x" + std::to_string(width), "host loop",
        seconds, reference_seconds, max_abs_diff(download(out.ptr, gray_host.size()), gray_host)};
  const std::vector<std::vector<unsigned char>> inputs{rgb};
  if (two_d)
    run_on_pocl(r, {"rgb_to_grayscale_2d", {std::size_t(width + 15) / 16 * 16, std::size_t(height + 15) / 16 * 16}, {16, 16}}, gray_host, true,
                inputs, repeats, width, height);
  else
    run_on_pocl(r, {"rgb_to_grayscale_1d", {std::size_t(pixels + 255) / 256 * 256}, {256}}, gray_host, true, inputs, repeats, pixels);
  return r;
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

[[gnu::noinline]] void host_block_sums(const float* in, float* sums, float* partial, int n, int blocks) {
  for (int b = 0; b < blocks; ++b) {
    for (int t = 0; t < sum_threads; ++t) partial[t] = b * sum_threads + t < n ? in[std::size_t(b) * sum_threads + t] : 0.0f;
    for (int half = sum_threads / 2; half > 0; half /= 2)
      for (int t = 0; t < half; ++t) partial[t] += partial[t + half];
    sums[b] = partial[0];
  }
}

row bench_block_sum(int n, int repeats, std::mt19937& rng) {
  const int blocks = (n + sum_threads - 1) / sum_threads;
  auto in = random_floats(n, rng);
  std::vector<float> sums_host(blocks, 0.0f);
  device_array<float> din(in), dsums(sums_host);
  const double seconds = median_seconds(repeats, [&] { lockstep::launch(block_sum, blocks, sum_threads)(dsums.ptr, din.ptr, n); });
  // Reference: the same tree per block, as a host loop.
  std::vector<float> partial(sum_threads);
  const double reference_seconds = median_seconds(repeats, [&] { host_block_sums(in.data(), sums_host.data(), partial.data(), n, blocks); });
  row r{"block sum 512 threads, 9 barriers, " + std::to_string(n), "host loop", seconds, reference_seconds,
        max_abs_diff(download(dsums.ptr, sums_host.size()), sums_host)};
  run_on_pocl(r, {"block_sum", {std::size_t(blocks) * sum_threads}, {std::size_t(sum_threads)}}, sums_host, true, std::vector<std::vector<float>>{in},
              repeats, n);
  return r;
}

// A block's sum by warp shuffles, as reduce_all and the lectures' reductions
// write it: five shuffles in each warp, the warps' sums through shared
// memory and one barrier, five more shuffles in the first warp.
constexpr int shuffle_threads = 256;
__global__ void warp_shuffle_sum(float* block_sums, const float* in, int n) {
  __shared__ float warp_sums[32];
  const int i = blockIdx.x * shuffle_threads + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < shuffle_threads / 32 ? warp_sums[lane] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (lane == 0) block_sums[blockIdx.x] = v;
  }
}

// One warp's shuffle tree over v[0, 32), in place: lane 0 ends with the sum.
void host_warp_tree(float* v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    float moved[32];
    for (int l = 0; l < 32; ++l) moved[l] = l + offset < 32 ? v[l + offset] : v[l];  // a lane past the warp reads its own
    for (int l = 0; l < 32; ++l) v[l] += moved[l];
  }
}

[[gnu::noinline]] void host_shuffle_sums(const float* in, float* sums, int n, int blocks) {
  for (int b = 0; b < blocks; ++b) {
    float warp_sums[32] = {};
    for (int w = 0; w < shuffle_threads / 32; ++w) {
      float v[32];
      for (int l = 0; l < 32; ++l) {
        const long long i = std::size_t(b) * shuffle_threads + w * 32 + l;
        v[l] = i < n ? in[i] : 0.0f;
      }
      host_warp_tree(v);
      warp_sums[w] = v[0];
    }
    host_warp_tree(warp_sums);
    sums[b] = warp_sums[0];
  }
}

row bench_shuffle_sum(int n, int repeats, std::mt19937& rng) {
  const int blocks = (n + shuffle_threads - 1) / shuffle_threads;
  auto in = random_floats(n, rng);
  std::vector<float> sums_host(blocks, 0.0f);
  device_array<float> din(in), dsums(sums_host);
  const double seconds = median_seconds(repeats, [&] { lockstep::launch(warp_shuffle_sum, blocks, shuffle_threads)(dsums.ptr, din.ptr, n); });
  const double reference_seconds = median_seconds(repeats, [&] { host_shuffle_sums(in.data(), sums_host.data(), n, blocks); });
  // OpenCL C has no warp shuffles (sub-groups are an extension PoCL's CPU device leaves out): no PoCL row.
  return {"warp shuffle sum 256 threads, 10 shuffles, 1 barrier, " + std::to_string(n), "host loop", seconds, reference_seconds,
          max_abs_diff(download(dsums.ptr, sums_host.size()), sums_host)};
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 5;
  bool tsv = false;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
      repeats = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--tsv") == 0) {
      tsv = true;
    } else if (std::strcmp(argv[i], "--workers") == 0 && i + 1 < argc) {
#if !defined(__CUDACC__)
      auto opts = lockstep::emu::get_options();
      opts.workers = static_cast<unsigned>(std::atoi(argv[++i]));
      lockstep::emu::set_options(opts);
#else
      ++i;
#endif
    }
#if defined(__CUDACC__)
  const std::string pocl_note = "PoCL: not run on the GPU build";
#else
  const unsigned chosen = lockstep::emu::get_options().workers, workers = chosen ? chosen : std::thread::hardware_concurrency();
#if defined(LOCKSTEP_BENCH_OPENCL)
  std::string why_not;
  const auto session = opencl_reference::session::open(workers, why_not);
  pocl = session.get();
  const std::string pocl_note = session ? "PoCL: " + session->device_name() + ", " + std::to_string(workers) + " threads" : "PoCL: " + why_not;
#else
  const std::string pocl_note = "PoCL: not built (no OpenCL headers, CL/cl.h, at configure time)";
#endif
#endif
  std::mt19937 rng(std::random_device{}());
  std::vector<row> rows;
  for (int size : {64, 256})
    for (const char* variant : {"naive", "tiled static", "tiled dynamic"}) rows.push_back(bench_matmul(variant, size, repeats, rng));
  rows.push_back(bench_grayscale(false, 1066, 1600, repeats, rng));
  rows.push_back(bench_grayscale(true, 1066, 1600, repeats, rng));
  rows.push_back(bench_block_sum(1 << 22, repeats, rng));
  rows.push_back(bench_shuffle_sum(1 << 22, repeats, rng));

  if (tsv) {
    std::printf("kernel\tseconds\thost_loop_seconds\tpocl_seconds\tmax_abs_diff\tpocl_max_abs_diff\n");
    for (const row& r : rows)
      std::printf("%s\t%.9g\t%.9g\t%.9g\t%.3g\t%.3g\n", r.name.c_str(), r.seconds, r.reference_seconds, r.pocl_seconds, r.max_error,
                  r.pocl_max_error);
    return 0;
  }
#if defined(__CUDACC__)
  std::printf("lockstep emulator_bench on %s, median of %d runs\n\n", target, repeats);
#else
  std::printf("lockstep emulator_bench on %s, %u workers, median of %d runs; %s\n\n", target, workers, repeats, pocl_note.c_str());
#endif
  std::printf(
      "| kernel | time (ms) | host loop (ms) | PoCL (ms) | time / host loop | time / PoCL | max abs diff | PoCL max abs diff |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const row& r : rows) {
    std::printf("| %s | %.3f | %.3f | ", r.name.c_str(), r.seconds * 1e3, r.reference_seconds * 1e3);
    if (r.pocl_seconds > 0)
      std::printf("%.3f | %.3g | %.3g | %.2g | %.2g |\n", r.pocl_seconds * 1e3, r.seconds / r.reference_seconds, r.seconds / r.pocl_seconds,
                  r.max_error, r.pocl_max_error);
    else
      std::printf("- | %.3g | - | %.2g | - |\n", r.seconds / r.reference_seconds, r.max_error);
  }
  return 0;
}
