#include "lockstep/emu/options.h"

#include "lockstep/emu/check.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>

namespace lockstep::emu {
namespace {

options from_environment() {
  options o;
  if (const char* w = std::getenv("LOCKSTEP_EMU_WORKERS")) o.workers = static_cast<unsigned>(std::strtoul(w, nullptr, 10));
  if (const char* order = std::getenv("LOCKSTEP_EMU_ORDER")) o.order = parse_thread_order(order, &o.seed);
  if (const char* kib = std::getenv("LOCKSTEP_EMU_STACK_KIB")) o.stack_bytes = std::strtoull(kib, nullptr, 10) * 1024;
  if (const char* checks = std::getenv("LOCKSTEP_CHECK")) o.checks = parse_checks(checks);
  if (const char* seconds = std::getenv("LOCKSTEP_EMU_TIMEOUT")) o.timeout_seconds = std::strtod(seconds, nullptr);
  if (const char* devices = std::getenv("LOCKSTEP_EMU_DEVICES")) {
    const unsigned long n = std::strtoul(devices, nullptr, 10);
    if (n < 1 || n > 8) throw std::invalid_argument(std::string("LOCKSTEP_EMU_DEVICES is '") + devices + "': use a number of devices from 1 to 8");
    o.devices = static_cast<unsigned>(n);
  }
  if (const char* quiet = std::getenv("LOCKSTEP_QUIET_FIBERS")) o.quiet_fibers = *quiet && std::string(quiet) != "0";
  if (const char* engine = std::getenv("LOCKSTEP_EMU_ENGINE")) {
    const std::string e = engine;
    if (e != "loops" && e != "fibers") throw std::invalid_argument("LOCKSTEP_EMU_ENGINE is '" + e + "': use loops or fibers");
    o.region_loops = e == "loops";
  }
  return o;
}

std::mutex& options_mutex() {
  static std::mutex m;
  return m;
}
options& current_options() {
  static options o = from_environment();
  return o;
}

}  // namespace

options get_options() {
  std::lock_guard lock(options_mutex());
  return current_options();
}

void set_options(const options& o) {
  if (o.stack_bytes < 16 * 1024) throw std::invalid_argument("lockstep emulator: stack_bytes must be at least 16 KiB");
  if (o.checks & ~all_checks) throw std::invalid_argument("lockstep emulator: checks has bits other than lockstep::emu::check_tool's");
  if (!(o.timeout_seconds >= 0)) throw std::invalid_argument("lockstep emulator: timeout must be 0 (no limit) or a positive number of seconds");
  std::lock_guard lock(options_mutex());
  current_options() = o;
}

const char* to_string(thread_order order) {
  switch (order) {
    case thread_order::forward:
      return "forward";
    case thread_order::reverse:
      return "reverse";
    case thread_order::random:
      return "random";
  }
  return "?";
}

thread_order parse_thread_order(const std::string& text, std::uint64_t* seed) {
  if (text == "forward") return thread_order::forward;
  if (text == "reverse") return thread_order::reverse;
  if (text.rfind("random", 0) == 0) {
    if (text.size() > 7 && text[6] == ':' && seed) *seed = std::strtoull(text.c_str() + 7, nullptr, 10);
    return thread_order::random;
  }
  throw std::invalid_argument("lockstep emulator: thread order '" + text + "' is not one of forward, reverse, random[:seed]");
}

namespace {
constexpr check_tool tools[] = {check_tool::memcheck, check_tool::racecheck, check_tool::synccheck, check_tool::initcheck};
}

unsigned parse_checks(const std::string& text) {
  if (text.empty() || text == "0" || text == "off" || text == "none") return 0;
  if (text == "1" || text == "on" || text == "all") return all_checks;
  unsigned checks = 0;
  for (std::size_t begin = 0; begin <= text.size();) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::string word = text.substr(begin, end - begin);
    unsigned bit = 0;
    for (check_tool tool : tools)
      if (word == to_string(tool)) bit = static_cast<unsigned>(tool);
    if (!bit)
      throw std::invalid_argument("lockstep emulator: LOCKSTEP_CHECK names '" + word +
                                  "'; use 1 (all checks), 0, or a comma list of memcheck, racecheck, synccheck, initcheck");
    checks |= bit;
    begin = end + 1;
  }
  return checks;
}

// One home for the flags, which the build room (src/host_build) hands to the JIT and lockstep nvcc.
std::vector<std::string> check_compile_flags() {
  std::vector<std::string> flags;
  std::istringstream words(LOCKSTEP_CHECK_FLAGS);  // from cmake/lockstep.cmake's LOCKSTEP_CHECK_COMPILE_OPTIONS
  for (std::string flag; words >> flag;) flags.push_back(flag);
  return flags;
}

std::string checks_to_string(unsigned checks) {
  std::string out;
  for (check_tool tool : tools)
    if (checks & static_cast<unsigned>(tool)) {
      if (!out.empty()) out += ',';
      out += to_string(tool);
    }
  return out.empty() ? "none" : out;
}

}  // namespace lockstep::emu
