// CUDA's atomic functions, each on every type CUDA defines it for, used by
// 64 blocks x 256 threads at once on global memory and, separately, on each
// block's shared memory. Results are checked against the same operations
// applied one after another on the host, from fresh random inputs; returned
// old values are checked wherever CUDA makes them deterministic.
#include <algorithm>
#include <climits>
#include <cstring>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

using namespace testing_util;

namespace {

constexpr int kBlocks = 64;
constexpr int kThreadsPerBlock = 256;
constexpr int kThreads = kBlocks * kThreadsPerBlock;

// Each test's operation, as the device applies it and as the host reference
// applies it to the value the target held before.
struct add_op {
  template <class T>
  __device__ static T apply(T* target, T value) {
    return atomicAdd(target, value);
  }
  template <class T>
  static T host(T old, T value) {
    return static_cast<T>(old + value);
  }
};
struct sub_op {
  template <class T>
  __device__ static T apply(T* target, T value) {
    return atomicSub(target, value);
  }
  template <class T>
  static T host(T old, T value) {
    return static_cast<T>(old - value);
  }
};
struct min_op {
  template <class T>
  __device__ static T apply(T* target, T value) {
    return atomicMin(target, value);
  }
  template <class T>
  static T host(T old, T value) {
    return value < old ? value : old;
  }
};
struct max_op {
  template <class T>
  __device__ static T apply(T* target, T value) {
    return atomicMax(target, value);
  }
  template <class T>
  static T host(T old, T value) {
    return value > old ? value : old;
  }
};
struct exch_op {
  template <class T>
  __device__ static T apply(T* target, T value) {
    return atomicExch(target, value);
  }
  template <class T>
  static T host(T, T value) {
    return value;
  }
};
struct and_op {
  template <class T>
  __device__ static T apply(T* target, T value) {
    return atomicAnd(target, value);
  }
  template <class T>
  static T host(T old, T value) {
    return old & value;
  }
};
struct or_op {
  template <class T>
  __device__ static T apply(T* target, T value) {
    return atomicOr(target, value);
  }
  template <class T>
  static T host(T old, T value) {
    return old | value;
  }
};
struct xor_op {
  template <class T>
  __device__ static T apply(T* target, T value) {
    return atomicXor(target, value);
  }
  template <class T>
  static T host(T old, T value) {
    return old ^ value;
  }
};
// CUDA's definitions, from the programming guide: atomicInc stores
// ((old >= val) ? 0 : (old+1)), atomicDec ((old == 0) || (old > val)) ? val : (old-1).
struct inc_op {
  __device__ static unsigned apply(unsigned* target, unsigned limit) { return atomicInc(target, limit); }
  static unsigned host(unsigned old, unsigned limit) { return old >= limit ? 0u : old + 1u; }
};
struct dec_op {
  __device__ static unsigned apply(unsigned* target, unsigned limit) { return atomicDec(target, limit); }
  static unsigned host(unsigned old, unsigned limit) { return (old == 0u || old > limit) ? limit : old - 1u; }
};

// Operations built from atomicCAS retry loops, the way CUDA code writes the
// atomics it lacks. Each returns the value it replaced, like a native atomic.
struct cas_increment_op {
  template <class T>
  __device__ static T apply(T* target, T) {
    T expected = *target;  // only a first guess; every retry uses what atomicCAS saw
    for (;;) {
      const T seen = atomicCAS(target, expected, static_cast<T>(expected + 1));
      if (seen == expected) return seen;
      expected = seen;
    }
  }
  template <class T>
  static T host(T old, T) {
    return static_cast<T>(old + 1);
  }
};
struct cas_float_max_op {
  __device__ static float apply(float* target, float value) {
    int* bits = reinterpret_cast<int*>(target);
    int seen = *bits, expected;
    do {
      expected = seen;
      seen = atomicCAS(bits, expected, __float_as_int(fmaxf(value, __int_as_float(expected))));
    } while (seen != expected);
    return __int_as_float(seen);
  }
  static float host(float old, float value) { return value > old ? value : old; }
};
struct cas_double_add_op {
  __device__ static double apply(double* target, double value) {
    auto* bits = reinterpret_cast<unsigned long long*>(target);
    unsigned long long seen = *bits, expected;
    do {
      expected = seen;
      const double sum = value + __longlong_as_double(static_cast<long long>(expected));
      seen = atomicCAS(bits, expected, static_cast<unsigned long long>(__double_as_longlong(sum)));
    } while (seen != expected);
    return __longlong_as_double(static_cast<long long>(seen));
  }
  static double host(double old, double value) { return old + value; }
};

// Thread i updates targets[slots[i]] and records what the atomic returned.
template <class T, class Op>
__global__ void atomic_on_global(T* targets, const T* values, const int* slots, T* returned) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  returned[i] = Op::apply(&targets[slots[i]], values[i]);
}

