#include "translation_unit.h"

#include <cctype>
#include <sstream>

#include "emulator/host_source.h"

namespace lockstep::jit {
namespace {

struct token {
  enum kind_t { identifier, punct, literal } kind;
  std::string text;
};

// Identifiers, punctuation and literals, skipping comments and preprocessor
// lines: enough structure to find kernel definitions and their namespaces.
std::vector<token> tokenize(const std::string& s) {
  std::vector<token> out;
  bool line_start = true;
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    if (c == '\n') {
      line_start = true;
      ++i;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (line_start && c == '#') {  // a directive, with its continuation lines
      while (i < s.size() && s[i] != '\n') i += (s[i] == '\\' && i + 1 < s.size()) ? 2 : 1;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      const std::size_t end = s.find("*/", i + 2);
      i = end == std::string::npos ? s.size() : end + 2;
    } else if (c == '"' || c == '\'') {
      std::size_t j = i + 1;
      while (j < s.size() && s[j] != c) j += s[j] == '\\' ? 2 : 1;
      out.push_back({token::literal, s.substr(i, j + 1 - i)});
      i = j + 1;
      line_start = false;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      out.push_back({token::identifier, s.substr(i, j - i)});
      i = j;
      line_start = false;
    } else {
      out.push_back({token::punct, std::string(1, c)});
      ++i;
      line_start = false;
    }
  }
  return out;
}

bool is(const token& t, const char* text) { return t.text == text; }

}  // namespace

std::vector<std::string> discover_kernel_names(const std::string& source) {
  const std::vector<token> tokens = tokenize(source);
  // Each open brace: the namespace it opens ("" for anonymous or extern "C"
  // blocks, which add no qualifier), or nothing when it opens a class or a
  // function body, inside which no kernel can be defined.
  struct scope {
    bool is_namespace;
    std::string name;
  };
  std::vector<scope> scopes;
  std::vector<std::string> names;
  std::size_t statement_start = 0;  // first token of the current declaration
  auto in_namespace_scope = [&] {
    for (const scope& s : scopes)
      if (!s.is_namespace) return false;
    return true;
  };
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const token& t = tokens[i];
    if (is(t, "{")) {
      scope s{false, ""};
      if (i >= 2 && is(tokens[i - 2], "namespace") && tokens[i - 1].kind == token::identifier) s = {true, tokens[i - 1].text};
      else if (i >= 1 && is(tokens[i - 1], "namespace")) s = {true, ""};
      else if (i >= 2 && is(tokens[i - 2], "extern") && tokens[i - 1].kind == token::literal) s = {true, ""};
      scopes.push_back(s);
      statement_start = i + 1;
    } else if (is(t, "}")) {
      if (!scopes.empty()) scopes.pop_back();
      statement_start = i + 1;
    } else if (is(t, ";")) {
      statement_start = i + 1;
    } else if (is(t, "__global__") && in_namespace_scope()) {
      bool is_template = false;
      for (std::size_t j = statement_start; j < i; ++j) is_template |= is(tokens[j], "template");
      if (is_template) continue;
      // The name is the identifier before the first '(' that does not open an
      // attribute such as __launch_bounds__(256).
      for (std::size_t j = i + 1; j < tokens.size(); ++j) {
        if (is(tokens[j], ";") || is(tokens[j], "{")) break;
        if (!is(tokens[j], "(") || tokens[j - 1].kind != token::identifier) continue;
        const std::string& candidate = tokens[j - 1].text;
        if (candidate == "__launch_bounds__" || candidate == "__align__" || candidate == "alignas" || candidate == "__attribute__" ||
            candidate == "__declspec") {
          int depth = 0;  // skip the attribute's parentheses
          for (; j < tokens.size(); ++j) {
            depth += is(tokens[j], "(") - is(tokens[j], ")");
            if (depth == 0) break;
          }
          continue;
        }
        std::string qualified;
        for (const scope& s : scopes)
          if (!s.name.empty()) qualified += s.name + "::";
        qualified += candidate;
        bool seen = false;
        for (const auto& n : names) seen |= n == qualified;
        if (!seen) names.push_back(qualified);  // a declaration and its definition name one kernel
        break;
      }
    }
  }
  return names;
}

std::string assemble_translation_unit(const std::string& source, const std::string& source_name,
                                      const std::vector<std::string>& kernel_names, compile_target target) {
  std::ostringstream tu;
  tu << "#include \"lockstep/cuda.h\"\n#include \"lockstep/jit/kernel_table.h\"\n";
  tu << "#line 1 \"" << source_name << "\"\n";
  tu << (target == compile_target::host ? emu::host_source(source) : source);
  // Messages about this part name the kernel list, not the user's file.
  tu << "\n#line 1 \"<lockstep: kernels named for " << source_name << ">\"\n";
  // NVRTC's signatures live in device memory, read back by name; the others
  // are host data the kernel table points at.
  const char* storage = target == compile_target::nvrtc ? "__device__ " : "";
  for (std::size_t i = 0; i < kernel_names.size(); ++i)
    tu << "extern \"C\" " << storage << "const ::lockstep::jit::signature lockstep_signature_" << i
       << " = ::lockstep::jit::signature_of<decltype(" << kernel_names[i] << ")>::value;\n";
  if (target != compile_target::nvrtc) {
    tu << "extern \"C\" const ::lockstep::jit::kernel_entry lockstep_kernel_table[] = {\n";
    for (std::size_t i = 0; i < kernel_names.size(); ++i) {
      const std::string& n = kernel_names[i];
      tu << "  {\"" << n << "\", &lockstep_signature_" << i << ", &::lockstep::jit::launcher<&" << n
         << ">, reinterpret_cast<const void*>(&" << n << "), &::lockstep::jit::max_dynamic_shared_setter<&" << n << ">},\n";
    }
    tu << "  {nullptr, nullptr, nullptr, nullptr, nullptr}};\n";
    tu << "extern \"C\" const unsigned lockstep_kernel_count = " << kernel_names.size() << ";\n";
  }
  return tu.str();
}

}  // namespace lockstep::jit
