// CUDA arrays, the copies into and out of them, and texture and surface
// objects (lockstep/emu/runtime_textures.h). An array is host memory the
// runtime owns, counted against the device's 80 GiB; a texture or surface
// object's handle is the address of an immutable descriptor (texture_objects.h)
// that the sampler (texture_sampling.cpp) reads without a lookup. The live
// arrays and objects are kept in sets, so that frees, destroys and copies
// recognize handles the runtime did not give.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include "check/device_memory.h"
#include "lockstep/emu/runtime_api.h"
#include "lockstep/emu/textures.h"
#include "runtime_calls.h"
#include "texture_objects.h"

namespace lockstep::emu::textures {

cudaError_t format_of(const cudaChannelFormatDesc& desc, channel_format& format) {
  channel_format f;
  const int kind = desc.f;
  if (kind >= cudaChannelFormatKindUnsignedNormalized8X1 && kind <= cudaChannelFormatKindSignedNormalized16X4) {
    const int at = kind - cudaChannelFormatKindUnsignedNormalized8X1;  // 0..11: (unsigned, signed) x (8, 16) x (1, 2, 4)
    static constexpr int channels[3] = {1, 2, 4};
    f.k = at < 6 ? channel_format::kind::unsigned_int : channel_format::kind::signed_int;
    f.bits = (at % 6) < 3 ? 8 : 16;
    f.channels = channels[at % 3];
    f.normalized = true;
  } else {
    if (kind != cudaChannelFormatKindSigned && kind != cudaChannelFormatKindUnsigned && kind != cudaChannelFormatKindFloat)
      return cudaErrorInvalidChannelDescriptor;
    const int bits[4] = {desc.x, desc.y, desc.z, desc.w};
    int n = 0;
    while (n < 4 && bits[n] != 0) ++n;
    for (int c = n; c < 4; ++c)
      if (bits[c] != 0) return cudaErrorInvalidChannelDescriptor;  // a gap between channels
    if (n == 0 || n == 3) return cudaErrorInvalidChannelDescriptor;
    for (int c = 1; c < n; ++c)
      if (bits[c] != bits[0]) return cudaErrorInvalidChannelDescriptor;
    f.bits = bits[0];
    f.channels = n;
    f.k = kind == cudaChannelFormatKindFloat    ? channel_format::kind::floating
          : kind == cudaChannelFormatKindSigned ? channel_format::kind::signed_int
                                                : channel_format::kind::unsigned_int;
    const bool ok = f.k == channel_format::kind::floating ? (f.bits == 16 || f.bits == 32) : (f.bits == 8 || f.bits == 16 || f.bits == 32);
    if (!ok) return cudaErrorInvalidChannelDescriptor;
  }
  f.element_bytes = static_cast<std::size_t>(f.channels * f.bits / 8);
  format = f;
  return cudaSuccess;
}

namespace {

// An H100's largest array dimensions (cudaDeviceProp::maxTexture*, maxSurface*).
constexpr std::size_t max_1d = 131072, max_2d_width = 131072, max_2d_height = 65536, max_3d = 16384, max_layers = 2048;
constexpr std::size_t max_cubemap = 32768, max_layered_width = 32768;
// cudaDeviceProp::texturePitchAlignment: a pitch-2D resource's rows must start on it.
constexpr std::size_t texture_pitch_alignment = 32;

struct registry {
  std::mutex mutex;
  std::set<const cudaArray*> arrays;
  std::set<const object*> objects;
};
registry& live() {
  static registry r;
  return r;
}

bool known_array(const cudaArray* a) {
  std::lock_guard lock(live().mutex);
  return live().arrays.count(a) != 0;
}

// The object behind a handle, if it is a live one of the wanted kind.
const object* known_object(unsigned long long handle, bool surface) {
  const auto* o = reinterpret_cast<const object*>(handle);
  std::lock_guard lock(live().mutex);
  return live().objects.count(o) && o->surface == surface ? o : nullptr;
}

bool valid_kind(cudaMemcpyKind kind) { return kind >= cudaMemcpyHostToHost && kind <= cudaMemcpyDefault; }

// A box of bytes: `rows` rows of `row_bytes` each, in `slices` slices, at `base`.
struct box {
  unsigned char* base = nullptr;
  std::size_t pitch = 0, slice_pitch = 0;
  bool device = false;  // linear device memory, which check mode tracks
};

void copy_box(const box& dst, const box& src, std::size_t row_bytes, std::size_t rows, std::size_t slices) {
  for (std::size_t z = 0; z < slices; ++z)
    for (std::size_t y = 0; y < rows; ++y) {
      unsigned char* d = dst.base + z * dst.slice_pitch + y * dst.pitch;
      const unsigned char* s = src.base + z * src.slice_pitch + y * src.pitch;
      std::memmove(d, s, row_bytes);
      if (dst.device) check::mark_written(d, row_bytes);
    }
}

// Linear memory on one side of a copy: every row inside its allocation (a device one), else why not.
cudaError_t linear_side(const char* call, const char* side, const void* p, std::size_t pitch, std::size_t slice_pitch, std::size_t row_bytes,
                        std::size_t rows, std::size_t slices, const void* caller) {
  if (!p) return record(cudaErrorInvalidValue);
  const std::size_t span = (slices - 1) * slice_pitch + (rows - 1) * pitch + row_bytes;
  if (std::string why; !fits(p, span, side, why)) return refuse(call, cudaErrorInvalidValue, why + "; nothing was copied", caller);
  return cudaSuccess;
}

bool is_device(const void* p) { return p && check::bytes_to_end(p) != SIZE_MAX; }

// The byte box of an array from (x bytes, y, z) on.
box array_box(const cudaArray* a, std::size_t x_bytes, std::size_t y, std::size_t z) {
  return {a->data + z * a->slice_bytes() + y * a->row_bytes() + x_bytes, a->row_bytes(), a->slice_bytes(), false};
}

cudaError_t to_array(const char* call, cudaArray_t dst, std::size_t w_offset, std::size_t h_offset, const void* src, std::size_t src_pitch,
                     std::size_t width, std::size_t height, cudaMemcpyKind kind, const void* caller) {
  if (!valid_kind(kind)) return record(cudaErrorInvalidMemcpyDirection);
  if (!dst || !known_array(dst)) return record(cudaErrorInvalidValue);
  if (width > src_pitch && height > 1) return record(cudaErrorInvalidPitchValue);  // one row needs no pitch (volumeRender passes 0)
  if (w_offset + width > dst->row_bytes() || h_offset + height > dst->height) return record(cudaErrorInvalidValue);
  if (width == 0 || height == 0) return sticky_error() ? broken_context() : cudaSuccess;
  if (sticky_error()) return broken_context();
  if (cudaError_t e = linear_side(call, "source", src, src_pitch, 0, width, height, 1, caller)) return e;
  copy_box(array_box(dst, w_offset, h_offset, 0), {static_cast<unsigned char*>(const_cast<void*>(src)), src_pitch, 0, false}, width, height, 1);
  return cudaSuccess;
}

cudaError_t from_array(const char* call, void* dst, std::size_t dst_pitch, cudaArray_const_t src, std::size_t w_offset, std::size_t h_offset,
                       std::size_t width, std::size_t height, cudaMemcpyKind kind, const void* caller) {
  if (!valid_kind(kind)) return record(cudaErrorInvalidMemcpyDirection);
  if (!src || !known_array(src)) return record(cudaErrorInvalidValue);
  if (width > dst_pitch && height > 1) return record(cudaErrorInvalidPitchValue);
  if (w_offset + width > src->row_bytes() || h_offset + height > src->height) return record(cudaErrorInvalidValue);
  if (width == 0 || height == 0) return sticky_error() ? broken_context() : cudaSuccess;
  if (sticky_error()) return broken_context();
  if (cudaError_t e = linear_side(call, "destination", dst, dst_pitch, 0, width, height, 1, caller)) return e;
  copy_box({static_cast<unsigned char*>(dst), dst_pitch, 0, is_device(dst)}, array_box(src, w_offset, h_offset, 0), width, height, 1);
  return cudaSuccess;
}

// cudaMemcpyToArray and cudaMemcpyFromArray: `bytes` on from the offset, through the rows that follow.
cudaError_t linear_array_copy(cudaArray_const_t a, std::size_t w_offset, std::size_t h_offset, std::size_t bytes, cudaMemcpyKind kind,
                              std::size_t& at) {
  if (!valid_kind(kind)) return record(cudaErrorInvalidMemcpyDirection);
  if (!a || !known_array(a)) return record(cudaErrorInvalidValue);
  if (w_offset >= a->row_bytes() && bytes) return record(cudaErrorInvalidValue);
  at = h_offset * a->row_bytes() + w_offset;
  if (at > a->slice_bytes() * a->depth || bytes > a->slice_bytes() * a->depth - at) return record(cudaErrorInvalidValue);
  if (sticky_error()) return broken_context();
  return cudaSuccess;
}

cudaError_t make_object(unsigned long long* handle, const cudaResourceDesc* resource, const cudaTextureDesc* texture, bool surface) {
  if (!handle || !resource) return record(cudaErrorInvalidValue);
  if (!surface && !texture) return record(cudaErrorInvalidResourceHandle);  // what an H100 answers (bench/RESULTS.md)
  if (resource->flags != 0) return record(cudaErrorInvalidValue);
  object o;
  o.surface = surface;
  o.resource = *resource;
  if (texture) o.texture = *texture;
  switch (resource->resType) {
    case cudaResourceTypeArray: {
      const cudaArray* a = resource->res.array.array;
      if (!a || !known_array(a)) return record(cudaErrorInvalidResourceHandle);
      // An H100 makes a surface of an array without cudaArraySurfaceLoadStore too.
      if (cudaError_t e = format_of(a->desc, o.format)) return record(e);
      o.base = a->data;
      o.width = a->width;
      o.height = a->height;
      o.depth = a->depth;
      o.row_pitch = a->row_bytes();
      o.slice_pitch = a->slice_bytes();
      o.layered = a->flags & cudaArrayLayered;
      o.cubemap = a->flags & cudaArrayCubemap;
      break;
    }
    case cudaResourceTypeMipmappedArray:
      return record(cudaErrorNotSupported);
    case cudaResourceTypeLinear: {
      if (surface) return record(cudaErrorInvalidValue);
      const auto& l = resource->res.linear;
      if (!l.devPtr) return record(cudaErrorInvalidValue);
      if (cudaError_t e = format_of(l.desc, o.format)) return record(e);
      if (l.sizeInBytes < o.format.element_bytes || l.sizeInBytes / o.format.element_bytes > std::size_t{1} << 28)
        return record(cudaErrorInvalidValue);
      o.base = static_cast<const unsigned char*>(l.devPtr);
      o.width = l.sizeInBytes / o.format.element_bytes;
      o.row_pitch = o.slice_pitch = l.sizeInBytes;
      o.linear = true;
      break;
    }
    case cudaResourceTypePitch2D: {
      if (surface) return record(cudaErrorInvalidValue);
      const auto& p = resource->res.pitch2D;
      if (!p.devPtr || p.width == 0 || p.height == 0) return record(cudaErrorInvalidValue);
      if (cudaError_t e = format_of(p.desc, o.format)) return record(e);
      if (p.pitchInBytes % texture_pitch_alignment != 0 || p.width * o.format.element_bytes > p.pitchInBytes) return record(cudaErrorInvalidValue);
      if (p.width > 131072 || p.height > 65000) return record(cudaErrorInvalidValue);
      o.base = static_cast<const unsigned char*>(p.devPtr);
      o.width = p.width;
      o.height = p.height;
      o.row_pitch = p.pitchInBytes;
      o.slice_pitch = p.pitchInBytes * p.height;
      break;
    }
    default:
      return record(cudaErrorInvalidValue);
  }
  if (!surface) {
    for (const cudaTextureAddressMode m : texture->addressMode)
      if (m < cudaAddressModeWrap || m > cudaAddressModeBorder) return record(cudaErrorInvalidValue);
    if (texture->filterMode != cudaFilterModePoint && texture->filterMode != cudaFilterModeLinear) return record(cudaErrorInvalidValue);
    if (texture->readMode != cudaReadModeElementType && texture->readMode != cudaReadModeNormalizedFloat) return record(cudaErrorInvalidValue);
    const bool floats = o.format.k == channel_format::kind::floating;
    o.normalize = !floats && (o.format.normalized || texture->readMode == cudaReadModeNormalizedFloat);
    if (o.normalize && o.format.bits == 32) return record(cudaErrorInvalidNormSetting);  // 32-bit integers have no normalized form
    o.returns_float = floats || o.normalize;
    if (o.linear) {
      o.texture.filterMode = cudaFilterModePoint;  // a linear resource is fetched, never filtered or addressed
    } else if (texture->filterMode == cudaFilterModeLinear && !o.returns_float) {
      return record(cudaErrorInvalidFilterSetting);
    }
  }
  const object* made = new object(o);
  {
    std::lock_guard lock(live().mutex);
    live().objects.insert(made);
  }
  *handle = reinterpret_cast<unsigned long long>(made);
  return cudaSuccess;
}

cudaError_t destroy_object(unsigned long long handle, bool surface) {
  if (handle == 0) return cudaSuccess;
  const auto* o = reinterpret_cast<const object*>(handle);
  {
    std::lock_guard lock(live().mutex);
    auto it = live().objects.find(o);
    if (it == live().objects.end() || o->surface != surface) return record(cudaErrorInvalidValue);
    live().objects.erase(it);
  }
  delete o;
  return cudaSuccess;
}

}  // namespace
}  // namespace lockstep::emu::textures

