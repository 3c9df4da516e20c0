// Runs a launch: blocks spread over a pool of OS threads, each with its own
// block_runner, taking block indices from a shared counter. A cooperative
// launch gets a pool of its own with an OS thread per block, so that every
// block is resident at once and grid.sync() can wait for all of them.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "block_runner.h"
#include "check/block_checker.h"
#include "check/launch_session.h"
#include "fault.h"
#include "fault_report.h"
#include "grid_barrier.h"
#include "kernel_info.h"
#include "lockstep/emu/device_io.h"
#include "lockstep/emu/region_loops.h"
#include "lockstep/errors.h"
#include "lockstep/launch.h"

namespace lockstep::emu {

void set_last_error(cudaError_t error);  // runtime_api.cpp

namespace {

class worker_pool {
 public:
  worker_pool() = default;
  // A cooperative launch's pool: one worker per block (plan.grid_sync set), with
  // unguarded fiber stacks unless `guarded_stacks` (stack_pool.h).
  worker_pool(bool cooperative, bool guarded_stacks) : cooperative_(cooperative), guarded_stacks_(guarded_stacks) {}
  ~worker_pool() { resize(0, 0); }

  // True once the launch has failed or was interrupted: a block waiting at grid.sync() stops.
  bool stopping() const { return failed_.load() || (watch_ && watch_->reason() != fault::interrupt::none); }

  void run(const launch_plan& plan, std::uint64_t blocks, const void* kernel) {
    const unsigned wanted = cooperative_        ? static_cast<unsigned>(blocks)
                            : plan.opts.workers ? plan.opts.workers
                                                : std::max(1u, std::thread::hardware_concurrency());
    const unsigned workers = static_cast<unsigned>(std::min<std::uint64_t>(wanted, blocks));
    if (workers > runners_.size() || plan.opts.stack_bytes != stack_bytes_) resize(workers, plan.opts.stack_bytes);
    workers_[0].thread = pthread_self();
    kernel_ = kernel;
    for (unsigned i = 0; i < workers; ++i) workers_[i].interrupted = false;
    fault::launch_watch watch(kernel, workers_.get(), workers, plan.opts.timeout_seconds);
    watch_ = &watch;
    {
      std::lock_guard lock(mutex_);
      plan_ = &plan;
      blocks_ = blocks;
      next_block_ = 0;
      chunk_ = std::clamp<std::uint64_t>(blocks / (std::uint64_t(workers) * 64), 1, 64);
      failed_ = false;
      error_ = nullptr;
      launch_workers_ = workers;
      helpers_busy_ = workers - 1;
      ++generation_;
    }
    start_.notify_all();
    work(0);  // the launching thread is worker 0
    spin_until([this] { return helpers_busy_.load(std::memory_order_acquire) == 0; });
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return helpers_busy_ == 0; });
    plan_ = nullptr;
    if (const fault::interrupt why = watch.reason(); why != fault::interrupt::none) {
      std::vector<fault::record> stopped;
      for (unsigned i = 0; i < workers; ++i)
        if (workers_[i].interrupted) stopped.push_back(workers_[i].seen);
      if (why == fault::interrupt::timeout) throw timeout_error(*plan.kernel_name, plan.opts.timeout_seconds, stopped);
      throw interrupted_error(*plan.kernel_name, stopped);
    }
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void resize(unsigned workers, std::size_t stack_bytes) {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
      ++generation_;
    }
    start_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
    runners_.clear();
    stop_ = false;
    spin_ = workers <= std::thread::hardware_concurrency();
    stack_bytes_ = stack_bytes;
    for (unsigned i = 0; i < workers; ++i) runners_.push_back(std::make_unique<block_runner>(stack_bytes, guarded_stacks_));
    workers_ = std::make_unique<fault::worker[]>(workers);
    for (unsigned i = 1; i < workers; ++i) {
      threads_.emplace_back([this, i, g = generation_.load()] { helper_loop(i, g); });
      workers_[i].thread = threads_.back().native_handle();
    }
  }

