#include "check/shared_shadow.h"

#include <algorithm>
#include <new>

namespace lockstep::emu::check {

void shared_shadow::resize(std::size_t bytes) {
  cells_.reset(static_cast<cell*>(std::calloc(std::max<std::size_t>(bytes, 1), sizeof(cell))));
  if (!cells_) throw std::bad_alloc();
  bytes_ = bytes;
  pending_.clear();
}

void shared_shadow::clear() { resize(bytes_); }

bool shared_shadow::races_with_reads(const cell& c, std::uint16_t me, conflict* found) const {
  if (c.read_epoch != clock_.now) return false;
  for (auto [reader, pc] : {std::pair{c.first_reader, c.first_read_pc}, std::pair{c.other_reader, c.other_read_pc}}) {
    if (reader == nobody || reader == me) continue;
    // read_syncs is the warp's count at the latest read: if __syncwarp came
    // after it, it came after every read of that warp.
    if (warp_ordered(me, reader, c.read_syncs)) continue;
    *found = {hazard::write_after_read, reader, pc};
    return true;
  }
  return false;
}

shared_shadow::conflict shared_shadow::write(std::size_t offset, std::size_t n, access a) {
  conflict found;
  const std::uint32_t now = clock_.now;
  const std::uint16_t syncs = clock_.warp_syncs[a.thread / 32];
  for (std::size_t i = offset; i < offset + n; ++i) {
    cell& c = cells_[i];
    if (found.race == hazard::none) {
      if (races_with_write(c, a.thread))
        found = {hazard::write_after_write, c.writer, c.write_pc};
      else
        races_with_reads(c, a.thread, &found);
    }
    c.write_epoch = now;
    c.writer = a.thread;
    c.write_syncs = syncs;
    c.write_fences = clock_.fences[a.thread];
    c.write_pc = a.pc;
  }
  return found;
}

shared_shadow::conflict shared_shadow::read(std::size_t offset, std::size_t n, access a) {
  conflict found;
  constexpr std::size_t no_byte = ~std::size_t{0};
  std::size_t uninitialised_at = no_byte;
  const std::uint32_t now = clock_.now;
  const std::uint16_t syncs = clock_.warp_syncs[a.thread / 32];
  for (std::size_t i = offset; i < offset + n; ++i) {
    cell& c = cells_[i];
    if (c.write_epoch < clock_.block_start) {
      if (uninitialised_at == no_byte) uninitialised_at = i;
    }
    else if (found.race == hazard::none && races_with_write(c, a.thread))
      found = {hazard::read_after_write, c.writer, c.write_pc};
    if (c.read_epoch != now) {
      c.read_epoch = now;
      c.first_reader = a.thread;
      c.first_read_pc = a.pc;
      c.other_reader = nobody;
    } else if (c.first_reader != a.thread) {
      c.other_reader = a.thread;
      c.other_read_pc = a.pc;
    }
    c.read_syncs = syncs;
  }
  if (uninitialised_at != no_byte) hold_uninitialised(uninitialised_at, n, a);
  return found;
}

void shared_shadow::atomic(std::size_t offset, std::size_t n, access a, bool reads) {
  for (std::size_t i = offset; i < offset + n; ++i) {
    cell& c = cells_[i];
    if (reads && c.write_epoch < clock_.block_start) hold_uninitialised(i, n, a);
    c.write_epoch = clock_.now;
    c.writer = atomic_writer;
    c.write_pc = a.pc;
  }
}

void shared_shadow::hold_uninitialised(std::size_t offset, std::size_t size, access a) {
  // One held read per instruction is enough to report it.
  for (const uninitialised_read& r : pending_)
    if (r.pc == a.pc) return;
  pending_.push_back({offset, size, a.thread, a.pc, clock_.now});
}

}  // namespace lockstep::emu::check