namespace tx = lockstep::emu::textures;
using lockstep::emu::record;

cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, cudaChannelFormatKind f) { return {x, y, z, w, f}; }

cudaError_t cudaGetChannelDesc(cudaChannelFormatDesc* desc, cudaArray_const_t array) {
  if (!desc || !array || !tx::known_array(array)) return record(cudaErrorInvalidValue);
  *desc = array->desc;
  return cudaSuccess;
}

cudaError_t cudaMalloc3DArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, cudaExtent extent, unsigned int flags) {
  if (!array || !desc) return record(cudaErrorInvalidValue);
  constexpr unsigned known = cudaArrayLayered | cudaArraySurfaceLoadStore | cudaArrayCubemap | cudaArrayTextureGather;
  if (flags & ~known) return record(cudaErrorInvalidValue);
  tx::channel_format format;
  if (cudaError_t e = tx::format_of(*desc, format)) return record(e);
  const bool layered = flags & cudaArrayLayered, cubemap = flags & cudaArrayCubemap;
  const std::size_t w = extent.width, h = extent.height, d = extent.depth;
  bool ok = w > 0;
  if (cubemap) {
    ok = ok && w == h && w <= tx::max_cubemap && (layered ? d % 6 == 0 && d > 0 && d / 6 <= 2046 : d == 6);
  } else if (layered) {
    ok = ok && d > 0 && d <= tx::max_layers && w <= tx::max_layered_width && h <= tx::max_layered_width;
  } else if (d > 0) {
    ok = ok && h > 0 && w <= tx::max_3d && h <= tx::max_3d && d <= tx::max_3d;
  } else if (h > 0) {
    ok = ok && w <= tx::max_2d_width && h <= tx::max_2d_height;
  } else {
    ok = ok && w <= tx::max_1d;
  }
  if ((flags & cudaArrayTextureGather) && (d > 0 || h == 0)) ok = false;  // gather is for 2D arrays
  if (!ok) return record(cudaErrorInvalidValue);
  if (lockstep::emu::sticky_error()) return lockstep::emu::broken_context();
  auto* a = new cudaArray;
  a->desc = *desc;
  a->extent = extent;
  a->flags = flags;
  a->element_bytes = format.element_bytes;
  a->width = w;
  a->height = std::max<std::size_t>(h, 1);
  a->depth = std::max<std::size_t>(d, 1);
  const std::size_t bytes = a->slice_bytes() * a->depth;
  if (bytes > lockstep::emu::device_memory_bytes - lockstep::emu::allocated_bytes() ||
      !(a->data = static_cast<unsigned char*>(std::calloc(bytes, 1)))) {
    delete a;
    return record(cudaErrorMemoryAllocation);
  }
  lockstep::emu::count_allocated(static_cast<std::ptrdiff_t>(bytes));
  {
    std::lock_guard lock(tx::live().mutex);
    tx::live().arrays.insert(a);
  }
  *array = a;
  return cudaSuccess;
}

