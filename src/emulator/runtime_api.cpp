// CUDA runtime calls on the emulator: device memory is host memory, copies are
// memcpy, launches are synchronous, so synchronisation has nothing to wait for.
#include "lockstep/emu/runtime_api.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "check/api_findings.h"
#include "check/device_memory.h"
#include "kernel_info.h"
#include "lockstep/emu/options.h"
#include "lockstep/launch_limits.h"
#include "message_text.h"

namespace lockstep::emu {

namespace {
thread_local cudaError_t last_error = cudaSuccess;

cudaError_t record(cudaError_t e) {
  if (e != cudaSuccess) last_error = e;
  return e;
}

// A call that fails because of its arguments: in check mode also a finding.
cudaError_t refuse(const char* call, cudaError_t e, const std::string& why, const void* caller) {
  check::api_call_failed(call, e, why, caller);
  return record(e);
}

// Whether [p, p + bytes) stays inside the allocation holding p (if any); else the reason.
bool fits(const void* p, std::size_t bytes, const char* side, std::string& why) {
  const std::size_t room = check::bytes_to_end(p);
  if (bytes <= room) return true;
  why = std::to_string(bytes) + " bytes from " + side + " " + hex_text(reinterpret_cast<std::uintptr_t>(p)) + " run " + std::to_string(bytes - room) +
        " bytes past the end of its allocation (" + std::to_string(room) + " bytes left there)";
  return false;
}
}  // namespace

void set_last_error(cudaError_t error) { last_error = error; }

}  // namespace lockstep::emu

using lockstep::emu::record;

cudaError_t cudaMalloc(void** ptr, std::size_t bytes) {
  if (!ptr) return record(cudaErrorInvalidValue);
  void* p = lockstep::emu::check::allocate(bytes, lockstep::emu::get_options().checks != 0);
  if (!p) return record(cudaErrorMemoryAllocation);
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaFree(void* ptr) {
  if (!ptr) return cudaSuccess;
  if (lockstep::emu::check::release(ptr)) return cudaSuccess;
  // What the H100 answers for a double free or a pointer it never gave (bench/RESULTS.md, issue 17).
  return lockstep::emu::refuse(
      "cudaFree", cudaErrorInvalidValue,
      "cannot free " + lockstep::emu::hex_text(reinterpret_cast<std::uintptr_t>(ptr)) + ": " + lockstep::emu::check::why_not_allocation(ptr),
      __builtin_return_address(0));
}

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) return record(cudaErrorInvalidMemcpyDirection);
  if (bytes && (!dst || !src)) return record(cudaErrorInvalidValue);
  if (!bytes) return cudaSuccess;
  if (std::string why; !lockstep::emu::fits(dst, bytes, "destination", why) || !lockstep::emu::fits(src, bytes, "source", why))
    return lockstep::emu::refuse("cudaMemcpy", cudaErrorInvalidValue, why + "; nothing was copied", __builtin_return_address(0));
  std::memmove(dst, src, bytes);
  if (kind == cudaMemcpyHostToDevice)
    lockstep::emu::check::mark_written(dst, bytes);
  else if (kind != cudaMemcpyDeviceToHost)
    lockstep::emu::check::copy_written(dst, src, bytes);  // initcheck's record follows the bytes
  return cudaSuccess;
}

cudaError_t cudaMemset(void* ptr, int value, std::size_t bytes) {
  if (bytes && !ptr) return record(cudaErrorInvalidValue);
  if (!bytes) return cudaSuccess;
  if (std::string why; !lockstep::emu::fits(ptr, bytes, "destination", why))
    return lockstep::emu::refuse("cudaMemset", cudaErrorInvalidValue, why + "; nothing was set", __builtin_return_address(0));
  std::memset(ptr, value, bytes);
  lockstep::emu::check::mark_written(ptr, bytes);
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }

cudaError_t cudaGetLastError() {
  cudaError_t e = lockstep::emu::last_error;
  lockstep::emu::last_error = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError() { return lockstep::emu::last_error; }

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
#define LOCKSTEP_CUDA_ERROR_NAME(name, value, text) \
  case name:                                        \
    return #name;
    LOCKSTEP_CUDA_ERRORS(LOCKSTEP_CUDA_ERROR_NAME)
#undef LOCKSTEP_CUDA_ERROR_NAME
  }
  return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
#define LOCKSTEP_CUDA_ERROR_TEXT(name, value, text) \
  case name:                                        \
    return text;
    LOCKSTEP_CUDA_ERRORS(LOCKSTEP_CUDA_ERROR_TEXT)
#undef LOCKSTEP_CUDA_ERROR_TEXT
  }
  return "unknown error";
}

cudaError_t cudaFuncSetAttributeForKernel(const void* kernel, cudaFuncAttribute attribute, int value) {
  if (!kernel) return record(cudaErrorInvalidDeviceFunction);
  auto& info = lockstep::emu::kernel_info_for(kernel);
  if (attribute == cudaFuncAttributePreferredSharedMemoryCarveout) return value >= -1 && value <= 100 ? cudaSuccess : record(cudaErrorInvalidValue);
  if (attribute != cudaFuncAttributeMaxDynamicSharedMemorySize) return record(cudaErrorInvalidValue);
  const auto limit = lockstep::h100_limits.shared_per_block_optin - info.static_shared_bytes;
  if (value < 0 || static_cast<std::size_t>(value) > limit) return record(cudaErrorInvalidValue);
  info.max_dynamic_shared_bytes = static_cast<std::size_t>(value);
  return cudaSuccess;
}
