// The signal handlers of fault.h, the alternate stacks they run on, and the
// watchdog that interrupts launches.
//
// Handlers may only read what cannot change under them: the published
// workers (the pool's, alive as long as the process), the previous handlers
// (copies that are never freed), atomics.
#undef _FORTIFY_SOURCE  // its siglongjmp check refuses jumps off an alternate stack on some glibcs
#include "fault.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <semaphore.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <ctime>
#include <mutex>
#include <thread>

namespace lockstep::emu::fault {

namespace {

constexpr int fault_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT};
// The watchdog's signal to a worker carries this value (sigqueue), so any
// other use of the same signal number goes on to its own handler.
constexpr int ping_value = 0x6c6b7370;
// How often the watchdog signals a worker that has not left its block yet (it
// was outside the kernel's code when last signalled).
constexpr auto ping_period = std::chrono::milliseconds(10);

int ping_signal() {
  static const int sig = SIGRTMIN + 6;
  return sig;
}

// What each signal did before lockstep's handler; copies never freed, as a
// handler on another thread may be reading the last one.
std::atomic<const struct sigaction*> previous[NSIG];

// The launch running now (launches are one at a time).
std::atomic<worker*> launch_workers{nullptr};
std::atomic<unsigned> launch_worker_count{0};
std::atomic<int> interrupt_requested{0};
struct code_range {
  std::uintptr_t begin = 0, end = 0;
};
constexpr unsigned max_code_ranges = 8;
code_range kernel_code[max_code_ranges];
std::atomic<unsigned> kernel_code_count{0};

worker* this_worker() {
  worker* workers = launch_workers.load(std::memory_order_acquire);
  if (!workers) return nullptr;
  const unsigned n = launch_worker_count.load(std::memory_order_relaxed);
  const pthread_t self = pthread_self();
  for (unsigned i = 0; i < n; ++i)
    if (pthread_equal(workers[i].thread, self)) return &workers[i];
  return nullptr;
}

bool in_kernel_code(std::uintptr_t pc) {
  const unsigned n = kernel_code_count.load(std::memory_order_acquire);
  for (unsigned i = 0; i < n; ++i)
    if (pc >= kernel_code[i].begin && pc < kernel_code[i].end) return true;
  return false;
}

std::uintptr_t pc_of(const ucontext_t* uc) {
#if defined(__x86_64__)
  return static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<std::uintptr_t>(uc->uc_mcontext.pc);
#else
  (void)uc;
  return 0;
#endif
}

void fill(record& r, int sig, const siginfo_t* info, const void* context) {
  const auto* uc = static_cast<const ucontext_t*>(context);
  r.signal = sig;
  r.code = info->si_code;
  r.address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  r.pc = pc_of(uc);
#if defined(__x86_64__)
  const greg_t* g = uc->uc_mcontext.gregs;
  r.sp = static_cast<std::uintptr_t>(g[REG_RSP]);
  r.error_code = static_cast<std::uint64_t>(g[REG_ERR]);
  constexpr int order[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
                             REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};
  for (int i = 0; i < 16; ++i) r.registers[i] = static_cast<std::uint64_t>(g[order[i]]);
#elif defined(__aarch64__)
  r.sp = static_cast<std::uintptr_t>(uc->uc_mcontext.sp);
#endif
}

bool is_fault_signal(int sig) { return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGTRAP; }

// The default action, as if no handler had been installed: a fault the CPU
// raised repeats when the handler returns and its instruction runs again; a
// signal that was sent, or a trap (which does not repeat), is sent again, to
// be taken once the handler returns.
void default_action(int sig, const siginfo_t* info) {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  if (info->si_code <= 0 || sig == SIGTRAP || !is_fault_signal(sig)) raise(sig);
}

// SIGINT's handler is put back in front at launches (install_handlers), so a
// handler installed after lockstep's that calls it as its previous one would
// be called back by it, without end. A call of the previous handler from
// within itself, on the same thread and stack, is that cycle: it ends in the
// default action. (Fault handlers are installed once, behind such handlers.)
struct sigint_chain_call {
  std::atomic<pthread_t> thread{};
  std::atomic<std::uintptr_t> frame{0};
} sigint_in_chain;

bool called_back_by_a_cycle(std::uintptr_t frame) {
  const std::uintptr_t outer = sigint_in_chain.frame.load();
  return outer && pthread_equal(sigint_in_chain.thread.load(), pthread_self()) && outer > frame && outer - frame < (1u << 20);
}

void call_previous(int sig, const struct sigaction& prev, siginfo_t* info, void* context) {
  if (sig != SIGINT) {
    if (prev.sa_flags & SA_SIGINFO)
      prev.sa_sigaction(sig, info, context);
    else
      prev.sa_handler(sig);
    return;
  }
  const auto frame = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  if (called_back_by_a_cycle(frame)) return default_action(sig, info);
  sigint_in_chain.thread.store(pthread_self());
  sigint_in_chain.frame.store(frame);
  if (prev.sa_flags & SA_SIGINFO)
    prev.sa_sigaction(sig, info, context);
  else
    prev.sa_handler(sig);
  sigint_in_chain.frame.store(0);
}

void chain(int sig, siginfo_t* info, void* context) {
  const struct sigaction* prev = previous[sig].load(std::memory_order_acquire);
  if (!prev) return default_action(sig, info);
  if (prev->sa_flags & SA_SIGINFO) {
    if (prev->sa_sigaction) call_previous(sig, *prev, info, context);
    return;
  }
  if (prev->sa_handler == SIG_IGN) {
    if (is_fault_signal(sig) && info->si_code > 0) default_action(sig, info);  // a CPU fault cannot be ignored
    return;
  }
  if (prev->sa_handler == SIG_DFL) return default_action(sig, info);
  call_previous(sig, *prev, info, context);
}

[[noreturn]] void leave_block(worker& w, int sig, const siginfo_t* info, const void* context, bool interrupted) {
  w.armed.store(0, std::memory_order_relaxed);
  fill(w.seen, sig, info, context);
  w.seen.frame_count = 0;
  if (sig == SIGABRT) {  // libgcc's unwinder was loaded at installation: no allocation here
    void* frames[16];
    w.seen.frame_count = backtrace(frames, 16);
    for (int i = 0; i < w.seen.frame_count; ++i) w.seen.frames[i] = reinterpret_cast<std::uintptr_t>(frames[i]);
  }
  w.interrupted = interrupted;
  siglongjmp(w.landing, 1);
}

void on_fault(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  if (worker* w = this_worker(); w && w->armed.load(std::memory_order_relaxed)) leave_block(*w, sig, info, context, false);
  chain(sig, info, context);
  errno = saved_errno;
}

void wake_watchdog();

void request_interrupt(interrupt why) {
  int none = 0;
  interrupt_requested.compare_exchange_strong(none, static_cast<int>(why));
  wake_watchdog();
}

void on_sigint(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const struct sigaction* prev = previous[sig].load(std::memory_order_acquire);
  const bool ignored = prev && !(prev->sa_flags & SA_SIGINFO) && prev->sa_handler == SIG_IGN;
  const bool in_launch = launch_workers.load(std::memory_order_acquire) != nullptr;
  if (in_launch && !ignored) request_interrupt(interrupt::sigint);
  // Where SIGINT would end the process, a running launch ends instead and its
  // caller gets launch_interrupted; elsewhere the previous handler runs (Python
  // then raises KeyboardInterrupt once the launch has returned).
  const bool default_kills = !prev || (!(prev->sa_flags & SA_SIGINFO) && prev->sa_handler == SIG_DFL);
  if (!(in_launch && default_kills)) chain(sig, info, context);
  errno = saved_errno;
}

void on_ping(int sig, siginfo_t* info, void* context) {
  if (info->si_code != SI_QUEUE || info->si_value.sival_int != ping_value) return chain(sig, info, context);
  worker* w = this_worker();
  if (!w || !w->armed.load(std::memory_order_relaxed) || interrupt_requested.load() == 0) return;
  // Anywhere but the kernel's own code (the emulator, malloc, printf) a jump
  // would skip unlocking something; the watchdog signals again soon.
  if (!in_kernel_code(pc_of(static_cast<const ucontext_t*>(context)))) return;
  leave_block(*w, 0, info, context, true);
}

void install(int sig, void (*handler)(int, siginfo_t*, void*)) {
  struct sigaction old {};
  sigaction(sig, nullptr, &old);
  if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == handler) return;
  previous[sig].store(new struct sigaction(old), std::memory_order_release);
  struct sigaction ours {};
  ours.sa_sigaction = handler;
  ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  sigemptyset(&ours.sa_mask);
  // A handler that jumps out must not be entered by another of ours first.
  for (int s : fault_signals) sigaddset(&ours.sa_mask, s);
  sigaddset(&ours.sa_mask, ping_signal());
  sigaction(sig, &ours, nullptr);
}

