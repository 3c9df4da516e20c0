// CUDA arrays, texture objects and surface objects on the emulator, host
// side: channel descriptors, cudaMallocArray and its 3D and layered
// relatives, the copies into and out of arrays (and cudaMemcpy3D between any
// two of array, pitched host and pitched device memory), and the resource,
// texture and view descriptors. Types, fields, enumerators and numbers follow
// CUDA 13's driver_types.h, texture_types.h and surface_types.h, so programs
// that fill the structs member by member, or after a memset, compile
// unchanged. A texture or surface object is a handle to an immutable
// descriptor the runtime owns (runtime_textures.cpp); what kernels call on it
// is in textures.h.
#pragma once
#include <cstddef>

#include "lockstep/emu/runtime_streams.h"
#include "lockstep/emu/runtime_types.h"
#include "lockstep/emu/vector_types.h"

// The include guards of the CUDA headers these declarations stand for.
#define __TEXTURE_TYPES_H__
#define __SURFACE_TYPES_H__
#define __CHANNEL_DESCRIPTOR_H__
#define __DRIVER_FUNCTIONS_H__

enum cudaChannelFormatKind {
  cudaChannelFormatKindSigned = 0,
  cudaChannelFormatKindUnsigned = 1,
  cudaChannelFormatKindFloat = 2,
  cudaChannelFormatKindNone = 3,
  cudaChannelFormatKindNV12 = 4,
  cudaChannelFormatKindUnsignedNormalized8X1 = 5,
  cudaChannelFormatKindUnsignedNormalized8X2 = 6,
  cudaChannelFormatKindUnsignedNormalized8X4 = 7,
  cudaChannelFormatKindUnsignedNormalized16X1 = 8,
  cudaChannelFormatKindUnsignedNormalized16X2 = 9,
  cudaChannelFormatKindUnsignedNormalized16X4 = 10,
  cudaChannelFormatKindSignedNormalized8X1 = 11,
  cudaChannelFormatKindSignedNormalized8X2 = 12,
  cudaChannelFormatKindSignedNormalized8X4 = 13,
  cudaChannelFormatKindSignedNormalized16X1 = 14,
  cudaChannelFormatKindSignedNormalized16X2 = 15,
  cudaChannelFormatKindSignedNormalized16X4 = 16,
  // Block-compressed formats (17 to 30) and 10-10-10-2 (31) are not emulated: arrays of them are refused.
  cudaChannelFormatKindUnsignedBlockCompressed1 = 17,
  cudaChannelFormatKindUnsignedNormalized1010102 = 31,
};

// Bits per channel (x, y, z, w) and the channels' kind.
struct cudaChannelFormatDesc {
  int x;
  int y;
  int z;
  int w;
  cudaChannelFormatKind f;
};

// Arrays are the runtime's objects (runtime_textures.cpp); programs hold pointers.
struct cudaArray;
using cudaArray_t = cudaArray*;
using cudaArray_const_t = const cudaArray*;
struct cudaMipmappedArray;
using cudaMipmappedArray_t = cudaMipmappedArray*;
using cudaMipmappedArray_const_t = const cudaMipmappedArray*;

#define cudaArrayDefault 0x00
#define cudaArrayLayered 0x01
#define cudaArraySurfaceLoadStore 0x02
#define cudaArrayCubemap 0x04
#define cudaArrayTextureGather 0x08

struct cudaPitchedPtr {
  void* ptr;
  std::size_t pitch;
  std::size_t xsize;
  std::size_t ysize;
};
struct cudaExtent {
  std::size_t width;
  std::size_t height;
  std::size_t depth;
};
struct cudaPos {
  std::size_t x;
  std::size_t y;
  std::size_t z;
};
struct cudaMemcpy3DParms {
  cudaArray_t srcArray;
  cudaPos srcPos;
  cudaPitchedPtr srcPtr;
  cudaArray_t dstArray;
  cudaPos dstPos;
  cudaPitchedPtr dstPtr;
  cudaExtent extent;
  cudaMemcpyKind kind;
};

inline cudaPitchedPtr make_cudaPitchedPtr(void* d, std::size_t p, std::size_t xsz, std::size_t ysz) { return {d, p, xsz, ysz}; }
inline cudaPos make_cudaPos(std::size_t x, std::size_t y, std::size_t z) { return {x, y, z}; }
inline cudaExtent make_cudaExtent(std::size_t w, std::size_t h, std::size_t d) { return {w, h, d}; }

