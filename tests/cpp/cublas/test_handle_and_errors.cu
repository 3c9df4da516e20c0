// Handle settings read back, status names, and the statuses cuBLAS and
// cuBLASLt document for bad arguments: negative sizes, unknown transposes,
// leading dimensions below the rows, null scalars or handles, unsupported
// type mixes, mismatched layouts and attribute sizes.
#include <cstring>

#include "cublas_test_util.h"

using namespace cublas_test;
using testing_util::device_buffer;

namespace {

using Handle = handle_test;

TEST_F(Handle, SettingsReadBack) {
  cudaStream_t stream = reinterpret_cast<cudaStream_t>(0);
  CUBLAS_OK(cublasSetStream(handle, stream));
  cudaStream_t read_stream = reinterpret_cast<cudaStream_t>(1);
  CUBLAS_OK(cublasGetStream(handle, &read_stream));
  EXPECT_EQ(read_stream, stream);

  cublasMath_t math = CUBLAS_DEFAULT_MATH;
  CUBLAS_OK(cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH));
  CUBLAS_OK(cublasGetMathMode(handle, &math));
  EXPECT_EQ(math, CUBLAS_TF32_TENSOR_OP_MATH);

  cublasPointerMode_t mode = CUBLAS_POINTER_MODE_HOST;
  CUBLAS_OK(cublasGetPointerMode(handle, &mode));
  EXPECT_EQ(mode, CUBLAS_POINTER_MODE_HOST) << "the default";
  CUBLAS_OK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_DEVICE));
  CUBLAS_OK(cublasGetPointerMode(handle, &mode));
  EXPECT_EQ(mode, CUBLAS_POINTER_MODE_DEVICE);

  int version = 0, major = -1;
  CUBLAS_OK(cublasGetVersion(handle, &version));
  CUBLAS_OK(cublasGetProperty(MAJOR_VERSION, &major));
  EXPECT_GE(version, 10000);
  EXPECT_EQ(version / 10000, major);
}

TEST(Status, NamesAndStrings) {
  EXPECT_STREQ(cublasGetStatusName(CUBLAS_STATUS_SUCCESS), "CUBLAS_STATUS_SUCCESS");
  EXPECT_STREQ(cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE), "CUBLAS_STATUS_INVALID_VALUE");
  EXPECT_STREQ(cublasGetStatusName(CUBLAS_STATUS_NOT_SUPPORTED), "CUBLAS_STATUS_NOT_SUPPORTED");
  EXPECT_GT(std::strlen(cublasGetStatusString(CUBLAS_STATUS_NOT_INITIALIZED)), 0u);
}

