#include "fault_report.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "check/device_memory.h"
#include "check/symbolizer.h"
#include "dynamic_shared.h"
#include "message_text.h"
#include "stack_pool.h"
#include "x86_operand.h"

namespace lockstep::emu {

namespace {

// Addresses this low are a null pointer plus an offset (an index or a field).
constexpr std::uintptr_t null_page_bytes = 64 * 1024;

const char* check_mode_hint =
    " For the exact access, run it again under check mode: `with lockstep.check():` in Python, LOCKSTEP_CHECK=1 for a program "
    "built with lockstep_check_sources, or `lockstep check FILE.cu`.";

// The bytes of code from pc to the end of its executable segment, at most `limit`.
std::size_t code_bytes_at(std::uintptr_t pc, std::size_t limit) {
  struct search {
    std::uintptr_t pc;
    std::size_t bytes = 0;
  } s{pc};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto& s = *static_cast<search*>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& p = info->dlpi_phdr[i];
          const std::uintptr_t begin = info->dlpi_addr + p.p_vaddr, end = begin + p.p_memsz;
          if (p.p_type == PT_LOAD && (p.p_flags & PF_X) && s.pc >= begin && s.pc < end) {
            s.bytes = end - s.pc;
            return 1;
          }
        }
        return 0;
      },
      &s);
  return std::min(s.bytes, limit);
}

// " at kernel.cu:12 (in scale)", or what is known without line tables.
std::string line_of(const std::vector<std::uintptr_t>& return_addresses) {
  const source_line at = check::user_line(return_addresses);
  if (!at.file.empty()) return " at " + at.file + ":" + std::to_string(at.line) + (at.function.empty() ? "" : " (in " + at.function + ")");
  Dl_info dl{};
  if (!return_addresses.empty() && dladdr(reinterpret_cast<void*>(return_addresses.front() - 1), &dl) && dl.dli_sname)
    return std::string(" in ") + dl.dli_sname + " (" + (dl.dli_fname ? dl.dli_fname : "?") + "; no line: compile the kernel with -g for one)";
  return " at " + hex_text(return_addresses.empty() ? 0 : return_addresses.front() - 1) + " (no line: compile the kernel with -g for one)";
}

// The faulting instruction's line; inside a library function without line
// tables (memcpy), the caller's, from the return address on top of the stack.
std::string fault_line(const fault::record& r, const fault_site& site) {
  std::vector<std::uintptr_t> frames{r.pc + 1};  // user_line takes return addresses: the call is one byte before
  const source_line at = check::user_line(frames);
  const auto stack = reinterpret_cast<std::uintptr_t>(site.running_stack);
  if (at.file.empty() && stack && r.sp >= stack && r.sp + sizeof(std::uintptr_t) <= stack + site.stacks.stack_bytes()) {
    std::uintptr_t caller = 0;
    std::memcpy(&caller, reinterpret_cast<const void*>(r.sp), sizeof caller);
    if (!check::user_line({caller}).file.empty()) frames.push_back(caller);
  }
  return line_of(frames);
}

std::string bytes_text(std::size_t n) { return std::to_string(n) + (n == 1 ? " byte" : " bytes"); }
std::string past_the_end(std::size_t n) { return (n == 0 ? std::string("just") : bytes_text(n)) + " past the end"; }

// "the cudaMalloc'd buffer of 1024 bytes at 0x...", "a host array (host memory, 1024 bytes at 0x...)"
std::string buffer_name(const check::device_range& r) {
  const std::string where = bytes_text(r.end - r.begin) + " at " + hex_text(r.begin);
  if (r.from == check::device_range::origin::host_memory) return r.name + " (host memory, " + where + ")";
  return "the cudaMalloc'd buffer of " + where;
}

// What `a` is near: a null pointer, a device allocation, or nothing.
std::string near_what(std::uintptr_t a) {
  if (a < null_page_bytes) return a == 0 ? "a null pointer" : "a null pointer + " + std::to_string(a);
  if (!is_canonical(a)) return "an address no memory can have (not canonical): an uninitialised or corrupted pointer";
  const check::memory_snapshot memory = check::snapshot(false);
  const auto& live = memory.live;
  auto after = std::upper_bound(live.begin(), live.end(), a, [](std::uintptr_t x, const check::device_range& r) { return x < r.begin; });
  const check::device_range* below = after == live.begin() ? nullptr : &*(after - 1);
  const check::device_range* above = after == live.end() ? nullptr : &*after;
  if (below && a < below->end) return "byte " + std::to_string(a - below->begin) + " of " + buffer_name(*below);
  constexpr std::uintptr_t far = std::uintptr_t{1} << 30;
  const std::uintptr_t past = below ? a - below->end : far, before = above ? above->begin - a : far;
  if (past < far && past <= before) return past_the_end(past) + " of " + buffer_name(*below);
  if (before < far) return bytes_text(before) + " before the start of " + buffer_name(*above);
  return "no device allocation lies within 1 GiB of it: a wild pointer";
}

