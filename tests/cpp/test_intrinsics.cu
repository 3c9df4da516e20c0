// Math functions, integer and bit intrinsics, conversions, vector types,
// __ldg, memory fences and clock64, computed in kernels over fresh random
// inputs and compared with host references written independently of the
// emulator's implementations (in double precision for float functions).
// Tolerances fit the GPU's documented error bounds as well, so the same
// tests pass on an H100.
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "test_util.h"

using namespace testing_util;

namespace {

constexpr int kThreadsPerBlock = 256;
constexpr int kElements = 10000;  // not a multiple of the block, so the bounds checks matter
constexpr int kBlocks = (kElements + kThreadsPerBlock - 1) / kThreadsPerBlock;
constexpr float kPi = 3.14159265f;
const float kNaN = std::numeric_limits<float>::quiet_NaN();

__device__ int element_index() { return blockIdx.x * blockDim.x + threadIdx.x; }

// Each element of the reference within abs_tol + rel_tol * |reference|;
// reports how many are not, and the first few.
template <class T>
void expect_near_reference(const char* what, const std::vector<T>& got, const std::vector<double>& want, double rel_tol, double abs_tol = 0.0) {
  int failures = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double error = std::abs(static_cast<double>(got[i]) - want[i]);
    if (error <= abs_tol + rel_tol * std::abs(want[i])) continue;
    if (++failures <= 3) ADD_FAILURE() << what << "[" << i << "] is " << got[i] << ", expected " << want[i];
  }
  EXPECT_EQ(failures, 0) << what << ": elements off the reference (seed " << fresh_seed() << ")";
}

// Bit-for-bit equality, for integer results and exact conversions.
template <class T>
void expect_equal(const char* what, const std::vector<T>& got, const std::vector<T>& want) {
  int failures = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(T)) == 0) continue;
    if (++failures <= 3) ADD_FAILURE() << what << "[" << i << "] is " << +got[i] << ", expected " << +want[i];
  }
  EXPECT_EQ(failures, 0) << what << ": elements differ (seed " << fresh_seed() << ")";
}

// One field of every element of an array of structs.
template <class S, class F>
std::vector<F> field(const std::vector<S>& v, F S::*member) {
  std::vector<F> out;
  for (const S& s : v) out.push_back(s.*member);
  return out;
}

template <class T, class F>
std::vector<double> reference(const std::vector<T>& in, F f) {
  std::vector<double> out;
  for (const T& x : in) out.push_back(f(x));
  return out;
}

template <class T>
std::vector<T> random_bits(std::size_t n) {
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(rng()());
  return v;
}

// ---------------------------------------------------------------------------
// Float math

struct float_args {
  float exp_arg;   // [-10, 10]
  float log_arg;   // [1e-3, 1e3]
  float trig_arg;  // [-pi, pi], where __sinf and __cosf keep their error bound
  float num, den;  // |den| in [0.5, 1000]
  float a, b, c;   // fmaf(a, b, c)
  float positive;  // [1e-3, 1e3] for rsqrtf
  float sat_arg;   // [-0.5, 1.5], sometimes NaN
};

struct float_results {
  float fast_exp, fast_log, fast_sin, fast_cos, fast_divide, rsqrt, fma, fma_rn, sin, cos, saturate;
};

__global__ void float_functions(const float_args* in, float_results* out, int n) {
  const int i = element_index();
  if (i >= n) return;
  const float_args x = in[i];
  float_results r;
  r.fast_exp = __expf(x.exp_arg);
  r.fast_log = __logf(x.log_arg);
  r.fast_sin = __sinf(x.trig_arg);
  r.fast_cos = __cosf(x.trig_arg);
  r.fast_divide = __fdividef(x.num, x.den);
  r.rsqrt = rsqrtf(x.positive);
  r.fma = fmaf(x.a, x.b, x.c);
  r.fma_rn = __fmaf_rn(x.a, x.b, x.c);
  sincosf(x.trig_arg, &r.sin, &r.cos);
  r.saturate = __saturatef(x.sat_arg);
  out[i] = r;
}

std::vector<float_args> random_float_args(int n) {
  const auto exp_arg = random_vector<float>(n, -10, 10), trig = random_vector<float>(n, -kPi, kPi);
  const auto log_exponent = random_vector<double>(n, -3, 3), positive_exponent = random_vector<double>(n, -3, 3);
  const auto num = random_vector<float>(n, -1000, 1000), den = random_vector<float>(n, 0.5, 1000);
  const auto a = random_vector<float>(n, -10, 10), b = random_vector<float>(n, -10, 10), c = random_vector<float>(n, -100, 100);
  const auto sat = random_vector<float>(n, -0.5, 1.5);
  const auto sign = random_vector<int>(n, 0, 1);
  std::vector<float_args> args(n);
  for (int i = 0; i < n; ++i) {
    args[i] = {exp_arg[i],
               static_cast<float>(std::pow(10.0, log_exponent[i])),
               trig[i],
               num[i],
               sign[i] ? den[i] : -den[i],
               a[i],
               b[i],
               c[i],
               static_cast<float>(std::pow(10.0, positive_exponent[i])),
               i % 16 == 5 ? kNaN : sat[i]};
  }
  return args;
}

