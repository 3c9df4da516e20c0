// Devices, buffers, streams, events, and launching a module's functions.
#include "lockstep/runtime.h"

#include <stdexcept>

#include "backend.h"
#include "kernel_args.h"
#include "lockstep/emu/kernel_engine.h"

namespace lockstep {

device device::parse(std::string_view text) {
  if (text == "cpu") return cpu();
  if (text == "cuda") return cuda(0);
  if (text.rfind("cuda:", 0) == 0 && text.size() > 5) {
    int index = 0;
    for (char c : text.substr(5)) {
      if (c < '0' || c > '9') goto bad;
      index = index * 10 + (c - '0');
    }
    return cuda(index);
  }
bad:
  throw std::invalid_argument("unknown device '" + std::string(text) + "': use \"cpu\" (the emulator), \"cuda\" or \"cuda:N\"");
}

std::string device::str() const { return kind == kind_t::cpu ? "cpu" : "cuda:" + std::to_string(index); }

bool cuda_available() { return detail::cuda_device_count_or_zero() > 0; }
int cuda_device_count() { return detail::cuda_device_count_or_zero(); }
std::string cuda_unavailable_reason() { return detail::cuda_driver_unavailable_reason(); }
std::string device_name(const device& d) { return detail::backend_for(d).name(); }
std::string device_arch(const device& d) { return detail::backend_for(d).arch(); }
int multiprocessor_count(const device& d) { return detail::backend_for(d).multiprocessor_count(); }
void synchronize(const device& d) { detail::backend_for(d).synchronize(); }

void copy_to_device(const device& d, void* dst, const void* src, std::size_t bytes) {
  detail::backend_for(d).copy_to_device(dst, src, bytes, nullptr);
}
void copy_to_host(const device& d, void* dst, const void* src, std::size_t bytes) { detail::backend_for(d).copy_to_host(dst, src, bytes, nullptr); }
void copy_on_device(const device& d, void* dst, const void* src, std::size_t bytes) {
  detail::backend_for(d).copy_on_device(dst, src, bytes, nullptr);
}
void fill_bytes(const device& d, void* dst, unsigned char value, std::size_t bytes) { detail::backend_for(d).fill_bytes(dst, value, bytes, nullptr); }

buffer::buffer(const device& d, std::size_t bytes) : device_(d), bytes_(bytes) { ptr_ = detail::backend_for(d).allocate(bytes); }

buffer::~buffer() {
  if (ptr_) detail::backend_for(device_).release(ptr_);
}

buffer::buffer(buffer&& other) noexcept : device_(other.device_), ptr_(other.ptr_), bytes_(other.bytes_) {
  other.ptr_ = nullptr;
  other.bytes_ = 0;
}

buffer& buffer::operator=(buffer&& other) noexcept {
  if (this != &other) {
    if (ptr_) detail::backend_for(device_).release(ptr_);
    device_ = other.device_;
    ptr_ = other.ptr_;
    bytes_ = other.bytes_;
    other.ptr_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

namespace {
void check_range(const char* what, std::size_t bytes, std::size_t offset, std::size_t size) {
  if (offset > size || bytes > size - offset)
    throw std::out_of_range(std::string(what) + ": " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                            " do not fit in a buffer of " + std::to_string(size) + " bytes");
}
}  // namespace

void buffer::copy_from_host(const void* src, std::size_t bytes, std::size_t offset) {
  check_range("copy_from_host", bytes, offset, bytes_);
  detail::backend_for(device_).copy_to_device(static_cast<char*>(ptr_) + offset, src, bytes, nullptr);
}

void buffer::copy_to_host(void* dst, std::size_t bytes, std::size_t offset) const {
  check_range("copy_to_host", bytes, offset, bytes_);
  detail::backend_for(device_).copy_to_host(dst, static_cast<const char*>(ptr_) + offset, bytes, nullptr);
}

void buffer::copy_from(const buffer& src) {
  if (!(src.device_ == device_))
    throw std::invalid_argument("copy_from: the source is on " + src.device_.str() + " and this buffer on " + device_.str() +
                                "; copy through the host");
  check_range("copy_from", src.bytes_, 0, bytes_);
  detail::backend_for(device_).copy_on_device(ptr_, src.ptr_, src.bytes_, nullptr);
}

void buffer::fill_bytes(unsigned char value) { detail::backend_for(device_).fill_bytes(ptr_, value, bytes_, nullptr); }

stream::stream(const device& d) : device_(d) { handle_ = detail::backend_for(d).create_stream(); }
stream::~stream() { detail::backend_for(device_).destroy_stream(handle_); }
void stream::synchronize() { detail::backend_for(device_).synchronize_stream(handle_); }

event::event(const device& d) : device_(d) { handle_ = detail::backend_for(d).create_event(); }
event::~event() { detail::backend_for(device_).destroy_event(handle_); }
void event::record(const stream* s) { detail::backend_for(device_).record_event(handle_, s ? static_cast<void*>(s->native()) : nullptr); }
void event::synchronize() { detail::backend_for(device_).synchronize_event(handle_); }
double event::elapsed_ms(const event& start, const event& stop) {
  if (!(start.device_ == stop.device_)) throw std::invalid_argument("elapsed_ms: the events are on different devices");
  return detail::backend_for(start.device_).elapsed_ms(start.handle_, stop.handle_);
}

const std::string& function::name() const { return impl_->name(index_); }
const jit::signature& function::signature() const { return impl_->params(index_); }
std::string function::signature_text() const { return detail::signature_text(name(), signature()); }

void function::launch(const launch_config& config, std::span<const kernel_arg> args) const {
  const detail::packed_args packed = detail::pack_args(signature_text(), signature(), args);
  impl_->launch(index_, config, packed.pointers());
}

void function::set_max_dynamic_shared_bytes(int bytes) const { impl_->set_max_dynamic_shared_bytes(index_, bytes); }

function::engine_answer function::engine() const {
  const void* kernel = impl_->emulated_kernel(index_);
  if (!kernel) return {"gpu", "", ""};
  const emu::kernel_engine e = emu::engine_of(kernel);
  return {e.loops ? "loops" : "fibers", e.why, e.where};
}

std::string function::take_fibers_notice() const {
  const void* kernel = impl_->emulated_kernel(index_);
  return kernel ? emu::take_fibers_notice(kernel) : "";
}

function module::get(std::string_view name) const {
  for (std::size_t i = 0; i < impl_->count(); ++i)
    if (impl_->name(i) == name) return function(impl_, i);
  std::string known;
  for (const std::string& n : names()) known += (known.empty() ? "" : ", ") + n;
  throw std::out_of_range("the module has no kernel named '" + std::string(name) + "'; it has: " + (known.empty() ? "none" : known) +
                          ". Template instances and kernels the source scan cannot see must be listed in compile_options::names.");
}

std::vector<std::string> module::names() const {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < impl_->count(); ++i) out.push_back(impl_->name(i));
  return out;
}

}  // namespace lockstep
