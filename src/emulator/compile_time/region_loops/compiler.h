// The region-loop compiler's internals, shared by its passes (README.md in
// this folder tells the algorithm pass by pass). One translation_unit_splitter
// splits one translation unit: the analysis passes (syntax.cpp, call_graph.cpp,
// synchronization.cpp, collectives.cpp, variables.cpp, uniformity.cpp,
// affinity.cpp, privatization.cpp) fill its facts about the function being
// split, the transformation passes (sequence.cpp, interchange.cpp,
// rewrites.cpp, collective_steps.cpp) plan its steps and edits from them, the
// emitter (emit_sequence.cpp, emit_region.cpp) writes the loops, and
// pipeline.cpp names the passes in their order.
#pragma once
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "libclang.h"
#include "mask.h"
#include "region_loops.h"
#include "toolchain/lexer.h"

namespace lockstep::emu::region_loops::compiler {

// A cursor of the kernel's body with its children, and its characters in the
// main file (expansion locations: a macro's output counts as the macro's use).
struct node {
  CXCursor cursor;
  CXCursorKind kind;
  std::size_t begin = 0, end = 0;
  node* parent = nullptr;
  std::vector<std::unique_ptr<node>> children;
};

// A declaration statement's text cut into its declarators (declarators_of):
// where the specifiers they share end, each declarator's range (with its
// initializer), and the comma after each but the last.
struct declarator_texts {
  std::size_t specifiers_end = 0;
  std::vector<std::pair<std::size_t, std::size_t>> declarators;
  std::vector<std::size_t> commas;
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
inline const std::string rows_loop =
    "for (int __ls_z = 0; __ls_z < __ls_block.extent_z(); ++__ls_z) "
    "for (int __ls_y = 0; __ls_y < __ls_block.extent_y(); ++__ls_y) ";
// The linear index of the row's first thread.
inline const std::string row_start = "(__ls_z * __ls_block.extent_y() + __ls_y) * __ls_block.extent_x()";
// The loop over one row's threads, with no body yet.
inline const std::string row_threads = "for (int __ls_x = 0, __ls_t = " + row_start + "; __ls_x < __ls_block.extent_x(); ++__ls_x, ++__ls_t) ";
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
inline const std::string rest_of_row_threads =
    "for (int __ls_x = __ls_x0, __ls_t = " + row_start + " + __ls_x0; __ls_x < __ls_block.extent_x(); ++__ls_x, ++__ls_t) ";
// GCC would unroll a chunk's loop whole, and then not see that the
// threads' loads are consecutive; rolled, its loop vectoriser takes it (the
// product ran 6x slower unrolled). A #pragma line, not _Pragma: lockstep
// nvcc compiles the split source preprocessed.
inline const std::string chunk_threads = "\n#pragma GCC unroll 1\nfor (int __ls_x = __ls_x0, __ls_t = " + row_start +
                                         " + __ls_x0, __ls_k = 0; __ls_k < " + std::to_string(row_chunk) + "; ++__ls_x, ++__ls_t, ++__ls_k) ";
inline std::string thread_loop(std::string_view enter = "enter", bool row_only = false) {
  return (row_only ? "" : rows_loop) + row_threads + "{ __ls_block." + std::string(enter) + "(__ls_x, __ls_y, __ls_z, __ls_t);";
}

inline bool is_loop(CXCursorKind k) { return k == CXCursor_ForStmt || k == CXCursor_WhileStmt || k == CXCursor_DoStmt; }

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
  thread_mask mask;                     // a region's or masked branch's: which threads run it, where not all
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
// How a value, or an address, changes from one thread of a row to the
// next (threadIdx.x + 1): not at all, by one element, or otherwise
// (scaled, or a thread's own value that is not computed again).
enum class x_step { none, one, other };
// A select (`c ? x : y`) of a region that write_region can decide per
// row: its condition reads no memory and nothing the region changes, so
// it can be asked of the row's threads ahead, and the arm it keeps (x
// where `taken`, else y) reads memory, which GCC does not vectorise
// under a mask where the index is an int.
struct select_arm {
  const node* expression;
  bool taken;
};
enum class variation { constant, affine, other };
// A region's code as write_region puts it together (emit_region.cpp).
struct region_parts {
  std::size_t begin = 0, end = 0;   // the region's statements' characters
  std::set<const variable*> again;  // the locals it computes again
  std::string recomputed;           // their declarations (closures aside)
  std::string prologue;             // each thread's: those, its views of its variables, closures
  std::string write_back;           // the stores back of the register copies that changed
  std::string line, next, label_end, declared_for_later, enter, code;
};

class translation_unit_splitter {
 public:
  translation_unit_splitter(const libclang_api& clang, const std::string& text, CXTranslationUnit tu)
      : clang_(clang),
        text_(text),
        tu_(tu),
        translation_unit_kind_(clang.clang_getCursorKind(clang.clang_getTranslationUnitCursor(tu))),
        tokens_(toolchain::code_tokens(text)) {}
  void run(split_result& result);

