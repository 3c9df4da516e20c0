// The rest of CUDA's memory calls on the emulator, where all memory is the
// host's: pitched and 2D copies, asynchronous copies (done when issued, see
// runtime_streams.h), page-locked and managed host memory, pointer
// attributes, peer copies and the copies to and from __device__ and
// __constant__ variables (ordinary globals here). Page-locked, registered and
// managed memory is registered with check mode, so checked kernels may use it.
#pragma once
#include <cstddef>

#include "lockstep/emu/runtime_streams.h"
#include "lockstep/emu/runtime_types.h"

#define cudaHostAllocDefault 0x00
#define cudaHostAllocPortable 0x01
#define cudaHostAllocMapped 0x02
#define cudaHostAllocWriteCombined 0x04
#define cudaHostRegisterDefault 0x00
#define cudaHostRegisterPortable 0x01
#define cudaHostRegisterMapped 0x02
#define cudaHostRegisterIoMemory 0x04
#define cudaHostRegisterReadOnly 0x08
#define cudaMemAttachGlobal 0x01
#define cudaMemAttachHost 0x02
#define cudaMemAttachSingle 0x04

enum cudaMemoryType {
  cudaMemoryTypeUnregistered = 0,
  cudaMemoryTypeHost = 1,
  cudaMemoryTypeDevice = 2,
  cudaMemoryTypeManaged = 3,
};

struct cudaPointerAttributes {
  cudaMemoryType type;
  int device;
  void* devicePointer;
  void* hostPointer;
  long reserved[8];
};

enum cudaMemoryAdvise {
  cudaMemAdviseSetReadMostly = 1,
  cudaMemAdviseUnsetReadMostly = 2,
  cudaMemAdviseSetPreferredLocation = 3,
  cudaMemAdviseUnsetPreferredLocation = 4,
  cudaMemAdviseSetAccessedBy = 5,
  cudaMemAdviseUnsetAccessedBy = 6,
};

enum cudaMemLocationType {
  cudaMemLocationTypeInvalid = 0,
  cudaMemLocationTypeNone = 0,
  cudaMemLocationTypeDevice = 1,
  cudaMemLocationTypeHost = 2,
  cudaMemLocationTypeHostNuma = 3,
  cudaMemLocationTypeHostNumaCurrent = 4,
};

struct cudaMemLocation {
  cudaMemLocationType type;
  int id;
};

cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t stream = nullptr);
cudaError_t cudaMemsetAsync(void* ptr, int value, std::size_t bytes, cudaStream_t stream = nullptr);
// Rows of `width` bytes, `height` of them, `pitch` bytes apart.
cudaError_t cudaMemcpy2D(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width, std::size_t height,
                         cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DAsync(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width, std::size_t height,
                              cudaMemcpyKind kind, cudaStream_t stream = nullptr);
cudaError_t cudaMemset2D(void* ptr, std::size_t pitch, int value, std::size_t width, std::size_t height);
cudaError_t cudaMemset2DAsync(void* ptr, std::size_t pitch, int value, std::size_t width, std::size_t height, cudaStream_t stream = nullptr);
// Rows padded to a multiple of 512 bytes, as an H100 pads them.
cudaError_t cudaMallocPitch(void** ptr, std::size_t* pitch, std::size_t width, std::size_t height);
cudaError_t cudaMallocAsync(void** ptr, std::size_t bytes, cudaStream_t stream);
cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream);
// Free: 80 GiB less what the program's cudaMalloc family holds; total: 80 GiB.
cudaError_t cudaMemGetInfo(std::size_t* free, std::size_t* total);

cudaError_t cudaMallocHost(void** ptr, std::size_t bytes);
cudaError_t cudaHostAlloc(void** ptr, std::size_t bytes, unsigned int flags);
cudaError_t cudaFreeHost(void* ptr);
cudaError_t cudaHostRegister(void* ptr, std::size_t bytes, unsigned int flags);
cudaError_t cudaHostUnregister(void* ptr);
cudaError_t cudaHostGetDevicePointer(void** device_ptr, void* host_ptr, unsigned int flags);
cudaError_t cudaHostGetFlags(unsigned int* flags, void* host_ptr);
cudaError_t cudaMallocManaged(void** ptr, std::size_t bytes, unsigned int flags = cudaMemAttachGlobal);
// Accepted (all memory is where both sides can read it); the device must be 0 or cudaCpuDeviceId.
cudaError_t cudaMemPrefetchAsync(const void* ptr, std::size_t bytes, int device, cudaStream_t stream = nullptr);  // CUDA 12
cudaError_t cudaMemPrefetchAsync(const void* ptr, std::size_t bytes, cudaMemLocation location, unsigned int flags,
                                 cudaStream_t stream = nullptr);                                                   // CUDA 13
cudaError_t cudaMemAdvise(const void* ptr, std::size_t bytes, cudaMemoryAdvise advice, int device);                // CUDA 12
cudaError_t cudaMemAdvise(const void* ptr, std::size_t bytes, cudaMemoryAdvise advice, cudaMemLocation location);  // CUDA 13
// Accepted: every stream sees all managed memory at once here, whatever it is attached to.
cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, void* ptr, std::size_t bytes = 0, unsigned int flags = cudaMemAttachSingle);
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr);
cudaError_t cudaMemcpyPeer(void* dst, int dst_device, const void* src, int src_device, std::size_t bytes);
cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device, std::size_t bytes, cudaStream_t stream = nullptr);

