// cublasSetVector/GetVector/SetMatrix/GetMatrix: device memory is host memory
// on the emulator, so each is a strided copy (the Async forms too, which are
// complete on return, as after a stream synchronisation).
#include <cstring>

#include "context.h"

namespace {

using lockstep::emu::cublas::matrix_span;
using lockstep::emu::cublas::within_allocation;

cublasStatus_t copy_vector(const char* name, const void* caller, int n, int elem_size, const void* x, int incx, void* y, int incy) {
  if (n < 0 || elem_size <= 0 || incx <= 0 || incy <= 0 || (n > 0 && (!x || !y))) return CUBLAS_STATUS_INVALID_VALUE;
  if (!within_allocation(name, "the source", x, matrix_span(1, n, incx), elem_size, caller) ||
      !within_allocation(name, "the destination", y, matrix_span(1, n, incy), elem_size, caller))
    return CUBLAS_STATUS_EXECUTION_FAILED;
  const auto* from = static_cast<const unsigned char*>(x);
  auto* to = static_cast<unsigned char*>(y);
  const auto size = static_cast<std::size_t>(elem_size);
  if (incx == 1 && incy == 1)
    std::memmove(to, from, static_cast<std::size_t>(n) * size);
  else
    for (int i = 0; i < n; ++i) std::memmove(to + static_cast<std::size_t>(i) * incy * size, from + static_cast<std::size_t>(i) * incx * size, size);
  lockstep::emu::cublas::mark_written(y, 1, n, incy, size);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t copy_matrix(const char* name, const void* caller, int rows, int cols, int elem_size, const void* a, int lda, void* b, int ldb) {
  if (rows < 0 || cols < 0 || elem_size <= 0 || lda <= 0 || ldb <= 0 || lda < rows || ldb < rows) return CUBLAS_STATUS_INVALID_VALUE;
  if (rows == 0 || cols == 0) return CUBLAS_STATUS_SUCCESS;
  if (!a || !b) return CUBLAS_STATUS_INVALID_VALUE;
  if (!within_allocation(name, "the source", a, matrix_span(rows, cols, lda), elem_size, caller) ||
      !within_allocation(name, "the destination", b, matrix_span(rows, cols, ldb), elem_size, caller))
    return CUBLAS_STATUS_EXECUTION_FAILED;
  const auto size = static_cast<std::size_t>(elem_size);
  for (int j = 0; j < cols; ++j)
    std::memmove(static_cast<unsigned char*>(b) + static_cast<std::size_t>(j) * ldb * size,
                 static_cast<const unsigned char*>(a) + static_cast<std::size_t>(j) * lda * size, static_cast<std::size_t>(rows) * size);
  lockstep::emu::cublas::mark_written(b, rows, cols, ldb, size);
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

cublasStatus_t cublasSetVector(int n, int elemSize, const void* x, int incx, void* devicePtr, int incy) {
  return copy_vector("cublasSetVector", __builtin_return_address(0), n, elemSize, x, incx, devicePtr, incy);
}
cublasStatus_t cublasGetVector(int n, int elemSize, const void* x, int incx, void* y, int incy) {
  return copy_vector("cublasGetVector", __builtin_return_address(0), n, elemSize, x, incx, y, incy);
}
cublasStatus_t cublasSetMatrix(int rows, int cols, int elemSize, const void* A, int lda, void* B, int ldb) {
  return copy_matrix("cublasSetMatrix", __builtin_return_address(0), rows, cols, elemSize, A, lda, B, ldb);
}
cublasStatus_t cublasGetMatrix(int rows, int cols, int elemSize, const void* A, int lda, void* B, int ldb) {
  return copy_matrix("cublasGetMatrix", __builtin_return_address(0), rows, cols, elemSize, A, lda, B, ldb);
}
cublasStatus_t cublasSetVectorAsync(int n, int elemSize, const void* hostPtr, int incx, void* devicePtr, int incy, cudaStream_t) {
  return copy_vector("cublasSetVectorAsync", __builtin_return_address(0), n, elemSize, hostPtr, incx, devicePtr, incy);
}
cublasStatus_t cublasGetVectorAsync(int n, int elemSize, const void* devicePtr, int incx, void* hostPtr, int incy, cudaStream_t) {
  return copy_vector("cublasGetVectorAsync", __builtin_return_address(0), n, elemSize, devicePtr, incx, hostPtr, incy);
}
cublasStatus_t cublasSetMatrixAsync(int rows, int cols, int elemSize, const void* A, int lda, void* B, int ldb, cudaStream_t) {
  return copy_matrix("cublasSetMatrixAsync", __builtin_return_address(0), rows, cols, elemSize, A, lda, B, ldb);
}
cublasStatus_t cublasGetMatrixAsync(int rows, int cols, int elemSize, const void* A, int lda, void* B, int ldb, cudaStream_t) {
  return copy_matrix("cublasGetMatrixAsync", __builtin_return_address(0), rows, cols, elemSize, A, lda, B, ldb);
}

}  // extern "C"
