// The library's operations on tensors, each a kernel family in kernels/:
// map (unary), zip (binary, NumPy broadcasting), reduce (along one dim),
// matmul (the lectures' ladder, batched with broadcast batch dimensions) and
// RGB -> grayscale. Inputs may be any strided views; every op checks dtype,
// device and shape and says what is wrong.
#pragma once
#include <string_view>

#include "lockstep/kernels/op_codes.h"
#include "lockstep/tensor.h"

namespace lockstep {

using kernels::binary_op;
using kernels::reduce_op;
using kernels::unary_op;

tensor map(unary_op op, const tensor& x);
tensor zip(binary_op op, const tensor& a, const tensor& b);
// keepdim leaves the reduced dimension with extent 1, as NumPy's keepdims.
tensor reduce(reduce_op op, const tensor& x, int dim, bool keepdim = false);
// algo: "naive", "tiled_static", "tiled_dynamic", or "cublas" (the reference,
// cuda devices only); float32 (..., m, k) @ (..., k, n).
tensor matmul(const tensor& a, const tensor& b, std::string_view algo = "tiled_static");
// uint8 (3, H, W) -> (H, W) with launch "1d" or "2d"; (B, 3, H, W) -> (B, H, W).
tensor rgb_to_grayscale(const tensor& image, std::string_view launch = "2d");

const char* op_name(unary_op op);
const char* op_name(binary_op op);
const char* op_name(reduce_op op);
unary_op parse_unary_op(std::string_view name);
binary_op parse_binary_op(std::string_view name);
reduce_op parse_reduce_op(std::string_view name);

}  // namespace lockstep
