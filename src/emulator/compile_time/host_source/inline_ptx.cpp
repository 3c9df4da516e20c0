// Inline PTX that reads a special register into a variable, the form real
// kernels use most (`asm("mov.u32 %0, %%laneid;" : "=r"(lane));`, %smid,
// %warpid, %clock64, %globaltimer, %lanemask_lt, ...), becomes an assignment
// from lockstep/emu/ptx_registers.h:
//   asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));  ->  (lane) = ::lockstep::emu::ptx::laneid();
//   asm("mov.u32 %0, %%tid.x;" : "=r"(x));                ->  (x) = ::lockstep::emu::builtin_thread_idx().x;
// Only the tokens around the output expression change, so the expression's
// own rewrites (threadIdx in an index, say) still apply. Any other inline PTX
// is left for the driver to refuse with its line (tools/driver/unsupported_features.cpp).
#include <regex>
#include <string>
#include <utility>

#include "emulator/compile_time/host_source/transformations.h"

namespace lockstep::emu::host_transforms {
namespace {

using toolchain::token_kind;

// The characters of a plain string literal ("..."), escapes decoded; false for other literals.
bool literal_text(const token& t, std::string& out) {
  const std::string_view s = t.text;
  if (s.size() < 2 || s.front() != '"' || s.back() != '"') return false;
  for (std::size_t i = 1; i + 1 < s.size(); ++i) {
    char c = s[i];
    if (c == '\\' && i + 2 < s.size()) {
      c = s[++i];
      c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
    }
    out += c;
  }
  return true;
}

// The expression that reads special register `name` (`laneid`, `tid.x`), or
// "" if none does: the built-in variables and clocks where lockstep has them,
// else a function of lockstep/emu/ptx_registers.h.
std::string register_expression(const std::string& name) {
  static const std::pair<const char*, const char*> vectors[] = {{"tid", "::lockstep::emu::builtin_thread_idx()"},
                                                                {"ntid", "::lockstep::emu::builtin_block_dim()"},
                                                                {"ctaid", "::lockstep::emu::builtin_block_idx()"},
                                                                {"nctaid", "::lockstep::emu::builtin_grid_dim()"}};
  static const std::pair<const char*, const char*> clocks[] = {{"clock64", "::clock64()"}, {"globaltimer", "::__globaltimer()"}};
  static const char* const in_header[] = {"laneid",      "warpid",      "nwarpid",     "smid",  "nsmid",          "lanemask_eq",   "lanemask_lt",
                                          "lanemask_le", "lanemask_gt", "lanemask_ge", "clock", "globaltimer_lo", "globaltimer_hi"};
  if (const auto dot = name.find('.'); dot != std::string::npos) {
    for (const auto& [vector, read] : vectors)
      if (name.compare(0, dot, vector) == 0) return std::string(read) + name.substr(dot);
    return "";
  }
  for (const auto& [clock, read] : clocks)
    if (name == clock) return read;
  for (const char* k : in_header)
    if (name == k) return "::lockstep::emu::ptx::" + name + "()";
  return "";
}

// The index of the `)` matching the `(` at `open`, or code.size().
std::size_t matching_paren(const std::vector<token>& code, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < code.size(); ++i) {
    if (code[i].is("(")) ++depth;
    if (code[i].is(")") && --depth == 0) return i;
  }
  return code.size();
}

}  // namespace

void inline_ptx(const std::vector<token>& code, source_rewriter& edits) {
  static const std::regex special_register_move(R"(^\s*mov\.[usb](32|64)\s+%0\s*,\s*%%([a-z_0-9]+(\.[xyz])?)\s*;?\s*$)");
  for (std::size_t i = 0; i < code.size(); ++i) {
    if (!code[i].is("asm") && !code[i].is("__asm__") && !code[i].is("__asm")) continue;
    std::size_t at = i + 1;
    while (at < code.size() && (code[at].is("volatile") || code[at].is("__volatile__") || code[at].is("__volatile"))) ++at;
    if (at >= code.size() || !code[at].is("(")) continue;
    const std::size_t close = matching_paren(code, at);
    std::string ptx;
    std::size_t k = at + 1;
    while (k < close && code[k].kind == token_kind::string_literal && literal_text(code[k], ptx)) ++k;
    // `: "=r" (expression)`, then nothing but empty sections or clobbers.
    if (k + 3 >= close || !code[k].is(":") || code[k + 1].kind != token_kind::string_literal || !code[k + 2].is("(")) continue;
    std::string constraint;
    if (!literal_text(code[k + 1], constraint) || constraint.empty() || constraint[0] != '=') continue;
    const std::size_t expression_close = matching_paren(code, k + 2);
    bool only_clobbers = expression_close < close;
    for (std::size_t j = expression_close + 1; only_clobbers && j < close; ++j)
      only_clobbers = code[j].is(":") || code[j].is("::") || code[j].is(",") || code[j].kind == token_kind::string_literal;
    std::smatch m;
    if (!only_clobbers || !std::regex_match(ptx, m, special_register_move)) continue;
    const std::string read = register_expression(m[2]);
    if (read.empty()) continue;
    edits.replace(code[i], code[k + 2], "(");
    edits.replace(code[expression_close], code[close], ") = " + read);
    i = close;
  }
}

}  // namespace lockstep::emu::host_transforms
