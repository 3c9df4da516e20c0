#include "check/finding.h"

#include <dlfcn.h>
#include <execinfo.h>

namespace lockstep::emu::check {
namespace {
const void* module_base(const void* address) {
  Dl_info info{};
  return dladdr(address, &info) ? info.dli_fbase : nullptr;
}
}  // namespace

void capture_stack(finding& f, std::uintptr_t access_pc) {
  // The hooks and the checker are liblockstep's frames; the kernel's start after them.
  static const void* const lockstep_base = module_base(reinterpret_cast<const void*>(&capture_stack));
  void* frames[stack_depth + 8];
  const int n = backtrace(frames, stack_depth + 8);
  int first = 0;
  while (first < n && module_base(frames[first]) == lockstep_base) ++first;
  int depth = 0;
  f.stack[depth++] = access_pc;
  if (first < n && reinterpret_cast<std::uintptr_t>(frames[first]) == access_pc) ++first;
  for (int i = first; i < n && depth < stack_depth; ++i) {
    if (module_base(frames[i]) == lockstep_base) break;  // back in the emulator: the kernel's frames are over
    f.stack[depth++] = reinterpret_cast<std::uintptr_t>(frames[i]);
  }
}

}  // namespace lockstep::emu::check
