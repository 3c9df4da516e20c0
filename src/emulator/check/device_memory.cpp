#include "check/device_memory.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>

#include "execution/shared_pages.h"

namespace lockstep::emu::check {
namespace {

// Freed check-mode buffers stay allocated (and reported when touched) until
// this much has been freed after them.
constexpr std::size_t quarantine_limit = 256u << 20;
// Larger allocations are not race-checked between blocks (24 bytes of
// records per 4-byte word).
constexpr std::size_t race_records_limit = 256u << 20;

std::size_t rounded(std::size_t bytes) { return bytes == 0 ? 256 : (bytes + 255) / 256 * 256; }

struct entry {
  device_range range;
  void* block = nullptr;        // what to free; null for host memory and mappings
  std::function<void()> unmap;  // run when released, before block is freed (add_mapping, on_release)
  int host_references = 0;      // host memory registered by several tensors at once
};

struct registry {
  std::mutex mutex;
  std::map<std::uintptr_t, entry> live;  // by begin
  std::deque<entry> quarantine;
  std::size_t quarantined_bytes = 0;
  std::atomic<bool> tracking{false};  // some live allocation has an init shadow

  entry* find(std::uintptr_t address) {
    auto it = live.upper_bound(address);
    if (it == live.begin()) return nullptr;
    --it;
    return address < it->second.range.end || address == it->first ? &it->second : nullptr;
  }
};

registry& the_registry() {
  static registry r;
  return r;
}

template <class Ranges>
const device_range* find_in(const Ranges& ranges, std::uintptr_t address) {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), address, [](std::uintptr_t a, const device_range& r) { return a < r.begin; });
  if (it == ranges.begin()) return nullptr;
  --it;
  return address < it->end || address == it->begin ? &*it : nullptr;
}

}  // namespace

std::string device_range::describe() const {
  char text[160];
  const auto bytes = static_cast<unsigned long long>(end - begin);
  const char* what = from == origin::freed ? "freed cudaMalloc'd" : "cudaMalloc'd";
  if (from == origin::host_memory)
    std::snprintf(text, sizeof text, "host memory '%s' (%llu bytes at %#llx)", name.c_str(), bytes, static_cast<unsigned long long>(begin));
  else
    std::snprintf(text, sizeof text, "%s %llu bytes at %#llx", what, bytes, static_cast<unsigned long long>(begin));
  return text;
}

const device_range* memory_snapshot::find_live(std::uintptr_t address) const { return find_in(live, address); }
const device_range* memory_snapshot::find_freed(std::uintptr_t address) const { return find_in(quarantined, address); }

const device_range* memory_snapshot::near_live(std::uintptr_t address) const {
  auto after = std::upper_bound(live.begin(), live.end(), address, [](std::uintptr_t a, const device_range& r) { return a < r.begin; });
  if (after != live.end() && after->from == device_range::origin::cuda_malloc && after->begin - address <= redzone_bytes) return &*after;
  if (after != live.begin()) {
    const device_range& before = *(after - 1);
    if (before.from == device_range::origin::cuda_malloc && address < before.begin + rounded(before.end - before.begin) + redzone_bytes)
      return &before;
  }
  return nullptr;
}

void* allocate(std::size_t bytes, bool checking, int device) {
  entry e;
  e.range.device = device;
  // 256-byte alignment, as cudaMalloc guarantees; whole pages from a page up.
  const bool paged = bytes >= shared_page_bytes;
  const std::size_t alignment = paged ? shared_page_bytes : 256;
  const std::size_t body = paged ? whole_pages(bytes) : rounded(bytes);
  const std::size_t lead = checking ? alignment : 0;  // holds the leading redzone
  const std::size_t total = lead + body + (checking ? redzone_bytes : 0);
  e.block = std::aligned_alloc(alignment, (total + alignment - 1) / alignment * alignment);
  if (!e.block) return nullptr;
  e.range.begin = reinterpret_cast<std::uintptr_t>(e.block) + lead;
  e.range.end = e.range.begin + bytes;
  if (checking) {
    e.range.checked = true;
    e.range.written = std::make_shared<unsigned char[]>(bytes);  // zeros: nothing written yet
  }
  registry& r = the_registry();
  std::lock_guard lock(r.mutex);
  if (checking) r.tracking = true;
  r.live[e.range.begin] = e;
  return reinterpret_cast<void*>(e.range.begin);
}

