// matmul on the tensor cores (kernels/matmul_tensor_core.cu): algo "wmma"
// and "wgmma" (Hopper), each on float32 inputs through tf32 or on bfloat16, and
// the cuBLAS references "cublas" (bfloat16) and "cublas_tf32" (float32).
// The kernels take B as its transpose b_t[n,k] with unit stride along k: a B
// that is already such a view (x @ w.T with w of shape (n, k), as in
// nn.Linear) is used in place; any other B is copied once into that layout.
#include "matmul_tensor_core.h"

#include <cstdint>
#include <string>
#include <vector>

#include "builtin.h"
#include "lockstep/kernels/op_codes.h"
#include "runtime/backend.h"
#include "runtime/cublas.h"
#include "runtime/cuda_driver.h"

namespace lockstep::detail {
namespace {

constexpr int wmma_shared_bytes = 2 * (128 + 128) * (128 + 16);  // matmul_wmma_shape::shared_bytes
constexpr int wgmma_stages = 4;
constexpr int wgmma_shared_bytes = wgmma_stages * (128 + 256) * 128 + 2 * wgmma_stages * 8 + 1024;  // matmul_wgmma_shared_bytes

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
  backend_for(t.where()).fill_bytes(padded.data(), 0, static_cast<std::size_t>(padded.numel()) * itemsize(t.type()), nullptr);
  launch_elementwise(builtin_function(t.where(), "map_strided", t.type()), padded.slice(1, 0, cols), {t},
                     {kernel_arg::integer(static_cast<int>(kernels::unary_op::copy))});
  return padded;
}

// A 2-D CUtensorMap over rows x cols of bf16 or float (row stride in
// elements), boxes of box_rows rows of 128 bytes with the 128-byte swizzle
// matmul_wgmma's descriptors expect.
kernel_arg tma_map(const tensor& t, unsigned box_rows) {
  const cu::driver_api& api = cu::driver();
  if (!api.cuTensorMapEncodeTiled)
    throw device_unavailable("matmul algo 'wgmma' needs cuTensorMapEncodeTiled, which this NVIDIA driver lacks: update the driver to CUDA 12 or later");
  alignas(64) unsigned char map[128] = {};
  const std::uint64_t dims[2] = {static_cast<std::uint64_t>(t.shape()[1]), static_cast<std::uint64_t>(t.shape()[0])};
  const std::size_t element = itemsize(t.type());
  const std::uint64_t row_bytes[1] = {static_cast<std::uint64_t>(row_stride(t)) * element};
  const unsigned box[2] = {static_cast<unsigned>(128 / element), box_rows}, element_strides[2] = {1, 1};
  constexpr int float32_type = 7, bfloat16_type = 9, interleave_none = 0, swizzle_128b = 3, l2_promotion_256b = 3, oob_fill_zeros = 0;
  cu::check(api.cuTensorMapEncodeTiled(map, element == 2 ? bfloat16_type : float32_type, 2, t.data(), dims, row_bytes, box, element_strides,
                                       interleave_none, swizzle_128b, l2_promotion_256b, oob_fill_zeros),
            "cuTensorMapEncodeTiled");
  return kernel_arg::bytes(map, sizeof map, 64);
}

// One product c = a @ b_t^T of 2-D views.
void product(const tensor& a, const tensor& b_t, const tensor& c, std::string_view algo) {
  const device& d = a.where();
  const std::int64_t m = a.shape()[0], k = a.shape()[1], n = b_t.shape()[0];
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  const bool bf16 = a.type() == dtype::bfloat16;
  if (algo == "wmma") {
    const tensor a_rows = rows_for_kernel(a, 1), b_rows = rows_for_kernel(b_t, 1);
    const std::string name = bf16 ? "matmul_wmma<__nv_bfloat16, __nv_bfloat16>" : "matmul_wmma<float, float>";
    // 128x128 output tiles of 256 threads, over 48 KiB of dynamic shared memory.
    const function& f = builtin_function(d, name);
    f.set_max_dynamic_shared_bytes(wmma_shared_bytes);
    const dim3 grid(static_cast<unsigned>((n + 127) / 128), static_cast<unsigned>((m + 127) / 128));
    f.launch(
        launch_config{grid, dim3(256), wmma_shared_bytes, nullptr},
        std::vector<kernel_arg>{pointer_arg(a_rows, false), kernel_arg::integer(row_stride(a_rows)), pointer_arg(b_rows, false),
                                kernel_arg::integer(row_stride(b_rows)), pointer_arg(c, true), kernel_arg::integer(ni),
                                kernel_arg::integer(mi), kernel_arg::integer(ni), kernel_arg::integer(ki)});
    return;
  }
  backend_for(d).make_current();
  if (algo == "wgmma") {
    // TMA reads rows that are 16-byte multiples.
    const std::int64_t row_multiple = 16 / static_cast<std::int64_t>(itemsize(a.type()));
    const tensor a_rows = rows_for_kernel(a, row_multiple), b_rows = rows_for_kernel(b_t, row_multiple);
    const function& f =
        builtin_function(d, std::string("matmul_wgmma<") + (bf16 ? "__nv_bfloat16" : "float") + ", " + std::to_string(wgmma_stages) + ">");
    f.set_max_dynamic_shared_bytes(wgmma_shared_bytes);
    const std::int64_t tiles = ((m + 127) / 128) * ((n + 255) / 256);
    const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(tiles, backend_for(d).multiprocessor_count()));
    f.launch(launch_config{dim3(blocks), dim3(384), wgmma_shared_bytes, nullptr},
             std::vector<kernel_arg>{tma_map(a_rows, 128), tma_map(b_rows, 256), pointer_arg(c, true), kernel_arg::integer(ni),
                                     kernel_arg::integer(mi), kernel_arg::integer(ni), kernel_arg::integer(ki)});
    return;
  }
  // cuBLAS wants unit stride along k and leading dimensions of at least k (k > 0 here).
  const tensor a_rows = rows_for_kernel(a, 1), b_rows = rows_for_kernel(b_t, 1);
  cublas_gemm_row_major_nt(bf16 ? tensor_core_precision::bf16 : tensor_core_precision::tf32, a_rows.data(),
                           static_cast<int>(row_stride(a_rows)), b_rows.data(), static_cast<int>(row_stride(b_rows)), c.data(), ni, mi,
                           ni, ki, nullptr);
}

