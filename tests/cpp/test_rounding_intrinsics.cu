// CUDA's intrinsics that name their rounding (__fadd_rd, __dsqrt_ru,
// __fmaf_rz, __float2ll_rn, __ull2float_rd, __double2float_ru, ...), run in
// kernels over fresh random inputs and the hard cases: ties, exact results,
// cancellation to signed zeros, infinities, NaN, overflow and subnormals.
//
// The references are independent of the emulator's integer arithmetic: the
// host's own IEEE operations and conversions in the same rounding mode
// (fesetround around volatile operands: each is read after the mode is set
// and the result written before it is restored, whatever the compiler's
// flags); floor, ceil and trunc and the GPU's saturation for conversions to
// integers; for __frsqrt_rn, an exact integer test that the result's
// neighbouring midpoints bracket 1/sqrt(x). Every four-mode result must also
// keep the orderings the modes imply: rd <= rn <= ru, ru - rd zero or one
// ulp, rz equal to rd or ru, whichever lies toward zero.
//
// tests/cpp/CMakeLists.txt builds this file a second time with -ffast-math
// (emulator_fast_math_tests): the intrinsics must give the same results.
#include <cfenv>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "test_util.h"

#if defined(LOCKSTEP_EXPECT_FAST_MATH) && !defined(__FAST_MATH__)
#error "emulator_fast_math_tests is to be built with -ffast-math"
#endif

using namespace testing_util;

namespace {

constexpr int kThreadsPerBlock = 256;
constexpr int kRandomElements = 20000;
int blocks_for(std::size_t n) { return static_cast<int>((n + kThreadsPerBlock - 1) / kThreadsPerBlock); }

__device__ int element_index() { return blockIdx.x * blockDim.x + threadIdx.x; }

// Every four-mode result array is in this order.
constexpr int kModes = 4;
const char* const kModeNames[kModes] = {"_rn", "_rz", "_rd", "_ru"};
const int kHostModes[kModes] = {FE_TONEAREST, FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD};

#define ALL_MODES(out, name, ...)      \
  do {                                 \
    (out)[0] = name##_rn(__VA_ARGS__); \
    (out)[1] = name##_rz(__VA_ARGS__); \
    (out)[2] = name##_rd(__VA_ARGS__); \
    (out)[3] = name##_ru(__VA_ARGS__); \
  } while (0)

// ---------------------------------------------------------------------------
// Bits, classified as integers (which -ffast-math cannot assume away)

template <class T>
using bits_t = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

template <class T>
bits_t<T> bits_of(T x) {
  bits_t<T> b;
  std::memcpy(&b, &x, sizeof x);
  return b;
}
template <class T>
T from_bits(bits_t<T> b) {
  T x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}
template <class T>
constexpr bits_t<T> sign_mask = bits_t<T>{1} << (8 * sizeof(T) - 1);

template <class T>
bool is_nan(T x) {
  return (bits_of(x) & ~sign_mask<T>) > bits_of(std::numeric_limits<T>::infinity());
}
// Bit for bit, but any NaN matches any NaN (the GPU's are canonical).
template <class T>
bool same_result(T got, T want) {
  return is_nan(got) ? is_nan(want) : bits_of(got) == bits_of(want);
}
// Consecutive values of T have consecutive keys; -0 and +0 share 0.
template <class T>
long long order_key(T x) {
  const auto b = bits_of(x);
  const auto magnitude = static_cast<long long>(b & ~sign_mask<T>);
  return (b & sign_mask<T>) ? -magnitude : magnitude;
}
template <class T>
std::string hex(T x) {
  std::ostringstream s;
  s << std::hexfloat << static_cast<double>(x) << " (bits 0x" << std::hex << +bits_of(x) << ")";
  return s.str();
}

// What is wrong with the orderings of one result in the four modes, or "".
template <class T>
std::string ordering_violation(const T (&r)[kModes]) {
  const int nans = is_nan(r[0]) + is_nan(r[1]) + is_nan(r[2]) + is_nan(r[3]);
  if (nans != 0) return nans == kModes ? "" : "NaN in some modes only";
  const long long rn = order_key(r[0]), rz = order_key(r[1]), rd = order_key(r[2]), ru = order_key(r[3]);
  if (!(rd <= rn && rn <= ru)) return "not rd <= rn <= ru";
  if (ru - rd > 1) return "ru and rd more than one ulp apart";
  if (rz != (rd >= 0 ? rd : ru)) return "rz not the one of rd and ru toward zero";
  return "";
}

// ---------------------------------------------------------------------------
// The host's IEEE arithmetic in a rounding mode

enum class op { add, sub, mul, div, fma, rcp, sqrt };

template <class T>
T host_in_mode(op o, int mode, T a, T b, T c) {
  volatile T va = a, vb = b, vc = c;
  volatile T r = 0;
  std::fesetround(kHostModes[mode]);
  switch (o) {
    case op::add:
      r = va + vb;
      break;
    case op::sub:
      r = va - vb;
      break;
    case op::mul:
      r = va * vb;
      break;
    case op::div:
      r = va / vb;
      break;
    case op::fma:
      r = std::fma(static_cast<T>(va), static_cast<T>(vb), static_cast<T>(vc));
      break;
    case op::rcp:
      r = static_cast<T>(1) / va;
      break;
    case op::sqrt:
      r = std::sqrt(static_cast<T>(va));
      break;
  }
  std::fesetround(FE_TONEAREST);
  return r;
}

template <class To, class From>
To host_convert_in_mode(From v, int mode) {
  volatile From vv = v;
  volatile To r = 0;
  std::fesetround(kHostModes[mode]);
  r = static_cast<To>(vv);
  std::fesetround(FE_TONEAREST);
  return r;
}

// From an unsigned 64-bit integer as GCC converts it: through the signed
// conversion, halved with the lost bit kept when above 2^63. (Clang's sum of
// magic numbers gives -0 for 0 rounding down.)
template <class To>
To host_from_unsigned_in_mode(unsigned long long v, int mode) {
  if (v < (1ull << 63)) return host_convert_in_mode<To>(static_cast<long long>(v), mode);
  return host_convert_in_mode<To>(static_cast<long long>((v >> 1) | (v & 1)), mode) * 2;  // doubling is exact
}

// ---------------------------------------------------------------------------
// Inputs

template <class T>
T uniform(T lo, T hi) {
  return static_cast<T>(std::uniform_real_distribution<double>(lo, hi)(rng()));
}
int uniform_int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng()); }
bool coin() { return rng()() & 1; }

