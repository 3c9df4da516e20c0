// Strided tensors on a lockstep device: a shape, strides and an offset (in
// elements) over shared device memory, a dtype and the device. Views
// (permute, transpose, reshape where the strides allow it, slice, expand)
// share memory; contiguous(), to(device) and to(dtype) copy.
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/kernels/dtypes.h"
#include "lockstep/kernels/strided_layout.h"
#include "lockstep/runtime.h"

namespace lockstep {

// The element types of lockstep/kernels/dtypes.h, in its order.
enum class dtype : unsigned char {
#define LOCKSTEP_DTYPE_ENUMERATOR(name, ...) name,
  LOCKSTEP_DTYPES(LOCKSTEP_DTYPE_ENUMERATOR)
#undef LOCKSTEP_DTYPE_ENUMERATOR
};

std::size_t itemsize(dtype t);
const char* dtype_name(dtype t);           // "float32"
dtype parse_dtype(std::string_view name);  // throws std::invalid_argument listing the dtypes
const char* kernel_type_name(dtype t);     // the C++ type kernels are instantiated with: "float", "__half", ...
jit::scalar_type scalar_type_of(dtype t);
bool is_floating(dtype t);
dtype accumulate_dtype(dtype t);  // what reductions accumulate in: float32 for the half types, float64, or int64

// Shapes that cannot broadcast, reshapes the strides cannot express, dims
// out of range: the message says which and why.
class shape_error : public std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

using shape_t = std::vector<std::int64_t>;

// NumPy's rule: align shapes on the right; each pair of extents must be equal
// or one of them 1.
shape_t broadcast_shapes(const shape_t& a, const shape_t& b);

class tensor {
 public:
  tensor() = default;
  // A new contiguous (row-major) tensor; its memory is uninitialised, or
  // filled with 0xff bytes (NaN for floats) while poisoning is on.
  static tensor empty(const shape_t& shape, dtype t, const device& d = device::cpu());
  static tensor from_host(const void* data, const shape_t& shape, dtype t, const device& d = device::cpu());
  // Memory someone else owns (zero-copy interop): `owner` keeps it alive.
  static tensor wrap(void* data, const shape_t& shape, const shape_t& strides, dtype t, const device& d, std::shared_ptr<void> owner);

  const shape_t& shape() const { return shape_; }
  const shape_t& strides() const { return strides_; }  // in elements
  std::int64_t offset() const { return offset_; }      // in elements, from the memory's start
  dtype type() const { return dtype_; }
  const device& where() const { return device_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  std::int64_t numel() const;
  bool is_contiguous() const;
  void* data() const;  // the address of the first element (base + offset)
  void* base() const { return base_.get(); }

  tensor permute(const std::vector<int>& dims) const;
  tensor transpose(int dim0, int dim1) const;
  tensor reshape(const shape_t& shape) const;                                                 // a view; shape_error when the strides do not allow one
  tensor slice(int dim, std::int64_t start, std::int64_t stop, std::int64_t step = 1) const;  // Python slice rules
  tensor select(int dim, std::int64_t index) const;                                           // drops `dim`
  tensor flip(int dim) const;  // a view with `dim` in reverse order (a negative stride)
  tensor unsqueeze(int dim) const;
  tensor expand(const shape_t& shape) const;  // broadcast_to: new extents only where this one is 1 (stride 0)

  tensor contiguous() const;  // this tensor if already contiguous, else a packed copy
  tensor clone() const;       // always a packed copy
  tensor to(const device& d) const;
  tensor to(dtype t) const;
  void copy_to_host(void* dst) const;  // numel() * itemsize() bytes, row-major

  template <class T>
  std::vector<T> to_vector() const {
    std::vector<T> host(static_cast<std::size_t>(numel()));
    if (sizeof(T) != itemsize(dtype_)) throw std::invalid_argument("to_vector: element size differs from the dtype's");
    copy_to_host(host.data());
    return host;
  }

  // The layout a kernel needs to read this tensor as one of `out_ndim` dims
  // (this tensor already has the output's shape).
  kernels::strided_layout layout() const;
  std::string describe() const;  // "float32 tensor (3, 4) on cpu"

 private:
  std::shared_ptr<void> base_;
  shape_t shape_, strides_;
  std::int64_t offset_ = 0;
  dtype dtype_ = dtype::float32;
  device device_;
};

// Whether new tensors are filled with 0xff bytes (tests use it to catch
// elements a kernel forgets to write). Default: LOCKSTEP_POISON_NEW_TENSORS.
void set_poison_new_tensors(bool on);
bool poison_new_tensors();

}  // namespace lockstep
