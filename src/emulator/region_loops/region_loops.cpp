#include "region_loops.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "libclang.h"
#include "toolchain/lexer.h"

namespace lockstep::emu::region_loops {
namespace {

// A cursor of the kernel's body with its children, and its characters in the
// main file (expansion locations: a macro's output counts as the macro's use).
struct node {
  CXCursor cursor;
  CXCursorKind kind;
  std::size_t begin = 0, end = 0;
  node* parent = nullptr;
  std::vector<std::unique_ptr<node>> children;
};

// Characters [begin, end) of the translation unit replaced by `text`.
struct source_edit {
  std::size_t begin, end;
  std::string text;
};

// Why a kernel stays on fibers; thrown inside the analysis of one kernel.
struct declined {
  std::string why;
};
// The function calls one with barriers that has not been split yet.
struct postpone {};
// Updates tried as block steps that differ between threads (their offsets).
struct per_thread_updates {
  std::vector<std::size_t> statements;
};
// Loops tried as block-level loops whose headers differ between threads (their offsets).
struct per_thread_loops {
  std::vector<std::size_t> loops;
};
// Parameters of a lanes variant tried as values its callers pass alike
// (their keys): a barrier's condition reads them.
struct uniform_parameters_needed {
  std::vector<std::size_t> keys;
};

// Larger locals kept across a barrier stay on fibers: the arrays would take
// this much for every thread of the block.
constexpr long long max_per_thread_bytes = 16 * 1024;
// A thread's array larger than this kept across a barrier is a register
// tile: each region works on a copy of it (can_live_in_register), or, where
// an address of it may outlive a region, the kernel stays on fibers. Left
// in the block's per-thread arrays its elements are memory that the
// kernel's own pointers may alias (the register-tiled matmuls ran 1.3-3x
// slower so).
constexpr long long max_per_thread_array_bytes = 128;
// A loop with a register tile is unrolled whole up to this many steps.
constexpr int max_unrolled_steps = 16;

// A region's loop over the block's threads, thread x innermost, with __ls_t
// the linear index: a loop nest the host compiler sees the bounds of.
// `enter` also writes the thread's record, which a region must have where it
// calls code that reads the thread's coordinates from it (loop_block::enter).
// `row_only`: the loop over one row's threads (x), inside rows_loop().
const std::string rows_loop =
    "for (int __ls_z = 0; __ls_z < __ls_block.extent_z(); ++__ls_z) "
    "for (int __ls_y = 0; __ls_y < __ls_block.extent_y(); ++__ls_y) ";
// The linear index of the row's first thread.
const std::string row_start = "(__ls_z * __ls_block.extent_y() + __ls_y) * __ls_block.extent_x()";
// The loop over one row's threads, with no body yet.
const std::string row_threads = "for (int __ls_x = 0, __ls_t = " + row_start + "; __ls_x < __ls_block.extent_x(); ++__ls_x, ++__ls_t) ";
// An interchanged loop's row (step::kind::loop, row_level) runs its threads
// from __ls_x0: in chunks of row_chunk threads, __ls_k counting in the chunk,
// where the row is short, then the rest.
//
// In a chunk the loop's per-thread scalars live in local arrays of
// row_chunk elements (a vector register or two), across all of the loop's
// steps; over the row's own threads they are loaded and stored in each
// step, by a vector loop whose trip count the host compiler does not know.
// The tiled matmul with a tile size chosen at launch (16 threads a row) ran
// its product 6x faster so. A long row (blocks along x run as one) keeps
// the plain row: its steps stream through memory row by row, which chunks
// would walk column by column (the naive matmul ran 2-4x slower so).
constexpr int row_chunk = 16;
const std::string rest_of_row_threads =
    "for (int __ls_x = __ls_x0, __ls_t = " + row_start + " + __ls_x0; __ls_x < __ls_block.extent_x(); ++__ls_x, ++__ls_t) ";
// GCC would unroll a chunk's loop whole, and then not see that the
// threads' loads are consecutive; rolled, its loop vectoriser takes it (the
// product ran 6x slower unrolled). A #pragma line, not _Pragma: lockstep
// nvcc compiles the split source preprocessed.
const std::string chunk_threads = "\n#pragma GCC unroll 1\nfor (int __ls_x = __ls_x0, __ls_t = " + row_start + " + __ls_x0, __ls_k = 0; __ls_k < " +
                                  std::to_string(row_chunk) + "; ++__ls_x, ++__ls_t, ++__ls_k) ";
std::string thread_loop(std::string_view enter = "enter", bool row_only = false) {
  return (row_only ? "" : rows_loop) + row_threads + "{ __ls_block." + std::string(enter) + "(__ls_x, __ls_y, __ls_z, __ls_t);";
}
// A masked branch's array of each thread's condition; [__ls_t] its thread's.
std::string mask_array(int region) { return "__ls_mask_" + std::to_string(region); }

bool is_loop(CXCursorKind k) { return k == CXCursor_ForStmt || k == CXCursor_WhileStmt || k == CXCursor_DoStmt; }

class translation_unit_splitter {
 public:
  translation_unit_splitter(const libclang_api& clang, const std::string& text, CXTranslationUnit tu)
      : clang_(clang),
        text_(text),
        tu_(tu),
        translation_unit_kind_(clang.clang_getCursorKind(clang.clang_getTranslationUnitCursor(tu))),
        tokens_(toolchain::code_tokens(text)) {}

  void run(split_result& result) {
    collect_functions(clang_.clang_getTranslationUnitCursor(tu_));
    // Callees before callers: a device function with barriers gets a block
    // variant first, which a caller then calls once for the whole block.
    std::vector<source_edit> edits;
    std::vector<CXCursor> pending = called_from_kernels();
    for (bool progress = true; progress && !pending.empty();) {
      progress = false;
      std::vector<CXCursor> postponed;
      for (const CXCursor& function : pending) {
        const std::string name = clang_.string(clang_.clang_getCursorSpelling(function));
        const std::string usr = clang_.string(clang_.clang_getCursorUSR(function));
        try {
          // A variant of a template would stand for its explicit
          // specializations too (`warpReduceSum<int>` by __reduce_add_sync
          // beside the template's shuffles), and one of a specialization for
          // the template: both stay on fibers.
          if (specialized_.count(variant_usr(function))) throw declined{"a function template with explicit specializations"};
          std::vector<source_edit> function_edits = split_function(function);
          progress = true;
          attempted_.insert(usr);
          if (function_edits.empty()) continue;  // no barrier: a kernel runs as a bare loop already
          edits.insert(edits.end(), function_edits.begin(), function_edits.end());
          if (lanes_) {
            lanes_variants_.insert(variant_usr(function));
            if (lanes_block_) block_lanes_variants_.insert(variant_usr(function));
            continue;
          }
          variants_.insert(usr);
          if (!is_kernel(function) && !may_synchronize(function)) loop_variants_.insert(usr);
          if (is_kernel(function)) result.split.push_back(name);
          if (is_kernel(function) && along_x_) result.along_x.push_back(name);
        } catch (const postpone&) {
          postponed.push_back(function);
        } catch (const declined& d) {
          progress = true;
          attempted_.insert(usr);
          result.notes.push_back(std::string(is_kernel(function) ? "kernel " : "device function ") + name + " (" +
                                 where(clang_.clang_getCursorLocation(function)) + ") stays on fibers: " + d.why);
        }
      }
      pending = std::move(postponed);
      // Functions without barriers that call each other: their calls stay in regions.
      if (!progress && !pending.empty() && postpone_loop_calls_) {
        postpone_loop_calls_ = false;
        progress = true;
      }
    }
    for (const CXCursor& function : pending)
      result.notes.push_back("kernel or device function " + clang_.string(clang_.clang_getCursorSpelling(function)) + " (" +
                             where(clang_.clang_getCursorLocation(function)) + ") stays on fibers: it calls itself through functions with barriers");
    std::sort(edits.begin(), edits.end(), [](const source_edit& a, const source_edit& b) { return a.begin < b.begin; });
    std::string out;
    std::size_t at = 0;
    for (const source_edit& e : edits) {
      out.append(text_, at, e.begin - at);
      out += e.text;
      at = e.end;
    }
    out.append(text_, at, std::string::npos);
    result.source = std::move(out);
  }

 private:
  // ---- locations and text ----
  std::size_t offset_of(CXSourceLocation loc) const {
    CXFile file;
    unsigned line, column, offset;
    clang_.clang_getExpansionLocation(loc, &file, &line, &column, &offset);
    return offset;
  }
  bool in_main_file(CXSourceLocation loc) const { return clang_.clang_Location_isFromMainFile(loc) != 0; }
  // The file and line a location has for messages (after #line directives).
  std::pair<std::string, unsigned> presumed(CXSourceLocation loc) const {
    CXString file;
    unsigned line, column;
    clang_.clang_getPresumedLocation(loc, &file, &line, &column);
    return {clang_.string(file), line};
  }
  std::string where(CXSourceLocation loc) const {
    const auto [file, line] = presumed(loc);
    return file + ":" + std::to_string(line);
  }
  std::string line_directive(CXSourceLocation loc) const {
    const auto [name, line] = presumed(loc);
    std::string escaped;
    for (char c : name) {
      if (c == '\\' || c == '"') escaped += '\\';
      escaped += c;
    }
    // A line marker, which preprocessed sources (-x c++-cpp-output) accept and #line is not.
    return "\n# " + std::to_string(line) + " \"" + escaped + "\"\n";
  }
  std::string_view text(std::size_t begin, std::size_t end) const { return std::string_view(text_).substr(begin, end - begin); }
  std::string line_of(const node& n) const { return where(clang_.clang_getCursorLocation(n.cursor)); }

  // The first code token at or after `offset`.
  std::size_t token_at(std::size_t offset) const {
    auto it = std::lower_bound(tokens_.begin(), tokens_.end(), offset, [](const toolchain::token& t, std::size_t o) { return t.offset < o; });
    return std::size_t(it - tokens_.begin());
  }
  // A statement's end, with the `;` that an expression statement's extent leaves out.
  std::size_t statement_end(const node& n) const {
    const toolchain::token& next = tokens_[token_at(n.end)];
    return next.is(";") ? next.end_offset() : n.end;
  }

  // ---- the syntax tree ----
  std::unique_ptr<node> make_node(CXCursor c, node* parent) const {
    auto n = std::make_unique<node>();
    n->cursor = c;
    n->kind = clang_.clang_getCursorKind(c);
    n->parent = parent;
    const CXSourceRange range = clang_.clang_getCursorExtent(c);
    n->begin = offset_of(clang_.clang_getRangeStart(range));
    n->end = offset_of(clang_.clang_getRangeEnd(range));
    std::vector<CXCursor> children;
    clang_.clang_visitChildren(
        c,
        [](CXCursor child, CXCursor, CXClientData data) {
          static_cast<std::vector<CXCursor>*>(data)->push_back(child);
          return CXChildVisit_Continue;
        },
        &children);
    for (const CXCursor& child : children) n->children.push_back(make_node(child, n.get()));
    return n;
  }