template <class T>
inline cudaError_t cudaMallocPitch(T** ptr, std::size_t* pitch, std::size_t width, std::size_t height) {
  return cudaMallocPitch((void**)(void*)ptr, pitch, width, height);
}
template <class T>
inline cudaError_t cudaMallocAsync(T** ptr, std::size_t bytes, cudaStream_t stream) {
  return cudaMallocAsync((void**)(void*)ptr, bytes, stream);
}
inline cudaError_t cudaMallocHost(void** ptr, std::size_t bytes, unsigned int flags) { return cudaHostAlloc(ptr, bytes, flags); }
template <class T>
inline cudaError_t cudaMallocHost(T** ptr, std::size_t bytes, unsigned int flags = 0) {
  return cudaHostAlloc((void**)(void*)ptr, bytes, flags);
}
template <class T>
inline cudaError_t cudaHostAlloc(T** ptr, std::size_t bytes, unsigned int flags) {
  return cudaHostAlloc((void**)(void*)ptr, bytes, flags);
}
template <class T>
inline cudaError_t cudaMallocManaged(T** ptr, std::size_t bytes, unsigned int flags = cudaMemAttachGlobal) {
  return cudaMallocManaged((void**)(void*)ptr, bytes, flags);
}
template <class T>
inline cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, T* ptr, std::size_t bytes = 0, unsigned int flags = cudaMemAttachSingle) {
  return cudaStreamAttachMemAsync(stream, static_cast<void*>(ptr), bytes, flags);
}
template <class T>
inline cudaError_t cudaHostGetDevicePointer(T** device_ptr, void* host_ptr, unsigned int flags) {
  return cudaHostGetDevicePointer(reinterpret_cast<void**>(device_ptr), host_ptr, flags);
}

// Symbols: a __device__ or __constant__ variable is an ordinary global on the
// emulator, so the templates know its address and size; bytes past its end
// are refused with cudaErrorInvalidValue, as CUDA refuses them.
namespace lockstep::emu {
// `symbol_bytes` is the variable's size, or SIZE_MAX when unknown (the C form, given only an address).
cudaError_t copy_to_symbol(void* symbol, std::size_t symbol_bytes, const void* src, std::size_t bytes, std::size_t offset, cudaMemcpyKind kind,
                           cudaStream_t stream);
cudaError_t copy_from_symbol(void* dst, const void* symbol, std::size_t symbol_bytes, std::size_t bytes, std::size_t offset, cudaMemcpyKind kind,
                             cudaStream_t stream);
}  // namespace lockstep::emu

cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, std::size_t bytes, std::size_t offset = 0,
                               cudaMemcpyKind kind = cudaMemcpyHostToDevice);
cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, std::size_t bytes, std::size_t offset = 0,
                                 cudaMemcpyKind kind = cudaMemcpyDeviceToHost);
cudaError_t cudaMemcpyToSymbolAsync(const void* symbol, const void* src, std::size_t bytes, std::size_t offset = 0,
                                    cudaMemcpyKind kind = cudaMemcpyHostToDevice, cudaStream_t stream = nullptr);
cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, std::size_t bytes, std::size_t offset = 0,
                                      cudaMemcpyKind kind = cudaMemcpyDeviceToHost, cudaStream_t stream = nullptr);

template <class T>
inline cudaError_t cudaMemcpyToSymbol(const T& symbol, const void* src, std::size_t bytes, std::size_t offset = 0,
                                      cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  return lockstep::emu::copy_to_symbol(const_cast<T*>(&symbol), sizeof(T), src, bytes, offset, kind, nullptr);
}
template <class T>
inline cudaError_t cudaMemcpyToSymbolAsync(const T& symbol, const void* src, std::size_t bytes, std::size_t offset = 0,
                                           cudaMemcpyKind kind = cudaMemcpyHostToDevice, cudaStream_t stream = nullptr) {
  return lockstep::emu::copy_to_symbol(const_cast<T*>(&symbol), sizeof(T), src, bytes, offset, kind, stream);
}
template <class T>
inline cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, std::size_t bytes, std::size_t offset = 0,
                                        cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
  return lockstep::emu::copy_from_symbol(dst, &symbol, sizeof(T), bytes, offset, kind, nullptr);
}
template <class T>
inline cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const T& symbol, std::size_t bytes, std::size_t offset = 0,
                                             cudaMemcpyKind kind = cudaMemcpyDeviceToHost, cudaStream_t stream = nullptr) {
  return lockstep::emu::copy_from_symbol(dst, &symbol, sizeof(T), bytes, offset, kind, stream);
}
template <class T>
inline cudaError_t cudaGetSymbolAddress(void** address, const T& symbol) {
  if (!address) return cudaErrorInvalidValue;
  *address = const_cast<T*>(&symbol);
  return cudaSuccess;
}
template <class T>
inline cudaError_t cudaGetSymbolSize(std::size_t* bytes, const T& symbol) {
  (void)symbol;
  if (!bytes) return cudaErrorInvalidValue;
  *bytes = sizeof(T);
  return cudaSuccess;
}
