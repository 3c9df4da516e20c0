// Loads libcuda once, resolves the entry points lockstep uses and initialises
// the driver; turns CUresult codes into exceptions that say what to do.
#include "cuda_driver.h"

#include <dlfcn.h>

#include <type_traits>

namespace lockstep::detail::cu {
namespace {

constexpr const char* use_the_emulator = "Use the 'cpu' device to run on the emulator";

struct loaded_driver {
  driver_api api{};
  bool resolved = false;  // api's entry points are there (cuGetErrorName works)
  int device_count = 0;
  std::string unavailable_reason;  // "" when usable
};

// Fills `api`; returns the required names it could not find ("" when all were
// there). Optional entry points it cannot find stay null.
std::string resolve_entry_points(void* library, driver_api& api) {
  std::string missing, optional_missing;
  auto resolve = [&](auto& function, std::initializer_list<const char*> names, std::string& missing_names) {
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(find_symbol(library, names, missing_names));
  };
  auto need = [&](auto& function, std::initializer_list<const char*> names) { resolve(function, names, missing); };
  auto optional = [&](auto& function, std::initializer_list<const char*> names) { resolve(function, names, optional_missing); };
  need(api.cuInit, {"cuInit"});
  need(api.cuGetErrorName, {"cuGetErrorName"});
  need(api.cuGetErrorString, {"cuGetErrorString"});
  need(api.cuDeviceGetCount, {"cuDeviceGetCount"});
  need(api.cuDeviceGet, {"cuDeviceGet"});
  need(api.cuDeviceGetName, {"cuDeviceGetName"});
  need(api.cuDeviceGetAttribute, {"cuDeviceGetAttribute"});
  need(api.cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"});
  need(api.cuDevicePrimaryCtxRelease, {"cuDevicePrimaryCtxRelease_v2"});
  need(api.cuCtxSetCurrent, {"cuCtxSetCurrent"});
  need(api.cuCtxSynchronize, {"cuCtxSynchronize"});
  need(api.cuMemAlloc, {"cuMemAlloc_v2"});
  need(api.cuMemFree, {"cuMemFree_v2"});
  need(api.cuMemcpyDtoH, {"cuMemcpyDtoH_v2"});
  need(api.cuMemcpyHtoDAsync, {"cuMemcpyHtoDAsync_v2"});
  need(api.cuMemcpyDtoHAsync, {"cuMemcpyDtoHAsync_v2"});
  need(api.cuMemcpyDtoDAsync, {"cuMemcpyDtoDAsync_v2"});
  need(api.cuMemsetD8Async, {"cuMemsetD8Async"});
  need(api.cuStreamCreate, {"cuStreamCreate"});
  need(api.cuStreamDestroy, {"cuStreamDestroy_v2"});
  need(api.cuStreamSynchronize, {"cuStreamSynchronize"});
  need(api.cuEventCreate, {"cuEventCreate"});
  need(api.cuEventDestroy, {"cuEventDestroy_v2"});
  need(api.cuEventRecord, {"cuEventRecord"});
  need(api.cuEventSynchronize, {"cuEventSynchronize"});
  // cuda.h 13 maps cuEventElapsedTime to _v2 (drivers from 12.8 on); older
  // drivers have only the original, with the same signature.
  need(api.cuEventElapsedTime, {"cuEventElapsedTime_v2", "cuEventElapsedTime"});
  need(api.cuModuleLoadData, {"cuModuleLoadData"});
  need(api.cuModuleUnload, {"cuModuleUnload"});
  need(api.cuModuleGetFunction, {"cuModuleGetFunction"});
  need(api.cuModuleGetGlobal, {"cuModuleGetGlobal_v2"});
  need(api.cuFuncGetAttribute, {"cuFuncGetAttribute"});
  need(api.cuFuncSetAttribute, {"cuFuncSetAttribute"});
  need(api.cuLaunchKernel, {"cuLaunchKernel"});
  optional(api.cuMemAllocAsync, {"cuMemAllocAsync"});
  optional(api.cuMemFreeAsync, {"cuMemFreeAsync"});
  optional(api.cuDeviceGetDefaultMemPool, {"cuDeviceGetDefaultMemPool"});
  optional(api.cuMemPoolSetAttribute, {"cuMemPoolSetAttribute"});
  optional(api.cuTensorMapEncodeTiled, {"cuTensorMapEncodeTiled"});
  return missing;
}

// Faults of a kernel that ran: they leave the context unusable and surface at
// whichever driver call comes next.
bool is_kernel_fault(CUresult error) {
  switch (error) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
      return true;
    default:
      return false;
  }
}

// What to do about the common errors; "" for the others.
std::string advice_for(CUresult error) {
  switch (error) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      return "The GPU's memory is full: free buffers that are no longer needed or use smaller inputs "
             "(other processes' use of the GPU shows in nvidia-smi).";
    case CUDA_ERROR_NO_DEVICE:
      return "No NVIDIA GPU is visible to this process: check nvidia-smi, and CUDA_VISIBLE_DEVICES if it is set.";
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
      return "The module holds no code for this GPU's architecture: compile for the device's own arch "
             "(leave compile_options::arch empty).";
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_INVALID_IMAGE:
      return "The code was built by a newer CUDA, or for another architecture, than this driver can load: update the "
             "NVIDIA driver, or compile for the device's arch with an NVRTC no newer than the driver (LOCKSTEP_NVRTC).";
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
      return "The kernel needs more registers per thread than this block size leaves: launch smaller blocks, or give "
             "the kernel __launch_bounds__(threads_per_block).";
    default:
      break;
  }
  if (is_kernel_fault(error))
    return "A kernel faulted (an out-of-bounds or misaligned access, a failed device assert, ...); the GPU context is "
           "unusable from here on, so the process must restart. Run the kernel on the 'cpu' device, or under "
           "compute-sanitizer, to find the faulting access.";
  return "";
}

// describe_error with the driver's names for codes where `api` is loaded (it
// is null where libcuda is not, or while it is being loaded).
std::string describe(const driver_api* api, CUresult error, const std::string& what) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api) {
    api->cuGetErrorName(error, &name);
    api->cuGetErrorString(error, &text);
  }
  std::string message = what + " failed: " + (name ? name : "CUresult " + std::to_string(error));
  if (text) message += std::string(" (") + text + ")";
  message += ".";
  if (std::string advice = advice_for(error); !advice.empty()) message += " " + advice;
  return message;
}

