// zip: every binary op on every dtype, NumPy broadcasting between operands
// of odd shapes in different layouts, against the op in double on the
// inputs as stored; and the errors (dtypes, devices, shapes).
#include <algorithm>
#include <cmath>

#include "tensor_test_util.h"

namespace tensor_testing {
namespace {

using lockstep::shape_error;
using Zip = tensor_test<std::tuple<device, binary_op>>;
using ZipEdgeCases = tensor_test<device>;

struct operand_ranges {
  value_range a, b;
};

// Operands where the op is defined and finite, integer results exact (no
// overflow; uint8 wraps as C++ does), comparisons see equal values often.
operand_ranges input_ranges(binary_op op, dtype t) {
  const bool floating = lockstep::is_floating(t), is_unsigned = t == dtype::uint8;
  switch (op) {
    case binary_op::eq:
    case binary_op::ne:
    case binary_op::lt:
    case binary_op::le:
    case binary_op::gt:
    case binary_op::ge:
    case binary_op::logical_and:
    case binary_op::logical_or:
    case binary_op::logical_xor: {
      const value_range few{is_unsigned ? 0.0 : -2.0, is_unsigned ? 3.0 : 2.0, true};
      return {few, few};
    }
    case binary_op::floor_divide:
    case binary_op::remainder:
      if (floating) return {{-10, 10}, {0.5, 4, false, true}};
      return {{is_unsigned ? 0.0 : -100.0, 100, true}, {1, 9, true, !is_unsigned}};
    case binary_op::pow:
      if (floating) return {{0.5, 2}, {-2, 2}};
      return {{is_unsigned ? 0.0 : -4.0, 4}, {0, 3}};
    case binary_op::div:
      if (floating) return {{-10, 10}, {0.5, 4, false, true}};
      break;
    case binary_op::mul:
      if (t == dtype::int32) return {{-40000, 40000}, {-40000, 40000}};
      if (t == dtype::int64) return {{-3e7, 3e7}, {-3e7, 3e7}};
      break;
    default:
      break;
  }
  value_range wide;
  switch (t) {
    case dtype::uint8:
      wide = {0, 255};
      break;
    case dtype::int32:
      wide = {-1e9, 1e9};
      break;
    case dtype::int64:
      wide = {-1e15, 1e15};
      break;
    default:
      wide = {-10, 10};
      break;
  }
  if (op == binary_op::div) return {wide, {1, 9, true, !is_unsigned}};
  return {wide, wide};
}

double binary_reference(binary_op op, double a, double b, bool floating) {
  switch (op) {
    case binary_op::add:
      return a + b;
    case binary_op::sub:
      return a - b;
    case binary_op::mul:
      return a * b;
    case binary_op::div:
      return floating ? a / b : std::trunc(a / b);
    case binary_op::floor_divide:
      return std::floor(a / b);
    case binary_op::remainder: {  // Python's: fmod, moved to the divisor's sign (a - b * floor(a / b) would cancel)
      const double r = std::fmod(a, b);
      return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
    }
    case binary_op::bitwise_and:
      return static_cast<double>(static_cast<long long>(a) & static_cast<long long>(b));
    case binary_op::bitwise_or:
      return static_cast<double>(static_cast<long long>(a) | static_cast<long long>(b));
    case binary_op::bitwise_xor:
      return static_cast<double>(static_cast<long long>(a) ^ static_cast<long long>(b));
    case binary_op::maximum:
      return std::max(a, b);
    case binary_op::minimum:
      return std::min(a, b);
    case binary_op::pow:
      return std::pow(a, b);
    case binary_op::eq:
      return a == b;
    case binary_op::lt:
      return a < b;
    case binary_op::gt:
      return a > b;
    case binary_op::ne:
      return a != b;
    case binary_op::le:
      return a <= b;
    case binary_op::ge:
      return a >= b;
    case binary_op::logical_and:
      return a != 0 && b != 0;
    case binary_op::logical_or:
      return a != 0 || b != 0;
    case binary_op::logical_xor:
      return (a != 0) != (b != 0);
  }
  return NAN;
}

struct broadcast_case {
  shape_t a, b, out;
};
const broadcast_case broadcast_cases[] = {
    {{4, 1, 3}, {5, 3}, {4, 5, 3}},    {{1}, {17}, {17}},        {{255}, {1}, {255}},  {{255}, {255}, {255}},
    {{3, 17, 5}, {17, 1}, {3, 17, 5}}, {{0, 4}, {1, 4}, {0, 4}}, {{}, {2, 3}, {2, 3}},
};

// Each operand in its own layout; every layout appears on both sides.
const std::pair<layout_kind, layout_kind> layout_pairs[] = {{layout_kind::contiguous, layout_kind::contiguous},
                                                            {layout_kind::transposed, layout_kind::strided_slice},
                                                            {layout_kind::strided_slice, layout_kind::expanded},
                                                            {layout_kind::expanded, layout_kind::transposed}};

TEST_P(Zip, EveryDtypeBroadcastAndLayout) {
  const binary_op op = std::get<1>(GetParam());
  const auto& row =
      *std::find_if(std::begin(lockstep::kernels::binary_ops), std::end(lockstep::kernels::binary_ops), [&](const auto& r) { return r.op == op; });
  for (dtype t : all_dtypes) {
    SCOPED_TRACE(lockstep::dtype_name(t));
    if (row.integers_only && lockstep::is_floating(t)) {
      const tensor x = lockstep::tensor::empty({2}, t, dev());
      EXPECT_TRUE(throws_with<std::invalid_argument>([&] { lockstep::zip(op, x, x); }, {row.name, "integer"}));
      continue;
    }
    const dtype result = row.gives_bool ? dtype::boolean : t;
    const operand_ranges ranges = input_ranges(op, t);
    for (const broadcast_case& c : broadcast_cases) {
      for (const auto& [a_layout, b_layout] : layout_pairs) {
        SCOPED_TRACE(shape_text(c.a) + " " + layout_name(a_layout) + " with " + shape_text(c.b) + " " + layout_name(b_layout));
        const random_view a = make_view(c.a, a_layout, t, dev(), ranges.a, rng);
        const random_view b = make_view(c.b, b_layout, t, dev(), ranges.b, rng);
        const tensor out = lockstep::zip(op, a.view, b.view);
        ASSERT_TRUE(is_new_output(out, c.out, result, dev()));
        const std::vector<double> x = elements(a.source, a.view, c.out), y = elements(b.source, b.view, c.out);
        std::vector<double> want(x.size());
        for (std::size_t i = 0; i < want.size(); ++i) want[i] = wrap_to(result, binary_reference(op, x[i], y[i], lockstep::is_floating(t)));
        EXPECT_TRUE(all_within(read_back(out), want, rounding_errors(want, result), c.out));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, Zip, ::testing::Combine(::testing::ValuesIn(devices_here()), ::testing::ValuesIn(all_binary_ops)), device_param_name());

TEST_P(ZipEdgeCases, DifferentDtypesAreRefused) {
  const tensor a = tensor::empty({3}, dtype::float32, dev()), b = tensor::empty({3}, dtype::int32, dev());
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { lockstep::zip(binary_op::add, a, b); }, {"add", "float32", "int32", ".to(dtype)"}));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { lockstep::zip(binary_op::pow, b, a.to(dtype::float16)); }, {"pow", "int32", "float16"}));
}

TEST_P(ZipEdgeCases, ShapesThatDoNotBroadcast) {
  const tensor a = tensor::empty({2, 3}, dtype::float32, dev()), b = tensor::empty({3, 2}, dtype::float32, dev());
  EXPECT_TRUE(throws_with<shape_error>([&] { lockstep::zip(binary_op::mul, a, b); }, {"(2, 3)", "(3, 2)", "broadcast"}));
  const tensor c = tensor::empty({4, 1, 3}, dtype::float32, dev()), d = tensor::empty({5, 4}, dtype::float32, dev());
  EXPECT_TRUE(throws_with<shape_error>([&] { lockstep::zip(binary_op::sub, c, d); }, {"(4, 1, 3)", "(5, 4)"}));
}

TEST_P(ZipEdgeCases, DifferentDevicesAreRefused) {
  // With a GPU: cpu and cuda:0 operands are refused, naming both devices.
  // Without one: no cuda tensor can be made, so no op can mix devices.
  const device other = other_device(dev());
  if (other == dev()) {
    EXPECT_THROW(tensor::empty({3}, dtype::float32, device::cuda(0)), lockstep::device_unavailable);
    return;
  }
  const tensor here = tensor::empty({3}, dtype::float32, dev()), there = tensor::empty({3}, dtype::float32, other);
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { lockstep::zip(binary_op::add, here, there); },
                                                 {"add", "different devices", dev().str(), other.str()}));
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [&] {
        lockstep::matmul(there.reshape({1, 3}), here.reshape({3, 1}));
      },
      {"matmul", "different devices"}));
}