// --- the watchdog ---------------------------------------------------------
//
// A launch tells it nothing but through atomics (no system call), unless it
// has a time limit; SIGINT's handler wakes it with sem_post (async-signal-safe).

sem_t* watchdog_wake() {
  static sem_t* wake = [] {
    auto* s = new sem_t;  // never destroyed: the thread may outlive static destruction
    sem_init(s, 0, 0);
    return s;
  }();
  return wake;
}

void wake_watchdog() { sem_post(watchdog_wake()); }

std::atomic<std::int64_t> launch_deadline_ns{0};  // steady_clock; 0: no time limit
std::atomic<const void*> launch_kernel{nullptr};
// Set while the watchdog signals workers: a launch that ends waits for that to finish.
std::atomic<bool> watchdog_signalling{false};
std::mutex signalling_mutex;
bool watchdog_started = false;

std::int64_t steady_ns() { return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// The executable segments of the module holding `kernel`, where a worker may
// be jumped out of: found by the watchdog (dladdr takes locks: no handler may),
// each time it is asked (only while an interrupt waits): a module loaded
// where a dropped one was can hold the launched kernel at the address of one
// published before, with other segments.
void publish_kernel_code(const void* kernel) {
  kernel_code_count.store(0, std::memory_order_release);
  Dl_info dl{};
  if (!dladdr(kernel, &dl)) return;
  struct search {
    std::uintptr_t base;
    unsigned found = 0;
  } s{reinterpret_cast<std::uintptr_t>(dl.dli_fbase)};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto& s = *static_cast<search*>(data);
        bool mine = false;
        for (int i = 0; i < info->dlpi_phnum && !mine; ++i) {
          const ElfW(Phdr)& p = info->dlpi_phdr[i];
          mine = p.p_type == PT_LOAD && s.base >= info->dlpi_addr + p.p_vaddr && s.base < info->dlpi_addr + p.p_vaddr + p.p_memsz;
        }
        if (!mine) return 0;
        for (int i = 0; i < info->dlpi_phnum && s.found < max_code_ranges; ++i) {
          const ElfW(Phdr)& p = info->dlpi_phdr[i];
          if (p.p_type == PT_LOAD && (p.p_flags & PF_X))
            kernel_code[s.found++] = {info->dlpi_addr + p.p_vaddr, info->dlpi_addr + p.p_vaddr + p.p_memsz};
        }
        return 1;
      },
      &s);
  kernel_code_count.store(s.found, std::memory_order_release);
}

