// CUDA's atomic functions on the emulator.
//
// Blocks run in parallel on OS threads, so global-memory atomics must be real
// atomics; std::atomic_ref gives that on plain memory. CUDA's atomics are
// relaxed, and so are these. Shared memory is another matter: a block's
// threads all run on its worker's OS thread, so an atomic on the block's own
// shared memory is never contended, and a plain read-modify-write does what
// it must without the `lock` (about 20 cycles, with a stall on the reload:
// simpleAttributes' loop over a shared counter spent three quarters of its
// time there). Where a program's __shared__ variables lie (thread_local on
// the emulator, in the executable's TLS block, just below the thread pointer)
// is known; shared memory elsewhere (dynamic shared memory, kernels in loaded
// modules) takes the atomic path, as does check mode, whose race checker must
// see atomics as atomics.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace lockstep::emu {

// The size of the executable's thread-local block (executable_tls.cpp; 0 until known).
extern std::size_t executable_tls_bytes;

// Whether `address` lies in the calling OS thread's own part of the executable's TLS.
inline bool in_own_executable_tls(const void* address) {
#if defined(__x86_64__) && defined(__GLIBC__) && !defined(__SANITIZE_THREAD__)
  std::uintptr_t thread_pointer;
  asm("mov %%fs:0, %0" : "=r"(thread_pointer));
  return thread_pointer - reinterpret_cast<std::uintptr_t>(address) - 1 < executable_tls_bytes;
#else
  (void)address;
  return false;
#endif
}

// Integers wrap as the atomics do (a signed overflow would be undefined in plain arithmetic).
template <class T>
inline T wrapping_add(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) + static_cast<std::make_unsigned_t<T>>(b));
  else
    return a + b;
}
template <class T>
inline T wrapping_sub(T a, T b) {
  return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) - static_cast<std::make_unsigned_t<T>>(b));
}

template <class T>
inline std::atomic_ref<T> atomic_at(T* address) {
  return std::atomic_ref<T>(*address);
}

// The block's own shared memory (in_own_executable_tls): the update as plain code.
template <class T, class F>
inline T plain_update(T* address, F next_from_old) {
  const T old = *address;
  *address = next_from_old(old);
  return old;
}

template <class T, class F>
inline T atomic_update(T* address, F next_from_old) {
  if (in_own_executable_tls(address)) return plain_update(address, next_from_old);
  auto ref = atomic_at(address);
  T old = ref.load(std::memory_order_relaxed);
  while (!ref.compare_exchange_weak(old, next_from_old(old), std::memory_order_relaxed)) {
  }
  return old;
}

}  // namespace lockstep::emu

#define LOCKSTEP_ATOMIC_FETCH(fn, member, T, next)                                                        \
  inline T fn(T* address, T val) {                                                                        \
    if (::lockstep::emu::in_own_executable_tls(address))                                                  \
      return ::lockstep::emu::plain_update(address, [val]([[maybe_unused]] T old) -> T { return next; }); \
    return ::lockstep::emu::atomic_at(address).member(val, std::memory_order_relaxed);                    \
  }

LOCKSTEP_ATOMIC_FETCH(atomicAdd, fetch_add, int, ::lockstep::emu::wrapping_add(old, val))
LOCKSTEP_ATOMIC_FETCH(atomicAdd, fetch_add, unsigned int, ::lockstep::emu::wrapping_add(old, val))
LOCKSTEP_ATOMIC_FETCH(atomicAdd, fetch_add, unsigned long long, ::lockstep::emu::wrapping_add(old, val))
LOCKSTEP_ATOMIC_FETCH(atomicAdd, fetch_add, float, ::lockstep::emu::wrapping_add(old, val))
LOCKSTEP_ATOMIC_FETCH(atomicAdd, fetch_add, double, ::lockstep::emu::wrapping_add(old, val))
LOCKSTEP_ATOMIC_FETCH(atomicSub, fetch_sub, int, ::lockstep::emu::wrapping_sub(old, val))
LOCKSTEP_ATOMIC_FETCH(atomicSub, fetch_sub, unsigned int, ::lockstep::emu::wrapping_sub(old, val))
LOCKSTEP_ATOMIC_FETCH(atomicExch, exchange, int, val)
LOCKSTEP_ATOMIC_FETCH(atomicExch, exchange, unsigned int, val)
LOCKSTEP_ATOMIC_FETCH(atomicExch, exchange, unsigned long long, val)
LOCKSTEP_ATOMIC_FETCH(atomicExch, exchange, float, val)
LOCKSTEP_ATOMIC_FETCH(atomicAnd, fetch_and, int, old& val)
LOCKSTEP_ATOMIC_FETCH(atomicAnd, fetch_and, unsigned int, old& val)
LOCKSTEP_ATOMIC_FETCH(atomicAnd, fetch_and, unsigned long long, old& val)
LOCKSTEP_ATOMIC_FETCH(atomicOr, fetch_or, int, old | val)
LOCKSTEP_ATOMIC_FETCH(atomicOr, fetch_or, unsigned int, old | val)
LOCKSTEP_ATOMIC_FETCH(atomicOr, fetch_or, unsigned long long, old | val)
LOCKSTEP_ATOMIC_FETCH(atomicXor, fetch_xor, int, old ^ val)
LOCKSTEP_ATOMIC_FETCH(atomicXor, fetch_xor, unsigned int, old ^ val)
LOCKSTEP_ATOMIC_FETCH(atomicXor, fetch_xor, unsigned long long, old ^ val)
#undef LOCKSTEP_ATOMIC_FETCH

