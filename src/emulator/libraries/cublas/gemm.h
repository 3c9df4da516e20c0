// One engine for every matrix product of the emulated cuBLAS and cuBLASLt:
// D = epilogue(alpha op(A) op(B) + beta C + bias), column-major, strided
// batches, any mix of the element types the GPU's routines accept. Inputs are
// widened to the accumulation type (float, or double for 64F compute) and the
// product runs on the CPU BLAS, as tensor cores multiply narrow inputs and
// accumulate in float.
#pragma once
#include "elements.h"
#include "lockstep/emu/cublas.h"

namespace lockstep::emu::cublas {

struct matrix_operand {
  const void* data = nullptr;
  cudaDataType type = CUDA_R_32F;
  long long ld = 0;
  long long stride = 0;  // elements between a batch's matrices
};

enum class activation { none, relu, gelu, gelu_gradient };

// Which sums a bias gradient epilogue writes to `bias`: over k of op(A)'s rows
// (BGRADA, one per row of D), over k of op(B)'s columns (BGRADB, one per
// column of D), or over the columns of the finished D (DGELU_BGRAD, one per row).
enum class bias_gradient { none, of_a, of_b, of_d };

struct gemm_epilogue {
  activation act = activation::none;
  const void* bias = nullptr;  // one value per row of D, added before the activation (or the gradient written)
  cudaDataType bias_type = CUDA_R_32F;
  long long bias_stride = 0;
  bias_gradient gradient = bias_gradient::none;
  void* aux = nullptr;  // GELU_AUX: the activation's input, stored; DGELU: read
  bool aux_is_input = false;
  cudaDataType aux_type = CUDA_R_32F;
  long long aux_ld = 0, aux_stride = 0;
  bool any() const { return act != activation::none || bias || aux; }
};

struct gemm_call {
  cublasOperation_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  int m = 0, n = 0, k = 0;
  matrix_operand a, b, c;  // c is read only when beta != 0
  void* d = nullptr;
  cudaDataType d_type = CUDA_R_32F;
  long long ldd = 0, stride_d = 0;
  bool accumulate_in_double = false;
  input_rounding rounding = input_rounding::none;
  double alpha = 1, beta = 0;
  int batch_count = 1;
  gemm_epilogue epilogue;
  const char* name = "cuBLAS";    // the API call, for messages
  const char* output_name = "C";  // cuBLAS writes C; cuBLASLt writes D
  const void* caller = nullptr;   // the program's call site, for check mode's findings
};

// What a compute type means here: the scalars' type, the accumulation type
// and the rounding of float inputs.
struct compute_plan {
  cudaDataType scale_type = CUDA_R_32F;
  bool accumulate_in_double = false;
  input_rounding rounding = input_rounding::none;
};

// The plan for `compute` with these A, B and C types (CUBLAS_STATUS_NOT_SUPPORTED
// for a mix cuBLAS refuses, or one the emulator does not run, which `call`
// then reports on stderr). `math` is the handle's math mode.
cublasStatus_t plan_compute(cublasComputeType_t compute, cudaDataType a_type, cudaDataType b_type, cudaDataType c_type, cublasMath_t math,
                            compute_plan& plan, const char* call);

// Runs a validated call (dimensions, leading dimensions and types checked by
// the caller); NOT_INITIALIZED without a CPU BLAS, EXECUTION_FAILED when an
// operand runs past the end of its allocation (nothing is computed then).
cublasStatus_t run_gemm(const gemm_call& call);

// GELU as cuBLASLt's epilogue computes it: the tanh approximation
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), and its derivative (DGELU).
double gelu_tanh(double x);
double gelu_tanh_gradient(double x);

}  // namespace lockstep::emu::cublas