loaded_driver load_driver() {
  loaded_driver driver;
  std::string attempts;
  void* library = open_first_library({"libcuda.so.1", "libcuda.so"}, attempts);
  if (!library) {
    driver.unavailable_reason =
        "no NVIDIA driver: libcuda.so.1 could not be loaded (" + attempts + "). " + use_the_emulator + ", or install the NVIDIA driver.";
    return driver;
  }
  if (std::string missing = resolve_entry_points(library, driver.api); !missing.empty()) {
    driver.unavailable_reason = "the NVIDIA driver is too old for lockstep: its libcuda lacks " + missing + ". Update the NVIDIA driver. " +
                                std::string(use_the_emulator) + ".";
    return driver;
  }
  driver.resolved = true;
  const CUresult init = driver.api.cuInit(0);
  const CUresult count = init == CUDA_SUCCESS ? driver.api.cuDeviceGetCount(&driver.device_count) : init;
  if (count != CUDA_SUCCESS) {
    driver.device_count = 0;
    const char* failed_call = init != CUDA_SUCCESS ? "cuInit" : "cuDeviceGetCount";
    driver.unavailable_reason = "the NVIDIA driver loaded but " + describe(&driver.api, count, failed_call) + " " + use_the_emulator + ".";
  } else if (driver.device_count == 0) {
    driver.unavailable_reason =
        "the NVIDIA driver loaded but sees no GPU (check nvidia-smi, and CUDA_VISIBLE_DEVICES if it is set). " + std::string(use_the_emulator) + ".";
  }
  return driver;
}

// Loaded on first use, once (a function-local static is initialised once even
// when threads race to it); never unloaded.
const loaded_driver& loaded() {
  static const loaded_driver driver = load_driver();
  return driver;
}

}  // namespace

const driver_api& driver() {
  const loaded_driver& d = loaded();
  if (!d.unavailable_reason.empty()) throw device_unavailable(d.unavailable_reason);
  return d.api;
}

int driver_device_count() { return loaded().device_count; }

std::string driver_unavailable_reason() { return loaded().unavailable_reason; }

std::string describe_error(CUresult error, const std::string& what) {
  const loaded_driver& d = loaded();
  return describe(d.resolved ? &d.api : nullptr, error, what);
}

namespace {
template <class Error>
[[noreturn]] void throw_error(CUresult error, const std::string& what) {
  // CUresult and cudaError_t agree on the codes lockstep names (errors.h).
  const auto code = static_cast<cudaError_t>(error);
  if (is_kernel_fault(error)) throw kernel_error(code, describe_error(error, what));
  throw Error(code, describe_error(error, what));
}
}  // namespace

void check(CUresult error, const char* what) {
  if (error != CUDA_SUCCESS) throw_error<cuda_error>(error, what);
}

void throw_launch_error(CUresult error, const std::string& what) { throw_error<launch_error>(error, what); }

void* open_first_library(const std::vector<std::string>& candidates, std::string& attempts) {
  for (const std::string& candidate : candidates) {
    if (void* library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) return library;
    const char* reason = dlerror();  // names the file already
    attempts += (attempts.empty() ? "" : "; ") + (reason ? std::string(reason) : candidate + ": not loadable");
  }
  return nullptr;
}

void* find_symbol(void* library, std::initializer_list<const char*> names, std::string& missing) {
  for (const char* name : names)
    if (void* symbol = dlsym(library, name)) return symbol;
  missing += (missing.empty() ? "" : ", ") + std::string(*names.begin());
  return nullptr;
}

}  // namespace lockstep::detail::cu
