// What `kernel<<<grid, block, shared, stream>>>(args)` becomes on the emulator
// (the host-source rewrite, src/emulator/compile_time/host_source/launch_syntax.cpp, turns
// it into `::lockstep::emu::chevron_launch(resolve, grid, block, shared, stream)(args)`,
// `resolve` naming the kernel as the launch's arguments pick it),
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
#include <tuple>
#include <type_traits>
#include <utility>

#include "lockstep/emu/builtins.h"
#include "lockstep/emu/kernel_overloads.h"
#include "lockstep/launch.h"

namespace lockstep::emu {

// Turns the exception a launch threw into the CUDA runtime's answer (last or
// sticky error, a line on stderr) and what the launch call returns: a refused
// launch's error, or cudaSuccess for a kernel that failed while it ran (on a
// GPU the call has returned by then; the next synchronizing call reports it).
// SIGINT's interruption ends the program as SIGINT would.
cudaError_t record_launch_failure(std::exception_ptr failure);
// A launch that went through clears nothing but is an answer too: cudaSuccess.
cudaError_t record_launch_success();
// A launch from inside a kernel (dynamic parallelism) fails that kernel with a
// kernel_error saying so: the emulator has no device-side launches.
void refuse_launch_from_kernel();

// A kernel that no function pointer can name: a template whose arguments the
// launch's arguments deduce through conversions (`k<<<g, b>>>(float_ptr)` for
// `template <class T> k(const T*)`), or one whose default arguments the launch
// leaves out. `call` calls it by name with the launch's arguments, as the
// launch's text does; `written_name` is that name, for messages.
template <class Call, class... Params>
struct called_kernel {
  const char* written_name;
  Call call;
};
template <class... Params, class Call>
called_kernel<Call, Params...> call_by_name(const char* written_name, Call call) {
  return {written_name, call};
}

// Names the kernel that `thunk` runs (its own symbol names a lambda).
void name_called_kernel(const void* thunk, const char* written_name);

template <class... Params, class... Args>
void launch_resolved(void (*kernel)(Params...), const launch_config& config, Args&&... args) {
  kernel_launch<Params...>(kernel, config)(std::forward<Args>(args)...);
}
template <class Call, class... Params, class... Args>
void launch_resolved(const called_kernel<Call, Params...>& kernel, const launch_config& config, Args&&... args) {
  struct packed {
    const Call& call;
    std::tuple<Params...> args;
  };
  // The thunk is the kernel's identity: per launch site and argument types, code in the program's module.
  void (*thunk)(const void*) = [](const void* p) {
    const auto& call = *static_cast<const packed*>(p);
    std::apply(call.call, call.args);
  };
  static const bool named = (name_called_kernel(reinterpret_cast<const void*>(thunk), kernel.written_name), true);
  (void)named;
  const packed call{kernel.call, std::tuple<Params...>(std::forward<Args>(args)...)};
  launch_kernel(reinterpret_cast<const void*>(thunk), config, thunk, &call);
}

// What the rewrite makes of `kernel<<<...>>>(args)`: `resolve` maps the
// arguments' types (std::type_identity) to the kernel the launch names, a
// function pointer where one can name it, else a called_kernel.
template <class Resolve>
class chevron_call {
 public:
  chevron_call(const Resolve& resolve, const launch_config& config) : resolve_(resolve), config_(config) {}

  template <class... Args>
  void operator()(Args&&... args) const {
    refuse_launch_from_kernel();
    try {
      launch_resolved(resolve_(std::type_identity<std::decay_t<Args>>{}...), config_, std::forward<Args>(args)...);
      record_launch_success();
    } catch (...) {
      record_launch_failure(std::current_exception());
    }
  }

