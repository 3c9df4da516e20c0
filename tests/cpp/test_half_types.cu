// <cuda_fp16.h> and <cuda_bf16.h>: __half and __nv_bfloat16, their pairs, and
// the functions on them, each computed in a kernel and checked bit for bit
// against a reference that rounds the exact result once (half_reference.h),
// the math functions within a few units in the last place.
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "half_reference.h"
#include "test_util.h"

using namespace testing_util;
namespace ref = half_reference;

namespace {

// The names that differ between the two types, under one spelling.
template <class H>
struct api;
template <>
struct api<__half> {
  using pair = __half2;
  static constexpr ref::format format = ref::binary16;
  __host__ __device__ static __half from_bits(unsigned short b) { return __ushort_as_half(b); }
  __host__ __device__ static unsigned short bits(__half h) { return __half_as_ushort(h); }
  __device__ static __half from_float(float f, int mode) {
    return mode == 0 ? __float2half_rn(f) : mode == 1 ? __float2half_rz(f) : mode == 2 ? __float2half_rd(f) : __float2half_ru(f);
  }
  __device__ static __half from_double(double d) { return __double2half(d); }
  __device__ static float to_float(__half h) { return __half2float(h); }
  __device__ static int to_int(__half h, int mode) {
    return mode == 0 ? __half2int_rn(h) : mode == 1 ? __half2int_rz(h) : mode == 2 ? __half2int_rd(h) : __half2int_ru(h);
  }
  __device__ static __half from_int(int v, int mode) {
    return mode == 0 ? __int2half_rn(v) : mode == 1 ? __int2half_rz(v) : mode == 2 ? __int2half_rd(v) : __int2half_ru(v);
  }
  __device__ static pair pair_of(__half a, __half b) { return __halves2half2(a, b); }
  __device__ static __half low(pair p) { return __low2half(p); }
  __device__ static __half high(pair p) { return __high2half(p); }
  __device__ static pair floats(float a, float b) { return __floats2half2_rn(a, b); }
};
template <>
struct api<__nv_bfloat16> {
  using pair = __nv_bfloat162;
  static constexpr ref::format format = ref::bfloat16;
  __host__ __device__ static __nv_bfloat16 from_bits(unsigned short b) { return __ushort_as_bfloat16(b); }
  __host__ __device__ static unsigned short bits(__nv_bfloat16 h) { return __bfloat16_as_ushort(h); }
  __device__ static __nv_bfloat16 from_float(float f, int mode) {
    return mode == 0 ? __float2bfloat16_rn(f) : mode == 1 ? __float2bfloat16_rz(f) : mode == 2 ? __float2bfloat16_rd(f) : __float2bfloat16_ru(f);
  }
  __device__ static __nv_bfloat16 from_double(double d) { return __double2bfloat16(d); }
  __device__ static float to_float(__nv_bfloat16 h) { return __bfloat162float(h); }
  __device__ static int to_int(__nv_bfloat16 h, int mode) {
    return mode == 0 ? __bfloat162int_rn(h) : mode == 1 ? __bfloat162int_rz(h) : mode == 2 ? __bfloat162int_rd(h) : __bfloat162int_ru(h);
  }
  __device__ static __nv_bfloat16 from_int(int v, int mode) {
    return mode == 0 ? __int2bfloat16_rn(v) : mode == 1 ? __int2bfloat16_rz(v) : mode == 2 ? __int2bfloat16_rd(v) : __int2bfloat16_ru(v);
  }
  __device__ static pair pair_of(__nv_bfloat16 a, __nv_bfloat16 b) { return __halves2bfloat162(a, b); }
  __device__ static __nv_bfloat16 low(pair p) { return __low2bfloat16(p); }
  __device__ static __nv_bfloat16 high(pair p) { return __high2bfloat16(p); }
  __device__ static pair floats(float a, float b) { return __floats2bfloat162_rn(a, b); }
};

constexpr ref::mode modes[4] = {ref::mode::nearest_even, ref::mode::toward_zero, ref::mode::down, ref::mode::up};

// ---- kernels ----

template <class H>
__global__ void convert_floats(const float* in, const double* in_double, unsigned short* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int m = 0; m < 4; ++m) out[5 * i + m] = api<H>::bits(api<H>::from_float(in[i], m));
  out[5 * i + 4] = api<H>::bits(api<H>::from_double(in_double[i]));
}

