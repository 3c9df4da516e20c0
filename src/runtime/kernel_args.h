// Checks launch arguments against a kernel's parameters and packs them the
// way cuLaunchKernel takes them: an array of pointers, one per parameter, to
// values laid out with the parameter's size.
#pragma once
#include <span>
#include <string>
#include <vector>

#include "lockstep/runtime.h"

namespace lockstep::detail {

class packed_args {
 public:
  void* const* pointers() const { return pointers_.data(); }

 private:
  friend packed_args pack_args(const std::string&, const jit::signature&, std::span<const kernel_arg>);
  std::vector<unsigned char> storage_;
  std::vector<void*> pointers_;
};

// Throws argument_error naming the kernel, the parameter and both types.
packed_args pack_args(const std::string& kernel_signature_text, const jit::signature& params, std::span<const kernel_arg> args);

std::string signature_text(const std::string& name, const jit::signature& params);

}  // namespace lockstep::detail
