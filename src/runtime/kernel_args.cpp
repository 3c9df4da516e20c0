#include "kernel_args.h"

#include "lockstep/emu/half.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace lockstep {
namespace {

const char* scalar_name(jit::scalar_type t) {
  switch (t) {
    case jit::scalar_type::none:
      return "void";
    case jit::scalar_type::boolean:
      return "bool";
    case jit::scalar_type::int8:
      return "int8";
    case jit::scalar_type::uint8:
      return "uint8";
    case jit::scalar_type::int16:
      return "int16";
    case jit::scalar_type::uint16:
      return "uint16";
    case jit::scalar_type::int32:
      return "int32";
    case jit::scalar_type::uint32:
      return "uint32";
    case jit::scalar_type::int64:
      return "int64";
    case jit::scalar_type::uint64:
      return "uint64";
    case jit::scalar_type::float16:
      return "float16";
    case jit::scalar_type::bfloat16:
      return "bfloat16";
    case jit::scalar_type::float32:
      return "float32";
    case jit::scalar_type::float64:
      return "float64";
  }
  return "?";
}

bool is_integer(jit::scalar_type t) { return t >= jit::scalar_type::boolean && t <= jit::scalar_type::uint64; }
bool is_floating(jit::scalar_type t) { return t >= jit::scalar_type::float16; }

template <class T>
bool fits(long long v) {
  if constexpr (std::is_unsigned_v<T>)
    return v >= 0 && static_cast<unsigned long long>(v) <= std::numeric_limits<T>::max();
  else
    return v >= std::numeric_limits<T>::min() && v <= std::numeric_limits<T>::max();
}

template <class T>
void store(unsigned char* out, T v) {
  std::memcpy(out, &v, sizeof(T));
}

// Writes an integer as parameter type `t`; false if it does not fit.
bool store_integer(unsigned char* out, jit::scalar_type t, long long v) {
  switch (t) {
    case jit::scalar_type::boolean:
      if (v != 0 && v != 1) return false;
      store<bool>(out, v != 0);
      return true;
    case jit::scalar_type::int8:
      if (!fits<std::int8_t>(v)) return false;
      store<std::int8_t>(out, static_cast<std::int8_t>(v));
      return true;
    case jit::scalar_type::uint8:
      if (!fits<std::uint8_t>(v)) return false;
      store<std::uint8_t>(out, static_cast<std::uint8_t>(v));
      return true;
    case jit::scalar_type::int16:
      if (!fits<std::int16_t>(v)) return false;
      store<std::int16_t>(out, static_cast<std::int16_t>(v));
      return true;
    case jit::scalar_type::uint16:
      if (!fits<std::uint16_t>(v)) return false;
      store<std::uint16_t>(out, static_cast<std::uint16_t>(v));
      return true;
    case jit::scalar_type::int32:
      if (!fits<std::int32_t>(v)) return false;
      store<std::int32_t>(out, static_cast<std::int32_t>(v));
      return true;
    case jit::scalar_type::uint32:
      if (!fits<std::uint32_t>(v)) return false;
      store<std::uint32_t>(out, static_cast<std::uint32_t>(v));
      return true;
    case jit::scalar_type::int64:
      store<std::int64_t>(out, v);
      return true;
    case jit::scalar_type::uint64:
      if (v < 0) return false;
      store<std::uint64_t>(out, static_cast<std::uint64_t>(v));
      return true;
    default:
      return false;
  }
}

void store_real(unsigned char* out, jit::scalar_type t, double v) {
  switch (t) {
    case jit::scalar_type::float16:
      store<std::uint16_t>(out, emu::float_to_half_bits(static_cast<float>(v)));
      break;
    case jit::scalar_type::bfloat16:
      store<std::uint16_t>(out, emu::float_to_bfloat16_bits(static_cast<float>(v)));
      break;
    case jit::scalar_type::float32:
      store<float>(out, static_cast<float>(v));
      break;
    default:
      store<double>(out, v);
      break;
  }
}

}  // namespace

std::string describe(const jit::param_desc& p) {
  switch (p.kind) {
    case jit::param_kind::scalar:
      return scalar_name(p.type);
    case jit::param_kind::pointer:
      return std::string(p.is_const ? "const " : "") + (p.type == jit::scalar_type::none ? "void or struct" : scalar_name(p.type)) + "*";
    case jit::param_kind::by_value:
      return "struct of " + std::to_string(p.size) + " bytes (alignment " + std::to_string(p.align) + ")";
  }
  return "?";
}

kernel_arg kernel_arg::pointer(const void* p, jit::scalar_type pointee, bool pointee_const) {
  kernel_arg a(kind_t::pointer, sizeof(void*), alignof(void*));
  a.type_ = pointee;
  a.pointee_const_ = pointee_const;
  std::memcpy(a.storage_, &p, sizeof p);
  return a;
}

kernel_arg kernel_arg::integer(long long value) {
  kernel_arg a(kind_t::integer, sizeof value, alignof(long long));
  std::memcpy(a.storage_, &value, sizeof value);
  return a;
}

