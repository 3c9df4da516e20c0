// reduce: every op along every dim (given as positive and as negative),
// keepdim or not, on every dtype and layout, reduced extents 1, 17, 255 and
// 1000, against the reduction in double of the inputs as stored; and the
// errors (mean of integers, empty or missing dims). reduce_all (every element
// to one value) on every dtype, sizes 0 to 1000003, views and misaligned
// starts; and copy.
#include <algorithm>
#include <cmath>

#include "tensor_test_util.h"

namespace tensor_testing {
namespace {

using lockstep::shape_error;
using Reduce = tensor_test<std::tuple<device, reduce_op>>;
using ReduceEdgeCases = tensor_test<device>;

// Inputs whose reductions over up to `extent` elements stay finite and, for
// integers, exact (products: few factors away from +-1 over long extents).
value_range input_range(reduce_op op, dtype t, std::int64_t extent) {
  const bool floating = lockstep::is_floating(t), is_unsigned = t == dtype::uint8;
  if (op == reduce_op::prod) {
    if (floating) return extent <= 17 ? value_range{0.5, 1.5, false, true} : value_range{0.99, 1.01, false, true};
    if (extent > 17) return {1, 1, true, !is_unsigned};
    switch (t) {
      case dtype::uint8:
        return {0, 3};
      case dtype::int32:
        return {-3, 3};
      default:
        return {-8, 8};  // |product| <= 2^51: exact in double
    }
  }
  if (floating) return {-10, 10};
  const bool summed = op == reduce_op::sum;
  switch (t) {
    case dtype::uint8:
      return {0, 255};
    case dtype::int32:
      return summed ? value_range{-1e6, 1e6} : value_range{-2e9, 2e9};
    default:
      return summed ? value_range{-1e12, 1e12} : value_range{-1e15, 1e15};
  }
}

struct reduction {
  std::vector<double> values;  // over the output's shape with keepdim
  std::vector<double> allowed_error;
};

// The reduction along `dim` of row-major `x` of `shape`, in double, with the
// error a result in dtype `t` may have: none for integers and for max/min
// (an input element); for sums the dtype's rounding bound times sum |x|
// (so it grows with the extent); for products the bound times |result|.
reduction reduce_reference(reduce_op op, const std::vector<double>& x, const shape_t& shape, int dim, dtype t) {
  shape_t kept = shape;
  kept[dim] = 1;
  const std::int64_t extent = shape[dim];
  reduction r;
  for_each_index(kept, [&](const shape_t& out_index) {
    shape_t index = out_index;
    double acc = op == reduce_op::sum || op == reduce_op::mean ? 0 : op == reduce_op::prod ? 1 : NAN, magnitude = 0;
    for (std::int64_t j = 0; j < extent; ++j) {
      index[dim] = j;
      const double v = x.at(static_cast<std::size_t>(ordinal_of(index, shape)));
      magnitude += std::abs(v);
      switch (op) {
        case reduce_op::sum:
        case reduce_op::mean:
          acc += v;
          break;
        case reduce_op::prod:
          acc *= v;
          break;
        case reduce_op::max:
          acc = j == 0 ? v : std::max(acc, v);
          break;
        case reduce_op::min:
          acc = j == 0 ? v : std::min(acc, v);
          break;
      }
    }
    if (op == reduce_op::mean) acc /= static_cast<double>(extent), magnitude /= static_cast<double>(extent);
    r.values.push_back(wrap_to(t, acc));
    const double floor = rounding_bound(t) * smallest_normal(t);
    switch (op) {
      case reduce_op::sum:
      case reduce_op::mean:
        r.allowed_error.push_back(rounding_bound(t) * magnitude + floor);
        break;
      case reduce_op::prod:
        r.allowed_error.push_back(rounding_bound(t) * std::abs(acc) + floor);
        break;
      default:
        r.allowed_error.push_back(0);
        break;
    }
  });
  return r;
}

// The dtype of a reduction's result: int64 for sums and products of integers (PyTorch's rule), else the input's.
dtype result_dtype(reduce_op op, dtype t) { return (op == reduce_op::sum || op == reduce_op::prod) && !lockstep::is_floating(t) ? dtype::int64 : t; }

// Reduced extents 1000, 255 and 3, 2 and 17 and 5, 1 and 4 and 1.
const shape_t reduce_shapes[] = {{1000}, {255, 3}, {2, 17, 5}, {1, 4, 1}};

TEST_P(Reduce, EveryDimDtypeAndLayout) {
  const reduce_op op = std::get<1>(GetParam());
  for (dtype t : all_dtypes) {
    SCOPED_TRACE(lockstep::dtype_name(t));
    for (const shape_t& shape : reduce_shapes) {
      const std::int64_t longest = *std::max_element(shape.begin(), shape.end());
      for (layout_kind layout : all_layouts) {
        const random_view in = make_view(shape, layout, t, dev(), input_range(op, t, longest), rng);
        if (op == reduce_op::mean && !lockstep::is_floating(t)) {
          EXPECT_TRUE(throws_with<std::invalid_argument>([&] { lockstep::reduce(op, in.view, 0); },
                                                         {"mean", "floating-point", lockstep::dtype_name(t), ".to(float32)"}));
          continue;
        }
        const std::vector<double> x = elements(in.source, in.view);
        const int ndim = static_cast<int>(shape.size());
        for (int dim = 0; dim < ndim; ++dim) {
          const reduction want = reduce_reference(op, x, shape, dim, result_dtype(op, t));
          shape_t kept = shape, dropped = shape;
          kept[dim] = 1;
          dropped.erase(dropped.begin() + dim);
          for (int given : {dim, dim - ndim}) {
            for (bool keepdim : {true, false}) {
              SCOPED_TRACE(shape_text(shape) + " " + layout_name(layout) + ", dim " + std::to_string(given) + (keepdim ? ", keepdim" : ""));
              const tensor out = lockstep::reduce(op, in.view, given, keepdim);
              ASSERT_TRUE(is_new_output(out, keepdim ? kept : dropped, result_dtype(op, t), dev()));
              EXPECT_TRUE(all_within(read_back(out), want.values, want.allowed_error, out.shape()));
            }
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, Reduce, ::testing::Combine(::testing::ValuesIn(devices_here()), ::testing::ValuesIn(all_reduce_ops)),
                         device_param_name());

TEST_P(ReduceEdgeCases, MoreOutputsThanTheGridHasThreads) {
  // At most 4096 blocks of 256 threads, striding over the rest: 2^20 + 4099 outputs.
  const random_view in = make_view({3, 1027 * 1025}, layout_kind::contiguous, dtype::int64, dev(), {-1e12, 1e12}, rng);
  const tensor out = lockstep::reduce(reduce_op::sum, in.view, 0);
  ASSERT_TRUE(is_new_output(out, {1027 * 1025}, dtype::int64, dev()));
  const reduction want = reduce_reference(reduce_op::sum, in.source.memory, in.view.shape(), 0, dtype::int64);
  EXPECT_TRUE(all_equal(read_back(out), want.values, out.shape()));
}

TEST_P(ReduceEdgeCases, EmptyOrMissingDims) {
  const tensor x = tensor::empty({0, 4}, dtype::float32, dev());
  for (reduce_op op : all_reduce_ops) {
    SCOPED_TRACE(lockstep::op_name(op));
    if (op == reduce_op::sum || op == reduce_op::prod) {  // the sum of nothing is 0, the product 1 (as PyTorch)
      const tensor out = lockstep::reduce(op, x, 0);
      EXPECT_TRUE(is_new_output(out, {4}, dtype::float32, dev()));
      EXPECT_TRUE(all_equal(read_back(out), std::vector<double>(4, op == reduce_op::sum ? 0.0 : 1.0), out.shape()));
    } else {
      EXPECT_TRUE(throws_with<shape_error>([&] { lockstep::reduce(op, x, 0); }, {lockstep::op_name(op), "dimension 0", "(0, 4)", "empty"}));
      EXPECT_TRUE(throws_with<shape_error>([&] { lockstep::reduce(op, x, -2); }, {"empty"}));
    }
    // Reducing the other dim leaves nothing to compute.
    EXPECT_TRUE(is_new_output(lockstep::reduce(op, x, 1), {0}, dtype::float32, dev()));
    EXPECT_TRUE(is_new_output(lockstep::reduce(op, x, -1, true), {0, 1}, dtype::float32, dev()));
    EXPECT_TRUE(throws_with<shape_error>([&] { lockstep::reduce(op, x, 2); }, {"dim 2", "out of range", "(0, 4)"}));
    EXPECT_TRUE(throws_with<shape_error>([&] { lockstep::reduce(op, x, -3); }, {"dim -3", "out of range"}));
    EXPECT_TRUE(throws_with<shape_error>([&] { lockstep::reduce(op, tensor::empty({}, dtype::float32, dev()), 0); }, {"0-dimensional"}));
  }
}

// ---------------------------------------------------------------- reduce_all: every element to one value

using ReduceAll = tensor_test<std::tuple<device, reduce_op>>;

// n values whose reduction stays finite and, for integers, exact: products
// are mostly ones with a dozen factors of 2, -1 (and 0.5 for floats).
std::vector<double> reduce_all_values(reduce_op op, dtype t, std::int64_t n, std::mt19937_64& rng) {
  std::vector<double> x(static_cast<std::size_t>(n));
  if (op == reduce_op::prod) {
    std::fill(x.begin(), x.end(), 1.0);
    const double factors[] = {2.0, t == dtype::uint8 ? 2.0 : -1.0, lockstep::is_floating(t) ? 0.5 : 2.0};
    for (int i = 0; i < 12 && n > 0; ++i) x[rng() % x.size()] = factors[rng() % 3];
    return x;
  }
  const value_range r = t == dtype::uint8 ? value_range{0, 255} : lockstep::is_floating(t) ? value_range{-10, 10} : value_range{-1000, 1000};
  for (double& v : x) v = random_value(t, r, rng);
  return x;
}

// Sizes around the kernels' paths: 1 and 5 (scalars only), 4099 (vectors and a
// tail), 1000003 (many blocks, the unrolled loop).
TEST_P(ReduceAll, EveryDtypeAndSize) {
  const reduce_op op = std::get<1>(GetParam());
  for (dtype t : all_dtypes) {
    for (std::int64_t n : {1, 5, 4099, 1000003}) {
      SCOPED_TRACE(std::string(lockstep::dtype_name(t)) + ", " + std::to_string(n) + " elements");
      const known_tensor x = tensor_of(reduce_all_values(op, t, n, rng), {n}, t, dev());
      if (op == reduce_op::mean && !lockstep::is_floating(t)) {
        EXPECT_TRUE(throws_with<std::invalid_argument>([&] { lockstep::reduce_all(op, x.t); }, {"mean", "floating-point", ".to(float32)"}));
        break;
      }
      const tensor out = lockstep::reduce_all(op, x.t);
      ASSERT_TRUE(is_new_output(out, {}, result_dtype(op, t), dev()));
      const reduction want = reduce_reference(op, x.memory, {n}, 0, result_dtype(op, t));
      EXPECT_TRUE(all_within(read_back(out), want.values, want.allowed_error, {}));
    }
  }
}

// Strided views are packed first; contiguous views starting off a 16-byte
// boundary take the scalar path for their first elements.
TEST_P(ReduceAll, ViewsAndMisalignedStarts) {
  const reduce_op op = std::get<1>(GetParam());
  for (dtype t : all_dtypes) {
    if (op == reduce_op::mean && !lockstep::is_floating(t)) continue;
    SCOPED_TRACE(lockstep::dtype_name(t));
    for (layout_kind layout : all_layouts) {
      SCOPED_TRACE(layout_name(layout));
      const random_view in = make_view({37, 29}, layout, t, dev(), input_range(op, t, 1073), rng);
      const std::vector<double> x = elements(in.source, in.view);
      const reduction want = reduce_reference(op, x, {static_cast<std::int64_t>(x.size())}, 0, result_dtype(op, t));
      EXPECT_TRUE(all_within(read_back(lockstep::reduce_all(op, in.view)), want.values, want.allowed_error, {}));
    }
    for (std::int64_t start : {1, 3, 7}) {
      SCOPED_TRACE("contiguous from element " + std::to_string(start));
      const known_tensor whole = random_tensor({start + 1000}, t, dev(), input_range(op, t, 1000), rng);
      const tensor view = whole.t.slice(0, start, start + 999);
      const std::vector<double> x = elements(whole, view);
      const reduction want = reduce_reference(op, x, {999}, 0, result_dtype(op, t));
      EXPECT_TRUE(all_within(read_back(lockstep::reduce_all(op, view)), want.values, want.allowed_error, {}));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, ReduceAll, ::testing::Combine(::testing::ValuesIn(devices_here()), ::testing::ValuesIn(all_reduce_ops)),
                         device_param_name());

TEST_P(ReduceEdgeCases, ReduceAllOfNothing) {
  const tensor empty = tensor::empty({0, 4}, dtype::float32, dev());
  EXPECT_TRUE(all_equal(read_back(lockstep::reduce_all(reduce_op::sum, empty)), {0.0}, {}));
  EXPECT_TRUE(all_equal(read_back(lockstep::reduce_all(reduce_op::prod, empty)), {1.0}, {}));
  EXPECT_TRUE(all_equal(read_back(lockstep::reduce_all(reduce_op::sum, tensor::empty({0}, dtype::int32, dev()))), {0.0}, {}));
  for (reduce_op op : {reduce_op::max, reduce_op::min, reduce_op::mean})
    EXPECT_TRUE(throws_with<shape_error>([&] { lockstep::reduce_all(op, empty); }, {lockstep::op_name(op), "(0, 4)", "no elements"}));
}

TEST_P(ReduceEdgeCases, CopyIsANewPackedTensor) {
  const known_tensor x = random_tensor({33, 17}, dtype::float32, dev(), {-1, 1}, rng);
  for (const tensor& view : {x.t, x.t.slice(0, 3, 33), x.t.transpose(0, 1), x.t.slice(1, 1, 17, 3)}) {
    const tensor c = lockstep::copy(view);
    ASSERT_TRUE(is_new_output(c, view.shape(), dtype::float32, dev()));
    EXPECT_NE(c.base(), x.t.base());
    EXPECT_TRUE(all_equal(read_back(c), elements(x, view), view.shape()));
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, ReduceEdgeCases, ::testing::ValuesIn(devices_here()), device_param_name());

}  // namespace
}  // namespace tensor_testing
