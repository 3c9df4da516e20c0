// racecheck on global memory: who last wrote and read each 4-byte word of a
// check-mode allocation in this launch. Any two threads of different blocks
// are unordered within a launch; two threads of one block are ordered by a
// barrier between their accesses. An access its thread followed with a memory
// fence counts as published (the fence-then-flag pattern of a last-block
// reduction, a critical section behind a spin lock, which ends with a fence
// before the release): racecheck does not follow the flag or lock itself.
// Atomic stores and read-modify-writes are recorded as writes marked atomic:
// two atomics never race, but a plain access and another thread's atomic on
// one word do, unless the read was a CAS loop's guess (conflict::
// read_against_atomic, block_checker.h). Atomic loads and volatile accesses
// (CUDA has them as relaxed atomics) are not checked here.
#pragma once
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "check/device_memory.h"
#include "lockstep/emu/check.h"

namespace lockstep::emu::check {

// One access as a record: launch tag:10 | block:26 | thread:10 | atomic:1 |
// epoch:12 | published:1 | bytes of the word:4.
struct global_access {
  std::uint64_t tag;    // 1..1023, this launch's
  std::uint64_t block;  // linear, < 2^26
  unsigned thread;      // linear in the block
  unsigned epoch;       // barriers the block has passed
  std::int32_t site;    // the instruction, as an offset from the kernel's address (0: unknown)
};

enum class global_op { read, write, atomic_update };  // an atomic store or read-modify-write: atomic_update

class global_races {
 public:
  struct conflict {
    hazard race = hazard::none;
    unsigned other_thread = 0;
    std::uint64_t other_block = 0;
    std::int32_t other_site = 0;
    bool other_atomic = false;
    bool read_against_atomic = false;  // a plain read and another thread's atomic update
  };

  static constexpr std::uint64_t max_blocks = std::uint64_t{1} << 26;
  static constexpr std::uint64_t tags = 1023;

  void begin_block(unsigned threads) {
    if (recent_.size() < threads) recent_.resize(threads);
    for (unsigned t = 0; t < threads; ++t) recent_[t].count = 0;
  }
  // Checks and records an access of [address, address + size) in `range`.
  conflict access(const device_range& range, std::uintptr_t address, std::size_t size, global_op op, const global_access& me);
  // The thread's fence publishes its accesses since its last fence (the
  // latest `recent_accesses::kept` of those it recorded).
  void fenced(unsigned thread);

 private:
  struct recent_accesses {
    static constexpr unsigned kept = 32;
    std::array<std::pair<std::atomic<std::uint64_t>*, std::uint64_t>, kept> records;  // where each went, and what
    unsigned count = 0;
  };
  void remember(unsigned thread, std::atomic<std::uint64_t>& slot, std::uint64_t record) {
    recent_accesses& mine = recent_[thread];
    mine.records[mine.count++ % recent_accesses::kept] = {&slot, record};
  }
  std::vector<recent_accesses> recent_;  // per thread of the block
};

}  // namespace lockstep::emu::check
