// `kernel<<<grid, block, shared, stream>>>(args)`, CUDA's launch syntax, is no
// C++ at all; it becomes a call of lockstep::emu::chevron_launch (in
// lockstep/emu/launch_api.h), which launches on the emulator and keeps the
// launch's errors for cudaGetLastError as the CUDA runtime does:
//   ::lockstep::emu::chevron_launch(kernel, grid, block, shared, stream)(args)
// Only the brackets change, so the kernel expression, the configuration and
// the arguments keep their text and their lines.
#include "emulator/host_source/transformations.h"

namespace lockstep::emu::host_transforms {
namespace {

using toolchain::token_kind;

// The first token of the kernel expression that ends just before `<<<` at
// `chevrons`: a name, perhaps qualified (`ns::k`, `::k`, `Outer<T>::k`), with
// template arguments (`k<T, 4>`), or a parenthesized expression (`(*fp)`).
// Returns `chevrons` when there is none.
std::size_t kernel_expression_start(const std::vector<token>& code, std::size_t chevrons) {
  std::size_t i = chevrons;
  while (i > 0) {
    const token& t = code[i - 1];
    if (t.is(">") || t.is(">>") || t.is(">>>")) {
      // Template arguments: walk back to the matching `<`, counting angles
      // (and skipping bracketed sub-expressions).
      int depth = 0;
      std::size_t j = i;
      while (j > 0) {
        const token& u = code[--j];
        if (u.is(">"))
          depth += 1;
        else if (u.is(">>"))
          depth += 2;
        else if (u.is(">>>"))
          depth += 3;
        else if (u.is("<"))
          depth -= 1;
        else if (u.is("<<"))
          depth -= 2;
        else if (u.is(";") || u.is("{") || u.is("}"))
          return chevrons;
        if (depth == 0) break;
      }
      if (depth != 0 || j == 0 || code[j - 1].kind != token_kind::identifier) return chevrons;
      i = j - 1;  // the template's name
    } else if (t.is(")")) {
      int depth = 0;
      std::size_t j = i;
      while (j > 0) {
        const token& u = code[--j];
        if (u.is(")"))
          ++depth;
        else if (u.is("(") && --depth == 0)
          break;
      }
      if (depth != 0) return chevrons;
      return j;
    } else if (t.kind == token_kind::identifier) {
      i -= 1;
    } else {
      return chevrons;
    }
    // A qualified name goes on to the left: `ns ::`, `::`, `template`.
    while (i > 0 && code[i - 1].is("template")) --i;
    if (i > 0 && code[i - 1].is("::")) {
      --i;
      if (i > 0 && (code[i - 1].kind == token_kind::identifier || code[i - 1].is(">") || code[i - 1].is(">>"))) continue;
      return i;
    }
    return i;
  }
  return i;
}

// How many arguments the parenthesized list at `open` holds: its commas outside nested brackets, plus one.
std::size_t argument_count(const std::vector<token>& code, std::size_t open) {
  toolchain::token_cursor cursor(code, open);
  const std::size_t close = cursor.skip_balanced();
  if (close == open + 1) return 0;
  std::size_t count = 1;
  int depth = 0;
  for (std::size_t j = open + 1; j < close && j < code.size(); ++j) {
    const token& t = code[j];
    if (t.is("(") || t.is("[") || t.is("{"))
      ++depth;
    else if (t.is(")") || t.is("]") || t.is("}"))
      --depth;
    else if (depth == 0 && t.is(","))
      ++count;
  }
  return count;
}

}  // namespace

void launch_syntax(const std::vector<token>& code, source_rewriter& edits) {
  for (std::size_t i = 0; i < code.size(); ++i) {
    if (!code[i].is("<<<")) continue;
    const std::size_t start = kernel_expression_start(code, i);
    if (start == i) continue;  // `<<<` after no kernel: leave it to the compiler's message
    toolchain::token_cursor cursor(code, i);
    const std::size_t close = cursor.skip_balanced();
    if (!code[close].is(">>>") || !code[close + 1].is("(")) continue;
    // The kernel by the launch's argument count, as host code often has a function of the kernel's name.
    edits.insert(code[start].offset, "::lockstep::emu::chevron_launch(::lockstep::emu::kernel_named(::lockstep::emu::arity<" +
                                         std::to_string(argument_count(code, close + 1)) + ">{}, ");
    edits.replace(code[i], code[i], "), ");
    edits.replace(code[close], code[close], ")");
    i = close;
  }
}

}  // namespace lockstep::emu::host_transforms
