// Aliasing (analysis): whether a local's storage may be reached through
// another name that outlives the expression naming it: its address taken
// and kept, an array decayed into a pointer that is kept, a reference bound
// to it, a view built over it (`view idx{storage};`, lockstep.cuda's
// `over(storage, {4})` for every cuda.local.array), a lambda capturing it.
// Such a local whose scope spans a barrier must keep one address per thread
// for its whole life (the block's per-thread arrays), even where its own
// name appears in one region only: declared inside a region's loop, all the
// threads' views would point at the one local of the loop's frame, and
// after the barrier every thread would read the last thread's values.
#include "compiler.h"

namespace lockstep::emu::region_loops::compiler {

namespace {

bool scalar_kind(CXTypeKind k) {
  return (k >= CXType_Bool && k <= CXType_LongDouble) || k == CXType_Enum || k == CXType_Pointer || k == CXType_NullPtr;
}

bool array_kind(CXTypeKind k) {
  return k == CXType_ConstantArray || k == CXType_IncompleteArray || k == CXType_VariableArray || k == CXType_DependentSizedArray;
}

const node* parent_of(const node& n) {
  const node* p = n.parent;
  while (p && p->kind == CXCursor_ParenExpr) p = p->parent;
  return p;
}

}  // namespace

CXTypeKind translation_unit_splitter::canonical_kind(const node& e) const {
  return clang_.clang_getCanonicalType(clang_.clang_getCursorType(e.cursor)).kind;
}

// Whether the address of the object `o` denotes (an lvalue: a local, an
// element or member of it) may be kept beyond the expression.
bool translation_unit_splitter::object_escapes(const node& o) const {
  const node* p = parent_of(o);
  if (!p) return false;
  const CXTypeKind type = canonical_kind(o);
  switch (p->kind) {
    case CXCursor_UnexposedExpr:                         // an implicit conversion
      if (array_kind(type)) return address_escapes(*p);  // decayed to a pointer
      if (scalar_kind(type)) return false;               // its value read
      if (canonical_kind(*p) == type) return false;      // a record copied
      return object_escapes(*p);                         // a base of it, still the object
    case CXCursor_ArraySubscriptExpr:
      if (p->children.size() == 2 && p->children[0]->begin == o.begin && array_kind(type)) return object_escapes(*p);  // an element
      return false;  // an index, or a pointer's value read
    case CXCursor_MemberRefExpr:
      if (!p->children.empty() && p->children[0].get() == &o && text(o.end, p->end).find("->") == std::string_view::npos)
        return object_escapes(*p);  // a member, or the object of a member call
      return false;                 // a pointer's value read
    case CXCursor_UnaryOperator: {
      const std::string_view op = trimmed(text(p->begin, o.begin));
      if (op == "&") return address_escapes(*p);
      return array_kind(type);  // an array's other operators take its address
    }
    case CXCursor_BinaryOperator:
    case CXCursor_CompoundAssignOperator:
    case CXCursor_ConditionalOperator:
      return !scalar_kind(type);
    case CXCursor_VarDecl:  // bound to a reference, or copied
      return clang_.clang_getCanonicalType(clang_.clang_getCursorType(p->cursor)).kind == CXType_LValueReference ||
             clang_.clang_getCanonicalType(clang_.clang_getCursorType(p->cursor)).kind == CXType_RValueReference || array_kind(type);
    case CXCursor_CallExpr:
      return !scalar_kind(type) && call_keeps(*p, o);
    case CXCursor_InitListExpr:  // an element copied comes through a conversion (its value read, a copy constructed):
      return true;               // one here directly is an array's, or bound to a reference member (`holder h{x};`)
    case CXCursor_CStyleCastExpr:
    case CXCursor_CXXStaticCastExpr:
    case CXCursor_CXXReinterpretCastExpr:
    case CXCursor_CXXConstCastExpr:
    case CXCursor_CXXFunctionalCastExpr: {
      const CXTypeKind to = canonical_kind(*p);
      if (to == CXType_LValueReference || to == CXType_RValueReference) return object_escapes(*p);
      if (array_kind(type)) return address_escapes(*p);
      return false;
    }
    case CXCursor_UnaryExpr:  // sizeof, alignof
    case CXCursor_CompoundStmt:
    case CXCursor_DeclStmt:
      return false;
    default:
      return !scalar_kind(type);
  }
}

// Whether an address value (a pointer into the storage, or a record or
// reference holding one) may be kept beyond the expression.
bool translation_unit_splitter::address_escapes(const node& e) const {
  const node* p = parent_of(e);
  if (!p) return false;
  switch (p->kind) {
    case CXCursor_UnexposedExpr:
    case CXCursor_CStyleCastExpr:
    case CXCursor_CXXStaticCastExpr:
    case CXCursor_CXXReinterpretCastExpr:
    case CXCursor_CXXConstCastExpr:
    case CXCursor_CXXFunctionalCastExpr: {
      const CXTypeKind to = canonical_kind(*p);
      if (to == CXType_Bool || (to >= CXType_Char_U && to <= CXType_LongDouble)) return false;  // tested, or an integer
      return address_escapes(*p);
    }
    case CXCursor_ArraySubscriptExpr:
      if (p->children.size() == 2 && p->children[0]->begin == e.begin) return object_escapes(*p);  // an element through it
      return false;
    case CXCursor_MemberRefExpr:  // `p->field`
      return object_escapes(*p);
    case CXCursor_UnaryOperator: {
      const std::string_view op = trimmed(text(p->begin, e.begin));
      if (op == "*") return object_escapes(*p);
      return op != "!";
    }
    case CXCursor_BinaryOperator: {
      const CXTypeKind to = canonical_kind(*p);
      if (to == CXType_Pointer) return address_escapes(*p);                           // pointer arithmetic
      return to != CXType_Bool && !(to >= CXType_Char_U && to <= CXType_LongDouble);  // a comparison, a difference
    }
    case CXCursor_ConditionalOperator:
      return p->children.size() == 3 && p->children[0].get() != &e ? address_escapes(*p) : false;
    case CXCursor_CallExpr:
      return call_keeps(*p, e);
    default:  // kept in a variable, a member, an aggregate, returned, captured
      return true;
  }
}

// Whether a call may keep what it is handed at `argument` (an address, or
// an object by reference or as `this`): a constructor other than a copy
// makes an object that may hold it; a result that is a pointer, a record
// or a reference may be or hold it; a parameter that is a non-const
// reference to a record or a pointer may be where the callee stores it.
bool translation_unit_splitter::call_keeps(const node& call, const node& argument) const {
  const CXCursor callee = clang_.clang_getCursorReferenced(call.cursor);
  const CXTypeKind result = canonical_kind(call);
  if (!clang_.clang_Cursor_isNull(callee) && clang_.clang_getCursorKind(callee) == CXCursor_Constructor) {
    const std::vector<const node*> arguments = arguments_of(call);
    const bool copy = arguments.size() <= 1 && canonical_type(call) == canonical_type(argument);
    if (!copy) return true;
    return false;
  }
  if (result == CXType_Pointer || result == CXType_Record || result == CXType_Unexposed || result == CXType_Elaborated) return true;
  if (result == CXType_LValueReference || result == CXType_RValueReference) {
    if (object_escapes(call)) return true;
  }
  const std::vector<CXCursor> candidates = callees(call);
  if (candidates.empty()) return true;
  const std::vector<const node*> arguments = arguments_of(call);
  for (const CXCursor& c : candidates) {
    const std::vector<CXType> parameters = parameter_types(c);
    for (std::size_t i = 0; i < arguments.size() && i < parameters.size(); ++i) {
      if (arguments[i]->begin <= argument.begin && argument.end <= arguments[i]->end) continue;
      const CXType type = parameters[i];
      CXType target = clang_.clang_getCanonicalType(clang_.clang_getPointeeType(type));
      if (type.kind != CXType_LValueReference && type.kind != CXType_RValueReference && type.kind != CXType_Pointer) continue;
      if (clang_.clang_isConstQualifiedType(target)) continue;
      if (target.kind == CXType_Pointer || target.kind == CXType_Record || target.kind == CXType_Unexposed) return true;
    }
  }
  return false;
}

// Whether v's storage may be reached through another name beyond the
// expression that names it. A lambda that captures it is such a name
// unless it is a closure (made again in each region, collect_closures).
bool translation_unit_splitter::storage_escapes(const variable& v) const {
  for (const reference& r : v.refs) {
    if (r.in_lambda) {
      const node* lambda = r.ref;
      while (lambda && lambda->kind != CXCursor_LambdaExpr) lambda = lambda->parent;
      if (!lambda) return true;
      const bool closure = std::any_of(variables_.begin(), variables_.end(), [&](const auto& entry) {
        const node* init = entry.second.initializer;
        return entry.second.closure && init && init->begin <= lambda->begin && lambda->end <= init->end;
      });
      if (!closure && address_escapes(*lambda)) return true;
      continue;
    }
    if (object_escapes(*r.ref)) return true;
  }
  return false;
}

// Whether a barrier may stand between v's declaration and the end of its
// scope: a statement of another region follows it in its block.
bool translation_unit_splitter::scope_spans_regions(const variable& v) const {
  if (v.parameter || !v.sequence_level || !v.declaration || !v.declaration->parent) return false;
  // A reference has no storage of its own: what it is bound to is the one aliased.
  const CXTypeKind type = clang_.clang_getCanonicalType(clang_.clang_getCursorType(v.decl)).kind;
  if (type == CXType_LValueReference || type == CXType_RValueReference) return false;
  const node* scope = v.declaration->parent;
  for (const auto& [statement, region] : region_of_statement_)
    if (region != v.declared_region && statement->begin >= v.declaration->end && statement->end <= scope->end) return true;
  return false;
}

}  // namespace lockstep::emu::region_loops::compiler
