// `kernel<<<grid, block, shared, stream>>>(args)`, CUDA's launch syntax, is no
// C++ at all; it becomes a call of lockstep::emu::chevron_launch (in
// lockstep/emu/launch_api.h), which launches on the emulator and keeps the
// launch's errors for cudaGetLastError as the CUDA runtime does:
//   ::lockstep::emu::chevron_launch(resolve, grid, block, shared, stream)(args)
// `resolve` is a generic lambda that the launch calls with its arguments'
// types and that answers which kernel the launch names, trying in turn, as
// nvcc's call of the kernel would resolve it:
//   1. the one function of that name taking as many parameters as the launch
//      passes (kernel_named: a kernel beside a host function of its name, a
//      pointer, a template whose arguments are written);
//   2. a template whose parameters are exactly the arguments' types;
//   3. otherwise a closure that calls the kernel by name with the arguments
//      (default arguments, templates deduced through conversions).
// The kernel expression is copied into the first two; its written tokens stay
// in the third, and the configuration and the arguments keep their text, so
// every line keeps its number.
#include "emulator/compile_time/host_source/transformations.h"

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

std::string resolver_before_kernel(const std::vector<token>& code, std::size_t start, std::size_t chevrons, std::size_t argument_count) {
  std::string kernel, name;
  for (std::size_t j = start; j < chevrons; ++j) {
    kernel += std::string(code[j].text) + " ";
    name += std::string(code[j].text);
  }
  const std::string n = std::to_string(argument_count);
  const std::string types = "typename decltype(lockstep_arg)::type...";
  const std::string named = "::lockstep::emu::kernel_named(lockstep_arity{}, " + kernel + ")";
  const std::string exact = "static_cast<void (*)(" + types + ")>(" + kernel + ")";
  return "::lockstep::emu::chevron_launch([&](auto... lockstep_arg) { using lockstep_arity = ::lockstep::emu::arity_for<" + n +
         ", decltype(lockstep_arg)...>; if constexpr (requires { requires ::lockstep::emu::parameter_count<decltype(" + named + ")> == " + n +
         "; }) return " + named + "; else if constexpr (requires { " + exact + "; }) return " + exact +
         "; else return ::lockstep::emu::call_by_name<" + types + ">(\"" + name + "\", [=](" + types + " lockstep_param) { ";
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
    edits.insert(code[start].offset, resolver_before_kernel(code, start, i, argument_count(code, close + 1)));
    edits.replace(code[i], code[i], "(lockstep_param...); }); }, ");
    edits.replace(code[close], code[close], ")");
    i = close;
  }
}

}  // namespace lockstep::emu::host_transforms
