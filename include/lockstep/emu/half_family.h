// One 16-bit float type of <cuda_fp16.h>/<cuda_bf16.h> and its whole API.
// half.h includes this file twice, once per type, with LOCKSTEP_H (__half or
// __nv_bfloat16), LOCKSTEP_H2, LOCKSTEP_H_RAW, LOCKSTEP_H2_RAW, LOCKSTEP_H_OTHER,
// LOCKSTEP_S/LOCKSTEP_S2 (the words in the names: half/half2 or
// bfloat16/bfloat162), LOCKSTEP_H_FORMAT and the float conversions defined.
// Sums, differences and products round a float result to 16 bits, which
// gives the once-rounded result (float has more than twice the bits);
// quotients, square roots and the math functions round a double.
// No include guard: meant to be included once per type.

// __<word><tail>: __half2float, __float2bfloat16_rn, ...
#define LOCKSTEP_HN(head, tail) LOCKSTEP_HALF_CAT(head, LOCKSTEP_S, tail)
#define LOCKSTEP_HN2(head, tail) LOCKSTEP_HALF_CAT(head, LOCKSTEP_S2, tail)

struct alignas(2) LOCKSTEP_H {
  // The bits. CUDA 12 makes __x protected; lockstep's own code reads it.
  unsigned short __x;

  constexpr LOCKSTEP_H() : __x(0) {}  // constant-initialised: a __shared__ array of them needs no thread_local guard
  constexpr LOCKSTEP_H(const LOCKSTEP_H_RAW& raw) : __x(raw.x) {}
  LOCKSTEP_H& operator=(const LOCKSTEP_H_RAW& raw) {
    __x = raw.x;
    return *this;
  }
  operator LOCKSTEP_H_RAW() const { return {__x}; }
  explicit LOCKSTEP_H(const LOCKSTEP_H_OTHER other);

  LOCKSTEP_H(float f) : __x(LOCKSTEP_H_FROM_FLOAT(f)) {}
  LOCKSTEP_H(double d) : __x(::lockstep::emu::round_double(LOCKSTEP_H_FORMAT, d, ::lockstep::emu::rounding::nearest_even)) {}
  LOCKSTEP_H(short v) : LOCKSTEP_H(static_cast<long long>(v)) {}
  LOCKSTEP_H(unsigned short v) : LOCKSTEP_H(static_cast<unsigned long long>(v)) {}
  LOCKSTEP_H(int v) : LOCKSTEP_H(static_cast<long long>(v)) {}
  LOCKSTEP_H(unsigned int v) : LOCKSTEP_H(static_cast<unsigned long long>(v)) {}
  LOCKSTEP_H(long v) : LOCKSTEP_H(static_cast<long long>(v)) {}
  LOCKSTEP_H(unsigned long v) : LOCKSTEP_H(static_cast<unsigned long long>(v)) {}
  LOCKSTEP_H(long long v) : __x(::lockstep::emu::round_signed(LOCKSTEP_H_FORMAT, v, ::lockstep::emu::rounding::nearest_even)) {}
  LOCKSTEP_H(unsigned long long v) : __x(::lockstep::emu::round_unsigned(LOCKSTEP_H_FORMAT, v, ::lockstep::emu::rounding::nearest_even)) {}

  operator float() const { return LOCKSTEP_H_TO_FLOAT(__x); }
  // To integers as CUDA converts: toward zero, saturated, NaN to 0.
  operator signed char() const { return ::lockstep::emu::to_integer<signed char>(float(*this), ::lockstep::emu::rounding::toward_zero); }
  operator unsigned char() const { return ::lockstep::emu::to_integer<unsigned char>(float(*this), ::lockstep::emu::rounding::toward_zero); }
  operator char() const { return ::lockstep::emu::to_integer<char>(float(*this), ::lockstep::emu::rounding::toward_zero); }
  operator short() const { return ::lockstep::emu::to_integer<short>(float(*this), ::lockstep::emu::rounding::toward_zero); }
  operator unsigned short() const { return ::lockstep::emu::to_integer<unsigned short>(float(*this), ::lockstep::emu::rounding::toward_zero); }
  operator int() const { return ::lockstep::emu::to_integer<int>(float(*this), ::lockstep::emu::rounding::toward_zero); }
  operator unsigned int() const { return ::lockstep::emu::to_integer<unsigned int>(float(*this), ::lockstep::emu::rounding::toward_zero); }
  operator long() const { return ::lockstep::emu::to_integer<long>(float(*this), ::lockstep::emu::rounding::toward_zero); }
  operator unsigned long() const { return ::lockstep::emu::to_integer<unsigned long>(float(*this), ::lockstep::emu::rounding::toward_zero); }
  operator long long() const { return ::lockstep::emu::to_integer<long long>(float(*this), ::lockstep::emu::rounding::toward_zero); }
  operator unsigned long long() const {
    return ::lockstep::emu::to_integer<unsigned long long>(float(*this), ::lockstep::emu::rounding::toward_zero);
  }
  constexpr operator bool() const { return (__x & 0x7fffu) != 0; }
};

