// The CUDA runtime's answer to a launch that failed (lockstep/emu/chevron_launch.h).
#include "lockstep/emu/chevron_launch.h"

#include <csignal>
#include <cstdio>
#include <new>

#include "lockstep/errors.h"

namespace lockstep::emu {

void set_last_error(cudaError_t error);

cudaError_t record_launch_success() { return cudaSuccess; }

cudaError_t record_launch_failure(std::exception_ptr failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const launch_interrupted&) {
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
    throw;
  } catch (const launch_error& e) {
    std::fprintf(stderr, "lockstep: kernel launch refused: %s\n", e.what());
    set_last_error(e.code());
    return e.code();
  } catch (const kernel_error& e) {
    std::fprintf(stderr, "lockstep: %s\n", e.what());
    set_last_error(e.code());
    return e.code();
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "lockstep: kernel launch failed: out of host memory\n");
    set_last_error(cudaErrorMemoryAllocation);
    return cudaErrorMemoryAllocation;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lockstep: kernel launch failed: %s\n", e.what());
    set_last_error(cudaErrorLaunchFailure);
    return cudaErrorLaunchFailure;
  }
}

}  // namespace lockstep::emu
