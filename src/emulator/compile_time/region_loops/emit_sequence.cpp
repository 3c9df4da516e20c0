// Emission of sequences (the emitter): each step of a sequence as code.
#include "compiler.h"

namespace lockstep::emu::region_loops::compiler {

void translation_unit_splitter::write_sequence(const sequence& seq, std::string& out) {
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
      case step::kind::call:
        write_call_step(st, out);
        break;
      case step::kind::loop:
        write_loop_step(st, out);
        break;
      case step::kind::masked:
        write_masked_step(st, out);
        break;
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
void translation_unit_splitter::write_gathering(const collective_plan& plan, const thread_mask& mask, std::string& out) {
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

// A call of a function with barriers: its block variant's, once for the block.
void translation_unit_splitter::write_call_step(const step& st, std::string& out) {
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
}

// A block-level loop: its header once for the block, its body's steps inside;
// an interchanged loop's row in chunks (row_chunk), then the rest of the row.
void translation_unit_splitter::write_loop_step(const step& st, std::string& out) {
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
    return;
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
    for (const auto& [key, chunked] : variables_) {  // in the source's order, not chunked_'s (by address)
      if (!chunked_.count(&chunked)) continue;
      const variable* v = &chunked;
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
}

// A masked branch: each thread's condition in its mask, then the arms.
void translation_unit_splitter::write_masked_step(const step& st, std::string& out) {
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
}

}  // namespace lockstep::emu::region_loops::compiler