TEST(Intrinsics, FloatFunctionsMatchDoublePrecision) {
  const auto args = random_float_args(kElements);
  device_buffer<float_args> in(args);
  device_buffer<float_results> out(kElements);
  lockstep::launch(float_functions, kBlocks, kThreadsPerBlock)(in.get(), out.get(), kElements);
  const auto got = out.download();

  // Fast intrinsics: the GPU guarantees a few ulp (growing with |x| for
  // __expf), or an absolute error of 2^-21.41 where the result nears zero.
  expect_near_reference("__expf", field(got, &float_results::fast_exp),
                        reference(args, [](const float_args& x) { return std::exp(double(x.exp_arg)); }), 1e-5);
  expect_near_reference("__logf", field(got, &float_results::fast_log),
                        reference(args, [](const float_args& x) { return std::log(double(x.log_arg)); }), 1e-5, 1e-6);
  expect_near_reference("__sinf", field(got, &float_results::fast_sin),
                        reference(args, [](const float_args& x) { return std::sin(double(x.trig_arg)); }), 1e-5, 1e-6);
  expect_near_reference("__cosf", field(got, &float_results::fast_cos),
                        reference(args, [](const float_args& x) { return std::cos(double(x.trig_arg)); }), 1e-5, 1e-6);
  expect_near_reference("__fdividef", field(got, &float_results::fast_divide),
                        reference(args, [](const float_args& x) { return double(x.num) / double(x.den); }), 1e-5);
  // Full-precision functions: within 2 ulp, or correctly rounded (fma).
  expect_near_reference("rsqrtf", field(got, &float_results::rsqrt),
                        reference(args, [](const float_args& x) { return 1.0 / std::sqrt(double(x.positive)); }), 1e-6);
  const auto exact_fma = [](const float_args& x) { return double(x.a) * double(x.b) + double(x.c); };  // a*b is exact in double
  expect_near_reference("fmaf", field(got, &float_results::fma), reference(args, exact_fma), 1e-6, 1e-30);
  expect_near_reference("__fmaf_rn", field(got, &float_results::fma_rn), reference(args, exact_fma), 1e-6, 1e-30);
  expect_near_reference("sincosf sine", field(got, &float_results::sin),
                        reference(args, [](const float_args& x) { return std::sin(double(x.trig_arg)); }), 1e-6, 1e-12);
  expect_near_reference("sincosf cosine", field(got, &float_results::cos),
                        reference(args, [](const float_args& x) { return std::cos(double(x.trig_arg)); }), 1e-6, 1e-12);
  // Clamps to [0, 1]; NaN becomes 0, as the PTX .sat modifier defines.
  expect_near_reference(
      "__saturatef", field(got, &float_results::saturate),
      reference(args, [](const float_args& x) { return std::isnan(x.sat_arg) ? 0.0 : std::fmin(std::fmax(double(x.sat_arg), 0.0), 1.0); }), 0.0);
}

// ---------------------------------------------------------------------------
// min and max, which CUDA overloads in the global namespace

struct min_max_args {
  int i1, i2;
  unsigned u1, u2;
  float f1, f2;  // sometimes NaN: CUDA's float min/max return the other operand
  double d1, d2;
};

struct min_max_results {
  int imin, imax;
  unsigned umin, umax;
  float fmin, fmax;
  double dmin, dmax;
};

__global__ void min_max(const min_max_args* in, min_max_results* out, int n) {
  const int i = element_index();
  if (i >= n) return;
  const min_max_args x = in[i];
  out[i] = {min(x.i1, x.i2), max(x.i1, x.i2), min(x.u1, x.u2), max(x.u1, x.u2), min(x.f1, x.f2), max(x.f1, x.f2), min(x.d1, x.d2), max(x.d1, x.d2)};
}