bool release(void* pointer) {
  registry& r = the_registry();
  std::lock_guard lock(r.mutex);
  auto it = r.live.find(reinterpret_cast<std::uintptr_t>(pointer));
  if (it == r.live.end() || it->second.range.from != device_range::origin::cuda_malloc) return false;
  entry e = std::move(it->second);
  r.live.erase(it);
  if (e.unmap) e.unmap();
  if (!e.block) return true;  // a mapping: nothing of ours to free or keep
  if (!e.range.checked) {
    std::free(e.block);
    return true;
  }
  e.range.from = device_range::origin::freed;
  e.range.written.reset();
  e.range.races.reset();
  r.quarantined_bytes += rounded(e.range.end - e.range.begin);
  r.quarantine.push_back(std::move(e));
  while (r.quarantined_bytes > quarantine_limit) {
    r.quarantined_bytes -= rounded(r.quarantine.front().range.end - r.quarantine.front().range.begin);
    std::free(r.quarantine.front().block);
    r.quarantine.pop_front();
  }
  return true;
}

void add_mapping(void* begin, std::size_t bytes, std::function<void()> unmap) {
  entry e;
  e.range.begin = reinterpret_cast<std::uintptr_t>(begin);
  e.range.end = e.range.begin + bytes;
  e.unmap = std::move(unmap);
  registry& r = the_registry();
  std::lock_guard lock(r.mutex);
  r.live[e.range.begin] = std::move(e);
}

bool on_release(const void* begin, std::function<void()> unmap) {
  registry& r = the_registry();
  std::lock_guard lock(r.mutex);
  auto it = r.live.find(reinterpret_cast<std::uintptr_t>(begin));
  if (it == r.live.end() || it->second.range.from != device_range::origin::cuda_malloc) return false;
  it->second.unmap = std::move(unmap);
  return true;
}

std::string why_not_allocation(const void* pointer) {
  registry& r = the_registry();
  const auto a = reinterpret_cast<std::uintptr_t>(pointer);
  std::lock_guard lock(r.mutex);
  if (const entry* e = r.find(a)) {
    if (e->range.from == device_range::origin::host_memory) return "it is registered host memory, not a cudaMalloc'd allocation";
    return "it points " + std::to_string(a - e->range.begin) + " bytes into " + e->range.describe() + ", not to its start";
  }
  for (const entry& e : r.quarantine)
    if (a >= e.range.begin && (a < e.range.end || a == e.range.begin)) return "it was freed already (" + e.range.describe() + ")";
  return "no cudaMalloc gave it (or it was freed already)";
}

std::size_t bytes_to_end(const void* address) {
  registry& r = the_registry();
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  std::lock_guard lock(r.mutex);
  const entry* e = r.find(a);
  if (!e || e->range.from != device_range::origin::cuda_malloc) return SIZE_MAX;
  return e->range.end - a;
}

int allocation_device(const void* address) {
  registry& r = the_registry();
  std::lock_guard lock(r.mutex);
  const entry* e = r.find(reinterpret_cast<std::uintptr_t>(address));
  return e && e->range.from == device_range::origin::cuda_malloc ? e->range.device : -1;
}

bool allocation_range(const void* address, const void*& begin, std::size_t& bytes) {
  registry& r = the_registry();
  std::lock_guard lock(r.mutex);
  const entry* e = r.find(reinterpret_cast<std::uintptr_t>(address));
  if (!e || e->range.from != device_range::origin::cuda_malloc) return false;
  begin = reinterpret_cast<const void*>(e->range.begin);
  bytes = e->range.end - e->range.begin;
  return true;
}

void mark_written(const void* address, std::size_t bytes) {
  registry& r = the_registry();
  if (!r.tracking.load(std::memory_order_relaxed) || bytes == 0) return;
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  std::lock_guard lock(r.mutex);
  for (std::uintptr_t at = a; at < a + bytes;) {
    entry* e = r.find(at);
    if (!e) break;
    const std::uintptr_t stop = std::min(a + bytes, e->range.end);
    if (e->range.written) std::memset(e->range.written.get() + (at - e->range.begin), 1, stop - at);
    at = stop;
  }
}

void copy_written(void* dst, const void* src, std::size_t bytes) {
  registry& r = the_registry();
  if (!r.tracking.load(std::memory_order_relaxed) || bytes == 0) return;
  const auto d = reinterpret_cast<std::uintptr_t>(dst), s = reinterpret_cast<std::uintptr_t>(src);
  std::lock_guard lock(r.mutex);
  entry* to = r.find(d);
  if (!to || !to->range.written) return;
  entry* from = r.find(s);
  const std::size_t n = std::min<std::size_t>(bytes, to->range.end - d);
  unsigned char* out = to->range.written.get() + (d - to->range.begin);
  if (from && from->range.written && s + n <= from->range.end)
    std::memmove(out, from->range.written.get() + (s - from->range.begin), n);
  else
    std::memset(out, 1, n);  // from host memory or an untracked buffer: written
}

