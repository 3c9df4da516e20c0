// A kernel that faults ends its launch with a kernel_error naming the CUDA
// error, the kernel, block, thread, address and line, and the process goes
// on: the next launch on the device gives the right answer. Emulator only
// (the same kernels on a GPU: tests/gpu/fault_kinds.cu). Built with -g, so
// that the lines can be named.
#include <gtest/gtest.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "fault_kernels.cuh"
#include "lockstep/emu/options.h"
#include "test_util.h"

using namespace testing_util;
using namespace fault_kernels;
namespace emu = lockstep::emu;

namespace {

class with_options {
 public:
  explicit with_options(void (*change)(emu::options&)) : saved_(emu::get_options()) {
    emu::options o = saved_;
    change(o);
    emu::set_options(o);
  }
  ~with_options() { emu::set_options(saved_); }

 private:
  emu::options saved_;
};

std::string line(int n) { return "fault_kernels.cuh:" + std::to_string(n); }
std::string faulting_thread_text() {
  return "block (" + std::to_string(faulting_block) + ", 0, 0), thread (" + std::to_string(faulting_thread) + ", 0, 0)";
}

// The message of the kernel_error that `launch` throws, which must have `code`.
template <class Launch>
std::string failure_of(Launch&& launch, cudaError_t code) {
  try {
    launch();
  } catch (const lockstep::kernel_error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "the launch did not fail";
  return "";
}

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << "missing \"" << (part) << "\" in: " << (text)

// After every fault: a launch on the same device works, and the error the
// faulting launch left for cudaGetLastError is the one it threw.
void expect_device_works(cudaError_t sticky) {
  EXPECT_EQ(cudaGetLastError(), sticky);
  const int n = 1000;
  device_buffer<float> in(random_vector<float>(n)), out(n);
  lockstep::launch(add_one, (n + 127) / 128, 128)(in.get(), out.get(), n);
  const auto a = in.download(), b = out.download();
  for (int i = 0; i < n; ++i) ASSERT_EQ(b[i], a[i] + 1.0f) << i;
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

std::string read_through_failure(const float* p) {
  device_buffer<float> in(random_vector<float>(threads * blocks)), out(threads * blocks);
  return failure_of([&] { lockstep::launch(read_through, blocks, threads)(p, in.get(), out.get()); }, cudaErrorIllegalAddress);
}

TEST(Faults, NullPointerRead) {
  const std::string what = read_through_failure(nullptr);
  EXPECT_HAS(what, "cudaErrorIllegalAddress");
  EXPECT_HAS(what, "kernel 'fault_kernels::read_through(float const*, float const*, float*)'");
  EXPECT_HAS(what, faulting_thread_text());
  EXPECT_HAS(what, "reads address 0x14, a null pointer + 20");
  EXPECT_HAS(what, line(read_through_line));
  EXPECT_HAS(what, "check mode");
  expect_device_works(cudaErrorIllegalAddress);
}

// Split at its barrier, the kernel runs as loops over threads, which do not
// keep the running thread's record where nothing reads it; the block runs
// again on fibers to name the thread.
TEST(Faults, NullPointerReadAfterABarrierNamesTheThread) {
  device_buffer<float> in(random_vector<float>(threads * blocks)), out(threads * blocks);
  const std::string what =
      failure_of([&] { lockstep::launch(read_after_barrier, blocks, threads)(static_cast<const float*>(nullptr), in.get(), out.get()); },
                 cudaErrorIllegalAddress);
  EXPECT_HAS(what, faulting_thread_text());
  EXPECT_HAS(what, "reads address 0x14, a null pointer + 20");
  EXPECT_HAS(what, line(read_after_barrier_line));
  expect_device_works(cudaErrorIllegalAddress);
}

TEST(Faults, NullPointerTheCompilerSeesIsReadNotDeleted) {
  device_buffer<float> out(threads * blocks);
  const std::string what = failure_of([&] { lockstep::launch(null_literal_read, blocks, threads)(out.get()); }, cudaErrorIllegalAddress);
  EXPECT_HAS(what, "reads address 0, a null pointer");
  EXPECT_HAS(what, line(null_literal_read_line));
  expect_device_works(cudaErrorIllegalAddress);
}

// A fault that the block's second run on fibers does not repeat: the
// message says the thread is not known, and how to learn it.
TEST(Faults, AFaultTheSecondRunDoesNotRepeatSaysTheThreadIsUnknown) {
  device_buffer<int> counter(1, 0);
  device_buffer<float> out(threads);
  const std::string what =
      failure_of([&] { lockstep::launch(fault_once, 1, threads)(counter.get(), static_cast<float*>(nullptr), out.get()); }, cudaErrorIllegalAddress);
  EXPECT_HAS(what, line(fault_once_line));
  if (emu::get_options().region_loops) {
    EXPECT_HAS(what, "a thread the emulator cannot name");
    EXPECT_HAS(what, "LOCKSTEP_EMU_ENGINE=fibers");
    EXPECT_EQ(counter.download()[0], int(2 * threads));  // the block ran twice
  } else {
    EXPECT_HAS(what, "thread (" + std::to_string(faulting_thread) + ", 0, 0)");
  }
  expect_device_works(cudaErrorIllegalAddress);
}

TEST(Faults, NullPointerWriteKeepsWhatWasWrittenBefore) {
  device_buffer<float> out(threads * blocks, 0);
  const std::string what =
      failure_of([&] { lockstep::launch(write_through, blocks, threads)(static_cast<float*>(nullptr), out.get()); }, cudaErrorIllegalAddress);
  EXPECT_HAS(what, "writes address 0x14, a null pointer + 20");
  EXPECT_HAS(what, faulting_thread_text());
  EXPECT_HAS(what, line(write_through_line));
  // Workers = 1 would make this exact; with several, at least the faulting
  // thread's own earlier store is there, and nothing is written past it.
  const auto written = out.download();
  EXPECT_EQ(written[faulting_block * threads + faulting_thread], 1.0f);
  expect_device_works(cudaErrorIllegalAddress);
}

TEST(Faults, WildPointer) {
  const auto wild = reinterpret_cast<const float*>(std::uintptr_t{0x100000000000});  // 16 TiB: mapped by nothing
  const std::string what = read_through_failure(wild);
  EXPECT_HAS(what, "reads address 0x100000000014");
  EXPECT_HAS(what, line(read_through_line));
  expect_device_works(cudaErrorIllegalAddress);
}

TEST(Faults, NonCanonicalPointer) {
  const auto garbage = reinterpret_cast<const float*>(std::uintptr_t{0xdeadbeefdeadbeef});
  const std::string what = read_through_failure(garbage);
  EXPECT_HAS(what, "address 0xdeadbeefdeadbf03");  // + 5 floats: the instruction's own operand, decoded
  EXPECT_HAS(what, "not canonical");
  EXPECT_HAS(what, faulting_thread_text());
  EXPECT_HAS(what, line(read_through_line));
  expect_device_works(cudaErrorIllegalAddress);
}

TEST(Faults, StoreFarPastAnArray) {
  const int n = 256;
  device_buffer<float> a(n, 0);
  const long long far = 16ll << 20;  // 64 MiB past the end
  const std::string what = failure_of([&] { lockstep::launch(store_past, blocks, threads)(a.get(), n, far); }, cudaErrorIllegalAddress);
  EXPECT_HAS(what, "writes address");
  EXPECT_HAS(what, "bytes past the end of the cudaMalloc'd buffer of");
  EXPECT_HAS(what, faulting_thread_text());
  EXPECT_HAS(what, line(store_past_line));
  expect_device_works(cudaErrorIllegalAddress);
}

TEST(Faults, IntegerDivisionByZero) {
  const int n = threads * blocks;
  std::vector<int> numerator(n, 100), denominator(n, 3);
  denominator[faulting_block * threads + faulting_thread] = 0;
  device_buffer<int> num(numerator), den(denominator), out(n);
  const std::string what = failure_of([&] { lockstep::launch(divide, blocks, threads)(num.get(), den.get(), out.get()); }, cudaErrorLaunchFailure);
  EXPECT_HAS(what, "divided an integer by zero");
  EXPECT_HAS(what, "a GPU does not");
  EXPECT_HAS(what, faulting_thread_text());
  EXPECT_HAS(what, line(divide_line));
  expect_device_works(cudaErrorLaunchFailure);
}

void expect_stack_overflow(const std::string& what, unsigned thread = faulting_thread) {
  EXPECT_HAS(what, "overflowed its stack of 256 KiB");
  EXPECT_HAS(what, "thread (" + std::to_string(thread) + ", 0, 0)");
  EXPECT_HAS(what, "LOCKSTEP_EMU_STACK_KIB");
  EXPECT_HAS(what, "stack_kib=");
}

TEST(Faults, DeepRecursionWithABarrier) {
  with_options o([](emu::options& x) { x.stack_bytes = 256 * 1024; });
  device_buffer<int> out(threads);
  const std::string what =
      failure_of([&] { lockstep::launch(deep_recursion_with_barrier, 1, threads)(out.get(), 1 << 20); }, cudaErrorIllegalAddress);
  expect_stack_overflow(what);
  EXPECT_HAS(what, "in fault_kernels::recurse(int)");
  expect_device_works(cudaErrorIllegalAddress);
}

TEST(Faults, DeepRecursionWithoutABarrier) {
  with_options o([](emu::options& x) { x.stack_bytes = 256 * 1024; });
  device_buffer<int> out(threads);
  const std::string what = failure_of([&] { lockstep::launch(deep_recursion, 1, threads)(out.get(), 1 << 20); }, cudaErrorIllegalAddress);
  expect_stack_overflow(what);
  EXPECT_HAS(what, "in fault_kernels::recurse(int)");
  expect_device_works(cudaErrorIllegalAddress);
}

TEST(Faults, LargeLocalArrayWithBarriers) {
  with_options o([](emu::options& x) { x.stack_bytes = 256 * 1024; });
  device_buffer<int> in(std::vector<int>(threads, 7)), out(threads);
  const std::string what = failure_of([&] { lockstep::launch(large_local_array, 1, threads)(in.get(), out.get()); }, cudaErrorIllegalAddress);
  expect_stack_overflow(what, 0);  // every thread has the array: the first to run overflows
  EXPECT_HAS(what, "in fault_kernels::large_local_array(int const*, int*)");
  expect_device_works(cudaErrorIllegalAddress);
}

TEST(Faults, LargeLocalArrayRunsWithALargerStack) {
  with_options o([](emu::options& x) { x.stack_bytes = 1024 * 1024; });
  device_buffer<int> in(std::vector<int>(threads, 7)), out(threads);
  lockstep::launch(large_local_array, 1, threads)(in.get(), out.get());
  EXPECT_EQ(out.download(), std::vector<int>(threads, 7));
}

TEST(Faults, MisalignedFloat4Load) {
  device_buffer<float> in(random_vector<float>(32));
  device_buffer<float4> out(4);
  const std::string what = failure_of([&] { lockstep::launch(misaligned_float4, 1, 32)(in.get(), out.get()); }, cudaErrorMisalignedAddress);
  EXPECT_HAS(what, "not a multiple of 16");
  EXPECT_HAS(what, "thread (0, 0, 0)");
  EXPECT_HAS(what, "byte 4 of the cudaMalloc'd buffer of 128 bytes");  // in + 1
  EXPECT_HAS(what, line(misaligned_line));
  expect_device_works(cudaErrorMisalignedAddress);
}

TEST(Faults, ExternSharedWithoutDynamicBytes) {
  device_buffer<float> in(random_vector<float>(64)), out(64);
  const std::string what = failure_of([&] { lockstep::launch(reverse_in_shared, 2, 32)(in.get(), out.get()); }, cudaErrorIllegalAddress);
  EXPECT_HAS(what,
             "kernel 'fault_kernels::reverse_in_shared(float const*, float*)' uses extern __shared__ memory but was launched with 0 "
             "bytes of dynamic shared memory");
  EXPECT_HAS(what, "thread (0, 0, 0)");
  EXPECT_HAS(what, line(extern_shared_line));
  EXPECT_HAS(what, "third argument");
  expect_device_works(cudaErrorIllegalAddress);
}

TEST(Faults, ExternSharedPastItsDynamicBytes) {
  device_buffer<float> in(random_vector<float>(64)), out(64);
  const std::string what = failure_of([&] { lockstep::launch(reverse_in_shared, 2, 32, 64)(in.get(), out.get()); }, cudaErrorIllegalAddress);
  EXPECT_HAS(what, "writes just past the end of the 64 bytes of dynamic shared memory it was launched with");
  EXPECT_HAS(what, "thread (16, 0, 0)");  // the first whose float lies past 64 bytes
  EXPECT_HAS(what, line(extern_shared_line));
  expect_device_works(cudaErrorIllegalAddress);
}

TEST(Faults, ExternSharedWithEnoughBytesWorks) {
  const auto values = random_vector<float>(64);
  device_buffer<float> in(values), out(64);
  lockstep::launch(reverse_in_shared, 2, 32, 32 * sizeof(float))(in.get(), out.get());
  const auto reversed = out.download();
  for (int i = 0; i < 64; ++i) EXPECT_EQ(reversed[i], values[i / 32 * 32 + 31 - i % 32]) << i;
}

TEST(Faults, Trap) {
  device_buffer<int> out(threads * blocks);
  const std::string what = failure_of([&] { lockstep::launch(trap_in_one_thread, blocks, threads)(out.get()); }, cudaErrorLaunchFailure);
  EXPECT_HAS(what, "cudaErrorLaunchFailure");
  EXPECT_HAS(what, "__trap() called at");
  EXPECT_HAS(what, line(trap_line));
  EXPECT_HAS(what, faulting_thread_text());
  expect_device_works(cudaErrorLaunchFailure);
}

TEST(Faults, FailedAssert) {
  std::vector<int> values(threads * blocks, 1);
  values[faulting_block * threads + faulting_thread] = 99;
  device_buffer<int> in(values);
  const std::string what = failure_of([&] { lockstep::launch(assert_below, blocks, threads)(in.get(), 10); }, cudaErrorAssert);
  EXPECT_HAS(what, "device assertion `in[i] < limit` failed");
  EXPECT_HAS(what, line(assert_line));
  EXPECT_HAS(what, faulting_thread_text());
  expect_device_works(cudaErrorAssert);
}

// On one worker, a kernel run as loops runs its first block on a fiber and
// the rest straight on the loop stack (block_runner::run_claimed): faults,
// traps and asserts there name their thread just the same.
TEST(Faults, LaterBlocksOfALoopedKernelNameTheirThread) {
  with_options one_worker([](emu::options& o) { o.workers = 1; });
  {
    device_buffer<float> in(random_vector<float>(threads * blocks)), out(threads * blocks);
    const std::string what =
        failure_of([&] { lockstep::launch(read_after_barrier, blocks, threads)(static_cast<const float*>(nullptr), in.get(), out.get()); },
                   cudaErrorIllegalAddress);
    EXPECT_HAS(what, faulting_thread_text());
    EXPECT_HAS(what, line(read_after_barrier_line));
    expect_device_works(cudaErrorIllegalAddress);
  }
  {
    device_buffer<int> out(threads * blocks);
    const std::string what = failure_of([&] { lockstep::launch(trap_in_one_thread, blocks, threads)(out.get()); }, cudaErrorLaunchFailure);
    EXPECT_HAS(what, "__trap() called at");
    EXPECT_HAS(what, faulting_thread_text());
    expect_device_works(cudaErrorLaunchFailure);
  }
  {
    std::vector<int> values(threads * blocks, 1);
    values[faulting_block * threads + faulting_thread] = 99;
    device_buffer<int> in(values);
    const std::string what = failure_of([&] { lockstep::launch(assert_below, blocks, threads)(in.get(), 10); }, cudaErrorAssert);
    EXPECT_HAS(what, "device assertion `in[i] < limit` failed");
    EXPECT_HAS(what, faulting_thread_text());
    expect_device_works(cudaErrorAssert);
  }
  {
    // Dynamic shared memory, prepared for each block.
    const auto values = random_vector<float>(96);
    device_buffer<float> in(values), out(96);
    lockstep::launch(reverse_in_shared, 3, 32, 32 * sizeof(float))(in.get(), out.get());
    const auto reversed = out.download();
    for (int i = 0; i < 96; ++i) EXPECT_EQ(reversed[i], values[i / 32 * 32 + 31 - i % 32]) << i;
  }
}

// A run of blocks along x as one call (loop_claim): the fault in the 13th
// block of a run names that block.
TEST(Faults, BlocksRunAlongXAsOneNameTheFaultingBlock) {
  with_options one_worker([](emu::options& o) { o.workers = 1; });
  constexpr int many_blocks = 2048, bad_block = 300;  // a chunk of 32 blocks: runs [288, 320)
  device_buffer<float> in(random_vector<float>(threads * many_blocks)), out(threads * many_blocks);
  const std::string what = failure_of(
      [&] {
        lockstep::launch(read_through_global_index, many_blocks, threads)(static_cast<const float*>(nullptr), in.get(), out.get(),
                                                                          int(bad_block * threads + faulting_thread));
      },
      cudaErrorIllegalAddress);
  EXPECT_HAS(what, "block (" + std::to_string(bad_block) + ", 0, 0), thread (" + std::to_string(faulting_thread) + ", 0, 0)");
  EXPECT_HAS(what, line(read_through_global_index_line));
  expect_device_works(cudaErrorIllegalAddress);
}

__global__ void call_abort(int* out) {
  out[threadIdx.x] = 1;
  if (threadIdx.x == 3) std::abort();
}

TEST(Faults, Abort) {
  device_buffer<int> out(32);
  const std::string what = failure_of([&] { lockstep::launch(call_abort, 1, 32)(out.get()); }, cudaErrorAssert);
  EXPECT_HAS(what, "called abort()");
  EXPECT_HAS(what, "thread (3, 0, 0)");
  EXPECT_HAS(what, "test_faults.cu:");
  expect_device_works(cudaErrorAssert);
}

// What a handler installed after lockstep's does when it catches a kernel's
// fault and passes it on (LLVM's and Python's crash handlers do): raise it
// again. The signal then carries no address, and the message must not make one up.
__global__ void raise_segv(int* out) {
  out[threadIdx.x] = 1;
  if (threadIdx.x == 5) raise(SIGSEGV);
}

TEST(Faults, ASentFaultSignalIsNotTakenForAnAccess) {
  device_buffer<int> out(32);
  const std::string what = failure_of([&] { lockstep::launch(raise_segv, 1, 32)(out.get()); }, cudaErrorLaunchFailure);
  EXPECT_HAS(what, "thread (5, 0, 0)");
  EXPECT_HAS(what, "sent with kill() or raise()");
  EXPECT_EQ(what.find("address 0x"), std::string::npos) << what;
  expect_device_works(cudaErrorLaunchFailure);
}

// A kernel that never ends, stopped by `stop` once its loop runs; the launch
// must end within a second of that.
template <class Stop>
std::string stopped_spin(Stop&& stop, cudaError_t code, bool interrupted) {
  device_buffer<int> flag(1, 0), started(1, 0);
  std::atomic<bool> done{false};
  std::thread stopper([&] {
    volatile int* seen = started.get();
    while (!*seen && !done) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    stop();
  });
  std::string what;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    lockstep::launch(spin_until_set, 4, 32)(flag.get(), started.get());
    ADD_FAILURE() << "the launch did not fail";
  } catch (const lockstep::launch_interrupted& e) {
    EXPECT_TRUE(interrupted) << e.what();
    EXPECT_EQ(e.code(), code);
    what = e.what();
  } catch (const lockstep::kernel_error& e) {
    EXPECT_FALSE(interrupted) << e.what();
    EXPECT_EQ(e.code(), code);
    what = e.what();
  }
  done = true;
  stopper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  return what;
}

TEST(Faults, InfiniteLoopEndsAtTheTimeLimit) {
  with_options o([](emu::options& x) { x.timeout_seconds = 0.5; });
  const auto t0 = std::chrono::steady_clock::now();
  const std::string what = stopped_spin([] {}, cudaErrorLaunchTimeout, false);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(500));
  EXPECT_HAS(what, "cudaErrorLaunchTimeout");
  EXPECT_HAS(what, "time limit of 0.5 s");
  // As loops, the block's record of its running thread lags behind, and the block does not run again.
  EXPECT_HAS(what, emu::get_options().region_loops ? "a thread the emulator cannot name" : "thread (0, 0, 0)");
  EXPECT_HAS(what, line(spin_line));
  EXPECT_HAS(what, "LOCKSTEP_EMU_TIMEOUT");
  expect_device_works(cudaErrorLaunchTimeout);
}

TEST(Faults, InfiniteLoopStoppedBySigint) {
  std::chrono::steady_clock::time_point sent;
  const std::string what = stopped_spin(
      [&] {
        sent = std::chrono::steady_clock::now();
        kill(getpid(), SIGINT);  // to the process, as Ctrl-C sends it
      },
      cudaErrorLaunchFailure, true);
  EXPECT_LT(std::chrono::steady_clock::now() - sent, std::chrono::seconds(1));
  EXPECT_HAS(what, "interrupted (SIGINT)");
  EXPECT_HAS(what, line(spin_line));
  expect_device_works(cudaSuccess);  // an interrupt is not the kernel's error
}

TEST(Faults, ManyFaultsInARow) {
  for (int i = 0; i < 50; ++i) {
    read_through_failure(nullptr);
    ASSERT_EQ(cudaGetLastError(), cudaErrorIllegalAddress);
  }
  expect_device_works(cudaSuccess);
}

// --- faults outside kernels stay the program's ------------------------------

std::atomic<int> host_handler_calls{0};
sigjmp_buf host_landing;

void host_handler(int, siginfo_t*, void*) {
  ++host_handler_calls;
  siglongjmp(host_landing, 1);
}

// In a child process, so that this handler is installed before lockstep's.
TEST(FaultsOutsideKernels, GoToTheHandlerThatWasThereBefore) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: lockstep not yet installed
  EXPECT_EXIT(
      {
        struct sigaction sa {};
        sa.sa_sigaction = host_handler;
        sa.sa_flags = SA_SIGINFO | SA_NODEFER;
        sigaction(SIGSEGV, &sa, nullptr);
        read_through_failure(nullptr);  // lockstep's handler goes in front, and takes the kernel's fault
        std::thread host([] {
          if (!sigsetjmp(host_landing, 1)) *static_cast<volatile int*>(nullptr) = 1;  // a host bug, on a thread
        });
        host.join();
        read_through_failure(nullptr);  // still the kernel's
        std::_Exit(host_handler_calls == 1 ? 0 : 10 + host_handler_calls);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(FaultsOutsideKernels, CrashTheProcessAsBefore) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        read_through_failure(nullptr);
        *static_cast<volatile int*>(nullptr) = 1;
      },
      ::testing::KilledBySignal(SIGSEGV), "");
}

TEST(FaultsOutsideKernels, SigintOutsideALaunchKillsAsBefore) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        read_through_failure(nullptr);
        raise(SIGINT);
        std::_Exit(0);
      },
      ::testing::KilledBySignal(SIGINT), "");
}

}  // namespace
