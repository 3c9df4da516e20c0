// Helpers for the tensor-layer tests: devices to run on, per-test random
// engines (LOCKSTEP_TEST_SEED repeats a run), random tensors whose memory the
// host knows exactly (in double), views of them in several layouts, host
// references, and comparisons with dtype-sized error bounds.
//
// Every test runs with poisoned new tensors (0xff bytes: NaN for floats), so
// an output element a kernel forgets to write fails the comparison.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "lockstep/emu/half.h"  // float -> float16/bfloat16 bits, to make inputs
#include "lockstep/ops.h"
#include "lockstep/tensor.h"
#include "test_seed.h"

// How GoogleTest prints the library's values in failures and test names.
namespace lockstep {
inline void PrintTo(dtype t, std::ostream* os) { *os << dtype_name(t); }
inline void PrintTo(const device& d, std::ostream* os) { *os << d.str(); }
namespace kernels {
inline void PrintTo(unary_op op, std::ostream* os) { *os << op_name(op); }
inline void PrintTo(binary_op op, std::ostream* os) { *os << op_name(op); }
inline void PrintTo(reduce_op op, std::ostream* os) { *os << op_name(op); }
}  // namespace kernels
}  // namespace lockstep

namespace tensor_testing {

using lockstep::binary_op;
using lockstep::device;
using lockstep::dtype;
using lockstep::reduce_op;
using lockstep::shape_t;
using lockstep::tensor;
using lockstep::unary_op;

inline constexpr dtype all_dtypes[] = {dtype::uint8, dtype::int32, dtype::int64, dtype::float16, dtype::bfloat16, dtype::float32, dtype::float64};
inline constexpr unary_op all_unary_ops[] = {unary_op::copy,       unary_op::neg,  unary_op::abs,      unary_op::exp,  unary_op::log,
                                             unary_op::sqrt,       unary_op::relu, unary_op::sigmoid,  unary_op::tanh, unary_op::square,
                                             unary_op::reciprocal, unary_op::gelu, unary_op::gelu_tanh};
inline constexpr binary_op all_binary_ops[] = {
    binary_op::add,         binary_op::sub,        binary_op::mul,        binary_op::div,         binary_op::floor_divide, binary_op::remainder,
    binary_op::maximum,     binary_op::minimum,    binary_op::pow,        binary_op::bitwise_and, binary_op::bitwise_or,   binary_op::bitwise_xor,
    binary_op::eq,          binary_op::ne,         binary_op::lt,         binary_op::le,          binary_op::gt,           binary_op::ge,
    binary_op::logical_and, binary_op::logical_or, binary_op::logical_xor};
inline constexpr reduce_op all_reduce_ops[] = {reduce_op::sum, reduce_op::max, reduce_op::min, reduce_op::prod, reduce_op::mean};

// ---------------------------------------------------------------- run set-up

// The cpu device (the emulator) always; cuda:0 too where there is a GPU.
inline std::vector<device> devices_here() {
  std::vector<device> all{device::cpu()};
  if (lockstep::cuda_available()) all.push_back(device::cuda(0));
  return all;
}

// A device other than `d` where there is one (for cpu <-> cuda copies), else `d`.
inline device other_device(const device& d) {
  const std::vector<device> here = devices_here();
  for (const device& e : here)
    if (!(e == d)) return e;
  return d;
}

// "cpu", "cuda0": test-name friendly.
inline std::string device_label(const device& d) { return d.kind == device::kind_t::cpu ? "cpu" : "cuda" + std::to_string(d.index); }

// Poisons new tensors, prints the run's seed, and names it again after every
// failed test so that LOCKSTEP_TEST_SEED=<seed> --gtest_filter=<test> repeats it.
class tensor_environment : public ::testing::Environment {
  class seed_reporter : public ::testing::EmptyTestEventListener {
    void OnTestEnd(const ::testing::TestInfo& info) override {
      if (info.result()->Failed())
        std::printf("[  SEED    ] %s.%s: rerun with LOCKSTEP_TEST_SEED=%llu\n", info.test_suite_name(), info.name(),
                    static_cast<unsigned long long>(testing_util::fresh_seed()));
    }
  };

