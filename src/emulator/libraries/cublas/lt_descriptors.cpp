// cuBLASLt's handle, descriptors and their attributes. Attributes are stored
// as cublasLt.h types them, and a size that does not match is refused, as
// cuBLASLt does.
#include <cstring>
#include <new>

#include "context.h"
#include "lt_descriptors.h"

using namespace lockstep::emu::cublas;

namespace {

struct field {
  void* data = nullptr;
  std::size_t size = 0;
};
template <class T>
field of(T& value) {
  return {&value, sizeof(T)};
}

field layout_field(lt_layout& l, cublasLtMatrixLayoutAttribute_t attr) {
  switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE:
      return of(l.type);
    case CUBLASLT_MATRIX_LAYOUT_ORDER:
      return of(l.order);
    case CUBLASLT_MATRIX_LAYOUT_ROWS:
      return of(l.rows);
    case CUBLASLT_MATRIX_LAYOUT_COLS:
      return of(l.cols);
    case CUBLASLT_MATRIX_LAYOUT_LD:
      return of(l.ld);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
      return of(l.batch_count);
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
      return of(l.batch_stride);
    case CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET:
      return of(l.plane_offset);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_MODE:
      return of(l.batch_mode);
  }
  return {};
}

field desc_field(lt_matmul_desc& d, cublasLtMatmulDescAttributes_t attr) {
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE:
      return of(d.compute_type);
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE:
      return of(d.scale_type);
    case CUBLASLT_MATMUL_DESC_POINTER_MODE:
      return of(d.pointer_mode);
    case CUBLASLT_MATMUL_DESC_TRANSA:
      return of(d.transa);
    case CUBLASLT_MATMUL_DESC_TRANSB:
      return of(d.transb);
    case CUBLASLT_MATMUL_DESC_TRANSC:
      return of(d.transc);
    case CUBLASLT_MATMUL_DESC_FILL_MODE:
      return of(d.fill_mode);
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
      return of(d.epilogue);
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
      return of(d.bias);
    case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE:
      return of(d.bias_batch_stride);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER:
      return of(d.aux);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD:
      return of(d.aux_ld);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE:
      return of(d.aux_batch_stride);
    case CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE:
      return of(d.alpha_vector_batch_stride);
    case CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET:
      return of(d.sm_count_target);
    case CUBLASLT_MATMUL_DESC_A_SCALE_POINTER:
      return of(d.a_scale);
    case CUBLASLT_MATMUL_DESC_B_SCALE_POINTER:
      return of(d.b_scale);
    case CUBLASLT_MATMUL_DESC_C_SCALE_POINTER:
      return of(d.c_scale);
    case CUBLASLT_MATMUL_DESC_D_SCALE_POINTER:
      return of(d.d_scale);
    case CUBLASLT_MATMUL_DESC_AMAX_D_POINTER:
      return of(d.amax_d);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE:
      return of(d.aux_data_type);
    case CUBLASLT_MATMUL_DESC_FAST_ACCUM:
      return of(d.fast_accum);
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
      return of(d.bias_data_type);
    default:
      return {};
  }
}

field preference_field(lt_preference& p, cublasLtMatmulPreferenceAttributes_t attr) {
  switch (attr) {
    case CUBLASLT_MATMUL_PREF_SEARCH_MODE:
      return of(p.search_mode);
    case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
      return of(p.max_workspace_bytes);
    case CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK:
      return of(p.reduction_scheme_mask);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
      return of(p.min_alignment[0]);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
      return of(p.min_alignment[1]);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
      return of(p.min_alignment[2]);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES:
      return of(p.min_alignment[3]);
    case CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT:
      return of(p.max_waves_count);
    case CUBLASLT_MATMUL_PREF_IMPL_MASK:
      return of(p.impl_mask);
  }
  return {};
}

cublasStatus_t set_field(field f, const void* buf, std::size_t size) {
  if (!f.data || !buf || size != f.size) return CUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(f.data, buf, size);
  return CUBLAS_STATUS_SUCCESS;
}

// sizeInBytes 0 asks for the size; otherwise it must be the attribute's.
cublasStatus_t get_field(field f, void* buf, std::size_t size, std::size_t* written) {
  if (!f.data) return CUBLAS_STATUS_INVALID_VALUE;
  if (size == 0) {
    if (!written) return CUBLAS_STATUS_INVALID_VALUE;
    *written = f.size;
    return CUBLAS_STATUS_SUCCESS;
  }
  if (!buf || size != f.size) return CUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(buf, f.data, size);
  if (written) *written = size;
  return CUBLAS_STATUS_SUCCESS;
}

void init_layout(cublasLtMatrixLayout_t layout, cudaDataType type, std::uint64_t rows, std::uint64_t cols, std::int64_t ld) {
  lt_layout* l = new (layout->data) lt_layout;
  l->type = type;
  l->rows = rows;
  l->cols = cols;
  l->ld = ld;
}

