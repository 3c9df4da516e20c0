#include "block_runner.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "grid_barrier.h"
#include "lockstep/errors.h"
#include "message_text.h"
#include "runs_as_loops.h"
#include "warp_ops.h"

namespace lockstep::emu {

thread_local constinit thread_context current;

using warp_ops::lanes_in_warp;
using warp_ops::mask_text;

block_runner::block_runner(std::size_t stack_bytes, bool guarded_stacks) : stacks_(stack_bytes, guarded_stacks) {}
block_runner::~block_runner() = default;

inline void block_runner::start_thread(fiber* f, unsigned t) {
  f->thread = t;
  f->thread_idx = thread_coords_[t];
  resume_thread(f);
}

inline void block_runner::resume_thread(const fiber* f) {
  here_->linear_tid = f->thread;
  here_->thread_idx = f->thread_idx;
}

std::string block_runner::where() const {
  return "kernel '" + (plan_ ? *plan_->kernel_name : std::string("?")) + "', block " + coordinates_text(current.block_idx) + ", thread " +
         coordinates_text(current.thread_idx);
}

void block_runner::fail(const std::string& what) const { throw kernel_error(cudaErrorLaunchFailure, where() + ": " + what); }

void stop_running_thread(std::exception_ptr why) { current.block->abandon_running_thread(std::move(why)); }

void block_runner::run(const launch_plan& plan, std::uint64_t block_linear, bool loops_allowed) {
  plan_ = &plan;
  block_linear_ = block_linear;
  claimed_ = false;
  gather_calls_ = nullptr;
  replay_calls_ = nullptr;
  refuse_claims_ = !loops_allowed;
  here_ = &current;
  const dim3 g = plan.grid, b = plan.block;
  threads_ = b.x * b.y * b.z;
  current.block_idx = {unsigned(block_linear % g.x), unsigned((block_linear / g.x) % g.y), unsigned(block_linear / (std::uint64_t(g.x) * g.y))};
  current.block_dim = b;
  current.grid_dim = g;
  current.block = this;
  observing_ = nullptr;
  if (plan.check) {
    if (!observer_) observer_ = plan.make_observer();
    observing_ = observer_.get();
  }

  // All-ones bytes between guard regions (dynamic_shared.h), which are also
  // check mode's redzones: its observer stops an access there before it happens.
  current.dynamic_shared = dynamic_shared_.prepare(plan.dynamic_shared_bytes);

  next_start_ = 0;
  live_ = threads_;
  error_ = nullptr;
  ready_.clear();
  yielded_.clear();
  barrier_waiters_.clear();
  barrier_true_ = 0;
  grid_pending_ = false;
  state_.assign(threads_, state::not_started);
  warps_.resize((threads_ + 31) / 32);
  for (unsigned w = 0; w < warps_.size(); ++w) {
    warps_[w].resize(1);
    warps_[w].front().warp = w;
    warps_[w].front().arrived = warps_[w].front().wanted = 0;
  }
  exited_.assign(warps_.size(), 0);
  open_rounds_ = 0;
  if (thread_coords_.size() != threads_ || coords_for_.x != b.x || coords_for_.y != b.y) {
    // Divisions are dear at a thread's start: once per block shape.
    thread_coords_.resize(threads_);
    for (unsigned t = 0; t < threads_; ++t) thread_coords_[t] = {t % b.x, (t / b.x) % b.y, t / (b.x * b.y)};
    coords_for_ = b;
  }
  start_order_.resize(threads_);
  for (unsigned t = 0; t < threads_; ++t) start_order_[t] = t;
  if (plan.opts.order == thread_order::random) rng_.seed(plan.opts.seed * 0x9E3779B97F4A7C15ull ^ (block_linear + 1));
  order_threads(start_order_);
  if (observing_) {
    barrier_pc_.assign(threads_, 0);
    observing_->block_started(*plan.check, threads_, current.dynamic_shared, plan.dynamic_shared_bytes);
  }

  while (!error_) {
    if (fiber* f = next_fiber()) {
      enter(f, scheduler_);  // back here once no fiber is left to run (a finished one has given its stack back)
      continue;
    }
    if (live_ == 0) {
      break;
    } else if (!yielded_.empty()) {
      ready_.insert(ready_.end(), yielded_.begin(), yielded_.end());
      yielded_.clear();
      continue;
    } else if (!release_active_masks()) {
      runner_code_scope own_code(observing_);
      const std::string report = deadlock_report();
      error_ = std::make_exception_ptr(kernel_error(cudaErrorLaunchFailure, report));
      if (observing_) {
        unsigned t = 0;
        while (t + 1 < threads_ && state_[t] != state::at_barrier && state_[t] != state::at_warp) ++t;
        const std::uintptr_t pc = state_[t] == state::at_barrier ? barrier_pc_[t]
                                  : state_[t] == state::at_warp  ? round_of(t / 32, 1u << t % 32)->pc[t % 32]
                                                                 : 0;
        try {
          observing_->refused(report, t, pc);
        } catch (...) {
          error_ = std::current_exception();
        }
      }
      break;
    }
  }

  // Fibers still waiting after a failure are abandoned, not unwound: their
  // frames hold only the kernel's own locals.
  while (!fibers_.empty()) retire(fibers_.back());
  if (observing_) observing_->block_ended();
  observing_ = nullptr;
  current.block = nullptr;
  if (error_) std::rethrow_exception(error_);
}

void block_runner::abandon_block() {
  on_loop_stack_ = claim_waiting_ = false;  // a fault jumped off the loop stack
  while (!fibers_.empty()) retire(fibers_.back());
  if (observing_) observing_->block_ended();
  observing_ = nullptr;
  running_ = nullptr;
  current.block = nullptr;
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
  f->slot = fibers_.size();
  fibers_.push_back(f);
  // The tops of the stacks, where waiting threads' frames and saved
  // registers are, start at different cache lines: from page-aligned tops
  // they would all fall in the same L1 sets.
  const std::size_t colour = (f->slot % stack_colours) * 64;
  make_context(f->ctx, f->stack, stacks_.stack_bytes() - colour, &runner_main, this);
  return f;
}

inline block_runner::fiber* block_runner::next_fiber() {
  if (!ready_.empty()) {
    fiber* f = ready_.front();
    ready_.pop_front();
    return f;
  }
  if (next_start_ < threads_) return new_runner();
  return nullptr;
}

inline void block_runner::enter(fiber* f, context& from) {
  running_ = f;
  resume_thread(f);  // a new runner's thread is set when it starts one
  if (observing_) observing_->running_on(f->stack, stacks_.stack_bytes());
  switch_context(from, f->ctx);
}

void block_runner::retire(fiber* f) {
  if (!stacks_.release(f->stack) && !error_)
    error_ = std::make_exception_ptr(
        kernel_error(cudaErrorLaunchFailure,
                     "kernel '" + *plan_->kernel_name + "', block " + coordinates_text(current.block_idx) + ": a thread overflowed its " +
                         std::to_string(stacks_.stack_bytes() / 1024) +
                         " KiB emulator stack (this cooperative launch's stacks have no guard pages, as its grid has more threads "
                         "than the process may have guarded stacks); raise LOCKSTEP_EMU_STACK_KIB or make the kernel's local arrays smaller"));
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
  self->leave_finished_fiber();
}

void block_runner::leave_finished_fiber() {
  fiber* me = running_;
  // Its stack goes back to the pool before the switch leaves it; nothing
  // takes a stack in between (only new_runner does, and a ready fiber is not new).
  retire(me);
  if (!error_ && !ready_.empty()) {
    fiber* next = ready_.front();
    ready_.pop_front();
    enter(next, me->ctx);
  } else {
    switch_context(me->ctx, scheduler_);
  }
  std::abort();  // a finished fiber is never resumed
}

// Straight on to the next fiber that can run, without passing through the
// scheduler: one switch per waiting thread instead of two.
inline void block_runner::suspend() {
  fiber* me = running_;
  fiber* next = error_ ? nullptr : next_fiber();
  if (!next) {
    switch_context(me->ctx, scheduler_);
  } else if (next != me) {
    enter(next, me->ctx);
  } else {
    resume_thread(me);
  }
}

void block_runner::yield_thread() {
  if (claimed_) unseen_wait("a wait for other threads (__nanosleep, a yield)");
  yielded_.push_back(running_);
  suspend();
}

namespace {
// One claim runs at most this many threads along x (loop_claim): the 1-D
// grayscale on one core took 0.51 ms with 2048, 0.50 with 8192 and 0.48 with
// 32768, so little is left past that; a run also ends with its worker's chunk
// and its row of the grid.
constexpr unsigned max_threads_per_claim = 16384;
constexpr std::size_t max_per_thread_bytes_per_claim = std::size_t(8) << 20;  // of the loop stack's 64 MiB
}  // namespace

unsigned block_runner::claim_for_loops(const loop_claim& how) {
  if (claim_waiting_) {
    claim_waiting_ = false;
    claimed_ = true;
    if (blocks_in_claim_ > 1 && !how.blocks_along_x)
      fail("lockstep internal error: a kernel given several blocks as loops cannot take them; run with LOCKSTEP_EMU_ENGINE=fibers and report this");
    return blocks_in_claim_;
  }
  // The launch's settings, by the rule the builds split by; then this run's
  // own state: a replay on fibers refuses, and only thread 0's first start claims.
  const bool launch_allows = blocks_may_run_as_loops({.region_loops_option = plan_->opts.region_loops,
                                                      .checked = observing_ != nullptr,
                                                      .forward_order = plan_->opts.order == thread_order::forward,
                                                      .grid_sync = plan_->grid_sync != nullptr});
  if (!launch_allows || refuse_claims_ || next_start_ != 1 || running_->thread != 0) return 0;
  // The other threads never start: to the runner they have exited.
  for (unsigned t = 1; t < threads_; ++t) state_[t] = state::exited;
  for (auto& lanes : exited_) lanes = ~0u;
  exited_[0] &= ~1u;
  live_ = 1;
  next_start_ = threads_;
  claimed_ = true;
  blocks_in_claim_ = 1;
  unsigned per_claim = 1;
  if (how.blocks_along_x) {
    const std::size_t by_bytes = max_per_thread_bytes_per_claim / (std::size_t(threads_) * std::max(1u, how.bytes_per_thread));
    per_claim = unsigned(std::clamp<std::size_t>(std::min<std::size_t>(max_threads_per_claim / threads_, by_bytes), 1, plan_->grid.x));
  }
  plan_->blocks_per_claim.store(per_claim, std::memory_order_relaxed);
  return 1;
}

void block_runner::run_claimed(const launch_plan& plan, std::uint64_t block_linear, unsigned blocks_along_x) {
  plan_ = &plan;
  block_linear_ = block_linear;
  claimed_ = false;
  gather_calls_ = nullptr;
  replay_calls_ = nullptr;
  claim_waiting_ = true;
  blocks_in_claim_ = blocks_along_x;
  running_ = nullptr;
  const dim3 g = plan.grid;
  current.block_idx = {unsigned(block_linear % g.x), unsigned((block_linear / g.x) % g.y), unsigned(block_linear / (std::uint64_t(g.x) * g.y))};
  current.block_dim = plan.block;
  current.grid_dim = g;
  current.thread_idx = {0, 0, 0};
  current.linear_tid = 0;
  current.block = this;
  current.dynamic_shared = dynamic_shared_.prepare(plan.dynamic_shared_bytes);
  struct leave {
    block_runner& runner;
    ~leave() {
      current.block = nullptr;
      runner.claim_waiting_ = false;
    }
  };
  {
    leave on_exit{*this};
    plan.thunk(plan.params);
  }
  // The region-loop compiler puts the claim before anything else a kernel does.
  if (!claimed_) {
    fail("lockstep internal error: a block run as loops did not claim itself; run with LOCKSTEP_EMU_ENGINE=fibers and report this");
  }
}

namespace {
struct loop_stack_frame {
  void (*body)(void*);
  void* arg;
  context self, back;
  std::exception_ptr error;
};
[[noreturn]] void loop_stack_entry(void* p) {
  auto& frame = *static_cast<loop_stack_frame*>(p);
  try {
    frame.body(frame.arg);
  } catch (...) {
    frame.error = std::current_exception();  // rethrown on the fiber's stack, which can unwind
  }
  switch_context(frame.self, frame.back);
  std::abort();  // never resumed
}
}  // namespace

void block_runner::call_on_loop_stack(void (*body)(void*), void* arg) {
  if (on_loop_stack_) return body(arg);
  if (!loop_stack_) loop_stack_ = loop_stacks_.acquire();
  loop_stack_frame frame{body, arg, {}, {}, nullptr};
  make_context(frame.self, loop_stack_, loop_stack_bytes, loop_stack_entry, &frame);
  on_loop_stack_ = true;
  switch_context(frame.back, frame.self);
  on_loop_stack_ = false;
  if (frame.error) std::rethrow_exception(frame.error);
}

void block_runner::abandon_running_thread(std::exception_ptr why) {
  if (!error_) error_ = std::move(why);
  leave_finished_fiber();
}

void block_runner::sync_failure(const std::string& what, unsigned thread, std::uintptr_t pc) {
  if (observing_) observing_->refused(what, thread, pc);
  fail(what);
}

void block_runner::order_threads(std::vector<unsigned>& ids) {
  switch (plan_->opts.order) {
    case thread_order::forward:
      break;
    case thread_order::reverse:
      std::reverse(ids.begin(), ids.end());
      break;
    case thread_order::random:
      std::shuffle(ids.begin(), ids.end(), rng_);
      break;
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

inline void block_runner::thread_exited(unsigned t) {
  state_[t] = state::exited;
  --live_;
  exited_[t / 32] |= 1u << t % 32;
  if (open_rounds_ > 0) exited_during_warp_rounds(t);
  // Exited threads no longer count at a barrier, as on Volta and later GPUs.
  if (!barrier_waiters_.empty() && barrier_waiters_.size() == live_) release_barrier();
}

// Lanes waiting at a warp collective may wait for the one that exited. Out of
// line: the messages' strings would make every thread's exit pay for a large frame.
void block_runner::exited_during_warp_rounds(unsigned t) {
  const unsigned w = t / 32, lane = t % 32;
  for (warp_round& r : warps_[w]) {
    if (!(r.arrived && (r.wanted >> lane & 1u))) continue;
    if (r.op == warp_op::active) {
      r.wanted &= ~(1u << lane);
      if ((r.wanted & ~r.arrived) == 0) complete_warp(r, no_lane);
      continue;
    }
    runner_code_scope own_code(observing_);
    const unsigned waiting = w * 32 + static_cast<unsigned>(__builtin_ctz(r.arrived));
    sync_failure(std::string("thread ") + std::to_string(t) + " exited while lanes " + mask_text(r.arrived) + " of its warp wait for it at " +
                     warp_ops::name(r.op) + " (mask " + mask_text(r.wanted) + "); every lane named in a warp collective's mask must reach it",
                 waiting, r.pc[waiting % 32]);
  }
}

// A kernel split into region loops reaching a barrier or warp collective the
// splitter did not see (through code it could not follow): an error, never a
// barrier that one thread passes alone.
[[noreturn]] void block_runner::unseen_wait(const char* what) const {
  throw kernel_error(cudaErrorLaunchFailure, "kernel '" + *plan_->kernel_name + "' ran as region loops but reached " + what +
                                                 " that the region-loop compiler did not see (in code it could not follow). Run it with "
                                                 "LOCKSTEP_EMU_ENGINE=fibers, and please report the kernel");
}

int block_runner::barrier(barrier_reduce reduce, int predicate, std::uintptr_t pc) {
  if (claimed_) unseen_wait("a barrier");
  if (plan_->say_at_wait.load(std::memory_order_relaxed)) [[unlikely]]
    if (plan_->say_at_wait.exchange(false)) say_fibers_at_wait(plan_->kernel, *plan_->verdict);
  const unsigned t = running_->thread;
  state_[t] = state::at_barrier;
  if (observing_) barrier_pc_[t] = pc;
  barrier_waiters_.push_back(running_);
  barrier_true_ += predicate != 0;
  if (barrier_waiters_.size() == live_) release_barrier();
  suspend();
  state_[t] = state::running;
  switch (reduce) {
    case barrier_reduce::none:
      return 0;
    case barrier_reduce::count:
      return released_true_;
    case barrier_reduce::all:
      return released_true_ == released_arrived_;
    case barrier_reduce::any:
      return released_true_ > 0;
  }
  return 0;
}

void block_runner::grid_sync(std::uintptr_t pc) {
  if (!plan_->grid_sync) {
    runner_code_scope own_code(observing_);
    fail(
        "grid.sync() (cooperative_groups::this_grid().sync()) needs a cooperative launch, in which every block of the grid is resident "
        "at once; this kernel was launched with <<<>>> or cudaLaunchKernel, where a GPU's behaviour is undefined (it may hang). Launch it "
        "with cudaLaunchCooperativeKernel (or lockstep::launch with launch_config::cooperative = true)");
  }
  grid_pending_ = true;
  barrier(barrier_reduce::none, 0, pc);
}

void block_runner::release_barrier() {
  if (grid_pending_) {
    // Every thread of the block is suspended here: this OS thread (the
    // block's own in a cooperative launch) now waits for the other blocks.
    grid_pending_ = false;
    plan_->grid_sync->arrive_and_wait(*plan_->kernel_name, current.block_idx);
  }
  if (observing_) {
    std::vector<unsigned> waiting;
    for (const fiber* f : barrier_waiters_) waiting.push_back(f->thread);
    std::sort(waiting.begin(), waiting.end());
    unsigned first_exited = live_ < threads_ ? 0 : threads_;
    while (first_exited < threads_ && state_[first_exited] != state::exited) ++first_exited;
    observing_->barrier_released(waiting, barrier_pc_, first_exited);
  }
  released_true_ = barrier_true_;
  released_arrived_ = static_cast<int>(barrier_waiters_.size());
  barrier_true_ = 0;
  make_ready(barrier_waiters_);
}

bool block_runner::release_active_masks() {
  bool released = false;
  for (auto& rounds : warps_)
    for (auto& r : rounds)
      if (r.arrived && r.op == warp_op::active) {
        complete_warp(r, no_lane);
        released = true;
      }
  return released;
}

std::uint64_t block_runner::warp(warp_op op, unsigned mask, std::uint64_t value, int lane_arg, int width, std::uintptr_t pc) {
  if (claimed_) {
    if (replay_calls_) {  // the statement again, each lane's call answered as gathered
      const loop_lane_call& call = replay_calls_[current.linear_tid];
      if (call.op != op || call.mask != mask) unseen_wait("a warp-level operation");
      return call.answer;
    }
    if (!gather_calls_) unseen_wait("a warp-level operation");
    const unsigned t = current.linear_tid;
    gather_calls_[t] = {value, 0, mask, lane_arg, width, op};
    gather_arrived_[t] = 1;
    return 0;
  }
  const unsigned t = running_->thread, w = t / 32, lane = t % 32;
  const std::uint32_t present = lanes_in_warp(threads_, w);
  if (op == warp_op::active) mask = present & ~exited_[w];
  if (const auto misuse = warp_ops::misuse_of_call(op, lane, mask, width, present, exited_[w]); misuse != warp_ops::misuse::none) {
    runner_code_scope own_code(observing_);
    const std::string what = warp_ops::describe(misuse, op, lane, mask, width, present, exited_[w]);
    if (warp_ops::is_synchronisation(misuse)) sync_failure(what, t, pc);
    fail(what);
  }
  const std::uint32_t mask_as_passed = mask;
  mask &= present;
  warp_round& r = *round_to_join(w, op, width, mask);
  if (r.arrived == 0) {
    ++open_rounds_;
    r.op = op;
    r.width = width;
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

void block_runner::gather_into(loop_lane_call* calls, unsigned char* arrived) {
  gather_calls_ = calls;
  gather_arrived_ = arrived;
}
void block_runner::replay_from(const loop_lane_call* calls) { replay_calls_ = calls; }

// The lanes of each warp meet as they would on fibers, where they arrive in
// lane order: a lane joins the first open round whose lanes its mask
// overlaps, and a round is answered once every lane it names has arrived.
void block_runner::answer_loop_warps(const loop_block& block, loop_lane_call* calls, const unsigned char* arrived) {
  gather_calls_ = nullptr;
  gather_arrived_ = nullptr;
  const unsigned threads = block.threads();
  std::vector<unsigned>& lanes = loop_lanes_;
  lanes.resize((threads + warp_ops::lanes_per_warp - 1) / warp_ops::lanes_per_warp);
  loop_warp_lanes(block, arrived, lanes.data());
  for (unsigned w = 0; w < lanes.size(); ++w) {
    loop_lane_call* lane = calls + w * warp_ops::lanes_per_warp;
    const std::uint32_t present = lanes_in_warp(threads, w), came = lanes[w];
    if (!came) continue;
    const warp_op op = lane[__builtin_ctz(came)].op;
    if (op == warp_op::active) {  // the lanes that called together
      warp_ops::each_lane(came, [&](unsigned l) { lane[l].answer = came; });
      continue;
    }
    std::uint64_t value[32] = {}, answer[32] = {};
    int lane_arg[32] = {};
    warp_ops::each_lane(came, [&](unsigned l) { value[l] = lane[l].value, lane_arg[l] = lane[l].lane_arg; });
    struct round {
      std::uint32_t wanted, arrived;
      int width;
    };
    round open[32];
    unsigned rounds = 0;
    warp_ops::each_lane(came, [&](unsigned l) {
      const loop_lane_call& call = lane[l];
      if (warp_ops::misuse_of_call(op, l, call.mask, call.width, present, 0) != warp_ops::misuse::none) throw fibers_needed{};
      const std::uint32_t mask = call.mask & present;
      unsigned r = 0;
      while (r < rounds && !(open[r].width == call.width && ((open[r].wanted | open[r].arrived) & mask))) ++r;
      if (r == rounds) open[rounds++] = {0, 0, call.width};
      open[r].arrived |= 1u << l;
      open[r].wanted |= mask;
      if (open[r].wanted & ~open[r].arrived) return;
      warp_ops::results(op, open[r].arrived, open[r].width, value, lane_arg, answer);
      open[r] = open[--rounds];
    });
    if (rounds) throw fibers_needed{};  // a lane named that never came
    warp_ops::each_lane(came, [&](unsigned l) { lane[l].answer = answer[l]; });
  }
}

block_runner::warp_round* block_runner::round_of(unsigned w, std::uint32_t lanes) {
  for (warp_round& r : warps_[w])
    if (lanes ? (r.arrived & lanes) : !r.arrived) return &r;
  return nullptr;
}

block_runner::warp_round* block_runner::round_to_join(unsigned w, warp_op op, int width, std::uint32_t mask) {
  // A lane meets others at the same collective whose masks overlap its own
  // (__activemask() names every lane, so it meets only others calling it).
  // Lanes at another collective form a round of their own: after a binary
  // partition, one half may reach the tile's sync while the other half still
  // shuffles (the CUDA samples' binaryPartitionCG). Lanes that never meet
  // end in the deadlock report.
  for (warp_round& r : warps_[w])
    if (r.arrived && r.op == op && r.width == width && (op == warp_op::active || ((r.wanted | r.arrived) & mask))) return &r;
  if (warp_round* free = round_of(w, 0)) return free;
  warp_round& added = warps_[w].emplace_back();
  added.warp = w;
  return &added;
}

void block_runner::complete_warp(warp_round& r, unsigned caller_lane) {
  const std::uint32_t lanes = r.arrived;
  if (observing_) observing_->warp_completed(r.warp, r.op, lanes, r.mask, r.pc);
  warp_ops::results(r.op, lanes, r.width, r.value, r.lane_arg, r.result);
  std::vector<fiber*> woken;
  for (std::uint32_t m = lanes; m; m &= m - 1) {
    const auto l = static_cast<unsigned>(__builtin_ctz(m));
    if (l != caller_lane) woken.push_back(r.waiter[l]);
  }
  r.arrived = r.wanted = 0;
  --open_rounds_;
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
  for (unsigned w = 0; w < warps_.size(); ++w)
    for (const warp_round& r : warps_[w]) {
      if (!r.arrived) continue;
      s << "Warp " << w << ": lanes " << mask_text(r.arrived) << " wait at " << warp_ops::name(r.op) << " for lanes "
        << mask_text(r.wanted & ~r.arrived) << ", which are at __syncthreads() instead. ";
    }
  s << "A barrier inside a branch that not all threads take, or a warp mask naming lanes that do not come, causes this.";
  return s.str();
}

}  // namespace lockstep::emu