struct alignas(4) LOCKSTEP_H2 {
  LOCKSTEP_H x, y;

  constexpr LOCKSTEP_H2() = default;
  constexpr LOCKSTEP_H2(const LOCKSTEP_H& a, const LOCKSTEP_H& b) : x(a), y(b) {}
  constexpr LOCKSTEP_H2(const LOCKSTEP_H2_RAW& raw) : x(LOCKSTEP_H_RAW{raw.x}), y(LOCKSTEP_H_RAW{raw.y}) {}
  LOCKSTEP_H2& operator=(const LOCKSTEP_H2_RAW& raw) { return *this = LOCKSTEP_H2(raw); }
  operator LOCKSTEP_H2_RAW() const { return {x.__x, y.__x}; }
};

namespace lockstep::emu {
template <>
inline LOCKSTEP_H round_to<LOCKSTEP_H>(double x, rounding mode) {
  return LOCKSTEP_H_RAW{round_double(LOCKSTEP_H_FORMAT, x, mode)};
}
inline bool is_nan(LOCKSTEP_H h) { return (h.__x & 0x7fffu) > (::lockstep::emu::infinity_bits(LOCKSTEP_H_FORMAT)); }
}  // namespace lockstep::emu

// ---- conversions ----------------------------------------------------------

inline float LOCKSTEP_HN(__, 2float)(const LOCKSTEP_H h) { return static_cast<float>(h); }
inline LOCKSTEP_H LOCKSTEP_HN(__float2, )(const float f) { return LOCKSTEP_H(f); }
inline LOCKSTEP_H LOCKSTEP_HN(__float2, _rn)(const float f) { return LOCKSTEP_H(f); }
inline LOCKSTEP_H LOCKSTEP_HN(__float2, _rz)(const float f) {
  return ::lockstep::emu::round_to<LOCKSTEP_H>(f, ::lockstep::emu::rounding::toward_zero);
}
inline LOCKSTEP_H LOCKSTEP_HN(__float2, _rd)(const float f) { return ::lockstep::emu::round_to<LOCKSTEP_H>(f, ::lockstep::emu::rounding::down); }
inline LOCKSTEP_H LOCKSTEP_HN(__float2, _ru)(const float f) { return ::lockstep::emu::round_to<LOCKSTEP_H>(f, ::lockstep::emu::rounding::up); }
inline LOCKSTEP_H LOCKSTEP_HN(__double2, )(const double d) { return LOCKSTEP_H(d); }

inline LOCKSTEP_H2 LOCKSTEP_HN2(make_, )(const LOCKSTEP_H a, const LOCKSTEP_H b) { return {a, b}; }
inline LOCKSTEP_H2 LOCKSTEP_HN2(__float2, _rn)(const float f) { return {LOCKSTEP_H(f), LOCKSTEP_H(f)}; }
inline LOCKSTEP_H2 LOCKSTEP_HN2(__floats2, _rn)(const float a, const float b) { return {LOCKSTEP_H(a), LOCKSTEP_H(b)}; }
inline LOCKSTEP_H2 LOCKSTEP_HN2(__float22, _rn)(const float2 f) { return {LOCKSTEP_H(f.x), LOCKSTEP_H(f.y)}; }
inline float2 LOCKSTEP_HN2(__, 2float2)(const LOCKSTEP_H2 h) { return {static_cast<float>(h.x), static_cast<float>(h.y)}; }
inline float __low2float(const LOCKSTEP_H2 h) { return static_cast<float>(h.x); }
inline float __high2float(const LOCKSTEP_H2 h) { return static_cast<float>(h.y); }
inline LOCKSTEP_H LOCKSTEP_HN(__low2, )(const LOCKSTEP_H2 h) { return h.x; }
inline LOCKSTEP_H LOCKSTEP_HN(__high2, )(const LOCKSTEP_H2 h) { return h.y; }
inline LOCKSTEP_H2 LOCKSTEP_HN2(__low2, )(const LOCKSTEP_H2 h) { return {h.x, h.x}; }
inline LOCKSTEP_H2 LOCKSTEP_HN2(__high2, )(const LOCKSTEP_H2 h) { return {h.y, h.y}; }
inline LOCKSTEP_H2 LOCKSTEP_HN2(__lows2, )(const LOCKSTEP_H2 a, const LOCKSTEP_H2 b) { return {a.x, b.x}; }
inline LOCKSTEP_H2 LOCKSTEP_HN2(__highs2, )(const LOCKSTEP_H2 a, const LOCKSTEP_H2 b) { return {a.y, b.y}; }
inline LOCKSTEP_H2 LOCKSTEP_HN2(__halves2, )(const LOCKSTEP_H a, const LOCKSTEP_H b) { return {a, b}; }
inline LOCKSTEP_H2 LOCKSTEP_HALF_CAT(__, LOCKSTEP_S, LOCKSTEP_HALF_CAT(2, LOCKSTEP_S2, ))(const LOCKSTEP_H a) { return {a, a}; }
inline LOCKSTEP_H2 __lowhigh2highlow(const LOCKSTEP_H2 h) { return {h.y, h.x}; }

