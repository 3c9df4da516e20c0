// Kernels reading what cuBLAS wrote into fresh cudaMalloc'd memory (never
// memset): on the GPU a plain pipeline; built for check mode
// (cublas_emulator_tests_checked), initcheck must see the routines' outputs
// as written, exactly the rows of each column they wrote.
#include "cublas_test_util.h"

using namespace cublas_test;

namespace {

// out[j * m + i] = 2 x[j * ld + i]: reads only the m rows of each column.
__global__ void double_float_block(const float* x, float* out, int m, int n, int ld) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (i < m && j < n) out[j * m + i] = 2.0f * x[j * ld + i];
}
__global__ void double_bf16_block(const __nv_bfloat16* x, float* out, int m, int n, int ld) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (i < m && j < n) out[j * m + i] = 2.0f * __bfloat162float(x[j * ld + i]);
}

template <class T>
std::vector<float> doubled_on_device(const T* x, int m, int n, int ld) {
  float* out = nullptr;
  EXPECT_EQ(cudaMalloc(&out, sizeof(float) * m * n), cudaSuccess);
  const dim3 grid((m + 63) / 64, n);
  if constexpr (std::is_same_v<T, float>)
    lockstep::launch(double_float_block, grid, 64)(x, out, m, n, ld);
  else
    lockstep::launch(double_bf16_block, grid, 64)(x, out, m, n, ld);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<float> host(static_cast<std::size_t>(m) * n);
  EXPECT_EQ(cudaMemcpy(host.data(), out, sizeof(float) * host.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(out);
  return host;
}

std::vector<double> doubled(const std::vector<double>& v) {
  std::vector<double> out(v);
  for (double& x : out) x *= 2;
  return out;
}

using KernelsRead = handle_test;

TEST_F(KernelsRead, SgemmOutputWithPaddedLeadingDimension) {
  const int m = 19, n = 7, k = 11, ldc = 24;
  const matrix<float> a(m, k, m), b(k, n, k), unused_c(m, n, m);
  testing_util::device_buffer<float> da(a.values), db(b.values);
  float* c = nullptr;
  ASSERT_EQ(cudaMalloc(&c, sizeof(float) * ldc * n), cudaSuccess);
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_OK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, m, db, k, &beta, c, ldc));
  const std::vector<float> out = doubled_on_device(c, m, n, ldc);
  EXPECT_TRUE(
      close(std::vector<double>(out.begin(), out.end()), doubled(reference_gemm(CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, 1.0, a, b, 0.0, unused_c)), 1e-6));
  cudaFree(c);
}

TEST_F(KernelsRead, SetMatrixOutput) {
  const int rows = 9, cols = 5, ld = 16;
  const matrix<float> host(rows, cols, rows);
  float* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, sizeof(float) * ld * cols), cudaSuccess);
  CUBLAS_OK(cublasSetMatrix(rows, cols, sizeof(float), host.values.data(), rows, device, ld));
  const std::vector<float> out = doubled_on_device(device, rows, cols, ld);
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) ASSERT_EQ(out[static_cast<std::size_t>(j) * rows + i], 2.0 * host.at(i, j));
  cudaFree(device);
}

TEST_F(KernelsRead, LtBf16GeluBiasOutput) {
  const int m = 24, n = 10, k = 32;
  const matrix<__nv_bfloat16> a(k, m, k), b(k, n, k), bias(m, 1, m);
  testing_util::device_buffer<__nv_bfloat16> da(a.values), db(b.values), dbias(bias.values);
  __nv_bfloat16* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, sizeof(__nv_bfloat16) * m * n), cudaSuccess);
  cublasLtHandle_t lt;
  CUBLAS_OK(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t desc;
  CUBLAS_OK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t transpose = CUBLAS_OP_T;
  const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_GELU_BIAS;
  const __nv_bfloat16* bias_pointer = dbias;
  CUBLAS_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof(transpose)));
  CUBLAS_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
  CUBLAS_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_pointer, sizeof(bias_pointer)));
  cublasLtMatrixLayout_t la, lb, ld;
  CUBLAS_OK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, k, m, k));
  CUBLAS_OK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, k, n, k));
  CUBLAS_OK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, m, n, m));
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_OK(cublasLtMatmul(lt, desc, &alpha, da, la, db, lb, &beta, d, ld, d, ld, nullptr, nullptr, 0, 0));
  std::vector<double> ref = reference_gemm(CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, 1.0, a, b, 0.0, a);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      const double x = ref[static_cast<std::size_t>(j) * m + i] + bias.at(i, 0);
      ref[static_cast<std::size_t>(j) * m + i] = 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / std::acos(-1.0)) * (x + 0.044715 * x * x * x)));
    }
  const std::vector<float> out = doubled_on_device(d, m, n, m);
  EXPECT_TRUE(close(std::vector<double>(out.begin(), out.end()), doubled(ref), 6e-3));
  for (auto l : {la, lb, ld}) CUBLAS_OK(cublasLtMatrixLayoutDestroy(l));
  CUBLAS_OK(cublasLtMatmulDescDestroy(desc));
  CUBLAS_OK(cublasLtDestroy(lt));
  cudaFree(d);
}

}  // namespace
