// A program that defines __CUDA_NO_HALF_OPERATORS__ and its relatives gets
// none of CUDA's operators on the 16-bit types and may define its own, as
// code written for such builds does. Here the program's own operators mean
// something else than CUDA's would, so the results show whose ran.
#define __CUDA_NO_HALF_OPERATORS__
#define __CUDA_NO_HALF2_OPERATORS__
#define __CUDA_NO_BFLOAT16_OPERATORS__
#define __CUDA_NO_BFLOAT162_OPERATORS__
#include <algorithm>
#include <cmath>
#include <vector>

#include "test_util.h"

using namespace testing_util;

namespace {

// "+" as the larger of the two, "*" as lane-wise fma with 1: the program's choice.
__device__ __half operator+(const __half& a, const __half& b) { return __hmax(a, b); }
__device__ __half2 operator*(const __half2& a, const __half2& b) { return __hfma2(a, b, __float2half2_rn(1.0f)); }
__device__ __nv_bfloat16 operator+(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hmax(a, b); }

__global__ void use_own_operators(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const __half a = __float2half(in[2 * i]), b = __float2half(in[2 * i + 1]);
  out[3 * i] = __half2float(a + b);
  out[3 * i + 1] = __low2float(__halves2half2(a, b) * __halves2half2(b, a));
  out[3 * i + 2] = __bfloat162float(__float2bfloat16(in[2 * i]) + __float2bfloat16(in[2 * i + 1]));
}

TEST(HalfWithoutOperators, ProgramsOwnOperatorsRun) {
  const int n = 256;
  // Multiples of 1/4 in [-4, 4]: exact in both types, and a * b + 1 exact in half.
  std::vector<float> in = random_vector<float>(2 * n, -4, 4);
  for (float& x : in) x = std::round(x * 4) / 4;
  device_buffer<float> d_in(in), d_out(3 * n);
  lockstep::launch(use_own_operators, 1, n)(d_in.get(), d_out.get(), n);
  const auto out = d_out.download();
  for (int i = 0; i < n; ++i) {
    const float a = in[2 * i], b = in[2 * i + 1];
    EXPECT_EQ(out[3 * i], std::max(a, b)) << a << ", " << b;
    EXPECT_EQ(out[3 * i + 1], a * b + 1.0f) << a << ", " << b;
    EXPECT_EQ(out[3 * i + 2], std::max(a, b)) << a << ", " << b;
  }
}

}  // namespace