  // Every function defined in the main file outside system headers (a
  // preprocessed source holds all its headers): kernels and device functions.
  void collect_functions(CXCursor parent) {
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
  std::vector<CXCursor> called_from_kernels() {
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
  bool is_kernel(CXCursor function) const {
    const CXSourceRange range = clang_.clang_getCursorExtent(function);
    const std::size_t begin = offset_of(clang_.clang_getRangeStart(range)), name = offset_of(clang_.clang_getCursorLocation(function));
    if (name < begin || name > text_.size()) return false;
    const std::string_view head = text(begin, name);
    return head.find("__global__") != std::string_view::npos || head.find("__attribute__((used))") != std::string_view::npos;
  }

  // ---- calls ----
  std::string qualified_name(CXCursor c) const {
    std::string name = clang_.string(clang_.clang_getCursorSpelling(c));
    for (CXCursor p = clang_.clang_getCursorSemanticParent(c); !clang_.clang_Cursor_isNull(p); p = clang_.clang_getCursorSemanticParent(p)) {
      const CXCursorKind k = clang_.clang_getCursorKind(p);
      if (k == translation_unit_kind_) break;
      name = clang_.string(clang_.clang_getCursorSpelling(p)) + "::" + name;
    }
    return name;
  }
  // __syncthreads(), or a cooperative-groups block's sync: block.sync(),
  // cg::sync(block), this_thread_block().sync().
  bool is_barrier_call(const node& n) const {
    if (n.kind != CXCursor_CallExpr) return false;
    const CXCursor callee = clang_.clang_getCursorReferenced(n.cursor);
    if (clang_.clang_Cursor_isNull(callee)) return false;
    const std::string name = qualified_name(callee);
    if (name == "__syncthreads" || name == "cooperative_groups::thread_block::sync") return true;
    if (name != "cooperative_groups::sync" || n.children.size() != 2) return false;
    const std::string group =
        clang_.string(clang_.clang_getTypeSpelling(clang_.clang_getCanonicalType(clang_.clang_getCursorType(n.children[1]->cursor))));
    return group == "cooperative_groups::thread_block" || group == "const cooperative_groups::thread_block";
  }
  // Whether calling `function` may wait for other threads: a barrier, a warp
  // collective, a grid sync or a yield, directly or through what it calls.
  bool may_synchronize(CXCursor function, int depth = 0) {
    if (clang_.clang_Cursor_isNull(function)) return false;
    const std::string name = qualified_name(function);
    static const std::set<std::string> primitives{"lockstep::emu::block_barrier",
                                                  "lockstep::emu::warp_collective",
                                                  "lockstep::emu::grid_sync",
                                                  "lockstep::emu::device_yield",
                                                  "sched_yield",
                                                  "nanosleep",
                                                  "usleep",
                                                  "std::this_thread::yield"};
    if (primitives.count(name)) return true;
    const std::string usr = clang_.string(clang_.clang_getCursorUSR(function));
    if (auto it = synchronizes_.find(usr); it != synchronizes_.end()) return it->second;
    synchronizes_[usr] = false;  // a recursion's answer comes from the rest of the body
    const CXCursor definition = clang_.clang_getCursorDefinition(function);
    if (clang_.clang_Cursor_isNull(definition) || depth > 24) return false;
    const CXSourceLocation at = clang_.clang_getCursorLocation(definition);
    // A library's own waits (libcu++'s cuda::barrier, cuda::pipeline) spin
    // through code not followed here: known by their names, as CUDA's are.
    // lockstep's own too: a template's body (the shuffles) calls the
    // primitives with dependent arguments, which no cursor resolves.
    // (In a preprocessed source, lockstep's headers are named by its line markers.)
    if ((!in_main_file(at) || clang_.clang_Location_isInSystemHeader(at) || presumed(at).first.find("/lockstep/emu/") != std::string::npos) &&
        waits_by_name(clang_.string(clang_.clang_getCursorSpelling(function))))
      return synchronizes_[usr] = true;
    // Followed everywhere but in system headers: a kernel that looks free of
    // barriers runs as one loop, so one hidden in a header must be seen.
    // (lockstep's own headers may be system headers to a program's build.)
    if (clang_.clang_Location_isInSystemHeader(at) && presumed(at).first.find("/lockstep/") == std::string::npos) return false;
    const bool result = body_may_synchronize(definition, depth + 1);
    synchronizes_[usr] = result;
    return result;
  }
  bool body_may_synchronize(CXCursor c, int depth) {
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
  bool unresolved_call_may_synchronize(const node& call) {
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
  static bool waits_by_name(const std::string& name) {
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
  static bool warp_level_name(std::string_view name) {
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
  bool names_an_operation(std::size_t i) const {
    const bool after = i > 0 && (tokens_[i - 1].is(".") || tokens_[i - 1].is("->") || tokens_[i - 1].is("::"));
    const bool before = i + 1 < tokens_.size() && (tokens_[i + 1].is("(") || tokens_[i + 1].is("<") || tokens_[i + 1].is("::"));
    return after || before;
  }
  void decline_warp_level(const node& function) const {
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
  static bool gathered_intrinsic(std::string_view name) {
    return std::find(std::begin(gathered_intrinsics), std::end(gathered_intrinsics), name) != std::end(gathered_intrinsics);
  }
  // Whether a function is lockstep's own (its emulator's headers), not the program's of the same name.
  bool lockstep_own(CXCursor function) const {
    return !clang_.clang_Cursor_isNull(function) &&
           presumed(clang_.clang_getCursorLocation(function)).first.find("/lockstep/emu/") != std::string::npos;
  }
  // A call of one of them, lockstep's own (not a function of the program's of the same name).
  bool gathered_call(const node& n) const {
    if (n.kind != CXCursor_CallExpr || !gathered_intrinsic(call_name(n))) return false;
    std::vector<CXCursor> candidates = callees(n);
    return !candidates.empty() && std::all_of(candidates.begin(), candidates.end(), [&](const CXCursor& c) { return lockstep_own(c); });
  }
  // A call of cooperative groups that meets its warp once and works on the
  // answer further (a tile's or coalesced group's `ballot`, `any`, `all`,
  // `match_any`, `sync`, a shuffle of at most 8 bytes; `coalesced_threads()`),
  // whose object and arguments write nothing: a collective step runs it again
  // with the lanes' answers (loop_replay_from).
  //
  // So is a call of the warp's matrix functions (nvcuda::wmma's
  // load_matrix_sync, store_matrix_sync, mma_sync): gathering, each lane's
  // call only records it (and mma_sync hands the warp its fragments'
  // addresses), and the lanes do their work when it runs again
  // (lockstep/emu/wmma.h). Their fragments live in the block's per-thread
  // arrays across the step, so each lane's stays where its warp reads it.
  bool replayed_call(const node& n) const {
    if (n.kind != CXCursor_CallExpr) return false;
    if (wmma_call(n)) return !writes_anything(n);
    static const std::set<std::string> members{"ballot", "any", "all", "match_any", "sync", "shfl", "shfl_down", "shfl_up", "shfl_xor"};
    const CXCursor callee = clang_.clang_getCursorReferenced(n.cursor);
    if (clang_.clang_Cursor_isNull(callee)) {
      // In a template, a member call with a dependent argument resolves only
      // when instantiated: a group's by its name and its object's type (the
      // step's gathering asserts a shuffle's value fits 8 bytes).
      const node* member = callee_expression(n);
      if (!member || member->kind != CXCursor_MemberRefExpr || member->children.size() != 2 || !members.count(member_name(*member))) return false;
      const std::vector<CXCursor> candidates = candidates_of(*member->children.back());
      return !candidates.empty() && std::all_of(candidates.begin(), candidates.end(), [&](const CXCursor& c) { return lockstep_own(c); }) &&
             one_warp_group(*member->children.front()) && !writes_anything(n);
    }
    if (!lockstep_own(callee)) return false;
    const std::string name = qualified_name(callee);
    const std::size_t last = name.rfind("::");
    const std::string group = last == std::string::npos ? "" : name.substr(0, last),
                      member = last == std::string::npos ? name : name.substr(last + 2);
    const bool tile_call =
        (group == "cooperative_groups::details::warp_tile" || group == "cooperative_groups::coalesced_group") && members.count(member);
    const bool tile_sync = name == "cooperative_groups::sync" && arguments_of(n).size() == 1 && one_warp_group(*arguments_of(n).front());
    if (!tile_call && !tile_sync && name != "cooperative_groups::coalesced_threads") return false;
    if (member.starts_with("shfl") && clang_.clang_Type_getSizeOf(clang_.clang_getCursorType(n.cursor)) > 8) return false;  // in pieces
    return !writes_anything(n);
  }
  // A call of lockstep's nvcuda::wmma load_matrix_sync, store_matrix_sync or
  // mma_sync (a template's too, by its candidates).
  bool wmma_call(const node& n) const {
    static const std::set<std::string> names{"nvcuda::wmma::load_matrix_sync", "nvcuda::wmma::store_matrix_sync", "nvcuda::wmma::mma_sync"};
    const std::vector<CXCursor> candidates = callees(n);
    return !candidates.empty() &&
           std::all_of(candidates.begin(), candidates.end(), [&](const CXCursor& c) { return lockstep_own(c) && names.count(qualified_name(c)); });
  }
  // The name a member call is written with (a template's too, not resolved yet).
  std::string member_name(const node& member) const {
    return clang_.string(clang_.clang_getCursorSpelling(clang_.clang_getCursorReferenced(member.cursor)));
  }
  // Whether evaluating a call's object and arguments may write anything
  // (calls allowed: lockstep's own, the group's ranks and the coordinates).
  bool writes_anything(const node& n) const {
    return any_node(n, [&](const node& e) {
      if (e.kind == CXCursor_CompoundAssignOperator || e.kind == CXCursor_LambdaExpr) return true;
      if (e.kind == CXCursor_BinaryOperator && e.children.size() == 2 && trimmed(text(e.children[0]->end, e.children[1]->begin)) == "=") return true;
      if (e.kind == CXCursor_UnaryOperator &&
          (text(e.begin, e.end).find("++") != std::string_view::npos || text(e.begin, e.end).find("--") != std::string_view::npos))
        return true;
      if (e.kind == CXCursor_CallExpr && &e != &n) {
        const CXCursor c = clang_.clang_getCursorReferenced(e.cursor);
        if (clang_.clang_Cursor_isNull(c)) return !operator_of(e) || operator_writes(e);
        if (presumed(clang_.clang_getCursorLocation(c)).first.find("/lockstep/") == std::string::npos) return true;
      }
      return false;
    });
  }
  // An operator a template leaves unresolved (`a + i` where a's type is a
  // template parameter's): the child that names it (between its operands,
  // or before or after its one operand), else null.
  const node* operator_of(const node& call) const {
    if (call.kind != CXCursor_CallExpr || !clang_.string(clang_.clang_getCursorSpelling(call.cursor)).empty() || call.children.size() < 2 ||
        call.children.size() > 3)
      return nullptr;
    for (const auto& c : call.children) {
      const std::string_view written = trimmed(text(c->begin, c->end));
      if (c->kind == CXCursor_DeclRefExpr && !written.empty() && std::string_view("+-*/%^&|~!=<>").find(written.front()) != std::string_view::npos)
        return c.get();
    }
    return nullptr;
  }
  // Whether that operator changes its first operand (an assignment, an increment).
  bool operator_writes(const node& call) const {
    const node* named = operator_of(call);
    const std::string_view op = trimmed(text(named->begin, named->end));
    return op == "++" || op == "--" || (op.ends_with("=") && op != "==" && op != "!=" && op != "<=" && op != ">=");
  }
  // cg::reduce(tile, value, op) over a tile of one warp with one of
  // cooperative groups' own operators, on a value of at most 8 bytes: the
  // tile's size, which a collective step's loop_tile_reduce takes; else 0.
  unsigned tile_reduce_size(const node& n) const {
    if (n.kind != CXCursor_CallExpr) return 0;
    const CXCursor callee = clang_.clang_getCursorReferenced(n.cursor);
    if (!lockstep_own(callee) || qualified_name(callee) != "cooperative_groups::reduce") return 0;
    const std::vector<const node*> arguments = arguments_of(n);
    if (arguments.size() != 3 || clang_.clang_Type_getSizeOf(clang_.clang_getCursorType(n.cursor)) > 8) return 0;
    static const std::string_view operators[] = {"plus<", "less<", "greater<", "bit_and<", "bit_or<", "bit_xor<"};
    const std::string op = canonical_type(*arguments[2]);
    if (std::none_of(std::begin(operators), std::end(operators),
                     [&](std::string_view o) { return op.starts_with("cooperative_groups::" + std::string(o)); }))
      return 0;
    return one_warp_tile(*arguments[0]);
  }
  // An expression's type, canonical, without a top-level const.
  std::string canonical_type(const node& e) const {
    std::string type = clang_.string(clang_.clang_getTypeSpelling(clang_.clang_getCanonicalType(clang_.clang_getCursorType(e.cursor))));
    return type.starts_with("const ") ? type.substr(6) : type;
  }
  // The size of the tile of one warp an expression is (thread_block_tile<Size>, Size <= 32), else 0.
  unsigned one_warp_tile(const node& e) const {
    static const std::string tile = "cooperative_groups::thread_block_tile<";
    const std::string type = canonical_type(e);
    if (!type.starts_with(tile)) return 0;
    const unsigned size = unsigned(std::strtoul(type.c_str() + tile.size(), nullptr, 10));
    return size >= 1 && size <= 32 ? size : 0;
  }
  // Such a tile, or a coalesced group.
  bool one_warp_group(const node& e) const { return one_warp_tile(e) || canonical_type(e) == "cooperative_groups::coalesced_group"; }
  // `__syncthreads_count(p)`, `_and`, `_or` (lockstep's): a barrier that
  // answers a vote of the block, a collective step where a barrier may
  // stand; the barrier_reduce it asks for, else "".
  std::string block_vote(const node& n) const {
    if (n.kind != CXCursor_CallExpr) return "";
    const CXCursor callee = clang_.clang_getCursorReferenced(n.cursor);
    if (!lockstep_own(callee)) return "";
    const std::string name = qualified_name(callee);
    return name == "__syncthreads_count" ? "count" : name == "__syncthreads_and" ? "all" : name == "__syncthreads_or" ? "any" : "";
  }
  // A call of a value-returning device function whose lanes variant each
  // calling lane's arguments and answer go through (split_function_once);
  // a function of this file not tried yet is tried first.
  bool lanes_call(const node& n) {
    if (n.kind != CXCursor_CallExpr) return false;
    const std::vector<CXCursor> candidates = callees(n);
    for (const CXCursor& c : candidates)
      if (const std::string usr = variant_usr(c); !attempted_.count(usr) && collected_.count(usr)) throw postpone{};
    return !candidates.empty() &&
           std::all_of(candidates.begin(), candidates.end(), [&](const CXCursor& c) { return lanes_variants_.count(variant_usr(c)) != 0; });
  }
  // One whose function waits at a block barrier too: only where one may stand.
  bool block_lanes_call(const node& n) {
    const std::vector<CXCursor> candidates = callees(n);
    return lanes_call(n) &&
           std::any_of(candidates.begin(), candidates.end(), [&](const CXCursor& c) { return block_lanes_variants_.count(variant_usr(c)) != 0; });
  }
  // The name a call is written with (a template's call too, not resolved yet).
  std::string call_name(const node& call) const {
    std::string name = clang_.string(clang_.clang_getCursorSpelling(call.cursor));
    if (const node* callee = callee_expression(call); name.empty() && callee) name = clang_.string(clang_.clang_getCursorSpelling(callee->cursor));
    return name;
  }
  // A call's arguments as written (not the defaults it leaves out).
  std::vector<const node*> arguments_of(const node& call) const {
    std::vector<const node*> out;
    for (std::size_t i = 1; i < call.children.size(); ++i)
      if (call.children[i]->end > call.children[i]->begin && call.children[i]->begin >= call.children[i - 1]->end)
        out.push_back(call.children[i].get());
    return out;
  }
  // The warp_op of a shuffle intrinsic, else "".
  static std::string shuffle_op(const std::string& name) {
    if (name == "__shfl_sync") return "shfl_idx";
    if (name == "__shfl_up_sync") return "shfl_up";
    if (name == "__shfl_down_sync") return "shfl_down";
    if (name == "__shfl_xor_sync") return "shfl_xor";
    return "";
  }
  // The warp collectives an expression or declaration statement calls, where
  // a collective step can run them (lockstep/emu/region_loops.h): gathered
  // intrinsics, none inside another's arguments, in a lambda, or in an
  // operand evaluated only sometimes (?:, &&, ||), and nothing else in the
  // statement that may wait. Empty where there are none or it cannot.
  std::vector<const node*> gathered_collectives(const node& s) {
    // A lanes variant's return of a value is such a statement too (it leaves the lane's answer).
    if (s.kind != CXCursor_DeclStmt && !clang_.clang_isExpression(s.kind) && !(lanes_ && s.kind == CXCursor_ReturnStmt && !s.children.empty()))
      return {};
    std::vector<const node*> calls;
    bool gatherable = true;
    std::function<void(const node&, bool)> visit = [&](const node& n, bool sometimes) {
      if (!gatherable) return;
      if (gathered_call(n) || lanes_call(n) || !block_vote(n).empty() || replayed_call(n) || tile_reduce_size(n)) {
        gatherable = !sometimes && std::none_of(n.children.begin(), n.children.end(), [&](const auto& c) { return contains_synchronization(*c); });
        calls.push_back(&n);
        return;
      }
      if (n.kind == CXCursor_LambdaExpr) {
        gatherable = !contains_synchronization(n);
        return;
      }
      if (n.kind == CXCursor_CallExpr) {
        const CXCursor callee = clang_.clang_getCursorReferenced(n.cursor);
        if (clang_.clang_Cursor_isNull(callee) ? unresolved_call_may_synchronize(n) : may_synchronize(callee)) return void(gatherable = false);
      }
      const bool conditional =
          n.kind == CXCursor_ConditionalOperator ||
          (n.kind == CXCursor_BinaryOperator && n.children.size() == 2 &&
           (trimmed(text(n.children[0]->end, n.children[1]->begin)) == "&&" || trimmed(text(n.children[0]->end, n.children[1]->begin)) == "||"));
      for (std::size_t i = 0; i < n.children.size(); ++i) visit(*n.children[i], sometimes || (conditional && i > 0));
    };
    visit(s, false);
    // A statement runs again around a replayed call: it is its statement's only collective.
    if (calls.size() > 1 && std::any_of(calls.begin(), calls.end(), [&](const node* c) { return replayed_call(*c); })) gatherable = false;
    return gatherable ? calls : std::vector<const node*>{};
  }
  // `#pragma unroll` wraps the loop it stands before (an attributed statement).
  static bool attributed_loop(const node& s) {
    return s.kind == CXCursor_UnexposedStmt && s.children.size() == 1 && is_loop(s.children.front()->kind);
  }
  // Whether every wait in a statement is a warp collective a collective step can run.
  bool waits_only_in_warps(const node& s) {
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

  bool contains_synchronization(const node& n) {
    if (n.kind == CXCursor_CallExpr) {
      const CXCursor callee = clang_.clang_getCursorReferenced(n.cursor);
      if (is_barrier_call(n)) return true;
      if (clang_.clang_Cursor_isNull(callee) ? unresolved_call_may_synchronize(n) : may_synchronize(callee)) return true;
    }
    for (const auto& c : n.children)
      if (contains_synchronization(*c)) return true;
    return false;
  }

  // ---- the kernel's structure: regions between barriers ----
  // A collective step's (collective_plans_, by its statement).
  struct collective_plan {
    int gather_region = -1;
    bool masked = false;  // in a masked branch's arm: only some threads make the calls
    std::vector<const node*> calls;
    // Code: the arrays of the lanes' calls, the gathering region's, the
    // block's answers between it and the statement, the checks after.
    std::string arrays, gathering, answering, after;
    bool gathering_enters = false;  // a call in it records the lane's (warp_collective reads the record)
    bool replays = false;           // its statement runs its call again (replayed_call)
  };
  struct sequence;
  struct step {
    enum class kind { region, barrier, loop, branch, masked, scope, call, update, collective } k = kind::region;
    std::vector<const node*> statements;  // a region's; a masked branch's condition; a collective step's calls
    std::string mask;                     // a region's or masked branch's: which threads run it, where not all
    bool expressions = false;             // a region of expressions (a for loop's increments), each run as a statement
    std::string code;                     // a region's code where it is not its statements' text (a collective step's gathering)
    bool enters = false;                  // its threads' records are written (enter) whatever its code reads
    const node* statement = nullptr;      // a loop's, branch's, scope's, call's or update's
    std::unique_ptr<sequence> body, otherwise;
    int region = -1;
  };
  struct sequence {
    std::vector<step> steps;
  };

  // The parts of a for statement's header: init, condition, increment.
  struct for_header {
    std::size_t open, close;              // the parentheses
    std::size_t first_semicolon, second;  // their offsets
  };
  for_header header_of_for(const node& loop) const {
    std::size_t i = token_at(loop.begin);
    if (!tokens_[i].is("for")) throw declined{"a loop written through a macro (" + line_of(loop) + ")"};
    for_header h{};
    h.open = tokens_[++i].offset;
    int depth = 0;
    int semicolons = 0;
    for (; i < tokens_.size(); ++i) {
      const toolchain::token& t = tokens_[i];
      if (t.is("(") || t.is("[") || t.is("{")) ++depth;
      if (t.is(")") || t.is("]") || t.is("}")) {
        if (--depth == 0) {
          h.close = t.offset;
          break;
        }
      }
      if (depth == 1 && t.is(";")) (semicolons++ == 0 ? h.first_semicolon : h.second) = t.offset;
    }
    if (semicolons != 2) throw declined{"a range-based for loop around a barrier (" + line_of(loop) + ")"};
    return h;
  }

  // The expression a call names its callee by, past implicit conversions; in
  // a template, `f<T>(x)` and `ns::f(x)` name the candidates by the
  // OverloadedDeclRef under it.
  static const node* callee_expression(const node& call) {
    const node* callee = call.children.empty() ? nullptr : call.children.front().get();
    while (callee && callee->kind == CXCursor_UnexposedExpr && !callee->children.empty()) callee = callee->children.front().get();
    if (callee && callee->kind == CXCursor_DeclRefExpr)
      for (const auto& c : callee->children)
        if (c->kind == CXCursor_OverloadedDeclRef) return c.get();
    return callee;
  }
  std::vector<CXCursor> candidates_of(const node& overloaded) const {
    std::vector<CXCursor> out;
    for (unsigned i = 0; i < clang_.clang_getNumOverloadedDecls(overloaded.cursor); ++i)
      out.push_back(clang_.clang_getOverloadedDecl(overloaded.cursor, i));
    return out;
  }

  // The functions a call may mean: its callee, or a template's candidates.
  std::vector<CXCursor> callees(const node& call) const {
    const CXCursor callee = clang_.clang_getCursorReferenced(call.cursor);
    if (!clang_.clang_Cursor_isNull(callee)) return {callee};
    const node* ref = callee_expression(call);
    if (ref && ref->kind == CXCursor_OverloadedDeclRef) return candidates_of(*ref);
    return {};
  }
  // A statement that calls a function without barriers that has a block
  // variant (its loops interchanged), with arguments every thread passes
  // alike: the block calls the variant once, as it does one with barriers.
  bool loop_call(const node& statement) { return interchange_ && !kept_in_regions_.count(statement.begin) && block_call(statement, true); }
  // A statement that is a call of a function of this file with barriers,
  // which the block then calls once, as its block variant: the call node.
  // The USR a function's block variant is known by: its template's, for an instance.
  std::string variant_usr(CXCursor function) const {
    CXCursor definition = clang_.clang_getCursorDefinition(function);
    if (clang_.clang_Cursor_isNull(definition)) definition = function;
    const CXCursor pattern = clang_.clang_getSpecializedCursorTemplate(definition);
    return clang_.string(clang_.clang_getCursorUSR(clang_.clang_Cursor_isNull(pattern) ? definition : pattern));
  }
  // The token index of the `(` after a function's name at name_end, past template arguments.
  std::size_t parameters_open(std::size_t name_end) const {
    std::size_t i = token_at(name_end);
    if (i < tokens_.size() && tokens_[i].is("<"))
      for (int depth = 0; i < tokens_.size(); ++i) {
        depth += tokens_[i].is("<") - tokens_[i].is(">") - 2 * tokens_[i].is(">>");
        if (depth <= 0) {
          ++i;
          break;
        }
      }
    if (i >= tokens_.size() || !tokens_[i].is("(")) throw declined{"a call or declaration of a function with barriers that lockstep cannot read"};
    return i;
  }
  // A block variant takes its caller's loop_block first (the caller's blocks
  // and extents, which may span several blocks along x): `first` goes in
  // after the `(` at token `open`, before what follows.
  std::string with_first_argument(std::size_t open, std::string_view first) const {
    const std::size_t next = open + 1;
    if (next < tokens_.size() && tokens_[next].is(")")) return std::string(first);
    if (next + 1 < tokens_.size() && tokens_[next].is("void") && tokens_[next + 1].is(")")) return std::string(first);  // f(void)
    return std::string(first) + ", ";
  }

  const node* block_call(const node& statement, bool without_barriers = false) {
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

  // A for loop without barriers that is tried as a block-level loop, the
  // threads' loop inside it (loop interchange): `for (int i = 0; i < k; ++i)
  // acc += a[row * k + i] * b[i * n + col];` then runs i once for the block
  // and each step over the threads, which the host compiler vectorises (b's
  // elements are consecutive from thread to thread), instead of a whole k
  // loop per thread. Each thread's own operations keep their order; threads
  // of a block between barriers have none between them. Its header must
  // then be the same for every thread (split_function tries again without
  // the loops whose headers are not), and nothing in its body may leave it.
  bool interchangeable(const node& s) const {
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
  // The side of a for loop's comparison that is a compile-time constant
  // (`p < BK`), or null.
  const node* constant_bound(const node& loop) const {
    if (loop.children.size() < 2) return nullptr;
    const node* condition = unwrapped(loop.children[1].get());
    if (condition->kind != CXCursor_BinaryOperator || condition->children.size() != 2) return nullptr;
    for (const auto& side : condition->children)
      if (compile_time_constant(*side)) return side.get();
    return nullptr;
  }
  // The integer Clang evaluates an expression or a constant's declaration to.
  std::optional<long long> evaluated_integer(CXCursor c) const {
    const CXEvalResult value = clang_.clang_Cursor_Evaluate(c);
    if (!value) return std::nullopt;
    std::optional<long long> integer;
    if (clang_.clang_EvalResult_getKind(value) == CXEval_Int) integer = clang_.clang_EvalResult_getAsLongLong(value);
    clang_.clang_EvalResult_dispose(value);
    return integer;
  }
  // A thread's loop of a few steps known at compile time (a register
  // tile's k steps, `for (p = 0; p < BK; ++p)`) is unrolled whole: its
  // products then vectorise along the tile's rows. GCC leaves a long body
  // rolled and vectorises the loop itself, shuffling the tile on each step
  // (the vectorized matmul ran 2.6x slower so).
  void unroll_short_loops(const node& n) {
    if (n.kind == CXCursor_LambdaExpr) return;
    if (n.kind == CXCursor_ForStmt && !edits_.count(n.begin))
      if (const node* bound = constant_bound(n))
        if (const std::optional<long long> count = evaluated_integer(bound->cursor); count && *count >= 0 && *count <= max_unrolled_steps)
          edit(n.begin, n.begin, "\n#pragma GCC unroll " + std::to_string(max_unrolled_steps) + "\n");
    for (const auto& c : n.children) unroll_short_loops(*c);
  }
  bool compile_time_constant(const node& e) const {
    switch (e.kind) {
      case CXCursor_IntegerLiteral:
      case CXCursor_CharacterLiteral:
      case CXCursor_CXXBoolLiteralExpr:
        return true;
      case CXCursor_UnaryExpr:  // sizeof, alignof
        return trimmed(text(e.begin, e.end)).starts_with("sizeof") || trimmed(text(e.begin, e.end)).starts_with("alignof");
      case CXCursor_DeclRefExpr: {
        const CXCursor decl = clang_.clang_getCursorReferenced(e.cursor);
        const CXCursorKind k = clang_.clang_getCursorKind(decl);
        if (k == CXCursor_NonTypeTemplateParameter || k == CXCursor_EnumConstantDecl) return true;
        if (k != CXCursor_VarDecl || !clang_.clang_isConstQualifiedType(clang_.clang_getCursorType(decl))) return false;
        return evaluated_integer(decl).has_value();
      }
      case CXCursor_ParenExpr:
      case CXCursor_UnexposedExpr:
      case CXCursor_BinaryOperator:
      case CXCursor_UnaryOperator:
        return !e.children.empty() && std::all_of(e.children.begin(), e.children.end(), [&](const auto& c) { return compile_time_constant(*c); });
      default:
        return false;
    }
  }

  // An if statement whose condition may differ between threads, with an
  // interchanged loop in an arm and no barrier: each thread's condition is
  // kept in a mask, and the arms' regions run the threads whose mask says so
  // (every row whose threads all agree without asking each), the loops
  // between them once for the block. A masked thread does nothing in them.
  // So is one whose arms wait only at warp collectives (`if (warp == 0) { ...
  // __shfl_down_sync ... }`): the lanes that meet are those the mask lets in.
  bool maskable(const node& s) {
    if (s.kind != CXCursor_IfStmt || kept_in_regions_.count(s.begin) || s.children.size() < 2 || s.children.size() > 3 ||
        s.children[0]->kind == CXCursor_DeclStmt)
      return false;
    if (contains_synchronization(s)) return waits_only_in_warps(s);  // the condition's too (`if (__all_sync(m, p))`)
    return interchange_ && holds_interchange(s, false);
  }
  // Whether a statement holds a loop that would be interchanged, or (`calls`)
  // is a call of a block variant without barriers; a block variant runs for
  // every thread, so no call under a mask is one.
  bool holds_interchange(const node& s, bool calls) {
    if (interchangeable(s) || (calls && loop_call(s))) return true;
    if (s.kind == CXCursor_CompoundStmt || s.kind == CXCursor_IfStmt)
      return std::any_of(s.children.begin(), s.children.end(),
                         [&](const auto& c) { return holds_interchange(*c, calls && s.kind == CXCursor_CompoundStmt); });
    return false;
  }
  std::string current_mask() const {
    std::string out;
    for (const std::string& m : masks_) out += (out.empty() ? "" : " && ") + m;
    return out;
  }
  // A collective step for statement (or condition) s, its calls gathered in
  // gather_region and s run in region.
  void plan_collective(const node& s, const std::vector<const node*>& calls, int gather_region, int region) {
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

  step masked_branch(const node& s) {
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
    const std::string mask = mask_array(st.region) + "[__ls_t]";
    auto arm = [&](const node& a) { return build_sequence(a.kind == CXCursor_CompoundStmt ? children_of(a) : std::vector<const node*>{&a}); };
    masks_.push_back(mask);
    st.body = arm(*s.children[1]);
    masks_.back() = "!" + mask;
    if (s.children.size() == 3) st.otherwise = arm(*s.children[2]);
    masks_.pop_back();
    return st;
  }

  // `for (t0 = 0; t0 < k; t0 += 16, a_next += 16)`: the increments of
  // variables the condition does not read (each thread's pointers) run as a
  // region at the end of the body, the others stay in the block's header.
  // Only where neither half reads what the other changes, so that running
  // the body's end first keeps every value each reads.
  void split_increment(const node& loop, sequence& body) {
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

  std::unique_ptr<sequence> build_sequence(const std::vector<const node*>& statements) {
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
  static std::vector<const node*> children_of(const node& n) {
    std::vector<const node*> out;
    for (const auto& c : n.children) out.push_back(c.get());
    return out;
  }

  // `i /= 2;`, `++i;`, `i = i * 2;` as a statement of its own, `i` a local of
  // the kernel: every thread may make the same change (CUDA by Example's
  // `while (i != 0) { ...; __syncthreads(); i /= 2; }`). Tried as a step run
  // once for the block; the kernel is split again with it in its region if
  // `i` turns out to differ between threads (split_function).
  bool is_update(const node& s) {
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

  // ---- variables ----
  struct reference {
    const node* ref;
    int region;  // -1: block-level code (a loop header, a condition)
    bool write;  // may change the variable
    bool in_lambda;
  };
  struct variable {
    CXCursor decl;
    std::string name;
    bool parameter = false;
    bool static_storage = false;
    const node* declaration = nullptr;  // the DeclStmt, for sequence-level locals
    const node* var_decl = nullptr;
    int declared_region = -1;     // -1: a parameter, a loop header's
    bool sequence_level = false;  // declared by a statement of a sequence (or a loop header)
    const node* initializer = nullptr;
    std::vector<reference> refs;
    bool uniform = false;
    bool per_thread = false;
    bool in_register = false;  // copied in and out of its array around each region
    bool recomputed = false;   // declared again from its initializer in each region that reads it
    bool closure = false;      // a lambda capturing by reference only, which each region that calls it makes again
    int index = 0;
  };

  static std::size_t key_of(std::size_t decl_offset, bool parameter) { return decl_offset * 2 + parameter; }

  // The canonical types of the parameters of a function, a member function, a
  // constructor or a function template (whose types may name its parameters);
  // none for anything else. A parameter pack is one parameter (its pattern's type).
  std::vector<CXType> parameter_types(CXCursor function) const {
    std::vector<CXType> out;
    const CXCursorKind kind = clang_.clang_getCursorKind(function);
    if (kind == CXCursor_FunctionDecl || kind == CXCursor_CXXMethod || kind == CXCursor_Constructor) {
      for (int i = 0; i < clang_.clang_Cursor_getNumArguments(function); ++i)
        out.push_back(clang_.clang_getCanonicalType(clang_.clang_getCursorType(clang_.clang_Cursor_getArgument(function, unsigned(i)))));
    } else if (kind == CXCursor_FunctionTemplate) {
      struct collected {
        const libclang_api& clang;
        std::vector<CXType>& out;
      } c{clang_, out};
      clang_.clang_visitChildren(
          function,
          [](CXCursor child, CXCursor, CXClientData data) {
            auto* c = static_cast<collected*>(data);
            if (c->clang.clang_getCursorKind(child) == CXCursor_ParmDecl)
              c->out.push_back(c->clang.clang_getCanonicalType(c->clang.clang_getCursorType(child)));
            return CXChildVisit_Continue;
          },
          &c);
    }
    return out;
  }

  // Whether a reference may change the variable (conservatively: anything
  // but a load through an implicit conversion, or a read of a member loaded so).
  bool may_write(const node& ref) const {
    const node* p = ref.parent;
    if (!p) return true;
    // A const variable (not a reference) is never changed.
    const CXType declared = clang_.clang_getCursorType(clang_.clang_getCursorReferenced(ref.cursor));
    if (declared.kind != CXType_LValueReference && declared.kind != CXType_RValueReference && clang_.clang_isConstQualifiedType(declared))
      return false;
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
  static std::string_view trimmed(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
  }

  // The region a node of the kernel's body belongs to, -1 for block-level code.
  int region_of(const node* n) const {
    for (; n; n = n->parent)
      if (auto it = region_of_statement_.find(n); it != region_of_statement_.end()) return it->second;
    return -1;
  }

  variable* variable_for(CXCursor decl) {
    const CXCursorKind k = clang_.clang_getCursorKind(decl);
    if (k != CXCursor_VarDecl && k != CXCursor_ParmDecl) return nullptr;
    const CXSourceLocation loc = clang_.clang_getCursorLocation(decl);
    if (!in_main_file(loc)) return nullptr;
    const std::size_t at = offset_of(loc);
    if (at < kernel_begin_ || at >= kernel_end_) return nullptr;  // a global
    auto it = variables_.find(key_of(at, k == CXCursor_ParmDecl));
    return it == variables_.end() ? nullptr : &it->second;
  }

  void collect_declarations(const node& n) {
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

  void collect_references(const node& n, bool in_lambda) {
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
  void collect_closures() {
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
  bool captures_by_reference_only(const node& lambda) const {
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
  static bool called(const node& ref) {
    const node* at = &ref;
    const node* p = ref.parent;
    while (p && (p->kind == CXCursor_UnexposedExpr || p->kind == CXCursor_ParenExpr) && p->children.size() == 1) at = p, p = p->parent;
    return p && p->kind == CXCursor_CallExpr && !p->children.empty() && p->children.front().get() == at;
  }

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
  bool read_only_parameter(const node& n) {
    if (n.kind != CXCursor_DeclRefExpr) return false;
    const CXCursor decl = clang_.clang_getCursorReferenced(n.cursor);
    const variable* v = variable_for(decl);
    if (!v || !v->parameter || std::any_of(v->refs.begin(), v->refs.end(), [](const reference& r) { return r.write; })) return false;
    const CXType type = clang_.clang_getCursorType(decl);
    return type.kind == CXType_Pointer && clang_.clang_isRestrictQualifiedType(type) &&
           clang_.clang_isConstQualifiedType(clang_.clang_getPointeeType(type));
  }
  bool uniform(const node& n, bool per_thread = false) {
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
          return v->uniform || (per_thread && v->recomputed) ||
                 (v->static_storage && (type == CXType_ConstantArray || type == CXType_IncompleteArray));
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
        if (in_main_file(clang_.clang_getCursorLocation(callee)) && clang_.clang_getCursorKind(callee) != CXCursor_Constructor) return false;
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

  // Whether the kernel may change part of v through a subscript or a member
  // (`v.shape[0] = ...`, `v.x++`), or hands it out by address or reference.
  bool elements_written(const variable& v) const {
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

  // How a value, or an address, changes from one thread of a row to the
  // next (threadIdx.x + 1): not at all, by one element, or otherwise
  // (scaled, or a thread's own value that is not computed again).
  enum class x_step { none, one, other };
  x_step step_in_x(const node& n, int depth = 0) {
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
  x_step address_step(const node& e, int depth) {
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
  bool scattered_across_threads(const node& body) {
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

  // A for loop's header as the block runs it: init, condition, the increments not run per thread.
  std::vector<const node*> header_of(const node* loop) const {
    std::vector<const node*> out;
    for (std::size_t i = 0; i + 1 < loop->children.size(); ++i) out.push_back(loop->children[i].get());
    if (auto kept = header_increments_.find(loop); kept != header_increments_.end()) {
      out.pop_back();
      out.insert(out.end(), kept->second.begin(), kept->second.end());
    }
    return out;
  }
  // Block-level code: loop headers and branch conditions, which the loops run once for the block.
  std::vector<const node*> block_level_expressions() const {
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
  const node* shared_assignment(const variable& v, const reference& r) const {
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
  void ask_uniform_parameters(const node& e) {
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
  std::vector<std::size_t> uniform_positions(const node& function) const {
    std::vector<std::size_t> out;
    const std::vector<const node*> parameters = parameters_of(function);
    for (std::size_t i = 0; i < parameters.size(); ++i)
      if (uniform_parameters_.count(key_of(offset_of(clang_.clang_getCursorLocation(parameters[i]->cursor)), true))) out.push_back(i);
    return out;
  }

  void decide_uniform(const std::vector<const node*>& block_level) {
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
        bool ok =
            !v.initializer || (v.declaration && text(v.declaration->begin, v.declaration->end).starts_with("constexpr")) || uniform(*v.initializer);
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
      // A declaration statement either leaves the regions whole (all its
      // variables uniform) or stays: then none of its variables is uniform.
      for (auto& [key, v] : variables_) {
        if (!v.uniform || !v.declaration) continue;
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

  // ---- writing the loop body ----
  // `text` of [begin, end) with the edits that fall inside it.
  std::string edited(std::size_t begin, std::size_t end) const {
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
  void edit(std::size_t begin, std::size_t end, std::string replacement) {
    if (edits_.count(begin)) throw declined{"two rewrites at one place (a macro?)"};
    edits_[begin] = {end, std::move(replacement)};
  }

  void write_sequence(const sequence& seq, std::string& out) {
    for (const step& st : seq.steps) {
      switch (st.k) {
        case step::kind::barrier:
          break;
        case step::kind::update:
          out += line_directive(clang_.clang_getCursorLocation(st.statement->cursor));
          out += edited(st.statement->begin, statement_end(*st.statement)) + "\n";
          break;
        case step::kind::region:
          write_region(st, out);
          break;
        case step::kind::scope:
          out += "{";
          write_sequence(*st.body, out);
          out += "}";
          break;
        case step::kind::call: {
          // The callee's name, as written, becomes its block variant's.
          const node& call = *st.statement;
          const node* ref = callee_expression(call);
          const std::size_t name_at = offset_of(clang_.clang_getCursorLocation(ref->cursor));
          const std::string name = clang_.string(clang_.clang_getCursorSpelling(ref->cursor));
          if (name.empty() || text(name_at, name_at + name.size()) != name) throw declined{"a call written through a macro (" + line_of(call) + ")"};
          out += line_directive(clang_.clang_getCursorLocation(call.cursor));
          const std::size_t open = parameters_open(name_at + name.size()), after_open = tokens_[open].end_offset();
          out += std::string(text(call.begin, name_at)) + name + "__ls_block" + std::string(text(name_at + name.size(), after_open)) +
                 with_first_argument(open, "__ls_block") + std::string(text(after_open, call.end)) + ";\n";
          break;
        }
        case step::kind::loop: {
          const node& loop = *st.statement;
          // An interchanged loop whose body is one region runs inside the
          // rows' loops, around each row's threads: the row's accumulators
          // stay in cache lines (or registers) from one step to the next.
          const bool per_row = row_level(st);
          const auto write_loop = [&] {
            out += line_directive(clang_.clang_getCursorLocation(loop.cursor));
            if (loop.kind == CXCursor_ForStmt) {
              const for_header h = header_of_for(loop);
              if (auto kept = header_increments_.find(&loop); kept != header_increments_.end()) {
                out += "for (" + edited(h.open + 1, h.second) + ";";
                for (const node* part : kept->second) out += (part == kept->second.front() ? " " : ", ") + edited(part->begin, part->end);
                out += ") {";
              } else {
                out += "for (" + edited(h.open + 1, h.close) + ") {";
              }
            } else if (loop.kind == CXCursor_WhileStmt) {
              out += "while (" + edited(loop.children.front()->begin, loop.children.front()->end) + ") {";
            } else {
              out += "do {";
            }
            if (per_row)
              write_region(st.body->steps.front(), out, true);
            else
              write_sequence(*st.body, out);
            out += "}";
            if (loop.kind == CXCursor_DoStmt) out += " while (" + edited(loop.children.back()->begin, loop.children.back()->end) + ");";
          };
          if (!per_row) {
            write_loop();
            break;
          }
          const step& region = st.body->steps.front();
          out += rows_loop + "{" + row_masked_out(region.mask) + " int __ls_x0 = 0;\n";
          chunked_ = chunked_variables(region.region);
          if (!chunked_.empty()) {
            const std::string chunk = std::to_string(row_chunk);
            // (Only in rows whose threads all run it: GCC keeps a chunk that
            // the masked version reads thread by thread in memory, and the
            // naive matmul's product ran 3x slower so.)
            out += "if (__ls_block.extent_x() <= " + std::to_string(2 * row_chunk) + (region.mask.empty() ? "" : " && !__ls_masked_out") +
                   ") for (; __ls_x0 + " + chunk + " <= __ls_block.extent_x(); __ls_x0 += " + chunk + ") {";
            std::string load, store;
            for (const variable* v : chunked_) {
              const std::string i = std::to_string(v->index), element = "__ls_" + i + "[" + row_start + " + __ls_x0 + __ls_k]";
              out += " ::std::remove_reference_t<decltype(*__ls_" + i + ")> __ls_c" + i + "[" + chunk + "];";
              load += " __ls_c" + i + "[__ls_k] = " + element + ";";
              store += " " + element + " = __ls_c" + i + "[__ls_k];";
            }
            const std::string each = " for (int __ls_k = 0; __ls_k < " + chunk + "; ++__ls_k) {";
            out += each + load + " }\n";
            in_chunk_ = true;
            write_loop();
            in_chunk_ = false;
            out += each + store + " }\n}\n";
          }
          out += "if (__ls_x0 < __ls_block.extent_x()) {";
          write_loop();
          out += "}}";
          chunked_.clear();
          break;
        }
        case step::kind::masked: {
          // The condition, each thread's in its mask, then the arms.
          // False for the threads that do not evaluate the condition (returned, or masked out).
          const std::string masks = mask_array(st.region);
          out += "bool " + masks + "[__ls_block.threads()]; ::std::memset(" + masks + ", 0, __ls_block.threads());\n";
          const auto collective = collective_plans_.find(st.statements.front());
          if (collective != collective_plans_.end()) write_gathering(collective->second, st.mask, out);
          step condition;
          condition.statements = st.statements;
          condition.region = st.region;
          condition.mask = st.mask;
          condition.enters = collective != collective_plans_.end() && collective->second.replays;
          write_region(condition, out, false, masks + "[__ls_t]");
          if (collective != collective_plans_.end()) out += collective->second.after;
          out += "{";
          write_sequence(*st.body, out);
          out += "}";
          if (st.otherwise) {
            out += "{";
            write_sequence(*st.otherwise, out);
            out += "}";
          }
          break;
        }
        case step::kind::collective: {
          // Each call's lanes, gathered, answered warp by warp, then the statement.
          const collective_plan& plan = collective_plans_.at(st.statement);
          write_gathering(plan, st.mask, out);
          step statement;
          statement.statements = {st.statement};
          statement.region = st.region;
          statement.mask = st.mask;
          statement.enters = plan.replays;
          write_region(statement, out);
          out += plan.after;
          break;
        }
        case step::kind::branch: {
          const node& branch = *st.statement;
          out += line_directive(clang_.clang_getCursorLocation(branch.cursor));
          out += "if (" + edited(branch.children.front()->begin, branch.children.front()->end) + ") {";
          write_sequence(*st.body, out);
          out += "}";
          if (st.otherwise) {
            out += " else {";
            write_sequence(*st.otherwise, out);
            out += "}";
          }
          break;
        }
      }
    }
  }

  // A collective step's arrays, its gathering region, the block's answers.
  void write_gathering(const collective_plan& plan, const std::string& mask, std::string& out) {
    out += plan.arrays;
    step gather;
    gather.statements = plan.calls;
    gather.region = plan.gather_region;
    gather.mask = mask;
    gather.code = plan.gathering;
    gather.enters = plan.gathering_enters;
    write_region(gather, out);
    out += plan.answering;
  }

  // Code whose returns (`goto label;`) jump to `to` instead.
  static std::string jumps_retargeted(std::string code, const std::string& label, const std::string& to) {
    const std::string jump = "goto " + label + ";";
    for (std::size_t at = 0; (at = code.find(jump, at)) != std::string::npos; at += jump.size()) code.replace(at + 5, label.size(), to);
    return code;
  }
  // The threads' loop of an interchanged loop's region (row_level), in the
  // row's loop: over a chunk of the row, or the rest of it.
  std::string row_loop(std::string_view enter) const {
    return (in_chunk_ ? chunk_threads : rest_of_row_threads) + "{ __ls_block." + std::string(enter) + "(__ls_x, __ls_y, __ls_z, __ls_t);";
  }
  // The per-thread scalars an interchanged loop's region reads or writes,
  // which a chunk of its row keeps in local arrays (row_chunk).
  std::set<const variable*> chunked_variables(int region) const {
    std::set<const variable*> chunked;
    for (const auto& [key, v] : variables_)
      if (v.per_thread && v.in_register && !is_array(v) &&
          std::any_of(v.refs.begin(), v.refs.end(), [&](const reference& r) { return r.region == region; }))
        chunked.insert(&v);
    return chunked;
  }

  // An interchanged loop whose body is one region without a guard, which
  // declares nothing a later region reads.
  bool row_level(const step& st) {
    if (std::find(interchanged_.begin(), interchanged_.end(), st.statement) == interchanged_.end()) return false;
    if (st.body->steps.size() != 1 || st.body->steps.front().k != step::kind::region || prefix_guard(st.body->steps.front())) return false;
    const int region = st.body->steps.front().region;
    return std::none_of(variables_.begin(), variables_.end(),
                        [&](const auto& kv) { return kv.second.per_thread && kv.second.declared_region == region; });
  }

  // In a rows' loop: whether a thread of the row is masked out of a region
  // (then its threads are each asked; else none is).
  static std::string row_masked_out(const std::string& mask) {
    if (mask.empty()) return "";
    return " int __ls_masked_out, __ls_masked_in; " + masks_summed(row_threads, mask) + " (void)__ls_masked_in;";
  }
  // Sets __ls_masked_out and __ls_masked_in: whether `threads` has a thread
  // the mask leaves out, and one it lets in. The mask (current_mask: mask
  // arrays' elements, some negated, joined by &&) is read as bytes, which
  // GCC's vectoriser takes where it refuses bools' operators (the warp
  // shuffle sum spent a third of its time here so).
  static std::string masks_summed(const std::string& threads, const std::string& mask) {
    std::string bytes;
    for (std::size_t at = 0; at < mask.size();) {
      const std::size_t end = std::min(mask.find(" && ", at), mask.size());
      const std::string term = mask.substr(at, end - at);
      bytes += std::string(bytes.empty() ? "" : " & ") + (term.starts_with("!") ? "(::lockstep::emu::loop_mask_byte(" + term.substr(1) + ") ^ 1)"
                                                                                : "::lockstep::emu::loop_mask_byte(" + term + ")");
      at = end + 4;
    }
    return "{ unsigned char __ls_all = 1, __ls_any = 0; " + threads + "{ const unsigned char __ls_in = " + bytes +
           "; __ls_all &= __ls_in; __ls_any |= __ls_in; } __ls_masked_out = !__ls_all; __ls_masked_in = __ls_any; }\n";
  }

  // `assign_to`: the region is an expression (a masked branch's condition),
  // whose value each thread stores there.
  void write_region(const step& st, std::string& out, bool row_only = false, const std::string& assign_to = "") {
    // Declarations the block shares come out of the loop, in their order.
    const std::size_t begin = st.statements.front()->begin, end = statement_end(*st.statements.back());
    for (const node* s : st.statements)
      if (auto it = hoisted_.find(s); it != hoisted_.end()) out += line_directive(clang_.clang_getCursorLocation(s->cursor)) + it->second + "\n";
    // The arrays of the variables this region declares, once per block (their
    // types may name the constants just written out).
    for (const auto& [key, v] : variables_)
      if (v.per_thread && !v.parameter && v.declared_region == st.region) out += per_thread_array(v.index, type_of(v));
    // The locals computed again, each after those its initializer reads.
    std::set<const variable*> again;
    std::function<void(const node&)> reads = [&](const node& n) {
      if (n.kind == CXCursor_DeclRefExpr)
        if (const variable* v = variable_for(clang_.clang_getCursorReferenced(n.cursor)); v && v->recomputed && v->declared_region != st.region)
          if (again.insert(v).second) reads(*v->initializer);
      for (const auto& c : n.children) reads(*c);
    };
    for (const node* s : st.statements) reads(*s);
    std::string recomputed, closures;
    for (const auto& [key, v] : variables_)
      if (again.count(&v)) {
        const std::string init = edited(v.initializer->begin, v.initializer->end);
        (v.closure ? closures : recomputed) +=
            " " + (v.closure ? std::string("auto") : recomputed_type(v)) + " " + v.name + (init.starts_with("{") ? "" : " = ") + init + ";";
      }
    std::string prologue = recomputed;
    if (exit_flags_) prologue += " if (__ls_exited[__ls_t]) continue;";
    std::string write_back;
    bool keeps_tile = false;
    for (const auto& [key, v] : variables_) {
      if (!v.per_thread) continue;
      const bool declared_here = v.declared_region == st.region;
      const bool used_here = std::any_of(v.refs.begin(), v.refs.end(), [&](const reference& r) { return r.region == st.region; });
      if (!declared_here && !used_here) continue;
      const std::string slot =
          in_chunk_ && chunked_.count(&v) ? "__ls_c" + std::to_string(v.index) + "[__ls_k]" : "__ls_" + std::to_string(v.index) + "[__ls_t]";
      if (!v.in_register) {
        prologue += " auto& " + v.name + " = " + slot + ";";
        continue;
      }
      // A copy the host compiler can keep in a register (the array may alias
      // the kernel's own arrays of the same type), written back if it changed.
      if (is_array(v)) {
        // A write to an element is not one to the variable: each region that uses it writes it back.
        prologue += " std::remove_reference_t<decltype(" + slot + ")> " + v.name + "; __builtin_memcpy(&" + v.name + ", &" + slot + ", sizeof " +
                    v.name + ");";
        write_back += " __builtin_memcpy(&" + slot + ", &" + v.name + ", sizeof " + v.name + ");";
        keeps_tile = true;
        continue;
      }
      prologue += " auto " + v.name + " = " + slot + ";";
      if (declared_here || std::any_of(v.refs.begin(), v.refs.end(), [&](const reference& r) { return r.region == st.region && r.write; }))
        write_back += " " + slot + " = " + v.name + ";";
    }
    prologue += closures;
    // A thread that works on a register tile vectorises within itself (a
    // row of the tile is a vector); GCC's loop vectoriser would take the
    // threads' loop, or the product's loop, and shuffle the tile on every
    // step (the vectorized matmul ran 2.5x slower). A loop with an asm
    // statement is not vectorised; the thread's own code still is (SLP).
    if (keeps_tile) {
      prologue += " __asm__ volatile(\"\");";
      for (const node* s : st.statements) unroll_short_loops(*s);
    }
    const std::string line = line_directive(clang_.clang_getCursorLocation(st.statements.front()->cursor));
    std::string next = "__ls_next_" + std::to_string(st.region);
    const std::string label_end = ": __attribute__((unused));";  // where no return jumps to it
    // Locals declared here for later regions, which declare them again, are
    // said to be used (no -Wunused warnings in -Wall builds).
    std::string declared_for_later;
    for (const auto& [key, v] : variables_)
      if (v.recomputed && v.declared_region == st.region) declared_for_later += " (void)" + v.name + ";";
    const node* guard = prefix_guard(st);
    // A collective step's gathering enters each thread: its calls record the lane's.
    const std::string enter =
        st.enters || std::any_of(st.statements.begin(), st.statements.end(), [&](const node* s) { return region_reads_record(*s); }) ? "enter"
                                                                                                                                     : "move_to";
    std::string code = !st.code.empty() ? st.code : assign_to.empty() ? edited(begin, end) : assign_to + " = (" + edited(begin, end) + ");";
    if (st.expressions) {
      code.clear();
      for (const node* e : st.statements) code += edited(e->begin, e->end) + ";";
    }
    // A chunk's copy of the region has labels of its own (labels are the function's).
    if (in_chunk_) {
      code = jumps_retargeted(code, next, next + "_chunk");
      next += "_chunk";
    }
    if (!st.mask.empty()) {
      // A row whose threads all run the region runs it without asking.
      const std::string all = jumps_retargeted(code, next, next + "_all");
      // Outside a row's loop, the row goes by segments of a warp's width:
      // one no thread of which runs the region (`if (warp == 0)` in a wide
      // block) is passed over.
      std::string threads = row_only ? row_loop(enter) : thread_loop(enter, true);
      if (!row_only) {
        const std::string segment = "for (int __ls_x = __ls_x0, __ls_t = " + row_start + " + __ls_x0; __ls_x < __ls_x1; ++__ls_x, ++__ls_t) ";
        out += rows_loop +
               "for (int __ls_x0 = 0; __ls_x0 < __ls_block.extent_x(); __ls_x0 += 32) { const int __ls_x1 = __ls_x0 + 32 < __ls_block.extent_x() ? "
               "__ls_x0 + 32 : __ls_block.extent_x(); int __ls_masked_out, __ls_masked_in; " +
               masks_summed(segment, st.mask) + "if (!__ls_masked_in) continue;\n";
        threads = segment + "{ __ls_block." + enter + "(__ls_x, __ls_y, __ls_z, __ls_t);";
      }
      const std::string all_threads =
          threads + prologue + " {" + line + all + declared_for_later + "\n} " + next + "_all" + label_end + write_back + " }\n";
      if (in_chunk_) {  // only such rows have chunks
        out += all_threads;
        return;
      }
      out += "if (!__ls_masked_out) " + all_threads;
      out += "else " + threads + prologue + " if (!(" + st.mask + ")) continue; {" + line + code + declared_for_later + "\n} " + next + label_end +
             write_back + " }\n";
      if (!row_only) out += "}\n";
      return;
    }
    const std::vector<select_arm> selects = guard || row_only ? std::vector<select_arm>{} : select_arms(st);
    if ((!guard || row_only) && selects.empty()) {
      out += (row_only ? row_loop(enter) : thread_loop(enter)) + prologue + " {" + line + code + declared_for_later + "\n} " + next + label_end +
             write_back + " }\n";
      return;
    }
    // Each row of threads first asks whether all its threads pass a
    // condition that reads no memory (a reduction, which vectorises), and if
    // so runs a version of the region without the branches it decides, a
    // loop the host compiler can vectorise; else the region as written.
    // Threads run in the same order. The condition is
    // - a guard: the region is `declarations; if (guard) body` (`if (i <
    //   n)`), and the version is the body;
    // - or the conditions of the region's selects (`x = i < n ? a[i] : 0`),
    //   whose loads GCC does not vectorise under a mask where the index is
    //   an int, and the version takes the arm every thread takes.
    std::string condition, ask_declarations, fast;
    bool convex = true;
    std::string unused;  // locals the condition does not read, said to be used (no -Wunused warning for the asking loop)
    if (guard) {
      condition = edited(guard->children[0]->begin, guard->children[0]->end);
      convex = convex_in_block(*guard->children[0]);
      ask_declarations = edited(begin, guard->begin);
      fast = ask_declarations + edited(guard->children[1]->begin, end);
      for (const node* s : st.statements)
        if (s != guard && !hoisted_.count(s))
          for (const auto& c : s->children)
            if (const variable* v = variable_for(c->cursor)) unused += " (void)" + v->name + ";";
    } else {
      // The region's own recomputed locals the conditions read, declared
      // ahead in the asking loop.
      std::set<const variable*> ahead;
      std::function<void(const node&)> ahead_reads = [&](const node& n) {
        if (n.kind == CXCursor_DeclRefExpr)
          if (const variable* v = variable_for(clang_.clang_getCursorReferenced(n.cursor)); v && v->recomputed && v->declared_region == st.region)
            if (ahead.insert(v).second) ahead_reads(*v->initializer);
        for (const auto& c : n.children) ahead_reads(*c);
      };
      std::size_t at = begin;
      for (const select_arm& s : selects) {
        const node& cond = *s.expression->children[0];
        const node& arm = *s.expression->children[s.taken ? 1 : 2];
        ahead_reads(cond);
        condition += std::string(condition.empty() ? "" : " && ") + (s.taken ? "(" : "!(") + edited(cond.begin, cond.end) + ")";
        convex = convex && s.taken && convex_in_block(cond);
        // The arm, converted to the select's type as the select converts it.
        fast += edited(at, s.expression->begin) + "static_cast<decltype(" + edited(s.expression->begin, s.expression->end) + ")>(" +
                edited(arm.begin, arm.end) + ")";
        at = s.expression->end;
      }
      fast += edited(at, end);
      for (const auto& [key, v] : variables_)  // in the source's order, each after those its initializer reads
        if (ahead.count(&v)) {
          const std::string init = edited(v.initializer->begin, v.initializer->end);
          ask_declarations += " " + recomputed_type(v) + " " + v.name + (init.starts_with("{") ? "" : " = ") + init + "; (void)" + v.name + ";";
        }
    }
    for (std::size_t at = 0; (at = fast.find("goto " + next + ";", at)) != std::string::npos;) fast.replace(at + 5, next.size(), next + "_all");
    for (const auto& [key, v] : variables_)  // in the source's order: the same text every run
      if (again.count(&v)) unused += " (void)" + v.name + ";";
    const std::string threads_of_row = thread_loop(enter, true) + prologue + " {" + line;
    const std::string ask = "__ls_block.move_to(__ls_g, __ls_y, __ls_z, " + row_start + " + __ls_g);" + recomputed + line + ask_declarations + "\n" +
                            unused + " __ls_failing |= !(" + condition + "); }\n";
    // A condition that holds on a convex set of threads holds for the whole
    // block when it holds at the block's corners, for a row at its ends (in a
    // scope of its own: a sequence may hold several such regions).
    if (convex)
      out +=
          "{ int __ls_failing_somewhere = 0; for (int __ls_c = 0; __ls_c < 8; ++__ls_c) { int __ls_failing = 0; const int __ls_g = __ls_c & 1 ? "
          "__ls_block.extent_x() - 1 : 0, __ls_y = __ls_c & 2 ? __ls_block.extent_y() - 1 : 0, __ls_z = __ls_c & 4 ? __ls_block.extent_z() - 1 : "
          "0; {" +
          ask + " __ls_failing_somewhere |= __ls_failing; }\n";
    out +=
        "for (int __ls_z = 0; __ls_z < __ls_block.extent_z(); ++__ls_z) for (int __ls_y = 0; __ls_y < __ls_block.extent_y(); ++__ls_y) {"
        " int __ls_failing = 0; " +
        std::string(convex ? "if (__ls_failing_somewhere) " : "") + "for (int __ls_g = 0; __ls_g < __ls_block.extent_x(); " +
        (convex ? "__ls_g = __ls_g == 0 && __ls_block.extent_x() > 2 ? __ls_block.extent_x() - 1 : __ls_g + 1" : "++__ls_g") + ") {" + ask;
    out += "if (!__ls_failing) " + threads_of_row + fast + declared_for_later + "\n} " + next + "_all" + label_end + write_back + " }\n";
    out += "else " + threads_of_row + edited(begin, end) + declared_for_later + "\n} " + next + label_end + write_back + " }\n}\n";
    if (convex) out += "}\n";
  }

  // Whether code of a region may read the thread's record (threadIdx through
  // a device function, printf, an assert): a call, other than the thread
  // coordinates the region reads from its loop, to a function that may.
  bool region_reads_record(const node& n) {
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
  bool reads_record(CXCursor function, int depth = 0, bool block_idx_too = false) {
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
  bool body_reads_record(CXCursor c, int depth, bool block_idx_too) {
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

  // The if statement ending a region that can run its first passing threads
  // without the branch (write_region), else null: every statement before it
  // declares locals computed from the thread's coordinates, and its guard
  // reads no memory and changes nothing, so it can be evaluated ahead.
  const node* prefix_guard(const step& st) {
    const node* guard = st.statements.back();
    if (!st.mask.empty()) return nullptr;
    if (guard->kind != CXCursor_IfStmt || guard->children.size() != 2 || !pure(*guard->children[0])) return nullptr;
    // A guard on the coordinates themselves (`if (threadIdx.x < half)`) the
    // host compiler splits the loop at by itself; one on a local computed
    // from them (`int i = ...; if (i < n)`) it does not.
    const auto reads_computed = [&](const node& n) {
      const variable* v = n.kind == CXCursor_DeclRefExpr ? variable_for(clang_.clang_getCursorReferenced(n.cursor)) : nullptr;
      return v && v->recomputed;
    };
    if (!any_node(*guard->children[0], reads_computed)) return nullptr;
    for (const node* s : st.statements) {
      if (s == guard || hoisted_.count(s)) continue;
      if (s->kind != CXCursor_DeclStmt) return nullptr;
      for (const auto& c : s->children) {
        const variable* v = variable_for(c->cursor);
        if (!v || !v->recomputed || !pure(*v->initializer)) return nullptr;
      }
    }
    // The guard's text is cut out of the statement: no rewrite may span the cut.
    return cut_free(guard->children[1]->begin) ? guard : nullptr;
  }
  // A select (`c ? x : y`) of a region that write_region can decide per
  // row: its condition reads no memory and nothing the region changes, so
  // it can be asked of the row's threads ahead, and the arm it keeps (x
  // where `taken`, else y) reads memory, which GCC does not vectorise
  // under a mask where the index is an int.
  struct select_arm {
    const node* expression;
    bool taken;
  };
  // Those the region evaluates whatever its threads do: in its statements up
  // to the first that is not a declaration or an expression, outside the
  // arms of selects and the right sides of && and ||, in source order.
  std::vector<select_arm> select_arms(const step& st) {
    std::vector<select_arm> found;
    if (!st.mask.empty() || st.expressions || !st.code.empty()) return found;
    const auto changed_here = [&](const node& n) {
      return any_node(n, [&](const node& e) {
        const variable* v = e.kind == CXCursor_DeclRefExpr ? variable_for(clang_.clang_getCursorReferenced(e.cursor)) : nullptr;
        return v && std::any_of(v->refs.begin(), v->refs.end(), [&](const reference& r) { return r.write && r.region == st.region; });
      });
    };
    std::function<void(const node&)> visit = [&](const node& n) {
      if (n.kind == CXCursor_LambdaExpr || n.kind == CXCursor_StmtExpr) return;
      if (n.kind == CXCursor_ConditionalOperator) {
        if (n.children.size() != 3) return;
        const node &cond = *n.children[0], &x = *n.children[1], &y = *n.children[2];
        // Written out in this file as `cond ? x : y` (not by a macro), so its arm's text can stand for it.
        if (!(n.begin <= cond.begin && cond.end <= x.begin && x.end <= y.begin && y.end <= n.end && trimmed(text(cond.end, x.begin)) == "?" &&
              trimmed(text(x.end, y.begin)) == ":"))
          return;
        const bool taken = !pure(x);
        if ((taken || !pure(y)) && pure(cond) && reads_coordinates(cond, 0) && !changed_here(cond) &&
            !any_node(n, [](const node& e) { return e.kind == CXCursor_LambdaExpr; }) && cut_free(n.begin) && cut_free(n.end) && cut_free(x.begin) &&
            cut_free(x.end) && cut_free(y.begin) && cut_free(y.end))
          found.push_back({&n, taken});
        return;  // its arms run for some threads only; its condition is not a select's arm
      }
      if (n.kind == CXCursor_BinaryOperator && n.children.size() == 2) {
        const std::string_view op = trimmed(text(n.children[0]->end, n.children[1]->begin));
        if (op == "&&" || op == "||") return visit(*n.children[0]);
      }
      for (const auto& c : n.children) visit(*c);
    };
    for (const node* s : st.statements) {
      if (s->kind != CXCursor_DeclStmt && !clang_.clang_isExpression(s->kind)) break;
      if (!hoisted_.count(s)) visit(*s);
    }
    return found;
  }
  // Whether a node or one below it holds.
  static bool any_node(const node& n, const std::function<bool(const node&)>& holds) {
    return holds(n) || std::any_of(n.children.begin(), n.children.end(), [&](const auto& c) { return any_node(*c, holds); });
  }
  // Whether the text can be cut at an offset: no rewrite spans it.
  bool cut_free(std::size_t at) const {
    for (auto it = edits_.begin(); it != edits_.end() && it->first < at; ++it)
      if (it->second.first > at) return false;
    return true;
  }

  // Whether a pure guard holds on a convex set of thread coordinates: then
  // it holds for every thread of a box (the block, a row) where it holds at
  // the box's corners. So is a conjunction of comparisons (<, <=, >, >=)
  // between expressions affine in the coordinates in signed integer
  // arithmetic, which does not wrap (`int i = blockIdx.x * blockDim.x +
  // threadIdx.x; if (i < n)`). Unsigned arithmetic wraps, so `unsigned i =
  // threadIdx.x - 5; if (i >= 3)` fails in the middle of a row only: such a
  // guard is asked of every thread.
  bool convex_in_block(const node& n) {
    if (n.kind == CXCursor_ParenExpr && n.children.size() == 1) return convex_in_block(*n.children[0]);
    if (n.kind != CXCursor_BinaryOperator || n.children.size() != 2) return false;
    const std::string_view op = trimmed(text(n.children[0]->end, n.children[1]->begin));
    if (op == "&&") return convex_in_block(*n.children[0]) && convex_in_block(*n.children[1]);
    if (op != "<" && op != "<=" && op != ">" && op != ">=") return false;
    return in_coordinates(*n.children[0]) != variation::other && in_coordinates(*n.children[1]) != variation::other;
  }
  enum class variation { constant, affine, other };
  variation in_coordinates(const node& n, int depth = 0) {
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
              return in_coordinates(*from.children[term == from.children[0]], depth + 1) == variation::constant ? variation::affine
                                                                                                                : variation::other;
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
        if (thread_idx_call(from))
          return clang_.clang_Type_getSizeOf(clang_.clang_getCursorType(n.cursor)) >= 2 ? variation::affine : variation::other;
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
  // Whether converting `from` to `to`'s type keeps a signed value: the type is at least as wide.
  bool keeps_value(const node& to, const node& from) const {
    const long long from_bytes = clang_.clang_Type_getSizeOf(clang_.clang_getCursorType(from.cursor));
    return from_bytes > 0 && from_bytes <= clang_.clang_Type_getSizeOf(clang_.clang_getCursorType(to.cursor));
  }
  // The expression inside parentheses and implicit conversions.
  static const node* unwrapped(const node* e) {
    while ((e->kind == CXCursor_ParenExpr || e->kind == CXCursor_UnexposedExpr) && e->children.size() == 1) e = e->children[0].get();
    return e;
  }
  // The call to lockstep::emu::`builtin` (builtin_thread_idx, ...) under
  // `member`, a read of its .x (or of .y or .z too, unless x_only), else null.
  const node* builtin_member_call(const node& member, std::string_view builtin, bool x_only) {
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
  const node* thread_idx_call(const node& n) { return builtin_member_call(*unwrapped(&n), "builtin_thread_idx", false); }
  // ---- blocks along x run as one (loop_claim, lockstep/emu/region_loops.h) ----

  // An integer conversion or cast to 32 bits or more, or parentheses: what
  // `static_cast<long long>(threadIdx.x)` and `(int)blockIdx.x` are wrapped in.
  bool keeps_index(const node& n) const {
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
  const node* under_index_casts(const node* n) const {
    while (keeps_index(*n)) n = n->children.back().get();
    return n;
  }
  // The call to lockstep's built-in `builtin` (builtin_block_idx, ...) when
  // n reads its member x (integer casts of 32 bits or more around it), else null.
  const node* x_of(const node& n, std::string_view builtin) { return builtin_member_call(*under_index_casts(&n), builtin, true); }
  // For `threadIdx.x` (the MemberRefExpr) in `blockIdx.x * blockDim.x +
  // threadIdx.x` (either order, integer casts of 32 bits or more around any
  // part), the product's node, else null.
  const node* global_index_product(const node& member) {
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
  bool blocks_run_along_x(const node& body) {
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
  // The bytes each thread's arrays take on the loop stack: per-thread variables, masks, exit flags.
  unsigned bytes_per_thread(const sequence& top) const {
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

  bool reads_coordinates(const node& n, int depth) {
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
  bool pure(const node& n) {
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
  const node* offset_term(const node& call) {
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
  bool offset_local(const node& ref) {
    if (ref.kind != CXCursor_DeclRefExpr || clang_.clang_getCanonicalType(clang_.clang_getCursorType(ref.cursor)).kind != CXType_Int) return false;
    const variable* v = variable_for(clang_.clang_getCursorReferenced(ref.cursor));
    return v && v->recomputed && in_coordinates(ref) == variation::affine && term_of_int_sum(ref);
  }
  // Whether an expression is a term of an unsigned 32-bit sum whose other
  // term the block shares and which the program converts to int at once
  // (`int i = ...`).
  bool term_of_int_sum(const node& written) {
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

  // The lanes' calls of a collective step's i-th call (loop_lane_call), and `_arrived`.
  std::string collective_slot(const node* statement, std::size_t i) const {
    return "__ls_calls_" + std::to_string(region_of_statement_.at(statement)) + "_" + std::to_string(i);
  }

  std::string result_type(CXCursor function) const { return clang_.string(clang_.clang_getTypeSpelling(clang_.clang_getCursorResultType(function))); }
  // A function's (or function template's) parameters, in order.
  static std::vector<const node*> parameters_of(const node& function) {
    std::vector<const node*> out;
    for (const auto& c : function.children)
      if (c->kind == CXCursor_ParmDecl) out.push_back(c.get());
    return out;
  }
  // A function template's head (`template <reduce_op Op, class A>`) and the
  // arguments that name its parameters (`<Op, A>`); both empty for a function.
  std::pair<std::string, std::string> template_head(const node& function) const {
    if (clang_.clang_getCursorKind(function.cursor) != CXCursor_FunctionTemplate) return {};
    std::size_t i = token_at(function.begin);
    if (!tokens_[i].is("template") || !tokens_[i + 1].is("<")) throw declined{"a template head written through a macro"};
    for (int depth = 0; ++i < tokens_.size();) {
      depth += tokens_[i].is("<") - tokens_[i].is(">") - 2 * tokens_[i].is(">>");
      if (depth <= 0) break;
    }
    if (i >= tokens_.size()) throw declined{"a template head that lockstep cannot read"};
    std::string names;
    for (const auto& c : function.children) {
      if (c->kind != CXCursor_TemplateTypeParameter && c->kind != CXCursor_NonTypeTemplateParameter && c->kind != CXCursor_TemplateTemplateParameter)
        continue;
      const std::string name = clang_.string(clang_.clang_getCursorSpelling(c->cursor));
      if (name.empty()) throw declined{"a template parameter without a name"};
      names += (names.empty() ? "" : ", ") + name + (text(c->begin, c->end).find("...") != std::string_view::npos ? "..." : "");
    }
    return {std::string(text(function.begin, tokens_[i].end_offset())), "<" + names + ">"};
  }

  // A local array of one T per thread (lockstep/emu/region_loops.h), on the loop stack.
  static std::string per_thread_array(int index, const std::string& type) {
    const std::string i = std::to_string(index);
    return "::lockstep::emu::loop_slot<" + type + "> __ls_cells_" + i + "[__ls_block.threads()]; auto* __ls_" + i +
           " = ::lockstep::emu::loop_slots<" + type + ">(__ls_cells_" + i + ");\n";
  }
  // A type deduced by `auto` is spelled as its canonical type, whose scopes
  // are all written (the deduced spelling may leave the outer ones out).
  std::string type_of(const variable& v) const {
    const CXType type = clang_.clang_getCursorType(v.decl);
    const std::string spelled = clang_.string(clang_.clang_getTypeSpelling(type));
    if (type.kind != CXType_Auto) return spelled;
    const std::string canonical = clang_.string(clang_.clang_getTypeSpelling(clang_.clang_getCanonicalType(type)));
    return canonical.find("type-parameter") == std::string::npos ? canonical : spelled;
  }
  // A type the generated code cannot spell: a lambda's, an unnamed struct's or enum's.
  static bool unnamed_type(const std::string& type) {
    return type.find("(lambda") != std::string::npos || type.find("(unnamed") != std::string::npos || type.find("(anonymous") != std::string::npos;
  }
  std::string recomputed_type(const variable& v) const {
    const std::string type = type_of(v);
    return type.find("auto") != std::string::npos ? "auto" : type;
  }

  // Locals that each region can compute again from the thread's coordinates
  // (`int row = blockIdx.y * 16 + threadIdx.y;`): never changed, no address
  // taken, initialised without reading memory, from uniform values that do
  // not change between the declaration and its uses. Computed again in every
  // region that reads them, they take no per-thread array, and an index built
  // from them stays one the host compiler sees is linear in the thread, so it
  // can vectorise the region's loop.
  void decide_recomputed() {
    for (auto& [key, v] : variables_)
      v.recomputed = v.closure || (!v.uniform && !v.static_storage && !v.parameter && v.sequence_level && v.declared_region >= 0 && v.initializer &&
                                   std::none_of(v.refs.begin(), v.refs.end(), [](const reference& r) { return r.write; }) &&
                                   can_live_in_register(v) && !is_array(v) && !unnamed_type(type_of(v)));
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
  bool inputs_stay(const node& n, const node& declaration) {
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
  bool can_live_in_register(const variable& v) const {
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
  bool array_of_records(const variable& v) const {
    CXType element = clang_.clang_getCanonicalType(clang_.clang_getCursorType(v.decl));
    while (element.kind == CXType_ConstantArray) element = clang_.clang_getCanonicalType(clang_.clang_getArrayElementType(element));
    return element.kind == CXType_Record;
  }
  bool is_array(const variable& v) const { return clang_.clang_getCanonicalType(clang_.clang_getCursorType(v.decl)).kind == CXType_ConstantArray; }
  // An array of scalars (of any rank) that every reference subscripts down
  // to an element whose address is not taken, or hands whole to a call (a
  // reference parameter, alive only during the call); no lambda captures it.
  bool elements_only(const variable& v) const {
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

  // Returns, breaks and continues in regions; the rewrites of declarations.
  void plan_region_statements(const node& n, int region, bool last_region, bool in_lambda, int loops_inside) {
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

  // A kernel gets its loop body in front of its own; a device function with
  // barriers gets a block variant, `name__ls_block`, defined after it.
  // Updates are first tried as block steps; those that turn out to differ
  // between threads (`x = threadIdx.x;`) stay in their regions on the next
  // try, until the rest hold or none is left.
  std::vector<source_edit> split_function(CXCursor function_cursor) {
    kept_in_regions_.clear();
    uniform_parameters_.clear();
    hoist_updates_ = true;
    interchange_ = true;
    for (;;) {
      try {
        return split_function_once(function_cursor);
      } catch (const uniform_parameters_needed& found) {
        uniform_parameters_.insert(found.keys.begin(), found.keys.end());
      } catch (const per_thread_updates& found) {
        kept_in_regions_.insert(found.statements.begin(), found.statements.end());
      } catch (const per_thread_loops& found) {
        kept_in_regions_.insert(found.loops.begin(), found.loops.end());
      } catch (const declined&) {
        // Whatever declined it, the kernel is tried again as before: loops
        // in their regions, then updates too.
        if (interchange_) {
          interchange_ = false;
          continue;
        }
        break;
      }
    }
    hoist_updates_ = false;
    return split_function_once(function_cursor);
  }
  std::vector<source_edit> split_function_once(CXCursor function_cursor) {
    const bool kernel = is_kernel(function_cursor);
    lanes_ = false;
    const CXSourceRange range = clang_.clang_getCursorExtent(function_cursor);
    kernel_begin_ = offset_of(clang_.clang_getRangeStart(range));
    kernel_end_ = offset_of(clang_.clang_getRangeEnd(range));
    const std::unique_ptr<node> function = make_node(function_cursor, nullptr);
    const node* body = function->children.empty() ? nullptr : function->children.back().get();
    // A kernel without barriers runs as one region, one loop over the block's
    // threads that the host compiler can vectorise; a device function
    // without them needs no block variant.
    if (!body || body->kind != CXCursor_CompoundStmt ||
        (!kernel && !contains_synchronization(*body) && !(interchange_ && holds_interchange(*body, true))))
      return {};
    if (text(body->begin, body->begin + 1) != "{") throw declined{"a body written through a macro"};
    decline_warp_level(*body);
    // A value-returning device function that waits (a warp sum, a block
    // reduction) gets a lanes variant, `name__ls_lanes`: the block calls it
    // once, with each calling lane's arguments and a flag for the lanes that
    // call; it runs the body for those lanes and leaves each one's answer
    // (loop_lanes_call, lockstep/emu/region_loops.h; a caller's collective
    // step, lanes_call). Lanes that do not call are exited from its start.
    // One that waits at a block barrier is called only where a barrier may
    // stand (lanes_block_).
    const std::string result = result_type(function_cursor);
    lanes_ = !kernel && result != "void";
    lanes_block_ = false;
    if (lanes_) {
      const CXCursorKind kind = clang_.clang_getCursorKind(function_cursor);
      if (kind != CXCursor_FunctionDecl && kind != CXCursor_FunctionTemplate)
        throw declined{"a member function that returns a value and waits (free functions and their templates are called for the calling lanes)"};
      if (result.find('&') != std::string::npos || result.find("auto") != std::string::npos || unnamed_type(result))
        throw declined{"it waits and returns " + result + ", which the lanes' results cannot be kept as"};
      for (const node* parameter : parameters_of(*function)) {
        const std::string type = clang_.string(clang_.clang_getTypeSpelling(clang_.clang_getCursorType(parameter->cursor)));
        if (type.find('&') != std::string::npos || unnamed_type(type)) throw declined{"a parameter (" + type + ") that is not a value"};
        if (clang_.string(clang_.clang_getCursorSpelling(parameter->cursor)).empty()) throw declined{"a parameter without a name"};
      }
      lanes_block_ = !waits_only_in_warps(*body);
    }

    // lockstep nvcc's test for a call outside a launch stays first.
    std::vector<const node*> statements = children_of(*body);
    std::size_t insert_at = body->begin + 1;
    if (kernel && !statements.empty() &&
        text(statements.front()->begin, statements.front()->end).find("kernel_called_unlaunched") != std::string_view::npos) {
      insert_at = statement_end(*statements.front());
      statements.erase(statements.begin());
    }

    regions_ = 0;
    along_x_ = false;
    region_of_statement_.clear();
    loops_.clear();
    header_increments_.clear();
    interchanged_.clear();
    loop_calls_.clear();
    in_masked_arm_.clear();
    masks_.clear();
    branches_.clear();
    block_calls_.clear();
    variables_.clear();
    edits_.clear();
    hoisted_.clear();
    returns_.clear();
    first_return_ = std::string::npos;
    updates_.clear();
    collectives_.clear();
    collective_plans_.clear();
    answered_.clear();
    exit_flags_ = false;
    const std::unique_ptr<sequence> top = build_sequence(statements);
    collect_declarations(*function);
    collect_references(*function, false);
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
    const std::vector<const node*> block_level = block_level_expressions();
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

    decide_recomputed();
    // Interchanged loops whose bodies reach memory scattered across a row's
    // threads stay whole in each thread (split again without them).
    for (const node* loop : interchanged_)
      if (scattered_across_threads(*loop->children.back())) differing.loops.push_back(loop->begin);
    if (!differing.loops.empty()) throw differing;
    // Per-thread variables: a thread's values that a later region reads.
    int next_index = 0;
    for (auto& [key, v] : variables_) {
      if (v.uniform || v.static_storage || v.recomputed) continue;
      const bool crosses = std::any_of(v.refs.begin(), v.refs.end(), [&](const reference& r) { return r.region != v.declared_region; });
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
      v.in_register = is_array(v) ? bytes > max_per_thread_array_bytes && can_live_in_register(v) : can_live_in_register(v);
      // (An array of objects, wmma's fragments, stays in the block's arrays:
      // its warp reads each lane's there.)
      if (is_array(v) && bytes > max_per_thread_array_bytes && !v.in_register && !array_of_records(v))
        throw declined{"'" + v.name + "' (" + std::to_string(bytes) +
                       " bytes) is an array each thread keeps across a barrier and reaches other than by its elements: in the block's "
                       "arrays its elements would stay memory, faster on fibers"};
      v.index = next_index++;
    }

    // Returns and breaks; which declarations leave the regions.
    // (A collective step's statement is a lanes variant's return of a call's answer.)
    for (std::size_t i = 0; i < top->steps.size(); ++i)
      if (top->steps[i].k == step::kind::region)
        for (const node* s : top->steps[i].statements) plan_region_statements(*s, top->steps[i].region, i + 1 == top->steps.size(), false, 0);
      else if (top->steps[i].k == step::kind::collective)
        plan_region_statements(*top->steps[i].statement, top->steps[i].region, i + 1 == top->steps.size(), false, 0);
    std::function<void(const sequence&)> plan_nested = [&](const sequence& seq) {
      for (const step& st : seq.steps) {
        if (st.k == step::kind::region && &seq != top.get())
          for (const node* s : st.statements) plan_region_statements(*s, st.region, false, false, 0);
        if (st.k == step::kind::collective && &seq != top.get()) plan_region_statements(*st.statement, st.region, false, false, 0);
        if (st.body) plan_nested(*st.body);
        if (st.otherwise) plan_nested(*st.otherwise);
      }
    };
    plan_nested(*top);
    exit_flags_ = exit_flags_ || lanes_;
    if (exit_flags_ && !block_calls_.empty())
      throw declined{"a thread may return before a call of a function with barriers, which runs for the whole block"};
    for (const auto& [ret, region] : returns_)
      if (!lanes_)
        edit(ret->begin, statement_end(*ret),
             std::string("{ ") + (exit_flags_ ? "__ls_exited[__ls_t] = true; " : "") + "goto __ls_next_" + std::to_string(region) + "; }");

    for (const auto& [k, v] : variables_)
      if (v.static_storage && !v.sequence_level)
        throw declined{"the __shared__ or static '" + v.name + "' is declared inside a statement (" + line_of(*v.var_decl) + ")"};
    std::string moved_statics;
    std::vector<source_edit> tu_edits;
    for (const auto& [statement, region] : region_of_statement_) {
      if (statement->kind != CXCursor_DeclStmt) continue;
      bool any_variable = false, all_static = true, all_shared = true, any_per_thread = false;
      for (const auto& c : statement->children) {
        const variable* v = c->kind == CXCursor_VarDecl ? variable_for(c->cursor) : nullptr;
        if (!v) continue;
        any_variable = true;
        all_static &= v->static_storage;
        all_shared &= v->uniform || v->static_storage;
        any_per_thread |= v->per_thread;
      }
      if (any_variable && all_static && kernel) {
        // __shared__ arrays (and other statics) go in front of both bodies,
        // so that both use the one array: its size names no local.
        for (const auto& [k, other] : variables_)
          for (const reference& r : other.refs)
            if (!other.static_storage && r.ref->begin >= statement->begin && r.ref->end <= statement->end)
              throw declined{"a __shared__ or static declaration that names the local '" + other.name + "' (" + line_of(*statement) + ")"};
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
        moved_statics +=
            line_directive(clang_.clang_getCursorLocation(statement->cursor)) + std::string(text(statement->begin, statement_end(*statement))) + "\n";
        edit(statement->begin, statement_end(*statement), "");
        tu_edits.push_back({statement->begin, statement_end(*statement), ""});
      } else if (all_shared) {
        // Computed once for the block, before the region's loop.
        hoisted_[statement] = std::string(text(statement->begin, statement_end(*statement)));
        edit(statement->begin, statement_end(*statement), "");
      } else if (any_per_thread) {
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

    // The block's coordinates, read from the loop rather than the thread's record.
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
    coordinates(*body);

    // Each collective step's gathering runs its calls as written (a shuffle
    // stores its value), the block answers them, and its statement then
    // reads each lane's answer in place of each call.
    for (const node* statement : collectives_) {
      collective_plan& plan = collective_plans_.at(statement);
      const bool arrivals = plan.masked || exit_flags_;  // else every thread of the block makes the calls
      for (std::size_t i = 0; i < plan.calls.size(); ++i) {
        const node& call = *plan.calls[i];
        const std::string slot = collective_slot(statement, i), written = edited(call.begin, call.end);
        const std::string arrived =
            "unsigned char " + slot + "_arrived[__ls_block.threads()]; ::std::memset(" + slot + "_arrived, 0, __ls_block.threads()); ";
        const std::vector<const node*> arguments = arguments_of(call);
        if (const std::string vote = block_vote(call); !vote.empty()) {
          // Each thread's predicate, then the block's answer (a vote of the threads that came).
          plan.arrays += (arrivals ? arrived : "") + "int " + slot + "[__ls_block.threads()]; int " + slot + "_answer;\n";
          plan.gathering += slot + "[__ls_t] = (" + edited(arguments.front()->begin, arguments.front()->end) + ") != 0;" +
                            (arrivals ? " " + slot + "_arrived[__ls_t] = 1;" : "");
          plan.answering += slot + "_answer = ::lockstep::emu::loop_block_vote(__ls_block, ::lockstep::emu::barrier_reduce::" + vote + ", " + slot +
                            ", " + (arrivals ? slot + "_arrived" : "nullptr") + ");\n";
          edit(call.begin, call.end, slot + "_answer");
          continue;
        }
        if (const unsigned size = tile_reduce_size(call)) {
          // Each lane's value, then each tile's butterfly, by its first lane, as the statement reads it.
          const std::string value = "::std::remove_cv_t<decltype(" + written + ")>";
          plan.arrays += "::std::uint64_t " + slot + "[__ls_block.threads()]; " + (arrivals ? arrived : "") + "\n";
          plan.gathering += slot + "[__ls_t] = ::lockstep::emu::to_bits(static_cast<" + value + ">(" +
                            edited(arguments[1]->begin, arguments[1]->end) + "));" + (arrivals ? " " + slot + "_arrived[__ls_t] = 1;" : "");
          if (arrivals) plan.answering += "::lockstep::emu::loop_tile_whole(__ls_block, " + slot + "_arrived, " + std::to_string(size) + ");\n";
          edit(call.begin, call.end,
               "::lockstep::emu::loop_tile_reduce<" + value + ">(" + slot + ", __ls_block, __ls_t, " + std::to_string(size) + ", " +
                   edited(arguments[2]->begin, arguments[2]->end) + ")");
          continue;
        }
        if (replayed_call(call)) {
          // Recorded, answered, then the statement as written, each lane's call returning its answer.
          plan.arrays += "::lockstep::emu::loop_lane_call " + slot + "[__ls_block.threads()]; " + arrived + "\n";
          plan.gathering += "::lockstep::emu::loop_gather_into(" + slot + ", " + slot + "_arrived); (void)(" + written + ");";
          if (const node* member = callee_expression(call);
              member && member->kind == CXCursor_MemberRefExpr && member_name(*member).starts_with("shfl"))
            plan.gathering += " static_assert(sizeof(decltype(" + written + ")) <= 8, \"a shuffle of more than 8 bytes meets its warp in pieces\");";
          plan.gathering_enters = plan.replays = true;
          plan.answering += "::lockstep::emu::loop_answer_warps(__ls_block, " + slot + ", " + slot +
                            "_arrived);\n::lockstep::emu::loop_replay_from(" + slot + ");\n";
          plan.after += "::lockstep::emu::loop_replay_from(nullptr);\n";
          continue;
        }
        if (!gathered_call(call)) {
          // A device function's lanes variant: each calling lane's arguments
          // (name__ls_enter, with the call's own template arguments), then the
          // variant once for the block, then the lane's result.
          const node* ref = callee_expression(call);
          const std::size_t name_at = offset_of(clang_.clang_getCursorLocation(ref->cursor));
          const std::string name = call_name(call);
          if (name.empty() || text(name_at, name_at + name.size()) != name) throw declined{"a call written through a macro (" + line_of(call) + ")"};
          const std::size_t open = parameters_open(name_at + name.size()), after_open = tokens_[open].end_offset();
          plan.arrays += arrived + "::lockstep::emu::loop_lanes_call " + slot + "(__ls_block.threads());\n";
          plan.gathering += edited(call.begin, name_at) + name + "__ls_enter" + edited(name_at + name.size(), after_open) +
                            with_first_argument(open, slot + ", __ls_t") + edited(after_open, call.end) + "; " + slot + "_arrived[__ls_t] = 1;";
          plan.answering += slot + ".run(__ls_block, " + slot + "_arrived);\n";
          edit(call.begin, call.end, slot + ".result<::std::remove_cv_t<decltype(" + written + ")>>(__ls_t)");
          continue;
        }
        const std::string op = arguments.size() == 3 || arguments.size() == 4 ? shuffle_op(call_name(call)) : "";
        if (op.empty()) {
          // Any collective: warp_collective records each lane's call (loop_gather_into).
          plan.arrays += "::lockstep::emu::loop_lane_call " + slot + "[__ls_block.threads()]; " + arrived + "\n";
          plan.gathering += "::lockstep::emu::loop_gather_into(" + slot + ", " + slot + "_arrived); (void)(" + written + ");";
          plan.gathering_enters = true;
          plan.answering += "::lockstep::emu::loop_answer_warps(__ls_block, " + slot + ", " + slot + "_arrived);\n";
          edit(call.begin, call.end, "::lockstep::emu::loop_answer<decltype(" + written + ")>(" + slot + ", __ls_t)");
          continue;
        }
        // A shuffle: each lane's value, then its source lane's.
        const std::string lanes = arrivals ? slot + "_lanes" : "nullptr";
        plan.arrays += "::std::uint64_t " + slot + "[__ls_block.threads()]; " +
                       (arrivals ? arrived + "unsigned " + lanes + "[(__ls_block.threads() + 31) / 32]; " : "");
        plan.gathering += slot + "[__ls_t] = ::lockstep::emu::to_bits(" + edited(arguments[1]->begin, arguments[1]->end) + ");" +
                          (arrivals ? " " + slot + "_arrived[__ls_t] = 1;" : "");
        if (arrivals) plan.answering += "::lockstep::emu::loop_warp_lanes(__ls_block, " + slot + "_arrived, " + lanes + ");\n";
        std::string rest;  // the mask, lane argument and width
        for (std::size_t a = 0; a < arguments.size(); ++a)
          if (a != 1) rest += ", " + edited(arguments[a]->begin, arguments[a]->end);
        if (std::all_of(arguments.begin(), arguments.end(), [&](const node* a) { return a == arguments[1] || uniform(*a); })) {
          plan.arrays += "::std::uint64_t " + slot + "_answers[__ls_block.threads()];\n";
          plan.answering += "::lockstep::emu::loop_shuffle_warps<::lockstep::emu::warp_op::" + op + ">(" + slot + ", " + slot + "_answers, " + lanes +
                            ", __ls_block" + rest + ");\n";
          edit(call.begin, call.end, "::lockstep::emu::loop_answer_bits<decltype(" + written + ")>(" + slot + "_answers, __ls_t)");
          continue;
        }
        plan.arrays += "unsigned " + slot + "_misused = 0;\n";
        plan.after += "if (" + slot + "_misused) ::lockstep::emu::loop_collective_misused();\n";
        edit(call.begin, call.end,
             "::lockstep::emu::loop_shuffle<decltype(" + written + ")>(::lockstep::emu::warp_op::" + op + ", " + slot + ", " + lanes +
                 ", __ls_block, __ls_t, " + slot + "_misused" + rest + ")");
      }
    }

    // A lanes variant's return leaves the lane's answer and exits the lane
    // (written last: the value is read with the rewrites inside it).
    for (const auto& [ret, region] : returns_)
      if (lanes_) {
        if (ret->children.empty()) throw declined{"a return without a value (" + line_of(*ret) + ")"};
        const node& value = *ret->children.back();
        edit(ret->begin, statement_end(*ret),
             "{ __ls_results[__ls_t] = (" + edited(value.begin, value.end) + "); __ls_exited[__ls_t] = true; goto __ls_next_" +
                 std::to_string(region) + "; }");
      }

    // A kernel's loops run on the loop stack, where the per-thread arrays are.
    // Its parameters go there as the lambda's own, of the same names: read
    // through the closure, they would be reloaded after every call the host
    // compiler cannot see into (an atomic in a loop, say).
    std::string parameters, arguments;
    for (const auto& [key, v] : variables_) {
      if (!v.parameter || v.name.empty()) continue;
      if (type_of(v).find("...") != std::string::npos) {  // a pack: stays in the closure
        parameters.clear(), arguments.clear();
        break;
      }
      parameters += (parameters.empty() ? "" : ", ") + ("decltype(" + v.name + ") ") + v.name;
      arguments += ", " + v.name;
    }
    // The loops' lambda is built without loop distribution into library
    // calls: a row's copy (`tile[ty][tx] = a[...]`, a select decided for the
    // row) would become a call of memcpy per row, slower than the vector
    // loop for a row's few hundred bytes (the bench's block sum 2.7 -> 1.5
    // ms a launch). Other host compilers ignore the attribute, with a warning.
    const std::string body_attributes = " __attribute__((optimize(\"no-tree-loop-distribute-patterns\")))";
    std::string out;
    if (!kernel)
      out = "\n::lockstep::emu::loop_block __ls_block = __ls_caller;\n";
    else if ((along_x_ = blocks_run_along_x(*body)))
      out = moved_statics + "\nif (const unsigned __ls_blocks = ::lockstep::emu::loop_claim_block({true, " + std::to_string(bytes_per_thread(*top)) +
            "})) {\n::lockstep::emu::loop_on_block_stack([&](" + parameters + ")" + body_attributes +
            " {\n::lockstep::emu::loop_block __ls_block(__ls_blocks);\n";
    else
      out = moved_statics + "\nif (::lockstep::emu::loop_claim_block()) {\n::lockstep::emu::loop_on_block_stack([&](" + parameters + ")" +
            body_attributes + " {\n::lockstep::emu::loop_block __ls_block;\n";
    if (exit_flags_) out += "bool __ls_exited[__ls_block.threads()]; ::std::memset(__ls_exited, 0, sizeof(bool) * __ls_block.threads());\n";
    if (lanes_) out += thread_loop("move_to") + " __ls_exited[__ls_t] = !__ls_calling[__ls_t]; }\n";
    for (const auto& [key, v] : variables_) {
      if (!v.parameter || !(v.per_thread || (lanes_ && v.uniform))) continue;
      const std::string slot = "__ls_" + std::to_string(v.index) + "[__ls_t]";
      if (!lanes_) {
        out += per_thread_array(v.index, "decltype(" + v.name + ")") + thread_loop("move_to") + " " + slot + " = " + v.name + "; }\n";
        continue;
      }
      // A calling lane's argument, from its place in the lane's tuple; one
      // that every calling lane passes alike, once for the block.
      const std::vector<const node*> parameters = parameters_of(*function);
      std::size_t position = 0;
      const std::size_t declared_at = offset_of(clang_.clang_getCursorLocation(v.decl));
      while (position < parameters.size() && offset_of(clang_.clang_getCursorLocation(parameters[position]->cursor)) != declared_at) ++position;
      if (v.uniform)
        out += "const auto " + v.name + " = ::lockstep::emu::loop_uniform_argument<" + std::to_string(position) +
               ">(__ls_block, __ls_calling, __ls_arguments);\n";
      else
        out += per_thread_array(v.index, type_of(v)) + thread_loop("move_to") + " if (__ls_calling[__ls_t]) " + slot + " = ::std::get<" +
               std::to_string(position) + ">(__ls_arguments[__ls_t]); }\n";
    }
    write_sequence(*top, out);
    if (!kernel) {
      // The variant: the function's head, renamed, with the loop body.
      const std::size_t name_at = offset_of(clang_.clang_getCursorLocation(function_cursor));
      const std::string name = clang_.string(clang_.clang_getCursorSpelling(function_cursor));
      if (text(name_at, name_at + name.size()) != name) throw declined{"a function named through a macro"};
      if (lanes_) {
        lanes_uniform_positions_[variant_usr(function_cursor)] = uniform_positions(*function);
        // The variant, then `name__ls_enter`: the function's own parameter
        // list, which stores a calling lane's arguments for it.
        const auto [head, names] = template_head(*function);
        const std::size_t open = parameters_open(name_at + name.size());
        std::size_t close = open;
        for (int depth = 0; close < tokens_.size(); ++close) {
          depth += tokens_[close].is("(") - tokens_[close].is(")");
          if (depth == 0) break;
        }
        std::string types, passed;
        for (const node* parameter : parameters_of(*function)) {
          types += std::string(types.empty() ? "" : ", ") + "::std::remove_cv_t<" +
                   clang_.string(clang_.clang_getTypeSpelling(clang_.clang_getCursorType(parameter->cursor))) + ">";
          passed += ", " + clang_.string(clang_.clang_getCursorSpelling(parameter->cursor));
        }
        const std::string arguments_type = "::std::tuple<" + types + ">", results_type = "::std::remove_cv_t<" + result + ">";
        const std::string variant = head + " static inline void " + name +
                                    "__ls_lanes(const ::lockstep::emu::loop_block& __ls_caller, const unsigned char* __ls_calling, const " +
                                    arguments_type + "* __ls_arguments, " + results_type + "* __ls_results) {" + out + "}\n";
        const bool none = close == open + 1 || (close == open + 2 && tokens_[open + 1].is("void"));
        const std::string enter = head + " static inline void " + name + "__ls_enter(::lockstep::emu::loop_lanes_call& __ls_call, unsigned __ls_t" +
                                  (none ? "" : ", " + std::string(text(tokens_[open].end_offset(), tokens_[close].offset))) + ") { __ls_call.put<" +
                                  arguments_type + ", " + results_type + ">(__ls_t, " + name + "__ls_lanes" + names + passed + "); }\n";
        return {
            {kernel_end_, kernel_end_,
             line_directive(clang_.clang_getCursorLocation(function_cursor)) + variant + enter + line_directive(clang_.clang_getRangeEnd(range))}};
      }
      const std::size_t open = parameters_open(name_at + name.size()), after_open = tokens_[open].end_offset();
      std::size_t rest = after_open;
      if (tokens_[open + 1].is("void") && tokens_[open + 2].is(")")) rest = tokens_[open + 1].end_offset();
      std::string variant = line_directive(clang_.clang_getCursorLocation(function_cursor)) + std::string(text(kernel_begin_, name_at)) + name +
                            "__ls_block" + std::string(text(name_at + name.size(), after_open)) +
                            with_first_argument(open, "const ::lockstep::emu::loop_block& __ls_caller") + std::string(text(rest, body->begin)) + "{" +
                            out + "}\n";
      if (blocks_run_along_x(*body)) along_x_variants_.insert(variant_usr(function_cursor));
      return {{kernel_end_, kernel_end_, std::move(variant) + line_directive(clang_.clang_getRangeEnd(range))}};
    }
    out += "\n}" + arguments + ");\nreturn;\n}";
    // The rest of the line the insertion splits keeps its number.
    out += line_directive(clang_.clang_getCursorLocation(body->cursor));
    tu_edits.push_back({insert_at, insert_at, std::move(out)});
    return tu_edits;
  }

  const libclang_api& clang_;
  const std::string& text_;
  CXTranslationUnit tu_;
  // As this libclang numbers it: 300 up to LLVM 15, 350 from LLVM 16 (the
  // statements' kinds grew past 300), whatever the headers built against say.
  CXCursorKind translation_unit_kind_;
  std::vector<toolchain::token> tokens_;
  std::vector<CXCursor> functions_;
  std::set<std::string> variants_;              // USRs of the functions given a block variant
  std::set<std::string> loop_variants_;         // those of them without barriers (given one for their interchanged loops)
  std::set<std::string> along_x_variants_;      // those of them that may run over rows spanning blocks along x (loop_claim)
  std::set<std::string> specialized_;           // USRs of function templates with explicit specializations
  std::set<std::string> lanes_variants_;        // USRs of value-returning functions given a lanes variant (lanes_call)
  std::set<std::string> block_lanes_variants_;  // those of them that wait at a block barrier too
  std::map<std::string, std::vector<std::size_t>> lanes_uniform_positions_;  // their parameters every calling lane passes alike
  std::set<std::size_t> uniform_parameters_;                                 // those of the function being split (keys)
  bool postpone_loop_calls_ = true;  // a call of a function not yet tried waits for it (false once none could go on)
  std::set<std::string> attempted_;  // and of those already decided either way
  std::map<std::string, bool> synchronizes_;
  std::map<std::string, bool> reads_record_;           // by USR: whether a function may read the thread's record
  std::map<std::string, bool> reads_record_or_block_;  // or the block's index
  std::set<std::string> collected_;                    // USRs of functions_

  // Per kernel:
  std::size_t kernel_begin_ = 0, kernel_end_ = 0;
  bool along_x_ = false;  // its blocks along x run several to a call (loop_claim)
  int regions_ = 0;
  std::map<const node*, int> region_of_statement_;                     // the statements sequences list directly
  std::vector<const node*> loops_, branches_;                          // block-level control flow
  std::map<const node*, std::vector<const node*>> header_increments_;  // for loops whose other increments run per thread
  std::vector<const node*> block_calls_;                               // calls of block variants
  std::map<std::size_t, variable> variables_;
  std::map<std::size_t, std::pair<std::size_t, std::string>> edits_;  // begin -> (end, replacement)
  std::map<const node*, std::string> hoisted_;
  std::vector<std::pair<const node*, int>> returns_;
  std::size_t first_return_ = std::string::npos;  // where the kernel's first return is
  std::vector<const node*> updates_;              // update steps, run once for the block
  bool hoist_updates_ = true;
  std::set<std::size_t> kept_in_regions_;  // updates and loops (by offset) that differ between threads: not block steps
  bool interchange_ = true;                // loops without barriers are tried as block-level loops
  std::vector<const node*> interchanged_;  // those tried now
  std::vector<const node*> loop_calls_;    // calls of block variants of functions without barriers
  std::set<const node*> in_masked_arm_;    // statements of masked branches' arms
  std::vector<std::string> masks_;         // while a masked branch's arm is built: the masks over it
  std::vector<const node*> collectives_;   // the statements of collective steps
  std::map<const node*, collective_plan> collective_plans_;
  std::set<const node*> answered_;  // the calls those steps answer (their statements read no record through them)
  bool exit_flags_ = false;
  std::set<const variable*> chunked_;  // while an interchanged loop's row is written: its scalars that chunks keep (row_chunk)
  bool in_chunk_ = false;              // while its chunks' loop is written
  bool lanes_ = false;                 // the function is given a lanes variant
  bool lanes_block_ = false;           // and waits at a block barrier (its callers' calls stand where one may)
};

}  // namespace

bool available() {
  std::string why_not;
  return load_libclang(&why_not) != nullptr;
}

namespace {

struct parsed_unit {
  CXTranslationUnit tu = nullptr;
  std::string errors;  // the first error outside the system headers, or why nothing was parsed
};

// The first error outside the system headers, or the first one of the
// preprocessor anywhere, or "". A preprocessed source holds the host
// compiler's own library headers, written for it (GCC's libstdc++ uses
// builtins Clang lacks): errors there do not touch the kernels' code, whose
// own errors still count. A preprocessor's error does, wherever it stands: a
// header not found (a libclang installed without its own headers: stddef.h)
// leaves what it declares, lockstep's threadIdx among it, undeclared, and
// every thread's index would look the same to the analysis. (With
// CXTranslationUnit_KeepGoing such errors are not reported as fatal.)
std::string first_error(const libclang_api& clang, CXTranslationUnit tu) {
  std::string error;
  for (unsigned i = 0; i < clang.clang_getNumDiagnostics(tu) && error.empty(); ++i) {
    CXDiagnostic d = clang.clang_getDiagnostic(tu, i);
    const bool preprocessor = clang.string(clang.clang_getDiagnosticCategoryText(d)) == "Lexical or Preprocessor Issue";
    if (clang.clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error &&
        (preprocessor || !clang.clang_Location_isInSystemHeader(clang.clang_getDiagnosticLocation(d))))
      error = clang.string(clang.clang_formatDiagnostic(d, clang.clang_defaultDiagnosticDisplayOptions()));
    clang.clang_disposeDiagnostic(d);
  }
  return error;
}

parsed_unit parse(const libclang_api& clang, CXIndex index, const std::string& file_name, const std::string& source,
                  const std::vector<std::string>& args, unsigned options = CXTranslationUnit_KeepGoing) {
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  CXUnsavedFile unsaved{file_name.c_str(), source.c_str(), static_cast<unsigned long>(source.size())};
  parsed_unit out;
  const CXErrorCode parsed =
      clang.clang_parseTranslationUnit2(index, file_name.c_str(), argv.data(), int(argv.size()), &unsaved, 1, options, &out.tu);
  if (parsed != CXError_Success || !out.tu) {
    out.errors = "libclang could not parse it (error " + std::to_string(int(parsed)) + ")";
    return out;
  }
  out.errors = first_error(clang, out.tu);
  return out;
}

std::vector<std::string> clang_arguments(const char* language, const std::vector<std::string>& parse_flags) {
  std::vector<std::string> args{"-x", language, "-w", "-ferror-limit=0"};
  args.insert(args.end(), parse_flags.begin(), parse_flags.end());
  return args;
}

// clang_createIndex puts LLVM's crash handlers in front of the process's
// fault handlers: a kernel's fault would then reach the emulator re-raised,
// without its address. Turning them off puts back what was there.
CXIndex new_index(const libclang_api& clang) {
  CXIndex index = clang.clang_createIndex(0, 0);
  clang.clang_toggleCrashRecovery(0);
  return index;
}

}  // namespace

split_result split_kernels(const std::string& source, const std::string& source_name, const std::vector<std::string>& parse_flags,
                           const std::string& precompiled_prelude) {
  split_result result;
  result.source = source;
  std::string why_not;
  const libclang_api* clang = load_libclang(&why_not);
  if (!clang) {
    result.notes.push_back("every kernel stays on fibers: " + why_not);
    return result;
  }
  const std::vector<std::string> args = clang_arguments("c++", parse_flags);
  const std::string file_name = "/lockstep-region-loops/" + (source_name.empty() ? std::string("kernels.cu") : source_name) + ".cpp";
  CXIndex index = new_index(*clang);
  parsed_unit unit;
  if (!precompiled_prelude.empty()) {
    std::vector<std::string> with_prelude = args;
    with_prelude.insert(with_prelude.end(), {"-include-pch", precompiled_prelude});
    unit = parse(*clang, index, file_name, source, with_prelude);
    if (!unit.errors.empty() && unit.tu) clang->clang_disposeTranslationUnit(unit.tu);
  }
  if (precompiled_prelude.empty() || !unit.errors.empty()) unit = parse(*clang, index, file_name, source, args);
  if (unit.errors.empty()) {
    translation_unit_splitter(*clang, source, unit.tu).run(result);
  } else {
    result.notes.push_back("every kernel stays on fibers: Clang does not accept the source: " + unit.errors);
  }
  if (unit.tu) clang->clang_disposeTranslationUnit(unit.tu);
  clang->clang_disposeIndex(index);
  return result;
}

void precompile_prelude(const std::string& prelude, const std::vector<std::string>& parse_flags, const std::string& out) {
  std::string why_not;
  const libclang_api* clang = load_libclang(&why_not);
  if (!clang) throw std::runtime_error(why_not);
  CXIndex index = new_index(*clang);
  parsed_unit unit = parse(*clang, index, "/lockstep-region-loops/prelude.h", prelude, clang_arguments("c++-header", parse_flags),
                           CXTranslationUnit_Incomplete | CXTranslationUnit_ForSerialization);
  std::string error = unit.errors;
  if (error.empty())
    if (const int saved = clang->clang_saveTranslationUnit(unit.tu, out.c_str(), clang->clang_defaultSaveOptions(unit.tu)); saved != CXSaveError_None)
      error = "save error " + std::to_string(saved);
  if (unit.tu) clang->clang_disposeTranslationUnit(unit.tu);
  clang->clang_disposeIndex(index);
  if (!error.empty()) throw std::runtime_error("libclang could not precompile the prelude: " + error);
}

std::string libclang_version() {
  const libclang_api* clang = load_libclang(nullptr);
  return clang ? clang->string(clang->clang_getClangVersion()) : "";
}

}  // namespace lockstep::emu::region_loops
