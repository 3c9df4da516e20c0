// The checker of one worker: sorts each memory access of the running
// emulated thread (reported by the sanitizer hooks) into the thread's own
// stack, shared memory, device memory or other memory the program owns, and
// applies memcheck, racecheck and initcheck to it. As its block_runner's
// block_observer it hears of blocks, fiber switches, barrier and warp rounds
// (applying synccheck to them) and of the misuses the runner refuses.
// Findings are kept per block, folded by kind and instruction, and handed to
// the launch's session when the block ends.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "check/finding.h"
#include "check/global_races.h"
#include "check/launch_session.h"
#include "check/shared_shadow.h"
#include "check/thread_memory.h"
#include "execution/block_observer.h"

namespace lockstep::emu::check {

// An atomic read-modify-write is is_atomic | is_write | is_rmw, an atomic
// store is_atomic | is_write, an atomic load is_atomic. is_volatile: through a
// volatile pointer (a relaxed atomic to racecheck on global memory).
enum access_flags : unsigned { is_write = 1, is_atomic = 2, is_rmw = 4, may_be_unaligned = 8, is_volatile = 16 };

class block_checker;
// The checker of the block running on this OS thread; null when no checked
// block runs here (the hooks then return at once).
extern thread_local block_checker* active_checker;

// The checker's own code on a slow path (a finding's strings) runs unchecked:
// it may call a check-mode program's instrumented copies of std::string's
// functions. Not restored after a thread is stopped (its block ends).
struct paused_checks {
  block_checker* saved = active_checker;
  paused_checks() { active_checker = nullptr; }
  ~paused_checks() { active_checker = saved; }
  paused_checks(const paused_checks&) = delete;
  paused_checks& operator=(const paused_checks&) = delete;
};

class block_checker final : public block_observer {
 public:
  void block_started(launch_session& session, unsigned threads, unsigned char* dynamic_shared, std::size_t dynamic_bytes) override;
  void block_ended() override;
  void running_on(const void* stack, std::size_t bytes) override {
    stack_.begin = reinterpret_cast<std::uintptr_t>(stack);
    stack_.end = stack_.begin + bytes;
  }
  void barrier_released(std::span<const unsigned> waiting, std::span<const std::uintptr_t> pc, unsigned first_exited) override;
  void warp_completed(unsigned warp, warp_op op, std::uint32_t lanes, std::span<const std::uint32_t, 32> mask,
                      std::span<const std::uintptr_t, 32> pc) override;
  // With synccheck a finding that stops the block (throws block_stopped).
  void refused(const std::string& what, unsigned thread, std::uintptr_t pc) override;
  void runner_code(bool begins) override { active_checker = begins ? nullptr : checking_; }
  void fenced();  // the running thread called __threadfence*()
  bool wants(check_tool tool) const { return session_->wants(tool); }
  bool wants_any(unsigned tools) const { return session_->checks() & tools; }

  // A memory access of the running thread, from the code at `pc`.
  void access(std::uintptr_t address, std::size_t size, unsigned flags, std::uintptr_t pc) {
    if (holding_) release_held_race();
    if (stack_.contains(address)) return;
    if (shared_.contains(address)) return shared_static(address, size, flags, pc);
    if (dynamic_window_.contains(address)) return shared_dynamic(address, size, flags, pc);
    if (last_range_ && address - last_range_->begin < last_range_->end - last_range_->begin) return global(*last_range_, address, size, flags, pc);
    if (lockstep_thread_locals_.contains(address)) return;  // threadIdx and friends
    elsewhere(address, size, flags, pc);
  }

  // -fsanitize=bounds found an index outside an array's declared size.
  void index_out_of_bounds(std::uintptr_t pc, const source_line& at, const std::string& what);
  // -fsanitize=alignment found an access through a pointer misaligned for its
  // type (`what` says which); stops the running thread before the access.
  void misaligned_pointer(std::uintptr_t address, std::size_t alignment, bool write, std::uintptr_t pc, const std::string& what);