inline short LOCKSTEP_HN(__, _as_short)(const LOCKSTEP_H h) { return static_cast<short>(h.__x); }
inline unsigned short LOCKSTEP_HN(__, _as_ushort)(const LOCKSTEP_H h) { return h.__x; }
inline LOCKSTEP_H LOCKSTEP_HN(__short_as_, )(const short s) { return LOCKSTEP_H_RAW{static_cast<unsigned short>(s)}; }
inline LOCKSTEP_H LOCKSTEP_HN(__ushort_as_, )(const unsigned short s) { return LOCKSTEP_H_RAW{s}; }

// __half2int_rn and __int2half_rn, for each integer type and rounding mode.
#define LOCKSTEP_HALF_INTEGER_MODE(abbr, T, round_integer, mode, suffix)                                          \
  inline T LOCKSTEP_HN(__, LOCKSTEP_HALF_CAT(2, abbr, suffix))(const LOCKSTEP_H h) {                              \
    return ::lockstep::emu::to_integer<T>(static_cast<float>(h), ::lockstep::emu::rounding::mode);                \
  }                                                                                                               \
  inline LOCKSTEP_H LOCKSTEP_HN(LOCKSTEP_HALF_CAT(__, abbr, 2), suffix)(const T v) {                              \
    return LOCKSTEP_H_RAW{::lockstep::emu::round_integer(LOCKSTEP_H_FORMAT, v, ::lockstep::emu::rounding::mode)}; \
  }
#define LOCKSTEP_HALF_INTEGER(abbr, T, round_integer)                   \
  LOCKSTEP_HALF_INTEGER_MODE(abbr, T, round_integer, nearest_even, _rn) \
  LOCKSTEP_HALF_INTEGER_MODE(abbr, T, round_integer, toward_zero, _rz)  \
  LOCKSTEP_HALF_INTEGER_MODE(abbr, T, round_integer, down, _rd)         \
  LOCKSTEP_HALF_INTEGER_MODE(abbr, T, round_integer, up, _ru)
LOCKSTEP_HALF_INTEGER(short, short, round_signed)
LOCKSTEP_HALF_INTEGER(ushort, unsigned short, round_unsigned)
LOCKSTEP_HALF_INTEGER(int, int, round_signed)
LOCKSTEP_HALF_INTEGER(uint, unsigned int, round_unsigned)
LOCKSTEP_HALF_INTEGER(ll, long long, round_signed)
LOCKSTEP_HALF_INTEGER(ull, unsigned long long, round_unsigned)
#undef LOCKSTEP_HALF_INTEGER
#undef LOCKSTEP_HALF_INTEGER_MODE
inline signed char LOCKSTEP_HN(__, 2char_rz)(const LOCKSTEP_H h) {
  return ::lockstep::emu::to_integer<signed char>(static_cast<float>(h), ::lockstep::emu::rounding::toward_zero);
}
inline unsigned char LOCKSTEP_HN(__, 2uchar_rz)(const LOCKSTEP_H h) {
  return ::lockstep::emu::to_integer<unsigned char>(static_cast<float>(h), ::lockstep::emu::rounding::toward_zero);
}

// ---- arithmetic -----------------------------------------------------------

