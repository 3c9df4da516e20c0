// The element types cuBLAS routines read and write (CUDA_R_16F, 16BF, 32F,
// 64F), converted to and from the type the emulator accumulates in, and the
// rounding of float inputs that the GPU's fast compute types apply.
#pragma once
#include <cstddef>
#include <cstdint>

#include "lockstep/emu/half.h"
#include "lockstep/emu/library_types.h"

namespace lockstep::emu::cublas {

// Bytes per element, or 0 for a type the emulator does not run.
constexpr std::size_t element_size(cudaDataType type) {
  switch (type) {
    case CUDA_R_16F:
    case CUDA_R_16BF:
      return 2;
    case CUDA_R_32F:
      return 4;
    case CUDA_R_64F:
      return 8;
    default:
      return 0;
  }
}

template <class T>
T load_element(const void* data, cudaDataType type, std::size_t index) {
  switch (type) {
    case CUDA_R_16F:
      return static_cast<T>(static_cast<float>(static_cast<const __half*>(data)[index]));
    case CUDA_R_16BF:
      return static_cast<T>(static_cast<float>(static_cast<const __nv_bfloat16*>(data)[index]));
    case CUDA_R_32F:
      return static_cast<T>(static_cast<const float*>(data)[index]);
    default:
      return static_cast<T>(static_cast<const double*>(data)[index]);
  }
}

// Rounds to nearest even into 16-bit types, as the GPU's conversions do.
template <class T>
void store_element(void* data, cudaDataType type, std::size_t index, T value) {
  switch (type) {
    case CUDA_R_16F:
      static_cast<__half*>(data)[index] = __half(static_cast<float>(value));
      return;
    case CUDA_R_16BF:
      static_cast<__nv_bfloat16*>(data)[index] = __nv_bfloat16(static_cast<float>(value));
      return;
    case CUDA_R_32F:
      static_cast<float*>(data)[index] = static_cast<float>(value);
      return;
    default:
      static_cast<double*>(data)[index] = static_cast<double>(value);
      return;
  }
}

// What float inputs become before the products: the fast compute types
// (CUBLAS_COMPUTE_32F_FAST_*, or CUBLAS_TF32_TENSOR_OP_MATH) let the GPU feed
// them to tensor cores as tf32, bf16 or half.
enum class input_rounding { none, tf32, bf16, f16 };
float round_input(float value, input_rounding rounding);

}  // namespace lockstep::emu::cublas