cudaError_t cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, std::size_t width, std::size_t height, unsigned int flags) {
  if (flags & (cudaArrayLayered | cudaArrayCubemap)) return record(cudaErrorInvalidValue);
  return cudaMalloc3DArray(array, desc, make_cudaExtent(width, height, 0), flags);
}

cudaError_t cudaFreeArray(cudaArray_t array) {
  if (!array) return cudaSuccess;
  {
    std::lock_guard lock(tx::live().mutex);
    if (!tx::live().arrays.erase(array)) return record(cudaErrorInvalidValue);
  }
  lockstep::emu::count_allocated(-static_cast<std::ptrdiff_t>(array->slice_bytes() * array->depth));
  std::free(array->data);
  delete array;
  return cudaSuccess;
}

cudaError_t cudaArrayGetInfo(cudaChannelFormatDesc* desc, cudaExtent* extent, unsigned int* flags, cudaArray_t array) {
  if (!array || !tx::known_array(array)) return record(cudaErrorInvalidValue);
  if (desc) *desc = array->desc;
  if (extent) *extent = array->extent;
  if (flags) *flags = array->flags;
  return cudaSuccess;
}

cudaError_t cudaMalloc3D(cudaPitchedPtr* pitched, cudaExtent extent) {
  if (!pitched) return record(cudaErrorInvalidValue);
  void* p = nullptr;
  std::size_t pitch = 0;
  const std::size_t rows = extent.height * extent.depth;
  if (cudaError_t e = cudaMallocPitch(&p, &pitch, extent.width, rows)) return e;
  *pitched = make_cudaPitchedPtr(p, pitch, extent.width, extent.height);
  return cudaSuccess;
}