template <class T>
T random_bits() {
  return from_bits<T>(static_cast<bits_t<T>>(rng()()));
}
// sign * [1, 2) * 2^[lo, hi]
template <class T>
T random_scaled(int lo, int hi) {
  const T v = std::ldexp(uniform<T>(1, 2), uniform_int(lo, hi));
  return coin() ? -v : v;
}
// A random odd integer of exactly `digits` bits, with a random sign and scale.
template <class T>
T random_odd(int digits, int scale_lo, int scale_hi) {
  const auto n = (rng()() & ((std::uint64_t{1} << (digits - 1)) - 1)) | (std::uint64_t{1} << (digits - 1)) | 1u;
  const T v = std::ldexp(static_cast<T>(n), uniform_int(scale_lo, scale_hi));
  return coin() ? -v : v;
}
template <class T>
T ulp_of(T x) {  // for finite nonzero x
  return std::ldexp(static_cast<T>(1), std::max(std::ilogb(x), std::numeric_limits<T>::min_exponent - 1) - (std::numeric_limits<T>::digits - 1));
}

template <class T>
std::vector<T> special_values() {
  using L = std::numeric_limits<T>;
  const T one = 1;
  return {T(0),
          -T(0),
          L::infinity(),
          -L::infinity(),
          L::quiet_NaN(),
          one,
          -one,
          T(2),
          T(0.5),
          T(3),
          -T(3),
          L::max(),
          -L::max(),
          L::min(),
          -L::min(),
          L::denorm_min(),
          -L::denorm_min(),
          L::min() - L::denorm_min(),
          one + L::epsilon(),
          one - L::epsilon() / 2,
          T(1e-3)};
}

template <class T>
struct arith_args {
  T a, b, c;
};

// Random operands, most of them built for one hard case; then every pair of
// special values.
template <class T>
std::vector<arith_args<T>> arithmetic_inputs(int n) {
  using L = std::numeric_limits<T>;
  constexpr int digits = L::digits, max_exp = L::max_exponent, min_exp = L::min_exponent;
  std::vector<arith_args<T>> v;
  for (int i = 0; i < n; ++i) {
    T a = random_scaled<T>(-20, 20), b = random_scaled<T>(-20, 20), c = random_scaled<T>(-20, 20);
    switch (i % 10) {
      case 0:  // any bits: every class, far-apart exponents
        a = random_bits<T>(), b = random_bits<T>(), c = random_bits<T>();
        break;
      case 1:  // ordinary values
        break;
      case 2:  // a + b exactly halfway between neighbours, or near it
        b = ulp_of(a) * static_cast<T>(uniform_int(1, 3)) / 2;
        b = coin() ? -b : b;
        c = -a * b;
        break;
      case 3:  // cancellation: a + b a few ulps, or exactly zero
        b = -(a + ulp_of(a) * static_cast<T>(uniform_int(-3, 3)));
        c = -(a * b);
        break;
      case 4:  // products of digits + 1 bits: exact ties; c cancels the rounded product
        a = random_odd<T>(digits / 2 + 1, -10, 10), b = random_odd<T>(digits / 2 + 1, -10, 10);
        c = coin() ? -(a * b) : random_scaled<T>(-20, 20);
        break;
      case 5:  // near and in the subnormals
        a = random_scaled<T>(min_exp / 2 - digits, min_exp / 2), b = random_scaled<T>(min_exp / 2 - 2, min_exp / 2 + digits);
        c = coin() ? random_scaled<T>(min_exp - digits, min_exp) : -(a * b);
        if (coin()) a = from_bits<T>(static_cast<bits_t<T>>(rng()()) & (bits_of(L::min()) - 1));  // a subnormal
        break;
      case 6:  // near overflow
        a = random_scaled<T>(max_exp - 3, max_exp - 1);
        b = coin() ? random_scaled<T>(-1, 3) : a;
        c = coin() ? -a : random_scaled<T>(max_exp - 3, max_exp - 1);
        break;
      case 7: {  // exact square roots and quotients
        const T root = random_odd<T>(digits / 2, -20, 20);
        a = root * root;
        b = random_odd<T>(digits / 2, -10, 10), c = a * b;
        if (coin()) a = b * random_odd<T>(digits / 2, -10, 10);  // a / b exact
        break;
      }
      case 8:  // a * b + c exactly zero, and zeros of either sign
        a = random_odd<T>(digits / 2, -10, 10), b = random_odd<T>(digits / 2, -10, 10), c = -(a * b);
        if (coin()) b = coin() ? T(0) : -T(0);
        break;
      case 9:  // a and b a few ulps apart: a - b exact, a / b near 1
        b = a + ulp_of(a) * static_cast<T>(uniform_int(-2, 2));
        break;
    }
    v.push_back({a, b, c});
  }
  const auto specials = special_values<T>();
  for (std::size_t i = 0; i < specials.size(); ++i)
    for (std::size_t j = 0; j < specials.size(); ++j) v.push_back({specials[i], specials[j], specials[(i + j) % specials.size()]});
  return v;
}

template <class T>
std::string describe(op o, const arith_args<T>& x) {
  if (o == op::rcp || o == op::sqrt) return "x = " + hex(x.a);
  return "a = " + hex(x.a) + ", b = " + hex(x.b) + (o == op::fma ? ", c = " + hex(x.c) : "");
}

