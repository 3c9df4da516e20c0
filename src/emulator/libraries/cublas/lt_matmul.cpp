// cublasLtMatmulAlgoGetHeuristic and cublasLtMatmul: the descriptors checked
// and turned into one call of the gemm engine, epilogue included.
#include <algorithm>
#include <climits>
#include <cstring>

#include "context.h"
#include "gemm.h"
#include "lt_descriptors.h"

using namespace lockstep::emu::cublas;

namespace {

bool valid_op(std::int32_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; }

cublasStatus_t check_layout(const lt_layout& l, const char* call) {
  if (l.order != CUBLASLT_ORDER_COL) return not_emulated(call, "a matrix order other than CUBLASLT_ORDER_COL");
  if (l.batch_mode != CUBLASLT_BATCH_MODE_STRIDED) return not_emulated(call, "CUBLASLT_BATCH_MODE_POINTER_ARRAY");
  if (l.plane_offset != 0) return not_emulated(call, "a planar complex layout");
  if (l.rows > INT_MAX || l.cols > INT_MAX || l.ld > INT_MAX) return not_emulated(call, "a matrix dimension beyond INT_MAX");
  if (l.ld < std::max<std::int64_t>(1, static_cast<std::int64_t>(l.rows)) || l.batch_count < 1) return CUBLAS_STATUS_INVALID_VALUE;
  if (element_size(static_cast<cudaDataType>(l.type)) == 0) return CUBLAS_STATUS_NOT_SUPPORTED;
  return CUBLAS_STATUS_SUCCESS;
}

// What an epilogue does, as the engine's gemm_epilogue fields; NOT_SUPPORTED
// for the ReLU bit mask (RELU_AUX*, DRELU*), which the emulator does not keep.
struct epilogue_plan {
  activation act = activation::none;
  bool bias = false;  // reads (or, with a gradient, writes) the bias vector
  bias_gradient gradient = bias_gradient::none;
  bool aux = false;           // uses the aux matrix
  bool aux_is_input = false;  // DGELU reads it; GELU_AUX writes it
};

cublasStatus_t plan_epilogue(std::uint32_t epilogue, epilogue_plan& plan, const char* call) {
  switch (epilogue) {
    case CUBLASLT_EPILOGUE_DEFAULT:
      break;
    case CUBLASLT_EPILOGUE_BIAS:
      plan.bias = true;
      break;
    case CUBLASLT_EPILOGUE_RELU:
    case CUBLASLT_EPILOGUE_RELU_BIAS:
      plan.act = activation::relu;
      plan.bias = epilogue == CUBLASLT_EPILOGUE_RELU_BIAS;
      break;
    case CUBLASLT_EPILOGUE_GELU:
    case CUBLASLT_EPILOGUE_GELU_BIAS:
    case CUBLASLT_EPILOGUE_GELU_AUX:
    case CUBLASLT_EPILOGUE_GELU_AUX_BIAS:
      plan.act = activation::gelu;
      plan.bias = (epilogue & CUBLASLT_EPILOGUE_BIAS) != 0;
      plan.aux = (epilogue & 128) != 0;
      break;
    case CUBLASLT_EPILOGUE_DGELU:
    case CUBLASLT_EPILOGUE_DGELU_BGRAD:
      plan.act = activation::gelu_gradient;
      plan.aux = plan.aux_is_input = true;
      if (epilogue == CUBLASLT_EPILOGUE_DGELU_BGRAD) {
        plan.bias = true;
        plan.gradient = bias_gradient::of_d;
      }
      break;
    case CUBLASLT_EPILOGUE_BGRADA:
    case CUBLASLT_EPILOGUE_BGRADB:
      plan.bias = true;
      plan.gradient = epilogue == CUBLASLT_EPILOGUE_BGRADA ? bias_gradient::of_a : bias_gradient::of_b;
      break;
    case CUBLASLT_EPILOGUE_RELU_AUX:
    case CUBLASLT_EPILOGUE_RELU_AUX_BIAS:
    case CUBLASLT_EPILOGUE_DRELU:
    case CUBLASLT_EPILOGUE_DRELU_BGRAD:
      return not_emulated(call, "epilogue " + std::to_string(epilogue) + " (the ReLU bit mask)");
    default:
      return CUBLAS_STATUS_INVALID_VALUE;
  }
  return CUBLAS_STATUS_SUCCESS;
}

// Everything the descriptors say, checked, into `call` (pointers to the
// matrices excepted). with_pointers: the bias and aux pointers must be set.
cublasStatus_t plan_matmul(cublasLtMatmulDesc_t desc_handle, cublasLtMatrixLayout_t a_handle, cublasLtMatrixLayout_t b_handle,
                           cublasLtMatrixLayout_t c_handle, cublasLtMatrixLayout_t d_handle, bool with_pointers, gemm_call& call, compute_plan& plan,
                           const char* name) {
  if (!desc_handle || !a_handle || !b_handle || !c_handle || !d_handle) return CUBLAS_STATUS_INVALID_VALUE;
  const lt_matmul_desc& desc = desc_of(desc_handle);
  const lt_layout &a = layout_of(a_handle), &b = layout_of(b_handle), &c = layout_of(c_handle), &d = layout_of(d_handle);
  for (const lt_layout* l : {&a, &b, &c, &d})
    if (cublasStatus_t s = check_layout(*l, name); s != CUBLAS_STATUS_SUCCESS) return s;
  if (!valid_op(desc.transa) || !valid_op(desc.transb)) return CUBLAS_STATUS_INVALID_VALUE;
  if (desc.transc != CUBLAS_OP_N) return CUBLAS_STATUS_NOT_SUPPORTED;  // cublasLt.h: only CUBLAS_OP_N
  if (desc.fill_mode != CUBLAS_FILL_MODE_FULL) return not_emulated(name, "a fill mode other than CUBLAS_FILL_MODE_FULL");
  if (desc.pointer_mode != CUBLASLT_POINTER_MODE_HOST && desc.pointer_mode != CUBLASLT_POINTER_MODE_DEVICE)
    return not_emulated(name, "vector alpha and beta (CUBLASLT_POINTER_MODE_*VECTOR*)");
  if (desc.a_scale || desc.b_scale || desc.c_scale || desc.d_scale || desc.amax_d) return not_emulated(name, "fp8 scaling and amax");

  const bool a_n = desc.transa == CUBLAS_OP_N, b_n = desc.transb == CUBLAS_OP_N;
  const auto m = a_n ? a.rows : a.cols, k = a_n ? a.cols : a.rows;
  const auto kb = b_n ? b.rows : b.cols, n = b_n ? b.cols : b.rows;
  if (kb != k || d.rows != m || d.cols != n || c.rows != m || c.cols != n) return CUBLAS_STATUS_INVALID_VALUE;
  if (a.batch_count != d.batch_count || b.batch_count != d.batch_count || c.batch_count != d.batch_count) return CUBLAS_STATUS_INVALID_VALUE;
  if (c.type != d.type) return CUBLAS_STATUS_NOT_SUPPORTED;

  const auto type_of = [](const lt_layout& l) { return static_cast<cudaDataType>(l.type); };
  const auto compute = static_cast<cublasComputeType_t>(desc.compute_type);
  if (cublasStatus_t s = plan_compute(compute, type_of(a), type_of(b), type_of(d), CUBLAS_DEFAULT_MATH, plan, name); s != CUBLAS_STATUS_SUCCESS)
    return s;
  // alpha and beta are of the descriptor's scale type; 16F compute may scale in float.
  const bool scale_ok = desc.scale_type == plan.scale_type || (plan.scale_type == CUDA_R_16F && desc.scale_type == CUDA_R_32F);
  if (!scale_ok) return CUBLAS_STATUS_NOT_SUPPORTED;
  plan.scale_type = static_cast<cudaDataType>(desc.scale_type);

  gemm_epilogue& e = call.epilogue;
  epilogue_plan ep;
  if (cublasStatus_t s = plan_epilogue(desc.epilogue, ep, name); s != CUBLAS_STATUS_SUCCESS) return s;
  e.act = ep.act;
  e.gradient = ep.gradient;
  if (ep.bias) {
    e.bias_type = desc.bias_data_type == -1 ? type_of(d) : static_cast<cudaDataType>(desc.bias_data_type);
    if (element_size(e.bias_type) == 0) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (with_pointers && !desc.bias) return CUBLAS_STATUS_INVALID_VALUE;
    e.bias = desc.bias;
    e.bias_stride = desc.bias_batch_stride;
  }
  if (ep.aux) {
    e.aux_type = desc.aux_data_type == -1 ? type_of(d) : static_cast<cudaDataType>(desc.aux_data_type);
    if (element_size(e.aux_type) == 0) return CUBLAS_STATUS_NOT_SUPPORTED;
    // cublasLt.h: the GELU input's leading dimension is a multiple of 8, at least D's rows.
    if (desc.aux_ld < static_cast<std::int64_t>(m) || desc.aux_ld % 8 != 0) return CUBLAS_STATUS_INVALID_VALUE;
    if (with_pointers && !desc.aux) return CUBLAS_STATUS_INVALID_VALUE;
    e.aux = desc.aux;
    e.aux_is_input = ep.aux_is_input;
    e.aux_ld = desc.aux_ld;
    e.aux_stride = desc.aux_batch_stride;
  }

  call.transa = static_cast<cublasOperation_t>(desc.transa);
  call.transb = static_cast<cublasOperation_t>(desc.transb);
  call.m = static_cast<int>(m);
  call.n = static_cast<int>(n);
  call.k = static_cast<int>(k);
  call.a = {nullptr, type_of(a), a.ld, a.batch_stride};
  call.b = {nullptr, type_of(b), b.ld, b.batch_stride};
  call.c = {nullptr, type_of(c), c.ld, c.batch_stride};
  call.d_type = type_of(d);
  call.ldd = d.ld;
  call.stride_d = d.batch_stride;
  call.accumulate_in_double = plan.accumulate_in_double;
  call.rounding = plan.rounding;
  call.batch_count = d.batch_count;
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t Adesc,
                                              cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
                                              cublasLtMatmulPreference_t preference, int requestedAlgoCount,
                                              cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int* returnAlgoCount) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (requestedAlgoCount <= 0 || !heuristicResultsArray || !returnAlgoCount || !preference) return CUBLAS_STATUS_INVALID_VALUE;
  gemm_call call;
  compute_plan plan;
  if (cublasStatus_t s = plan_matmul(desc, Adesc, Bdesc, Cdesc, Ddesc, false, call, plan, "cublasLtMatmulAlgoGetHeuristic");
      s != CUBLAS_STATUS_SUCCESS)
    return s;
  // One algorithm, the CPU BLAS, which needs no workspace.
  cublasLtMatmulHeuristicResult_t& result = heuristicResultsArray[0];
  std::memset(&result, 0, sizeof(result));
  result.workspaceSize = 0;
  result.state = CUBLAS_STATUS_SUCCESS;
  result.wavesCount = 1.0f;
  *returnAlgoCount = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha, const void* A, cublasLtMatrixLayout_t Adesc,
                              const void* B, cublasLtMatrixLayout_t Bdesc, const void* beta, const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
                              cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t*, void*, std::size_t, cudaStream_t) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!alpha || !beta) return CUBLAS_STATUS_INVALID_VALUE;
  gemm_call call;
  compute_plan plan;
  if (cublasStatus_t s = plan_matmul(desc, Adesc, Bdesc, Cdesc, Ddesc, true, call, plan, "cublasLtMatmul"); s != CUBLAS_STATUS_SUCCESS) return s;
  // In place (C == D) needs the same layout for both, as cuBLASLt requires.
  if (C == D && (call.c.ld != call.ldd || call.c.type != call.d_type)) return CUBLAS_STATUS_INVALID_VALUE;
  call.a.data = A;
  call.b.data = B;
  call.c.data = C;
  call.d = D;
  call.alpha = load_element<double>(alpha, plan.scale_type, 0);
  call.beta = load_element<double>(beta, plan.scale_type, 0);
  if (call.beta != 0 && !C) return CUBLAS_STATUS_INVALID_VALUE;
  call.name = "cublasLtMatmul";
  call.output_name = "D";
  call.caller = __builtin_return_address(0);
  return run_gemm(call);
}

}  // extern "C"
