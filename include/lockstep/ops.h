// The library's operations on tensors, each a kernel family in kernels/:
// map (unary), zip (binary, NumPy broadcasting), reduce (along one dim or all),
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
// Every element to one value: a 0-dimensional tensor of x's dtype (sum of
// nothing is 0, product 1; max, min and mean of nothing throw shape_error).
// Strided inputs are packed first; the kernels read 16-byte vectors.
tensor reduce_all(reduce_op op, const tensor& x);
// (..., m, k) @ (..., k, n), batch dimensions broadcast. algo, float32: the
// SIMT ladder of kernels/matmul.cu, simplest to fastest: "naive",
// "tiled_static", "tiled_dynamic", "register_1d", "register_2d", "vectorized",
// "warp_tiled", "double_buffered"; or "cublas" (the reference, cuda only).
// On tensor cores (kernels/matmul_tensor_core.cu), float32 or bfloat16: "wmma"
// and "wgmma" (Hopper GPUs), float32 through tf32 or bfloat16, with references
// "cublas" (bfloat16) and "cublas_tf32"; the output has the inputs' dtype.
// "auto" (the default): double_buffered for float32; for bfloat16 wgmma on a
// Hopper GPU, else wmma.
tensor matmul(const tensor& a, const tensor& b, std::string_view algo = "auto");
// uint8 (3, H, W) -> (H, W); (B, 3, H, W) -> (B, H, W). launch "vectorized"
// (16 pixels per thread), or the lecture's "1d" or "2d" (for batches "2d" is
// the batched kernel; "1d" takes no batch); all give the same bits.
tensor rgb_to_grayscale(const tensor& image, std::string_view launch = "vectorized");
// A new packed copy of x on its device: a contiguous x is copied with the
// device's memcpy (cuMemcpyDtoD on a GPU, the copy-bandwidth reference);
// a strided one is packed by the copy kernel, as clone() does.
tensor copy(const tensor& x);

const char* op_name(unary_op op);
const char* op_name(binary_op op);
const char* op_name(reduce_op op);
unary_op parse_unary_op(std::string_view name);
binary_op parse_binary_op(std::string_view name);
reduce_op parse_reduce_op(std::string_view name);

}  // namespace lockstep
