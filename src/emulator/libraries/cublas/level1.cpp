// Level 1 routines on the CPU BLAS, with cuBLAS's rules for degenerate
// sizes: n <= 0 (or a non-positive increment where BLAS needs one) does
// nothing, and reductions then give 0.
#include "context.h"
#include "cpu_blas.h"

using lockstep::emu::cublas::blas_status;
using lockstep::emu::cublas::the_cpu_blas;

namespace {

// The status every routine starts with: a handle, and a BLAS to run on.
cublasStatus_t ready(cublasHandle_t handle) { return handle ? blas_status() : CUBLAS_STATUS_NOT_INITIALIZED; }

// The elements a vector of n with increment inc spans from its pointer (BLAS
// starts a negative increment at the far end).
constexpr long long vector_span(int n, int inc) { return n <= 0 ? 0 : static_cast<long long>(n - 1) * (inc < 0 ? -inc : inc) + 1; }

template <class T>
bool fits(const char* name, const char* what, const T* x, int n, int inc, const void* caller) {
  return lockstep::emu::cublas::within_allocation(name, what, x, vector_span(n, inc), sizeof(T), caller);
}

template <class T>
void mark_vector(const T* x, int n, int inc) {
  if (n > 0 && inc != 0) {
    const long long step = inc > 0 ? inc : -inc;
    lockstep::emu::cublas::mark_written(x, 1, n, step, sizeof(T));
  }
}

template <class T, class F>
cublasStatus_t reduce(const char* name, const void* caller, cublasHandle_t handle, int n, const T* x, int incx, T* result, F blas_call) {
  if (cublasStatus_t s = ready(handle); s != CUBLAS_STATUS_SUCCESS) return s;
  if (!result) return CUBLAS_STATUS_INVALID_VALUE;
  if (incx > 0 && !fits(name, "x", x, n, incx, caller)) return CUBLAS_STATUS_EXECUTION_FAILED;
  *result = n > 0 && incx > 0 ? blas_call(n, x, incx) : T(0);
  return CUBLAS_STATUS_SUCCESS;
}

template <class T, class F>
cublasStatus_t dot(const char* name, const void* caller, cublasHandle_t handle, int n, const T* x, int incx, const T* y, int incy, T* result,
                   F blas_dot) {
  if (cublasStatus_t s = ready(handle); s != CUBLAS_STATUS_SUCCESS) return s;
  if (!result) return CUBLAS_STATUS_INVALID_VALUE;
  if (!fits(name, "x", x, n, incx, caller) || !fits(name, "y", y, n, incy, caller)) return CUBLAS_STATUS_EXECUTION_FAILED;
  *result = n > 0 ? blas_dot(n, x, incx, y, incy) : T(0);
  return CUBLAS_STATUS_SUCCESS;
}

template <class T, class F>
cublasStatus_t scal(const char* name, const void* caller, cublasHandle_t handle, int n, const T* alpha, T* x, int incx, F blas_scal) {
  if (cublasStatus_t s = ready(handle); s != CUBLAS_STATUS_SUCCESS) return s;
  if (!alpha) return CUBLAS_STATUS_INVALID_VALUE;
  if (n <= 0 || incx <= 0) return CUBLAS_STATUS_SUCCESS;
  if (!fits(name, "x", x, n, incx, caller)) return CUBLAS_STATUS_EXECUTION_FAILED;
  blas_scal(n, *alpha, x, incx);
  return CUBLAS_STATUS_SUCCESS;
}

template <class T, class F>
cublasStatus_t axpy(const char* name, const void* caller, cublasHandle_t handle, int n, const T* alpha, const T* x, int incx, T* y, int incy,
                    F blas_axpy) {
  if (cublasStatus_t s = ready(handle); s != CUBLAS_STATUS_SUCCESS) return s;
  if (!alpha) return CUBLAS_STATUS_INVALID_VALUE;
  if (n <= 0) return CUBLAS_STATUS_SUCCESS;
  if (!fits(name, "x", x, n, incx, caller) || !fits(name, "y", y, n, incy, caller)) return CUBLAS_STATUS_EXECUTION_FAILED;
  blas_axpy(n, *alpha, x, incx, y, incy);
  mark_vector(y, n, incy);
  return CUBLAS_STATUS_SUCCESS;
}

template <class T, class F>
cublasStatus_t copy(const char* name, const void* caller, cublasHandle_t handle, int n, const T* x, int incx, T* y, int incy, F blas_copy) {
  if (cublasStatus_t s = ready(handle); s != CUBLAS_STATUS_SUCCESS) return s;
  if (n <= 0) return CUBLAS_STATUS_SUCCESS;
  if (!fits(name, "x", x, n, incx, caller) || !fits(name, "y", y, n, incy, caller)) return CUBLAS_STATUS_EXECUTION_FAILED;
  blas_copy(n, x, incx, y, incy);
  mark_vector(y, n, incy);
  return CUBLAS_STATUS_SUCCESS;
}

// cuBLAS counts from 1 (Fortran's convention); CBLAS from 0.
template <class T, class F>
cublasStatus_t iamax(const char* name, const void* caller, cublasHandle_t handle, int n, const T* x, int incx, int* result, F blas_iamax) {
  if (cublasStatus_t s = ready(handle); s != CUBLAS_STATUS_SUCCESS) return s;
  if (!result) return CUBLAS_STATUS_INVALID_VALUE;
  if (incx > 0 && !fits(name, "x", x, n, incx, caller)) return CUBLAS_STATUS_EXECUTION_FAILED;
  *result = n > 0 && incx > 0 ? static_cast<int>(blas_iamax(n, x, incx)) + 1 : 0;
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

cublasStatus_t cublasSnrm2_v2(cublasHandle_t handle, int n, const float* x, int incx, float* result) {
  return reduce("cublasSnrm2", __builtin_return_address(0), handle, n, x, incx, result,
                [](int n, const float* x, int incx) { return the_cpu_blas().snrm2(n, x, incx); });
}
cublasStatus_t cublasDnrm2_v2(cublasHandle_t handle, int n, const double* x, int incx, double* result) {
  return reduce("cublasDnrm2", __builtin_return_address(0), handle, n, x, incx, result,
                [](int n, const double* x, int incx) { return the_cpu_blas().dnrm2(n, x, incx); });
}
cublasStatus_t cublasSasum_v2(cublasHandle_t handle, int n, const float* x, int incx, float* result) {
  return reduce("cublasSasum", __builtin_return_address(0), handle, n, x, incx, result,
                [](int n, const float* x, int incx) { return the_cpu_blas().sasum(n, x, incx); });
}
cublasStatus_t cublasDasum_v2(cublasHandle_t handle, int n, const double* x, int incx, double* result) {
  return reduce("cublasDasum", __builtin_return_address(0), handle, n, x, incx, result,
                [](int n, const double* x, int incx) { return the_cpu_blas().dasum(n, x, incx); });
}
cublasStatus_t cublasSdot_v2(cublasHandle_t handle, int n, const float* x, int incx, const float* y, int incy, float* result) {
  return dot("cublasSdot", __builtin_return_address(0), handle, n, x, incx, y, incy, result, [](auto... a) { return the_cpu_blas().sdot(a...); });
}
cublasStatus_t cublasDdot_v2(cublasHandle_t handle, int n, const double* x, int incx, const double* y, int incy, double* result) {
  return dot("cublasDdot", __builtin_return_address(0), handle, n, x, incx, y, incy, result, [](auto... a) { return the_cpu_blas().ddot(a...); });
}
cublasStatus_t cublasSscal_v2(cublasHandle_t handle, int n, const float* alpha, float* x, int incx) {
  return scal("cublasSscal", __builtin_return_address(0), handle, n, alpha, x, incx, [](auto... a) { the_cpu_blas().sscal(a...); });
}
cublasStatus_t cublasDscal_v2(cublasHandle_t handle, int n, const double* alpha, double* x, int incx) {
  return scal("cublasDscal", __builtin_return_address(0), handle, n, alpha, x, incx, [](auto... a) { the_cpu_blas().dscal(a...); });
}
cublasStatus_t cublasSaxpy_v2(cublasHandle_t handle, int n, const float* alpha, const float* x, int incx, float* y, int incy) {
  return axpy("cublasSaxpy", __builtin_return_address(0), handle, n, alpha, x, incx, y, incy, [](auto... a) { the_cpu_blas().saxpy(a...); });
}
cublasStatus_t cublasDaxpy_v2(cublasHandle_t handle, int n, const double* alpha, const double* x, int incx, double* y, int incy) {
  return axpy("cublasDaxpy", __builtin_return_address(0), handle, n, alpha, x, incx, y, incy, [](auto... a) { the_cpu_blas().daxpy(a...); });
}
cublasStatus_t cublasScopy_v2(cublasHandle_t handle, int n, const float* x, int incx, float* y, int incy) {
  return copy("cublasScopy", __builtin_return_address(0), handle, n, x, incx, y, incy, [](auto... a) { the_cpu_blas().scopy(a...); });
}
cublasStatus_t cublasDcopy_v2(cublasHandle_t handle, int n, const double* x, int incx, double* y, int incy) {
  return copy("cublasDcopy", __builtin_return_address(0), handle, n, x, incx, y, incy, [](auto... a) { the_cpu_blas().dcopy(a...); });
}
cublasStatus_t cublasIsamax_v2(cublasHandle_t handle, int n, const float* x, int incx, int* result) {
  return iamax("cublasIsamax", __builtin_return_address(0), handle, n, x, incx, result, [](auto... a) { return the_cpu_blas().isamax(a...); });
}
cublasStatus_t cublasIdamax_v2(cublasHandle_t handle, int n, const double* x, int incx, int* result) {
  return iamax("cublasIdamax", __builtin_return_address(0), handle, n, x, incx, result, [](auto... a) { return the_cpu_blas().idamax(a...); });
}

}  // extern "C"
