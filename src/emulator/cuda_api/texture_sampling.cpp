// What kernels fetch from texture objects and read and write through surface
// objects (lockstep/emu/textures.h), as the CUDA Programming Guide's
// texture-fetching appendix describes the hardware:
//   - coordinates: normalized ones are scaled by the size; wrap and mirror
//     take the fraction first, and without normalized coordinates they act as
//     clamp;
//   - point sampling reads texel floor(x);
//   - linear filtering reads texels i = floor(x - 0.5) and i + 1 with weight
//     alpha = frac(x - 0.5) kept to 8 fractional bits (9-bit fixed point),
//     per dimension; each texel is addressed on its own (wrap, mirror, clamp,
//     or the border color);
//   - 8- and 16-bit integers read as normalized floats become v / (2^8 - 1)
//     or v / (2^16 - 1), signed ones max(v / (2^(n-1) - 1), -1);
//   - a cubemap's face is the major axis of the direction (+x, -x, +y, -y,
//     +z, -z), its coordinates (s / m + 1) / 2 and (t / m + 1) / 2.
// These run in the library, not in the kernel's code: check mode does not see
// the reads of an array's storage, which no kernel may touch directly.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "lockstep/emu/half_rounding.h"
#include "lockstep/emu/sync.h"
#include "lockstep/emu/textures.h"
#include "texture_objects.h"

