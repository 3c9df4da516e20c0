// Runs the threads of one block at a time on one OS thread.
//
// Threads are started one after another by a "runner" loop on a fiber. A
// thread that finishes without waiting costs one function call. A thread that
// waits (at __syncthreads or a warp collective) keeps the runner's fiber, and
// a fresh runner fiber continues with the next thread; the waiting ones are
// resumed in order once everyone they wait for has arrived. So a kernel
// without barriers never switches between fibers, and one with barriers keeps
// exactly one stack per waiting thread.
#pragma once
#include <atomic>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "block_observer.h"
#include "context.h"
#include "dynamic_shared.h"
#include "kernel_engine_notices.h"
#include "lockstep/emu/builtins.h"
#include "lockstep/emu/options.h"
#include "lockstep/emu/region_loops.h"
#include "lockstep/emu/sync.h"
#include "stack_pool.h"

namespace lockstep::emu {

namespace check {
class launch_session;
}  // namespace check
class grid_barrier;

struct launch_plan {
  void (*thunk)(const void*);
  const void* params;
  dim3 grid;
  dim3 block;
  std::size_t dynamic_shared_bytes;
  const std::string* kernel_name;
  options opts;
  check::launch_session* check = nullptr;                        // set in check mode, with:
  std::unique_ptr<block_observer> (*make_observer)() = nullptr;  // makes a runner's checker, at its first checked block
  grid_barrier* grid_sync = nullptr;                             // a cooperative launch's: grid.sync() waits there
  // Set where the kernel's first wait on a barrier says that it runs on
  // fibers (kernel_engine_notices.h: say_fibers_at_wait); cleared by it.
  const void* kernel = nullptr;
  const engine_verdict* verdict = nullptr;
  mutable std::atomic<bool> say_at_wait{false};
  // Set once a block of the launch was claimed for loops: the kernel is split
  // and nothing launch-wide refuses a claim, so every other block will claim
  // too, and may run straight on the loop stack (block_runner::run_claimed),
  // up to this many blocks along x in one call (loop_claim); 0 before.
  mutable std::atomic<unsigned> blocks_per_claim{0};
};

class block_runner {
 public:
  // guarded_stacks: see stack_pool (a cooperative launch may need unguarded ones).
  explicit block_runner(std::size_t stack_bytes, bool guarded_stacks = true);
  ~block_runner();
  block_runner(const block_runner&) = delete;
  block_runner& operator=(const block_runner&) = delete;

  // Runs every thread of block `block_linear` of the plan; throws
  // kernel_error. Without loops_allowed a kernel split at its barriers runs
  // on fibers too (after a fault in its loops, so that the fault names its thread).
  void run(const launch_plan& plan, std::uint64_t block_linear, bool loops_allowed = true);
  // Runs block `block_linear` of a launch whose blocks claim (plan.blocks_per_claim)
  // without a fiber, and the blocks_along_x - 1 after it in its row of the
  // grid with it: the kernel is called here, on the loop stack (inside
  // on_loop_stack), and its first statement claims the blocks. What a fiber
  // and the thread bookkeeping cost per block is most of a small block's time.
  void run_claimed(const launch_plan& plan, std::uint64_t block_linear, unsigned blocks_along_x);

