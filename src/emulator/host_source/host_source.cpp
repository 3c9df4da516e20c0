#include "emulator/host_source/host_source.h"

#include "emulator/host_source/transformations.h"

namespace lockstep::emu {

std::string host_source(const std::string& cuda_source) {
  const std::vector<toolchain::token> code = toolchain::code_tokens(cuda_source);
  toolchain::source_rewriter edits(cuda_source);
  host_transforms::dynamic_shared_memory(code, edits);
  return edits.empty() ? cuda_source : edits.result();
}

}  // namespace lockstep::emu