#define LOCKSTEP_ATOMIC_UPDATE(fn, T, expr)                                             \
  inline T fn(T* address, T val) {                                                      \
    return ::lockstep::emu::atomic_update(address, [val](T old) -> T { return expr; }); \
  }

LOCKSTEP_ATOMIC_UPDATE(atomicMin, int, old < val ? old : val)
LOCKSTEP_ATOMIC_UPDATE(atomicMin, unsigned int, old < val ? old : val)
LOCKSTEP_ATOMIC_UPDATE(atomicMin, long long, old < val ? old : val)
LOCKSTEP_ATOMIC_UPDATE(atomicMin, unsigned long long, old < val ? old : val)
LOCKSTEP_ATOMIC_UPDATE(atomicMax, int, old > val ? old : val)
LOCKSTEP_ATOMIC_UPDATE(atomicMax, unsigned int, old > val ? old : val)
LOCKSTEP_ATOMIC_UPDATE(atomicMax, long long, old > val ? old : val)
LOCKSTEP_ATOMIC_UPDATE(atomicMax, unsigned long long, old > val ? old : val)
// CUDA's wrapping counters: Inc wraps to 0 past val, Dec wraps to val below 0 or above val.
LOCKSTEP_ATOMIC_UPDATE(atomicInc, unsigned int, old >= val ? 0u : old + 1u)
LOCKSTEP_ATOMIC_UPDATE(atomicDec, unsigned int, (old == 0u || old > val) ? val : old - 1u)
#undef LOCKSTEP_ATOMIC_UPDATE

template <class T>
inline T atomicCAS(T* address, std::type_identity_t<T> compare, std::type_identity_t<T> val) {
  static_assert(
      std::is_same_v<T, int> || std::is_same_v<T, unsigned int> || std::is_same_v<T, unsigned long long> || std::is_same_v<T, unsigned short>,
      "CUDA defines atomicCAS for int, unsigned int, unsigned long long and unsigned short");
  if (::lockstep::emu::in_own_executable_tls(address))
    return ::lockstep::emu::plain_update(address, [&](T old) { return old == compare ? val : old; });
  ::lockstep::emu::atomic_at(address).compare_exchange_strong(compare, val, std::memory_order_relaxed);
  return compare;  // on failure compare_exchange stores the value it saw
}

// Scope-qualified spellings (sm_60+) behave the same on one emulated device.
// Scoped atomics: the emulator's atomics are atomic for every thread of the process, which is what
// the block and system scopes promise at least.
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd
#define atomicSub_block atomicSub
#define atomicSub_system atomicSub
#define atomicExch_block atomicExch
#define atomicExch_system atomicExch
#define atomicMin_block atomicMin
#define atomicMin_system atomicMin
#define atomicMax_block atomicMax
#define atomicMax_system atomicMax
#define atomicInc_block atomicInc
#define atomicInc_system atomicInc
#define atomicDec_block atomicDec
#define atomicDec_system atomicDec
#define atomicCAS_block atomicCAS
#define atomicCAS_system atomicCAS
#define atomicAnd_block atomicAnd
#define atomicAnd_system atomicAnd
#define atomicOr_block atomicOr
#define atomicOr_system atomicOr
#define atomicXor_block atomicXor
#define atomicXor_system atomicXor

inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_block() { std::atomic_signal_fence(std::memory_order_seq_cst); }
inline void __threadfence_system() { std::atomic_thread_fence(std::memory_order_seq_cst); }