// One well-formed Sgemm, broken one argument at a time.
TEST_F(Handle, GemmArgumentErrors) {
  const int m = 8, n = 6, k = 4;
  device_buffer<float> a(64), b(64), c(64);
  const float one = 1.0f;
  const cublasOperation_t bad_op = static_cast<cublasOperation_t>(7);
  auto sgemm = [&](cublasOperation_t ta, cublasOperation_t tb, int m_, int n_, int k_, const float* alpha, int lda, int ldb, const float* beta,
                   int ldc) { return cublasSgemm(handle, ta, tb, m_, n_, k_, alpha, a, lda, b, ldb, beta, c, ldc); };
  EXPECT_STATUS(sgemm(CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, m, k, &one, m), CUBLAS_STATUS_SUCCESS);
  EXPECT_STATUS(sgemm(CUBLAS_OP_N, CUBLAS_OP_N, -1, n, k, &one, m, k, &one, m), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_STATUS(sgemm(CUBLAS_OP_N, CUBLAS_OP_N, m, -1, k, &one, m, k, &one, m), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_STATUS(sgemm(CUBLAS_OP_N, CUBLAS_OP_N, m, n, -1, &one, m, k, &one, m), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_STATUS(sgemm(bad_op, CUBLAS_OP_N, m, n, k, &one, m, k, &one, m), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_STATUS(sgemm(CUBLAS_OP_N, bad_op, m, n, k, &one, m, k, &one, m), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_STATUS(sgemm(CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, m - 1, k, &one, m), CUBLAS_STATUS_INVALID_VALUE) << "lda < m";
  EXPECT_STATUS(sgemm(CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, k - 1, k, &one, m), CUBLAS_STATUS_INVALID_VALUE) << "lda < k (A^T)";
  EXPECT_STATUS(sgemm(CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, m, k - 1, &one, m), CUBLAS_STATUS_INVALID_VALUE) << "ldb < k";
  EXPECT_STATUS(sgemm(CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &one, m, n - 1, &one, m), CUBLAS_STATUS_INVALID_VALUE) << "ldb < n (B^T)";
  EXPECT_STATUS(sgemm(CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, m, k, &one, m - 1), CUBLAS_STATUS_INVALID_VALUE) << "ldc < m";
  EXPECT_STATUS(sgemm(CUBLAS_OP_N, CUBLAS_OP_N, m, n, 0, &one, m, 0, &one, m), CUBLAS_STATUS_INVALID_VALUE) << "ldb < max(1, k)";
  EXPECT_STATUS(sgemm(CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, nullptr, m, k, &one, m), CUBLAS_STATUS_INVALID_VALUE) << "alpha null";
  EXPECT_STATUS(sgemm(CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, m, k, nullptr, m), CUBLAS_STATUS_INVALID_VALUE) << "beta null";
  EXPECT_STATUS(cublasSgemm(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a, m, b, k, &one, c, m), CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_STATUS(cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a, m, 0, b, k, 0, &one, c, m, 0, -1),
                CUBLAS_STATUS_INVALID_VALUE)
      << "negative batch count";
}

TEST_F(Handle, GemmExUnsupportedTypeMixes) {
  device_buffer<float> a(64), b(64), c(64);
  const float one = 1.0f;
  EXPECT_STATUS(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, a, CUDA_R_16F, 4, b, CUDA_R_16BF, 4, &one, c, CUDA_R_32F, 4,
                             CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                CUBLAS_STATUS_NOT_SUPPORTED)
      << "A half, B bf16";
  EXPECT_STATUS(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, a, CUDA_R_32F, 4, b, CUDA_R_32F, 4, &one, c, CUDA_R_16F, 4,
                             CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                CUBLAS_STATUS_NOT_SUPPORTED)
      << "float A and B into a half C";
  EXPECT_STATUS(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, a, CUDA_R_16BF, 4, b, CUDA_R_16BF, 4, &one, c, CUDA_R_16BF, 4,
                             CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT),
                CUBLAS_STATUS_NOT_SUPPORTED)
      << "bf16 with a 64F compute type";
}

TEST_F(Handle, Level1And2ArgumentErrors) {
  device_buffer<float> x(16), y(16), a(64);
  const float one = 1.0f;
  EXPECT_STATUS(cublasSgemv(handle, CUBLAS_OP_N, 4, 4, &one, a, 3, x, 1, &one, y, 1), CUBLAS_STATUS_INVALID_VALUE) << "lda < m";
#if !defined(__CUDACC__)
  // The H100's cuBLAS 13 answers CUBLAS_STATUS_SUCCESS to these two (bench/RESULTS.md); the emulator
  // refuses them, as cuBLAS's documentation says, since its CPU BLAS cannot take a zero increment.
  EXPECT_STATUS(cublasSgemv(handle, CUBLAS_OP_N, 4, 4, &one, a, 4, x, 0, &one, y, 1), CUBLAS_STATUS_INVALID_VALUE) << "incx 0";
  EXPECT_STATUS(cublasSgemv(handle, CUBLAS_OP_N, -1, 4, &one, a, 4, x, 1, &one, y, 1), CUBLAS_STATUS_INVALID_VALUE);
#endif
  EXPECT_STATUS(cublasSetVector(4, 0, x, 1, y, 1), CUBLAS_STATUS_INVALID_VALUE) << "element size 0";
  EXPECT_STATUS(cublasSetVector(4, 4, x, 0, y, 1), CUBLAS_STATUS_INVALID_VALUE) << "incx 0";
  EXPECT_STATUS(cublasSetMatrix(4, 4, 4, x, 0, y, 4), CUBLAS_STATUS_INVALID_VALUE) << "lda 0";
  EXPECT_STATUS(cublasGetMatrix(-1, 4, 4, x, 4, y, 4), CUBLAS_STATUS_INVALID_VALUE) << "rows < 0";
}

// A float matmul D (m x n) = A (m x k) B (k x n) whose layouts each test breaks once.
class LtErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cublasLtCreate(&lt), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, 8, 4, 8), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, 4, 6, 4), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, 8, 6, 8), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasLtMatmulPreferenceCreate(&preference), CUBLAS_STATUS_SUCCESS);
  }
  void TearDown() override {
    for (auto l : {la, lb, ld}) cublasLtMatrixLayoutDestroy(l);
    cublasLtMatmulPreferenceDestroy(preference);
    cublasLtMatmulDescDestroy(desc);
    cublasLtDestroy(lt);
  }
  cublasStatus_t matmul() {
    const float one = 1.0f, zero = 0.0f;
    return cublasLtMatmul(lt, desc, &one, a, la, b, lb, &zero, d, ld, d, ld, nullptr, nullptr, 0, 0);
  }
  cublasLtHandle_t lt = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  device_buffer<float> a{32}, b{24}, d{48};
};

TEST_F(LtErrors, WellFormedRuns) { EXPECT_STATUS(matmul(), CUBLAS_STATUS_SUCCESS); }

TEST_F(LtErrors, InnerDimensionsDisagree) {
  const cublasOperation_t transpose = CUBLAS_OP_T;
  CUBLAS_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &transpose, sizeof(transpose)));
  EXPECT_STATUS(matmul(), CUBLAS_STATUS_INVALID_VALUE);
}

TEST_F(LtErrors, AttributeSizeMustMatch) {
  const int64_t wrong_size_epilogue = CUBLASLT_EPILOGUE_BIAS;  // the attribute is a uint32_t
  EXPECT_STATUS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &wrong_size_epilogue, sizeof(wrong_size_epilogue)),
                CUBLAS_STATUS_INVALID_VALUE);
  const int32_t wrong_size_rows = 8;  // uint64_t
  EXPECT_STATUS(cublasLtMatrixLayoutSetAttribute(la, CUBLASLT_MATRIX_LAYOUT_ROWS, &wrong_size_rows, sizeof(wrong_size_rows)),
                CUBLAS_STATUS_INVALID_VALUE);
  const uint64_t workspace = 1024;
  EXPECT_STATUS(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, nullptr, sizeof(workspace)),
                CUBLAS_STATUS_INVALID_VALUE);
}

TEST_F(LtErrors, HeuristicNeedsARequestedCount) {
  cublasLtMatmulHeuristicResult_t result;
  int returned = -1;
  EXPECT_STATUS(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, ld, ld, preference, 0, &result, &returned), CUBLAS_STATUS_INVALID_VALUE);
}

#if !defined(__CUDACC__)
// What only the emulator refuses (a GPU runs these): a row-major layout.
TEST_F(LtErrors, RowOrderIsNotEmulated) {
  const int32_t order = CUBLASLT_ORDER_ROW;
  CUBLAS_OK(cublasLtMatrixLayoutSetAttribute(la, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof(order)));
  EXPECT_STATUS(matmul(), CUBLAS_STATUS_NOT_SUPPORTED);
}
#endif

}  // namespace
