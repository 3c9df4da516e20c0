// The calls that -fsanitize=thread inserts before every memory access of code
// compiled for check mode, answered by liblockstep instead of ThreadSanitizer's
// runtime (which check builds do not link). While a checked block runs on the
// calling OS thread, each access goes to that block's checker with the
// address of the code that made it; otherwise the hooks return at once.
// `nm -u` on an object built with -fsanitize=thread lists the ones GCC uses;
// the unaligned_*, memcpy/memset/memmove ones are Clang's; the volatile_* ones
// GCC's with --param=tsan-distinguish-volatile=1 (cmake/lockstep.cmake).
#include <cstring>

#include "check/block_checker.h"

namespace check = lockstep::emu::check;

namespace {
inline void on_access(const void* address, std::size_t size, unsigned flags, void* pc) {
  if (check::block_checker* checker = check::active_checker)
    checker->access(reinterpret_cast<std::uintptr_t>(address), size, flags, reinterpret_cast<std::uintptr_t>(pc));
}
}  // namespace

#define LOCKSTEP_HOOK extern "C" __attribute__((visibility("default")))

#define LOCKSTEP_ACCESS_HOOKS(n)                                                                                                               \
  LOCKSTEP_HOOK void __tsan_read##n(void* a) { on_access(a, n, 0, __builtin_return_address(0)); }                                              \
  LOCKSTEP_HOOK void __tsan_write##n(void* a) { on_access(a, n, check::is_write, __builtin_return_address(0)); }                               \
  LOCKSTEP_HOOK void __tsan_volatile_read##n(void* a) { on_access(a, n, check::is_volatile, __builtin_return_address(0)); }                    \
  LOCKSTEP_HOOK void __tsan_volatile_write##n(void* a) { on_access(a, n, check::is_write | check::is_volatile, __builtin_return_address(0)); } \
  LOCKSTEP_HOOK void __tsan_unaligned_read##n(void* a) { on_access(a, n, check::may_be_unaligned, __builtin_return_address(0)); }              \
  LOCKSTEP_HOOK void __tsan_unaligned_write##n(void* a) { on_access(a, n, check::is_write | check::may_be_unaligned, __builtin_return_address(0)); }
LOCKSTEP_ACCESS_HOOKS(1)
LOCKSTEP_ACCESS_HOOKS(2)
LOCKSTEP_ACCESS_HOOKS(4)
LOCKSTEP_ACCESS_HOOKS(8)
LOCKSTEP_ACCESS_HOOKS(16)
#undef LOCKSTEP_ACCESS_HOOKS

// Accesses of other sizes (bit-fields, small aggregates).
LOCKSTEP_HOOK void __tsan_read_range(void* a, unsigned long size) {
  if (size) on_access(a, size, check::may_be_unaligned, __builtin_return_address(0));
}
LOCKSTEP_HOOK void __tsan_write_range(void* a, unsigned long size) {
  if (size) on_access(a, size, check::is_write | check::may_be_unaligned, __builtin_return_address(0));
}

LOCKSTEP_HOOK void* __tsan_memcpy(void* dst, const void* src, unsigned long size) {
  if (size) {
    on_access(src, size, check::may_be_unaligned, __builtin_return_address(0));
    on_access(dst, size, check::is_write | check::may_be_unaligned, __builtin_return_address(0));
  }
  return std::memcpy(dst, src, size);
}
LOCKSTEP_HOOK void* __tsan_memmove(void* dst, const void* src, unsigned long size) {
  if (size) {
    on_access(src, size, check::may_be_unaligned, __builtin_return_address(0));
    on_access(dst, size, check::is_write | check::may_be_unaligned, __builtin_return_address(0));
  }
  return std::memmove(dst, src, size);
}
LOCKSTEP_HOOK void* __tsan_memset(void* dst, int value, unsigned long size) {
  if (size) on_access(dst, size, check::is_write | check::may_be_unaligned, __builtin_return_address(0));
  return std::memset(dst, value, size);
}

// Function entry and exit (the caller's address comes from the return
// address instead), module start, and C++ vtable pointers (objects' own
// bookkeeping, not the kernel's data): nothing to do.
LOCKSTEP_HOOK void __tsan_func_entry(void*) {}
LOCKSTEP_HOOK void __tsan_func_exit() {}
LOCKSTEP_HOOK void __tsan_init() {}
LOCKSTEP_HOOK void __tsan_vptr_update(void**, void*) {}
LOCKSTEP_HOOK void __tsan_vptr_read(void**) {}
