// The pipeline: the passes each function goes through, in order.
#include "compiler.h"

namespace lockstep::emu::region_loops::compiler {

// A kernel gets its loop body in front of its own; a device function with
// barriers gets a block variant, `name__ls_block`, defined after it.
// Updates are first tried as block steps; those that turn out to differ
// between threads (`x = threadIdx.x;`) stay in their regions on the next
// try, until the rest hold or none is left.
std::vector<source_edit> translation_unit_splitter::split_function(CXCursor function_cursor) {
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

std::vector<source_edit> translation_unit_splitter::split_function_once(CXCursor function_cursor) {
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

}  // namespace lockstep::emu::region_loops::compiler
