// CUDA runtime calls on the emulator: device memory is host memory, copies are
// memcpy, launches are synchronous, so synchronisation has nothing to wait for;
// errors, versions and the context's sticky error.
#include "lockstep/emu/runtime_api.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "check/api_findings.h"
#include "check/device_memory.h"
#include "execution/message_text.h"
#include "lockstep/emu/options.h"
#include "runtime_calls.h"

namespace lockstep::emu {

namespace {
thread_local cudaError_t last_error = cudaSuccess;
// The context's: set once a kernel faulted, for every thread, until cudaDeviceReset.
std::atomic<int> sticky{cudaSuccess};
std::atomic<std::size_t> allocated{0};
}  // namespace

cudaError_t record(cudaError_t e) {
  if (e != cudaSuccess) last_error = e;
  return e;
}

cudaError_t refuse(const char* call, cudaError_t e, const std::string& why, const void* caller) {
  check::api_call_failed(call, e, why, caller);
  return record(e);
}

bool fits(const void* p, std::size_t bytes, const char* side, std::string& why) {
  const std::size_t room = check::bytes_to_end(p);
  if (bytes <= room) return true;
  why = std::to_string(bytes) + " bytes from " + side + " " + hex_text(reinterpret_cast<std::uintptr_t>(p)) + " run " + std::to_string(bytes - room) +
        " bytes past the end of its allocation (" + std::to_string(room) + " bytes left there)";
  return false;
}

cudaError_t broken_context() { return record(sticky_error()); }

void set_last_error(cudaError_t error) { last_error = error; }
void set_sticky_error(cudaError_t error) {
  sticky.store(error);
  last_error = error;
}
cudaError_t sticky_error() { return static_cast<cudaError_t>(sticky.load(std::memory_order_relaxed)); }

void count_allocated(std::ptrdiff_t bytes) { allocated.fetch_add(static_cast<std::size_t>(bytes)); }
std::size_t allocated_bytes() { return allocated.load(); }

}  // namespace lockstep::emu

using lockstep::emu::record;

cudaError_t cudaMalloc(void** ptr, std::size_t bytes) {
  if (!ptr) return record(cudaErrorInvalidValue);
  if (lockstep::emu::sticky_error()) return lockstep::emu::broken_context();
  // An H100 refuses what its 80 GiB cannot hold, where the host might overcommit.
  if (bytes > lockstep::emu::device_memory_bytes - lockstep::emu::allocated_bytes()) return record(cudaErrorMemoryAllocation);
  int device = 0;
  cudaGetDevice(&device);
  void* p = lockstep::emu::check::allocate(bytes, lockstep::emu::get_options().checks != 0, device);
  if (!p) return record(cudaErrorMemoryAllocation);
  lockstep::emu::count_allocated(static_cast<std::ptrdiff_t>(bytes));
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaFree(void* ptr) {
  if (!ptr) return cudaSuccess;
  if (lockstep::emu::free_managed(ptr)) return cudaSuccess;
  const std::size_t bytes = lockstep::emu::check::bytes_to_end(ptr);
  if (lockstep::emu::check::release(ptr)) {
    lockstep::emu::count_allocated(-static_cast<std::ptrdiff_t>(bytes));
    return cudaSuccess;
  }
  // What the H100 answers for a double free or a pointer it never gave (bench/RESULTS.md, issue 17).
  return lockstep::emu::refuse(
      "cudaFree", cudaErrorInvalidValue,
      "cannot free " + lockstep::emu::hex_text(reinterpret_cast<std::uintptr_t>(ptr)) + ": " + lockstep::emu::check::why_not_allocation(ptr),
      __builtin_return_address(0));
}

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) return record(cudaErrorInvalidMemcpyDirection);
  if (bytes && (!dst || !src)) return record(cudaErrorInvalidValue);
  if (lockstep::emu::sticky_error()) return lockstep::emu::broken_context();
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
  if (lockstep::emu::sticky_error()) return lockstep::emu::broken_context();
  if (!bytes) return cudaSuccess;
  if (std::string why; !lockstep::emu::fits(ptr, bytes, "destination", why))
    return lockstep::emu::refuse("cudaMemset", cudaErrorInvalidValue, why + "; nothing was set", __builtin_return_address(0));
  std::memset(ptr, value, bytes);
  lockstep::emu::check::mark_written(ptr, bytes);
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() { return lockstep::emu::broken_context(); }

// As on an H100 (bench/RESULTS.md): a sticky error is the last error once and
// cudaGetLastError clears it like any other; the broken context still fails
// every later synchronizing call, which makes it the last error again.
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

cudaError_t cudaDriverGetVersion(int* version) {
  if (!version) return record(cudaErrorInvalidValue);
  *version = CUDART_VERSION;
  return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int* version) {
  if (!version) return record(cudaErrorInvalidValue);
  *version = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaProfilerStart() { return cudaSuccess; }
cudaError_t cudaProfilerStop() { return cudaSuccess; }
