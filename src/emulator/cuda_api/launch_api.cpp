// The CUDA runtime's answer to a launch that failed (lockstep/emu/launch_api.h).
#include "lockstep/emu/launch_api.h"

#include <csignal>
#include <cstdio>
#include <mutex>
#include <new>
#include <unordered_map>

#include "execution/kernel_info.h"
#include "lockstep/emu/builtins.h"
#include "lockstep/emu/check.h"
#include "lockstep/errors.h"

namespace lockstep::emu {

void set_last_error(cudaError_t error);

cudaError_t record_launch_success() { return cudaSuccess; }

void name_called_kernel(const void* thunk, const char* written_name) { kernel_info_for(thunk).name = written_name; }

void refuse_launch_from_kernel() {
  if (current.block)
    throw kernel_error(cudaErrorNotSupported,
                       "a kernel launched a kernel (dynamic parallelism), which the emulator does not support: launch it from the host "
                       "after this kernel returns");
}

namespace {
std::mutex registry_mutex;
std::unordered_map<const void*, registered_kernel>& registry() {
  static std::unordered_map<const void*, registered_kernel> kernels;  // filled by static initialisers: constructed on first use
  return kernels;
}
}  // namespace

bool register_launcher(const void* kernel, registered_kernel registration) {
  const std::lock_guard lock(registry_mutex);
  registry()[kernel] = registration;
  return true;
}

registered_kernel registration_of(const void* kernel) {
  const std::lock_guard lock(registry_mutex);
  const auto found = registry().find(kernel);
  return found == registry().end() ? registered_kernel{} : found->second;
}

void record_unlaunched_kernel_call() { set_last_error(cudaErrorMissingConfiguration); }

cudaError_t launch_registered(const void* kernel, const launch_config& config, void** args, const char* call) {
  refuse_launch_from_kernel();
  const array_launcher launcher = kernel ? registration_of(kernel).launch : nullptr;
  if (!launcher) {
    std::fprintf(stderr,
                 "lockstep: %s: %p is not a kernel this program defines (lockstep nvcc registers every kernel that is not a "
                 "template; launch a template's instance typed, e.g. %s(kernel<float>, grid, block, args), or with <<<>>>)\n",
                 call, kernel, call);
    set_last_error(cudaErrorInvalidDeviceFunction);
    return cudaErrorInvalidDeviceFunction;
  }
  try {
    launcher(kernel, config, args);
    return record_launch_success();
  } catch (...) {
    return record_launch_failure(std::current_exception());
  }
}

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
  } catch (const check_error& e) {
    // Findings are reported (and kept for `lockstep check`); only an access
    // check mode stopped leaves the kernel unfinished, as a fault would.
    std::fprintf(stderr, "%s\n", e.what());
    if (e.code() == cudaErrorIllegalAddress) set_sticky_error(e.code());
    return cudaSuccess;
  } catch (const kernel_error& e) {
    // The context is lost, as on a GPU: every later synchronizing call says
    // so. The launch call itself succeeded: a GPU's kernel fails after it returned.
    std::fprintf(stderr, "lockstep: %s\n", e.what());
    set_sticky_error(e.code());
    return cudaSuccess;
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
