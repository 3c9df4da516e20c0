// Emission of functions (the emitter): a kernel's loop body in front of its
// own, a device function's block or lanes variant after it.
#include "compiler.h"

namespace lockstep::emu::region_loops::compiler {

// The loop body's start: the claim of the block (a kernel) or the caller's
// block (a variant), the exit flags, the per-thread parameters; `arguments`
// the kernel's parameters passed to the loops' lambda.
// A kernel's loops run on the loop stack, where the per-thread arrays are.
// Its parameters go there as the lambda's own, of the same names: read
// through the closure, they would be reloaded after every call the host
// compiler cannot see into (an atomic in a loop, say).
std::string translation_unit_splitter::loop_body_opening(bool kernel, const node& function, const node& body, const sequence& top,
                                                         const std::string& moved_statics, std::string& parameters, std::string& arguments) {
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
  else if ((along_x_ = blocks_run_along_x(body)))
    out = moved_statics + "\nif (const unsigned __ls_blocks = ::lockstep::emu::loop_claim_block({true, " + std::to_string(bytes_per_thread(top)) +
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
    const std::vector<const node*> parameters = parameters_of(function);
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
  return out;
}

// A device function's variant, defined after it: the function's head,
// renamed, with the loop body `out` (a lanes variant, and its `name__ls_enter`).
std::vector<source_edit> translation_unit_splitter::variant_edits(CXCursor function_cursor, const node& function, const node& body,
                                                                  const std::string& out) {
  const CXSourceRange range = clang_.clang_getCursorExtent(function_cursor);
  const std::string result = result_type(function_cursor);
  const std::size_t name_at = offset_of(clang_.clang_getCursorLocation(function_cursor));
  const std::string name = clang_.string(clang_.clang_getCursorSpelling(function_cursor));
  if (text(name_at, name_at + name.size()) != name) throw declined{"a function named through a macro"};
  if (lanes_) {
    lanes_uniform_positions_[variant_usr(function_cursor)] = uniform_positions(function);
    // The variant, then `name__ls_enter`: the function's own parameter
    // list, which stores a calling lane's arguments for it.
    const auto [head, names] = template_head(function);
    const std::size_t open = parameters_open(name_at + name.size());
    std::size_t close = open;
    for (int depth = 0; close < tokens_.size(); ++close) {
      depth += tokens_[close].is("(") - tokens_[close].is(")");
      if (depth == 0) break;
    }
    std::string types, passed;
    for (const node* parameter : parameters_of(function)) {
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
    return {{kernel_end_, kernel_end_,
             line_directive(clang_.clang_getCursorLocation(function_cursor)) + variant + enter + line_directive(clang_.clang_getRangeEnd(range))}};
  }
  const std::size_t open = parameters_open(name_at + name.size()), after_open = tokens_[open].end_offset();
  std::size_t rest = after_open;
  if (tokens_[open + 1].is("void") && tokens_[open + 2].is(")")) rest = tokens_[open + 1].end_offset();
  std::string variant = line_directive(clang_.clang_getCursorLocation(function_cursor)) + std::string(text(kernel_begin_, name_at)) + name +
                        "__ls_block" + std::string(text(name_at + name.size(), after_open)) +
                        with_first_argument(open, "const ::lockstep::emu::loop_block& __ls_caller") + std::string(text(rest, body.begin)) + "{" +
                        out + "}\n";
  if (blocks_run_along_x(body)) along_x_variants_.insert(variant_usr(function_cursor));
  return {{kernel_end_, kernel_end_, std::move(variant) + line_directive(clang_.clang_getRangeEnd(range))}};
}

}  // namespace lockstep::emu::region_loops::compiler
