// What kernels call on texture and surface objects (CUDA's
// texture_indirect_functions.h and surface_indirect_functions.h): tex1Dfetch,
// tex1D, tex2D, tex3D, the layered and cubemap fetches, tex2Dgather and the
// Lod and Grad forms (no mipmaps here: the level and gradients are ignored),
// each also in the form that stores through a pointer; surf*read and
// surf*write with their boundary modes, x in bytes as in CUDA.
//
// The sampling itself is the emulator's (src/emulator/cuda_api/texture_sampling.cpp),
// as the Programming Guide's texture-fetching appendix describes it: address
// modes per texel, linear filtering with the half-texel offset and weights of
// 8 fractional bits, normalized-float reads of 8- and 16-bit integers. It
// answers up to four channels, as floats or as 32-bit integers; the templates
// here make the type the program asked for out of them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "lockstep/emu/runtime_textures.h"
#include "lockstep/emu/vector_types.h"

#define __TEXTURE_INDIRECT_FUNCTIONS_H__
#define __SURFACE_INDIRECT_FUNCTIONS_H__
#define __TEXTURE_FETCH_FUNCTIONS_H__
#define __SURFACE_FUNCTIONS_H__

namespace lockstep::emu::textures {

// What a fetch reads: four channels, floats when the texture returns floats
// (float channels, normalized-float reads, linear filtering), else integers
// (sign-extended for signed channels).
struct texel {
  float f[4];
  std::uint32_t u[4];
  bool is_float;
};

enum class shape : int { d1, d2, d3, d1_layered, d2_layered, cubemap, cubemap_layered };

texel fetch_index(cudaTextureObject_t texture, int x);
texel sample(cudaTextureObject_t texture, shape s, float x, float y, float z, int layer);
texel gather(cudaTextureObject_t texture, float x, float y, int component);
// `bytes` at byte x of row y of slice `slice` (the layer, face, or z).
void surface_read(cudaSurfaceObject_t surface, shape s, int x, int y, int slice, void* out, std::size_t bytes, cudaSurfaceBoundaryMode mode);
void surface_write(cudaSurfaceObject_t surface, shape s, int x, int y, int slice, const void* in, std::size_t bytes, cudaSurfaceBoundaryMode mode);

template <class C>
inline C component(const texel& t, int k) {
  if (t.is_float) return static_cast<C>(t.f[k]);
  if constexpr (std::is_floating_point_v<C>)
    return static_cast<C>(static_cast<std::int32_t>(t.u[k]));
  else if constexpr (std::is_signed_v<C>)
    return static_cast<C>(static_cast<std::int32_t>(t.u[k]));
  else
    return static_cast<C>(t.u[k]);
}

// The program's type from the channels: a scalar is channel x; a vector type takes as many channels as it has members.
template <class T>
inline T value_of(const texel& t) {
  if constexpr (std::is_arithmetic_v<T>) {
    return component<T>(t, 0);
  } else {
    T v{};
    using C = decltype(v.x);
    v.x = component<C>(t, 0);
    if constexpr (requires(T & a) { a.y; }) v.y = component<C>(t, 1);
    if constexpr (requires(T & a) { a.z; }) v.z = component<C>(t, 2);
    if constexpr (requires(T & a) { a.w; }) v.w = component<C>(t, 3);
    return v;
  }
}

}  // namespace lockstep::emu::textures

#define LOCKSTEP_TEX_BOTH(name, params, call)                                     \
  template <class T>                                                              \
  inline T name(cudaTextureObject_t tex LOCKSTEP_TEX_UNPAREN params) {            \
    return ::lockstep::emu::textures::value_of<T>(call);                          \
  }                                                                               \
  template <class T>                                                              \
  inline void name(T* ret, cudaTextureObject_t tex LOCKSTEP_TEX_UNPAREN params) { \
    *ret = ::lockstep::emu::textures::value_of<T>(call);                          \
  }
#define LOCKSTEP_TEX_UNPAREN(...) __VA_ARGS__
#define LOCKSTEP_TEX_SAMPLE(s, x, y, z, layer) ::lockstep::emu::textures::sample(tex, ::lockstep::emu::textures::shape::s, x, y, z, layer)

