#include "gemm.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "context.h"
#include "cpu_blas.h"
#include "lockstep/emu/wmma.h"

namespace lockstep::emu::cublas {

float round_input(float value, input_rounding rounding) {
  switch (rounding) {
    case input_rounding::tf32:
      return nvcuda::wmma::__float_to_tf32(value);
    case input_rounding::bf16:
      return static_cast<float>(__nv_bfloat16(value));
    case input_rounding::f16:
      return static_cast<float>(__half(value));
    default:
      return value;
  }
}

double gelu_tanh(double x) {
  const double sqrt_2_over_pi = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(sqrt_2_over_pi * (x + 0.044715 * x * x * x)));
}

double gelu_tanh_gradient(double x) {
  const double s = std::sqrt(2.0 / std::numbers::pi), t = std::tanh(s * (x + 0.044715 * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * s * (1.0 + 3.0 * 0.044715 * x * x);
}

cublasStatus_t plan_compute(cublasComputeType_t compute, cudaDataType a_type, cudaDataType b_type, cudaDataType c_type, cublasMath_t math,
                            compute_plan& plan, const char* call) {
  if (a_type != b_type) return CUBLAS_STATUS_NOT_SUPPORTED;
  const cudaDataType ab_type = a_type;
  switch (compute) {
    case CUBLAS_COMPUTE_16F:
    case CUBLAS_COMPUTE_16F_PEDANTIC:
      if (ab_type != CUDA_R_16F || c_type != CUDA_R_16F) return CUBLAS_STATUS_NOT_SUPPORTED;
      plan.scale_type = CUDA_R_16F;
      return CUBLAS_STATUS_SUCCESS;
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
      if (ab_type == CUDA_R_32F) {
        if (c_type != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
        // CUBLAS_TF32_TENSOR_OP_MATH lets the default 32F compute use tf32.
        if (compute == CUBLAS_COMPUTE_32F && (math & 0xf) == CUBLAS_TF32_TENSOR_OP_MATH) plan.rounding = input_rounding::tf32;
      } else if (ab_type == CUDA_R_16F || ab_type == CUDA_R_16BF) {
        if (c_type != ab_type && c_type != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
      } else if (ab_type == CUDA_R_8I) {
        return not_emulated(call, "8-bit integer A and B");
      } else {
        return CUBLAS_STATUS_NOT_SUPPORTED;
      }
      return CUBLAS_STATUS_SUCCESS;
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
    case CUBLAS_COMPUTE_32F_FAST_TF32:
      if (ab_type != CUDA_R_32F || c_type != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
      plan.rounding = compute == CUBLAS_COMPUTE_32F_FAST_16F    ? input_rounding::f16
                      : compute == CUBLAS_COMPUTE_32F_FAST_16BF ? input_rounding::bf16
                                                                : input_rounding::tf32;
      return CUBLAS_STATUS_SUCCESS;
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC:
      if (ab_type != CUDA_R_64F || c_type != CUDA_R_64F) return CUBLAS_STATUS_NOT_SUPPORTED;
      plan.scale_type = CUDA_R_64F;
      plan.accumulate_in_double = true;
      return CUBLAS_STATUS_SUCCESS;
    case CUBLAS_COMPUTE_32F_EMULATED_16BFX9:
    case CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT:
    case CUBLAS_COMPUTE_32I:
    case CUBLAS_COMPUTE_32I_PEDANTIC:
      return not_emulated(call, "this compute type");
  }
  return CUBLAS_STATUS_INVALID_VALUE;
}

namespace {

void blas_gemm(const cpu_blas& blas, int transa, int transb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
               float beta, float* c, int ldc) {
  blas.sgemm(cblas_col_major, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void blas_gemm(const cpu_blas& blas, int transa, int transb, int m, int n, int k, double alpha, const double* a, int lda, const double* b, int ldb,
               double beta, double* c, int ldc) {
  blas.dgemm(cblas_col_major, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

int cblas_op(cublasOperation_t op) { return op == CUBLAS_OP_N ? cblas_no_trans : cblas_trans; }

const void* element_at(const void* data, cudaDataType type, long long offset) {
  return static_cast<const char*>(data) + offset * static_cast<long long>(element_size(type));
}

// A rows x cols operand, widened (and rounded) into a packed column-major buffer.
template <class T>
std::vector<T> widen(const matrix_operand& operand, const void* data, int rows, int cols, input_rounding rounding) {
  std::vector<T> packed(static_cast<std::size_t>(rows) * cols);
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) {
      T v = load_element<T>(data, operand.type, static_cast<std::size_t>(j) * operand.ld + i);
      if constexpr (std::is_same_v<T, float>) v = round_input(v, rounding);
      packed[static_cast<std::size_t>(j) * rows + i] = v;
    }
  return packed;
}

// An A or B operand as the BLAS reads it: in place when it is already the
// accumulation type and needs no rounding, else a widened copy.
template <class T>
struct blas_operand {
  std::vector<T> copy;
  const T* data = nullptr;
  int ld = 1;
  blas_operand(const matrix_operand& operand, const void* at, int rows, int cols, input_rounding rounding) {
    const cudaDataType wide = std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_64F;
    if (operand.type == wide && rounding == input_rounding::none) {
      data = static_cast<const T*>(at);
      ld = static_cast<int>(operand.ld);
    } else {
      copy = widen<T>(operand, at, rows, cols, rounding);
      data = copy.data();
      ld = std::max(1, rows);
    }
  }
};

template <class T>
T activate(T x, activation act) {
  switch (act) {
    case activation::relu:
      return x > T(0) ? x : T(0);
    case activation::gelu:
      return static_cast<T>(gelu_tanh(static_cast<double>(x)));
    default:
      return x;
  }
}

// One matrix of the batch.
template <class T>
void gemm_one(const cpu_blas& blas, const gemm_call& call, int batch) {
  const int rows_a = call.transa == CUBLAS_OP_N ? call.m : call.k, cols_a = call.transa == CUBLAS_OP_N ? call.k : call.m;
  const int rows_b = call.transb == CUBLAS_OP_N ? call.k : call.n, cols_b = call.transb == CUBLAS_OP_N ? call.n : call.k;
  const void* a = element_at(call.a.data, call.a.type, batch * call.a.stride);
  const void* b = element_at(call.b.data, call.b.type, batch * call.b.stride);
  void* d = const_cast<void*>(element_at(call.d, call.d_type, batch * call.stride_d));
  const T alpha = static_cast<T>(call.alpha), beta = static_cast<T>(call.beta);
  const cudaDataType wide = std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_64F;

  // The operands are the accumulation type already: the BLAS reads them in
  // place and writes D, after C is copied there when C is another matrix.
  const bool in_place = call.a.type == wide && call.b.type == wide && call.d_type == wide && call.rounding == input_rounding::none &&
                        !call.epilogue.any() && call.ldd >= std::max(1, call.m);
  if (in_place) {
    const void* c = call.beta != 0 ? element_at(call.c.data, call.c.type, batch * call.c.stride) : d;
    if (c != d) {
      for (int j = 0; j < call.n; ++j)
        for (int i = 0; i < call.m; ++i)
          store_element<T>(d, wide, static_cast<std::size_t>(j) * call.ldd + i,
                           load_element<T>(c, call.c.type, static_cast<std::size_t>(j) * call.c.ld + i));
    }
    blas_gemm(blas, cblas_op(call.transa), cblas_op(call.transb), call.m, call.n, call.k, alpha, static_cast<const T*>(a),
              static_cast<int>(call.a.ld), static_cast<const T*>(b), static_cast<int>(call.b.ld), beta, static_cast<T*>(d),
              static_cast<int>(call.ldd));
  } else {
    const blas_operand<T> wide_a(call.a, a, rows_a, cols_a, call.rounding), wide_b(call.b, b, rows_b, cols_b, call.rounding);
    // beta == 0: C is not read (it may hold NaN), as in BLAS.
    std::vector<T> acc(static_cast<std::size_t>(call.m) * call.n, T(0));
    if (call.beta != 0) acc = widen<T>(call.c, element_at(call.c.data, call.c.type, batch * call.c.stride), call.m, call.n, input_rounding::none);
    blas_gemm(blas, cblas_op(call.transa), cblas_op(call.transb), call.m, call.n, call.k, alpha, wide_a.data, wide_a.ld, wide_b.data, wide_b.ld, beta,
              acc.data(), std::max(1, call.m));
    const gemm_epilogue& e = call.epilogue;
    const bool gradient = e.gradient != bias_gradient::none;
    void* bias = e.bias ? const_cast<void*>(element_at(e.bias, e.bias_type, batch * e.bias_stride)) : nullptr;
    void* aux = e.aux ? const_cast<void*>(element_at(e.aux, e.aux_type, batch * e.aux_stride)) : nullptr;
    std::vector<T> row_sums(e.gradient == bias_gradient::of_d ? static_cast<std::size_t>(call.m) : 0, T(0));
    for (int j = 0; j < call.n; ++j)
      for (int i = 0; i < call.m; ++i) {
        T v = acc[static_cast<std::size_t>(j) * call.m + i];
        const std::size_t at_aux = static_cast<std::size_t>(j) * e.aux_ld + i;
        if (e.act == activation::gelu_gradient) {
          v *= static_cast<T>(gelu_tanh_gradient(load_element<double>(aux, e.aux_type, at_aux)));
        } else {
          if (bias && !gradient) v += load_element<T>(bias, e.bias_type, i);
          if (aux) store_element<T>(aux, e.aux_type, at_aux, v);
          v = activate(v, e.act);
        }
        if (e.gradient == bias_gradient::of_d) row_sums[i] += v;
        store_element<T>(d, call.d_type, static_cast<std::size_t>(j) * call.ldd + i, v);
      }
    if (aux && !e.aux_is_input) mark_written(aux, call.m, call.n, e.aux_ld, element_size(e.aux_type));
    if (gradient) {
      // BGRADA sums op(A)(i, :), BGRADB op(B)(:, j), over k.
      const bool of_b = e.gradient == bias_gradient::of_b;
      const int length = of_b ? call.n : call.m;
      for (int i = 0; i < length; ++i) {
        T sum = row_sums.empty() ? T(0) : row_sums[i];
        if (e.gradient == bias_gradient::of_a)
          for (int p = 0; p < call.k; ++p)
            sum += call.transa == CUBLAS_OP_N ? wide_a.data[static_cast<std::size_t>(p) * wide_a.ld + i]
                                              : wide_a.data[static_cast<std::size_t>(i) * wide_a.ld + p];
        if (of_b)
          for (int p = 0; p < call.k; ++p)
            sum += call.transb == CUBLAS_OP_N ? wide_b.data[static_cast<std::size_t>(i) * wide_b.ld + p]
                                              : wide_b.data[static_cast<std::size_t>(p) * wide_b.ld + i];
        store_element<T>(bias, e.bias_type, i, sum);
      }
      mark_written(bias, length, 1, length, element_size(e.bias_type));
    }
  }
  mark_written(d, call.m, call.n, call.ldd, element_size(call.d_type));
}

// Every matrix and vector of every batch inside its allocation: the batch's
// whole extent from the first matrix (a later matrix's start may lie past the
// end, where no allocation holds it), or matrix by matrix for negative strides.
bool operands_fit(const gemm_call& call) {
  const int rows_a = call.transa == CUBLAS_OP_N ? call.m : call.k, cols_a = call.transa == CUBLAS_OP_N ? call.k : call.m;
  const int rows_b = call.transb == CUBLAS_OP_N ? call.k : call.n, cols_b = call.transb == CUBLAS_OP_N ? call.n : call.k;
  const gemm_epilogue& e = call.epilogue;
  const long long batches = call.batch_count;
  auto fits = [&](const char* what, const void* data, cudaDataType type, long long stride, long long span) {
    if (span <= 0 || batches <= 0) return true;
    if (stride >= 0) return within_allocation(call.name, what, data, (batches - 1) * stride + span, element_size(type), call.caller);
    for (long long batch = 0; batch < batches; ++batch)
      if (!within_allocation(call.name, what, element_at(data, type, batch * stride), span, element_size(type), call.caller)) return false;
    return true;
  };
  return fits("A", call.a.data, call.a.type, call.a.stride, matrix_span(rows_a, cols_a, call.a.ld)) &&
         fits("B", call.b.data, call.b.type, call.b.stride, matrix_span(rows_b, cols_b, call.b.ld)) &&
         (call.beta == 0 || fits("C", call.c.data, call.c.type, call.c.stride, matrix_span(call.m, call.n, call.c.ld))) &&
         fits(call.output_name, call.d, call.d_type, call.stride_d, matrix_span(call.m, call.n, call.ldd)) &&
         (!e.bias || fits("the bias", e.bias, e.bias_type, e.bias_stride, e.gradient == bias_gradient::of_b ? call.n : call.m)) &&
         (!e.aux || fits("the epilogue's aux output", e.aux, e.aux_type, e.aux_stride, matrix_span(call.m, call.n, e.aux_ld)));
}

}  // namespace

cublasStatus_t run_gemm(const gemm_call& call) {
  if (cublasStatus_t status = blas_status(); status != CUBLAS_STATUS_SUCCESS) return status;
  if (call.m == 0 || call.n == 0) return CUBLAS_STATUS_SUCCESS;
  const cpu_blas& blas = the_cpu_blas();
  if (!operands_fit(call)) return CUBLAS_STATUS_EXECUTION_FAILED;
  for (int batch = 0; batch < call.batch_count; ++batch) {
    if (call.accumulate_in_double)
      gemm_one<double>(blas, call, batch);
    else
      gemm_one<float>(blas, call, batch);
  }
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace lockstep::emu::cublas
