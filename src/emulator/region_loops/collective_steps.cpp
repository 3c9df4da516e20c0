// Collective steps (transformation): each collective step's arrays,
// gathering, answering and checks.
#include "compiler.h"

namespace lockstep::emu::region_loops::compiler {

// The lanes' calls of a collective step's i-th call (loop_lane_call), and `_arrived`.
std::string translation_unit_splitter::collective_slot(const node* statement, std::size_t i) const {
  return "__ls_calls_" + std::to_string(region_of_statement_.at(statement)) + "_" + std::to_string(i);
}

}  // namespace lockstep::emu::region_loops::compiler