inline LOCKSTEP_H __hadd(const LOCKSTEP_H a, const LOCKSTEP_H b) { return LOCKSTEP_H(float(a) + float(b)); }
inline LOCKSTEP_H __hsub(const LOCKSTEP_H a, const LOCKSTEP_H b) { return LOCKSTEP_H(float(a) - float(b)); }
inline LOCKSTEP_H __hmul(const LOCKSTEP_H a, const LOCKSTEP_H b) { return LOCKSTEP_H(float(a) * float(b)); }
inline LOCKSTEP_H __hdiv(const LOCKSTEP_H a, const LOCKSTEP_H b) {
  return ::lockstep::emu::round_to<LOCKSTEP_H>(static_cast<double>(float(a)) / static_cast<double>(float(b)));
}
// The _rn forms differ on the GPU only in that the compiler may not fuse them into an fma.
inline LOCKSTEP_H __hadd_rn(const LOCKSTEP_H a, const LOCKSTEP_H b) { return __hadd(a, b); }
inline LOCKSTEP_H __hsub_rn(const LOCKSTEP_H a, const LOCKSTEP_H b) { return __hsub(a, b); }
inline LOCKSTEP_H __hmul_rn(const LOCKSTEP_H a, const LOCKSTEP_H b) { return __hmul(a, b); }
inline LOCKSTEP_H __hfma(const LOCKSTEP_H a, const LOCKSTEP_H b, const LOCKSTEP_H c) {
  return LOCKSTEP_H_RAW{::lockstep::emu::fused_multiply_add_bits(LOCKSTEP_H_FORMAT, float(a), float(b), float(c))};
}
inline LOCKSTEP_H __hneg(const LOCKSTEP_H a) {
  return ::lockstep::emu::is_nan(a) ? LOCKSTEP_H(LOCKSTEP_H_RAW{::lockstep::emu::canonical_nan_bits})
                                    : LOCKSTEP_H(LOCKSTEP_H_RAW{static_cast<unsigned short>(a.__x ^ 0x8000u)});
}
inline LOCKSTEP_H __habs(const LOCKSTEP_H a) {
  return ::lockstep::emu::is_nan(a) ? LOCKSTEP_H(LOCKSTEP_H_RAW{::lockstep::emu::canonical_nan_bits})
                                    : LOCKSTEP_H(LOCKSTEP_H_RAW{static_cast<unsigned short>(a.__x & 0x7fffu)});
}
// _sat: clamped to [0, 1], NaN to +0.
namespace lockstep::emu {
inline LOCKSTEP_H saturate(LOCKSTEP_H r) {
  if (is_nan(r) || float(r) <= 0.0f) return LOCKSTEP_H_RAW{0};
  return float(r) >= 1.0f ? LOCKSTEP_H(1.0f) : r;
}
// _relu: negative results to +0; NaN stays NaN.
inline LOCKSTEP_H relu(LOCKSTEP_H r) {
  if (is_nan(r)) return LOCKSTEP_H_RAW{canonical_nan_bits};
  return float(r) <= 0.0f ? LOCKSTEP_H(LOCKSTEP_H_RAW{0}) : r;
}
}  // namespace lockstep::emu
inline LOCKSTEP_H __hadd_sat(const LOCKSTEP_H a, const LOCKSTEP_H b) { return ::lockstep::emu::saturate(__hadd(a, b)); }
inline LOCKSTEP_H __hsub_sat(const LOCKSTEP_H a, const LOCKSTEP_H b) { return ::lockstep::emu::saturate(__hsub(a, b)); }
inline LOCKSTEP_H __hmul_sat(const LOCKSTEP_H a, const LOCKSTEP_H b) { return ::lockstep::emu::saturate(__hmul(a, b)); }
inline LOCKSTEP_H __hfma_sat(const LOCKSTEP_H a, const LOCKSTEP_H b, const LOCKSTEP_H c) { return ::lockstep::emu::saturate(__hfma(a, b, c)); }
inline LOCKSTEP_H __hfma_relu(const LOCKSTEP_H a, const LOCKSTEP_H b, const LOCKSTEP_H c) { return ::lockstep::emu::relu(__hfma(a, b, c)); }