template <class H>
__global__ void widen_every_value(float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 65536) out[i] = api<H>::to_float(api<H>::from_bits(static_cast<unsigned short>(i)));
}

template <class H>
__global__ void convert_integers(const int* ints, const unsigned short* halves, unsigned short* from_ints, int* to_ints, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int m = 0; m < 4; ++m) {
    from_ints[4 * i + m] = api<H>::bits(api<H>::from_int(ints[i], m));
    to_ints[4 * i + m] = api<H>::to_int(api<H>::from_bits(halves[i]), m);
  }
}

enum binary_op { op_add, op_sub, op_mul, op_div, op_fma, op_max, op_min, op_max_nan, op_min_nan, op_add_sat, op_fma_relu, binary_ops };
enum compare_op { cmp_eq, cmp_ne, cmp_lt, cmp_le, cmp_gt, cmp_ge, cmp_equ, cmp_neu, cmp_ltu, cmp_leu, cmp_gtu, cmp_geu, compare_ops };

template <class H>
__device__ H apply(int op, H a, H b, H c) {
  switch (op) {
    case op_add:
      return __hadd(a, b);
    case op_sub:
      return a - b;
    case op_mul:
      return __hmul(a, b);
    case op_div:
      return a / b;
    case op_fma:
      return __hfma(a, b, c);
    case op_max:
      return __hmax(a, b);
    case op_min:
      return __hmin(a, b);
    case op_max_nan:
      return __hmax_nan(a, b);
    case op_min_nan:
      return __hmin_nan(a, b);
    case op_add_sat:
      return __hadd_sat(a, b);
    default:
      return __hfma_relu(a, b, c);
  }
}

template <class H>
__device__ bool compare(int op, H a, H b) {
  switch (op) {
    case cmp_eq:
      return a == b;
    case cmp_ne:
      return __hne(a, b);
    case cmp_lt:
      return a < b;
    case cmp_le:
      return __hle(a, b);
    case cmp_gt:
      return __hgt(a, b);
    case cmp_ge:
      return a >= b;
    case cmp_equ:
      return __hequ(a, b);
    case cmp_neu:
      return a != b;
    case cmp_ltu:
      return __hltu(a, b);
    case cmp_leu:
      return __hleu(a, b);
    case cmp_gtu:
      return __hgtu(a, b);
    default:
      return __hgeu(a, b);
  }
}

// Each thread: the scalar operations on (a[i], b[i], c[i]), and the pair
// forms on lanes (a[i], a[i^1]) so that the pair results can be checked
// against the scalar ones lane by lane.
template <class H>
__global__ void arithmetic(const unsigned short* a, const unsigned short* b, const unsigned short* c, unsigned short* scalar, unsigned short* paired,
                           unsigned char* compared, unsigned* masks, int n) {
  using P = typename api<H>::pair;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const H x = api<H>::from_bits(a[i]), y = api<H>::from_bits(b[i]), z = api<H>::from_bits(c[i]);
  for (int op = 0; op < binary_ops; ++op) scalar[op * n + i] = api<H>::bits(apply(op, x, y, z));
  for (int op = 0; op < compare_ops; ++op) compared[op * n + i] = compare(op, x, y);
  scalar[binary_ops * n + i] = api<H>::bits(__hneg(x));
  scalar[(binary_ops + 1) * n + i] = api<H>::bits(__habs(x));
  if (i % 2 == 0 && i + 1 < n) {
    const P pa = api<H>::pair_of(x, api<H>::from_bits(a[i + 1])), pb = api<H>::pair_of(y, api<H>::from_bits(b[i + 1]));
    const P pc = api<H>::pair_of(z, api<H>::from_bits(c[i + 1]));
    const P results[binary_ops] = {__hadd2(pa, pb),         pa - pb,         __hmul2(pa, pb),     __h2div(pa, pb),     __hfma2(pa, pb, pc),
                                   __hmax2(pa, pb),         __hmin2(pa, pb), __hmax2_nan(pa, pb), __hmin2_nan(pa, pb), __hadd2_sat(pa, pb),
                                   __hfma2_relu(pa, pb, pc)};
    for (int op = 0; op < binary_ops; ++op) {
      paired[op * n + i] = api<H>::bits(api<H>::low(results[op]));
      paired[op * n + i + 1] = api<H>::bits(api<H>::high(results[op]));
    }
    masks[3 * i] = __hlt2_mask(pa, pb);
    masks[3 * i + 1] = __hbgeu2(pa, pb);
    const P as_values = __hle2(pa, pb);
    masks[3 * i + 2] = (__low2float(as_values) == 1.0f   ? 1u
                        : __low2float(as_values) == 0.0f ? 0u
                                                         : 7u) |
                       (__high2float(as_values) == 1.0f   ? 2u
                        : __high2float(as_values) == 0.0f ? 0u
                                                          : 7u);
  }
}

