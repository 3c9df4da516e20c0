// Pitched, asynchronous, page-locked, managed and peer memory, pointer
// attributes and symbol copies (runtime_memory.h). Page-locked, registered and
// managed memory is host memory the runtime keeps a record of here, and
// registers with check mode so that checked kernels may touch it; it is never
// tracked for initcheck, since the host writes it directly.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <string>

#include "check/device_memory.h"
#include "execution/message_text.h"
#include "lockstep/emu/runtime_api.h"
#include "runtime_calls.h"

namespace lockstep::emu {
namespace {

// What cudaMallocPitch pads rows to on an H100 (cudaDeviceProp::textureAlignment).
constexpr std::size_t pitch_alignment = 512;
// The largest pitch 2D copies accept (cudaDeviceProp::memPitch).
constexpr std::size_t max_pitch = 2147483647;
// Page-locked and managed allocations start on a page, as the driver's do.
constexpr std::size_t page = 4096;

struct host_ranges {
  std::mutex mutex;
  std::map<std::uintptr_t, host_memory_range> by_begin;
  // The range holding address, or null (call with the mutex held).
  const host_memory_range* find(std::uintptr_t address) {
    auto it = by_begin.upper_bound(address);
    if (it == by_begin.begin()) return nullptr;
    --it;
    return address < it->first + it->second.bytes || address == it->first ? &it->second : nullptr;
  }
  bool overlaps(std::uintptr_t begin, std::size_t bytes) {
    auto it = by_begin.lower_bound(begin);
    if (it != by_begin.end() && it->first < begin + bytes) return true;
    return it != by_begin.begin() && std::prev(it)->first + std::prev(it)->second.bytes > begin;
  }
};
host_ranges& hosts() {
  static host_ranges r;
  return r;
}

const char* check_name(host_memory_kind kind) {
  switch (kind) {
    case host_memory_kind::pinned:
      return "cudaMallocHost'd";
    case host_memory_kind::registered:
      return "cudaHostRegister'd";
    case host_memory_kind::managed:
      return "cudaMallocManaged'd";
  }
  return "?";
}

cudaError_t allocate_host(void** ptr, std::size_t bytes, host_memory_kind kind, unsigned flags) {
  if (sticky_error()) return broken_context();
  if (kind == host_memory_kind::managed && bytes > device_memory_bytes - allocated_bytes()) return record(cudaErrorMemoryAllocation);
  void* p = std::aligned_alloc(page, (bytes + page - 1) / page * page + (bytes == 0 ? page : 0));
  if (!p) return record(cudaErrorMemoryAllocation);
  {
    std::lock_guard lock(hosts().mutex);
    hosts().by_begin[reinterpret_cast<std::uintptr_t>(p)] = {p, bytes, kind, flags};
  }
  if (kind == host_memory_kind::managed) count_allocated(static_cast<std::ptrdiff_t>(bytes));
  if (bytes) check::add_host_memory(p, bytes, check_name(kind));
  *ptr = p;
  return cudaSuccess;
}

// Forgets the range starting at p, of the given kind; false if there is none.
bool forget_host(void* p, host_memory_kind kind, host_memory_range& was) {
  std::lock_guard lock(hosts().mutex);
  auto it = hosts().by_begin.find(reinterpret_cast<std::uintptr_t>(p));
  if (it == hosts().by_begin.end() || it->second.kind != kind) return false;
  was = it->second;
  hosts().by_begin.erase(it);
  if (was.bytes) check::remove_host_memory(p);
  return true;
}

bool valid_kind(cudaMemcpyKind kind) { return kind >= cudaMemcpyHostToHost && kind <= cudaMemcpyDefault; }

// The 2D copy's checks: CUDA's errors for pitches, then whether every row stays inside its allocation.
cudaError_t copy_rows(const char* call, void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                      std::size_t height, cudaMemcpyKind kind, const void* caller) {
  if (!valid_kind(kind)) return record(cudaErrorInvalidMemcpyDirection);
  if (width > dst_pitch || width > src_pitch || dst_pitch > max_pitch || src_pitch > max_pitch) return record(cudaErrorInvalidPitchValue);
  if (width == 0 || height == 0) return sticky_error() ? broken_context() : cudaSuccess;
  if (!dst || !src) return record(cudaErrorInvalidValue);
  if (sticky_error()) return broken_context();
  const std::size_t dst_span = (height - 1) * dst_pitch + width, src_span = (height - 1) * src_pitch + width;
  if (std::string why; !fits(dst, dst_span, "destination", why) || !fits(src, src_span, "source", why))
    return refuse(call, cudaErrorInvalidValue,
                  why + " (" + std::to_string(height) + " rows of " + std::to_string(width) + " bytes); nothing was copied", caller);
  for (std::size_t row = 0; row < height; ++row) {
    auto* d = static_cast<unsigned char*>(dst) + row * dst_pitch;
    const auto* s = static_cast<const unsigned char*>(src) + row * src_pitch;
    std::memmove(d, s, width);
    if (kind == cudaMemcpyHostToDevice)
      check::mark_written(d, width);
    else if (kind != cudaMemcpyDeviceToHost)
      check::copy_written(d, s, width);
  }
  return cudaSuccess;
}

cudaError_t set_rows(const char* call, void* ptr, std::size_t pitch, int value, std::size_t width, std::size_t height, const void* caller) {
  if (width > pitch || pitch > max_pitch) return record(cudaErrorInvalidPitchValue);
  if (width == 0 || height == 0) return sticky_error() ? broken_context() : cudaSuccess;
  if (!ptr) return record(cudaErrorInvalidValue);
  if (sticky_error()) return broken_context();
  if (std::string why; !fits(ptr, (height - 1) * pitch + width, "destination", why))
    return refuse(call, cudaErrorInvalidValue, why + "; nothing was set", caller);
  for (std::size_t row = 0; row < height; ++row) {
    auto* d = static_cast<unsigned char*>(ptr) + row * pitch;
    std::memset(d, value, width);
    check::mark_written(d, width);
  }
  return cudaSuccess;
}

bool valid_location(int device) { return valid_device(device) || device == cudaCpuDeviceId; }
bool valid_location(cudaMemLocation location) {
  return (location.type == cudaMemLocationTypeDevice && location.id == 0) || location.type == cudaMemLocationTypeHost ||
         location.type == cudaMemLocationTypeHostNuma || location.type == cudaMemLocationTypeHostNumaCurrent;
}

}  // namespace

bool find_host_memory(const void* p, host_memory_range& found) {
  std::lock_guard lock(hosts().mutex);
  const host_memory_range* r = hosts().find(reinterpret_cast<std::uintptr_t>(p));
  if (!r) return false;
  found = *r;
  return true;
}

bool free_managed(void* p) {
  host_memory_range was;
  if (!forget_host(p, host_memory_kind::managed, was)) return false;
  count_allocated(-static_cast<std::ptrdiff_t>(was.bytes));
  std::free(p);
  return true;
}

cudaError_t copy_to_symbol(void* symbol, std::size_t symbol_bytes, const void* src, std::size_t bytes, std::size_t offset, cudaMemcpyKind kind,
                           cudaStream_t stream) {
  if (!symbol) return record(cudaErrorInvalidSymbol);
  if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault) return record(cudaErrorInvalidMemcpyDirection);
  if (!valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  if (offset > symbol_bytes || bytes > symbol_bytes - offset) return record(cudaErrorInvalidValue);
  return cudaMemcpy(static_cast<unsigned char*>(symbol) + offset, src, bytes, kind);
}

cudaError_t copy_from_symbol(void* dst, const void* symbol, std::size_t symbol_bytes, std::size_t bytes, std::size_t offset, cudaMemcpyKind kind,
                             cudaStream_t stream) {
  if (!symbol) return record(cudaErrorInvalidSymbol);
  if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault) return record(cudaErrorInvalidMemcpyDirection);
  if (!valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  if (offset > symbol_bytes || bytes > symbol_bytes - offset) return record(cudaErrorInvalidValue);
  return cudaMemcpy(dst, static_cast<const unsigned char*>(symbol) + offset, bytes, kind);
}

}  // namespace lockstep::emu

