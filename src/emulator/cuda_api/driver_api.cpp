// The driver API's calls that are the runtime API's under other names:
// devices, contexts, memory, streams and events (modules and launches are in
// driver_modules.cpp, virtual memory in driver_virtual_memory.cpp).
#include <cstring>
#include <vector>

#include "check/device_memory.h"
#include "driver_calls.h"
#include "lockstep/emu/driver_api.h"
#include "runtime_calls.h"

namespace lockstep::emu {
namespace {

// Each thread's stack of current contexts (all of them the_context()).
thread_local std::vector<CUcontext> current_contexts;

// A runtime allocation's answer as the driver's: the pointer as a CUdeviceptr.
// `allocated` is read here, after the call that fills it (arguments have no order).
CUresult device_pointer(CUdeviceptr* out, void* const& allocated, cudaError_t e) {
  *out = reinterpret_cast<CUdeviceptr>(allocated);
  return as_result(e);
}

}  // namespace

CUcontext the_context() {
  static CUctx_st* const context = reinterpret_cast<CUctx_st*>(new char{});
  return context;
}

CUresult check_device(CUdevice device) { return valid_device(device) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE; }

}  // namespace lockstep::emu

using lockstep::emu::as_result;
using lockstep::emu::check_device;
using lockstep::emu::current_contexts;
using lockstep::emu::device_pointer;
using lockstep::emu::the_context;

using lockstep::emu::pointer;

