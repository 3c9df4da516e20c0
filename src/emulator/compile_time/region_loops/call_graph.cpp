// The call graph (analysis): the functions of the main file, the kernels and
// what they call, the block and lanes variants already made, and which
// functions may read the thread's record.
#include "compiler.h"

namespace lockstep::emu::region_loops::compiler {

// Every function defined in the main file outside system headers (a
// preprocessed source holds all its headers): kernels and device functions.
void translation_unit_splitter::collect_functions(CXCursor parent) {
  clang_.clang_visitChildren(
      parent,
      [](CXCursor c, CXCursor, CXClientData data) {
        auto* self = static_cast<translation_unit_splitter*>(data);
        const CXCursorKind kind = self->clang_.clang_getCursorKind(c);
        if (kind == CXCursor_Namespace || kind == CXCursor_LinkageSpec || kind == CXCursor_UnexposedDecl) return CXChildVisit_Recurse;
        if (kind == CXCursor_FunctionDecl)
          if (const CXCursor pattern = self->clang_.clang_getSpecializedCursorTemplate(c); !self->clang_.clang_Cursor_isNull(pattern))
            self->specialized_.insert(self->clang_.string(self->clang_.clang_getCursorUSR(pattern)));
        if ((kind == CXCursor_FunctionDecl || kind == CXCursor_FunctionTemplate) && self->clang_.clang_isCursorDefinition(c) &&
            self->in_main_file(self->clang_.clang_getCursorLocation(c)) &&
            !self->clang_.clang_Location_isInSystemHeader(self->clang_.clang_getCursorLocation(c)))
          self->functions_.push_back(c);
        return CXChildVisit_Continue;
      },
      this);
}

// The kernels and the collected functions they call, directly or not: in a
// preprocessed source nothing else tells device functions from the host's.
std::vector<CXCursor> translation_unit_splitter::called_from_kernels() {
  std::map<std::string, CXCursor> by_usr;
  for (const CXCursor& f : functions_) by_usr.emplace(clang_.string(clang_.clang_getCursorUSR(f)), f);
  for (const auto& [usr, f] : by_usr) collected_.insert(usr);
  std::set<std::string> reached;
  std::vector<CXCursor> work;
  for (const CXCursor& f : functions_)
    if (is_kernel(f) && reached.insert(clang_.string(clang_.clang_getCursorUSR(f))).second) work.push_back(f);
  struct search {
    translation_unit_splitter* self;
    std::map<std::string, CXCursor>* by_usr;
    std::set<std::string>* reached;
    std::vector<CXCursor>* work;
  };
  for (std::size_t i = 0; i < work.size(); ++i) {
    search s{this, &by_usr, &reached, &work};
    clang_.clang_visitChildren(
        work[i],
        [](CXCursor child, CXCursor, CXClientData data) {
          auto* s = static_cast<search*>(data);
          const auto& clang = s->self->clang_;
          const CXCursorKind k = clang.clang_getCursorKind(child);
          if (k == CXCursor_DeclRefExpr || k == CXCursor_OverloadedDeclRef || k == CXCursor_MemberRefExpr || k == CXCursor_CallExpr) {
            std::vector<CXCursor> targets{clang.clang_getCursorReferenced(child)};
            if (k == CXCursor_OverloadedDeclRef)
              for (unsigned j = 0; j < clang.clang_getNumOverloadedDecls(child); ++j) targets.push_back(clang.clang_getOverloadedDecl(child, j));
            for (CXCursor target : targets) {
              if (clang.clang_Cursor_isNull(target)) continue;
              const CXCursor pattern = clang.clang_getSpecializedCursorTemplate(target);
              if (!clang.clang_Cursor_isNull(pattern)) target = pattern;
              const std::string usr = clang.string(clang.clang_getCursorUSR(target));
              if (auto it = s->by_usr->find(usr); it != s->by_usr->end() && s->reached->insert(usr).second) s->work->push_back(it->second);
            }
          }
          return CXChildVisit_Recurse;
        },
        &s);
  }
  std::vector<CXCursor> out;
  for (const CXCursor& f : functions_)
    if (reached.count(clang_.string(clang_.clang_getCursorUSR(f)))) out.push_back(f);
  return out;
}

// `__global__` as written, or as lockstep's keyword rewrite leaves it.
bool translation_unit_splitter::is_kernel(CXCursor function) const {
  const CXSourceRange range = clang_.clang_getCursorExtent(function);
  const std::size_t begin = offset_of(clang_.clang_getRangeStart(range)), name = offset_of(clang_.clang_getCursorLocation(function));
  if (name < begin || name > text_.size()) return false;
  const std::string_view head = text(begin, name);
  return head.find("__global__") != std::string_view::npos || head.find("__attribute__((used))") != std::string_view::npos;
}

// A call of a value-returning device function whose lanes variant each
// calling lane's arguments and answer go through (split_function_once);
// a function of this file not tried yet is tried first.
bool translation_unit_splitter::lanes_call(const node& n) {
  if (n.kind != CXCursor_CallExpr) return false;
  const std::vector<CXCursor> candidates = callees(n);
  for (const CXCursor& c : candidates)
    if (const std::string usr = variant_usr(c); !attempted_.count(usr) && collected_.count(usr)) throw postpone{};
  return !candidates.empty() &&
         std::all_of(candidates.begin(), candidates.end(), [&](const CXCursor& c) { return lanes_variants_.count(variant_usr(c)) != 0; });
}

// One whose function waits at a block barrier too: only where one may stand.
bool translation_unit_splitter::block_lanes_call(const node& n) {
  const std::vector<CXCursor> candidates = callees(n);
  return lanes_call(n) &&
         std::any_of(candidates.begin(), candidates.end(), [&](const CXCursor& c) { return block_lanes_variants_.count(variant_usr(c)) != 0; });
}

// A statement that calls a function without barriers that has a block
// variant (its loops interchanged), with arguments every thread passes
// alike: the block calls the variant once, as it does one with barriers.
bool translation_unit_splitter::loop_call(const node& statement) {
  return interchange_ && !kept_in_regions_.count(statement.begin) && block_call(statement, true);
}

// A statement that is a call of a function of this file with barriers,
// which the block then calls once, as its block variant: the call node.
// The USR a function's block variant is known by: its template's, for an instance.
std::string translation_unit_splitter::variant_usr(CXCursor function) const {
  CXCursor definition = clang_.clang_getCursorDefinition(function);
  if (clang_.clang_Cursor_isNull(definition)) definition = function;
  const CXCursor pattern = clang_.clang_getSpecializedCursorTemplate(definition);
  return clang_.string(clang_.clang_getCursorUSR(clang_.clang_Cursor_isNull(pattern) ? definition : pattern));
}

const node* translation_unit_splitter::block_call(const node& statement, bool without_barriers) {
  const node* call = &statement;
  while (call->kind == CXCursor_UnexposedExpr && call->children.size() == 1) call = call->children.front().get();
  if (call->kind != CXCursor_CallExpr) return nullptr;
  const std::vector<CXCursor> candidates = callees(*call);
  if (candidates.empty()) return nullptr;
  for (const CXCursor& candidate : candidates) {
    const std::string usr = variant_usr(candidate);
    if (!variants_.count(usr) && !attempted_.count(usr) && collected_.count(usr) && (!without_barriers || postpone_loop_calls_)) throw postpone{};
    if (!variants_.count(usr) || loop_variants_.count(usr) != without_barriers) return nullptr;
  }
  return call;
}

// Whether code of a region may read the thread's record (threadIdx through
// a device function, printf, an assert): a call, other than the thread
// coordinates the region reads from its loop, to a function that may.
bool translation_unit_splitter::region_reads_record(const node& n) {
  if (answered_.count(&n)) {  // only its arguments, as the answer reads none
    const std::vector<const node*> arguments = arguments_of(n);
    return std::any_of(arguments.begin(), arguments.end(), [&](const node* a) { return region_reads_record(*a); });
  }
  if (n.kind == CXCursor_OverloadedDeclRef) return true;  // a call not resolved yet
  if (n.kind == CXCursor_CallExpr) {
    const auto edit = edits_.find(n.begin);
    const bool from_loop = edit != edits_.end() && edit->second.first >= n.end && edit->second.second.starts_with("__ls_block.");
    if (!from_loop && reads_record(clang_.clang_getCursorReferenced(n.cursor))) return true;
  }
  for (const auto& c : n.children)
    if (region_reads_record(*c)) return true;
  return false;
}

// block_idx_too: whether it may read blockIdx either (which a call running
// several blocks along x as one does not keep, loop_claim).
bool translation_unit_splitter::reads_record(CXCursor function, int depth, bool block_idx_too) {
  if (clang_.clang_Cursor_isNull(function)) return true;  // through a pointer
  const CXCursorKind kind = clang_.clang_getCursorKind(function);
  if (kind != CXCursor_FunctionDecl && kind != CXCursor_CXXMethod && kind != CXCursor_FunctionTemplate && kind != CXCursor_Constructor &&
      kind != CXCursor_ConversionFunction)
    return true;
  const std::string name = qualified_name(function);
  if (name == "lockstep::emu::builtin_thread_idx") return true;
  if (name == "lockstep::emu::builtin_block_idx") return block_idx_too;
  if (name == "lockstep::emu::builtin_block_dim" || name == "lockstep::emu::builtin_grid_dim") return false;  // the block's, unchanged by its loops
  const std::string usr = clang_.string(clang_.clang_getCursorUSR(function));
  auto& known = block_idx_too ? reads_record_or_block_ : reads_record_;
  if (auto it = known.find(usr); it != known.end()) return it->second;
  known[usr] = false;  // a recursion's answer comes from the rest of the body
  const CXCursor definition = clang_.clang_getCursorDefinition(function);
  const CXSourceLocation at = clang_.clang_getCursorLocation(clang_.clang_Cursor_isNull(definition) ? function : definition);
  // The C and C++ libraries know nothing of threads; lockstep's own
  // headers may be system headers to a program's build.
  bool result = false;
  if (clang_.clang_Location_isInSystemHeader(at) && presumed(at).first.find("/lockstep/") == std::string::npos)
    result = false;
  else if (clang_.clang_Cursor_isNull(definition) || depth > 24)
    result = true;  // defined elsewhere: lockstep's runtime, another file
  else
    result = body_reads_record(definition, depth + 1, block_idx_too);
  return known[usr] = result;
}

bool translation_unit_splitter::body_reads_record(CXCursor c, int depth, bool block_idx_too) {
  struct search {
    translation_unit_splitter* self;
    int depth;
    bool block_idx_too;
    bool found = false;
  } s{this, depth, block_idx_too};
  clang_.clang_visitChildren(
      c,
      [](CXCursor child, CXCursor, CXClientData data) {
        auto* s = static_cast<search*>(data);
        const auto& clang = s->self->clang_;
        const CXCursorKind k = clang.clang_getCursorKind(child);
        const CXCursor target = clang.clang_getCursorReferenced(child);
        // A name a template's call may mean: each function it names.
        bool overloads_read = false;
        if (k == CXCursor_OverloadedDeclRef)
          for (unsigned i = 0; i < clang.clang_getNumOverloadedDecls(child) && !overloads_read; ++i)
            overloads_read = s->self->reads_record(clang.clang_getOverloadedDecl(child, i), s->depth, s->block_idx_too);
        const bool reads = overloads_read || (k == CXCursor_CallExpr && s->self->reads_record(target, s->depth, s->block_idx_too)) ||
                           (k == CXCursor_DeclRefExpr && clang.clang_getCursorKind(target) == CXCursor_VarDecl &&
                            s->self->qualified_name(target) == "lockstep::emu::current");
        if (!reads) return CXChildVisit_Recurse;
        s->found = true;
        return CXChildVisit_Break;
      },
      &s);
  return s.found;
}

// A value-returning device function that waits (a warp sum, a block
// reduction) gets a lanes variant, `name__ls_lanes`: the block calls it
// once, with each calling lane's arguments and a flag for the lanes that
// call; it runs the body for those lanes and leaves each one's answer
// (loop_lanes_call, lockstep/emu/region_loops.h; a caller's collective
// step, lanes_call). Lanes that do not call are exited from its start.
// One that waits at a block barrier is called only where a barrier may
// stand (lanes_block_).
void translation_unit_splitter::decide_lanes_variant(CXCursor function_cursor, const node& function, const node& body, bool kernel) {
  const std::string result = result_type(function_cursor);
  lanes_ = !kernel && result != "void";
  lanes_block_ = false;
  if (lanes_) {
    const CXCursorKind kind = clang_.clang_getCursorKind(function_cursor);
    if (kind != CXCursor_FunctionDecl && kind != CXCursor_FunctionTemplate)
      throw declined{"a member function that returns a value and waits (free functions and their templates are called for the calling lanes)"};
    if (result.find('&') != std::string::npos || result.find("auto") != std::string::npos || unnamed_type(result))
      throw declined{"it waits and returns " + result + ", which the lanes' results cannot be kept as"};
    for (const node* parameter : parameters_of(function)) {
      const std::string type = clang_.string(clang_.clang_getTypeSpelling(clang_.clang_getCursorType(parameter->cursor)));
      if (type.find('&') != std::string::npos || unnamed_type(type)) throw declined{"a parameter (" + type + ") that is not a value"};
      if (clang_.string(clang_.clang_getCursorSpelling(parameter->cursor)).empty()) throw declined{"a parameter without a name"};
    }
    lanes_block_ = !waits_only_in_warps(body);
  }
}

}  // namespace lockstep::emu::region_loops::compiler