 private:
  const Resolve& resolve_;
  launch_config config_;
};

template <class Resolve>
chevron_call<Resolve> chevron_launch(const Resolve& resolve, dim3 grid, dim3 block, std::size_t shared_bytes = 0, cudaStream_t stream = nullptr) {
  return {resolve, launch_config{grid, block, shared_bytes, stream}};
}

// The kernels a program defines, by address, with a launcher that reads
// their arguments from an array of pointers (cudaLaunchKernel's `void** args`):
// the driver's rewrite registers every kernel definition that is not a
// template (src/emulator/compile_time/host_source/keywords.cpp).
using array_launcher = void (*)(const void* kernel, const launch_config& config, void** args);
// The parameters' sizes and alignments, in order: where each lies in a packed
// argument buffer (cuLaunchKernel's CU_LAUNCH_PARAM_BUFFER_POINTER).
struct kernel_parameters {
  std::size_t count = 0;
  const std::size_t* sizes = nullptr;
  const std::size_t* alignments = nullptr;
};
struct registered_kernel {
  array_launcher launch = nullptr;
  kernel_parameters parameters;
};
bool register_launcher(const void* kernel, registered_kernel registration);
registered_kernel registration_of(const void* kernel);  // launch is null for a kernel never registered

template <class... Params>
inline constexpr std::size_t parameter_sizes[] = {sizeof(std::remove_cvref_t<Params>)..., 0};
template <class... Params>
inline constexpr std::size_t parameter_alignments[] = {alignof(std::remove_cvref_t<Params>)..., 0};

template <class... Params, std::size_t... index>
void launch_from_array(void (*kernel)(Params...), const launch_config& config, void** args, std::index_sequence<index...>) {
  kernel_launch<Params...>(kernel, config)(*static_cast<std::remove_cvref_t<Params>*>(args[index])...);
}
template <class... Params>
void launch_from_array(const void* kernel, const launch_config& config, void** args) {
  launch_from_array(reinterpret_cast<void (*)(Params...)>(const_cast<void*>(kernel)), config, args, std::index_sequence_for<Params...>{});
}
template <class... Params>
bool register_kernel(void (*kernel)(Params...)) {
  return register_launcher(reinterpret_cast<const void*>(kernel),
                           {&launch_from_array<Params...>, {sizeof...(Params), parameter_sizes<Params...>, parameter_alignments<Params...>}});
}

// What NVRTC's name expressions become (src/emulator/cuda_api/nvrtc_emulation.cpp): a
// kernel, a template's instance included, is registered as it is named; a
// variable is its address.
template <class... Params>
const void* name_expression_address(void (*kernel)(Params...)) {
  register_kernel(kernel);
  return reinterpret_cast<const void*>(kernel);
}
inline const void* name_expression_address(const void* variable) { return variable; }

// A kernel called as a plain function from host code (through a pointer to
// it, say) launches nothing on a GPU: its stub finds no launch configuration
// and returns, leaving cudaErrorMissingConfiguration as the last error. lockstep
// nvcc starts every kernel's body with this test (keywords.cpp).
inline bool kernel_called_unlaunched() { return current.block == nullptr; }
void record_unlaunched_kernel_call();

// cudaLaunchKernel and cudaLaunchCooperativeKernel through an untyped pointer.
cudaError_t launch_registered(const void* kernel, const launch_config& config, void** args, const char* call);

template <class... Params>
cudaError_t launch_typed(void (*kernel)(Params...), const launch_config& config, void** args) {
  refuse_launch_from_kernel();
  try {
    launch_from_array(kernel, config, args, std::index_sequence_for<Params...>{});
    return record_launch_success();
  } catch (...) {
    return record_launch_failure(std::current_exception());
  }
}

}  // namespace lockstep::emu

// The runtime API's launch calls. A typed kernel needs nothing more; one cast
// to `void*` must be a kernel the program defines (not a template's instance).
inline cudaError_t cudaLaunchKernel(const void* kernel, dim3 grid, dim3 block, void** args, std::size_t shared_bytes = 0,
                                    cudaStream_t stream = nullptr) {
  return lockstep::emu::launch_registered(kernel, {grid, block, shared_bytes, stream}, args, "cudaLaunchKernel");
}
template <class... Params>
cudaError_t cudaLaunchKernel(void (*kernel)(Params...), dim3 grid, dim3 block, void** args, std::size_t shared_bytes = 0,
                             cudaStream_t stream = nullptr) {
  return lockstep::emu::launch_typed(kernel, {grid, block, shared_bytes, stream}, args);
}
// All blocks resident at once, so that this_grid().sync() can meet them all;
// more blocks than an H100 holds at once fail with cudaErrorCooperativeLaunchTooLarge.
inline cudaError_t cudaLaunchCooperativeKernel(const void* kernel, dim3 grid, dim3 block, void** args, std::size_t shared_bytes = 0,
                                               cudaStream_t stream = nullptr) {
  return lockstep::emu::launch_registered(kernel, {grid, block, shared_bytes, stream, true}, args, "cudaLaunchCooperativeKernel");
}
template <class... Params>
cudaError_t cudaLaunchCooperativeKernel(void (*kernel)(Params...), dim3 grid, dim3 block, void** args, std::size_t shared_bytes = 0,
                                        cudaStream_t stream = nullptr) {
  return lockstep::emu::launch_typed(kernel, {grid, block, shared_bytes, stream, true}, args);
}