// max/min: a NaN operand loses to a number (both NaN: the canonical NaN); +0 > -0.
inline LOCKSTEP_H __hmax(const LOCKSTEP_H a, const LOCKSTEP_H b) {
  if (::lockstep::emu::is_nan(a)) return ::lockstep::emu::is_nan(b) ? LOCKSTEP_H(LOCKSTEP_H_RAW{::lockstep::emu::canonical_nan_bits}) : b;
  if (::lockstep::emu::is_nan(b)) return a;
  if (float(a) == float(b)) return (a.__x & 0x8000u) ? b : a;
  return float(a) > float(b) ? a : b;
}
inline LOCKSTEP_H __hmin(const LOCKSTEP_H a, const LOCKSTEP_H b) {
  if (::lockstep::emu::is_nan(a)) return ::lockstep::emu::is_nan(b) ? LOCKSTEP_H(LOCKSTEP_H_RAW{::lockstep::emu::canonical_nan_bits}) : b;
  if (::lockstep::emu::is_nan(b)) return a;
  if (float(a) == float(b)) return (a.__x & 0x8000u) ? a : b;
  return float(a) < float(b) ? a : b;
}
// _nan: a NaN operand gives the canonical NaN.
inline LOCKSTEP_H __hmax_nan(const LOCKSTEP_H a, const LOCKSTEP_H b) {
  return ::lockstep::emu::is_nan(a) || ::lockstep::emu::is_nan(b) ? LOCKSTEP_H(LOCKSTEP_H_RAW{::lockstep::emu::canonical_nan_bits}) : __hmax(a, b);
}
inline LOCKSTEP_H __hmin_nan(const LOCKSTEP_H a, const LOCKSTEP_H b) {
  return ::lockstep::emu::is_nan(a) || ::lockstep::emu::is_nan(b) ? LOCKSTEP_H(LOCKSTEP_H_RAW{::lockstep::emu::canonical_nan_bits}) : __hmin(a, b);
}

// The same lane by lane.
#define LOCKSTEP_HALF_LANES(name2, name) \
  inline LOCKSTEP_H2 name2(const LOCKSTEP_H2 a, const LOCKSTEP_H2 b) { return {name(a.x, b.x), name(a.y, b.y)}; }
LOCKSTEP_HALF_LANES(__hadd2, __hadd)
LOCKSTEP_HALF_LANES(__hsub2, __hsub)
LOCKSTEP_HALF_LANES(__hmul2, __hmul)
LOCKSTEP_HALF_LANES(__h2div, __hdiv)
LOCKSTEP_HALF_LANES(__hadd2_rn, __hadd)
LOCKSTEP_HALF_LANES(__hsub2_rn, __hsub)
LOCKSTEP_HALF_LANES(__hmul2_rn, __hmul)
LOCKSTEP_HALF_LANES(__hadd2_sat, __hadd_sat)
LOCKSTEP_HALF_LANES(__hsub2_sat, __hsub_sat)
LOCKSTEP_HALF_LANES(__hmul2_sat, __hmul_sat)
LOCKSTEP_HALF_LANES(__hmax2, __hmax)
LOCKSTEP_HALF_LANES(__hmin2, __hmin)
LOCKSTEP_HALF_LANES(__hmax2_nan, __hmax_nan)
LOCKSTEP_HALF_LANES(__hmin2_nan, __hmin_nan)
#undef LOCKSTEP_HALF_LANES
inline LOCKSTEP_H2 __hfma2(const LOCKSTEP_H2 a, const LOCKSTEP_H2 b, const LOCKSTEP_H2 c) { return {__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)}; }
inline LOCKSTEP_H2 __hfma2_sat(const LOCKSTEP_H2 a, const LOCKSTEP_H2 b, const LOCKSTEP_H2 c) {
  return {__hfma_sat(a.x, b.x, c.x), __hfma_sat(a.y, b.y, c.y)};
}
inline LOCKSTEP_H2 __hfma2_relu(const LOCKSTEP_H2 a, const LOCKSTEP_H2 b, const LOCKSTEP_H2 c) {
  return {__hfma_relu(a.x, b.x, c.x), __hfma_relu(a.y, b.y, c.y)};
}
inline LOCKSTEP_H2 __hneg2(const LOCKSTEP_H2 a) { return {__hneg(a.x), __hneg(a.y)}; }
inline LOCKSTEP_H2 __habs2(const LOCKSTEP_H2 a) { return {__habs(a.x), __habs(a.y)}; }
// Complex multiply-add, (a.x + i a.y)(b.x + i b.y) + (c.x + i c.y), in CUDA's order of fmas.
inline LOCKSTEP_H2 __hcmadd(const LOCKSTEP_H2 a, const LOCKSTEP_H2 b, const LOCKSTEP_H2 c) {
  const LOCKSTEP_H real = __hfma(a.x, b.x, c.x), imaginary = __hfma(a.x, b.y, c.y);
  return {__hfma(__hneg(a.y), b.y, real), __hfma(a.y, b.x, imaginary)};
}

