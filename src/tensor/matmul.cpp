// matmul: checks, the algo's recipe row (lockstep/kernels/matmul_recipes.h),
// and the float32 SIMT ladder's launches (batched with broadcast batch
// dimensions) or cuBLAS SGEMM; tensor-core algos and bfloat16 tensors go to
// matmul_tensor_core.cpp. The epilogue's checks, its kernel argument, and its
// unfused form for the algos whose kernels do not take it.
#include "matmul.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <type_traits>
#include <vector>

#include "builtin.h"
#include "lockstep/cuda_libraries.h"

namespace lockstep {
namespace detail {

const kernels::matmul_recipe* find_matmul_recipe(std::string_view algo) {
  for (const kernels::matmul_recipe& r : kernels::simt_matmul_recipes)
    if (algo == r.algo) return &r;
  for (const kernels::matmul_recipe& r : kernels::tensor_core_matmul_recipes)
    if (algo == r.algo) return &r;
  return nullptr;
}

bool device_runs(const kernels::matmul_recipe& r, const device& d) {
  if ((r.gpu_only || r.arch) && d.kind != device::kind_t::cuda) return false;
  return !r.arch || device_arch(d) == r.arch;
}

const char* matmul_kernel_for(const kernels::matmul_recipe& r, dtype t) {
  return t == dtype::float32 ? r.float32_kernel : t == dtype::bfloat16 ? r.bfloat16_kernel : nullptr;
}

std::string or_list(const std::vector<std::string>& names) {
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i) list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return list;
}

std::vector<std::string> matmul_algo_names() {
  std::vector<std::string> names;
  for (const matmul_algo_info& algo : matmul_algos()) names.push_back(algo.name);
  return names;
}

std::vector<std::string> matmul_algo_names(dtype t) {
  std::vector<std::string> names;
  for (const matmul_algo_info& algo : matmul_algos())
    if (std::find(algo.dtypes.begin(), algo.dtypes.end(), t) != algo.dtypes.end()) names.push_back(algo.name);
  return names;
}

namespace {

// bias or residual, checked against the output `out` and packed.
tensor epilogue_operand(const tensor& t, const char* what, const tensor& out) {
  if (!(t.where() == out.where()))
    throw std::invalid_argument(std::string("matmul: the ") + what + " is on " + t.where().str() + ", the output on " + out.where().str() +
                                "; move it with .to(\"" + out.where().str() + "\")");
  if (t.type() != out.type())
    throw std::invalid_argument(std::string("matmul: the ") + what + " is a " + t.describe() + ", the output a " + out.describe() + ": the " + what +
                                " must have the output's dtype; convert it with .to(" + dtype_name(out.type()) + ")");
  return t.contiguous();
}

unary_op activation_op(const std::variant<unary_op, std::string>& activation) {
  if (const auto* name = std::get_if<std::string>(&activation)) {
    try {
      return parse_unary_op(*name);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("matmul's activation: ") + e.what());
    }
  }
  const unary_op op = std::get<unary_op>(activation);
  for (const auto& row : kernels::unary_ops)
    if (row.op == op) return op;
  throw std::invalid_argument("matmul: the activation is not a unary op (code " + std::to_string(static_cast<int>(op)) +
                              "); use one of unary_op's values");
}

}  // namespace

checked_epilogue check_epilogue(const matmul_epilogue_args& args, const tensor& out) {
  checked_epilogue e;
  e.alpha = static_cast<float>(args.alpha);
  const std::int64_t n = out.shape().back();
  if (args.bias) {
    const tensor& bias = *args.bias;
    const bool row_shape = (bias.ndim() == 1 && bias.shape()[0] == n) || (bias.ndim() == 2 && bias.shape()[0] == 1 && bias.shape()[1] == n);
    if (!row_shape)
      throw shape_error("matmul: the bias is added to every row of the output (" + out.describe() + "), so it must have shape (" + std::to_string(n) +
                        ",) or (1, " + std::to_string(n) + "); got " + bias.describe());
    e.bias = epilogue_operand(bias, "bias", out);
  }
  if (args.residual) {
    const tensor& residual = *args.residual;
    if (residual.shape() != out.shape())
      throw shape_error("matmul: the residual is added elementwise, so it must have the output's shape (" + out.describe() + "); got " +
                        residual.describe() + " (to add one that broadcasts, expand it to the output's shape first)");
    e.residual = epilogue_operand(residual, "residual", out);
  }
  if (args.activation) e.activation = static_cast<int>(activation_op(*args.activation));
  return e;
}

