// Elementwise kernels over strided tensors: map (one input) and zip (two
// inputs, already broadcast to the output's shape by the tensor layer), for
// every dtype, the operation chosen at run time. One thread per output
// element, grid-stride so any grid size covers any tensor.
//
// Variant 1, *_strided: position from the ordinal by division per dimension;
// correct for any layout. Variant 2, *_contiguous: packed operands of the
// output's shape (no views, no broadcasting), 16 bytes per access. Beside
// them, of the same strided shape: comparisons to bool, where, the gather of
// integer-array indexing, and the fills behind arange, linspace and the
// random numbers.
#pragma once
#include "lockstep/cuda.h"
#include "lockstep/kernels/op_codes.h"
#include "lockstep/kernels/op_functions.h"
#include "strided.cuh"
#include "unary_ops.cuh"  // apply_unary
#include "vector16.cuh"

namespace lockstep::kernels {

// The op's function (lockstep/kernels/op_functions.h) in the compute type C,
// except that the in_double rows compute floating operands in double, their
// result rounded once to C.
template <class C>
__host__ __device__ inline C apply_binary(binary_op op, C a, C b) {
  switch (op) {
#define LOCKSTEP_BINARY_CASE(name, gives_bool, integers_only, in_double, ...)                       \
  case binary_op::name:                                                                             \
    if constexpr (in_double && !arithmetic::is_integer<C>())                                        \
      return static_cast<C>(binary_##name<double>(static_cast<double>(a), static_cast<double>(b))); \
    else                                                                                            \
      return binary_##name<C>(a, b);
    LOCKSTEP_BINARY_OPS(LOCKSTEP_BINARY_CASE)
#undef LOCKSTEP_BINARY_CASE
  }
  return a;
}

template <class T>
__global__ void map_strided(T* out, strided_layout out_layout, const T* in, strided_layout in_layout, long long n, int op) {
  using C = typename compute_type<T>::type;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const C x = static_cast<C>(in[position_of(i, out_layout, in_layout)]);
    out[position_of(i, out_layout, out_layout)] = static_cast<T>(apply_unary(static_cast<unary_op>(op), x));
  }
}

template <class T>
__global__ void zip_strided(T* out, strided_layout out_layout, const T* a, strided_layout a_layout, const T* b, strided_layout b_layout, long long n,
                            int op) {
  using C = typename compute_type<T>::type;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const C x = static_cast<C>(a[position_of(i, out_layout, a_layout)]);
    const C y = static_cast<C>(b[position_of(i, out_layout, b_layout)]);
    out[position_of(i, out_layout, out_layout)] = static_cast<T>(apply_binary(static_cast<binary_op>(op), x, y));
  }
}

// The comparison and logical ops (gives_bool in LOCKSTEP_BINARY_OPS): the
// same math, stored as bool.
template <class T>
__global__ void compare_strided(bool* out, strided_layout out_layout, const T* a, strided_layout a_layout, const T* b, strided_layout b_layout,
                                long long n, int op) {
  using C = typename compute_type<T>::type;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const C x = static_cast<C>(a[position_of(i, out_layout, a_layout)]);
    const C y = static_cast<C>(b[position_of(i, out_layout, b_layout)]);
    out[position_of(i, out_layout, out_layout)] = apply_binary(static_cast<binary_op>(op), x, y) != C(0);
  }
}

// where(condition, a, b), all broadcast to the output's shape.
template <class T>
__global__ void where_strided(T* out, strided_layout out_layout, const bool* condition, strided_layout condition_layout, const T* a,
                              strided_layout a_layout, const T* b, strided_layout b_layout, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    out[position_of(i, out_layout, out_layout)] =
        condition[position_of(i, out_layout, condition_layout)] ? a[position_of(i, out_layout, a_layout)] : b[position_of(i, out_layout, b_layout)];
}

// Integer-array indexing along `dim` (a gather): output element i takes the
// input at index[i's coordinate along dim] there. in_layout is the input's,
// over the output's shape, with stride 0 at dim; dim_stride its real stride.
template <class T>
__global__ void index_select_strided(T* out, strided_layout out_layout, const T* in, strided_layout in_layout, const long long* index, int dim,
                                     long long dim_stride, long long n) {
  long long inner = 1;
  for (int d = out_layout.ndim - 1; d > dim; --d) inner *= out_layout.shape[d];
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const long long at = index[(i / inner) % out_layout.shape[dim]];
    out[position_of(i, out_layout, out_layout)] = in[position_of(i, out_layout, in_layout) + at * dim_stride];
  }
}

// arange and linspace: start + i * step in double; with `from_end`, elements
// of the second half count back from `end` (as PyTorch's linspace, so both
// ends are exact).
template <class T>
__global__ void iota_strided(T* out, strided_layout out_layout, long long n, double start, double step, double end, int from_end) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const double v = from_end && i >= n / 2 ? end - static_cast<double>(n - 1 - i) * step : start + static_cast<double>(i) * step;
    out[position_of(i, out_layout, out_layout)] = static_cast<T>(static_cast<typename compute_type<T>::type>(v));
  }
}