// The same on shared memory: each block loads its own blockDim.x targets into
// shared memory, its threads update them there, and the block stores them back.
template <class T, class Op>
__global__ void atomic_on_shared(T* targets, const T* values, const int* slots, T* returned) {
  __shared__ T block_targets[kThreadsPerBlock];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  block_targets[threadIdx.x] = targets[i];
  __syncthreads();
  returned[i] = Op::apply(&block_targets[slots[i]], values[i]);
  __syncthreads();
  targets[i] = block_targets[threadIdx.x];
}

enum class memory_space { global, shared };

// The threads that share targets: the whole grid for global memory, one block
// for shared memory.
int scope_size(memory_space m) { return m == memory_space::global ? kThreads : kThreadsPerBlock; }
int scope_start(memory_space m, int thread) { return m == memory_space::global ? 0 : thread / kThreadsPerBlock * kThreadsPerBlock; }

// One launch's input: kThreads targets, and per thread a value and the slot,
// within its scope, of the target it updates.
template <class T>
struct atomic_case {
  std::vector<T> initial;
  std::vector<T> values;
  std::vector<int> slots;

  int target_of(memory_space m, int thread) const { return scope_start(m, thread) + slots[thread]; }
};

template <class T>
struct atomic_outcome {
  std::vector<T> targets;   // after the launch
  std::vector<T> returned;  // per thread
};

template <class T>
std::vector<T> random_bits(std::size_t n) {
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(rng()());
  return v;
}

// Multiples of 1/256 whose sums stay below 2^24 * 1/256: float and double
// add them exactly in any order, so the result does not depend on it.
template <class T>
std::vector<T> exactly_summable(std::size_t n) {
  std::vector<T> v;
  for (int k : random_vector<int>(n, -1000, 1000)) v.push_back(static_cast<T>(k / 256.0));
  return v;
}

std::vector<int> random_slots(int targets_per_scope) { return random_vector<int>(kThreads, 0, targets_per_scope - 1); }

template <class T>
atomic_case<T> random_case(std::vector<T> values, int targets_per_scope, std::vector<T> initial) {
  return {std::move(initial), std::move(values), random_slots(targets_per_scope)};
}

template <class T, class Op>
atomic_outcome<T> run_on_device(memory_space m, const atomic_case<T>& c) {
  device_buffer<T> targets(c.initial), values(c.values), returned(kThreads);
  device_buffer<int> slots(c.slots);
  auto* kernel = m == memory_space::global ? &atomic_on_global<T, Op> : &atomic_on_shared<T, Op>;
  lockstep::launch(kernel, kBlocks, kThreadsPerBlock)(targets.get(), values.get(), slots.get(), returned.get());
  return {targets.download(), returned.download()};
}

// The targets after applying every thread's operation in thread order.
template <class T, class Op>
std::vector<T> host_targets(memory_space m, const atomic_case<T>& c) {
  std::vector<T> targets = c.initial;
  for (int i = 0; i < kThreads; ++i) {
    T& t = targets[c.target_of(m, i)];
    t = Op::host(t, c.values[i]);
  }
  return targets;
}

// Reports how many elements differ and the first few, instead of two whole
// 16384-element vectors. Floating-point values compare bit for bit.
template <class T>
void expect_same(const std::vector<T>& got, const std::vector<T>& want, const char* what) {
  int mismatches = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(T)) == 0) continue;
    if (++mismatches <= 3) ADD_FAILURE() << what << "[" << i << "] is " << +got[i] << ", expected " << +want[i];
  }
  EXPECT_EQ(mismatches, 0) << what << " (seed " << fresh_seed() << ")";
}

