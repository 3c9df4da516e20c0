// Tensor views and copies. Copies run as kernels on the tensor's device
// (map_strided with the copy op, cast_strided for dtype changes).
#include "lockstep/tensor.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <sstream>

#include "builtin.h"
#include "lockstep/kernels/elementwise_recipes.h"
#include "lockstep/kernels/op_codes.h"

namespace lockstep {

namespace {

bool& poison_flag() {
  static bool on = [] {
    const char* env = std::getenv("LOCKSTEP_POISON_NEW_TENSORS");
    return env && *env && std::string(env) != "0";
  }();
  return on;
}

shape_t contiguous_strides(const shape_t& shape) {
  shape_t strides(shape.size());
  std::int64_t step = 1;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    strides[d] = step;
    step *= std::max<std::int64_t>(shape[d], 1);
  }
  return strides;
}

std::string shape_text(const shape_t& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

int wrap_dim(int dim, int ndim, const char* what) {
  if (dim < -ndim || dim >= ndim)
    throw shape_error(std::string(what) + ": dim " + std::to_string(dim) + " is out of range for a tensor with " + std::to_string(ndim) +
                      " dimensions");
  return dim < 0 ? dim + ndim : dim;
}

}  // namespace

void set_poison_new_tensors(bool on) { poison_flag() = on; }
bool poison_new_tensors() { return poison_flag(); }

shape_t broadcast_shapes(const shape_t& a, const shape_t& b) {
  shape_t out(std::max(a.size(), b.size()));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1, y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1)
      throw shape_error("shapes " + shape_text(a) + " and " + shape_text(b) + " do not broadcast: extents " + std::to_string(x) + " and " +
                        std::to_string(y) + " differ and neither is 1 (dimension " + std::to_string(-1 - static_cast<int>(i)) + ")");
    out[out.size() - 1 - i] = x == 1 ? y : x;
  }
  return out;
}

tensor tensor::empty(const shape_t& shape, dtype t, const device& d) {
  for (std::int64_t e : shape)
    if (e < 0) throw shape_error("a tensor's extents cannot be negative: " + shape_text(shape));
  tensor x;
  x.shape_ = shape;
  x.strides_ = contiguous_strides(shape);
  x.dtype_ = t;
  x.device_ = d;
  const std::size_t bytes = static_cast<std::size_t>(x.numel()) * itemsize(t);
  const auto memory = std::make_shared<buffer>(d, bytes);
  x.base_ = std::shared_ptr<void>(memory, memory->data());  // aliasing: the buffer lives as long as a view of it
  if (poison_new_tensors() && bytes) memory->fill_bytes(0xff);
  return x;
}

tensor tensor::from_host(const void* data, const shape_t& shape, dtype t, const device& d) {
  tensor x = empty(shape, t, d);
  if (x.numel()) lockstep::copy_to_device(d, x.base(), data, static_cast<std::size_t>(x.numel()) * itemsize(t));
  return x;
}

tensor tensor::wrap(void* data, const shape_t& shape, const shape_t& strides, dtype t, const device& d, std::shared_ptr<void> owner) {
  if (shape.size() != strides.size()) throw shape_error("wrap: shape and strides have different lengths");
  tensor x;
  x.shape_ = shape;
  x.strides_ = strides;
  x.dtype_ = t;
  x.device_ = d;
  x.base_ = std::shared_ptr<void>(std::move(owner), data);  // aliasing: owner keeps data alive
  return x;
}

std::int64_t tensor::numel() const { return std::accumulate(shape_.begin(), shape_.end(), std::int64_t{1}, std::multiplies<>()); }

bool tensor::is_contiguous() const {
  if (numel() == 0) return true;  // no element is out of place (as PyTorch)
  std::int64_t step = 1;
  for (int d = ndim() - 1; d >= 0; --d) {
    if (shape_[d] != 1 && strides_[d] != step) return false;
    step *= shape_[d];
  }
  return true;
}

void* tensor::data() const { return static_cast<char*>(base_.get()) + offset_ * static_cast<std::int64_t>(itemsize(dtype_)); }

