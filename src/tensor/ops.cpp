// Checks each op's inputs, shapes its output and launches its kernel family
// (matmul: matmul.cpp). Op names and properties come from the op lists of
// lockstep/kernels/op_codes.h, kernel names and launch shapes from the
// families' recipe headers.
#include "lockstep/ops.h"

#include <algorithm>
#include <iterator>

#include "builtin.h"
#include "lockstep/kernels/elementwise_recipes.h"
#include "lockstep/kernels/grayscale_recipes.h"
#include "lockstep/kernels/reduce_recipes.h"

namespace lockstep {
namespace {

template <class Row, std::size_t N, class Op>
const Row& row_of(Op op, const Row (&rows)[N]) {
  for (const Row& row : rows)
    if (row.op == op) return row;
  throw std::invalid_argument("not an operation: " + std::to_string(static_cast<int>(op)));
}

template <class Op, class Row, std::size_t N>
Op parse_op(std::string_view name, const Row (&rows)[N], const char* kind) {
  std::string known;
  for (const Row& row : rows) {
    if (name == row.name) return row.op;
    known += (known.empty() ? "" : ", ") + std::string(row.name);
  }
  throw std::invalid_argument("unknown " + std::string(kind) + " operation '" + std::string(name) + "': use one of " + known);
}

template <class Op, std::size_t N>
void check_floating(Op op, const kernels::op_row<Op> (&rows)[N], const tensor& x) {
  if (row_of(op, rows).floating_only && !is_floating(x.type()))
    throw std::invalid_argument(std::string(op_name(op)) + " needs a floating-point tensor, got " + x.describe() + "; convert it with .to(float32)");
}

// map_contiguous / zip_contiguous over packed operands of out's shape.
template <class Op>
void launch_contiguous(const function& f, const tensor& out, const std::vector<tensor>& inputs, Op op) {
  const std::int64_t n = out.numel();
  if (n == 0) return;
  const std::int64_t vectors = (n * static_cast<std::int64_t>(itemsize(out.type())) + kernels::vector_bytes - 1) / kernels::vector_bytes;
  std::vector<kernel_arg> args{detail::pointer_arg(out, true)};
  for (const tensor& in : inputs) args.push_back(detail::pointer_arg(in, false));
  args.push_back(kernel_arg::integer(n));
  args.push_back(kernel_arg::integer(static_cast<int>(op)));
  f.launch(detail::vector_launch_config(out.where(), vectors), args);
}

void check_same_dtype(const char* op, const tensor& a, const tensor& b) {
  if (a.type() != b.type())
    throw std::invalid_argument(std::string(op) + ": the inputs have different dtypes (" + dtype_name(a.type()) + " and " + dtype_name(b.type()) +
                                "); convert one with .to(dtype)");
}

}  // namespace

const char* op_name(unary_op op) { return row_of(op, kernels::unary_ops).name; }
const char* op_name(binary_op op) { return row_of(op, kernels::binary_ops).name; }
const char* op_name(reduce_op op) { return row_of(op, kernels::reduce_ops).name; }
unary_op parse_unary_op(std::string_view name) { return parse_op<unary_op>(name, kernels::unary_ops, "unary"); }
binary_op parse_binary_op(std::string_view name) { return parse_op<binary_op>(name, kernels::binary_ops, "binary"); }
reduce_op parse_reduce_op(std::string_view name) { return parse_op<reduce_op>(name, kernels::reduce_ops, "reduce"); }

tensor map(unary_op op, const tensor& x) {
  check_floating(op, kernels::unary_ops, x);
  tensor out = tensor::empty(x.shape(), x.type(), x.where());
  if (x.is_contiguous()) {
    launch_contiguous(detail::builtin_function(x.where(), kernels::map_contiguous_kernel, x.type()), out, {x}, op);
    return out;
  }
  detail::launch_elementwise(detail::builtin_function(x.where(), kernels::map_strided_kernel, x.type()), out, {x},
                             {kernel_arg::integer(static_cast<int>(op))});
  return out;
}

namespace {

dtype zip_output_dtype(binary_op op, const tensor& a, const tensor& b) {
  check_same_dtype(op_name(op), a, b);
  const kernels::binary_op_row& row = row_of(op, kernels::binary_ops);
  if (row.integers_only && is_floating(a.type()))
    throw std::invalid_argument(std::string(op_name(op)) + " needs integer or bool tensors, got " + a.describe());
  return row.gives_bool ? dtype::boolean : a.type();
}

}  // namespace

void zip_into(binary_op op, const tensor& a, const tensor& b, const tensor& out) {
  detail::check_same_device(op_name(op), a, b);
  detail::check_same_device(op_name(op), a, out);
  const dtype result = zip_output_dtype(op, a, b);
  if (out.type() != result)
    throw std::invalid_argument(std::string(op_name(op)) + ": the output is " + out.describe() + ", the result " + dtype_name(result));
  if (broadcast_shapes(a.shape(), b.shape()) != out.shape())
    throw shape_error(std::string(op_name(op)) + ": the inputs broadcast to " +
                      tensor::empty(broadcast_shapes(a.shape(), b.shape()), result).describe() + ", not to the output's shape (" + out.describe() +
                      ")");
  const kernel_arg code = kernel_arg::integer(static_cast<int>(op));
  if (row_of(op, kernels::binary_ops).gives_bool) {
    detail::launch_elementwise(detail::builtin_function(a.where(), kernels::compare_strided_kernel, a.type()), out, {a, b}, {code});
    return;
  }
  if (out.is_contiguous() && a.is_contiguous() && b.is_contiguous() && a.shape() == out.shape() && b.shape() == out.shape()) {
    launch_contiguous(detail::builtin_function(a.where(), kernels::zip_contiguous_kernel, a.type()), out, {a, b}, op);
    return;
  }
  detail::launch_elementwise(detail::builtin_function(a.where(), kernels::zip_strided_kernel, a.type()), out, {a, b}, {code});
}

tensor zip(binary_op op, const tensor& a, const tensor& b) {
  detail::check_same_device(op_name(op), a, b);
  tensor out = tensor::empty(broadcast_shapes(a.shape(), b.shape()), zip_output_dtype(op, a, b), a.where());
  zip_into(op, a, b, out);
  return out;
}

void copy_into(const tensor& dst, const tensor& source) {
  detail::check_same_device("copy", dst, source);
  if (broadcast_shapes(source.shape(), dst.shape()) != dst.shape())
    throw shape_error("copy: " + source.describe() + " does not broadcast to the destination's shape (" + dst.describe() + ")");
  detail::launch_elementwise(detail::builtin_function(dst.where(), std::string(kernels::cast_kernel) + "<" + kernel_type_name(source.type()) + ", " +
                                                                       kernel_type_name(dst.type()) + ">"),
                             dst, {source}, {});
}

tensor where(const tensor& condition, const tensor& a, const tensor& b) {
  detail::check_same_device("where", condition, a);
  detail::check_same_device("where", a, b);
  if (condition.type() != dtype::boolean) throw std::invalid_argument("where: the condition must be a bool tensor, got " + condition.describe());
  check_same_dtype("where", a, b);
  tensor out = tensor::empty(broadcast_shapes(condition.shape(), broadcast_shapes(a.shape(), b.shape())), a.type(), a.where());
  detail::launch_elementwise(detail::builtin_function(a.where(), kernels::where_strided_kernel, a.type()), out, {condition, a, b}, {});
  return out;
}

tensor index_select(const tensor& x, int dim, const tensor& index) {
  detail::check_same_device("index_select", x, index);
  if (index.type() != dtype::int64 || index.ndim() != 1)
    throw std::invalid_argument("index_select: the index must be a 1-D int64 tensor, got " + index.describe());
  if (x.ndim() == 0) throw shape_error("index_select: a 0-dimensional tensor has no dimension to index");
  if (dim < -x.ndim() || dim >= x.ndim()) throw shape_error("index_select: dim " + std::to_string(dim) + " is out of range for " + x.describe());
  if (dim < 0) dim += x.ndim();
  shape_t shape = x.shape();
  shape[dim] = index.numel();
  tensor out = tensor::empty(shape, x.type(), x.where());
  if (out.numel() == 0) return out;
  // The input read over the output's shape: stride 0 along dim, whose position the kernel adds from the index.
  const tensor along = x.slice(dim, 0, 1).expand(shape);
  const tensor positions = index.contiguous();
  detail::builtin_function(x.where(), kernels::index_select_kernel, x.type())
      .launch(detail::grid_stride_config(out.numel()),
              std::vector<kernel_arg>{detail::pointer_arg(out, true), detail::layout_arg(out.layout()), detail::pointer_arg(along, false),
                                      detail::layout_arg(along.layout()), detail::pointer_arg(positions, false), kernel_arg::integer(dim),
                                      kernel_arg::integer(x.strides()[dim]), kernel_arg::integer(out.numel())});
  return out;
}

void fill_sequence(const tensor& out, double start, double step, double end, bool from_end) {
  if (out.numel() == 0) return;
  detail::builtin_function(out.where(), kernels::iota_kernel, out.type())
      .launch(detail::grid_stride_config(out.numel()),
              std::vector<kernel_arg>{detail::pointer_arg(out, true), detail::layout_arg(out.layout()), kernel_arg::integer(out.numel()),
                                      kernel_arg::real(start), kernel_arg::real(step), kernel_arg::real(end), kernel_arg::integer(from_end ? 1 : 0)});
}

void fill_random(const tensor& out, std::uint64_t seed, std::uint64_t offset, random_kind kind, double low, double high) {
  if (out.numel() == 0) return;
  detail::builtin_function(out.where(), kernels::random_kernel, out.type())
      .launch(detail::grid_stride_config(out.numel()),
              std::vector<kernel_arg>{detail::pointer_arg(out, true), detail::layout_arg(out.layout()), kernel_arg::integer(out.numel()),
                                      kernel_arg::typed<unsigned long long>(seed), kernel_arg::typed<unsigned long long>(offset),
                                      kernel_arg::integer(static_cast<int>(kind)), kernel_arg::real(low), kernel_arg::real(high)});
}

namespace {
// Sums and products of bool and integer tensors accumulate in, and give, int64 (PyTorch's rule).
tensor widened_for(reduce_op op, const tensor& x) {
  const bool widens = (op == reduce_op::sum || op == reduce_op::prod) && !is_floating(x.type()) && x.type() != dtype::int64;
  return widens ? x.to(dtype::int64) : x;
}
}  // namespace

tensor arg_reduce(const tensor& x, int dim, bool keepdim, bool want_max) {
  const char* name = want_max ? "argmax" : "argmin";
  if (x.ndim() == 0) return arg_reduce(x.reshape({1}), 0, false, want_max).reshape({});
  if (dim < -x.ndim() || dim >= x.ndim())
    throw shape_error(std::string(name) + ": dim " + std::to_string(dim) + " is out of range for " + x.describe());
  if (dim < 0) dim += x.ndim();
  if (x.shape()[dim] == 0) throw shape_error(std::string(name) + ": dimension " + std::to_string(dim) + " of " + x.describe() + " is empty");
  shape_t kept = x.shape();
  kept[dim] = 1;
  tensor out = tensor::empty(kept, dtype::int64, x.where());
  if (out.numel() > 0)
    detail::builtin_function(x.where(), kernels::arg_reduce_dim_kernel, x.type())
        .launch(detail::grid_stride_config(out.numel()),
                std::vector<kernel_arg>{detail::pointer_arg(out, true), detail::layout_arg(out.layout()), detail::pointer_arg(x, false),
                                        detail::layout_arg(x.layout()), kernel_arg::integer(dim), kernel_arg::integer(out.numel()),
                                        kernel_arg::integer(want_max ? 1 : 0)});
  if (keepdim) return out;
  shape_t dropped = x.shape();
  dropped.erase(dropped.begin() + dim);
  return out.reshape(dropped);
}

tensor reduce(reduce_op op, const tensor& given, int dim, bool keepdim) {
  const tensor x = widened_for(op, given);
  if (x.ndim() == 0) throw shape_error(std::string(op_name(op)) + ": a 0-dimensional tensor has no dimension to reduce");
  if (dim < -x.ndim() || dim >= x.ndim())
    throw shape_error(std::string(op_name(op)) + ": dim " + std::to_string(dim) + " is out of range for " + x.describe());
  if (dim < 0) dim += x.ndim();
  const bool has_identity = op == reduce_op::sum || op == reduce_op::prod;
  if (x.shape()[dim] == 0 && !has_identity)
    throw shape_error(std::string(op_name(op)) + ": dimension " + std::to_string(dim) + " of " + x.describe() + " is empty");
  check_floating(op, kernels::reduce_ops, x);
  shape_t kept = x.shape();
  kept[dim] = 1;
  tensor out = tensor::empty(kept, x.type(), x.where());
  const std::int64_t n_out = out.numel();
  if (x.shape()[dim] == 0) {
    fill_sequence(out, op == reduce_op::sum ? 0.0 : 1.0, 0.0);  // the sum of nothing is 0, the product 1
  } else if (n_out > 0) {
    // The kernel reads the input through a layout over the output's shape
    // (extent 1 at dim, so its ordinals walk the other dims) plus the full
    // extent and stride of dim.
    kernels::strided_layout in_layout = x.layout();
    const std::vector<kernel_arg> args{detail::pointer_arg(out, true),
                                       detail::layout_arg(out.layout()),
                                       detail::pointer_arg(x, false),
                                       detail::layout_arg(in_layout),
                                       kernel_arg::integer(dim),
                                       kernel_arg::integer(n_out),
                                       kernel_arg::integer(static_cast<int>(op))};
    detail::builtin_function(x.where(), kernels::reduce_dim_kernel, x.type()).launch(detail::grid_stride_config(n_out), args);
  }
  if (keepdim) return out;
  shape_t dropped = x.shape();
  dropped.erase(dropped.begin() + dim);
  return out.reshape(dropped);
}

tensor reduce_all(reduce_op op, const tensor& given) {
  const tensor x = widened_for(op, given);
  check_floating(op, kernels::reduce_ops, x);
  const std::int64_t n = x.numel();
  if (n == 0 && op != reduce_op::sum && op != reduce_op::prod)
    throw shape_error(std::string(op_name(op)) + ": " + x.describe() + " has no elements (max, min and mean need at least one)");
  const tensor in = x.contiguous();
  tensor out = tensor::empty({}, x.type(), x.where());
  using launch = kernels::reduce_all_launch;
  const std::int64_t lanes = kernels::vector_bytes / static_cast<std::int64_t>(itemsize(x.type()));
  const std::int64_t per_block = std::int64_t{launch::threads} * launch::unroll * lanes;  // elements per block and iteration
  const std::int64_t max_blocks = x.where().kind == device::kind_t::cuda ? launch::max_blocks : launch::emulator_max_blocks;
  const int blocks = static_cast<int>(std::clamp<std::int64_t>((n + per_block - 1) / per_block, 1, max_blocks));
  // The per-block partials, in the kernels' accumulate type.
  const tensor partials = tensor::empty({blocks}, accumulate_dtype(x.type()), x.where());
  const kernel_arg code = kernel_arg::integer(static_cast<int>(op));
  detail::builtin_function(x.where(), kernels::reduce_all_blocks_kernel, x.type())
      .launch(launch_config{dim3(static_cast<unsigned>(blocks)), dim3(launch::threads), 0, nullptr},
              std::vector<kernel_arg>{detail::pointer_arg(partials, true), detail::pointer_arg(in, false), kernel_arg::integer(n), code});
  detail::builtin_function(x.where(), kernels::reduce_all_finish_kernel, x.type())
      .launch(launch_config{dim3(1), dim3(launch::threads), 0, nullptr},
              std::vector<kernel_arg>{detail::pointer_arg(out, true), detail::pointer_arg(partials, false), kernel_arg::integer(blocks),
                                      kernel_arg::integer(n), code});
  return out;
}

tensor copy(const tensor& x) {
  if (!x.is_contiguous()) return x.clone();  // packing a strided view takes the copy kernel
  tensor out = tensor::empty(x.shape(), x.type(), x.where());
  const std::size_t bytes = static_cast<std::size_t>(x.numel()) * itemsize(x.type());
  if (bytes) copy_on_device(x.where(), out.data(), x.data(), bytes);
  return out;
}

tensor rgb_to_grayscale(const tensor& image, std::string_view launch) {
  if (image.type() != dtype::uint8) throw std::invalid_argument("rgb_to_grayscale needs a uint8 image, got " + image.describe());
  const bool batched = image.ndim() == 4;
  if ((image.ndim() != 3 && !batched) || image.shape()[image.ndim() - 3] != 3)
    throw shape_error("rgb_to_grayscale needs a channels-first image (3, H, W) or batch (B, 3, H, W), got " + image.describe());
  const kernels::grayscale_recipe* recipe = nullptr;
  std::string known;
  for (const kernels::grayscale_recipe& r : kernels::grayscale_recipes) {
    if (launch == r.launch) recipe = &r;
    known += (known.empty() ? "\"" : &r == std::end(kernels::grayscale_recipes) - 1 ? " or \"" : ", \"") + std::string(r.launch) + "\"";
  }
  if (!recipe) throw std::invalid_argument("rgb_to_grayscale: launch must be " + known + ", got \"" + std::string(launch) + "\"");
  if (batched && !recipe->batched_kernel) {
    std::string batch_launches;
    for (const kernels::grayscale_recipe& r : kernels::grayscale_recipes)
      if (r.batched_kernel) batch_launches += (batch_launches.empty() ? "\"" : " or \"") + std::string(r.launch) + "\"";
    throw std::invalid_argument("rgb_to_grayscale: batches use the 2-D launch (one image per blockIdx.z) or another that takes a batch (" +
                                batch_launches + "); launch \"" + std::string(launch) + "\" takes none");
  }
  const std::int64_t h = image.shape()[image.ndim() - 2], w = image.shape().back();
  if (recipe->grid != kernels::grayscale_grid::vectors && 3 * h * w > INT32_MAX)
    throw shape_error("rgb_to_grayscale: the 1-D and 2-D kernels index an image with 32-bit ints; use launch \"vectorized\"");
  const tensor in = image.contiguous();  // the kernels read planes in place
  shape_t out_shape{h, w};
  if (batched) out_shape.insert(out_shape.begin(), image.shape()[0]);
  tensor out = tensor::empty(out_shape, dtype::uint8, image.where());
  if (out.numel() == 0) return out;
  const device& d = image.where();
  const dim3 block(recipe->block_x, recipe->block_y);
  switch (recipe->grid) {
    case kernels::grayscale_grid::vectors: {
      // A thread per pixels_per_thread pixels of the batch (one vector of each plane).
      const std::int64_t images = batched ? image.shape()[0] : 1;
      const std::int64_t chunks = (images * h * w + recipe->pixels_per_thread - 1) / recipe->pixels_per_thread;
      detail::builtin_function(d, batched ? recipe->batched_kernel : recipe->kernel)
          .launch(detail::vector_launch_config(d, chunks), std::vector<kernel_arg>{detail::pointer_arg(out, true), detail::pointer_arg(in, false),
                                                                                   kernel_arg::integer(h * w), kernel_arg::integer(images)});
      break;
    }
    case kernels::grayscale_grid::rows: {
      const int pixels = static_cast<int>(h * w);
      detail::builtin_function(d, recipe->kernel)
          .launch(launch_config{dim3(static_cast<unsigned>((pixels + block.x - 1) / block.x)), block, 0, nullptr},
                  std::vector<kernel_arg>{detail::pointer_arg(out, true), detail::pointer_arg(in, false), kernel_arg::integer(pixels)});
      break;
    }
    case kernels::grayscale_grid::plane: {
      const std::int64_t images = batched ? image.shape()[0] : 1;
      if (images > 65535) throw shape_error("rgb_to_grayscale: at most 65535 images per call (grid z)");
      const dim3 grid(static_cast<unsigned>((w + block.x - 1) / block.x), static_cast<unsigned>((h + block.y - 1) / block.y),
                      static_cast<unsigned>(images));
      detail::builtin_function(d, batched ? recipe->batched_kernel : recipe->kernel)
          .launch(launch_config{grid, block, 0, nullptr},
                  std::vector<kernel_arg>{detail::pointer_arg(out, true), detail::pointer_arg(in, false), kernel_arg::integer(static_cast<int>(w)),
                                          kernel_arg::integer(static_cast<int>(h))});
      break;
    }
  }
  return out;
}

}  // namespace lockstep
