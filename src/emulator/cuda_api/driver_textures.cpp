// The driver API's CUDA arrays, 2D copies and texture and surface objects, as
// the runtime's (runtime_textures.cpp): the descriptors translated field by field.
#include <cstring>

#include "driver_calls.h"

namespace {

using lockstep::emu::as_result;
using lockstep::emu::pointer;

bool channel_of(CUarray_format format, unsigned channels, cudaChannelFormatDesc& desc) {
  if (channels != 1 && channels != 2 && channels != 4) return false;
  int bits = 0;
  cudaChannelFormatKind kind = cudaChannelFormatKindNone;
  switch (format) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
      bits = 8, kind = cudaChannelFormatKindUnsigned;
      break;
    case CU_AD_FORMAT_UNSIGNED_INT16:
      bits = 16, kind = cudaChannelFormatKindUnsigned;
      break;
    case CU_AD_FORMAT_UNSIGNED_INT32:
      bits = 32, kind = cudaChannelFormatKindUnsigned;
      break;
    case CU_AD_FORMAT_SIGNED_INT8:
      bits = 8, kind = cudaChannelFormatKindSigned;
      break;
    case CU_AD_FORMAT_SIGNED_INT16:
      bits = 16, kind = cudaChannelFormatKindSigned;
      break;
    case CU_AD_FORMAT_SIGNED_INT32:
      bits = 32, kind = cudaChannelFormatKindSigned;
      break;
    case CU_AD_FORMAT_HALF:
      bits = 16, kind = cudaChannelFormatKindFloat;
      break;
    case CU_AD_FORMAT_FLOAT:
      bits = 32, kind = cudaChannelFormatKindFloat;
      break;
    default:
      return false;
  }
  desc = cudaCreateChannelDesc(bits, channels > 1 ? bits : 0, channels > 2 ? bits : 0, channels > 3 ? bits : 0, kind);
  return true;
}

// Where one side of a 2D copy lies: an array (and its offset), or memory.
struct copy_side {
  CUarray array;
  const char* memory;
  std::size_t pitch;
};

bool side_of(CUmemorytype type, const void* host, CUdeviceptr device, CUarray array, std::size_t x, std::size_t y, std::size_t pitch,
             copy_side& side) {
  switch (type) {
    case CU_MEMORYTYPE_ARRAY:
      side = {array, nullptr, 0};
      return array != nullptr;
    case CU_MEMORYTYPE_HOST:
      side = {nullptr, static_cast<const char*>(host) + y * pitch + x, pitch};
      return host != nullptr;
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED:
      side = {nullptr, static_cast<const char*>(pointer(device)) + y * pitch + x, pitch};
      return device != 0;
  }
  return false;
}

CUresult copy_2d(const CUDA_MEMCPY2D* c, cudaStream_t stream) {
  if (!c) return CUDA_ERROR_INVALID_VALUE;
  copy_side from{}, to{};
  if (!side_of(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray, c->srcXInBytes, c->srcY, c->srcPitch, from) ||
      !side_of(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray, c->dstXInBytes, c->dstY, c->dstPitch, to))
    return CUDA_ERROR_INVALID_VALUE;
  const std::size_t width = c->WidthInBytes, height = c->Height;
  if (from.array && to.array)
    return as_result(cudaMemcpy2DArrayToArray(to.array, c->dstXInBytes, c->dstY, from.array, c->srcXInBytes, c->srcY, width, height));
  if (to.array)
    return as_result(cudaMemcpy2DToArrayAsync(to.array, c->dstXInBytes, c->dstY, from.memory, from.pitch, width, height, cudaMemcpyDefault, stream));
  if (from.array)
    return as_result(cudaMemcpy2DFromArrayAsync(const_cast<char*>(to.memory), to.pitch, from.array, c->srcXInBytes, c->srcY, width, height,
                                                cudaMemcpyDefault, stream));
  return as_result(cudaMemcpy2DAsync(const_cast<char*>(to.memory), to.pitch, from.memory, from.pitch, width, height, cudaMemcpyDefault, stream));
}

CUresult resource_of(const CUDA_RESOURCE_DESC* in, cudaResourceDesc& out) {
  if (!in) return CUDA_ERROR_INVALID_VALUE;
  std::memset(&out, 0, sizeof out);
  switch (in->resType) {
    case CU_RESOURCE_TYPE_ARRAY:
      out.resType = cudaResourceTypeArray;
      out.res.array.array = in->res.array.hArray;
      return CUDA_SUCCESS;
    case CU_RESOURCE_TYPE_LINEAR:
      out.resType = cudaResourceTypeLinear;
      out.res.linear.devPtr = pointer(in->res.linear.devPtr);
      out.res.linear.sizeInBytes = in->res.linear.sizeInBytes;
      return channel_of(in->res.linear.format, in->res.linear.numChannels, out.res.linear.desc) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_RESOURCE_TYPE_PITCH2D:
      out.resType = cudaResourceTypePitch2D;
      out.res.pitch2D.devPtr = pointer(in->res.pitch2D.devPtr);
      out.res.pitch2D.width = in->res.pitch2D.width;
      out.res.pitch2D.height = in->res.pitch2D.height;
      out.res.pitch2D.pitchInBytes = in->res.pitch2D.pitchInBytes;
      return channel_of(in->res.pitch2D.format, in->res.pitch2D.numChannels, out.res.pitch2D.desc) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    default:
      return CUDA_ERROR_NOT_SUPPORTED;  // mipmapped arrays, as in the runtime
  }
}

