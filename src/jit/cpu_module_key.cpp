#include "cpu_module_key.h"

#include <sstream>

#include "host_build/engine_record.h"
#include "host_build/region_loops_build.h"

namespace lockstep::jit {

std::string cpu_module_key(const std::string& host, const std::string& headers, const std::vector<std::string>& flags,
                           const std::vector<std::string>& link_inputs, const std::string& tu, bool split) {
  std::ostringstream key;
  key << "lockstep-jit cpu\n" << host << "\nheaders " << headers << "\nflags";
  for (const auto& f : flags) key << ' ' << f;
  for (const auto& f : link_inputs) key << ' ' << f;
  key << "\n" << tu;
  key << "\nengine record " << host_build::engine_record_version;  // every module carries one
  if (split) key << "\n" << host_build::region_loops_key();
  return key.str();
}

}  // namespace lockstep::jit