cudaError_t cudaMemset3D(cudaPitchedPtr pitched, int value, cudaExtent extent) {
  if (extent.width > pitched.pitch) return record(cudaErrorInvalidValue);
  for (std::size_t z = 0; z < extent.depth; ++z) {
    void* slice = static_cast<unsigned char*>(pitched.ptr) + z * pitched.pitch * pitched.ysize;
    if (cudaError_t e = cudaMemset2D(slice, pitched.pitch, value, extent.width, extent.height)) return e;
  }
  return cudaSuccess;
}

cudaError_t cudaMemset3DAsync(cudaPitchedPtr pitched, int value, cudaExtent extent, cudaStream_t stream) {
  if (!lockstep::emu::valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  return cudaMemset3D(pitched, value, extent);
}

cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, std::size_t w_offset, std::size_t h_offset, const void* src, std::size_t src_pitch,
                                std::size_t width, std::size_t height, cudaMemcpyKind kind) {
  return tx::to_array("cudaMemcpy2DToArray", dst, w_offset, h_offset, src, src_pitch, width, height, kind, __builtin_return_address(0));
}

cudaError_t cudaMemcpy2DFromArray(void* dst, std::size_t dst_pitch, cudaArray_const_t src, std::size_t w_offset, std::size_t h_offset,
                                  std::size_t width, std::size_t height, cudaMemcpyKind kind) {
  return tx::from_array("cudaMemcpy2DFromArray", dst, dst_pitch, src, w_offset, h_offset, width, height, kind, __builtin_return_address(0));
}

cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, std::size_t w_offset, std::size_t h_offset, const void* src, std::size_t src_pitch,
                                     std::size_t width, std::size_t height, cudaMemcpyKind kind, cudaStream_t stream) {
  if (!lockstep::emu::valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  return tx::to_array("cudaMemcpy2DToArrayAsync", dst, w_offset, h_offset, src, src_pitch, width, height, kind, __builtin_return_address(0));
}

cudaError_t cudaMemcpy2DFromArrayAsync(void* dst, std::size_t dst_pitch, cudaArray_const_t src, std::size_t w_offset, std::size_t h_offset,
                                       std::size_t width, std::size_t height, cudaMemcpyKind kind, cudaStream_t stream) {
  if (!lockstep::emu::valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  return tx::from_array("cudaMemcpy2DFromArrayAsync", dst, dst_pitch, src, w_offset, h_offset, width, height, kind, __builtin_return_address(0));
}

cudaError_t cudaMemcpy2DArrayToArray(cudaArray_t dst, std::size_t w_offset_dst, std::size_t h_offset_dst, cudaArray_const_t src,
                                     std::size_t w_offset_src, std::size_t h_offset_src, std::size_t width, std::size_t height, cudaMemcpyKind kind) {
  if (!tx::valid_kind(kind)) return record(cudaErrorInvalidMemcpyDirection);
  if (!dst || !src || !tx::known_array(dst) || !tx::known_array(src)) return record(cudaErrorInvalidValue);
  if (w_offset_dst + width > dst->row_bytes() || h_offset_dst + height > dst->height || w_offset_src + width > src->row_bytes() ||
      h_offset_src + height > src->height)
    return record(cudaErrorInvalidValue);
  if (lockstep::emu::sticky_error()) return lockstep::emu::broken_context();
  tx::copy_box(tx::array_box(dst, w_offset_dst, h_offset_dst, 0), tx::array_box(src, w_offset_src, h_offset_src, 0), width, height, 1);
  return cudaSuccess;
}

cudaError_t cudaMemcpyToArray(cudaArray_t dst, std::size_t w_offset, std::size_t h_offset, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  std::size_t at = 0;
  if (cudaError_t e = tx::linear_array_copy(dst, w_offset, h_offset, bytes, kind, at)) return e;
  if (bytes == 0) return cudaSuccess;
  if (cudaError_t e = tx::linear_side("cudaMemcpyToArray", "source", src, bytes, 0, bytes, 1, 1, __builtin_return_address(0))) return e;
  std::memmove(dst->data + at, src, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpyFromArray(void* dst, cudaArray_const_t src, std::size_t w_offset, std::size_t h_offset, std::size_t bytes,
                                cudaMemcpyKind kind) {
  std::size_t at = 0;
  if (cudaError_t e = tx::linear_array_copy(src, w_offset, h_offset, bytes, kind, at)) return e;
  if (bytes == 0) return cudaSuccess;
  if (cudaError_t e = tx::linear_side("cudaMemcpyFromArray", "destination", dst, bytes, 0, bytes, 1, 1, __builtin_return_address(0))) return e;
  std::memmove(dst, src->data + at, bytes);
  if (tx::is_device(dst)) lockstep::emu::check::mark_written(dst, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpyToArrayAsync(cudaArray_t dst, std::size_t w_offset, std::size_t h_offset, const void* src, std::size_t bytes,
                                   cudaMemcpyKind kind, cudaStream_t stream) {
  if (!lockstep::emu::valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  return cudaMemcpyToArray(dst, w_offset, h_offset, src, bytes, kind);
}

cudaError_t cudaMemcpyFromArrayAsync(void* dst, cudaArray_const_t src, std::size_t w_offset, std::size_t h_offset, std::size_t bytes,
                                     cudaMemcpyKind kind, cudaStream_t stream) {
  if (!lockstep::emu::valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  return cudaMemcpyFromArray(dst, src, w_offset, h_offset, bytes, kind);
}

cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms* p) {
  if (!p) return record(cudaErrorInvalidValue);
  if (!tx::valid_kind(p->kind)) return record(cudaErrorInvalidMemcpyDirection);
  const bool src_array = p->srcArray != nullptr, dst_array = p->dstArray != nullptr;
  if (src_array == (p->srcPtr.ptr != nullptr) || dst_array == (p->dstPtr.ptr != nullptr)) return record(cudaErrorInvalidValue);
  if ((src_array && !tx::known_array(p->srcArray)) || (dst_array && !tx::known_array(p->dstArray))) return record(cudaErrorInvalidValue);
  std::size_t element = 1;
  if (src_array) element = p->srcArray->element_bytes;
  if (dst_array) {
    if (src_array && p->dstArray->element_bytes != element) return record(cudaErrorInvalidValue);
    element = p->dstArray->element_bytes;
  }
  const bool any_array = src_array || dst_array;
  const std::size_t row_bytes = p->extent.width * element;
  const std::size_t rows = any_array ? std::max<std::size_t>(p->extent.height, 1) : p->extent.height;
  const std::size_t slices = any_array ? std::max<std::size_t>(p->extent.depth, 1) : p->extent.depth;
  if (row_bytes == 0 || rows == 0 || slices == 0) return lockstep::emu::sticky_error() ? lockstep::emu::broken_context() : cudaSuccess;
  // Each side: an array's box (positions in elements), or pitched memory (x in bytes).
  auto side = [&](bool is_array, const cudaArray* a, const cudaPos& pos, const cudaPitchedPtr& ptr, const char* name, tx::box& b) -> cudaError_t {
    if (is_array) {
      if (pos.x + p->extent.width > a->width || pos.y + rows > a->height || pos.z + slices > a->depth) return record(cudaErrorInvalidValue);
      b = tx::array_box(a, pos.x * element, pos.y, pos.z);
      return cudaSuccess;
    }
    if (ptr.pitch < pos.x + row_bytes) return record(cudaErrorInvalidPitchValue);
    const std::size_t slice_pitch = ptr.pitch * std::max<std::size_t>(ptr.ysize, 1);
    if (ptr.ysize && pos.y + rows > ptr.ysize) return record(cudaErrorInvalidValue);
    unsigned char* at = static_cast<unsigned char*>(ptr.ptr) + pos.z * slice_pitch + pos.y * ptr.pitch + pos.x;
    if (cudaError_t e = tx::linear_side("cudaMemcpy3D", name, at, ptr.pitch, slice_pitch, row_bytes, rows, slices, __builtin_return_address(0)))
      return e;
    b = {at, ptr.pitch, slice_pitch, tx::is_device(at)};
    return cudaSuccess;
  };
  tx::box src, dst;
  if (cudaError_t e = side(src_array, p->srcArray, p->srcPos, p->srcPtr, "source", src)) return e;
  if (cudaError_t e = side(dst_array, p->dstArray, p->dstPos, p->dstPtr, "destination", dst)) return e;
  if (lockstep::emu::sticky_error()) return lockstep::emu::broken_context();
  tx::copy_box(dst, src, row_bytes, rows, slices);
  return cudaSuccess;
}

cudaError_t cudaMemcpy3DAsync(const cudaMemcpy3DParms* p, cudaStream_t stream) {
  if (!lockstep::emu::valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  return cudaMemcpy3D(p);
}

cudaError_t cudaCreateTextureObject(cudaTextureObject_t* texture, const cudaResourceDesc* resource, const cudaTextureDesc* texture_desc,
                                    const cudaResourceViewDesc* view) {
  if (view) return record(cudaErrorNotSupported);  // resource views are not emulated
  return tx::make_object(texture, resource, texture_desc, false);
}

cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texture) { return tx::destroy_object(texture, false); }

cudaError_t cudaGetTextureObjectResourceDesc(cudaResourceDesc* resource, cudaTextureObject_t texture) {
  const tx::object* o = tx::known_object(texture, false);
  if (!resource || !o) return record(cudaErrorInvalidValue);
  *resource = o->resource;
  return cudaSuccess;
}

cudaError_t cudaGetTextureObjectTextureDesc(cudaTextureDesc* texture_desc, cudaTextureObject_t texture) {
  const tx::object* o = tx::known_object(texture, false);
  if (!texture_desc || !o) return record(cudaErrorInvalidValue);
  *texture_desc = o->texture;
  return cudaSuccess;
}

cudaError_t cudaGetTextureObjectResourceViewDesc(cudaResourceViewDesc* view, cudaTextureObject_t texture) {
  const tx::object* o = tx::known_object(texture, false);
  if (!view || !o) return record(cudaErrorInvalidValue);
  std::memset(view, 0, sizeof *view);  // made without a view
  return cudaSuccess;
}

cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t* surface, const cudaResourceDesc* resource) {
  if (resource && resource->resType != cudaResourceTypeArray) return record(cudaErrorInvalidValue);
  return tx::make_object(surface, resource, nullptr, true);
}

cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t surface) { return tx::destroy_object(surface, true); }

cudaError_t cudaGetSurfaceObjectResourceDesc(cudaResourceDesc* resource, cudaSurfaceObject_t surface) {
  const tx::object* o = tx::known_object(surface, true);
  if (!resource || !o) return record(cudaErrorInvalidValue);
  *resource = o->resource;
  return cudaSuccess;
}