enum math_op {
  m_exp,
  m_exp2,
  m_exp10,
  m_log,
  m_log2,
  m_log10,
  m_sqrt,
  m_rsqrt,
  m_rcp,
  m_sin,
  m_cos,
  m_tanh,
  m_floor,
  m_ceil,
  m_trunc,
  m_rint,
  math_ops
};

template <class H>
__global__ void math_functions(const unsigned short* in, unsigned short* out, unsigned short* out_pairs, int n) {
  using P = typename api<H>::pair;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const H x = api<H>::from_bits(in[i]);
  const H r[math_ops] = {hexp(x), hexp2(x), hexp10(x), hlog(x),  hlog2(x),  hlog10(x), hsqrt(x),  hrsqrt(x),
                         hrcp(x), hsin(x),  hcos(x),   htanh(x), hfloor(x), hceil(x),  htrunc(x), hrint(x)};
  const P p = api<H>::pair_of(x, x);
  const P rp[math_ops] = {h2exp(p), h2exp2(p), h2exp10(p), h2log(p),  h2log2(p),  h2log10(p), h2sqrt(p),  h2rsqrt(p),
                          h2rcp(p), h2sin(p),  h2cos(p),   h2tanh(p), h2floor(p), h2ceil(p),  h2trunc(p), h2rint(p)};
  for (int op = 0; op < math_ops; ++op) {
    out[op * n + i] = api<H>::bits(r[op]);
    out_pairs[op * n + i] = api<H>::bits(api<H>::high(rp[op]));
  }
}

// ---- host side ----

template <class H>
std::vector<unsigned short> random_bits(std::size_t n, bool finite_only) {
  std::uniform_int_distribution<unsigned> d(0, 0xffff);
  std::vector<unsigned short> v(n);
  for (auto& b : v) {
    do b = static_cast<unsigned short>(d(rng()));
    while (finite_only && (b & 0x7fffu) >= api<H>::format.infinity());
  }
  return v;
}

// Random bits of a value whose exponent lies in [lo, hi].
template <class H>
std::vector<unsigned short> random_bits_in(std::size_t n, int lo, int hi) {
  const ref::format f = api<H>::format;
  std::uniform_int_distribution<int> exponent(lo + f.bias(), hi + f.bias());
  std::uniform_int_distribution<unsigned> fraction(0, (1u << f.fraction_bits) - 1), sign(0, 1);
  std::vector<unsigned short> v(n);
  for (auto& b : v) b = static_cast<unsigned short>((sign(rng()) << 15) | (exponent(rng()) << f.fraction_bits) | fraction(rng()));
  return v;
}

bool same_value(ref::format f, unsigned short got, unsigned short want) { return f.is_nan(want) ? f.is_nan(got) : got == want; }
// Clamping ops (_sat, _relu) may give either zero: PTX does not say which sign a clamped -0 keeps.
bool same_clamped_value(ref::format f, unsigned short got, unsigned short want) {
  return want == 0 ? (got & 0x7fffu) == 0 : same_value(f, got, want);
}

template <class H>
class HalfTypes : public ::testing::Test {};
using half_types = ::testing::Types<__half, __nv_bfloat16>;
struct half_type_names {
  template <class H>
  static std::string GetName(int) {
    return std::is_same_v<H, __half> ? "half" : "bfloat16";
  }
};
TYPED_TEST_SUITE(HalfTypes, half_types, half_type_names);

