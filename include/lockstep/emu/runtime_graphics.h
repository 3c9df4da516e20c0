// Graphics interoperability on the emulator: OpenGL buffer objects mapped for
// kernels. Device memory is host memory here, so mapping a buffer maps it
// into the process through the program's own OpenGL (glMapBufferRange, found
// in the process at run time) and hands kernels that pointer; unmapping gives
// it back to OpenGL. This needs the calling thread's OpenGL context current,
// as on a GPU; without one the calls answer cudaErrorInvalidGraphicsContext,
// and in a process without OpenGL cudaErrorOperatingSystem, as a GPU's do.
// Textures and renderbuffers (cudaGraphicsGLRegisterImage) are not mapped:
// cudaErrorNotSupported.
#pragma once
#include "lockstep/emu/runtime_textures.h"
#include "lockstep/emu/runtime_types.h"

struct cudaGraphicsResource;
using cudaGraphicsResource_t = cudaGraphicsResource*;

enum cudaGraphicsRegisterFlags {
  cudaGraphicsRegisterFlagsNone = 0,
  cudaGraphicsRegisterFlagsReadOnly = 1,
  cudaGraphicsRegisterFlagsWriteDiscard = 2,
  cudaGraphicsRegisterFlagsSurfaceLoadStore = 4,
  cudaGraphicsRegisterFlagsTextureGather = 8
};
enum cudaGraphicsMapFlags { cudaGraphicsMapFlagsNone = 0, cudaGraphicsMapFlagsReadOnly = 1, cudaGraphicsMapFlagsWriteDiscard = 2 };
enum cudaGraphicsCubeFace {
  cudaGraphicsCubeFacePositiveX = 0x00,
  cudaGraphicsCubeFaceNegativeX = 0x01,
  cudaGraphicsCubeFacePositiveY = 0x02,
  cudaGraphicsCubeFaceNegativeY = 0x03,
  cudaGraphicsCubeFacePositiveZ = 0x04,
  cudaGraphicsCubeFaceNegativeZ = 0x05
};
enum cudaGLDeviceList { cudaGLDeviceListAll = 1, cudaGLDeviceListCurrentFrame = 2, cudaGLDeviceListNextFrame = 3 };
enum cudaGLMapFlags { cudaGLMapFlagsNone = 0, cudaGLMapFlagsReadOnly = 1, cudaGLMapFlagsWriteDiscard = 2 };

cudaError_t cudaGraphicsMapResources(int count, cudaGraphicsResource_t* resources, cudaStream_t stream = nullptr);
cudaError_t cudaGraphicsUnmapResources(int count, cudaGraphicsResource_t* resources, cudaStream_t stream = nullptr);
cudaError_t cudaGraphicsResourceGetMappedPointer(void** pointer, std::size_t* size, cudaGraphicsResource_t resource);
cudaError_t cudaGraphicsSubResourceGetMappedArray(cudaArray_t* array, cudaGraphicsResource_t resource, unsigned int array_index,
                                                  unsigned int mip_level);
cudaError_t cudaGraphicsResourceSetMapFlags(cudaGraphicsResource_t resource, unsigned int flags);
cudaError_t cudaGraphicsUnregisterResource(cudaGraphicsResource_t resource);

// <cuda_gl_interop.h>'s (GLuint and GLenum are unsigned int).
cudaError_t cudaGraphicsGLRegisterBuffer(cudaGraphicsResource_t* resource, unsigned int buffer, unsigned int flags);
cudaError_t cudaGraphicsGLRegisterImage(cudaGraphicsResource_t* resource, unsigned int image, unsigned int target, unsigned int flags);
cudaError_t cudaGLGetDevices(unsigned int* device_count, int* devices, unsigned int max_devices, cudaGLDeviceList list);
cudaError_t cudaGLSetGLDevice(int device);
// The deprecated buffer-object calls, on the same mappings.
cudaError_t cudaGLRegisterBufferObject(unsigned int buffer);
cudaError_t cudaGLUnregisterBufferObject(unsigned int buffer);
cudaError_t cudaGLMapBufferObject(void** pointer, unsigned int buffer);
cudaError_t cudaGLUnmapBufferObject(unsigned int buffer);
cudaError_t cudaGLSetBufferObjectMapFlags(unsigned int buffer, unsigned int flags);
cudaError_t cudaGLMapBufferObjectAsync(void** pointer, unsigned int buffer, cudaStream_t stream);
cudaError_t cudaGLUnmapBufferObjectAsync(unsigned int buffer, cudaStream_t stream);
