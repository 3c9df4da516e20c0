// matmul on the tensor cores: the rungs of kernels/matmul_tensor_core.cu as
// their recipe rows say (lockstep/kernels/matmul_tensor_core_recipes.h), each
// on float32 inputs through tf32 or on bfloat16, and the cuBLAS references
// "cublas" (bfloat16) and "cublas_tf32" (float32).
// The kernels take B as its transpose b_t[n,k] with unit stride along k: a B
// that is already such a view (x @ w.T with w of shape (n, k), as in
// nn.Linear) is used in place; any other B is copied once into that layout.
// The rungs take the epilogue (fused_epilogue); after cuBLAS it is applied
// by apply_epilogue_after.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "builtin.h"
#include "lockstep/cuda_libraries.h"
#include "lockstep/kernels/elementwise_recipes.h"
#include "lockstep/kernels/op_codes.h"
#include "matmul.h"

namespace lockstep::detail {
namespace {

bool is_k_major(const tensor& t) { return t.strides()[1] == 1 || t.shape()[1] == 1; }

// Elements from one row of a rows x cols matrix to the next, as the kernels
// and cuBLAS take it: a single row's stride is arbitrary, so it counts as packed.
std::int64_t row_stride(const tensor& t) { return t.shape()[0] == 1 ? t.shape()[1] : t.strides()[0]; }

// t (rows x cols) with unit stride along cols and a row stride that is a
// multiple of `row_multiple` elements (TMA wants 16-byte rows), from a
// 16-byte aligned start: t itself where it already is, else a zero-padded copy.
tensor rows_for_kernel(const tensor& t, std::int64_t row_multiple) {
  const std::int64_t rows = t.shape()[0], cols = t.shape()[1];
  const std::int64_t stride = row_stride(t);
  const bool usable = is_k_major(t) && stride >= cols && stride % row_multiple == 0 &&
                      reinterpret_cast<std::uintptr_t>(t.data()) % (row_multiple * itemsize(t.type())) == 0;
  if (usable) return t;
  const std::int64_t padded_cols = (cols + row_multiple - 1) / row_multiple * row_multiple;
  tensor padded = tensor::empty({rows, padded_cols}, t.type(), t.where());
  fill_bytes(t.where(), padded.data(), 0, static_cast<std::size_t>(padded.numel()) * itemsize(t.type()));
  launch_elementwise(builtin_function(t.where(), kernels::map_strided_kernel, t.type()), padded.slice(1, 0, cols), {t},
                     {kernel_arg::integer(static_cast<int>(kernels::unary_op::copy))});
  return padded;
}

// The TMA descriptor of a rows x cols matrix read in boxes of box_rows rows
// of the recipe's k tile, with the 128-byte swizzle the wgmma kernel's shared
// memory descriptors expect.
kernel_arg tma_map(const tensor& t, unsigned box_rows, const kernels::matmul_recipe& recipe) {
  const std::size_t element = itemsize(t.type());
  const tma_descriptor map = encode_tma_2d(t.where(), t.data(), scalar_type_of(t.type()), static_cast<std::uint64_t>(t.shape()[0]),
                                           static_cast<std::uint64_t>(t.shape()[1]), static_cast<std::uint64_t>(row_stride(t)) * element, box_rows,
                                           static_cast<unsigned>(recipe.tile_k_bytes / element), tma_swizzle::bytes_128);
  return kernel_arg::bytes(map.bytes, sizeof map.bytes, alignof(tma_descriptor));
}

// Over 48 KiB of dynamic shared memory a kernel needs its limit raised first.
const function& with_shared_limit(const function& f, int shared_bytes) {
  if (shared_bytes > 48 * 1024) f.set_max_dynamic_shared_bytes(shared_bytes);
  return f;
}

// One product c = a @ b_t^T of 2-D views, by a recipe's kernel or (recipe
// null) by cuBLAS; `epilogue` is the last argument of the kernels that take one.
void product(const tensor& a, const tensor& b_t, const tensor& c, const kernels::matmul_recipe* recipe, const kernel_arg& epilogue) {
  const device& d = a.where();
  const std::int64_t m = a.shape()[0], k = a.shape()[1], n = b_t.shape()[0];
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  const bool bf16 = a.type() == dtype::bfloat16;
  if (!recipe) {
    // cuBLAS wants unit stride along k and leading dimensions of at least k (k > 0 here).
    const tensor a_rows = rows_for_kernel(a, 1), b_rows = rows_for_kernel(b_t, 1);
    cublas_gemm_row_major_nt(d, bf16 ? tensor_core_precision::bf16 : tensor_core_precision::tf32, a_rows.data(), static_cast<int>(row_stride(a_rows)),
                             b_rows.data(), static_cast<int>(row_stride(b_rows)), c.data(), ni, mi, ni, ki);
    return;
  }
  const function& f = with_shared_limit(builtin_function(d, matmul_kernel_for(*recipe, a.type())), recipe->shared_bytes);
  const dim3 block(recipe->block_x, recipe->block_y);
  const std::size_t shared_bytes = static_cast<std::size_t>(recipe->shared_bytes);
  const std::int64_t tiles_n = (n + recipe->tile_n - 1) / recipe->tile_n, tiles_m = (m + recipe->tile_m - 1) / recipe->tile_m;
  switch (recipe->operands) {
    case kernels::matmul_operands::b_transposed: {
      const tensor a_rows = rows_for_kernel(a, 1), b_rows = rows_for_kernel(b_t, 1);
      std::vector<kernel_arg> args{pointer_arg(a_rows, false), kernel_arg::integer(row_stride(a_rows)),
                                   pointer_arg(b_rows, false), kernel_arg::integer(row_stride(b_rows)),
                                   pointer_arg(c, true),       kernel_arg::integer(ni),
                                   kernel_arg::integer(mi),    kernel_arg::integer(ni),
                                   kernel_arg::integer(ki)};
      if (recipe->fused_epilogue) args.push_back(epilogue);
      f.launch(launch_config{dim3(static_cast<unsigned>(tiles_n), static_cast<unsigned>(tiles_m)), block, shared_bytes, nullptr}, args);
      return;
    }
    case kernels::matmul_operands::tma_b_transposed: {
      // TMA reads rows that are 16-byte multiples.
      const std::int64_t row_multiple = 16 / static_cast<std::int64_t>(itemsize(a.type()));
      const tensor a_rows = rows_for_kernel(a, row_multiple), b_rows = rows_for_kernel(b_t, row_multiple);
      // A persistent grid: at most one block per multiprocessor walks the tiles.
      const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(tiles_m * tiles_n, multiprocessor_count(d)));
      std::vector<kernel_arg> args{tma_map(a_rows, static_cast<unsigned>(recipe->tile_m), *recipe),
                                   tma_map(b_rows, static_cast<unsigned>(recipe->tile_n), *recipe),
                                   pointer_arg(c, true),
                                   kernel_arg::integer(ni),
                                   kernel_arg::integer(mi),
                                   kernel_arg::integer(ni),
                                   kernel_arg::integer(ki)};
      if (recipe->fused_epilogue) args.push_back(epilogue);
      f.launch(launch_config{dim3(blocks), block, shared_bytes, nullptr}, args);
      return;
    }
    case kernels::matmul_operands::row_major:
      break;
  }
  throw std::logic_error(std::string("matmul algo '") + recipe->algo + "' takes row-major operands, not the tensor-core path's");
}

// The matrix at flat batch index z of t, whose leading dimensions are `batch`.
tensor matrix_at(tensor t, const shape_t& batch, std::int64_t z) {
  for (int dim = static_cast<int>(batch.size()) - 1; dim >= 0; --dim) {
    t = t.select(dim, z % batch[dim]);
    z /= batch[dim];
  }
  return t;
}

std::string dtype_list(const std::vector<dtype>& dtypes) {
  if (dtypes.size() == 1) return dtype_name(dtypes[0]);
  std::string list;
  for (std::size_t i = 0; i < dtypes.size(); ++i)
    list += (i == 0 ? "two " : i + 1 == dtypes.size() ? " or two " : ", two ") + std::string(dtype_name(dtypes[i]));
  return list;
}

}  // namespace