CUresult cuInit(unsigned int flags) { return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
CUresult cuDriverGetVersion(int* version) { return as_result(cudaDriverGetVersion(version)); }

CUresult cuGetErrorName(CUresult error, const char** name) {
  if (!name) return CUDA_ERROR_INVALID_VALUE;
  switch (error) {
#define LOCKSTEP_CU_RESULT_NAME(result, value) \
  case result:                                 \
    *name = #result;                           \
    return CUDA_SUCCESS;
    LOCKSTEP_CU_RESULTS(LOCKSTEP_CU_RESULT_NAME)
#undef LOCKSTEP_CU_RESULT_NAME
  }
  *name = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char** text) {
  const char* name = nullptr;
  if (!text || cuGetErrorName(error, &name) != CUDA_SUCCESS) {
    if (text) *text = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
  // The runtime's description where the numbers agree, which they do for every error both APIs have.
  const char* runtime_text = cudaGetErrorString(static_cast<cudaError_t>(error));
  *text = std::strcmp(runtime_text, "unrecognized error code") == 0 ? name : runtime_text;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  if (check_device(ordinal) != CUDA_SUCCESS) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetCount(int* count) { return as_result(cudaGetDeviceCount(count)); }
CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
  if (!name || length <= 0) return CUDA_ERROR_INVALID_VALUE;
  cudaDeviceProp properties{};
  if (const cudaError_t e = cudaGetDeviceProperties(&properties, device); e != cudaSuccess) return as_result(e);
  std::strncpy(name, properties.name, static_cast<std::size_t>(length) - 1);
  name[length - 1] = '\0';
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice device) {
  // The driver's own attributes, which the runtime has no names for.
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:  // cuMemCreate, cuMemMap: driver_virtual_memory.cpp
    case CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER:
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:  // no memory shared between processes
    case CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK:
    case CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH:
    case CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED:
      if (!value) return CUDA_ERROR_INVALID_VALUE;
      if (const CUresult r = check_device(device); r != CUDA_SUCCESS) return r;
      *value = attribute == CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED;
      return CUDA_SUCCESS;
    default:
      break;
  }
  return as_result(cudaDeviceGetAttribute(value, static_cast<cudaDeviceAttr>(attribute), device));
}
CUresult cuDeviceTotalMem(std::size_t* bytes, CUdevice device) {
  if (!bytes) return CUDA_ERROR_INVALID_VALUE;
  cudaDeviceProp properties{};
  if (const cudaError_t e = cudaGetDeviceProperties(&properties, device); e != cudaSuccess) return as_result(e);
  *bytes = properties.totalGlobalMem;
  return CUDA_SUCCESS;
}
CUresult cuDeviceComputeCapability(int* major, int* minor, CUdevice device) {
  if (!major || !minor) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = cuDeviceGetAttribute(major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device); r != CUDA_SUCCESS) return r;
  return cuDeviceGetAttribute(minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
}
CUresult cuDeviceGetPCIBusId(char* bus_id, int length, CUdevice device) { return as_result(cudaDeviceGetPCIBusId(bus_id, length, device)); }
CUresult cuDeviceCanAccessPeer(int* can_access, CUdevice device, CUdevice peer) {
  return as_result(cudaDeviceCanAccessPeer(can_access, device, peer));
}

CUresult cuCtxCreate(CUcontext* context, CUctxCreateParams*, unsigned int flags, CUdevice device) { return cuCtxCreate(context, flags, device); }
CUresult cuCtxCreate(CUcontext* context, unsigned int, CUdevice device) {
  if (!context) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = check_device(device); r != CUDA_SUCCESS) return r;
  *context = the_context();
  current_contexts.push_back(*context);
  return CUDA_SUCCESS;
}
CUresult cuCtxDestroy(CUcontext context) {
  if (context != the_context()) return CUDA_ERROR_INVALID_CONTEXT;
  if (!current_contexts.empty()) current_contexts.pop_back();
  return CUDA_SUCCESS;
}
CUresult cuCtxPushCurrent(CUcontext context) {
  if (context != the_context()) return CUDA_ERROR_INVALID_CONTEXT;
  current_contexts.push_back(context);
  return CUDA_SUCCESS;
}
CUresult cuCtxPopCurrent(CUcontext* context) {
  if (current_contexts.empty()) return CUDA_ERROR_INVALID_CONTEXT;
  if (context) *context = current_contexts.back();
  current_contexts.pop_back();
  return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(CUcontext context) {
  if (context && context != the_context()) return CUDA_ERROR_INVALID_CONTEXT;
  if (!current_contexts.empty()) current_contexts.pop_back();
  if (context) current_contexts.push_back(context);
  return CUDA_SUCCESS;
}
CUresult cuCtxGetCurrent(CUcontext* context) {
  if (!context) return CUDA_ERROR_INVALID_VALUE;
  *context = current_contexts.empty() ? nullptr : current_contexts.back();
  return CUDA_SUCCESS;
}
CUresult cuCtxGetDevice(CUdevice* device) {
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  *device = 0;
  return CUDA_SUCCESS;
}
CUresult cuCtxSynchronize() { return as_result(cudaDeviceSynchronize()); }
CUresult cuCtxGetApiVersion(CUcontext, unsigned int* version) {
  if (!version) return CUDA_ERROR_INVALID_VALUE;
  *version = 3020;  // what CUDA's drivers have answered since the v2 API
  return CUDA_SUCCESS;
}
CUresult cuCtxSetLimit(CUlimit limit, std::size_t value) { return as_result(cudaDeviceSetLimit(static_cast<cudaLimit>(limit), value)); }
CUresult cuCtxGetLimit(std::size_t* value, CUlimit limit) { return as_result(cudaDeviceGetLimit(value, static_cast<cudaLimit>(limit))); }
CUresult cuCtxSetCacheConfig(CUfunc_cache config) { return as_result(cudaDeviceSetCacheConfig(static_cast<cudaFuncCache>(config))); }
CUresult cuCtxEnablePeerAccess(CUcontext, unsigned int) { return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED; }
CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
  if (!context) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = check_device(device); r != CUDA_SUCCESS) return r;
  *context = the_context();
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease(CUdevice device) { return check_device(device); }
CUresult cuDevicePrimaryCtxReset(CUdevice device) { return check_device(device); }
CUresult cuDevicePrimaryCtxSetFlags(CUdevice device, unsigned int) { return check_device(device); }

