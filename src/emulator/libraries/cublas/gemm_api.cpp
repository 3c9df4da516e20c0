// The cuBLAS gemm family (Sgemm, Dgemm, Hgemm, GemmEx, their batched and
// strided-batched forms): cuBLAS's argument checks, then the shared engine.
#include <algorithm>
#include <utility>
#include <vector>

#include "context.h"
#include "gemm.h"

using namespace lockstep::emu::cublas;

namespace {

bool valid_op(cublasOperation_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; }

// INVALID_VALUE as cuBLAS's gemm documents it: negative sizes, unknown
// transposes, a leading dimension smaller than its matrix's rows (at least 1),
// a null alpha or beta, a negative batch count.
cublasStatus_t check_gemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const void* alpha, int lda,
                          int ldb, const void* beta, int ldc, int batch_count) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (m < 0 || n < 0 || k < 0 || batch_count < 0 || !valid_op(transa) || !valid_op(transb)) return CUBLAS_STATUS_INVALID_VALUE;
  if (lda < std::max(1, transa == CUBLAS_OP_N ? m : k) || ldb < std::max(1, transb == CUBLAS_OP_N ? k : n) || ldc < std::max(1, m))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (!alpha || !beta) return CUBLAS_STATUS_INVALID_VALUE;
  return blas_status();
}

struct gemm_args {
  cublasHandle_t handle;
  cublasOperation_t transa, transb;
  int m, n, k;
  const void* alpha;
  const void* a;
  cudaDataType a_type;
  int lda;
  long long stride_a;
  const void* b;
  cudaDataType b_type;
  int ldb;
  long long stride_b;
  const void* beta;
  void* c;
  cudaDataType c_type;
  int ldc;
  long long stride_c;
  int batch_count;
  cublasComputeType_t compute;
};

// caller: the program's call site (the API function's return address).
cublasStatus_t gemm(const gemm_args& g, const char* call, const void* caller) {
  if (cublasStatus_t s = check_gemm(g.handle, g.transa, g.transb, g.m, g.n, g.k, g.alpha, g.lda, g.ldb, g.beta, g.ldc, g.batch_count);
      s != CUBLAS_STATUS_SUCCESS)
    return s;
  compute_plan plan;
  if (cublasStatus_t s = plan_compute(g.compute, g.a_type, g.b_type, g.c_type, g.handle->math_mode, plan, call); s != CUBLAS_STATUS_SUCCESS) return s;
  gemm_call c;
  c.transa = g.transa;
  c.transb = g.transb;
  c.m = g.m;
  c.n = g.n;
  c.k = g.k;
  c.a = {g.a, g.a_type, g.lda, g.stride_a};
  c.b = {g.b, g.b_type, g.ldb, g.stride_b};
  c.c = {g.c, g.c_type, g.ldc, g.stride_c};
  c.d = g.c;
  c.d_type = g.c_type;
  c.ldd = g.ldc;
  c.stride_d = g.stride_c;
  c.accumulate_in_double = plan.accumulate_in_double;
  c.rounding = plan.rounding;
  // Both pointer modes name memory the host can read on the emulator.
  c.alpha = load_element<double>(g.alpha, plan.scale_type, 0);
  c.beta = load_element<double>(g.beta, plan.scale_type, 0);
  c.batch_count = g.batch_count;
  c.name = call;
  c.caller = caller;
  return run_gemm(c);
}