struct verdict {
  verdict(cudaError_t c, std::string t, bool helps = true, std::string head = {})
      : code(c), text(std::move(t)), check_mode_helps(helps), headline(std::move(head)) {}
  cudaError_t code;
  std::string text;  // after "kernel 'k', block (..), thread (..)"
  bool check_mode_helps;
  std::string headline;  // instead of the kernel's name, where the mistake is the launch's
};

// " reads", " writes": the page-fault error code says which; a general-protection fault does not.
std::string verb(const fault::record& r) {
  if (r.signal == SIGSEGV && (r.code == SEGV_MAPERR || r.code == SEGV_ACCERR)) return r.error_code & 2 ? " writes" : " reads";
  return " accesses";
}

verdict memory_fault(const fault::record& r, const fault_site& site) {
  std::uintptr_t a = r.address;
  const bool general_protection = r.signal == SIGSEGV && r.code == SI_KERNEL;
  bool misaligned = r.signal == SIGBUS && r.code == BUS_ADRALN;
  unsigned alignment = 0;
  if (general_protection) {  // no address from the CPU: read the instruction
    unsigned char code[15];
    const std::size_t n = code_bytes_at(r.pc, sizeof code);
    std::memcpy(code, reinterpret_cast<const void*>(r.pc), n);
    if (auto op = decode_memory_operand(code, n, r.registers)) {
      a = op->address;
      if (is_canonical(a) && op->vector && a % op->vector_bytes) {
        misaligned = true;
        alignment = op->vector_bytes;
      }
    } else {
      return {cudaErrorIllegalAddress,
              " made an access the CPU refused (a general-protection fault: a non-canonical address or a "
              "misaligned vector access)" +
                  fault_line(r, site) + "."};
    }
  }
  const std::string line = fault_line(r, site);
  if (misaligned) {
    const std::string need = alignment ? "a multiple of " + std::to_string(alignment) : "aligned to its size";
    return {cudaErrorMisalignedAddress, verb(r) + " address " + hex_text(a) + ", which is not " + need + line +
                                            ": a vector type (float4, int4, double2...) must be aligned to its size, as on a GPU; a "
                                            "pointer into the middle of an array (x[1:] in Python) is not. The address is " +
                                            near_what(a) + "."};
  }
  // A fiber's stack overflowed into its guard (or, for a large local array, jumped past it).
  const auto stack = reinterpret_cast<std::uintptr_t>(site.running_stack);
  const bool below_running = stack && r.sp < stack && r.sp + site.stacks.guard_bytes() + site.stacks.stack_bytes() >= stack;
  if (site.stacks.stack_guarded_at(a) || below_running) {
    const std::size_t kib = site.stacks.stack_bytes() / 1024;
    return {cudaErrorIllegalAddress,
            " overflowed its stack of " + std::to_string(kib) + " KiB" + line +
                " (deep recursion or large local arrays). Give each thread a larger stack: LOCKSTEP_EMU_STACK_KIB=" + std::to_string(kib * 4) +
                ", lockstep.set_emulator_options(stack_kib=" + std::to_string(kib * 4) +
                ") in Python, or lockstep::emu::options::stack_bytes in C++.",
            false};
  }
  switch (site.dynamic_shared.where(a)) {
    case dynamic_shared_buffer::place::after: {
      const std::uintptr_t end = site.dynamic_shared.begin() + site.dynamic_shared.bytes();
      if (site.dynamic_shared_bytes == 0)
        return {cudaErrorIllegalAddress,
                verb(r) + " byte " + std::to_string(a - end) + " of it" + line +
                    ". Give the size as the launch's third argument: kernel<<<grid, block, bytes>>>, lockstep::launch(k, grid, block, "
                    "bytes), or k[grid, block, bytes] in Python.",
                false, "kernel '" + site.kernel + "' uses extern __shared__ memory but was launched with 0 bytes of dynamic shared memory"};
      return {cudaErrorIllegalAddress, verb(r) + " " + past_the_end(a - end) + " of the " + bytes_text(site.dynamic_shared_bytes) +
                                           " of dynamic shared memory it was launched with (extern __shared__)" + line + "."};
    }
    case dynamic_shared_buffer::place::before:
      return {cudaErrorIllegalAddress, verb(r) + " " + bytes_text(site.dynamic_shared.begin() - a) +
                                           " before the start of its dynamic shared memory (extern __shared__)" + line + "."};
    case dynamic_shared_buffer::place::elsewhere:
      break;
  }
  return {cudaErrorIllegalAddress, verb(r) + " address " + hex_text(a) + ", " + near_what(a) + "," + line + "."};
}

