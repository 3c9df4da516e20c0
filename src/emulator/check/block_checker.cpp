#include "check/block_checker.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "execution/dynamic_shared.h"
#include "execution/message_text.h"
#include "execution/warp_ops.h"
#include "lockstep/emu/builtins.h"

namespace lockstep::emu::check {

thread_local block_checker* active_checker = nullptr;

namespace {

// sync_finding's last argument: the two places are one finding only if their source lines differ.
constexpr bool same_line_is_none = true;

// Where [address, address + size) lies against [begin, end), which it leaves.
std::string outside(std::uintptr_t address, std::size_t size, std::uintptr_t begin, std::uintptr_t end, const std::string& what) {
  if (address < begin) return std::to_string(begin - address) + " bytes before " + what;
  if (address < end) return "running " + std::to_string(address + size - end) + " bytes past the end of " + what;
  if (address == end) return "just past the end of " + what;
  return std::to_string(address - end) + " bytes past the end of " + what;
}

const char* verb(unsigned flags) {
  if (flags & is_atomic) return flags & is_write ? "atomically updates" : "atomically reads";
  return flags & is_write ? "writes" : "reads";
}

}  // namespace

void block_checker::read_thread_locals() {
  lockstep_thread_locals_ = own_thread_locals_of(reinterpret_cast<const void*>(&own_stack));
  all_thread_locals_ = own_thread_locals();
  thread_locals_of_ = std::this_thread::get_id();
  shared_module_ = nullptr;
}

void block_checker::advance_clock() {
  if (++clock_.now > 0xffffff00u) {  // wrapping would make old records look new
    static_shadow_.clear();
    dynamic_shadow_.clear();
    clock_.now = 1;
  }
}

void block_checker::block_started(launch_session& session, unsigned threads, unsigned char* dynamic_shared, std::size_t dynamic_bytes) {
  session_ = &session;
  threads_ = threads;
  last_range_ = nullptr;
  last_array_ = nullptr;
  if (thread_locals_of_ != std::this_thread::get_id()) read_thread_locals();
  const kernel_info& kernel = session.kernel();
  if (shared_module_ != &kernel) {
    // __shared__ arrays are this OS thread's copy of the kernel module's thread-locals.
    shared_ = own_thread_locals_of(session.kernel_address());
    if (static_shadow_.size() != shared_.end - shared_.begin) static_shadow_.resize(shared_.end - shared_.begin);
    shared_module_ = &kernel;
  }
  dynamic_ = {reinterpret_cast<std::uintptr_t>(dynamic_shared), reinterpret_cast<std::uintptr_t>(dynamic_shared) + dynamic_bytes};
  // Past the end, the whole guard region (dynamic_shared.h) is the buffer's:
  // an index past a forgotten (0) or too small launch size lands there.
  dynamic_window_ = address_range{dynamic_.begin - redzone_bytes, dynamic_.end + dynamic_shared_guard_after};
  if (dynamic_shadow_.size() < dynamic_bytes) dynamic_shadow_.resize(dynamic_bytes);
  advance_clock();
  clock_.block_start = clock_.now;
  clock_.warp_syncs.assign((threads + 31) / 32, 0);
  clock_.fences.assign(threads, 0);
  global_races_.begin_block(threads);
  holding_ = false;
  last_reads_.assign(threads, {});
  guess_sites_.clear();
  checking_ = wants_any(memory_checks) ? this : nullptr;  // synccheck alone leaves the hooks off
  active_checker = checking_;
}

void block_checker::block_ended() {
  active_checker = checking_ = nullptr;
  if (holding_) release_held_race();
  static_shadow_.flush_uninitialised([&](const auto& r) { report_uninitialised_shared(memory_kind::static_shared, r); });
  dynamic_shadow_.flush_uninitialised([&](const auto& r) { report_uninitialised_shared(memory_kind::dynamic_shared, r); });
  if (!findings_.empty() || unlisted_ || !guess_sites_.empty()) session_->add(findings_, unlisted_, guess_sites_);
  unlisted_ = 0;
}

void block_checker::barrier_released(std::span<const unsigned> waiting, std::span<const std::uintptr_t> pc, unsigned first_exited) {
  if (holding_) release_held_race();
  static_shadow_.flush_uninitialised([&](const auto& r) { report_uninitialised_shared(memory_kind::static_shared, r); });
  dynamic_shadow_.flush_uninitialised([&](const auto& r) { report_uninitialised_shared(memory_kind::dynamic_shared, r); });
  advance_clock();
  if (wants(check_tool::synccheck) && !waiting.empty()) check_barrier_round(waiting, pc, first_exited);
}

// synccheck: one barrier round, reached by every thread of the block at the
// same __syncthreads(). Exited threads do not hold a barrier up (as on Volta
// and later), but a kernel that relies on that is waiting for threads that
// never come, which is undefined on older GPUs and usually a bug.
void block_checker::check_barrier_round(std::span<const unsigned> waiting, std::span<const std::uintptr_t> pc, unsigned first_exited) {
  // Divergence: name the barrier fewer threads reached, as the misplaced one.
  const std::uintptr_t first_pc = pc[waiting.front()];
  unsigned other = waiting.front(), same = 0;
  for (unsigned t : waiting) {
    if (pc[t] == first_pc)
      ++same;
    else if (other == waiting.front())
      other = t;
  }
  if (other != waiting.front()) {
    unsigned minority = waiting.front(), majority = other;
    if (same > waiting.size() - same) std::swap(minority, majority);
    // Two copies of one source barrier (the compiler may duplicate code) are no finding: same_line_is_none.
    sync_finding(
        "divergent __syncthreads(): threads of one block wait at different barriers in the same round "
        "(thread " +
            std::to_string(minority) + " here, thread " + std::to_string(majority) +
            " at the other); every thread must reach the same __syncthreads()",
        minority, pc[minority], majority, pc[majority], same_line_is_none);
  }
  if (first_exited < threads_) {
    sync_finding("__syncthreads() released with only " + std::to_string(waiting.size()) + " of " + std::to_string(threads_) + " threads: thread " +
                     std::to_string(first_exited) +
                     " (and any other missing) exited without reaching it; a barrier must be reached by every thread of the block",
                 waiting.front(), pc[waiting.front()], first_exited, 0);
  }
}

void block_checker::warp_completed(unsigned warp, warp_op op, std::uint32_t lanes, std::span<const std::uint32_t, 32> mask,
                                   std::span<const std::uintptr_t, 32> pc) {
  if (op == warp_op::sync || warp_ops::is_wmma(op)) ++clock_.warp_syncs[warp];
  // synccheck: the lanes of one warp collective passed the same mask (__activemask takes none).
  if (!wants(check_tool::synccheck) || op == warp_op::active) return;
  const unsigned first = static_cast<unsigned>(__builtin_ctz(lanes));
  for (std::uint32_t m = lanes; m; m &= m - 1) {
    const unsigned lane = static_cast<unsigned>(__builtin_ctz(m));
    if (mask[lane] == mask[first]) continue;
    const unsigned base = warp * 32;
    sync_finding(std::string(warp_ops::name(op)) + " called by lanes of one warp with different masks: lane " + std::to_string(first) + " passes " +
                     warp_ops::mask_text(mask[first]) + ", lane " + std::to_string(lane) + " passes " + warp_ops::mask_text(mask[lane]),
                 base + lane, pc[lane], base + first, pc[first]);
    return;
  }
}

void block_checker::refused(const std::string& what, unsigned thread, std::uintptr_t pc) {
  if (!wants(check_tool::synccheck)) return;
  sync_finding(what, thread, pc, thread, 0);
  throw block_stopped{};
}

void block_checker::fenced() {
  const unsigned t = current.linear_tid;
  ++clock_.fences[t];
  if (session_->launch_tag()) global_races_.fenced(t);
}

template <class Fill>
void block_checker::note(check_tool tool, hazard race, std::uintptr_t pc, std::uintptr_t other_pc, bool running_thread, Fill fill) {
  const paused_checks paused;  // the report's strings
  const finding::key key{pc, other_pc, static_cast<unsigned>(tool) * 8 + static_cast<unsigned>(race)};
  for (finding& f : findings_)
    if (f.fold_key() == key) {
      ++f.report.repeats;
      return;
    }
  if (findings_.size() >= kept_findings) {
    ++unlisted_;
    return;
  }
  finding& f = findings_.emplace_back();
  f.report.tool = tool;
  f.report.race = race;
  f.report.block = current.block_idx;
  f.report.thread = current.thread_idx;
  f.other_pc = other_pc;
  f.stack[0] = pc;
  if (running_thread) capture_stack(f, pc);
  fill(f);
}

uint3 block_checker::thread_index(unsigned t) const {
  const dim3 b = session_->block();
  return {t % b.x, t / b.x % b.y, t / (b.x * b.y)};
}

uint3 block_checker::block_index(std::uint64_t linear) const {
  const dim3 g = session_->grid();
  return {unsigned(linear % g.x), unsigned(linear / g.x % g.y), unsigned(linear / (std::uint64_t(g.x) * g.y))};
}

// --- shared memory -------------------------------------------------------

const thread_local_symbol* block_checker::shared_array_at(std::size_t offset) const {
  const auto& arrays = session_->kernel().module_shared;
  auto it = std::upper_bound(arrays.begin(), arrays.end(), offset, [](std::size_t o, const thread_local_symbol& s) { return o < s.offset; });
  return it == arrays.begin() ? nullptr : &*(it - 1);  // the last one starting at or before offset
}

std::string block_checker::memory_name(memory_kind kind, const device_range* range, std::uintptr_t address) const {
  switch (kind) {
    case memory_kind::static_shared:
      return shared_name(kind, address - shared_.begin);
    case memory_kind::dynamic_shared:
      return shared_name(kind, address - dynamic_.begin);
    case memory_kind::global:
      return range->describe() + " + " + std::to_string(address - range->begin);
  }
  return "?";
}

std::string block_checker::shared_name(memory_kind kind, std::size_t offset) const {
  if (kind == memory_kind::dynamic_shared)
    return "dynamic shared memory + " + std::to_string(offset) + ", of " + std::to_string(dynamic_.end - dynamic_.begin) + " bytes";
  const thread_local_symbol* array = shared_array_at(offset);
  if (!array) return "__shared__ memory, before the first array";
  const std::size_t into = offset - array->offset;
  if (into < array->size) return "__shared__ " + array->name + " + " + std::to_string(into) + ", of " + std::to_string(array->size) + " bytes";
  return outside(offset, 1, array->offset, array->offset + array->size, "__shared__ " + array->name + " (" + std::to_string(array->size) + " bytes)");
}

void block_checker::shared_static(std::uintptr_t address, std::size_t size, unsigned flags, std::uintptr_t pc) {
  const std::size_t offset = address - shared_.begin;
  const thread_local_symbol* array = last_array_;
  if (!array || offset - array->offset >= array->size) array = last_array_ = shared_array_at(offset);
  const bool arrays_known = !session_->kernel().module_shared.empty();
  if (arrays_known && (!array || offset + size > array->offset + array->size)) {
    const paused_checks paused;
    return out_of_bounds(address, size, flags, pc, "outside every __shared__ array", shared_name(memory_kind::static_shared, offset));
  }
  shared(memory_kind::static_shared, offset, address, size, flags, pc);
}

void block_checker::shared_dynamic(std::uintptr_t address, std::size_t size, unsigned flags, std::uintptr_t pc) {
  if (address < dynamic_.begin || address + size > dynamic_.end) {
    if (dynamic_.begin == dynamic_.end) {
      const paused_checks paused;
      return out_of_bounds(address, size, flags, pc,
                           "of extern __shared__ memory, but the kernel was launched with 0 bytes of dynamic shared memory (give the "
                           "size as the launch's third argument)",
                           outside(address, size, dynamic_.begin, dynamic_.end, "the launch's 0 bytes of dynamic shared memory"));
    }
    {
      const paused_checks paused;
      return out_of_bounds(address, size, flags, pc, "outside the dynamic shared memory",
                           outside(address, size, dynamic_.begin, dynamic_.end,
                                   "the launch's " + std::to_string(dynamic_.end - dynamic_.begin) + " bytes of dynamic shared memory"));
    }
  }
  shared(memory_kind::dynamic_shared, address - dynamic_.begin, address, size, flags, pc);
}

void block_checker::shared(memory_kind kind, std::size_t offset, std::uintptr_t address, std::size_t size, unsigned flags, std::uintptr_t pc) {
  if (!(flags & may_be_unaligned) && (address & (size - 1))) {
    const paused_checks paused;
    misaligned(address, size, flags, pc, shared_name(kind, offset));
  }
  if (!wants(check_tool::racecheck) && !wants(check_tool::initcheck)) return;
  shared_shadow& shadow = kind == memory_kind::dynamic_shared ? dynamic_shadow_ : static_shadow_;
  const shared_shadow::access who{static_cast<std::uint16_t>(current.linear_tid), pc};
  const shared_shadow::conflict c = flags & is_atomic  ? shadow.atomic(offset, size, who, !(flags & is_write) || (flags & is_rmw), flags & is_write)
                                    : flags & is_write ? shadow.write(offset, size, who)
                                                       : shadow.read(offset, size, who);
  if (!wants(check_tool::racecheck)) return;
  if (c.guess_pc) guess_site(c.guess_pc);
  if (c.race == hazard::none) return;
  const bool reading = c.race == hazard::read_after_write;
  const std::uintptr_t read_pc = !c.read_against_atomic ? 0 : reading ? pc : c.other_pc;
  found_race({c.race, kind, nullptr, address, size, flags, pc, c.other_pc, current.linear_tid, c.other_thread, 0, c.read_against_atomic && reading,
              read_pc});
}

void block_checker::guess_site(std::uintptr_t pc) {
  if (std::find(guess_sites_.begin(), guess_sites_.end(), pc) == guess_sites_.end() && guess_sites_.size() < kept_findings)
    guess_sites_.push_back(pc);
}

void block_checker::found_race(const race& r) {
  if (r.kind != hazard::write_after_write || r.size > sizeof held_before_) return report_race(r, true);
  if (holding_) release_held_race();
  held_ = r;
  std::memcpy(held_before_, reinterpret_cast<const void*>(r.address), r.size);
  holding_ = true;
}

void block_checker::release_held_race() {
  holding_ = false;
  // The write has happened by now (the next access, barrier or block end).
  if (std::memcmp(held_before_, reinterpret_cast<const void*>(held_.address), held_.size) != 0) report_race(held_, false);
}

void block_checker::report_race(const race& r, bool stack_is_the_access) {
  note(check_tool::racecheck, r.kind, r.pc, r.other_pc, stack_is_the_access, [&](finding& f) {
    f.report.thread = thread_index(r.thread);
    f.report.other_thread = thread_index(r.other_thread);
    f.report.address = r.address;
    f.report.size = r.size;
    f.report.write = r.flags & is_write;
    f.report.memory = memory_name(r.where, r.range, r.address);
    f.unless_guess_at = r.read_pc;
    const char* what_other = r.kind == hazard::write_after_read ? "read" : r.other_atomic ? "atomically updated" : "wrote";
    if (r.where == memory_kind::global)
      f.report.what = "thread " + coordinates_text(f.report.thread) + " " + verb(r.flags) + " global memory that thread " +
                      coordinates_text(f.report.other_thread) + " of block " + coordinates_text(block_index(r.other_block)) + " " + what_other +
                      " in this launch, unordered by any barrier";
    else
      f.report.what = "thread " + coordinates_text(f.report.thread) + " " + verb(r.flags) + " shared memory that thread " +
                      coordinates_text(f.report.other_thread) + " " + what_other + " since the last __syncthreads()";
  });
}

void block_checker::report_uninitialised_shared(memory_kind kind, const shared_shadow::uninitialised_read& r) {
  if (!wants(check_tool::initcheck)) return;
  note(check_tool::initcheck, hazard::none, r.pc, 0, false, [&](finding& f) {
    f.report.thread = thread_index(r.thread);
    f.report.address = (kind == memory_kind::dynamic_shared ? dynamic_.begin : shared_.begin) + r.offset;
    f.report.size = r.size;
    f.report.memory = shared_name(kind, r.offset);
    f.report.what = "thread " + coordinates_text(f.report.thread) + " reads shared memory that no thread of its block has written";
  });
}

// --- global memory -------------------------------------------------------

void block_checker::global(const device_range& range, std::uintptr_t address, std::size_t size, unsigned flags, std::uintptr_t pc) {
  if (address + size > range.end) {
    const paused_checks paused;
    return out_of_bounds(address, size, flags, pc, "past the end of a device allocation",
                         outside(address, size, range.begin, range.end, range.describe()));
  }
  const std::size_t offset = address - range.begin;
  if (range.poisoned)
    if (const auto* p = range.poisoned_at(address, size)) {
      const paused_checks paused;
      return out_of_bounds(address, size, flags, pc, "in a poisoned region (lockstep::emu::poison_region)",
                           "bytes " + std::to_string(p->first - range.begin) + " to " + std::to_string(p->second - range.begin) + " of " +
                               range.describe() + ", poisoned; the access is at + " + std::to_string(offset));
    }
  if (!(flags & may_be_unaligned) && (address & (size - 1))) {
    const paused_checks paused;
    misaligned(address, size, flags, pc, range.describe() + " + " + std::to_string(offset));
  }
  if (range.written && wants(check_tool::initcheck)) {
    unsigned char* written = range.written.get() + offset;
    if (!(flags & is_write) || (flags & is_rmw))
      for (std::size_t i = 0; i < size; ++i)
        if (!std::atomic_ref<unsigned char>(written[i]).load(std::memory_order_relaxed)) {
          note(check_tool::initcheck, hazard::none, pc, 0, true, [&](finding& f) {
            f.report.address = address;
            f.report.size = size;
            f.report.memory = range.describe() + " + " + std::to_string(offset + i);
            f.report.what = "thread " + coordinates_text(current.thread_idx) + " " + verb(flags) +
                            " device memory that neither a kernel nor cudaMemcpy/cudaMemset has written";
          });
          break;
        }
    if (flags & is_write)
      for (std::size_t i = 0; i < size; ++i)
        if (!std::atomic_ref<unsigned char>(written[i]).load(std::memory_order_relaxed))
          std::atomic_ref<unsigned char>(written[i]).store(1, std::memory_order_relaxed);
  }
  // Volatile accesses count as atomics (CUDA's memory model has them as relaxed
  // atomics: a spin on a volatile flag is no race); atomic loads are not checked (global_races.h).
  const bool atomic_load = (flags & is_atomic) && !(flags & is_write);
  if (range.races && session_->launch_tag() && !(flags & is_volatile) && !atomic_load && wants(check_tool::racecheck))
    check_global_races(range, address, size, flags, pc);
}

void block_checker::check_global_races(const device_range& range, std::uintptr_t address, std::size_t size, unsigned flags, std::uintptr_t pc) {
  const dim3 g = session_->grid();
  const uint3 b = current.block_idx;
  // Instructions are recorded as 32-bit offsets from the kernel (all of its code is in one module).
  const auto kernel = reinterpret_cast<std::uintptr_t>(session_->kernel_address());
  const auto offset = static_cast<std::int64_t>(pc - kernel);
  const std::int32_t site = offset == static_cast<std::int32_t>(offset) ? static_cast<std::int32_t>(offset) : 0;
  const global_access me{session_->launch_tag(), b.x + std::uint64_t(g.x) * (b.y + std::uint64_t(g.y) * b.z), current.linear_tid,
                         clock_.now - clock_.block_start, site};
  const global_op op = flags & is_atomic ? global_op::atomic_update : flags & is_write ? global_op::write : global_op::read;
  const global_races::conflict c = global_races_.access(range, address, size, op, me);
  last_read& mine = last_reads_[me.thread];
  if (op == global_op::read) {
    mine = {address / 4, pc};
  } else if ((flags & is_rmw) && mine.pc && mine.word >= address / 4 && mine.word <= (address + size - 1) / 4) {
    guess_site(mine.pc);
    mine = {};
  }
  if (c.race == hazard::none) return;
  const std::uintptr_t other_pc = c.other_site ? kernel + static_cast<std::uintptr_t>(static_cast<std::int64_t>(c.other_site)) : 0;
  const std::uintptr_t read_pc = !c.read_against_atomic ? 0 : c.race == hazard::read_after_write ? pc : other_pc;
  found_race({c.race, memory_kind::global, &range, address, size, flags, pc, other_pc, current.linear_tid, c.other_thread, c.other_block,
              c.other_atomic, read_pc});
}

// --- everything else -----------------------------------------------------

void block_checker::elsewhere(std::uintptr_t address, std::size_t size, unsigned flags, std::uintptr_t pc) {
  const memory_snapshot& memory = session_->memory();
  if (const device_range* r = memory.find_live(address)) {
    last_range_ = r;
    return global(*r, address, size, flags, pc);
  }
  if (const device_range* r = memory.find_freed(address)) {
    const paused_checks paused;
    return out_of_bounds(address, size, flags, pc, "in freed memory", r->describe() + " + " + std::to_string(address - r->begin));
  }
  if (const device_range* r = memory.near_live(address)) {
    {
      const paused_checks paused;
      return out_of_bounds(address, size, flags, pc, "outside every device allocation", outside(address, size, r->begin, r->end, r->describe()));
    }
  }
  if (session_->is_static_data(address) || all_thread_locals_.contains(address)) return;
  {
    const paused_checks paused;
    out_of_bounds(address, size, flags, pc, "not device memory",
                  "no device allocation, __shared__ array or stack holds " + hex_text(address) +
                      " (host memory must be registered with lockstep::emu::register_host_memory)");
  }
}

void block_checker::misaligned(std::uintptr_t address, std::size_t size, unsigned flags, std::uintptr_t pc, const std::string& memory) {
  if (!wants(check_tool::memcheck)) return;
  note(check_tool::memcheck, hazard::none, pc, 0, true, [&](finding& f) {
    f.report.address = address;
    f.report.size = size;
    f.report.write = flags & is_write;
    f.report.memory = memory;
    f.report.what = "thread " + coordinates_text(current.thread_idx) + ": misaligned access: " + std::to_string(size) +
                    " bytes at an address that is not a multiple of " + std::to_string(size);
  });
  stop_running_thread(std::make_exception_ptr(block_stopped{}));
}

void block_checker::misaligned_pointer(std::uintptr_t address, std::size_t alignment, bool write, std::uintptr_t pc, const std::string& what) {
  if (!wants(check_tool::memcheck)) return;
  note(check_tool::memcheck, hazard::none, pc, 0, true, [&](finding& f) {
    f.report.address = address;
    f.report.size = alignment;
    f.report.write = write;
    f.report.memory = memory_at(address);
    f.report.what = "thread " + coordinates_text(current.thread_idx) + ": misaligned access: " + what;
  });
  stop_running_thread(std::make_exception_ptr(block_stopped{}));
}

std::string block_checker::memory_at(std::uintptr_t address) const {
  if (shared_.contains(address)) return shared_name(memory_kind::static_shared, address - shared_.begin);
  if (dynamic_.contains(address)) return shared_name(memory_kind::dynamic_shared, address - dynamic_.begin);
  if (const device_range* r = session_->memory().find_live(address)) return memory_name(memory_kind::global, r, address);
  if (stack_.contains(address)) return "the thread's stack";
  return hex_text(address);
}

void block_checker::out_of_bounds(std::uintptr_t address, std::size_t size, unsigned flags, std::uintptr_t pc, std::string what, std::string memory) {
  if (!wants(check_tool::memcheck)) return;  // without memcheck the access goes ahead, as in normal mode
  note(check_tool::memcheck, hazard::none, pc, 0, true, [&](finding& f) {
    f.report.address = address;
    f.report.size = size;
    f.report.write = flags & is_write;
    f.report.memory = std::move(memory);
    f.report.what = "thread " + coordinates_text(current.thread_idx) + " " + verb(flags) + " " + std::to_string(size) + " bytes " + what;
  });
  // The access must not happen: the thread stops here, and with it its block.
  stop_running_thread(std::make_exception_ptr(block_stopped{}));
}

void block_checker::index_out_of_bounds(std::uintptr_t pc, const source_line& at, const std::string& what) {
  if (!wants(check_tool::memcheck)) return;
  note(check_tool::memcheck, hazard::none, pc, 0, true, [&](finding& f) {
    f.located = true;
    f.report.at = at;
    f.report.what = "thread " + coordinates_text(current.thread_idx) + ": " + what;
  });
  stop_running_thread(std::make_exception_ptr(block_stopped{}));
}

void block_checker::sync_finding(const std::string& what, unsigned thread, std::uintptr_t pc, unsigned other_thread, std::uintptr_t other_pc,
                                 bool both_lines_must_differ) {
  if (!wants(check_tool::synccheck)) return;
  note(check_tool::synccheck, hazard::none, pc, other_pc, false, [&](finding& f) {
    f.only_if_lines_differ = both_lines_must_differ;
    f.report.thread = thread_index(thread);
    f.report.other_thread = thread_index(other_thread);
    f.report.what = what;
  });
}

}  // namespace lockstep::emu::check