// Pointer-array batches: one engine call per matrix.
cublasStatus_t gemm_batched(gemm_args g, const void* const a[], const void* const b[], void* const c[], const char* call, const void* caller) {
  if (cublasStatus_t s = check_gemm(g.handle, g.transa, g.transb, g.m, g.n, g.k, g.alpha, g.lda, g.ldb, g.beta, g.ldc, g.batch_count);
      s != CUBLAS_STATUS_SUCCESS)
    return s;
  compute_plan plan;
  if (cublasStatus_t s = plan_compute(g.compute, g.a_type, g.b_type, g.c_type, g.handle->math_mode, plan, call); s != CUBLAS_STATUS_SUCCESS) return s;
  if (g.batch_count > 0 && (!a || !b || !c)) return CUBLAS_STATUS_INVALID_VALUE;
  for (const auto& [array, name] : {std::pair<const void*, const char*>{a, "Aarray"}, {b, "Barray"}, {c, "Carray"}})
    if (!within_allocation(call, name, array, g.batch_count, sizeof(void*), caller)) return CUBLAS_STATUS_EXECUTION_FAILED;
  const int count = g.batch_count;
  g.batch_count = 1;
  for (int i = 0; i < count; ++i) {
    g.a = a[i];
    g.b = b[i];
    g.c = c[i];
    if (cublasStatus_t s = gemm(g, call, caller); s != CUBLAS_STATUS_SUCCESS) return s;
  }
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const float* alpha,
                              const float* A, int lda, const float* B, int ldb, const float* beta, float* C, int ldc) {
  return gemm(
      {handle, transa, transb, m, n, k, alpha, A, CUDA_R_32F, lda, 0, B, CUDA_R_32F, ldb, 0, beta, C, CUDA_R_32F, ldc, 0, 1, CUBLAS_COMPUTE_32F},
      "cublasSgemm", __builtin_return_address(0));
}

cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const double* alpha,
                              const double* A, int lda, const double* B, int ldb, const double* beta, double* C, int ldc) {
  return gemm(
      {handle, transa, transb, m, n, k, alpha, A, CUDA_R_64F, lda, 0, B, CUDA_R_64F, ldb, 0, beta, C, CUDA_R_64F, ldc, 0, 1, CUBLAS_COMPUTE_64F},
      "cublasDgemm", __builtin_return_address(0));
}

cublasStatus_t cublasHgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const __half* alpha,
                           const __half* A, int lda, const __half* B, int ldb, const __half* beta, __half* C, int ldc) {
  return gemm(
      {handle, transa, transb, m, n, k, alpha, A, CUDA_R_16F, lda, 0, B, CUDA_R_16F, ldb, 0, beta, C, CUDA_R_16F, ldc, 0, 1, CUBLAS_COMPUTE_16F},
      "cublasHgemm", __builtin_return_address(0));
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const void* alpha,
                            const void* A, cudaDataType Atype, int lda, const void* B, cudaDataType Btype, int ldb, const void* beta, void* C,
                            cudaDataType Ctype, int ldc, cublasComputeType_t computeType, cublasGemmAlgo_t) {
  return gemm({handle, transa, transb, m, n, k, alpha, A, Atype, lda, 0, B, Btype, ldb, 0, beta, C, Ctype, ldc, 0, 1, computeType}, "cublasGemmEx",
              __builtin_return_address(0));
}

cublasStatus_t cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const float* alpha,
                                  const float* const Aarray[], int lda, const float* const Barray[], int ldb, const float* beta,
                                  float* const Carray[], int ldc, int batchCount) {
  return gemm_batched({handle,  transa,     transb, m, n,    k,       alpha,      nullptr, CUDA_R_32F, lda,        0,
                       nullptr, CUDA_R_32F, ldb,    0, beta, nullptr, CUDA_R_32F, ldc,     0,          batchCount, CUBLAS_COMPUTE_32F},
                      reinterpret_cast<const void* const*>(Aarray), reinterpret_cast<const void* const*>(Barray),
                      reinterpret_cast<void* const*>(Carray), "cublasSgemmBatched", __builtin_return_address(0));
}

cublasStatus_t cublasDgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const double* alpha,
                                  const double* const Aarray[], int lda, const double* const Barray[], int ldb, const double* beta,
                                  double* const Carray[], int ldc, int batchCount) {
  return gemm_batched({handle,  transa,     transb, m, n,    k,       alpha,      nullptr, CUDA_R_64F, lda,        0,
                       nullptr, CUDA_R_64F, ldb,    0, beta, nullptr, CUDA_R_64F, ldc,     0,          batchCount, CUBLAS_COMPUTE_64F},
                      reinterpret_cast<const void* const*>(Aarray), reinterpret_cast<const void* const*>(Barray),
                      reinterpret_cast<void* const*>(Carray), "cublasDgemmBatched", __builtin_return_address(0));
}

