// What the emulator keeps inside cuBLASLt's semi-opaque descriptors (the
// structs of cublasLt.h, which a program may allocate itself): each is
// placed in the descriptor's bytes by Create or Init.
#pragma once
#include <cstdint>
#include <new>

#include "lockstep/emu/cublas_lt.h"

namespace lockstep::emu::cublas {

struct lt_layout {
  std::uint32_t type = CUDA_R_32F;
  std::int32_t order = CUBLASLT_ORDER_COL;
  std::uint64_t rows = 0, cols = 0;
  std::int64_t ld = 0;
  std::int32_t batch_count = 1;
  std::int64_t batch_stride = 0;
  std::int64_t plane_offset = 0;
  std::uint32_t batch_mode = CUBLASLT_BATCH_MODE_STRIDED;
};

struct lt_matmul_desc {
  std::int32_t compute_type = CUBLAS_COMPUTE_32F;
  std::int32_t scale_type = CUDA_R_32F;
  std::int32_t pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  std::int32_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N, transc = CUBLAS_OP_N;
  std::int32_t fill_mode = CUBLAS_FILL_MODE_FULL;
  std::uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void* bias = nullptr;
  std::int64_t bias_batch_stride = 0;
  void* aux = nullptr;
  std::int64_t aux_ld = 0, aux_batch_stride = 0;
  std::int64_t alpha_vector_batch_stride = 0;
  std::int32_t sm_count_target = 0;
  // The fp8 scaling pointers: accepted as settings, refused by the matmul unless null.
  const void* a_scale = nullptr;
  const void* b_scale = nullptr;
  const void* c_scale = nullptr;
  const void* d_scale = nullptr;
  void* amax_d = nullptr;
  std::int32_t aux_data_type = -1;  // -1: D's type
  std::int8_t fast_accum = 0;
  std::int32_t bias_data_type = -1;  // -1: D's type
};

struct lt_preference {
  std::uint32_t search_mode = CUBLASLT_SEARCH_BEST_FIT;
  std::uint64_t max_workspace_bytes = 0;
  std::uint32_t reduction_scheme_mask = CUBLASLT_REDUCTION_SCHEME_MASK;
  std::uint32_t min_alignment[4] = {256, 256, 256, 256};  // A, B, C, D
  float max_waves_count = 0;
  std::uint64_t impl_mask = ~std::uint64_t{0};
};

static_assert(sizeof(lt_layout) <= sizeof(cublasLtMatrixLayoutOpaque_t));
static_assert(sizeof(lt_matmul_desc) <= sizeof(cublasLtMatmulDescOpaque_t));
static_assert(sizeof(lt_preference) <= sizeof(cublasLtMatmulPreferenceOpaque_t));

inline lt_layout& layout_of(cublasLtMatrixLayout_t d) { return *std::launder(reinterpret_cast<lt_layout*>(d->data)); }
inline lt_matmul_desc& desc_of(cublasLtMatmulDesc_t d) { return *std::launder(reinterpret_cast<lt_matmul_desc*>(d->data)); }
inline lt_preference& preference_of(cublasLtMatmulPreference_t d) { return *std::launder(reinterpret_cast<lt_preference*>(d->data)); }

}  // namespace lockstep::emu::cublas