 private:
  // translation_unit.cpp: a kernel's decision in the result (kernel_decision)
  void record_kernel(split_result& result, CXCursor kernel, bool loops, const std::string& why) const;

 private:
  // syntax.cpp: the syntax tree and source offsets
  std::size_t offset_of(CXSourceLocation loc) const;
  bool in_main_file(CXSourceLocation loc) const;
  std::pair<std::string, unsigned> presumed(CXSourceLocation loc) const;
  std::string where(CXSourceLocation loc) const;
  std::string line_directive(CXSourceLocation loc) const;
  std::string_view text(std::size_t begin, std::size_t end) const;
  std::string line_of(const node& n) const;
  std::size_t token_at(std::size_t offset) const;
  std::size_t statement_end(const node& n) const;
  std::optional<declarator_texts> declarators_of(const node& statement) const;
  std::unique_ptr<node> make_node(CXCursor c, node* parent) const;
  std::string qualified_name(CXCursor c) const;
  for_header header_of_for(const node& loop) const;
  static const node* callee_expression(const node& call);
  std::vector<CXCursor> candidates_of(const node& overloaded) const;
  std::vector<CXCursor> callees(const node& call) const;
  std::string call_name(const node& call) const;
  std::vector<const node*> arguments_of(const node& call) const;
  std::string member_name(const node& member) const;
  std::string canonical_type(const node& e) const;
  std::size_t parameters_open(std::size_t name_end) const;
  std::string with_first_argument(std::size_t open, std::string_view first) const;
  static std::vector<const node*> parameters_of(const node& function);
  std::pair<std::string, std::string> template_head(const node& function) const;
  std::string result_type(CXCursor function) const;
  std::vector<CXType> parameter_types(CXCursor function) const;
  static std::string_view trimmed(std::string_view s);
  static const node* unwrapped(const node* e);
  static bool any_node(const node& n, const std::function<bool(const node&)>& holds);
  static std::vector<const node*> children_of(const node& n);
  static bool attributed_loop(const node& s);
  std::optional<long long> evaluated_integer(CXCursor c) const;
  bool compile_time_constant(const node& e) const;
  const node* constant_bound(const node& loop) const;
  bool keeps_value(const node& to, const node& from) const;
  std::string type_of(const variable& v) const;
  static bool unnamed_type(const std::string& type);
  std::string recomputed_type(const variable& v) const;

  // call_graph.cpp: the call graph
  void collect_functions(CXCursor parent);
  std::vector<CXCursor> called_from_kernels();
  bool is_kernel(CXCursor function) const;
  std::string variant_usr(CXCursor function) const;
  const node* block_call(const node& statement, bool without_barriers = false);
  bool loop_call(const node& statement);
  bool lanes_call(const node& n);
  bool block_lanes_call(const node& n);
  bool reads_record(CXCursor function, int depth = 0, bool block_idx_too = false);
  bool body_reads_record(CXCursor c, int depth, bool block_idx_too);
  bool region_reads_record(const node& n);
  void decide_lanes_variant(CXCursor function_cursor, const node& function, const node& body, bool kernel);

  // synchronization.cpp: synchronisation
  std::string waits_annotation(CXCursor function) const;
  bool is_barrier_call(const node& n) const;
  bool may_synchronize(CXCursor function, int depth = 0);
  bool body_may_synchronize(CXCursor c, int depth);
  bool unresolved_call_may_synchronize(const node& call);
  static bool waits_by_name(const std::string& name);
  static bool warp_level_name(std::string_view name);
  bool names_an_operation(std::size_t i) const;
  void decline_warp_level(const node& function) const;
  static bool gathered_intrinsic(std::string_view name);
  bool lockstep_own(CXCursor function) const;
  bool contains_synchronization(const node& n);
  bool waits_only_in_warps(const node& s);

