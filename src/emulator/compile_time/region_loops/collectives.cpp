// Warp collectives (analysis): the calls a collective step can run (gathered
// intrinsics, replayed group calls, wmma, tile reductions, block votes,
// lanes variants' calls) and whether evaluating them writes anything.
#include "compiler.h"

namespace lockstep::emu::region_loops::compiler {

// A call of one of them, lockstep's own (not a function of the program's of the same name).
bool translation_unit_splitter::gathered_call(const node& n) const {
  if (n.kind != CXCursor_CallExpr || !gathered_intrinsic(call_name(n))) return false;
  std::vector<CXCursor> candidates = callees(n);
  return !candidates.empty() && std::all_of(candidates.begin(), candidates.end(), [&](const CXCursor& c) { return lockstep_own(c); });
}

// A call of cooperative groups that meets its warp once and works on the
// answer further (a tile's or coalesced group's `ballot`, `any`, `all`,
// `match_any`, `sync`, a shuffle of at most 8 bytes; `coalesced_threads()`),
// whose object and arguments write nothing: a collective step runs it again
// with the lanes' answers (loop_replay_from).
//
// So is a call of the warp's matrix functions (nvcuda::wmma's
// load_matrix_sync, store_matrix_sync, mma_sync): gathering, each lane's
// call only records it (and mma_sync hands the warp its fragments'
// addresses), and the lanes do their work when it runs again
// (lockstep/emu/wmma.h). Their fragments live in the block's per-thread
// arrays across the step, so each lane's stays where its warp reads it.
bool translation_unit_splitter::replayed_call(const node& n) const {
  if (n.kind != CXCursor_CallExpr) return false;
  if (wmma_call(n)) return !writes_anything(n);
  static const std::set<std::string> members{"ballot", "any", "all", "match_any", "sync", "shfl", "shfl_down", "shfl_up", "shfl_xor"};
  const CXCursor callee = clang_.clang_getCursorReferenced(n.cursor);
  if (clang_.clang_Cursor_isNull(callee)) {
    // In a template, a member call with a dependent argument resolves only
    // when instantiated: a group's by its name and its object's type (the
    // step's gathering asserts a shuffle's value fits 8 bytes).
    const node* member = callee_expression(n);
    if (!member || member->kind != CXCursor_MemberRefExpr || member->children.size() != 2 || !members.count(member_name(*member))) return false;
    const std::vector<CXCursor> candidates = candidates_of(*member->children.back());
    return !candidates.empty() && std::all_of(candidates.begin(), candidates.end(), [&](const CXCursor& c) { return lockstep_own(c); }) &&
           one_warp_group(*member->children.front()) && !writes_anything(n);
  }
  if (!lockstep_own(callee)) return false;
  const std::string name = qualified_name(callee);
  const std::size_t last = name.rfind("::");
  const std::string group = last == std::string::npos ? "" : name.substr(0, last), member = last == std::string::npos ? name : name.substr(last + 2);
  const bool tile_call =
      (group == "cooperative_groups::details::warp_tile" || group == "cooperative_groups::coalesced_group") && members.count(member);
  const bool tile_sync = name == "cooperative_groups::sync" && arguments_of(n).size() == 1 && one_warp_group(*arguments_of(n).front());
  if (!tile_call && !tile_sync && name != "cooperative_groups::coalesced_threads") return false;
  if (member.starts_with("shfl") && clang_.clang_Type_getSizeOf(clang_.clang_getCursorType(n.cursor)) > 8) return false;  // in pieces
  return !writes_anything(n);
}

// A call of lockstep's nvcuda::wmma load_matrix_sync, store_matrix_sync or
// mma_sync (a template's too, by its candidates).
bool translation_unit_splitter::wmma_call(const node& n) const {
  static const std::set<std::string> names{"nvcuda::wmma::load_matrix_sync", "nvcuda::wmma::store_matrix_sync", "nvcuda::wmma::mma_sync"};
  const std::vector<CXCursor> candidates = callees(n);
  return !candidates.empty() &&
         std::all_of(candidates.begin(), candidates.end(), [&](const CXCursor& c) { return lockstep_own(c) && names.count(qualified_name(c)); });
}

// Whether evaluating a call's object and arguments may write anything
// (calls allowed: lockstep's own, the group's ranks and the coordinates).
bool translation_unit_splitter::writes_anything(const node& n) const {
  return any_node(n, [&](const node& e) {
    if (e.kind == CXCursor_CompoundAssignOperator || e.kind == CXCursor_LambdaExpr) return true;
    if (e.kind == CXCursor_BinaryOperator && e.children.size() == 2 && trimmed(text(e.children[0]->end, e.children[1]->begin)) == "=") return true;
    if (e.kind == CXCursor_UnaryOperator &&
        (text(e.begin, e.end).find("++") != std::string_view::npos || text(e.begin, e.end).find("--") != std::string_view::npos))
      return true;
    if (e.kind == CXCursor_CallExpr && &e != &n) {
      const CXCursor c = clang_.clang_getCursorReferenced(e.cursor);
      if (clang_.clang_Cursor_isNull(c)) return !operator_of(e) || operator_writes(e);
      if (presumed(clang_.clang_getCursorLocation(c)).first.find("/lockstep/") == std::string::npos) return true;
    }
    return false;
  });
}

// An operator a template leaves unresolved (`a + i` where a's type is a
// template parameter's): the child that names it (between its operands,
// or before or after its one operand), else null.
const node* translation_unit_splitter::operator_of(const node& call) const {
  if (call.kind != CXCursor_CallExpr || !clang_.string(clang_.clang_getCursorSpelling(call.cursor)).empty() || call.children.size() < 2 ||
      call.children.size() > 3)
    return nullptr;
  for (const auto& c : call.children) {
    const std::string_view written = trimmed(text(c->begin, c->end));
    if (c->kind == CXCursor_DeclRefExpr && !written.empty() && std::string_view("+-*/%^&|~!=<>").find(written.front()) != std::string_view::npos)
      return c.get();
  }
  return nullptr;
}

// Whether that operator changes its first operand (an assignment, an increment).
bool translation_unit_splitter::operator_writes(const node& call) const {
  const node* named = operator_of(call);
  const std::string_view op = trimmed(text(named->begin, named->end));
  return op == "++" || op == "--" || (op.ends_with("=") && op != "==" && op != "!=" && op != "<=" && op != ">=");
}

// cg::reduce(tile, value, op) over a tile of one warp with one of
// cooperative groups' own operators, on a value of at most 8 bytes: the
// tile's size, which a collective step's loop_tile_reduce takes; else 0.
unsigned translation_unit_splitter::tile_reduce_size(const node& n) const {
  if (n.kind != CXCursor_CallExpr) return 0;
  const CXCursor callee = clang_.clang_getCursorReferenced(n.cursor);
  if (!lockstep_own(callee) || qualified_name(callee) != "cooperative_groups::reduce") return 0;
  const std::vector<const node*> arguments = arguments_of(n);
  if (arguments.size() != 3 || clang_.clang_Type_getSizeOf(clang_.clang_getCursorType(n.cursor)) > 8) return 0;
  static const std::string_view operators[] = {"plus<", "less<", "greater<", "bit_and<", "bit_or<", "bit_xor<"};
  const std::string op = canonical_type(*arguments[2]);
  if (std::none_of(std::begin(operators), std::end(operators),
                   [&](std::string_view o) { return op.starts_with("cooperative_groups::" + std::string(o)); }))
    return 0;
  return one_warp_tile(*arguments[0]);
}

// The size of the tile of one warp an expression is (thread_block_tile<Size>, Size <= 32), else 0.
unsigned translation_unit_splitter::one_warp_tile(const node& e) const {
  static const std::string tile = "cooperative_groups::thread_block_tile<";
  const std::string type = canonical_type(e);
  if (!type.starts_with(tile)) return 0;
  const unsigned size = unsigned(std::strtoul(type.c_str() + tile.size(), nullptr, 10));
  return size >= 1 && size <= 32 ? size : 0;
}

// Such a tile, or a coalesced group.
bool translation_unit_splitter::one_warp_group(const node& e) const {
  return one_warp_tile(e) || canonical_type(e) == "cooperative_groups::coalesced_group";
}

// `__syncthreads_count(p)`, `_and`, `_or` (lockstep's): a barrier that
// answers a vote of the block, a collective step where a barrier may
// stand; the barrier_reduce it asks for, else "".
std::string translation_unit_splitter::block_vote(const node& n) const {
  if (n.kind != CXCursor_CallExpr) return "";
  const CXCursor callee = clang_.clang_getCursorReferenced(n.cursor);
  if (!lockstep_own(callee)) return "";
  const std::string name = qualified_name(callee);
#define LOCKSTEP_BLOCK_VOTE(barrier, reduce) \
  if (name == #barrier) return #reduce;
  LOCKSTEP_BLOCK_VOTES(LOCKSTEP_BLOCK_VOTE)
#undef LOCKSTEP_BLOCK_VOTE
  return "";
}

// The warp_op of a shuffle intrinsic, else "".
std::string translation_unit_splitter::shuffle_op(const std::string& name) {
#define LOCKSTEP_SHUFFLE_OP(intrinsic, shuffle) \
  if (name == #intrinsic) return std::string_view(#shuffle) == "none" ? "" : #shuffle;
  LOCKSTEP_GATHERED_WARP_COLLECTIVES(LOCKSTEP_SHUFFLE_OP)
#undef LOCKSTEP_SHUFFLE_OP
  return "";
}

// The warp collectives an expression or declaration statement calls, where
// a collective step can run them (lockstep/emu/region_loops.h): gathered
// intrinsics, none inside another's arguments, in a lambda, or in an
// operand evaluated only sometimes (?:, &&, ||), and nothing else in the
// statement that may wait. Empty where there are none or it cannot.
std::vector<const node*> translation_unit_splitter::gathered_collectives(const node& s) {
  // A lanes variant's return of a value is such a statement too (it leaves the lane's answer).
  if (s.kind != CXCursor_DeclStmt && !clang_.clang_isExpression(s.kind) && !(lanes_ && s.kind == CXCursor_ReturnStmt && !s.children.empty()))
    return {};
  std::vector<const node*> calls;
  bool gatherable = true;
  std::function<void(const node&, bool)> visit = [&](const node& n, bool sometimes) {
    if (!gatherable) return;
    if (gathered_call(n) || lanes_call(n) || !block_vote(n).empty() || replayed_call(n) || tile_reduce_size(n)) {
      gatherable = !sometimes && std::none_of(n.children.begin(), n.children.end(), [&](const auto& c) { return contains_synchronization(*c); });
      calls.push_back(&n);
      return;
    }
    if (n.kind == CXCursor_LambdaExpr) {
      gatherable = !contains_synchronization(n);
      return;
    }
    if (n.kind == CXCursor_CallExpr) {
      const CXCursor callee = clang_.clang_getCursorReferenced(n.cursor);
      if (clang_.clang_Cursor_isNull(callee) ? unresolved_call_may_synchronize(n) : may_synchronize(callee)) return void(gatherable = false);
    }
    const bool conditional =
        n.kind == CXCursor_ConditionalOperator ||
        (n.kind == CXCursor_BinaryOperator && n.children.size() == 2 &&
         (trimmed(text(n.children[0]->end, n.children[1]->begin)) == "&&" || trimmed(text(n.children[0]->end, n.children[1]->begin)) == "||"));
    for (std::size_t i = 0; i < n.children.size(); ++i) visit(*n.children[i], sometimes || (conditional && i > 0));
  };
  visit(s, false);
  // A statement runs again around a replayed call: it is its statement's only collective.
  if (calls.size() > 1 && std::any_of(calls.begin(), calls.end(), [&](const node* c) { return replayed_call(*c); })) gatherable = false;
  return gatherable ? calls : std::vector<const node*>{};
}

}  // namespace lockstep::emu::region_loops::compiler
