// Turns CUDA C++ source into source the host compiler builds for the emulator.
//
// Only one construct needs rewriting: `extern __shared__ T name[];`, the
// dynamic shared memory declaration, becomes a pointer to the launch's dynamic
// shared buffer. Everything else is handled by lockstep/cuda.h. Line numbers
// are kept, so compiler messages and debug info point at the user's lines.
#pragma once
#include <string>

namespace lockstep::emu {

std::string host_source(const std::string& cuda_source);

}  // namespace lockstep::emu
