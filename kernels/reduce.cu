// Reductions along one dimension of a strided tensor (sum, max, min, prod,
// mean), minitorch's reduce: the output has the input's shape with the
// reduced dimension of extent 1; one thread per output element walks the
// reduced dimension, accumulating in a wider type (float for half types,
// double for float and double, int64 for integers).
//
// Variant 1 (reduce_dim): a thread per output. Variant 2 (reduce_all, below):
// every element of a contiguous tensor to one value at memory bandwidth.
#pragma once
#include "lockstep/cuda.h"
#include "lockstep/kernels/dtypes.h"
#include "lockstep/kernels/op_codes.h"
#include "lockstep/kernels/reduce_recipes.h"
#include "strided.cuh"
#include "vector16.cuh"

namespace lockstep::kernels {

// The type a reduction of T accumulates in: the kernel type of the dtype's
// `accumulate` column in lockstep/kernels/dtypes.h.
namespace dtype_types {
#define LOCKSTEP_DTYPE_TYPE(name, text, kernel_type, ...) using name = kernel_type;
LOCKSTEP_DTYPES(LOCKSTEP_DTYPE_TYPE)
#undef LOCKSTEP_DTYPE_TYPE
}  // namespace dtype_types
template <class T>
struct accumulate_type;
#define LOCKSTEP_ACCUMULATE_TYPE(name, text, kernel_type, size, scalar, floating, accumulate) \
  template <>                                                                                 \
  struct accumulate_type<kernel_type> {                                                       \
    using type = dtype_types::accumulate;                                                     \
  };
LOCKSTEP_DTYPES(LOCKSTEP_ACCUMULATE_TYPE)
#undef LOCKSTEP_ACCUMULATE_TYPE

template <class A>
__host__ __device__ inline A lowest_value() {
  return -9223372036854775807LL - 1;
}  // long long
template <>
__host__ __device__ inline float lowest_value<float>() {
  return -INFINITY;
}
template <>
__host__ __device__ inline double lowest_value<double>() {
  return -static_cast<double>(INFINITY);
}
template <class A>
__host__ __device__ inline A highest_value() {
  return 9223372036854775807LL;
}
template <>
__host__ __device__ inline float highest_value<float>() {
  return INFINITY;
}
template <>
__host__ __device__ inline double highest_value<double>() {
  return static_cast<double>(INFINITY);
}

// Each op's row of LOCKSTEP_REDUCE_OPS (lockstep/kernels/op_codes.h).
template <reduce_op Op>
struct reduce_math;
#define LOCKSTEP_REDUCE_MATH(name, divides, identity_value, ...) \
  template <>                                                    \
  struct reduce_math<reduce_op::name> {                          \
    static constexpr bool divides_by_count = divides;            \
    template <class A>                                           \
    __host__ __device__ static A identity() {                    \
      return identity_value;                                     \
    }                                                            \
    template <class A>                                           \
    __host__ __device__ static A combine(A acc, A x) {           \
      return __VA_ARGS__;                                        \
    }                                                            \
  };
LOCKSTEP_REDUCE_OPS(LOCKSTEP_REDUCE_MATH)
#undef LOCKSTEP_REDUCE_MATH

template <reduce_op Op, class A>
__host__ __device__ inline A reduce_identity() {
  return reduce_math<Op>::template identity<A>();
}
template <reduce_op Op, class A>
__host__ __device__ inline A reduce_combine(A acc, A x) {
  return reduce_math<Op>::combine(acc, x);
}
// The op chosen at run time: f(std::integral_constant<reduce_op, op>{}).
template <class F>
__host__ __device__ inline auto with_reduce_op(reduce_op op, F f) -> decltype(f(std::integral_constant<reduce_op, reduce_op::sum>{})) {
  switch (op) {
#define LOCKSTEP_REDUCE_CASE(name, ...) \
  case reduce_op::name:                 \
    return f(std::integral_constant<reduce_op, reduce_op::name>{});
    LOCKSTEP_REDUCE_OPS(LOCKSTEP_REDUCE_CASE)
#undef LOCKSTEP_REDUCE_CASE
  }
  return f(std::integral_constant<reduce_op, reduce_op::sum>{});
}
// A combine with the op chosen at run time, where the choice is cheap beside
// the work around it (a block's last few combines).
template <class A>
__host__ __device__ inline A reduce_combine(reduce_op op, A acc, A x) {
  return with_reduce_op(op, [&](auto o) { return reduce_combine<decltype(o)::value>(acc, x); });
}

template <reduce_op Op, class T>
__device__ void reduce_dim_for(T* out, const strided_layout& out_layout, const T* in, const strided_layout& in_layout, int dim, long long n_out) {
  using A = typename accumulate_type<T>::type;
  const long long extent = in_layout.shape[dim], step = in_layout.strides[dim];
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n_out; i += (long long)gridDim.x * blockDim.x) {
    // out_layout has extent 1 at `dim`, so the ordinal walks the other
    // dimensions and lands on element 0 of the reduced one.
    const T* row = in + position_of(i, out_layout, in_layout);
    A acc = static_cast<A>(static_cast<typename compute_type<T>::type>(row[0]));
    for (long long j = 1; j < extent; ++j) acc = reduce_combine<Op>(acc, static_cast<A>(static_cast<typename compute_type<T>::type>(row[j * step])));
    if (reduce_math<Op>::divides_by_count) acc = acc / static_cast<A>(extent);
    out[position_of(i, out_layout, out_layout)] = static_cast<T>(acc);
  }
}

