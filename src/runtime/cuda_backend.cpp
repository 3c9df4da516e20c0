// A GPU as a device: the driver API on the device's primary context (the one
// the CUDA runtime uses too, so memory and streams are shared with code that
// uses cudart in the same process).
#include <cstdint>
#include <memory>
#include <string>

#include "backend.h"
#include "cuda_driver.h"

namespace lockstep::detail {
namespace {

using namespace cu;

CUdeviceptr device_address(const void* ptr) { return reinterpret_cast<CUdeviceptr>(ptr); }
CUstream as_stream(void* stream) { return static_cast<CUstream>(stream); }

class cuda_backend final : public device_backend {
 public:
  explicit cuda_backend(int index) : api_(driver()) {
    const int count = driver_device_count();
    if (index < 0 || index >= count)
      throw device_unavailable("there is no GPU cuda:" + std::to_string(index) + ": this machine has " + std::to_string(count) +
                               (count == 1 ? " GPU, cuda:0" : " GPUs, cuda:0 to cuda:" + std::to_string(count - 1)));
    check(api_.cuDeviceGet(&device_, index), "cuDeviceGet");
    char name[256] = {};
    check(api_.cuDeviceGetName(name, sizeof name, device_), "cuDeviceGetName");
    name_ = name;
    arch_ = "sm_" +
            std::to_string(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 + attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
    limits_.device_name = name_.c_str();
    limits_.max_threads_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    for (int axis = 0; axis < 3; ++axis) {
      limits_.max_block_dim[axis] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + axis);
      limits_.max_grid_dim[axis] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + axis);
    }
    limits_.static_shared_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    limits_.shared_per_block_optin = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    multiprocessor_count_ = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    // Last, so that nothing above can throw with the context retained.
    check(api_.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
    // Tensors come and go with every op. cuMemFree waits for the whole device,
    // so each op would stall the queue; the driver's stream-ordered pool frees
    // in order on the default stream and keeps the memory for the next
    // allocation (a release threshold of "never" stops it from trimming).
    void* pool = nullptr;
    stream_ordered_ = api_.cuMemAllocAsync && api_.cuMemFreeAsync && api_.cuDeviceGetDefaultMemPool && api_.cuMemPoolSetAttribute &&
                      api_.cuDeviceGetDefaultMemPool(&pool, device_) == 0;
    if (stream_ordered_) {
      std::uint64_t keep_everything = ~std::uint64_t{0};
      api_.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep_everything);
    }
  }

  // At process exit the driver may already be shutting down; its error then
  // has nowhere to go.
  ~cuda_backend() override { api_.cuDevicePrimaryCtxRelease(device_); }

  cuda_backend(const cuda_backend&) = delete;  // limits_ points into name_
  cuda_backend& operator=(const cuda_backend&) = delete;

  std::string name() const override { return name_; }
  std::string arch() const override { return arch_; }
  device_limits limits() const override { return limits_; }
  int multiprocessor_count() const override { return multiprocessor_count_; }

  void make_current() override { check(api_.cuCtxSetCurrent(context_), "cuCtxSetCurrent"); }

  void* allocate(std::size_t bytes) override {
    if (bytes == 0) return nullptr;  // as cudaMalloc does; cuMemAlloc refuses 0 bytes
    make_current();
    CUdeviceptr ptr = 0;
    if (stream_ordered_)
      check(api_.cuMemAllocAsync(&ptr, bytes, nullptr), ("cuMemAllocAsync of " + std::to_string(bytes) + " bytes on " + name_).c_str());
    else
      check(api_.cuMemAlloc(&ptr, bytes), ("cuMemAlloc of " + std::to_string(bytes) + " bytes on " + name_).c_str());
    return reinterpret_cast<void*>(ptr);
  }
  // Memory is freed after the work queued on the default stream before it; a
  // kernel still using it on a non-blocking stream of the caller's must be
  // waited for first (as with PyTorch's caching allocator).
  void release(void* ptr) noexcept override {
    if (!ptr) return;
    make_current_quietly();
    // A failure here is a sticky fault the next checked call reports.
    if (stream_ordered_)
      api_.cuMemFreeAsync(device_address(ptr), nullptr);
    else
      api_.cuMemFree(device_address(ptr));
  }