// ---- comparisons ----------------------------------------------------------

inline bool __hisnan(const LOCKSTEP_H a) { return ::lockstep::emu::is_nan(a); }
inline int __hisinf(const LOCKSTEP_H a) {
  const unsigned short inf = ::lockstep::emu::infinity_bits(LOCKSTEP_H_FORMAT);
  return a.__x == inf ? 1 : a.__x == (inf | 0x8000u) ? -1 : 0;
}
// Ordered comparisons (__heq) are false, unordered ones (__hequ) true, where
// an operand is NaN. The 2-vector forms give 1.0 or 0.0 per lane (__heq2),
// 0xffff or 0 per lane (__heq2_mask), or whether both lanes hold (__hbeq2).
#define LOCKSTEP_HALF_COMPARE_FORMS(scalar, vector, mask, both)                                      \
  inline LOCKSTEP_H2 vector(const LOCKSTEP_H2 a, const LOCKSTEP_H2 b) {                              \
    return {LOCKSTEP_H(scalar(a.x, b.x) ? 1.0f : 0.0f), LOCKSTEP_H(scalar(a.y, b.y) ? 1.0f : 0.0f)}; \
  }                                                                                                  \
  inline unsigned mask(const LOCKSTEP_H2 a, const LOCKSTEP_H2 b) {                                   \
    return (scalar(a.x, b.x) ? 0xffffu : 0u) | (scalar(a.y, b.y) ? 0xffff0000u : 0u);                \
  }                                                                                                  \
  inline bool both(const LOCKSTEP_H2 a, const LOCKSTEP_H2 b) { return scalar(a.x, b.x) && scalar(a.y, b.y); }
#define LOCKSTEP_HALF_COMPARE(cmp, op)                                                                                                               \
  inline bool LOCKSTEP_HALF_CAT(__h, cmp, )(const LOCKSTEP_H a, const LOCKSTEP_H b) { return !__hisnan(a) && !__hisnan(b) && float(a) op float(b); } \
  inline bool LOCKSTEP_HALF_CAT(__h, cmp, u)(const LOCKSTEP_H a, const LOCKSTEP_H b) { return __hisnan(a) || __hisnan(b) || float(a) op float(b); }  \
  LOCKSTEP_HALF_COMPARE_FORMS(LOCKSTEP_HALF_CAT(__h, cmp, ), LOCKSTEP_HALF_CAT(__h, cmp, 2), LOCKSTEP_HALF_CAT(__h, cmp, 2_mask),                    \
                              LOCKSTEP_HALF_CAT(__hb, cmp, 2))                                                                                       \
  LOCKSTEP_HALF_COMPARE_FORMS(LOCKSTEP_HALF_CAT(__h, cmp, u), LOCKSTEP_HALF_CAT(__h, cmp, u2), LOCKSTEP_HALF_CAT(__h, cmp, u2_mask),                 \
                              LOCKSTEP_HALF_CAT(__hb, cmp, u2))
LOCKSTEP_HALF_COMPARE(eq, ==)
LOCKSTEP_HALF_COMPARE(ne, !=)
LOCKSTEP_HALF_COMPARE(lt, <)
LOCKSTEP_HALF_COMPARE(le, <=)
LOCKSTEP_HALF_COMPARE(gt, >)
LOCKSTEP_HALF_COMPARE(ge, >=)
#undef LOCKSTEP_HALF_COMPARE
#undef LOCKSTEP_HALF_COMPARE_FORMS
inline LOCKSTEP_H2 __hisnan2(const LOCKSTEP_H2 a) { return {LOCKSTEP_H(__hisnan(a.x) ? 1.0f : 0.0f), LOCKSTEP_H(__hisnan(a.y) ? 1.0f : 0.0f)}; }

// ---- math -----------------------------------------------------------------
// Computed in double and rounded once: within the GPU's error bounds (its
// approximations are off by up to a few units in the last place).

#define LOCKSTEP_HALF_MATH(name, name2, expr)           \
  inline LOCKSTEP_H name(const LOCKSTEP_H a) {          \
    const double x = static_cast<double>(float(a));     \
    return ::lockstep::emu::round_to<LOCKSTEP_H>(expr); \
  }                                                     \
  inline LOCKSTEP_H2 name2(const LOCKSTEP_H2 a) { return {name(a.x), name(a.y)}; }