TEST(Intrinsics, MinAndMaxOnEachType) {
  const auto ints = random_bits<int>(2 * kElements);
  const auto uints = random_bits<unsigned>(2 * kElements);
  const auto floats = random_vector<float>(2 * kElements, -1e3, 1e3);
  const auto doubles = random_vector<double>(2 * kElements, -1e3, 1e3);
  std::vector<min_max_args> args(kElements);
  for (int i = 0; i < kElements; ++i) {
    args[i] = {ints[2 * i], ints[2 * i + 1], uints[2 * i], uints[2 * i + 1], floats[2 * i], floats[2 * i + 1], doubles[2 * i], doubles[2 * i + 1]};
    if (i % 16 == 3) args[i].f1 = kNaN;
    if (i % 16 == 7) args[i].f2 = kNaN;
    if (i % 16 == 9) args[i].i2 = args[i].i1;  // equal operands
  }
  device_buffer<min_max_args> in(args);
  device_buffer<min_max_results> out(kElements);
  lockstep::launch(min_max, kBlocks, kThreadsPerBlock)(in.get(), out.get(), kElements);
  const auto got = out.download();

  std::vector<min_max_results> want(kElements);
  const auto fmin_ref = [](float a, float b) { return std::isnan(a) ? b : std::isnan(b) ? a : (a < b ? a : b); };
  const auto fmax_ref = [](float a, float b) { return std::isnan(a) ? b : std::isnan(b) ? a : (a > b ? a : b); };
  for (int i = 0; i < kElements; ++i) {
    const auto& x = args[i];
    want[i] = {x.i1 < x.i2 ? x.i1 : x.i2, x.i1 > x.i2 ? x.i1 : x.i2, x.u1 < x.u2 ? x.u1 : x.u2, x.u1 > x.u2 ? x.u1 : x.u2,
               fmin_ref(x.f1, x.f2),      fmax_ref(x.f1, x.f2),      x.d1 < x.d2 ? x.d1 : x.d2, x.d1 > x.d2 ? x.d1 : x.d2};
  }
  expect_equal("min(int, int)", field(got, &min_max_results::imin), field(want, &min_max_results::imin));
  expect_equal("max(int, int)", field(got, &min_max_results::imax), field(want, &min_max_results::imax));
  expect_equal("min(unsigned, unsigned)", field(got, &min_max_results::umin), field(want, &min_max_results::umin));
  expect_equal("max(unsigned, unsigned)", field(got, &min_max_results::umax), field(want, &min_max_results::umax));
  expect_equal("min(float, float)", field(got, &min_max_results::fmin), field(want, &min_max_results::fmin));
  expect_equal("max(float, float)", field(got, &min_max_results::fmax), field(want, &min_max_results::fmax));
  expect_equal("min(double, double)", field(got, &min_max_results::dmin), field(want, &min_max_results::dmin));
  expect_equal("max(double, double)", field(got, &min_max_results::dmax), field(want, &min_max_results::dmax));
}

// ---------------------------------------------------------------------------
// Integer and bit intrinsics

struct int_args {
  unsigned a, b;
  unsigned long long c, d;
  unsigned shift;  // [0, 63]: the funnel shifts use shift & 31
};

struct int_results {
  int popc, popcll, clz, clzll, ffs, ffsll;
  unsigned brev;
  int mul24;
  unsigned umul24;
  int mulhi;
  unsigned umulhi;
  long long mul64hi;
  unsigned long long umul64hi;
  unsigned funnel_left, funnel_right;
};

__global__ void integer_intrinsics(const int_args* in, int_results* out, int n) {
  const int i = element_index();
  if (i >= n) return;
  const int_args x = in[i];
  const int a = static_cast<int>(x.a), b = static_cast<int>(x.b);
  const long long c = static_cast<long long>(x.c), d = static_cast<long long>(x.d);
  int_results r;
  r.popc = __popc(x.a);
  r.popcll = __popcll(x.c);
  r.clz = __clz(a);
  r.clzll = __clzll(c);
  r.ffs = __ffs(a);
  r.ffsll = __ffsll(c);
  r.brev = __brev(x.a);
  r.mul24 = __mul24(a, b);
  r.umul24 = __umul24(x.a, x.b);
  r.mulhi = __mulhi(a, b);
  r.umulhi = __umulhi(x.a, x.b);
  r.mul64hi = __mul64hi(c, d);
  r.umul64hi = __umul64hi(x.c, x.d);
  r.funnel_left = __funnelshift_l(x.a, x.b, x.shift);
  r.funnel_right = __funnelshift_r(x.a, x.b, x.shift);
  out[i] = r;
}

// Host references, bit by bit or in wider integers.
int count_ones(unsigned long long x) {
  int n = 0;
  for (; x; x >>= 1) n += int(x & 1);
  return n;
}
int leading_zeros(unsigned long long x, int bits) {
  int n = 0;
  while (n < bits && !((x >> (bits - 1 - n)) & 1)) ++n;
  return n;
}
int first_set_bit(unsigned long long x, int bits) {  // 1-based, 0 when none
  for (int k = 0; k < bits; ++k)
    if ((x >> k) & 1) return k + 1;
  return 0;
}
unsigned reverse_bits(unsigned x) {
  unsigned r = 0;
  for (int k = 0; k < 32; ++k) r = (r << 1) | ((x >> k) & 1u);
  return r;
}
long long low_24_bits_signed(unsigned x) { return (x & 0x800000u) ? static_cast<long long>(x & 0xffffffu) - 0x1000000 : x & 0xffffffu; }

