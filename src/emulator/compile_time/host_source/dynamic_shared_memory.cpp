// `extern __shared__ T name[];`, the dynamic shared memory declaration, cannot
// be a per-launch buffer through a macro (`__shared__` is `thread_local` for
// the emulator, and an extern array has no storage), so it becomes a pointer
// to the buffer the launch allocated.
#include <algorithm>
#include <string>
#include <vector>

#include "emulator/compile_time/host_source/transformations.h"

namespace lockstep::emu::host_transforms {
namespace {

using toolchain::token_kind;

// An alignment specifier, `__align__(16)` or `alignas(T)`, or an attribute
// (`__align__(16)` as lockstep nvcc's preprocessed source has it,
// `__attribute__((aligned(16)))`): it may qualify the declaration but not the
// type named in a cast.
bool is_alignment(const token& t) { return t.is("__align__") || t.is("alignas") || t.is("__attribute__"); }

// Whether tokens [first, last) can be the T of `T name[]`: a type, perhaps
// with alignment specifiers, and no brackets, parentheses, initializer or comma
// outside template arguments (`a[], b[]` declares two arrays: left alone).
bool is_plain_type(const std::vector<token>& code, std::size_t first, std::size_t last) {
  if (first == last) return false;
  int angle_depth = 0;
  for (std::size_t i = first; i < last; ++i) {
    const token& t = code[i];
    if (is_alignment(t) && i + 1 < last && code[i + 1].is("(")) {
      toolchain::token_cursor cursor(code, i + 1);
      i = cursor.skip_balanced();
      if (i >= last) return false;
      continue;
    }
    if (t.is("<"))
      ++angle_depth;
    else if (t.is(">"))
      --angle_depth;
    else if (t.is(">>"))
      angle_depth -= 2;
    else if (t.is("[") || t.is("]") || t.is("=") || t.is("(") || t.is(")") || t.is("{") || t.is("}") || (t.is(",") && angle_depth <= 0))
      return false;
  }
  return true;
}

// Tokens [first, last) on one line, a space wherever the source has blanks or
// comments between two of them; alignment specifiers dropped if asked.
std::string joined(const std::vector<token>& code, std::size_t first, std::size_t last, bool drop_alignment) {
  std::string text;
  const token* previous = nullptr;
  for (std::size_t i = first; i < last; ++i) {
    if (drop_alignment && is_alignment(code[i]) && code[i + 1].is("(")) {
      toolchain::token_cursor cursor(code, i + 1);
      i = cursor.skip_balanced();
      continue;
    }
    if (previous && previous->end_offset() != code[i].offset) text += ' ';
    text += code[i].text;
    previous = &code[i];
  }
  return text;
}

}  // namespace

void dynamic_shared_memory(const std::vector<token>& code, source_rewriter& edits) {
  // Braces opened by functions and classes, not by namespaces or `extern "C"`:
  // none open means the declaration stands at file scope.
  std::vector<bool> braces;  // true: a namespace's or a linkage block's
  for (std::size_t i = 0; i + 1 < code.size(); ++i) {
    if (code[i].is("{"))
      braces.push_back((i >= 1 && (code[i - 1].is("namespace") || code[i - 1].kind == token_kind::string_literal)) ||
                       (i >= 2 && code[i - 2].is("namespace")));
    else if (code[i].is("}") && !braces.empty())
      braces.pop_back();
    if (!code[i].is("extern")) continue;
    std::size_t semicolon = i + 1;
    while (semicolon + 1 < code.size() && !code[semicolon].is(";") && !code[semicolon].is("{") && !code[semicolon].is("}")) ++semicolon;
    if (!code[semicolon].is(";")) continue;
    // `T name [ ] ;` with `__shared__` anywhere among T's specifiers (`extern __shared__ float s[]`, `extern float __shared__ s[]`),
    // or with further sized dimensions, `T name [ ] [ N ] ;` (the CUDA samples' tensor-core GEMMs).
    // Back over the bracket groups before the `;` to the first, which must be `[ ]`.
    std::size_t unsized = semicolon;
    bool first_empty = false;
    while (unsized > i + 1 && code[unsized - 1].is("]")) {
      std::size_t open = unsized - 1;
      int depth = 0;
      for (;; --open) {
        depth += code[open].is("]") ? 1 : code[open].is("[") ? -1 : 0;
        if (depth == 0 || open == i) break;
      }
      if (depth != 0 || !code[open].is("[")) break;
      first_empty = open + 2 == unsized;
      unsized = open;
    }
    if (!first_empty || unsized < i + 3 || code[unsized - 1].kind != token_kind::identifier) continue;
    const std::size_t name = unsized - 1;
    const std::string dimensions = joined(code, unsized + 2, semicolon, false);  // `[N]...` after the unsized one
    std::size_t shared = i + 1;
    while (shared < name && !code[shared].is("__shared__")) ++shared;
    if (shared == name) continue;
    // The type is what lies on either side of `__shared__`.
    auto type_text = [&](bool drop_alignment) {
      const std::string before = joined(code, i + 1, shared, drop_alignment), after = joined(code, shared + 1, name, drop_alignment);
      return before.empty() || after.empty() ? before + after : before + " " + after;
    };
    if ((shared > i + 1 && !is_plain_type(code, i + 1, shared)) || (name > shared + 1 && !is_plain_type(code, shared + 1, name))) continue;
    const std::string cast_type = type_text(true);
    if (cast_type.empty()) continue;
    const bool file_scope = std::find(braces.begin(), braces.end(), false) == braces.end();
    if (!dimensions.empty()) {
      // A pointer to rows of the sized dimensions.
      if (file_scope) continue;  // left as written
      edits.replace(code[i], code[semicolon],
                    type_text(false) + " (* const " + std::string(code[name].text) + ")" + dimensions + " = reinterpret_cast<" + cast_type + " (*)" +
                        dimensions + ">(::lockstep::emu::dynamic_shared_memory());");
      i = semicolon;
      continue;
    }
    // At file scope there is no launch yet to point to: the name reads the
    // running block's buffer wherever a kernel uses it.
    if (file_scope)
      edits.replace(code[i], code[semicolon],
                    "static const ::lockstep::emu::dynamic_shared_array<" + cast_type + "> " + std::string(code[name].text) + "{};");
    else
      edits.replace(code[i], code[semicolon],
                    type_text(false) + "* const " + std::string(code[name].text) + " = reinterpret_cast<" + cast_type +
                        "*>(::lockstep::emu::dynamic_shared_memory());");
    i = semicolon;
  }
}

}  // namespace lockstep::emu::host_transforms