timespec monotonic_at(std::int64_t ns) { return timespec{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)}; }

void watchdog_main() {
  for (;;) {
    const bool running = launch_workers.load() != nullptr;
    const std::int64_t deadline = launch_deadline_ns.load();
    std::int64_t until = 0;
    if (running && interrupt_requested.load())
      until = steady_ns() + std::chrono::nanoseconds(ping_period).count();
    else if (running && deadline)
      until = deadline;
    if (until) {
      const timespec at = monotonic_at(until);
      while (sem_clockwait(watchdog_wake(), CLOCK_MONOTONIC, &at) != 0 && errno == EINTR) {
      }
    } else {
      while (sem_wait(watchdog_wake()) != 0 && errno == EINTR) {
      }
    }
    std::lock_guard lock(signalling_mutex);
    watchdog_signalling.store(true);
    worker* workers = launch_workers.load();
    const std::int64_t limit = launch_deadline_ns.load();
    if (workers && limit && steady_ns() >= limit) {
      int none = 0;
      interrupt_requested.compare_exchange_strong(none, static_cast<int>(interrupt::timeout));
    }
    if (workers && interrupt_requested.load()) {
      publish_kernel_code(launch_kernel.load());
      for (unsigned i = 0, n = launch_worker_count.load(); i < n; ++i)
        if (workers[i].armed.load(std::memory_order_relaxed)) pthread_sigqueue(workers[i].thread, ping_signal(), sigval{.sival_int = ping_value});
    }
    watchdog_signalling.store(false);
  }
}