TYPED_TEST(HalfTypes, FloatConversionsRoundOnceByEachMode) {
  using H = TypeParam;
  const ref::format f = api<H>::format;
  // Random float bits over the whole range (subnormals, overflow, NaN), and the edges.
  std::uniform_int_distribution<std::uint32_t> bits(0, 0xffffffffu);
  std::vector<float> in;
  for (int i = 0; i < 20000; ++i) {
    const std::uint32_t u = bits(rng());
    float x;
    std::memcpy(&x, &u, 4);
    in.push_back(x);
  }
  // Values near the format's own range, where rounding does its work: every
  // representable value, the midpoints to its neighbours, and just off them.
  for (int i = 0; i < 20000; ++i) {
    const unsigned short b = random_bits<H>(1, true)[0];
    const float v = static_cast<float>(ref::decode(f, b)), next = static_cast<float>(ref::decode(f, static_cast<unsigned short>(b + 1)));
    const float mid = static_cast<float>((ref::decode(f, b) + ref::decode(f, static_cast<unsigned short>(b + 1))) / 2);
    for (float x : {v, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 2 * mid), next})
      if (!std::isnan(x)) in.push_back(x);
  }
  for (float x : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 65504.0f, 65519.99f, 65520.0f, 3.3895314e38f, 1e-45f, 5.9604645e-8f, 2.9802322e-8f})
    in.push_back(x);
  std::vector<double> in_double;
  std::uniform_real_distribution<double> exponent(-140, 140);
  for (std::size_t i = 0; i < in.size(); ++i)
    in_double.push_back((i % 2 ? -1 : 1) * std::exp2(exponent(rng())) * (1 + std::ldexp(static_cast<double>(bits(rng())), -33)));
  const int n = static_cast<int>(in.size());
  device_buffer<float> d_in(in);
  device_buffer<double> d_in_double(in_double);
  device_buffer<unsigned short> d_out(5 * in.size());
  lockstep::launch(convert_floats<H>, (n + 255) / 256, 256)(d_in.get(), d_in_double.get(), d_out.get(), n);
  const auto out = d_out.download();
  int failures = 0;
  for (int i = 0; i < n && failures < 10; ++i) {
    for (int m = 0; m < 4; ++m) {
      const unsigned short want = ref::round(f, in[i], modes[m]);
      if (!same_value(f, out[5 * i + m], want))
        ++failures, ADD_FAILURE() << std::hexfloat << in[i] << " mode " << m << ": got 0x" << std::hex << out[5 * i + m] << ", want 0x" << want
                                  << " (seed " << std::dec << fresh_seed() << ")";
    }
    const unsigned short want = ref::round(f, in_double[i], ref::mode::nearest_even);
    if (!same_value(f, out[5 * i + 4], want))
      ++failures, ADD_FAILURE() << "double " << std::hexfloat << in_double[i] << ": got 0x" << std::hex << out[5 * i + 4] << ", want 0x" << want;
  }
}

TYPED_TEST(HalfTypes, EveryValueWidensToFloatExactly) {
  using H = TypeParam;
  device_buffer<float> d_out(65536);
  lockstep::launch(widen_every_value<H>, 256, 256)(d_out.get());
  const auto out = d_out.download();
  for (unsigned b = 0; b < 65536; ++b) {
    const long double want = ref::decode(api<H>::format, static_cast<unsigned short>(b));
    if (std::isnan(want))
      ASSERT_TRUE(std::isnan(out[b])) << std::hex << b;
    else
      ASSERT_EQ(static_cast<long double>(out[b]), want) << std::hex << b;
    if (!std::isnan(want)) ASSERT_EQ(std::signbit(out[b]), std::signbit(want)) << std::hex << b;
  }
}

