#include "block_runner.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "check/block_checker.h"
#include "lockstep/errors.h"

namespace lockstep::emu {

thread_local constinit thread_context current;

namespace {
const char* op_name(warp_op op) {
  switch (op) {
    case warp_op::sync: return "__syncwarp";
    case warp_op::shfl_idx: return "__shfl_sync";
    case warp_op::shfl_up: return "__shfl_up_sync";
    case warp_op::shfl_down: return "__shfl_down_sync";
    case warp_op::shfl_xor: return "__shfl_xor_sync";
    case warp_op::ballot: return "__ballot_sync";
    case warp_op::any: return "__any_sync";
    case warp_op::all: return "__all_sync";
    case warp_op::reduce_add: return "__reduce_add_sync";
    case warp_op::reduce_min: return "__reduce_min_sync";
    case warp_op::reduce_max: return "__reduce_max_sync";
    case warp_op::reduce_and: return "__reduce_and_sync";
    case warp_op::reduce_or: return "__reduce_or_sync";
    case warp_op::reduce_xor: return "__reduce_xor_sync";
    case warp_op::match_any: return "__match_any_sync";
    case warp_op::active: return "__activemask";
    case warp_op::wmma_load: return "wmma::load_matrix_sync";
    case warp_op::wmma_store: return "wmma::store_matrix_sync";
    case warp_op::wmma_mma: return "wmma::mma_sync";
  }
  return "?";
}

std::string hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

bool is_shuffle(warp_op op) { return op >= warp_op::shfl_idx && op <= warp_op::shfl_xor; }
// The wmma functions are warp-wide barriers too: the whole warp arrives, and
// racecheck orders the lanes' accesses around them as around __syncwarp.
bool is_wmma(warp_op op) { return op >= warp_op::wmma_load && op <= warp_op::wmma_mma; }
}  // namespace

block_runner::block_runner(std::size_t stack_bytes) : stacks_(stack_bytes) {}
block_runner::~block_runner() = default;

void block_runner::start_thread(fiber* f, unsigned t) {
  const dim3& b = plan_->block;
  f->thread = t;
  f->thread_idx = {t % b.x, (t / b.x) % b.y, t / (b.x * b.y)};
  resume_thread(f);
}

void block_runner::resume_thread(const fiber* f) {
  current.linear_tid = f->thread;
  current.thread_idx = f->thread_idx;
}

std::string block_runner::where() const {
  std::ostringstream s;
  const uint3& b = current.block_idx;
  const uint3& t = current.thread_idx;
  s << "kernel '" << (plan_ ? *plan_->kernel_name : std::string("?")) << "', block (" << b.x << ", " << b.y << ", " << b.z
    << "), thread (" << t.x << ", " << t.y << ", " << t.z << ")";
  return s.str();
}

void block_runner::fail(const std::string& what) const { throw kernel_error(cudaErrorLaunchFailure, where() + ": " + what); }

void block_runner::run(const launch_plan& plan, std::uint64_t block_linear) {
  plan_ = &plan;
  const dim3 g = plan.grid, b = plan.block;
  threads_ = b.x * b.y * b.z;
  current.block_idx = {unsigned(block_linear % g.x), unsigned((block_linear / g.x) % g.y),
                       unsigned(block_linear / (std::uint64_t(g.x) * g.y))};
  current.block_dim = b;
  current.grid_dim = g;
  current.block = this;

  // Dynamic shared memory starts as all-ones bytes (NaN as floats, -1 as
  // ints), so a read of something no thread wrote stands out. In check mode
  // a redzone on each side catches accesses past either end.
  const std::size_t redzone = plan.check ? check::redzone_bytes : 0;
  if (plan.dynamic_shared_bytes > 0) {
    const std::size_t needed = plan.dynamic_shared_bytes + 256 + 2 * redzone;
    if (dynamic_shared_.size() < needed) dynamic_shared_.resize(needed);
    auto base = ((reinterpret_cast<std::uintptr_t>(dynamic_shared_.data()) + 255) & ~std::uintptr_t{255}) + redzone;
    current.dynamic_shared = reinterpret_cast<unsigned char*>(base);
    std::memset(current.dynamic_shared, 0xff, plan.dynamic_shared_bytes);
  } else {
    current.dynamic_shared = nullptr;
  }

  next_start_ = 0;
  live_ = threads_;
  error_ = nullptr;
  ready_.clear();
  barrier_waiters_.clear();
  barrier_true_ = 0;
  state_.assign(threads_, state::not_started);
  warps_.resize((threads_ + 31) / 32);
  for (auto& w : warps_) w.arrived = w.wanted = 0;
  exited_.assign(warps_.size(), 0);
  start_order_.resize(threads_);
  for (unsigned t = 0; t < threads_; ++t) start_order_[t] = t;
  if (plan.opts.order == thread_order::random) rng_.seed(plan.opts.seed * 0x9E3779B97F4A7C15ull ^ (block_linear + 1));
  order_threads(start_order_);
  checking_ = nullptr;
  if (plan.check) {
    if (!checker_) checker_ = std::make_unique<check::block_checker>();
    checking_ = checker_.get();
    barrier_pc_.assign(threads_, 0);
    checking_->begin_block(*plan.check, threads_, current.dynamic_shared, plan.dynamic_shared_bytes);
  }

  while (!error_) {
    fiber* f;
    if (!ready_.empty()) {
      f = ready_.front();
      ready_.pop_front();
      resume_thread(f);
    } else if (next_start_ < threads_) {
      f = new_runner();
    } else if (live_ == 0) {
      break;
    } else if (!release_active_masks()) {
      error_ = std::make_exception_ptr(kernel_error(cudaErrorLaunchFailure, deadlock_report()));
      if (checking_ && checking_->wants(check_tool::synccheck)) {
        unsigned t = 0;
        while (t + 1 < threads_ && state_[t] != state::at_barrier && state_[t] != state::at_warp) ++t;
        const std::uintptr_t pc = state_[t] == state::at_barrier ? barrier_pc_[t] : state_[t] == state::at_warp ? warps_[t / 32].pc[t % 32] : 0;
        checking_->sync_finding(deadlock_report(), t, pc, t, 0);
        error_ = std::make_exception_ptr(check::block_stopped{});
      }
      break;
    } else {
      continue;
    }
    running_ = f;
    if (checking_) checking_->running_on(f->stack, stacks_.stack_bytes());
    switch_context(scheduler_, f->ctx);
    if (f->finished) retire(f);
  }

  // Fibers still waiting after a failure are abandoned, not unwound: their
  // frames hold only the kernel's own locals.
  while (!fibers_.empty()) retire(fibers_.back());
  if (checking_) checking_->end_block();
  checking_ = nullptr;
  current.block = nullptr;
  if (error_) std::rethrow_exception(error_);
}

block_runner::fiber* block_runner::new_runner() {
  fiber* f;
  if (!spare_fibers_.empty()) {
    f = spare_fibers_.back();
    spare_fibers_.pop_back();
  } else {
    owned_fibers_.push_back(std::make_unique<fiber>());
    f = owned_fibers_.back().get();
  }
  f->stack = stacks_.acquire();
  f->finished = false;
  f->slot = fibers_.size();
  fibers_.push_back(f);
  make_context(f->ctx, f->stack, stacks_.stack_bytes(), &runner_main, this);
  return f;
}

void block_runner::retire(fiber* f) {
  stacks_.release(f->stack);
  fibers_[f->slot] = fibers_.back();
  fibers_[f->slot]->slot = f->slot;
  fibers_.pop_back();
  spare_fibers_.push_back(f);
}

void block_runner::runner_main(void* self_ptr) {
  auto* self = static_cast<block_runner*>(self_ptr);
  fiber* me = self->running_;
  try {
    while (self->next_start_ < self->threads_) {
      const unsigned t = self->start_order_[self->next_start_++];
      self->state_[t] = state::running;
      self->start_thread(me, t);
      self->plan_->thunk(self->plan_->params);
      self->thread_exited(t);
    }
  } catch (...) {
    if (!self->error_) self->error_ = std::current_exception();
  }
  me->finished = true;
  switch_context(me->ctx, self->scheduler_);
  std::abort();  // a finished fiber is never resumed
}

void block_runner::suspend() { switch_context(running_->ctx, scheduler_); }

void block_runner::abandon_running_thread() {
  if (!error_) error_ = std::make_exception_ptr(check::block_stopped{});
  running_->finished = true;
  switch_context(running_->ctx, scheduler_);
  std::abort();  // an abandoned fiber is never resumed
}

void block_runner::sync_failure(const std::string& what, unsigned thread, std::uintptr_t pc) {
  if (checking_ && checking_->wants(check_tool::synccheck)) {
    checking_->sync_finding(what, thread, pc, thread, 0);
    throw check::block_stopped{};
  }
  fail(what);
}

void block_runner::order_threads(std::vector<unsigned>& ids) {
  switch (plan_->opts.order) {
    case thread_order::forward: break;
    case thread_order::reverse: std::reverse(ids.begin(), ids.end()); break;
    case thread_order::random: std::shuffle(ids.begin(), ids.end(), rng_); break;
  }
}

void block_runner::make_ready(std::vector<fiber*>& waiters) {
  auto by_thread = [](fiber* a, fiber* b) { return a->thread < b->thread; };
  if (!std::is_sorted(waiters.begin(), waiters.end(), by_thread)) std::sort(waiters.begin(), waiters.end(), by_thread);
  if (plan_->opts.order == thread_order::reverse) std::reverse(waiters.begin(), waiters.end());
  if (plan_->opts.order == thread_order::random) std::shuffle(waiters.begin(), waiters.end(), rng_);
  ready_.insert(ready_.end(), waiters.begin(), waiters.end());
  waiters.clear();
}

void block_runner::thread_exited(unsigned t) {
  state_[t] = state::exited;
  --live_;
  const unsigned w = t / 32, lane = t % 32;
  exited_[w] |= 1u << lane;
  warp_round& r = warps_[w];
  if (r.arrived && r.op == warp_op::active) {
    r.wanted &= ~(1u << lane);
    if ((r.wanted & ~r.arrived) == 0) complete_warp(r, no_lane);
  } else if (r.arrived && (r.wanted >> lane & 1u) && !(r.arrived >> lane & 1u)) {
    const unsigned waiting = w * 32 + static_cast<unsigned>(__builtin_ctz(r.arrived));
    sync_failure(std::string("thread ") + std::to_string(t) + " exited while lanes " + hex(r.arrived) + " of its warp wait for it at " +
                     op_name(r.op) + " (mask " + hex(r.wanted) + "); every lane named in a warp collective's mask must reach it",
                 waiting, r.pc[waiting % 32]);
  }
  // Exited threads no longer count at a barrier, as on Volta and later GPUs.
  if (!barrier_waiters_.empty() && barrier_waiters_.size() == live_) release_barrier();
}

int block_runner::barrier(barrier_reduce reduce, int predicate, std::uintptr_t pc) {
  const unsigned t = current.linear_tid;
  state_[t] = state::at_barrier;
  if (checking_) barrier_pc_[t] = pc;
  barrier_waiters_.push_back(running_);
  barrier_true_ += predicate != 0;
  if (barrier_waiters_.size() == live_) release_barrier();
  suspend();
  state_[t] = state::running;
  switch (reduce) {
    case barrier_reduce::none: return 0;
    case barrier_reduce::count: return released_true_;
    case barrier_reduce::all: return released_true_ == released_arrived_;
    case barrier_reduce::any: return released_true_ > 0;
  }
  return 0;
}

void block_runner::release_barrier() {
  if (checking_) check_barrier_round();
  released_true_ = barrier_true_;
  released_arrived_ = static_cast<int>(barrier_waiters_.size());
  barrier_true_ = 0;
  make_ready(barrier_waiters_);
}

// synccheck: one barrier round, reached by every thread of the block at the
// same __syncthreads(). Exited threads do not hold a barrier up (as on Volta
// and later), but a kernel that relies on that is waiting for threads that
// never come, which is undefined on older GPUs and usually a bug.
void block_runner::check_barrier_round() {
  checking_->barrier_released();
  if (!checking_->wants(check_tool::synccheck) || barrier_waiters_.empty()) return;
  std::vector<unsigned> waiting;
  for (const fiber* f : barrier_waiters_) waiting.push_back(f->thread);
  std::sort(waiting.begin(), waiting.end());
  // Divergence: name the barrier fewer threads reached, as the misplaced one.
  std::uintptr_t first_pc = barrier_pc_[waiting.front()];
  unsigned other = waiting.front(), same = 0;
  for (unsigned t : waiting) {
    if (barrier_pc_[t] == first_pc) ++same;
    else if (other == waiting.front()) other = t;
  }
  if (other != waiting.front()) {
    unsigned minority = waiting.front(), majority = other;
    if (same > waiting.size() - same) std::swap(minority, majority);
    // Two copies of one source barrier (the compiler may duplicate code) are no finding: same_line_is_none.
    checking_->sync_finding("divergent __syncthreads(): threads of one block wait at different barriers in the same round "
                            "(thread " + std::to_string(minority) + " here, thread " + std::to_string(majority) +
                                " at the other); every thread must reach the same __syncthreads()",
                            minority, barrier_pc_[minority], majority, barrier_pc_[majority], check::same_line_is_none);
  }
  if (live_ < threads_) {
    unsigned gone = 0;
    while (gone < threads_ && state_[gone] != state::exited) ++gone;
    checking_->sync_finding("__syncthreads() released with only " + std::to_string(waiting.size()) + " of " + std::to_string(threads_) +
                                " threads: thread " + std::to_string(gone) +
                                " (and any other missing) exited without reaching it; a barrier must be reached by every thread of the block",
                            waiting.front(), barrier_pc_[waiting.front()], gone, 0);
  }
}

// synccheck: the lanes of one warp collective passed the same mask.
void block_runner::check_warp_masks(const warp_round& r, unsigned w) {
  if (!checking_->wants(check_tool::synccheck) || r.op == warp_op::active) return;
  const unsigned first = static_cast<unsigned>(__builtin_ctz(r.arrived));
  for (std::uint32_t m = r.arrived; m; m &= m - 1) {
    const unsigned lane = static_cast<unsigned>(__builtin_ctz(m));
    if (r.mask[lane] == r.mask[first]) continue;
    const unsigned base = w * 32;
    checking_->sync_finding(std::string(op_name(r.op)) + " called by lanes of one warp with different masks: lane " + std::to_string(first) +
                                " passes " + hex(r.mask[first]) + ", lane " + std::to_string(lane) + " passes " + hex(r.mask[lane]),
                            base + lane, r.pc[lane], base + first, r.pc[first]);
    return;
  }
}

std::uint32_t block_runner::lanes_in_warp(unsigned w) const {
  const unsigned n = std::min(32u, threads_ - w * 32);
  return n == 32 ? ~0u : (1u << n) - 1;
}

bool block_runner::release_active_masks() {
  bool released = false;
  for (auto& r : warps_)
    if (r.arrived && r.op == warp_op::active) {
      complete_warp(r, no_lane);
      released = true;
    }
  return released;
}

std::uint64_t block_runner::warp(warp_op op, unsigned mask, std::uint64_t value, int lane_arg, int width, std::uintptr_t pc) {
  const unsigned t = current.linear_tid, w = t / 32, lane = t % 32;
  if (op == warp_op::active) mask = lanes_in_warp(w) & ~exited_[w];
  if (!(mask >> lane & 1u))
    sync_failure(std::string(op_name(op)) + " with mask " + hex(mask) + " does not name the calling lane " + std::to_string(lane) +
                     "; a lane must include itself in the mask",
                 t, pc);
  if (is_shuffle(op) && (width < 1 || width > 32 || (width & (width - 1))))
    fail(std::string(op_name(op)) + " with width " + std::to_string(width) + "; width must be a power of two from 1 to 32");
  if (is_wmma(op) && lanes_in_warp(w) != ~0u)
    sync_failure(std::string(op_name(op)) + " in a warp of " + std::to_string(std::min(32u, threads_ - w * 32)) +
                     " threads; the wmma functions need all 32 lanes of a full warp",
                 t, pc);
  const std::uint32_t mask_as_passed = mask;
  // Lanes past the end of a partial last warp do not exist; the GPU ignores them too.
  mask &= lanes_in_warp(w);
  if (const std::uint32_t gone = mask & exited_[w])
    sync_failure(std::string(op_name(op)) + " with mask " + hex(mask) + " names lanes " + hex(gone) +
                     " that have already exited; every lane named in the mask must reach the call",
                 t, pc);
  warp_round& r = warps_[w];
  if (r.arrived == 0) {
    r.op = op;
    r.width = width;
  } else if (r.op != op || r.width != width) {
    sync_failure(std::string("lanes of one warp meet at different warp collectives: lanes ") + hex(r.arrived) + " wait at " +
                     op_name(r.op) + " (width " + std::to_string(r.width) + "), this lane calls " + op_name(op) + " (width " +
                     std::to_string(width) + ")",
                 t, pc);
  }
  r.value[lane] = value;
  r.lane_arg[lane] = lane_arg;
  r.mask[lane] = mask_as_passed;
  r.pc[lane] = pc;
  r.arrived |= 1u << lane;
  r.wanted |= mask;
  if ((r.wanted & ~r.arrived) == 0) {
    complete_warp(r, lane);
    return r.result[lane];
  }
  r.waiter[lane] = running_;
  state_[t] = state::at_warp;
  suspend();
  state_[t] = state::running;
  return r.result[lane];
}

void block_runner::complete_warp(warp_round& r, unsigned caller_lane) {
  const std::uint32_t lanes = r.arrived;
  if (checking_) {
    const auto w = static_cast<unsigned>(&r - warps_.data());
    check_warp_masks(r, w);
    if (r.op == warp_op::sync || is_wmma(r.op)) checking_->warp_synced(w);
  }
  auto each_lane = [lanes](auto&& fn) {
    for (std::uint32_t m = lanes; m; m &= m - 1) fn(static_cast<unsigned>(__builtin_ctz(m)));
  };
  auto all_lanes_get = [&](std::uint64_t v) { each_lane([&](unsigned l) { r.result[l] = v; }); };
  const bool is_signed = caller_lane != no_lane && r.lane_arg[caller_lane] != 0;
  switch (r.op) {
    case warp_op::sync:
    case warp_op::wmma_load:
    case warp_op::wmma_store:
    case warp_op::wmma_mma: break;
    case warp_op::active: all_lanes_get(lanes); break;
    case warp_op::shfl_idx:
    case warp_op::shfl_up:
    case warp_op::shfl_down:
    case warp_op::shfl_xor: {
      // PTX shfl.sync's source-lane rule: only the low 5 bits of the lane
      // argument count; lanes are split into segments of `width`; a source
      // outside the caller's segment returns the caller's own value.
      const int segmask = (32 - r.width) & 31;
      each_lane([&](unsigned l) {
        const int lane = static_cast<int>(l), b = r.lane_arg[l] & 31;
        const int min_lane = lane & segmask, max_lane = min_lane | (31 & ~segmask);
        int j = lane;
        bool in_range = false;
        switch (r.op) {
          case warp_op::shfl_idx: j = min_lane | (b & ~segmask); in_range = j <= max_lane; break;
          case warp_op::shfl_up: j = lane - b; in_range = j >= min_lane; break;
          case warp_op::shfl_down: j = lane + b; in_range = j <= max_lane; break;
          default: j = lane ^ b; in_range = j <= max_lane; break;
        }
        if (!in_range || !(lanes >> j & 1u)) j = lane;
        r.result[l] = r.value[j];
      });
      break;
    }
    case warp_op::ballot:
    case warp_op::any:
    case warp_op::all: {
      std::uint32_t ballot = 0;
      each_lane([&](unsigned l) { ballot |= (r.value[l] != 0 ? 1u : 0u) << l; });
      all_lanes_get(r.op == warp_op::ballot ? ballot : r.op == warp_op::any ? ballot != 0 : ballot == lanes);
      break;
    }
    case warp_op::reduce_add:
    case warp_op::reduce_and:
    case warp_op::reduce_or:
    case warp_op::reduce_xor: {
      std::uint32_t acc = r.op == warp_op::reduce_and ? ~0u : 0u;
      each_lane([&](unsigned l) {
        const auto v = static_cast<std::uint32_t>(r.value[l]);
        acc = r.op == warp_op::reduce_add ? acc + v : r.op == warp_op::reduce_and ? acc & v : r.op == warp_op::reduce_or ? acc | v : acc ^ v;
      });
      all_lanes_get(acc);
      break;
    }
    case warp_op::reduce_min:
    case warp_op::reduce_max: {
      const bool want_min = r.op == warp_op::reduce_min;
      std::int64_t best = 0;
      bool first = true;
      each_lane([&](unsigned l) {
        const auto u = static_cast<std::uint32_t>(r.value[l]);
        const std::int64_t v = is_signed ? std::int64_t(static_cast<std::int32_t>(u)) : std::int64_t(u);
        if (first || (want_min ? v < best : v > best)) best = v;
        first = false;
      });
      all_lanes_get(static_cast<std::uint32_t>(best));
      break;
    }
    case warp_op::match_any:
      each_lane([&](unsigned l) {
        std::uint32_t same = 0;
        each_lane([&](unsigned k) { same |= (r.value[k] == r.value[l] ? 1u : 0u) << k; });
        r.result[l] = same;
      });
      break;
  }
  std::vector<fiber*> woken;
  each_lane([&](unsigned l) {
    if (l != caller_lane) woken.push_back(r.waiter[l]);
  });
  r.arrived = r.wanted = 0;
  make_ready(woken);
}

std::string block_runner::deadlock_report() const {
  std::ostringstream s;
  const uint3& b = current.block_idx;
  s << "kernel '" << *plan_->kernel_name << "', block (" << b.x << ", " << b.y << ", " << b.z << "): deadlock. ";
  unsigned at_barrier = 0, first_at_barrier = 0;
  for (unsigned t = 0; t < threads_; ++t)
    if (state_[t] == state::at_barrier && at_barrier++ == 0) first_at_barrier = t;
  if (at_barrier)
    s << at_barrier << " of " << threads_ << " threads (first: thread " << first_at_barrier
      << ") wait at __syncthreads(), which releases only when every thread that has not exited reaches it. ";
  for (unsigned w = 0; w < warps_.size(); ++w) {
    const warp_round& r = warps_[w];
    if (!r.arrived) continue;
    s << "Warp " << w << ": lanes " << hex(r.arrived) << " wait at " << op_name(r.op) << " for lanes "
      << hex(r.wanted & ~r.arrived) << ", which are at __syncthreads() instead. ";
  }
  s << "A barrier inside a branch that not all threads take, or a warp mask naming lanes that do not come, causes this.";
  return s.str();
}

}  // namespace lockstep::emu
