// The device memory the emulator knows: cudaMalloc'd buffers and registered
// host memory. In normal mode this is only what cudaFree needs. Buffers
// allocated while checking is on get more: a redzone on each side, a shadow
// byte per byte saying whether anything wrote it (initcheck), a writer and a
// reader record per 4-byte word for racecheck between blocks, and a stay in a
// quarantine after cudaFree so that a late access is reported, not reused.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace lockstep::emu::check {

// Who last wrote and read one 4-byte word of global memory in a launch,
// packed as global_races.h's global_access says, and from which instruction
// (as an offset from the kernel's address, 0 if too far to say).
struct word_races {
  std::atomic<std::uint64_t> writer{0}, reader{0};
  std::atomic<std::int32_t> writer_site{0}, reader_site{0};
};

struct device_range {
  enum class origin : std::uint8_t { cuda_malloc, host_memory, freed };
  std::uintptr_t begin = 0, end = 0;  // the bytes asked for
  origin from = origin::cuda_malloc;
  std::string name;  // registered host memory's name
  // Null when not tracked (allocated in normal mode, host memory): such
  // memory counts as initialised.
  std::shared_ptr<unsigned char[]> written;
  // Null when not race-checked (allocated in normal mode, too large, or no
  // racecheck launch since it was allocated or registered).
  std::shared_ptr<word_races[]> races;
  bool checked = false;  // allocated in check mode: has redzones
  int device = 0;        // the device current when cudaMalloc made it
  // Poisoned byte ranges [first, second) (poison_region), sorted; null if none.
  std::shared_ptr<const std::vector<std::pair<std::uintptr_t, std::uintptr_t>>> poisoned;
  // The poisoned range [address, address + size) overlaps, or null.
  const std::pair<std::uintptr_t, std::uintptr_t>* poisoned_at(std::uintptr_t address, std::size_t size) const {
    for (const auto& p : *poisoned)
      if (address < p.second && address + size > p.first) return &p;
    return nullptr;
  }

  std::string describe() const;  // "cudaMalloc'd 4096 bytes at 0x..." / "host memory 'x' (...)"
};

// The ranges a launch may touch, frozen when it starts (allocations do not
// change while a launch runs; launches are synchronous).
struct memory_snapshot {
  std::vector<device_range> live;         // sorted by begin
  std::vector<device_range> quarantined;  // freed in check mode, sorted by begin
  // The range holding [address, address + size) in part, or null.
  const device_range* find_live(std::uintptr_t address) const;
  const device_range* find_freed(std::uintptr_t address) const;
  // The live check-mode allocation whose redzone holds address, or null.
  const device_range* near_live(std::uintptr_t address) const;
};

inline constexpr std::size_t redzone_bytes = 256;

// 256-byte aligned, as cudaMalloc's; allocations of a page or more start on a
// page and own their last page, so their pages can be shared with another
// process (shared_pages.h) without sharing anything else.
void* allocate(std::size_t bytes, bool checking, int device);
bool release(void* pointer);  // false if pointer is not a live allocation
// Registers [begin, begin + bytes) as a live allocation that no cudaMalloc
// made (memory mapped from another process, a pool's shared file): cudaFree
// and the checks see it as device memory, and release runs `unmap`.
void add_mapping(void* begin, std::size_t bytes, std::function<void()> unmap);
// Makes release of the live allocation starting at `begin` run `unmap`
// first, before its memory is freed (pages shared with other processes are
// made private again); false if no allocation starts there.
bool on_release(const void* begin, std::function<void()> unmap);
// Why `pointer` is not the start of a live allocation, for messages.
std::string why_not_allocation(const void* pointer);
// How many bytes from `address` to the end of the cudaMalloc'd allocation
// holding it, or SIZE_MAX if none does (host memory, say).
std::size_t bytes_to_end(const void* address);
// The device of the cudaMalloc'd allocation holding `address`, or -1 if none does.
int allocation_device(const void* address);
// The cudaMalloc'd allocation holding `address`: its start and size (cuMemGetAddressRange); false if none does.
bool allocation_range(const void* address, const void*& begin, std::size_t& bytes);
void mark_written(const void* address, std::size_t bytes);
void copy_written(void* dst, const void* src, std::size_t bytes);  // a device-to-device copy's init state
// Marks [address, address + bytes) poisoned (or not) where it lies in a check-mode allocation.
void set_poisoned(const void* address, std::size_t bytes, bool poisoned);
void add_host_memory(const void* address, std::size_t bytes, const std::string& name);
void remove_host_memory(const void* address);
// with_races: give each live check-mode allocation its racecheck records.
memory_snapshot snapshot(bool with_races);

}  // namespace lockstep::emu::check
