// cuBLAS, loaded at run time like the driver: the GPU matmul reference that
// lockstep's own kernels are measured against (matmul algo "cublas").
#pragma once
#include <string>

namespace lockstep::detail {

bool cublas_available();
std::string cublas_unavailable_reason();

// Row-major C[m,n] = A[m,k] @ B[k,n] in float32 on the current device and
// stream (device pointers), through cublasSgemm. Throws device_unavailable
// without cuBLAS and cuda_error when cuBLAS fails.
void cublas_sgemm_row_major(const float* a, const float* b, float* c, int m, int n, int k, void* stream);

// The tensor-core references, through cublasGemmEx with float32 accumulation:
// row-major C[m,n] = A[m,k] @ B[k,n] where B is given as b_t[n,k] (row
// strides lda, ldb, ldc in elements). bf16: A, B and C bfloat16. tf32: float32
// A, B and C, products on tf32 tensor cores.
enum class tensor_core_precision { bf16, tf32 };
void cublas_gemm_row_major_nt(tensor_core_precision precision, const void* a, int lda, const void* b_t, int ldb, void* c, int ldc, int m,
                              int n, int k, void* stream);

}  // namespace lockstep::detail
