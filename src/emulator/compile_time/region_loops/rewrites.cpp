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

// Returns and breaks; which declarations leave the regions.
// (A collective step's statement is a lanes variant's return of a call's answer.)
void translation_unit_splitter::plan_returns(const sequence& top) {
  for (std::size_t i = 0; i < top.steps.size(); ++i)
    if (top.steps[i].k == step::kind::region)
      for (const node* s : top.steps[i].statements) plan_region_statements(*s, top.steps[i].region, i + 1 == top.steps.size(), false, 0);
    else if (top.steps[i].k == step::kind::collective)
      plan_region_statements(*top.steps[i].statement, top.steps[i].region, i + 1 == top.steps.size(), false, 0);
  std::function<void(const sequence&)> plan_nested = [&](const sequence& seq) {
    for (const step& st : seq.steps) {
      if (st.k == step::kind::region && &seq != &top)
        for (const node* s : st.statements) plan_region_statements(*s, st.region, false, false, 0);
      if (st.k == step::kind::collective && &seq != &top) plan_region_statements(*st.statement, st.region, false, false, 0);
      if (st.body) plan_nested(*st.body);
      if (st.otherwise) plan_nested(*st.otherwise);
    }
  };
  plan_nested(top);
  exit_flags_ = exit_flags_ || lanes_;
  if (exit_flags_ && !block_calls_.empty())
    throw declined{"a thread may return before a call of a function with barriers, which runs for the whole block"};
  for (const auto& [ret, region] : returns_)
    if (!lanes_)
      edit(ret->begin, statement_end(*ret),
           std::string("{ ") + (exit_flags_ ? "__ls_exited[__ls_t] = true; " : "") + "goto __ls_next_" + std::to_string(region) + "; }");
}

