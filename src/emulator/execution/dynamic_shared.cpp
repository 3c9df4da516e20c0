#include "dynamic_shared.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <new>

namespace lockstep::emu {

namespace {
std::size_t page_bytes() {
  static const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return page;
}
}  // namespace

dynamic_shared_buffer::~dynamic_shared_buffer() {
  if (region_) munmap(region_, region_bytes_);
}

unsigned char* dynamic_shared_buffer::prepare(std::size_t bytes) {
  const std::size_t page = page_bytes();
  if (!region_ || data_bytes_ < bytes) {
    if (region_) munmap(region_, region_bytes_);
    region_ = nullptr;
    const std::size_t data = (bytes + page - 1) / page * page;
    const std::size_t total = dynamic_shared_guard_before + data + dynamic_shared_guard_after;
    void* r = mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED) throw std::bad_alloc();
    if (data && mprotect(static_cast<char*>(r) + dynamic_shared_guard_before, data, PROT_READ | PROT_WRITE) != 0) {
      munmap(r, total);
      throw std::bad_alloc();
    }
    region_ = static_cast<unsigned char*>(r);
    region_bytes_ = total;
    data_bytes_ = data;
  }
  const auto guard = reinterpret_cast<std::uintptr_t>(region_) + dynamic_shared_guard_before + data_bytes_;
  begin_ = (guard - bytes) & ~std::uintptr_t{15};
  bytes_ = bytes;
  // Below 64 bytes by hand: memset would use an AVX-512 masked store whose
  // masked-off lanes reach into the guard, which the CPU then handles in
  // microcode, a thousand times slower (for every block, even of 0 bytes).
  auto* p = reinterpret_cast<unsigned char*>(begin_);
  if (bytes >= 64)
    std::memset(p, 0xff, bytes);
  else
    for (std::size_t i = 0; i < bytes; ++i) p[i] = 0xff;
  return p;
}

dynamic_shared_buffer::place dynamic_shared_buffer::where(std::uintptr_t address) const {
  const auto region = reinterpret_cast<std::uintptr_t>(region_);
  if (!region_ || address < region || address >= region + region_bytes_) return place::elsewhere;
  return address < begin_ ? place::before : address >= begin_ + bytes_ ? place::after : place::elsewhere;
}

}  // namespace lockstep::emu
