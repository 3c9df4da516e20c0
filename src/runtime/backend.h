// What the runtime needs from a device kind: memory, copies, streams, events.
// One backend per device; the emulator's (host memory, synchronous) and the
// GPU's (driver API, loaded at run time) implement it.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "lockstep/runtime.h"

namespace lockstep::detail {

class device_backend {
 public:
  virtual ~device_backend() = default;
  virtual std::string name() const = 0;  // "lockstep emulator", "NVIDIA H100 80GB HBM3"
  virtual std::string arch() const = 0;  // "emulator" or "sm_90"
  virtual device_limits limits() const = 0;
  virtual int multiprocessor_count() const = 0;  // for persistent grids; 1 on the emulator

  virtual void* allocate(std::size_t bytes) = 0;  // throws cuda_error (out of memory)
  virtual void release(void* ptr) noexcept = 0;
  // Copies and fills are ordered on `stream` (null: the default stream) and
  // return when done (synchronous, like cudaMemcpy).
  virtual void copy_to_device(void* dst, const void* src, std::size_t bytes, void* stream) = 0;
  virtual void copy_to_host(void* dst, const void* src, std::size_t bytes, void* stream) = 0;
  virtual void copy_on_device(void* dst, const void* src, std::size_t bytes, void* stream) = 0;
  virtual void fill_bytes(void* dst, unsigned char value, std::size_t bytes, void* stream) = 0;

  virtual void* create_stream() = 0;
  virtual void destroy_stream(void* stream) noexcept = 0;
  virtual void synchronize_stream(void* stream) = 0;
  virtual void* create_event() = 0;
  virtual void destroy_event(void* event) noexcept = 0;
  virtual void record_event(void* event, void* stream) = 0;
  virtual void synchronize_event(void* event) = 0;
  virtual double elapsed_ms(void* start, void* stop) = 0;
  virtual void synchronize() = 0;

  // Makes this device current on the calling thread (GPU: its primary context).
  virtual void make_current() = 0;
};

// The backend of `d`, created on first use; throws device_unavailable.
device_backend& backend_for(const device& d);

// Implemented by the GPU backend (src/runtime/cuda_*.cpp).
std::unique_ptr<device_backend> make_cuda_backend(int index);
int cuda_device_count_or_zero();
std::string cuda_driver_unavailable_reason();  // "" when a driver and a GPU are there

// A loaded module: kernels found by name expression, launched with packed
// arguments (args[i] points at the value of parameter i).
class module_impl {
 public:
  virtual ~module_impl() = default;
  virtual std::size_t count() const = 0;
  virtual const std::string& name(std::size_t i) const = 0;
  virtual const jit::signature& params(std::size_t i) const = 0;
  virtual void launch(std::size_t i, const launch_config& config, void* const* args) const = 0;
  virtual void set_max_dynamic_shared_bytes(std::size_t i, int bytes) const = 0;
  // The kernel's address where the emulator runs it (a host-compiled module on the cpu device), else null.
  virtual const void* emulated_kernel(std::size_t) const { return nullptr; }
};

// A shared object carrying lockstep_kernel_table (host compiler or nvcc build).
// `keep_alive` is held until the module is unloaded: whatever keeps `path`
// valid (the descriptor of the folder a /proc/self/fd/... path goes through).
std::shared_ptr<module_impl> load_shared_object_module(const std::string& path, const device& d, std::shared_ptr<const void> keep_alive = nullptr);
// A CUBIN from NVRTC, its kernels found through their lowered (mangled) names.
std::shared_ptr<module_impl> load_cubin_module(const device& d, const std::string& cubin, const std::vector<std::string>& names,
                                               const std::vector<std::string>& lowered_names);

}  // namespace lockstep::detail
