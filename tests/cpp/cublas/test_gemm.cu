// The cuBLAS gemm family against float64 references from fresh random
// inputs: every transpose pair, odd non-square sizes, leading dimensions
// larger than the rows (whose padding must stay untouched), alpha and beta,
// beta = 0 over a NaN-filled C, k = 0, scalars in device memory, strided and
// pointer-array batches, and half/bf16 operands through GemmEx and Hgemm.
#include "cublas_test_util.h"

using namespace cublas_test;
using testing_util::device_buffer;

namespace {

constexpr cublasOperation_t all_ops[] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};

// op(A) is m x k: A is stored m x k (N) or k x m (T, C), and likewise B.
template <class T>
matrix<T> operand_a(cublasOperation_t op, int m, int k, int pad) {
  return transposed(op) ? matrix<T>(k, m, k + pad) : matrix<T>(m, k, m + pad);
}
template <class T>
matrix<T> operand_b(cublasOperation_t op, int k, int n, int pad) {
  return transposed(op) ? matrix<T>(n, k, n + pad) : matrix<T>(k, n, k + pad);
}

template <class T>
cublasStatus_t typed_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const T* alpha, const T* a, int lda,
                          const T* b, int ldb, const T* beta, T* c, int ldc) {
  if constexpr (std::is_same_v<T, float>)
    return cublasSgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    return cublasDgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template <class T>
void check_every_transpose(cublasHandle_t handle, double tolerance) {
  const int m = 37, n = 23, k = 19;
  for (cublasOperation_t ta : all_ops)
    for (cublasOperation_t tb : all_ops) {
      SCOPED_TRACE(std::string("transa ") + op_name(ta) + ", transb " + op_name(tb));
      const matrix<T> a = operand_a<T>(ta, m, k, 3), b = operand_b<T>(tb, k, n, 5);
      const matrix<T> c(m, n, m + 2);
      const T alpha = T(0.75), beta = T(-0.5);
      device_buffer<T> da(a.values), db(b.values), dc(c.values);
      ASSERT_EQ(typed_gemm<T>(handle, ta, tb, m, n, k, &alpha, da, a.ld, db, b.ld, &beta, dc, c.ld), CUBLAS_STATUS_SUCCESS);
      const std::vector<T> out = dc.download();
      EXPECT_TRUE(close(block_of(out, m, n, c.ld), reference_gemm(ta, tb, m, n, k, alpha, a, b, beta, c), tolerance));
      EXPECT_TRUE(padding_untouched(out, m, n, c.ld));
    }
}

using Gemm = handle_test;

TEST_F(Gemm, SgemmEveryTransposeOddSizesPaddedLeadingDimensions) { check_every_transpose<float>(handle, 1e-6); }
TEST_F(Gemm, DgemmEveryTransposeOddSizesPaddedLeadingDimensions) { check_every_transpose<double>(handle, 1e-13); }

TEST_F(Gemm, BetaZeroDoesNotReadC) {
  const int m = 17, n = 9, k = 33;
  const matrix<float> a(m, k, m), b(k, n, k);
  matrix<float> c(m, n, m + 1);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) c.values[static_cast<std::size_t>(j) * c.ld + i] = std::nanf("");
  const float alpha = 1.5f, beta = 0.0f;
  device_buffer<float> da(a.values), db(b.values), dc(c.values);
  CUBLAS_OK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, a.ld, db, b.ld, &beta, dc, c.ld));
  const std::vector<float> out = dc.download();
  EXPECT_TRUE(close(block_of(out, m, n, c.ld), reference_gemm(CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, 1.5, a, b, 0.0, c), 1e-6));
  EXPECT_TRUE(padding_untouched(out, m, n, c.ld));
}

TEST_F(Gemm, KZeroScalesC) {
  const int m = 5, n = 7;
  const matrix<float> a(m, 1, m), b(1, n, 1), c(m, n, m);
  const float alpha = 2.0f, beta = 0.25f;
  device_buffer<float> da(a.values), db(b.values), dc(c.values);
  CUBLAS_OK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, 0, &alpha, da, m, db, 1, &beta, dc, m));
  EXPECT_TRUE(close(block_of(dc.download(), m, n, m), reference_gemm(CUBLAS_OP_N, CUBLAS_OP_N, m, n, 0, 2.0, a, b, 0.25, c), 1e-7));
}

