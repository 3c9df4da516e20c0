// Code compiled with -fsanitize=thread calls these instead of using atomic
// instructions, so they must do the atomic operation itself, always (host
// code of a check build uses them too: std::shared_ptr's counts, say). While
// a checked block runs, the access is checked first. The memory order
// argument is ignored: every operation is sequentially consistent, which is
// at least as strong as any order asked for.
#include <cstdint>
#include <mutex>

#include "check/block_checker.h"

namespace check = lockstep::emu::check;

namespace {
inline void on_atomic(const volatile void* address, std::size_t size, unsigned flags, void* pc) {
  if (check::block_checker* checker = check::active_checker)
    checker->access(reinterpret_cast<std::uintptr_t>(address), size, check::is_atomic | flags, reinterpret_cast<std::uintptr_t>(pc));
}
constexpr unsigned rmw = check::is_write | check::is_rmw;
}  // namespace

#define LOCKSTEP_HOOK extern "C" __attribute__((visibility("default")))
#define LOCKSTEP_PC __builtin_return_address(0)

#define LOCKSTEP_ATOMIC_FETCH(bits, T, op)                                    \
  LOCKSTEP_HOOK T __tsan_atomic##bits##_fetch_##op(volatile T* a, T v, int) { \
    on_atomic(a, sizeof(T), rmw, LOCKSTEP_PC);                                \
    return __atomic_fetch_##op(a, v, __ATOMIC_SEQ_CST);                       \
  }

#define LOCKSTEP_ATOMIC_HOOKS(bits, T)                                                                          \
  LOCKSTEP_HOOK T __tsan_atomic##bits##_load(const volatile T* a, int) {                                        \
    on_atomic(a, sizeof(T), 0, LOCKSTEP_PC);                                                                    \
    return __atomic_load_n(a, __ATOMIC_SEQ_CST);                                                                \
  }                                                                                                             \
  LOCKSTEP_HOOK void __tsan_atomic##bits##_store(volatile T* a, T v, int) {                                     \
    on_atomic(a, sizeof(T), check::is_write, LOCKSTEP_PC);                                                      \
    __atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                                                   \
  }                                                                                                             \
  LOCKSTEP_HOOK T __tsan_atomic##bits##_exchange(volatile T* a, T v, int) {                                     \
    on_atomic(a, sizeof(T), rmw, LOCKSTEP_PC);                                                                  \
    return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);                                                         \
  }                                                                                                             \
  LOCKSTEP_ATOMIC_FETCH(bits, T, add)                                                                           \
  LOCKSTEP_ATOMIC_FETCH(bits, T, sub)                                                                           \
  LOCKSTEP_ATOMIC_FETCH(bits, T, and)                                                                           \
  LOCKSTEP_ATOMIC_FETCH(bits, T, or)                                                                            \
  LOCKSTEP_ATOMIC_FETCH(bits, T, xor)                                                                           \
  LOCKSTEP_ATOMIC_FETCH(bits, T, nand)                                                                          \
  LOCKSTEP_HOOK bool __tsan_atomic##bits##_compare_exchange_strong(volatile T* a, T* expected, T v, int, int) { \
    on_atomic(a, sizeof(T), rmw, LOCKSTEP_PC);                                                                  \
    return __atomic_compare_exchange_n(a, expected, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);              \
  }                                                                                                             \
  LOCKSTEP_HOOK bool __tsan_atomic##bits##_compare_exchange_weak(volatile T* a, T* expected, T v, int, int) {   \
    on_atomic(a, sizeof(T), rmw, LOCKSTEP_PC);                                                                  \
    return __atomic_compare_exchange_n(a, expected, v, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);               \
  }                                                                                                             \
  LOCKSTEP_HOOK T __tsan_atomic##bits##_compare_exchange_val(volatile T* a, T expected, T v, int, int) {        \
    on_atomic(a, sizeof(T), rmw, LOCKSTEP_PC);                                                                  \
    __atomic_compare_exchange_n(a, &expected, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                    \
    return expected;                                                                                            \
  }

LOCKSTEP_ATOMIC_HOOKS(8, std::uint8_t)
LOCKSTEP_ATOMIC_HOOKS(16, std::uint16_t)
LOCKSTEP_ATOMIC_HOOKS(32, std::uint32_t)
LOCKSTEP_ATOMIC_HOOKS(64, std::uint64_t)
#undef LOCKSTEP_ATOMIC_HOOKS
#undef LOCKSTEP_ATOMIC_FETCH

// 16-byte atomics: x86-64 has them only with cmpxchg16b, which liblockstep
// is not built to assume, so they take a lock (and are atomic with respect
// to each other, which is all that code compiled for check mode can ask).
namespace {
using u128 = unsigned __int128;
std::mutex& lock_128() {
  static std::mutex m;
  return m;
}
template <class F>
u128 update_128(volatile u128* a, F next) {
  std::lock_guard lock(lock_128());
  const u128 old = *a;
  *a = next(old);
  return old;
}
}  // namespace

LOCKSTEP_HOOK u128 __tsan_atomic128_load(const volatile u128* a, int) {
  on_atomic(a, 16, 0, LOCKSTEP_PC);
  std::lock_guard lock(lock_128());
  return *a;
}
LOCKSTEP_HOOK void __tsan_atomic128_store(volatile u128* a, u128 v, int) {
  on_atomic(a, 16, check::is_write, LOCKSTEP_PC);
  update_128(a, [v](u128) { return v; });
}
#define LOCKSTEP_ATOMIC128(name, expr)                                        \
  LOCKSTEP_HOOK u128 __tsan_atomic128_##name(volatile u128* a, u128 v, int) { \
    on_atomic(a, 16, rmw, LOCKSTEP_PC);                                       \
    return update_128(a, [v]([[maybe_unused]] u128 old) { return expr; });    \
  }
LOCKSTEP_ATOMIC128(exchange, v)
LOCKSTEP_ATOMIC128(fetch_add, old + v)
LOCKSTEP_ATOMIC128(fetch_sub, old - v)
LOCKSTEP_ATOMIC128(fetch_and, old& v)
LOCKSTEP_ATOMIC128(fetch_or, old | v)
LOCKSTEP_ATOMIC128(fetch_xor, old ^ v)
LOCKSTEP_ATOMIC128(fetch_nand, ~(old& v))
#undef LOCKSTEP_ATOMIC128
namespace {
bool compare_exchange_128(volatile u128* a, u128* expected, u128 v, void* pc) {
  on_atomic(a, 16, rmw, pc);
  std::lock_guard lock(lock_128());
  if (*a == *expected) {
    *a = v;
    return true;
  }
  *expected = *a;
  return false;
}
}  // namespace
LOCKSTEP_HOOK bool __tsan_atomic128_compare_exchange_strong(volatile u128* a, u128* expected, u128 v, int, int) {
  return compare_exchange_128(a, expected, v, LOCKSTEP_PC);
}
LOCKSTEP_HOOK bool __tsan_atomic128_compare_exchange_weak(volatile u128* a, u128* expected, u128 v, int, int) {
  return compare_exchange_128(a, expected, v, LOCKSTEP_PC);
}

// __threadfence() and __threadfence_block(): racecheck counts the running
// thread's earlier writes as published.
LOCKSTEP_HOOK void __tsan_atomic_thread_fence(int) {
  if (check::block_checker* checker = check::active_checker) checker->fenced();
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
LOCKSTEP_HOOK void __tsan_atomic_signal_fence(int) {
  if (check::block_checker* checker = check::active_checker) checker->fenced();
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
}
