// `#if __CUDA_ARCH__ >= 700` around device code. nvcc compiles a file twice,
// for the host with __CUDA_ARCH__ undefined and for the GPU with it defined;
// the emulator compiles it once, as the host pass does, so a kernel whose body
// (or a device function wholly) sits under such a conditional would compile to
// nothing or to its fallback (the CUDA samples' simpleAWBarrier and reduction).
// Here, in the written source before preprocessing, each conditional group
// that tests __CUDA_ARCH__ and holds device code only gets the device pass's
// answer, an H100's (900):
//   - a group inside the body of a function that is __global__ or __device__
//     without __host__;
//   - a group outside any function whose code defines device functions and
//     nothing that runs on the host (no __host__, no other function body).
// Everything else keeps the host pass's answer, as do groups with inline
// assembly (`asm`), which the emulator cannot run, so a portable fallback is
// kept where one is written. In a device-only function's own code,
// __CUDA_ARCH__ is 900 too. Lines keep their numbers.
#include <algorithm>
#include <string>
#include <vector>

#include "emulator/compile_time/host_source/host_source.h"
#include "toolchain/lexer.h"
#include "toolchain/rewriter.h"

namespace lockstep::emu {
namespace {

using toolchain::token;
using toolchain::token_kind;

struct body_range {
  std::size_t open, close;  // offsets of `{` and `}`
  bool device_only;
};

bool is_word(const token& t, std::string_view word) { return t.kind == token_kind::identifier && t.text == word; }

// From the token after the last `;`, `{` or `}` before `i` (with template headers and attributes).
std::size_t declaration_start(const std::vector<token>& code, std::size_t i) {
  while (i > 0 && !code[i - 1].is(";") && !code[i - 1].is("{") && !code[i - 1].is("}")) --i;
  return i;
}

// The function bodies of `code` outside other function bodies (a lambda's or a
// local class's belongs to its function's), each marked device-only or not;
// class, namespace and enum bodies and initializer braces are not function bodies.
std::vector<body_range> function_bodies(const std::vector<token>& code) {
  std::vector<body_range> bodies;
  std::vector<bool> closes_function;  // per open brace
  for (std::size_t i = 0; i < code.size(); ++i) {
    if (code[i].is("{")) {
      bool device = false, host = false, parameters = false, other_scope = false;
      int parentheses = 0;
      for (std::size_t j = declaration_start(code, i); j < i; ++j) {
        parentheses += code[j].is("(") ? 1 : code[j].is(")") ? -1 : 0;
        device |= is_word(code[j], "__global__") || is_word(code[j], "__device__");
        host |= is_word(code[j], "__host__");
        parameters |= code[j].is(")");
        other_scope |= is_word(code[j], "struct") || is_word(code[j], "class") || is_word(code[j], "union") || is_word(code[j], "namespace") ||
                       is_word(code[j], "enum") || (parentheses == 0 && code[j].is("="));
      }
      const bool in_function = !bodies.empty() && bodies.back().close == 0;
      const bool function = parameters && !other_scope && !in_function;
      closes_function.push_back(function);
      if (function) bodies.push_back({code[i].offset, 0, device && !host});
    } else if (code[i].is("}") && !closes_function.empty()) {
      if (closes_function.back()) bodies.back().close = code[i].offset;
      closes_function.pop_back();
    }
  }
  std::erase_if(bodies, [](const body_range& b) { return b.close == 0; });
  return bodies;
}

std::string_view directive_name(std::string_view directive) {
  std::size_t i = directive.find_first_not_of(" \t", 1);  // after '#'
  if (i == std::string_view::npos) return {};
  std::size_t end = directive.find_first_not_of("abcdefghijklmnopqrstuvwxyz", i);
  return directive.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i);
}

bool mentions_arch(std::string_view directive) {
  for (const token& t : toolchain::tokenize(directive.substr(1)))
    if (is_word(t, "__CUDA_ARCH__")) return true;
  return false;
}

// The directive as the device pass reads it.
std::string device_directive(std::string_view directive) {
  const std::string_view name = directive_name(directive);
  // A directive continued over several lines stays as long.
  std::string continued_lines;
  for (char c : directive)
    if (c == '\n') continued_lines += "\\\n";
  if (name == "ifdef") return "#if 1 /* lockstep: device code, __CUDA_ARCH__ is 900 */" + continued_lines;
  if (name == "ifndef") return "#if 0 /* lockstep: device code, __CUDA_ARCH__ is 900 */" + continued_lines;
  // After the `#`, which would make the whole text one directive token.
  const std::vector<token> tokens = toolchain::tokenize(directive.substr(1));
  std::string out = "#";
  std::size_t copied = 1;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (!is_word(tokens[i], "__CUDA_ARCH__")) continue;
    std::size_t first = i, last = i;
    std::string value = "900";
    // `defined(__CUDA_ARCH__)` and `defined __CUDA_ARCH__` are 1.
    if (i >= 2 && tokens[i - 1].is("(") && is_word(tokens[i - 2], "defined") && i + 1 < tokens.size() && tokens[i + 1].is(")")) {
      first = i - 2;
      last = i + 1;
      value = "1";
    } else if (i >= 1 && is_word(tokens[i - 1], "defined")) {
      first = i - 1;
      value = "1";
    }
    out.append(directive.substr(copied, 1 + tokens[first].offset - copied));
    out += value;
    copied = 1 + tokens[last].end_offset();
  }
  out.append(directive.substr(copied));
  return out;
}

