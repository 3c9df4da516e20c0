// A user's own function object through the library's map kernel
// (kernels/elementwise.cu's map_functor): C++ callers map any device-callable
// type over a strided tensor, here a transposed view.
#include "elementwise.cu"
#include "test_util.h"

using namespace testing_util;

namespace {

struct scale_and_shift {
  float scale, shift;
  __host__ __device__ double operator()(float x) const { return static_cast<double>(scale) * x + shift; }
};

TEST(MapFunctor, UserFunctorOverATransposedView) {
  const int rows = 37, cols = 19;
  auto in = random_vector<float>(rows * cols);
  device_buffer<float> din(in);
  device_buffer<double> dout(rows * cols);
  // The output is (cols, rows) contiguous; the input is read as its transpose.
  lockstep::kernels::strided_layout out_layout{2, {cols, rows}, {rows, 1}};
  lockstep::kernels::strided_layout in_layout{2, {cols, rows}, {1, cols}};
  const scale_and_shift f{2.5f, -1.0f};
  lockstep::launch(lockstep::kernels::map_functor<scale_and_shift, float, double>, 8, 64)(dout.get(), out_layout, din.get(), in_layout,
                                                                                          static_cast<long long>(rows) * cols, f);
  auto got = dout.download();
  for (int c = 0; c < cols; ++c)
    for (int r = 0; r < rows; ++r) ASSERT_EQ(got[c * rows + r], 2.5 * in[r * cols + c] - 1.0) << r << "," << c;
}

}  // namespace
