// The transformations host_source() applies, one per file. Each reads the
// source's code tokens (no comments, no directives) and adds its edits; the
// edits of all of them are applied together, so each sees the original text.
#pragma once
#include <cstddef>
#include <vector>

#include "toolchain/lexer.h"
#include "toolchain/rewriter.h"

namespace lockstep::emu::host_transforms {

using toolchain::source_rewriter;
using toolchain::token;

// Whether the statement or declaration holding token i (from the token after
// the last `;`, `{` or `}`) begins with `extern`: an `extern __shared__` array,
// or CUDA's headers redeclaring a built-in (`extern const uint3 threadIdx;`).
inline bool in_extern_declaration(const std::vector<token>& code, std::size_t i) {
  while (i > 0 && !code[i - 1].is(";") && !code[i - 1].is("{") && !code[i - 1].is("}")) --i;
  return code[i].is("extern");
}

// `extern __shared__ T name[];` -> `T* const name = reinterpret_cast<T*>(::lockstep::emu::dynamic_shared_memory());`
void dynamic_shared_memory(const std::vector<token>& code, source_rewriter& edits);

// `k<<<grid, block, shared, stream>>>(args)` -> `::lockstep::emu::chevron_launch(k, grid, block, shared, stream)(args)`
void launch_syntax(const std::vector<token>& code, source_rewriter& edits);

// `clock()` -> `::lockstep::emu::device_or_host_clock()`: the SM's cycles in a kernel, libc's clock() elsewhere.
void device_clock(const std::vector<token>& code, source_rewriter& edits);

// `asm("mov.u32 %0, %%laneid;" : "=r"(lane))` -> `(lane) = ::lockstep::emu::ptx::laneid()`: reads of
// PTX's special registers; other inline PTX is left as it is.
void inline_ptx(const std::vector<token>& code, source_rewriter& edits);

// `threadIdx`, `blockIdx`, `blockDim`, `gridDim` -> the running thread's record, or, where the program
// declares its own variable of that name, that variable (renamed to the end of its scope).
void builtin_variables(const std::vector<token>& code, source_rewriter& edits);

// Preprocessed source only: `__shared__` -> `thread_local`, `__global__` -> `__attribute__((used))`.
void keywords(const std::vector<token>& code, source_rewriter& edits);

}  // namespace lockstep::emu::host_transforms
