#include "emulator/compile_time/host_source/host_source.h"

#include "emulator/compile_time/host_source/transformations.h"

namespace lockstep::emu {

std::string host_source(const std::string& cuda_source, source_form form) {
  const std::vector<toolchain::token> code = toolchain::code_tokens(cuda_source);
  toolchain::source_rewriter edits(cuda_source);
  host_transforms::dynamic_shared_memory(code, edits);
  host_transforms::launch_syntax(code, edits);
  host_transforms::device_clock(code, edits);
  host_transforms::inline_ptx(code, edits);
  host_transforms::builtin_variables(code, edits);
  if (form == source_form::preprocessed) host_transforms::keywords(code, edits);
  return edits.empty() ? cuda_source : edits.result();
}

}  // namespace lockstep::emu
