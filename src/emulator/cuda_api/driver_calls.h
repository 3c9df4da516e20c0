// What the driver API's source files share (driver_api.cpp, driver_modules.cpp,
// driver_virtual_memory.cpp).
#pragma once
#include <cstdint>

#include "lockstep/emu/driver_api.h"

namespace lockstep::emu {

// The runtime's error as the driver's: CUDA gives both APIs the same numbers.
inline CUresult as_result(cudaError_t e) { return static_cast<CUresult>(e); }
inline void* pointer(CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(p)); }
// The context every cuCtxCreate and the primary context stand for: one device, one address space.
CUcontext the_context();
// CUDA_SUCCESS for the one device's ordinal, CUDA_ERROR_INVALID_DEVICE otherwise.
CUresult check_device(CUdevice device);

}  // namespace lockstep::emu
