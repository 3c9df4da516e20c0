// Emulator only: an operand that runs past the end of its cudaMalloc'd
// allocation would make a GPU fault (an illegal address); the emulated
// cuBLAS refuses the call instead of letting the CPU BLAS read or write out
// of bounds, with CUBLAS_STATUS_EXECUTION_FAILED and a line naming the
// operand (a memcheck finding in check mode), and leaves memory unchanged.
#include "cublas_test_util.h"

#if !defined(__CUDACC__)

using namespace cublas_test;
using testing_util::device_buffer;

namespace {

using PastAllocation = handle_test;

TEST_F(PastAllocation, GemmOutputTooShort) {
  const int m = 8, n = 6, k = 4;
  device_buffer<float> a(std::vector<float>(m * k, 1.0f)), b(std::vector<float>(k * n, 1.0f));
  device_buffer<float> c(std::vector<float>(m * n - 1, 7.0f));  // one element short
  const float one = 1.0f, zero = 0.0f;
  testing::internal::CaptureStderr();
  EXPECT_STATUS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a, m, b, k, &zero, c, m), CUBLAS_STATUS_EXECUTION_FAILED);
  const std::string message = testing::internal::GetCapturedStderr();
  EXPECT_NE(message.find("cublasSgemm"), std::string::npos) << message;
  EXPECT_NE(message.find("C spans 192 bytes"), std::string::npos) << message;
  EXPECT_NE(message.find("4 bytes past the end of its cudaMalloc'd allocation"), std::string::npos) << message;
  for (float v : c.download()) ASSERT_EQ(v, 7.0f) << "nothing is written";
}

TEST_F(PastAllocation, StridedBatchPastTheEnd) {
  const int m = 4, n = 4, k = 4, batches = 3;
  device_buffer<float> a(std::vector<float>(m * k * batches, 1.0f)), b(std::vector<float>(k * n * (batches - 1), 1.0f)), c(m * n * batches);
  const float one = 1.0f, zero = 0.0f;
  testing::internal::CaptureStderr();
  EXPECT_STATUS(cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a, m, m * k, b, k, k * n, &zero, c, m, m * n, batches),
                CUBLAS_STATUS_EXECUTION_FAILED);
  const std::string message = testing::internal::GetCapturedStderr();
  EXPECT_NE(message.find("B spans 192 bytes"), std::string::npos) << message << "the third matrix starts where the allocation ends";
}

TEST(PastAllocationLt, BiasShorterThanTheRows) {
  const int m = 16, n = 4, k = 8;
  device_buffer<float> a(std::vector<float>(m * k, 1.0f)), b(std::vector<float>(k * n, 1.0f)), d(m * n), bias(std::vector<float>(m / 2, 0.0f));
  cublasLtHandle_t lt;
  CUBLAS_OK(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t desc;
  CUBLAS_OK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
  const float* bias_pointer = bias;
  CUBLAS_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
  CUBLAS_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_pointer, sizeof(bias_pointer)));
  cublasLtMatrixLayout_t la, lb, ld;
  CUBLAS_OK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, m, k, m));
  CUBLAS_OK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, k, n, k));
  CUBLAS_OK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, m, n, m));
  const float one = 1.0f, zero = 0.0f;
  testing::internal::CaptureStderr();
  EXPECT_STATUS(cublasLtMatmul(lt, desc, &one, a, la, b, lb, &zero, d, ld, d, ld, nullptr, nullptr, 0, 0), CUBLAS_STATUS_EXECUTION_FAILED);
  const std::string message = testing::internal::GetCapturedStderr();
  EXPECT_NE(message.find("cublasLtMatmul"), std::string::npos) << message;
  EXPECT_NE(message.find("the bias spans 64 bytes"), std::string::npos) << message;
  for (auto l : {la, lb, ld}) CUBLAS_OK(cublasLtMatrixLayoutDestroy(l));
  CUBLAS_OK(cublasLtMatmulDescDestroy(desc));
  CUBLAS_OK(cublasLtDestroy(lt));
}

TEST_F(PastAllocation, AxpyAndSetMatrix) {
  device_buffer<float> x(std::vector<float>(10, 1.0f)), y(std::vector<float>(18, 2.0f));
  const float alpha = 1.0f;
  testing::internal::CaptureStderr();
  EXPECT_STATUS(cublasSaxpy(handle, 10, &alpha, x, 1, y, 2), CUBLAS_STATUS_EXECUTION_FAILED) << "10 elements 2 apart span 19";
  const std::vector<float> host(12, 3.0f);
  EXPECT_STATUS(cublasSetMatrix(4, 3, sizeof(float), host.data(), 4, x, 4), CUBLAS_STATUS_EXECUTION_FAILED) << "12 floats into 10";
  const std::string message = testing::internal::GetCapturedStderr();
  EXPECT_NE(message.find("cublasSaxpy"), std::string::npos) << message;
  EXPECT_NE(message.find("cublasSetMatrix"), std::string::npos) << message;
  for (float v : y.download()) ASSERT_EQ(v, 2.0f);
}

}  // namespace

#endif  // !defined(__CUDACC__)
