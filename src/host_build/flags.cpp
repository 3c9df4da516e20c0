#include "flags.h"

#include <sstream>

#include "lockstep/emu/check.h"
#include "toolchain/host_compiler.h"

namespace lockstep::host_build {

std::string cxx20_dialect(const std::string& requested, older_dialect how) {
  if (how == older_dialect::plain_cxx20) {
    for (const char* newer : {"c++2", "gnu++2"})
      if (requested.rfind(newer, 0) == 0) return requested;
    return "c++20";
  }
  for (const char* old : {"98", "03", "11", "14", "17"})
    if (requested.size() >= 2 && requested.compare(requested.size() - 2, 2, old) == 0) return requested.substr(0, requested.size() - 2) + "20";
  return requested;
}

bool has_flag_starting(const std::vector<std::string>& flags, const std::string& prefix) {
  for (const std::string& f : flags)
    if (f.rfind(prefix, 0) == 0) return true;
  return false;
}

std::vector<std::string> optimisation_defaults(const std::vector<std::string>& user_flags, bool position_independent) {
  std::vector<std::string> flags;
  if (!has_flag_starting(user_flags, "-O")) flags.push_back("-O3");
  if (!has_flag_starting(user_flags, "-g")) flags.push_back("-g1");
  if (position_independent) flags.push_back("-fPIC");
  return flags;
}

bool names_a_target(const std::vector<std::string>& user_flags) {
  return has_flag_starting(user_flags, "-march") || has_flag_starting(user_flags, "-mcpu");
}

std::vector<std::string> native_target_flags(bool user_names_a_target) {
  if (user_names_a_target) return {};
  return toolchain::find_native_target().flags;
}

std::vector<std::string> check_flags() { return emu::check_compile_flags(); }

std::vector<std::string> parse_flags_of(const std::vector<std::string>& compile_flags) {
  std::vector<std::string> parse;
  for (const auto& f : compile_flags)
    if (f.rfind("-I", 0) == 0 || f.rfind("-D", 0) == 0 || f.rfind("-U", 0) == 0 || f.rfind("-std=", 0) == 0) parse.push_back(f);
  return parse;
}

std::string host_key() { return "compiler " + toolchain::find_host_compiler().identity + "\nprocessor " + toolchain::find_native_target().cpu; }

}  // namespace lockstep::host_build
