// A block's dynamic shared memory (`extern __shared__`), between two
// inaccessible guard regions.
//
// The launch's bytes end where the upper guard begins (rounded down to 16
// bytes, CUDA's alignment), so an access past the launch's size faults at once
// and the fault handler can say what it was; a launch with 0 bytes gets the
// guard's own address, so a kernel that forgot the third launch argument
// faults at its first use of the buffer. The guards are address space only.
#pragma once
#include <cstddef>
#include <cstdint>

namespace lockstep::emu {

// Past the launch's bytes: more than the largest dynamic size a block can have
// (227 KiB on an H100), so an index computed for a larger buffer lands here.
inline constexpr std::size_t dynamic_shared_guard_after = 256 * 1024;
inline constexpr std::size_t dynamic_shared_guard_before = 64 * 1024;

class dynamic_shared_buffer {
 public:
  dynamic_shared_buffer() = default;
  ~dynamic_shared_buffer();
  dynamic_shared_buffer(const dynamic_shared_buffer&) = delete;
  dynamic_shared_buffer& operator=(const dynamic_shared_buffer&) = delete;

  // The start of `bytes` bytes, all 0xff (NaN as floats, -1 as ints, so a read
  // of something no thread wrote stands out); for 0 bytes, the upper guard.
  unsigned char* prepare(std::size_t bytes);

  // Where an address lies against the last prepared buffer, for fault reports.
  enum class place { elsewhere, before, after };
  place where(std::uintptr_t address) const;
  std::uintptr_t begin() const { return begin_; }
  std::size_t bytes() const { return bytes_; }

 private:
  unsigned char* region_ = nullptr;  // lower guard, data pages, upper guard
  std::size_t region_bytes_ = 0;
  std::size_t data_bytes_ = 0;  // whole pages
  std::uintptr_t begin_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace lockstep::emu