CUresult cuMemAlloc(CUdeviceptr* ptr, std::size_t bytes) {
  if (!ptr) return CUDA_ERROR_INVALID_VALUE;
  void* p = nullptr;
  return device_pointer(ptr, p, cudaMalloc(&p, bytes));
}
CUresult cuMemAllocPitch(CUdeviceptr* ptr, std::size_t* pitch, std::size_t width_bytes, std::size_t height, unsigned int element_bytes) {
  if (!ptr || !(element_bytes == 4 || element_bytes == 8 || element_bytes == 16)) return CUDA_ERROR_INVALID_VALUE;
  void* p = nullptr;
  return device_pointer(ptr, p, cudaMallocPitch(&p, pitch, width_bytes, height));
}
CUresult cuMemAllocManaged(CUdeviceptr* ptr, std::size_t bytes, unsigned int flags) {
  if (!ptr) return CUDA_ERROR_INVALID_VALUE;
  void* p = nullptr;
  return device_pointer(ptr, p, cudaMallocManaged(&p, bytes, flags));
}
CUresult cuMemFree(CUdeviceptr ptr) { return as_result(cudaFree(pointer(ptr))); }
CUresult cuMemAllocHost(void** ptr, std::size_t bytes) { return as_result(cudaMallocHost(ptr, bytes)); }
CUresult cuMemHostAlloc(void** ptr, std::size_t bytes, unsigned int flags) { return as_result(cudaHostAlloc(ptr, bytes, flags)); }
CUresult cuMemFreeHost(void* ptr) { return as_result(cudaFreeHost(ptr)); }
CUresult cuMemHostGetDevicePointer(CUdeviceptr* device_ptr, void* host_ptr, unsigned int flags) {
  if (!device_ptr) return CUDA_ERROR_INVALID_VALUE;
  void* p = nullptr;
  return device_pointer(device_ptr, p, cudaHostGetDevicePointer(&p, host_ptr, flags));
}
CUresult cuMemHostRegister(void* ptr, std::size_t bytes, unsigned int flags) { return as_result(cudaHostRegister(ptr, bytes, flags)); }
CUresult cuMemHostUnregister(void* ptr) { return as_result(cudaHostUnregister(ptr)); }
CUresult cuMemGetInfo(std::size_t* free, std::size_t* total) { return as_result(cudaMemGetInfo(free, total)); }
CUresult cuMemGetAddressRange(CUdeviceptr* base, std::size_t* bytes, CUdeviceptr ptr) {
  const void* start = nullptr;
  std::size_t size = 0;
  if (!lockstep::emu::check::allocation_range(pointer(ptr), start, size)) return CUDA_ERROR_NOT_FOUND;
  if (base) *base = reinterpret_cast<CUdeviceptr>(start);
  if (bytes) *bytes = size;
  return CUDA_SUCCESS;
}
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes) {
  return as_result(cudaMemcpy(pointer(dst), pointer(src), bytes, cudaMemcpyDefault));
}
CUresult cuMemcpyHtoD(CUdeviceptr dst, const void* src, std::size_t bytes) {
  return as_result(cudaMemcpy(pointer(dst), src, bytes, cudaMemcpyHostToDevice));
}
CUresult cuMemcpyDtoH(void* dst, CUdeviceptr src, std::size_t bytes) {
  return as_result(cudaMemcpy(dst, pointer(src), bytes, cudaMemcpyDeviceToHost));
}
CUresult cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes) {
  return as_result(cudaMemcpy(pointer(dst), pointer(src), bytes, cudaMemcpyDeviceToDevice));
}
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, CUstream stream) {
  return as_result(cudaMemcpyAsync(pointer(dst), pointer(src), bytes, cudaMemcpyDefault, stream));
}
CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, std::size_t bytes, CUstream stream) {
  return as_result(cudaMemcpyAsync(pointer(dst), src, bytes, cudaMemcpyHostToDevice, stream));
}
CUresult cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, std::size_t bytes, CUstream stream) {
  return as_result(cudaMemcpyAsync(dst, pointer(src), bytes, cudaMemcpyDeviceToHost, stream));
}
CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, CUstream stream) {
  return as_result(cudaMemcpyAsync(pointer(dst), pointer(src), bytes, cudaMemcpyDeviceToDevice, stream));
}