// Counter-based random numbers: element i is a hash of (seed, offset + i),
// so a seed gives the same numbers on every device and any launch shape.
__host__ __device__ inline unsigned long long mix64(unsigned long long x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
__host__ __device__ inline double uniform01(unsigned long long seed, unsigned long long counter) {
  return static_cast<double>(mix64(seed ^ mix64(counter + 0x9e3779b97f4a7c15ULL)) >> 11) * 0x1.0p-53;
}
// kind 0: uniform in [low, high); 1: normal with mean low and deviation high
// (Box-Muller over two uniforms); 2: integers in [low, high).
template <class T>
__global__ void random_strided(T* out, strided_layout out_layout, long long n, unsigned long long seed, unsigned long long offset, int kind,
                               double low, double high) {
  using C = typename compute_type<T>::type;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const unsigned long long counter = 2 * (offset + static_cast<unsigned long long>(i));
    const double u = uniform01(seed, counter);
    double v;
    if (kind == 1) {
      const double r = sqrt(-2.0 * log(1.0 - u)), angle = 6.283185307179586 * uniform01(seed, counter + 1);
      v = low + high * r * cos(angle);
    } else if (kind == 2) {
      v = low + floor(u * (high - low));
    } else {
      v = low + u * (high - low);
    }
    C value = static_cast<C>(v);
    if (kind == 0 && !(static_cast<double>(value) < high)) value = static_cast<C>(low);  // rounding to the dtype may reach `high`
    out[position_of(i, out_layout, out_layout)] = static_cast<T>(value);
  }
}

// Variant 2: when every operand is packed and of the output's shape, element
// i of each is at offset i, so a thread takes 16 bytes of each (4 floats, 8
// halves, 16 bytes) with one vector load and store instead of an index
// computed per dimension and a scalar access per element. Launched with a
// thread per vector (as the grayscale kernel, whose grid-stride variant was
// slower on the H100); the loop covers smaller grids. Elements past the last
// whole vector, and operands off a 16-byte boundary, take the scalar path.
// H100, 2^28 floats (lockstep bench, 2026-11-22): relu 3002 GB/s and add 3056 GB/s,
// 1.03 and 1.05 of the device copy's 2923 GB/s.
template <class T, class F>
__device__ inline void for_each_vector(long long n, bool aligned, F&& f) {
  const long long vectors = aligned ? n / vector16<T>::size : 0, stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long first = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  for (long long v = first; v < vectors; v += stride) f(v * vector16<T>::size, vector16<T>::size);
  for (long long i = vectors * vector16<T>::size + first; i < n; i += stride) f(i, 1);
}

template <class T>
__global__ void map_contiguous(T* out, const T* in, long long n, int op) {
  using C = typename compute_type<T>::type;
  for_each_vector<T>(n, aligned16(out) && aligned16(in), [&](long long i, int count) {
    if (count == 1) {
      out[i] = static_cast<T>(apply_unary(static_cast<unary_op>(op), static_cast<C>(in[i])));
      return;
    }
    vector16<T> x = *reinterpret_cast<const vector16<T>*>(in + i);
#pragma unroll
    for (int e = 0; e < vector16<T>::size; ++e) x.lane[e] = static_cast<T>(apply_unary(static_cast<unary_op>(op), static_cast<C>(x.lane[e])));
    *reinterpret_cast<vector16<T>*>(out + i) = x;
  });
}

template <class T>
__global__ void zip_contiguous(T* out, const T* a, const T* b, long long n, int op) {
  using C = typename compute_type<T>::type;
  for_each_vector<T>(n, aligned16(out) && aligned16(a) && aligned16(b), [&](long long i, int count) {
    if (count == 1) {
      out[i] = static_cast<T>(apply_binary(static_cast<binary_op>(op), static_cast<C>(a[i]), static_cast<C>(b[i])));
      return;
    }
    vector16<T> x = *reinterpret_cast<const vector16<T>*>(a + i);
    const vector16<T> y = *reinterpret_cast<const vector16<T>*>(b + i);
#pragma unroll
    for (int e = 0; e < vector16<T>::size; ++e)
      x.lane[e] = static_cast<T>(apply_binary(static_cast<binary_op>(op), static_cast<C>(x.lane[e]), static_cast<C>(y.lane[e])));
    *reinterpret_cast<vector16<T>*>(out + i) = x;
  });
}

// Casts between dtypes (the copy behind Tensor.to(dtype)).
template <class From, class To>
__global__ void cast_strided(To* out, strided_layout out_layout, const From* in, strided_layout in_layout, long long n) {
  using C = typename compute_type<From>::type;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    out[position_of(i, out_layout, out_layout)] = static_cast<To>(static_cast<C>(in[position_of(i, out_layout, in_layout)]));
}

// A user's own function object, for C++ callers: map with any callable that
// the compiler can run on the device (a __device__ functor, or an extended
// __device__ lambda under nvcc).
template <class F, class T, class U>
__global__ void map_functor(U* out, strided_layout out_layout, const T* in, strided_layout in_layout, long long n, F f) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    out[position_of(i, out_layout, out_layout)] = f(in[position_of(i, out_layout, in_layout)]);
}

}  // namespace lockstep::kernels
