// Synchronisation (analysis): which calls are barriers, which functions may
// wait for other threads (directly or through what they call), and which
// warp-level operations a function uses that the loops cannot run.
#include "compiler.h"

namespace lockstep::emu::region_loops::compiler {

// What LOCKSTEP_WAITS (lockstep/emu/waits.h) says `function` waits for
// ("barrier", "group", "block", "warp", "grid", "yield"), "" where it says
// nothing: read on the declaration a call names, its definition, and the
// template a specialisation was made from.
std::string translation_unit_splitter::waits_annotation(CXCursor function) const {
  struct reading {
    const libclang_api* clang;
    std::string kind;
  } r{&clang_, {}};
  for (const CXCursor c : {function, clang_.clang_getCursorDefinition(function), clang_.clang_getSpecializedCursorTemplate(function)}) {
    if (clang_.clang_Cursor_isNull(c)) continue;
    clang_.clang_visitChildren(
        c,
        [](CXCursor child, CXCursor, CXClientData data) {
          auto* r = static_cast<reading*>(data);
          if (r->clang->clang_getCursorKind(child) != CXCursor_AnnotateAttr) return CXChildVisit_Continue;
          const std::string text = r->clang->string(r->clang->clang_getCursorSpelling(child));
          constexpr std::string_view prefix = "lockstep::waits::";
          if (!text.starts_with(prefix)) return CXChildVisit_Continue;
          r->kind = text.substr(prefix.size());
          return CXChildVisit_Break;
        },
        &r);
    if (!r.kind.empty()) break;
  }
  return r.kind;
}

// A barrier of the block: what waits.h marks one (__syncthreads(),
// thread_block::sync()), or a group's sync given the block
// (cooperative_groups::sync(block)).
bool translation_unit_splitter::is_barrier_call(const node& n) const {
  if (n.kind != CXCursor_CallExpr) return false;
  const CXCursor callee = clang_.clang_getCursorReferenced(n.cursor);
  if (clang_.clang_Cursor_isNull(callee)) return false;
  const std::string waits = waits_annotation(callee);
  if (waits == "barrier") return true;
  if (waits != "group" || n.children.size() != 2) return false;
  const std::string group =
      clang_.string(clang_.clang_getTypeSpelling(clang_.clang_getCanonicalType(clang_.clang_getCursorType(n.children[1]->cursor))));
  return group == "cooperative_groups::thread_block" || group == "const cooperative_groups::thread_block";
}

// Whether calling `function` may wait for other threads: a barrier, a warp
// collective, a grid sync or a yield, directly or through what it calls.
bool translation_unit_splitter::may_synchronize(CXCursor function, int depth) {
  if (clang_.clang_Cursor_isNull(function)) return false;
  if (!waits_annotation(function).empty()) return true;
  // What waits outside lockstep and the program: the C library's and the
  // standard library's yields and sleeps, which the loops cannot interleave.
  static const std::set<std::string> foreign_waits{"sched_yield", "nanosleep", "usleep", "std::this_thread::yield"};
  if (foreign_waits.count(qualified_name(function))) return true;
  const std::string usr = clang_.string(clang_.clang_getCursorUSR(function));
  if (auto it = synchronizes_.find(usr); it != synchronizes_.end()) return it->second;
  synchronizes_[usr] = false;  // a recursion's answer comes from the rest of the body
  const CXCursor definition = clang_.clang_getCursorDefinition(function);
  if (clang_.clang_Cursor_isNull(definition) || depth > 24) return false;
  const CXSourceLocation at = clang_.clang_getCursorLocation(definition);
  // lockstep's device headers (lockstep/emu/) say on each declaration what
  // waits (tests/python/test_waits_annotations.py holds them to it): one
  // without the annotation does not. Its other headers (python_kernels.h)
  // are followed. (In a preprocessed source, lockstep's headers are named by
  // its line markers.)
  const std::string file = presumed(at).first;
  if (file.find("/lockstep/emu/") != std::string::npos) return false;
  // A library's own waits (libcu++'s cuda::barrier, cuda::pipeline) spin
  // through code not followed here: known by their names, as CUDA's are.
  if ((!in_main_file(at) || clang_.clang_Location_isInSystemHeader(at)) && waits_by_name(clang_.string(clang_.clang_getCursorSpelling(function))))
    return synchronizes_[usr] = true;
  // Followed everywhere but in system headers: a kernel that looks free of
  // barriers runs as one loop, so one hidden in a header must be seen.
  // (lockstep's own headers may be system headers to a program's build.)
  if (clang_.clang_Location_isInSystemHeader(at) && file.find("/lockstep/") == std::string::npos) return false;
  const bool result = body_may_synchronize(definition, depth + 1);
  synchronizes_[usr] = result;
  return result;
}

bool translation_unit_splitter::body_may_synchronize(CXCursor c, int depth) {
  struct search {
    translation_unit_splitter* self;
    int depth;
    bool found = false;
  } s{this, depth};
  clang_.clang_visitChildren(
      c,
      [](CXCursor child, CXCursor, CXClientData data) {
        auto* s = static_cast<search*>(data);
        const CXCursorKind k = s->self->clang_.clang_getCursorKind(child);
        if (k == CXCursor_CallExpr && s->self->may_synchronize(s->self->clang_.clang_getCursorReferenced(child), s->depth)) {
          s->found = true;
          return CXChildVisit_Break;
        }
        // A call in a template that resolves to nothing yet: each function
        // its name may mean, and CUDA's warp-level operations by name.
        if (k == CXCursor_OverloadedDeclRef)
          for (unsigned i = 0; i < s->self->clang_.clang_getNumOverloadedDecls(child); ++i)
            if (s->self->may_synchronize(s->self->clang_.clang_getOverloadedDecl(child, i), s->depth)) {
              s->found = true;
              return CXChildVisit_Break;
            }
        if ((k == CXCursor_CallExpr || k == CXCursor_MemberRefExpr || k == CXCursor_OverloadedDeclRef || k == CXCursor_DeclRefExpr) &&
            warp_level_name(s->self->clang_.string(s->self->clang_.clang_getCursorSpelling(child)))) {
          s->found = true;
          return CXChildVisit_Break;
        }
        return CXChildVisit_Recurse;
      },
      &s);
  return s.found;
}

// A call in a template whose callee is not resolved yet: each function the
// name may mean; a dependent operator never waits; a dependent member call
// (`tile.shfl_down(v, 1)`) by its name, as CUDA's collectives are named.
bool translation_unit_splitter::unresolved_call_may_synchronize(const node& call) {
  const node* callee = callee_expression(call);
  std::string name = clang_.string(clang_.clang_getCursorSpelling(call.cursor));
  if (name.empty() && callee && callee->kind == CXCursor_MemberRefExpr) name = member_name(*callee);  // `tile.shfl_down(v, 1)`
  if (name.rfind("operator", 0) == 0) return false;
  if (waits_by_name(name)) return true;
  if (!callee || callee->kind == CXCursor_TypeRef) return false;  // T(x): a conversion
  if (callee->kind == CXCursor_OverloadedDeclRef) {
    for (const CXCursor& candidate : candidates_of(*callee)) {
      if (clang_.clang_getCursorKind(candidate) == CXCursor_UsingDeclaration) return true;
      if (may_synchronize(candidate)) return true;
    }
    return false;
  }
  return waits_by_name(name);
}

bool translation_unit_splitter::waits_by_name(const std::string& name) {
  static const std::set<std::string> collectives{"ballot",
                                                 "any",
                                                 "all",
                                                 "shfl",
                                                 "shfl_up",
                                                 "shfl_down",
                                                 "shfl_xor",
                                                 "reduce",
                                                 "inclusive_scan",
                                                 "exclusive_scan",
                                                 "match_any",
                                                 "match_all",
                                                 "wait",
                                                 "wait_prior",
                                                 "arrive",
                                                 "arrive_and_wait",
                                                 "arrive_and_drop",
                                                 "barrier_wait",
                                                 "barrier_arrive",
                                                 "try_wait",
                                                 "try_wait_parity",
                                                 "wait_parity",
                                                 "producer_acquire",
                                                 "consumer_wait",
                                                 "acquire",
                                                 "try_acquire",
                                                 "count_down"};
  return name.find("sync") != std::string::npos || name.rfind("__shfl", 0) == 0 || collectives.count(name) > 0;
}

// The names of CUDA's warp-level operations (intrinsics and cooperative
// groups' collectives), which only some calls of the loops run: a function
// that names one otherwise stays on fibers, however the call is written (a
// template's calls resolve to nothing until it is instantiated). Making a
// tile (thread_block_tile, tiled_partition) waits for nothing.
bool translation_unit_splitter::warp_level_name(std::string_view name) {
  static const std::set<std::string_view> names{"__activemask",      "__syncwarp",
                                                "__any_sync",        "__all_sync",
                                                "__uni_sync",        "shfl",
                                                "shfl_up",           "shfl_down",
                                                "shfl_xor",          "ballot",
                                                "match_any",         "match_all",
                                                "load_matrix_sync",  "store_matrix_sync",
                                                "mma_sync",          "coalesced_threads",
                                                "labeled_partition", "binary_partition",
                                                "this_grid",         "grid_group",
                                                "memcpy_async",      "inclusive_scan",
                                                "exclusive_scan"};
  return name.starts_with("__shfl") || name.starts_with("__ballot") || name.starts_with("__match_") || name.starts_with("__reduce_") ||
         names.count(name) > 0;
}

// Whether the identifier at token i is called, instantiated, qualified or a
// member (`tile.ballot(p)`, `wmma::`), not a variable of the same name.
bool translation_unit_splitter::names_an_operation(std::size_t i) const {
  const bool after = i > 0 && (tokens_[i - 1].is(".") || tokens_[i - 1].is("->") || tokens_[i - 1].is("::"));
  const bool before = i + 1 < tokens_.size() && (tokens_[i + 1].is("(") || tokens_[i + 1].is("<") || tokens_[i + 1].is("::"));
  return after || before;
}

void translation_unit_splitter::decline_warp_level(const node& function) const {
  // Groups' collectives where a collective step replays them.
  std::vector<std::pair<std::size_t, std::size_t>> replayed;
  std::function<void(const node&)> find = [&](const node& n) {
    if (replayed_call(n)) replayed.emplace_back(n.begin, n.end);
    for (const auto& c : n.children) find(*c);
  };
  find(function);
  auto in_replayed = [&](std::size_t at) {
    return std::any_of(replayed.begin(), replayed.end(), [&](const auto& r) { return at >= r.first && at < r.second; });
  };
  for (std::size_t i = token_at(function.begin); i < tokens_.size() && tokens_[i].offset < function.end; ++i)
    if (tokens_[i].is(toolchain::token_kind::identifier) && warp_level_name(tokens_[i].text) && !gathered_intrinsic(tokens_[i].text) &&
        !in_replayed(tokens_[i].offset) && names_an_operation(i))
      throw declined{"it uses " + std::string(tokens_[i].text) + " (line " + std::to_string(tokens_[i].line) +
                     " of the source): warp-level operations run on fibers"};
}

// One of gathered_intrinsics (region_loops.h), which a collective step runs.
bool translation_unit_splitter::gathered_intrinsic(std::string_view name) {
  return std::find(std::begin(gathered_intrinsics), std::end(gathered_intrinsics), name) != std::end(gathered_intrinsics);
}

// Whether a function is lockstep's own (its emulator's headers), not the program's of the same name.
bool translation_unit_splitter::lockstep_own(CXCursor function) const {
  return !clang_.clang_Cursor_isNull(function) &&
         presumed(clang_.clang_getCursorLocation(function)).first.find("/lockstep/emu/") != std::string::npos;
}

// Whether every wait in a statement is a warp collective a collective step can run.
bool translation_unit_splitter::waits_only_in_warps(const node& s) {
  if (const std::vector<const node*> calls = gathered_collectives(s); !calls.empty())
    return std::none_of(calls.begin(), calls.end(), [&](const node* c) { return block_lanes_call(*c) || !block_vote(*c).empty(); });
  if (s.kind == CXCursor_CompoundStmt || s.kind == CXCursor_IfStmt || is_loop(s.kind) || attributed_loop(s)) {
    bool any = false;
    for (const auto& c : s.children) {
      if (!contains_synchronization(*c)) continue;
      if (!waits_only_in_warps(*c)) return false;
      any = true;
    }
    return any;
  }
  return false;
}

bool translation_unit_splitter::contains_synchronization(const node& n) {
  if (n.kind == CXCursor_CallExpr) {
    const CXCursor callee = clang_.clang_getCursorReferenced(n.cursor);
    if (is_barrier_call(n)) return true;
    if (clang_.clang_Cursor_isNull(callee) ? unresolved_call_may_synchronize(n) : may_synchronize(callee)) return true;
  }
  for (const auto& c : n.children)
    if (contains_synchronization(*c)) return true;
  return false;
}

}  // namespace lockstep::emu::region_loops::compiler
