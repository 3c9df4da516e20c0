#include "elements.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "lockstep/emu/half.h"

namespace lockstep::emu::nccl {
namespace {

// 16-bit floats are combined in float and rounded once per step, as the GPU's
// __hadd and friends do.
template <class T>
using arithmetic_t = std::conditional_t<std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>, float, T>;

template <class T>
void combine_as(T* acc, const T* in, std::size_t n, ncclRedOp_t op, int nranks, bool first) {
  using A = arithmetic_t<T>;
  constexpr bool floating = std::is_floating_point_v<A>;
  if (first && !(floating && op == ncclAvg)) {
    std::copy(in, in + n, acc);
    return;
  }
  const A scale = floating ? A(1) / A(nranks) : A(1);
  for (std::size_t i = 0; i < n; ++i) {
    const A x = static_cast<A>(in[i]);
    const A a = first ? A(0) : static_cast<A>(acc[i]);
    switch (op) {
      case ncclSum:
        acc[i] = T(a + x);
        break;
      case ncclProd:
        acc[i] = T(a * x);
        break;
      case ncclMax:
        acc[i] = T(std::max(a, x));
        break;
      case ncclMin:
        acc[i] = T(std::min(a, x));
        break;
      default:
        acc[i] = T(a + (floating ? x * scale : x));
        break;  // ncclAvg
    }
  }
}

template <class T>
void divide_as(T* acc, std::size_t n, int nranks) {
  if constexpr (std::is_integral_v<T>)
    for (std::size_t i = 0; i < n; ++i) acc[i] = static_cast<T>(acc[i] / static_cast<T>(nranks));
}

template <class F>
void with_type(ncclDataType_t type, F&& f) {
  switch (type) {
    case ncclInt8:
      return f(std::int8_t{});
    case ncclUint8:
      return f(std::uint8_t{});
    case ncclInt32:
      return f(std::int32_t{});
    case ncclUint32:
      return f(std::uint32_t{});
    case ncclInt64:
      return f(std::int64_t{});
    case ncclUint64:
      return f(std::uint64_t{});
    case ncclFloat16:
      return f(__half{});
    case ncclFloat32:
      return f(float{});
    case ncclFloat64:
      return f(double{});
    case ncclBfloat16:
      return f(__nv_bfloat16{});
    default:
      return;
  }
}

}  // namespace

std::size_t element_bytes(ncclDataType_t type) {
  std::size_t bytes = 0;
  with_type(type, [&](auto v) { bytes = sizeof v; });
  return bytes;
}

const char* type_name(ncclDataType_t type) {
  static const char* const names[] = {"ncclInt8",    "ncclUint8",   "ncclInt32",   "ncclUint32",   "ncclInt64",      "ncclUint64",
                                      "ncclFloat16", "ncclFloat32", "ncclFloat64", "ncclBfloat16", "ncclFloat8e4m3", "ncclFloat8e5m2"};
  return type >= 0 && type < ncclNumTypes ? names[type] : "an unknown ncclDataType_t";
}

void combine(void* acc, const void* in, std::size_t n, ncclDataType_t type, ncclRedOp_t op, int nranks, bool first) {
  with_type(type, [&](auto v) {
    using T = decltype(v);
    combine_as(static_cast<T*>(acc), static_cast<const T*>(in), n, op, nranks, first);
  });
}

void finish_average(void* acc, std::size_t n, ncclDataType_t type, int nranks) {
  with_type(type, [&](auto v) { divide_as(static_cast<decltype(v)*>(acc), n, nranks); });
}

}  // namespace lockstep::emu::nccl
