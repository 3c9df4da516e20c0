// The size of the executable's thread-local block, which holds the program's
// __shared__ variables (thread_local on the emulator): atomics.h's test of
// whether an atomic is on the running block's own shared memory.
#include <link.h>

#include "lockstep/emu/atomics.h"

namespace lockstep::emu {

std::size_t executable_tls_bytes = 0;

namespace {

// The executable is TLS module 1; on x86-64 its block ends at the thread
// pointer and starts its size, rounded up to its alignment, below it.
int find_executable_tls(dl_phdr_info* info, std::size_t, void*) {
  if (info->dlpi_tls_modid != 1) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_TLS) continue;
    const std::size_t align = segment.p_align ? segment.p_align : 1;
    executable_tls_bytes = (segment.p_memsz + align - 1) / align * align;
  }
  return 1;
}

[[maybe_unused]] const bool found = [] {
  dl_iterate_phdr(find_executable_tls, nullptr);
  return true;
}();

}  // namespace
}  // namespace lockstep::emu