void set_poisoned(const void* address, std::size_t bytes, bool poisoned) {
  registry& r = the_registry();
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  std::lock_guard lock(r.mutex);
  entry* e = r.find(a);
  if (!e || !e->range.checked || bytes == 0) return;
  const std::uintptr_t first = a, last = std::min(a + bytes, e->range.end);
  // Per byte of the allocation, whether it is poisoned, then back to ranges
  // (the list is rebuilt: launches that took the old one keep it).
  std::vector<bool> bytes_poisoned(e->range.end - e->range.begin);
  if (e->range.poisoned)
    for (const auto& [b, end] : *e->range.poisoned)
      for (std::uintptr_t i = b; i < end; ++i) bytes_poisoned[i - e->range.begin] = true;
  for (std::uintptr_t i = first; i < last; ++i) bytes_poisoned[i - e->range.begin] = poisoned;
  auto ranges = std::make_shared<std::vector<std::pair<std::uintptr_t, std::uintptr_t>>>();
  for (std::size_t i = 0; i < bytes_poisoned.size(); ++i) {
    if (!bytes_poisoned[i]) continue;
    if (!ranges->empty() && ranges->back().second == e->range.begin + i)
      ++ranges->back().second;
    else
      ranges->push_back({e->range.begin + i, e->range.begin + i + 1});
  }
  if (ranges->empty())
    e->range.poisoned.reset();
  else
    e->range.poisoned = std::move(ranges);
}

void add_host_memory(const void* address, std::size_t bytes, const std::string& name) {
  entry e;
  e.range.begin = reinterpret_cast<std::uintptr_t>(address);
  e.range.end = e.range.begin + bytes;
  e.range.from = device_range::origin::host_memory;
  e.range.name = name;
  registry& r = the_registry();
  std::lock_guard lock(r.mutex);
  auto it = r.live.find(e.range.begin);
  if (it != r.live.end() && it->second.range.from == device_range::origin::host_memory) {
    ++it->second.host_references;
    if (e.range.end > it->second.range.end) {
      it->second.range.end = e.range.end;
      it->second.range.races.reset();  // sized for the old end; the next checked launch makes new ones
    }
    return;
  }
  e.host_references = 1;
  r.live[e.range.begin] = std::move(e);
}

void remove_host_memory(const void* address) {
  registry& r = the_registry();
  std::lock_guard lock(r.mutex);
  auto it = r.live.find(reinterpret_cast<std::uintptr_t>(address));
  if (it != r.live.end() && it->second.range.from == device_range::origin::host_memory && --it->second.host_references == 0) r.live.erase(it);
}

memory_snapshot snapshot(bool with_races) {
  registry& r = the_registry();
  std::lock_guard lock(r.mutex);
  memory_snapshot s;
  s.live.reserve(r.live.size());
  for (auto& [begin, e] : r.live) {
    const std::size_t bytes = e.range.end - e.range.begin;
    // Registered host memory (a NumPy array handed to a kernel) is raced-checked as cudaMalloc'd memory is.
    const bool trackable = e.range.checked || e.range.from == device_range::origin::host_memory;
    if (with_races && trackable && !e.range.races && bytes <= race_records_limit)
      e.range.races = std::shared_ptr<word_races[]>(new word_races[(bytes + 3) / 4]);
    s.live.push_back(e.range);
  }
  for (const entry& e : r.quarantine) s.quarantined.push_back(e.range);
  std::sort(s.quarantined.begin(), s.quarantined.end(), [](const device_range& a, const device_range& b) { return a.begin < b.begin; });
  return s;
}

}  // namespace lockstep::emu::check

namespace lockstep::emu {
void register_host_memory(const void* address, std::size_t bytes, const std::string& name) { check::add_host_memory(address, bytes, name); }
void unregister_host_memory(const void* address) { check::remove_host_memory(address); }
void poison_region(const void* address, std::size_t bytes) { check::set_poisoned(address, bytes, true); }
void unpoison_region(const void* address, std::size_t bytes) { check::set_poisoned(address, bytes, false); }
}  // namespace lockstep::emu