// Where each declaration of a region goes: __shared__ and static ones in
// front of both bodies (moved_statics, and cut from the kernel's own, tu_edits),
// those the block shares hoisted out of their region's loop, per-thread ones
// renamed, handing their values to the thread's slot.
void translation_unit_splitter::rewrite_declarations(bool kernel, std::string& moved_statics, std::vector<source_edit>& tu_edits) {
  for (const auto& [k, v] : variables_)
    if (v.static_storage && !v.sequence_level)
      throw declined{"the __shared__ or static '" + v.name + "' is declared inside a statement (" + line_of(*v.var_decl) + ")"};
  // In the source's order (region_of_statement_ is ordered by address, which
  // the heap decides: the __shared__ declarations moved in front of the
  // bodies came out in an order that changed with the allocator's state).
  std::vector<const node*> declarations;
  for (const auto& [statement, region] : region_of_statement_)
    if (statement->kind == CXCursor_DeclStmt) declarations.push_back(statement);
  std::stable_sort(declarations.begin(), declarations.end(), [](const node* a, const node* b) { return a->begin < b->begin; });
  // `using namespace sizes;` (a using-declaration, a namespace alias) before
  // a __shared__ declaration may be what its size's names resolve through:
  // it moves in front of the bodies first, with the declarations after it.
  auto using_only = [](const node& statement) {
    const node* body = statement.parent;
    const bool in_body = body && body->parent && (body->parent->kind == CXCursor_FunctionDecl || body->parent->kind == CXCursor_FunctionTemplate);
    return in_body && !statement.children.empty() && std::all_of(statement.children.begin(), statement.children.end(), [](const auto& c) {
             return c->kind == CXCursor_UsingDirective || c->kind == CXCursor_UsingDeclaration || c->kind == CXCursor_NamespaceAlias;
           });
  };
  auto moved_in_front = [&](const node& statement) {
    bool any_variable = false, all_static = true;
    for (const auto& c : statement.children) {
      const variable* v = c->kind == CXCursor_VarDecl ? variable_for(c->cursor) : nullptr;
      if (!v) continue;
      any_variable = true;
      all_static &= v->static_storage;
    }
    return any_variable && all_static && kernel;
  };
  for (std::size_t i = 0; i < declarations.size(); ++i) {
    const node* statement = declarations[i];
    if (kernel && using_only(*statement) &&
        std::any_of(declarations.begin() + i + 1, declarations.end(), [&](const node* later) { return moved_in_front(*later); })) {
      moved_statics +=
          line_directive(clang_.clang_getCursorLocation(statement->cursor)) + std::string(text(statement->begin, statement_end(*statement))) + "\n";
      edit(statement->begin, statement_end(*statement), "");
      tu_edits.push_back({statement->begin, statement_end(*statement), ""});
      continue;
    }
    bool all_shared = true, any_uniform = false, any_per_thread = false;
    for (const auto& c : statement->children) {
      const variable* v = c->kind == CXCursor_VarDecl ? variable_for(c->cursor) : nullptr;
      if (!v) continue;
      all_shared &= v->uniform || v->static_storage;
      any_uniform |= v->uniform && !v->static_storage;
      any_per_thread |= v->per_thread;
    }
    if (moved_in_front(*statement)) {
      // __shared__ arrays (and other statics) go in front of both bodies,
      // so that both use the one array: its size names no local.
      // A constexpr local of the kernel (`constexpr int T = 16; __shared__
      // float tile[T][T];`) is written there as its value.
      std::map<std::size_t, std::pair<std::size_t, std::string>> constants;
      for (const auto& [k, other] : variables_)
        for (const reference& r : other.refs)
          if (!other.static_storage && r.ref->begin >= statement->begin && r.ref->end <= statement->end) {
            const std::optional<long long> value = constexpr_local(other) ? evaluated_integer(other.decl) : std::nullopt;
            if (!value) throw declined{"a __shared__ or static declaration that names the local '" + other.name + "' (" + line_of(*statement) + ")"};
            constants[r.ref->begin] = {r.ref->end, "(" + std::to_string(*value) + ")"};
          }
      std::function<void(const node&)> local_types = [&](const node& n) {
        if (n.kind == CXCursor_TypeRef) {
          const CXCursor type = clang_.clang_getCursorReferenced(n.cursor);
          const CXSourceLocation at = clang_.clang_getCursorLocation(type);
          if (in_main_file(at) && offset_of(at) >= kernel_begin_ && offset_of(at) < kernel_end_ &&
              clang_.clang_getCursorKind(type) != CXCursor_TemplateTypeParameter)
            throw declined{"a __shared__ or static declaration of a type declared in the kernel (" + line_of(*statement) + ")"};
        }
        for (const auto& c : n.children) local_types(*c);
      };
      local_types(*statement);
      std::string declared;
      std::size_t from = statement->begin;
      for (const auto& [begin, replaced] : constants) {
        declared += std::string(text(from, begin)) + replaced.second;
        from = replaced.first;
      }
      declared += std::string(text(from, statement_end(*statement)));
      moved_statics += line_directive(clang_.clang_getCursorLocation(statement->cursor)) + declared + "\n";
      edit(statement->begin, statement_end(*statement), "");
      tu_edits.push_back({statement->begin, statement_end(*statement), ""});
    } else if (all_shared) {
      // Computed once for the block, before the region's loop.
      hoisted_[statement] = std::string(text(statement->begin, statement_end(*statement)));
      edit(statement->begin, statement_end(*statement), "");
    } else {
      if (any_uniform) hoist_uniform_declarators(*statement);
      if (!any_per_thread) continue;
      // Each per-thread declarator is renamed and hands its value to the
      // thread's slot after the statement; a later declarator's initializer
      // reads the renamed one.
      std::string stores;
      for (const auto& c : statement->children) {
        const variable* v = c->kind == CXCursor_VarDecl ? variable_for(c->cursor) : nullptr;
        if (!v || !v->per_thread) continue;
        const std::size_t name_at = offset_of(clang_.clang_getCursorLocation(c->cursor));
        if (text(name_at, name_at + v->name.size()) != v->name) throw declined{"a declaration written through a macro (" + line_of(*c) + ")"};
        edit(name_at, name_at + v->name.size(), v->name + "__ls_initial");
        for (const reference& r : v->refs)
          if (r.ref->begin >= statement->begin && r.ref->end <= statement->end && text(r.ref->begin, r.ref->end) == v->name)
            edit(r.ref->begin, r.ref->end, v->name + "__ls_initial");
        if (v->initializer) stores += " ::lockstep::emu::loop_store(" + v->name + ", " + v->name + "__ls_initial);";
      }
      const std::size_t end = statement_end(*statement);
      edit(end, end, stores);
    }
  }
}

