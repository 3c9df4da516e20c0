// Turns CUDA C++ source into source the host compiler builds for the emulator.
//
// Only one construct needs rewriting: `extern __shared__ T name[];`, the
// dynamic shared memory declaration, becomes a pointer to the launch's dynamic
// shared buffer. Everything else is handled by lockstep/cuda.h. Line numbers
// are kept, so compiler messages and debug info point at the user's lines.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace lockstep::emu {

std::string host_source(const std::string& cuda_source);

// Offsets of `word` as a whole token outside comments and string or character
// literals: a small lexer shared with the JIT's kernel discovery.
std::vector<std::size_t> token_offsets(const std::string& source, const char* word);

}  // namespace lockstep::emu
