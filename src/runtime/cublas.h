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

}  // namespace lockstep::detail