  // Waking a thread blocked on a condition variable took 40-80 us on a 2-core
  // VM, a launch's whole time for small kernels (a launch on two workers
  // cost 82 us against 6 on one): a helper that has run a launch watches for
  // the next one a while before it sleeps, and the launching thread for the
  // helpers' end, as OpenMP's runtimes spin before they block. Not where
  // there are more workers than cores (a cooperative launch's, one per block).
  template <class Done>
  void spin_until(Done done) const {
    if (!spin_) return;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
    for (unsigned i = 0; !done(); ++i) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#elif defined(__aarch64__)
      asm volatile("yield");
#endif
      if (i % 64 == 63 && std::chrono::steady_clock::now() > give_up) return;
    }
  }

  void helper_loop(unsigned index, std::uint64_t seen) {
    fault::prepare_thread();
    for (;;) {
      {
        spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; });
        std::unique_lock lock(mutex_);
        start_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (stop_) return;
        if (index >= launch_workers_) continue;  // this launch uses fewer workers
      }
      work(index);
      std::lock_guard lock(mutex_);
      if (--helpers_busy_ == 0) done_.notify_one();
    }
  }

  void work(unsigned index) {
    // A fault or an interrupt in a block jumps back here, past the block's
    // frames (fault.h). The launch has failed then, so one landing per worker
    // and launch is enough: no cost per block.
    if (sigsetjmp(workers_[index].landing, 0)) return landed(*runners_[index], workers_[index]);
    workers_[index].armed.store(1, std::memory_order_relaxed);
    run_blocks(*runners_[index]);
    workers_[index].armed.store(0, std::memory_order_relaxed);
  }

  void run_blocks(block_runner& runner) {
    block_range mine;
    std::uint64_t b = 0;
    while (take_block(mine, b)) {
      if (const unsigned per_claim = plan_->blocks_per_claim.load(std::memory_order_relaxed)) {
        // The kernel runs its blocks as loops: the rest go straight to the
        // loop stack, with the blocks after each in its row of the grid and
        // in this worker's chunk where the kernel takes several.
        runner.on_loop_stack([&] {
          do {
            unsigned blocks = 1;
            while (blocks < per_claim && mine.next < mine.end && mine.next % plan_->grid.x != 0) ++mine.next, ++blocks;
            run_block(runner, b, blocks);
          } while (take_block(mine, b));
        });
        return;
      }
      run_block(runner, b, 0);
    }
  }

  // A worker takes block indices from the shared counter a chunk at a time:
  // with blocks of a few hundred nanoseconds, an atomic add per block kept
  // two workers no faster than one (the counter's cache line moving between
  // the cores). A chunk is at most a 64th of a worker's share, so the
  // workers still end together.
  struct block_range {
    std::uint64_t next = 0, end = 0;
  };
  bool take_block(block_range& mine, std::uint64_t& b) {
    if (failed_.load(std::memory_order_relaxed) || watch_->reason() != fault::interrupt::none) return false;
    if (mine.next == mine.end) {
      mine.next = next_block_.fetch_add(chunk_, std::memory_order_relaxed);
      mine.end = std::min(mine.next + chunk_, blocks_);
      if (mine.next >= blocks_) {
        mine.next = mine.end;
        return false;
      }
    }
    b = mine.next++;
    return true;
  }

  // claimed_along_x: the blocks from b along x run as loops in one call; 0
  // runs block b through a fiber (where the kernel may claim it).
  void run_block(block_runner& runner, std::uint64_t b, unsigned claimed_along_x) {
    try {
      if (claimed_along_x)
        runner.run_claimed(*plan_, b, claimed_along_x);
      else
        runner.run(*plan_, b);
    } catch (const block_runner::fibers_needed&) {
      failed(run_again_on_fibers(runner));
    } catch (...) {
      failed(std::current_exception());
    }
    if (plan_->grid_sync) plan_->grid_sync->block_ended(current.block_idx);
  }

  void failed(std::exception_ptr why) {
    {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::move(why);
      failed_ = true;
    }
    if (plan_->grid_sync) plan_->grid_sync->stop();
  }

  // Blocks whose loops met a warp collective misused: on fibers, where they
  // run again, the misuse is reported as in any run, naming the lane.
  std::exception_ptr run_again_on_fibers(block_runner& runner) {
    const std::uint64_t first_block = runner.block_linear(), blocks = runner.blocks_claimed();
    try {
      for (std::uint64_t b = first_block; b < first_block + blocks; ++b) runner.run(*plan_, b, false);
    } catch (...) {
      return std::current_exception();
    }
    // Lanes that meet at different calls of one collective: the fibers join
    // them, the loops answer each call apart, and the block has run twice.
    return std::make_exception_ptr(
        kernel_error(cudaErrorLaunchFailure, "kernel '" + *plan_->kernel_name +
                                                 "': lanes of a warp meet at different calls of one warp collective, "
                                                 "which its region loops cannot run; run it with LOCKSTEP_EMU_ENGINE=fibers"));
  }

  // After the jump: the block's fibers are dropped unwound, and the launch fails.
  void landed(block_runner& runner, fault::worker& me) {
    fault::landed(me, current.block_idx, current.thread_idx);
    const bool first_failure = !me.interrupted && !failed_.exchange(true);  // else the launch's error is another's already
    if (runner.ran_as_loops()) {
      // Loops keep the running thread's record only where a call may read it.
      me.seen.thread_known = false;
      if (first_failure) replay_on_fibers(runner, me);
    }
    std::exception_ptr fault;
    if (first_failure)
      fault = std::make_exception_ptr(fault_error(
          me.seen, {*plan_->kernel_name, kernel_, runner.stacks(), runner.running_stack(), runner.dynamic_shared(), plan_->dynamic_shared_bytes}));
    runner.abandon_block();
    {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = fault;
      failed_ = true;
    }
    if (plan_->grid_sync) plan_->grid_sync->stop();
  }

  // A fault in blocks that ran as loops happens again, as a rule, when the
  // blocks run again with a fiber per thread, which names the thread; the
  // first fault is reported where the second run does not fault. The other
  // workers have stopped taking blocks (failed_ is set).
  void replay_on_fibers(block_runner& runner, fault::worker& me) {
    const fault::record first = me.seen;
    const std::uint64_t first_block = runner.block_linear(), blocks = runner.blocks_claimed();
    runner.abandon_block();
    if (sigsetjmp(me.landing, 0)) {
      fault::landed(me, current.block_idx, current.thread_idx);
      if (me.interrupted) me.seen = first;
      return;
    }
    me.armed.store(1, std::memory_order_relaxed);
    try {
      for (std::uint64_t b = first_block; b < first_block + blocks; ++b) runner.run(*plan_, b, false);
    } catch (...) {
    }
    me.armed.store(0, std::memory_order_relaxed);
    me.seen = first;
  }

  std::mutex mutex_;
  std::condition_variable start_, done_;
  std::vector<std::thread> threads_;
  std::vector<std::unique_ptr<block_runner>> runners_;
  std::unique_ptr<fault::worker[]> workers_;  // beside runners_, as the signal handlers see them
  const fault::launch_watch* watch_ = nullptr;
  const void* kernel_ = nullptr;
  std::size_t stack_bytes_ = 0;
  std::atomic<std::uint64_t> generation_{0};
  unsigned launch_workers_ = 0;
  std::atomic<unsigned> helpers_busy_{0};
  bool spin_ = false;  // spin_until spins before blocking
  bool stop_ = false;
  const launch_plan* plan_ = nullptr;
  std::uint64_t blocks_ = 0;
  std::atomic<std::uint64_t> next_block_{0};
  std::uint64_t chunk_ = 1;  // block indices taken at a time (take_block)
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
  const bool cooperative_ = false;
  const bool guarded_stacks_ = true;
};