kernel_arg checked_epilogue::kernel_argument(std::int64_t offset) const {
  kernels::matmul_epilogue e;
  e.alpha = alpha;
  e.activation = activation;
  if (bias) e.bias = bias->data();
  if (residual) e.residual = static_cast<const unsigned char*>(residual->data()) + offset * static_cast<std::int64_t>(itemsize(residual->type()));
  static_assert(std::is_trivially_copyable_v<kernels::matmul_epilogue>, "passed by value as the kernels' argument");
  return kernel_arg::bytes(&e, sizeof e, alignof(kernels::matmul_epilogue));
}

tensor apply_epilogue_after(tensor c, const checked_epilogue& epilogue) {
  if (epilogue.alpha != 1.0f) {
    const tensor alpha = tensor::from_host(&epilogue.alpha, {}, dtype::float32, c.where()).to(c.type());
    zip_into(binary_op::mul, c, alpha, c);
  }
  if (epilogue.bias) zip_into(binary_op::add, c, *epilogue.bias, c);
  if (epilogue.activation != kernels::matmul_no_activation) c = map(static_cast<unary_op>(epilogue.activation), c);
  if (epilogue.residual) zip_into(binary_op::add, c, *epilogue.residual, c);
  return c;
}

}  // namespace detail

namespace {

matmul_algo_info algo_info(const kernels::matmul_recipe& r, const char* family) {
  matmul_algo_info info;
  info.name = r.algo;
  info.family = family;
  for (dtype t : {dtype::float32, dtype::bfloat16}) {
    if (const char* kernel = detail::matmul_kernel_for(r, t)) {
      info.dtypes.push_back(t);
      info.kernels.emplace_back(t, kernel);
    }
  }
  info.batched_kernel = r.batched_kernel ? r.batched_kernel : "";
  info.block = dim3(r.block_x, r.block_y);
  info.tile_m = r.tile_m;
  info.tile_n = r.tile_n;
  info.tile_k_bytes = r.tile_k_bytes;
  info.shared_bytes = static_cast<std::size_t>(r.shared_bytes);
  info.tensor_cores = r.tensor_cores;
  info.fused_epilogue = r.fused_epilogue;
  info.gpu_only = r.gpu_only;
  info.arch = r.arch ? r.arch : "";
  info.lecture = r.lecture;
  return info;
}

matmul_algo_info reference_info(const char* name, std::vector<dtype> dtypes, bool tensor_cores) {
  matmul_algo_info info;
  info.name = name;
  info.family = "reference";
  info.dtypes = std::move(dtypes);
  info.tensor_cores = tensor_cores;
  info.gpu_only = true;
  return info;
}

// Over 48 KiB of dynamic shared memory a kernel needs its limit raised first.
const function& with_shared_limit(const function& f, std::size_t shared_bytes) {
  if (shared_bytes > 48 * 1024) f.set_max_dynamic_shared_bytes(static_cast<int>(shared_bytes));
  return f;
}

}  // namespace

std::vector<matmul_algo_info> matmul_algos() {
  std::vector<matmul_algo_info> algos;
  for (const kernels::matmul_recipe& r : kernels::simt_matmul_recipes) algos.push_back(algo_info(r, "simt"));
  for (const kernels::matmul_recipe& r : kernels::tensor_core_matmul_recipes) algos.push_back(algo_info(r, "tensor_core"));
  algos.push_back(reference_info(detail::cublas_algo, {dtype::float32, dtype::bfloat16}, false));
  algos.push_back(reference_info(detail::cublas_tf32_algo, {dtype::float32}, true));
  return algos;
}

std::vector<std::string> auto_matmul_candidates(dtype t) {
  if (t != dtype::bfloat16) return {kernels::matmul_auto_float32};
  return std::vector<std::string>(std::begin(kernels::matmul_auto_bfloat16), std::end(kernels::matmul_auto_bfloat16));
}

