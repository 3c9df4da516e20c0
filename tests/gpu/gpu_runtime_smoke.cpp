// The GPU backend end to end on a real GPU, through the runtime's internal
// interfaces only (src/runtime/backend.h, src/jit/nvrtc.h): memory, copies and
// fills, NVRTC, loading a CUBIN, checked launches with packed arguments,
// streams and events. Not part of CTest: it needs a GPU.
//
//   gpu_runtime_smoke [lockstep include dir]   (default: LOCKSTEP_SOURCE_INCLUDE_DIR, else ./include)
//
// Prints one PASS or FAIL line per check; exits 1 if any failed.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include "jit/nvrtc.h"
#include "runtime/backend.h"

namespace {

using namespace lockstep;
using namespace lockstep::detail;

int failures = 0;

void report(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
  if (!ok) ++failures;
}

// What the assembled source (src/jit/translation_unit.cpp) looks like for
// NVRTC: the kernel-table header, the user's kernels, their signatures.
const char* kernels_source = R"(#include "lockstep/jit/kernel_table.h"
__global__ void saxpy(float a, const float* x, const float* y, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}
__global__ void write_through(float* p) { p[threadIdx.x] = 1.0f; }
extern "C" __device__ const lockstep::jit::signature lockstep_signature_0 =
    lockstep::jit::signature_of<decltype(saxpy)>::value;
extern "C" __device__ const lockstep::jit::signature lockstep_signature_1 =
    lockstep::jit::signature_of<decltype(write_through)>::value;
)";

// Runs `body`, reporting an exception as a FAIL of `what` instead of ending the run.
template <class Body>
void attempt(const std::string& what, Body body) {
  try {
    body();
  } catch (const std::exception& e) {
    report(false, what + " threw: " + e.what());
  }
}

template <class Error, class Body>
void expect_throw(const std::string& what, Body body, const std::string& message_part) {
  try {
    body();
    report(false, what + " did not throw");
  } catch (const Error& e) {
    const bool named = std::string(e.what()).find(message_part) != std::string::npos;
    report(named, what + " threw: " + e.what());
  } catch (const std::exception& e) {
    report(false, what + " threw the wrong type: " + e.what());
  }
}

std::string default_include_dir() {
#ifdef LOCKSTEP_SOURCE_INCLUDE_DIR
  return LOCKSTEP_SOURCE_INCLUDE_DIR;
#else
  return "include";
#endif
}

}  // namespace

