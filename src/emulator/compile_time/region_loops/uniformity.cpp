// Uniformity (analysis): which variables and expressions have the same value
// in every thread of the block, so that block-level code (loop headers,
// branch conditions, update steps, variant calls) may read them.
#include "compiler.h"

namespace lockstep::emu::region_loops::compiler {

// Whether an expression has the same value in every thread, given the
// variables now believed uniform: literals, uniform variables and
// parameters, globals, blockIdx/blockDim/gridDim and arithmetic on them;
// no memory read through a pointer, no call into the program's own code.
// With `per_thread`: the same, but the thread's coordinates and the locals
// computed again in each region may appear too (an expression every region
// can compute again and get the thread's same value).
// A parameter `const T* __restrict__ p` the kernel never changes: what it
// points to is read-only for the whole launch (restrict: nothing else
// writes it either), so `p[i]` at an index every thread computes alike is
// the same for every thread, as `a_offsets[blockIdx.z]` is.
bool translation_unit_splitter::read_only_parameter(const node& n) {
  if (n.kind != CXCursor_DeclRefExpr) return false;
  const CXCursor decl = clang_.clang_getCursorReferenced(n.cursor);
  const variable* v = variable_for(decl);
  if (!v || !v->parameter || std::any_of(v->refs.begin(), v->refs.end(), [](const reference& r) { return r.write; })) return false;
  const CXType type = clang_.clang_getCursorType(decl);
  return type.kind == CXType_Pointer && clang_.clang_isRestrictQualifiedType(type) &&
         clang_.clang_isConstQualifiedType(clang_.clang_getPointeeType(type));
}

bool translation_unit_splitter::uniform(const node& n, bool per_thread) {
  switch (n.kind) {
    case CXCursor_IntegerLiteral:
    case CXCursor_FloatingLiteral:
    case CXCursor_CharacterLiteral:
    case CXCursor_CXXBoolLiteralExpr:
    case CXCursor_CXXNullPtrLiteralExpr:
    case CXCursor_TypeRef:
    case CXCursor_TemplateRef:
    case CXCursor_NamespaceRef:
    case CXCursor_UnaryExpr:  // sizeof, alignof
      return true;
    case CXCursor_DeclRefExpr: {
      const CXCursor decl = clang_.clang_getCursorReferenced(n.cursor);
      if (variable* v = variable_for(decl)) {
        // A __shared__ or static array: what it stands for is its address.
        const CXTypeKind type = clang_.clang_getCanonicalType(clang_.clang_getCursorType(decl)).kind;
        return v->uniform || (per_thread && v->recomputed) || (v->static_storage && (type == CXType_ConstantArray || type == CXType_IncompleteArray));
      }
      const CXCursorKind k = clang_.clang_getCursorKind(decl);
      return k == CXCursor_VarDecl || k == CXCursor_EnumConstantDecl || k == CXCursor_NonTypeTemplateParameter || k == CXCursor_FunctionDecl ||
             k == CXCursor_FunctionTemplate || k == CXCursor_CXXMethod;
    }
    case CXCursor_UnaryOperator: {
      const std::string_view op = trimmed(text(n.begin, n.children.empty() ? n.end : n.children[0]->begin));
      if (op == "*" || op == "&") return false;
      break;
    }
    case CXCursor_MemberRefExpr:
      if (!n.children.empty() && text(n.children[0]->end, n.end).find("->") != std::string_view::npos) return false;
      break;
    case CXCursor_ArraySubscriptExpr: {
      // An element of an array a value holds (a by-value parameter's
      // `shape[1]`, as lockstep.cuda passes arrays): no memory outside the
      // value, if nothing writes an element of it.
      if (n.children.size() != 2) return false;
      const node* base = unwrapped(n.children[0].get());
      if (read_only_parameter(*base)) return uniform(*n.children[1], per_thread);
      if (clang_.clang_getCanonicalType(clang_.clang_getCursorType(base->cursor)).kind != CXType_ConstantArray) return false;
      const node* root = base;
      while (root->kind == CXCursor_MemberRefExpr && !root->children.empty() &&
             text(root->children[0]->end, root->end).find("->") == std::string_view::npos)
        root = root->children[0].get();
      const variable* v = root->kind == CXCursor_DeclRefExpr ? variable_for(clang_.clang_getCursorReferenced(root->cursor)) : nullptr;
      if (!v || v->static_storage || elements_written(*v)) return false;
      return uniform(*base, per_thread) && uniform(*n.children[1], per_thread);
    }
    case CXCursor_CallExpr: {
      const CXCursor callee = clang_.clang_getCursorReferenced(n.cursor);
      if (clang_.clang_Cursor_isNull(callee)) return false;
      const std::string name = qualified_name(callee);
      if (name == "lockstep::emu::builtin_block_idx" || name == "lockstep::emu::builtin_block_dim" || name == "lockstep::emu::builtin_grid_dim" ||
          name == "lockstep::emu::dynamic_shared_memory" || (per_thread && name == "lockstep::emu::builtin_thread_idx"))
        return true;
      // A group's size is its type's (a tile) or the block's, whichever thread asks.
      static const std::set<std::string> group_sizes{
          "cooperative_groups::details::warp_tile::size", "cooperative_groups::details::warp_tile::num_threads",
          "cooperative_groups::thread_block::size",       "cooperative_groups::thread_block::num_threads",
          "cooperative_groups::thread_block::group_dim",  "cooperative_groups::thread_block::dim_threads"};
      if (group_sizes.count(name)) {
        // Asked of a thread's own tile, it is asked of the tile's type, so
        // that the block's code (a loop's header) can read it.
        const node* member = n.children.empty() ? nullptr : unwrapped(n.children.front().get());
        if (member && member->kind == CXCursor_MemberRefExpr && !member->children.empty() && !uniform(*member->children.front(), per_thread) &&
            !edits_.count(n.begin)) {
          edit(n.begin, n.end, "::" + canonical_type(*member->children.front()) + "::" + name.substr(name.rfind("::") + 2) + "()");
        }
        return true;
      }
      if (name.rfind("lockstep::emu::", 0) == 0 || name.find("cooperative_groups") != std::string::npos) return false;
      if (in_main_file(clang_.clang_getCursorLocation(callee)) && clang_.clang_getCursorKind(callee) != CXCursor_Constructor &&
          !pure_function(callee))
        return false;
      // A constructor, or a function of another file: the same for every
      // thread given the same arguments, unless it reads the thread's
      // record (`lane_of(int base) : v(base + threadIdx.x)`, once taken
      // as uniform and computed once for the block).
      if (reads_record(callee)) return false;
      break;
    }
    case CXCursor_DeclStmt:
      for (const auto& c : n.children) {
        const variable* v = variable_for(c->cursor);
        if (!v || !v->uniform) return false;
      }
      return true;
    case CXCursor_ParenExpr:
    case CXCursor_UnexposedExpr:
    case CXCursor_BinaryOperator:
    case CXCursor_CompoundAssignOperator:
    case CXCursor_ConditionalOperator:
    case CXCursor_CStyleCastExpr:
    case CXCursor_CXXStaticCastExpr:
    case CXCursor_CXXFunctionalCastExpr:
    case CXCursor_CXXConstCastExpr:
    case CXCursor_CXXReinterpretCastExpr:
    case CXCursor_InitListExpr:
      break;
    default:
      return false;
  }
  for (const auto& c : n.children)
    if (!uniform(*c, per_thread)) return false;
  return true;
}

// Whether a function of this file gives every thread the same value for
// the same arguments (`cdiv(k, tw)`, an inline __host__ __device__
// function of the kernel's parameters): its body computes from its
// parameters, its own locals, literals and constants only, and calls only
// such functions; no memory, no thread index, no global it may change.
// A function without a body here, or one that reads anything else, is not.
bool translation_unit_splitter::pure_function(CXCursor function, int depth) const {
  if (depth > 8) return false;
  const CXCursor definition = clang_.clang_getCursorDefinition(function);
  if (clang_.clang_Cursor_isNull(definition) || !in_main_file(clang_.clang_getCursorLocation(definition))) return false;
  const CXCursorKind kind = clang_.clang_getCursorKind(definition);
  if (kind != CXCursor_FunctionDecl && kind != CXCursor_FunctionTemplate) return false;
  const std::unique_ptr<node> body = make_node(definition, nullptr);
  const auto own = [&](CXCursor decl) {  // a parameter or local of this function
    const CXSourceLocation at = clang_.clang_getCursorLocation(decl);
    return in_main_file(at) && offset_of(at) >= body->begin && offset_of(at) < body->end;
  };
  std::function<bool(const node&)> ok = [&](const node& n) -> bool {
    switch (n.kind) {
      case CXCursor_FunctionDecl:
      case CXCursor_FunctionTemplate:
      case CXCursor_ParmDecl:
      case CXCursor_VarDecl:
      case CXCursor_CompoundStmt:
      case CXCursor_ReturnStmt:
      case CXCursor_DeclStmt:
      case CXCursor_IfStmt:
      case CXCursor_IntegerLiteral:
      case CXCursor_FloatingLiteral:
      case CXCursor_CharacterLiteral:
      case CXCursor_CXXBoolLiteralExpr:
      case CXCursor_TypeRef:
      case CXCursor_TemplateRef:
      case CXCursor_NamespaceRef:
      case CXCursor_TemplateTypeParameter:
      case CXCursor_NonTypeTemplateParameter:
      case CXCursor_UnaryExpr:
      case CXCursor_ParenExpr:
      case CXCursor_UnexposedExpr:
      case CXCursor_BinaryOperator:
      case CXCursor_CompoundAssignOperator:
      case CXCursor_ConditionalOperator:
      case CXCursor_CStyleCastExpr:
      case CXCursor_CXXStaticCastExpr:
      case CXCursor_CXXFunctionalCastExpr:
      case CXCursor_UnexposedAttr:
        break;
      case CXCursor_UnaryOperator: {
        const std::string_view op = trimmed(text(n.begin, n.children.empty() ? n.end : n.children[0]->begin));
        if (op == "*" || op == "&") return false;
        break;
      }
      case CXCursor_DeclRefExpr: {
        const CXCursor decl = clang_.clang_getCursorReferenced(n.cursor);
        const CXCursorKind k = clang_.clang_getCursorKind(decl);
        if (k == CXCursor_EnumConstantDecl || k == CXCursor_NonTypeTemplateParameter || k == CXCursor_FunctionDecl || k == CXCursor_FunctionTemplate)
          break;
        if ((k == CXCursor_ParmDecl || k == CXCursor_VarDecl) && own(decl)) {
          // A reference or pointer parameter reaches memory.
          const CXTypeKind t = clang_.clang_getCanonicalType(clang_.clang_getCursorType(decl)).kind;
          if (t == CXType_Pointer || t == CXType_LValueReference || t == CXType_RValueReference || t == CXType_ConstantArray) return false;
          break;
        }
        // A constant of the file (`constexpr int tw = 16;`).
        if (k == CXCursor_VarDecl && clang_.clang_isConstQualifiedType(clang_.clang_getCursorType(decl)) && evaluated_integer(decl).has_value())
          break;
        return false;
      }
      case CXCursor_CallExpr: {
        const CXCursor callee = clang_.clang_getCursorReferenced(n.cursor);
        if (clang_.clang_Cursor_isNull(callee)) return false;
        const CXCursorKind k = clang_.clang_getCursorKind(callee);
        if (k != CXCursor_FunctionDecl && k != CXCursor_FunctionTemplate) return false;
        if (!pure_function(callee, depth + 1)) return false;
        break;
      }
      default:
        if (n.kind >= CXCursor_FirstAttr && n.kind <= CXCursor_LastAttr) return true;  // __host__ __device__, inline
        return false;
    }
    for (const auto& c : n.children)
      if (!ok(*c)) return false;
    return true;
  };
  return ok(*body);
}

// A local declared `constexpr`: a constant.
bool translation_unit_splitter::constexpr_local(const variable& v) const {
  return v.declaration && text(v.declaration->begin, v.declaration->end).starts_with("constexpr");
}

// A for loop's header as the block runs it: init, condition, the increments not run per thread.
std::vector<const node*> translation_unit_splitter::header_of(const node* loop) const {
  std::vector<const node*> out;
  for (std::size_t i = 0; i + 1 < loop->children.size(); ++i) out.push_back(loop->children[i].get());
  if (auto kept = header_increments_.find(loop); kept != header_increments_.end()) {
    out.pop_back();
    out.insert(out.end(), kept->second.begin(), kept->second.end());
  }
  return out;
}

// Block-level code: loop headers and branch conditions, which the loops run once for the block.
std::vector<const node*> translation_unit_splitter::block_level_expressions() const {
  std::vector<const node*> out;
  for (const node* loop : loops_) {
    if (loop->kind == CXCursor_ForStmt) {
      const std::vector<const node*> header = header_of(loop);
      out.insert(out.end(), header.begin(), header.end());
    } else {
      out.push_back((loop->kind == CXCursor_DoStmt ? loop->children.back() : loop->children.front()).get());
    }
  }
  for (const node* branch : branches_) out.push_back(branch->children.front().get());
  for (const node* call : block_calls_)
    for (std::size_t i = 1; i < call->children.size(); ++i) out.push_back(call->children[i].get());
  out.insert(out.end(), updates_.begin(), updates_.end());
  return out;
}

// The value a write of v in a region gives it where that write keeps v
// shared by the block, else null: `v = value;`, a statement of a sequence
// (every thread that has not returned runs it, once), with no return
// before it in the kernel and no read of v before or in it in its region. Every
// thread then stores the same value, if the value is uniform, and no thread
// reads the old one after a neighbour stored the new one (`v = v + 1;`
// would add once per thread). So a kernel may
// declare its variables first and assign them later (as lockstep.cuda's
// translation of Python does: `int bpg{}; ... bpg = gridDim.x;`).
const node* translation_unit_splitter::shared_assignment(const variable& v, const reference& r) const {
  const node* assignment = r.ref->parent;
  if (r.in_lambda || !assignment || assignment->kind != CXCursor_BinaryOperator || assignment->children.size() != 2 ||
      assignment->children[0].get() != r.ref || trimmed(text(r.ref->end, assignment->children[1]->begin)) != "=" ||
      !region_of_statement_.count(assignment) || in_masked_arm_.count(assignment) || first_return_ < assignment->begin)
    return nullptr;
  for (const reference& other : v.refs)
    if (other.ref != r.ref && other.region == r.region && other.ref->begin < assignment->end) return nullptr;
  return assignment->children[1].get();
}

// A lanes variant's parameters that its barriers' conditions read: tried
// as values every calling lane passes alike, which its callers are then
// held to (lanes_uniform_positions_). Asked for where a condition that
// differs between threads reads them, directly or through a local's
// initializer.
void translation_unit_splitter::ask_uniform_parameters(const node& e) {
  if (!lanes_) return;
  uniform_parameters_needed needed;
  std::set<const variable*> seen;
  std::function<void(const node&)> reach = [&](const node& n) {
    if (n.kind == CXCursor_DeclRefExpr)
      if (const variable* v = variable_for(clang_.clang_getCursorReferenced(n.cursor)); v && seen.insert(v).second) {
        const std::size_t key = key_of(offset_of(clang_.clang_getCursorLocation(v->decl)), v->parameter);
        if (v->parameter && !uniform_parameters_.count(key)) needed.keys.push_back(key);
        if (!v->parameter && v->initializer) reach(*v->initializer);
      }
    for (const auto& c : n.children) reach(*c);
  };
  reach(e);
  if (!needed.keys.empty()) throw needed;
}

// The positions of the parameters a variant holds its callers to.
std::vector<std::size_t> translation_unit_splitter::uniform_positions(const node& function) const {
  std::vector<std::size_t> out;
  const std::vector<const node*> parameters = parameters_of(function);
  for (std::size_t i = 0; i < parameters.size(); ++i)
    if (uniform_parameters_.count(key_of(offset_of(clang_.clang_getCursorLocation(parameters[i]->cursor)), true))) out.push_back(i);
  return out;
}

void translation_unit_splitter::decide_uniform(const std::vector<const node*>& block_level) {
  for (auto& [key, v] : variables_) {
    v.uniform = !v.static_storage && ((v.parameter && (!lanes_ || uniform_parameters_.count(key))) || v.sequence_level);
    for (const reference& r : v.refs)
      if (r.write && r.region >= 0 && !shared_assignment(v, r)) v.uniform = false;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& [key, v] : variables_) {
      if (!v.uniform) continue;
      // A constexpr local is a constant (`constexpr int BM = S::BM;` in a template too).
      bool ok = !v.initializer || constexpr_local(v) || uniform(*v.initializer);
      // Arrays are uniform only when nobody writes their elements.
      if (ok && v.var_decl && clang_.clang_getCursorType(v.decl).kind == CXType_ConstantArray)
        ok = clang_.clang_isConstQualifiedType(clang_.clang_getCanonicalType(clang_.clang_getCursorType(v.decl))) != 0;
      for (const reference& r : v.refs)
        if (ok && r.write && r.region < 0) {
          const node* top = r.ref;
          while (top->parent && std::find(block_level.begin(), block_level.end(), top) == block_level.end()) top = top->parent;
          ok = uniform(*top);
        } else if (ok && r.write) {
          ok = uniform(*shared_assignment(v, r));
        }
      if (!ok) {
        v.uniform = false;
        changed = true;
      }
    }
    // A declaration statement of a region leaves it whole (all its variables
    // uniform), stays, or is cut into its declarators, the uniform ones
    // computed once for the block (hoist_uniform_declarators); one that
    // cannot be cut (a loop's init) stays whole: none of its variables is
    // uniform unless all are.
    for (auto& [key, v] : variables_) {
      if (!v.uniform || !v.declaration || (region_of_statement_.count(v.declaration) && declarators_of(*v.declaration))) continue;
      for (const auto& c : v.declaration->children) {
        const variable* other = c->kind == CXCursor_VarDecl ? variable_for(c->cursor) : nullptr;
        if (other && !other->uniform && !other->static_storage) {
          v.uniform = false;
          changed = true;
        }
      }
    }
  }
}

