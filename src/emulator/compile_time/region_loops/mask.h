// Which threads run a step (sequence.cpp builds them, the emitter renders
// them): the masks of the masked branches around it, kept as terms until
// emission, where each is written as a condition on thread __ls_t or as a
// byte (inline: the tests read it without libclang).
#pragma once
#include <string>
#include <vector>

namespace lockstep::emu::region_loops::compiler {

// One term: a masked branch's array of each thread's condition, in its then
// arm, or its negation, in its else arm.
struct mask_term {
  int region;  // the masked branch's condition's (mask_array)
  bool negated = false;
  bool operator==(const mask_term&) const = default;
};
// The terms a step's threads must all pass, outermost branch first; empty
// where every thread runs it.
using thread_mask = std::vector<mask_term>;

// A masked branch's array of each thread's condition; [__ls_t] its thread's.
inline std::string mask_array(int region) { return "__ls_mask_" + std::to_string(region); }
inline std::string mask_element(const mask_term& term) { return mask_array(term.region) + "[__ls_t]"; }

// The mask as a condition on thread __ls_t: `__ls_mask_1[__ls_t] && !__ls_mask_4[__ls_t]`.
inline std::string rendered(const thread_mask& mask) {
  std::string out;
  for (const mask_term& term : mask) out += (out.empty() ? "" : " && ") + std::string(term.negated ? "!" : "") + mask_element(term);
  return out;
}

// The mask as a byte, 1 where thread __ls_t passes: its arrays' elements read
// as bytes (loop_mask_byte), which GCC's vectoriser takes where it refuses
// bools' operators (the warp shuffle sum spent a third of its time on them so).
inline std::string rendered_as_byte(const thread_mask& mask) {
  std::string bytes;
  for (const mask_term& term : mask) {
    const std::string byte = "::lockstep::emu::loop_mask_byte(" + mask_element(term) + ")";
    bytes += std::string(bytes.empty() ? "" : " & ") + (term.negated ? "(" + byte + " ^ 1)" : byte);
  }
  return bytes;
}

}  // namespace lockstep::emu::region_loops::compiler
