// What `kernel<<<grid, block, shared, stream>>>(args)` becomes on the emulator
// (the host-source rewrite, src/emulator/host_source/launch_syntax.cpp, turns
// it into `::lockstep::emu::chevron_launch(kernel, grid, block, shared, stream)(args)`),
// and the runtime API's other ways to launch a kernel.
//
// As under the CUDA runtime, a launch reports through error codes, not
// exceptions: a configuration outside the limits is kept for
// cudaGetLastError/cudaPeekAtLastError; a kernel that faults, fails an assert
// or times out leaves a sticky error that every later synchronizing call
// returns (a GPU's context is lost the same way). The reason is printed on
// stderr, since CUDA's bare code rarely says which limit or which line.
#pragma once
#include <cstddef>
#include <exception>
#include <utility>

#include "lockstep/launch.h"

namespace lockstep::emu {

// Turns the exception a launch threw into the CUDA runtime's answer (last or
// sticky error, a line on stderr); SIGINT's interruption ends the program as
// SIGINT would.
cudaError_t record_launch_failure(std::exception_ptr failure);
// A launch that went through clears nothing but is an answer too: cudaSuccess.
cudaError_t record_launch_success();

template <class... Params>
class chevron_call {
 public:
  chevron_call(void (*kernel)(Params...), const launch_config& config) : kernel_(kernel), config_(config) {}

  template <class... Args>
  void operator()(Args&&... args) const {
    try {
      kernel_launch<Params...>(kernel_, config_)(std::forward<Args>(args)...);
      record_launch_success();
    } catch (...) {
      record_launch_failure(std::current_exception());
    }
  }

 private:
  void (*kernel_)(Params...);
  launch_config config_;
};

template <class... Params>
chevron_call<Params...> chevron_launch(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared_bytes = 0,
                                       cudaStream_t stream = nullptr) {
  return {kernel, launch_config{grid, block, shared_bytes, stream}};
}

}  // namespace lockstep::emu