LOCKSTEP_HALF_MATH(hexp, h2exp, std::exp(x))
LOCKSTEP_HALF_MATH(hexp2, h2exp2, std::exp2(x))
LOCKSTEP_HALF_MATH(hexp10, h2exp10, std::pow(10.0, x))
LOCKSTEP_HALF_MATH(hlog, h2log, std::log(x))
LOCKSTEP_HALF_MATH(hlog2, h2log2, std::log2(x))
LOCKSTEP_HALF_MATH(hlog10, h2log10, std::log10(x))
LOCKSTEP_HALF_MATH(hsqrt, h2sqrt, std::sqrt(x))
LOCKSTEP_HALF_MATH(hrsqrt, h2rsqrt, 1.0 / std::sqrt(x))
LOCKSTEP_HALF_MATH(hrcp, h2rcp, 1.0 / x)
LOCKSTEP_HALF_MATH(hsin, h2sin, std::sin(x))
LOCKSTEP_HALF_MATH(hcos, h2cos, std::cos(x))
LOCKSTEP_HALF_MATH(htanh, h2tanh, std::tanh(x))
LOCKSTEP_HALF_MATH(htanh_approx, h2tanh_approx, std::tanh(x))
LOCKSTEP_HALF_MATH(hfloor, h2floor, std::floor(x))
LOCKSTEP_HALF_MATH(hceil, h2ceil, std::ceil(x))
LOCKSTEP_HALF_MATH(htrunc, h2trunc, std::trunc(x))
LOCKSTEP_HALF_MATH(hrint, h2rint, ::lockstep::emu::round_half_even(x))
#undef LOCKSTEP_HALF_MATH

// ---- operators ------------------------------------------------------------

// Left out where the program defines __CUDA_NO_HALF_OPERATORS__ (__CUDA_NO_BFLOAT16_OPERATORS__,
// and the ..2_OPERATORS__ for the pairs), as CUDA leaves them out.
#if LOCKSTEP_H_OPERATORS
inline LOCKSTEP_H operator+(const LOCKSTEP_H& a, const LOCKSTEP_H& b) { return __hadd(a, b); }
inline LOCKSTEP_H operator-(const LOCKSTEP_H& a, const LOCKSTEP_H& b) { return __hsub(a, b); }
inline LOCKSTEP_H operator*(const LOCKSTEP_H& a, const LOCKSTEP_H& b) { return __hmul(a, b); }
inline LOCKSTEP_H operator/(const LOCKSTEP_H& a, const LOCKSTEP_H& b) { return __hdiv(a, b); }
inline LOCKSTEP_H& operator+=(LOCKSTEP_H& a, const LOCKSTEP_H& b) { return a = __hadd(a, b); }
inline LOCKSTEP_H& operator-=(LOCKSTEP_H& a, const LOCKSTEP_H& b) { return a = __hsub(a, b); }
inline LOCKSTEP_H& operator*=(LOCKSTEP_H& a, const LOCKSTEP_H& b) { return a = __hmul(a, b); }
inline LOCKSTEP_H& operator/=(LOCKSTEP_H& a, const LOCKSTEP_H& b) { return a = __hdiv(a, b); }
inline LOCKSTEP_H& operator++(LOCKSTEP_H& a) { return a = __hadd(a, LOCKSTEP_H(1.0f)); }
inline LOCKSTEP_H& operator--(LOCKSTEP_H& a) { return a = __hsub(a, LOCKSTEP_H(1.0f)); }
inline LOCKSTEP_H operator++(LOCKSTEP_H& a, int) {
  const LOCKSTEP_H old = a;
  ++a;
  return old;
}
inline LOCKSTEP_H operator--(LOCKSTEP_H& a, int) {
  const LOCKSTEP_H old = a;
  --a;
  return old;
}
inline LOCKSTEP_H operator+(const LOCKSTEP_H& a) { return a; }
inline LOCKSTEP_H operator-(const LOCKSTEP_H& a) { return __hneg(a); }
inline bool operator==(const LOCKSTEP_H& a, const LOCKSTEP_H& b) { return __heq(a, b); }
inline bool operator!=(const LOCKSTEP_H& a, const LOCKSTEP_H& b) { return __hneu(a, b); }
inline bool operator<(const LOCKSTEP_H& a, const LOCKSTEP_H& b) { return __hlt(a, b); }
inline bool operator<=(const LOCKSTEP_H& a, const LOCKSTEP_H& b) { return __hle(a, b); }
inline bool operator>(const LOCKSTEP_H& a, const LOCKSTEP_H& b) { return __hgt(a, b); }
inline bool operator>=(const LOCKSTEP_H& a, const LOCKSTEP_H& b) { return __hge(a, b); }

