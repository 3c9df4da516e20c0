// matmul: each algorithm of the ladder against a float64 reference, at
// sizes that are not multiples of the 16x16 or 128x128 tiles, with transposed and
// strided operands, batched with broadcast batch dims; and the errors.
#include <cmath>
#include <functional>

#include "tensor_test_util.h"

namespace tensor_testing {
namespace {

using lockstep::shape_error;
using Matmul = tensor_test<std::tuple<device, std::string>>;
using MatmulErrors = tensor_test<device>;

// The float32 SIMT ladder, from its recipe table: a new rung is tested here without a new line.
std::vector<std::string> simt_algos() {
  std::vector<std::string> names;
  for (const lockstep::matmul_algo_info& algo : lockstep::matmul_algos())
    if (algo.family == "simt") names.push_back(algo.name);
  return names;
}

// An operand of logical shape `shape` laid out in memory some way.
struct operand_layout {
  const char* name;
  std::function<random_view(const shape_t& shape, const device& d, std::mt19937_64& rng)> make;
};

const value_range unit{-1, 1};

// The matrix dims of `shape` stored transposed, as (..., cols, rows).
random_view transposed_matrices(const shape_t& shape, const device& d, std::mt19937_64& rng) {
  shape_t stored = shape;
  std::swap(stored[stored.size() - 1], stored[stored.size() - 2]);
  random_view v;
  v.source = random_tensor(stored, dtype::float32, d, unit, rng);
  v.view = v.source.t.transpose(-1, -2);
  return v;
}

// Rows of a wider matrix: every other row of a (..., 2 rows, cols + 3) tensor, from column 2.
random_view strided_matrices(const shape_t& shape, const device& d, std::mt19937_64& rng) {
  shape_t stored = shape;
  stored[stored.size() - 2] *= 2;
  stored.back() += 3;
  random_view v;
  v.source = random_tensor(stored, dtype::float32, d, unit, rng);
  v.view = v.source.t.slice(-2, 0, stored[stored.size() - 2], 2).slice(-1, 2, 2 + shape.back());
  return v;
}

// Every other matrix of a batch twice as long (batch stride 2 m k; each matrix row-major).
random_view every_other_matrix(const shape_t& shape, const device& d, std::mt19937_64& rng) {
  shape_t stored = shape;
  stored[0] *= 2;
  random_view v;
  v.source = random_tensor(stored, dtype::float32, d, unit, rng);
  v.view = v.source.t.slice(0, 1, stored[0], 2);
  return v;
}

random_view contiguous_matrices(const shape_t& shape, const device& d, std::mt19937_64& rng) {
  return make_view(shape, layout_kind::contiguous, dtype::float32, d, unit, rng);
}

// C = A @ B in double, A and B broadcast over the batch dims of C (its shape
// without the last two), with an error bound for float32 accumulation over
// k terms: (k + 2) * 2^-24 * sum |a| |b| per element.
struct product {
  std::vector<double> values, allowed_error;
};
product matmul_reference(const random_view& a, const random_view& b, const shape_t& c_shape) {
  const std::int64_t m = c_shape[c_shape.size() - 2], n = c_shape.back(), k = a.view.shape().back();
  shape_t a_full(c_shape.begin(), c_shape.end() - 2), b_full = a_full;
  a_full.insert(a_full.end(), {m, k});
  b_full.insert(b_full.end(), {k, n});
  const std::vector<double> x = elements(a.source, a.view, a_full), y = elements(b.source, b.view, b_full);
  const std::int64_t batches = element_count(c_shape) / std::max<std::int64_t>(m * n, 1);
  product c;
  for (const reference_element& e : reference_products(x, y, batches, m, n, k)) {
    c.values.push_back(e.sum);
    c.allowed_error.push_back(static_cast<double>(k + 2) * std::ldexp(1.0, -24) * e.magnitude);
  }
  return c;
}

void expect_product(const random_view& a, const random_view& b, const shape_t& c_shape, const std::string& algo, const device& d) {
  const tensor c = lockstep::matmul(a.view, b.view, algo);
  ASSERT_TRUE(is_new_output(c, c_shape, dtype::float32, d));
  const product want = matmul_reference(a, b, c_shape);
  EXPECT_TRUE(all_within(read_back(c), want.values, want.allowed_error, c_shape));
  EXPECT_TRUE(all_equal(read_back(a.source.t), a.source.memory, a.source.t.shape())) << "A is unchanged";
  EXPECT_TRUE(all_equal(read_back(b.source.t), b.source.memory, b.source.t.shape())) << "B is unchanged";
}

const operand_layout operand_layouts[] = {
    {"contiguous", contiguous_matrices}, {"transposed", transposed_matrices}, {"strided rows", strided_matrices}};

TEST_P(Matmul, OddSizesAndLayouts) {
  const std::string& algo = std::get<1>(GetParam());
  struct size {
    std::int64_t m, k, n;
  };
  // Beyond one 128x128 tile, k not a multiple of 4 or 8, and (131, 36, 260)
  // where the 16-byte loads are legal but the blocks and the last k-tile are partial.
  for (const size& s : {size{1, 1, 1}, size{17, 33, 5}, size{100, 37, 129}, size{64, 64, 64}, size{130, 257, 67}, size{131, 36, 260}}) {
    for (std::size_t i = 0; i < std::size(operand_layouts); ++i) {
      // A in each layout, B in the next one.
      const operand_layout &a_layout = operand_layouts[i], &b_layout = operand_layouts[(i + 1) % std::size(operand_layouts)];
      SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n) + ", A " + a_layout.name + ", B " + b_layout.name);
      const random_view a = a_layout.make({s.m, s.k}, dev(), rng), b = b_layout.make({s.k, s.n}, dev(), rng);
      expect_product(a, b, {s.m, s.n}, algo, dev());
    }
  }
}

