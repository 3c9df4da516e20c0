// Loop interchange and chunking (transformation): which loops without
// barriers run once for the block with the threads' loop inside, which of
// them run row by row in chunks, and which short loops are unrolled.
#include "compiler.h"

namespace lockstep::emu::region_loops::compiler {

// A for loop without barriers that is tried as a block-level loop, the
// threads' loop inside it (loop interchange): `for (int i = 0; i < k; ++i)
// acc += a[row * k + i] * b[i * n + col];` then runs i once for the block
// and each step over the threads, which the host compiler vectorises (b's
// elements are consecutive from thread to thread), instead of a whole k
// loop per thread. Each thread's own operations keep their order; threads
// of a block between barriers have none between them. Its header must
// then be the same for every thread (split_function tries again without
// the loops whose headers are not), and nothing in its body may leave it.
bool translation_unit_splitter::interchangeable(const node& s) const {
  if (!interchange_ || s.kind != CXCursor_ForStmt || s.children.size() != 4 || kept_in_regions_.count(s.begin)) return false;
  if (!tokens_[token_at(s.begin)].is("for")) return false;
  std::function<bool(const node&, int)> leaves = [&](const node& n, int loops_inside) {
    if (n.kind == CXCursor_LambdaExpr) return false;
    if (n.kind == CXCursor_ReturnStmt || n.kind == CXCursor_GotoStmt || n.kind == CXCursor_IndirectGotoStmt || n.kind == CXCursor_LabelStmt)
      return true;
    if ((n.kind == CXCursor_BreakStmt || n.kind == CXCursor_ContinueStmt) && loops_inside == 0) return true;
    const bool opens = is_loop(n.kind) || n.kind == CXCursor_SwitchStmt || n.kind == CXCursor_CXXForRangeStmt;
    return std::any_of(n.children.begin(), n.children.end(), [&](const auto& c) { return leaves(*c, loops_inside + (opens ? 1 : 0)); });
  };
  if (leaves(*s.children.back(), 0)) return false;
  // Run once for the block, the header is evaluated even where no thread
  // would reach it (all returned, or masked out by `if (d != 0)`): one that
  // divides by a value that is not a constant might trap where the kernel does not.
  const auto divides = [&](const node& n) {
    if ((n.kind != CXCursor_BinaryOperator && n.kind != CXCursor_CompoundAssignOperator) || n.children.size() != 2) return false;
    const std::string_view op = trimmed(text(n.children[0]->end, n.children[1]->begin));
    return (op == "/" || op == "%" || op == "/=" || op == "%=") && !compile_time_constant(*n.children[1]);
  };
  for (std::size_t i = 0; i + 1 < s.children.size(); ++i)
    if (any_node(*s.children[i], divides)) return false;
  // A loop run a number of times the host compiler knows (`i < tile_size`,
  // a template's constant) stays in its threads' loop: the host compiler
  // unrolls it there and vectorises the threads' loop around it, keeping
  // each thread's accumulator in a register.
  return !constant_bound(s);
}

// A thread's loop of a few steps known at compile time (a register
// tile's k steps, `for (p = 0; p < BK; ++p)`) is unrolled whole: its
// products then vectorise along the tile's rows. GCC leaves a long body
// rolled and vectorises the loop itself, shuffling the tile on each step
// (the vectorized matmul ran 2.6x slower so).
void translation_unit_splitter::unroll_short_loops(const node& n) {
  if (n.kind == CXCursor_LambdaExpr) return;
  if (n.kind == CXCursor_ForStmt && !edits_.count(n.begin))
    if (const node* bound = constant_bound(n))
      if (const std::optional<long long> count = evaluated_integer(bound->cursor); count && *count >= 0 && *count <= max_unrolled_steps)
        edit(n.begin, n.begin, "\n#pragma GCC unroll " + std::to_string(max_unrolled_steps) + "\n");
  for (const auto& c : n.children) unroll_short_loops(*c);
}

// The per-thread scalars an interchanged loop's region reads or writes,
// which a chunk of its row keeps in local arrays (row_chunk).
std::set<const variable*> translation_unit_splitter::chunked_variables(int region) const {
  std::set<const variable*> chunked;
  for (const auto& [key, v] : variables_)
    if (v.per_thread && v.in_register && !is_array(v) &&
        std::any_of(v.refs.begin(), v.refs.end(), [&](const reference& r) { return r.region == region; }))
      chunked.insert(&v);
  return chunked;
}

// An interchanged loop whose body is one region without a guard, which
// declares nothing a later region reads.
bool translation_unit_splitter::row_level(const step& st) {
  if (std::find(interchanged_.begin(), interchanged_.end(), st.statement) == interchanged_.end()) return false;
  if (st.body->steps.size() != 1 || st.body->steps.front().k != step::kind::region || prefix_guard(st.body->steps.front())) return false;
  const int region = st.body->steps.front().region;
  return std::none_of(variables_.begin(), variables_.end(),
                      [&](const auto& kv) { return kv.second.per_thread && kv.second.declared_region == region; });
}

// Interchanged loops whose bodies reach memory scattered across a row's
// threads stay whole in each thread (split again without them).
void translation_unit_splitter::keep_scattered_loops_in_threads() {
  per_thread_loops differing;
  for (const node* loop : interchanged_)
    if (scattered_across_threads(*loop->children.back())) differing.loops.push_back(loop->begin);
  if (!differing.loops.empty()) throw differing;
}

}  // namespace lockstep::emu::region_loops::compiler
