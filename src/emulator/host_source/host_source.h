// Turns CUDA C++ source into source the host compiler builds for the emulator.
//
// lockstep/cuda.h maps almost all of CUDA onto C++ with macros and functions;
// what no macro can express is rewritten here, by transformations over the
// source's tokens (one per file in this folder, listed in transformations.h):
//   dynamic_shared_memory: `extern __shared__ T name[];` becomes a pointer to
//   the launch's dynamic shared buffer.
// Line numbers are kept, so compiler messages and debug information point at
// the user's lines. Code in a macro's definition, or that a macro produces,
// is not seen.
#pragma once
#include <string>

namespace lockstep::emu {

std::string host_source(const std::string& cuda_source);

}  // namespace lockstep::emu