// Launches the case, checks the targets against the host and returns the
// outcome for the caller's checks of the returned values.
template <class T, class Op>
atomic_outcome<T> run_and_check_targets(memory_space m, const atomic_case<T>& c) {
  atomic_outcome<T> out = run_on_device<T, Op>(m, c);
  expect_same(out.targets, host_targets<T, Op>(m, c), "target");
  return out;
}

// The threads that updated each target, in thread order.
template <class T>
std::vector<std::vector<int>> threads_by_target(memory_space m, const atomic_case<T>& c) {
  std::vector<std::vector<int>> threads(kThreads);
  for (int i = 0; i < kThreads; ++i) threads[c.target_of(m, i)].push_back(i);
  return threads;
}

// When every thread hits its target with the same value, the sequence of old
// values is fixed whichever order the threads come in; only who gets which
// one varies. So the returned values of a target, sorted, must equal the
// sorted sequence the host produces.
template <class T, class Op>
void expect_returns_replay_host_sequence(memory_space m, const atomic_case<T>& c, const atomic_outcome<T>& out) {
  const auto threads = threads_by_target(m, c);
  for (int target = 0; target < kThreads; ++target) {
    if (threads[target].empty()) continue;
    std::vector<T> got, want;
    T held = c.initial[target];
    for (int i : threads[target]) {
      ASSERT_EQ(c.values[i], c.values[threads[target][0]]) << "test setup: one value per target";
      got.push_back(out.returned[i]);
      want.push_back(held);
      held = Op::host(held, c.values[i]);
    }
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    ASSERT_EQ(got, want) << "old values returned for target " << target << " (seed " << fresh_seed() << ")";
  }
}

// For min, max and the like, every returned value is a value the target held:
// its initial value or one of the values sent to it, and no further past the
// final value than the operation allows (op(old, final) == final).
template <class T, class Op>
void expect_returns_were_held(memory_space m, const atomic_case<T>& c, const atomic_outcome<T>& out) {
  const auto threads = threads_by_target(m, c);
  for (int target = 0; target < kThreads; ++target) {
    std::vector<T> held{c.initial[target]};
    for (int i : threads[target]) held.push_back(c.values[i]);
    std::sort(held.begin(), held.end());
    for (int i : threads[target]) {
      const T old = out.returned[i];
      ASSERT_TRUE(std::binary_search(held.begin(), held.end(), old))
          << "thread " << i << " got " << +old << ", which target " << target << " never held (seed " << fresh_seed() << ")";
      ASSERT_EQ(Op::host(old, out.targets[target]), out.targets[target])
          << "thread " << i << " got " << +old << " after the final value " << +out.targets[target];
    }
  }
}

const char* to_string(memory_space m) { return m == memory_space::global ? "global" : "shared"; }
void PrintTo(memory_space m, std::ostream* os) { *os << to_string(m); }  // for gtest's messages
std::string memory_space_name(const testing::TestParamInfo<memory_space>& info) { return to_string(info.param); }

class Atomics : public testing::TestWithParam<memory_space> {
 protected:
  memory_space memory() const { return GetParam(); }

  // Adds 1 (or subtracts it) from every thread to one target per scope.
  template <class T, class Op>
  void check_tickets(T start) {
    SCOPED_TRACE(testing::internal::GetTypeName<T>());
    const atomic_case<T> c{std::vector<T>(kThreads, start), std::vector<T>(kThreads, T(1)), std::vector<int>(kThreads, 0)};
    const auto out = run_and_check_targets<T, Op>(memory(), c);
    expect_returns_replay_host_sequence<T, Op>(memory(), c, out);
  }

  // Random values into a few targets per scope, so many threads contend on each.
  template <class T, class Op>
  void check_contended(std::vector<T> values, std::vector<T> initial) {
    SCOPED_TRACE(testing::internal::GetTypeName<T>());
    run_and_check_targets<T, Op>(memory(), random_case(std::move(values), 8, std::move(initial)));
  }

  template <class T, class Op>
  void check_min_or_max(std::vector<T> values, std::vector<T> initial) {
    SCOPED_TRACE(testing::internal::GetTypeName<T>());
    const auto c = random_case(std::move(values), 8, std::move(initial));
    const auto out = run_and_check_targets<T, Op>(memory(), c);
    expect_returns_were_held<T, Op>(memory(), c, out);
  }

