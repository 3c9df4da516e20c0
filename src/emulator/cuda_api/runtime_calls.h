// What the runtime API's source files share: the thread's last error, the
// context's sticky error, refusals that check mode also reports, and the
// bookkeeping of host memory the runtime handed out (runtime_memory.cpp).
#pragma once
#include <cstddef>
#include <string>

#include "lockstep/emu/runtime_api.h"

namespace lockstep::emu {

// Remembers a failure as the thread's last error (cudaGetLastError) and returns it.
cudaError_t record(cudaError_t e);
// A call that fails because of its arguments: in check mode also a finding naming `call` and the caller's line.
cudaError_t refuse(const char* call, cudaError_t e, const std::string& why, const void* caller);
// Whether [p, p + bytes) stays inside the device allocation holding p (if any); else why not, in `why`.
bool fits(const void* p, std::size_t bytes, const char* side, std::string& why);
// The sticky error as the thread's last error too, for calls that return it.
cudaError_t broken_context();

// Host memory from cudaMallocHost/cudaHostAlloc, cudaHostRegister or cudaMallocManaged.
enum class host_memory_kind { pinned, registered, managed };
struct host_memory_range {
  const void* begin = nullptr;
  std::size_t bytes = 0;
  host_memory_kind kind = host_memory_kind::pinned;
  unsigned flags = 0;
};
// The range holding `p`, if the runtime gave it or registered it.
bool find_host_memory(const void* p, host_memory_range& found);
// Frees managed memory given to cudaFree; false if `p` is not the start of a managed allocation.
bool free_managed(void* p);

// An H100 SXM's memory: cudaDeviceProp::totalGlobalMem, and what cudaMalloc and its relatives may hold at once.
inline constexpr std::size_t device_memory_bytes = std::size_t{80} << 30;
// The bytes the program holds from cudaMalloc and its relatives (cudaMemGetInfo, the 80 GiB limit).
void count_allocated(std::ptrdiff_t bytes);
std::size_t allocated_bytes();

// The device numbers calls take: only 0 exists (runtime_device.cpp).
bool valid_device(int device);

// Forgets every stream and event (cudaDeviceReset); runtime_streams.cpp.
void destroy_streams_and_events();
// Restores the device's flags, limits and configurations (cudaDeviceReset); runtime_device.cpp.
void reset_device_settings();

}  // namespace lockstep::emu
