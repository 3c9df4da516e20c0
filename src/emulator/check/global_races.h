// racecheck on global memory: who last wrote and read each 4-byte word of a
// check-mode allocation in this launch. Any two threads of different blocks
// are unordered within a launch; two threads of one block are ordered by a
// barrier between their accesses. A write its thread followed with a memory
// fence counts as published (the fence-then-flag pattern of a last-block
// reduction): racecheck does not follow the flag itself.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "check/device_memory.h"
#include "lockstep/emu/check.h"

namespace lockstep::emu::check {

// One access as a record: launch tag:10 | block:26 | thread:10 | epoch:13 |
// published:1 | bytes of the word:4.
struct global_access {
  std::uint64_t tag;    // 1..1023, this launch's
  std::uint64_t block;  // linear, < 2^26
  unsigned thread;      // linear in the block
  unsigned epoch;       // barriers the block has passed
};

class global_races {
 public:
  struct conflict {
    hazard race = hazard::none;
    unsigned other_thread = 0;
    std::uint64_t other_block = 0;
  };

  static constexpr std::uint64_t max_blocks = std::uint64_t{1} << 26;
  static constexpr std::uint64_t tags = 1023;

  void begin_block(unsigned threads) { recent_.assign(threads, {}); }
  // Checks and records an access of [address, address + size) in `range`.
  conflict access(const device_range& range, std::uintptr_t address, std::size_t size, bool write, const global_access& me);
  // The thread's fence publishes its writes since its last fence.
  void fenced(unsigned thread);

 private:
  struct recent_writes {
    std::array<std::pair<word_races*, std::uint64_t>, 8> words{};
    unsigned count = 0;
  };
  std::vector<recent_writes> recent_;  // per thread of the block
};

}  // namespace lockstep::emu::check
