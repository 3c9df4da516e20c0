// Checks each op's inputs, shapes its output and launches its kernel family.
#include "lockstep/ops.h"

#include <algorithm>
#include <array>

#include "builtin.h"
#include "matmul_tensor_core.h"
#include "runtime/backend.h"
#include "runtime/cublas.h"

namespace lockstep {
namespace {

constexpr std::array unary_names{"copy", "neg", "abs", "exp", "log", "sqrt", "relu", "sigmoid", "tanh", "square", "reciprocal"};
constexpr std::array binary_names{"add", "sub", "mul", "div", "maximum", "minimum", "pow", "eq", "lt", "gt"};
constexpr std::array reduce_names{"sum", "max", "min", "prod", "mean"};

template <class Op, std::size_t N>
Op parse_op(std::string_view name, const std::array<const char*, N>& names, const char* kind) {
  std::string known;
  for (std::size_t i = 0; i < N; ++i) {
    if (name == names[i]) return static_cast<Op>(i);
    known += (i ? ", " : "") + std::string(names[i]);
  }
  throw std::invalid_argument("unknown " + std::string(kind) + " operation '" + std::string(name) + "': use one of " + known);
}

// One row per float32 matmul algo: its kernel (the batched one is name +
// "_batched" + suffix), block shape, the C tile one block computes, and its
// dynamic shared memory. Simplest first, as in kernels/matmul.cu.
struct matmul_kernel {
  const char* algo;
  const char* name;
  const char* suffix;
  dim3 block;
  int tile_m, tile_n;
  std::size_t shared_bytes;
};
const matmul_kernel matmul_kernels[] = {
    {"naive", "matmul_naive", "", dim3(16, 16), 16, 16, 0},
    {"tiled_static", "matmul_tiled_static", "<16>", dim3(16, 16), 16, 16, 0},
    {"tiled_dynamic", "matmul_tiled_dynamic", "", dim3(16, 16), 16, 16, 2 * 16 * 16 * sizeof(float)},
    {"register_1d", "matmul_register_1d", "", dim3(512), 64, 64, 0},
    {"register_2d", "matmul_register_2d", "", dim3(256), 128, 128, 0},
    {"vectorized", "matmul_vectorized", "", dim3(256), 128, 128, 0},
    {"warp_tiled", "matmul_warp_tiled", "", dim3(256), 128, 128, 0},
    {"double_buffered", "matmul_double_buffered", "", dim3(256), 128, 256, 2 * 32 * (128 + 4 + 256) * sizeof(float)},
};

// map_contiguous / zip_contiguous over packed operands of out's shape.
template <class Op>
void launch_contiguous(const function& f, const tensor& out, const std::vector<tensor>& inputs, Op op) {
  const std::int64_t n = out.numel();
  if (n == 0) return;
  const std::int64_t vectors = (n * static_cast<std::int64_t>(itemsize(out.type())) + 15) / 16;
  std::vector<kernel_arg> args{detail::pointer_arg(out, true)};
  for (const tensor& in : inputs) args.push_back(detail::pointer_arg(in, false));
  args.push_back(kernel_arg::integer(n));
  args.push_back(kernel_arg::integer(static_cast<int>(op)));
  f.launch(detail::vector_launch_config(out.where(), vectors), args);
}

void check_same_device(const char* op, const tensor& a, const tensor& b) {
  if (!(a.where() == b.where()))
    throw std::invalid_argument(std::string(op) + ": the inputs are on different devices (" + a.where().str() + " and " + b.where().str() +
                                "); move one with .to(device)");
}

void check_same_dtype(const char* op, const tensor& a, const tensor& b) {
  if (a.type() != b.type())
    throw std::invalid_argument(std::string(op) + ": the inputs have different dtypes (" + dtype_name(a.type()) + " and " + dtype_name(b.type()) +
                                "); convert one with .to(dtype)");
}

bool needs_floating(unary_op op) {
  return op == unary_op::exp || op == unary_op::log || op == unary_op::sqrt || op == unary_op::sigmoid || op == unary_op::tanh ||
         op == unary_op::reciprocal;
}

}  // namespace

const char* op_name(unary_op op) { return unary_names.at(static_cast<std::size_t>(op)); }
const char* op_name(binary_op op) { return binary_names.at(static_cast<std::size_t>(op)); }
const char* op_name(reduce_op op) { return reduce_names.at(static_cast<std::size_t>(op)); }
unary_op parse_unary_op(std::string_view name) { return parse_op<unary_op>(name, unary_names, "unary"); }
binary_op parse_binary_op(std::string_view name) { return parse_op<binary_op>(name, binary_names, "binary"); }
reduce_op parse_reduce_op(std::string_view name) { return parse_op<reduce_op>(name, reduce_names, "reduce"); }

tensor map(unary_op op, const tensor& x) {
  if (needs_floating(op) && !is_floating(x.type()))
    throw std::invalid_argument(std::string(op_name(op)) + " needs a floating-point tensor, got " + x.describe() + "; convert it with .to(float32)");
  tensor out = tensor::empty(x.shape(), x.type(), x.where());
  if (x.is_contiguous()) {
    launch_contiguous(detail::builtin_function(x.where(), "map_contiguous", x.type()), out, {x}, op);
    return out;
  }
  detail::launch_elementwise(detail::builtin_function(x.where(), "map_strided", x.type()), out, {x},
                             {kernel_arg::integer(static_cast<int>(op))});
  return out;
}

tensor zip(binary_op op, const tensor& a, const tensor& b) {
  check_same_device(op_name(op), a, b);
  check_same_dtype(op_name(op), a, b);
  tensor out = tensor::empty(broadcast_shapes(a.shape(), b.shape()), a.type(), a.where());
  if (a.is_contiguous() && b.is_contiguous() && a.shape() == out.shape() && b.shape() == out.shape()) {
    launch_contiguous(detail::builtin_function(a.where(), "zip_contiguous", a.type()), out, {a, b}, op);
    return out;
  }
  detail::launch_elementwise(detail::builtin_function(a.where(), "zip_strided", a.type()), out, {a, b},
                             {kernel_arg::integer(static_cast<int>(op))});
  return out;
}

tensor reduce(reduce_op op, const tensor& x, int dim, bool keepdim) {
  if (x.ndim() == 0) throw shape_error(std::string(op_name(op)) + ": a 0-dimensional tensor has no dimension to reduce");
  if (dim < -x.ndim() || dim >= x.ndim())
    throw shape_error(std::string(op_name(op)) + ": dim " + std::to_string(dim) + " is out of range for " + x.describe());
  if (dim < 0) dim += x.ndim();
  if (x.shape()[dim] == 0) throw shape_error(std::string(op_name(op)) + ": dimension " + std::to_string(dim) + " of " + x.describe() + " is empty");
  if (op == reduce_op::mean && !is_floating(x.type()))
    throw std::invalid_argument("mean needs a floating-point tensor, got " + x.describe() + "; convert it with .to(float32)");
  shape_t kept = x.shape();
  kept[dim] = 1;
  tensor out = tensor::empty(kept, x.type(), x.where());
  const std::int64_t n_out = out.numel();
  if (n_out > 0) {
    // The kernel reads the input through a layout over the output's shape
    // (extent 1 at dim, so its ordinals walk the other dims) plus the full
    // extent and stride of dim.
    kernels::strided_layout in_layout = x.layout();
    const std::vector<kernel_arg> args{detail::pointer_arg(out, true),   detail::layout_arg(out.layout()),
                                       detail::pointer_arg(x, false),    detail::layout_arg(in_layout),
                                       kernel_arg::integer(dim),         kernel_arg::integer(n_out),
                                       kernel_arg::integer(static_cast<int>(op))};
    detail::builtin_function(x.where(), "reduce_dim", x.type()).launch(detail::grid_stride_config(n_out), args);
  }
  if (keepdim) return out;
  shape_t dropped = x.shape();
  dropped.erase(dropped.begin() + dim);
  return out.reshape(dropped);
}

tensor reduce_all(reduce_op op, const tensor& x) {
  if (op == reduce_op::mean && !is_floating(x.type()))
    throw std::invalid_argument("mean needs a floating-point tensor, got " + x.describe() + "; convert it with .to(float32)");
  const std::int64_t n = x.numel();
  if (n == 0 && op != reduce_op::sum && op != reduce_op::prod)
    throw shape_error(std::string(op_name(op)) + ": " + x.describe() + " has no elements (max, min and mean need at least one)");
  const tensor in = x.contiguous();
  tensor out = tensor::empty({}, x.type(), x.where());
  // Blocks of 256 threads, each loading 4 vectors of 16 bytes per iteration;
  // at most 1024 blocks: all resident at once on an H100 (132 SMs x 8), and
  // few enough for the emulator.
  constexpr std::int64_t threads = 256, unroll = 4, max_blocks = 1024;
  const std::int64_t per_block = threads * unroll * static_cast<std::int64_t>(16 / itemsize(x.type()));
  const int blocks = static_cast<int>(std::clamp<std::int64_t>((n + per_block - 1) / per_block, 1, max_blocks));
  // The per-block partials, in the kernels' accumulate type: float for half
  // types, double for float32 and float64, int64 for integers.
  const dtype wide = x.type() == dtype::float16 || x.type() == dtype::bfloat16 ? dtype::float32
                     : is_floating(x.type())                                   ? dtype::float64
                                                                               : dtype::int64;
  const tensor partials = tensor::empty({blocks}, wide, x.where());
  const kernel_arg code = kernel_arg::integer(static_cast<int>(op));
  detail::builtin_function(x.where(), "reduce_all_blocks", x.type())
      .launch(launch_config{dim3(static_cast<unsigned>(blocks)), dim3(threads), 0, nullptr},
              std::vector<kernel_arg>{detail::pointer_arg(partials, true), detail::pointer_arg(in, false), kernel_arg::integer(n), code});
  detail::builtin_function(x.where(), "reduce_all_finish", x.type())
      .launch(launch_config{dim3(1), dim3(threads), 0, nullptr},
              std::vector<kernel_arg>{detail::pointer_arg(out, true), detail::pointer_arg(partials, false), kernel_arg::integer(blocks),
                                      kernel_arg::integer(n), code});
  return out;
}

tensor copy(const tensor& x) {
  if (!x.is_contiguous()) return x.clone();  // packing a strided view takes the copy kernel
  tensor out = tensor::empty(x.shape(), x.type(), x.where());
  const std::size_t bytes = static_cast<std::size_t>(x.numel()) * itemsize(x.type());
  if (bytes) detail::backend_for(x.where()).copy_on_device(out.data(), x.data(), bytes, nullptr);
  return out;
}

tensor matmul(const tensor& a, const tensor& b, std::string_view algo) {
  check_same_device("matmul", a, b);
  if (algo == "auto") algo = a.type() == dtype::bfloat16 ? detail::default_bf16_algo(a.where()) : "double_buffered";
  const bool tensor_cores = detail::is_tensor_core_algo(algo) || a.type() == dtype::bfloat16;
  if (!tensor_cores && (a.type() != dtype::float32 || b.type() != dtype::float32))
    throw std::invalid_argument("matmul supports float32 tensors, got " + a.describe() + " and " + b.describe() +
                                "; convert with .to(float32) (bfloat16 runs with algo cublas, wmma or wgmma)");
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
  if (tensor_cores) return detail::matmul_tensor_core(a, b, algo);
  // The float32 kernels and how each is launched (tile sizes and thread
  // counts as in kernels/matmul.cu); "cublas" is the reference, not a kernel.
  const matmul_kernel* chosen = nullptr;
  for (const matmul_kernel& candidate : matmul_kernels)
    if (algo == candidate.algo) chosen = &candidate;
  const bool use_cublas = algo == "cublas";
  if (!chosen && !use_cublas) {
    std::string known;
    for (const matmul_kernel& candidate : matmul_kernels) known += std::string(candidate.algo) + ", ";
    throw std::invalid_argument("unknown matmul algo '" + std::string(algo) + "': use " + known + "or cublas");
  }
  if (use_cublas && a.where().kind != device::kind_t::cuda)
    throw std::invalid_argument("matmul algo 'cublas' (the reference) runs on cuda devices; " + a.describe() + " is on " + a.where().str());
  const std::string name = chosen ? chosen->name : "", suffix = chosen ? chosen->suffix : "";
  const std::size_t shared_bytes = chosen ? chosen->shared_bytes : 0;

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
  std::int64_t batch_count = 1;
  for (std::int64_t e : batch) batch_count *= e;
  if (c.numel() == 0) return c;

  const dim3 block = chosen ? chosen->block : dim3(), grid = chosen ? dim3(static_cast<unsigned>((n + chosen->tile_n - 1) / chosen->tile_n),
                                                                           static_cast<unsigned>((m + chosen->tile_m - 1) / chosen->tile_m))
                                                                    : dim3();
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  if (use_cublas) detail::backend_for(a.where()).make_current();
  if (batch.empty() && use_cublas) {
    detail::cublas_sgemm_row_major(static_cast<const float*>(a_rows.data()), static_cast<const float*>(b_rows.data()),
                                   static_cast<float*>(c.data()), mi, ni, ki, nullptr);
    return c;
  }
  // Over 48 KiB of dynamic shared memory a kernel needs its limit raised first.
  auto with_shared_limit = [&](const function& f) -> const function& {
    if (shared_bytes > 48 * 1024) f.set_max_dynamic_shared_bytes(static_cast<int>(shared_bytes));
    return f;
  };
  if (batch.empty()) {
    with_shared_limit(detail::builtin_function(a.where(), name + suffix))
        .launch(launch_config{grid, block, shared_bytes, nullptr},
                std::vector<kernel_arg>{detail::pointer_arg(a_rows, false), detail::pointer_arg(b_rows, false), detail::pointer_arg(c, true),
                                        kernel_arg::integer(mi), kernel_arg::integer(ni), kernel_arg::integer(ki)});
    return c;
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
      detail::cublas_sgemm_row_major(static_cast<const float*>(a_view.data()) + offsets[z], static_cast<const float*>(b_view.data()) + offsets[batch_count + z],
                                     static_cast<float*>(c.data()) + z * m * n, mi, ni, ki, nullptr);
    return c;
  }
  const tensor device_offsets = tensor::from_host(offsets.data(), {2 * batch_count}, dtype::int64, a.where());
  const function& f = with_shared_limit(detail::builtin_function(a.where(), name + "_batched" + suffix));
  constexpr std::int64_t max_grid_z = 65535;
  for (std::int64_t first = 0; first < batch_count; first += max_grid_z) {
    const std::int64_t count = std::min(max_grid_z, batch_count - first);
    const auto* a_offsets = static_cast<const long long*>(device_offsets.data()) + first;
    const auto* b_offsets = static_cast<const long long*>(device_offsets.data()) + batch_count + first;
    float* c_first = static_cast<float*>(c.data()) + first * m * n;
    f.launch(launch_config{dim3(grid.x, grid.y, static_cast<unsigned>(count)), block, shared_bytes, nullptr},
             std::vector<kernel_arg>{kernel_arg::pointer(a_view.data(), jit::scalar_type::float32, true),
                                     kernel_arg::pointer(b_view.data(), jit::scalar_type::float32, true),
                                     kernel_arg::pointer(c_first, jit::scalar_type::float32), kernel_arg::integer(mi), kernel_arg::integer(ni),
                                     kernel_arg::integer(ki), kernel_arg::pointer(a_offsets, jit::scalar_type::int64, true),
                                     kernel_arg::pointer(b_offsets, jit::scalar_type::int64, true)});
  }
  return c;
}

tensor rgb_to_grayscale(const tensor& image, std::string_view launch) {
  if (image.type() != dtype::uint8) throw std::invalid_argument("rgb_to_grayscale needs a uint8 image, got " + image.describe());
  const bool batched = image.ndim() == 4;
  if ((image.ndim() != 3 && !batched) || image.shape()[image.ndim() - 3] != 3)
    throw shape_error("rgb_to_grayscale needs a channels-first image (3, H, W) or batch (B, 3, H, W), got " + image.describe());
  if (launch != "vectorized" && launch != "1d" && launch != "2d")
    throw std::invalid_argument("rgb_to_grayscale: launch must be \"vectorized\", \"1d\" or \"2d\", got \"" + std::string(launch) + "\"");
  if (batched && launch == "1d") throw std::invalid_argument("rgb_to_grayscale: batches use the 2-D launch (one image per blockIdx.z)");
  const std::int64_t h = image.shape()[image.ndim() - 2], w = image.shape().back();
  if (launch != "vectorized" && 3 * h * w > INT32_MAX)
    throw shape_error("rgb_to_grayscale: the 1-D and 2-D kernels index an image with 32-bit ints; use launch \"vectorized\"");
  const tensor in = image.contiguous();  // the kernels read planes in place
  shape_t out_shape{h, w};
  if (batched) out_shape.insert(out_shape.begin(), image.shape()[0]);
  tensor out = tensor::empty(out_shape, dtype::uint8, image.where());
  if (out.numel() == 0) return out;
  if (launch == "vectorized") {
    // A thread per 16 pixels (one 16-byte vector of each plane).
    const std::int64_t images = batched ? image.shape()[0] : 1, chunks = (images * h * w + 15) / 16;
    detail::builtin_function(image.where(), "rgb_to_grayscale_vectorized")
        .launch(detail::vector_launch_config(image.where(), chunks),
                std::vector<kernel_arg>{detail::pointer_arg(out, true), detail::pointer_arg(in, false), kernel_arg::integer(h * w),
                                        kernel_arg::integer(images)});
    return out;
  }
  const int hi = static_cast<int>(h), wi = static_cast<int>(w);
  const std::vector<kernel_arg> two_d{detail::pointer_arg(out, true), detail::pointer_arg(in, false), kernel_arg::integer(wi), kernel_arg::integer(hi)};
  const dim3 grid2(static_cast<unsigned>((w + 15) / 16), static_cast<unsigned>((h + 15) / 16));
  if (batched) {
    const auto images = image.shape()[0];
    if (images > 65535) throw shape_error("rgb_to_grayscale: at most 65535 images per call (grid z)");
    detail::builtin_function(image.where(), "rgb_to_grayscale_batched")
        .launch(launch_config{dim3(grid2.x, grid2.y, static_cast<unsigned>(images)), dim3(16, 16), 0, nullptr}, two_d);
  } else if (launch == "2d") {
    detail::builtin_function(image.where(), "rgb_to_grayscale_2d").launch(launch_config{grid2, dim3(16, 16), 0, nullptr}, two_d);
  } else {
    const int pixels = hi * wi;
    detail::builtin_function(image.where(), "rgb_to_grayscale_1d")
        .launch(launch_config{dim3(static_cast<unsigned>((pixels + 255) / 256)), dim3(256), 0, nullptr},
                std::vector<kernel_arg>{detail::pointer_arg(out, true), detail::pointer_arg(in, false), kernel_arg::integer(pixels)});
  }
  return out;
}

}  // namespace lockstep