// The most memory maps a process may have (vm.max_map_count; Linux's default
// is 65530): every guarded fiber stack takes two.
std::uint64_t max_memory_maps() {
  std::ifstream in("/proc/sys/vm/max_map_count");
  std::uint64_t n = 0;
  return in >> n && n ? n : 65530;
}

// A cooperative launch: every block on an OS thread of its own, all at once.
void run_cooperative(launch_plan& plan, std::uint64_t blocks, const void* kernel) {
  // At grid.sync() every thread of the grid holds a stack; guard them only
  // while that leaves most of the process's memory maps to the program.
  const std::uint64_t threads = blocks * plan.block.x * plan.block.y * plan.block.z;
  worker_pool pool(true, 2 * threads <= max_memory_maps() / 2);
  grid_barrier grid(
      blocks, [&pool] { return pool.stopping(); },
      [&plan] {
        if (plan.check) plan.check->grid_synchronised();
      });
  plan.grid_sync = &grid;
  pool.run(plan, blocks, kernel);
}

}  // namespace

void launch_kernel(const void* kernel, const launch_config& config, void (*thunk)(const void*), const void* params) {
  if (current.block)
    throw launch_error(cudaErrorInvalidConfiguration,
                       "a kernel launched another kernel (" + current.block->where() + "); dynamic parallelism is not emulated");
  const kernel_info& info = kernel_info_for(kernel);
  const launch_shape shape = detail::shape_of(config, info.static_shared_bytes, info.max_dynamic_shared_bytes);
  // Errors are thrown, not left in cudaGetLastError: the GPU path checks
  // before launching, so there the runtime never records them either.
  if (auto problem = check_launch(h100_limits, shape, info.name)) throw launch_error(static_cast<cudaError_t>(problem->cuda_error), problem->message);
  if (config.cooperative)
    if (auto problem = check_cooperative_launch(h100_limits, h100_sm_limits, shape, info.name))
      throw launch_error(static_cast<cudaError_t>(problem->cuda_error), problem->message);
  launch_plan plan{thunk, params, config.grid, config.block, config.shared_bytes, &info.name, get_options()};
  if ((plan.opts.checks & memory_checks) && !info.instrumented) {
    std::string flags;
    for (const std::string& flag : check_compile_flags()) flags += (flags.empty() ? "" : " ") + flag;
    throw launch_error(cudaErrorInvalidDeviceFunction,
                       "lockstep check: kernel '" + info.name + "' (in " + info.module_path +
                           ") was not compiled for check mode, so memcheck, racecheck and initcheck cannot see its memory "
                           "accesses. Compile it with " +
                           flags +
                           " (in CMake: lockstep_check_sources; or run the file with lockstep-check), or check barriers and warps "
                           "only with LOCKSTEP_CHECK=synccheck");
  }
  // How the kernel runs, from its module's record (kernel_engine_notices.h):
  // a kernel on fibers though loops are allowed says so once.
  const engine_verdict verdict = engine_verdict_of(kernel, {.region_loops_option = plan.opts.region_loops,
                                                            .checked = plan.opts.checks != 0,
                                                            .forward_order = plan.opts.order == thread_order::forward,
                                                            .grid_sync = config.cooperative});
  say_fibers_at_launch(kernel, verdict);
  plan.kernel = kernel;
  plan.verdict = &verdict;
  if (!plan.opts.quiet_fibers && (verdict.kind == engine_verdict::unit || verdict.kind == engine_verdict::unrecorded))
    plan.say_at_wait.store(true, std::memory_order_relaxed);
  // One launch at a time, as on one stream; the pool is not re-entrant.
  static std::mutex launch_mutex;
  static worker_pool pool;
  std::lock_guard lock(launch_mutex);
  std::optional<check::launch_session> session;
  if (plan.opts.checks) {
    plan.check = &session.emplace(info, kernel, plan.opts.checks, config.grid, config.block);
    plan.make_observer = []() -> std::unique_ptr<block_observer> { return std::make_unique<check::block_checker>(); };
  }
  try {
    std::exception_ptr failure;
    try {
      const std::uint64_t blocks = std::uint64_t(config.grid.x) * config.grid.y * config.grid.z;
      if (config.cooperative)
        run_cooperative(plan, blocks, kernel);
      else
        pool.run(plan, blocks, kernel);
    } catch (const launch_interrupted&) {
      throw;  // not the kernel's failure: no findings, no sticky error
    } catch (...) {
      if (!session) throw;
      failure = std::current_exception();
    }
    if (session) session->finish(failure);  // throws the findings, or the failure itself
  } catch (const launch_interrupted&) {
    throw;
  } catch (const kernel_error& e) {
    set_last_error(e.code());  // as the GPU reports a failed kernel at the next runtime call
    throw;
  }
}

