// Emission of regions (the emitter): a region as loops over the block's
// threads, masked, guarded or with selects decided per row.
#include "compiler.h"

namespace lockstep::emu::region_loops::compiler {

// Code whose returns (`goto label;`) jump to `to` instead.
std::string translation_unit_splitter::jumps_retargeted(std::string code, const std::string& label, const std::string& to) {
  const std::string jump = "goto " + label + ";";
  for (std::size_t at = 0; (at = code.find(jump, at)) != std::string::npos; at += jump.size()) code.replace(at + 5, label.size(), to);
  return code;
}

// The threads' loop of an interchanged loop's region (row_level), in the
// row's loop: over a chunk of the row, or the rest of it.
std::string translation_unit_splitter::row_loop(std::string_view enter) const {
  return (in_chunk_ ? chunk_threads : rest_of_row_threads) + "{ __ls_block." + std::string(enter) + "(__ls_x, __ls_y, __ls_z, __ls_t);";
}

// In a rows' loop: whether a thread of the row is masked out of a region
// (then its threads are each asked; else none is).
std::string translation_unit_splitter::row_masked_out(const thread_mask& mask) {
  if (mask.empty()) return "";
  return " int __ls_masked_out, __ls_masked_in; " + masks_summed(row_threads, mask) + " (void)__ls_masked_in;";
}

// Sets __ls_masked_out and __ls_masked_in: whether `threads` has a thread
// the mask leaves out, and one it lets in, from the mask read as bytes
// (rendered_as_byte, mask.h).
std::string translation_unit_splitter::masks_summed(const std::string& threads, const thread_mask& mask) {
  const std::string bytes = rendered_as_byte(mask);
  return "{ unsigned char __ls_all = 1, __ls_any = 0; " + threads + "{ const unsigned char __ls_in = " + bytes +
         "; __ls_all &= __ls_in; __ls_any |= __ls_in; } __ls_masked_out = !__ls_all; __ls_masked_in = __ls_any; }\n";
}

// The parts of a region's code (write_region): what goes before its loop
// (hoisted declarations, the arrays of the variables it declares) straight
// to `out`, the rest into the parts.
region_parts translation_unit_splitter::region_prologue(const step& st, std::string& out, const std::string& assign_to) {
  // Declarations the block shares come out of the loop, in their order.
  const std::size_t begin = st.statements.front()->begin, end = statement_end(*st.statements.back());
  for (const node* s : st.statements)
    for (const auto* hoisted : {&hoisted_, &hoisted_declarators_})
      if (auto it = hoisted->find(s); it != hoisted->end()) out += line_directive(clang_.clang_getCursorLocation(s->cursor)) + it->second + "\n";
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
      (v.closure ? closures : recomputed) += std::string(" ") + (v.closure ? std::string("auto") : recomputed_type(v)) + " " + v.name +
                                             (init.starts_with("{") ? "" : " = ") + init + ";";
    }
  std::string prologue = recomputed;
  if (exit_flags_) prologue += " if (__ls_exited[__ls_t]) continue;";
  std::string write_back;
  thread_views(st, prologue, write_back, closures);
  const std::string line = line_directive(clang_.clang_getCursorLocation(st.statements.front()->cursor));
  std::string next = "__ls_next_" + std::to_string(st.region);
  const std::string label_end = ": __attribute__((unused));";  // where no return jumps to it
  // Locals declared here for later regions, which declare them again, are
  // said to be used (no -Wunused warnings in -Wall builds).
  std::string declared_for_later;
  for (const auto& [key, v] : variables_)
    if (v.recomputed && v.declared_region == st.region) declared_for_later += " (void)" + v.name + ";";
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
  region_parts r;
  r.begin = begin, r.end = end;
  r.again = std::move(again);
  r.recomputed = std::move(recomputed), r.prologue = std::move(prologue), r.write_back = std::move(write_back);
  r.line = line, r.next = std::move(next), r.label_end = label_end, r.declared_for_later = std::move(declared_for_later);
  r.enter = enter, r.code = std::move(code);
  return r;
}

