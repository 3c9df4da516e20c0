// OpenGL buffer objects mapped for kernels (lockstep/emu/runtime_graphics.h):
// the program's OpenGL maps the buffer into the process, and that pointer is
// the "device" pointer kernels get. OpenGL's functions are looked up in the
// process when first needed, so lockstep itself links no OpenGL.
#include <dlfcn.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "lockstep/emu/runtime_graphics.h"
#include "runtime_calls.h"

struct cudaGraphicsResource {
  unsigned buffer = 0;     // the OpenGL buffer object's name
  unsigned map_flags = 0;  // cudaGraphicsMapFlags
  void* pointer = nullptr;
  std::size_t bytes = 0;
  bool mapped = false;
};

namespace lockstep::emu {
namespace {

// OpenGL's numbers for what is used here (GL/glext.h).
constexpr unsigned gl_copy_read_buffer = 0x8F36;  // a binding point that leaves the program's own bindings alone
constexpr unsigned gl_buffer_size = 0x8764;
constexpr unsigned gl_map_read = 0x0001, gl_map_write = 0x0002, gl_map_invalidate_buffer = 0x0008;

struct opengl {
  void (*bind_buffer)(unsigned, unsigned) = nullptr;
  void (*get_buffer_parameter)(unsigned, unsigned, int*) = nullptr;
  void* (*map_buffer_range)(unsigned, std::intptr_t, std::intptr_t, unsigned) = nullptr;
  unsigned char (*unmap_buffer)(unsigned) = nullptr;
  void (*get_integer)(unsigned, int*) = nullptr;
  void* (*glx_current_context)() = nullptr;
  void* (*egl_current_context)() = nullptr;