cublasStatus_t cublasHgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const __half* alpha,
                                  const __half* const Aarray[], int lda, const __half* const Barray[], int ldb, const __half* beta,
                                  __half* const Carray[], int ldc, int batchCount) {
  return gemm_batched({handle,  transa,     transb, m, n,    k,       alpha,      nullptr, CUDA_R_16F, lda,        0,
                       nullptr, CUDA_R_16F, ldb,    0, beta, nullptr, CUDA_R_16F, ldc,     0,          batchCount, CUBLAS_COMPUTE_16F},
                      reinterpret_cast<const void* const*>(Aarray), reinterpret_cast<const void* const*>(Barray),
                      reinterpret_cast<void* const*>(Carray), "cublasHgemmBatched", __builtin_return_address(0));
}

cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const void* alpha,
                                   const void* const Aarray[], cudaDataType Atype, int lda, const void* const Barray[], cudaDataType Btype, int ldb,
                                   const void* beta, void* const Carray[], cudaDataType Ctype, int ldc, int batchCount,
                                   cublasComputeType_t computeType, cublasGemmAlgo_t) {
  return gemm_batched(
      {handle, transa, transb, m, n, k, alpha, nullptr, Atype, lda, 0, nullptr, Btype, ldb, 0, beta, nullptr, Ctype, ldc, 0, batchCount, computeType},
      Aarray, Barray, Carray, "cublasGemmBatchedEx", __builtin_return_address(0));
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                                         const float* alpha, const float* A, int lda, long long int strideA, const float* B, int ldb,
                                         long long int strideB, const float* beta, float* C, int ldc, long long int strideC, int batchCount) {
  return gemm({handle, transa,     transb, m,       n,    k, alpha,      A,   CUDA_R_32F, lda,        strideA,
               B,      CUDA_R_32F, ldb,    strideB, beta, C, CUDA_R_32F, ldc, strideC,    batchCount, CUBLAS_COMPUTE_32F},
              "cublasSgemmStridedBatched", __builtin_return_address(0));
}

cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                                         const double* alpha, const double* A, int lda, long long int strideA, const double* B, int ldb,
                                         long long int strideB, const double* beta, double* C, int ldc, long long int strideC, int batchCount) {
  return gemm({handle, transa,     transb, m,       n,    k, alpha,      A,   CUDA_R_64F, lda,        strideA,
               B,      CUDA_R_64F, ldb,    strideB, beta, C, CUDA_R_64F, ldc, strideC,    batchCount, CUBLAS_COMPUTE_64F},
              "cublasDgemmStridedBatched", __builtin_return_address(0));
}

cublasStatus_t cublasHgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                                         const __half* alpha, const __half* A, int lda, long long int strideA, const __half* B, int ldb,
                                         long long int strideB, const __half* beta, __half* C, int ldc, long long int strideC, int batchCount) {
  return gemm({handle, transa,     transb, m,       n,    k, alpha,      A,   CUDA_R_16F, lda,        strideA,
               B,      CUDA_R_16F, ldb,    strideB, beta, C, CUDA_R_16F, ldc, strideC,    batchCount, CUBLAS_COMPUTE_16F},
              "cublasHgemmStridedBatched", __builtin_return_address(0));
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                                          const void* alpha, const void* A, cudaDataType Atype, int lda, long long int strideA, const void* B,
                                          cudaDataType Btype, int ldb, long long int strideB, const void* beta, void* C, cudaDataType Ctype, int ldc,
                                          long long int strideC, int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t) {
  return gemm(
      {handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType},
      "cublasGemmStridedBatchedEx", __builtin_return_address(0));
}

}  // extern "C"
