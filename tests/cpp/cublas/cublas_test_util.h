// What the cuBLAS tests share: status checks, column-major matrices with
// padded leading dimensions, and float64 references. The same text builds
// with nvcc (NVIDIA's cuBLAS) and with the host compiler (lockstep's).
#pragma once
#include <cublasLt.h>
#include <cublas_v2.h>

#include <cmath>
#include <string>
#include <vector>

#include "test_util.h"

#define CUBLAS_OK(expr) ASSERT_EQ((expr), CUBLAS_STATUS_SUCCESS) << #expr
#define EXPECT_STATUS(expr, status) EXPECT_EQ((expr), (status)) << #expr

namespace cublas_test {

using testing_util::fresh_seed;
using testing_util::rng;

// Host-side storage type <-> double, for float, double, __half and __nv_bfloat16.
template <class T>
double to_double(T v) {
  return static_cast<double>(static_cast<float>(v));
}
template <>
inline double to_double<double>(double v) {
  return v;
}
template <class T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, double>)
    return v;
  else
    return T(static_cast<float>(v));
}

// A rows x cols column-major matrix with leading dimension ld >= rows. The
// rows between rows and ld hold a sentinel that no routine may change.
template <class T>
struct matrix {
  int rows = 0, cols = 0, ld = 0;
  std::vector<T> values;
  static constexpr double padding = 1000.0;  // exact in half and bf16 too

  matrix(int r, int c, int leading) : rows(r), cols(c), ld(leading), values(static_cast<std::size_t>(leading) * (c > 0 ? c : 1)) {
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    for (int j = 0; j < cols; ++j)
      for (int i = 0; i < ld; ++i) values[static_cast<std::size_t>(j) * ld + i] = from_double<T>(i < rows ? d(rng()) : padding);
  }
  double at(int i, int j) const { return to_double(values[static_cast<std::size_t>(j) * ld + i]); }
};

inline bool transposed(cublasOperation_t op) { return op != CUBLAS_OP_N; }

// op(X)(i, j) of a stored matrix.
template <class T>
double op_at(const matrix<T>& x, cublasOperation_t op, int i, int j) {
  return transposed(op) ? x.at(j, i) : x.at(i, j);
}

// alpha op(A) op(B) + beta C in float64, m x n, packed (ld = m). beta == 0
// ignores C, as BLAS does.
template <class TA, class TC>
std::vector<double> reference_gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, double alpha, const matrix<TA>& a,
                                   const matrix<TA>& b, double beta, const matrix<TC>& c) {
  std::vector<double> out(static_cast<std::size_t>(m) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double sum = 0;
      for (int p = 0; p < k; ++p) sum += op_at(a, ta, i, p) * op_at(b, tb, p, j);
      out[static_cast<std::size_t>(j) * m + i] = alpha * sum + (beta != 0 ? beta * c.at(i, j) : 0.0);
    }
  return out;
}

// The m x n block of a column-major result (ld elements apart), as doubles.
template <class T>
std::vector<double> block_of(const std::vector<T>& values, int m, int n, int ld, std::size_t offset = 0) {
  std::vector<double> out(static_cast<std::size_t>(m) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) out[static_cast<std::size_t>(j) * m + i] = to_double(values[offset + static_cast<std::size_t>(j) * ld + i]);
  return out;
}

// The padding rows of a result still hold matrix::padding.
template <class T>
::testing::AssertionResult padding_untouched(const std::vector<T>& values, int m, int n, int ld, std::size_t offset = 0) {
  for (int j = 0; j < n; ++j)
    for (int i = m; i < ld; ++i) {
      const double v = to_double(values[offset + static_cast<std::size_t>(j) * ld + i]);
      if (v != matrix<T>::padding) return ::testing::AssertionFailure() << "padding element (" << i << ", " << j << ") became " << v;
    }
  return ::testing::AssertionSuccess();
}

// ||out - ref|| / ||ref||; NaN (an unwritten, poisoned element) fails.
inline ::testing::AssertionResult close(const std::vector<double>& out, const std::vector<double>& ref, double tolerance) {
  return testing_util::close_to(out, ref, tolerance);
}

inline const char* op_name(cublasOperation_t op) { return op == CUBLAS_OP_N ? "N" : op == CUBLAS_OP_T ? "T" : "C"; }

// A cuBLAS handle for one test.
class handle_test : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS); }
  void TearDown() override {
    if (handle) EXPECT_EQ(cublasDestroy(handle), CUBLAS_STATUS_SUCCESS);
  }
  cublasHandle_t handle = nullptr;
};

}  // namespace cublas_test