TEST_P(ZipEdgeCases, DivisionByZero) {
  // Integers give 0 (as NumPy; C++ leaves it undefined and a CPU traps); floats follow IEEE.
  for (dtype t : {dtype::uint8, dtype::int32, dtype::int64}) {
    SCOPED_TRACE(lockstep::dtype_name(t));
    const known_tensor a = tensor_of({7, 0, 9, 100}, {4}, t, dev()), b = tensor_of({0, 0, 2, 0}, {4}, t, dev());
    EXPECT_TRUE(all_equal(read_back(lockstep::zip(binary_op::div, a.t, b.t)), {0, 0, 4, 0}, {4}));
  }
  for (dtype t : {dtype::float16, dtype::bfloat16, dtype::float32, dtype::float64}) {
    SCOPED_TRACE(lockstep::dtype_name(t));
    const known_tensor a = tensor_of({1, -1, 3}, {3}, t, dev()), b = tensor_of({0, 0, 2}, {3}, t, dev());
    const std::vector<double> got = read_back(lockstep::zip(binary_op::div, a.t, b.t));
    EXPECT_EQ(got, (std::vector<double>{INFINITY, -INFINITY, 1.5}));
    const known_tensor zero = tensor_of({0}, {1}, t, dev());
    EXPECT_TRUE(std::isnan(read_back(lockstep::zip(binary_op::div, zero.t, zero.t))[0]));
  }
}