void init_desc(cublasLtMatmulDesc_t desc, cublasComputeType_t compute, cudaDataType_t scale) {
  lt_matmul_desc* d = new (desc->data) lt_matmul_desc;
  d->compute_type = compute;
  d->scale_type = scale;
}

}  // namespace

extern "C" {

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
  if (cublasStatus_t status = blas_status(); status != CUBLAS_STATUS_SUCCESS) return status;
  *handle = new (std::nothrow) cublasLtContext;
  return *handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

const char* cublasLtGetStatusName(cublasStatus_t status) { return cublasGetStatusName(status); }
const char* cublasLtGetStatusString(cublasStatus_t status) { return cublasGetStatusString(status); }
std::size_t cublasLtGetVersion(void) { return CUBLAS_VERSION; }
std::size_t cublasLtGetCudartVersion(void) { return cublasGetCudartVersion(); }
cublasStatus_t cublasLtGetProperty(libraryPropertyType type, int* value) { return cublasGetProperty(type, value); }

cublasStatus_t cublasLtMatrixLayoutInit_internal(cublasLtMatrixLayout_t layout, std::size_t size, cudaDataType type, std::uint64_t rows,
                                                 std::uint64_t cols, std::int64_t ld) {
  if (!layout) return CUBLAS_STATUS_INVALID_VALUE;
  if (size < sizeof(lt_layout)) return CUBLAS_STATUS_ALLOC_FAILED;
  init_layout(layout, type, rows, cols, ld);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type, std::uint64_t rows, std::uint64_t cols,
                                          std::int64_t ld) {
  if (!layout) return CUBLAS_STATUS_INVALID_VALUE;
  *layout = new (std::nothrow) cublasLtMatrixLayoutOpaque_t;
  if (!*layout) return CUBLAS_STATUS_ALLOC_FAILED;
  init_layout(*layout, type, rows, cols, ld);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  delete layout;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr, const void* buf,
                                                std::size_t size) {
  if (!layout) return CUBLAS_STATUS_INVALID_VALUE;
  return set_field(layout_field(layout_of(layout), attr), buf, size);
}

cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr, void* buf, std::size_t size,
                                                std::size_t* written) {
  if (!layout) return CUBLAS_STATUS_INVALID_VALUE;
  return get_field(layout_field(layout_of(layout), attr), buf, size, written);
}

cublasStatus_t cublasLtMatmulDescInit_internal(cublasLtMatmulDesc_t desc, std::size_t size, cublasComputeType_t compute, cudaDataType_t scale) {
  if (!desc) return CUBLAS_STATUS_INVALID_VALUE;
  if (size < sizeof(lt_matmul_desc)) return CUBLAS_STATUS_ALLOC_FAILED;
  init_desc(desc, compute, scale);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute, cudaDataType_t scale) {
  if (!desc) return CUBLAS_STATUS_INVALID_VALUE;
  *desc = new (std::nothrow) cublasLtMatmulDescOpaque_t;
  if (!*desc) return CUBLAS_STATUS_ALLOC_FAILED;
  init_desc(*desc, compute, scale);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  delete desc;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const void* buf, std::size_t size) {
  if (!desc) return CUBLAS_STATUS_INVALID_VALUE;
  return set_field(desc_field(desc_of(desc), attr), buf, size);
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, void* buf, std::size_t size,
                                              std::size_t* written) {
  if (!desc) return CUBLAS_STATUS_INVALID_VALUE;
  return get_field(desc_field(desc_of(desc), attr), buf, size, written);
}

cublasStatus_t cublasLtMatmulPreferenceInit_internal(cublasLtMatmulPreference_t pref, std::size_t size) {
  if (!pref) return CUBLAS_STATUS_INVALID_VALUE;
  if (size < sizeof(lt_preference)) return CUBLAS_STATUS_ALLOC_FAILED;
  new (pref->data) lt_preference;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  if (!pref) return CUBLAS_STATUS_INVALID_VALUE;
  *pref = new (std::nothrow) cublasLtMatmulPreferenceOpaque_t;
  if (!*pref) return CUBLAS_STATUS_ALLOC_FAILED;
  new ((*pref)->data) lt_preference;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  delete pref;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
                                                    std::size_t size) {
  if (!pref) return CUBLAS_STATUS_INVALID_VALUE;
  return set_field(preference_field(preference_of(pref), attr), buf, size);
}

cublasStatus_t cublasLtMatmulPreferenceGetAttribute(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, void* buf,
                                                    std::size_t size, std::size_t* written) {
  if (!pref) return CUBLAS_STATUS_INVALID_VALUE;
  return get_field(preference_field(preference_of(pref), attr), buf, size, written);
}

}  // extern "C"
