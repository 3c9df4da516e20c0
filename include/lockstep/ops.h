// The library's operations on tensors, each a kernel family in kernels/:
// map (unary), zip (binary, NumPy broadcasting), reduce (along one dim or all),
// matmul (the lectures' ladder, batched with broadcast batch dimensions) and
// RGB -> grayscale. Inputs may be any strided views; every op checks dtype,
// device and shape and says what is wrong.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "lockstep/kernels/op_codes.h"
#include "lockstep/tensor.h"

namespace lockstep {

using kernels::binary_op;
using kernels::reduce_op;
using kernels::unary_op;

tensor map(unary_op op, const tensor& x);
// a and b of one dtype (the Python layer promotes); the output has their
// dtype, or bool for the comparison and logical ops (gives_bool).
tensor zip(binary_op op, const tensor& a, const tensor& b);
// The same into `out`, any view of the broadcast shape with zip's output
// dtype (in-place operators write through views this way).
void zip_into(binary_op op, const tensor& a, const tensor& b, const tensor& out);
// Writes `source`, broadcast to dst's shape and cast to its dtype, into dst
// (any view; copy_, fill_ and __setitem__).
void copy_into(const tensor& dst, const tensor& source);
// condition (bool) ? a : b, broadcast together; a and b of one dtype.
tensor where(const tensor& condition, const tensor& a, const tensor& b);
// x with `dim` replaced by the positions `index` (int64, 1-D, each in range:
// the caller checks) names along it: integer-array indexing, a new tensor.
tensor index_select(const tensor& x, int dim, const tensor& index);
// Fills `out` with start + i * step (arange), or PyTorch's linspace from
// start to end with that step (from_end: the second half counts back from end).
void fill_sequence(const tensor& out, double start, double step, double end = 0, bool from_end = false);
// Fills `out` with counter-based random numbers (element i from seed and
// offset + i, the same on every device): uniform in [low, high), normal
// (mean low, deviation high), or integers in [low, high).
enum class random_kind : int { uniform = 0, normal = 1, integers = 2 };
void fill_random(const tensor& out, std::uint64_t seed, std::uint64_t offset, random_kind kind, double low, double high);
// keepdim leaves the reduced dimension with extent 1, as NumPy's keepdims.
// The output has x's dtype, except sum and prod of bool and integer tensors:
// int64, as PyTorch's.
tensor reduce(reduce_op op, const tensor& x, int dim, bool keepdim = false);
// Every element to one value: a 0-dimensional tensor of reduce's dtype (sum of
// nothing is 0, product 1; max, min and mean of nothing throw shape_error).
// Strided inputs are packed first; the kernels read 16-byte vectors.
tensor reduce_all(reduce_op op, const tensor& x);
// The int64 index of the largest (want_max) or smallest element along dim.
tensor arg_reduce(const tensor& x, int dim, bool keepdim, bool want_max);
// (..., m, k) @ (..., k, n), batch dimensions broadcast, with one of
// matmul_algos(): float32, the SIMT ladder of kernels/matmul.cu (simplest to
// fastest) or "cublas" (the reference, cuda only); on tensor cores
// (kernels/matmul_tensor_core.cu), float32 through tf32 or bfloat16, its rungs
// with references "cublas" (bfloat16) and "cublas_tf32"; the output has the
// inputs' dtype. "auto" (the default): auto_matmul_algo.
//
// The epilogue (cuBLASLt's): the output is act(alpha * (a @ b) + bias) +
// residual. bias has shape (n,) or (1, n) and is added to every row of every
// product; residual has the output's shape; both have the output's dtype and
// device (strided ones are packed first). activation is a unary op, or its
// name ("relu", "gelu", "gelu_tanh", "sigmoid", "tanh", ...). The algos whose
// kernels take it (matmul_algo_info::fused_epilogue) apply it as they store
// the product, at no extra pass over memory; after the others matmul applies
// it with map and zip, which gives the same result.
struct matmul_epilogue_args {
  double alpha = 1;
  std::optional<tensor> bias, residual;
  std::optional<std::variant<unary_op, std::string>> activation;
};
tensor matmul(const tensor& a, const tensor& b, std::string_view algo = "auto", const matmul_epilogue_args& epilogue = {});

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
  bool fused_epilogue = false;  // its kernels apply matmul's epilogue as they store
  bool gpu_only = false;
  std::string arch;  // the GPUs it needs ("sm_90"), "" for any
  bool lecture = false;
};
// Every algo, simplest first: the SIMT ladder, the tensor-core rungs, the references.
std::vector<matmul_algo_info> matmul_algos();
// The algos "auto" considers for inputs of dtype t on a GPU, in order
// (kernels::matmul_auto_float32, kernels::matmul_auto_bfloat16), and the one it
// runs on d: the first d runs; float32 on the emulator runs
// kernels::matmul_auto_float32_emulator.
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
