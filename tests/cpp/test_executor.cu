// Emulator settings: worker threads and the order threads run in between
// barriers. Emulator-only: the GPU has no such knobs.
#include "test_util.h"

#if !defined(__CUDACC__)
#include "lockstep/emu/options.h"

using namespace testing_util;
namespace emu = lockstep::emu;

namespace {

// Runs a scope with other emulator options, restoring the previous ones.
class with_options {
 public:
  explicit with_options(const emu::options& o) : saved_(emu::get_options()) { emu::set_options(o); }
  ~with_options() { emu::set_options(saved_); }

 private:
  emu::options saved_;
};

emu::options order(emu::thread_order o, std::uint64_t seed = 0, unsigned workers = 0) {
  emu::options opts = emu::get_options();
  opts.order = o;
  opts.seed = seed;
  opts.workers = workers;
  return opts;
}

// Each thread takes a ticket before and after a barrier: the tickets record
// the order the emulator ran the threads in.
__global__ void tickets(int* counter, int* before, int* after) {
  before[threadIdx.x] = atomicAdd(counter, 1);
  __syncthreads();
  after[threadIdx.x] = atomicAdd(counter, 1);
}

std::pair<std::vector<int>, std::vector<int>> run_tickets(int threads) {
  device_buffer<int> counter(1, 0), before(threads), after(threads);
  lockstep::launch(tickets, 1, threads)(counter.get(), before.get(), after.get());
  return {before.download(), after.download()};
}

TEST(Executor, ForwardOrderIsThreadOrder) {
  with_options o(order(emu::thread_order::forward));
  auto [before, after] = run_tickets(100);
  for (int t = 0; t < 100; ++t) {
    EXPECT_EQ(before[t], t);
    EXPECT_EQ(after[t], 100 + t);
  }
}

TEST(Executor, ReverseOrder) {
  with_options o(order(emu::thread_order::reverse));
  auto [before, after] = run_tickets(100);
  for (int t = 0; t < 100; ++t) {
    EXPECT_EQ(before[t], 99 - t);
    EXPECT_EQ(after[t], 100 + 99 - t);
  }
}

TEST(Executor, RandomOrderIsAPermutationFixedBySeed) {
  std::vector<int> first, again, other;
  {
    with_options o(order(emu::thread_order::random, 42));
    first = run_tickets(100).first;
    again = run_tickets(100).first;
  }
  {
    with_options o(order(emu::thread_order::random, 43));
    other = run_tickets(100).first;
  }
  std::vector<int> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  for (int t = 0; t < 100; ++t) ASSERT_EQ(sorted[t], t);
  EXPECT_EQ(first, again);
  EXPECT_NE(first, other);
  std::vector<int> identity(100);
  for (int t = 0; t < 100; ++t) identity[t] = t;
  EXPECT_NE(first, identity);
}

// A missing __syncthreads: each thread reads the element its lower neighbour
// wrote. Thread order hides the bug; reverse or random order shows it.
__global__ void read_neighbour_without_barrier(const int* in, int* out) {
  __shared__ int tile[128];
  tile[threadIdx.x] = in[threadIdx.x];
  out[threadIdx.x] = tile[threadIdx.x == 0 ? 0 : threadIdx.x - 1];
}

int wrong_elements(emu::thread_order o) {
  with_options opts(order(o, 7));
  auto v = random_vector<int>(128, 1, 1 << 30);
  device_buffer<int> in(v), out(128);
  lockstep::launch(read_neighbour_without_barrier, 1, 128)(in.get(), out.get());
  auto got = out.download();
  int wrong = 0;
  for (int t = 0; t < 128; ++t) wrong += got[t] != v[t == 0 ? 0 : t - 1];
  return wrong;
}

TEST(Executor, ThreadOrderExposesAMissingBarrier) {
  EXPECT_EQ(wrong_elements(emu::thread_order::forward), 0);
  EXPECT_GT(wrong_elements(emu::thread_order::reverse), 100);
  EXPECT_GT(wrong_elements(emu::thread_order::random), 10);
}

// Deep recursion on a fiber's stack while other threads wait at a barrier.
__device__ int depth_sum(int depth) {
  volatile char pad[512];
  pad[0] = static_cast<char>(depth);
  return depth == 0 ? pad[0] : depth + depth_sum(depth - 1);
}

__global__ void deep_stack(int* out) {
  __syncthreads();
  out[threadIdx.x] = depth_sum(100);  // ~60 KiB of stack
  __syncthreads();
}

TEST(Executor, FiberStacksHoldDeepCalls) {
  device_buffer<int> out(64);
  lockstep::launch(deep_stack, 2, 64)(out.get());
  for (int v : out.download()) ASSERT_EQ(v, 100 * 101 / 2);
}

TEST(Executor, OptionsFromStrings) {
  std::uint64_t seed = 0;
  EXPECT_EQ(emu::parse_thread_order("reverse", &seed), emu::thread_order::reverse);
  EXPECT_EQ(emu::parse_thread_order("random:99", &seed), emu::thread_order::random);
  EXPECT_EQ(seed, 99u);
  EXPECT_THROW(emu::parse_thread_order("sideways", &seed), std::invalid_argument);
  emu::options tiny = emu::get_options();
  tiny.stack_bytes = 1024;
  EXPECT_THROW(emu::set_options(tiny), std::invalid_argument);
}

}  // namespace
#endif