  void copy_to_device(void* dst, const void* src, std::size_t bytes, void* stream) override {
    enqueue_and_wait(bytes, stream, "cuMemcpyHtoDAsync", [&](CUstream s) { return api_.cuMemcpyHtoDAsync(device_address(dst), src, bytes, s); });
  }
  void copy_to_host(void* dst, const void* src, std::size_t bytes, void* stream) override {
    enqueue_and_wait(bytes, stream, "cuMemcpyDtoHAsync", [&](CUstream s) { return api_.cuMemcpyDtoHAsync(dst, device_address(src), bytes, s); });
  }
  void copy_on_device(void* dst, const void* src, std::size_t bytes, void* stream) override {
    enqueue_and_wait(bytes, stream, "cuMemcpyDtoDAsync",
                     [&](CUstream s) { return api_.cuMemcpyDtoDAsync(device_address(dst), device_address(src), bytes, s); });
  }
  void fill_bytes(void* dst, unsigned char value, std::size_t bytes, void* stream) override {
    enqueue_and_wait(bytes, stream, "cuMemsetD8Async", [&](CUstream s) { return api_.cuMemsetD8Async(device_address(dst), value, bytes, s); });
  }

  void* create_stream() override {
    make_current();
    CUstream stream = nullptr;
    check(api_.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    return stream;
  }
  void destroy_stream(void* stream) noexcept override {
    if (!stream) return;
    make_current_quietly();
    api_.cuStreamDestroy(as_stream(stream));
  }
  void synchronize_stream(void* stream) override {
    make_current();
    check(api_.cuStreamSynchronize(as_stream(stream)), "cuStreamSynchronize");
  }

  void* create_event() override {
    make_current();
    CUevent event = nullptr;
    check(api_.cuEventCreate(&event, CU_EVENT_DEFAULT), "cuEventCreate");
    return event;
  }
  void destroy_event(void* event) noexcept override {
    if (!event) return;
    make_current_quietly();
    api_.cuEventDestroy(static_cast<CUevent>(event));
  }
  void record_event(void* event, void* stream) override {
    make_current();
    check(api_.cuEventRecord(static_cast<CUevent>(event), as_stream(stream)), "cuEventRecord");
  }
  void synchronize_event(void* event) override {
    make_current();
    check(api_.cuEventSynchronize(static_cast<CUevent>(event)), "cuEventSynchronize");
  }
  double elapsed_ms(void* start, void* stop) override {
    make_current();
    float ms = 0;
    check(api_.cuEventElapsedTime(&ms, static_cast<CUevent>(start), static_cast<CUevent>(stop)), "cuEventElapsedTime");
    return ms;
  }

  void synchronize() override {
    make_current();
    check(api_.cuCtxSynchronize(), "cuCtxSynchronize");
  }

 private:
  int attribute(int which) const {
    int value = 0;
    check(api_.cuDeviceGetAttribute(&value, which, device_), "cuDeviceGetAttribute");
    return value;
  }

  void make_current_quietly() noexcept { api_.cuCtxSetCurrent(context_); }

  // Copies and fills go through the stream-ordered calls, then wait: the
  // driver's "synchronous" copy from pageable memory and its memset may
  // return before the device has the data, and the interface promises done.
  template <class Enqueue>
  void enqueue_and_wait(std::size_t bytes, void* stream, const char* what, Enqueue enqueue) {
    if (bytes == 0) return;
    make_current();
    check(enqueue(as_stream(stream)), what);
    check(api_.cuStreamSynchronize(as_stream(stream)), what);
  }

  const driver_api& api_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  bool stream_ordered_ = false;  // allocations come from the driver's stream-ordered pool
  std::string name_;
  std::string arch_;
  device_limits limits_{};
  int multiprocessor_count_ = 0;
};

}  // namespace

std::unique_ptr<device_backend> make_cuda_backend(int index) { return std::make_unique<cuda_backend>(index); }

int cuda_device_count_or_zero() { return cu::driver_device_count(); }

std::string cuda_driver_unavailable_reason() { return cu::driver_unavailable_reason(); }

}  // namespace lockstep::detail
