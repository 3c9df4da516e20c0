// map: every unary op on every dtype it accepts, on contiguous, transposed,
// sliced-with-step and expanded inputs of odd shapes, against the op in
// double on the inputs as stored; gelu's values as PyTorch's formulas give
// them. Also the ops' names.
#include <cmath>

#include "tensor_test_util.h"

namespace tensor_testing {
namespace {

using Map = tensor_test<std::tuple<device, unary_op>>;

bool needs_floating(unary_op op) {
  return op == unary_op::exp || op == unary_op::log || op == unary_op::sqrt || op == unary_op::sigmoid || op == unary_op::tanh ||
         op == unary_op::reciprocal || op == unary_op::gelu || op == unary_op::gelu_tanh;
}

// Inputs where the op is defined, finite in every dtype, and exact in
// integers (no overflow; uint8 wraps as C++ does).
value_range input_range(unary_op op, dtype t) {
  switch (t) {
    case dtype::uint8:
      return {0, 255};
    case dtype::int32:
      return op == unary_op::square ? value_range{-40000, 40000} : value_range{-2e9, 2e9};
    case dtype::int64:
      return op == unary_op::square ? value_range{-3e7, 3e7} : value_range{-1e15, 1e15};
    default:
      break;
  }
  switch (op) {
    case unary_op::exp:
      return {-3, 3};
    case unary_op::log:
      return {0.1, 10};
    case unary_op::sqrt:
      return {0, 10};
    case unary_op::sigmoid:
    case unary_op::tanh:
      return {-4, 4};
    case unary_op::reciprocal:
      return {0.25, 4, false, true};
    default:
      return {-10, 10};
  }
}

double unary_reference(unary_op op, double x) {
  switch (op) {
    case unary_op::copy:
      return x;
    case unary_op::neg:
      return -x;
    case unary_op::abs:
      return std::abs(x);
    case unary_op::exp:
      return std::exp(x);
    case unary_op::log:
      return std::log(x);
    case unary_op::sqrt:
      return std::sqrt(x);
    case unary_op::relu:
      return x > 0 ? x : 0;
    case unary_op::sigmoid:
      return 1 / (1 + std::exp(-x));
    case unary_op::tanh:
      return std::tanh(x);
    case unary_op::square:
      return x * x;
    case unary_op::reciprocal:
      return 1 / x;
    case unary_op::gelu:  // x Phi(x), 0.5 x (1 + erf(x / sqrt 2)) without the sum's cancellation for large negative x
      return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
    case unary_op::gelu_tanh:  // 0.5 x (1 + tanh(y)) = x / (1 + e^-2y), y = sqrt(2 / pi) (x + 0.044715 x^3)
      return x / (1 + std::exp(-2 * std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  }
  return NAN;
}

const shape_t elementwise_shapes[] = {{1}, {17}, {255}, {3, 17, 5}, {0, 4}, {}};

TEST_P(Map, EveryDtypeAndLayout) {
  const unary_op op = std::get<1>(GetParam());
  for (dtype t : all_dtypes) {
    SCOPED_TRACE(lockstep::dtype_name(t));
    if (needs_floating(op) && !lockstep::is_floating(t)) {
      const tensor x = tensor::empty({3}, t, dev());
      EXPECT_TRUE(
          throws_with<std::invalid_argument>([&] { lockstep::map(op, x); }, {lockstep::op_name(op), "floating-point", lockstep::dtype_name(t)}));
      continue;
    }
    for (const shape_t& shape : elementwise_shapes) {
      for (layout_kind layout : all_layouts) {
        SCOPED_TRACE(shape_text(shape) + ", " + layout_name(layout));
        const random_view in = make_view(shape, layout, t, dev(), input_range(op, t), rng);
        const tensor out = lockstep::map(op, in.view);
        ASSERT_TRUE(is_new_output(out, shape, t, dev()));
        std::vector<double> want = elements(in.source, in.view);
        for (double& x : want) x = wrap_to(t, unary_reference(op, x));
        EXPECT_TRUE(all_within(read_back(out), want, rounding_errors(want, t), shape));
        EXPECT_TRUE(all_equal(read_back(in.source.t), in.source.memory, in.source.t.shape())) << "the input is unchanged";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, Map, ::testing::Combine(::testing::ValuesIn(devices_here()), ::testing::ValuesIn(all_unary_ops)), device_param_name());

using LargeMap = tensor_test<device>;

TEST_P(LargeMap, MoreElementsThanTheGridHasThreads) {
  // The elementwise kernels launch at most 4096 blocks of 256 threads and
  // stride over the rest: 2^20 + 4099 elements, transposed.
  const random_view in = make_view({1027, 1025}, layout_kind::transposed, dtype::int32, dev(), {-1e9, 1e9}, rng);
  const tensor out = lockstep::map(unary_op::neg, in.view);
  ASSERT_TRUE(is_new_output(out, in.view.shape(), dtype::int32, dev()));
  std::vector<double> want = elements(in.source, in.view);
  for (double& x : want) x = -x;
  EXPECT_TRUE(all_equal(read_back(out), want, out.shape()));
}

INSTANTIATE_TEST_SUITE_P(Devices, LargeMap, ::testing::ValuesIn(devices_here()), device_param_name());

// gelu and gelu_tanh against values of the formulas as PyTorch states them
// (torch.nn.functional.gelu, approximate "none" and "tanh"), computed
// independently of the kernels' cancellation-free forms.
using GeluValues = tensor_test<device>;

TEST_P(GeluValues, AreTorchsFormulas) {
  const std::vector<double> x = {1.0, -1.0, 2.5, -3.0};
  const std::vector<double> erf_form = {0.8413447460685429, -0.15865525393145707, 2.4844758366855597, -0.00404969409489031};
  const std::vector<double> tanh_form = {0.8411919906082768, -0.15880800939172324, 2.484915733910001, -0.0036373920817729943};
  const tensor in = tensor_of(x, {4}, dtype::float64, dev()).t;
  std::vector<double> allowed(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) allowed[i] = 1e-14 * std::abs(erf_form[i]);
  EXPECT_TRUE(all_within(read_back(lockstep::map(unary_op::gelu, in)), erf_form, allowed, {4}));
  for (std::size_t i = 0; i < x.size(); ++i) allowed[i] = 1e-14 * std::abs(tanh_form[i]);
  EXPECT_TRUE(all_within(read_back(lockstep::map(unary_op::gelu_tanh, in)), tanh_form, allowed, {4}));
}

INSTANTIATE_TEST_SUITE_P(Devices, GeluValues, ::testing::ValuesIn(devices_here()), device_param_name());

TEST(OpNames, RoundTripAndUnknownNames) {
  for (unary_op op : all_unary_ops) EXPECT_EQ(lockstep::parse_unary_op(lockstep::op_name(op)), op);
  for (binary_op op : all_binary_ops) EXPECT_EQ(lockstep::parse_binary_op(lockstep::op_name(op)), op);
  for (reduce_op op : all_reduce_ops) EXPECT_EQ(lockstep::parse_reduce_op(lockstep::op_name(op)), op);
  EXPECT_STREQ(lockstep::op_name(unary_op::sigmoid), "sigmoid");
  EXPECT_STREQ(lockstep::op_name(unary_op::gelu), "gelu");
  EXPECT_EQ(lockstep::parse_unary_op("gelu_tanh"), unary_op::gelu_tanh);
  EXPECT_STREQ(lockstep::op_name(binary_op::maximum), "maximum");
  EXPECT_STREQ(lockstep::op_name(reduce_op::mean), "mean");
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { lockstep::parse_unary_op("cube"); }, {"unknown unary operation 'cube'", "reciprocal"}));
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { lockstep::parse_binary_op("xor"); }, {"'xor'", "minimum"}));
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { lockstep::parse_reduce_op("argmax"); }, {"'argmax'", "prod"}));
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { lockstep::parse_dtype("float8"); }, {"'float8'", "bfloat16"}));
  for (dtype t : all_dtypes) EXPECT_EQ(lockstep::parse_dtype(lockstep::dtype_name(t)), t);
}

}  // namespace
}  // namespace tensor_testing
