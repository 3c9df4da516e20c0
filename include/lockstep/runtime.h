// lockstep's runtime: devices ("cpu" is the emulator, "cuda:N" a GPU), device
// memory, streams and events, and modules of kernels compiled at run time
// (lockstep::compile) or shipped with the library (lockstep::builtin_kernels),
// all launched the same way with arguments checked against each kernel's
// real parameter types.
//
// Nothing here needs an NVIDIA driver until a cuda device is used: the driver,
// NVRTC and cuBLAS are loaded at run time.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "lockstep/errors.h"
#include "lockstep/jit/kernel_table.h"
#include "lockstep/launch.h"

namespace lockstep {

namespace detail {
class module_impl;
}

struct device {
  enum class kind_t { cpu, cuda };
  kind_t kind = kind_t::cpu;
  int index = 0;

  static device cpu() { return {kind_t::cpu, 0}; }
  static device cuda(int index = 0) { return {kind_t::cuda, index}; }
  // "cpu", "cuda", "cuda:1"; throws std::invalid_argument naming the accepted forms.
  static device parse(std::string_view text);
  std::string str() const;
  bool operator==(const device&) const = default;
};

// True when an NVIDIA driver loads and sees at least one GPU.
bool cuda_available();
int cuda_device_count();
// Why cuda_available() is false, in words that say what to do; "" if it is true.
std::string cuda_unavailable_reason();
std::string device_name(const device& d);
std::string device_arch(const device& d);   // "sm_90", or "emulator"
int multiprocessor_count(const device& d);  // a GPU's SMs, for persistent grids; 1 on the emulator
void synchronize(const device& d);

// Device memory that someone else owns (a tensor's, a buffer's data()), by
// address: cudaMemcpy and cudaMemset for each device kind, ordered on the
// default stream and done when they return.
void copy_to_device(const device& d, void* dst, const void* src, std::size_t bytes);
void copy_to_host(const device& d, void* dst, const void* src, std::size_t bytes);
void copy_on_device(const device& d, void* dst, const void* src, std::size_t bytes);
void fill_bytes(const device& d, void* dst, unsigned char value, std::size_t bytes);

// Device memory: host memory on the cpu device, GPU memory on a cuda device.
class buffer {
 public:
  buffer(const device& d, std::size_t bytes);
  ~buffer();
  buffer(buffer&& other) noexcept;
  buffer& operator=(buffer&& other) noexcept;
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;

  void* data() const { return ptr_; }
  template <class T>
  T* data_as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }
  const device& where() const { return device_; }

  void copy_from_host(const void* src, std::size_t bytes, std::size_t offset = 0);
  void copy_to_host(void* dst, std::size_t bytes, std::size_t offset = 0) const;
  void copy_from(const buffer& src);  // same device, same size or smaller source
  void fill_bytes(unsigned char value);

  template <class T>
  static buffer from_host(const device& d, const std::vector<T>& host) {
    buffer b(d, host.size() * sizeof(T));
    b.copy_from_host(host.data(), b.bytes());
    return b;
  }
  template <class T>
  std::vector<T> to_host() const {
    std::vector<T> host(bytes_ / sizeof(T));
    copy_to_host(host.data(), host.size() * sizeof(T));
    return host;
  }

 private:
  device device_;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

class stream {
 public:
  explicit stream(const device& d);
  ~stream();
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;
  void synchronize();
  cudaStream_t native() const { return static_cast<cudaStream_t>(handle_); }
  const device& where() const { return device_; }

 private:
  device device_;
  void* handle_ = nullptr;
};

// Timing: device events on a GPU, the wall clock on the cpu device (whose
// launches finish before they return).
class event {
 public:
  explicit event(const device& d);
  ~event();
  event(const event&) = delete;
  event& operator=(const event&) = delete;
  void record(const stream* s = nullptr);
  void synchronize();
  static double elapsed_ms(const event& start, const event& stop);

 private:
  device device_;
  void* handle_ = nullptr;
};

// One argument for a launch. Typed scalars must match the parameter's type
// exactly; integer() and real() (Python numbers) convert to it when the value
// fits; pointers are checked against the pointee type when both are known.
class kernel_arg {
 public:
  enum class kind_t { pointer, typed, integer, real, bytes };

  static kernel_arg pointer(const void* p, jit::scalar_type pointee = jit::scalar_type::none, bool pointee_const = false);
  static kernel_arg integer(long long value);
  static kernel_arg real(double value);
  static kernel_arg bytes(const void* data, std::size_t size, std::size_t align);
  template <class T>
  static kernel_arg typed(T value) {
    static_assert(std::is_arithmetic_v<T>);
    kernel_arg a(kind_t::typed, sizeof(T), alignof(T));
    a.type_ = jit::scalar_of<T>::value;
    std::memcpy(a.storage_, &value, sizeof(T));
    return a;
  }

  kind_t kind() const { return kind_; }
  jit::scalar_type type() const { return type_; }
  bool pointee_const() const { return pointee_const_; }
  const unsigned char* storage() const { return storage_; }
  std::size_t size() const { return size_; }
  std::size_t align() const { return align_; }
  std::string describe() const;  // "float32", "pointer to const float32", "integer 3", ...

