#include "check/shared_shadow.h"

#include <algorithm>
#include <new>

namespace lockstep::emu::check {

void shared_shadow::resize(std::size_t bytes) {
  cells_.reset(static_cast<cell*>(std::calloc(std::max<std::size_t>((bytes + 3) / 4, 1), sizeof(cell))));
  if (!cells_) throw std::bad_alloc();
  bytes_ = bytes;
  pending_.clear();
}

void shared_shadow::clear() { resize(bytes_); }

bool shared_shadow::races_with_reads(const cell& c, std::uint16_t me, std::uint8_t bytes, conflict* found) const {
  if (c.read_epoch != clock_.now) return false;
  bytes &= static_cast<std::uint8_t>(~atomic_mark);
  const struct {
    std::uint16_t reader;
    std::uint8_t bytes;
    std::uintptr_t pc;
  } reads[] = {{c.first_reader, c.first_read_bytes, c.first_read_pc}, {c.other_reader, c.other_read_bytes, c.other_read_pc}};
  for (const auto& r : reads) {
    if (r.reader == nobody || r.reader == me || !(r.bytes & bytes)) continue;
    // read_syncs is the warp's count at the latest read: if __syncwarp came
    // after it, it came after every read of that warp.
    if (warp_ordered(me, r.reader, c.read_syncs)) continue;
    *found = {hazard::write_after_read, r.reader, r.pc};
    return true;
  }
  return false;
}

void shared_shadow::record_write(cell& c, std::uint16_t writer, std::uint8_t bytes, std::uintptr_t pc) {
  c.initialised = initialised_bytes(c) | (bytes & ~atomic_mark);
  c.write_epoch = clock_.now;
  c.writer = writer;
  c.write_bytes = bytes;
  c.write_syncs = clock_.warp_syncs[writer / 32];
  c.write_fences = clock_.fences[writer];
  c.write_pc = pc;
}

shared_shadow::conflict shared_shadow::write(std::size_t offset, std::size_t n, access a) {
  conflict found;
  each_word(offset, n, [&](cell& c, std::uint8_t bytes, std::size_t) {
    if (found.race == hazard::none) {
      if (races_with_write(c, a.thread, bytes))
        found = {hazard::write_after_write, c.writer, c.write_pc};
      else
        races_with_reads(c, a.thread, bytes, &found);
    }
    record_write(c, a.thread, bytes, a.pc);
  });
  return found;
}

shared_shadow::conflict shared_shadow::read(std::size_t offset, std::size_t n, access a) {
  conflict found;
  constexpr std::size_t no_byte = ~std::size_t{0};
  std::size_t uninitialised_at = no_byte;
  const std::uint32_t now = clock_.now;
  const std::uint16_t syncs = clock_.warp_syncs[a.thread / 32];
  each_word(offset, n, [&](cell& c, std::uint8_t bytes, std::size_t first) {
    if (const std::uint8_t missing = bytes & ~initialised_bytes(c); missing && uninitialised_at == no_byte)
      uninitialised_at = first / 4 * 4 + static_cast<std::size_t>(__builtin_ctz(missing));
    if (found.race == hazard::none && races_with_write(c, a.thread, bytes))
      found = {hazard::read_after_write, c.writer, c.write_pc, (c.write_bytes & atomic_mark) != 0};
    if (c.read_epoch != now) {
      c.read_epoch = now;
      c.first_reader = a.thread;
      c.first_read_bytes = bytes;
      c.first_read_pc = a.pc;
      c.other_reader = nobody;
    } else if (c.first_reader == a.thread) {
      c.first_read_bytes |= bytes;
    } else if (c.other_reader == nobody || c.other_reader == a.thread) {
      // Two readers are enough to name one that is not a later writer; a
      // tile read by every thread of a row then costs no more stores.
      c.other_read_bytes = c.other_reader == nobody ? bytes : c.other_read_bytes | bytes;
      c.other_reader = a.thread;
      c.other_read_pc = a.pc;
    }
    if (c.read_syncs != syncs) c.read_syncs = syncs;
  });
  if (uninitialised_at != no_byte) hold_uninitialised(uninitialised_at, n, a);
  return found;
}

shared_shadow::conflict shared_shadow::atomic(std::size_t offset, std::size_t n, access a, bool reads, bool writes) {
  conflict found;
  each_word(offset, n, [&](cell& c, std::uint8_t bytes, std::size_t first) {
    if (const std::uint8_t missing = bytes & ~initialised_bytes(c); reads && missing)
      hold_uninitialised(first / 4 * 4 + static_cast<std::size_t>(__builtin_ctz(missing)), n, a);
    if (!writes) return;
    if (reads && c.read_epoch == clock_.now) {  // this thread's plain reads of the word were a guess
      if (c.other_reader == a.thread) {
        found.guess_pc = c.other_read_pc;
        c.other_reader = nobody;
      }
      if (c.first_reader == a.thread) {
        found.guess_pc = c.first_read_pc;
        c.first_reader = c.other_reader, c.first_read_bytes = c.other_read_bytes, c.first_read_pc = c.other_read_pc;
        c.other_reader = nobody;
      }
    }
    const std::uint8_t atomic_bytes = bytes | atomic_mark;
    if (found.race == hazard::none) {
      if (races_with_write(c, a.thread, atomic_bytes))
        found = {hazard::write_after_write, c.writer, c.write_pc};
      else if (races_with_reads(c, a.thread, bytes, &found))
        found.read_against_atomic = true;
    }
    // Over another thread's atomic of this epoch the first stays: a plain
    // access after the later one (its own thread's, say) still races with it.
    if (c.write_epoch == clock_.now && (c.write_bytes & atomic_mark) && c.writer != a.thread) {
      c.write_bytes |= bytes;
      c.initialised |= bytes;
      return;
    }
    record_write(c, a.thread, atomic_bytes, a.pc);
  });
  return found;
}

void shared_shadow::hold_uninitialised(std::size_t offset, std::size_t size, access a) {
  // One held read per instruction is enough to report it.
  for (const uninitialised_read& r : pending_)
    if (r.pc == a.pc) return;
  pending_.push_back({offset, size, a.thread, a.pc, clock_.now});
}

}  // namespace lockstep::emu::check