// Whether the block-level code reads only uniform values: update steps and
// interchanged loops that do not are tried again in their regions (thrown),
// a condition around a barrier that does not declines the function.
void translation_unit_splitter::check_block_level_code(const std::vector<const node*>& block_level) {
  decide_uniform(block_level);
  per_thread_updates found;
  for (const node* u : updates_)
    if (!uniform(*u)) found.statements.push_back(u->begin);
  if (!found.statements.empty()) throw found;
  per_thread_loops differing;
  for (const node* loop : interchanged_)
    for (const node* e : header_of(loop))
      if (!uniform(*e)) {
        differing.loops.push_back(loop->begin);
        break;
      }
  for (const node* call : loop_calls_)
    for (std::size_t i = 1; i < call->children.size(); ++i)
      if (!uniform(*call->children[i])) {
        differing.loops.push_back(call->begin);
        break;
      }
  if (!differing.loops.empty()) throw differing;
  for (const node* e : block_level)
    if (!uniform(*e)) {
      ask_uniform_parameters(*e);
      throw declined{"the condition at " + line_of(*e) + " may differ between the block's threads, and a barrier depends on it"};
    }
  // A lanes variant's barriers may depend on parameters its callers must pass alike.
  for (const node* statement : collectives_)
    for (const node* call : collective_plans_.at(statement).calls) {
      if (!lanes_call(*call)) continue;
      const std::vector<const node*> arguments = arguments_of(*call);
      for (const CXCursor& callee : callees(*call)) {
        const auto positions = lanes_uniform_positions_.find(variant_usr(callee));
        if (positions == lanes_uniform_positions_.end()) continue;
        for (const std::size_t position : positions->second)
          if (position < arguments.size() && !uniform(*arguments[position])) {
            ask_uniform_parameters(*arguments[position]);
            throw declined{"the call at " + line_of(*call) + " passes a value that may differ between the block's threads where " +
                           clang_.string(clang_.clang_getCursorSpelling(callee)) + "'s barriers need one value"};
          }
      }
    }
}

}  // namespace lockstep::emu::region_loops::compiler