LOCKSTEP_TEX_BOTH(tex1Dfetch, (, int x), ::lockstep::emu::textures::fetch_index(tex, x))
LOCKSTEP_TEX_BOTH(tex1D, (, float x), LOCKSTEP_TEX_SAMPLE(d1, x, 0.0f, 0.0f, 0))
LOCKSTEP_TEX_BOTH(tex1DLod, (, float x, float), LOCKSTEP_TEX_SAMPLE(d1, x, 0.0f, 0.0f, 0))
LOCKSTEP_TEX_BOTH(tex1DGrad, (, float x, float, float), LOCKSTEP_TEX_SAMPLE(d1, x, 0.0f, 0.0f, 0))
LOCKSTEP_TEX_BOTH(tex2D, (, float x, float y), LOCKSTEP_TEX_SAMPLE(d2, x, y, 0.0f, 0))
LOCKSTEP_TEX_BOTH(tex2DLod, (, float x, float y, float), LOCKSTEP_TEX_SAMPLE(d2, x, y, 0.0f, 0))
LOCKSTEP_TEX_BOTH(tex2DGrad, (, float x, float y, float2, float2), LOCKSTEP_TEX_SAMPLE(d2, x, y, 0.0f, 0))
LOCKSTEP_TEX_BOTH(tex3D, (, float x, float y, float z), LOCKSTEP_TEX_SAMPLE(d3, x, y, z, 0))
LOCKSTEP_TEX_BOTH(tex3DLod, (, float x, float y, float z, float), LOCKSTEP_TEX_SAMPLE(d3, x, y, z, 0))
LOCKSTEP_TEX_BOTH(tex3DGrad, (, float x, float y, float z, float4, float4), LOCKSTEP_TEX_SAMPLE(d3, x, y, z, 0))
LOCKSTEP_TEX_BOTH(tex1DLayered, (, float x, int layer), LOCKSTEP_TEX_SAMPLE(d1_layered, x, 0.0f, 0.0f, layer))
LOCKSTEP_TEX_BOTH(tex1DLayeredLod, (, float x, int layer, float), LOCKSTEP_TEX_SAMPLE(d1_layered, x, 0.0f, 0.0f, layer))
LOCKSTEP_TEX_BOTH(tex1DLayeredGrad, (, float x, int layer, float, float), LOCKSTEP_TEX_SAMPLE(d1_layered, x, 0.0f, 0.0f, layer))
LOCKSTEP_TEX_BOTH(tex2DLayered, (, float x, float y, int layer), LOCKSTEP_TEX_SAMPLE(d2_layered, x, y, 0.0f, layer))
LOCKSTEP_TEX_BOTH(tex2DLayeredLod, (, float x, float y, int layer, float), LOCKSTEP_TEX_SAMPLE(d2_layered, x, y, 0.0f, layer))
LOCKSTEP_TEX_BOTH(tex2DLayeredGrad, (, float x, float y, int layer, float2, float2), LOCKSTEP_TEX_SAMPLE(d2_layered, x, y, 0.0f, layer))
LOCKSTEP_TEX_BOTH(texCubemap, (, float x, float y, float z), LOCKSTEP_TEX_SAMPLE(cubemap, x, y, z, 0))
LOCKSTEP_TEX_BOTH(texCubemapLod, (, float x, float y, float z, float), LOCKSTEP_TEX_SAMPLE(cubemap, x, y, z, 0))
LOCKSTEP_TEX_BOTH(texCubemapGrad, (, float x, float y, float z, float4, float4), LOCKSTEP_TEX_SAMPLE(cubemap, x, y, z, 0))
LOCKSTEP_TEX_BOTH(texCubemapLayered, (, float x, float y, float z, int layer), LOCKSTEP_TEX_SAMPLE(cubemap_layered, x, y, z, layer))
LOCKSTEP_TEX_BOTH(texCubemapLayeredLod, (, float x, float y, float z, int layer, float), LOCKSTEP_TEX_SAMPLE(cubemap_layered, x, y, z, layer))
LOCKSTEP_TEX_BOTH(texCubemapLayeredGrad, (, float x, float y, float z, int layer, float4, float4),
                  LOCKSTEP_TEX_SAMPLE(cubemap_layered, x, y, z, layer))
LOCKSTEP_TEX_BOTH(tex2Dgather, (, float x, float y, int comp = 0), ::lockstep::emu::textures::gather(tex, x, y, comp))
#undef LOCKSTEP_TEX_SAMPLE
#undef LOCKSTEP_TEX_UNPAREN
#undef LOCKSTEP_TEX_BOTH

// The sparse-texture forms: every texel is resident here.
template <class T>
inline T tex2D(cudaTextureObject_t tex, float x, float y, bool* is_resident) {
  *is_resident = true;
  return tex2D<T>(tex, x, y);
}
template <class T>
inline T tex3D(cudaTextureObject_t tex, float x, float y, float z, bool* is_resident) {
  *is_resident = true;
  return tex3D<T>(tex, x, y, z);
}
template <class T>
inline T tex2DLayered(cudaTextureObject_t tex, float x, float y, int layer, bool* is_resident) {
  *is_resident = true;
  return tex2DLayered<T>(tex, x, y, layer);
}

#define LOCKSTEP_SURF(name, s, params, x, y, slice)                                                                                             \
  template <class T>                                                                                                                            \
  inline T name##read(cudaSurfaceObject_t surf LOCKSTEP_SURF_UNPAREN params, cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {             \
    T v;                                                                                                                                        \
    ::lockstep::emu::textures::surface_read(surf, ::lockstep::emu::textures::shape::s, x, y, slice, &v, sizeof(T), mode);                       \
    return v;                                                                                                                                   \
  }                                                                                                                                             \
  template <class T>                                                                                                                            \
  inline void name##read(T* ret, cudaSurfaceObject_t surf LOCKSTEP_SURF_UNPAREN params, cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {  \
    ::lockstep::emu::textures::surface_read(surf, ::lockstep::emu::textures::shape::s, x, y, slice, ret, sizeof(T), mode);                      \
  }                                                                                                                                             \
  template <class T>                                                                                                                            \
  inline void name##write(T data, cudaSurfaceObject_t surf LOCKSTEP_SURF_UNPAREN params, cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) { \
    ::lockstep::emu::textures::surface_write(surf, ::lockstep::emu::textures::shape::s, x, y, slice, &data, sizeof(T), mode);                   \
  }
#define LOCKSTEP_SURF_UNPAREN(...) __VA_ARGS__

LOCKSTEP_SURF(surf1D, d1, (, int x), x, 0, 0)
LOCKSTEP_SURF(surf2D, d2, (, int x, int y), x, y, 0)
LOCKSTEP_SURF(surf3D, d3, (, int x, int y, int z), x, y, z)
LOCKSTEP_SURF(surf1DLayered, d1_layered, (, int x, int layer), x, 0, layer)
LOCKSTEP_SURF(surf2DLayered, d2_layered, (, int x, int y, int layer), x, y, layer)
LOCKSTEP_SURF(surfCubemap, cubemap, (, int x, int y, int face), x, y, face)
LOCKSTEP_SURF(surfCubemapLayered, cubemap_layered, (, int x, int y, int layerface), x, y, layerface)
#undef LOCKSTEP_SURF_UNPAREN
#undef LOCKSTEP_SURF
