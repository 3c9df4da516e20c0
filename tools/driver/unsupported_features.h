// CUDA features the emulator does not provide, recognized where a build
// fails because of them, so the message names the feature and the line
// instead of leaving the user with "was not declared" or an assembler error.
#pragma once
#include <string>

namespace lockstep::driver {

// Inline PTX (`asm("mov.u32 %0, %%laneid;" ...)`) in a CUDA source's
// preprocessed, rewritten text: "file:line: inline PTX ...", one line per use,
// or "" when there is none. The host compiler would take PTX for x86 assembly.
std::string inline_ptx_uses(const std::string& preprocessed);

// For a failed compile or link: a line per unsupported feature the compiler's
// output names ("file:line: cufftExecC2C: cuFFT is not emulated"), or "".
std::string explain_unsupported(const std::string& compiler_output);

}  // namespace lockstep::driver