int_results int_reference(const int_args& x) {
  const __int128 c = static_cast<long long>(x.c), d = static_cast<long long>(x.d);
  const unsigned long long hi_lo = (static_cast<unsigned long long>(x.b) << 32) | x.a;
  int_results r;
  r.popc = count_ones(x.a);
  r.popcll = count_ones(x.c);
  r.clz = leading_zeros(x.a, 32);
  r.clzll = leading_zeros(x.c, 64);
  r.ffs = first_set_bit(x.a, 32);
  r.ffsll = first_set_bit(x.c, 64);
  r.brev = reverse_bits(x.a);
  r.mul24 = static_cast<int>(static_cast<unsigned>(low_24_bits_signed(x.a) * low_24_bits_signed(x.b)));  // low 32 bits
  r.umul24 = (x.a & 0xffffffu) * (x.b & 0xffffffu);
  r.mulhi = static_cast<int>((static_cast<long long>(static_cast<int>(x.a)) * static_cast<int>(x.b)) >> 32);
  r.umulhi = static_cast<unsigned>((static_cast<unsigned long long>(x.a) * x.b) >> 32);
  r.mul64hi = static_cast<long long>((c * d) >> 64);
  r.umul64hi = static_cast<unsigned long long>((static_cast<unsigned __int128>(x.c) * x.d) >> 64);
  r.funnel_left = static_cast<unsigned>((hi_lo << (x.shift & 31)) >> 32);
  r.funnel_right = static_cast<unsigned>(hi_lo >> (x.shift & 31));
  return r;
}

TEST(Intrinsics, IntegerIntrinsicsMatchBitByBitReferences) {
  auto a = random_bits<unsigned>(kElements), b = random_bits<unsigned>(kElements);
  auto c = random_bits<unsigned long long>(kElements), d = random_bits<unsigned long long>(kElements);
  const auto shifts = random_vector<unsigned>(kElements, 0, 63);
  // The edges: no bits, one bit at either end, every bit, and the sign bit of a 24-bit operand.
  const unsigned edges32[] = {0u, 1u, 0x80000000u, 0xffffffffu, 0x00800000u, 0xff7fffffu};
  const unsigned long long edges64[] = {0ull, 1ull, 1ull << 63, ~0ull, 0xffffffffull, 1ull << 32};
  for (int k = 0; k < 6; ++k)
    for (int j = 0; j < 6; ++j) {
      a[6 * k + j] = edges32[k];
      b[6 * k + j] = edges32[j];
      c[6 * k + j] = edges64[k];
      d[6 * k + j] = edges64[j];
    }
  std::vector<int_args> args(kElements);
  for (int i = 0; i < kElements; ++i) args[i] = {a[i], b[i], c[i], d[i], shifts[i]};
  device_buffer<int_args> in(args);
  device_buffer<int_results> out(kElements);
  lockstep::launch(integer_intrinsics, kBlocks, kThreadsPerBlock)(in.get(), out.get(), kElements);
  const auto got = out.download();
  std::vector<int_results> want;
  for (const auto& x : args) want.push_back(int_reference(x));

  expect_equal("__popc", field(got, &int_results::popc), field(want, &int_results::popc));
  expect_equal("__popcll", field(got, &int_results::popcll), field(want, &int_results::popcll));
  expect_equal("__clz", field(got, &int_results::clz), field(want, &int_results::clz));
  expect_equal("__clzll", field(got, &int_results::clzll), field(want, &int_results::clzll));
  expect_equal("__ffs", field(got, &int_results::ffs), field(want, &int_results::ffs));
  expect_equal("__ffsll", field(got, &int_results::ffsll), field(want, &int_results::ffsll));
  expect_equal("__brev", field(got, &int_results::brev), field(want, &int_results::brev));
  expect_equal("__mul24", field(got, &int_results::mul24), field(want, &int_results::mul24));
  expect_equal("__umul24", field(got, &int_results::umul24), field(want, &int_results::umul24));
  expect_equal("__mulhi", field(got, &int_results::mulhi), field(want, &int_results::mulhi));
  expect_equal("__umulhi", field(got, &int_results::umulhi), field(want, &int_results::umulhi));
  expect_equal("__mul64hi", field(got, &int_results::mul64hi), field(want, &int_results::mul64hi));
  expect_equal("__umul64hi", field(got, &int_results::umul64hi), field(want, &int_results::umul64hi));
  expect_equal("__funnelshift_l", field(got, &int_results::funnel_left), field(want, &int_results::funnel_left));
  expect_equal("__funnelshift_r", field(got, &int_results::funnel_right), field(want, &int_results::funnel_right));
}

// ---------------------------------------------------------------------------
// Bit casts and rounding conversions

struct conversion_args {
  float f;
  double d;
  int bits;
};

struct conversion_results {
  int as_int;
  unsigned as_uint;
  float from_bits;
  int round_trip;
  int rn, rz, rd, ru;
  unsigned unsigned_rn;
  int double_rn;
};