enum cudaResourceType {
  cudaResourceTypeArray = 0x00,
  cudaResourceTypeMipmappedArray = 0x01,
  cudaResourceTypeLinear = 0x02,
  cudaResourceTypePitch2D = 0x03,
};

enum cudaResourceViewFormat {
  cudaResViewFormatNone = 0x00,
  cudaResViewFormatUnsignedChar1 = 0x01,
  cudaResViewFormatUnsignedChar2 = 0x02,
  cudaResViewFormatUnsignedChar4 = 0x03,
  cudaResViewFormatSignedChar1 = 0x04,
  cudaResViewFormatSignedChar2 = 0x05,
  cudaResViewFormatSignedChar4 = 0x06,
  cudaResViewFormatUnsignedShort1 = 0x07,
  cudaResViewFormatUnsignedShort2 = 0x08,
  cudaResViewFormatUnsignedShort4 = 0x09,
  cudaResViewFormatSignedShort1 = 0x0a,
  cudaResViewFormatSignedShort2 = 0x0b,
  cudaResViewFormatSignedShort4 = 0x0c,
  cudaResViewFormatUnsignedInt1 = 0x0d,
  cudaResViewFormatUnsignedInt2 = 0x0e,
  cudaResViewFormatUnsignedInt4 = 0x0f,
  cudaResViewFormatSignedInt1 = 0x10,
  cudaResViewFormatSignedInt2 = 0x11,
  cudaResViewFormatSignedInt4 = 0x12,
  cudaResViewFormatHalf1 = 0x13,
  cudaResViewFormatHalf2 = 0x14,
  cudaResViewFormatHalf4 = 0x15,
  cudaResViewFormatFloat1 = 0x16,
  cudaResViewFormatFloat2 = 0x17,
  cudaResViewFormatFloat4 = 0x18,
};

struct cudaResourceDesc {
  cudaResourceType resType;
  union {
    struct {
      cudaArray_t array;
    } array;
    struct {
      cudaMipmappedArray_t mipmap;
    } mipmap;
    struct {
      void* devPtr;
      cudaChannelFormatDesc desc;
      std::size_t sizeInBytes;
    } linear;
    struct {
      void* devPtr;
      cudaChannelFormatDesc desc;
      std::size_t width;
      std::size_t height;
      std::size_t pitchInBytes;
    } pitch2D;
    struct {
      int reserved[32];
    } reserved;
  } res;
  unsigned int flags;
};

struct cudaResourceViewDesc {
  cudaResourceViewFormat format;
  std::size_t width;
  std::size_t height;
  std::size_t depth;
  unsigned int firstMipmapLevel;
  unsigned int lastMipmapLevel;
  unsigned int firstLayer;
  unsigned int lastLayer;
  unsigned int reserved[16];
};

#define cudaTextureType1D 0x01
#define cudaTextureType2D 0x02
#define cudaTextureType3D 0x03
#define cudaTextureTypeCubemap 0x0C
#define cudaTextureType1DLayered 0xF1
#define cudaTextureType2DLayered 0xF2
#define cudaTextureTypeCubemapLayered 0xFC
#define cudaSurfaceType1D 0x01
#define cudaSurfaceType2D 0x02
#define cudaSurfaceType3D 0x03
#define cudaSurfaceTypeCubemap 0x0C
#define cudaSurfaceType1DLayered 0xF1
#define cudaSurfaceType2DLayered 0xF2
#define cudaSurfaceTypeCubemapLayered 0xFC

enum cudaTextureAddressMode {
  cudaAddressModeWrap = 0,
  cudaAddressModeClamp = 1,
  cudaAddressModeMirror = 2,
  cudaAddressModeBorder = 3,
};
enum cudaTextureFilterMode {
  cudaFilterModePoint = 0,
  cudaFilterModeLinear = 1,
};
enum cudaTextureReadMode {
  cudaReadModeElementType = 0,
  cudaReadModeNormalizedFloat = 1,
};

struct cudaTextureDesc {
  cudaTextureAddressMode addressMode[3];
  cudaTextureFilterMode filterMode;
  cudaTextureReadMode readMode;
  int sRGB;
  float borderColor[4];
  int normalizedCoords;
  unsigned int maxAnisotropy;
  cudaTextureFilterMode mipmapFilterMode;
  float mipmapLevelBias;
  float minMipmapLevelClamp;
  float maxMipmapLevelClamp;
  int disableTrilinearOptimization;
  int seamlessCubemap;
};