// One operation's results in each mode against the host's, and their orderings.
template <class T, class Results>
void check_operation(const char* name, op o, const std::vector<arith_args<T>>& in, const std::vector<Results>& got, T (Results::*member)[kModes]) {
  int failures = 0, reported = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    bool failed = false;
    const auto fail = [&](const std::string& what) {
      failed = true;
      if (++reported <= 5) ADD_FAILURE() << name << what << " for " << describe(o, in[i]) << " (seed " << fresh_seed() << ")";
    };
    const T(&r)[kModes] = got[i].*member;
    for (int m = 0; m < kModes; ++m) {
      const T want = host_in_mode(o, m, in[i].a, in[i].b, in[i].c);
      if (!same_result(r[m], want)) fail(std::string(kModeNames[m]) + " is " + hex(r[m]) + ", expected " + hex(want));
    }
    if (const std::string broken = ordering_violation(r); !broken.empty()) fail(": " + broken);
    failures += failed;
  }
  EXPECT_EQ(failures, 0) << name << ": " << failures << " of " << in.size() << " inputs wrong";
}

// ---------------------------------------------------------------------------
// Single and double precision arithmetic

template <class T>
struct arith_results {
  T add[kModes], sub[kModes], mul[kModes], div[kModes], fma[kModes], rcp[kModes], sqrt[kModes];
};
struct float_only_results {
  float fma_ieee[kModes];
  float rsqrt;
};

__global__ void float_arithmetic(const arith_args<float>* in, arith_results<float>* out, float_only_results* extra, int n) {
  const int i = element_index();
  if (i >= n) return;
  const float a = in[i].a, b = in[i].b, c = in[i].c;
  arith_results<float> r;
  ALL_MODES(r.add, __fadd, a, b);
  ALL_MODES(r.sub, __fsub, a, b);
  ALL_MODES(r.mul, __fmul, a, b);
  ALL_MODES(r.div, __fdiv, a, b);
  ALL_MODES(r.fma, __fmaf, a, b, c);
  ALL_MODES(r.rcp, __frcp, a);
  ALL_MODES(r.sqrt, __fsqrt, a);
  out[i] = r;
  float_only_results e;
  ALL_MODES(e.fma_ieee, __fmaf_ieee, a, b, c);
  e.rsqrt = __frsqrt_rn(a);
  extra[i] = e;
}

__global__ void double_arithmetic(const arith_args<double>* in, arith_results<double>* out, int n) {
  const int i = element_index();
  if (i >= n) return;
  const double a = in[i].a, b = in[i].b, c = in[i].c;
  arith_results<double> r;
  ALL_MODES(r.add, __dadd, a, b);
  ALL_MODES(r.sub, __dsub, a, b);
  ALL_MODES(r.mul, __dmul, a, b);
  ALL_MODES(r.div, __ddiv, a, b);
  ALL_MODES(r.fma, __fma, a, b, c);
  ALL_MODES(r.rcp, __drcp, a);
  ALL_MODES(r.sqrt, __dsqrt, a);
  out[i] = r;
}

template <class T>
void check_arithmetic(const char* prefix, const std::vector<arith_args<T>>& in, const std::vector<arith_results<T>>& got) {
  using R = arith_results<T>;
  const std::string p = prefix;
  check_operation((p + "add").c_str(), op::add, in, got, &R::add);
  check_operation((p + "sub").c_str(), op::sub, in, got, &R::sub);
  check_operation((p + "mul").c_str(), op::mul, in, got, &R::mul);
  check_operation((p + "div").c_str(), op::div, in, got, &R::div);
  check_operation(std::is_same_v<T, float> ? "__fmaf" : "__fma", op::fma, in, got, &R::fma);
  check_operation((p + "rcp").c_str(), op::rcp, in, got, &R::rcp);
  check_operation((p + "sqrt").c_str(), op::sqrt, in, got, &R::sqrt);
}

// sign(m^2 * x - 1), exactly, for a positive m of at most 26 significant bits and a positive finite float x.
int compare_square_times_x_with_one(double m, float x) {
  int me, xe;
  const auto mi = static_cast<unsigned __int128>(std::ldexp(std::frexp(m, &me), 27));  // m = mi * 2^(me - 27)
  const auto xi = static_cast<unsigned __int128>(std::ldexp(std::frexp(x, &xe), 24));  // x = xi * 2^(xe - 24)
  const unsigned __int128 product = mi * mi * xi;                                      // below 2^78
  const int exponent = 2 * (me - 27) + (xe - 24);
  if (exponent >= 0) return 1;
  if (-exponent >= 100) return -1;
  const unsigned __int128 one = static_cast<unsigned __int128>(1) << -exponent;
  return product > one ? 1 : product < one ? -1 : 0;
}

// 1/sqrt(x) correctly rounded: it lies strictly between the midpoints from r
// to its neighbours (never on one: 1/sqrt(x) is no midpoint of floats).
std::string reciprocal_square_root_error(float x, float r) {
  const bool x_negative = (bits_of(x) & sign_mask<float>) != 0;
  if (is_nan(x) || (x_negative && bits_of(x) != sign_mask<float>)) return is_nan(r) ? "" : "expected NaN";
  if ((bits_of(x) & ~sign_mask<float>) == 0)
    return bits_of(r) == bits_of(x_negative ? -HUGE_VALF : HUGE_VALF) ? "" : "expected an infinity of x's sign";
  if (bits_of(x) == bits_of(HUGE_VALF)) return bits_of(r) == 0 ? "" : "expected +0";
  if (is_nan(r) || (bits_of(r) & sign_mask<float>) || bits_of(r) == 0 || bits_of(r) >= bits_of(HUGE_VALF)) return "expected a positive finite value";
  const double below = (static_cast<double>(r) + std::nextafter(r, 0.0f)) / 2, above = (static_cast<double>(r) + std::nextafter(r, HUGE_VALF)) / 2;
  if (compare_square_times_x_with_one(below, x) >= 0) return "too large";
  if (compare_square_times_x_with_one(above, x) <= 0) return "too small";
  return "";
}

