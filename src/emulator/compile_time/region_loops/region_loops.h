// The region-loop compiler: kernels split at their barriers into regions, each
// run as a loop over the block's threads (lockstep/emu/region_loops.h), so a
// block runs as plain loops instead of one fiber per thread.
//
// Clang (libclang, loaded at run time) parses the translation unit the host
// compiler is about to build; for each kernel that calls __syncthreads() this
// finds the barriers, checks that every one stands where all of the block's
// threads reach it together (in the kernel's body, or in loops and branches
// whose conditions are the same for every thread), sorts the kernel's
// variables into those the block shares (uniform: computed once per block)
// and those each thread keeps across a barrier (arrays indexed by thread), and
// writes a second body in front of the kernel's own that runs the regions as
// loops. The kernel's own body stays: it runs on fibers whenever the engine
// declines the block (check mode, other thread orders). Kernels the analysis
// cannot prove safe are left as written and said why in `notes`.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/emu/collectives.h"

namespace lockstep::emu::region_loops {

// What the split decided for one kernel of the translation unit: the record
// a build carries with its module (src/host_build/engine_record.h), which the
// runner reads to know how the kernel runs.
struct kernel_decision {
  std::string name;  // as the source spells it, unqualified
  std::string file;  // where it is defined (the presumed location: a #line's file)
  unsigned line = 0;
  bool loops = false;      // given a loop body
  std::string why_fibers;  // where not: why it stays on fibers
};

struct split_result {
  std::string source;                    // the input with a loop body added to each kernel it split
  std::vector<std::string> split;        // kernels given a loop body
  std::vector<std::string> along_x;      // those of them whose runs of blocks along x are one call (loop_claim)
  std::vector<std::string> notes;        // "kernel k (file:line) stays on fibers: why", or why nothing was parsed
  std::vector<kernel_decision> kernels;  // every kernel of the main file parsed, in the order decided
  std::string unit_note;                 // why nothing was parsed ("" where the unit was): every kernel stays on fibers
};

// `source` is a whole translation unit as the host compiler will see it;
// `parse_flags` are its -I, -D and -std flags. Never throws for the source's
// sake: a source Clang cannot parse comes back unchanged, with a note. Every
// kernel is a candidate, those without barriers too (one loop over the
// block's threads, its loops interchanged where that vectorises); a caller
// that cannot read the headers from a precompiled prelude parses only
// sources that mentions_synchronization, to keep compiling cheap.
//
// `precompiled_prelude`, when not empty, is a file precompile_prelude wrote
// for the text the source begins with (the same parse flags): Clang then
// reads those headers' declarations from it instead of parsing them, about
// 6x faster for lockstep/cuda.h. A prelude file Clang refuses (one of its
// headers changed since) costs a second parse, without it.
split_result split_kernels(const std::string& source, const std::string& source_name, const std::vector<std::string>& parse_flags,
                           const std::string& precompiled_prelude = {});

// Parses `prelude` (#include lines) with `parse_flags` and writes what Clang
// made of it to `out`, for split_kernels. Throws std::runtime_error if it cannot.
void precompile_prelude(const std::string& prelude, const std::vector<std::string>& parse_flags, const std::string& out);

// The libclang in use ("clang version 14.0.6"), or "" where there is none: part
// of a precompiled prelude's cache key, as only the Clang that wrote one reads it.
std::string libclang_version();

// CUDA's warp intrinsics that meet their warp once (one warp_collective
// call, lockstep/emu/sync.h), which the loops run as collective steps: the
// table in lockstep/emu/collectives.h, one line each; the others
// (__match_all_sync meets twice; tiles, wmma) stay on fibers.
#define LOCKSTEP_GATHERED_NAME(name, shuffle) #name,
inline constexpr std::string_view gathered_intrinsics[] = {LOCKSTEP_GATHERED_WARP_COLLECTIVES(LOCKSTEP_GATHERED_NAME)};
#undef LOCKSTEP_GATHERED_NAME

// Whether the source may have a block barrier or a warp collective at all
// (the cheap test before a parse): __syncthreads, a cooperative-groups
// block, one of the gathered intrinsics.
inline bool mentions_synchronization(const std::string& source) {
  if (source.find("__syncthreads") != std::string::npos || source.find("this_thread_block") != std::string::npos) return true;
  for (std::string_view name : gathered_intrinsics)
    if (source.find(name) != std::string::npos) return true;
  return false;
}

// What the splitting decided, on stderr when LOCKSTEP_REGION_LOOPS_LOG is set
// (the debug log): the kernels split, and why the others stay on fibers.
void log(const std::string& source_name, const split_result& result);
// The host compiler refused the split source: it is built as written.
void log_failure(const std::string& source_name, const std::string& compiler_output);
// Whether a split source the host compiler refuses is an error instead
// (LOCKSTEP_REGION_LOOPS_STRICT set: lockstep's own tests, which would
// otherwise compare the fibers with themselves).
bool refusal_is_error();

// Whether kernels can be split here at all (libclang built against and found):
// part of the JIT cache's key, so that a module built while libclang was
// missing is built again, split, once it is there.
bool available();
// Why not, in words that say what to do (no libclang loads, and where it was
// looked for); "" where kernels can be split.
std::string unavailable_reason();

// Changes whenever the code this writes changes (part of the JIT cache's key).
inline constexpr int version = 37;

}  // namespace lockstep::emu::region_loops