  // Exchanges hand each old value to exactly one thread: the returned values
  // plus the final one are the initial value plus every value sent. Which
  // value stays depends on the threads' order, so there is no host reference
  // for the final targets.
  template <class T>
  void check_exchange(std::vector<T> values, std::vector<T> initial) {
    SCOPED_TRACE(testing::internal::GetTypeName<T>());
    const auto c = random_case(std::move(values), 8, std::move(initial));
    const auto out = run_on_device<T, exch_op>(memory(), c);
    const auto threads = threads_by_target(memory(), c);
    for (int target = 0; target < kThreads; ++target) {
      std::vector<T> sent{c.initial[target]}, came_back{out.targets[target]};
      for (int i : threads[target]) {
        sent.push_back(c.values[i]);
        came_back.push_back(out.returned[i]);
      }
      std::sort(sent.begin(), sent.end());
      std::sort(came_back.begin(), came_back.end());
      ASSERT_EQ(came_back, sent) << "target " << target << " (seed " << fresh_seed() << ")";
    }
  }

  // Each thread owns one bit of a word that 32 or 64 threads share, and
  // (by a coin flip) clears, sets or flips it. The bit the thread owns in the
  // old value it gets back is still the word's initial bit: no other thread
  // changes it.
  template <class T, class Op>
  void check_owned_bits() {
    SCOPED_TRACE(testing::internal::GetTypeName<T>());
    constexpr int bits = sizeof(T) * CHAR_BIT;
    const int words = scope_size(memory()) / bits;
    atomic_case<T> c{random_bits<T>(kThreads), std::vector<T>(kThreads), std::vector<int>(kThreads)};
    const auto coins = random_vector<int>(kThreads, 0, 1);
    std::vector<int> owned_bit(kThreads);
    for (int i = 0; i < kThreads; ++i) {
      const int in_scope = i - scope_start(memory(), i);
      c.slots[i] = in_scope % words;
      owned_bit[i] = in_scope / words;
      const T bit = static_cast<T>(T(1) << owned_bit[i]);
      const T mask = std::is_same_v<Op, and_op> ? static_cast<T>(~bit) : bit;
      const T identity = std::is_same_v<Op, and_op> ? static_cast<T>(~T(0)) : T(0);
      c.values[i] = coins[i] ? mask : identity;
    }
    const auto out = run_and_check_targets<T, Op>(memory(), c);
    for (int i = 0; i < kThreads; ++i) {
      const T initial = c.initial[c.target_of(memory(), i)];
      ASSERT_EQ((out.returned[i] >> owned_bit[i]) & 1, (initial >> owned_bit[i]) & 1)
          << "thread " << i << " bit " << owned_bit[i] << " (seed " << fresh_seed() << ")";
    }
  }

  // One counter per scope, one limit for all its threads, a start that may
  // already be past the limit.
  template <class Op>
  void check_wrapping_counter() {
    const unsigned limit = random_vector<unsigned>(1, 1, 300)[0];
    const auto starts = random_vector<unsigned>(kThreads, 0, limit + 3);
    const atomic_case<unsigned> c{starts, std::vector<unsigned>(kThreads, limit), std::vector<int>(kThreads, 0)};
    SCOPED_TRACE("limit " + std::to_string(limit));
    const auto out = run_and_check_targets<unsigned, Op>(memory(), c);
    expect_returns_replay_host_sequence<unsigned, Op>(memory(), c, out);
  }
};

INSTANTIATE_TEST_SUITE_P(, Atomics, testing::Values(memory_space::global, memory_space::shared), memory_space_name);

TEST_P(Atomics, AddOfOneHandsOutEachTicketOnce) {
  check_tickets<int, add_op>(random_vector<int>(1, -1000, 1000)[0]);
  check_tickets<unsigned, add_op>(random_vector<unsigned>(1, 0, 1000)[0]);
  check_tickets<unsigned long long, add_op>(random_bits<unsigned long long>(1)[0]);
  check_tickets<float, add_op>(random_vector<int>(1, -1000, 1000)[0]);  // integers below 2^24 are exact
  check_tickets<double, add_op>(random_vector<int>(1, -1000, 1000)[0]);
}

