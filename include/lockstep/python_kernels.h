// What kernels written in Python (lockstep.cuda, numba's CUDA kernel language)
// compile to: numba's arrays (shape and byte strides, negative indices counted
// from the end, views by integer and slice), Python's arithmetic where it
// differs from C++ (floor division, modulo, powers and rounding, from
// lockstep/python_arithmetic.h), and numba's atomics over CUDA's. The
// translator (python/lockstep/cuda/_translate.py) writes plain CUDA C++ over
// this header, for the host compiler and NVRTC alike, so it uses nothing from
// the C++ library.
#pragma once

#include "lockstep/cuda.h"
#include "lockstep/python_arithmetic.h"
#include "lockstep/python_random.h"
#if defined(__CUDACC_RTC__) && defined(LOCKSTEP_PY_FLOAT16)
// numba's float16 under NVRTC, from the CUDA toolkit's headers (the
// dispatcher adds their folder); nvcc and the emulator have it from cuda.h.
#include <cuda_fp16.h>
#endif

namespace lockstep::py {

using i64 = long long;
using u64 = unsigned long long;

template <class T>
struct is_unsigned {
  static constexpr bool value = T(0) < T(-1);
};

// A Python slice: absent bounds are flagged; the step is never 0 (checked
// where the slice is made).
struct slice {
  i64 start, stop, step;
  bool has_start, has_stop;
};

__device__ __forceinline__ slice make_slice(bool has_start, i64 start, bool has_stop, i64 stop, i64 step) {
  if (step == 0) __trap();
  return slice{start, stop, step, has_start, has_stop};
}

// numba's array: the first element, the extents, and strides in bytes.
// `Contiguous` (numba's layout "C") computes offsets from the extents alone.
template <class T, int N, bool Contiguous>
struct array {
  T* data;
  i64 shape[N];
  i64 strides[N];

  __device__ __forceinline__ i64 size() const {
    i64 n = 1;
    for (int d = 0; d < N; ++d) n *= shape[d];
    return n;
  }

  template <class I>
  __device__ __forceinline__ i64 wrap(I index, int d) const {
    if constexpr (is_unsigned<I>::value)
      return static_cast<i64>(index);
    else
      return index < 0 ? static_cast<i64>(index) + shape[d] : static_cast<i64>(index);
  }

  // One element: every dimension indexed.
  template <class... I>
  __device__ __forceinline__ T& operator()(I... index) const {
    static_assert(sizeof...(I) == N, "an element needs one index per dimension");
    i64 at[N];
    int d = 0;
    ((at[d] = wrap(index, d), ++d), ...);
    if constexpr (Contiguous) {
      i64 offset = 0;
      for (int k = 0; k < N; ++k) offset = offset * shape[k] + at[k];
      return data[offset];
    } else {
      char* p = reinterpret_cast<char*>(data);
      for (int k = 0; k < N; ++k) p += at[k] * strides[k];
      return *reinterpret_cast<T*>(p);
    }
  }

  // The sub-array of the leading K indices (numba's a[i] on a 2-D array).
  template <int K, class... I>
  __device__ __forceinline__ array<T, N - K, Contiguous> leading(I... index) const {
    static_assert(sizeof...(I) == K && K < N, "a view keeps at least one dimension");
    array<T, N - K, Contiguous> out;
    char* p = reinterpret_cast<char*>(data);
    int d = 0;
    ((p += wrap(index, d) * strides[d], ++d), ...);
    out.data = reinterpret_cast<T*>(p);
    for (int k = K; k < N; ++k) {
      out.shape[k - K] = shape[k];
      out.strides[k - K] = strides[k];
    }
    return out;
  }

  // Dimension d cut by a slice, with Python's clamping of the bounds.
  __device__ __forceinline__ array<T, N, false> sliced(int d, slice s) const {
    const i64 n = shape[d];
    i64 start, stop;
    if (s.step > 0) {
      start = !s.has_start ? 0 : s.start < 0 ? (s.start + n < 0 ? 0 : s.start + n) : (s.start > n ? n : s.start);
      stop = !s.has_stop ? n : s.stop < 0 ? (s.stop + n < 0 ? 0 : s.stop + n) : (s.stop > n ? n : s.stop);
    } else {
      start = !s.has_start ? n - 1 : s.start < 0 ? (s.start + n < 0 ? -1 : s.start + n) : (s.start >= n ? n - 1 : s.start);
      stop = !s.has_stop ? -1 : s.stop < 0 ? (s.stop + n < 0 ? -1 : s.stop + n) : (s.stop >= n ? n - 1 : s.stop);
    }
    i64 count = s.step > 0 ? (stop - start + s.step - 1) / s.step : (start - stop - s.step - 1) / (-s.step);
    if (count < 0) count = 0;
    array<T, N, false> out;
    out.data = reinterpret_cast<T*>(reinterpret_cast<char*>(data) + (count > 0 ? start * strides[d] : 0));
    for (int k = 0; k < N; ++k) {
      out.shape[k] = shape[k];
      out.strides[k] = strides[k];
    }
    out.shape[d] = count;
    out.strides[d] = strides[d] * s.step;
    return out;
  }