TYPED_TEST(HalfTypes, IntegerConversionsRoundAndSaturate) {
  using H = TypeParam;
  const ref::format f = api<H>::format;
  std::vector<int> ints = random_vector<int>(20000, -100000, 100000);
  for (int v : {0, 1, -1, 2049, 2051, 65519, 65520, 257, 259, std::numeric_limits<int>::max(), std::numeric_limits<int>::min()}) ints.push_back(v);
  auto halves = random_bits<H>(ints.size(), false);
  for (unsigned short b : {0x7c00, 0xfc00, 0x7f80, 0xff80, 0x7fff, 0x3c00, 0x4100, 0x3800, 0xb800}) halves[b % halves.size()] = b;
  const int n = static_cast<int>(ints.size());
  device_buffer<int> d_ints(ints), d_to_ints(4 * ints.size());
  device_buffer<unsigned short> d_halves(halves), d_from_ints(4 * ints.size());
  lockstep::launch(convert_integers<H>, (n + 255) / 256, 256)(d_ints.get(), d_halves.get(), d_from_ints.get(), d_to_ints.get(), n);
  const auto from_ints = d_from_ints.download();
  const auto to_ints = d_to_ints.download();
  for (int i = 0; i < n; ++i)
    for (int m = 0; m < 4; ++m) {
      ASSERT_EQ(from_ints[4 * i + m], ref::round(f, ints[i], modes[m])) << ints[i] << " mode " << m << " (seed " << fresh_seed() << ")";
      const long double v = ref::decode(f, halves[i]);
      long double r = m == 0 ? std::nearbyint(v) : m == 1 ? std::trunc(v) : m == 2 ? std::floor(v) : std::ceil(v);
      const int want = std::isnan(v)         ? 0
                       : r >= 2147483647.0L  ? std::numeric_limits<int>::max()
                       : r <= -2147483648.0L ? std::numeric_limits<int>::min()
                                             : static_cast<int>(r);
      ASSERT_EQ(to_ints[4 * i + m], want) << "bits 0x" << std::hex << halves[i] << " mode " << m;
    }
}

// The reference for one operation on exact values.
unsigned short reference_op(ref::format f, int op, unsigned short ab, unsigned short bb, unsigned short cb) {
  const long double a = ref::decode(f, ab), b = ref::decode(f, bb), c = ref::decode(f, cb);
  const auto rn = [&](long double x) { return ref::round(f, x, ref::mode::nearest_even); };
  const unsigned short nan = static_cast<unsigned short>(f.infinity() | 1u);
  switch (op) {
    case op_add:
      return rn(a + b);
    case op_sub:
      return rn(a - b);
    case op_mul:
      return rn(a * b);
    case op_div:
      return rn(a / b);
    case op_fma:
      return rn(a * b + c);
    case op_max:
    case op_min: {
      if (std::isnan(a) && std::isnan(b)) return nan;
      if (std::isnan(a)) return bb;
      if (std::isnan(b)) return ab;
      if (a == b) return ((ab & 0x8000u) != 0) == (op == op_max) ? bb : ab;  // +0 is the larger zero
      return (op == op_max) == (a > b) ? ab : bb;
    }
    case op_max_nan:
    case op_min_nan:
      if (std::isnan(a) || std::isnan(b)) return nan;
      return reference_op(f, op == op_max_nan ? op_max : op_min, ab, bb, cb);
    case op_add_sat: {
      const long double s = ref::decode(f, rn(a + b));
      return std::isnan(s) || s <= 0 ? 0 : s >= 1 ? rn(1) : rn(s);
    }
    default: {
      const long double r = ref::decode(f, rn(a * b + c));
      return std::isnan(r) ? nan : r <= 0 ? 0 : rn(r);
    }
  }
}

bool reference_compare(int op, long double a, long double b) {
  const bool unordered = std::isnan(a) || std::isnan(b);
  switch (op % 6) {
    case 0:
      return unordered ? op >= 6 : a == b;
    case 1:
      return unordered ? op >= 6 : a != b;
    case 2:
      return unordered ? op >= 6 : a < b;
    case 3:
      return unordered ? op >= 6 : a <= b;
    case 4:
      return unordered ? op >= 6 : a > b;
    default:
      return unordered ? op >= 6 : a >= b;
  }
}

