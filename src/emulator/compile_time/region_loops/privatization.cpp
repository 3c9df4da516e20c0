// Privatisation (analysis): the values each thread keeps across a barrier:
// locals computed again in each region, those kept in per-thread arrays, and
// which of those live in a register copy while a region runs.
#include "compiler.h"

namespace lockstep::emu::region_loops::compiler {

// The bytes each thread's arrays take on the loop stack: per-thread variables, masks, exit flags.
unsigned translation_unit_splitter::bytes_per_thread(const sequence& top) const {
  long long bytes = exit_flags_ ? 1 : 0;
  for (const auto& [key, v] : variables_)
    if (v.per_thread) bytes += clang_.clang_Type_getSizeOf(clang_.clang_getCursorType(v.decl));
  std::function<void(const sequence&)> masks = [&](const sequence& seq) {
    for (const step& st : seq.steps) {
      bytes += st.k == step::kind::masked;
      if (st.body) masks(*st.body);
      if (st.otherwise) masks(*st.otherwise);
    }
  };
  masks(top);
  return unsigned(bytes);
}

// Locals that each region can compute again from the thread's coordinates
// (`int row = blockIdx.y * 16 + threadIdx.y;`): never changed, no address
// taken, initialised without reading memory, from uniform values that do
// not change between the declaration and its uses. Computed again in every
// region that reads them, they take no per-thread array, and an index built
// from them stays one the host compiler sees is linear in the thread, so it
// can vectorise the region's loop.
void translation_unit_splitter::decide_recomputed() {
  for (auto& [key, v] : variables_)
    v.recomputed = v.closure || (!v.uniform && !v.static_storage && !v.parameter && v.sequence_level && v.declared_region >= 0 && v.initializer &&
                                 std::none_of(v.refs.begin(), v.refs.end(), [](const reference& r) { return r.write; }) && can_live_in_register(v) &&
                                 !is_array(v) && !unnamed_type(type_of(v)));
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& [key, v] : variables_)
      if (v.recomputed && !v.closure && !(uniform(*v.initializer, true) && inputs_stay(*v.initializer, *v.declaration))) {
        v.recomputed = false;
        changed = true;
      }
  }
}

// Whether the uniform variables an initializer reads keep their values
// from the declaration on: changed nowhere, or only by the header of a
// for loop around the declaration (its loop variable), never between the
// regions of one iteration.
bool translation_unit_splitter::inputs_stay(const node& n, const node& declaration) {
  if (n.kind == CXCursor_DeclRefExpr)
    if (const variable* u = variable_for(clang_.clang_getCursorReferenced(n.cursor)))
      for (const reference& r : u->refs)
        if (r.write && std::none_of(loops_.begin(), loops_.end(), [&](const node* loop) {
              return loop->kind == CXCursor_ForStmt && declaration.begin > loop->children.back()->begin && declaration.end <= loop->end &&
                     r.ref->begin >= loop->begin && r.ref->end <= loop->children.back()->begin;
            }))
          return false;
  for (const auto& c : n.children)
    if (!inputs_stay(*c, declaration)) return false;
  return true;
}

// Whether a per-thread variable can live in a local copy while a region
// runs: a scalar or pointer whose address is never taken (a pointer to
// the copy would outlive the region) and that no lambda captures, or an
// array of scalars read and written only element by element (a register
// tile, `float acc[8][8]`: in the copy the host compiler keeps its
// elements in registers through the product's unrolled loops, as on
// fibers; in the block's arrays they would be memory that the kernel's
// own float pointers may alias).
bool translation_unit_splitter::can_live_in_register(const variable& v) const {
  if (is_array(v)) return elements_only(v);
  switch (clang_.clang_getCanonicalType(clang_.clang_getCursorType(v.decl)).kind) {
    case CXType_Bool:
    case CXType_Char_U:
    case CXType_UChar:
    case CXType_UShort:
    case CXType_UInt:
    case CXType_ULong:
    case CXType_ULongLong:
    case CXType_Char_S:
    case CXType_SChar:
    case CXType_Short:
    case CXType_Int:
    case CXType_Long:
    case CXType_LongLong:
    case CXType_Float:
    case CXType_Double:
    case CXType_Pointer:
    case CXType_Enum:
      break;
    default:
      return false;
  }
  return std::none_of(v.refs.begin(), v.refs.end(), [&](const reference& r) {
    const node* p = r.ref->parent;
    while (p && p->kind == CXCursor_ParenExpr) p = p->parent;
    return r.in_lambda || (p && p->kind == CXCursor_UnaryOperator && text(p->begin, r.ref->begin).starts_with("&"));
  });
}