namespace lockstep::emu::textures {
namespace {

const object& object_of(unsigned long long handle, const char* what) {
  if (handle == 0) kernel_misuse(std::string(what) + " on a null object handle (0): on a GPU the kernel faults");
  return *reinterpret_cast<const object*>(handle);
}

// One texel's channels, as floats for a float-returning texture, else as integers.
void read_texel(const object& o, const unsigned char* p, texel& t) {
  const channel_format& f = o.format;
  for (int c = 0; c < 4; ++c) {
    t.f[c] = 0.0f;
    t.u[c] = 0;
  }
  for (int c = 0; c < f.channels; ++c) {
    const unsigned char* q = p + c * (f.bits / 8);
    if (f.k == channel_format::kind::floating) {
      if (f.bits == 16) {
        std::uint16_t h;
        std::memcpy(&h, q, 2);
        t.f[c] = half_bits_to_float(h);
      } else {
        std::memcpy(&t.f[c], q, 4);
      }
      continue;
    }
    std::uint32_t u = 0;
    std::int32_t s = 0;
    if (f.bits == 8) {
      u = q[0];
      s = static_cast<std::int8_t>(q[0]);
    } else if (f.bits == 16) {
      std::uint16_t v;
      std::memcpy(&v, q, 2);
      u = v;
      s = static_cast<std::int16_t>(v);
    } else {
      std::memcpy(&u, q, 4);
      s = static_cast<std::int32_t>(u);
    }
    const bool is_signed = f.k == channel_format::kind::signed_int;
    t.u[c] = is_signed ? static_cast<std::uint32_t>(s) : u;
    if (o.normalize) {
      const float full = f.bits == 8 ? (is_signed ? 127.0f : 255.0f) : (is_signed ? 32767.0f : 65535.0f);
      t.f[c] = is_signed ? std::max(static_cast<float>(s) / full, -1.0f) : static_cast<float>(u) / full;
    }
  }
  t.is_float = o.returns_float;
}

void border_texel(const object& o, texel& t) {
  for (int c = 0; c < 4; ++c) {
    t.f[c] = o.texture.borderColor[c];
    t.u[c] = static_cast<std::uint32_t>(static_cast<std::int64_t>(o.texture.borderColor[c]));
  }
  t.is_float = o.returns_float;
}

// A texel index along one dimension of n texels, or -1 for the border.
long long address(long long i, long long n, cudaTextureAddressMode mode) {
  switch (mode) {
    case cudaAddressModeWrap:
      return ((i % n) + n) % n;
    case cudaAddressModeMirror: {
      long long m = ((i % (2 * n)) + 2 * n) % (2 * n);
      return m >= n ? 2 * n - 1 - m : m;
    }
    case cudaAddressModeBorder:
      return i < 0 || i >= n ? -1 : i;
    case cudaAddressModeClamp:
    default:
      return std::clamp<long long>(i, 0, n - 1);
  }
}

// The texel at (i, j, k) of slice `slice`, addressed per dimension.
void texel_at(const object& o, int dims, const long long* idx, const long long* n, const cudaTextureAddressMode* modes, std::size_t slice, texel& t) {
  long long at[3] = {0, 0, 0};
  for (int d = 0; d < dims; ++d) {
    at[d] = address(idx[d], n[d], modes[d]);
    if (at[d] < 0) return border_texel(o, t);
  }
  const std::size_t z = dims == 3 ? static_cast<std::size_t>(at[2]) : slice;
  read_texel(o, o.base + z * o.slice_pitch + static_cast<std::size_t>(at[1]) * o.row_pitch + static_cast<std::size_t>(at[0]) * o.format.element_bytes,
             t);
}

// Sampling of a 1-, 2- or 3-dimensional texture (or one slice of a layered or cubemap one).
texel filter(const object& o, int dims, const float* coords, std::size_t slice, bool force_normalized, bool force_clamp) {
  const long long n[3] = {static_cast<long long>(o.width), static_cast<long long>(o.height), static_cast<long long>(o.depth)};
  const bool normalized = force_normalized || o.texture.normalizedCoords;
  cudaTextureAddressMode modes[3];
  float x[3];
  for (int d = 0; d < dims; ++d) {
    cudaTextureAddressMode m = force_clamp ? cudaAddressModeClamp : o.texture.addressMode[d];
    float v = coords[d];
    if (normalized) {
      if (m == cudaAddressModeWrap) {
        v -= std::floor(v);
      } else if (m == cudaAddressModeMirror) {
        const float whole = std::floor(v);
        v -= whole;
        if (static_cast<long long>(whole) & 1) v = 1.0f - v;
      }
      v *= static_cast<float>(n[d]);
    } else if (m == cudaAddressModeWrap || m == cudaAddressModeMirror) {
      m = cudaAddressModeClamp;  // only normalized coordinates wrap or mirror
    }
    modes[d] = m;
    x[d] = v;
  }
  texel t{};
  if (o.texture.filterMode == cudaFilterModePoint) {
    long long idx[3];
    for (int d = 0; d < dims; ++d) idx[d] = static_cast<long long>(std::floor(x[d]));
    texel_at(o, dims, idx, n, modes, slice, t);
    return t;
  }
  long long base[3];
  float alpha[3];
  for (int d = 0; d < dims; ++d) {
    const float b = x[d] - 0.5f;
    const float i = std::floor(b);
    base[d] = static_cast<long long>(i);
    alpha[d] = std::nearbyint((b - i) * 256.0f) / 256.0f;  // 9-bit fixed point, 8 fractional bits
  }
  // Lerp along x for each corner of the other dimensions, then along y, then z.
  float acc[4] = {0, 0, 0, 0};
  const int corners = 1 << dims;
  for (int corner = 0; corner < corners; ++corner) {
    long long idx[3];
    float w = 1.0f;
    for (int d = 0; d < dims; ++d) {
      const bool upper = (corner >> d) & 1;
      idx[d] = base[d] + upper;
      w *= upper ? alpha[d] : 1.0f - alpha[d];
    }
    texel c{};
    texel_at(o, dims, idx, n, modes, slice, c);
    for (int k = 0; k < 4; ++k) acc[k] += w * c.f[k];
  }
  for (int k = 0; k < 4; ++k) t.f[k] = acc[k];
  t.is_float = true;
  return t;
}

// The face of a cubemap and the normalized coordinates on it.
int cube_face(float x, float y, float z, float& s, float& t) {
  const float ax = std::fabs(x), ay = std::fabs(y), az = std::fabs(z);
  int face;
  float m, sc, tc;
  if (ax >= ay && ax >= az) {
    face = x >= 0 ? 0 : 1;
    m = ax;
    sc = x >= 0 ? -z : z;
    tc = -y;
  } else if (ay >= az) {
    face = y >= 0 ? 2 : 3;
    m = ay;
    sc = x;
    tc = y >= 0 ? z : -z;
  } else {
    face = z >= 0 ? 4 : 5;
    m = az;
    sc = z >= 0 ? x : -x;
    tc = -y;
  }
  s = m > 0 ? (sc / m + 1.0f) * 0.5f : 0.5f;
  t = m > 0 ? (tc / m + 1.0f) * 0.5f : 0.5f;
  return face;
}

std::size_t layer_slice(const object& o, int layer, std::size_t per_layer) {
  const long long layers = static_cast<long long>(o.depth / per_layer);
  return static_cast<std::size_t>(std::clamp<long long>(layer, 0, std::max<long long>(layers - 1, 0))) * per_layer;
}

// Checks and resolves a surface access: false for an access that reads zeros or writes nothing.
bool surface_place(const object& o, shape s, int x, int y, int slice, std::size_t bytes, cudaSurfaceBoundaryMode mode, const char* call,
                   std::size_t& offset) {
  const long long row = static_cast<long long>(o.width * o.format.element_bytes);
  const long long rows = s == shape::d1 || s == shape::d1_layered ? 1 : static_cast<long long>(o.height);
  const long long slices = static_cast<long long>(o.depth);
  long long xx = x, yy = y, zz = slice;
  const bool inside = xx >= 0 && xx + static_cast<long long>(bytes) <= row && yy >= 0 && yy < rows && zz >= 0 && zz < slices;
  if (!inside) {
    if (mode == cudaBoundaryModeZero) return false;
    if (mode == cudaBoundaryModeClamp) {
      xx = std::clamp<long long>(xx, 0, std::max<long long>(row - static_cast<long long>(bytes), 0));
      yy = std::clamp<long long>(yy, 0, rows - 1);
      zz = std::clamp<long long>(zz, 0, slices - 1);
    } else {
      kernel_misuse(std::string(call) + " at byte " + std::to_string(x) + ", row " + std::to_string(y) + ", slice " + std::to_string(slice) +
                    " is outside the surface (" + std::to_string(row) + " bytes by " + std::to_string(rows) + " rows by " + std::to_string(slices) +
                    " slices) with cudaBoundaryModeTrap: on a GPU the kernel faults");
    }
  }
  offset = static_cast<std::size_t>(zz) * o.slice_pitch + static_cast<std::size_t>(yy) * o.row_pitch + static_cast<std::size_t>(xx);
  return true;
}

}  // namespace

texel fetch_index(cudaTextureObject_t texture, int x) {
  const object& o = object_of(texture, "tex1Dfetch");
  texel t{};
  if (x < 0 || static_cast<std::size_t>(x) >= o.width) {
    t.is_float = o.returns_float;  // outside the resource: zeros
    return t;
  }
  read_texel(o, o.base + static_cast<std::size_t>(x) * o.format.element_bytes, t);
  return t;
}

texel sample(cudaTextureObject_t texture, shape s, float x, float y, float z, int layer) {
  const object& o = object_of(texture, "a texture fetch");
  const float coords[3] = {x, y, z};
  switch (s) {
    case shape::d1:
      return filter(o, 1, coords, 0, false, false);
    case shape::d2:
      return filter(o, 2, coords, 0, false, false);
    case shape::d3:
      return filter(o, 3, coords, 0, false, false);
    case shape::d1_layered:
      return filter(o, 1, coords, layer_slice(o, layer, 1), false, false);
    case shape::d2_layered:
      return filter(o, 2, coords, layer_slice(o, layer, 1), false, false);
    case shape::cubemap:
    case shape::cubemap_layered: {
      float st[2];
      const int face = cube_face(x, y, z, st[0], st[1]);
      const std::size_t first = s == shape::cubemap ? 0 : layer_slice(o, layer, 6);
      return filter(o, 2, st, first + static_cast<std::size_t>(face), true, true);
    }
  }
  return texel{};
}

texel gather(cudaTextureObject_t texture, float x, float y, int component) {
  const object& o = object_of(texture, "tex2Dgather");
  const long long n[3] = {static_cast<long long>(o.width), static_cast<long long>(o.height), 1};
  float v[2] = {x, y};
  cudaTextureAddressMode modes[3] = {cudaAddressModeClamp, cudaAddressModeClamp, cudaAddressModeClamp};
  for (int d = 0; d < 2; ++d) {
    modes[d] = o.texture.addressMode[d];
    if (o.texture.normalizedCoords) {
      if (modes[d] == cudaAddressModeWrap) v[d] -= std::floor(v[d]);
      v[d] *= static_cast<float>(n[d]);
    } else if (modes[d] == cudaAddressModeWrap || modes[d] == cudaAddressModeMirror) {
      modes[d] = cudaAddressModeClamp;
    }
  }
  const long long i = static_cast<long long>(std::floor(v[0] - 0.5f)), j = static_cast<long long>(std::floor(v[1] - 0.5f));
  // x: (i, j+1), y: (i+1, j+1), z: (i+1, j), w: (i, j), as Direct3D's Gather orders them.
  const long long corners[4][2] = {{i, j + 1}, {i + 1, j + 1}, {i + 1, j}, {i, j}};
  const int c = std::clamp(component, 0, 3);
  texel out{};
  for (int k = 0; k < 4; ++k) {
    texel t{};
    texel_at(o, 2, corners[k], n, modes, 0, t);
    out.f[k] = t.f[c];
    out.u[k] = t.u[c];
  }
  out.is_float = o.returns_float;
  return out;
}

void surface_read(cudaSurfaceObject_t surface, shape s, int x, int y, int slice, void* out, std::size_t bytes, cudaSurfaceBoundaryMode mode) {
  const object& o = object_of(surface, "a surface read");
  std::size_t offset = 0;
  if (!surface_place(o, s, x, y, slice, bytes, mode, "a surface read", offset))
    std::memset(out, 0, bytes);
  else
    std::memcpy(out, o.base + offset, bytes);
}

void surface_write(cudaSurfaceObject_t surface, shape s, int x, int y, int slice, const void* in, std::size_t bytes, cudaSurfaceBoundaryMode mode) {
  const object& o = object_of(surface, "a surface write");
  std::size_t offset = 0;
  if (surface_place(o, s, x, y, slice, bytes, mode, "a surface write", offset)) std::memcpy(const_cast<unsigned char*>(o.base) + offset, in, bytes);
}

}  // namespace lockstep::emu::textures
