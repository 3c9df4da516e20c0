#include "region_loops_build.h"

#include <sstream>

#include "emulator/compile_time/region_loops/region_loops.h"
#include "engine_record.h"

namespace lockstep::host_build {
namespace region_loops = emu::region_loops;

std::string why_not_split(const split_inputs& in, const split_policy& policy) {
  const bool engine_allows = !policy.honour_engine_option || in.engine_allows_loops;
  if (!emu::blocks_may_run_as_loops({.region_loops_option = engine_allows, .checked = in.checked}))
    return in.checked ? "it was built for check mode, which runs every thread on a fiber"
                      : "it was built while the engine option asked for fibers (LOCKSTEP_EMU_ENGINE=fibers)";
  if (region_loops::mentions_synchronization(std::string(in.own_text))) return "";
  if (!policy.parse_only_if_mentions_barrier && in.has_precompiled_prelude && region_loops::available()) return "";
  return "the region-loop compiler did not parse its translation unit, whose own lines name no barrier or warp collective";
}

std::optional<std::string> build_split_else_as_written(const std::string& source_name, const std::function<std::optional<std::string>()>& build_split,
                                                       const std::function<void()>& build_as_written) {
  const std::optional<std::string> refused = build_split();
  if (!refused) return std::nullopt;
  region_loops::log_failure(source_name, *refused);
  build_as_written();
  if (region_loops::refusal_is_error()) return refused;
  return std::nullopt;
}

std::string prelude_key(const std::string& prelude, const std::vector<std::string>& parse_flags, const std::string& headers_fingerprint,
                        const std::string& headers_written) {
  std::ostringstream key;
  key << "lockstep-jit region-loops prelude\n"
      << region_loops::libclang_version() << "\nheaders " << headers_fingerprint << " " << headers_written << "\nflags";
  for (const auto& f : parse_flags) key << ' ' << f;
  key << "\n" << prelude;
  return key.str();
}

void write_prelude(const std::string& prelude, const std::vector<std::string>& parse_flags, const std::string& out) {
  region_loops::precompile_prelude(prelude, parse_flags, out);
}

std::string region_loops_key() {
  return "region loops " + std::to_string(region_loops::version) + " record " + std::to_string(engine_record_version) +
         (region_loops::available() ? "" : " (no libclang)");
}

}  // namespace lockstep::host_build