bool translation_unit_splitter::array_of_records(const variable& v) const {
  CXType element = clang_.clang_getCanonicalType(clang_.clang_getCursorType(v.decl));
  while (element.kind == CXType_ConstantArray) element = clang_.clang_getCanonicalType(clang_.clang_getArrayElementType(element));
  return element.kind == CXType_Record;
}

bool translation_unit_splitter::is_array(const variable& v) const {
  return clang_.clang_getCanonicalType(clang_.clang_getCursorType(v.decl)).kind == CXType_ConstantArray;
}

// An array of scalars (of any rank) that every reference subscripts down
// to an element whose address is not taken, or hands whole to a call (a
// reference parameter, alive only during the call); no lambda captures it.
bool translation_unit_splitter::elements_only(const variable& v) const {
  CXType element = clang_.clang_getCanonicalType(clang_.clang_getCursorType(v.decl));
  while (element.kind == CXType_ConstantArray) element = clang_.clang_getCanonicalType(clang_.clang_getArrayElementType(element));
  if (!(element.kind >= CXType_Bool && element.kind <= CXType_LongDouble)) return false;
  const auto up = [](const node* n) {
    const node* p = n->parent;
    while (p && (p->kind == CXCursor_ParenExpr || p->kind == CXCursor_UnexposedExpr)) p = p->parent;
    return p;
  };
  return std::all_of(v.refs.begin(), v.refs.end(), [&](const reference& r) {
    if (r.in_lambda) return false;
    const node* at = r.ref;
    const node* p = up(at);
    if (p && p->kind == CXCursor_CallExpr) return true;
    for (; p && p->kind == CXCursor_ArraySubscriptExpr && !p->children.empty() && p->children.front()->begin == at->begin; p = up(at)) at = p;
    if (at == r.ref || clang_.clang_getCanonicalType(clang_.clang_getCursorType(at->cursor)).kind == CXType_ConstantArray) return false;
    return !(p && p->kind == CXCursor_UnaryOperator && text(p->begin, at->begin).starts_with("&"));
  });
}

// Per-thread variables: a thread's values that a later region reads.
void translation_unit_splitter::decide_per_thread() {
  int next_index = 0;
  for (auto& [key, v] : variables_) {
    if (v.uniform || v.static_storage || v.recomputed) continue;
    // A local reached through another name (a pointer, a reference, a
    // view, a lambda) across a barrier keeps one address for its life.
    const bool aliased = !v.parameter && scope_spans_regions(v) && storage_escapes(v);
    const bool crosses = aliased || std::any_of(v.refs.begin(), v.refs.end(), [&](const reference& r) { return r.region != v.declared_region; });
    const bool written = std::any_of(v.refs.begin(), v.refs.end(), [](const reference& r) { return r.write; });
    if (v.parameter ? !(written || lanes_) || v.refs.empty() : !(v.sequence_level && crosses)) continue;
    const std::string type = type_of(v);
    if (type.find('&') != std::string::npos || unnamed_type(type) || type.find("auto") != std::string::npos)
      throw declined{"'" + v.name + "' (" + type + ") keeps its value across a barrier and cannot be kept per thread"};
    const long long bytes = clang_.clang_Type_getSizeOf(clang_.clang_getCursorType(v.decl));
    if (bytes > max_per_thread_bytes)
      throw declined{"'" + v.name + "' (" + std::to_string(bytes / 1024) + " KiB) keeps its value across a barrier: more than " +
                     std::to_string(max_per_thread_bytes / 1024) + " KiB a thread is left to the fibers' stacks"};
    v.per_thread = true;
    // A small array stays in the block's arrays, where the threads' loop
    // vectorises across threads (register_1d's 8 accumulators a thread,
    // consecutive threads on consecutive columns); a register tile lives
    // in a copy, and vectorises within its thread.
    v.in_register = !aliased && (is_array(v) ? bytes > max_per_thread_array_bytes && can_live_in_register(v) : can_live_in_register(v));
    // (An array of objects, wmma's fragments, stays in the block's arrays:
    // its warp reads each lane's there.)
    if (is_array(v) && bytes > max_per_thread_array_bytes && !v.in_register && !array_of_records(v))
      throw declined{"'" + v.name + "' (" + std::to_string(bytes) +
                     " bytes) is an array each thread keeps across a barrier and reaches other than by its elements: in the block's "
                     "arrays its elements would stay memory, faster on fibers"};
    v.index = next_index++;
  }
}

}  // namespace lockstep::emu::region_loops::compiler
