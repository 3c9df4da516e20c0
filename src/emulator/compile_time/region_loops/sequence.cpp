// Sequence building (transformation): the kernel's statements as steps:
// regions between barriers, block-level loops, branches and scopes, masked
// branches, update steps, variant calls and collective steps.
#include "compiler.h"

namespace lockstep::emu::region_loops::compiler {

// An if statement whose condition may differ between threads, with an
// interchanged loop in an arm and no barrier: each thread's condition is
// kept in a mask, and the arms' regions run the threads whose mask says so
// (every row whose threads all agree without asking each), the loops
// between them once for the block. A masked thread does nothing in them.
// So is one whose arms wait only at warp collectives (`if (warp == 0) { ...
// __shfl_down_sync ... }`): the lanes that meet are those the mask lets in.
bool translation_unit_splitter::maskable(const node& s) {
  if (s.kind != CXCursor_IfStmt || kept_in_regions_.count(s.begin) || s.children.size() < 2 || s.children.size() > 3 ||
      s.children[0]->kind == CXCursor_DeclStmt)
    return false;
  if (contains_synchronization(s)) return waits_only_in_warps(s);  // the condition's too (`if (__all_sync(m, p))`)
  return interchange_ && holds_interchange(s, false);
}

// Whether a statement holds a loop that would be interchanged, or (`calls`)
// is a call of a block variant without barriers; a block variant runs for
// every thread, so no call under a mask is one.
bool translation_unit_splitter::holds_interchange(const node& s, bool calls) {
  if (interchangeable(s) || (calls && loop_call(s))) return true;
  if (s.kind == CXCursor_CompoundStmt || s.kind == CXCursor_IfStmt)
    return std::any_of(s.children.begin(), s.children.end(),
                       [&](const auto& c) { return holds_interchange(*c, calls && s.kind == CXCursor_CompoundStmt); });
  return false;
}

// The mask over the step being built: those of the masked branches' arms around it.
thread_mask translation_unit_splitter::current_mask() const { return masks_; }

// A collective step for statement (or condition) s, its calls gathered in
// gather_region and s run in region.
void translation_unit_splitter::plan_collective(const node& s, const std::vector<const node*>& calls, int gather_region, int region) {
  // What the calls read belongs to the gathering (a statement that is a
  // call, `__syncwarp(mask);`, is the step's statement too).
  for (const node* call : calls)
    if (call == &s)
      for (const auto& argument : call->children) region_of_statement_[argument.get()] = gather_region;
    else
      region_of_statement_[call] = gather_region;
  region_of_statement_[&s] = region;
  if (!masks_.empty()) in_masked_arm_.insert(&s);
  collectives_.push_back(&s);
  collective_plan plan;
  plan.gather_region = gather_region;
  plan.masked = !masks_.empty();
  plan.calls = calls;
  collective_plans_[&s] = std::move(plan);
  answered_.insert(calls.begin(), calls.end());
}

step translation_unit_splitter::masked_branch(const node& s) {
  step st;
  st.k = step::kind::masked;
  st.statement = &s;
  st.region = regions_++;  // the condition's, evaluated by each thread
  st.mask = current_mask();
  st.statements = {s.children[0].get()};
  region_of_statement_[s.children[0].get()] = st.region;
  if (!masks_.empty()) in_masked_arm_.insert(s.children[0].get());
  if (std::vector<const node*> calls = gathered_collectives(*s.children[0]); !calls.empty())
    plan_collective(*s.children[0], calls, regions_++, st.region);
  auto arm = [&](const node& a) { return build_sequence(a.kind == CXCursor_CompoundStmt ? children_of(a) : std::vector<const node*>{&a}); };
  masks_.push_back({st.region, false});
  st.body = arm(*s.children[1]);
  masks_.back().negated = true;
  if (s.children.size() == 3) st.otherwise = arm(*s.children[2]);
  masks_.pop_back();
  return st;
}

// `for (t0 = 0; t0 < k; t0 += 16, a_next += 16)`: the increments of
// variables the condition does not read (each thread's pointers) run as a
// region at the end of the body, the others stay in the block's header.
// Only where neither half reads what the other changes, so that running
// the body's end first keeps every value each reads.
void translation_unit_splitter::split_increment(const node& loop, sequence& body) {
  if (loop.children.size() != 4) return;
  std::vector<const node*> parts;
  std::function<void(const node*)> flatten = [&](const node* e) {
    e = unwrapped(e);
    if (e->kind == CXCursor_BinaryOperator && e->children.size() == 2 && trimmed(text(e->children[0]->end, e->children[1]->begin)) == ",") {
      flatten(e->children[0].get());
      flatten(e->children[1].get());
    } else {
      parts.push_back(e);
    }
  };
  flatten(loop.children[2].get());
  if (parts.size() < 2) return;
  auto declarations_read = [&](const node& n) {
    std::set<std::size_t> out;
    std::function<void(const node&)> visit = [&](const node& e) {
      if (e.kind == CXCursor_DeclRefExpr) out.insert(offset_of(clang_.clang_getCursorLocation(clang_.clang_getCursorReferenced(e.cursor))));
      for (const auto& c : e.children) visit(*c);
    };
    visit(n);
    return out;
  };
  auto target = [&](const node& part) -> std::optional<std::size_t> {
    if ((part.kind != CXCursor_UnaryOperator && part.kind != CXCursor_CompoundAssignOperator && part.kind != CXCursor_BinaryOperator) ||
        part.children.empty() || (part.kind != CXCursor_UnaryOperator && part.children.size() != 2))
      return std::nullopt;
    const node* t = unwrapped(part.children.front().get());
    if (t->kind != CXCursor_DeclRefExpr) return std::nullopt;
    return offset_of(clang_.clang_getCursorLocation(clang_.clang_getCursorReferenced(t->cursor)));
  };
  const std::set<std::size_t> condition = declarations_read(*loop.children[1]);
  std::vector<const node*> kept, tail;
  std::set<std::size_t> kept_reads = condition, kept_writes, tail_reads, tail_writes;
  for (const node* part : parts) {
    const std::optional<std::size_t> written = target(*part);
    if (!written) return;
    const bool header = condition.count(*written) != 0;
    (header ? kept : tail).push_back(part);
    (header ? kept_writes : tail_writes).insert(*written);
    for (std::size_t d : declarations_read(*part)) (header ? kept_reads : tail_reads).insert(d);
  }
  if (kept.empty() || tail.empty()) return;
  for (std::size_t d : tail_writes)
    if (kept_reads.count(d)) return;
  for (std::size_t d : kept_writes)
    if (tail_reads.count(d)) return;
  step increments;
  increments.region = regions_++;
  increments.statements = tail;
  increments.mask = current_mask();
  increments.expressions = true;
  for (const node* part : tail) region_of_statement_[part] = increments.region;
  body.steps.push_back(std::move(increments));
  header_increments_[&loop] = kept;
}

std::unique_ptr<sequence> translation_unit_splitter::build_sequence(const std::vector<const node*>& statements) {
  auto seq = std::make_unique<sequence>();
  for (const node* s : statements) {
    if (attributed_loop(*s) && contains_synchronization(*s)) s = s->children.front().get();
    if (hoist_updates_ && masks_.empty() && is_update(*s) && !kept_in_regions_.count(s->begin)) {
      step st;
      st.k = step::kind::update;
      st.statement = s;
      updates_.push_back(s);
      seq->steps.push_back(std::move(st));
      continue;
    }
    if (maskable(*s)) {
      seq->steps.push_back(masked_branch(*s));
      continue;
    }
    const bool interchanged = interchangeable(*s) || (masks_.empty() && loop_call(*s));
    if (!interchanged && !contains_synchronization(*s)) {
      if (seq->steps.empty() || seq->steps.back().k != step::kind::region) {
        seq->steps.emplace_back();
        seq->steps.back().region = regions_++;
        seq->steps.back().mask = current_mask();
      }
      seq->steps.back().statements.push_back(s);
      region_of_statement_[s] = seq->steps.back().region;
      if (!masks_.empty()) in_masked_arm_.insert(s);
      continue;
    }
    step st;
    st.k = step::kind::scope;
    st.statement = s;
    if (is_barrier_call(*s)) {
      st.k = step::kind::barrier;
    } else if (std::vector<const node*> calls = gathered_collectives(*s); !calls.empty()) {
      st.k = step::kind::collective;
      st.statements = calls;
      st.mask = current_mask();
      const int gather_region = regions_++;
      st.region = regions_++;
      plan_collective(*s, calls, gather_region, st.region);
    } else if (s->kind == CXCursor_CompoundStmt) {
      st.body = build_sequence(children_of(*s));
    } else if (is_loop(s->kind)) {
      st.k = step::kind::loop;
      const node& body = *(s->kind == CXCursor_DoStmt ? s->children.front() : s->children.back());
      st.body = build_sequence(body.kind == CXCursor_CompoundStmt ? children_of(body) : std::vector<const node*>{&body});
      if (s->kind == CXCursor_ForStmt) split_increment(*s, *st.body);
      loops_.push_back(s);
      if (interchanged) interchanged_.push_back(s);
    } else if (s->kind == CXCursor_IfStmt) {
      st.k = step::kind::branch;
      if (s->children.size() < 2 || s->children.size() > 3 || s->children[0]->kind == CXCursor_DeclStmt)
        throw declined{"an if statement with a declaration in its condition, around a barrier (" + line_of(*s) + ")"};
      auto arm = [&](const node& a) { return build_sequence(a.kind == CXCursor_CompoundStmt ? children_of(a) : std::vector<const node*>{&a}); };
      st.body = arm(*s->children[1]);
      if (s->children.size() == 3) st.otherwise = arm(*s->children[2]);
      branches_.push_back(s);
    } else if (const node* call = interchanged ? block_call(*s, true) : block_call(*s)) {
      st.k = step::kind::call;
      st.statement = call;
      block_calls_.push_back(call);
      if (interchanged) loop_calls_.push_back(call);
    } else {
      const std::string what = s->kind == CXCursor_SwitchStmt ? "a switch" : "an expression or a statement of another kind";
      throw declined{"a barrier or warp collective inside " + what + " (" + line_of(*s) +
                     "): only barriers that stand alone as statements, in "
                     "loops and if statements whose conditions every thread evaluates alike, are split"};
    }
    seq->steps.push_back(std::move(st));
  }
  return seq;
}

// `i /= 2;`, `++i;`, `i = i * 2;` as a statement of its own, `i` a local of
// the kernel: every thread may make the same change (CUDA by Example's
// `while (i != 0) { ...; __syncthreads(); i /= 2; }`). Tried as a step run
// once for the block; the kernel is split again with it in its region if
// `i` turns out to differ between threads (split_function).
bool translation_unit_splitter::is_update(const node& s) {
  if (s.children.empty()) return false;
  if (s.kind == CXCursor_BinaryOperator) {
    if (s.children.size() != 2 || trimmed(text(s.children[0]->end, s.children[1]->begin)) != "=") return false;
  } else if (s.kind == CXCursor_UnaryOperator) {
    const std::string_view before = trimmed(text(s.begin, s.children[0]->begin)), after = trimmed(text(s.children[0]->end, s.end));
    if (before != "++" && before != "--" && after != "++" && after != "--") return false;
  } else if (s.kind != CXCursor_CompoundAssignOperator) {
    return false;
  }
  const node* target = s.children.front().get();
  if (target->kind != CXCursor_DeclRefExpr || contains_synchronization(s)) return false;
  const CXCursor decl = clang_.clang_getCursorReferenced(target->cursor);
  if (clang_.clang_getCursorKind(decl) != CXCursor_VarDecl) return false;
  const CXSourceLocation at = clang_.clang_getCursorLocation(decl);
  const CX_StorageClass storage = clang_.clang_Cursor_getStorageClass(decl);
  return in_main_file(at) && offset_of(at) >= kernel_begin_ && offset_of(at) < kernel_end_ && storage != CX_SC_Static && storage != CX_SC_Extern;
}

}  // namespace lockstep::emu::region_loops::compiler