  // pc: the caller's address, for synccheck's reports.
  int barrier(barrier_reduce reduce, int predicate, std::uintptr_t pc);
  // cooperative_groups' grid.sync(): a block barrier whose release waits for
  // every block of the grid (plan.grid_sync); a kernel_error outside a cooperative launch.
  void grid_sync(std::uintptr_t pc);
  bool cooperative() const { return plan_ && plan_->grid_sync; }
  std::uint64_t warp(warp_op op, unsigned mask, std::uint64_t value, int lane_arg, int width, std::uintptr_t pc);
  // A thread that waits for others without a barrier (a spin on a flag that
  // sleeps or yields: libcu++'s cuda::barrier, __nanosleep): the block's other
  // threads run, those not yet started first, before it goes on.
  void yield_thread();
  // The region-loop engine (lockstep/emu/region_loops.h): whether the
  // running thread, the block's first, may run the whole block as loops; if
  // so, no other thread of the block starts.
  // Returns how many blocks along x the claim runs (loop_claim_block), 0 for none.
  unsigned claim_for_loops(const loop_claim& how);
  // Warp collectives in region loops (loop_gather_into, loop_answer_warps).
  void gather_into(loop_lane_call* calls, unsigned char* arrived);
  void answer_loop_warps(const loop_block& block, loop_lane_call* calls, const unsigned char* arrived);
  void replay_from(const loop_lane_call* calls);
  bool gathering() const { return claimed_ && gather_calls_; }
  // Thrown where the loops meet what only the fibers can tell (a warp
  // collective misused): the executor runs the claimed blocks again on fibers.
  struct fibers_needed {};
  // Whether the block now running (or the last, after a fault) was claimed so,
  // and how many blocks along x from block_linear() that claim ran.
  bool ran_as_loops() const { return claimed_; }
  unsigned blocks_claimed() const { return claimed_ ? blocks_in_claim_ : 1; }
  // Calls body(arg) on this worker's loop stack (lockstep/emu/region_loops.h),
  // or right here when already on it.
  void call_on_loop_stack(void (*body)(void*), void* arg);
  template <class F>
  void on_loop_stack(F&& body) {
    call_on_loop_stack([](void* f) { (*static_cast<F*>(f))(); }, &body);
  }
  std::uint64_t block_linear() const { return block_linear_; }
  [[noreturn]] void fail(const std::string& what) const;  // kernel_error naming this thread
  [[noreturn]] void unseen_wait(const char* what) const;
  // Check mode: ends the running thread where it is, without unwinding it
  // (a checker found an access that must not happen), and with it the block,
  // which fails with `why` (stop_running_thread, for the checker).
  [[noreturn]] void abandon_running_thread(std::exception_ptr why);
  std::string where() const;  // "kernel k, block (..), thread (..)"
  std::size_t stack_bytes() const { return stacks_.stack_bytes(); }
  // For fault reports (fault_report.h): the stacks, the running fiber's, the dynamic shared buffer.
  const stack_pool& stacks() const { return stacks_; }
  const void* running_stack() const { return running_ ? running_->stack : nullptr; }
  const dynamic_shared_buffer& dynamic_shared() const { return dynamic_shared_; }
  // After a fault or an interrupt jumped out of the block (fault.h): its
  // fibers are dropped without unwinding, as after any failed block.
  void abandon_block();

 private:
  enum class state : std::uint8_t { not_started, running, at_barrier, at_warp, exited };
  struct fiber {
    context ctx;
    void* stack = nullptr;
    unsigned thread = 0;
    uint3 thread_idx{0, 0, 0};  // of `thread`, kept to restore it cheaply on resume
    std::size_t slot = 0;       // index in fibers_
  };
  struct warp_round {
    unsigned warp = 0;  // of the block
    std::uint32_t arrived = 0;
    std::uint32_t wanted = 0;
    warp_op op = warp_op::sync;
    int width = 32;
    std::uint64_t value[32];
    int lane_arg[32];
    fiber* waiter[32];
    std::uint64_t result[32];
    std::uint32_t mask[32];  // as each lane passed it, for synccheck
    std::uintptr_t pc[32];   // where each lane called
  };

