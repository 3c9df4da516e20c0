// The library's operations on tensors, each a kernel family in kernels/:
// map (unary), zip (binary, NumPy broadcasting), reduce (along one dim or all),
// matmul (the lectures' ladder, batched with broadcast batch dimensions) and
// RGB -> grayscale. Inputs may be any strided views; every op checks dtype,
// device and shape and says what is wrong.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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
// (..., m, k) @ (..., k, n), batch dimensions broadcast, with one of
// matmul_algos(): float32, the SIMT ladder of kernels/matmul.cu (simplest to
// fastest) or "cublas" (the reference, cuda only); on tensor cores
// (kernels/matmul_tensor_core.cu), float32 through tf32 or bfloat16, its rungs
// with references "cublas" (bfloat16) and "cublas_tf32"; the output has the
// inputs' dtype. "auto" (the default): auto_matmul_algo.
tensor matmul(const tensor& a, const tensor& b, std::string_view algo = "auto");

// One algo matmul takes, as its recipe row says
// (lockstep/kernels/matmul_recipes.h, matmul_tensor_core_recipes.h), or a
// cuBLAS reference (family "reference", no kernels).
struct matmul_algo_info {
  std::string name;
  std::string family;                                  // "simt", "tensor_core" or "reference"
  std::vector<dtype> dtypes;                           // the input dtypes it takes
  std::vector<std::pair<dtype, std::string>> kernels;  // per input dtype, its kernel in lockstep::kernels
  std::string batched_kernel;                          // "" if none
  dim3 block;
  int tile_m = 0, tile_n = 0, tile_k_bytes = 0;
  std::size_t shared_bytes = 0;  // dynamic, per block
  bool tensor_cores = false;
  bool gpu_only = false;
  std::string arch;  // the GPUs it needs ("sm_90"), "" for any
  bool lecture = false;
};
// Every algo, simplest first: the SIMT ladder, the tensor-core rungs, the references.
std::vector<matmul_algo_info> matmul_algos();
// The algos "auto" considers for inputs of dtype t, in order
// (kernels::matmul_auto_float32, kernels::matmul_auto_bfloat16), and the one it
// runs on d: the first d runs.
std::vector<std::string> auto_matmul_candidates(dtype t);
std::string auto_matmul_algo(dtype t, const device& d);
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