template <class H>
void check_arithmetic(const std::vector<unsigned short>& a, const std::vector<unsigned short>& b, const std::vector<unsigned short>& c,
                      bool check_fma) {
  const ref::format f = api<H>::format;
  const int n = static_cast<int>(a.size());
  device_buffer<unsigned short> da(a), db(b), dc(c), scalar((binary_ops + 2) * a.size()), paired(binary_ops * a.size());
  device_buffer<unsigned char> compared(compare_ops * a.size());
  device_buffer<unsigned> masks(3 * a.size());
  lockstep::launch(arithmetic<H>, (n + 255) / 256, 256)(da.get(), db.get(), dc.get(), scalar.get(), paired.get(), compared.get(), masks.get(), n);
  const auto s = scalar.download(), p = paired.download();
  const auto cmp = compared.download();
  const auto mk = masks.download();
  const int pairs_end = n - n % 2;
  for (int i = 0; i < n; ++i) {
    for (int op = 0; op < binary_ops; ++op) {
      if (!check_fma && (op == op_fma || op == op_fma_relu)) continue;
      const unsigned short want = reference_op(f, op, a[i], b[i], c[i]);
      const bool clamping = op == op_add_sat || op == op_fma_relu;
      ASSERT_TRUE(clamping ? same_clamped_value(f, s[op * n + i], want) : same_value(f, s[op * n + i], want))
          << "op " << op << " on 0x" << std::hex << a[i] << ", 0x" << b[i] << ", 0x" << c[i] << ": got 0x" << s[op * n + i] << ", want 0x" << want
          << std::dec << " (seed " << fresh_seed() << ")";
      if (i < pairs_end) ASSERT_EQ(p[op * n + i], s[op * n + i]) << "pair form of op " << op << ", lane " << i % 2;
    }
    const long double x = ref::decode(f, a[i]), y = ref::decode(f, b[i]);
    for (int op = 0; op < compare_ops; ++op) ASSERT_EQ(cmp[op * n + i] != 0, reference_compare(op, x, y)) << "compare " << op << " " << x << " " << y;
    const unsigned short neg = s[binary_ops * n + i], abs = s[(binary_ops + 1) * n + i];
    if (f.is_nan(a[i])) {
      EXPECT_TRUE(f.is_nan(neg) && f.is_nan(abs));
    } else {
      EXPECT_EQ(neg, a[i] ^ 0x8000u);
      EXPECT_EQ(abs, a[i] & 0x7fffu);
    }
    if (i % 2 == 0 && i < pairs_end) {
      const long double x1 = ref::decode(f, a[i + 1]), y1 = ref::decode(f, b[i + 1]);
      EXPECT_EQ(mk[3 * i], (x < y ? 0xffffu : 0u) | (x1 < y1 ? 0xffff0000u : 0u));
      EXPECT_EQ(mk[3 * i + 1], reference_compare(11, x, y) && reference_compare(11, x1, y1) ? 1u : 0u);
      EXPECT_EQ(mk[3 * i + 2], (reference_compare(3, x, y) ? 1u : 0u) | (reference_compare(3, x1, y1) ? 2u : 0u));
    }
  }
}

TYPED_TEST(HalfTypes, ArithmeticAndComparisonsMatchOnceRoundedResults) {
  using H = TypeParam;
  // Any bits (NaN, infinities, subnormals), and then exponents in [-8, 8]
  // for the fma too, whose long double reference is exact only there.
  const std::size_t n = 20000;
  check_arithmetic<H>(random_bits<H>(n, false), random_bits<H>(n, false), random_bits<H>(n, false), false);
  check_arithmetic<H>(random_bits_in<H>(n, -8, 8), random_bits_in<H>(n, -8, 8), random_bits_in<H>(n, -8, 8), true);
}

template <class H>
__global__ void fused_multiply_adds(const unsigned short* abc, unsigned short* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const H a = api<H>::from_bits(abc[3 * i]), b = api<H>::from_bits(abc[3 * i + 1]), c = api<H>::from_bits(abc[3 * i + 2]);
  out[2 * i] = api<H>::bits(__hfma(a, b, c));
  out[2 * i + 1] = api<H>::bits(api<H>::high(__hfma2(api<H>::pair_of(c, a), api<H>::pair_of(c, b), api<H>::pair_of(c, c))));
}