TEST(RoundingIntrinsics, FloatArithmeticMatchesTheHostInEachMode) {
  const auto args = arithmetic_inputs<float>(kRandomElements);
  const int n = static_cast<int>(args.size());
  device_buffer<arith_args<float>> in(args);
  device_buffer<arith_results<float>> out(n);
  device_buffer<float_only_results> extra(n);
  lockstep::launch(float_arithmetic, blocks_for(n), kThreadsPerBlock)(in.get(), out.get(), extra.get(), n);
  const auto got = out.download();
  const auto got_extra = extra.download();
  check_arithmetic("__f", args, got);
  check_operation("__fmaf_ieee", op::fma, args, got_extra, &float_only_results::fma_ieee);

  int failures = 0;
  for (int i = 0; i < n; ++i)
    if (const std::string error = reciprocal_square_root_error(args[i].a, got_extra[i].rsqrt); !error.empty() && ++failures <= 5)
      ADD_FAILURE() << "__frsqrt_rn(" << hex(args[i].a) << ") is " << hex(got_extra[i].rsqrt) << ": " << error << " (seed " << fresh_seed() << ")";
  EXPECT_EQ(failures, 0) << "__frsqrt_rn: " << failures << " of " << n << " inputs wrong";
}

TEST(RoundingIntrinsics, DoubleArithmeticMatchesTheHostInEachMode) {
  const auto args = arithmetic_inputs<double>(kRandomElements);
  const int n = static_cast<int>(args.size());
  device_buffer<arith_args<double>> in(args);
  device_buffer<arith_results<double>> out(n);
  lockstep::launch(double_arithmetic, blocks_for(n), kThreadsPerBlock)(in.get(), out.get(), n);
  check_arithmetic("__d", args, out.download());
}

// ---------------------------------------------------------------------------
// Conversions

struct conversion_args {
  float f;        // to integers
  double d;       // to integers
  double narrow;  // to float
  long long i;    // to float and double, and its low 32 bits
};

struct conversion_results {
  int f2i[kModes];
  unsigned f2u[kModes];
  long long f2ll[kModes];
  unsigned long long f2ull[kModes];
  int d2i[kModes];
  unsigned d2u[kModes];
  long long d2ll[kModes];
  unsigned long long d2ull[kModes];
  float i2f[kModes], u2f[kModes], ll2f[kModes], ull2f[kModes], d2f[kModes];
  double ll2d[kModes], ull2d[kModes], i2d, u2d;
};

__global__ void conversions(const conversion_args* in, conversion_results* out, int n) {
  const int i = element_index();
  if (i >= n) return;
  const conversion_args x = in[i];
  const int i32 = static_cast<int>(x.i);
  const unsigned u32 = static_cast<unsigned>(x.i);
  const unsigned long long u64 = static_cast<unsigned long long>(x.i);
  conversion_results r;
  ALL_MODES(r.f2i, __float2int, x.f);
  ALL_MODES(r.f2u, __float2uint, x.f);
  ALL_MODES(r.f2ll, __float2ll, x.f);
  ALL_MODES(r.f2ull, __float2ull, x.f);
  ALL_MODES(r.d2i, __double2int, x.d);
  ALL_MODES(r.d2u, __double2uint, x.d);
  ALL_MODES(r.d2ll, __double2ll, x.d);
  ALL_MODES(r.d2ull, __double2ull, x.d);
  ALL_MODES(r.i2f, __int2float, i32);
  ALL_MODES(r.u2f, __uint2float, u32);
  ALL_MODES(r.ll2f, __ll2float, x.i);
  ALL_MODES(r.ull2f, __ull2float, u64);
  ALL_MODES(r.d2f, __double2float, x.narrow);
  ALL_MODES(r.ll2d, __ll2double, x.i);
  ALL_MODES(r.ull2d, __ull2double, u64);
  r.i2d = __int2double_rn(i32);
  r.u2d = __uint2double_rn(u32);
  out[i] = r;
}

// Values around every integer range's ends, halves, integers, and the rest.
template <class T>
std::vector<T> to_integer_inputs(int n) {
  const T two31 = std::ldexp(T(1), 31), two32 = std::ldexp(T(1), 32), two63 = std::ldexp(T(1), 63), two64 = std::ldexp(T(1), 64);
  std::vector<T> ends{two31, two32, two63, two64, T(0), T(1)};
  std::vector<T> specials{T(0.5), -T(0.5), T(1.5), -T(1.5), T(2.5), -T(2.5), T(0.3), -T(0.3), -T(0), T(0), T(1e20), -T(1e20)};
  for (const T e : ends)
    for (const T s : {T(1), -T(1)}) {
      specials.push_back(s * e);
      specials.push_back(s * std::nextafter(e, T(0)));
      specials.push_back(s * std::nextafter(e, 2 * e + 1));
      specials.push_back(s * (e + T(0.5)));
      specials.push_back(s * (e - T(0.5)));
    }
  for (const T s : special_values<T>()) specials.push_back(s);
  std::vector<T> v;
  for (int i = 0; i < n; ++i) {
    switch (i % 6) {
      case 0:
        v.push_back(random_bits<T>());
        break;
      case 1:
        v.push_back(static_cast<T>(uniform_int(-1000, 1000)) + T(0.5));
        break;
      case 2:
        v.push_back(static_cast<T>(uniform_int(-1000, 1000)));
        break;
      case 3:
        v.push_back(random_scaled<T>(-3, 66));
        break;
      case 4:
        v.push_back(uniform<T>(-2, 2));
        break;
      default:
        v.push_back(specials[static_cast<std::size_t>(uniform_int(0, static_cast<int>(specials.size()) - 1))]);
    }
  }
  for (const T s : specials) v.push_back(s);
  return v;
}