tensor tensor::permute(const std::vector<int>& dims) const {
  if (static_cast<int>(dims.size()) != ndim())
    throw shape_error("permute: " + std::to_string(dims.size()) + " dims given for a tensor with " + std::to_string(ndim()));
  tensor v = *this;
  std::vector<bool> used(ndim(), false);
  for (int i = 0; i < ndim(); ++i) {
    const int d = wrap_dim(dims[i], ndim(), "permute");
    if (used[d]) throw shape_error("permute: dim " + std::to_string(d) + " appears twice");
    used[d] = true;
    v.shape_[i] = shape_[d];
    v.strides_[i] = strides_[d];
  }
  return v;
}

tensor tensor::transpose(int dim0, int dim1) const {
  std::vector<int> dims(ndim());
  std::iota(dims.begin(), dims.end(), 0);
  std::swap(dims[wrap_dim(dim0, ndim(), "transpose")], dims[wrap_dim(dim1, ndim(), "transpose")]);
  return permute(dims);
}

tensor tensor::reshape(const shape_t& requested) const {
  // One extent may be -1: inferred from the element count.
  shape_t shape = requested;
  std::int64_t known = 1;
  int inferred = -1;
  for (int i = 0; i < static_cast<int>(shape.size()); ++i) {
    if (shape[i] == -1) {
      if (inferred >= 0) throw shape_error("reshape: only one extent can be -1");
      inferred = i;
    } else {
      if (shape[i] < 0) throw shape_error("reshape: negative extent in " + shape_text(requested));
      known *= shape[i];
    }
  }
  if (inferred >= 0) {
    if (known == 0 || numel() % known)
      throw shape_error("reshape: cannot infer -1 in " + shape_text(requested) + " for " + std::to_string(numel()) + " elements");
    shape[inferred] = numel() / known;
  }
  if (std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>()) != numel())
    throw shape_error("reshape: " + shape_text(shape) + " does not have the " + std::to_string(numel()) + " elements of " + shape_text(shape_));
  tensor v = *this;
  v.shape_ = shape;
  if (numel() == 0 || is_contiguous()) {
    v.strides_ = contiguous_strides(shape);
    return v;
  }
  // Merge runs of old dimensions that are contiguous with each other and
  // split them into new ones (PyTorch's rule for when a view exists).
  v.strides_.assign(shape.size(), 0);
  int view_d = static_cast<int>(shape.size()) - 1;
  std::int64_t chunk_stride = strides_.back(), tensor_numel = 1, view_numel = 1;
  for (int d = ndim() - 1; d >= 0; --d) {
    tensor_numel *= shape_[d];
    if (d == 0 || (shape_[d - 1] != 1 && strides_[d - 1] != tensor_numel * chunk_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        v.strides_[view_d] = view_numel * chunk_stride;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel)
        throw shape_error("reshape: a " + shape_text(shape_) + " view with strides " + shape_text(strides_) + " cannot be seen as " +
                          shape_text(shape) + " without copying; call contiguous() first");
      if (d > 0) {
        chunk_stride = strides_[d - 1];
        tensor_numel = view_numel = 1;
      }
    }
  }
  if (view_d != -1) throw shape_error("reshape: cannot view " + shape_text(shape_) + " as " + shape_text(shape));
  return v;
}

tensor tensor::slice(int dim, std::int64_t start, std::int64_t stop, std::int64_t step) const {
  const int d = wrap_dim(dim, ndim(), "slice");
  if (step <= 0) throw shape_error("slice: step must be positive, got " + std::to_string(step));
  const std::int64_t n = shape_[d];
  auto clamp = [n](std::int64_t i) { return std::clamp(i < 0 ? i + n : i, std::int64_t{0}, n); };
  start = clamp(start);
  stop = std::max(clamp(stop), start);
  tensor v = *this;
  v.offset_ += start * strides_[d];
  v.shape_[d] = (stop - start + step - 1) / step;
  v.strides_[d] = strides_[d] * step;
  return v;
}

tensor tensor::flip(int dim) const {
  const int d = wrap_dim(dim, ndim(), "flip");
  tensor v = *this;
  if (shape_[d] > 0) v.offset_ += (shape_[d] - 1) * strides_[d];
  v.strides_[d] = -strides_[d];
  return v;
}

tensor tensor::select(int dim, std::int64_t index) const {
  const int d = wrap_dim(dim, ndim(), "select");
  const std::int64_t i = index < 0 ? index + shape_[d] : index;
  if (i < 0 || i >= shape_[d])
    throw shape_error("select: index " + std::to_string(index) + " is out of range for extent " + std::to_string(shape_[d]));
  tensor v = *this;
  v.offset_ += i * strides_[d];
  v.shape_.erase(v.shape_.begin() + d);
  v.strides_.erase(v.strides_.begin() + d);
  return v;
}

