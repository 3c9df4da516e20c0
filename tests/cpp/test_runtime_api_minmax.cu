// CUDA's mixed-type min and max (crt/math_functions.hpp): an int and an
// unsigned compare as unsigned, float and double as double, in device code and
// in host code alike.
#include <type_traits>

#include "test_util.h"

namespace {

struct mixed_results {
  unsigned min_iu, max_iu, min_ui, max_ui;
  unsigned long long min_ll_ull, max_ull_ll;
  double min_fd, max_df;
};

__global__ void mixed_min_max(int i, unsigned u, long long ll, unsigned long long ull, float f, double d, mixed_results* out) {
  out->min_iu = min(i, u);
  out->max_iu = max(i, u);
  out->min_ui = min(u, i);
  out->max_ui = max(u, i);
  out->min_ll_ull = min(ll, ull);
  out->max_ull_ll = max(ull, ll);
  out->min_fd = min(f, d);
  out->max_df = max(d, f);
}

static_assert(std::is_same_v<decltype(min(1, 2u)), unsigned>, "int and unsigned give unsigned");
static_assert(std::is_same_v<decltype(max(2u, 1)), unsigned>, "unsigned and int give unsigned");
static_assert(std::is_same_v<decltype(min(1ll, 2ull)), unsigned long long>, "long long and unsigned long long give unsigned long long");
static_assert(std::is_same_v<decltype(max(1.0f, 2.0)), double>, "float and double give double");

TEST(RuntimeMinMax, MixedTypesCompareAsCudaDoes) {
  auto ints = testing_util::random_vector<int>(1, -1000000, -1);  // negative: it turns huge as unsigned
  auto uints = testing_util::random_vector<long long>(1, 1, 1000000);
  auto reals = testing_util::random_vector<double>(2, -100.0, 100.0);
  const int i = ints[0];
  const unsigned u = static_cast<unsigned>(uints[0]);
  const long long ll = i;
  const unsigned long long ull = u;
  const float f = static_cast<float>(reals[0]);
  const double d = reals[1];
  testing_util::device_buffer<mixed_results> out(1);
  lockstep::launch(mixed_min_max, 1, 1)(i, u, ll, ull, f, d, out.get());
  const mixed_results r = out.download()[0];
  EXPECT_EQ(r.min_iu, u);  // static_cast<unsigned>(i) is above every u
  EXPECT_EQ(r.max_iu, static_cast<unsigned>(i));
  EXPECT_EQ(r.min_ui, u);
  EXPECT_EQ(r.max_ui, static_cast<unsigned>(i));
  EXPECT_EQ(r.min_ll_ull, ull);
  EXPECT_EQ(r.max_ull_ll, static_cast<unsigned long long>(ll));
  EXPECT_EQ(r.min_fd, std::fmin(static_cast<double>(f), d));
  EXPECT_EQ(r.max_df, std::fmax(static_cast<double>(f), d));
  EXPECT_EQ(min(i, u), r.min_iu);  // the host's answer is the device's
  EXPECT_EQ(max(d, f), r.max_df);
}

}  // namespace
