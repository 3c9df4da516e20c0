#include "check/global_races.h"

namespace lockstep::emu::check {
namespace {

constexpr std::uint64_t published_bit = 1u << 4;
constexpr std::uint64_t atomic_bit = std::uint64_t{1} << 17;

std::uint64_t pack(const global_access& a, unsigned bytes, bool atomic) {
  return a.tag << 54 | a.block << 28 | std::uint64_t{a.thread & 1023} << 18 | (atomic ? atomic_bit : 0) | std::uint64_t{a.epoch & 4095} << 5 | bytes;
}
std::uint64_t tag_of(std::uint64_t r) { return r >> 54; }
std::uint64_t block_of(std::uint64_t r) { return r >> 28 & (global_races::max_blocks - 1); }
unsigned thread_of(std::uint64_t r) { return static_cast<unsigned>(r >> 18 & 1023); }
unsigned epoch_of(std::uint64_t r) { return static_cast<unsigned>(r >> 5 & 4095); }
std::uint64_t who(std::uint64_t r) { return r >> 18; }  // tag, block, thread

// Whether the recorded access `other` and this one, of bytes `bytes` of the
// word, may happen in either order.
bool unordered(std::uint64_t other, std::uint64_t me, unsigned bytes) {
  if (tag_of(other) != tag_of(me) || who(other) == who(me) || (other & published_bit) || !(other & bytes & 15)) return false;
  return block_of(other) != block_of(me) || epoch_of(other) == epoch_of(me);
}

}  // namespace

global_races::conflict global_races::access(const device_range& range, std::uintptr_t address, std::size_t size, global_op op,
                                            const global_access& me) {
  const bool write = op != global_op::read, atomic = op == global_op::atomic_update;
  conflict found;
  const std::uintptr_t first = (address - range.begin) / 4, last = (address + size - 1 - range.begin) / 4;
  for (std::uintptr_t w = first; w <= last; ++w) {
    // The bytes of word w this access covers.
    const std::uintptr_t word_begin = range.begin + 4 * w;
    unsigned bytes = 0;
    for (unsigned b = 0; b < 4; ++b)
      if (word_begin + b >= address && word_begin + b < address + size) bytes |= 1u << b;
    word_races& word = range.races[w];
    const std::uint64_t record = pack(me, bytes, atomic);
    const std::uint64_t writer = word.writer.load(std::memory_order_relaxed);
    const bool writer_atomic = writer & atomic_bit;
    std::uint64_t other = 0;
    if (unordered(writer, record, bytes) && !(atomic && writer_atomic)) {
      other = writer;
      found.race = write ? hazard::write_after_write : hazard::read_after_write;
      found.other_site = word.writer_site.load(std::memory_order_relaxed);
      found.other_atomic = writer_atomic;
      found.read_against_atomic = !write && writer_atomic;
    } else if (write) {
      const std::uint64_t reader = word.reader.load(std::memory_order_relaxed);
      if (unordered(reader, record, bytes)) {
        other = reader;
        found.race = hazard::write_after_read;
        found.other_site = word.reader_site.load(std::memory_order_relaxed);
        found.read_against_atomic = atomic;
      }
    }
    // Over another thread's unordered atomic the first stays: a plain access
    // after this one (its own thread's, say) still races with that one.
    const bool keep_writer = atomic && writer_atomic && unordered(writer, record, bytes);
    if (write && !keep_writer) {
      word.writer.store(record, std::memory_order_relaxed);
      word.writer_site.store(me.site, std::memory_order_relaxed);
      remember(me.thread, word.writer, record);
    } else if (!write) {
      // One reader per word is kept: the launch's first, or a later one of
      // the same block (a newer epoch). Replacing it on every read would make
      // blocks on different workers fight over the word's cache line.
      const std::uint64_t reader = word.reader.load(std::memory_order_relaxed);
      if (reader != record && (tag_of(reader) != tag_of(record) || block_of(reader) == block_of(record))) {
        word.reader.store(record, std::memory_order_relaxed);
        word.reader_site.store(me.site, std::memory_order_relaxed);
        remember(me.thread, word.reader, record);
      }
    }
    if (found.race != hazard::none) {
      found.other_thread = thread_of(other);
      found.other_block = block_of(other);
      return found;
    }
  }
  return found;
}

void global_races::fenced(unsigned thread) {
  recent_accesses& mine = recent_[thread];
  const unsigned n = mine.count < recent_accesses::kept ? mine.count : recent_accesses::kept;
  for (unsigned i = 0; i < n; ++i) {
    auto [slot, record] = mine.records[i];
    slot->compare_exchange_strong(record, record | published_bit, std::memory_order_relaxed);
  }
  mine.count = 0;
}

}  // namespace lockstep::emu::check
