// Tensor views (permute, transpose, slice, select, unsqueeze, expand,
// reshape), copies (contiguous, clone, to(device), to(dtype)), broadcasting
// rules, and tensors with no elements.
#include <algorithm>
#include <numeric>

#include "tensor_test_util.h"

namespace tensor_testing {
namespace {

using lockstep::broadcast_shapes;
using lockstep::shape_error;
using Views = tensor_test<device>;

const value_range distinct_values{-1e9, 1e9};

// What a view of contiguous `x` must hold: its element `index` is element
// source_index(index) of x.
template <class F>
std::vector<double> picked(const known_tensor& x, const shape_t& view_shape, F&& source_index) {
  std::vector<double> out;
  for_each_index(view_shape,
                 [&](const shape_t& i) { out.push_back(x.memory.at(static_cast<std::size_t>(ordinal_of(source_index(i), x.t.shape())))); });
  return out;
}

// A view of x's memory holding `want`, read on the host through its strides
// and copied on the device by contiguous().
void expect_view_of(const known_tensor& x, const tensor& view, const std::vector<double>& want) {
  EXPECT_EQ(view.base(), x.t.base()) << "a view shares its tensor's memory";
  EXPECT_EQ(view.numel(), static_cast<std::int64_t>(want.size()));
  EXPECT_TRUE(all_equal(elements(x, view), want, view.shape())) << "through the strides";
  EXPECT_TRUE(all_equal(read_back(view.contiguous()), want, view.shape())) << "copied by contiguous()";
}

TEST_P(Views, PermuteReordersDimsAndStrides) {
  const known_tensor x = random_tensor({3, 17, 5}, dtype::int32, dev(), distinct_values, rng);
  const tensor p = x.t.permute({2, 0, 1});
  EXPECT_EQ(p.shape(), (shape_t{5, 3, 17}));
  EXPECT_EQ(p.strides(), (shape_t{1, 85, 5}));
  EXPECT_FALSE(p.is_contiguous());
  expect_view_of(x, p, picked(x, p.shape(), [](const shape_t& i) { return shape_t{i[1], i[2], i[0]}; }));
  const tensor negative = x.t.permute({-1, 0, -2});
  EXPECT_EQ(negative.shape(), p.shape());
  EXPECT_EQ(negative.strides(), p.strides());

  EXPECT_TRUE(throws_with<shape_error>([&] { x.t.permute({0, 0, 1}); }, {"permute", "twice"}));
  EXPECT_TRUE(throws_with<shape_error>([&] { x.t.permute({0, 1}); }, {"permute", "2 dims", "3"}));
  EXPECT_TRUE(throws_with<shape_error>([&] { x.t.permute({0, 1, 3}); }, {"permute", "dim 3", "out of range"}));
}

TEST_P(Views, TransposeSwapsTwoDims) {
  const known_tensor x = random_tensor({17, 33}, dtype::float32, dev(), {-1, 1}, rng);
  const tensor t = x.t.transpose(0, 1);
  EXPECT_EQ(t.shape(), (shape_t{33, 17}));
  EXPECT_EQ(t.strides(), (shape_t{1, 33}));
  expect_view_of(x, t, picked(x, t.shape(), [](const shape_t& i) { return shape_t{i[1], i[0]}; }));
  EXPECT_EQ(x.t.transpose(-1, -2).strides(), t.strides());

  const known_tensor y = random_tensor({2, 3, 4}, dtype::uint8, dev(), {0, 255}, rng);
  const tensor outer = y.t.transpose(0, 2);
  EXPECT_EQ(outer.shape(), (shape_t{4, 3, 2}));
  expect_view_of(y, outer, picked(y, outer.shape(), [](const shape_t& i) { return shape_t{i[2], i[1], i[0]}; }));
  EXPECT_TRUE(throws_with<shape_error>([&] { y.t.transpose(0, 3); }, {"transpose", "dim 3"}));
}

TEST_P(Views, SliceFollowsPythonRules) {
  const known_tensor x = random_tensor({20, 7}, dtype::int64, dev(), distinct_values, rng);
  struct slice_case {
    int dim;
    std::int64_t start, stop, step;
    std::vector<std::int64_t> indices;  // what Python's range(20)[start:stop:step] or range(7)[...] gives
  };
  const slice_case cases[] = {
      {0, 1, 15, 3, {1, 4, 7, 10, 13}},
      {0, -5, -1, 1, {15, 16, 17, 18}},
      {0, -100, 100, 7, {0, 7, 14}},
      {0, 5, 2, 1, {}},
      {0, 19, 1000, 5, {19}},
      {1, -3, 7, 2, {4, 6}},
      {-1, 0, 7, 4, {0, 4}},
      {-2, 18, -1, 1, {18}},
  };
  for (const slice_case& c : cases) {
    SCOPED_TRACE("slice(" + std::to_string(c.dim) + ", " + std::to_string(c.start) + ", " + std::to_string(c.stop) + ", " + std::to_string(c.step) +
                 ")");
    const tensor s = x.t.slice(c.dim, c.start, c.stop, c.step);
    const int d = c.dim < 0 ? c.dim + 2 : c.dim;
    shape_t want_shape = x.t.shape();
    want_shape[d] = static_cast<std::int64_t>(c.indices.size());
    ASSERT_EQ(s.shape(), want_shape);
    expect_view_of(x, s, picked(x, s.shape(), [&](shape_t i) {
                     i[d] = c.indices[i[d]];
                     return i;
                   }));
  }
  // A slice of a slice, on both dims.
  const tensor chained = x.t.slice(0, 2, 18, 2).slice(0, -3, 100).slice(1, 1, 6, 2);
  const std::vector<std::int64_t> rows{12, 14, 16}, cols{1, 3, 5};
  ASSERT_EQ(chained.shape(), (shape_t{3, 3}));
  expect_view_of(x, chained, picked(x, chained.shape(), [&](const shape_t& i) { return shape_t{rows[i[0]], cols[i[1]]}; }));

  EXPECT_TRUE(throws_with<shape_error>([&] { x.t.slice(0, 0, 5, 0); }, {"step", "positive"}));
  EXPECT_TRUE(throws_with<shape_error>([&] { x.t.slice(0, 5, 0, -1); }, {"step", "positive"}));
  EXPECT_TRUE(throws_with<shape_error>([&] { x.t.slice(2, 0, 1); }, {"slice", "dim 2"}));
}

TEST_P(Views, SelectDropsADim) {
  const known_tensor x = random_tensor({4, 5, 6}, dtype::float64, dev(), {-1, 1}, rng);
  const tensor last_row = x.t.select(1, -1);
  EXPECT_EQ(last_row.shape(), (shape_t{4, 6}));
  expect_view_of(x, last_row, picked(x, last_row.shape(), [](const shape_t& i) { return shape_t{i[0], 4, i[1]}; }));
  const tensor first = x.t.select(2, -6);
  expect_view_of(x, first, picked(x, first.shape(), [](const shape_t& i) { return shape_t{i[0], i[1], 0}; }));
  const tensor element = x.t.select(0, 3).select(0, 2).select(0, 1);
  EXPECT_EQ(element.shape(), shape_t{});
  EXPECT_EQ(element.numel(), 1);
  expect_view_of(x, element, {x.memory[ordinal_of({3, 2, 1}, x.t.shape())]});

  EXPECT_TRUE(throws_with<shape_error>([&] { x.t.select(1, 5); }, {"select", "index 5", "extent 5"}));
  EXPECT_TRUE(throws_with<shape_error>([&] { x.t.select(1, -6); }, {"select", "index -6"}));
  EXPECT_TRUE(throws_with<shape_error>([&] { x.t.select(-4, 0); }, {"select", "dim -4"}));
}

TEST_P(Views, UnsqueezeAddsAnExtentOfOne) {
  const known_tensor x = random_tensor({3, 4}, dtype::int32, dev(), distinct_values, rng);
  const std::vector<double> same = x.memory;
  for (const auto& [dim, want] :
       std::vector<std::pair<int, shape_t>>{{0, {1, 3, 4}}, {1, {3, 1, 4}}, {2, {3, 4, 1}}, {-1, {3, 4, 1}}, {-3, {1, 3, 4}}}) {
    SCOPED_TRACE("unsqueeze(" + std::to_string(dim) + ")");
    const tensor u = x.t.unsqueeze(dim);
    EXPECT_EQ(u.shape(), want);
    EXPECT_TRUE(u.is_contiguous());
    expect_view_of(x, u, same);
  }
  const tensor tu = x.t.transpose(0, 1).unsqueeze(1);
  EXPECT_EQ(tu.shape(), (shape_t{4, 1, 3}));
  expect_view_of(x, tu, picked(x, tu.shape(), [](const shape_t& i) { return shape_t{i[2], i[0]}; }));
  EXPECT_TRUE(throws_with<shape_error>([&] { x.t.unsqueeze(3); }, {"unsqueeze", "dim 3"}));
  EXPECT_TRUE(throws_with<shape_error>([&] { x.t.unsqueeze(-4); }, {"unsqueeze", "dim -4"}));
}

TEST_P(Views, ExpandBroadcastsWithStrideZero) {
  const known_tensor column = random_tensor({3, 1}, dtype::float16, dev(), {-4, 4}, rng);
  const tensor wide = column.t.expand({3, 4});
  EXPECT_EQ(wide.strides(), (shape_t{1, 0}));
  EXPECT_FALSE(wide.is_contiguous());
  expect_view_of(column, wide, picked(column, wide.shape(), [](const shape_t& i) { return shape_t{i[0], 0}; }));
  const tensor kept = column.t.expand({2, -1, 5});
  EXPECT_EQ(kept.shape(), (shape_t{2, 3, 5}));
  EXPECT_EQ(kept.strides(), (shape_t{0, 1, 0}));
  expect_view_of(column, kept, picked(column, kept.shape(), [](const shape_t& i) { return shape_t{i[1], 0}; }));

  const known_tensor row = random_tensor({4}, dtype::bfloat16, dev(), {-4, 4}, rng);
  const tensor rows = row.t.expand({2, 3, 4});
  EXPECT_EQ(rows.strides(), (shape_t{0, 0, 1}));
  expect_view_of(row, rows, picked(row, rows.shape(), [](const shape_t& i) { return shape_t{i[2]}; }));

  EXPECT_TRUE(throws_with<shape_error>([&] { column.t.expand({4, 4}); }, {"expand", "extent 3", "(3, 1)"}));
  EXPECT_TRUE(throws_with<shape_error>([&] { column.t.expand({4}); }, {"expand", "fewer dimensions"}));
  EXPECT_TRUE(throws_with<shape_error>([&] { column.t.expand({-1, 3, 4}); }, {"expand", "leading", "(-1, 3, 4)"}));
  EXPECT_TRUE(throws_with<shape_error>([&] { column.t.expand({3, -2}); }, {"expand", "negative", "(3, -2)"}));
}

TEST_P(Views, ZeroDimensionalTensors) {
  const known_tensor scalar = tensor_of({2.5}, {}, dtype::float32, dev());
  EXPECT_EQ(scalar.t.ndim(), 0);
  EXPECT_EQ(scalar.t.numel(), 1);
  EXPECT_EQ(scalar.t.permute({}).shape(), shape_t{});
  expect_view_of(scalar, scalar.t.unsqueeze(0), {2.5});
  expect_view_of(scalar, scalar.t.unsqueeze(-1).expand({2, 3}), std::vector<double>(6, 2.5));
  expect_view_of(scalar, scalar.t.expand({4}), std::vector<double>(4, 2.5));
  expect_view_of(scalar, scalar.t.reshape({1, 1}), {2.5});
  EXPECT_TRUE(all_equal(read_back(scalar.t.clone()), {2.5}, {}));
  EXPECT_TRUE(all_equal(read_back(scalar.t.to(dtype::int64)), {2}, {}));
  // No dim to select, slice or transpose: dims 0 and -1 are out of range too.
  EXPECT_TRUE(throws_with<shape_error>([&] { scalar.t.select(0, 0); }, {"select", "dim 0", "0 dimensions"}));
  EXPECT_TRUE(throws_with<shape_error>([&] { scalar.t.slice(-1, 0, 1); }, {"slice", "dim -1"}));
  EXPECT_TRUE(throws_with<shape_error>([&] { scalar.t.transpose(0, 0); }, {"transpose", "dim 0"}));
  EXPECT_TRUE(throws_with<shape_error>([&] { scalar.t.unsqueeze(1); }, {"unsqueeze", "dim 1"}));
}

TEST_P(Views, WrapSharesForeignMemory) {
  // Memory the tensor does not own (a lockstep::buffer), read through strides given by the caller.
  const std::vector<double> values{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  auto memory = std::make_shared<lockstep::buffer>(dev(), values.size() * sizeof(double));
  memory->copy_from_host(values.data(), memory->bytes());
  const tensor columns = tensor::wrap(memory->data(), {4, 3}, {1, 4}, dtype::float64, dev(), memory);
  EXPECT_EQ(columns.data(), memory->data());
  EXPECT_FALSE(columns.is_contiguous());
  EXPECT_TRUE(all_equal(read_back(columns), {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}, columns.shape()));
  const tensor doubled = lockstep::zip(binary_op::add, columns, columns.transpose(0, 1).transpose(0, 1));
  EXPECT_TRUE(all_equal(read_back(doubled), {0, 8, 16, 2, 10, 18, 4, 12, 20, 6, 14, 22}, doubled.shape()));
  EXPECT_TRUE(throws_with<shape_error>([&] { tensor::wrap(memory->data(), {4, 3}, {1}, dtype::float64, dev(), memory); }, {"wrap"}));
}

TEST_P(Views, ReshapeOfContiguousIsAView) {
  const known_tensor x = random_tensor({4, 6, 5}, dtype::int32, dev(), distinct_values, rng);
  for (const auto& [asked, want] : std::vector<std::pair<shape_t, shape_t>>{
           {{120}, {120}}, {{-1}, {120}}, {{-1, 5}, {24, 5}}, {{2, -1, 3, 5}, {2, 4, 3, 5}}, {{1, 120, 1}, {1, 120, 1}}}) {
    SCOPED_TRACE("reshape" + shape_text(asked));
    const tensor r = x.t.reshape(asked);
    EXPECT_EQ(r.shape(), want);
    EXPECT_TRUE(r.is_contiguous());
    EXPECT_EQ(r.data(), x.t.data());
    expect_view_of(x, r, x.memory);
  }
}

TEST_P(Views, ReshapeOfStridedViewsWhereTheStridesAllow) {
  struct reshape_case {
    const char* what;
    shape_t source_shape;
    std::function<tensor(const tensor&)> make_view;
    shape_t view_shape;    // a legal view
    shape_t view_strides;  // its strides
    shape_t needs_copy;    // a shape only a copy can give
  };
  const reshape_case cases[] = {
      {"every other matrix", {8, 3, 5}, [](const tensor& t) { return t.slice(0, 0, 8, 2); }, {2, 2, 15}, {60, 30, 1}, {-1}},
      {"transposed", {4, 5}, [](const tensor& t) { return t.transpose(0, 1); }, {5, 2, 2}, {1, 10, 5}, {20}},
      {"expanded",
       {3, 1},
       [](const tensor& t) {
         return t.expand({3, 4});
       },
       {3, 2, 2},
       {1, 0, 0},
       {12}},
  };
  for (const reshape_case& c : cases) {
    SCOPED_TRACE(c.what);
    const known_tensor x = random_tensor(c.source_shape, dtype::float32, dev(), {-1, 1}, rng);
    const tensor view = c.make_view(x.t);
    ASSERT_FALSE(view.is_contiguous());
    const std::vector<double> want = elements(x, view);
    const tensor r = view.reshape(c.view_shape);
    EXPECT_EQ(r.shape(), c.view_shape);
    EXPECT_EQ(r.strides(), c.view_strides);
    expect_view_of(x, r, want);

    EXPECT_TRUE(
        throws_with<shape_error>([&] { view.reshape(c.needs_copy); }, {"reshape", shape_text(view.shape()), "without copying", "contiguous()"}));
    const tensor copied = view.contiguous().reshape(c.needs_copy);
    EXPECT_NE(copied.base(), x.t.base());
    EXPECT_TRUE(all_equal(read_back(copied), want, copied.shape()));
  }
}

TEST_P(Views, ReshapeErrorsSayWhy) {
  const tensor x = tensor::empty({4, 6}, dtype::float32, dev());
  EXPECT_TRUE(throws_with<shape_error>([&] { x.reshape({-1, -1}); }, {"only one extent can be -1"}));
  EXPECT_TRUE(throws_with<shape_error>([&] { x.reshape({5, 5}); }, {"(5, 5)", "24 elements", "(4, 6)"}));
  EXPECT_TRUE(throws_with<shape_error>([&] { x.reshape({-1, 5}); }, {"cannot infer", "24"}));
  EXPECT_TRUE(throws_with<shape_error>([&] { x.reshape({-2, -12}); }, {"negative"}));
}

TEST_P(Views, ContiguousAndCloneCopyViewsOfEveryDtype) {
  for (dtype t : all_dtypes) {
    SCOPED_TRACE(lockstep::dtype_name(t));
    const known_tensor x = random_tensor({5, 17, 3}, t, dev(), lockstep::is_floating(t) ? value_range{-100, 100} : value_range{0, 120}, rng);
    const tensor view = x.t.permute({2, 0, 1}).slice(1, -4, 5, 2);
    ASSERT_EQ(view.shape(), (shape_t{3, 2, 17}));
    const std::vector<double> want = elements(x, view);
    for (const tensor& copy : {view.contiguous(), view.clone()}) {
      EXPECT_TRUE(is_new_output(copy, view.shape(), t, dev()));
      EXPECT_NE(copy.base(), x.t.base());
      EXPECT_TRUE(all_equal(read_back(copy), want, view.shape()));
    }
    EXPECT_EQ(x.t.contiguous().base(), x.t.base()) << "contiguous() of a contiguous tensor is the tensor";
    const tensor cloned = x.t.clone();
    EXPECT_NE(cloned.base(), x.t.base()) << "clone() always copies";
    EXPECT_TRUE(all_equal(read_back(cloned), x.memory, x.t.shape()));
  }
}

TEST_P(Views, ToDeviceRoundTrips) {
  // cpu <-> cuda:0 where there is a GPU; else to(the same device) must not copy.
  const device other = other_device(dev());
  for (dtype t : all_dtypes) {
    SCOPED_TRACE(std::string(lockstep::dtype_name(t)) + " to " + other.str());
    const known_tensor x = random_tensor({17, 5}, t, dev(), lockstep::is_floating(t) ? value_range{-100, 100} : value_range{0, 120}, rng);
    const tensor view = x.t.transpose(0, 1).slice(1, 1, 17, 3);
    const std::vector<double> want = elements(x, view);
    const tensor there = view.to(other);
    EXPECT_EQ(there.where(), other);
    EXPECT_EQ(there.shape(), view.shape());
    EXPECT_TRUE(all_equal(read_back(there), want, view.shape()));
    const tensor back = there.to(dev());
    EXPECT_EQ(back.where(), dev());
    EXPECT_TRUE(all_equal(read_back(back), want, view.shape()));
    if (other == dev()) {
      EXPECT_EQ(there.base(), view.base());
      EXPECT_EQ(there.strides(), view.strides());
    } else {
      EXPECT_TRUE(is_new_output(there, view.shape(), t, other));
      EXPECT_TRUE(is_new_output(back, view.shape(), t, dev()));
    }
  }
}

TEST_P(Views, ToDtypeBetweenEveryPair) {
  // Small integers are exact in all seven dtypes (negative ones in all but uint8).
  for (dtype from : all_dtypes) {
    for (dtype to : all_dtypes) {
      SCOPED_TRACE(std::string(lockstep::dtype_name(from)) + " to " + lockstep::dtype_name(to));
      const bool unsigned_involved = from == dtype::uint8 || to == dtype::uint8;
      const known_tensor x = random_tensor({17, 3}, from, dev(), {unsigned_involved ? 0.0 : -100.0, 100, true}, rng);
      const tensor view = x.t.transpose(0, 1);
      const tensor y = view.to(to);
      if (from == to) {
        EXPECT_EQ(y.base(), view.base()) << "to(its own dtype) does not copy";
      } else {
        EXPECT_TRUE(is_new_output(y, view.shape(), to, dev()));
      }
      EXPECT_TRUE(all_equal(read_back(y), elements(x, view), view.shape()));
    }
  }
}

TEST_P(Views, FloatToIntegerTruncatesTowardZero) {
  for (dtype from : {dtype::float16, dtype::bfloat16, dtype::float32, dtype::float64}) {
    for (dtype to : {dtype::uint8, dtype::int32, dtype::int64}) {
      SCOPED_TRACE(std::string(lockstep::dtype_name(from)) + " to " + lockstep::dtype_name(to));
      const bool is_unsigned = to == dtype::uint8;
      const std::vector<double> values =
          is_unsigned ? std::vector<double>{0.5, 2.75, 99.5, 200.5} : std::vector<double>{-99.5, -2.75, -0.5, 0.5, 2.75};
      const std::vector<double> want = is_unsigned ? std::vector<double>{0, 2, 99, 200} : std::vector<double>{-99, -2, 0, 0, 2};
      const known_tensor x = tensor_of(values, {static_cast<std::int64_t>(values.size())}, from, dev());
      EXPECT_TRUE(all_equal(read_back(x.t.to(to)), want, x.t.shape()));
    }
  }
}

TEST(BroadcastShapes, NumPyRules) {
  const std::vector<std::tuple<shape_t, shape_t, shape_t>> cases{
      {{4, 1, 3}, {5, 3}, {4, 5, 3}}, {{1}, {17}, {17}},        {{17}, {1}, {17}}, {{}, {2, 3}, {2, 3}},
      {{2, 3}, {}, {2, 3}},           {{0, 4}, {1, 4}, {0, 4}}, {{1}, {0}, {0}},   {{8, 1, 6, 1}, {7, 1, 5}, {8, 7, 6, 5}},
      {{3, 1}, {1, 1, 4}, {1, 3, 4}},
  };
  for (const auto& [a, b, want] : cases) EXPECT_EQ(broadcast_shapes(a, b), want) << shape_text(a) << " with " << shape_text(b);
}

TEST(BroadcastShapes, MismatchNamesBothShapes) {
  EXPECT_TRUE(throws_with<shape_error>([] { broadcast_shapes({2, 3}, {3, 2}); }, {"(2, 3)", "(3, 2)", "do not broadcast", "3 and 2"}));
  EXPECT_TRUE(throws_with<shape_error>([] { broadcast_shapes({4, 1, 3}, {5, 4}); }, {"(4, 1, 3)", "(5, 4)"}));
  EXPECT_TRUE(throws_with<shape_error>([] { broadcast_shapes({3}, {0}); }, {"(3,)", "(0,)"}));
}

TEST_P(Views, NumelAndContiguity) {
  const tensor scalar = tensor::empty({}, dtype::float32, dev());
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_TRUE(scalar.is_contiguous());
  const tensor x = tensor::empty({3, 1, 4}, dtype::int32, dev());
  EXPECT_EQ(x.numel(), 12);
  EXPECT_TRUE(x.is_contiguous());
  EXPECT_FALSE(x.transpose(0, 2).is_contiguous());
  EXPECT_TRUE(x.transpose(0, 1).is_contiguous()) << "moving an extent-1 dim keeps the order of the others";
  EXPECT_TRUE(x.slice(0, 1, 3).is_contiguous()) << "a run of whole rows";
  EXPECT_FALSE(x.slice(2, 0, 3).is_contiguous()) << "part of every row";
  EXPECT_FALSE(x.slice(0, 0, 3, 2).is_contiguous());
  EXPECT_TRUE(x.select(0, 2).is_contiguous());
  EXPECT_FALSE(x.expand({3, 5, 4}).is_contiguous());
  EXPECT_TRUE(x.unsqueeze(3).is_contiguous());
  EXPECT_EQ(x.slice(2, 1, 4, 2).numel(), 6);
  EXPECT_EQ(x.describe(), "int32 tensor (3, 1, 4) on " + dev().str());
}

TEST_P(Views, ZeroSizedTensors) {
  const known_tensor x = random_tensor({0, 4}, dtype::float32, dev(), {-1, 1}, rng);
  EXPECT_EQ(x.t.numel(), 0);
  EXPECT_TRUE(x.t.is_contiguous());
  EXPECT_TRUE(read_back(x.t).empty());
  const tensor t = x.t.transpose(0, 1);
  EXPECT_EQ(t.shape(), (shape_t{4, 0}));
  EXPECT_TRUE(is_new_output(t.clone(), {4, 0}, dtype::float32, dev()));
  EXPECT_TRUE(is_new_output(t.contiguous(), {4, 0}, dtype::float32, dev()));
  EXPECT_TRUE(is_new_output(t.to(dtype::int64), {4, 0}, dtype::int64, dev()));
  EXPECT_TRUE(is_new_output(x.t.to(other_device(dev())), {0, 4}, dtype::float32, other_device(dev())));
  EXPECT_EQ(x.t.reshape({-1}).shape(), shape_t{0});
  EXPECT_EQ(x.t.reshape({2, 0, 8}).shape(), (shape_t{2, 0, 8}));
  EXPECT_TRUE(throws_with<shape_error>([&] { x.t.reshape({0, -1}); }, {"cannot infer"}));
  EXPECT_EQ(x.t.expand({3, 0, 4}).numel(), 0);

  const known_tensor y = random_tensor({5, 3}, dtype::int32, dev(), {-9, 9}, rng);
  const tensor none = y.t.slice(0, 4, 2);
  EXPECT_EQ(none.shape(), (shape_t{0, 3}));
  EXPECT_TRUE(is_new_output(none.clone(), {0, 3}, dtype::int32, dev()));
  EXPECT_TRUE(read_back(none).empty());
}

TEST_P(Views, NewTensorsArePoisoned) {
  for (dtype t : all_dtypes) {
    SCOPED_TRACE(lockstep::dtype_name(t));
    const tensor x = tensor::empty({3, 5}, t, dev());
    std::vector<unsigned char> bytes(15 * lockstep::itemsize(t), 0);
    x.copy_to_host(bytes.data());
    EXPECT_TRUE(std::all_of(bytes.begin(), bytes.end(), [](unsigned char b) { return b == 0xff; }));
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, Views, ::testing::ValuesIn(devices_here()), device_param_name());

}  // namespace
}  // namespace tensor_testing
