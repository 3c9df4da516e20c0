#include "check/thread_memory.h"

#include <link.h>
#include <pthread.h>

namespace lockstep::emu::check {
namespace {

// glibc's entry to a module's thread-local block for the calling thread,
// which it allocates on first use (the module id comes from dl_iterate_phdr).
struct tls_index {
  unsigned long module, offset;
};
extern "C" void* __tls_get_addr(tls_index*);

template <class F>
void each_module(F&& f) {
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        (*static_cast<F*>(data))(*info);
        return 0;
      },
      &f);
}

std::size_t tls_bytes(const dl_phdr_info& info) {
  for (int i = 0; i < info.dlpi_phnum; ++i)
    if (info.dlpi_phdr[i].p_type == PT_TLS) return info.dlpi_phdr[i].p_memsz;
  return 0;
}

bool holds(const dl_phdr_info& info, std::uintptr_t address) {
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& p = info.dlpi_phdr[i];
    if (p.p_type == PT_LOAD && address - (info.dlpi_addr + p.p_vaddr) < p.p_memsz) return true;
  }
  return false;
}

}  // namespace

address_ranges static_data() {
  address_ranges ranges;
  each_module([&](const dl_phdr_info& info) {
    for (int i = 0; i < info.dlpi_phnum; ++i) {
      const ElfW(Phdr)& p = info.dlpi_phdr[i];
      if (p.p_type == PT_LOAD) ranges.add({info.dlpi_addr + p.p_vaddr, info.dlpi_addr + p.p_vaddr + p.p_memsz});
    }
  });
  ranges.sort();
  return ranges;
}

address_range own_stack() {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return {};
  void* low = nullptr;
  std::size_t size = 0;
  pthread_attr_getstack(&attr, &low, &size);
  pthread_attr_destroy(&attr);
  return {reinterpret_cast<std::uintptr_t>(low), reinterpret_cast<std::uintptr_t>(low) + size};
}

address_ranges own_thread_locals() {
  address_ranges ranges;
  each_module([&](const dl_phdr_info& info) {
    if (const std::size_t bytes = tls_bytes(info); bytes && info.dlpi_tls_data) {
      const auto begin = reinterpret_cast<std::uintptr_t>(info.dlpi_tls_data);
      ranges.add({begin, begin + bytes});
    }
  });
  ranges.sort();
  return ranges;
}

address_range own_thread_locals_of(const void* code) {
  tls_index index{0, 0};
  std::size_t bytes = 0;
  each_module([&](const dl_phdr_info& info) {
    if (const std::size_t n = tls_bytes(info); n && holds(info, reinterpret_cast<std::uintptr_t>(code))) {
      index.module = info.dlpi_tls_modid;
      bytes = n;
    }
  });
  if (!bytes) return {};
  // Outside dl_iterate_phdr, which holds the loader's lock that allocating a block may take.
  const auto begin = reinterpret_cast<std::uintptr_t>(__tls_get_addr(&index));
  return {begin, begin + bytes};
}

}  // namespace lockstep::emu::check