 private:
  // synccheck: `thread` (linear) at the barrier or collective at `pc`; `other`, if
  // any, the thread and place it disagrees with.
  void sync_finding(const std::string& what, unsigned thread, std::uintptr_t pc, unsigned other_thread, std::uintptr_t other_pc,
                    bool both_lines_must_differ = false);
  enum class memory_kind { static_shared, dynamic_shared, global };
  // A racing access, reported when found, or (a write over another thread's
  // write) once its value is known: writing the value already there is no
  // error, as compute-sanitizer's racecheck has it.
  struct race {
    hazard kind;
    memory_kind where;
    const device_range* range;  // global
    std::uintptr_t address;
    std::size_t size;
    unsigned flags;
    std::uintptr_t pc, other_pc;
    unsigned thread, other_thread;  // linear, in their blocks
    std::uint64_t other_block;      // linear
    bool other_atomic = false;      // the other access was an atomic update
    std::uintptr_t read_pc = 0;     // a plain read against an atomic: the read's instruction (last_read)
  };
  void shared_static(std::uintptr_t address, std::size_t size, unsigned flags, std::uintptr_t pc);
  void shared_dynamic(std::uintptr_t address, std::size_t size, unsigned flags, std::uintptr_t pc);
  void shared(memory_kind kind, std::size_t offset, std::uintptr_t address, std::size_t size, unsigned flags, std::uintptr_t pc);
  void report_uninitialised_shared(memory_kind kind, const shared_shadow::uninitialised_read& read);
  void check_barrier_round(std::span<const unsigned> waiting, std::span<const std::uintptr_t> pc, unsigned first_exited);
  void global(const device_range& range, std::uintptr_t address, std::size_t size, unsigned flags, std::uintptr_t pc);
  void check_global_races(const device_range& range, std::uintptr_t address, std::size_t size, unsigned flags, std::uintptr_t pc);
  void found_race(const race& r);
  // The CAS-loop idiom reads a word plainly as a guess, then lets atomicCAS
  // check it (and may skip the CAS when the guess already says enough, as
  // a float maximum does). A plain read racing another thread's atomic is
  // therefore reported only if no thread, anywhere in the launch, followed
  // a read at the same instruction with an atomic update of the word it read:
  // the launch's session drops the finding if that instruction proves a guess.
  // Shared memory's records name the thread's reads (shared_shadow's
  // guess_pc); for global memory each thread's last plain read is kept here.
  struct last_read {
    std::uintptr_t word = 0;  // address / 4
    std::uintptr_t pc = 0;
  };
  void guess_site(std::uintptr_t pc);
  void report_race(const race& r, bool stack_is_the_access);
  void release_held_race();
  void elsewhere(std::uintptr_t address, std::size_t size, unsigned flags, std::uintptr_t pc);
  // Reports a misaligned access and stops the running thread before it, as
  // the GPU would fault (returns only when memcheck is off).
  void misaligned(std::uintptr_t address, std::size_t size, unsigned flags, std::uintptr_t pc, const std::string& memory);
  // Reports an access that must not happen and stops the running thread
  // there (returns only when memcheck is off).
  void out_of_bounds(std::uintptr_t address, std::size_t size, unsigned flags, std::uintptr_t pc, std::string what, std::string memory);

  // Names for messages.
  std::string memory_name(memory_kind kind, const device_range* range, std::uintptr_t address) const;
  std::string memory_at(std::uintptr_t address) const;  // any address, for memcheck's messages
  std::string shared_name(memory_kind kind, std::size_t offset) const;
  const thread_local_symbol* shared_array_at(std::size_t offset) const;
  uint3 thread_index(unsigned linear) const;
  uint3 block_index(std::uint64_t linear) const;

  // Records a finding unless one with the same key is kept (then counts it).
  // fill(finding&) sets the report's details, only for a new one.
  template <class Fill>
  void note(check_tool tool, hazard race, std::uintptr_t pc, std::uintptr_t other_pc, bool running_thread, Fill fill);
  void read_thread_locals();
  void advance_clock();

  launch_session* session_ = nullptr;
  block_checker* checking_ = nullptr;  // what active_checker is while the block's kernel code runs
  unsigned threads_ = 0;               // of the running block
  const thread_local_symbol* last_array_ = nullptr;
  const device_range* last_range_ = nullptr;
  address_range stack_, shared_, dynamic_window_, dynamic_;
  address_range lockstep_thread_locals_;
  address_ranges all_thread_locals_;
  std::thread::id thread_locals_of_;     // the OS thread the ranges above were read on
  const void* shared_module_ = nullptr;  // the kernel whose module shared_ is of

  block_clock clock_;
  shared_shadow static_shadow_{clock_}, dynamic_shadow_{clock_};
  global_races global_races_;
  race held_{};
  bool holding_ = false;
  std::vector<last_read> last_reads_;        // per thread of the block
  std::vector<std::uintptr_t> guess_sites_;  // reads this block's threads followed with an atomic update
  unsigned char held_before_[16];            // the bytes before the held write
  std::vector<finding> findings_;
  std::size_t unlisted_ = 0;
};

}  // namespace lockstep::emu::check
