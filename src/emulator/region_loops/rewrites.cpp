// Rewrites of the kernel's text (transformation): the edits map, and the
// returns, breaks and declarations that each region plans.
#include "compiler.h"

namespace lockstep::emu::region_loops::compiler {

// `text` of [begin, end) with the edits that fall inside it.
std::string translation_unit_splitter::edited(std::size_t begin, std::size_t end) const {
  std::string out;
  std::size_t at = begin;
  for (auto it = edits_.lower_bound(begin); it != edits_.end() && it->first <= end; ++it) {
    const auto& [from, replacement] = *it;
    if (from < at || replacement.first > end) continue;
    out.append(text_, at, from - at);
    out += replacement.second;
    at = replacement.first;
  }
  out.append(text_, at, end - at);
  return out;
}

void translation_unit_splitter::edit(std::size_t begin, std::size_t end, std::string replacement) {
  if (edits_.count(begin)) throw declined{"two rewrites at one place (a macro?)"};
  edits_[begin] = {end, std::move(replacement)};
}

// Whether the text can be cut at an offset: no rewrite spans it.
bool translation_unit_splitter::cut_free(std::size_t at) const {
  for (auto it = edits_.begin(); it != edits_.end() && it->first < at; ++it)
    if (it->second.first > at) return false;
  return true;
}

// Returns, breaks and continues in regions; the rewrites of declarations.
void translation_unit_splitter::plan_region_statements(const node& n, int region, bool last_region, bool in_lambda, int loops_inside) {
  const bool lambda = in_lambda || n.kind == CXCursor_LambdaExpr;
  if (!lambda) {
    if (n.kind == CXCursor_GotoStmt || n.kind == CXCursor_LabelStmt || n.kind == CXCursor_IndirectGotoStmt)
      throw declined{"goto in a kernel with barriers (" + line_of(n) + ")"};
    if (n.kind == CXCursor_ReturnStmt) {
      if (text(n.begin, n.begin + 6) != "return") throw declined{"a return written through a macro (" + line_of(n) + ")"};
      if (!last_region) exit_flags_ = true;
      returns_.push_back({&n, region});
    }
    if ((n.kind == CXCursor_BreakStmt || n.kind == CXCursor_ContinueStmt) && loops_inside == 0)
      throw declined{"a break or continue that leaves a loop with a barrier (" + line_of(n) + "): the threads would part at the barrier"};
  }
  const bool opens = is_loop(n.kind) || (n.kind == CXCursor_SwitchStmt);
  for (const auto& c : n.children) plan_region_statements(*c, region, last_region, lambda, loops_inside + (opens ? 1 : 0));
}

}  // namespace lockstep::emu::region_loops::compiler