// a * b exactly halfway between two neighbours, plus the smallest subnormal:
// the addend decides the rounding, which a product rounded first (or a sum
// rounded to float or double first) loses.
TYPED_TEST(HalfTypes, FmaRoundsOnceWhenATinyAddendBreaksATie) {
  using H = TypeParam;
  const bool half = std::is_same_v<H, __half>;
  // 1 + 2^-10 (half) or 1 + 2^-7 (bfloat16), times 1.5: the midpoint of 1.5 + 1 unit and 1.5 + 2 units.
  const unsigned short a = half ? 0x3c01 : 0x3f81, b = half ? 0x3e00 : 0x3fc0, one_up = half ? 0x3e01 : 0x3fc1, two_up = half ? 0x3e02 : 0x3fc2;
  const std::vector<unsigned short> abc = {
      a, b,     0x0001, a, b, 0x8001, a, b, 0x0000, static_cast<unsigned short>(a | 0x8000u), b, 0x8001, static_cast<unsigned short>(a | 0x8000u),
      b, 0x0001};
  const std::vector<unsigned short> want = {two_up, one_up, two_up, static_cast<unsigned short>(two_up | 0x8000u),
                                            static_cast<unsigned short>(one_up | 0x8000u)};
  const int n = static_cast<int>(want.size());
  device_buffer<unsigned short> d_abc(abc), d_out(2 * want.size());
  lockstep::launch(fused_multiply_adds<H>, 1, 32)(d_abc.get(), d_out.get(), n);
  const auto out = d_out.download();
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(out[2 * i], want[i]) << "case " << i;
    EXPECT_EQ(out[2 * i + 1], want[i]) << "pair form, case " << i;
  }
}

TYPED_TEST(HalfTypes, MathFunctionsAreWithinTwoUnitsInTheLastPlace) {
  using H = TypeParam;
  const ref::format f = api<H>::format;
  // Inputs where the results stay finite and the GPU's approximations are documented.
  std::vector<unsigned short> in = random_bits_in<H>(4000, -6, 2);
  const int n = static_cast<int>(in.size());
  device_buffer<unsigned short> d_in(in), d_out(math_ops * in.size()), d_pairs(math_ops * in.size());
  lockstep::launch(math_functions<H>, (n + 255) / 256, 256)(d_in.get(), d_out.get(), d_pairs.get(), n);
  const auto out = d_out.download(), pairs = d_pairs.download();
  for (int i = 0; i < n; ++i) {
    const long double x = ref::decode(f, in[i]);
    const long double want[math_ops] = {
        std::exp(x), std::exp2(x), std::pow(10.0L, x), std::log(x),  std::log2(x),  std::log10(x), std::sqrt(x),  1 / std::sqrt(x),
        1 / x,       std::sin(x),  std::cos(x),        std::tanh(x), std::floor(x), std::ceil(x),  std::trunc(x), std::nearbyint(x)};
    for (int op = 0; op < math_ops; ++op) {
      const unsigned short w = ref::round(f, want[op], ref::mode::nearest_even);
      if (f.is_nan(w)) {
        EXPECT_TRUE(f.is_nan(out[op * n + i])) << "op " << op << " of " << x;
        continue;
      }
      const long tolerance = op >= m_floor ? 0 : 2;  // rounding to integers is exact
      EXPECT_LE(ref::ulp_distance(out[op * n + i], w), tolerance)
          << "op " << op << " of " << x << ": got 0x" << std::hex << out[op * n + i] << ", want 0x" << w;
      EXPECT_EQ(pairs[op * n + i], out[op * n + i]) << "pair form of op " << op;
    }
  }
}

// ---- warps, atomics, cache hints ----

template <class H>
__global__ void shuffle_pairs(const float* in, float* out) {
  using P = typename api<H>::pair;
  const int lane = threadIdx.x;
  const P mine = api<H>::floats(in[2 * lane], in[2 * lane + 1]);
  const P xored = __shfl_xor_sync(0xffffffffu, mine, 5);
  const P down = __shfl_down_sync(0xffffffffu, mine, 3);
  const P up = __shfl_up_sync(0xffffffffu, mine, 2);
  const H from_seven = __shfl_sync(0xffffffffu, api<H>::high(mine), 7);
  const P results[3] = {xored, down, up};
  for (int k = 0; k < 3; ++k) {
    out[7 * lane + 2 * k] = __low2float(results[k]);
    out[7 * lane + 2 * k + 1] = __high2float(results[k]);
  }
  out[7 * lane + 6] = api<H>::to_float(from_seven);
}