#endif

#if LOCKSTEP_H2_OPERATORS
inline LOCKSTEP_H2 operator+(const LOCKSTEP_H2& a, const LOCKSTEP_H2& b) { return __hadd2(a, b); }
inline LOCKSTEP_H2 operator-(const LOCKSTEP_H2& a, const LOCKSTEP_H2& b) { return __hsub2(a, b); }
inline LOCKSTEP_H2 operator*(const LOCKSTEP_H2& a, const LOCKSTEP_H2& b) { return __hmul2(a, b); }
inline LOCKSTEP_H2 operator/(const LOCKSTEP_H2& a, const LOCKSTEP_H2& b) { return __h2div(a, b); }
inline LOCKSTEP_H2& operator+=(LOCKSTEP_H2& a, const LOCKSTEP_H2& b) { return a = __hadd2(a, b); }
inline LOCKSTEP_H2& operator-=(LOCKSTEP_H2& a, const LOCKSTEP_H2& b) { return a = __hsub2(a, b); }
inline LOCKSTEP_H2& operator*=(LOCKSTEP_H2& a, const LOCKSTEP_H2& b) { return a = __hmul2(a, b); }
inline LOCKSTEP_H2& operator/=(LOCKSTEP_H2& a, const LOCKSTEP_H2& b) { return a = __h2div(a, b); }
inline LOCKSTEP_H2& operator++(LOCKSTEP_H2& a) { return a = __hadd2(a, {LOCKSTEP_H(1.0f), LOCKSTEP_H(1.0f)}); }
inline LOCKSTEP_H2& operator--(LOCKSTEP_H2& a) { return a = __hsub2(a, {LOCKSTEP_H(1.0f), LOCKSTEP_H(1.0f)}); }
inline LOCKSTEP_H2 operator++(LOCKSTEP_H2& a, int) {
  const LOCKSTEP_H2 old = a;
  ++a;
  return old;
}
inline LOCKSTEP_H2 operator--(LOCKSTEP_H2& a, int) {
  const LOCKSTEP_H2 old = a;
  --a;
  return old;
}
inline LOCKSTEP_H2 operator+(const LOCKSTEP_H2& a) { return a; }
inline LOCKSTEP_H2 operator-(const LOCKSTEP_H2& a) { return __hneg2(a); }
inline bool operator==(const LOCKSTEP_H2& a, const LOCKSTEP_H2& b) { return __hbeq2(a, b); }
inline bool operator!=(const LOCKSTEP_H2& a, const LOCKSTEP_H2& b) { return __hbneu2(a, b); }
inline bool operator<(const LOCKSTEP_H2& a, const LOCKSTEP_H2& b) { return __hblt2(a, b); }
inline bool operator<=(const LOCKSTEP_H2& a, const LOCKSTEP_H2& b) { return __hble2(a, b); }
inline bool operator>(const LOCKSTEP_H2& a, const LOCKSTEP_H2& b) { return __hbgt2(a, b); }
inline bool operator>=(const LOCKSTEP_H2& a, const LOCKSTEP_H2& b) { return __hbge2(a, b); }
#endif

// ---- atomics --------------------------------------------------------------

inline LOCKSTEP_H atomicAdd(LOCKSTEP_H* address, const LOCKSTEP_H val) {
  return LOCKSTEP_H_RAW{::lockstep::emu::atomic_update_16(address, [val](unsigned short old) { return __hadd(LOCKSTEP_H_RAW{old}, val).__x; })};
}
// The GPU adds each half atomically, not the pair; one CAS on the word does both.
inline LOCKSTEP_H2 atomicAdd(LOCKSTEP_H2* address, const LOCKSTEP_H2 val) {
  std::atomic_ref<std::uint32_t> ref(*reinterpret_cast<std::uint32_t*>(address));
  std::uint32_t old = ref.load(std::memory_order_relaxed), next;
  do {
    const LOCKSTEP_H2 sum = __hadd2(LOCKSTEP_H2_RAW{static_cast<unsigned short>(old), static_cast<unsigned short>(old >> 16)}, val);
    next = sum.x.__x | (static_cast<std::uint32_t>(sum.y.__x) << 16);
  } while (!ref.compare_exchange_weak(old, next, std::memory_order_relaxed));
  return LOCKSTEP_H2_RAW{static_cast<unsigned short>(old), static_cast<unsigned short>(old >> 16)};
}

#undef LOCKSTEP_HN
#undef LOCKSTEP_HN2