std::string auto_matmul_algo(dtype t, const device& d) {
  if (t != dtype::bfloat16 && d.kind != device::kind_t::cuda) return kernels::matmul_auto_float32_emulator;
  const std::vector<std::string> candidates = auto_matmul_candidates(t);
  for (const std::string& algo : candidates) {
    const kernels::matmul_recipe* recipe = detail::find_matmul_recipe(algo);
    if (!recipe || detail::device_runs(*recipe, d)) return algo;
  }
  return candidates.back();
}

tensor matmul(const tensor& a, const tensor& b, std::string_view requested, const matmul_epilogue_args& epilogue_args) {
  detail::check_same_device("matmul", a, b);
  const std::string algo = requested == "auto" ? auto_matmul_algo(a.type(), a.where()) : std::string(requested);
  const kernels::matmul_recipe* recipe = detail::find_matmul_recipe(algo);
  const bool use_cublas = algo == detail::cublas_algo;
  if (!recipe && !use_cublas && algo != detail::cublas_tf32_algo)
    throw std::invalid_argument("unknown matmul algo '" + algo + "': use " + detail::or_list(detail::matmul_algo_names()));
  // Row-major float32 operands go to the SIMT ladder or SGEMM here; B as its transpose to the tensor-core path.
  const bool simt = a.type() != dtype::bfloat16 && (use_cublas || (recipe && recipe->operands == kernels::matmul_operands::row_major));
  if (simt && (a.type() != dtype::float32 || b.type() != dtype::float32))
    throw std::invalid_argument("matmul supports float32 tensors, got " + a.describe() + " and " + b.describe() +
                                "; convert with .to(float32) (bfloat16 runs with algo " +
                                detail::or_list(detail::matmul_algo_names(dtype::bfloat16)) + ")");
  if (a.ndim() < 2 || b.ndim() < 2)
    throw shape_error("matmul needs tensors of at least 2 dimensions, got " + a.describe() + " and " + b.describe() + "; use unsqueeze for vectors");
  const std::int64_t m = a.shape()[a.ndim() - 2], k = a.shape().back(), n = b.shape().back();
  if (b.shape()[b.ndim() - 2] != k)
    throw shape_error("matmul: inner dimensions differ: " + a.describe() + " @ " + b.describe() + " (" + std::to_string(k) + " vs " +
                      std::to_string(b.shape()[b.ndim() - 2]) + ")");
  // Each kernel computes row * k + i, i * n + col and row * n + col in int.
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || m * k > INT32_MAX || k * n > INT32_MAX || m * n > INT32_MAX)
    throw shape_error("matmul: the kernels index matrices with 32-bit ints: " + a.describe() + " @ " + b.describe() +
                      " has a matrix of more than 2^31 - 1 elements");
  if (!simt) return detail::matmul_tensor_core(a, b, algo, epilogue_args);
  if (use_cublas && a.where().kind != device::kind_t::cuda)
    throw std::invalid_argument("matmul algo 'cublas' (the reference) runs on cuda devices; " + a.describe() + " is on " + a.where().str());

  // Batch dimensions broadcast like NumPy's; each matrix must be row-major.
  const shape_t a_batch(a.shape().begin(), a.shape().end() - 2), b_batch(b.shape().begin(), b.shape().end() - 2);
  shape_t batch = broadcast_shapes(a_batch, b_batch);
  auto matrices_row_major = [](const tensor& t, std::int64_t cols) {
    return (t.strides().back() == 1 || t.shape().back() == 1) && (t.strides()[t.ndim() - 2] == cols || t.shape()[t.ndim() - 2] == 1);
  };
  const tensor a_rows = matrices_row_major(a, k) ? a : a.contiguous();
  const tensor b_rows = matrices_row_major(b, n) ? b : b.contiguous();
  shape_t out_shape = batch;
  out_shape.push_back(m);
  out_shape.push_back(n);
  tensor c = tensor::empty(out_shape, dtype::float32, a.where());
  const detail::checked_epilogue epilogue = detail::check_epilogue(epilogue_args, c);
  std::int64_t batch_count = 1;
  for (std::int64_t e : batch) batch_count *= e;
  if (c.numel() == 0) return c;
  // The recipe's kernels take the epilogue as their last argument; after the others it is applied here.
  const bool fused = recipe && recipe->fused_epilogue;
  auto finished = [&](const tensor& product) { return fused ? product : detail::apply_epilogue_after(product, epilogue); };

  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  if (batch.empty() && use_cublas) {
    cublas_sgemm_row_major(a.where(), static_cast<const float*>(a_rows.data()), static_cast<const float*>(b_rows.data()),
                           static_cast<float*>(c.data()), mi, ni, ki);
    return finished(c);
  }
  // The recipe's launch: a block per tile_m x tile_n tile of C.
  const dim3 block = recipe ? dim3(recipe->block_x, recipe->block_y) : dim3();
  const dim3 grid = recipe ? dim3(static_cast<unsigned>((n + recipe->tile_n - 1) / recipe->tile_n),
                                  static_cast<unsigned>((m + recipe->tile_m - 1) / recipe->tile_m))
                           : dim3();
  const std::size_t shared_bytes = recipe ? static_cast<std::size_t>(recipe->shared_bytes) : 0;
  if (batch.empty()) {
    std::vector<kernel_arg> args{detail::pointer_arg(a_rows, false),
                                 detail::pointer_arg(b_rows, false),
                                 detail::pointer_arg(c, true),
                                 kernel_arg::integer(mi),
                                 kernel_arg::integer(ni),
                                 kernel_arg::integer(ki)};
    if (fused) args.push_back(epilogue.kernel_argument(0));
    with_shared_limit(detail::builtin_function(a.where(), recipe->float32_kernel), shared_bytes)
        .launch(launch_config{grid, block, shared_bytes, nullptr}, args);
    return finished(c);
  }
  // Element offsets of each product's A and B (repeating where a batch
  // dimension is broadcast), computed here and read by the kernel per blockIdx.z.
  shape_t a_full = batch, b_full = batch;
  a_full.insert(a_full.end(), {m, k});
  b_full.insert(b_full.end(), {k, n});
  const tensor a_view = a_rows.expand(a_full), b_view = b_rows.expand(b_full);
  std::vector<std::int64_t> offsets(2 * batch_count);
  for (std::int64_t z = 0; z < batch_count; ++z) {
    std::int64_t rest = z, a_off = 0, b_off = 0;
    for (int d = static_cast<int>(batch.size()) - 1; d >= 0; --d) {
      const std::int64_t i = rest % batch[d];
      rest /= batch[d];
      a_off += i * a_view.strides()[d];
      b_off += i * b_view.strides()[d];
    }
    offsets[z] = a_off;
    offsets[batch_count + z] = b_off;
  }
  if (use_cublas) {
    for (std::int64_t z = 0; z < batch_count; ++z)
      cublas_sgemm_row_major(a.where(), static_cast<const float*>(a_view.data()) + offsets[z],
                             static_cast<const float*>(b_view.data()) + offsets[batch_count + z], static_cast<float*>(c.data()) + z * m * n, mi, ni,
                             ki);
    return finished(c);
  }
  const tensor device_offsets = tensor::from_host(offsets.data(), {2 * batch_count}, dtype::int64, a.where());
  const function& f = with_shared_limit(detail::builtin_function(a.where(), recipe->batched_kernel), shared_bytes);
  constexpr std::int64_t max_grid_z = 65535;
  for (std::int64_t first = 0; first < batch_count; first += max_grid_z) {
    const std::int64_t count = std::min(max_grid_z, batch_count - first);
    const auto* a_offsets = static_cast<const long long*>(device_offsets.data()) + first;
    const auto* b_offsets = static_cast<const long long*>(device_offsets.data()) + batch_count + first;
    float* c_first = static_cast<float*>(c.data()) + first * m * n;
    std::vector<kernel_arg> args{kernel_arg::pointer(a_view.data(), jit::scalar_type::float32, true),
                                 kernel_arg::pointer(b_view.data(), jit::scalar_type::float32, true),
                                 kernel_arg::pointer(c_first, jit::scalar_type::float32),
                                 kernel_arg::integer(mi),
                                 kernel_arg::integer(ni),
                                 kernel_arg::integer(ki),
                                 kernel_arg::pointer(a_offsets, jit::scalar_type::int64, true),
                                 kernel_arg::pointer(b_offsets, jit::scalar_type::int64, true)};
    if (fused) args.push_back(epilogue.kernel_argument(first * m * n));
    f.launch(launch_config{dim3(grid.x, grid.y, static_cast<unsigned>(count)), block, shared_bytes, nullptr}, args);
  }
  return finished(c);
}

}  // namespace lockstep