  // collectives.cpp: warp collectives
  bool gathered_call(const node& n) const;
  bool replayed_call(const node& n) const;
  bool wmma_call(const node& n) const;
  bool writes_anything(const node& n) const;
  const node* operator_of(const node& call) const;
  bool operator_writes(const node& call) const;
  unsigned tile_reduce_size(const node& n) const;
  unsigned one_warp_tile(const node& e) const;
  bool one_warp_group(const node& e) const;
  std::string block_vote(const node& n) const;
  static std::string shuffle_op(const std::string& name);
  std::vector<const node*> gathered_collectives(const node& s);

  // variables.cpp: variables and their references
  static std::size_t key_of(std::size_t decl_offset, bool parameter);
  bool may_write(const node& ref) const;
  int region_of(const node* n) const;
  variable* variable_for(CXCursor decl);
  void collect_declarations(const node& n);
  void collect_references(const node& n, bool in_lambda);
  void collect_closures();
  bool captures_by_reference_only(const node& lambda) const;
  static bool called(const node& ref);
  bool elements_written(const variable& v) const;
  void collect_variables(const node& function);

  // uniformity.cpp: uniformity
  bool read_only_parameter(const node& n);
  bool uniform(const node& n, bool per_thread = false);
  bool pure_function(CXCursor function, int depth = 0) const;
  bool constexpr_local(const variable& v) const;
  const node* shared_assignment(const variable& v, const reference& r) const;
  void ask_uniform_parameters(const node& e);
  std::vector<std::size_t> uniform_positions(const node& function) const;
  void decide_uniform(const std::vector<const node*>& block_level);
  std::vector<const node*> header_of(const node* loop) const;
  std::vector<const node*> block_level_expressions() const;
  void check_block_level_code(const std::vector<const node*>& block_level);

  // affinity.cpp: per-thread affinity
  x_step step_in_x(const node& n, int depth = 0);
  x_step address_step(const node& e, int depth);
  bool scattered_across_threads(const node& body);
  bool convex_in_block(const node& n);
  variation in_coordinates(const node& n, int depth = 0);
  const node* builtin_member_call(const node& member, std::string_view builtin, bool x_only);
  const node* thread_idx_call(const node& n);
  bool keeps_index(const node& n) const;
  const node* under_index_casts(const node* n) const;
  const node* x_of(const node& n, std::string_view builtin);
  const node* global_index_product(const node& member);
  bool blocks_run_along_x(const node& body);
  bool reads_coordinates(const node& n, int depth);
  bool pure(const node& n);
  const node* offset_term(const node& call);
  bool offset_local(const node& ref);
  bool term_of_int_sum(const node& written);

  // aliasing.cpp: storage reached through other names
  CXTypeKind canonical_kind(const node& e) const;
  bool object_escapes(const node& o) const;
  bool address_escapes(const node& e) const;
  bool call_keeps(const node& call, const node& argument) const;
  bool storage_escapes(const variable& v) const;
  bool scope_spans_regions(const variable& v) const;

  // privatization.cpp: privatisation
  void decide_recomputed();
  bool inputs_stay(const node& n, const node& declaration);
  bool can_live_in_register(const variable& v) const;
  bool array_of_records(const variable& v) const;
  bool is_array(const variable& v) const;
  bool elements_only(const variable& v) const;
  unsigned bytes_per_thread(const sequence& top) const;
  void decide_per_thread();

  // sequence.cpp: sequence building
  std::unique_ptr<sequence> build_sequence(const std::vector<const node*>& statements);
  step masked_branch(const node& s);
  thread_mask current_mask() const;
  bool maskable(const node& s);
  bool holds_interchange(const node& s, bool calls);
  bool is_update(const node& s);
  void split_increment(const node& loop, sequence& body);
  void plan_collective(const node& s, const std::vector<const node*>& calls, int gather_region, int region);

  // interchange.cpp: loop interchange and chunking
  bool interchangeable(const node& s) const;
  void unroll_short_loops(const node& n);
  bool row_level(const step& st);
  std::set<const variable*> chunked_variables(int region) const;
  void keep_scattered_loops_in_threads();

