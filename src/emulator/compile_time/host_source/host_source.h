// Turns CUDA C++ source into source the host compiler builds for the emulator.
//
// lockstep/cuda.h maps almost all of CUDA onto C++ with macros and functions;
// what no macro can express is rewritten here, by transformations over the
// source's tokens (one per file in this folder, listed in transformations.h):
//   dynamic_shared_memory: `extern __shared__ T name[];` becomes a pointer to
//   the launch's dynamic shared buffer;
//   launch_syntax: `k<<<grid, block>>>(args)` becomes a call that launches
//   on the emulator;
//   keywords (preprocessed input only): `__shared__` and `__global__`, which
//   the driver's preprocessing keeps as they are written, become what
//   lockstep/emu/qualifiers.h makes of them.
// Before preprocessing, device_arch_conditionals gives `#if __CUDA_ARCH__`
// around device code the answer nvcc's device pass gets.
// Line numbers are kept, so compiler messages and debug information point at
// the user's lines. In unpreprocessed source, code in a macro's definition,
// or that a macro produces, is not seen; the driver (`lockstep nvcc`)
// preprocesses first, so there every launch and declaration is seen.
#pragma once
#include <string>

namespace lockstep::emu {

enum class source_form { written, preprocessed };

std::string host_source(const std::string& cuda_source, source_form form = source_form::written);

// Written source, before preprocessing: conditionals on __CUDA_ARCH__ around
// device code only take the GPU pass's branch (device_arch_conditionals.cpp).
std::string device_arch_conditionals(const std::string& written_source);

}  // namespace lockstep::emu
