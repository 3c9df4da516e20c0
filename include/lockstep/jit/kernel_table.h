// The table a compiled kernel module carries about its kernels, so the runtime
// can find each one by name, check launch arguments against its real
// parameter types, and launch it with arguments packed at run time.
//
// Readable by every compiler lockstep uses: NVRTC (no standard headers), nvcc
// and the host compiler. Source assembly (src/jit/translation_unit.cpp)
// appends, for each kernel name expression N at index i:
//   extern "C" __device__ const lockstep::jit::signature lockstep_signature_i
//       = lockstep::jit::signature_of<decltype(N)>::value;
// and, where there is a host side (host compiler, nvcc), a launcher table
// `lockstep_kernel_table` of kernel_entry.
#pragma once

namespace lockstep::jit {

enum class scalar_type : unsigned char {
  none = 0,  // void (for void*), or not a scalar (a struct)
  boolean,
  int8,
  uint8,
  int16,
  uint16,
  int32,
  uint32,
  int64,
  uint64,
  float16,
  bfloat16,
  float32,
  float64,
};

enum class param_kind : unsigned char { scalar = 0, pointer = 1, by_value = 2 };

struct param_desc {
  param_kind kind;
  scalar_type type;        // the scalar, or the pointee of a pointer
  unsigned char is_const;  // pointer to const
  unsigned char reserved;
  unsigned int size;
  unsigned int align;
};

inline constexpr unsigned max_params = 32;

struct signature {
  unsigned int count;
  param_desc params[max_params];
};

template <class T>
struct scalar_of {
  static constexpr scalar_type value = scalar_type::none;
};
template <>
struct scalar_of<bool> {
  static constexpr scalar_type value = scalar_type::boolean;
};
template <>
struct scalar_of<signed char> {
  static constexpr scalar_type value = scalar_type::int8;
};
template <>
struct scalar_of<char> {
  static constexpr scalar_type value = static_cast<char>(-1) < 0 ? scalar_type::int8 : scalar_type::uint8;
};
template <>
struct scalar_of<unsigned char> {
  static constexpr scalar_type value = scalar_type::uint8;
};
template <>
struct scalar_of<short> {
  static constexpr scalar_type value = scalar_type::int16;
};
template <>
struct scalar_of<unsigned short> {
  static constexpr scalar_type value = scalar_type::uint16;
};
template <>
struct scalar_of<int> {
  static constexpr scalar_type value = scalar_type::int32;
};
template <>
struct scalar_of<unsigned int> {
  static constexpr scalar_type value = scalar_type::uint32;
};
template <>
struct scalar_of<long> {
  static constexpr scalar_type value = sizeof(long) == 8 ? scalar_type::int64 : scalar_type::int32;
};
template <>
struct scalar_of<unsigned long> {
  static constexpr scalar_type value = sizeof(long) == 8 ? scalar_type::uint64 : scalar_type::uint32;
};
template <>
struct scalar_of<long long> {
  static constexpr scalar_type value = scalar_type::int64;
};
template <>
struct scalar_of<unsigned long long> {
  static constexpr scalar_type value = scalar_type::uint64;
};
template <>
struct scalar_of<float> {
  static constexpr scalar_type value = scalar_type::float32;
};
template <>
struct scalar_of<double> {
  static constexpr scalar_type value = scalar_type::float64;
};
#if defined(__CUDA_FP16_TYPES_EXIST__) || defined(__CUDA_FP16_HPP__) || defined(LOCKSTEP_EMU_HALF)
template <>
struct scalar_of<__half> {
  static constexpr scalar_type value = scalar_type::float16;
};
#endif
#if defined(__CUDA_BF16_TYPES_EXIST__) || defined(__CUDA_BF16_HPP__) || defined(LOCKSTEP_EMU_HALF)
template <>
struct scalar_of<__nv_bfloat16> {
  static constexpr scalar_type value = scalar_type::bfloat16;
};
#endif

template <class T>
struct strip_const {
  using type = T;
};
template <class T>
struct strip_const<const T> {
  using type = T;
};
template <class T>
struct strip_const<volatile T> {
  using type = T;
};
template <class T>
struct strip_const<const volatile T> {
  using type = T;
};
template <class T>
struct is_const_type {
  static constexpr bool value = false;
};
template <class T>
struct is_const_type<const T> {
  static constexpr bool value = true;
};
template <class T>
struct is_const_type<const volatile T> {
  static constexpr bool value = true;
};

template <class T>
struct describe {
  static constexpr param_desc value{
      scalar_of<T>::value == scalar_type::none ? param_kind::by_value : param_kind::scalar, scalar_of<T>::value, 0, 0, sizeof(T), alignof(T)};
};
template <class T>
struct describe<T*> {
  static constexpr param_desc value{param_kind::pointer,
                                    scalar_of<typename strip_const<T>::type>::value,
                                    is_const_type<T>::value ? (unsigned char)1 : (unsigned char)0,
                                    0,
                                    sizeof(T*),
                                    alignof(T*)};
};
template <class T>
struct describe<const T> : describe<T> {};

template <class F>
struct signature_of;
template <class... P>
struct signature_of<void(P...)> {
  static_assert(sizeof...(P) <= max_params, "lockstep: kernels with more than 32 parameters are not supported");
  static constexpr signature value{sizeof...(P), {describe<P>::value...}};
};

}  // namespace lockstep::jit