kernel_arg kernel_arg::real(double value) {
  kernel_arg a(kind_t::real, sizeof value, alignof(double));
  std::memcpy(a.storage_, &value, sizeof value);
  return a;
}

kernel_arg kernel_arg::bytes(const void* data, std::size_t size, std::size_t align) {
  if (size > sizeof(storage_))
    throw argument_error("a by-value kernel argument of " + std::to_string(size) + " bytes is larger than the " + std::to_string(sizeof(storage_)) +
                         " bytes lockstep passes by value; pass a pointer instead");
  kernel_arg a(kind_t::bytes, size, align);
  std::memcpy(a.storage_, data, size);
  return a;
}

std::string kernel_arg::describe() const {
  switch (kind_) {
    case kind_t::pointer:
      return std::string("pointer to ") + (pointee_const_ ? "const " : "") +
             (type_ == jit::scalar_type::none ? "untyped memory" : scalar_name(type_));
    case kind_t::typed:
      return scalar_name(type_);
    case kind_t::integer: {
      long long v;
      std::memcpy(&v, storage_, sizeof v);
      return "integer " + std::to_string(v);
    }
    case kind_t::real: {
      double v;
      std::memcpy(&v, storage_, sizeof v);
      return "real number " + std::to_string(v);
    }
    case kind_t::bytes:
      return std::to_string(size_) + " bytes by value (alignment " + std::to_string(align_) + ")";
  }
  return "?";
}

namespace detail {

std::string signature_text(const std::string& name, const jit::signature& params) {
  std::string text = name + "(";
  for (unsigned i = 0; i < params.count; ++i) text += (i ? ", " : "") + describe(params.params[i]);
  return text + ")";
}

packed_args pack_args(const std::string& kernel, const jit::signature& params, std::span<const kernel_arg> args) {
  if (args.size() != params.count)
    throw argument_error("kernel " + kernel + " takes " + std::to_string(params.count) + " argument" + (params.count == 1 ? "" : "s") + ", got " +
                         std::to_string(args.size()));
  packed_args packed;
  std::vector<std::size_t> offsets(params.count);
  std::size_t end = 0;
  for (unsigned i = 0; i < params.count; ++i) {
    const std::size_t align = params.params[i].align ? params.params[i].align : 1;
    offsets[i] = (end + align - 1) / align * align;
    end = offsets[i] + params.params[i].size;
  }
  // The offsets are relative to a base aligned for any parameter: a launcher
  // reads each argument as its C++ type, and a TMA descriptor wants 64 bytes.
  constexpr std::size_t base_align = 64;
  packed.storage_.assign(end + 16 + base_align, 0);
  unsigned char* base = packed.storage_.data();
  base += (base_align - reinterpret_cast<std::uintptr_t>(base) % base_align) % base_align;
  for (unsigned i = 0; i < params.count; ++i) {
    const jit::param_desc& p = params.params[i];
    const kernel_arg& a = args[i];
    unsigned char* out = base + offsets[i];
    auto mismatch = [&](const std::string& why) {
      return argument_error("argument " + std::to_string(i) + " of " + kernel + ": the parameter is " + describe(p) + " but got " + a.describe() +
                            (why.empty() ? "" : "; " + why));
    };
    switch (p.kind) {
      case jit::param_kind::pointer:
        if (a.kind() != kernel_arg::kind_t::pointer) throw mismatch("pass a device buffer or pointer");
        if (a.type() != jit::scalar_type::none && p.type != jit::scalar_type::none && a.type() != p.type) throw mismatch("the element types differ");
        if (a.pointee_const() && !p.is_const) throw mismatch("the kernel may write through this pointer but the memory is read-only");
        std::memcpy(out, a.storage(), sizeof(void*));
        break;
      case jit::param_kind::scalar:
        if (a.kind() == kernel_arg::kind_t::typed) {
          if (a.type() != p.type) throw mismatch("convert the value to " + describe(p) + " first");
          std::memcpy(out, a.storage(), p.size);
        } else if (a.kind() == kernel_arg::kind_t::integer) {
          long long v;
          std::memcpy(&v, a.storage(), sizeof v);
          if (is_floating(p.type))
            store_real(out, p.type, static_cast<double>(v));
          else if (!store_integer(out, p.type, v))
            throw mismatch("the value does not fit");
        } else if (a.kind() == kernel_arg::kind_t::real) {
          if (!is_floating(p.type)) throw mismatch(is_integer(p.type) ? "a real number does not convert to an integer parameter" : "");
          double v;
          std::memcpy(&v, a.storage(), sizeof v);
          store_real(out, p.type, v);
        } else {
          throw mismatch("");
        }
        break;
      case jit::param_kind::by_value:
        // Alignment 0 (bytes from Python) takes the parameter's.
        if (a.kind() != kernel_arg::kind_t::bytes || a.size() != p.size || (a.align() != 0 && a.align() != p.align))
          throw mismatch("by-value arguments must have the parameter's size and alignment");
        std::memcpy(out, a.storage(), p.size);
        break;
    }
    packed.pointers_.push_back(out);
  }
  return packed;
}

}  // namespace detail
}  // namespace lockstep