// --- installation ---------------------------------------------------------

// Called by each launch, under executor.cpp's launch mutex.
void install_handlers() {
  static bool installed = false;
  if (!installed) {
    void* warm[1];
    backtrace(warm, 1);  // loads the unwinder now, not in a handler
    for (int sig : fault_signals) install(sig, on_fault);
    install(ping_signal(), on_ping);
    // A child of fork() has no watchdog thread: it starts one at its first launch.
    pthread_atfork(nullptr, nullptr, [] { watchdog_started = false; });
    installed = true;
  }
  if (!watchdog_started) {
    std::thread(watchdog_main).detach();
    watchdog_started = true;
  }
  // Python and Jupyter set SIGINT's handler again whenever they like
  // (ipykernel before and after every cell): a launch puts lockstep's back in
  // front, checking (a system call) at most once per tick of the coarse clock,
  // so that a loop of tiny launches does not pay for it each time.
  static timespec checked{};
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
  if (now.tv_sec == checked.tv_sec && now.tv_nsec == checked.tv_nsec) return;
  checked = now;
  install(SIGINT, on_sigint);
}

// --- alternate signal stacks ----------------------------------------------

constexpr std::size_t alternate_stack_bytes = 64 * 1024;

struct alternate_stack {
  void* memory = nullptr;
  alternate_stack() {
    stack_t current{};
    if (sigaltstack(nullptr, &current) == 0 && !(current.ss_flags & SS_DISABLE)) return;  // the thread's own
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    void* region = mmap(nullptr, alternate_stack_bytes + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (region == MAP_FAILED) return;
    mprotect(region, page, PROT_NONE);  // an overflow of the handler's own stack faults too
    stack_t ours{};
    ours.ss_sp = static_cast<char*>(region) + page;
    ours.ss_size = alternate_stack_bytes;
    if (sigaltstack(&ours, nullptr) != 0) {
      munmap(region, alternate_stack_bytes + page);
      return;
    }
    memory = region;
  }
  ~alternate_stack() {
    if (!memory) return;
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    sigaltstack(&off, nullptr);
    munmap(memory, alternate_stack_bytes + static_cast<std::size_t>(sysconf(_SC_PAGESIZE)));
  }
};

}  // namespace

void prepare_thread() {
  thread_local constinit bool prepared = false;
  if (prepared) return;
  thread_local alternate_stack stack;
  prepared = true;
}

launch_watch::launch_watch(const void* kernel, worker* workers, unsigned count, double timeout_seconds) {
  install_handlers();
  prepare_thread();
  interrupt_requested.store(0, std::memory_order_relaxed);
  sigint_in_chain.frame.store(0, std::memory_order_relaxed);  // left behind by a handler that jumped out
  launch_kernel.store(kernel, std::memory_order_relaxed);
  launch_worker_count.store(count, std::memory_order_relaxed);
  launch_deadline_ns.store(timeout_seconds > 0 ? steady_ns() + static_cast<std::int64_t>(timeout_seconds * 1e9) : 0, std::memory_order_relaxed);
  launch_workers.store(workers, std::memory_order_release);
  if (timeout_seconds > 0) wake_watchdog();  // to wait for the deadline
}

launch_watch::~launch_watch() {
  launch_workers.store(nullptr);
  launch_deadline_ns.store(0);
  // The watchdog may be signalling this launch's workers; the launching
  // thread, worker 0, may end soon after returning, so wait for that.
  if (watchdog_signalling.load()) {
    std::lock_guard lock(signalling_mutex);
  }
}

interrupt launch_watch::reason() const { return static_cast<interrupt>(interrupt_requested.load()); }

void landed(worker& w, const uint3& block, const uint3& thread) {
  sigset_t ours;
  sigemptyset(&ours);
  for (int s : fault_signals) sigaddset(&ours, s);
  sigaddset(&ours, ping_signal());
  pthread_sigmask(SIG_UNBLOCK, &ours, nullptr);
  w.armed.store(0, std::memory_order_relaxed);
  w.seen.block = block;
  w.seen.thread = thread;
  w.seen.thread_known = true;
}

}  // namespace lockstep::emu::fault
