// The emulator as a device: memory is host memory (as cudaMalloc gives on the
// emulator, so kernels see live allocations), launches finish before they
// return, so streams and events only need the wall clock.
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "backend.h"
#include "lockstep/emu/options.h"

namespace lockstep::detail {
namespace {

class cpu_backend final : public device_backend {
 public:
  std::string name() const override { return "lockstep emulator"; }
  std::string arch() const override { return "emulator"; }
  device_limits limits() const override { return h100_limits; }
  int multiprocessor_count() const override { return 1; }

  void* allocate(std::size_t bytes) override {
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
      cudaGetLastError();
      throw cuda_error(cudaErrorMemoryAllocation, "could not allocate " + std::to_string(bytes) + " bytes of host memory for the emulator");
    }
    return p;
  }
  void release(void* ptr) noexcept override { cudaFree(ptr); }
  // Through the emulator's cudaMemcpy/cudaMemset, which check mode watches:
  // bytes copied or filled here count as written (initcheck), and a range
  // outside an allocation is an error rather than a stray write.
  void copy_to_device(void* dst, const void* src, std::size_t bytes, void*) override {
    succeed(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "copy to the device");
  }
  void copy_to_host(void* dst, const void* src, std::size_t bytes, void*) override {
    succeed(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "copy to the host");
  }
  void copy_on_device(void* dst, const void* src, std::size_t bytes, void*) override {
    succeed(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice), "copy on the device");
  }
  void fill_bytes(void* dst, unsigned char value, std::size_t bytes, void*) override { succeed(cudaMemset(dst, value, bytes), "fill"); }

  void* create_stream() override { return nullptr; }
  void destroy_stream(void*) noexcept override {}
  void synchronize_stream(void*) override {}
  void* create_event() override { return new std::chrono::steady_clock::time_point(); }
  void destroy_event(void* e) noexcept override { delete static_cast<std::chrono::steady_clock::time_point*>(e); }
  void record_event(void* e, void*) override { *static_cast<std::chrono::steady_clock::time_point*>(e) = std::chrono::steady_clock::now(); }
  void synchronize_event(void*) override {}
  double elapsed_ms(void* start, void* stop) override {
    using clock_point = std::chrono::steady_clock::time_point;
    return std::chrono::duration<double, std::milli>(*static_cast<clock_point*>(stop) - *static_cast<clock_point*>(start)).count();
  }
  void synchronize() override {}
  void make_current() override {}

 private:
  static void succeed(cudaError_t status, const char* what) {
    if (status == cudaSuccess) return;
    cudaGetLastError();
    throw cuda_error(status, std::string("the emulator's ") + what + " failed: " + cudaGetErrorString(status));
  }
};

}  // namespace

device_backend& backend_for(const device& d) {
  static std::mutex mutex;
  static std::map<std::pair<int, int>, std::unique_ptr<device_backend>> backends;
  std::lock_guard lock(mutex);
  auto& slot = backends[{static_cast<int>(d.kind), d.index}];
  if (!slot) {
    if (d.kind == device::kind_t::cpu) {
      if (d.index != 0) throw device_unavailable("there is one cpu device, 'cpu' (index 0); got " + d.str());
      slot = std::make_unique<cpu_backend>();
    } else {
      slot = make_cuda_backend(d.index);
    }
  }
  return *slot;
}

}  // namespace lockstep::detail