// Doubles to narrow to float: the float range and its ends, ties, subnormals.
std::vector<double> to_float_inputs(int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) {
    const float f = random_scaled<float>(-160, 127);
    switch (i % 5) {
      case 0:
        v.push_back(random_bits<double>());
        break;
      case 1:
        v.push_back(random_scaled<double>(-160, 130));
        break;
      case 2:  // exactly halfway between two floats, or just off it
        v.push_back(static_cast<double>(f) + static_cast<double>(ulp_of(f)) / 2 * (coin() ? 1 : -1) +
                    (coin() ? 0.0 : std::ldexp(static_cast<double>(ulp_of(f)), -30)));
        break;
      case 3:
        v.push_back(f);
        break;
      default:
        v.push_back(random_scaled<double>(-1080, 1023));
    }
  }
  const double fmax = FLT_MAX, half_ulp_max = std::ldexp(1.0, 103);
  for (const double s : {1.0, -1.0})
    for (const double x : {fmax, fmax + half_ulp_max, fmax + half_ulp_max / 2, fmax + 2 * half_ulp_max, 1e300, 1e-300, 0x1p-149, 0x1p-150, 0x1.8p-150,
                           0x1p-151, 0x1p-126, 0x1p-126 - 0x1p-150, 1.0 / 3})
      v.push_back(s * x);
  for (const double s : special_values<double>()) v.push_back(s);
  return v;
}

std::vector<long long> integer_inputs(int n) {
  std::vector<long long> v;
  for (int i = 0; i < n; ++i) {
    const auto r = static_cast<long long>(rng()());
    v.push_back(i % 2 ? r : r >> uniform_int(0, 63));  // arithmetic shifts: small magnitudes of either sign
  }
  for (const long long x :
       {0LL, 1LL, -1LL, (1LL << 24) + 1, (1LL << 24) + 3, -(1LL << 24) - 1, (1LL << 53) + 1, -(1LL << 53) - 3, LLONG_MAX, LLONG_MIN,
        static_cast<long long>(INT_MAX), static_cast<long long>(INT_MIN), static_cast<long long>(UINT_MAX), -1LL << 31})
    v.push_back(x);
  return v;
}

// v rounded to an integer by the mode in floating point (floor, ceil, trunc
// and v - floor(v) are exact), then saturated, NaN as the PTX ISA's cvt
// gives it: 0 from float to a 32-bit integer, else 1 << (bits - 1).
template <class Int, class T>
Int reference_to_integer(T v, int mode) {
  if (is_nan(v)) {
    if (std::is_same_v<T, float> && sizeof(Int) == 4) return 0;
    return static_cast<Int>(static_cast<std::make_unsigned_t<Int>>(1) << (8 * sizeof(Int) - 1));
  }
  const double x = v;
  double r;
  switch (mode) {
    case 0: {
      const double down = std::floor(x), rest = x - down;
      r = rest > 0.5 || (rest == 0.5 && std::fmod(down, 2.0) != 0) ? down + 1 : down;
      break;
    }
    case 1:
      r = std::trunc(x);
      break;
    case 2:
      r = std::floor(x);
      break;
    default:
      r = std::ceil(x);
  }
  if (r <= static_cast<double>(std::numeric_limits<Int>::min())) return std::numeric_limits<Int>::min();
  if (r >= static_cast<double>(std::numeric_limits<Int>::max())) return std::numeric_limits<Int>::max();
  return static_cast<Int>(r);
}

template <class Got, class Want>
void expect_conversion(const char* name, std::size_t n, Got got, Want want, int& failures) {
  for (std::size_t i = 0; i < n; ++i)
    for (int m = 0; m < kModes; ++m) {
      const auto g = got(i, m), w = want(i, m);
      bool same;
      if constexpr (std::is_floating_point_v<decltype(g)>)
        same = same_result(g, w);
      else
        same = g == w;
      if (!same && ++failures <= 10) {
        std::ostringstream s;
        if constexpr (std::is_floating_point_v<decltype(g)>)
          s << hex(g) << ", expected " << hex(w);
        else
          s << +g << ", expected " << +w;
        ADD_FAILURE() << name << kModeNames[m] << " of input " << i << " is " << s.str() << " (seed " << fresh_seed() << ")";
      }
    }
}

