// The kernels the built-in modules instantiate, gathered from the families'
// recipe tables and the dtype list: kernels/builtin_kernel_names.cpp prints
// them for the build (kernels/CMakeLists.txt), and a test compares them with
// what a loaded module holds. Host C++ only (std::string).
#pragma once
#include <initializer_list>
#include <string>

#include "lockstep/kernels/dtypes.h"
#include "lockstep/kernels/elementwise_recipes.h"
#include "lockstep/kernels/grayscale_recipes.h"
#include "lockstep/kernels/matmul_recipes.h"
#include "lockstep/kernels/matmul_tensor_core_recipes.h"
#include "lockstep/kernels/reduce_recipes.h"

namespace lockstep::kernels {

// Which module: the emulator's (the host compiler) or the GPU's (nvcc), which
// adds the kernels that only a GPU runs (matmul_recipe::gpu_only).
enum class builtin_module : int { emulator, gpu };

// Calls emit(name) once per kernel of `module`, each a name expression
// relative to lockstep::kernels ("matmul_naive", "map_strided<float>").
template <class Emit>
void for_each_builtin_kernel(builtin_module module, Emit&& emit) {
  for (const grayscale_recipe& r : grayscale_recipes) {
    emit(std::string(r.kernel));
    if (r.batched_kernel && std::string(r.batched_kernel) != r.kernel) emit(std::string(r.batched_kernel));
  }
  auto matmul_rows = [&](const auto& recipes) {
    for (const matmul_recipe& r : recipes) {
      if (r.gpu_only && module != builtin_module::gpu) continue;
      for (const char* kernel : {r.float32_kernel, r.batched_kernel, r.bfloat16_kernel})
        if (kernel) emit(std::string(kernel));
    }
  };
  matmul_rows(simt_matmul_recipes);
  matmul_rows(tensor_core_matmul_recipes);
  const char* const types[] = {
#define LOCKSTEP_DTYPE_TYPE_NAME(name, text, kernel_type, ...) #kernel_type,
      LOCKSTEP_DTYPES(LOCKSTEP_DTYPE_TYPE_NAME)
#undef LOCKSTEP_DTYPE_TYPE_NAME
  };
  for (const char* type : types) {
    for (const char* family : elementwise_kernels_per_dtype) emit(std::string(family) + "<" + type + ">");
    for (const char* family : reduce_kernels_per_dtype) emit(std::string(family) + "<" + type + ">");
    for (const char* to : types) emit(std::string(cast_kernel) + "<" + type + ", " + to + ">");
  }
}

}  // namespace lockstep::kernels