TEST_F(Gemm, ScalarsInDeviceMemory) {
  const int m = 12, n = 10, k = 8;
  const matrix<float> a(k, m, k), b(k, n, k + 4), c(m, n, m);
  device_buffer<float> da(a.values), db(b.values), dc(c.values), scalars(std::vector<float>{-1.25f, 0.5f});
  CUBLAS_OK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_DEVICE));
  CUBLAS_OK(cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, scalars.get(), da, a.ld, db, b.ld, scalars.get() + 1, dc, c.ld));
  EXPECT_TRUE(close(block_of(dc.download(), m, n, m), reference_gemm(CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, -1.25, a, b, 0.5, c), 1e-6));
}

// Batches laid out with strides larger than a matrix (a gap after each).
template <class T>
void check_strided_batched(cublasHandle_t handle, double tolerance) {
  const int m = 11, n = 6, k = 13, batches = 3;
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  std::vector<matrix<T>> as, bs, cs;
  for (int i = 0; i < batches; ++i) {
    as.push_back(operand_a<T>(ta, m, k, 1));
    bs.push_back(operand_b<T>(tb, k, n, 2));
    cs.emplace_back(m, n, m + 3);
  }
  auto concat = [](const std::vector<matrix<T>>& ms, long long stride) {
    std::vector<T> all(static_cast<std::size_t>(stride) * ms.size(), T(matrix<T>::padding));
    for (std::size_t i = 0; i < ms.size(); ++i) std::copy(ms[i].values.begin(), ms[i].values.end(), all.begin() + i * stride);
    return all;
  };
  const long long sa = as[0].values.size() + 7, sb = bs[0].values.size() + 1, sc = cs[0].values.size() + 5;
  device_buffer<T> da(concat(as, sa)), db(concat(bs, sb)), dc(concat(cs, sc));
  const T alpha = T(1.0), beta = T(2.0);
  if constexpr (std::is_same_v<T, float>)
    CUBLAS_OK(cublasSgemmStridedBatched(handle, ta, tb, m, n, k, &alpha, da, as[0].ld, sa, db, bs[0].ld, sb, &beta, dc, cs[0].ld, sc, batches));
  else
    CUBLAS_OK(cublasDgemmStridedBatched(handle, ta, tb, m, n, k, &alpha, da, as[0].ld, sa, db, bs[0].ld, sb, &beta, dc, cs[0].ld, sc, batches));
  const std::vector<T> out = dc.download();
  for (int i = 0; i < batches; ++i) {
    SCOPED_TRACE("batch " + std::to_string(i));
    EXPECT_TRUE(close(block_of(out, m, n, cs[0].ld, i * sc), reference_gemm(ta, tb, m, n, k, 1.0, as[i], bs[i], 2.0, cs[i]), tolerance));
    EXPECT_TRUE(padding_untouched(out, m, n, cs[0].ld, i * sc));
  }
}

TEST_F(Gemm, SgemmStridedBatched) { check_strided_batched<float>(handle, 1e-6); }
TEST_F(Gemm, DgemmStridedBatched) { check_strided_batched<double>(handle, 1e-13); }

