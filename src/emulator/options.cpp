#include "lockstep/emu/options.h"

#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>

namespace lockstep::emu {
namespace {

options from_environment() {
  options o;
  if (const char* w = std::getenv("LOCKSTEP_EMU_WORKERS")) o.workers = static_cast<unsigned>(std::strtoul(w, nullptr, 10));
  if (const char* order = std::getenv("LOCKSTEP_EMU_ORDER")) o.order = parse_thread_order(order, &o.seed);
  if (const char* kib = std::getenv("LOCKSTEP_EMU_STACK_KIB")) o.stack_bytes = std::strtoull(kib, nullptr, 10) * 1024;
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
  std::lock_guard lock(options_mutex());
  current_options() = o;
}

const char* to_string(thread_order order) {
  switch (order) {
    case thread_order::forward: return "forward";
    case thread_order::reverse: return "reverse";
    case thread_order::random: return "random";
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

}  // namespace lockstep::emu