// The callers are always inlined into the kernel (lockstep/emu/sync.h), so
// the return address is the kernel's line, for synccheck's reports.
int block_barrier(barrier_reduce reduce, int predicate) {
  return in_kernel("__syncthreads").block->barrier(reduce, predicate, reinterpret_cast<std::uintptr_t>(__builtin_return_address(0)));
}

unsigned loop_claim_block(loop_claim how) { return in_kernel("a kernel split at its barriers").block->claim_for_loops(how); }
void loop_stack_call(void (*body)(void*), void* arg) { current.block->call_on_loop_stack(body, arg); }
void loop_gather_into(loop_lane_call* calls, unsigned char* arrived) { current.block->gather_into(calls, arrived); }
void loop_answer_warps(const loop_block& block, loop_lane_call* calls, const unsigned char* arrived) {
  current.block->answer_loop_warps(block, calls, arrived);
}
void loop_replay_from(const loop_lane_call* calls) { current.block->replay_from(calls); }
bool loop_gathering() { return current.block && current.block->gathering(); }
void loop_collective_misused() { throw block_runner::fibers_needed{}; }
void grid_sync() { in_kernel("grid.sync()").block->grid_sync(reinterpret_cast<std::uintptr_t>(__builtin_return_address(0))); }

void kernel_misuse(const std::string& what) { in_kernel("cooperative_groups").block->fail(what); }

