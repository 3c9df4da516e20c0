// Variables and their references (analysis): the kernel's locals and
// parameters, every reference with its region, and whether it may write.
#include "compiler.h"

namespace lockstep::emu::region_loops::compiler {

std::size_t translation_unit_splitter::key_of(std::size_t decl_offset, bool parameter) { return decl_offset * 2 + parameter; }

// Whether a reference may change the variable (conservatively: anything
// but a load through an implicit conversion, or a read of a member loaded so).
bool translation_unit_splitter::may_write(const node& ref) const {
  const node* p = ref.parent;
  if (!p) return true;
  // A const variable (not a reference) is never changed.
  const CXType declared = clang_.clang_getCursorType(clang_.clang_getCursorReferenced(ref.cursor));
  if (declared.kind != CXType_LValueReference && declared.kind != CXType_RValueReference && clang_.clang_isConstQualifiedType(declared)) return false;
  // An array handed on (to a call, a cast, an operator) decays to a pointer its elements may be changed through.
  const CXTypeKind canonical = clang_.clang_getCanonicalType(declared).kind;
  const bool array = canonical == CXType_ConstantArray || canonical == CXType_IncompleteArray || canonical == CXType_VariableArray ||
                     canonical == CXType_DependentSizedArray;
  switch (p->kind) {
    case CXCursor_UnexposedExpr:
      return false;  // an implicit conversion, lvalue-to-rvalue among them
    case CXCursor_MemberRefExpr:
      return !(p->parent && p->parent->kind == CXCursor_UnexposedExpr);
    case CXCursor_BinaryOperator: {
      if (p->children.size() != 2 || p->children[0].get() != &ref) return false;
      const std::string_view op = trimmed(text(p->children[0]->end, p->children[1]->begin));
      return op == "=";
    }
    case CXCursor_CompoundAssignOperator:
      return p->children.size() == 2 && p->children[0].get() == &ref;
    case CXCursor_UnaryOperator: {
      const std::string_view before = trimmed(text(p->begin, ref.begin)), after = trimmed(text(ref.end, p->end));
      return before == "++" || before == "--" || before == "&" || after == "++" || after == "--";
    }
    case CXCursor_ParenExpr:
      return may_write(*p);
    case CXCursor_CallExpr: {  // an argument a template keeps an lvalue: read, where the callee takes values
      if (p->children.empty() || array) return true;
      const bool construction = clang_.clang_getCursorKind(clang_.clang_getCursorReferenced(p->cursor)) == CXCursor_Constructor;
      // An operator a template leaves unresolved (`a + i`): its first
      // operand changed only by an assignment or an increment, the others never.
      if (const node* op = operator_of(*p); op && !construction)
        return operator_writes(*p) && (p->children.front().get() == op ? p->children[1] : p->children.front()).get() == &ref;
      if (p->children.front().get() == &ref && !construction) return true;
      // (wmma's calls write their fragments: their parameters say which.)
      if (gathered_call(*p) || (replayed_call(*p) && !wmma_call(*p))) return false;
      const std::vector<CXCursor> candidates = callees(*p);
      if (candidates.empty()) return true;
      if (std::all_of(candidates.begin(), candidates.end(), [&](const CXCursor& c) { return lanes_variants_.count(variant_usr(c)) != 0; }))
        return false;
      // A parameter that is a value or a const reference (of a function, a
      // member function or a lambda called, or a constructor, whose call
      // does not name it among its children).
      const std::size_t skipped = construction ? 0 : 1;
      const std::size_t argument =
          std::size_t(std::find_if(p->children.begin(), p->children.end(), [&](const auto& c) { return c.get() == &ref; }) - p->children.begin()) -
          skipped;
      return !std::all_of(candidates.begin(), candidates.end(), [&](const CXCursor& c) {
        const CXCursorKind kind = clang_.clang_getCursorKind(c);
        if (kind != CXCursor_FunctionDecl && kind != CXCursor_CXXMethod && kind != CXCursor_Constructor && kind != CXCursor_FunctionTemplate)
          return false;
        // A candidate of fewer parameters than the call's arguments is not
        // the callee (an overload; a C variadic's extra arguments are values),
        // but a template with a parameter pack may be, taking references.
        const std::vector<CXType> parameters = parameter_types(c);
        if (parameters.size() < p->children.size() - skipped) return kind != CXCursor_FunctionTemplate;
        const CXType type = parameters[argument];
        return (type.kind != CXType_LValueReference && type.kind != CXType_RValueReference) ||
               clang_.clang_isConstQualifiedType(clang_.clang_getPointeeType(type));
      });
    }
    case CXCursor_CStyleCastExpr:
    case CXCursor_CXXStaticCastExpr:
    case CXCursor_CXXReinterpretCastExpr:
    case CXCursor_CXXConstCastExpr:
    case CXCursor_CXXFunctionalCastExpr: {
      // Named in the type (an array's bound) it is read; cast it is changed only through a reference.
      if (p->children.empty() || p->children.back().get() != &ref) return false;
      if (array) return true;
      const CXType type = clang_.clang_getCanonicalType(clang_.clang_getCursorType(p->cursor));
      return type.kind == CXType_LValueReference || type.kind == CXType_RValueReference;
    }
    case CXCursor_VarDecl:  // an array bound, or a variable initialized from it: only a reference may change it
      return clang_.string(clang_.clang_getTypeSpelling(clang_.clang_getCursorType(p->cursor))).find('&') != std::string::npos;
    case CXCursor_ArraySubscriptExpr:  // p[i] changes what p points at, not p, and never i (a template keeps i an lvalue)
      if (p->children.size() == 2 && p->children[1].get() == &ref) return false;
      return !(p->children.size() == 2 && p->children[0].get() == &ref &&
               clang_.clang_getCanonicalType(clang_.clang_getCursorType(ref.cursor)).kind == CXType_Pointer);
    default:
      return true;
  }
}

// The region a node of the kernel's body belongs to, -1 for block-level code.
int translation_unit_splitter::region_of(const node* n) const {
  for (; n; n = n->parent)
    if (auto it = region_of_statement_.find(n); it != region_of_statement_.end()) return it->second;
  return -1;
}

variable* translation_unit_splitter::variable_for(CXCursor decl) {
  const CXCursorKind k = clang_.clang_getCursorKind(decl);
  if (k != CXCursor_VarDecl && k != CXCursor_ParmDecl) return nullptr;
  const CXSourceLocation loc = clang_.clang_getCursorLocation(decl);
  if (!in_main_file(loc)) return nullptr;
  const std::size_t at = offset_of(loc);
  if (at < kernel_begin_ || at >= kernel_end_) return nullptr;  // a global
  auto it = variables_.find(key_of(at, k == CXCursor_ParmDecl));
  return it == variables_.end() ? nullptr : &it->second;
}

void translation_unit_splitter::collect_declarations(const node& n) {
  if (n.kind == CXCursor_VarDecl || n.kind == CXCursor_ParmDecl) {
    variable v;
    v.decl = n.cursor;
    v.name = clang_.string(clang_.clang_getCursorSpelling(n.cursor));
    v.parameter = n.kind == CXCursor_ParmDecl;
    v.var_decl = &n;
    const CX_StorageClass storage = clang_.clang_Cursor_getStorageClass(n.cursor);
    v.static_storage = storage == CX_SC_Static || storage == CX_SC_Extern || clang_.clang_getCursorTLSKind(n.cursor) != CXTLS_None;
    if (!v.parameter && n.parent && n.parent->kind == CXCursor_DeclStmt) {
      const node* stmt = n.parent;
      v.declaration = stmt;
      // Sequence level: the statement is one a sequence lists, or a loop header's init.
      v.sequence_level = region_of_statement_.count(stmt) ||
                         (stmt->parent && is_loop(stmt->parent->kind) && std::find(loops_.begin(), loops_.end(), stmt->parent) != loops_.end());
      v.declared_region = region_of(stmt);
      for (const auto& c : n.children)
        if (c->kind != CXCursor_TypeRef && c->kind != CXCursor_TemplateRef && c->kind != CXCursor_NamespaceRef &&
            c->begin >= offset_of(clang_.clang_getCursorLocation(n.cursor)))
          v.initializer = c.get();
    }
    variables_.emplace(key_of(offset_of(clang_.clang_getCursorLocation(n.cursor)), v.parameter), std::move(v));
  }
  // A lambda's parameters and locals are its own: each call has them afresh.
  if (n.kind == CXCursor_LambdaExpr) return;
  for (const auto& c : n.children) collect_declarations(*c);
}

void translation_unit_splitter::collect_references(const node& n, bool in_lambda) {
  if (n.kind == CXCursor_ReturnStmt && !in_lambda) first_return_ = std::min(first_return_, n.begin);
  if (n.kind == CXCursor_DeclRefExpr)
    if (variable* v = variable_for(clang_.clang_getCursorReferenced(n.cursor))) v->refs.push_back({&n, region_of(&n), may_write(n), in_lambda});
  for (const auto& c : n.children) collect_references(*c, in_lambda || n.kind == CXCursor_LambdaExpr);
}

// Closures: a lambda held in a local, capturing by reference only
// (`auto load_tile = [&](int t0) {...};`) and only ever called. Made again
// in each region that calls it, after that region's views of the thread's
// variables, it reaches the thread's own: what its body reads and writes
// is then read and written (conservatively) in each region that calls it.
void translation_unit_splitter::collect_closures() {
  for (auto& [key, v] : variables_) {
    const node* lambda = v.initializer;
    while (lambda && lambda->kind == CXCursor_UnexposedExpr && lambda->children.size() == 1) lambda = lambda->children.front().get();
    if (v.parameter || !v.sequence_level || v.declared_region < 0 || !lambda || lambda->kind != CXCursor_LambdaExpr ||
        !captures_by_reference_only(*lambda) || !std::all_of(v.refs.begin(), v.refs.end(), [&](const reference& r) { return called(*r.ref); }))
      continue;
    v.closure = true;
    std::set<int> calling;
    for (const reference& r : v.refs)
      if (r.region >= 0 && r.region != v.declared_region) calling.insert(r.region);
    std::vector<std::pair<variable*, reference>> inside;
    std::function<void(const node&)> reach = [&](const node& n) {
      if (n.kind == CXCursor_DeclRefExpr)
        if (variable* u = variable_for(clang_.clang_getCursorReferenced(n.cursor))) inside.push_back({u, {&n, 0, may_write(n), true}});
      for (const auto& c : n.children) reach(*c);
    };
    reach(*lambda);
    for (const int region : calling)
      for (auto [u, r] : inside) {
        r.region = region;
        u->refs.push_back(r);
      }
  }
}

bool translation_unit_splitter::captures_by_reference_only(const node& lambda) const {
  std::size_t i = token_at(lambda.begin);
  if (!tokens_[i].is("[")) return false;
  bool expect_entry = true;
  for (++i; i < tokens_.size() && !tokens_[i].is("]"); ++i) {
    if (tokens_[i].is(",")) {
      expect_entry = true;
      continue;
    }
    // `&` alone or `&name`: nothing else (no copies, no this, no initializers).
    if (!expect_entry || !tokens_[i].is("&")) return false;
    if (i + 1 < tokens_.size() && !tokens_[i + 1].is(",") && !tokens_[i + 1].is("]")) {
      ++i;
      if (i + 1 < tokens_.size() && !tokens_[i + 1].is(",") && !tokens_[i + 1].is("]")) return false;
    }
    expect_entry = false;
  }
  return i < tokens_.size();
}

// Whether a reference is the object of a call (`load_tile(t0)`).
bool translation_unit_splitter::called(const node& ref) {
  const node* at = &ref;
  const node* p = ref.parent;
  while (p && (p->kind == CXCursor_UnexposedExpr || p->kind == CXCursor_ParenExpr) && p->children.size() == 1) at = p, p = p->parent;
  return p && p->kind == CXCursor_CallExpr && !p->children.empty() && p->children.front().get() == at;
}

// Whether the kernel may change part of v through a subscript or a member
// (`v.shape[0] = ...`, `v.x++`), or hands it out by address or reference.
bool translation_unit_splitter::elements_written(const variable& v) const {
  for (const reference& r : v.refs) {
    if (r.in_lambda) return true;
    const node* part = r.ref;
    bool inside = false;  // through a member or a subscript
    while (part->parent && (part->parent->kind == CXCursor_MemberRefExpr || part->parent->kind == CXCursor_ArraySubscriptExpr ||
                            part->parent->kind == CXCursor_ParenExpr ||
                            (part->parent->kind == CXCursor_UnexposedExpr && part->kind != CXCursor_ArraySubscriptExpr))) {
      part = part->parent;
      inside = inside || part->kind == CXCursor_MemberRefExpr || part->kind == CXCursor_ArraySubscriptExpr;
    }
    if (!inside) continue;  // v itself: may_write counts it
    const node* use = part->parent;
    if (!use) continue;
    if (use->kind == CXCursor_CompoundAssignOperator || use->kind == CXCursor_CallExpr) return true;
    if (use->kind == CXCursor_UnaryOperator) {
      const std::string_view op = trimmed(text(use->begin, part->begin)), after = trimmed(text(part->end, use->end));
      if (op == "&" || op == "++" || op == "--" || after == "++" || after == "--") return true;
    }
    if (use->kind == CXCursor_BinaryOperator && use->children.size() == 2 && use->children[0].get() == part &&
        trimmed(text(part->end, use->children[1]->begin)) == "=")
      return true;
  }
  return false;
}

// The function's declarations, their references (each with its region), closures.
void translation_unit_splitter::collect_variables(const node& function) {
  collect_declarations(function);
  collect_references(function, false);
  collect_closures();
  // A collective step's statement names its calls again, for their type
  // (loop_answer<decltype(call)>): what they read, its region reads too.
  for (auto& [key, v] : variables_)
    for (std::size_t i = 0, n = v.refs.size(); i < n; ++i)
      for (const node* statement : collectives_)
        if (v.refs[i].region == collective_plans_.at(statement).gather_region && v.refs[i].ref->begin >= statement->begin &&
            v.refs[i].ref->end <= statement->end) {
          reference again = v.refs[i];
          again.region = region_of_statement_.at(statement);
          v.refs.push_back(again);
        }
}

}  // namespace lockstep::emu::region_loops::compiler
