// Level 1 and 2 routines and the vector/matrix copies against float64
// references: unit and non-unit increments (negative ones where BLAS reads
// the vector backwards), transposed gemv with a padded leading dimension,
// results written through device pointers, and n = 0.
#include "cublas_test_util.h"

using namespace cublas_test;
using testing_util::device_buffer;
using testing_util::random_vector;

namespace {

using Level1 = handle_test;

// Element i of a vector stored with increment inc (BLAS: a negative
// increment starts from the far end).
template <class T>
double element(const std::vector<T>& v, int n, int inc, int i) {
  const int start = inc >= 0 ? 0 : (1 - n) * inc;
  return static_cast<double>(v[static_cast<std::size_t>(start + i * inc)]);
}

template <class T>
void check_level1(cublasHandle_t handle, double tolerance) {
  const int n = 101;
  for (int incx : {1, 2, -3})
    for (int incy : {1, 3}) {
      SCOPED_TRACE("incx " + std::to_string(incx) + ", incy " + std::to_string(incy));
      const std::vector<T> x = random_vector<T>(static_cast<std::size_t>(n) * std::abs(incx));
      const std::vector<T> y = random_vector<T>(static_cast<std::size_t>(n) * incy);
      device_buffer<T> dx(x), dy(y);
      const T alpha = T(-0.75);

      double dot_ref = 0;
      for (int i = 0; i < n; ++i) dot_ref += element(x, n, incx, i) * element(y, n, incy, i);
      T dot = T(0);
      if constexpr (std::is_same_v<T, float>)
        CUBLAS_OK(cublasSdot(handle, n, dx, incx, dy, incy, &dot));
      else
        CUBLAS_OK(cublasDdot(handle, n, dx, incx, dy, incy, &dot));
      EXPECT_NEAR(dot, dot_ref, tolerance * n);

      if constexpr (std::is_same_v<T, float>)
        CUBLAS_OK(cublasSaxpy(handle, n, &alpha, dx, incx, dy, incy));
      else
        CUBLAS_OK(cublasDaxpy(handle, n, &alpha, dx, incx, dy, incy));
      const std::vector<T> axpy = dy.download();
      for (int i = 0; i < n; ++i)
        ASSERT_NEAR(element(axpy, n, incy, i), element(y, n, incy, i) + static_cast<double>(alpha) * element(x, n, incx, i), tolerance) << i;
      for (std::size_t i = 0; i < axpy.size(); ++i)
        if (i % incy != 0) ASSERT_EQ(axpy[i], y[i]) << "element between increments changed at " << i;

      if constexpr (std::is_same_v<T, float>)
        CUBLAS_OK(cublasScopy(handle, n, dx, incx, dy, incy));
      else
        CUBLAS_OK(cublasDcopy(handle, n, dx, incx, dy, incy));
      const std::vector<T> copied = dy.download();
      for (int i = 0; i < n; ++i) ASSERT_EQ(element(copied, n, incy, i), element(x, n, incx, i)) << i;
    }
}

TEST_F(Level1, FloatDotAxpyCopy) { check_level1<float>(handle, 1e-6); }
TEST_F(Level1, DoubleDotAxpyCopy) { check_level1<double>(handle, 1e-14); }

template <class T>
void check_reductions(cublasHandle_t handle, double tolerance) {
  const int n = 77;
  for (int incx : {1, 4}) {
    SCOPED_TRACE("incx " + std::to_string(incx));
    std::vector<T> x = random_vector<T>(static_cast<std::size_t>(n) * incx);
    const int planted = static_cast<int>(testing_util::rng()() % n);
    x[static_cast<std::size_t>(planted) * incx] = T(-3.5);  // the largest magnitude, negative
    device_buffer<T> dx(x);
    double norm = 0, sum = 0;
    for (int i = 0; i < n; ++i) {
      norm += element(x, n, incx, i) * element(x, n, incx, i);
      sum += std::abs(element(x, n, incx, i));
    }
    T nrm2 = T(0), asum = T(0);
    int amax = 0;
    if constexpr (std::is_same_v<T, float>) {
      CUBLAS_OK(cublasSnrm2(handle, n, dx, incx, &nrm2));
      CUBLAS_OK(cublasSasum(handle, n, dx, incx, &asum));
      CUBLAS_OK(cublasIsamax(handle, n, dx, incx, &amax));
    } else {
      CUBLAS_OK(cublasDnrm2(handle, n, dx, incx, &nrm2));
      CUBLAS_OK(cublasDasum(handle, n, dx, incx, &asum));
      CUBLAS_OK(cublasIdamax(handle, n, dx, incx, &amax));
    }
    EXPECT_NEAR(nrm2, std::sqrt(norm), tolerance * n);
    EXPECT_NEAR(asum, sum, tolerance * n);
    EXPECT_EQ(amax, planted + 1) << "cuBLAS counts from 1";

    const T alpha = T(2.5);
    if constexpr (std::is_same_v<T, float>)
      CUBLAS_OK(cublasSscal(handle, n, &alpha, dx, incx));
    else
      CUBLAS_OK(cublasDscal(handle, n, &alpha, dx, incx));
    const std::vector<T> scaled = dx.download();
    for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(scaled[i], i % incx == 0 ? T(x[i] * alpha) : x[i]) << i;
  }
}

TEST_F(Level1, FloatNrm2AsumAmaxScal) { check_reductions<float>(handle, 1e-6); }
TEST_F(Level1, DoubleNrm2AsumAmaxScal) { check_reductions<double>(handle, 1e-14); }

TEST_F(Level1, ResultInDeviceMemory) {
  const int n = 40;
  const std::vector<float> x = random_vector<float>(n), y = random_vector<float>(n);
  device_buffer<float> dx(x), dy(y), result(1);
  CUBLAS_OK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_DEVICE));
  CUBLAS_OK(cublasSdot(handle, n, dx, 1, dy, 1, result));
  double ref = 0;
  for (int i = 0; i < n; ++i) ref += static_cast<double>(x[i]) * y[i];
  EXPECT_NEAR(result.download()[0], ref, 1e-5);
}