TEST(RoundingIntrinsics, ConversionsRoundSaturateAndMatchTheHost) {
  const auto floats = to_integer_inputs<float>(kRandomElements);
  const auto doubles = to_integer_inputs<double>(kRandomElements);
  const auto narrows = to_float_inputs(kRandomElements);
  const auto integers = integer_inputs(kRandomElements);
  const std::size_t n = std::max({floats.size(), doubles.size(), narrows.size(), integers.size()});
  std::vector<conversion_args> args(n);
  for (std::size_t i = 0; i < n; ++i)
    args[i] = {floats[i % floats.size()], doubles[i % doubles.size()], narrows[i % narrows.size()], integers[i % integers.size()]};
  device_buffer<conversion_args> in(args);
  device_buffer<conversion_results> out(n);
  lockstep::launch(conversions, blocks_for(n), kThreadsPerBlock)(in.get(), out.get(), static_cast<int>(n));
  const auto got = out.download();

  int failures = 0;
#define EXPECT_TO_INTEGER(name, member, Int, source)                   \
  expect_conversion(                                                   \
      name, n, [&](std::size_t i, int m) { return got[i].member[m]; }, \
      [&](std::size_t i, int m) { return reference_to_integer<Int>(args[i].source, m); }, failures)
  EXPECT_TO_INTEGER("__float2int", f2i, int, f);
  EXPECT_TO_INTEGER("__float2uint", f2u, unsigned, f);
  EXPECT_TO_INTEGER("__float2ll", f2ll, long long, f);
  EXPECT_TO_INTEGER("__float2ull", f2ull, unsigned long long, f);
  EXPECT_TO_INTEGER("__double2int", d2i, int, d);
  EXPECT_TO_INTEGER("__double2uint", d2u, unsigned, d);
  EXPECT_TO_INTEGER("__double2ll", d2ll, long long, d);
  EXPECT_TO_INTEGER("__double2ull", d2ull, unsigned long long, d);
#undef EXPECT_TO_INTEGER
#define EXPECT_TO_FLOATING(name, member, reference) \
  expect_conversion(                                \
      name, n, [&](std::size_t i, int m) { return got[i].member[m]; }, [&](std::size_t i, int m) { return reference; }, failures)
  EXPECT_TO_FLOATING("__int2float", i2f, host_convert_in_mode<float>(static_cast<int>(args[i].i), m));
  EXPECT_TO_FLOATING("__uint2float", u2f, host_from_unsigned_in_mode<float>(static_cast<unsigned>(args[i].i), m));
  EXPECT_TO_FLOATING("__ll2float", ll2f, host_convert_in_mode<float>(args[i].i, m));
  EXPECT_TO_FLOATING("__ull2float", ull2f, host_from_unsigned_in_mode<float>(static_cast<unsigned long long>(args[i].i), m));
  EXPECT_TO_FLOATING("__double2float", d2f, host_convert_in_mode<float>(args[i].narrow, m));
  EXPECT_TO_FLOATING("__ll2double", ll2d, host_convert_in_mode<double>(args[i].i, m));
  EXPECT_TO_FLOATING("__ull2double", ull2d, host_from_unsigned_in_mode<double>(static_cast<unsigned long long>(args[i].i), m));
#undef EXPECT_TO_FLOATING
  for (std::size_t i = 0; i < n; ++i) {
    if (got[i].i2d != static_cast<double>(static_cast<int>(args[i].i)) && ++failures <= 10) ADD_FAILURE() << "__int2double_rn of input " << i;
    if (got[i].u2d != static_cast<double>(static_cast<unsigned>(args[i].i)) && ++failures <= 10) ADD_FAILURE() << "__uint2double_rn of input " << i;
    for (const auto* r : {&got[i].i2f, &got[i].u2f, &got[i].ll2f, &got[i].ull2f, &got[i].d2f})
      if (const std::string broken = ordering_violation(*r); !broken.empty() && ++failures <= 10)
        ADD_FAILURE() << "conversion to float of input " << i << ": " << broken;
    for (const auto* r : {&got[i].ll2d, &got[i].ull2d})
      if (const std::string broken = ordering_violation(*r); !broken.empty() && ++failures <= 10)
        ADD_FAILURE() << "conversion to double of input " << i << ": " << broken;
  }
  EXPECT_EQ(failures, 0) << "conversions wrong (seed " << fresh_seed() << ")";
}

// ---------------------------------------------------------------------------
// The cases CUDA's documentation and the PTX ISA spell out, one by one

struct documented_inputs {
  float zero, one, two, three, four, six, half, max, tiny, inf, nan, float_2_5, float_3_5, float_3e9, float_5e9, float_2p32_below;
  double dzero, done, dtwo, dthree, dsix, dhalf, dmax, dtiny, dinf, dnan, big, small, two_63_below, two_64, int_max_half, int_min_half;
  long long two_24_1, two_24_3, ll_max;
  int i_two_24_1;
  unsigned u_max;
  unsigned long long ull_max;
};

__host__ __device__ unsigned long long encode(float x) {
  unsigned b;
  memcpy(&b, &x, 4);
  return (b & 0x7fffffffu) > 0x7f800000u ? 0x7fc00000u : b;  // one NaN
}
__host__ __device__ unsigned long long encode(double x) {
  unsigned long long b;
  memcpy(&b, &x, 8);
  return (b & ~(1ull << 63)) > 0x7ff0000000000000ull ? 0x7ff8000000000000ull : b;
}
__host__ __device__ unsigned long long encode(long long x) { return static_cast<unsigned long long>(x); }
__host__ __device__ unsigned long long encode(unsigned long long x) { return x; }
__host__ __device__ unsigned long long encode(int x) { return static_cast<unsigned long long>(static_cast<long long>(x)); }
__host__ __device__ unsigned long long encode(unsigned x) { return x; }