TEST_P(Matmul, BatchedWithBroadcastBatchDims) {
  const std::string& algo = std::get<1>(GetParam());
  const std::int64_t m = 17, k = 33, n = 5;
  struct batch_case {
    const char* what;
    shape_t a, b, c;
    random_view (*make_a)(const shape_t&, const device&, std::mt19937_64&);
    random_view (*make_b)(const shape_t&, const device&, std::mt19937_64&);
  };
  const batch_case cases[] = {
      {"(2,1,m,k) @ (3,k,n)", {2, 1, m, k}, {3, k, n}, {2, 3, m, n}, contiguous_matrices, contiguous_matrices},
      {"(m,k) @ (3,k,n)", {m, k}, {3, k, n}, {3, m, n}, contiguous_matrices, contiguous_matrices},
      {"(4,m,k) @ (k,n), B transposed", {4, m, k}, {k, n}, {4, m, n}, contiguous_matrices, transposed_matrices},
      {"every other of (6,m,k) @ (3,k,n) transposed", {3, m, k}, {3, k, n}, {3, m, n}, every_other_matrix, transposed_matrices},
      {"(2,1,m,k) strided @ (1,3,k,n) transposed", {2, 1, m, k}, {1, 3, k, n}, {2, 3, m, n}, strided_matrices, transposed_matrices},
  };
  for (const batch_case& c : cases) {
    SCOPED_TRACE(c.what);
    expect_product(c.make_a(c.a, dev(), rng), c.make_b(c.b, dev(), rng), c.c, algo, dev());
  }
  // A batch dim broadcast by expand (stride 0): the same matrix for every product.
  SCOPED_TRACE("(1,m,k) expanded to (4,m,k) @ (4,k,n)");
  random_view a = contiguous_matrices({1, m, k}, dev(), rng);
  a.view = a.view.expand({4, m, k});
  expect_product(a, contiguous_matrices({4, k, n}, dev(), rng), {4, m, n}, algo, dev());
}

TEST_P(Matmul, EmptyInnerDimGivesZeros) {
  const std::string& algo = std::get<1>(GetParam());
  const random_view a = contiguous_matrices({17, 0}, dev(), rng), b = contiguous_matrices({0, 5}, dev(), rng);
  expect_product(a, b, {17, 5}, algo, dev());
  const tensor no_rows = lockstep::matmul(tensor::empty({0, 3}, dtype::float32, dev()), tensor::empty({3, 5}, dtype::float32, dev()), algo);
  EXPECT_TRUE(is_new_output(no_rows, {0, 5}, dtype::float32, dev()));
}

// Every algorithm on every device, and cuBLAS (the reference) on GPUs.
std::vector<std::tuple<device, std::string>> algo_cases() {
  std::vector<std::tuple<device, std::string>> cases;
  for (const device& d : devices_here()) {
    for (const std::string& algo : simt_algos()) cases.emplace_back(d, algo);
    if (d.kind == device::kind_t::cuda) cases.emplace_back(d, "cublas");
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Algos, Matmul, ::testing::ValuesIn(algo_cases()), device_param_name());

TEST_P(MatmulErrors, SayWhatIsWrong) {
  const tensor a = tensor::empty({2, 3}, dtype::float32, dev()), b = tensor::empty({3, 4}, dtype::float32, dev());
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { lockstep::matmul(a.to(dtype::float64), b.to(dtype::float64)); }, {"float32", "float64"}));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { lockstep::matmul(a, b.to(dtype::int32)); }, {"float32", "int32"}));
  EXPECT_TRUE(throws_with<shape_error>([&] { lockstep::matmul(a, a); }, {"inner dimensions", "(2, 3)", "3 vs 2"}));
  EXPECT_TRUE(throws_with<shape_error>([&] { lockstep::matmul(a.select(0, 0), b); }, {"at least 2 dimensions", "(3,)"}));
  EXPECT_TRUE(throws_with<shape_error>([&] { lockstep::matmul(a, b.select(1, 0)); }, {"at least 2 dimensions"}));
  std::vector<std::string> every_algo{"'strassen'"};
  for (const lockstep::matmul_algo_info& algo : lockstep::matmul_algos()) every_algo.push_back(algo.name);
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { lockstep::matmul(a, b, "strassen"); }, every_algo));
  if (dev().kind == device::kind_t::cpu)
    EXPECT_TRUE(throws_with<std::invalid_argument>([&] { lockstep::matmul(a, b, "cublas"); }, {"'cublas'", "cuda devices"}));
  const tensor a2 = tensor::empty({2, 2, 3}, dtype::float32, dev()), b3 = tensor::empty({3, 3, 4}, dtype::float32, dev());
  EXPECT_TRUE(throws_with<shape_error>([&] { lockstep::matmul(a2, b3); }, {"(2,)", "(3,)", "broadcast"}));
  // The kernels index a matrix with int: 65536 x 32768 elements is one too many (no memory is touched: expanded).
  const tensor huge = tensor::empty({1, 1}, dtype::float32, dev()).expand({65536, 32768});
  const tensor column = tensor::empty({1, 1}, dtype::float32, dev()).expand({32768, 1});
  EXPECT_TRUE(throws_with<shape_error>([&] { lockstep::matmul(huge, column); }, {"32-bit", "(65536, 32768)"}));
  EXPECT_TRUE(throws_with<shape_error>([&] { lockstep::matmul(column.transpose(0, 1), huge.transpose(0, 1)); }, {"32-bit"}));
}

INSTANTIATE_TEST_SUITE_P(Devices, MatmulErrors, ::testing::ValuesIn(devices_here()), device_param_name());

}  // namespace
}  // namespace tensor_testing
