#include <stdexcept>

#include "lockstep/tensor.h"

namespace lockstep {

namespace {
struct dtype_info {
  dtype type;
  const char* name;
  const char* kernel_type;  // as kernels/CMakeLists.txt instantiates the kernels
  std::size_t size;
  jit::scalar_type scalar;
};
constexpr dtype_info dtypes[] = {
    {dtype::uint8, "uint8", "unsigned char", 1, jit::scalar_type::uint8},
    {dtype::int32, "int32", "int", 4, jit::scalar_type::int32},
    {dtype::int64, "int64", "long long", 8, jit::scalar_type::int64},
    {dtype::float16, "float16", "__half", 2, jit::scalar_type::float16},
    {dtype::bfloat16, "bfloat16", "__nv_bfloat16", 2, jit::scalar_type::bfloat16},
    {dtype::float32, "float32", "float", 4, jit::scalar_type::float32},
    {dtype::float64, "float64", "double", 8, jit::scalar_type::float64},
};
const dtype_info& info(dtype t) { return dtypes[static_cast<int>(t)]; }
}  // namespace

std::size_t itemsize(dtype t) { return info(t).size; }
const char* dtype_name(dtype t) { return info(t).name; }
const char* kernel_type_name(dtype t) { return info(t).kernel_type; }
jit::scalar_type scalar_type_of(dtype t) { return info(t).scalar; }
bool is_floating(dtype t) { return t >= dtype::float16; }

dtype parse_dtype(std::string_view name) {
  for (const auto& d : dtypes)
    if (name == d.name) return d.type;
  throw std::invalid_argument("unknown dtype '" + std::string(name) +
                              "': use one of uint8, int32, int64, float16, bfloat16, float32, float64");
}

}  // namespace lockstep
