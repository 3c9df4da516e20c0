// The region-loop compiler where lockstep was built without libclang's
// headers: every kernel stays on fibers, and says so.
#include "region_loops.h"

#include <stdexcept>

namespace lockstep::emu::region_loops {

split_result split_kernels(const std::string& source, const std::string&, const std::vector<std::string>&, const std::string&) {
  split_result result{source, {}, {}, {}, {}, {}};
  result.notes.push_back("every kernel stays on fibers: lockstep was built without libclang's headers (install libclang-dev and rebuild)");
  result.unit_note = "lockstep was built without the region-loop compiler (libclang's headers were missing: install libclang-dev and rebuild)";
  return result;
}

bool available() { return false; }

void precompile_prelude(const std::string&, const std::vector<std::string>&, const std::string&) {
  throw std::runtime_error("lockstep was built without libclang's headers");
}

std::string libclang_version() { return ""; }

}  // namespace lockstep::emu::region_loops
