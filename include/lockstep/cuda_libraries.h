// NVIDIA library calls for code that launches kernels on a cuda device (the
// tensor layer's matmuls): TMA descriptors, encoded by the driver, and the
// cuBLAS GEMMs that lockstep's matmul kernels are measured against. Like the
// driver, cuBLAS is loaded at run time; each call makes the device current
// first, and throws device_unavailable where the library or entry point is missing.
#pragma once
#include <cstdint>
#include <string>

#include "lockstep/jit/kernel_table.h"
#include "lockstep/runtime.h"

namespace lockstep {

// ---------------------------------------------------------------- TMA (Hopper's bulk tensor copies)

// A CUtensorMap: 128 opaque bytes a kernel takes by value (__grid_constant__).
struct alignas(64) tma_descriptor {
  unsigned char bytes[128];
};

// CUtensorMapSwizzle: how a box is spread over shared-memory banks.
enum class tma_swizzle : int { none = 0, bytes_32 = 1, bytes_64 = 2, bytes_128 = 3 };

// A 2-D tiled CUtensorMap (cuTensorMapEncodeTiled) of the rows x cols matrix
// of `element` at `base`, rows row_stride_bytes apart, copied in boxes of
// box_rows x box_cols elements; reads outside the matrix give zeros, L2
// promotion is 256 bytes. The driver's rules apply: base 16-byte aligned,
// row_stride_bytes a multiple of 16, box_cols * element bytes at most the
// swizzle's span. element: uint8, int32, int64, uint16/32/64, float16,
// bfloat16, float32 or float64.
tma_descriptor encode_tma_2d(const device& d, const void* base, jit::scalar_type element, std::uint64_t rows, std::uint64_t cols,
                             std::uint64_t row_stride_bytes, unsigned box_rows, unsigned box_cols, tma_swizzle swizzle);

// ---------------------------------------------------------------- cuBLAS, the GEMM references

bool cublas_available();
std::string cublas_unavailable_reason();  // "" when cublas_available()

// Row-major C[m,n] = A[m,k] @ B[k,n] in float32 (device pointers, packed
// rows), through cublasSgemm on `stream` (null: the default stream). Throws
// cuda_error when cuBLAS fails.
void cublas_sgemm_row_major(const device& d, const float* a, const float* b, float* c, int m, int n, int k, void* stream = nullptr);

// The tensor-core references, through cublasGemmEx with float32
// accumulation: row-major C[m,n] = A[m,k] @ B[k,n] with B given as b_t[n,k]
// (row strides lda, ldb, ldc in elements). bf16: A, B and C bfloat16. tf32:
// float32 A, B and C, products on tf32 tensor cores.
enum class tensor_core_precision { bf16, tf32 };
void cublas_gemm_row_major_nt(const device& d, tensor_core_precision precision, const void* a, int lda, const void* b_t, int ldb, void* c, int ldc,
                              int m, int n, int k, void* stream = nullptr);

}  // namespace lockstep