TEST_P(Atomics, SubOfOneHandsOutEachTicketOnce) {
  check_tickets<int, sub_op>(random_vector<int>(1, -1000, 1000)[0]);
  check_tickets<unsigned, sub_op>(random_vector<unsigned>(1, 0, 1000)[0]);  // goes below zero: wraps
}

TEST_P(Atomics, AddSumsRandomValues) {
  check_contended<int, add_op>(random_vector<int>(kThreads, -100000, 100000), random_vector<int>(kThreads, -100000, 100000));
  check_contended<unsigned, add_op>(random_bits<unsigned>(kThreads), random_bits<unsigned>(kThreads));
  check_contended<unsigned long long, add_op>(random_bits<unsigned long long>(kThreads), random_bits<unsigned long long>(kThreads));
  check_contended<float, add_op>(exactly_summable<float>(kThreads), exactly_summable<float>(kThreads));
  check_contended<double, add_op>(exactly_summable<double>(kThreads), exactly_summable<double>(kThreads));
}

TEST_P(Atomics, SubSubtractsRandomValues) {
  check_contended<int, sub_op>(random_vector<int>(kThreads, -100000, 100000), random_vector<int>(kThreads, -100000, 100000));
  check_contended<unsigned, sub_op>(random_bits<unsigned>(kThreads), random_bits<unsigned>(kThreads));
}

TEST_P(Atomics, MinKeepsTheSmallest) {
  check_min_or_max<int, min_op>(random_bits<int>(kThreads), random_bits<int>(kThreads));
  check_min_or_max<unsigned, min_op>(random_bits<unsigned>(kThreads), random_bits<unsigned>(kThreads));
  check_min_or_max<long long, min_op>(random_bits<long long>(kThreads), random_bits<long long>(kThreads));
  check_min_or_max<unsigned long long, min_op>(random_bits<unsigned long long>(kThreads), random_bits<unsigned long long>(kThreads));
}

TEST_P(Atomics, MaxKeepsTheLargest) {
  check_min_or_max<int, max_op>(random_bits<int>(kThreads), random_bits<int>(kThreads));
  check_min_or_max<unsigned, max_op>(random_bits<unsigned>(kThreads), random_bits<unsigned>(kThreads));
  check_min_or_max<long long, max_op>(random_bits<long long>(kThreads), random_bits<long long>(kThreads));
  check_min_or_max<unsigned long long, max_op>(random_bits<unsigned long long>(kThreads), random_bits<unsigned long long>(kThreads));
}

TEST_P(Atomics, ExchangeHandsBackEveryValueOnce) {
  check_exchange<int>(random_bits<int>(kThreads), random_bits<int>(kThreads));
  check_exchange<unsigned>(random_bits<unsigned>(kThreads), random_bits<unsigned>(kThreads));
  check_exchange<unsigned long long>(random_bits<unsigned long long>(kThreads), random_bits<unsigned long long>(kThreads));
  check_exchange<float>(random_vector<float>(kThreads, -1e6, 1e6), random_vector<float>(kThreads, -1e6, 1e6));
}

TEST_P(Atomics, AndClearsOwnedBits) {
  check_owned_bits<int, and_op>();
  check_owned_bits<unsigned, and_op>();
  check_owned_bits<unsigned long long, and_op>();
}

TEST_P(Atomics, OrSetsOwnedBits) {
  check_owned_bits<int, or_op>();
  check_owned_bits<unsigned, or_op>();
  check_owned_bits<unsigned long long, or_op>();
}

TEST_P(Atomics, XorFlipsOwnedBits) {
  check_owned_bits<int, xor_op>();
  check_owned_bits<unsigned, xor_op>();
  check_owned_bits<unsigned long long, xor_op>();
}

TEST_P(Atomics, XorCombinesRandomWords) {
  check_contended<int, xor_op>(random_bits<int>(kThreads), random_bits<int>(kThreads));
  check_contended<unsigned, xor_op>(random_bits<unsigned>(kThreads), random_bits<unsigned>(kThreads));
  check_contended<unsigned long long, xor_op>(random_bits<unsigned long long>(kThreads), random_bits<unsigned long long>(kThreads));
}