namespace {
// cuMemsetD16/D32 fill elements wider than cudaMemset's bytes: checked as a
// memset of the whole range first (bounds, sticky error), then filled.
template <class T>
CUresult fill(CUdeviceptr dst, T value, std::size_t count, CUstream stream) {
  if (dst % sizeof(T) != 0) return CUDA_ERROR_INVALID_VALUE;
  if (const cudaError_t e = cudaMemsetAsync(pointer(dst), 0, count * sizeof(T), stream); e != cudaSuccess) return as_result(e);
  T* p = static_cast<T*>(pointer(dst));
  for (std::size_t i = 0; i < count; ++i) p[i] = value;
  return CUDA_SUCCESS;
}
}  // namespace

CUresult cuMemsetD8(CUdeviceptr dst, unsigned char value, std::size_t count) { return as_result(cudaMemset(pointer(dst), value, count)); }
CUresult cuMemsetD16(CUdeviceptr dst, unsigned short value, std::size_t count) { return fill(dst, value, count, nullptr); }
CUresult cuMemsetD32(CUdeviceptr dst, unsigned int value, std::size_t count) { return fill(dst, value, count, nullptr); }
CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, std::size_t count, CUstream stream) {
  return as_result(cudaMemsetAsync(pointer(dst), value, count, stream));
}
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int value, std::size_t count, CUstream stream) { return fill(dst, value, count, stream); }

CUresult cuStreamCreate(CUstream* stream, unsigned int flags) { return as_result(cudaStreamCreateWithFlags(stream, flags)); }
CUresult cuStreamDestroy(CUstream stream) { return as_result(cudaStreamDestroy(stream)); }
CUresult cuStreamSynchronize(CUstream stream) { return as_result(cudaStreamSynchronize(stream)); }
CUresult cuStreamQuery(CUstream stream) { return as_result(cudaStreamQuery(stream)); }
CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) { return as_result(cudaStreamWaitEvent(stream, event, flags)); }
CUresult cuStreamAddCallback(CUstream stream, CUstreamCallback callback, void* user_data, unsigned int flags) {
  if (!callback) return CUDA_ERROR_INVALID_VALUE;
  struct call {
    CUstreamCallback callback;
    void* user_data;
  };
  // The runtime's callback has the same shape but for the status's type.
  auto* forwarded = new call{callback, user_data};
  const cudaError_t e = cudaStreamAddCallback(
      stream,
      [](cudaStream_t s, cudaError_t status, void* data) {
        const call c = *static_cast<call*>(data);
        delete static_cast<call*>(data);
        c.callback(s, as_result(status), c.user_data);
      },
      forwarded, flags);
  if (e != cudaSuccess) delete forwarded;
  return as_result(e);
}
CUresult cuEventCreate(CUevent* event, unsigned int flags) { return as_result(cudaEventCreateWithFlags(event, flags)); }
CUresult cuEventDestroy(CUevent event) { return as_result(cudaEventDestroy(event)); }
CUresult cuEventRecord(CUevent event, CUstream stream) { return as_result(cudaEventRecord(event, stream)); }
CUresult cuEventQuery(CUevent event) { return as_result(cudaEventQuery(event)); }
CUresult cuEventSynchronize(CUevent event) { return as_result(cudaEventSynchronize(event)); }
CUresult cuEventElapsedTime(float* milliseconds, CUevent start, CUevent end) { return as_result(cudaEventElapsedTime(milliseconds, start, end)); }