verdict classify(const fault::record& r, const fault_site& site) {
  // A fault signal that was sent (kill, raise) carries no address: either the
  // kernel sent it, or a handler installed after lockstep's caught the fault
  // and raised it again.
  if (r.code <= 0 && r.signal != SIGABRT && r.signal != SIGTRAP)
    return {cudaErrorLaunchFailure,
            " was stopped by a signal sent with kill() or raise(), not raised by the CPU, so the signal says nothing of where the "
            "kernel was. If the kernel did not send it, a signal handler installed after lockstep's (a library's crash handler) "
            "caught a fault of the kernel and raised it again."};
  switch (r.signal) {
    case SIGSEGV:
    case SIGBUS:
      return memory_fault(r, site);
    case SIGFPE:
      if (r.code == FPE_INTDIV || r.code == FPE_INTOVF)
        return {cudaErrorLaunchFailure,
                " divided an integer by zero (or the most negative value by -1)" + fault_line(r, site) +
                    ". The CPU traps on it; a GPU does not, and gives an unspecified value instead: either "
                    "way the kernel has a bug here.",
                false};
      return {cudaErrorLaunchFailure, " raised an arithmetic exception (SIGFPE)" + fault_line(r, site) + ".", false};
    case SIGILL: {
      unsigned char code[2] = {0, 0};
      std::memcpy(code, reinterpret_cast<const void*>(r.pc), code_bytes_at(r.pc, 2));
      if (code[0] == 0x0f && code[1] == 0x0b)
        return {cudaErrorLaunchFailure, " reached a trap instruction" + fault_line(r, site) +
                                            ": __builtin_trap(), or where the compiler proved that the code would dereference a null "
                                            "pointer or reach __builtin_unreachable()."};
      return {cudaErrorIllegalInstruction,
              " executed an illegal instruction" + fault_line(r, site) +
                  " (code built for a newer CPU than this one, or a jump through a corrupted pointer).",
              false};
    }
    case SIGTRAP:
      return {cudaErrorLaunchFailure, " hit a breakpoint instruction" + fault_line(r, site) + ".", false};
    case SIGABRT: {
      // The kernel's frames below abort()'s (libc's may have lines too).
      Dl_info kernel{}, frame{};
      std::vector<std::uintptr_t> frames;
      if (dladdr(site.kernel_address, &kernel))
        for (int i = 0; i < r.frame_count; ++i)
          if (dladdr(reinterpret_cast<void*>(r.frames[i] - 1), &frame) && frame.dli_fbase == kernel.dli_fbase) frames.push_back(r.frames[i]);
      return {cudaErrorAssert,
              " called abort() (directly, or through std::terminate: an exception leaving a noexcept function)" +
                  (frames.empty() ? fault_line(r, site) : line_of(frames)) + ".",
              false};
    }
  }
  return {cudaErrorLaunchFailure, " raised signal " + std::to_string(r.signal) + fault_line(r, site) + "."};
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGTRAP:
      return "SIGTRAP";
    case SIGABRT:
      return "SIGABRT";
  }
  return "a signal";
}

// "block (0, 0, 0), thread (3, 0, 0)"
std::string thread_text(const fault::record& r) {
  return "block " + coordinates_text(r.block) +
         (r.thread_known ? ", thread " + coordinates_text(r.thread)
                         : ", a thread the emulator cannot name (the block ran as region loops; run with LOCKSTEP_EMU_ENGINE=fibers to name it)");
}

// "block (0, 0, 0), thread (3, 0, 0) at kernel.cu:9 (in spin); ..."
std::string running_threads(const std::vector<fault::record>& stopped) {
  std::string text;
  for (const fault::record& r : stopped) {
    if (!text.empty()) text += "; ";
    text += thread_text(r) + line_of({r.pc + 1});
  }
  return text;
}

}  // namespace

kernel_error fault_error(const fault::record& r, const fault_site& site) {
  // Workers that fault at once take turns: the symbolizer answers an address
  // only once its first lookup has finished.
  static std::mutex one_at_a_time;
  std::lock_guard lock(one_at_a_time);
  const verdict v = classify(r, site);
  const std::string thread = thread_text(r);
  std::string text = (v.headline.empty() ? "kernel '" + site.kernel + "', " + thread : v.headline + ": " + thread) + v.text +
                     " The launch stopped there (" + signal_name(r.signal) + "); what the kernel wrote before stays written.";
  if (v.check_mode_helps) text += check_mode_hint;
  return kernel_error(v.code, text);
}

kernel_error timeout_error(const std::string& kernel, double seconds, const std::vector<fault::record>& stopped) {
  char limit[32];
  std::snprintf(limit, sizeof limit, "%g s", seconds);
  return kernel_error(cudaErrorLaunchTimeout,
                      "kernel '" + kernel + "' ran longer than the emulator's time limit of " + limit + " and was stopped" +
                          (stopped.empty() ? std::string(".") : ". Threads still running: " + running_threads(stopped) + ".") +
                          " A thread waiting for a flag that another block sets can wait forever: blocks run a few at a time, in "
                          "no promised order. The limit is set_emulator_options(timeout=...) in Python, LOCKSTEP_EMU_TIMEOUT, or "
                          "lockstep::emu::options::timeout_seconds (0: none).");
}

launch_interrupted interrupted_error(const std::string& kernel, const std::vector<fault::record>& stopped) {
  return launch_interrupted(cudaErrorLaunchFailure,
                            "kernel '" + kernel + "' was interrupted (SIGINT)" +
                                (stopped.empty() ? std::string(".") : "; threads running then: " + running_threads(stopped) + "."));
}

}  // namespace lockstep::emu