 private:
  kernel_arg(kind_t k, std::size_t size, std::size_t align) : kind_(k), size_(size), align_(align) {}
  kind_t kind_;
  jit::scalar_type type_ = jit::scalar_type::none;
  bool pointee_const_ = false;
  std::size_t size_, align_;
  alignas(16) unsigned char storage_[256]{};  // by-value structs up to 256 bytes (strided layouts)
};

// Deduces a kernel_arg from a C++ value: pointers (with their pointee type),
// arithmetic values (typed), buffers (as pointers), other trivially copyable
// values (by value, checked by size and alignment).
template <class T>
kernel_arg arg(const T& value) {
  if constexpr (std::is_same_v<T, buffer>) {
    return kernel_arg::pointer(value.data());
  } else if constexpr (std::is_pointer_v<T>) {
    using pointee = std::remove_cv_t<std::remove_pointer_t<T>>;
    return kernel_arg::pointer(value, jit::scalar_of<pointee>::value, std::is_const_v<std::remove_pointer_t<T>>);
  } else if constexpr (std::is_arithmetic_v<T>) {
    return kernel_arg::typed(value);
  } else {
    static_assert(std::is_trivially_copyable_v<T>, "kernel arguments passed by value must be trivially copyable");
    return kernel_arg::bytes(&value, sizeof(T), alignof(T));
  }
}

std::string describe(const jit::param_desc& p);  // "const float32*", "int32", "struct of 12 bytes"

struct compile_options {
  std::vector<std::string> defines;  // "N=16" or "USE_FAST"
  std::vector<std::string> include_dirs;
  std::string std = "c++17";  // the C++ dialect (NVRTC and host compiler)
  std::string arch;           // GPU target, e.g. "sm_90"; default: the device's
  // Kernels to make launchable, as name expressions ("saxpy", "matmul<16>",
  // "ns::k"). Empty: every non-template __global__ function found in the source.
  std::vector<std::string> names;
  std::vector<std::string> flags;         // passed to the compiler as they are
  std::string source_name = "kernel.cu";  // the file name compiler messages use
  // For the cpu device: instrument the kernels for check mode (lockstep/emu/check.h), so that memcheck,
  // racecheck and initcheck see their accesses while checks are on. The cuda device ignores it.
  bool checked = false;
};

class module;

class function {
 public:
  const std::string& name() const;
  const jit::signature& signature() const;
  std::string signature_text() const;  // "saxpy(float32, const float32*, float32*, int32)"
  // Checks and packs the arguments, then launches; throws argument_error,
  // launch_error or kernel_error.
  void launch(const launch_config& config, std::span<const kernel_arg> args) const;
  template <class... A>
  void operator()(dim3 grid, dim3 block, std::size_t shared_bytes, const A&... args) const {
    const kernel_arg packed[] = {arg(args)..., kernel_arg::integer(0)};
    launch(launch_config{grid, block, shared_bytes, nullptr}, std::span<const kernel_arg>(packed, sizeof...(A)));
  }
  // Allows dynamic shared memory above 48 KiB (cudaFuncAttributeMaxDynamicSharedMemorySize).
  void set_max_dynamic_shared_bytes(int bytes) const;
  // Which engine runs it under the current options: "gpu", "loops" (region
  // loops) or "fibers", and why not loops (lockstep/emu/kernel_engine.h).
  struct engine_answer {
    std::string engine;
    std::string why;    // "" for loops and gpu
    std::string where;  // "file:line" of the kernel, where its record knows it
  };
  engine_answer engine() const;
  // The line its launch would print because it runs on fibers though loops
  // are allowed, marked as said ("" where nothing is to be said): for a caller
  // that says it its own way (Python's lockstep.FibersWarning).
  std::string take_fibers_notice() const;

 private:
  friend class module;
  function(std::shared_ptr<detail::module_impl> impl, std::size_t index) : impl_(std::move(impl)), index_(index) {}
  std::shared_ptr<detail::module_impl> impl_;
  std::size_t index_;
};

class module {
 public:
  // The kernel with this name expression ("saxpy", "matmul<16>", "ns::k");
  // throws std::out_of_range listing the names the module has.
  function get(std::string_view name) const;
  std::vector<std::string> names() const;
  const device& where() const { return device_; }
  bool from_cache() const { return from_cache_; }

 private:
  friend module compile(const std::string&, const compile_options&, const device&);
  friend module builtin_kernels(const device&, bool);
  module(std::shared_ptr<detail::module_impl> impl, device d, bool from_cache) :impl_(std::move(impl)), device_(d), from_cache_(from_cache) {}
  std::shared_ptr<detail::module_impl> impl_;
  device device_;
  bool from_cache_ = false;
};

// Compiles CUDA C++ source for `d`: NVRTC + driver API on a GPU, the host
// compiler + the emulator header + dlopen on the cpu device. Results are
// cached on disk (LOCKSTEP_CACHE_DIR) and in the process. Throws
// compile_error with the compiler's log.
module compile(const std::string& source, const compile_options& options = {}, const device& d = device::cpu());

// The library's own kernels (kernels/*.cu), built ahead of time; `checked`:
// on the cpu device, their build instrumented for check mode (see compile_options::checked).
module builtin_kernels(const device& d, bool checked = false);

}  // namespace lockstep
