// In preprocessed source the declaration keywords that a macro cannot map
// survive as tokens (the driver's preprocessing defines them as themselves, so
// dynamic_shared_memory still sees them); here they get what
// lockstep/emu/qualifiers.h gives them in unpreprocessed source. Each
// definition of a kernel that is not a template is also registered with its
// parameter types, so that the runtime API can launch it from an untyped
// pointer and an argument array (`cudaLaunchCooperativeKernel((void*)k, ...)`);
// it is named with its type, as kernels may be overloaded. Every kernel's body
// starts with a test that makes a call from host code, outside a launch, launch
// nothing, as on a GPU (launch_api.h).
#include <string>

#include "emulator/compile_time/host_source/transformations.h"

namespace lockstep::emu::host_transforms {
namespace {

using toolchain::token_kind;

// Whether the declaration that `__global__` at `at` belongs to starts with a
// template header: `template <...> [specifiers] __global__`.
bool in_template(const std::vector<token>& code, std::size_t at) {
  for (std::size_t i = at; i > 0; --i) {
    const token& t = code[i - 1];
    if (t.is(">") || t.is(">>") || t.is("template")) return true;
    if (t.is(";") || t.is("{") || t.is("}")) return false;
  }
  return false;
}

// After `__global__` at `at`: the kernel's name, its parameter list's `(`, and
// the position of its body's closing `}`, when this is a definition (0 otherwise).
std::size_t definition_end(const std::vector<token>& code, std::size_t at, std::size_t& name, std::size_t& open) {
  std::size_t i = at + 1;
  for (; i < code.size() && !code[i].is("("); ++i) {
    if (code[i].is(";") || code[i].is("{")) return 0;
    if (code[i].is("__attribute__") && code[i + 1].is("(")) {  // __launch_bounds__ and friends, expanded
      toolchain::token_cursor cursor(code, i + 1);
      i = cursor.skip_balanced();
    }
  }
  if (i >= code.size() || i == at + 1 || code[i - 1].kind != token_kind::identifier) return 0;
  name = i - 1;
  open = i;
  toolchain::token_cursor cursor(code, i);
  const std::size_t close = cursor.skip_balanced();
  if (!code[close + 1].is("{")) return 0;
  cursor.seek(close + 1);
  const std::size_t end = cursor.skip_balanced();
  return code[end].is("}") ? end : 0;
}

// `(float* y, int n = 4)` -> `void (*)(float* y, int n )`: the kernel's type, default arguments left out.
std::string kernel_pointer_type(const std::vector<token>& code, std::size_t open) {
  toolchain::token_cursor cursor(code, open);
  const std::size_t close = cursor.skip_balanced();
  std::string type = "void (*)(";
  int depth = 0;
  bool in_default = false;
  for (std::size_t j = open + 1; j < close; ++j) {
    const token& t = code[j];
    if (t.is("(") || t.is("[") || t.is("{") || t.is("<")) ++depth;
    if (t.is(")") || t.is("]") || t.is("}") || t.is(">")) --depth;
    if (t.is(">>")) depth -= 2;
    if (depth == 0 && t.is("=")) in_default = true;
    if (depth == 0 && t.is(",")) in_default = false;
    if (!in_default) type += std::string(t.text) + " ";
  }
  return type + ")";
}

}  // namespace

void keywords(const std::vector<token>& code, source_rewriter& edits) {
  for (std::size_t i = 0; i < code.size(); ++i) {
    // An extern __shared__ array's `__shared__`, wherever it stands, goes with the declaration dynamic_shared_memory.cpp rewrites.
    if (code[i].is("__shared__") && !in_extern_declaration(code, i)) {
      // `__shared__ alignas(16) float a[..];` (globalToShmemAsyncCopy): a
      // standard attribute may not follow thread_local, so it goes first.
      if (i + 2 < code.size() && code[i + 1].is("alignas") && code[i + 2].is("(")) {
        toolchain::token_cursor cursor(code, i + 2);
        const std::size_t close = cursor.skip_balanced();
        std::string alignment;
        for (std::size_t k = i + 1; k <= close; ++k) alignment += std::string(code[k].text);
        edits.replace(code[i], code[close], alignment + " thread_local");
        i = close;
        continue;
      }
      edits.replace(code[i], code[i], "thread_local");
    } else if (code[i].is("__constant__")) {
      edits.replace(code[i], code[i], in_extern_declaration(code, i) ? "" : "__attribute__((used))");
    } else if (code[i].is("__global__")) {
      edits.replace(code[i], code[i], "__attribute__((used))");
      std::size_t name = 0, open = 0;
      const std::size_t end = definition_end(code, i, name, open);
      if (!end) continue;
      toolchain::token_cursor parameters(code, open);
      edits.insert(code[parameters.skip_balanced() + 1].end_offset(),
                   " if (::lockstep::emu::kernel_called_unlaunched()) return ::lockstep::emu::record_unlaunched_kernel_call();");
      if (in_template(code, i)) continue;
      edits.insert(code[end].end_offset(), " static inline const bool lockstep_kernel_registered_" + std::to_string(code[end].offset) +
                                               " = ::lockstep::emu::register_kernel(static_cast<" + kernel_pointer_type(code, open) + ">(&" +
                                               std::string(code[name].text) + "));");
    }
  }
}

}  // namespace lockstep::emu::host_transforms
