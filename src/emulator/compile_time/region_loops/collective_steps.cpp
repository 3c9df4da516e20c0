// Collective steps (transformation): each collective step's arrays,
// gathering, answering and checks.
#include "compiler.h"

namespace lockstep::emu::region_loops::compiler {

// The lanes' calls of a collective step's i-th call (loop_lane_call), and `_arrived`.
std::string translation_unit_splitter::collective_slot(const node* statement, std::size_t i) const {
  return "__ls_calls_" + std::to_string(region_of_statement_.at(statement)) + "_" + std::to_string(i);
}

// Each collective step's gathering runs its calls as written (a shuffle
// stores its value), the block answers them, and its statement then
// reads each lane's answer in place of each call.
void translation_unit_splitter::plan_collective_code() {
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
        plan.gathering += slot + "[__ls_t] = ::lockstep::emu::to_bits(static_cast<" + value + ">(" + edited(arguments[1]->begin, arguments[1]->end) +
                          "));" + (arrivals ? " " + slot + "_arrived[__ls_t] = 1;" : "");
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
        plan.answering +=
            "::lockstep::emu::loop_answer_warps(__ls_block, " + slot + ", " + slot + "_arrived);\n::lockstep::emu::loop_replay_from(" + slot + ");\n";
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
}

}  // namespace lockstep::emu::region_loops::compiler