// `const int tile = blockDim.x, tr = threadIdx.y;`: the declarators every
// thread has alike are computed once for the block, before the region's
// loop, each in a declaration of its own with the statement's specifiers;
// the others stay, with the commas between them.
void translation_unit_splitter::hoist_uniform_declarators(const node& statement) {
  const std::optional<declarator_texts> parts = declarators_of(statement);
  if (!parts) throw declined{"a declaration of uniform and per-thread variables that lockstep cannot cut (" + line_of(statement) + ")"};
  const std::string specifiers(trimmed(text(statement.begin, parts->specifiers_end)));
  std::string hoisted;
  std::vector<bool> stays;
  for (std::size_t i = 0; i < parts->declarators.size(); ++i) {
    const auto [begin, end] = parts->declarators[i];
    stays.push_back(!variable_for(statement.children[i]->cursor)->uniform);
    if (stays.back()) continue;
    hoisted += specifiers + " " + std::string(text(begin, end)) + "; ";
    edit(begin, end, "");
  }
  // A comma stays between two declarators that stay.
  bool one_stays_before = false;
  for (std::size_t j = 0; j < parts->commas.size(); ++j) {
    one_stays_before |= stays[j];
    if (!(one_stays_before && stays[j + 1])) edit(parts->commas[j], parts->commas[j] + 1, "");
  }
  hoisted_declarators_[&statement] = hoisted;
}

// The block's coordinates, read from the loop rather than the thread's record.
void translation_unit_splitter::rewrite_coordinates(const node& body) {
  std::function<void(const node&)> coordinates = [&](const node& n) {
    if (n.kind == CXCursor_DeclRefExpr && region_of(&n) >= 0 && offset_local(n) && !edits_.count(n.begin))
      edit(n.begin, n.end, "::lockstep::emu::thread_offset{" + std::string(text(n.begin, n.end)) + "}");
    if (n.kind == CXCursor_CallExpr && region_of(&n) >= 0) {
      const CXCursor callee = clang_.clang_getCursorReferenced(n.cursor);
      const std::string name = clang_.clang_Cursor_isNull(callee) ? "" : qualified_name(callee);
      static constexpr std::pair<std::string_view, std::string_view> builtins[] = {
          {"threadIdx", "thread_idx"}, {"blockIdx", "block_idx"}, {"blockDim", "block_dim"}};
      if (const node* member = offset_term(n); member && !edits_.count(n.begin)) {
        edit(n.begin, member->end, std::string("__ls_block.offset_") + text(member->begin, member->end).back() + "()");
        return;
      }
      for (const auto& [builtin, read] : builtins) {
        const std::string reader = "lockstep::emu::builtin_" + std::string(read);
        const std::string_view written = text(n.begin, n.end);
        if (name == reader && (written == builtin || written == "::" + reader + "()") && !edits_.count(n.begin))
          edit(n.begin, n.end, "__ls_block." + std::string(read) + "()");
      }
      // A collective step's call: its arguments are read where the record is not entered.
      if (!answered_.count(&n)) return;
    }
    for (const auto& c : n.children) coordinates(*c);
  };
  coordinates(body);
}

// A lanes variant's return leaves the lane's answer and exits the lane
// (written last: the value is read with the rewrites inside it).
void translation_unit_splitter::rewrite_lanes_returns() {
  for (const auto& [ret, region] : returns_)
    if (lanes_) {
      if (ret->children.empty()) throw declined{"a return without a value (" + line_of(*ret) + ")"};
      const node& value = *ret->children.back();
      edit(ret->begin, statement_end(*ret),
           "{ __ls_results[__ls_t] = (" + edited(value.begin, value.end) + "); __ls_exited[__ls_t] = true; goto __ls_next_" + std::to_string(region) +
               "; }");
    }
}

}  // namespace lockstep::emu::region_loops::compiler
