// racecheck's and initcheck's records for one block's shared memory, a cell
// per 4-byte word: who wrote it and who read it since the last barrier (and
// which of its bytes), and which bytes anything wrote since the block began.
// A record keeps the last writer and two readers, enough to find a race,
// not every race: another thread's access to other bytes of the same word
// replaces a record, so a race on those may go unseen.
//
// Time is a stamp that advances at every barrier and every new block, so
// nothing is cleared between blocks or barriers: a record with an older stamp
// is simply from before. Within a warp, __syncwarp also orders accesses: a
// record notes how many __syncwarp rounds its thread's warp had completed.
// A write its thread followed with a memory fence counts as published (the
// fence-then-flag pattern): racecheck does not follow the flag itself.
// Atomic stores and read-modify-writes are writes marked atomic: two atomics
// never race, but a plain access and another thread's atomic on one word do
// (a plain read unless it was a CAS loop's guess: conflict::
// read_against_atomic, block_checker.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "lockstep/emu/check.h"

namespace lockstep::emu::check {

struct block_clock {
  std::uint32_t now = 1;                  // the epoch: advances at each barrier and each block
  std::uint32_t block_start = 1;          // `now` when the running block began
  std::vector<std::uint16_t> warp_syncs;  // __syncwarp rounds completed, per warp of the block
  std::vector<std::uint16_t> fences;      // __threadfence*() calls, per thread of the block
};

class shared_shadow {
 public:
  struct access {
    std::uint16_t thread;  // linear index in the block
    std::uintptr_t pc;
  };
  struct conflict {
    hazard race = hazard::none;
    std::uint16_t other_thread = 0;
    std::uintptr_t other_pc = 0;
    bool read_against_atomic = false;  // a plain read and another thread's atomic update
    std::uintptr_t guess_pc = 0;       // an atomic update: where its thread read the word plainly since the barrier
  };
  struct uninitialised_read {
    std::size_t offset;  // of the first unwritten byte
    std::size_t size;    // of the read
    std::uint16_t thread;
    std::uintptr_t pc;
    std::uint32_t epoch;
  };

  explicit shared_shadow(const block_clock& clock) : clock_(clock) {}
  void resize(std::size_t bytes);  // forgets everything
  void clear();                    // forgets everything (the clock started over)
  std::size_t size() const { return bytes_; }

  // The first conflict of this access with another thread's since the last
  // barrier, if any; the access is recorded either way.
  conflict write(std::size_t offset, std::size_t n, access a);
  conflict read(std::size_t offset, std::size_t n, access a);
  // An atomic access: a store or read-modify-write (`writes`) is checked
  // against plain accesses and recorded as an atomic write; a load or
  // read-modify-write (`reads`) of unwritten bytes is held for initcheck.
  // Atomic loads are not recorded (two atomics never race). A
  // read-modify-write drops its thread's earlier plain reads of the word from
  // the records (they were a CAS loop's guess) and names them: guess_pc.
  conflict atomic(std::size_t offset, std::size_t n, access a, bool reads, bool writes);

  // Reads of bytes nothing had written, held until the epoch ends: if another
  // thread writes the byte in the same epoch, the read was a race (reported
  // as write-after-read), not a read of uninitialised memory. Call before the
  // clock advances; report(const uninitialised_read&) gets the rest.
  template <class Report>
  void flush_uninitialised(Report report) {
    for (const uninitialised_read& r : pending_) {
      const cell& c = cells_[r.offset / 4];
      const bool written_after =
          c.write_epoch == r.epoch && c.writer != r.thread && !(c.write_bytes & atomic_mark) && (c.write_bytes >> (r.offset % 4) & 1);
      if (!written_after) report(r);
    }
    pending_.clear();
  }

 private:
  static constexpr std::uint16_t nobody = 0xffff;
  static constexpr std::uint8_t atomic_mark = 0x80;  // in write_bytes: the write was atomic
  struct cell {
    std::uint32_t write_epoch, read_epoch;
    std::uint16_t writer, first_reader, other_reader;              // other_reader: a second, different reader, or nobody
    std::uint16_t write_syncs, read_syncs;                         // the warp's __syncwarp count at the access
    std::uint16_t write_fences;                                    // the writer's fence count at the write
    std::uint8_t write_bytes, first_read_bytes, other_read_bytes;  // which bytes of the word each touched
    std::uint8_t initialised;                                      // bytes written since write_epoch's block began
    std::uintptr_t write_pc, first_read_pc, other_read_pc;
  };
  // Calls f(cell, bytes of the word the access covers, offset of its first byte) per word.
  template <class F>
  void each_word(std::size_t offset, std::size_t n, F f) {
    for (std::size_t at = offset; at < offset + n;) {
      const std::size_t word_end = (at / 4 + 1) * 4, stop = word_end < offset + n ? word_end : offset + n;
      f(cells_[at / 4], static_cast<std::uint8_t>(((1u << (stop - at)) - 1) << (at % 4)), at);
      at = stop;
    }
  }
  struct free_deleter {
    void operator()(cell* p) const { std::free(p); }
  };

  // Whether __syncwarp has ordered `other`'s access (at `syncs`) before this thread's.
  bool warp_ordered(std::uint16_t me, std::uint16_t other, std::uint16_t syncs) const {
    return me / 32 == other / 32 && static_cast<std::int16_t>(clock_.warp_syncs[other / 32] - syncs) > 0;
  }
  bool races_with_reads(const cell& c, std::uint16_t me, std::uint8_t bytes, conflict* found) const;
  // `bytes` may carry atomic_mark: an atomic access does not race with an atomic write.
  bool races_with_write(const cell& c, std::uint16_t me, std::uint8_t bytes) const {
    return c.write_epoch == clock_.now && (c.write_bytes & bytes & ~atomic_mark) && !(c.write_bytes & bytes & atomic_mark) && c.writer != me &&
           !warp_ordered(me, c.writer, c.write_syncs) && clock_.fences[c.writer] == c.write_fences;
  }
  std::uint8_t initialised_bytes(const cell& c) const { return c.write_epoch >= clock_.block_start ? c.initialised : 0; }
  void record_write(cell& c, std::uint16_t writer, std::uint8_t bytes, std::uintptr_t pc);
  void hold_uninitialised(std::size_t offset, std::size_t size, access a);

  const block_clock& clock_;
  std::unique_ptr<cell[], free_deleter> cells_;  // a cell per 4 bytes, calloc'd: pages are committed only when touched
  std::size_t bytes_ = 0;
  std::vector<uninitialised_read> pending_;
};

}  // namespace lockstep::emu::check