TEST_F(Gemm, SgemmBatchedPointerArrays) {
  const int m = 9, n = 14, k = 5, batches = 4;
  std::vector<matrix<float>> as, bs, cs;
  std::vector<device_buffer<float>*> buffers;
  std::vector<const float*> a_ptrs, b_ptrs;
  std::vector<float*> c_ptrs;
  for (int i = 0; i < batches; ++i) {
    as.emplace_back(m, k, m + 1);
    bs.emplace_back(n, k, n);
    cs.emplace_back(m, n, m);
    buffers.push_back(new device_buffer<float>(as.back().values));
    a_ptrs.push_back(*buffers.back());
    buffers.push_back(new device_buffer<float>(bs.back().values));
    b_ptrs.push_back(*buffers.back());
    buffers.push_back(new device_buffer<float>(cs.back().values));
    c_ptrs.push_back(*buffers.back());
  }
  device_buffer<const float*> da(a_ptrs), db(b_ptrs);
  device_buffer<float*> dc(c_ptrs);
  const float alpha = -0.5f, beta = 1.0f;
  CUBLAS_OK(cublasSgemmBatched(handle, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &alpha, da, m + 1, db, n, &beta, dc, m, batches));
  for (int i = 0; i < batches; ++i) {
    std::vector<float> out(static_cast<std::size_t>(m) * n);
    cudaMemcpy(out.data(), c_ptrs[i], out.size() * sizeof(float), cudaMemcpyDeviceToHost);
    EXPECT_TRUE(close(block_of(out, m, n, m), reference_gemm(CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, -0.5, as[i], bs[i], 1.0, cs[i]), 1e-6))
        << "batch " << i;
  }
  for (auto* b : buffers) delete b;
}

// GemmEx with 16-bit A and B: the reference multiplies the stored (rounded)
// inputs exactly, so the error left is float accumulation and C's rounding.
template <class AB, class C>
void check_gemm_ex(cublasHandle_t handle, cudaDataType ab_type, cudaDataType c_type, double tolerance) {
  const int m = 29, n = 18, k = 45;
  for (cublasOperation_t ta : {CUBLAS_OP_N, CUBLAS_OP_T})
    for (cublasOperation_t tb : {CUBLAS_OP_N, CUBLAS_OP_T}) {
      SCOPED_TRACE(std::string("transa ") + op_name(ta) + ", transb " + op_name(tb));
      const matrix<AB> a = operand_a<AB>(ta, m, k, 2), b = operand_b<AB>(tb, k, n, 0);
      const matrix<C> c(m, n, m + 4);
      device_buffer<AB> da(a.values), db(b.values);
      device_buffer<C> dc(c.values);
      const float alpha = 0.5f, beta = 0.25f;
      CUBLAS_OK(cublasGemmEx(handle, ta, tb, m, n, k, &alpha, da, ab_type, a.ld, db, ab_type, b.ld, &beta, dc, c_type, c.ld, CUBLAS_COMPUTE_32F,
                             CUBLAS_GEMM_DEFAULT));
      const std::vector<C> out = dc.download();
      EXPECT_TRUE(close(block_of(out, m, n, c.ld), reference_gemm(ta, tb, m, n, k, 0.5, a, b, 0.25, c), tolerance));
      EXPECT_TRUE(padding_untouched(out, m, n, c.ld));
    }
}

TEST_F(Gemm, GemmExBf16InBf16Out) { check_gemm_ex<__nv_bfloat16, __nv_bfloat16>(handle, CUDA_R_16BF, CUDA_R_16BF, 6e-3); }
TEST_F(Gemm, GemmExBf16InFloatOut) { check_gemm_ex<__nv_bfloat16, float>(handle, CUDA_R_16BF, CUDA_R_32F, 2e-6); }
TEST_F(Gemm, GemmExHalfInHalfOut) { check_gemm_ex<__half, __half>(handle, CUDA_R_16F, CUDA_R_16F, 1e-3); }
TEST_F(Gemm, GemmExHalfInFloatOut) { check_gemm_ex<__half, float>(handle, CUDA_R_16F, CUDA_R_32F, 2e-6); }
TEST_F(Gemm, GemmExFloat) { check_gemm_ex<float, float>(handle, CUDA_R_32F, CUDA_R_32F, 1e-6); }

TEST_F(Gemm, GemmExDouble) {
  const int m = 8, n = 21, k = 30;
  const matrix<double> a(k, m, k + 1), b(k, n, k), c(m, n, m);
  device_buffer<double> da(a.values), db(b.values), dc(c.values);
  const double alpha = 1.25, beta = -1.0;
  CUBLAS_OK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, da, CUDA_R_64F, a.ld, db, CUDA_R_64F, b.ld, &beta, dc, CUDA_R_64F, c.ld,
                         CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
  EXPECT_TRUE(close(block_of(dc.download(), m, n, m), reference_gemm(CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, 1.25, a, b, -1.0, c), 1e-13));
}