 public:
  void SetUp() override {
    lockstep::set_poison_new_tensors(true);
    std::printf("[  SEED    ] LOCKSTEP_TEST_SEED=%llu; devices:", static_cast<unsigned long long>(testing_util::fresh_seed()));
    for (const device& d : devices_here()) std::printf(" %s", d.str().c_str());
    std::printf("\n");
    ::testing::UnitTest::GetInstance()->listeners().Append(new seed_reporter);
  }
};

inline ::testing::Environment* const registered_environment = ::testing::AddGlobalTestEnvironment(new tensor_environment);

// A random engine per test, from the run's seed and the test's full name, so
// a filtered rerun with the same seed sees the same values.
inline std::mt19937_64 engine_for_current_test() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "";
  return std::mt19937_64(testing_util::fresh_seed() ^ std::hash<std::string>{}(name));
}

inline const device& device_of(const device& d) { return d; }
template <class... Rest>
const device& device_of(const std::tuple<device, Rest...>& p) {
  return std::get<0>(p);
}

// Tests parametrised by a device, or by (device, something else).
template <class Param = device>
class tensor_test : public ::testing::TestWithParam<Param> {
 protected:
  const device& dev() const { return device_of(this->GetParam()); }
  std::mt19937_64 rng = engine_for_current_test();
};

inline std::string param_label(const std::string& s) { return s; }
template <class Op>
std::string param_label(Op op) {
  return lockstep::op_name(op);
}

// Test names: "cpu", "cuda0", or "cpu_exp" for (device, op), "cpu_naive" for (device, algo).
struct device_param_name {
  std::string operator()(const ::testing::TestParamInfo<device>& info) const { return device_label(info.param); }
  template <class Other>
  std::string operator()(const ::testing::TestParamInfo<std::tuple<device, Other>>& info) const {
    return device_label(std::get<0>(info.param)) + "_" + param_label(std::get<1>(info.param));
  }
};

// ---------------------------------------------------------------- shapes

inline std::int64_t element_count(const shape_t& shape) {
  std::int64_t n = 1;
  for (std::int64_t e : shape) n *= e;
  return n;
}

