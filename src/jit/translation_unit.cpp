#include "translation_unit.h"

#include <algorithm>
#include <optional>
#include <sstream>
#include <string_view>

#include "emulator/compile_time/host_source/host_source.h"
#include "toolchain/lexer.h"

namespace lockstep::jit {
namespace {

using toolchain::token;
using toolchain::token_kind;

// Attributes written like calls, whose parentheses hold no kernel name.
bool is_attribute(std::string_view word) {
  return word == "__launch_bounds__" || word == "__align__" || word == "alignas" || word == "__attribute__" || word == "__declspec" ||
         word == "__maxnreg__" || word == "__cluster_dims__";
}

// The namespace a `{` at tokens[open] opens: its name ("a::b" for `namespace
// a::b {`, "" for an anonymous one or an `extern "C" {` block, which add no
// qualifier), or nullopt when it opens something else (a class, a function
// body), inside which no kernel can be defined.
std::optional<std::string> namespace_opened(const std::vector<token>& tokens, std::size_t open) {
  if (open >= 2 && tokens[open - 2].is("extern") && tokens[open - 1].kind == token_kind::string_literal) return "";
  std::string name;
  std::size_t at = open;
  // Walk back over `a :: inline b` to the keyword.
  while (at > 0 && tokens[at - 1].kind == token_kind::identifier && !tokens[at - 1].is("namespace")) {
    if (!tokens[at - 1].is("inline")) name = std::string(tokens[at - 1].text) + (name.empty() ? "" : "::" + name);
    --at;
    if (at > 0 && tokens[at - 1].is("::"))
      --at;
    else
      break;
  }
  if (at > 0 && tokens[at - 1].is("namespace")) return name;
  return std::nullopt;
}

}  // namespace

std::vector<std::string> discover_kernel_names(const std::string& source) {
  const std::vector<token> tokens = toolchain::code_tokens(source);
  // Each open brace: the namespace it opens, or nullopt for any other scope.
  std::vector<std::optional<std::string>> scopes;
  std::vector<std::string> names;
  std::size_t statement_start = 0;  // first token of the current declaration
  auto in_namespace_scope = [&] { return std::all_of(scopes.begin(), scopes.end(), [](const auto& s) { return s.has_value(); }); };
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
    const token& t = tokens[i];
    if (t.is("{")) {
      scopes.push_back(namespace_opened(tokens, i));
      statement_start = i + 1;
    } else if (t.is("}")) {
      if (!scopes.empty()) scopes.pop_back();
      statement_start = i + 1;
    } else if (t.is(";")) {
      statement_start = i + 1;
    } else if (t.is("__global__") && in_namespace_scope()) {
      bool is_template = false;
      for (std::size_t j = statement_start; j < i; ++j) is_template |= tokens[j].is("template");
      if (is_template) continue;
      // The name is the identifier before the first '(' that does not open an
      // attribute such as __launch_bounds__(256).
      toolchain::token_cursor cursor(tokens, i + 1);
      while (!cursor.at_end() && !cursor.peek().is(";") && !cursor.peek().is("{")) {
        const token& candidate = cursor.next();
        if (candidate.kind != token_kind::identifier || !cursor.peek().is("(")) continue;
        if (is_attribute(candidate.text)) {
          cursor.skip_balanced();
          continue;
        }
        std::string qualified;
        for (const auto& s : scopes)
          if (!s->empty()) qualified += *s + "::";
        qualified += candidate.text;
        if (std::find(names.begin(), names.end(), qualified) == names.end())
          names.push_back(qualified);  // a declaration and its definition name one kernel
        break;
      }
    }
  }
  return names;
}

std::string assemble_translation_unit(const std::string& source, const std::string& source_name, const std::vector<std::string>& kernel_names,
                                      compile_target target) {
  std::ostringstream tu;
  tu << host_prelude;
  tu << "#line 1 \"" << source_name << "\"\n";
  tu << (target == compile_target::host ? emu::host_source(source) : source);
  // Messages about this part name the kernel list, not the user's file.
  tu << "\n#line 1 \"<lockstep: kernels named for " << source_name << ">\"\n";
  // NVRTC's signatures live in device memory, read back by name; the others
  // are host data the kernel table points at.
  const char* storage = target == compile_target::nvrtc ? "__device__ " : "";
  for (std::size_t i = 0; i < kernel_names.size(); ++i)
    tu << "extern \"C\" " << storage << "const ::lockstep::jit::signature lockstep_signature_" << i << " = ::lockstep::jit::signature_of<decltype("
       << kernel_names[i] << ")>::value;\n";
  if (target != compile_target::nvrtc) {
    tu << "extern \"C\" const ::lockstep::jit::kernel_entry lockstep_kernel_table[] = {\n";
    for (std::size_t i = 0; i < kernel_names.size(); ++i) {
      const std::string& n = kernel_names[i];
      tu << "  {\"" << n << "\", &lockstep_signature_" << i << ", &::lockstep::jit::launcher<&" << n << ">, reinterpret_cast<const void*>(&" << n
         << "), &::lockstep::jit::max_dynamic_shared_setter<&" << n << ">},\n";
    }
    tu << "  {nullptr, nullptr, nullptr, nullptr, nullptr}};\n";
    tu << "extern \"C\" const unsigned lockstep_kernel_count = " << kernel_names.size() << ";\n";
  }
  return tu.str();
}

}  // namespace lockstep::jit