__global__ void conversions(const conversion_args* in, conversion_results* out, int n) {
  const int i = element_index();
  if (i >= n) return;
  const conversion_args x = in[i];
  conversion_results r;
  r.as_int = __float_as_int(x.f);
  r.as_uint = __float_as_uint(x.f);
  r.from_bits = __int_as_float(x.bits);
  r.round_trip = __float_as_int(__int_as_float(x.bits));
  r.rn = __float2int_rn(x.f);
  r.rz = __float2int_rz(x.f);
  r.rd = __float2int_rd(x.f);
  r.ru = __float2int_ru(x.f);
  r.unsigned_rn = __float2uint_rn(x.f);
  r.double_rn = __double2int_rn(x.d);
  out[i] = r;
}

// The GPU's float-to-integer conversions saturate at the ends of the range
// (PTX cvt); in C++ such a conversion is undefined. NaN becomes 0 from float,
// but INT_MIN from double, as an H100 does.
template <class Int>
Int saturate(double rounded, Int if_nan = 0) {
  if (std::isnan(rounded)) return if_nan;
  if (rounded <= static_cast<double>(std::numeric_limits<Int>::min())) return std::numeric_limits<Int>::min();
  if (rounded >= static_cast<double>(std::numeric_limits<Int>::max())) return std::numeric_limits<Int>::max();
  return static_cast<Int>(rounded);
}

// Random values, values halfway between integers (where round-to-nearest-even
// matters), integers, and values at or past the ends of the int range.
template <class T>
std::vector<T> conversion_inputs(int n) {
  const T inf = std::numeric_limits<T>::infinity();
  const std::vector<T> specials{0.5,
                                -0.5,
                                1.5,
                                -1.5,
                                2.5,
                                -2.5,
                                -0.0,
                                2147483520.0,
                                2147483648.0,
                                -2147483648.0,
                                3e9,
                                -3e9,
                                4294967040.0,
                                5e9,
                                1e20,
                                -1e20,
                                inf,
                                -inf,
                                std::numeric_limits<T>::quiet_NaN()};
  const auto uniform = random_vector<T>(n, -1e6, 1e6);
  const auto integers = random_vector<int>(n, -1000, 1000);
  const auto kinds = random_vector<int>(n, 0, 3);
  std::vector<T> v(n);
  for (int i = 0; i < n; ++i) {
    switch (kinds[i]) {
      case 0:
        v[i] = uniform[i];
        break;
      case 1:
        v[i] = static_cast<T>(integers[i] + 0.5);
        break;
      case 2:
        v[i] = static_cast<T>(integers[i]);
        break;
      default:
        v[i] = specials[static_cast<std::size_t>(integers[i] + 1000) % specials.size()];
    }
  }
  return v;
}

TEST(Intrinsics, BitCastsAndRoundingConversions) {
  const auto floats = conversion_inputs<float>(kElements);
  const auto doubles = conversion_inputs<double>(kElements);
  const auto bits = random_bits<int>(kElements);
  std::vector<conversion_args> args(kElements);
  for (int i = 0; i < kElements; ++i) args[i] = {floats[i], doubles[i], bits[i]};
  device_buffer<conversion_args> in(args);
  device_buffer<conversion_results> out(kElements);
  lockstep::launch(conversions, kBlocks, kThreadsPerBlock)(in.get(), out.get(), kElements);
  const auto got = out.download();

  std::vector<conversion_results> want(kElements);
  for (int i = 0; i < kElements; ++i) {
    const double f = floats[i];
    auto& w = want[i];
    std::memcpy(&w.as_int, &floats[i], 4);
    std::memcpy(&w.as_uint, &floats[i], 4);
    std::memcpy(&w.from_bits, &bits[i], 4);
    w.round_trip = bits[i];
    w.rn = saturate<int>(std::nearbyint(f));  // the host rounds to nearest even by default
    w.rz = saturate<int>(std::trunc(f));
    w.rd = saturate<int>(std::floor(f));
    w.ru = saturate<int>(std::ceil(f));
    w.unsigned_rn = saturate<unsigned>(std::nearbyint(f));
    w.double_rn = saturate<int>(std::nearbyint(doubles[i]), INT_MIN);
  }
  expect_equal("__float_as_int", field(got, &conversion_results::as_int), field(want, &conversion_results::as_int));
  expect_equal("__float_as_uint", field(got, &conversion_results::as_uint), field(want, &conversion_results::as_uint));
  expect_equal("__int_as_float", field(got, &conversion_results::from_bits), field(want, &conversion_results::from_bits));
  expect_equal("__float_as_int(__int_as_float(x))", field(got, &conversion_results::round_trip), field(want, &conversion_results::round_trip));
  expect_equal("__float2int_rn", field(got, &conversion_results::rn), field(want, &conversion_results::rn));
  expect_equal("__float2int_rz", field(got, &conversion_results::rz), field(want, &conversion_results::rz));
  expect_equal("__float2int_rd", field(got, &conversion_results::rd), field(want, &conversion_results::rd));
  expect_equal("__float2int_ru", field(got, &conversion_results::ru), field(want, &conversion_results::ru));
  expect_equal("__float2uint_rn", field(got, &conversion_results::unsigned_rn), field(want, &conversion_results::unsigned_rn));
  expect_equal("__double2int_rn", field(got, &conversion_results::double_rn), field(want, &conversion_results::double_rn));
}