inline std::string shape_text(const shape_t& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// Calls f(index) for every index of `shape` in row-major order.
template <class F>
void for_each_index(const shape_t& shape, F&& f) {
  if (element_count(shape) == 0) return;
  shape_t index(shape.size(), 0);
  while (true) {
    f(static_cast<const shape_t&>(index));
    int d = static_cast<int>(shape.size()) - 1;
    for (; d >= 0; --d) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

// The row-major ordinal of `index` in `shape`.
inline std::int64_t ordinal_of(const shape_t& index, const shape_t& shape) {
  std::int64_t o = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) o = o * shape[d] + index[d];
  return o;
}

// ---------------------------------------------------------------- values

inline double half_bits_to_double(std::uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  double magnitude;
  if (exponent == 0x1f)
    magnitude = mantissa ? NAN : INFINITY;
  else if (exponent == 0)
    magnitude = std::ldexp(mantissa, -24);
  else
    magnitude = std::ldexp(1024 + mantissa, exponent - 25);
  return bits & 0x8000 ? -magnitude : magnitude;
}

inline double bfloat16_bits_to_double(std::uint16_t bits) {
  const std::uint32_t word = std::uint32_t{bits} << 16;
  float f;
  std::memcpy(&f, &word, sizeof f);
  return f;
}

// One element in a dtype's storage, read exactly as a double.
inline double decode(dtype t, const unsigned char* p) {
  auto load = [p]<class T>(T) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (t) {
    case dtype::boolean:
      return load(std::uint8_t{}) != 0;
    case dtype::uint8:
      return load(std::uint8_t{});
    case dtype::int32:
      return load(std::int32_t{});
    case dtype::int64:
      return static_cast<double>(load(std::int64_t{}));
    case dtype::float16:
      return half_bits_to_double(load(std::uint16_t{}));
    case dtype::bfloat16:
      return bfloat16_bits_to_double(load(std::uint16_t{}));
    case dtype::float32:
      return load(float{});
    case dtype::float64:
      return load(double{});
  }
  return NAN;
}

// One value into a dtype's storage (rounded for floats; integers must fit).
inline void encode(dtype t, double value, unsigned char* p) {
  auto store = [p](auto v) { std::memcpy(p, &v, sizeof v); };
  switch (t) {
    case dtype::boolean:
      return store(static_cast<std::uint8_t>(value != 0));
    case dtype::uint8:
      return store(static_cast<std::uint8_t>(value));
    case dtype::int32:
      return store(static_cast<std::int32_t>(value));
    case dtype::int64:
      return store(static_cast<std::int64_t>(value));
    case dtype::float16:
      return store(lockstep::emu::float_to_half_bits(static_cast<float>(value)));
    case dtype::bfloat16:
      return store(lockstep::emu::float_to_bfloat16_bits(static_cast<float>(value)));
    case dtype::float32:
      return store(static_cast<float>(value));
    case dtype::float64:
      return store(value);
  }
}

// An exact integer result as the dtype stores it: uint8 and int32 wrap
// modulo 2^8 and 2^32 (C++ conversion rules); others unchanged.
inline double wrap_to(dtype t, double exact) {
  if (t == dtype::uint8) return std::fmod(std::fmod(exact, 256.0) + 256.0, 256.0);
  if (t == dtype::int32) {
    const double m = std::fmod(std::fmod(exact, 4294967296.0) + 4294967296.0, 4294967296.0);
    return m >= 2147483648.0 ? m - 4294967296.0 : m;
  }
  return exact;
}

// Where random values come from: uniform in [lo, hi] (integers for integer
// dtypes, or for any dtype with `integers`), negated half the time with
// `random_sign` (so [0.5, 2] with a sign stays away from zero).
struct value_range {
  double lo = -1, hi = 1;
  bool integers = false;
  bool random_sign = false;
};

inline double random_value(dtype t, const value_range& r, std::mt19937_64& rng) {
  double v;
  if (r.integers || !lockstep::is_floating(t)) {
    v = static_cast<double>(
        std::uniform_int_distribution<long long>(static_cast<long long>(std::ceil(r.lo)), static_cast<long long>(std::floor(r.hi)))(rng));
  } else {
    v = std::uniform_real_distribution<double>(r.lo, r.hi)(rng);
  }
  return r.random_sign && (rng() & 1) ? -v : v;
}

// A device tensor and its memory as the host knows it (every element of its
// allocation, decoded exactly): the truth views of it are checked against.
struct known_tensor {
  tensor t;
  std::vector<double> memory;
};

inline known_tensor tensor_of(const std::vector<double>& values, const shape_t& shape, dtype t, const device& d) {
  const std::size_t size = lockstep::itemsize(t);
  std::vector<unsigned char> bytes(values.size() * size);
  known_tensor k;
  k.memory.resize(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    encode(t, values[i], &bytes[i * size]);
    k.memory[i] = decode(t, &bytes[i * size]);
  }
  k.t = tensor::from_host(bytes.data(), shape, t, d);
  return k;
}

inline known_tensor random_tensor(const shape_t& shape, dtype t, const device& d, const value_range& r, std::mt19937_64& rng) {
  std::vector<double> values(static_cast<std::size_t>(element_count(shape)));
  for (double& v : values) v = random_value(t, r, rng);
  return tensor_of(values, shape, t, d);
}

// The elements of `view` (a view of `source`'s memory) in row-major order,
// read on the host through the view's strides and offset, broadcast to
// `shape` by NumPy's rule when given.
inline std::vector<double> elements(const known_tensor& source, const tensor& view, const shape_t& shape) {
  EXPECT_EQ(view.base(), source.t.base()) << "not a view of the known tensor";
  const int lead = static_cast<int>(shape.size()) - view.ndim();
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(element_count(shape)));
  for_each_index(shape, [&](const shape_t& index) {
    std::int64_t position = view.offset();
    for (int d = 0; d < view.ndim(); ++d)
      if (view.shape()[d] != 1) position += index[lead + d] * view.strides()[d];
    out.push_back(source.memory.at(static_cast<std::size_t>(position)));
  });
  return out;
}
inline std::vector<double> elements(const known_tensor& source, const tensor& view) { return elements(source, view, view.shape()); }

// A tensor's elements copied to the host (row-major) and decoded exactly.
inline std::vector<double> read_back(const tensor& t) {
  const std::size_t size = lockstep::itemsize(t.type());
  std::vector<unsigned char> bytes(static_cast<std::size_t>(t.numel()) * size);
  t.copy_to_host(bytes.data());
  std::vector<double> values(static_cast<std::size_t>(t.numel()));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = decode(t.type(), &bytes[i * size]);
  return values;
}

// ---------------------------------------------------------------- layouts

// How an op's input is laid out in memory.
enum class layout_kind { contiguous, transposed, strided_slice, expanded };
inline constexpr layout_kind all_layouts[] = {layout_kind::contiguous, layout_kind::transposed, layout_kind::strided_slice, layout_kind::expanded};

inline const char* layout_name(layout_kind k) {
  switch (k) {
    case layout_kind::contiguous:
      return "contiguous";
    case layout_kind::transposed:
      return "transposed";
    case layout_kind::strided_slice:
      return "sliced with step 2";
    case layout_kind::expanded:
      return "expanded";
  }
  return "?";
}

// A view of `shape` laid out as `kind` over a fresh random tensor:
// transposed: the reversed shape permuted back (1-D: a row of a transposed
// (n, 3) matrix, stride 3, offset 1; 0-D: element 1 of 3); strided_slice:
// every dim taken with step 2 from extent 2e+1, from index 1; expanded:
// broadcast (stride 0) from a smaller tensor, (1,) for 1-D, else one without
// the leading dim and with dims 1, 3, ... of extent 1.
struct random_view {
  known_tensor source;
  tensor view;
};

inline random_view make_view(const shape_t& shape, layout_kind kind, dtype t, const device& d, const value_range& r, std::mt19937_64& rng) {
  const int ndim = static_cast<int>(shape.size());
  random_view v;
  switch (kind) {
    case layout_kind::contiguous:
      v.source = random_tensor(shape, t, d, r, rng);
      v.view = v.source.t;
      break;
    case layout_kind::transposed: {
      if (ndim >= 2) {
        const shape_t reversed(shape.rbegin(), shape.rend());
        std::vector<int> dims(ndim);
        for (int i = 0; i < ndim; ++i) dims[i] = ndim - 1 - i;
        v.source = random_tensor(reversed, t, d, r, rng);
        v.view = v.source.t.permute(dims);
      } else {
        shape_t rows = shape;
        rows.push_back(3);
        v.source = random_tensor(rows, t, d, r, rng);
        v.view = (ndim == 1 ? v.source.t.transpose(0, 1) : v.source.t).select(0, 1);
      }
      break;
    }
    case layout_kind::strided_slice: {
      shape_t wide(shape);
      for (std::int64_t& e : wide) e = 2 * e + 1;
      v.source = random_tensor(wide, t, d, r, rng);
      v.view = v.source.t;
      for (int i = 0; i < ndim; ++i) v.view = v.view.slice(i, 1, wide[i], 2);
      break;
    }
    case layout_kind::expanded: {
      const int dropped = ndim >= 2 ? 1 : 0;
      shape_t small(shape.begin() + dropped, shape.end());
      for (int i = dropped; i < ndim; i += 2) small[i - dropped] = 1;
      v.source = random_tensor(small, t, d, r, rng);
      v.view = v.source.t.expand(shape);
      break;
    }
  }
  EXPECT_EQ(v.view.shape(), shape) << layout_name(kind);
  return v;
}

// ---------------------------------------------------------------- comparing

// Relative error one rounding to the dtype may make (0: integers are exact).
inline double rounding_bound(dtype t) {
  switch (t) {
    case dtype::float16:
      return 1e-3;
    case dtype::bfloat16:
      return 1e-2;
    case dtype::float32:
      return 1e-6;
    case dtype::float64:
      return 1e-12;
    default:
      return 0;
  }
}

// The smallest normal magnitude: below it a dtype's error is absolute.
inline double smallest_normal(dtype t) {
  switch (t) {
    case dtype::float16:
      return 6.103515625e-05;
    case dtype::bfloat16:
      return 1.1754943508222875e-38;
    case dtype::float32:
      return 1.1754943508222875e-38;
    case dtype::float64:
      return 2.2250738585072014e-308;
    default:
      return 0;
  }
}

// Per-element allowed error for results rounded once to `t`.
inline std::vector<double> rounding_errors(const std::vector<double>& want, dtype t) {
  std::vector<double> allowed(want.size());
  for (std::size_t i = 0; i < want.size(); ++i) allowed[i] = rounding_bound(t) * std::max(std::abs(want[i]), smallest_normal(t));
  return allowed;
}

// got[i] within allowed[i] of want[i] for every element (NaN, as from a
// poisoned element nobody wrote, never is); failures name the first few
// indices of `shape`.
inline ::testing::AssertionResult all_within(const std::vector<double>& got, const std::vector<double>& want, const std::vector<double>& allowed,
                                             const shape_t& shape) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << got.size() << " elements, want " << want.size() << " for shape " << shape_text(shape);
  std::ostringstream bad;
  std::size_t failures = 0;
  std::size_t ordinal = 0;
  for_each_index(shape, [&](const shape_t& index) {
    const std::size_t i = ordinal++;
    if (std::abs(got[i] - want[i]) <= allowed[i]) return;
    if (failures++ < 5)
      bad << "\n  at " << shape_text(index) << ": got " << got[i] << ", want " << want[i] << " (allowed error " << allowed[i] << ")";
  });
  if (!failures) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << failures << " of " << want.size() << " elements of " << shape_text(shape) << " differ:" << bad.str();
}