  __device__ __forceinline__ array<T, N, false> strided() const {
    array<T, N, false> out;
    out.data = data;
    for (int k = 0; k < N; ++k) {
      out.shape[k] = shape[k];
      out.strides[k] = strides[k];
    }
    return out;
  }
};

// a[...] = value: every element of a view (numba broadcasts a scalar over a slice).
template <class T, int N, bool C, class V>
__device__ __forceinline__ void fill(const array<T, N, C>& a, V value) {
  const i64 n = a.size();
  for (i64 flat = 0; flat < n; ++flat) {
    char* p = reinterpret_cast<char*>(a.data);
    i64 rest = flat;
    for (int k = N - 1; k >= 0; --k) {
      p += (rest % a.shape[k]) * a.strides[k];
      rest /= a.shape[k];
    }
    *reinterpret_cast<T*>(p) = static_cast<T>(value);
  }
}

// a[...] = b[...]: element by element, same shapes (checked by the translator where known).
template <class T, int N, bool C, class U, bool D>
__device__ __forceinline__ void fill(const array<T, N, C>& a, const array<U, N, D>& b) {
  const i64 n = a.size();
  for (i64 flat = 0; flat < n; ++flat) {
    char* p = reinterpret_cast<char*>(a.data);
    char* q = reinterpret_cast<char*>(b.data);
    i64 rest = flat;
    for (int k = N - 1; k >= 0; --k) {
      const i64 index = rest % a.shape[k];
      p += index * a.strides[k];
      q += (b.shape[k] == 1 ? 0 : index) * b.strides[k];
      rest /= a.shape[k];
    }
    *reinterpret_cast<T*>(p) = static_cast<T>(*reinterpret_cast<U*>(q));
  }
}

// A view over storage the kernel declares (shared, local and constant
// arrays), row-major.
template <class T, int N>
__device__ __forceinline__ array<T, N, true> over(T* storage, const i64 (&extents)[N]) {
  array<T, N, true> out;
  out.data = storage;
  i64 stride = sizeof(T);
  for (int k = N - 1; k >= 0; --k) {
    out.shape[k] = extents[k];
    out.strides[k] = stride;
    stride *= extents[k];
  }
  return out;
}

// A homogeneous tuple (shapes, cuda.grid(2), tuple literals of one type).
template <class T, int N>
struct tuple {
  T item[N];
  __device__ __forceinline__ T operator[](i64 i) const { return item[i < 0 ? i + N : i]; }
};

// A tuple of mixed types (numba's Tuple): the first item, then the rest.
// python/lockstep/cuda/_types.py's size_and_alignment mirrors this layout.
template <class... T>
struct record {};
template <class T0, class... Rest>
struct record<T0, Rest...> {
  T0 first;
  record<Rest...> rest;
};

template <int K, class R>
__device__ __forceinline__ auto& get(R&& r) {
  if constexpr (K == 0)
    return r.first;
  else
    return get<K - 1>(r.rest);
}

// A tuple of another item type (a variable that holds int32 pairs and int64 pairs is an int64 pair).
template <class T, class U, int N>
__device__ __forceinline__ tuple<T, N> convert(const tuple<U, N>& t) {
  tuple<T, N> out;
  for (int k = 0; k < N; ++k) out.item[k] = static_cast<T>(t.item[k]);
  return out;
}

template <class T, int N>
__device__ __forceinline__ tuple<i64, N> shape_of(const T (&extents)[N]) {
  tuple<i64, N> out;
  for (int k = 0; k < N; ++k) out.item[k] = extents[k];
  return out;
}

template <class T>
__device__ __forceinline__ T abs_of(T x) {
  return x < 0 ? static_cast<T>(-x) : x;
}

// Python's min and max: the first of equal values.
template <class T>
__device__ __forceinline__ T min_of(T a, T b) {
  return b < a ? b : a;
}
template <class T>
__device__ __forceinline__ T max_of(T a, T b) {
  return b > a ? b : a;
}

// numba's cuda.laneid: the thread's place in its warp of the block's linear order.
__device__ __forceinline__ int lane_id() { return static_cast<int>((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u); }

// numba's cuda.activemask(): the lanes that reach this call site together. The
// emulator's __activemask gathers every running lane of the warp wherever it
// waits, so there the lanes are sorted by call site afterwards.
__device__ __forceinline__ unsigned activemask_at(int call_site) {
#ifdef __CUDA_ARCH__
  (void)call_site;
  return __activemask();
#else
  return __match_any_sync(__activemask(), call_site);
#endif
}

// Python's //, % and ** (lockstep/python_arithmetic.h, shared with the
// eager tensor ops and fusion): division by zero gives 0 as numba's kernels
// do, MIN // -1 gives MIN, and a negative integer exponent gives 0 unless the
// base is 1 or -1.
template <class T>
__device__ __forceinline__ T floordiv(T a, T b) {
  return arithmetic::floor_divide(a, b);
}
template <class T>
__device__ __forceinline__ T mod(T a, T b) {
  return arithmetic::remainder(a, b);
}
template <class T>
__device__ __forceinline__ T pow(T base, T exponent) {
  return arithmetic::power(base, exponent);
}

// math.modf: (fractional part, integral part).
__device__ __forceinline__ float modf_of(float x, float* whole) { return modff(x, whole); }
__device__ __forceinline__ double modf_of(double x, double* whole) { return modf(x, whole); }
template <class T>
__device__ __forceinline__ tuple<T, 2> modf_tuple(T x) {
  T whole;
  const T fraction = modf_of(x, &whole);
  return tuple<T, 2>{{fraction, whole}};
}

// numba's match_all_sync: (the mask if every lane's value is the same, else 0; whether it is).
template <class T>
__device__ __forceinline__ record<unsigned, bool> match_all(unsigned mask, T value) {
  int all_same = 0;
  const unsigned same = __match_all_sync(mask, value, &all_same);
  return record<unsigned, bool>{same, {all_same != 0, {}}};
}

// math.frexp: (mantissa, exponent).
template <class T>
__device__ __forceinline__ record<T, int> frexp_record(T x) {
  int exponent = 0;
  T mantissa;
  if constexpr (sizeof(T) == 4)
    mantissa = frexpf(x, &exponent);
  else
    mantissa = frexp(x, &exponent);
  return record<T, int>{mantissa, {exponent, {}}};
}

// round(x, ndigits) and round(x) with Python's rules (lockstep/python_arithmetic.h).
using arithmetic::round_digits;
using arithmetic::round_half_even;

// ---- atomics: numba's cuda.atomic.* for every type it allows, over CUDA's ----

template <class A, class B>
struct same {
  static constexpr bool value = false;
};
template <class A>
struct same<A, A> {
  static constexpr bool value = true;
};

template <int Bytes>
struct word_of;
template <>
struct word_of<4> {
  using type = unsigned int;
};
template <>
struct word_of<8> {
  using type = unsigned long long;
};

template <class T>
__device__ __forceinline__ typename word_of<sizeof(T)>::type bits_of(T v) {
  if constexpr (same<T, float>::value)
    return __float_as_uint(v);
  else if constexpr (same<T, double>::value)
    return static_cast<u64>(__double_as_longlong(v));
  else
    return static_cast<typename word_of<sizeof(T)>::type>(v);
}

template <class T>
__device__ __forceinline__ T value_of(typename word_of<sizeof(T)>::type v) {
  if constexpr (same<T, float>::value)
    return __uint_as_float(v);
  else if constexpr (same<T, double>::value)
    return __longlong_as_double(static_cast<long long>(v));
  else
    return static_cast<T>(v);
}

// Any read-modify-write, as a compare-and-swap loop on the word's bits.
template <class T, class F>
__device__ __forceinline__ T atomic_update(T* address, F next) {
  using word = typename word_of<sizeof(T)>::type;
  word* w = reinterpret_cast<word*>(address);
  word old = *w, seen;
  do {
    seen = old;
    old = atomicCAS(w, seen, bits_of<T>(next(value_of<T>(seen))));
  } while (old != seen);
  return value_of<T>(old);
}

// The types CUDA's own atomic of that kind takes directly.
template <class T>
struct cuda_native {
  static constexpr bool integer = same<T, int>::value || same<T, unsigned>::value || same<T, u64>::value;
  static constexpr bool add = integer || same<T, float>::value || same<T, double>::value;
};

template <class T>
__device__ __forceinline__ T atomic_add(T* p, T v) {
  if constexpr (cuda_native<T>::add)
    return atomicAdd(p, v);
  else if constexpr (same<T, i64>::value)
    return static_cast<T>(atomicAdd(reinterpret_cast<u64*>(p), static_cast<u64>(v)));
  else
    return atomic_update(p, [v](T old) { return static_cast<T>(old + v); });
}

template <class T>
__device__ __forceinline__ T atomic_sub(T* p, T v) {
  if constexpr (same<T, int>::value || same<T, unsigned>::value)
    return atomicSub(p, v);
  else if constexpr (same<T, float>::value || same<T, double>::value)
    return atomicAdd(p, -v);
  else if constexpr (same<T, i64>::value || same<T, u64>::value)
    return static_cast<T>(atomicAdd(reinterpret_cast<u64*>(p), static_cast<u64>(0) - static_cast<u64>(v)));
  else
    return atomic_update(p, [v](T old) { return static_cast<T>(old - v); });
}

// numba's max and min: a NaN in memory is replaced, a NaN value is ignored.
template <class T>
__device__ __forceinline__ T atomic_max(T* p, T v) {
  if constexpr (cuda_native<T>::integer || same<T, i64>::value)
    return atomicMax(p, v);
  else
    return atomic_update(p, [v](T old) { return (old < v || old != old) ? v : old; });
}

template <class T>
__device__ __forceinline__ T atomic_min(T* p, T v) {
  if constexpr (cuda_native<T>::integer || same<T, i64>::value)
    return atomicMin(p, v);
  else
    return atomic_update(p, [v](T old) { return (old > v || old != old) ? v : old; });
}

template <class T>
__device__ __forceinline__ T atomic_exch(T* p, T v) {
  if constexpr (same<T, int>::value || same<T, unsigned>::value || same<T, u64>::value || same<T, float>::value)
    return atomicExch(p, v);
  else if constexpr (sizeof(T) == 8)
    return value_of<T>(atomicExch(reinterpret_cast<u64*>(p), bits_of<T>(v)));
  else
    return atomic_update(p, [v](T) { return v; });
}

template <class T>
__device__ __forceinline__ T atomic_cas(T* p, T expected, T v) {
  using word = typename word_of<sizeof(T)>::type;
  return value_of<T>(atomicCAS(reinterpret_cast<word*>(p), bits_of<T>(expected), bits_of<T>(v)));
}

// CUDA's wrapping counters: inc wraps to 0 past `limit`, dec to `limit` below 0 or above it.
template <class T>
__device__ __forceinline__ T atomic_inc(T* p, T limit) {
  if constexpr (same<T, unsigned>::value)
    return atomicInc(p, limit);
  else
    return atomic_update(p, [limit](T old) { return old >= limit ? T(0) : static_cast<T>(old + 1); });
}

template <class T>
__device__ __forceinline__ T atomic_dec(T* p, T limit) {
  if constexpr (same<T, unsigned>::value)
    return atomicDec(p, limit);
  else
    return atomic_update(p, [limit](T old) { return (old == 0 || old > limit) ? limit : static_cast<T>(old - 1); });
}

template <class T>
__device__ __forceinline__ T atomic_and(T* p, T v) {
  if constexpr (cuda_native<T>::integer)
    return atomicAnd(p, v);
  else
    return static_cast<T>(atomicAnd(reinterpret_cast<u64*>(p), static_cast<u64>(v)));
}

template <class T>
__device__ __forceinline__ T atomic_or(T* p, T v) {
  if constexpr (cuda_native<T>::integer)
    return atomicOr(p, v);
  else
    return static_cast<T>(atomicOr(reinterpret_cast<u64*>(p), static_cast<u64>(v)));
}

template <class T>
__device__ __forceinline__ T atomic_xor(T* p, T v) {
  if constexpr (cuda_native<T>::integer)
    return atomicXor(p, v);
  else
    return static_cast<T>(atomicXor(reinterpret_cast<u64*>(p), static_cast<u64>(v)));
}

// A cuda.declare_device function of numba's ABI, `int f(R* result, args...)`, as an
// expression of its result (the status it returns, numba's Python-exception flag, is ignored as numba does).
template <class R, class F, class... A>
__device__ __forceinline__ R call_numba_abi(F f, A... args) {
  R result{};
  f(&result, args...);
  return result;
}

}  // namespace lockstep::py