tensor matmul_tensor_core(const tensor& a, const tensor& b, std::string_view algo, const matmul_epilogue_args& epilogue_args) {
  const kernels::matmul_recipe* recipe = find_matmul_recipe(algo);
  if (recipe && recipe->operands == kernels::matmul_operands::row_major) {
    std::vector<std::string> bf16_algos = matmul_algo_names(dtype::bfloat16);
    bf16_algos.push_back("auto");
    throw std::invalid_argument("matmul algo '" + std::string(algo) + "' is a float32 kernel; bfloat16 tensors run with algo " + or_list(bf16_algos) +
                                ", or convert with .to(float32)");
  }
  // The dtypes the algo takes: its kernels', or the reference's (cublas here means bfloat16, float32 taking SGEMM before).
  std::vector<dtype> takes;
  if (recipe) {
    for (dtype t : {dtype::float32, dtype::bfloat16})
      if (matmul_kernel_for(*recipe, t)) takes.push_back(t);
  } else {
    takes.push_back(algo == cublas_algo ? dtype::bfloat16 : dtype::float32);
  }
  const bool dtype_ok = a.type() == b.type() && std::find(takes.begin(), takes.end(), a.type()) != takes.end();
  const std::string named = algo == cublas_algo ? "cublas_bf16" : std::string(algo);
  if (!dtype_ok)
    throw std::invalid_argument("matmul algo '" + named + "' takes " + dtype_list(takes) + " tensors, got " + a.describe() + " and " + b.describe() +
                                "; convert with .to(...)");
  const device& d = a.where();
  // The tensor-core rungs d runs, to suggest instead.
  std::vector<std::string> runnable;
  for (const kernels::matmul_recipe& r : kernels::tensor_core_matmul_recipes)
    if (device_runs(r, d) && matmul_kernel_for(r, a.type())) runnable.push_back("'" + std::string(r.algo) + "'");
  if ((!recipe || recipe->gpu_only) && d.kind != device::kind_t::cuda)
    throw std::invalid_argument("matmul algo '" + named + "' runs on cuda devices only; " + a.describe() + " is on " + d.str() +
                                " (on the emulator use algo " + or_list(runnable) + ")");
  if (recipe && !device_runs(*recipe, d))
    throw std::invalid_argument("matmul algo '" + named + "' needs a GPU of arch " + recipe->arch + "; " + d.str() + " is " + device_arch(d) +
                                ": use algo " + or_list(runnable));
  const std::int64_t m = a.shape()[a.ndim() - 2], k = a.shape().back(), n = b.shape().back();

  const shape_t a_batch(a.shape().begin(), a.shape().end() - 2), b_batch(b.shape().begin(), b.shape().end() - 2);
  const shape_t batch = broadcast_shapes(a_batch, b_batch);
  shape_t a_full = batch, b_full = batch, out_shape = batch;
  a_full.insert(a_full.end(), {m, k});
  b_full.insert(b_full.end(), {k, n});
  out_shape.insert(out_shape.end(), {m, n});
  tensor c = tensor::empty(out_shape, a.type(), d);
  const checked_epilogue epilogue = check_epilogue(epilogue_args, c);
  if (c.numel() == 0) return c;
  if (k == 0) {  // an empty sum: zeros (all-zero bytes in both dtypes), and no kernel to apply the epilogue
    fill_bytes(d, c.data(), 0, static_cast<std::size_t>(c.numel()) * itemsize(c.type()));
    return apply_epilogue_after(c, epilogue);
  }
  const tensor a_view = a.expand(a_full), b_view = b.expand(b_full);
  std::int64_t batch_count = 1;
  for (std::int64_t e : batch) batch_count *= e;
  const bool fused = recipe && recipe->fused_epilogue;
  for (std::int64_t z = 0; z < batch_count; ++z) {
    const tensor b_t = matrix_at(b_view, batch, z).transpose(0, 1);
    product(matrix_at(a_view, batch, z), is_k_major(b_t) ? b_t : b_t.contiguous(), matrix_at(c, batch, z), recipe,
            epilogue.kernel_argument(z * m * n));
  }
  return fused ? c : apply_epilogue_after(c, epilogue);
}

}  // namespace lockstep::detail
