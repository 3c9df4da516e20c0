// Minimal user-space context switching for the emulator's fibers.
//
// A fiber is a stack plus a saved stack pointer. switch_context saves the
// callee-saved registers of the running context on its own stack, stores that
// stack pointer, and continues the other context. On x86-64 this is a few
// instructions (context_x86_64.S); elsewhere it falls back to POSIX ucontext,
// which is correct but pays a signal-mask system call per switch.
#pragma once
#include <cstddef>
#if defined(LOCKSTEP_UCONTEXT)
#include <ucontext.h>
#endif

namespace lockstep::emu {

struct context {
#if defined(LOCKSTEP_UCONTEXT)
  ucontext_t* state = nullptr;  // a fiber's lives on its own stack
  ucontext_t saved;             // where a context that is not a fiber is saved
#else
  void* sp = nullptr;
#endif
};

// Prepares `ctx` so that the first switch into it calls entry(arg) on the
// stack [stack_base, stack_base + stack_bytes). entry must never return.
void make_context(context& ctx, void* stack_base, std::size_t stack_bytes, void (*entry)(void*), void* arg);

// Saves the running context into `from` and continues `to`.
void switch_context(context& from, const context& to);

}  // namespace lockstep::emu