TEST_P(ZipEdgeCases, PythonArithmeticAtTheEdges) {
  // lockstep/python_arithmetic.h: MIN // -1 wraps to MIN and MIN % -1 is 0 (a CPU's division would trap),
  // division by zero gives 0, quotients round toward minus infinity and remainders take the divisor's sign; a
  // negative exponent gives 0 unless the base is 1 or -1.
  for (dtype t : {dtype::int32, dtype::int64}) {
    SCOPED_TRACE(lockstep::dtype_name(t));
    const double min = t == dtype::int32 ? -2147483648.0 : -9223372036854775808.0;
    const known_tensor a = tensor_of({min, min, min, 7, -7, 7, -7, 5, 0}, {9}, t, dev());
    const known_tensor b = tensor_of({-1, 0, 1, 2, 2, -2, -2, 0, -3}, {9}, t, dev());
    EXPECT_TRUE(all_equal(read_back(lockstep::zip(binary_op::floor_divide, a.t, b.t)), {min, 0, min, 3, -4, -4, 3, 0, 0}, {9}));
    EXPECT_TRUE(all_equal(read_back(lockstep::zip(binary_op::remainder, a.t, b.t)), {0, 0, 0, 1, 1, -1, -1, 0, 0}, {9}));
    const known_tensor base = tensor_of({1, -1, -1, 2, 0, -2, 3}, {7}, t, dev()), exponent = tensor_of({-5, -3, -4, -1, -2, 3, 4}, {7}, t, dev());
    EXPECT_TRUE(all_equal(read_back(lockstep::zip(binary_op::pow, base.t, exponent.t)), {1, -1, 1, 0, 0, -8, 81}, {7}));
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, ZipEdgeCases, ::testing::ValuesIn(devices_here()), device_param_name());

}  // namespace
}  // namespace tensor_testing