// Each thread's views of the per-thread variables the region uses (in the
// prologue), and the stores back of those that live in a register copy.
void translation_unit_splitter::thread_views(const step& st, std::string& prologue, std::string& write_back, const std::string& closures) {
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
      prologue +=
          " std::remove_reference_t<decltype(" + slot + ")> " + v.name + "; __builtin_memcpy(&" + v.name + ", &" + slot + ", sizeof " + v.name + ");";
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
}

// `assign_to`: the region is an expression (a masked branch's condition),
// whose value each thread stores there.
void translation_unit_splitter::write_region(const step& st, std::string& out, bool row_only, const std::string& assign_to) {
  const region_parts r = region_prologue(st, out, assign_to);
  if (!st.mask.empty()) return write_masked_region(st, r, row_only, out);
  const node* guard = prefix_guard(st);
  const std::string &prologue = r.prologue, &write_back = r.write_back, &line = r.line, &next = r.next, &label_end = r.label_end,
                    &declared_for_later = r.declared_for_later, &enter = r.enter, &code = r.code;
  const std::vector<select_arm> selects = guard || row_only ? std::vector<select_arm>{} : select_arms(st);
  if ((!guard || row_only) && selects.empty()) {
    out += (row_only ? row_loop(enter) : thread_loop(enter)) + prologue + " {" + line + code + declared_for_later + "\n} " + next + label_end +
           write_back + " }\n";
    return;
  }
  write_decided_region(st, r, guard, selects, out);
}

// A masked region: rows whose threads all run it run it without asking;
// the others ask each thread's mask.
void translation_unit_splitter::write_masked_region(const step& st, const region_parts& r, bool row_only, std::string& out) {
  const std::string &prologue = r.prologue, &write_back = r.write_back, &line = r.line, &next = r.next, &label_end = r.label_end,
                    &declared_for_later = r.declared_for_later, &enter = r.enter, &code = r.code;
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
  out += "else " + threads + prologue + " if (!(" + rendered(st.mask) + ")) continue; {" + line + code + declared_for_later + "\n} " + next +
         label_end + write_back + " }\n";
  if (!row_only) out += "}\n";
  return;
}

// A region with a guard or selects decided per row (write_region).
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
void translation_unit_splitter::write_decided_region(const step& st, const region_parts& r, const node* guard, const std::vector<select_arm>& selects,
                                                     std::string& out) {
  const std::size_t begin = r.begin, end = r.end;
  const std::string &prologue = r.prologue, &write_back = r.write_back, &line = r.line, &next = r.next, &label_end = r.label_end,
                    &declared_for_later = r.declared_for_later, &enter = r.enter, &recomputed = r.recomputed;
  const std::set<const variable*>& again = r.again;
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
        ask_declarations +=
            std::string(" ") + recomputed_type(v) + " " + v.name + (init.starts_with("{") ? "" : " = ") + init + "; (void)" + v.name + ";";
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

// The if statement ending a region that can run its first passing threads
// without the branch (write_region), else null: every statement before it
// declares locals computed from the thread's coordinates, and its guard
// reads no memory and changes nothing, so it can be evaluated ahead.
const node* translation_unit_splitter::prefix_guard(const step& st) {
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

// Those the region evaluates whatever its threads do: in its statements up
// to the first that is not a declaration or an expression, outside the
// arms of selects and the right sides of && and ||, in source order.
std::vector<select_arm> translation_unit_splitter::select_arms(const step& st) {
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

// A local array of one T per thread (lockstep/emu/region_loops.h), on the loop stack.
std::string translation_unit_splitter::per_thread_array(int index, const std::string& type) {
  const std::string i = std::to_string(index);
  return "::lockstep::emu::loop_slot<" + type + "> __ls_cells_" + i + "[__ls_block.threads()]; auto* __ls_" + i + " = ::lockstep::emu::loop_slots<" +
         type + ">(__ls_cells_" + i + ");\n";
}

}  // namespace lockstep::emu::region_loops::compiler
