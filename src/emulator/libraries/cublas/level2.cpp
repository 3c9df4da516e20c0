// gemv: y = alpha op(A) x + beta y, column-major, on the CPU BLAS.
#include <algorithm>

#include "context.h"
#include "cpu_blas.h"

using lockstep::emu::cublas::cblas_col_major;
using lockstep::emu::cublas::cblas_no_trans;
using lockstep::emu::cublas::cblas_trans;
using lockstep::emu::cublas::the_cpu_blas;

namespace {

template <class T, class F>
cublasStatus_t gemv(const char* name, const void* caller, cublasHandle_t handle, cublasOperation_t trans, int m, int n, const T* alpha, const T* a,
                    int lda, const T* x, int incx, const T* beta, T* y, int incy, F blas_gemv) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (cublasStatus_t s = lockstep::emu::cublas::blas_status(); s != CUBLAS_STATUS_SUCCESS) return s;
  const bool op_valid = trans == CUBLAS_OP_N || trans == CUBLAS_OP_T || trans == CUBLAS_OP_C;
  if (!op_valid || m < 0 || n < 0 || lda < std::max(1, m) || incx == 0 || incy == 0 || !alpha || !beta) return CUBLAS_STATUS_INVALID_VALUE;
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  const int x_length = trans == CUBLAS_OP_N ? n : m, y_length = trans == CUBLAS_OP_N ? m : n;
  using lockstep::emu::cublas::matrix_span;
  using lockstep::emu::cublas::within_allocation;
  const auto span = [](int length, int inc) { return static_cast<long long>(length - 1) * (inc < 0 ? -inc : inc) + 1; };
  if (!within_allocation(name, "A", a, matrix_span(m, n, lda), sizeof(T), caller) ||
      !within_allocation(name, "x", x, span(x_length, incx), sizeof(T), caller) ||
      !within_allocation(name, "y", y, span(y_length, incy), sizeof(T), caller))
    return CUBLAS_STATUS_EXECUTION_FAILED;
  blas_gemv(cblas_col_major, trans == CUBLAS_OP_N ? cblas_no_trans : cblas_trans, m, n, *alpha, a, lda, x, incx, *beta, y, incy);
  lockstep::emu::cublas::mark_written(y, 1, y_length, incy > 0 ? incy : -incy, sizeof(T));
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

cublasStatus_t cublasSgemv_v2(cublasHandle_t handle, cublasOperation_t trans, int m, int n, const float* alpha, const float* A, int lda,
                              const float* x, int incx, const float* beta, float* y, int incy) {
  return gemv("cublasSgemv", __builtin_return_address(0), handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy,
              [](auto... a) { the_cpu_blas().sgemv(a...); });
}
cublasStatus_t cublasDgemv_v2(cublasHandle_t handle, cublasOperation_t trans, int m, int n, const double* alpha, const double* A, int lda,
                              const double* x, int incx, const double* beta, double* y, int incy) {
  return gemv("cublasDgemv", __builtin_return_address(0), handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy,
              [](auto... a) { the_cpu_blas().dgemv(a...); });
}

}  // extern "C"
