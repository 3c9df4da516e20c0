// Memory and events shared between processes (CUDA IPC) on the emulator:
// cudaIpcGetMemHandle gives a handle another process of the same user opens
// with cudaIpcOpenMemHandle to reach the same bytes, while the exporter holds
// the memory; memory pools created with cudaMemHandleTypePosixFileDescriptor
// export a descriptor (cudaMemPoolExportToShareableHandle) that another
// process imports, then its allocations one by one (cudaMemPoolExportPointer).
// Events: work is done when issued on the emulator, so an event opened from
// another process has nothing to wait for; its handle is checked and opened.
#pragma once
#include "lockstep/emu/runtime_pools.h"
#include "lockstep/emu/runtime_streams.h"

#define CUDA_IPC_HANDLE_SIZE 64
struct cudaIpcMemHandle_st {
  char reserved[CUDA_IPC_HANDLE_SIZE];
};
struct cudaIpcEventHandle_st {
  char reserved[CUDA_IPC_HANDLE_SIZE];
};
using cudaIpcMemHandle_t = cudaIpcMemHandle_st;
using cudaIpcEventHandle_t = cudaIpcEventHandle_st;
#define cudaIpcMemLazyEnablePeerAccess 0x01

struct cudaMemPoolPtrExportData {
  unsigned char reserved[64];
};

cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t* handle, void* ptr);
cudaError_t cudaIpcOpenMemHandle(void** ptr, cudaIpcMemHandle_t handle, unsigned int flags);
cudaError_t cudaIpcCloseMemHandle(void* ptr);
cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t* handle, cudaEvent_t event);
cudaError_t cudaIpcOpenEventHandle(cudaEvent_t* event, cudaIpcEventHandle_t handle);

// `handle` points to an int (the descriptor) for cudaMemHandleTypePosixFileDescriptor, the only type provided.
cudaError_t cudaMemPoolExportToShareableHandle(void* handle, cudaMemPool_t pool, cudaMemAllocationHandleType type, unsigned int flags);
// `handle` is the descriptor itself, cast to a pointer, as in CUDA.
cudaError_t cudaMemPoolImportFromShareableHandle(cudaMemPool_t* pool, void* handle, cudaMemAllocationHandleType type, unsigned int flags);
cudaError_t cudaMemPoolExportPointer(cudaMemPoolPtrExportData* data, void* ptr);
cudaError_t cudaMemPoolImportPointer(void** ptr, cudaMemPool_t pool, cudaMemPoolPtrExportData* data);

template <class T>
inline cudaError_t cudaIpcOpenMemHandle(T** ptr, cudaIpcMemHandle_t handle, unsigned int flags) {
  return cudaIpcOpenMemHandle((void**)(void*)ptr, handle, flags);
}