inline ::testing::AssertionResult all_equal(const std::vector<double>& got, const std::vector<double>& want, const shape_t& shape) {
  return all_within(got, want, std::vector<double>(want.size(), 0.0), shape);
}

// `action` throws Error whose message contains every fragment.
template <class Error, class Action>
::testing::AssertionResult throws_with(Action&& action, const std::vector<std::string>& fragments) {
  try {
    action();
  } catch (const Error& e) {
    const std::string message = e.what();
    for (const std::string& f : fragments)
      if (message.find(f) == std::string::npos)
        return ::testing::AssertionFailure() << "message \"" << message << "\" does not contain \"" << f << "\"";
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw another exception type: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

template <class Error, class Action>
::testing::AssertionResult throws_with(Action&& action, std::initializer_list<std::string_view> fragments) {
  return throws_with<Error>(std::forward<Action>(action), std::vector<std::string>(fragments.begin(), fragments.end()));
}

// A new output: the shape, dtype and device wanted, packed row-major.
inline ::testing::AssertionResult is_new_output(const tensor& out, const shape_t& shape, dtype t, const device& d) {
  if (out.shape() != shape || out.type() != t || !(out.where() == d) || !out.is_contiguous())
    return ::testing::AssertionFailure() << "got " << out.describe() << (out.is_contiguous() ? "" : " (not contiguous)") << ", want "
                                         << lockstep::dtype_name(t) << " tensor " << shape_text(shape) << " on " << d.str();
  return ::testing::AssertionSuccess();
}

// Each element of a batch of products x @ y in double (x: batches x m x k,
// y: batches x k x n, row-major): its value, and the sum of its terms'
// magnitudes, which bounds a float accumulation's error.
struct reference_element {
  double sum, magnitude;
};
inline std::vector<reference_element> reference_products(const std::vector<double>& x, const std::vector<double>& y, std::int64_t batches,
                                                         std::int64_t m, std::int64_t n, std::int64_t k) {
  std::vector<reference_element> out;
  for (std::int64_t z = 0; z < batches; ++z)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        reference_element e{0, 0};
        for (std::int64_t p = 0; p < k; ++p) {
          const double term = x[(z * m + i) * k + p] * y[(z * k + p) * n + j];
          e.sum += term;
          e.magnitude += std::abs(term);
        }
        out.push_back(e);
      }
  return out;
}

}  // namespace tensor_testing