using lockstep::emu::host_memory_kind;
using lockstep::emu::record;
using lockstep::emu::valid_stream;

cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t stream) {
  if (!valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  return cudaMemcpy(dst, src, bytes, kind);
}

cudaError_t cudaMemsetAsync(void* ptr, int value, std::size_t bytes, cudaStream_t stream) {
  if (!valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  return cudaMemset(ptr, value, bytes);
}

cudaError_t cudaMemcpy2D(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width, std::size_t height,
                         cudaMemcpyKind kind) {
  return lockstep::emu::copy_rows("cudaMemcpy2D", dst, dst_pitch, src, src_pitch, width, height, kind, __builtin_return_address(0));
}

cudaError_t cudaMemcpy2DAsync(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width, std::size_t height,
                              cudaMemcpyKind kind, cudaStream_t stream) {
  if (!valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  return lockstep::emu::copy_rows("cudaMemcpy2DAsync", dst, dst_pitch, src, src_pitch, width, height, kind, __builtin_return_address(0));
}

cudaError_t cudaMemset2D(void* ptr, std::size_t pitch, int value, std::size_t width, std::size_t height) {
  return lockstep::emu::set_rows("cudaMemset2D", ptr, pitch, value, width, height, __builtin_return_address(0));
}

cudaError_t cudaMemset2DAsync(void* ptr, std::size_t pitch, int value, std::size_t width, std::size_t height, cudaStream_t stream) {
  if (!valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  return lockstep::emu::set_rows("cudaMemset2DAsync", ptr, pitch, value, width, height, __builtin_return_address(0));
}

cudaError_t cudaMallocPitch(void** ptr, std::size_t* pitch, std::size_t width, std::size_t height) {
  if (!ptr || !pitch) return record(cudaErrorInvalidValue);
  const std::size_t padded = (width + lockstep::emu::pitch_alignment - 1) / lockstep::emu::pitch_alignment * lockstep::emu::pitch_alignment;
  if (padded > lockstep::emu::max_pitch) return record(cudaErrorInvalidValue);
  if (height && padded > SIZE_MAX / height) return record(cudaErrorMemoryAllocation);
  if (cudaError_t e = cudaMalloc(ptr, padded * height)) return e;
  *pitch = padded;
  return cudaSuccess;
}

cudaError_t cudaMallocAsync(void** ptr, std::size_t bytes, cudaStream_t stream) {
  cudaMemPool_t pool = nullptr;
  cudaDeviceGetMemPool(&pool, 0);  // the device's current pool: it may be one shared with other processes
  return cudaMallocFromPoolAsync(ptr, bytes, pool, stream);
}

cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream) {
  if (!valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  return cudaFree(ptr);
}

cudaError_t cudaMemGetInfo(std::size_t* free, std::size_t* total) {
  if (!free || !total) return record(cudaErrorInvalidValue);
  *total = lockstep::emu::device_memory_bytes;
  *free = lockstep::emu::device_memory_bytes - lockstep::emu::allocated_bytes();
  return cudaSuccess;
}

cudaError_t cudaHostAlloc(void** ptr, std::size_t bytes, unsigned int flags) {
  constexpr unsigned known = cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined;
  if (!ptr || (flags & ~known)) return record(cudaErrorInvalidValue);
  return lockstep::emu::allocate_host(ptr, bytes, host_memory_kind::pinned, flags);
}
cudaError_t cudaMallocHost(void** ptr, std::size_t bytes) { return cudaHostAlloc(ptr, bytes, cudaHostAllocDefault); }

cudaError_t cudaFreeHost(void* ptr) {
  if (!ptr) return cudaSuccess;
  lockstep::emu::host_memory_range was;
  if (!lockstep::emu::forget_host(ptr, host_memory_kind::pinned, was))
    return lockstep::emu::refuse(
        "cudaFreeHost", cudaErrorInvalidValue,
        "cannot free " + lockstep::emu::hex_text(reinterpret_cast<std::uintptr_t>(ptr)) + ": cudaMallocHost and cudaHostAlloc did not give it",
        __builtin_return_address(0));
  std::free(ptr);
  return cudaSuccess;
}

cudaError_t cudaHostRegister(void* ptr, std::size_t bytes, unsigned int flags) {
  constexpr unsigned known = cudaHostRegisterPortable | cudaHostRegisterMapped | cudaHostRegisterIoMemory | cudaHostRegisterReadOnly;
  if (!ptr || bytes == 0 || (flags & ~known)) return record(cudaErrorInvalidValue);
  if (flags & cudaHostRegisterIoMemory) return record(cudaErrorNotSupported);  // no device I/O space to map
  auto& r = lockstep::emu::hosts();
  {
    std::lock_guard lock(r.mutex);
    if (r.overlaps(reinterpret_cast<std::uintptr_t>(ptr), bytes)) return record(cudaErrorHostMemoryAlreadyRegistered);
    r.by_begin[reinterpret_cast<std::uintptr_t>(ptr)] = {ptr, bytes, host_memory_kind::registered, flags};
  }
  lockstep::emu::check::add_host_memory(ptr, bytes, lockstep::emu::check_name(host_memory_kind::registered));
  return cudaSuccess;
}

cudaError_t cudaHostUnregister(void* ptr) {
  lockstep::emu::host_memory_range was;
  if (!ptr || !lockstep::emu::forget_host(ptr, host_memory_kind::registered, was)) return record(cudaErrorHostMemoryNotRegistered);
  return cudaSuccess;
}

cudaError_t cudaHostGetDevicePointer(void** device_ptr, void* host_ptr, unsigned int flags) {
  if (!device_ptr || flags != 0) return record(cudaErrorInvalidValue);
  lockstep::emu::host_memory_range r;
  if (!lockstep::emu::find_host_memory(host_ptr, r) || r.kind == host_memory_kind::managed) return record(cudaErrorInvalidValue);
  *device_ptr = host_ptr;  // one address space: the device sees the host's address
  return cudaSuccess;
}

cudaError_t cudaHostGetFlags(unsigned int* flags, void* host_ptr) {
  if (!flags) return record(cudaErrorInvalidValue);
  lockstep::emu::host_memory_range r;
  if (!lockstep::emu::find_host_memory(host_ptr, r) || r.kind == host_memory_kind::managed) return record(cudaErrorInvalidValue);
  // Unified addressing maps every page-locked range, as CUDA then reports.
  *flags = r.flags | cudaHostAllocMapped;
  return cudaSuccess;
}

cudaError_t cudaMallocManaged(void** ptr, std::size_t bytes, unsigned int flags) {
  if (!ptr || bytes == 0 || (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost)) return record(cudaErrorInvalidValue);
  return lockstep::emu::allocate_host(ptr, bytes, host_memory_kind::managed, flags);
}

cudaError_t cudaMemPrefetchAsync(const void* ptr, std::size_t bytes, int device, cudaStream_t stream) {
  if (!ptr || bytes == 0) return record(cudaErrorInvalidValue);
  if (!lockstep::emu::valid_location(device)) return record(cudaErrorInvalidDevice);
  if (!valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  return cudaSuccess;
}

cudaError_t cudaMemPrefetchAsync(const void* ptr, std::size_t bytes, cudaMemLocation location, unsigned int flags, cudaStream_t stream) {
  if (!ptr || bytes == 0 || flags != 0) return record(cudaErrorInvalidValue);
  if (!lockstep::emu::valid_location(location)) return record(cudaErrorInvalidDevice);
  if (!valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  return cudaSuccess;
}

cudaError_t cudaMemAdvise(const void* ptr, std::size_t bytes, cudaMemoryAdvise advice, int device) {
  if (!ptr || bytes == 0 || advice < cudaMemAdviseSetReadMostly || advice > cudaMemAdviseUnsetAccessedBy) return record(cudaErrorInvalidValue);
  if (!lockstep::emu::valid_location(device)) return record(cudaErrorInvalidDevice);
  return cudaSuccess;
}

cudaError_t cudaMemAdvise(const void* ptr, std::size_t bytes, cudaMemoryAdvise advice, cudaMemLocation location) {
  if (!ptr || bytes == 0 || advice < cudaMemAdviseSetReadMostly || advice > cudaMemAdviseUnsetAccessedBy) return record(cudaErrorInvalidValue);
  if (!lockstep::emu::valid_location(location)) return record(cudaErrorInvalidDevice);
  return cudaSuccess;
}

cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, void* ptr, std::size_t bytes, unsigned int flags) {
  if (!ptr || (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost && flags != cudaMemAttachSingle)) return record(cudaErrorInvalidValue);
  if (!valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  // A length, where given, must be the whole managed allocation, as CUDA requires.
  lockstep::emu::host_memory_range r;
  if (bytes && lockstep::emu::find_host_memory(ptr, r) && (r.kind != host_memory_kind::managed || r.begin != ptr || r.bytes != bytes))
    return record(cudaErrorInvalidValue);
  return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr) {
  if (!attributes) return record(cudaErrorInvalidValue);
  cudaPointerAttributes a{};
  void* p = const_cast<void*>(ptr);
  lockstep::emu::host_memory_range r;
  if (ptr && lockstep::emu::find_host_memory(ptr, r)) {
    a.type = r.kind == host_memory_kind::managed ? cudaMemoryTypeManaged : cudaMemoryTypeHost;
    a.device = 0;
    a.devicePointer = p;
    a.hostPointer = p;
  } else if (const int device = ptr ? lockstep::emu::check::allocation_device(ptr) : -1; device >= 0) {
    a.type = cudaMemoryTypeDevice;
    a.device = device;
    a.devicePointer = p;
    a.hostPointer = nullptr;
  } else {
    a.type = cudaMemoryTypeUnregistered;
    a.device = cudaInvalidDeviceId;
    a.devicePointer = nullptr;
    a.hostPointer = p;
  }
  *attributes = a;
  return cudaSuccess;
}

cudaError_t cudaMemcpyPeer(void* dst, int dst_device, const void* src, int src_device, std::size_t bytes) {
  if (!lockstep::emu::valid_device(dst_device) || !lockstep::emu::valid_device(src_device)) return record(cudaErrorInvalidDevice);
  return cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice);
}

cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device, std::size_t bytes, cudaStream_t stream) {
  if (!valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  return cudaMemcpyPeer(dst, dst_device, src, src_device, bytes);
}

cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, std::size_t bytes, std::size_t offset, cudaMemcpyKind kind) {
  return lockstep::emu::copy_to_symbol(const_cast<void*>(symbol), SIZE_MAX, src, bytes, offset, kind, nullptr);
}
cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, std::size_t bytes, std::size_t offset, cudaMemcpyKind kind) {
  return lockstep::emu::copy_from_symbol(dst, symbol, SIZE_MAX, bytes, offset, kind, nullptr);
}
cudaError_t cudaMemcpyToSymbolAsync(const void* symbol, const void* src, std::size_t bytes, std::size_t offset, cudaMemcpyKind kind,
                                    cudaStream_t stream) {
  return lockstep::emu::copy_to_symbol(const_cast<void*>(symbol), SIZE_MAX, src, bytes, offset, kind, stream);
}
cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, std::size_t bytes, std::size_t offset, cudaMemcpyKind kind,
                                      cudaStream_t stream) {
  return lockstep::emu::copy_from_symbol(dst, symbol, SIZE_MAX, bytes, offset, kind, stream);
}
