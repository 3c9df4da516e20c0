// matmul's epilogue, act(alpha * (A @ B) + bias) + residual, on every algo
// the device runs (on the emulator: the float32 SIMT ladder, where
// double_buffered applies it in its stores and matmul applies it after the
// others, and the wmma rung, float32 through tf32 and bfloat16, fused)
// against a double-precision reference on fresh random inputs: each part
// alone and all together, at odd and tile-multiple sizes, with strided bias
// and residual, batched with a broadcast batch dim, over an empty inner dim;
// and each wrong argument's message.
#include <cmath>
#include <optional>
#include <string>

#include "tensor_test_util.h"

namespace tensor_testing {
namespace {

using lockstep::matmul_epilogue_args;
using lockstep::shape_error;

// (device, algo, input dtype)
using epilogue_param = std::tuple<device, std::string, dtype>;
using MatmulEpilogue = tensor_test<epilogue_param>;
using MatmulEpilogueErrors = tensor_test<device>;

// Every algo of matmul_algos() that `d` runs, with each dtype it takes.
std::vector<epilogue_param> algo_cases() {
  std::vector<epilogue_param> cases;
  for (const device& d : devices_here())
    for (const lockstep::matmul_algo_info& algo : lockstep::matmul_algos()) {
      const bool on_gpu = d.kind == device::kind_t::cuda;
      if ((algo.gpu_only && !on_gpu) || (!algo.arch.empty() && lockstep::device_arch(d) != algo.arch)) continue;
      for (dtype t : algo.dtypes) cases.emplace_back(d, algo.name, t);
    }
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<epilogue_param>& info) {
  return device_label(std::get<0>(info.param)) + "_" + std::get<1>(info.param) + "_" + lockstep::dtype_name(std::get<2>(info.param));
}

bool on_tensor_cores(const std::string& algo) {
  for (const lockstep::matmul_algo_info& info : lockstep::matmul_algos())
    if (info.name == algo) return info.tensor_cores;
  return false;
}

// The activations the tests use, in double, written as PyTorch states them
// (gelu and gelu_tanh without their sums' cancellation for large negative x).
double activation_reference(const std::string& name, double x) {
  if (name == "relu") return x > 0 ? x : 0;
  if (name == "gelu") return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
  if (name == "gelu_tanh") return x / (1 + std::exp(-2 * std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  if (name == "sigmoid") return 1 / (1 + std::exp(-x));
  if (name == "tanh") return std::tanh(x);
  ADD_FAILURE() << "no reference for activation " << name;
  return NAN;
}
// A bound on each activation's slope (gelu's and gelu_tanh's peak at about 1.13),
// by which it may grow an error in its input.
constexpr double activation_slope = 1.2;

// One test's epilogue, as the host sees it.
struct epilogue_case {
  const char* what;
  double alpha = 1;
  bool bias = false;
  bool bias_as_row = false;  // shape (1, n) instead of (n,)
  bool residual = false;
  std::optional<std::string> activation;
  bool strided_operands = false;  // bias every other element of a longer vector, residual a transposed view
};

const epilogue_case parts_alone_and_together[] = {
    {.what = "no epilogue"},
    {.what = "alpha", .alpha = -1.75},
    {.what = "bias (n,)", .bias = true},
    {.what = "bias (1, n)", .bias = true, .bias_as_row = true},
    {.what = "relu", .activation = "relu"},
    {.what = "gelu", .activation = "gelu"},
    {.what = "gelu_tanh", .activation = "gelu_tanh"},
    {.what = "sigmoid", .activation = "sigmoid"},
    {.what = "tanh", .activation = "tanh"},
    {.what = "residual", .residual = true},
    {.what = "alpha, bias, gelu and residual", .alpha = 0.5, .bias = true, .residual = true, .activation = "gelu"},
    {.what = "alpha, strided bias, relu and transposed residual",
     .alpha = 1.5,
     .bias = true,
     .residual = true,
     .activation = "relu",
     .strided_operands = true},
};

// Bias and residual values stay away from zero, so that leaving one out
// moves every element by more than the error allowed.
const value_range away_from_zero{0.5, 2, false, true};

// Runs a @ b (shapes a_shape, b_shape: contiguous random tensors of dtype t)
// with the case's epilogue and compares with the reference. The allowed
// error follows each step: the product's accumulation over k terms in float
// ((k + 2) 2^-24 of sum |a| |b|) plus tf32's input rounding on float32 tensor
// cores, then one rounding per step at the output's unit (bfloat16's output
// rounding covers the fused kernels' float steps), the activation's slope
// growing what came before it.
void expect_epilogue(const shape_t& a_shape, const shape_t& b_shape, const epilogue_param& param, const epilogue_case& e, std::mt19937_64& rng) {
  const auto& [d, algo, t] = param;
  SCOPED_TRACE(std::string(e.what) + ", " + shape_text(a_shape) + " @ " + shape_text(b_shape));
  const known_tensor a = random_tensor(a_shape, t, d, {-1, 1}, rng), b = random_tensor(b_shape, t, d, {-1, 1}, rng);
  const std::int64_t m = a_shape[a_shape.size() - 2], k = a_shape.back(), n = b_shape.back();
  const shape_t batch = lockstep::broadcast_shapes(shape_t(a_shape.begin(), a_shape.end() - 2), shape_t(b_shape.begin(), b_shape.end() - 2));
  shape_t out_shape = batch, a_full = batch, b_full = batch;
  out_shape.insert(out_shape.end(), {m, n});
  a_full.insert(a_full.end(), {m, k});
  b_full.insert(b_full.end(), {k, n});
  const std::int64_t products = element_count(batch);

  matmul_epilogue_args args;
  args.alpha = e.alpha;
  if (e.activation) args.activation = *e.activation;
  std::vector<double> bias(static_cast<std::size_t>(n), 0.0), residual(static_cast<std::size_t>(element_count(out_shape)), 0.0);
  std::optional<known_tensor> bias_source, residual_source;
  if (e.bias) {
    if (e.strided_operands) {  // elements 1, 3, 5, ... of a vector of 2n + 1
      bias_source = random_tensor({2 * n + 1}, t, d, away_from_zero, rng);
      args.bias = bias_source->t.slice(0, 1, 2 * n + 1, 2);
    } else {
      bias_source = random_tensor(e.bias_as_row ? shape_t{1, n} : shape_t{n}, t, d, away_from_zero, rng);
      args.bias = bias_source->t;
    }
    bias = elements(*bias_source, *args.bias);
  }
  if (e.residual) {
    if (e.strided_operands) {  // a tensor with the last two dims swapped, viewed transposed
      shape_t stored = out_shape;
      std::swap(stored[stored.size() - 1], stored[stored.size() - 2]);
      residual_source = random_tensor(stored, t, d, away_from_zero, rng);
      args.residual = residual_source->t.transpose(-1, -2);
    } else {
      residual_source = random_tensor(out_shape, t, d, away_from_zero, rng);
      args.residual = residual_source->t;
    }
    residual = elements(*residual_source, *args.residual);
  }

  const tensor c = lockstep::matmul(a.t, b.t, algo, args);
  ASSERT_TRUE(is_new_output(c, out_shape, t, d));

  const double unit = t == dtype::bfloat16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -24);
  const double product_error =
      static_cast<double>(k + 2) * std::ldexp(1.0, -24) + (t == dtype::float32 && on_tensor_cores(algo) ? std::ldexp(1.0, -9) : 0);
  const std::vector<double> x = elements(a, a.t, a_full), y = elements(b, b.t, b_full);
  const std::vector<reference_element> products_here = reference_products(x, y, products, m, n, k);
  std::vector<double> want, allowed;
  for (std::size_t at = 0; at < products_here.size(); ++at) {
    const auto [sum, magnitude] = products_here[at];
    const double scaled = e.alpha * sum, biased = scaled + bias[at % static_cast<std::size_t>(n)];
    double error = std::abs(e.alpha) * product_error * magnitude + unit * (std::abs(e.alpha) * magnitude + std::abs(biased));
    double value = biased;
    if (e.activation) {
      value = activation_reference(*e.activation, biased);
      error = activation_slope * error + unit * (std::abs(value) + activation_slope * error);
    }
    value += residual[at];
    error += unit * (std::abs(value) + error);
    want.push_back(value);
    allowed.push_back(error + 1e-30);
  }
  EXPECT_TRUE(all_within(read_back(c), want, allowed, out_shape));
  EXPECT_TRUE(all_equal(read_back(a.t), a.memory, a.t.shape())) << "A is unchanged";
  if (residual_source) EXPECT_TRUE(all_equal(read_back(residual_source->t), residual_source->memory, residual_source->t.shape())) << "unchanged";
}

TEST_P(MatmulEpilogue, EachPartAloneAndAllTogether) {
  struct size {
    std::int64_t m, n, k;
  };
  // Odd sizes (partial tiles, rows not 16-byte multiples), and whole tiles
  // of every rung (128 x 256: double_buffered's, two of wmma's).
  for (const size& s : {size{67, 45, 33}, size{128, 256, 64}})
    for (const epilogue_case& e : parts_alone_and_together) expect_epilogue({s.m, s.k}, {s.k, s.n}, GetParam(), e, rng);
}

TEST_P(MatmulEpilogue, BatchedWithABroadcastBatchDim) {
  // (2, 1, m, k) @ (3, k, n): 6 products, A's batch dim broadcast; the bias
  // is shared by all, the residual has the output's full shape.
  for (const epilogue_case& e : {parts_alone_and_together[9], parts_alone_and_together[10], parts_alone_and_together[11]})
    expect_epilogue({2, 1, 19, 21}, {3, 21, 13}, GetParam(), e, rng);
}

TEST_P(MatmulEpilogue, EmptyInnerDimGivesTheEpilogueOfZero) {
  // A @ B is 0: the output is act(bias) + residual.
  expect_epilogue({7, 0}, {0, 5}, GetParam(), parts_alone_and_together[10], rng);
}

INSTANTIATE_TEST_SUITE_P(Algos, MatmulEpilogue, ::testing::ValuesIn(algo_cases()), case_name);

TEST_P(MatmulEpilogueErrors, SayWhatIsWrong) {
  const tensor a = tensor::empty({4, 3}, dtype::float32, dev()), b = tensor::empty({3, 5}, dtype::float32, dev());
  auto with = [&](auto set) {
    matmul_epilogue_args args;
    set(args);
    return [&a, &b, args] { lockstep::matmul(a, b, "auto", args); };
  };
  const tensor right_bias = tensor::empty({5}, dtype::float32, dev());
  EXPECT_TRUE(throws_with<shape_error>(with([&](matmul_epilogue_args& e) { e.bias = tensor::empty({6}, dtype::float32, dev()); }),
                                       {"bias", "shape (5,) or (1, 5)", "got float32 tensor (6,)"}));
  EXPECT_TRUE(throws_with<shape_error>(with([&](matmul_epilogue_args& e) {
                                         e.bias = tensor::empty({4, 5}, dtype::float32, dev());
                                       }),
                                       {"bias", "every row", "(4, 5)"}));
  EXPECT_TRUE(throws_with<std::invalid_argument>(with([&](matmul_epilogue_args& e) { e.bias = right_bias.to(dtype::float64); }),
                                                 {"bias", "float64", "output's dtype", ".to(float32)"}));
  EXPECT_TRUE(throws_with<shape_error>(with([&](matmul_epilogue_args& e) {
                                         e.residual = tensor::empty({4, 6}, dtype::float32, dev());
                                       }),
                                       {"residual", "output's shape", "(4, 5)", "(4, 6)"}));
  EXPECT_TRUE(throws_with<shape_error>(with([&](matmul_epilogue_args& e) { e.residual = right_bias; }), {"residual", "(5,)", "expand"}));
  EXPECT_TRUE(throws_with<std::invalid_argument>(with([&](matmul_epilogue_args& e) {
                                                   e.residual = tensor::empty({4, 5}, dtype::int32, dev());
                                                 }),
                                                 {"residual", "int32", ".to(float32)"}));
  EXPECT_TRUE(throws_with<std::invalid_argument>(with([&](matmul_epilogue_args& e) { e.activation = "swish"; }),
                                                 {"activation", "'swish'", "relu", "gelu_tanh"}));
  EXPECT_TRUE(throws_with<std::invalid_argument>(with([&](matmul_epilogue_args& e) { e.activation = static_cast<unary_op>(99); }),
                                                 {"activation", "not a unary op", "99"}));
  // Batched: the residual has the whole output's shape, not one product's.
  const tensor a3 = tensor::empty({2, 4, 3}, dtype::float32, dev());
  matmul_epilogue_args one_product;
  one_product.residual = tensor::empty({4, 5}, dtype::float32, dev());
  EXPECT_TRUE(throws_with<shape_error>([&] { lockstep::matmul(a3, b, "auto", one_product); }, {"residual", "(2, 4, 5)", "(4, 5)"}));
  // The tensor-core path checks the same: a bfloat16 product takes a bfloat16 bias.
  matmul_epilogue_args float_bias;
  float_bias.bias = right_bias;
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { lockstep::matmul(a.to(dtype::bfloat16), b.to(dtype::bfloat16), "wmma", float_bias); },
                                                 {"bias", "bfloat16", ".to(bfloat16)"}));
  const device elsewhere = other_device(dev());
  if (!(elsewhere == dev()))
    EXPECT_TRUE(throws_with<std::invalid_argument>(with([&](matmul_epilogue_args& e) { e.bias = right_bias.to(elsewhere); }),
                                                   {"bias", elsewhere.str(), ".to(\"" + dev().str() + "\")"}));
}

INSTANTIATE_TEST_SUITE_P(Devices, MatmulEpilogueErrors, ::testing::ValuesIn(devices_here()), device_param_name());

}  // namespace
}  // namespace tensor_testing
