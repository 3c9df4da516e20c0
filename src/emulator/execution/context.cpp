#include "context.h"

#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace lockstep::emu {

#if !defined(LOCKSTEP_UCONTEXT)

extern "C" void lockstep_switch_sp(void** save_sp, void* load_sp);
extern "C" void lockstep_context_start();

void make_context(context& ctx, void* stack_base, std::size_t stack_bytes, void (*entry)(void*), void* arg) {
  auto top = (reinterpret_cast<std::uintptr_t>(stack_base) + stack_bytes - 16) & ~std::uintptr_t{15};
  // The frame lockstep_switch_sp pops: r15, r14, r13, r12, rbx, rbp, return
  // address. After its `ret` the stack is 16-byte aligned, so the
  // trampoline's call enters `entry` with the ABI's alignment.
  auto* frame = reinterpret_cast<std::uint64_t*>(top - 56);
  frame[0] = 0;                                       // r15
  frame[1] = 0;                                       // r14
  frame[2] = reinterpret_cast<std::uint64_t>(arg);    // r13
  frame[3] = reinterpret_cast<std::uint64_t>(entry);  // r12
  frame[4] = 0;                                       // rbx
  frame[5] = 0;                                       // rbp
  frame[6] = reinterpret_cast<std::uint64_t>(&lockstep_context_start);
  ctx.sp = frame;
}

void switch_context(context& from, const context& to) { lockstep_switch_sp(&from.sp, to.sp); }

#else

namespace {
struct start_args {
  void (*entry)(void*);
  void* arg;
};
void start_trampoline(unsigned hi, unsigned lo) {
  auto* a = reinterpret_cast<start_args*>((std::uintptr_t{hi} << 32) | lo);
  a->entry(a->arg);
}
}  // namespace

void make_context(context& ctx, void* stack_base, std::size_t stack_bytes, void (*entry)(void*), void* arg) {
  // The ucontext_t and the entry arguments live at the top of the fiber's own stack.
  auto top = (reinterpret_cast<std::uintptr_t>(stack_base) + stack_bytes - sizeof(ucontext_t) - sizeof(start_args)) & ~std::uintptr_t{63};
  auto* uc = reinterpret_cast<ucontext_t*>(top);
  auto* args = reinterpret_cast<start_args*>(top + sizeof(ucontext_t));
  *args = {entry, arg};
  if (getcontext(uc) != 0) throw std::runtime_error("lockstep emulator: getcontext failed");
  uc->uc_stack.ss_sp = stack_base;
  uc->uc_stack.ss_size = top - reinterpret_cast<std::uintptr_t>(stack_base);
  uc->uc_link = nullptr;
  auto p = reinterpret_cast<std::uintptr_t>(args);
  makecontext(uc, reinterpret_cast<void (*)()>(&start_trampoline), 2, unsigned(p >> 32), unsigned(p & 0xffffffffu));
  ctx.state = uc;
}

void switch_context(context& from, const context& to) {
  // `from` may be a context that never ran through make_context (the worker's
  // own stack): it saves into its own record.
  if (!from.state) from.state = &from.saved;
  swapcontext(from.state, to.state);
}

#endif

}  // namespace lockstep::emu