  // cudaSuccess where the process has OpenGL and the calling thread a current
  // context; else what the calls answer, as on a GPU
  // (H200, driver 580), cudaErrorOperatingSystem where the process has no
  // OpenGL library; cudaErrorInvalidGraphicsContext where no context is current.
  cudaError_t why_not() const {
    if (!bind_buffer || !get_buffer_parameter || !map_buffer_range || !unmap_buffer || !get_integer) return cudaErrorOperatingSystem;
    const bool current = (glx_current_context && glx_current_context()) || (egl_current_context && egl_current_context());
    return current ? cudaSuccess : cudaErrorInvalidGraphicsContext;
  }
};

template <class F>
void find(F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

const opengl& gl() {
  static const opengl found = [] {
    opengl g;
    find(g.bind_buffer, "glBindBuffer");
    find(g.get_buffer_parameter, "glGetBufferParameteriv");
    find(g.map_buffer_range, "glMapBufferRange");
    find(g.unmap_buffer, "glUnmapBuffer");
    find(g.get_integer, "glGetIntegerv");
    find(g.glx_current_context, "glXGetCurrentContext");
    find(g.egl_current_context, "eglGetCurrentContext");
    return g;
  }();
  return found;
}

struct graphics_state {
  std::mutex mutex;
  std::map<cudaGraphicsResource*, std::unique_ptr<cudaGraphicsResource>> resources;
  std::map<unsigned, cudaGraphicsResource*> buffer_objects;  // the deprecated cudaGLRegisterBufferObject's
};
graphics_state& state() {
  static graphics_state s;
  return s;
}

bool known(cudaGraphicsResource* r) { return r && state().resources.count(r); }

// Binds `buffer` where the program binds nothing of its own, runs f, and puts the old binding back.
template <class F>
auto with_buffer_bound(unsigned buffer, F&& f) {
  int before = 0;
  gl().get_integer(gl_copy_read_buffer, &before);
  gl().bind_buffer(gl_copy_read_buffer, buffer);
  auto result = f();
  gl().bind_buffer(gl_copy_read_buffer, static_cast<unsigned>(before));
  return result;
}

cudaError_t map(cudaGraphicsResource& r) {
  if (r.mapped) return cudaErrorAlreadyMapped;
  if (const cudaError_t e = gl().why_not(); e != cudaSuccess) return e;
  const bool ok = with_buffer_bound(r.buffer, [&] {
    int bytes = 0;
    gl().get_buffer_parameter(gl_copy_read_buffer, gl_buffer_size, &bytes);
    if (bytes <= 0) return false;
    const unsigned access = r.map_flags == cudaGraphicsMapFlagsReadOnly       ? gl_map_read
                            : r.map_flags == cudaGraphicsMapFlagsWriteDiscard ? gl_map_write | gl_map_invalidate_buffer
                                                                              : gl_map_read | gl_map_write;
    r.pointer = gl().map_buffer_range(gl_copy_read_buffer, 0, bytes, access);
    r.bytes = static_cast<std::size_t>(bytes);
    return r.pointer != nullptr;
  });
  if (!ok) return cudaErrorMapBufferObjectFailed;
  r.mapped = true;
  return cudaSuccess;
}

cudaError_t unmap(cudaGraphicsResource& r) {
  if (!r.mapped) return cudaErrorNotMapped;
  if (const cudaError_t e = gl().why_not(); e != cudaSuccess) return e;
  r.mapped = false;
  r.pointer = nullptr;
  return with_buffer_bound(r.buffer, [&] { return gl().unmap_buffer(gl_copy_read_buffer) != 0; }) ? cudaSuccess : cudaErrorUnmapBufferObjectFailed;
}

cudaError_t each(int count, cudaGraphicsResource_t* resources, cudaError_t (*step)(cudaGraphicsResource&)) {
  if (count < 0 || (count > 0 && !resources)) return record(cudaErrorInvalidValue);
  std::lock_guard lock(state().mutex);
  for (int i = 0; i < count; ++i)
    if (!known(resources[i])) return record(cudaErrorInvalidResourceHandle);
  for (int i = 0; i < count; ++i)
    if (const cudaError_t e = step(*resources[i]); e != cudaSuccess) return record(e);
  return cudaSuccess;
}

}  // namespace
}  // namespace lockstep::emu

using namespace lockstep::emu;

cudaError_t cudaGraphicsGLRegisterBuffer(cudaGraphicsResource_t* resource, unsigned int buffer, unsigned int flags) {
  if (!resource || buffer == 0 || flags > cudaGraphicsRegisterFlagsWriteDiscard) return record(cudaErrorInvalidValue);
  if (const cudaError_t e = gl().why_not(); e != cudaSuccess) return record(e);
  auto r = std::make_unique<cudaGraphicsResource>();
  r->buffer = buffer;
  r->map_flags = flags;  // the register flags' read-only and write-discard are the map flags' too
  std::lock_guard lock(state().mutex);
  *resource = r.get();
  state().resources.emplace(r.get(), std::move(r));
  return cudaSuccess;
}

cudaError_t cudaGraphicsGLRegisterImage(cudaGraphicsResource_t* resource, unsigned int, unsigned int, unsigned int) {
  if (resource) *resource = nullptr;
  if (gl().why_not() == cudaErrorOperatingSystem) return record(cudaErrorOperatingSystem);
  return record(cudaErrorNotSupported);  // textures and renderbuffers: not mapped on the emulator
}

cudaError_t cudaGraphicsMapResources(int count, cudaGraphicsResource_t* resources, cudaStream_t) { return each(count, resources, map); }
cudaError_t cudaGraphicsUnmapResources(int count, cudaGraphicsResource_t* resources, cudaStream_t) { return each(count, resources, unmap); }

cudaError_t cudaGraphicsResourceGetMappedPointer(void** pointer, std::size_t* size, cudaGraphicsResource_t resource) {
  std::lock_guard lock(state().mutex);
  if (!known(resource)) return record(cudaErrorInvalidResourceHandle);
  if (!pointer) return record(cudaErrorInvalidValue);
  if (!resource->mapped) return record(cudaErrorNotMapped);
  *pointer = resource->pointer;
  if (size) *size = resource->bytes;
  return cudaSuccess;
}

cudaError_t cudaGraphicsSubResourceGetMappedArray(cudaArray_t* array, cudaGraphicsResource_t resource, unsigned int, unsigned int) {
  std::lock_guard lock(state().mutex);
  if (!known(resource)) return record(cudaErrorInvalidResourceHandle);
  if (array) *array = nullptr;
  return record(resource->mapped ? cudaErrorNotMappedAsArray : cudaErrorNotMapped);  // buffers map as pointers only
}

cudaError_t cudaGraphicsResourceSetMapFlags(cudaGraphicsResource_t resource, unsigned int flags) {
  std::lock_guard lock(state().mutex);
  if (!known(resource)) return record(cudaErrorInvalidResourceHandle);
  if (flags > cudaGraphicsMapFlagsWriteDiscard) return record(cudaErrorInvalidValue);
  if (resource->mapped) return record(cudaErrorAlreadyMapped);
  resource->map_flags = flags;
  return cudaSuccess;
}

cudaError_t cudaGraphicsUnregisterResource(cudaGraphicsResource_t resource) {
  std::lock_guard lock(state().mutex);
  if (!known(resource)) return record(cudaErrorInvalidResourceHandle);
  if (resource->mapped) unmap(*resource);  // as CUDA does: unregistering a mapped resource unmaps it (where OpenGL can)
  for (auto it = state().buffer_objects.begin(); it != state().buffer_objects.end();)
    it = it->second == resource ? state().buffer_objects.erase(it) : std::next(it);
  state().resources.erase(resource);
  return cudaSuccess;
}

cudaError_t cudaGLGetDevices(unsigned int* device_count, int* devices, unsigned int max_devices, cudaGLDeviceList) {
  if (!device_count) return record(cudaErrorInvalidValue);
  if (const cudaError_t e = gl().why_not(); e != cudaSuccess) return record(e);
  *device_count = 1;  // device 0 draws for any context
  if (devices && max_devices > 0) devices[0] = 0;
  return cudaSuccess;
}

cudaError_t cudaGLSetGLDevice(int device) { return cudaSetDevice(device); }

namespace {
// The resource cudaGLRegisterBufferObject made for `buffer`, or null.
cudaGraphicsResource* buffer_object(unsigned buffer) {
  std::lock_guard lock(state().mutex);
  const auto it = state().buffer_objects.find(buffer);
  return it == state().buffer_objects.end() ? nullptr : it->second;
}
}  // namespace

cudaError_t cudaGLRegisterBufferObject(unsigned int buffer) {
  cudaGraphicsResource_t r = nullptr;
  if (const cudaError_t e = cudaGraphicsGLRegisterBuffer(&r, buffer, cudaGraphicsRegisterFlagsNone); e != cudaSuccess) return e;
  std::lock_guard lock(state().mutex);
  state().buffer_objects[buffer] = r;
  return cudaSuccess;
}

cudaError_t cudaGLUnregisterBufferObject(unsigned int buffer) {
  cudaGraphicsResource* r = buffer_object(buffer);
  return r ? cudaGraphicsUnregisterResource(r) : record(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaGLMapBufferObject(void** pointer, unsigned int buffer) {
  cudaGraphicsResource* r = buffer_object(buffer);
  if (!r) return record(cudaErrorInvalidResourceHandle);
  if (const cudaError_t e = cudaGraphicsMapResources(1, &r); e != cudaSuccess) return e;
  return cudaGraphicsResourceGetMappedPointer(pointer, nullptr, r);
}

cudaError_t cudaGLUnmapBufferObject(unsigned int buffer) {
  cudaGraphicsResource* r = buffer_object(buffer);
  return r ? cudaGraphicsUnmapResources(1, &r) : record(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaGLSetBufferObjectMapFlags(unsigned int buffer, unsigned int flags) {
  cudaGraphicsResource* r = buffer_object(buffer);
  return r ? cudaGraphicsResourceSetMapFlags(r, flags) : record(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaGLMapBufferObjectAsync(void** pointer, unsigned int buffer, cudaStream_t) { return cudaGLMapBufferObject(pointer, buffer); }
cudaError_t cudaGLUnmapBufferObjectAsync(unsigned int buffer, cudaStream_t) { return cudaGLUnmapBufferObject(buffer); }