enum cudaSurfaceBoundaryMode {
  cudaBoundaryModeZero = 0,
  cudaBoundaryModeClamp = 1,
  cudaBoundaryModeTrap = 2,
};
enum cudaSurfaceFormatMode {
  cudaFormatModeForced = 0,
  cudaFormatModeAuto = 1,
};

// Handles: the address of the runtime's immutable descriptor (0 is never one).
using cudaTextureObject_t = unsigned long long;
using cudaSurfaceObject_t = unsigned long long;

// Channel descriptors.
cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, cudaChannelFormatKind f);
cudaError_t cudaGetChannelDesc(cudaChannelFormatDesc* desc, cudaArray_const_t array);

// The descriptor of a type: CUDA's for the scalar and vector types it names
// (char is signed or unsigned as the compiler's char is); {0, 0, 0, 0, None} for others.
template <class T>
inline cudaChannelFormatDesc cudaCreateChannelDesc() {
  return cudaCreateChannelDesc(0, 0, 0, 0, cudaChannelFormatKindNone);
}
inline cudaChannelFormatDesc cudaCreateChannelDescHalf() { return cudaCreateChannelDesc(16, 0, 0, 0, cudaChannelFormatKindFloat); }
inline cudaChannelFormatDesc cudaCreateChannelDescHalf1() { return cudaCreateChannelDesc(16, 0, 0, 0, cudaChannelFormatKindFloat); }
inline cudaChannelFormatDesc cudaCreateChannelDescHalf2() { return cudaCreateChannelDesc(16, 16, 0, 0, cudaChannelFormatKindFloat); }
inline cudaChannelFormatDesc cudaCreateChannelDescHalf4() { return cudaCreateChannelDesc(16, 16, 16, 16, cudaChannelFormatKindFloat); }

#define LOCKSTEP_CHANNEL_DESC(T, bits, n, kind)                                                                 \
  template <>                                                                                                   \
  inline cudaChannelFormatDesc cudaCreateChannelDesc<T>() {                                                     \
    return cudaCreateChannelDesc(bits, (n) > 1 ? (bits) : 0, (n) > 2 ? (bits) : 0, (n) > 3 ? (bits) : 0, kind); \
  }
