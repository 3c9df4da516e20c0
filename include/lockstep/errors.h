// Exceptions for what goes wrong around a kernel, carrying CUDA's error code.
#pragma once
#include <stdexcept>
#include <string>

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#else
#include "lockstep/emu/runtime_api.h"
#endif

namespace lockstep {

class cuda_error : public std::runtime_error {
 public:
  cuda_error(cudaError_t code, const std::string& what)
      : std::runtime_error(std::string(cudaGetErrorName(code)) + ": " + what), code_(code) {}
  cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

// The launch itself was refused: a configuration outside the device's limits.
class launch_error : public cuda_error {
  using cuda_error::cuda_error;
};

// A thread failed while the kernel ran: a device assert, a deadlock at a
// barrier or warp collective, a misuse of a warp mask.
class kernel_error : public cuda_error {
  using cuda_error::cuda_error;
};

}  // namespace lockstep
