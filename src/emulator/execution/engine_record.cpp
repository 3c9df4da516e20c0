// The records of how kernels run (engine_record.h), registered by the
// modules that carry them, and what the runner and the engine query read
// from them (lockstep/emu/kernel_engine.h, kernel_engine_notices.h).
#include "engine_record.h"

#include <dlfcn.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "kernel_engine_notices.h"
#include "kernel_info.h"
#include "lockstep/emu/kernel_engine.h"
#include "lockstep/emu/options.h"
#include "runs_as_loops.h"

namespace lockstep::emu {
namespace {

const void* module_of(const void* address) {
  Dl_info dl{};
  return dladdr(address, &dl) ? dl.dli_fbase : nullptr;
}

struct registry {
  std::mutex mutex;
  // Per module (its base address), its units' records by their registration's address.
  std::map<const void*, std::map<const void*, engine_record>> modules;
  std::set<std::pair<const void*, std::string>> said;  // kernels that said they run on fibers
  bool said_unrecorded = false;                        // the program said its kernels were built without the compiler
};
registry& records() {
  static registry* r = new registry;  // never destroyed: modules withdraw their records at exit, in any order
  return *r;
}

// "void ns::k<16>(float*, int)" -> "k": the unqualified name a record uses.
std::string unqualified(const std::string& name) {
  int depth = 0;
  std::size_t end = name.size();
  for (std::size_t i = 0; i < name.size(); ++i) {
    depth += name[i] == '<' ? 1 : name[i] == '>' ? -1 : 0;
    if (depth == 0 && name[i] == '(') {
      end = i;
      break;
    }
  }
  std::string s = name.substr(0, end);
  if (!s.empty() && s.back() == '>') {
    depth = 0;
    for (std::size_t i = s.size(); i-- > 0;) {
      depth += s[i] == '>' ? 1 : s[i] == '<' ? -1 : 0;
      if (depth == 0) {
        s.erase(i);
        break;
      }
    }
  }
  if (const std::size_t colons = s.rfind("::"); colons != std::string::npos) s.erase(0, colons + 2);
  if (const std::size_t space = s.rfind(' '); space != std::string::npos) s.erase(0, space + 1);
  return s;
}

const char* unrecorded_why =
    "it was built without lockstep's kernel compiler (a plain host-compiler build against lockstep/cuda.h), so this "
    "program's kernels with barriers run on fibers, several times slower; build it with `lockstep nvcc`, or its .cu files "
    "through `lockstep-hostify --split-barriers` (CMake: lockstep_host_sources)";

}  // namespace

engine_verdict engine_verdict_of(const void* kernel, const engine_settings& settings) {
  const kernel_info& info = kernel_info_for(kernel);
  engine_verdict v;
  v.engine.kernel = unqualified(info.name);
  if (!settings.region_loops_option)
    v.engine.why = "the engine option asks for fibers (LOCKSTEP_EMU_ENGINE=fibers)";
  else if (settings.checked)
    v.engine.why = "check mode runs every thread on a fiber";
  else if (!settings.forward_order)
    v.engine.why = "a thread order other than forward (LOCKSTEP_EMU_ORDER) runs on fibers";
  else if (settings.grid_sync)
    v.engine.why = "a cooperative launch (grid.sync()) runs every thread on a fiber";
  if (!blocks_may_run_as_loops(settings)) {
    v.kind = engine_verdict::asked;
    return v;
  }
  registry& r = records();
  std::lock_guard lock(r.mutex);
  const auto module = r.modules.find(module_of(kernel));
  if (module == r.modules.end()) {
    v.kind = engine_verdict::unrecorded;
    v.engine.why = unrecorded_why;
    return v;
  }
  std::string unit_notes;
  for (const auto& [registration, record] : module->second) {
    for (const recorded_kernel& k : record.kernels)
      if (k.name == v.engine.kernel) {
        v.engine.where = k.file + ":" + std::to_string(k.line);
        v.engine.loops = k.loops;
        v.engine.why = k.why_fibers;
        v.kind = k.loops ? engine_verdict::loops : engine_verdict::declined;
        return v;
      }
    if (!record.unit_note.empty() && unit_notes.find(record.unit_note) == std::string::npos)
      unit_notes += (unit_notes.empty() ? "" : "; ") + record.unit_note;
  }
  v.kind = engine_verdict::unit;
  v.engine.why = unit_notes.empty() ? "the region-loop compiler did not record it (a kernel defined outside its unit's own file)" : unit_notes;
  return v;
}

namespace {
std::string notice_text(const engine_verdict& v) {
  return "kernel " + v.engine.kernel + (v.engine.where.empty() ? "" : " (" + v.engine.where + ")") +
         " runs on fibers, not region loops: " + v.engine.why + "; LOCKSTEP_QUIET_FIBERS=1 silences this";
}

// Whether the notice is yet to be said, marking it said.
bool first_time(const void* kernel, const engine_verdict& v) {
  registry& r = records();
  std::lock_guard lock(r.mutex);
  if (v.kind == engine_verdict::unrecorded) return !std::exchange(r.said_unrecorded, true);
  return r.said.emplace(module_of(kernel), v.engine.kernel).second;
}
}  // namespace

void say_fibers_at_launch(const void* kernel, const engine_verdict& v) {
  if (v.kind != engine_verdict::declined || get_options().quiet_fibers || !first_time(kernel, v)) return;
  std::fprintf(stderr, "lockstep: %s\n", notice_text(v).c_str());
}

void say_fibers_at_wait(const void* kernel, const engine_verdict& v) {
  if ((v.kind != engine_verdict::unit && v.kind != engine_verdict::unrecorded) || get_options().quiet_fibers || !first_time(kernel, v)) return;
  std::fprintf(stderr, "lockstep: %s\n", notice_text(v).c_str());
}

namespace {
engine_settings settings_now() {
  const options o = get_options();
  return {.region_loops_option = o.region_loops, .checked = o.checks != 0, .forward_order = o.order == thread_order::forward};
}
}  // namespace

kernel_engine engine_of(const void* kernel) { return engine_verdict_of(kernel, settings_now()).engine; }

std::string take_fibers_notice(const void* kernel) {
  const engine_verdict v = engine_verdict_of(kernel, settings_now());
  if (v.kind != engine_verdict::declined || get_options().quiet_fibers || !first_time(kernel, v)) return "";
  return notice_text(v);
}

}  // namespace lockstep::emu

// Called by the registration each recorded unit carries (host_build::engine_record_source).
extern "C" __attribute__((visibility("default"))) void lockstep_emu_engine_record(const void* in_module, const char* record, int loaded) {
  using namespace lockstep::emu;
  registry& r = records();
  const void* module = module_of(in_module);
  std::lock_guard lock(r.mutex);
  if (loaded) {
    r.modules[module][in_module] = engine_record_text::read(record);
    return;
  }
  const auto found = r.modules.find(module);
  if (found == r.modules.end()) return;
  found->second.erase(in_module);
  if (found->second.empty()) r.modules.erase(found);
  // A module loaded again at the same address says again.
  for (auto it = r.said.begin(); it != r.said.end();) it = it->first == module ? r.said.erase(it) : std::next(it);
}