template <class T>
__global__ void reduce_dim(T* out, strided_layout out_layout, const T* in, strided_layout in_layout, int dim, long long n_out, int op) {
  with_reduce_op(static_cast<reduce_op>(op), [&](auto o) { reduce_dim_for<decltype(o)::value>(out, out_layout, in, in_layout, dim, n_out); });
}

// argmax (want_max) and argmin along `dim`: the index of the first extreme
// element, a NaN counting as the extreme (as PyTorch's).
template <class T>
__global__ void arg_reduce_dim(long long* out, strided_layout out_layout, const T* in, strided_layout in_layout, int dim, long long n_out,
                               int want_max) {
  using C = typename compute_type<T>::type;
  const long long extent = in_layout.shape[dim], step = in_layout.strides[dim];
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n_out; i += (long long)gridDim.x * blockDim.x) {
    const T* row = in + position_of(i, out_layout, in_layout);
    C best = static_cast<C>(row[0]);
    long long at = 0;
    for (long long j = 1; j < extent && best == best; ++j) {
      const C x = static_cast<C>(row[j * step]);
      if (x != x || (want_max ? x > best : x < best)) best = x, at = j;
    }
    out[position_of(i, out_layout, out_layout)] = at;
  }
}

// ---------------------------------------------------------------- all elements at bandwidth
//
// Variant 2: reduce_all reduces every element of a contiguous tensor to one
// value at memory bandwidth, in two launches and no atomics (so the result is
// the same every run for the same grid):
//   reduce_all_blocks: a grid-stride loop over 16-byte vectors (float4 for
//     float, 8 halves, 16 bytes, ...), reduce_all_launch::unroll independent loads in
//     flight per thread, accumulated per thread in accumulate_type; then a
//     warp-shuffle reduction and one across the block's warps in shared
//     memory; one partial per block into `partials`.
//   reduce_all_finish: one block folds the partials the same way and writes
//     the result (divided by n for mean).
// Elements before the first 16-byte boundary of `in` and after the last whole
// vector take a scalar path. Empty inputs give the op's identity (0 for sum,
// 1 for prod); the tensor layer rejects empty max, min and mean.
// NaNs are skipped by max and min (as reduce_dim does after its first element).
// H100, sum of 2^28 floats (lockstep bench, 2026-11-22): 362 us, 2962 GB/s of
// reads, 1.01 of the device copy's 2927 GB/s (a copy also writes; a
// reduction only reads).
// The launch: 1-D, blockDim.x a multiple of 32, any grid (the tensor layer:
// reduce_all_launch, lockstep/kernels/reduce_recipes.h).

template <class T>
__device__ inline typename accumulate_type<T>::type widen(T x) {
  return static_cast<typename accumulate_type<T>::type>(static_cast<typename compute_type<T>::type>(x));
}