// ---------------------------------------------------------------------------
// Vector types

#define EXPECT_LAYOUT(type, size, align)         \
  do {                                           \
    EXPECT_EQ(sizeof(type), size##u) << #type;   \
    EXPECT_EQ(alignof(type), align##u) << #type; \
  } while (0)

// The sizes and alignments of CUDA's vector_types.h: 2- and 4-vectors are
// aligned to their size (at most 16), 1- and 3-vectors to their element.
TEST(Intrinsics, VectorTypesHaveCudasSizeAndAlignment) {
  EXPECT_LAYOUT(char1, 1, 1);
  EXPECT_LAYOUT(char2, 2, 2);
  EXPECT_LAYOUT(char3, 3, 1);
  EXPECT_LAYOUT(char4, 4, 4);
  EXPECT_LAYOUT(uchar2, 2, 2);
  EXPECT_LAYOUT(uchar4, 4, 4);
  EXPECT_LAYOUT(short2, 4, 4);
  EXPECT_LAYOUT(short3, 6, 2);
  EXPECT_LAYOUT(short4, 8, 8);
  EXPECT_LAYOUT(ushort4, 8, 8);
  EXPECT_LAYOUT(int1, 4, 4);
  EXPECT_LAYOUT(int2, 8, 8);
  EXPECT_LAYOUT(int3, 12, 4);
  EXPECT_LAYOUT(int4, 16, 16);
  EXPECT_LAYOUT(uint2, 8, 8);
  EXPECT_LAYOUT(uint3, 12, 4);
  EXPECT_LAYOUT(uint4, 16, 16);
  EXPECT_LAYOUT(float1, 4, 4);
  EXPECT_LAYOUT(float2, 8, 8);
  EXPECT_LAYOUT(float3, 12, 4);
  EXPECT_LAYOUT(float4, 16, 16);
  EXPECT_LAYOUT(longlong2, 16, 16);
  EXPECT_LAYOUT(ulonglong2, 16, 16);
  EXPECT_LAYOUT(double1, 8, 8);
  EXPECT_LAYOUT(double2, 16, 16);
  EXPECT_LAYOUT(double3, 24, 8);
  EXPECT_LAYOUT(dim3, 12, 4);
}

struct made_vectors {
  float2 f2;
  float3 f3;
  float4 f4;
  int2 i2;
  int4 i4;
  uchar4 u4;
  char2 c2;
  short4 s4;
  double2 d2;
};

__global__ void make_vectors(const float* f, const int* k, const double* d, made_vectors* out, int n) {
  const int i = element_index();
  if (i >= n) return;
  const float* fi = f + 4 * i;
  const int* ki = k + 4 * i;
  made_vectors v;
  v.f2 = make_float2(fi[0], fi[1]);
  v.f3 = make_float3(fi[0], fi[1], fi[2]);
  v.f4 = make_float4(fi[0], fi[1], fi[2], fi[3]);
  v.i2 = make_int2(ki[0], ki[1]);
  v.i4 = make_int4(ki[0], ki[1], ki[2], ki[3]);
  v.u4 = make_uchar4(static_cast<unsigned char>(ki[0]), static_cast<unsigned char>(ki[1]), static_cast<unsigned char>(ki[2]),
                     static_cast<unsigned char>(ki[3]));
  v.c2 = make_char2(static_cast<signed char>(ki[2]), static_cast<signed char>(ki[3]));
  v.s4 = make_short4(static_cast<short>(ki[0]), static_cast<short>(ki[1]), static_cast<short>(ki[2]), static_cast<short>(ki[3]));
  v.d2 = make_double2(d[2 * i], d[2 * i + 1]);
  out[i] = v;
}

TEST(Intrinsics, MakeFunctionsFillEveryComponent) {
  const auto f = random_vector<float>(4 * kElements);
  const auto d = random_vector<double>(2 * kElements);
  const auto k = random_vector<int>(4 * kElements, INT_MIN, INT_MAX);
  device_buffer<float> df(f);
  device_buffer<int> dk(k);
  device_buffer<double> dd(d);
  device_buffer<made_vectors> out(kElements);
  lockstep::launch(make_vectors, kBlocks, kThreadsPerBlock)(df.get(), dk.get(), dd.get(), out.get(), kElements);
  const auto got = out.download();
  for (int i = 0; i < kElements; ++i) {
    const made_vectors& v = got[i];
    const float* fi = &f[4 * i];
    const int* ki = &k[4 * i];
    SCOPED_TRACE("element " + std::to_string(i) + ", seed " + std::to_string(fresh_seed()));
    ASSERT_TRUE(v.f2.x == fi[0] && v.f2.y == fi[1]);
    ASSERT_TRUE(v.f3.x == fi[0] && v.f3.y == fi[1] && v.f3.z == fi[2]);
    ASSERT_TRUE(v.f4.x == fi[0] && v.f4.y == fi[1] && v.f4.z == fi[2] && v.f4.w == fi[3]);
    ASSERT_TRUE(v.i2.x == ki[0] && v.i2.y == ki[1]);
    ASSERT_TRUE(v.i4.x == ki[0] && v.i4.y == ki[1] && v.i4.z == ki[2] && v.i4.w == ki[3]);
    ASSERT_TRUE(v.u4.x == (ki[0] & 0xff) && v.u4.y == (ki[1] & 0xff) && v.u4.z == (ki[2] & 0xff) && v.u4.w == (ki[3] & 0xff));
    ASSERT_TRUE(v.c2.x == static_cast<signed char>(ki[2]) && v.c2.y == static_cast<signed char>(ki[3]));
    ASSERT_TRUE(v.s4.x == static_cast<short>(ki[0]) && v.s4.y == static_cast<short>(ki[1]) && v.s4.z == static_cast<short>(ki[2]) &&
                v.s4.w == static_cast<short>(ki[3]));
    ASSERT_TRUE(v.d2.x == d[2 * i] && v.d2.y == d[2 * i + 1]);
  }
}

// One 16-byte load and one 16-byte store per thread: float4 is 16-byte
// aligned, so nvcc emits ld.global.v4.f32 / st.global.v4.f32.
__global__ void reverse_and_scale_float4(const float4* in, float4* out, float scale, int n) {
  const int i = element_index();
  if (i >= n) return;
  const float4 v = in[i];
  out[i] = make_float4(v.w * scale, v.z * scale, v.y * scale, v.x * scale);
}

TEST(Intrinsics, Float4LoadsAndStoresWholeVectors) {
  const auto flat = random_vector<float>(4 * kElements, -1e3, 1e3);
  const float scale = random_vector<float>(1, 0.5, 2.0)[0];
  std::vector<float4> host(kElements);
  for (int i = 0; i < kElements; ++i) host[i] = make_float4(flat[4 * i], flat[4 * i + 1], flat[4 * i + 2], flat[4 * i + 3]);
  device_buffer<float4> in(host), out(kElements);
  ASSERT_EQ(reinterpret_cast<std::uintptr_t>(in.get()) % alignof(float4), 0u) << "cudaMalloc must align for float4";
  lockstep::launch(reverse_and_scale_float4, kBlocks, kThreadsPerBlock)(in.get(), out.get(), scale, kElements);
  const auto got = out.download();
  for (int i = 0; i < kElements; ++i) {
    const float4 v = host[i], r = got[i];
    ASSERT_TRUE(r.x == v.w * scale && r.y == v.z * scale && r.z == v.y * scale && r.w == v.x * scale)
        << "element " << i << " (seed " << fresh_seed() << ")";
  }
}

// ---------------------------------------------------------------------------
// __ldg: a load through the read-only data cache returns what a plain load would.

template <class T>
__global__ void copy_through_ldg(const T* in, T* out, int n) {
  const int i = element_index();
  if (i < n) out[i] = __ldg(&in[i]);
}

template <class T>
void check_ldg_copy(const std::vector<T>& host) {
  device_buffer<T> in(host), out(host.size());
  lockstep::launch(copy_through_ldg<T>, kBlocks, kThreadsPerBlock)(in.get(), out.get(), static_cast<int>(host.size()));
  const auto got = out.download();
  ASSERT_EQ(std::memcmp(got.data(), host.data(), host.size() * sizeof(T)), 0) << testing::internal::GetTypeName<T>();
}

TEST(Intrinsics, LdgReadsWhatWasWritten) {
  check_ldg_copy(random_bits<int>(kElements));
  check_ldg_copy(random_bits<unsigned long long>(kElements));
  check_ldg_copy(random_vector<float>(kElements));
  check_ldg_copy(random_vector<double>(kElements));
  const auto f = random_vector<float>(4 * kElements);
  std::vector<float4> f4(kElements);
  std::vector<double2> d2(kElements);
  for (int i = 0; i < kElements; ++i) {
    f4[i] = make_float4(f[4 * i], f[4 * i + 1], f[4 * i + 2], f[4 * i + 3]);
    d2[i] = make_double2(f[4 * i], f[4 * i + 3]);
  }
  check_ldg_copy(f4);
  check_ldg_copy(d2);
}

// ---------------------------------------------------------------------------
// Memory fences: the "last one done sums up" pattern, at two scopes. In each
// block the lane 0 of every warp publishes its warp's sum in shared memory,
// fences at block scope and takes a ticket; the warp that takes the last
// ticket sums the warps and publishes the block's sum in global memory, fences
// at device scope and takes a grid-wide ticket; the block that takes the last
// one sums the blocks. A fence missing before a ticket would let the last one
// read a sum not yet visible to it.

constexpr int kWarpsPerBlock = kThreadsPerBlock / 32;

__global__ void sum_by_last_block(const int* in, int* block_sums, unsigned* blocks_done, int* total) {
  __shared__ int warp_sums[kWarpsPerBlock];
  __shared__ unsigned warps_done;
  __shared__ bool is_last_block;
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (threadIdx.x == 0) {
    warps_done = 0;
    is_last_block = false;
  }
  __syncthreads();
  int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (lane == 0) {
    warp_sums[warp] = v;
    __threadfence_block();
    // atomicInc wraps the counters back to 0 with the last ticket, ready for the next launch.
    if (atomicInc(&warps_done, kWarpsPerBlock - 1) == kWarpsPerBlock - 1) {
      int block_sum = 0;
      for (int w = 0; w < kWarpsPerBlock; ++w) block_sum += static_cast<volatile int*>(warp_sums)[w];
      block_sums[blockIdx.x] = block_sum;
      __threadfence();
      is_last_block = atomicInc(blocks_done, gridDim.x - 1) == gridDim.x - 1;
    }
  }
  __syncthreads();
  if (threadIdx.x == 0 && is_last_block) {
    int sum = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) sum += static_cast<volatile int*>(block_sums)[b];  // volatile: not a cached copy
    *total = sum;
  }
}

TEST(Intrinsics, FencesLetTheLastBlockSumEveryBlock) {
  constexpr int blocks = 64;
  device_buffer<unsigned> blocks_done(std::vector<unsigned>{0u});
  for (int launch = 0; launch < 2; ++launch) {  // the second launch reuses the counter the first wrapped to 0
    const auto in = random_vector<int>(blocks * kThreadsPerBlock, -1000, 1000);
    device_buffer<int> d_in(in), block_sums(blocks), total(1);
    lockstep::launch(sum_by_last_block, blocks, kThreadsPerBlock)(d_in.get(), block_sums.get(), blocks_done.get(), total.get());
    std::vector<int> want_block_sums(blocks, 0);
    for (int i = 0; i < blocks * kThreadsPerBlock; ++i) want_block_sums[i / kThreadsPerBlock] += in[i];
    int want_total = 0;
    for (int s : want_block_sums) want_total += s;
    EXPECT_EQ(block_sums.download(), want_block_sums) << "seed " << fresh_seed();
    EXPECT_EQ(total.download()[0], want_total) << "seed " << fresh_seed();
    EXPECT_EQ(blocks_done.download()[0], 0u) << "the last ticket wraps the counter to 0";
  }
}

// ---------------------------------------------------------------------------
// clock64: never goes backwards within a thread, across work and a barrier
// (where the emulator switches to other threads).

__global__ void read_clock_three_times(long long* stamps, float* sink, int spins) {
  const int i = element_index();
  const long long first = clock64();
  float x = static_cast<float>(threadIdx.x);
  for (int k = 0; k < spins; ++k) x = x * 0.999f + 1.0f;
  const long long second = clock64();
  __syncthreads();
  const long long third = clock64();
  stamps[3 * i] = first;
  stamps[3 * i + 1] = second;
  stamps[3 * i + 2] = third;
  sink[i] = x;  // keeps the work from being optimised away
}

TEST(Intrinsics, Clock64IsMonotonicWithinAThread) {
  constexpr int blocks = 8, threads = blocks * kThreadsPerBlock;
  device_buffer<long long> stamps(3 * threads);
  device_buffer<float> sink(threads);
  lockstep::launch(read_clock_three_times, blocks, kThreadsPerBlock)(stamps.get(), sink.get(), random_vector<int>(1, 100, 200)[0]);
  const auto t = stamps.download();
  for (int i = 0; i < threads; ++i) {
    ASSERT_LE(t[3 * i], t[3 * i + 1]) << "thread " << i;
    ASSERT_LE(t[3 * i + 1], t[3 * i + 2]) << "thread " << i;
    ASSERT_LT(t[3 * i], t[3 * i + 2]) << "thread " << i << ": no time passed across work and a barrier";
  }
}

__global__ void reverse_64_bits(const unsigned long long* in, unsigned long long* out, int n) {
  const int i = element_index();
  if (i < n) out[i] = __brevll(in[i]);
}

TEST(Intrinsics, Brevll) {
  std::vector<unsigned long long> v{0, 1, 0xffffffffffffffffull, 0x00000000ffff0000ull};
  for (int r : random_vector<int>(28, 0, 1 << 30)) v.push_back(static_cast<unsigned long long>(r) * 0x9e3779b97f4a7c15ull);
  const int n = static_cast<int>(v.size());
  device_buffer<unsigned long long> in(v), out(n);
  lockstep::launch(reverse_64_bits, 1, kThreadsPerBlock)(in.get(), out.get(), n);
  const auto got = out.download();
  for (int i = 0; i < n; ++i) {
    unsigned long long want = 0;
    for (int b = 0; b < 64; ++b) want |= ((v[i] >> b) & 1ull) << (63 - b);
    ASSERT_EQ(got[i], want) << std::hex << v[i];
  }
}

}  // namespace
