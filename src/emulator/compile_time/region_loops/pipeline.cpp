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
  decide_lanes_variant(function_cursor, *function, *body, kernel);

  // lockstep nvcc's test for a call outside a launch stays first.
  std::vector<const node*> statements = children_of(*body);
  std::size_t insert_at = body->begin + 1;
  if (kernel && !statements.empty() &&
      text(statements.front()->begin, statements.front()->end).find("kernel_called_unlaunched") != std::string_view::npos) {
    insert_at = statement_end(*statements.front());
    statements.erase(statements.begin());
  }

  forget_function();
  // Transformation: the statements as steps (sequence.cpp), which decide the
  // regions; then the analyses that need them.
  const std::unique_ptr<sequence> top = build_sequence(statements);
  collect_variables(*function);  // variables.cpp
  const std::vector<const node*> block_level = block_level_expressions();
  check_block_level_code(block_level);  // uniformity.cpp
  decide_recomputed();                  // privatization.cpp
  keep_scattered_loops_in_threads();    // interchange.cpp (affinity.cpp's x steps)
  decide_per_thread();                  // privatization.cpp
  // Transformation: the edits of the kernel's text.
  plan_returns(*top);  // rewrites.cpp
  std::string moved_statics;
  std::vector<source_edit> tu_edits;
  rewrite_declarations(kernel, moved_statics, tu_edits);
  rewrite_coordinates(*body);
  plan_collective_code();  // collective_steps.cpp
  rewrite_lanes_returns();
  // Emission.
  std::string parameters, arguments;
  std::string out = loop_body_opening(kernel, *function, *body, *top, moved_statics, parameters, arguments);  // emit_function.cpp
  write_sequence(*top, out);                                                                                  // emit_sequence.cpp, emit_region.cpp
  if (!kernel) return variant_edits(function_cursor, *function, *body, out);
  out += "\n}" + arguments + ");\nreturn;\n}";
  // The rest of the line the insertion splits keeps its number.
  out += line_directive(clang_.clang_getCursorLocation(body->cursor));
  tu_edits.push_back({insert_at, insert_at, std::move(out)});
  return tu_edits;
}

// Each try at a function starts from no facts about it.
void translation_unit_splitter::forget_function() {
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
  hoisted_declarators_.clear();
  returns_.clear();
  first_return_ = std::string::npos;
  updates_.clear();
  collectives_.clear();
  collective_plans_.clear();
  answered_.clear();
  exit_flags_ = false;
}

}  // namespace lockstep::emu::region_loops::compiler
