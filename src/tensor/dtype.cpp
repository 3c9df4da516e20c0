// The dtypes' properties, one row per line of lockstep/kernels/dtypes.h.
#include <iterator>
#include <stdexcept>

#include "lockstep/tensor.h"

namespace lockstep {

namespace {
struct dtype_info {
  dtype type;
  const char* name;
  const char* kernel_type;
  std::size_t size;
  jit::scalar_type scalar;
  bool floating;
  dtype accumulate;
};
constexpr dtype_info dtypes[] = {
#define LOCKSTEP_DTYPE_ROW(name, text, kernel_type, size, scalar, floating, accumulate) \
  {dtype::name, text, #kernel_type, size, jit::scalar_type::scalar, floating, dtype::accumulate},
    LOCKSTEP_DTYPES(LOCKSTEP_DTYPE_ROW)
#undef LOCKSTEP_DTYPE_ROW
};

// The enum and this table come from the same list, so a dtype's value is its row.
constexpr bool rows_in_enum_order() {
  for (std::size_t i = 0; i < std::size(dtypes); ++i)
    if (static_cast<std::size_t>(dtypes[i].type) != i) return false;
  return true;
}
static_assert(rows_in_enum_order());
const dtype_info& info(dtype t) { return dtypes[static_cast<std::size_t>(t)]; }
}  // namespace

std::size_t itemsize(dtype t) { return info(t).size; }
const char* dtype_name(dtype t) { return info(t).name; }
const char* kernel_type_name(dtype t) { return info(t).kernel_type; }
jit::scalar_type scalar_type_of(dtype t) { return info(t).scalar; }
bool is_floating(dtype t) { return info(t).floating; }
dtype accumulate_dtype(dtype t) { return info(t).accumulate; }

dtype parse_dtype(std::string_view name) {
  std::string known;
  for (const dtype_info& d : dtypes) {
    if (name == d.name) return d.type;
    known += (known.empty() ? "" : ", ") + std::string(d.name);
  }
  throw std::invalid_argument("unknown dtype '" + std::string(name) + "': use one of " + known);
}

}  // namespace lockstep