  // rewrites.cpp: rewrites of the kernel's text
  std::string edited(std::size_t begin, std::size_t end) const;
  void edit(std::size_t begin, std::size_t end, std::string replacement);
  bool cut_free(std::size_t at) const;
  void plan_region_statements(const node& n, int region, bool last_region, bool in_lambda, int loops_inside);
  void plan_returns(const sequence& top);
  void rewrite_declarations(bool kernel, std::string& moved_statics, std::vector<source_edit>& tu_edits);
  void hoist_uniform_declarators(const node& statement);
  void rewrite_coordinates(const node& body);
  void rewrite_lanes_returns();

  // collective_steps.cpp: collective steps
  std::string collective_slot(const node* statement, std::size_t i) const;
  void plan_collective_code();

  // emit_sequence.cpp: emission of sequences
  void write_sequence(const sequence& seq, std::string& out);
  void write_call_step(const step& st, std::string& out);
  void write_loop_step(const step& st, std::string& out);
  void write_masked_step(const step& st, std::string& out);
  void write_gathering(const collective_plan& plan, const thread_mask& mask, std::string& out);

  // emit_region.cpp: emission of regions
  void write_region(const step& st, std::string& out, bool row_only = false, const std::string& assign_to = "");
  region_parts region_prologue(const step& st, std::string& out, const std::string& assign_to);
  void thread_views(const step& st, std::string& prologue, std::string& write_back, const std::string& closures);
  void write_masked_region(const step& st, const region_parts& r, bool row_only, std::string& out);
  void write_decided_region(const step& st, const region_parts& r, const node* guard, const std::vector<select_arm>& selects, std::string& out);
  static std::string jumps_retargeted(std::string code, const std::string& label, const std::string& to);
  std::string row_loop(std::string_view enter) const;
  static std::string row_masked_out(const thread_mask& mask);
  static std::string masks_summed(const std::string& threads, const thread_mask& mask);
  const node* prefix_guard(const step& st);
  std::vector<select_arm> select_arms(const step& st);
  static std::string per_thread_array(int index, const std::string& type);

  // emit_function.cpp: emission of functions
  std::string loop_body_opening(bool kernel, const node& function, const node& body, const sequence& top, const std::string& moved_statics,
                                std::string& parameters, std::string& arguments);
  std::vector<source_edit> variant_edits(CXCursor function_cursor, const node& function, const node& body, const std::string& out);

  // pipeline.cpp: the pipeline
  std::vector<source_edit> split_function(CXCursor function_cursor);
  std::vector<source_edit> split_function_once(CXCursor function_cursor);
  void forget_function();

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
  std::map<const node*, std::string> hoisted_;                        // declaration statements computed once for the block, whole
  std::map<const node*, std::string> hoisted_declarators_;            // the uniform declarators of statements that stay in their region
  std::vector<std::pair<const node*, int>> returns_;
  std::size_t first_return_ = std::string::npos;  // where the kernel's first return is
  std::vector<const node*> updates_;              // update steps, run once for the block
  bool hoist_updates_ = true;
  std::set<std::size_t> kept_in_regions_;  // updates and loops (by offset) that differ between threads: not block steps
  bool interchange_ = true;                // loops without barriers are tried as block-level loops
  std::vector<const node*> interchanged_;  // those tried now
  std::vector<const node*> loop_calls_;    // calls of block variants of functions without barriers
  std::set<const node*> in_masked_arm_;    // statements of masked branches' arms
  thread_mask masks_;                      // while a masked branch's arm is built: the masks over it
  std::vector<const node*> collectives_;   // the statements of collective steps
  std::map<const node*, collective_plan> collective_plans_;
  std::set<const node*> answered_;  // the calls those steps answer (their statements read no record through them)
  bool exit_flags_ = false;
  std::set<const variable*> chunked_;  // while an interchanged loop's row is written: its scalars that chunks keep (row_chunk)
  bool in_chunk_ = false;              // while its chunks' loop is written
  bool lanes_ = false;                 // the function is given a lanes variant
  bool lanes_block_ = false;           // and waits at a block barrier (its callers' calls stand where one may)
};

}  // namespace lockstep::emu::region_loops::compiler
