// Per-thread affinity (analysis): how values and addresses move from thread to
// thread (x_step), which guards hold on convex sets of threads, which
// expressions are pure, which coordinates become thread offsets, and whether
// blocks along x may run as one call.
#include "compiler.h"

namespace lockstep::emu::region_loops::compiler {

x_step translation_unit_splitter::step_in_x(const node& n, int depth) {
  const node& e = *unwrapped(&n);
  if (depth > 16) return x_step::other;
  auto combine_all = [&](const node& parent) {
    for (const auto& c : parent.children)
      if (step_in_x(*c, depth + 1) != x_step::none) return x_step::other;
    return x_step::none;
  };
  switch (e.kind) {
    case CXCursor_DeclRefExpr: {
      const variable* v = variable_for(clang_.clang_getCursorReferenced(e.cursor));
      if (!v || v->static_storage || v->uniform) return x_step::none;
      if (v->recomputed && v->initializer) return step_in_x(*v->initializer, depth + 1);
      return x_step::other;
    }
    case CXCursor_MemberRefExpr:
      if (thread_idx_call(e)) return text(e.end - 1, e.end) == "x" ? x_step::one : x_step::none;
      return combine_all(e);
    case CXCursor_ArraySubscriptExpr:
      return address_step(e, depth) == x_step::none ? x_step::none : x_step::other;
    case CXCursor_BinaryOperator: {
      if (e.children.size() != 2) return x_step::other;
      const std::string_view op = trimmed(text(e.children[0]->end, e.children[1]->begin));
      const x_step a = step_in_x(*e.children[0], depth + 1), b = step_in_x(*e.children[1], depth + 1);
      if (a == x_step::none && b == x_step::none) return x_step::none;
      if (a == x_step::other || b == x_step::other) return x_step::other;
      if (op == "+" && a != b) return x_step::one;
      if (op == "-" && b == x_step::none) return x_step::one;
      if (op == "*") {
        const node& factor = *unwrapped((a == x_step::none ? e.children[0] : e.children[1]).get());
        if (factor.kind == CXCursor_IntegerLiteral && trimmed(text(factor.begin, factor.end)) == "1") return x_step::one;
      }
      return x_step::other;
    }
    case CXCursor_UnaryOperator: {
      const std::string_view op = trimmed(text(e.begin, e.children.empty() ? e.end : e.children[0]->begin));
      const x_step inner = e.children.size() == 1 ? step_in_x(*e.children[0], depth + 1) : x_step::other;
      return op == "+" || inner == x_step::none ? inner : x_step::other;
    }
    case CXCursor_CStyleCastExpr:
    case CXCursor_CXXStaticCastExpr:
    case CXCursor_CXXFunctionalCastExpr:
      return e.children.empty() ? x_step::other : step_in_x(*e.children.back(), depth + 1);
    default:
      return combine_all(e);
  }
}

// The step of the element `e` (a subscript) names; a local array of the
// thread's own does not count (its elements are not shared memory).
x_step translation_unit_splitter::address_step(const node& e, int depth) {
  if (e.kind != CXCursor_ArraySubscriptExpr || e.children.size() != 2) return step_in_x(e, depth + 1);
  const node& base = *unwrapped(e.children[0].get());
  const x_step index = step_in_x(*e.children[1], depth + 1);
  x_step from = x_step::none;
  if (base.kind == CXCursor_ArraySubscriptExpr) {
    from = address_step(base, depth + 1);
  } else if (base.kind == CXCursor_DeclRefExpr) {
    const variable* v = variable_for(clang_.clang_getCursorReferenced(base.cursor));
    const bool own_array = v && !v->parameter && !v->static_storage && clang_.clang_getCursorType(v->decl).kind == CXType_ConstantArray;
    if (own_array) return x_step::none;
    from = step_in_x(base, depth + 1);
  } else {
    from = step_in_x(base, depth + 1);
  }
  const bool element_is_array = clang_.clang_getCursorType(e.cursor).kind == CXType_ConstantArray;
  if (index == x_step::none) return from;
  if (index == x_step::one && from == x_step::none && !element_is_array) return x_step::one;
  return x_step::other;
}

// Whether a loop's body reads or writes memory at addresses that do not
// move by one element, or stay, from thread to thread: run once for the
// block, each of its steps would gather across the row (the lecture's
// a[i, k] with i the thread's x), where each thread alone walks along a row.
bool translation_unit_splitter::scattered_across_threads(const node& body) {
  bool scattered = false;
  std::function<void(const node&)> visit = [&](const node& n) {
    if (scattered) return;
    if (n.kind == CXCursor_ArraySubscriptExpr) {
      scattered = address_step(n, 0) == x_step::other;
      return;  // the subscripts inside are part of this address
    }
    if (n.kind == CXCursor_CallExpr && clang_.string(clang_.clang_getCursorSpelling(n.cursor)) == "operator()") {
      // A row-major accessor a(i, k): its last index moves by one element.
      for (std::size_t i = 1; i < n.children.size() && !scattered; ++i) {
        const x_step s = step_in_x(*n.children[i], 0);
        scattered = s == x_step::other || (s == x_step::one && i + 1 != n.children.size());
      }
      if (!scattered && !n.children.empty()) visit(*n.children[0]);
      return;
    }
    if (n.kind == CXCursor_UnaryOperator && trimmed(text(n.begin, n.end)).starts_with("*") && n.children.size() == 1) {
      scattered = step_in_x(*n.children[0], 0) == x_step::other;
      return;
    }
    for (const auto& c : n.children) visit(*c);
  };
  visit(body);
  return scattered;
}

// Whether a pure guard holds on a convex set of thread coordinates: then
// it holds for every thread of a box (the block, a row) where it holds at
// the box's corners. So is a conjunction of comparisons (<, <=, >, >=)
// between expressions affine in the coordinates in signed integer
// arithmetic, which does not wrap (`int i = blockIdx.x * blockDim.x +
// threadIdx.x; if (i < n)`). Unsigned arithmetic wraps, so `unsigned i =
// threadIdx.x - 5; if (i >= 3)` fails in the middle of a row only: such a
// guard is asked of every thread.
bool translation_unit_splitter::convex_in_block(const node& n) {
  if (n.kind == CXCursor_ParenExpr && n.children.size() == 1) return convex_in_block(*n.children[0]);
  if (n.kind != CXCursor_BinaryOperator || n.children.size() != 2) return false;
  const std::string_view op = trimmed(text(n.children[0]->end, n.children[1]->begin));
  if (op == "&&") return convex_in_block(*n.children[0]) && convex_in_block(*n.children[1]);
  if (op != "<" && op != "<=" && op != ">" && op != ">=") return false;
  return in_coordinates(*n.children[0]) != variation::other && in_coordinates(*n.children[1]) != variation::other;
}

variation translation_unit_splitter::in_coordinates(const node& n, int depth) {
  if (!reads_coordinates(n, depth)) return variation::constant;
  const auto kind = clang_.clang_getCanonicalType(clang_.clang_getCursorType(n.cursor)).kind;
  const bool signed_int = kind == CXType_Int || kind == CXType_Long || kind == CXType_LongLong || kind == CXType_Short || kind == CXType_SChar;
  if (!signed_int || depth > 16) return variation::other;
  const auto affine = [](variation v) { return v == variation::other ? variation::other : variation::affine; };
  switch (n.kind) {
    case CXCursor_ParenExpr:
      return n.children.size() == 1 ? in_coordinates(*n.children[0], depth + 1) : variation::other;
    case CXCursor_UnexposedExpr: {  // an implicit conversion
      if (n.children.size() != 1) return variation::other;
      const node& from = *n.children[0];
      // `blockIdx.x * blockDim.x + threadIdx.x` converted to int at once sums in int (offset_term).
      if (from.kind == CXCursor_BinaryOperator && from.children.size() == 2 && trimmed(text(from.children[0]->end, from.children[1]->begin)) == "+")
        for (const auto& term : from.children)
          if (const node* call = thread_idx_call(*term); (call && offset_term(*call)) || offset_local(*unwrapped(term.get())))
            return in_coordinates(*from.children[term == from.children[0]], depth + 1) == variation::constant ? variation::affine : variation::other;
      // A thread coordinate converted implicitly (`int tx = threadIdx.x;`), as cast below.
      if (thread_idx_call(*unwrapped(&from)))
        return clang_.clang_Type_getSizeOf(clang_.clang_getCursorType(n.cursor)) >= 2 ? variation::affine : variation::other;
      return keeps_value(n, from) ? affine(in_coordinates(from, depth + 1)) : variation::other;
    }
    case CXCursor_DeclRefExpr: {
      const variable* v = variable_for(clang_.clang_getCursorReferenced(n.cursor));
      return v && v->recomputed && v->initializer ? affine(in_coordinates(*v->initializer, depth + 1)) : variation::other;
    }
    case CXCursor_CStyleCastExpr:
    case CXCursor_CXXStaticCastExpr:
    case CXCursor_CXXFunctionalCastExpr: {
      // A thread coordinate (below 1024) cast to a signed type of 16 bits
      // or more keeps its value, as lockstep.cuda writes `static_cast<long
      // long>(threadIdx.x)`; so does a signed value cast to a type at
      // least as wide.
      if (n.children.empty()) return variation::other;
      const node& from = *unwrapped(n.children.back().get());  // the value before any implicit conversion
      if (thread_idx_call(from)) return clang_.clang_Type_getSizeOf(clang_.clang_getCursorType(n.cursor)) >= 2 ? variation::affine : variation::other;
      return keeps_value(n, from) ? affine(in_coordinates(from, depth + 1)) : variation::other;
    }
    case CXCursor_BinaryOperator: {
      if (n.children.size() != 2) return variation::other;
      const std::string_view op = trimmed(text(n.children[0]->end, n.children[1]->begin));
      const variation a = in_coordinates(*n.children[0], depth + 1), b = in_coordinates(*n.children[1], depth + 1);
      if (a == variation::other || b == variation::other) return variation::other;
      if (op == "+" || op == "-") return variation::affine;
      if (op == "*" && (a == variation::constant || b == variation::constant)) return variation::affine;
      return variation::other;
    }
    default:
      return variation::other;
  }
}

// The call to lockstep::emu::`builtin` (builtin_thread_idx, ...) under
// `member`, a read of its .x (or of .y or .z too, unless x_only), else null.
const node* translation_unit_splitter::builtin_member_call(const node& member, std::string_view builtin, bool x_only) {
  if (member.kind != CXCursor_MemberRefExpr || member.children.size() != 1) return nullptr;
  const std::string_view field = trimmed(text(member.children[0]->end, member.end));
  if (field != ".x" && (x_only || (field != ".y" && field != ".z"))) return nullptr;
  const node* call = unwrapped(member.children[0].get());
  if (call->kind != CXCursor_CallExpr) return nullptr;
  const CXCursor callee = clang_.clang_getCursorReferenced(call->cursor);
  return !clang_.clang_Cursor_isNull(callee) && qualified_name(callee) == "lockstep::emu::" + std::string(builtin) ? call : nullptr;
}

// The call to lockstep's threadIdx under `threadIdx.x` (.y, .z; parentheses
// and conversions around it), else null.
const node* translation_unit_splitter::thread_idx_call(const node& n) { return builtin_member_call(*unwrapped(&n), "builtin_thread_idx", false); }

// An integer conversion or cast to 32 bits or more, or parentheses: what
// `static_cast<long long>(threadIdx.x)` and `(int)blockIdx.x` are wrapped in.
bool translation_unit_splitter::keeps_index(const node& n) const {
  if (n.kind == CXCursor_ParenExpr) return n.children.size() == 1;
  if (n.kind != CXCursor_UnexposedExpr && n.kind != CXCursor_CStyleCastExpr && n.kind != CXCursor_CXXStaticCastExpr &&
      n.kind != CXCursor_CXXFunctionalCastExpr)
    return false;
  if (n.children.empty() || (n.kind == CXCursor_UnexposedExpr && n.children.size() != 1)) return false;
  const CXType type = clang_.clang_getCanonicalType(clang_.clang_getCursorType(n.cursor));
  const bool integer = type.kind == CXType_Int || type.kind == CXType_UInt || type.kind == CXType_Long || type.kind == CXType_ULong ||
                       type.kind == CXType_LongLong || type.kind == CXType_ULongLong;
  return integer && clang_.clang_Type_getSizeOf(type) >= 4;
}

const node* translation_unit_splitter::under_index_casts(const node* n) const {
  while (keeps_index(*n)) n = n->children.back().get();
  return n;
}

// The call to lockstep's built-in `builtin` (builtin_block_idx, ...) when
// n reads its member x (integer casts of 32 bits or more around it), else null.
const node* translation_unit_splitter::x_of(const node& n, std::string_view builtin) {
  return builtin_member_call(*under_index_casts(&n), builtin, true);
}

// For `threadIdx.x` (the MemberRefExpr) in `blockIdx.x * blockDim.x +
// threadIdx.x` (either order, integer casts of 32 bits or more around any
// part), the product's node, else null.
const node* translation_unit_splitter::global_index_product(const node& member) {
  const node* term = &member;
  const node* sum = member.parent;
  while (sum && keeps_index(*sum)) term = sum, sum = sum->parent;
  if (!sum || sum->kind != CXCursor_BinaryOperator || sum->children.size() != 2) return nullptr;
  if (trimmed(text(sum->children[0]->end, sum->children[1]->begin)) != "+") return nullptr;
  const node* product = under_index_casts(sum->children[sum->children[0].get() == term].get());
  if (product->kind != CXCursor_BinaryOperator || product->children.size() != 2) return nullptr;
  if (trimmed(text(product->children[0]->end, product->children[1]->begin)) != "*") return nullptr;
  const node &a = *product->children[0], &b = *product->children[1];
  const bool block_times_size =
      (x_of(a, "builtin_block_idx") && x_of(b, "builtin_block_dim")) || (x_of(b, "builtin_block_idx") && x_of(a, "builtin_block_dim"));
  return block_times_size ? product : nullptr;
}

// Whether the function's blocks along x may run as one call (loop_claim):
// no barrier, no shared memory, no loop but those run once for the block,
// nothing called that reads the thread's record or blockIdx (block
// variants only where they qualify alike), and threadIdx.x and blockIdx.x
// read only in `blockIdx.x * blockDim.x + threadIdx.x`.
bool translation_unit_splitter::blocks_run_along_x(const node& body) {
  if (contains_synchronization(body)) return false;
  for (const auto& [key, v] : variables_)
    if (v.static_storage) return false;
  std::set<const node*> in_products;  // blockIdx.x reads in such sums' products
  std::vector<const node*> block_x;   // every blockIdx.x read
  bool runs = true;
  std::function<void(const node&)> visit = [&](const node& n) {
    if (!runs) return;
    if (n.kind == CXCursor_OverloadedDeclRef) runs = false;  // a call not resolved yet
    // A loop each thread runs whole (a row of A of its own, a grid-stride
    // loop) reuses what its neighbours in a block's short row brought into
    // the cache; rows spanning many blocks would lose that (the Python
    // naive matmul, its rows in x, ran 2x slower).
    if (is_loop(n.kind) && std::find(loops_.begin(), loops_.end(), &n) == loops_.end()) runs = false;
    if (n.kind == CXCursor_DeclRefExpr) {
      const CXCursor target = clang_.clang_getCursorReferenced(n.cursor);
      if (clang_.clang_getCursorKind(target) == CXCursor_VarDecl && clang_.clang_getCursorTLSKind(target) != CXTLS_None)
        runs = false;  // a __shared__ variable outside the kernel
    }
    if (n.kind == CXCursor_CallExpr && std::find(block_calls_.begin(), block_calls_.end(), &n) != block_calls_.end()) {
      // A variant's call: its arguments are the block's, and the variant runs over the caller's rows.
      for (const CXCursor& callee : callees(n)) runs &= along_x_variants_.count(variant_usr(callee)) > 0;
      for (std::size_t i = 1; i < n.children.size(); ++i) visit(*n.children[i]);
      return;
    }
    if (n.kind == CXCursor_CallExpr) {
      const CXCursor callee = clang_.clang_getCursorReferenced(n.cursor);
      const std::string name = clang_.clang_Cursor_isNull(callee) ? "" : qualified_name(callee);
      if (name == "lockstep::emu::builtin_thread_idx" || name == "lockstep::emu::builtin_block_idx") {
        const node* member = n.parent;
        while (member && member->kind == CXCursor_ParenExpr) member = member->parent;
        if (!member || member->kind != CXCursor_MemberRefExpr) return void(runs = false);     // the whole uint3
        if (!x_of(*member, name.substr(std::string_view("lockstep::emu::").size()))) return;  // y or z: the same in every block of the row
        if (name == "lockstep::emu::builtin_block_idx") return block_x.push_back(&n);
        const node* product = global_index_product(*member);
        if (!product) return void(runs = false);
        for (const auto& factor : product->children)
          if (const node* block_x_read = x_of(*factor, "builtin_block_idx")) in_products.insert(block_x_read);
        return;
      }
      // (lockstep nvcc's test for a call outside a launch asks whether there is a block, the same in all of them.)
      if (name == "lockstep::emu::kernel_called_unlaunched" || name == "lockstep::emu::record_unlaunched_kernel_call") return;
      if (name != "lockstep::emu::builtin_block_dim" && name != "lockstep::emu::builtin_grid_dim" && reads_record(callee, 0, true))
        return void(runs = false);
    }
    for (const auto& c : n.children) visit(*c);
  };
  visit(body);
  return runs && std::all_of(block_x.begin(), block_x.end(), [&](const node* read) { return in_products.count(read); });
}

bool translation_unit_splitter::reads_coordinates(const node& n, int depth) {
  if (depth > 16) return true;
  if (n.kind == CXCursor_DeclRefExpr)
    if (const variable* v = variable_for(clang_.clang_getCursorReferenced(n.cursor)); v && v->recomputed && v->initializer)
      return reads_coordinates(*v->initializer, depth + 1);
  if (n.kind == CXCursor_MemberRefExpr && thread_idx_call(n)) return true;
  return std::any_of(n.children.begin(), n.children.end(), [&](const auto& c) { return reads_coordinates(*c, depth); });
}

// An expression of values the block shares, locals computed again and the
// thread's coordinates that reads no memory, calls nothing and changes
// nothing.
bool translation_unit_splitter::pure(const node& n) {
  switch (n.kind) {
    case CXCursor_IntegerLiteral:
    case CXCursor_FloatingLiteral:
    case CXCursor_CharacterLiteral:
    case CXCursor_CXXBoolLiteralExpr:
    case CXCursor_UnaryExpr:  // sizeof, alignof
      return true;
    case CXCursor_DeclRefExpr: {
      const CXCursor decl = clang_.clang_getCursorReferenced(n.cursor);
      if (const variable* v = variable_for(decl)) return !v->static_storage && (v->uniform || v->recomputed);
      const CXCursorKind k = clang_.clang_getCursorKind(decl);
      return k == CXCursor_EnumConstantDecl || k == CXCursor_NonTypeTemplateParameter ||
             (k == CXCursor_VarDecl && clang_.clang_isConstQualifiedType(clang_.clang_getCursorType(decl)));
    }
    case CXCursor_CallExpr: {
      const CXCursor callee = clang_.clang_getCursorReferenced(n.cursor);
      if (clang_.clang_Cursor_isNull(callee)) return false;
      const std::string name = qualified_name(callee);
      return name == "lockstep::emu::builtin_thread_idx" || name == "lockstep::emu::builtin_block_idx" ||
             name == "lockstep::emu::builtin_block_dim" || name == "lockstep::emu::builtin_grid_dim";
    }
    case CXCursor_UnaryOperator: {
      const std::string_view written = text(n.begin, n.end);
      if (written.starts_with("*") || written.starts_with("&") || written.find("++") != std::string_view::npos ||
          written.find("--") != std::string_view::npos)
        return false;
      break;
    }
    case CXCursor_BinaryOperator: {
      if (n.children.size() != 2) return false;
      const std::string_view op = trimmed(text(n.children[0]->end, n.children[1]->begin));
      if (op == "=" || op == ",") return false;
      break;
    }
    case CXCursor_MemberRefExpr:
      if (!n.children.empty() && text(n.children[0]->end, n.end).find("->") != std::string_view::npos) return false;
      break;
    case CXCursor_ParenExpr:
    case CXCursor_UnexposedExpr:
    case CXCursor_ConditionalOperator:
    case CXCursor_CStyleCastExpr:
    case CXCursor_CXXStaticCastExpr:
    case CXCursor_CXXFunctionalCastExpr:
      break;
    default:
      return false;
  }
  for (const auto& c : n.children)
    if (!pure(*c)) return false;
  return true;
}

// `threadIdx.x` (y, z) written as a term of an unsigned 32-bit sum whose
// other term the block shares and which is converted to int (`int i =
// blockIdx.x * blockDim.x + threadIdx.x;`), else null: such a coordinate
// becomes a thread_offset (lockstep/emu/region_loops.h), whose sum the
// host compiler sees is linear in the thread.
const node* translation_unit_splitter::offset_term(const node& call) {
  const std::string_view written = text(call.begin, call.end);
  if (written != "threadIdx" && written != "::lockstep::emu::builtin_thread_idx()") return nullptr;
  const node* member = call.parent;
  while (member && member->kind == CXCursor_ParenExpr && member->end == call.end) member = member->parent;  // the macro's parentheses
  if (!member || member->kind != CXCursor_MemberRefExpr) return nullptr;
  const std::string_view field = trimmed(text(call.end, member->end));
  if (field != ".x" && field != ".y" && field != ".z") return nullptr;
  return term_of_int_sum(*member) ? member : nullptr;
}

// A local of type int computed from the thread's coordinates (`int tx =
// threadIdx.x;`) written as such a term (`blockIdx.x * 16 + tx`): it
// becomes a thread_offset too.
bool translation_unit_splitter::offset_local(const node& ref) {
  if (ref.kind != CXCursor_DeclRefExpr || clang_.clang_getCanonicalType(clang_.clang_getCursorType(ref.cursor)).kind != CXType_Int) return false;
  const variable* v = variable_for(clang_.clang_getCursorReferenced(ref.cursor));
  return v && v->recomputed && in_coordinates(ref) == variation::affine && term_of_int_sum(ref);
}

// Whether an expression is a term of an unsigned 32-bit sum whose other
// term the block shares and which the program converts to int at once
// (`int i = ...`).
bool translation_unit_splitter::term_of_int_sum(const node& written) {
  const node* term = &written;
  const node* sum = written.parent;
  while (sum && (sum->kind == CXCursor_UnexposedExpr || sum->kind == CXCursor_ParenExpr)) term = sum, sum = sum->parent;
  if (!sum || sum->kind != CXCursor_BinaryOperator || sum->children.size() != 2) return false;
  if (trimmed(text(sum->children[0]->end, sum->children[1]->begin)) != "+") return false;
  const node& other = *(sum->children[0].get() == term ? sum->children[1] : sum->children[0]);
  const auto kind = [&](const node& n) { return clang_.clang_getCanonicalType(clang_.clang_getCursorType(n.cursor)).kind; };
  if (kind(*sum) != CXType_UInt || (kind(other) != CXType_UInt && kind(other) != CXType_Int)) return false;
  const node* use = sum->parent;
  while (use && use->kind == CXCursor_ParenExpr) use = use->parent;
  return use && use->kind == CXCursor_UnexposedExpr && kind(*use) == CXType_Int && uniform(other);
}

}  // namespace lockstep::emu::region_loops::compiler
