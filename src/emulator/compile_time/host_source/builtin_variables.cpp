// `threadIdx`, `blockIdx`, `blockDim` and `gridDim` are variables in CUDA, so
// a program may declare its own of those names: host code often writes
// `dim3 gridDim(n / 16, m / 16); k<<<gridDim, blockDim>>>(...)`. On the
// emulator they read the running thread's record, which in lockstep's headers
// are macros; the driver's preprocessing keeps them as names
// (LOCKSTEP_KEEP_KEYWORDS), and here each use becomes the read
// (`::lockstep::emu::builtin_grid_dim()`), except where a declaration of the
// program's own hides it: from there to the end of its block (for a
// parameter, of the function's body) the program's variable is renamed.
#include <array>
#include <string>
#include <string_view>

#include "emulator/compile_time/host_source/transformations.h"

namespace lockstep::emu::host_transforms {
namespace {

using toolchain::token_kind;

struct builtin {
  std::string_view name, read;
};
constexpr std::array builtins{
    builtin{"threadIdx", "::lockstep::emu::builtin_thread_idx()"},
    builtin{"blockIdx", "::lockstep::emu::builtin_block_idx()"},
    builtin{"blockDim", "::lockstep::emu::builtin_block_dim()"},
    builtin{"gridDim", "::lockstep::emu::builtin_grid_dim()"},
};

const builtin* builtin_of(const token& t) {
  if (t.kind != token_kind::identifier) return nullptr;
  for (const builtin& b : builtins)
    if (t.text == b.name) return &b;
  return nullptr;
}

bool is_member_access(const std::vector<token>& code, std::size_t i) {
  return i > 0 && (code[i - 1].is(".") || code[i - 1].is("->") || code[i - 1].is("::"));
}

// Whether the comma before token i separates declarators: the innermost
// bracket around it is a block's brace (not a call's or a list's), and the
// statement it is in starts as a declaration does (`T name`, `ns::T name`, `T<...>`).
bool in_declarator_list(const std::vector<token>& code, std::size_t i) {
  int depth = 0;
  for (std::size_t j = i; j-- > 0;) {
    const token& t = code[j];
    if (depth == 0 && (t.is(";") || t.is("{") || t.is("}"))) {
      const std::size_t first = j + 1;
      if (first + 1 >= i || code[first].kind != token_kind::identifier || code[first].is("return")) return false;
      const token& second = code[first + 1];
      return second.kind == token_kind::identifier || second.is("<") || second.is("::") || second.is("*") || second.is("&");
    }
    if (t.is(")") || t.is("]") || t.is("}")) {
      ++depth;
    } else if (t.is("(") || t.is("[") || t.is("{")) {
      if (depth == 0) return false;
      --depth;
    }
  }
  return false;
}

// `T name` followed by what may follow a declarator: the program declares its own.
bool declares(const std::vector<token>& code, std::size_t i) {
  if (i == 0 || i + 1 >= code.size()) return false;
  const token& next = code[i + 1];
  if (!(next.is("(") || next.is("=") || next.is(";") || next.is("{") || next.is(",") || next.is(")") || next.is("["))) return false;
  if (code[i - 1].is(",")) return in_declarator_list(code, i);  // `dim3 grid(n), blockDim = dim3(16);`
  std::size_t before = i - 1;
  while (before > 0 && (code[before].is("*") || code[before].is("&") || code[before].is("&&") || code[before].is("const"))) --before;
  const token& type = code[before];
  if (type.is(">")) return true;  // a template's type: std::array<int, 3> gridDim
  if (type.kind != token_kind::identifier) return false;
  for (const char* keyword : {"return", "throw", "case", "sizeof", "else", "do", "new", "delete", "co_return", "co_yield", "typedef"})
    if (type.is(keyword)) return false;
  return true;
}

// The index of the token that ends the scope of a declaration at `i`: the
// closing brace of its block, or of the function body after its parameter list.
std::size_t scope_end(const std::vector<token>& code, std::size_t i) {
  int depth = 0;
  std::size_t open = code.size();
  for (std::size_t j = i; j-- > 0;) {
    const token& t = code[j];
    if (t.is(")") || t.is("]") || t.is("}")) {
      ++depth;
    } else if (t.is("(") || t.is("[") || t.is("{")) {
      if (depth == 0) {
        open = j;
        break;
      }
      --depth;
    }
  }
  if (open == code.size()) return code.size();  // namespace scope: the rest of the file
  toolchain::token_cursor cursor(code, open);
  std::size_t close = cursor.skip_balanced();
  if (close >= code.size() || !code[open].is("(")) return close;
  // A parameter: its scope is the function body that follows the list.
  for (std::size_t j = close + 1; j < code.size(); ++j) {
    if (code[j].is(";")) return close;  // a declaration only
    if (code[j].is("{")) {
      toolchain::token_cursor body(code, j);
      return body.skip_balanced();
    }
  }
  return close;
}

}  // namespace

void builtin_variables(const std::vector<token>& code, source_rewriter& edits) {
  std::vector<std::size_t> hidden_until(builtins.size(), 0);  // per builtin: the program's own name holds until this token
  for (std::size_t i = 0; i < code.size(); ++i) {
    const builtin* b = builtin_of(code[i]);
    if (!b || is_member_access(code, i)) continue;
    const std::size_t which = static_cast<std::size_t>(b - builtins.data());
    if (i >= hidden_until[which] && declares(code, i)) {
      if (in_extern_declaration(code, i)) {                                            // CUDA's headers redeclaring the built-in
        edits.replace(code[i], code[i], std::string(b->name) + "_lockstep_declared");  // an unused declaration: the built-in stays
        continue;
      }
      hidden_until[which] = scope_end(code, i);
    }
    if (i < hidden_until[which])
      edits.replace(code[i], code[i], std::string(b->name) + "_lockstep_own");
    else
      edits.replace(code[i], code[i], std::string(b->read));
  }
}

}  // namespace lockstep::emu::host_transforms
