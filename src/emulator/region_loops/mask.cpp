// Masks (mask.h): rendered once, at emission.
#include "mask.h"

namespace lockstep::emu::region_loops::compiler {

std::string mask_array(int region) { return "__ls_mask_" + std::to_string(region); }

namespace {
std::string element(const mask_term& term) { return mask_array(term.region) + "[__ls_t]"; }
}  // namespace

std::string rendered(const thread_mask& mask) {
  std::string out;
  for (const mask_term& term : mask) out += (out.empty() ? "" : " && ") + std::string(term.negated ? "!" : "") + element(term);
  return out;
}

std::string rendered_as_byte(const thread_mask& mask) {
  std::string bytes;
  for (const mask_term& term : mask) {
    const std::string byte = "::lockstep::emu::loop_mask_byte(" + element(term) + ")";
    bytes += std::string(bytes.empty() ? "" : " & ") + (term.negated ? "(" + byte + " ^ 1)" : byte);
  }
  return bytes;
}

}  // namespace lockstep::emu::region_loops::compiler
