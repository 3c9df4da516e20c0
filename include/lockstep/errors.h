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
  cuda_error(cudaError_t code, const std::string& what) : std::runtime_error(std::string(cudaGetErrorName(code)) + ": " + what), code_(code) {}
  cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

// The launch itself was refused: a configuration outside the device's limits.
class launch_error : public cuda_error {
  using cuda_error::cuda_error;
};

// A thread failed while the kernel ran: a device assert, a deadlock at a
// barrier or warp collective, a misuse of a warp mask; on the emulator also a
// fault (a bad address, a stack overflow, __trap()) or a launch past its time
// limit (options::timeout_seconds).
class kernel_error : public cuda_error {
  using cuda_error::cuda_error;
};

// An emulated launch stopped by SIGINT (Ctrl-C) while it ran; Python raises
// KeyboardInterrupt for it. Not a CUDA error: the code is cudaErrorLaunchFailure.
class launch_interrupted : public kernel_error {
  using kernel_error::kernel_error;
};

// Source that did not compile; log() is the compiler's output with line
// numbers of the user's source.
class compile_error : public std::runtime_error {
 public:
  compile_error(const std::string& what, std::string log) : std::runtime_error(what + "\n" + log), log_(std::move(log)) {}
  const std::string& log() const noexcept { return log_; }

 private:
  std::string log_;
};

// Kernel arguments that do not match the kernel's parameters.
class argument_error : public std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// A device that cannot be used here: no driver, no such GPU, no compiler.
class device_unavailable : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace lockstep