int main(int argc, char** argv) {
  const std::string include_dir = argc > 1 ? argv[1] : default_include_dir();
  const int gpu_count = cuda_device_count_or_zero();
  report(gpu_count > 0, "cuda_device_count_or_zero() = " + std::to_string(gpu_count) + " " + detail::cuda_driver_unavailable_reason());
  if (gpu_count == 0) return 1;

  expect_throw<device_unavailable>(
      "make_cuda_backend(" + std::to_string(gpu_count) + ")", [&] { make_cuda_backend(gpu_count); }, std::to_string(gpu_count) + " GPU");

  attempt("the GPU backend", [&] {
    const std::unique_ptr<device_backend> gpu = make_cuda_backend(0);
    const device_limits limits = gpu->limits();
    std::printf("device: %s, %s; %u threads per block, shared %zu / %zu opt-in bytes per block, grid x up to %u\n", gpu->name().c_str(),
                gpu->arch().c_str(), limits.max_threads_per_block, limits.static_shared_per_block, limits.shared_per_block_optin,
                limits.max_grid_dim[0]);
    report(gpu->arch().rfind("sm_", 0) == 0 && gpu->arch().size() > 4, "arch() is sm_NN: " + gpu->arch());
    report(limits.max_threads_per_block == 1024 && limits.max_block_dim[2] == 64 && limits.static_shared_per_block == 48 * 1024 &&
               limits.shared_per_block_optin > limits.static_shared_per_block && std::string(limits.device_name) == gpu->name(),
           "limits() read from the device attributes");

    // Fresh random input each run, and an output poisoned with NaN bytes.
    const int n = (1 << 20) + 3;  // not a multiple of the block size
    const std::size_t bytes = n * sizeof(float);
    std::mt19937 random(std::random_device{}());
    std::uniform_real_distribution<float> uniform(-100.0f, 100.0f);
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; ++i) x[i] = uniform(random), y[i] = uniform(random);
    const float a = uniform(random);

    void* x_dev = gpu->allocate(bytes);
    void* y_dev = gpu->allocate(bytes);
    void* y_copy_dev = gpu->allocate(bytes);
    void* out_dev = gpu->allocate(bytes);
    void* stream = gpu->create_stream();
    report(gpu->allocate(0) == nullptr, "allocate(0) gives nullptr, as cudaMalloc(0) does");

    gpu->copy_to_device(x_dev, x.data(), bytes, nullptr);  // the default stream
    gpu->copy_to_device(y_dev, y.data(), bytes, stream);   // a stream of our own
    gpu->copy_on_device(y_copy_dev, y_dev, bytes, stream);
    gpu->fill_bytes(out_dev, 0xff, bytes, nullptr);
    std::vector<float> back(n);
    gpu->copy_to_host(back.data(), y_copy_dev, bytes, stream);
    report(std::memcmp(back.data(), y.data(), bytes) == 0, "host -> device -> device -> host copies round-trip");
    std::vector<unsigned char> poison(bytes);
    gpu->copy_to_host(poison.data(), out_dev, bytes, nullptr);
    bool all_ff = true;
    for (unsigned char byte : poison) all_ff &= byte == 0xff;
    report(all_ff, "fill_bytes(0xff) fills every byte");

    const std::vector<std::string> names = {"saxpy", "write_through"};
    const nvrtc_output compiled = compile_with_nvrtc(kernels_source, "kernels.cu", {"-arch=" + gpu->arch(), "-std=c++17", "-I" + include_dir}, names);
    report(compiled.cubin.size() > 4 && compiled.lowered_names.size() == 2,
           "NVRTC compiled the kernels: " + std::to_string(compiled.cubin.size()) + " bytes of CUBIN, lowered names " +
               (compiled.lowered_names.size() == 2 ? compiled.lowered_names[0] + " " + compiled.lowered_names[1] : "missing"));

    const std::shared_ptr<module_impl> module = load_cubin_module(device::cuda(0), compiled.cubin, names, compiled.lowered_names);
    const jit::signature& params = module->params(0);
    report(module->count() == 2 && module->name(0) == "saxpy" && params.count == 5 && params.params[0].type == jit::scalar_type::float32 &&
               params.params[1].kind == jit::param_kind::pointer && params.params[1].is_const == 1 && params.params[3].is_const == 0 &&
               params.params[4].type == jit::scalar_type::int32,
           "the module's signature, read from device memory, is saxpy(float32, const float32*, const float32*, float32*, int32)");

    // Packed as the runtime packs them: args[i] points at parameter i's value.
    int count = n;
    float scale = a;
    void* const args[] = {&scale, &x_dev, &y_dev, &out_dev, &count};
    const unsigned threads = 256;
    const launch_config config{dim3((n + threads - 1) / threads), dim3(threads), 0, static_cast<cudaStream_t>(stream)};

    module->launch(0, config, args);
    gpu->copy_to_host(back.data(), out_dev, bytes, stream);
    int wrong = 0, first_wrong = -1;
    for (int i = 0; i < n; ++i) {
      const float expected = std::fma(a, x[i], y[i]);  // NVRTC contracts a * x + y into an FMA by default
      if (!(std::fabs(back[i] - expected) <= 1e-5f * std::fmax(1.0f, std::fabs(expected)))) {
        if (first_wrong < 0) first_wrong = i;
        ++wrong;
      }
    }
    report(wrong == 0, "saxpy matches the host on all " + std::to_string(n) + " elements" +
                           (wrong ? " (" + std::to_string(wrong) + " wrong, first at " + std::to_string(first_wrong) + ")" : ""));

    // Timed after the first launch, which may load the kernel lazily.
    constexpr int timed_launches = 20;
    void* start = gpu->create_event();
    void* stop = gpu->create_event();
    gpu->record_event(start, stream);
    for (int i = 0; i < timed_launches; ++i) module->launch(0, config, args);
    gpu->record_event(stop, stream);
    gpu->synchronize_event(stop);
    const double ms = gpu->elapsed_ms(start, stop) / timed_launches;
    report(ms > 0 && ms < 100,
           "events timed saxpy: " + std::to_string(ms * 1000) + " us a launch, " + std::to_string(3.0 * bytes / (ms * 1e6)) + " GB/s");

    launch_config too_wide = config;
    too_wide.block = dim3(2048);
    expect_throw<launch_error>(
        "a launch of 2048 threads per block", [&] { module->launch(0, too_wide, args); }, "1024");

    launch_config big_shared = config;
    big_shared.shared_bytes = 100 * 1024;
    expect_throw<launch_error>(
        "100 KiB of dynamic shared memory without opting in", [&] { module->launch(0, big_shared, args); }, "cudaFuncSetAttribute");
    attempt("100 KiB of dynamic shared memory after set_max_dynamic_shared_bytes", [&] {
      module->set_max_dynamic_shared_bytes(0, 100 * 1024);
      module->launch(0, big_shared, args);
      gpu->synchronize();
      report(true, "100 KiB of dynamic shared memory after set_max_dynamic_shared_bytes");
    });

    gpu->destroy_event(start);
    gpu->destroy_event(stop);
    gpu->destroy_stream(stream);
    for (void* p : {x_dev, y_dev, y_copy_dev, out_dev}) gpu->release(p);
    gpu->synchronize();

    // Last, as it leaves the context unusable: a fault surfaces as kernel_error
    // at the next synchronising call.
    void* bad_address = reinterpret_cast<void*>(std::uintptr_t{8});
    void* const fault_args[] = {&bad_address};
    module->launch(1, launch_config{dim3(1), dim3(32), 0, nullptr}, fault_args);
    expect_throw<kernel_error>(
        "synchronize() after a kernel wrote to address 8", [&] { gpu->synchronize(); }, "CUDA_ERROR_ILLEGAL_ADDRESS");
  });

  std::printf("%s: %d check(s) failed\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