bool launch_is_cooperative() { return in_kernel("grid_group::is_valid()").block->cooperative(); }

std::uint64_t warp_collective(warp_op op, unsigned mask, std::uint64_t value, int lane_arg, int width) {
  return in_kernel("a warp collective").block->warp(op, mask, value, lane_arg, width, reinterpret_cast<std::uintptr_t>(__builtin_return_address(0)));
}

void outside_kernel(const char* what) {
  throw std::logic_error(std::string("lockstep emulator: ") + what + " was used outside a kernel; device built-ins only exist while a kernel runs");
}

// Their messages are built on the checked thread: not the kernel's accesses (block_checker.h).
void device_trap(const char* file, unsigned line, const char* function) {
  const check::paused_checks paused;
  throw kernel_error(cudaErrorLaunchFailure, in_kernel("__trap()").block->where() + ": __trap() called at " + file + ":" + std::to_string(line) +
                                                 " in " + function + "; on a GPU the launch fails with this error too");
}

void device_assert_failed(const char* expression, const char* file, unsigned line, const char* function) {
  const check::paused_checks paused;
  if (!current.block) {  // an assert in host code keeps its usual meaning
    std::fprintf(stderr, "%s:%u: %s: Assertion `%s' failed.\n", file, line, function, expression);
    std::abort();
  }
  throw kernel_error(cudaErrorAssert, current.block->where() + ": device assertion `" + expression + "` failed at " + file + ":" +
                                          std::to_string(line) + " in " + function);
}

}  // namespace lockstep::emu
