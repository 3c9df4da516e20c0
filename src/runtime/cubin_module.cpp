// Kernels that NVRTC compiled, loaded into a GPU's primary context. Each
// kernel's parameter types come from the module itself: the assembled source
// defines `lockstep_signature_<i>` in device memory for kernel i
// (src/jit/translation_unit.cpp), read back here once.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend.h"
#include "cuda_driver.h"

namespace lockstep::detail {
namespace {

using namespace cu;

// The SM an NVIDIA CUBIN's ELF header records ("sm_90"), or "" when the
// header is not one this knows; for messages only.
std::string cubin_arch(const std::string& cubin) {
  constexpr std::size_t abi_version_at = 8, flags_at = 48;  // e_ident[EI_ABIVERSION], ELF64 e_flags
  if (cubin.size() < flags_at + 4 ||
      cubin.compare(0, 4,
                    "\x7f"
                    "ELF") != 0 ||
      cubin[4] != 2 /* ELFCLASS64 */)
    return "";
  std::uint32_t flags = 0;
  std::memcpy(&flags, cubin.data() + flags_at, sizeof flags);
  // CUDA 13's ELF ABI (version 8) keeps the SM in bits 8-15 of e_flags, the
  // earlier ones in bits 0-7.
  const unsigned sm = static_cast<unsigned char>(cubin[abi_version_at]) >= 8 ? (flags >> 8) & 0xff : flags & 0xff;
  return sm ? "sm_" + std::to_string(sm) : "";
}

class cubin_module final : public module_impl {
 public:
  cubin_module(device_backend& backend, const std::string& cubin, const std::vector<std::string>& names,
               const std::vector<std::string>& lowered_names)
      : api_(driver()), backend_(backend), limits_(backend.limits()), image_{api_, backend_}, kernels_(names.size()) {
    if (lowered_names.size() != names.size())
      throw std::invalid_argument("load_cubin_module: " + std::to_string(names.size()) + " names but " + std::to_string(lowered_names.size()) +
                                  " lowered names");
    backend_.make_current();
    const std::string module_arch = cubin_arch(cubin);
    check(api_.cuModuleLoadData(&image_.module, cubin.data()),
          ("loading a module compiled for " + (module_arch.empty() ? "an unknown architecture" : module_arch) + " on " + backend_.name() + " (" +
           backend_.arch() + ")")
              .c_str());
    for (std::size_t i = 0; i < names.size(); ++i) find_kernel(kernels_[i], i, names[i], lowered_names[i]);
  }

  std::size_t count() const override { return kernels_.size(); }
  const std::string& name(std::size_t i) const override { return kernels_.at(i).name; }
  const jit::signature& params(std::size_t i) const override { return kernels_.at(i).params; }

  void launch(std::size_t i, const launch_config& config, void* const* args) const override {
    const kernel& k = kernels_.at(i);
    backend_.make_current();
    // Read at each launch: set_max_dynamic_shared_bytes raises it.
    const int max_dynamic_shared = attribute(k, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
    if (auto problem = check_launch(limits_, shape_of(config, k.static_shared_bytes, max_dynamic_shared), k.name))
      throw launch_error(static_cast<cudaError_t>(problem->cuda_error), problem->message);
    // check_launch has bounded shared_bytes by the device's opt-in limit, so it fits an unsigned.
    const CUresult launched =
        api_.cuLaunchKernel(k.function, config.grid.x, config.grid.y, config.grid.z, config.block.x, config.block.y, config.block.z,
                            static_cast<unsigned>(config.shared_bytes), config.stream, const_cast<void**>(args), nullptr);
    if (launched != CUDA_SUCCESS) throw_launch_error(launched, "launch of kernel '" + k.name + "'");
  }

  void set_max_dynamic_shared_bytes(std::size_t i, int bytes) const override {
    const kernel& k = kernels_.at(i);
    backend_.make_current();
    check(api_.cuFuncSetAttribute(k.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
          ("allowing kernel '" + k.name + "' " + std::to_string(bytes) + " bytes of dynamic shared memory (at most " +
           std::to_string(limits_.shared_per_block_optin - k.static_shared_bytes) + " on " + limits_.device_name + ")")
              .c_str());
  }

 private:
  struct kernel {
    std::string name;
    CUfunction function = nullptr;
    jit::signature params{};
    std::size_t static_shared_bytes = 0;
  };

  // The loaded CUBIN, unloaded with its device's context current.
  struct loaded_image {
    const driver_api& api;
    device_backend& backend;
    CUmodule module = nullptr;
    ~loaded_image() {
      if (!module) return;
      try {
        backend.make_current();
      } catch (...) {  // a destructor cannot report it; the unload then fails quietly too
      }
      api.cuModuleUnload(module);
    }
  };

  void find_kernel(kernel& k, std::size_t index, const std::string& name, const std::string& lowered_name) {
    k.name = name;
    check(api_.cuModuleGetFunction(&k.function, image_.module, lowered_name.c_str()),
          ("finding kernel '" + name + "' (" + lowered_name + ") in the module").c_str());
    k.static_shared_bytes = attribute(k, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);

    const std::string symbol = "lockstep_signature_" + std::to_string(index);
    CUdeviceptr address = 0;
    std::size_t bytes = 0;
    check(api_.cuModuleGetGlobal(&address, &bytes, image_.module, symbol.c_str()),
          ("finding " + symbol + ", the parameter types of kernel '" + name + "', in the module").c_str());
    if (bytes != sizeof k.params)
      throw std::runtime_error(symbol + " has " + std::to_string(bytes) + " bytes where lockstep expects " + std::to_string(sizeof k.params) +
                               ": the module was built with another lockstep's kernel_table.h");
    check(api_.cuMemcpyDtoH(&k.params, address, sizeof k.params), ("reading " + symbol).c_str());
    if (k.params.count > jit::max_params)
      throw std::runtime_error(symbol + " says kernel '" + name + "' has " + std::to_string(k.params.count) +
                               " parameters; lockstep supports at most " + std::to_string(jit::max_params));
  }

  int attribute(const kernel& k, int which) const {
    int value = 0;
    check(api_.cuFuncGetAttribute(&value, which, k.function), "cuFuncGetAttribute");
    return value;
  }

  const driver_api& api_;
  device_backend& backend_;  // outlives its modules (backend_for keeps backends for the process's life)
  const device_limits limits_;
  loaded_image image_;
  std::vector<kernel> kernels_;
};

}  // namespace

std::shared_ptr<module_impl> load_cubin_module(const device& d, const std::string& cubin, const std::vector<std::string>& names,
                                               const std::vector<std::string>& lowered_names) {
  if (d.kind != device::kind_t::cuda) throw std::invalid_argument("a CUBIN runs on a GPU; it cannot be loaded on the " + d.str() + " device");
  return std::make_shared<cubin_module>(backend_for(d), cubin, names, lowered_names);
}

}  // namespace lockstep::detail