  static constexpr unsigned no_lane = 32;
  static constexpr std::size_t stack_colours = 64;  // cache lines the stack tops are spread over  // complete_warp called by no arriving lane
  static void runner_main(void* self);
  fiber* new_runner();
  fiber* next_fiber();  // the next ready fiber, else a new runner, else null
  void enter(fiber* f, context& from);
  void retire(fiber* f);
  [[noreturn]] void leave_finished_fiber();  // retires the running fiber and goes on to the next
  void suspend();
  void start_thread(fiber* f, unsigned t);
  void resume_thread(const fiber* f);
  void thread_exited(unsigned t);
  [[gnu::noinline]] void exited_during_warp_rounds(unsigned t);
  void release_barrier();
  void complete_warp(warp_round& w, unsigned caller_lane);
  void make_ready(std::vector<fiber*>& waiters);
  void order_threads(std::vector<unsigned>& ids);
  bool release_active_masks();
  std::string deadlock_report() const;
  // A misuse the GPU leaves undefined: in check mode a synccheck finding
  // that stops the block, else a kernel_error. `thread` (linear) at `pc`.
  [[noreturn]] void sync_failure(const std::string& what, unsigned thread, std::uintptr_t pc);

  stack_pool stacks_;
  const launch_plan* plan_ = nullptr;
  thread_context* here_ = nullptr;  // this worker's `current`, without a thread-local lookup per switch
  unsigned threads_ = 0;
  unsigned next_start_ = 0;
  unsigned live_ = 0;
  std::vector<unsigned> start_order_;
  std::vector<state> state_;
  std::deque<fiber*> ready_;
  std::vector<fiber*> yielded_;  // run again once nothing else can run
  std::vector<fiber*> fibers_;   // fibers holding a stack now
  std::vector<fiber*> spare_fibers_;
  std::vector<std::unique_ptr<fiber>> owned_fibers_;
  fiber* running_ = nullptr;
  context scheduler_;
  std::exception_ptr error_;
  std::mt19937_64 rng_;

  std::vector<fiber*> barrier_waiters_;
  int barrier_true_ = 0;   // predicates counted for the barrier in progress
  int released_true_ = 0;  // result of the last released barrier
  int released_arrived_ = 0;
  bool grid_pending_ = false;  // the barrier in progress is a grid.sync()

  // Per warp, its rounds: lanes whose masks are disjoint (two half-warps
  // shuffling with width 16) meet in rounds of their own. A deque, so that a
  // waiting lane's round stays where it is when another is added.
  std::vector<std::deque<warp_round>> warps_;
  std::vector<std::uint32_t> exited_;  // per warp, lanes that have exited
  unsigned open_rounds_ = 0;           // warp rounds some lane waits at
  std::vector<uint3> thread_coords_;   // threadIdx of each linear thread, for block shape coords_for_
  dim3 coords_for_{0, 0, 0};
  // The round of warp `w` that lanes of `lanes` have arrived at (0: a free
  // round), or null; the round a lane calling `op` with `mask` joins.
  warp_round* round_of(unsigned w, std::uint32_t lanes);
  warp_round* round_to_join(unsigned w, warp_op op, int width, std::uint32_t mask);
  dynamic_shared_buffer dynamic_shared_;

  // The region-loop engine's: one large stack for the claimed blocks' local
  // arrays (address space; pages are committed as they are touched).
  static constexpr std::size_t loop_stack_bytes = std::size_t(64) << 20;
  stack_pool loop_stacks_{loop_stack_bytes};
  void* loop_stack_ = nullptr;
  bool claimed_ = false;
  bool refuse_claims_ = false;
  bool claim_waiting_ = false;    // run_claimed: the kernel's claim is yet to come
  unsigned blocks_in_claim_ = 1;  // the blocks along x that claim runs
  bool on_loop_stack_ = false;
  loop_lane_call* gather_calls_ = nullptr;  // where warp collectives record the lanes' calls, while a region gathers them
  unsigned char* gather_arrived_ = nullptr;
  const loop_lane_call* replay_calls_ = nullptr;  // or where they return the answers from, while a region replays them
  std::vector<unsigned> loop_lanes_;              // answer_loop_warps: each warp's lanes that made the call
  std::uint64_t block_linear_ = 0;

  std::unique_ptr<block_observer> observer_;  // made at the first checked block
  block_observer* observing_ = nullptr;       // observer_ while a checked block runs
  std::vector<std::uintptr_t> barrier_pc_;    // check mode: where each thread waits
};

}  // namespace lockstep::emu
