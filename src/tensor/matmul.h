// matmul's algos inside the tensor layer: their recipe rows, the cuBLAS
// references, and the tensor-core path (matmul_tensor_core.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/kernels/matmul_epilogue.h"
#include "lockstep/kernels/matmul_tensor_core_recipes.h"
#include "lockstep/ops.h"

namespace lockstep::detail {

// The row of a kernel algo in either recipe table, or nullptr (a reference, or unknown).
const kernels::matmul_recipe* find_matmul_recipe(std::string_view algo);
// Whether `d` runs the row's kernels: gpu_only rows need a GPU, rows with an arch that GPU.
bool device_runs(const kernels::matmul_recipe& r, const device& d);
// The row's kernel for inputs of dtype t, or nullptr.
const char* matmul_kernel_for(const kernels::matmul_recipe& r, dtype t);

// The cuBLAS references, which have no recipe: "cublas" takes float32
// (SGEMM) and bfloat16 (GemmEx); "cublas_tf32" float32 through GemmEx on tf32 tensor cores.
inline constexpr const char* cublas_algo = "cublas";
inline constexpr const char* cublas_tf32_algo = "cublas_tf32";

// For messages: the names of matmul_algos(), or of those that take dtype t;
// and names as "a, b or c".
std::vector<std::string> matmul_algo_names();
std::vector<std::string> matmul_algo_names(dtype t);
std::string or_list(const std::vector<std::string>& names);

// matmul's epilogue once its arguments are checked against the output:
// bias (n,) and residual (the output's shape) packed, of its dtype and device.
struct checked_epilogue {
  float alpha = 1;
  std::optional<tensor> bias, residual;
  int activation = kernels::matmul_no_activation;

  // The kernels' argument for the product (or batch of products) whose C
  // starts `offset` elements into the output: its residual as far into the residual.
  kernel_arg kernel_argument(std::int64_t offset) const;
};
// Throws naming what is wrong with an argument; `out` is the (new) output.
checked_epilogue check_epilogue(const matmul_epilogue_args& args, const tensor& out);
// The epilogue applied to the product c of a kernel that does not take it,
// with map and zip (in place where they allow it).
tensor apply_epilogue_after(tensor c, const checked_epilogue& epilogue);

// a @ b with broadcast batch dimensions, for a tensor-core algo (a row of
// kernels::tensor_core_matmul_recipes or cublas_tf32) or for bfloat16 tensors
// (then also cublas); the output has the inputs' dtype.
tensor matmul_tensor_core(const tensor& a, const tensor& b, std::string_view algo, const matmul_epilogue_args& epilogue);

}  // namespace lockstep::detail
