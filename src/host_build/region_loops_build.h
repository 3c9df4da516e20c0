// Region loops in a host build: whether a translation unit is split at its
// barriers (src/emulator/compile_time/region_loops), what happens when the host compiler
// refuses the split, the precompiled prelude that makes the parse cheap, and
// what of all that a cache key must name. The JIT and lockstep nvcc both ask
// here; where they differ, the difference is a named field of split_policy.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/execution/runs_as_loops.h"

namespace lockstep::host_build {

// How a caller's sources come to the split decision.
struct split_policy {
  // Parse a source only where its text names a barrier or warp collective
  // (region_loops::mentions_synchronization). Without a precompiled prelude
  // the parse costs almost as much as the compile, so a source that cannot
  // use one is parsed only then; with one (a JIT source that begins with
  // lockstep's headers, libclang present) every source is parsed, as kernels
  // without barriers gain loops too.
  //   JIT: false (a source that begins with lockstep's headers, as its
  //   translation units do, is parsed with the prelude; another only where
  //   it names a barrier);
  //   lockstep nvcc: true (a program's preprocessed text has no prelude).
  bool parse_only_if_mentions_barrier = true;
  // Honour the engine option (LOCKSTEP_EMU_ENGINE=fibers,
  // emu::options::region_loops) at build time.
  //   JIT: true (a module is built for this process, whose engine is known;
  //   the engine is part of its cache key);
  //   lockstep nvcc: false (a program is built once and may run under either
  //   engine: its runtime declines the loops, blocks_may_run_as_loops).
  bool honour_engine_option = true;
};

// What a build knows when it decides.
struct split_inputs {
  bool checked = false;                  // check mode: every block runs on fibers (observed), nothing to split
  bool engine_allows_loops = true;       // emu::options::region_loops where the policy honours it
  bool has_precompiled_prelude = false;  // the source begins with the prelude the parse can read precompiled
  std::string_view own_text;             // the text whose barriers count (a program's own lines, not system headers)
};

// Why not to split the source's kernels into region loops ("" : split them),
// in the words of the module's record (engine_record.h, record_of_unsplit).
std::string why_not_split(const split_inputs& in, const split_policy& policy);
// Whether to split the source's kernels into region loops.
inline bool should_split(const split_inputs& in, const split_policy& policy) { return why_not_split(in, policy).empty(); }

// Compiles the split text, and where the host compiler refuses it logs the
// refusal (region_loops::log_failure) and compiles the source as written: the
// split is lockstep's doing, so the kernels then run on fibers. A source the
// host compiler refuses as written too fails with its own errors (from
// build_as_written). `build_split` returns the compiler's output when it
// refused, nothing when it built. Returns that refusal where it is an error
// (region_loops::refusal_is_error: lockstep's own tests), after the build as
// written succeeded, for the caller to raise in its own terms.
std::optional<std::string> build_split_else_as_written(const std::string& source_name, const std::function<std::optional<std::string>()>& build_split,
                                                       const std::function<void()>& build_as_written);

// The cache key of a precompiled prelude: the libclang that writes and reads
// it, lockstep's headers (bytes and write times), the parse flags, the
// prelude's text.
std::string prelude_key(const std::string& prelude, const std::vector<std::string>& parse_flags, const std::string& headers_fingerprint,
                        const std::string& headers_written);

// Writes the precompiled prelude to `out` (region_loops::precompile_prelude);
// throws std::runtime_error where it cannot.
void write_prelude(const std::string& prelude, const std::vector<std::string>& parse_flags, const std::string& out);

// What a split build's cache key names: the region-loop compiler's version,
// and whether libclang was there ("region loops 35", "region loops 35 (no
// libclang)"), so that a build made without it is made again, split, once it is.
std::string region_loops_key();

}  // namespace lockstep::host_build