struct conditional_group {
  std::vector<std::size_t> directives;  // indices into the token list: #if.., #elif.., #else, #endif
  bool tests_arch = false;
};

}  // namespace

std::string device_arch_conditionals(const std::string& written_source) {
  if (written_source.find("__CUDA_ARCH__") == std::string::npos) return written_source;
  const std::vector<token> tokens = toolchain::tokenize(written_source);
  std::vector<conditional_group> groups, open;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].kind != token_kind::directive) continue;
    const std::string_view name = directive_name(tokens[i].text);
    if (name == "if" || name == "ifdef" || name == "ifndef") {
      open.push_back({{i}, mentions_arch(tokens[i].text)});
    } else if ((name == "elif" || name == "else" || name == "elifdef" || name == "elifndef") && !open.empty()) {
      open.back().directives.push_back(i);
      open.back().tests_arch |= name != "else" && mentions_arch(tokens[i].text);
    } else if (name == "endif" && !open.empty()) {
      open.back().directives.push_back(i);
      if (open.back().tests_arch) groups.push_back(open.back());
      open.pop_back();
    }
  }

  const std::vector<token> code = toolchain::code_tokens(written_source);
  const std::vector<body_range> bodies = function_bodies(code);
  toolchain::source_rewriter edits(written_source);
  for (const conditional_group& group : groups) {
    const std::size_t begin = tokens[group.directives.front()].offset, end = tokens[group.directives.back()].offset;
    // The innermost function body around the group, if any.
    const body_range* around = nullptr;
    for (const body_range& b : bodies)
      if (b.open < begin && end < b.close && (!around || b.open > around->open)) around = &b;
    bool device = false;
    if (around) {
      device = around->device_only;
    } else {
      bool device_function = false, host_code = false;
      for (const body_range& b : bodies) {
        if (b.open < begin || b.open > end) continue;
        (b.device_only ? device_function : host_code) = true;
      }
      for (const token& t : code)
        if (t.offset > begin && t.offset < end && is_word(t, "__host__")) host_code = true;
      device = device_function && !host_code;
    }
    for (const token& t : code)
      if (t.offset > begin && t.offset < end && (is_word(t, "asm") || is_word(t, "__asm__") || is_word(t, "__asm"))) device = false;
    if (!device) continue;
    for (std::size_t d : group.directives) {
      const std::string_view name = directive_name(tokens[d].text);
      if (name == "else" || name == "endif") continue;
      edits.replace(tokens[d], tokens[d], device_directive(tokens[d].text));
    }
  }
  // In device code's own text too (`printf("%d", __CUDA_ARCH__)`).
  for (const token& t : code)
    if (is_word(t, "__CUDA_ARCH__") &&
        std::any_of(bodies.begin(), bodies.end(), [&](const body_range& b) { return b.device_only && b.open < t.offset && t.offset < b.close; }))
      edits.replace(t, t, "900");
  return edits.empty() ? written_source : edits.result();
}

}  // namespace lockstep::emu
