// The record of how a translation unit's kernels run, written into the source
// a build compiles (src/emulator/execution/engine_record.h holds its form):
// the split's decisions (region_loops::split_result::kernels), or why the
// unit was not split, registered with the module when it loads, as kernels
// register. The runner reads it (engine_of), not a second decision.
#pragma once
#include <string>

#include "emulator/compile_time/region_loops/region_loops.h"
#include "emulator/execution/engine_record.h"

namespace lockstep::host_build {

// The record of a split as it was made (the kernels it gave loops run so).
emu::engine_record record_of_split(const emu::region_loops::split_result& result);
// The record of the same unit built as written after the host compiler
// refused the split: every kernel on fibers.
emu::engine_record record_of_refused_split(const emu::region_loops::split_result& result);
// The record of a unit not split at all, and why (why_not_split).
emu::engine_record record_of_unsplit(const std::string& why);

// C++ to append to the translation unit: it registers `record` with the
// module at load and withdraws it at unload. Self-contained (it declares what
// it calls), so that it compiles in a preprocessed source too.
// `source_name` tells apart the names of units' registrations where one
// unit's output is included by another's (lockstep-hostify's headers).
std::string engine_record_source(const emu::engine_record& record, const std::string& source_name);

// Changes whenever the record's text or registration changes (part of the
// cache keys, with region_loops::version: region_loops_key).
inline constexpr int engine_record_version = 1;

}  // namespace lockstep::host_build