// (expression, its value): the value is converted to the expression's type.
#define DOCUMENTED_CASES(X)                                 \
  X(__fadd_rn(k.one, -k.one), 0.0f)                         \
  X(__fadd_rz(k.one, -k.one), 0.0f)                         \
  X(__fadd_rd(k.one, -k.one), -0.0f)                        \
  X(__fadd_ru(k.one, -k.one), 0.0f)                         \
  X(__fsub_rd(k.three, k.three), -0.0f)                     \
  X(__fsub_rd(k.zero, -k.zero), 0.0f)                       \
  X(__fadd_rd(-k.zero, -k.zero), -0.0f)                     \
  X(__fadd_ru(k.one, k.tiny), 0x1.000002p+0f)               \
  X(__fadd_rd(k.one, k.tiny), 1.0f)                         \
  X(__fadd_rd(k.one, -k.tiny), 0x1.fffffep-1f)              \
  X(__fadd_rz(-k.one, -k.tiny), -1.0f)                      \
  X(__fadd_rd(-k.one, -k.tiny), -0x1.000002p+0f)            \
  X(__fadd_rn(k.max, k.max), INFINITY)                      \
  X(__fadd_rz(k.max, k.max), FLT_MAX)                       \
  X(__fadd_rd(k.max, k.max), FLT_MAX)                       \
  X(__fsub_ru(-k.max, k.max), -FLT_MAX)                     \
  X(__fsub_rd(-k.max, k.max), -INFINITY)                    \
  X(__fsub_rz(k.inf, k.inf), k.nan)                         \
  X(__fmul_rz(k.max, k.two), FLT_MAX)                       \
  X(__fmul_ru(k.max, k.two), INFINITY)                      \
  X(__fmul_rd(-k.max, k.two), -INFINITY)                    \
  X(__fmul_ru(-k.max, k.two), -FLT_MAX)                     \
  X(__fmul_rn(k.tiny, k.half), 0.0f)                        \
  X(__fmul_ru(k.tiny, k.half), 0x1p-149f)                   \
  X(__fmul_rd(-k.tiny, k.half), -0x1p-149f)                 \
  X(__fmul_rz(-k.tiny, k.half), -0.0f)                      \
  X(__fmul_rd(k.zero, k.inf), k.nan)                        \
  X(__fdiv_rn(k.one, k.three), 0x1.555556p-2f)              \
  X(__fdiv_rz(k.one, k.three), 0x1.555554p-2f)              \
  X(__fdiv_rd(-k.one, k.three), -0x1.555556p-2f)            \
  X(__fdiv_ru(-k.one, k.three), -0x1.555554p-2f)            \
  X(__fdiv_rd(k.one, -k.zero), -INFINITY)                   \
  X(__fdiv_ru(k.zero, k.zero), k.nan)                       \
  X(__fdiv_rz(k.tiny, k.four), 0.0f)                        \
  X(__fdiv_ru(k.tiny, k.four), 0x1p-149f)                   \
  X(__frcp_rz(k.three), 0x1.555554p-2f)                     \
  X(__frcp_ru(k.three), 0x1.555556p-2f)                     \
  X(__frcp_rd(-k.zero), -INFINITY)                          \
  X(__frcp_rn(k.inf), 0.0f)                                 \
  X(__fsqrt_rd(k.two), 0x1.6a09e6p+0f)                      \
  X(__fsqrt_ru(k.two), 0x1.6a09e8p+0f)                      \
  X(__fsqrt_rz(k.four), 2.0f)                               \
  X(__fsqrt_rd(-k.zero), -0.0f)                             \
  X(__fsqrt_ru(-k.one), k.nan)                              \
  X(__fsqrt_rz(k.inf), INFINITY)                            \
  X(__frsqrt_rn(k.four), 0.5f)                              \
  X(__frsqrt_rn(-k.zero), -INFINITY)                        \
  X(__frsqrt_rn(k.inf), 0.0f)                               \
  X(__frsqrt_rn(-k.one), k.nan)                             \
  X(__fmaf_rn(k.two, k.three, -k.six), 0.0f)                \
  X(__fmaf_rd(k.two, k.three, -k.six), -0.0f)               \
  X(__fmaf_rd(k.two, k.zero, k.zero), 0.0f)                 \
  X(__fmaf_rd(k.two, -k.zero, k.zero), -0.0f)               \
  X(__fmaf_ru(k.two, -k.zero, k.zero), 0.0f)                \
  X(__fmaf_rz(k.max, k.two, -k.max), FLT_MAX)               \
  X(__fmaf_ru(k.tiny, k.half, k.zero), 0x1p-149f)           \
  X(__fmaf_rd(k.inf, k.zero, k.one), k.nan)                 \
  X(__dadd_rd(k.done, -k.done), -0.0)                       \
  X(__dadd_rn(k.done, -k.done), 0.0)                        \
  X(__dsub_rd(k.dzero, k.dzero), -0.0)                      \
  X(__dadd_ru(k.done, k.dtiny), 0x1.0000000000001p+0)       \
  X(__dadd_rz(k.dmax, k.dmax), DBL_MAX)                     \
  X(__dadd_rn(k.dmax, k.dmax), HUGE_VAL)                    \
  X(__dmul_rz(k.dmax, k.dtwo), DBL_MAX)                     \
  X(__dmul_rd(-k.dmax, k.dtwo), -HUGE_VAL)                  \
  X(__dmul_ru(-k.dtiny, k.dhalf), -0.0)                     \
  X(__dmul_rd(-k.dtiny, k.dhalf), -0x0.0000000000001p-1022) \
  X(__ddiv_rd(k.done, k.dthree), 0x1.5555555555555p-2)      \
  X(__ddiv_ru(k.done, k.dthree), 0x1.5555555555556p-2)      \
  X(__ddiv_rz(-k.done, k.dthree), -0x1.5555555555555p-2)    \
  X(__drcp_rz(k.dthree), 0x1.5555555555555p-2)              \
  X(__drcp_ru(-k.dzero), -HUGE_VAL)                         \
  X(__dsqrt_rn(k.dtwo), 0x1.6a09e667f3bcdp+0)               \
  X(__dsqrt_rd(k.dtwo), 0x1.6a09e667f3bccp+0)               \
  X(__dsqrt_ru(k.dtwo), 0x1.6a09e667f3bcdp+0)               \
  X(__dsqrt_rz(-k.dzero), -0.0)                             \
  X(__fma_rn(k.dtwo, k.dthree, -k.dsix), 0.0)               \
  X(__fma_rd(k.dtwo, k.dthree, -k.dsix), -0.0)              \
  X(__fma_rz(k.dmax, k.dtwo, -k.dmax), DBL_MAX)             \
  X(__fma_ru(k.dinf, k.done, -k.dinf), k.dnan)              \
  X(__float2int_rn(k.float_2_5), 2)                         \
  X(__float2int_rn(k.float_3_5), 4)                         \
  X(__float2int_rn(-k.float_2_5), -2)                       \
  X(__float2int_rd(-k.half), -1)                            \
  X(__float2int_ru(-k.half), 0)                             \
  X(__float2int_ru(k.float_3e9), INT_MAX)                   \
  X(__float2int_rz(-k.float_3e9), INT_MIN)                  \
  X(__float2int_rn(k.nan), 0)                               \
  X(__float2uint_rd(-k.half), 0u)                           \
  X(__float2uint_ru(k.float_2p32_below), 4294967040u)       \
  X(__float2uint_rn(k.float_5e9), UINT_MAX)                 \
  X(__float2uint_rz(k.nan), 0u)                             \
  X(__float2ll_rn(k.nan), LLONG_MIN)                        \
  X(__float2ll_rd(-k.inf), LLONG_MIN)                       \
  X(__float2ll_ru(k.float_3e9), 3000000000LL)               \
  X(__float2ull_rz(k.nan), 1ull << 63)                      \
  X(__float2ull_ru(k.inf), ULLONG_MAX)                      \
  X(__double2int_rn(k.dnan), INT_MIN)                       \
  X(__double2int_rn(k.int_max_half), INT_MAX)               \
  X(__double2int_rd(k.int_min_half), INT_MIN)               \
  X(__double2int_ru(k.int_min_half), INT_MIN)               \
  X(__double2uint_rn(k.dnan), 0x80000000u)                  \
  X(__double2uint_ru(-k.dhalf), 0u)                         \
  X(__double2ll_rd(k.dnan), LLONG_MIN)                      \
  X(__double2ll_rn(k.two_63_below), 9223372036854774784LL)  \
  X(__double2ll_ru(k.two_64), LLONG_MAX)                    \
  X(__double2ull_ru(k.dnan), 1ull << 63)                    \
  X(__double2ull_rd(-k.done), 0ull)                         \
  X(__double2ull_rz(k.two_64), ULLONG_MAX)                  \
  X(__int2float_rn(k.i_two_24_1), 16777216.0f)              \
  X(__int2float_ru(k.i_two_24_1), 16777218.0f)              \
  X(__int2float_rd(-k.i_two_24_1), -16777218.0f)            \
  X(__int2float_rz(-k.i_two_24_1), -16777216.0f)            \
  X(__uint2float_ru(k.u_max), 4294967296.0f)                \
  X(__uint2float_rz(k.u_max), 4294967040.0f)                \
  X(__ll2float_rn(k.two_24_3), 16777220.0f)                 \
  X(__ll2float_rz(k.two_24_1), 16777216.0f)                 \
  X(__ll2float_ru(k.two_24_1), 16777218.0f)                 \
  X(__ull2float_rn(k.ull_max), 0x1p+64f)                    \
  X(__ull2float_rd(k.ull_max), 0x1.fffffep+63f)             \
  X(__ll2double_rn(k.ll_max), 0x1p+63)                      \
  X(__ll2double_rz(k.ll_max), 0x1.fffffffffffffp+62)        \
  X(__ull2double_rd(k.ull_max), 0x1.fffffffffffffp+63)      \
  X(__ull2double_ru(k.ull_max), 0x1p+64)                    \
  X(__int2double_rn(k.i_two_24_1), 16777217.0)              \
  X(__uint2double_rn(k.u_max), 4294967295.0)                \
  X(__double2float_rz(k.big), FLT_MAX)                      \
  X(__double2float_ru(k.big), INFINITY)                     \
  X(__double2float_rd(-k.big), -INFINITY)                   \
  X(__double2float_ru(-k.big), -FLT_MAX)                    \
  X(__double2float_ru(k.small), 0x1p-149f)                  \
  X(__double2float_rd(k.small), 0.0f)                       \
  X(__double2float_rd(-k.small), -0x1p-149f)                \
  X(__double2float_rn(-k.small), -0.0f)                     \
  X(__double2float_rz(k.dthree), 3.0f)                      \
  X(__double2float_rn(k.dnan), k.nan)