// Code from before CUDA 11 passes a cudaDataType as the compute type.
TEST_F(Gemm, GemmExLegacyComputeTypeArgument) {
  const int m = 10, n = 10, k = 10;
  const matrix<float> a(m, k, m), b(k, n, k), c(m, n, m);
  device_buffer<float> da(a.values), db(b.values), dc(c.values);
  const float alpha = 1.0f, beta = 1.0f;
  CUBLAS_OK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, CUDA_R_32F, m, db, CUDA_R_32F, k, &beta, dc, CUDA_R_32F, m,
                         CUDA_R_32F, CUBLAS_GEMM_DEFAULT));
  EXPECT_TRUE(close(block_of(dc.download(), m, n, m), reference_gemm(CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, 1.0, a, b, 1.0, c), 1e-6));
}

// The fast compute types round float inputs (tf32 keeps 10 mantissa bits):
// the result is within tf32's error of the exact product.
TEST_F(Gemm, GemmExFastTf32) {
  const int m = 33, n = 17, k = 64;
  const matrix<float> a(m, k, m), b(k, n, k), c(m, n, m);
  device_buffer<float> da(a.values), db(b.values), dc(c.values);
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_OK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, CUDA_R_32F, m, db, CUDA_R_32F, k, &beta, dc, CUDA_R_32F, m,
                         CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT_TENSOR_OP));
  EXPECT_TRUE(close(block_of(dc.download(), m, n, m), reference_gemm(CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, 1.0, a, b, 0.0, c), 2e-3));
}

TEST_F(Gemm, GemmStridedBatchedExBf16) {
  const int m = 16, n = 24, k = 40, batches = 2;
  std::vector<matrix<__nv_bfloat16>> as, bs;
  std::vector<matrix<float>> cs;
  std::vector<__nv_bfloat16> a_all, b_all;
  std::vector<float> c_all;
  for (int i = 0; i < batches; ++i) {
    as.emplace_back(k, m, k);
    bs.emplace_back(k, n, k);
    cs.emplace_back(m, n, m);
    a_all.insert(a_all.end(), as.back().values.begin(), as.back().values.end());
    b_all.insert(b_all.end(), bs.back().values.begin(), bs.back().values.end());
    c_all.insert(c_all.end(), cs.back().values.begin(), cs.back().values.end());
  }
  device_buffer<__nv_bfloat16> da(a_all), db(b_all);
  device_buffer<float> dc(c_all);
  const float alpha = 1.0f, beta = 0.5f;
  CUBLAS_OK(cublasGemmStridedBatchedEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, da, CUDA_R_16BF, k, k * m, db, CUDA_R_16BF, k, k * n, &beta,
                                       dc, CUDA_R_32F, m, m * n, batches, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  const std::vector<float> out = dc.download();
  for (int i = 0; i < batches; ++i)
    EXPECT_TRUE(close(block_of(out, m, n, m, static_cast<std::size_t>(i) * m * n),
                      reference_gemm(CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, 1.0, as[i], bs[i], 0.5, cs[i]), 1e-6))
        << "batch " << i;
}

TEST_F(Gemm, GemmBatchedExHalf) {
  const int m = 8, n = 8, k = 24, batches = 3;
  std::vector<matrix<__half>> as, bs, cs;
  std::vector<device_buffer<__half>*> buffers;
  std::vector<const void*> a_ptrs, b_ptrs;
  std::vector<void*> c_ptrs;
  for (int i = 0; i < batches; ++i) {
    as.emplace_back(m, k, m);
    bs.emplace_back(k, n, k);
    cs.emplace_back(m, n, m);
    buffers.push_back(new device_buffer<__half>(as.back().values));
    a_ptrs.push_back(buffers.back()->get());
    buffers.push_back(new device_buffer<__half>(bs.back().values));
    b_ptrs.push_back(buffers.back()->get());
    buffers.push_back(new device_buffer<__half>(cs.back().values));
    c_ptrs.push_back(buffers.back()->get());
  }
  device_buffer<const void*> da(a_ptrs), db(b_ptrs);
  device_buffer<void*> dc(c_ptrs);
  const float alpha = 1.0f, beta = -1.0f;
  CUBLAS_OK(cublasGemmBatchedEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, CUDA_R_16F, m, db, CUDA_R_16F, k, &beta, dc, CUDA_R_16F, m,
                                batches, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  for (int i = 0; i < batches; ++i) {
    std::vector<__half> out(static_cast<std::size_t>(m) * n);
    cudaMemcpy(out.data(), c_ptrs[i], out.size() * sizeof(__half), cudaMemcpyDeviceToHost);
    EXPECT_TRUE(close(block_of(out, m, n, m), reference_gemm(CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, 1.0, as[i], bs[i], -1.0, cs[i]), 1e-3))
        << "batch " << i;
  }
  for (auto* b : buffers) delete b;
}

// Hgemm computes in half on the GPU; the tolerance allows half accumulation.
TEST_F(Gemm, Hgemm) {
  const int m = 20, n = 12, k = 16;
  const matrix<__half> a(m, k, m + 2), b(n, k, n), c(m, n, m);
  device_buffer<__half> da(a.values), db(b.values), dc(c.values);
  const __half alpha(1.0f), beta(0.5f);
  CUBLAS_OK(cublasHgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &alpha, da, a.ld, db, b.ld, &beta, dc, c.ld));
  EXPECT_TRUE(close(block_of(dc.download(), m, n, m), reference_gemm(CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, 1.0, a, b, 0.5, c), 5e-3));
}

}  // namespace