tensor tensor::unsqueeze(int dim) const {
  const int d = wrap_dim(dim, ndim() + 1, "unsqueeze");
  tensor v = *this;
  v.shape_.insert(v.shape_.begin() + d, 1);
  v.strides_.insert(v.strides_.begin() + d, d < ndim() ? strides_[d] * shape_[d] : 1);
  return v;
}

tensor tensor::expand(const shape_t& shape) const {
  if (shape.size() < shape_.size()) throw shape_error("expand: cannot expand " + shape_text(shape_) + " to fewer dimensions " + shape_text(shape));
  tensor v = *this;
  const std::size_t lead = shape.size() - shape_.size();
  v.shape_ = shape;
  v.strides_.assign(shape.size(), 0);
  for (std::size_t i = 0; i < lead; ++i)
    if (shape[i] < 0) throw shape_error("expand: new leading extents must be given (not negative) in " + shape_text(shape));
  for (std::size_t i = lead; i < shape.size(); ++i) {
    const std::int64_t have = shape_[i - lead];
    if (shape[i] < -1) throw shape_error("expand: negative extent in " + shape_text(shape));
    const std::int64_t want = shape[i] == -1 ? have : shape[i];
    if (have == want) {
      v.shape_[i] = have;
      v.strides_[i] = strides_[i - lead];
    } else if (have != 1) {
      throw shape_error("expand: extent " + std::to_string(have) + " of " + shape_text(shape_) + " cannot become " + std::to_string(want) +
                        " (only extents of 1 broadcast)");
    }
  }
  return v;
}

kernels::strided_layout tensor::layout() const {
  if (ndim() > kernels::max_dims)
    throw shape_error("tensors of more than " + std::to_string(kernels::max_dims) + " dimensions are not supported, got " + shape_text(shape_));
  kernels::strided_layout l{};
  l.ndim = ndim();
  for (int d = 0; d < ndim(); ++d) {
    l.shape[d] = shape_[d];
    l.strides[d] = strides_[d];
  }
  return l;
}

tensor tensor::contiguous() const { return is_contiguous() ? *this : clone(); }

tensor tensor::clone() const {
  tensor out = empty(shape_, dtype_, device_);
  detail::launch_elementwise(detail::builtin_function(device_, kernels::map_strided_kernel, dtype_), out, {*this},
                             {kernel_arg::integer(static_cast<int>(kernels::unary_op::copy))});
  return out;
}

tensor tensor::to(dtype t) const {
  if (t == dtype_) return *this;
  tensor out = empty(shape_, t, device_);
  detail::launch_elementwise(
      detail::builtin_function(device_, std::string(kernels::cast_kernel) + "<" + kernel_type_name(dtype_) + ", " + kernel_type_name(t) + ">"), out,
      {*this}, {});
  return out;
}

tensor tensor::to(const device& d) const {
  if (d == device_) return *this;
  const tensor packed = contiguous();
  tensor out = empty(shape_, dtype_, d);
  const std::size_t bytes = static_cast<std::size_t>(numel()) * itemsize(dtype_);
  if (!bytes) return out;
  if (device_.kind == device::kind_t::cpu) {
    lockstep::copy_to_device(d, out.data(), packed.data(), bytes);
  } else if (d.kind == device::kind_t::cpu) {
    lockstep::copy_to_host(device_, out.data(), packed.data(), bytes);
  } else {  // between GPUs, through the host
    std::vector<unsigned char> staging(bytes);
    lockstep::copy_to_host(device_, staging.data(), packed.data(), bytes);
    lockstep::copy_to_device(d, out.data(), staging.data(), bytes);
  }
  return out;
}

void tensor::copy_to_host(void* dst) const {
  const tensor packed = contiguous();
  if (numel()) lockstep::copy_to_host(device_, dst, packed.data(), static_cast<std::size_t>(numel()) * itemsize(dtype_));
}

std::string tensor::describe() const { return std::string(dtype_name(dtype_)) + " tensor " + shape_text(shape_) + " on " + device_.str(); }

}  // namespace lockstep