#define LOCKSTEP_CHANNEL_DESCS(S, V, bits, kind) \
  LOCKSTEP_CHANNEL_DESC(S, bits, 1, kind)        \
  LOCKSTEP_CHANNEL_DESC(V##1, bits, 1, kind)     \
  LOCKSTEP_CHANNEL_DESC(V##2, bits, 2, kind)     \
  LOCKSTEP_CHANNEL_DESC(V##4, bits, 4, kind)
LOCKSTEP_CHANNEL_DESC(char, 8, 1, static_cast<char>(-1) < 0 ? cudaChannelFormatKindSigned : cudaChannelFormatKindUnsigned)
LOCKSTEP_CHANNEL_DESCS(signed char, char, 8, cudaChannelFormatKindSigned)
LOCKSTEP_CHANNEL_DESCS(unsigned char, uchar, 8, cudaChannelFormatKindUnsigned)
LOCKSTEP_CHANNEL_DESCS(short, short, 16, cudaChannelFormatKindSigned)
LOCKSTEP_CHANNEL_DESCS(unsigned short, ushort, 16, cudaChannelFormatKindUnsigned)
LOCKSTEP_CHANNEL_DESCS(int, int, 32, cudaChannelFormatKindSigned)
LOCKSTEP_CHANNEL_DESCS(unsigned int, uint, 32, cudaChannelFormatKindUnsigned)
LOCKSTEP_CHANNEL_DESCS(float, float, 32, cudaChannelFormatKindFloat)
struct __half;
struct __half2;
LOCKSTEP_CHANNEL_DESC(__half, 16, 1, cudaChannelFormatKindFloat)
LOCKSTEP_CHANNEL_DESC(__half2, 16, 2, cudaChannelFormatKindFloat)
#undef LOCKSTEP_CHANNEL_DESCS
#undef LOCKSTEP_CHANNEL_DESC

// Arrays. Widths, heights and depths are in elements; a 1D array has height
// and depth 0, a 2D array depth 0; a layered array's depth is its layers, a
// cubemap's 6 (6 per layer when also layered), with width == height.
cudaError_t cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, std::size_t width, std::size_t height = 0, unsigned int flags = 0);
cudaError_t cudaMalloc3DArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, cudaExtent extent, unsigned int flags = 0);
cudaError_t cudaFreeArray(cudaArray_t array);
cudaError_t cudaArrayGetInfo(cudaChannelFormatDesc* desc, cudaExtent* extent, unsigned int* flags, cudaArray_t array);
// Pitched 3D device memory: rows padded as cudaMallocPitch pads them.
cudaError_t cudaMalloc3D(cudaPitchedPtr* pitched, cudaExtent extent);
cudaError_t cudaMemset3D(cudaPitchedPtr pitched, int value, cudaExtent extent);
cudaError_t cudaMemset3DAsync(cudaPitchedPtr pitched, int value, cudaExtent extent, cudaStream_t stream = nullptr);

// Copies into and out of arrays: offsets and widths in bytes, heights in rows.
cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, std::size_t w_offset, std::size_t h_offset, const void* src, std::size_t src_pitch,
                                std::size_t width, std::size_t height, cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DFromArray(void* dst, std::size_t dst_pitch, cudaArray_const_t src, std::size_t w_offset, std::size_t h_offset,
                                  std::size_t width, std::size_t height, cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DArrayToArray(cudaArray_t dst, std::size_t w_offset_dst, std::size_t h_offset_dst, cudaArray_const_t src,
                                     std::size_t w_offset_src, std::size_t h_offset_src, std::size_t width, std::size_t height,
                                     cudaMemcpyKind kind = cudaMemcpyDeviceToDevice);
cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, std::size_t w_offset, std::size_t h_offset, const void* src, std::size_t src_pitch,
                                     std::size_t width, std::size_t height, cudaMemcpyKind kind, cudaStream_t stream = nullptr);
cudaError_t cudaMemcpy2DFromArrayAsync(void* dst, std::size_t dst_pitch, cudaArray_const_t src, std::size_t w_offset, std::size_t h_offset,
                                       std::size_t width, std::size_t height, cudaMemcpyKind kind, cudaStream_t stream = nullptr);
// Deprecated in CUDA, still declared: `bytes` from (w_offset bytes, h_offset rows) on, row after row.
cudaError_t cudaMemcpyToArray(cudaArray_t dst, std::size_t w_offset, std::size_t h_offset, const void* src, std::size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyFromArray(void* dst, cudaArray_const_t src, std::size_t w_offset, std::size_t h_offset, std::size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyToArrayAsync(cudaArray_t dst, std::size_t w_offset, std::size_t h_offset, const void* src, std::size_t bytes,
                                   cudaMemcpyKind kind, cudaStream_t stream = nullptr);
cudaError_t cudaMemcpyFromArrayAsync(void* dst, cudaArray_const_t src, std::size_t w_offset, std::size_t h_offset, std::size_t bytes,
                                     cudaMemcpyKind kind, cudaStream_t stream = nullptr);
// Between arrays and pitched memory: positions and the extent in elements of
// an array where one takes part, otherwise in bytes (x) and rows and slices.
cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms* p);
cudaError_t cudaMemcpy3DAsync(const cudaMemcpy3DParms* p, cudaStream_t stream = nullptr);

// Texture and surface objects. Mipmapped arrays are refused with
// cudaErrorNotSupported, and so is a resource view.
cudaError_t cudaCreateTextureObject(cudaTextureObject_t* texture, const cudaResourceDesc* resource, const cudaTextureDesc* texture_desc,
                                    const cudaResourceViewDesc* view);
cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texture);
cudaError_t cudaGetTextureObjectResourceDesc(cudaResourceDesc* resource, cudaTextureObject_t texture);
cudaError_t cudaGetTextureObjectTextureDesc(cudaTextureDesc* texture_desc, cudaTextureObject_t texture);
cudaError_t cudaGetTextureObjectResourceViewDesc(cudaResourceViewDesc* view, cudaTextureObject_t texture);
cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t* surface, const cudaResourceDesc* resource);
cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t surface);
cudaError_t cudaGetSurfaceObjectResourceDesc(cudaResourceDesc* resource, cudaSurfaceObject_t surface);