#if !defined(__CUDACC_RTC__)
#include <cstddef>
#include <cstdio>
#include <exception>
#include <utility>

#include "lockstep/launch.h"

namespace lockstep::jit {

// How a launcher reports an error instead of throwing it. A module built by
// nvcc may carry its own C++ runtime (a compiler that links libstdc++
// statically), and an exception thrown by one runtime and caught by another
// crashes; so errors cross the module boundary as data.
struct launch_status {
  enum kind_t : int { ok = 0, launch_refused = 1, kernel_failed = 2, other = 3 } kind = ok;
  int code = 0;  // a cudaError_t
  char message[2048] = {};
};

// One kernel of a module built with a host side (host compiler or nvcc).
struct kernel_entry {
  const char* name_expression;
  const signature* params;
  // args[i] points at parameter i
  void (*launch)(const launch_config& config, void* const* args, launch_status* status);
  const void* kernel;                              // for attributes and messages
  int (*set_max_dynamic_shared_bytes)(int bytes);  // a cudaError_t
};

template <class... P, std::size_t... I>
void launch_unpacked(void (*kernel)(P...), const launch_config& c, void* const* args, std::index_sequence<I...>) {
  lockstep::launch(kernel, c)(*static_cast<const P*>(args[I])...);  // the whole config: cooperative launches too
}

template <auto kernel>
void launcher(const launch_config& c, void* const* args, launch_status* status) {
  constexpr unsigned count = signature_of<std::remove_pointer_t<decltype(kernel)>>::value.count;
#if defined(__CUDACC__)
  // Errors of an nvcc-built launch are thrown in this module: report them.
  auto report = [status](launch_status::kind_t kind, int code, const char* what) {
    status->kind = kind;
    status->code = code;
    std::snprintf(status->message, sizeof status->message, "%s", what);
  };
  try {
    launch_unpacked(kernel, c, args, std::make_index_sequence<count>{});
  } catch (const kernel_error& e) {
    report(launch_status::kernel_failed, e.code(), e.what());
  } catch (const cuda_error& e) {
    report(launch_status::launch_refused, e.code(), e.what());
  } catch (const std::exception& e) {
    report(launch_status::other, 0, e.what());
  }
#else
  // On the emulator errors are thrown (and caught) by liblockstep itself.
  (void)status;
  launch_unpacked(kernel, c, args, std::make_index_sequence<count>{});
#endif
}

template <auto kernel>
int max_dynamic_shared_setter(int bytes) {
  return static_cast<int>(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
}

}  // namespace lockstep::jit
#endif
