// One finding as a checker records it while the kernel runs: program
// counters instead of source lines (those are looked up only for the
// findings that get reported, after the launch), and a key under which
// repeats of the same finding are folded together.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "lockstep/emu/check.h"

namespace lockstep::emu::check {

inline constexpr int stack_depth = 6;

struct finding {
  check_report report;  // everything but the source lines and the kernel name
  // Return addresses from the access (or barrier) outwards: the first one
  // outside lockstep's own headers names the user's line.
  std::uintptr_t stack[stack_depth] = {};
  std::uintptr_t other_pc = 0;         // the other access of a race, the other barrier
  bool located = false;                // report.at was given by the compiler (bounds checks)
  bool only_if_lines_differ = false;   // dropped if the access and the other side are one source line
  std::uintptr_t unless_guess_at = 0;  // a plain read against an atomic: dropped if this read proves a CAS loop's guess

  // Findings with the same key are the same bug seen again (by another thread or block).
  struct key {
    std::uintptr_t pc, other_pc;
    unsigned kind;
    bool operator==(const key&) const = default;
  };
  key fold_key() const { return {stack[0], other_pc, static_cast<unsigned>(report.tool) * 8 + static_cast<unsigned>(report.race)}; }
};

// Captures the caller's return addresses into f.stack, skipping liblockstep's own frames.
void capture_stack(finding& f, std::uintptr_t access_pc);

}  // namespace lockstep::emu::check
