// Device printf, assert, __ldg and clocks on the emulator.
#pragma once
#include <cassert>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <type_traits>

#include "lockstep/emu/builtins.h"
#include "lockstep/launch_limits.h"

namespace lockstep::emu {
// A failed device assert ends the launch with an error naming the thread and
// block, as a trap does on the GPU, instead of aborting the host process.
[[noreturn]] void device_assert_failed(const char* expression, const char* file, unsigned line, const char* function);
// __trap() ends the launch with cudaErrorLaunchFailure, as on the GPU, naming
// the thread and the line.
[[noreturn]] void device_trap(const char* file, unsigned line, const char* function);
}  // namespace lockstep::emu

#define __trap() ::lockstep::emu::device_trap(__FILE__, __LINE__, __func__)

// glibc's assert expands to __assert_fail(...); renaming it here reaches every
// assert written after this header, whenever <cassert> itself was included.
#if defined(__GLIBC__)
#define __assert_fail(expr, file, line, fn) ::lockstep::emu::device_assert_failed(expr, file, line, fn)
#endif

// __ldg and the cache-hint loads and stores (ld.global.cg/.ca/.cs/.lu/.cv,
// st.global.cg/.cs/.wb/.wt): on the emulator plain accesses through the
// pointer, for every type CUDA declares them on (scalars, vector types,
// __half, __nv_bfloat16 and their pairs). The stored value converts to the
// pointee's type, as CUDA's non-template overloads convert it.
template <class T>
inline T __ldg(const T* address) {
  return *address;
}
template <class T>
inline T __ldcg(const T* address) {
  return *address;
}
template <class T>
inline T __ldca(const T* address) {
  return *address;
}
template <class T>
inline T __ldcs(const T* address) {
  return *address;
}
template <class T>
inline T __ldlu(const T* address) {
  return *address;
}
template <class T>
inline T __ldcv(const T* address) {
  return *address;
}
template <class T>
inline void __stcg(T* address, std::type_identity_t<T> value) {
  *address = value;
}
template <class T>
inline void __stcs(T* address, std::type_identity_t<T> value) {
  *address = value;
}
template <class T>
inline void __stwb(T* address, std::type_identity_t<T> value) {
  *address = value;
}
template <class T>
inline void __stwt(T* address, std::type_identity_t<T> value) {
  *address = value;
}

// __globaltimer: nanoseconds. clock64: cycles of an SM clocked at the H100's
// rate, counted from the same wall time, so that code converting clocks to time
// with cudaDeviceProp::clockRate gets time.
inline unsigned long long __globaltimer() {
  return static_cast<unsigned long long>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}
inline long long clock64() {
  return static_cast<long long>(static_cast<unsigned __int128>(__globaltimer()) * ::lockstep::h100_sm_limits.clock_khz / 1000000);
}

namespace lockstep::emu {
// What `clock()` in a CUDA program means: the SM's cycle counter inside a
// kernel, the C library's processor time in host code. The driver's rewrite
// sends the program's own `clock()` calls here (a header cannot rename ::clock).
inline std::clock_t device_or_host_clock() { return current.block ? static_cast<std::clock_t>(clock64()) : std::clock(); }
}  // namespace lockstep::emu
