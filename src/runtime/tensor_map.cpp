// TMA descriptors through the driver's cuTensorMapEncodeTiled (lockstep/cuda_libraries.h).
#include <stdexcept>

#include "backend.h"
#include "cuda_driver.h"
#include "lockstep/cuda_libraries.h"

namespace lockstep {
namespace {

// CUtensorMapDataType for an element type (cuda.h's enum values).
int tensor_map_data_type(jit::scalar_type element) {
  switch (element) {
    case jit::scalar_type::uint8:
      return 0;
    case jit::scalar_type::uint16:
      return 1;
    case jit::scalar_type::uint32:
      return 2;
    case jit::scalar_type::int32:
      return 3;
    case jit::scalar_type::uint64:
      return 4;
    case jit::scalar_type::int64:
      return 5;
    case jit::scalar_type::float16:
      return 6;
    case jit::scalar_type::float32:
      return 7;
    case jit::scalar_type::float64:
      return 8;
    case jit::scalar_type::bfloat16:
      return 9;
    default:
      throw std::invalid_argument(
          "encode_tma_2d: TMA has no element type for this scalar type; use uint8, int32, int64, float16, bfloat16, "
          "float32 or float64");
  }
}

}  // namespace

tma_descriptor encode_tma_2d(const device& d, const void* base, jit::scalar_type element, std::uint64_t rows, std::uint64_t cols,
                             std::uint64_t row_stride_bytes, unsigned box_rows, unsigned box_cols, tma_swizzle swizzle) {
  if (d.kind != device::kind_t::cuda) throw std::invalid_argument("TMA descriptors are for cuda devices, not " + d.str());
  const int data_type = tensor_map_data_type(element);
  detail::backend_for(d).make_current();
  const detail::cu::driver_api& api = detail::cu::driver();
  if (!api.cuTensorMapEncodeTiled)
    throw device_unavailable(
        "encoding a TMA descriptor needs cuTensorMapEncodeTiled, which this NVIDIA driver lacks: update the driver to CUDA 12 or later");
  tma_descriptor map = {};
  // Innermost dimension first, as the driver counts them.
  const std::uint64_t dims[2] = {cols, rows}, strides[1] = {row_stride_bytes};
  const unsigned box[2] = {box_cols, box_rows}, element_strides[2] = {1, 1};
  constexpr int interleave_none = 0, l2_promotion_256b = 3, oob_fill_zeros = 0;
  detail::cu::check(api.cuTensorMapEncodeTiled(map.bytes, data_type, 2, const_cast<void*>(base), dims, strides, box, element_strides, interleave_none,
                                               static_cast<int>(swizzle), l2_promotion_256b, oob_fill_zeros),
                    "cuTensorMapEncodeTiled");
  return map;
}

}  // namespace lockstep