#if !defined(__CUDACC__)
namespace {

// On the emulator the fast compute types round float inputs as the tensor
// cores read them (tf32 as __float_to_tf32 does, bf16 to nearest even): the
// result matches the product of the rounded inputs, not the exact one.
void check_rounded_inputs(cublasHandle_t handle, cublasComputeType_t compute, float (*round)(float)) {
  const int m = 24, n = 16, k = 48;
  const matrix<float> a(m, k, m), b(k, n, k), c(m, n, m);
  matrix<float> rounded_a = a, rounded_b = b;
  for (float& v : rounded_a.values) v = round(v);
  for (float& v : rounded_b.values) v = round(v);
  device_buffer<float> da(a.values), db(b.values), dc(c.values);
  const float alpha = 1.0f, beta = 0.0f;
  if (compute == CUBLAS_COMPUTE_32F) {  // the math mode's TF32 with plain Sgemm
    CUBLAS_OK(cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH));
    CUBLAS_OK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, m, db, k, &beta, dc, m));
  } else {
    CUBLAS_OK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, CUDA_R_32F, m, db, CUDA_R_32F, k, &beta, dc, CUDA_R_32F, m, compute,
                           CUBLAS_GEMM_DEFAULT));
  }
  const std::vector<double> out = block_of(dc.download(), m, n, m);
  EXPECT_TRUE(close(out, reference_gemm(CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, 1.0, rounded_a, rounded_b, 0.0, c), 1e-6));
  EXPECT_FALSE(close(out, reference_gemm(CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, 1.0, a, b, 0.0, c), 1e-5)) << "the inputs were not rounded";
}

TEST_F(Gemm, FastTf32RoundsInputs) { check_rounded_inputs(handle, CUBLAS_COMPUTE_32F_FAST_TF32, nvcuda::wmma::__float_to_tf32); }
TEST_F(Gemm, TensorOpMathModeRoundsSgemmInputsToTf32) { check_rounded_inputs(handle, CUBLAS_COMPUTE_32F, nvcuda::wmma::__float_to_tf32); }
TEST_F(Gemm, Fast16bfRoundsInputs) {
  check_rounded_inputs(handle, CUBLAS_COMPUTE_32F_FAST_16BF, [](float v) { return static_cast<float>(__nv_bfloat16(v)); });
}
TEST_F(Gemm, Fast16fRoundsInputs) {
  check_rounded_inputs(handle, CUBLAS_COMPUTE_32F_FAST_16F, [](float v) { return static_cast<float>(__half(v)); });
}

}  // namespace
#endif  // !defined(__CUDACC__)