TEST_P(Atomics, IncCountsUpAndWrapsToZeroPastTheLimit) { check_wrapping_counter<inc_op>(); }

TEST_P(Atomics, DecCountsDownAndWrapsToTheLimit) { check_wrapping_counter<dec_op>(); }

// One thread per target, so every returned value must be the initial one;
// (old, limit) pairs come mostly from a few small numbers and the extremes,
// so old == 0, old == limit, old > limit and limit == 0 all occur.
TEST_P(Atomics, IncAndDecFollowCudasDefinitionOnEdgeCases) {
  const std::vector<unsigned> edges{0u, 1u, 2u, 3u, 7u, 0x7fffffffu, 0xfffffffeu, 0xffffffffu};
  auto edge_heavy = [&edges] {
    std::vector<unsigned> v = random_bits<unsigned>(kThreads);
    const auto picks = random_vector<int>(kThreads, 0, int(edges.size()) + 1);
    for (int i = 0; i < kThreads; ++i)
      if (picks[i] < int(edges.size())) v[i] = edges[picks[i]];
    return v;
  };
  std::vector<int> own_slot(kThreads);
  for (int i = 0; i < kThreads; ++i) own_slot[i] = i - scope_start(memory(), i);
  const atomic_case<unsigned> inc{edge_heavy(), edge_heavy(), own_slot};
  expect_returns_replay_host_sequence<unsigned, inc_op>(memory(), inc, run_and_check_targets<unsigned, inc_op>(memory(), inc));
  const atomic_case<unsigned> dec{edge_heavy(), edge_heavy(), own_slot};
  expect_returns_replay_host_sequence<unsigned, dec_op>(memory(), dec, run_and_check_targets<unsigned, dec_op>(memory(), dec));
}

TEST_P(Atomics, CasLoopHandsOutEachTicketOnce) {
  check_tickets<int, cas_increment_op>(random_vector<int>(1, -1000, 1000)[0]);
  check_tickets<unsigned, cas_increment_op>(random_bits<unsigned>(1)[0]);
  check_tickets<unsigned long long, cas_increment_op>(random_bits<unsigned long long>(1)[0]);
  check_tickets<unsigned short, cas_increment_op>(random_bits<unsigned short>(1)[0]);  // may wrap past 65535
}

TEST_P(Atomics, CasLoopComputesFloatMax) {
  check_min_or_max<float, cas_float_max_op>(random_vector<float>(kThreads, -1e6, 1e6), random_vector<float>(kThreads, -1e6, 1e6));
}

TEST_P(Atomics, CasLoopAddsDoubles) {
  check_contended<double, cas_double_add_op>(exactly_summable<double>(kThreads), exactly_summable<double>(kThreads));
}

#if !defined(__CUDACC__) && !defined(__SANITIZE_THREAD__)
// A block's __shared__ variables lie in the executable's thread-local block of
// the worker running it, where the emulator's atomics skip the `lock`
// (lockstep/emu/atomics.h); anything else, another thread's included, takes
// the atomic path. Check mode (thread sanitizer) always takes it.
__global__ void shared_is_the_workers_own(int* answers) {
  __shared__ int counter;
  if (threadIdx.x == 0) answers[blockIdx.x] = lockstep::emu::in_own_executable_tls(&counter) ? 1 : 0;
}

TEST(AtomicsOnTheEmulator, SharedMemoryIsTheWorkersOwnAndNothingElseIs) {
  device_buffer<int> answers(kBlocks);  // poisoned until written
  lockstep::launch(shared_is_the_workers_own, kBlocks, kThreadsPerBlock)(answers.get());
  EXPECT_EQ(answers.download(), std::vector<int>(kBlocks, 1));
  static thread_local int mine = 0;
  EXPECT_TRUE(lockstep::emu::in_own_executable_tls(&mine));
  const std::vector<int> heap(4);
  EXPECT_FALSE(lockstep::emu::in_own_executable_tls(heap.data()));
  const int* theirs = nullptr;
  std::thread([&] { theirs = &mine; }).join();  // only compared, never read
  EXPECT_FALSE(lockstep::emu::in_own_executable_tls(theirs));
}
#endif

}  // namespace
