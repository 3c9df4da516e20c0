// `clock()` in a kernel reads the SM's cycle counter; in host code it is the C
// library's processor time, and a header cannot give one name two meanings. The
// program's own `clock()` calls (not `std::clock()`, not members, not the C
// library's declaration or the program's own, which follow a type) go to a function that asks
// whether a kernel is running. Busy-waits on clock() (CUDA's samples time
// streams that way) then end after the cycles they ask for.
#include "emulator/compile_time/host_source/transformations.h"

namespace lockstep::emu::host_transforms {

void device_clock(const std::vector<token>& code, source_rewriter& edits) {
  for (std::size_t i = 0; i + 2 < code.size(); ++i) {
    if (!code[i].is("clock") || !code[i + 1].is("(") || !code[i + 2].is(")")) continue;
    if (i > 0) {
      const token& before = code[i - 1];
      if (before.is("::") || before.is(".") || before.is("->")) continue;
      // `clock_t clock()` declares a function: a call follows no name but a keyword.
      if (before.kind == toolchain::token_kind::identifier && !before.is("return") && !before.is("throw")) continue;
    }
    edits.replace(code[i], code[i], "::lockstep::emu::device_or_host_clock");
  }
}

}  // namespace lockstep::emu::host_transforms