// This thread's share of in[0, n), grid-strided.
template <reduce_op Op, class T>
__device__ typename accumulate_type<T>::type reduce_all_thread(const T* in, long long n) {
  using A = typename accumulate_type<T>::type;
  constexpr int lanes = vector16<T>::size, in_flight = reduce_all_launch::unroll;
  A acc = reduce_identity<Op, A>();
  const long long thread = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  const long long threads = static_cast<long long>(gridDim.x) * blockDim.x;
  // Elements up to the first 16-byte boundary, then whole vectors, then the rest.
  const unsigned long long address = reinterpret_cast<unsigned long long>(in);
  long long head = address % 16 == 0 ? 0 : address % sizeof(T) != 0 ? n : static_cast<long long>((16 - address % 16) / sizeof(T));
  if (head > n) head = n;
  const long long vectors = (n - head) / lanes;
  const vector16<T>* v = reinterpret_cast<const vector16<T>*>(in + head);
  long long i = thread;
  for (; i + (in_flight - 1) * threads < vectors; i += in_flight * threads) {
    vector16<T> chunk[in_flight];
#pragma unroll
    for (int u = 0; u < in_flight; ++u) chunk[u] = v[i + u * threads];
#pragma unroll
    for (int u = 0; u < in_flight; ++u)
#pragma unroll
      for (int k = 0; k < lanes; ++k) acc = reduce_combine<Op>(acc, widen(chunk[u].lane[k]));
  }
  for (; i < vectors; i += threads) {
    const vector16<T> chunk = v[i];
#pragma unroll
    for (int k = 0; k < lanes; ++k) acc = reduce_combine<Op>(acc, widen(chunk.lane[k]));
  }
  for (long long j = thread; j < head; j += threads) acc = reduce_combine<Op>(acc, widen(in[j]));
  for (long long j = head + vectors * lanes + thread; j < n; j += threads) acc = reduce_combine<Op>(acc, widen(in[j]));
  return acc;
}

// The block's values combined; the result is valid in thread 0. The op is
// chosen at each of the few combines here, so that the kernels call this
// once, outside any switch: the emulator's region loops then run it for
// the whole block (a switch around a barrier would keep them on fibers).
template <class A>
__device__ A reduce_all_block(reduce_op op, A acc, A* warp_results) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) acc = reduce_combine(op, acc, __shfl_down_sync(0xffffffffu, acc, offset));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  if (lane == 0) warp_results[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = lane < warps ? warp_results[lane] : with_reduce_op(op, [](auto o) { return reduce_identity<decltype(o)::value, A>(); });
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) acc = reduce_combine(op, acc, __shfl_down_sync(0xffffffffu, acc, offset));
  }
  return acc;
}

template <class T>
__global__ void reduce_all_blocks(typename accumulate_type<T>::type* partials, const T* in, long long n, int op) {
  __shared__ typename accumulate_type<T>::type warp_results[32];
  const reduce_op which = static_cast<reduce_op>(op);
  const typename accumulate_type<T>::type acc =
      reduce_all_block(which, with_reduce_op(which, [&](auto o) { return reduce_all_thread<decltype(o)::value>(in, n); }), warp_results);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

// One block: out[0] = the `count` partials combined (divided by n for the ops that divide).
template <class T>
__global__ void reduce_all_finish(T* out, const typename accumulate_type<T>::type* partials, int count, long long n, int op) {
  __shared__ typename accumulate_type<T>::type warp_results[32];
  const reduce_op which = static_cast<reduce_op>(op);
  using A = typename accumulate_type<T>::type;
  A acc = with_reduce_op(which, [](auto o) { return reduce_identity<decltype(o)::value, A>(); });
  for (int i = threadIdx.x; i < count; i += blockDim.x) acc = reduce_combine(which, acc, partials[i]);
  acc = reduce_all_block(which, acc, warp_results);
  const bool divides = with_reduce_op(which, [](auto o) { return reduce_math<decltype(o)::value>::divides_by_count; });
  if (threadIdx.x == 0) out[0] = static_cast<T>(divides && n ? acc / static_cast<A>(n) : acc);
}

}  // namespace lockstep::kernels
