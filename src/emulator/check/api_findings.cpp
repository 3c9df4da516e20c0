#include "check/api_findings.h"

#include <dlfcn.h>
#include <execinfo.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <utility>
#include <vector>

#include "check/symbolizer.h"
#include "lockstep/emu/check.h"
#include "lockstep/emu/options.h"

namespace lockstep::emu {
namespace {

std::mutex& findings_mutex() {
  static std::mutex m;
  return m;
}
std::vector<check_report>& kept() {
  static std::vector<check_report> reports;
  return reports;
}
// Beyond this many, findings are printed but not kept (a loop of failing calls).
constexpr std::size_t kept_limit = 256;

const void* module_base(const void* address) {
  Dl_info info{};
  return dladdr(address, &info) ? info.dli_fbase : nullptr;
}

// Return addresses from the API call outwards, liblockstep's own frames left out
// (the runtime's wrappers), so that user_line finds the program's line.
std::vector<std::uintptr_t> caller_stack(const void* caller) {
  static const void* const lockstep_base = module_base(reinterpret_cast<const void*>(&caller_stack));
  void* frames[16];
  const int n = backtrace(frames, 16);
  std::vector<std::uintptr_t> stack;
  if (module_base(caller) != lockstep_base) stack.push_back(reinterpret_cast<std::uintptr_t>(caller));
  for (int i = 0; i < n; ++i)
    if (frames[i] != caller && module_base(frames[i]) != lockstep_base) stack.push_back(reinterpret_cast<std::uintptr_t>(frames[i]));
  return stack;
}

}  // namespace

std::vector<check_report> take_api_findings() {
  std::lock_guard lock(findings_mutex());
  return std::exchange(kept(), {});
}

namespace check {

void api_call_failed(const char* call, cudaError_t code, const std::string& why, const void* caller) {
  if (!(get_options().checks & static_cast<unsigned>(check_tool::memcheck))) return;
  check_report r;
  r.tool = check_tool::memcheck;
  r.what = std::string(call) + " failed with " + cudaGetErrorName(code) + ": " + why;
  r.at = user_line(caller_stack(caller));
  const std::string text = "lockstep check: a CUDA API call has 1 finding:\n  " + r.str();
  std::fprintf(stderr, "%s\n", text.c_str());
  if (const char* path = std::getenv("LOCKSTEP_CHECK_REPORT"))
    if (std::FILE* out = std::fopen(path, "a")) {
      std::fprintf(out, "%s\n", text.c_str());
      std::fclose(out);
    }
  std::lock_guard lock(findings_mutex());
  if (kept().size() < kept_limit) kept().push_back(std::move(r));
}

}  // namespace check
}  // namespace lockstep::emu