TEST_F(Level1, EmptyVectorsGiveZero) {
  device_buffer<float> dx(std::vector<float>{1.0f, 2.0f});
  float norm = -1.0f, dot = -1.0f;
  int index = -1;
  CUBLAS_OK(cublasSnrm2(handle, 0, dx, 1, &norm));
  CUBLAS_OK(cublasSdot(handle, 0, dx, 1, dx, 1, &dot));
  CUBLAS_OK(cublasIsamax(handle, 0, dx, 1, &index));
  EXPECT_EQ(norm, 0.0f);
  EXPECT_EQ(dot, 0.0f);
  EXPECT_EQ(index, 0);
}

using Level2 = handle_test;

template <class T>
void check_gemv(cublasHandle_t handle, double tolerance) {
  const int m = 31, n = 19;
  for (cublasOperation_t op : {CUBLAS_OP_N, CUBLAS_OP_T})
    for (int inc : {1, 2}) {
      SCOPED_TRACE(std::string("trans ") + op_name(op) + ", inc " + std::to_string(inc));
      const matrix<T> a(m, n, m + 3);
      const int x_len = op == CUBLAS_OP_N ? n : m, y_len = op == CUBLAS_OP_N ? m : n;
      const std::vector<T> x = random_vector<T>(static_cast<std::size_t>(x_len) * inc), y = random_vector<T>(static_cast<std::size_t>(y_len) * inc);
      device_buffer<T> da(a.values), dx(x), dy(y);
      const T alpha = T(1.5), beta = T(-2.0);
      if constexpr (std::is_same_v<T, float>)
        CUBLAS_OK(cublasSgemv(handle, op, m, n, &alpha, da, a.ld, dx, inc, &beta, dy, inc));
      else
        CUBLAS_OK(cublasDgemv(handle, op, m, n, &alpha, da, a.ld, dx, inc, &beta, dy, inc));
      const std::vector<T> out = dy.download();
      for (int i = 0; i < y_len; ++i) {
        double sum = 0;
        for (int p = 0; p < x_len; ++p) sum += op_at(a, op, i, p) * static_cast<double>(x[static_cast<std::size_t>(p) * inc]);
        const double ref = 1.5 * sum - 2.0 * static_cast<double>(y[static_cast<std::size_t>(i) * inc]);
        ASSERT_NEAR(static_cast<double>(out[static_cast<std::size_t>(i) * inc]), ref, tolerance) << i;
      }
    }
}

TEST_F(Level2, Sgemv) { check_gemv<float>(handle, 1e-5); }
TEST_F(Level2, Dgemv) { check_gemv<double>(handle, 1e-13); }

TEST(Copies, SetAndGetVectorWithIncrements) {
  const int n = 25;
  const std::vector<double> host = random_vector<double>(static_cast<std::size_t>(n) * 3);
  device_buffer<double> device(static_cast<std::size_t>(n) * 2);
  CUBLAS_OK(cublasSetVector(n, sizeof(double), host.data(), 3, device, 2));
  std::vector<double> back(n, 0.0);
  CUBLAS_OK(cublasGetVector(n, sizeof(double), device, 2, back.data(), 1));
  for (int i = 0; i < n; ++i) ASSERT_EQ(back[i], host[static_cast<std::size_t>(i) * 3]) << i;
}

TEST(Copies, SetAndGetMatrixWithLeadingDimensions) {
  const int rows = 13, cols = 7;
  const matrix<float> host(rows, cols, rows + 2);
  device_buffer<float> device(static_cast<std::size_t>(rows + 5) * cols);
  CUBLAS_OK(cublasSetMatrix(rows, cols, sizeof(float), host.values.data(), host.ld, device, rows + 5));
  std::vector<float> back(static_cast<std::size_t>(rows) * cols);
  const cudaStream_t stream = nullptr;  // the default stream
  CUBLAS_OK(cublasGetMatrixAsync(rows, cols, sizeof(float), device, rows + 5, back.data(), rows, stream));
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) ASSERT_EQ(back[static_cast<std::size_t>(j) * rows + i], host.at(i, j)) << i << ", " << j;
}

}  // namespace
