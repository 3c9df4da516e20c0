// In preprocessed source the declaration keywords that a macro cannot map
// survive as tokens (the driver's preprocessing defines them as themselves, so
// dynamic_shared_memory and kernel discovery still see them); here they get
// what lockstep/emu/qualifiers.h gives them in unpreprocessed source.
#include "emulator/host_source/transformations.h"

namespace lockstep::emu::host_transforms {

void keywords(const std::vector<token>& code, source_rewriter& edits) {
  for (std::size_t i = 0; i < code.size(); ++i) {
    if (code[i].is("__shared__") && !(i > 0 && code[i - 1].is("extern")))
      edits.replace(code[i], code[i], "thread_local");
    else if (code[i].is("__global__"))
      edits.replace(code[i], code[i], "__attribute__((used))");
  }
}

}  // namespace lockstep::emu::host_transforms