__global__ void documented_cases(const documented_inputs* in, unsigned long long* got, unsigned long long* want) {
  const documented_inputs k = *in;
  int n = 0;
#define COMPUTE(expression, value)                            \
  got[n] = encode(expression);                                \
  want[n] = encode(static_cast<decltype(expression)>(value)); \
  ++n;
  DOCUMENTED_CASES(COMPUTE)
#undef COMPUTE
}

TEST(RoundingIntrinsics, DocumentedCases) {
  const char* const names[] = {
#define NAME(expression, value) #expression " is " #value,
      DOCUMENTED_CASES(NAME)
#undef NAME
  };
  constexpr int n = sizeof(names) / sizeof(names[0]);
  documented_inputs k{};
  k.zero = 0, k.one = 1, k.two = 2, k.three = 3, k.four = 4, k.six = 6, k.half = 0.5f, k.max = FLT_MAX, k.tiny = 0x1p-149f;
  k.inf = HUGE_VALF, k.nan = std::numeric_limits<float>::quiet_NaN();
  k.float_2_5 = 2.5f, k.float_3_5 = 3.5f, k.float_3e9 = 3e9f, k.float_5e9 = 5e9f, k.float_2p32_below = 4294967040.0f;
  k.dzero = 0, k.done = 1, k.dtwo = 2, k.dthree = 3, k.dsix = 6, k.dhalf = 0.5, k.dmax = DBL_MAX, k.dtiny = 0x0.0000000000001p-1022;
  k.dinf = HUGE_VAL, k.dnan = std::numeric_limits<double>::quiet_NaN(), k.big = 1e300, k.small = 1e-300;
  k.two_63_below = 0x1.fffffffffffffp+62, k.two_64 = 0x1p+64, k.int_max_half = 2147483647.5, k.int_min_half = -2147483648.5;
  k.two_24_1 = (1LL << 24) + 1, k.two_24_3 = (1LL << 24) + 3, k.ll_max = LLONG_MAX, k.i_two_24_1 = (1 << 24) + 1;
  k.u_max = UINT_MAX, k.ull_max = ULLONG_MAX;
  device_buffer<documented_inputs> in(std::vector<documented_inputs>{k});
  device_buffer<unsigned long long> got(n), want(n);
  lockstep::launch(documented_cases, 1, 1)(in.get(), got.get(), want.get());
  const auto g = got.download(), w = want.download();
  for (int i = 0; i < n; ++i) EXPECT_EQ(g[i], w[i]) << names[i] << std::hex << ": got bits 0x" << g[i] << ", expected 0x" << w[i];
}

}  // namespace