// The matrix at flat batch index z of t, whose leading dimensions are `batch`.
tensor matrix_at(tensor t, const shape_t& batch, std::int64_t z) {
  for (int dim = static_cast<int>(batch.size()) - 1; dim >= 0; --dim) {
    t = t.select(dim, z % batch[dim]);
    z /= batch[dim];
  }
  return t;
}

}  // namespace

bool is_tensor_core_algo(std::string_view algo) { return algo == "wmma" || algo == "wgmma" || algo == "cublas_tf32"; }

std::string_view default_bf16_algo(const device& d) {
  return d.kind == device::kind_t::cuda && backend_for(d).arch() == "sm_90" ? "wgmma" : "wmma";
}

tensor matmul_tensor_core(const tensor& a, const tensor& b, std::string_view algo) {
  const bool bf16 = a.type() == dtype::bfloat16;
  if (!is_tensor_core_algo(algo) && algo != "cublas")
    throw std::invalid_argument("matmul algo '" + std::string(algo) + "' is a float32 kernel; bfloat16 tensors run with algo wmma, wgmma, " +
                                "cublas or auto, or convert with .to(float32)");
  if (algo == "cublas" && bf16) algo = "cublas_bf16";
  const bool wants_bf16 = algo == "cublas_bf16", wants_float = algo == "cublas_tf32";
  const bool dtype_ok = a.type() == b.type() && (bf16 || a.type() == dtype::float32) && (!wants_bf16 || bf16) && (!wants_float || !bf16);
  if (!dtype_ok)
    throw std::invalid_argument("matmul algo '" + std::string(algo) + "' takes " +
                                (wants_bf16 ? "bfloat16" : wants_float ? "float32" : "two float32 or two bfloat16") + " tensors, got " +
                                a.describe() + " and " + b.describe() + "; convert with .to(...)");
  const bool on_gpu = a.where().kind == device::kind_t::cuda;
  if (algo != "wmma" && !on_gpu)
    throw std::invalid_argument("matmul algo '" + std::string(algo) + "' runs on cuda devices only; " + a.describe() + " is on " +
                                a.where().str() + " (on the emulator use algo 'wmma')");
  if (algo == "wgmma" && backend_for(a.where()).arch() != "sm_90")
    throw std::invalid_argument("matmul algo 'wgmma' needs a Hopper GPU (sm_90); " + a.where().str() + " is " + backend_for(a.where()).arch() +
                                ": use algo 'wmma'");
  const std::int64_t m = a.shape()[a.ndim() - 2], k = a.shape().back(), n = b.shape().back();

  const shape_t a_batch(a.shape().begin(), a.shape().end() - 2), b_batch(b.shape().begin(), b.shape().end() - 2);
  const shape_t batch = broadcast_shapes(a_batch, b_batch);
  shape_t a_full = batch, b_full = batch, out_shape = batch;
  a_full.insert(a_full.end(), {m, k});
  b_full.insert(b_full.end(), {k, n});
  out_shape.insert(out_shape.end(), {m, n});
  tensor c = tensor::empty(out_shape, a.type(), a.where());
  if (c.numel() == 0) return c;
  if (k == 0) {  // an empty sum: zeros (all-zero bytes in both dtypes)
    backend_for(c.where()).fill_bytes(c.data(), 0, static_cast<std::size_t>(c.numel()) * itemsize(c.type()), nullptr);
    return c;
  }
  const tensor a_view = a.expand(a_full), b_view = b.expand(b_full);
  std::int64_t batch_count = 1;
  for (std::int64_t e : batch) batch_count *= e;
  for (std::int64_t z = 0; z < batch_count; ++z) {
    const tensor b_t = matrix_at(b_view, batch, z).transpose(0, 1);
    product(matrix_at(a_view, batch, z), is_k_major(b_t) ? b_t : b_t.contiguous(), matrix_at(c, batch, z), algo);
  }
  return c;
}

}  // namespace lockstep::detail