// The channel format a texture reads: integers of 8 or 16 bits become normalized floats unless read as integers.
bool reads_normalized(const cudaResourceDesc& resource, unsigned flags) {
  if (flags & CU_TRSF_READ_AS_INTEGER) return false;
  cudaChannelFormatDesc desc{};
  if (resource.resType == cudaResourceTypeArray) {
    cudaExtent extent{};
    unsigned array_flags = 0;
    if (cudaArrayGetInfo(&desc, &extent, &array_flags, resource.res.array.array) != cudaSuccess) return false;
  } else {
    desc = resource.resType == cudaResourceTypeLinear ? resource.res.linear.desc : resource.res.pitch2D.desc;
  }
  return desc.f != cudaChannelFormatKindFloat && desc.x > 0 && desc.x <= 16;
}

}  // namespace

CUresult cuArrayCreate(CUarray* array, const CUDA_ARRAY_DESCRIPTOR* descriptor) {
  if (!array || !descriptor) return CUDA_ERROR_INVALID_VALUE;
  cudaChannelFormatDesc desc{};
  if (!channel_of(descriptor->Format, descriptor->NumChannels, desc)) return CUDA_ERROR_INVALID_VALUE;
  return as_result(cudaMallocArray(array, &desc, descriptor->Width, descriptor->Height));
}

CUresult cuArrayGetDescriptor(CUDA_ARRAY_DESCRIPTOR* descriptor, CUarray array) {
  if (!descriptor) return CUDA_ERROR_INVALID_VALUE;
  cudaChannelFormatDesc desc{};
  cudaExtent extent{};
  unsigned flags = 0;
  if (const cudaError_t e = cudaArrayGetInfo(&desc, &extent, &flags, array); e != cudaSuccess) return as_result(e);
  const bool is_float = desc.f == cudaChannelFormatKindFloat, is_signed = desc.f == cudaChannelFormatKindSigned;
  descriptor->Width = extent.width;
  descriptor->Height = extent.height;
  descriptor->NumChannels = 1 + (desc.y > 0) + (desc.z > 0) + (desc.w > 0);
  descriptor->Format = is_float       ? (desc.x == 16 ? CU_AD_FORMAT_HALF : CU_AD_FORMAT_FLOAT)
                       : desc.x == 8  ? (is_signed ? CU_AD_FORMAT_SIGNED_INT8 : CU_AD_FORMAT_UNSIGNED_INT8)
                       : desc.x == 16 ? (is_signed ? CU_AD_FORMAT_SIGNED_INT16 : CU_AD_FORMAT_UNSIGNED_INT16)
                                      : (is_signed ? CU_AD_FORMAT_SIGNED_INT32 : CU_AD_FORMAT_UNSIGNED_INT32);
  return CUDA_SUCCESS;
}

CUresult cuArrayDestroy(CUarray array) { return as_result(cudaFreeArray(array)); }
CUresult cuMemcpy2D(const CUDA_MEMCPY2D* copy) { return copy_2d(copy, nullptr); }
CUresult cuMemcpy2DUnaligned(const CUDA_MEMCPY2D* copy) { return copy_2d(copy, nullptr); }
CUresult cuMemcpy2DAsync(const CUDA_MEMCPY2D* copy, CUstream stream) { return copy_2d(copy, stream); }

CUresult cuTexObjectCreate(CUtexObject* texture, const CUDA_RESOURCE_DESC* resource, const CUDA_TEXTURE_DESC* texture_desc,
                           const CUDA_RESOURCE_VIEW_DESC* view) {
  if (view) return CUDA_ERROR_NOT_SUPPORTED;  // resource views, as in the runtime
  if (!texture_desc) return CUDA_ERROR_INVALID_VALUE;
  cudaResourceDesc r{};
  if (const CUresult e = resource_of(resource, r); e != CUDA_SUCCESS) return e;
  cudaTextureDesc t{};
  for (int d = 0; d < 3; ++d) t.addressMode[d] = static_cast<cudaTextureAddressMode>(texture_desc->addressMode[d]);
  t.filterMode = static_cast<cudaTextureFilterMode>(texture_desc->filterMode);
  t.readMode = reads_normalized(r, texture_desc->flags) ? cudaReadModeNormalizedFloat : cudaReadModeElementType;
  t.normalizedCoords = (texture_desc->flags & CU_TRSF_NORMALIZED_COORDINATES) != 0;
  t.sRGB = (texture_desc->flags & CU_TRSF_SRGB) != 0;
  for (int c = 0; c < 4; ++c) t.borderColor[c] = texture_desc->borderColor[c];
  return as_result(cudaCreateTextureObject(texture, &r, &t, nullptr));
}

CUresult cuTexObjectDestroy(CUtexObject texture) { return as_result(cudaDestroyTextureObject(texture)); }

CUresult cuSurfObjectCreate(CUsurfObject* surface, const CUDA_RESOURCE_DESC* resource) {
  cudaResourceDesc r{};
  if (const CUresult e = resource_of(resource, r); e != CUDA_SUCCESS) return e;
  return as_result(cudaCreateSurfaceObject(surface, &r));
}

CUresult cuSurfObjectDestroy(CUsurfObject surface) { return as_result(cudaDestroySurfaceObject(surface)); }
