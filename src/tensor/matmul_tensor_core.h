// matmul's tensor-core algos and the bfloat16 path (see the .cpp).
#pragma once
#include <string_view>

#include "lockstep/tensor.h"

namespace lockstep::detail {

bool is_tensor_core_algo(std::string_view algo);  // wmma, wgmma, cublas_tf32
std::string_view default_bf16_algo(const device& d);  // wgmma on Hopper, else wmma
// a @ b with broadcast batch dimensions, for a tensor-core algo or for
// bfloat16 tensors (algo cublas); the output has the inputs' dtype.
tensor matmul_tensor_core(const tensor& a, const tensor& b, std::string_view algo);

}  // namespace lockstep::detail
