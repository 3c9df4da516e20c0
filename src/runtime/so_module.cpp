// Modules that are shared objects carrying lockstep_kernel_table: run-time
// compiled kernels for the emulator, and the library's own kernels built
// ahead of time for the emulator (host compiler) or the GPU (nvcc).
#include <dlfcn.h>

#include <stdexcept>

#include "backend.h"

namespace lockstep::detail {
namespace {

class so_module final : public module_impl {
 public:
  so_module(void* handle, const jit::kernel_entry* table, unsigned count, device d, std::shared_ptr<const void> keep_alive)
      : keep_alive_(std::move(keep_alive)), handle_(handle), device_(d) {
    for (unsigned i = 0; i < count; ++i) {
      entries_.push_back(table[i]);
      names_.emplace_back(table[i].name_expression);
    }
  }
  ~so_module() override { dlclose(handle_); }  // before keep_alive_ goes

  std::size_t count() const override { return entries_.size(); }
  const std::string& name(std::size_t i) const override { return names_.at(i); }
  const jit::signature& params(std::size_t i) const override { return *entries_.at(i).params; }
  void launch(std::size_t i, const launch_config& config, void* const* args) const override {
    backend_for(device_).make_current();
    jit::launch_status status;
    entries_.at(i).launch(config, args, &status);
    // The message starts with the error's name, which the rethrown error adds again.
    std::string message = status.message;
    if (const auto colon = message.find(": "); colon != std::string::npos) message.erase(0, colon + 2);
    switch (status.kind) {
      case jit::launch_status::ok:
        return;
      case jit::launch_status::kernel_failed:
        throw kernel_error(static_cast<cudaError_t>(status.code), message);
      case jit::launch_status::launch_refused:
        throw launch_error(static_cast<cudaError_t>(status.code), message);
      case jit::launch_status::other:
        throw std::runtime_error(status.message);
    }
  }
  const void* emulated_kernel(std::size_t i) const override { return device_.kind == device::kind_t::cpu ? entries_.at(i).kernel : nullptr; }
  void set_max_dynamic_shared_bytes(std::size_t i, int bytes) const override {
    backend_for(device_).make_current();
    if (const int error = entries_.at(i).set_max_dynamic_shared_bytes(bytes))
      throw launch_error(static_cast<cudaError_t>(error), "kernel '" + names_[i] + "': cannot allow " + std::to_string(bytes) +
                                                              " bytes of dynamic shared memory (at most 227 KiB minus its static shared memory)");
  }

 private:
  std::shared_ptr<const void> keep_alive_;
  void* handle_;
  device device_;
  std::vector<jit::kernel_entry> entries_;
  std::vector<std::string> names_;
};

}  // namespace

std::shared_ptr<module_impl> load_shared_object_module(const std::string& path, const device& d, std::shared_ptr<const void> keep_alive) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw std::runtime_error("lockstep: cannot load kernel module " + path + ": " + dlerror());
  const auto* table = static_cast<const jit::kernel_entry*>(dlsym(handle, "lockstep_kernel_table"));
  const auto* count = static_cast<const unsigned*>(dlsym(handle, "lockstep_kernel_count"));
  if (!table || !count) {
    dlclose(handle);
    throw std::runtime_error("lockstep: " + path + " is not a lockstep kernel module (it has no lockstep_kernel_table)");
  }
  return std::make_shared<so_module>(handle, table, *count, d, std::move(keep_alive));
}

}  // namespace lockstep::detail