TYPED_TEST(HalfTypes, PairsShuffleAcrossAWarp) {
  using H = TypeParam;
  // Values the type holds exactly, so each lane's pair is known on the host.
  std::vector<float> in = random_vector<float>(64, -64, 64);
  for (float& x : in) x = std::round(x * 2) / 2;
  device_buffer<float> d_in(in), d_out(7 * 32);
  lockstep::launch(shuffle_pairs<H>, 1, 32)(d_in.get(), d_out.get());
  const auto out = d_out.download();
  for (int lane = 0; lane < 32; ++lane) {
    const int sources[3] = {lane ^ 5, lane + 3 < 32 ? lane + 3 : lane, lane >= 2 ? lane - 2 : lane};
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(out[7 * lane + 2 * k], in[2 * sources[k]]) << "lane " << lane << " shuffle " << k;
      EXPECT_EQ(out[7 * lane + 2 * k + 1], in[2 * sources[k] + 1]) << "lane " << lane << " shuffle " << k;
    }
    EXPECT_EQ(out[7 * lane + 6], in[2 * 7 + 1]);
  }
}

// Every thread adds (1, 0.5) to one of a few pairs, and 1 to one of two
// neighbouring scalars (which share a 32-bit word).
template <class H>
__global__ void add_atomically(typename api<H>::pair* pair_sums, H* scalar_sums, int pairs) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(&pair_sums[i % pairs], api<H>::floats(1.0f, 0.5f));
  atomicAdd(&scalar_sums[i % 2], api<H>::from_float(1.0f, 0));
}

TYPED_TEST(HalfTypes, AtomicAddOnPairsAndScalarsFromManyThreads) {
  using H = TypeParam;
  using P = typename api<H>::pair;
  // Every partial sum is exact: at most 2048 (half) or 256 (bfloat16) per counter.
  const int per_counter = std::is_same_v<H, __half> ? 2048 : 256, pairs = 4, threads = 128;
  const int blocks = pairs * per_counter / threads;
  device_buffer<P> d_pairs(pairs, 0);
  device_buffer<H> d_scalars(2, 0);
  lockstep::launch(add_atomically<H>, blocks, threads)(d_pairs.get(), d_scalars.get(), pairs);
  const auto sums = d_pairs.download();
  const auto scalars = d_scalars.download();
  for (const P& p : sums) {
    unsigned short lo, hi;
    std::memcpy(&lo, &p, 2);
    std::memcpy(&hi, reinterpret_cast<const char*>(&p) + 2, 2);
    EXPECT_EQ(ref::decode(api<H>::format, lo), per_counter);
    EXPECT_EQ(ref::decode(api<H>::format, hi), per_counter / 2);
  }
  for (const H& s : scalars) {
    unsigned short b;
    std::memcpy(&b, &s, 2);
    EXPECT_EQ(ref::decode(api<H>::format, b), std::min(blocks * threads / 2, per_counter));
  }
}

// A streaming copy with cache hints: float4 through __ldcs/__stcs, 16-bit
// values through __ldcs/__stcs and pairs through __ldcg/__stwt.
template <class H>
__global__ void copy_with_cache_hints(const float4* in4, float4* out4, const H* in, H* out, const typename api<H>::pair* in2,
                                      typename api<H>::pair* out2, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __stcs(&out4[i], __ldcs(&in4[i]));
  __stcs(&out[i], __ldcs(&in[i]));
  __stwt(&out2[i], __ldcg(&in2[i]));
}

TYPED_TEST(HalfTypes, CacheHintLoadsAndStoresCopy) {
  using H = TypeParam;
  using P = typename api<H>::pair;
  const int n = 1000;
  const auto floats = random_vector<float>(4 * n);
  const auto bits = random_bits<H>(n, true), pair_bits = random_bits<H>(2 * n, true);
  device_buffer<float> in4(floats), out4(4 * n);
  device_buffer<unsigned short> in(bits), out(n), in2(pair_bits), out2(2 * n);
  lockstep::launch(copy_with_cache_hints<H>, (n + 127) / 128, 128)(reinterpret_cast<const float4*>(in4.get()), reinterpret_cast<float4*>(out4.get()),
                                                                   reinterpret_cast<const H*>(in.get()), reinterpret_cast<H*>(out.get()),
                                                                   reinterpret_cast<const P*>(in2.get()), reinterpret_cast<P*>(out2.get()), n);
  EXPECT_EQ(out4.download(), floats);
  EXPECT_EQ(out.download(), bits);
  EXPECT_EQ(out2.download(), pair_bits);
}

}  // namespace
