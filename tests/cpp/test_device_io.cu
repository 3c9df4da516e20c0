// Tests assert the line numbers of statements in this file, so it keeps its layout.
// clang-format off
// Device printf and assert, and device built-ins used where no kernel runs.
//
// A release build defines NDEBUG, which would turn the asserts under test into
// nothing; this file's asserts must stay in.
#undef NDEBUG
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_util.h"

using namespace testing_util;

namespace {

// One spelling for the device's printf and the host's expected text.
#define COORDINATES_FORMAT "block %u thread %u of %u: value %d, half %.1f\n"

// Every other thread prints its coordinates and its input value.
__global__ void print_coordinates(const int* values) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x % 2 == 0) printf(COORDINATES_FORMAT, blockIdx.x, threadIdx.x, blockDim.x, values[i], values[i] * 0.5);
}

std::string format_line(unsigned block, unsigned thread, unsigned threads, int value) {
  char line[128];
  std::snprintf(line, sizeof line, COORDINATES_FORMAT, block, thread, threads, value, value * 0.5);
  return line;
}

TEST(DeviceIo, PrintfFromThreadsReachesStdout) {
  constexpr unsigned blocks = 3, threads = 8;
  const auto values = random_vector<int>(blocks * threads, -1000000, 1000000);
  device_buffer<int> d_values(values);
  testing::internal::CaptureStdout();
  lockstep::launch(print_coordinates, blocks, threads)(d_values.get());
  const cudaError_t sync = cudaDeviceSynchronize();  // the GPU flushes its printf buffer here
  const std::string printed = testing::internal::GetCapturedStdout();
  ASSERT_EQ(sync, cudaSuccess);

  // Lines from different threads may come in any order, but each one whole.
  std::size_t expected_bytes = 0;
  for (unsigned b = 0; b < blocks; ++b)
    for (unsigned t = 0; t < threads; ++t) {
      const std::string line = format_line(b, t, threads, values[b * threads + t]);
      if (t % 2 == 0) {
        EXPECT_NE(printed.find(line), std::string::npos) << "missing: " << line << "in:\n" << printed;
        expected_bytes += line.size();
      } else {
        EXPECT_EQ(printed.find(line), std::string::npos) << "thread " << t << " printed though it should not";
      }
    }
  EXPECT_EQ(printed.size(), expected_bytes) << printed;
}

// Doubles every value, asserting first that it is positive.
__global__ void double_positive_values(const int* values, int* doubled) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  assert(values[i] > 0);
  doubled[i] = 2 * values[i];
}

TEST(DeviceIo, PassingAssertChangesNothing) {
  constexpr int blocks = 16, threads = 128;
  const auto values = random_vector<int>(blocks * threads, 1, 1000000);
  device_buffer<int> d_values(values), doubled(blocks * threads);
  (void)cudaGetLastError();  // clears an error an earlier test's launch may have left
  lockstep::launch(double_positive_values, blocks, threads)(d_values.get(), doubled.get());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<int> want;
  for (int v : values) want.push_back(2 * v);
  EXPECT_EQ(doubled.download(), want);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

#if !defined(__CUDACC__)
// On the GPU a failed device assert corrupts the context for the rest of the
// process; the emulator instead ends the launch with an exception that says
// where it failed, which is what these tests check.

// Line of the assert below, which the error message must name.
constexpr int kAssertLine = __LINE__ + 4;
__global__ void assert_all_positive(const int* values, int* doubled) {
  const int i = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x;
  const int value = values[i];
  assert(value > 0);
  doubled[i] = 2 * value;
}

TEST(DeviceIo, FailedAssertNamesKernelThreadAndExpression) {
  const dim3 grid(8, 4), block(16, 8);
  const int threads = int(grid.x * grid.y * block.x * block.y);
  auto values = random_vector<int>(threads, 1, 1000000);
  // One thread, at random, gets a value that fails the assert.
  const auto pick = random_vector<unsigned>(4, 0, 1u << 30);
  const dim3 bad_block(pick[0] % grid.x, pick[1] % grid.y), bad_thread(pick[2] % block.x, pick[3] % block.y);
  const int bad = int(((bad_block.y * grid.x + bad_block.x) * block.x * block.y) + bad_thread.y * block.x + bad_thread.x);
  values[bad] = -random_vector<int>(1, 0, 1000)[0];
  device_buffer<int> d_values(values), doubled(threads);
  (void)cudaGetLastError();

  try {
    lockstep::launch(assert_all_positive, grid, block)(d_values.get(), doubled.get());
    FAIL() << "the launch with a failing assert returned normally";
  } catch (const lockstep::kernel_error& e) {
    EXPECT_EQ(e.code(), cudaErrorAssert);
    const std::string what = e.what();
    auto expect_mentions = [&what](const std::string& part) {
      EXPECT_NE(what.find(part), std::string::npos) << "'" << part << "' is not in: " << what;
    };
    expect_mentions("assert_all_positive");
    expect_mentions("block (" + std::to_string(bad_block.x) + ", " + std::to_string(bad_block.y) + ", 0)");
    expect_mentions("thread (" + std::to_string(bad_thread.x) + ", " + std::to_string(bad_thread.y) + ", 0)");
    expect_mentions("value > 0");
    expect_mentions("test_device_io.cu:" + std::to_string(kAssertLine));
  }
  EXPECT_EQ(cudaGetLastError(), cudaErrorAssert) << "the launch records its error, as on the GPU";
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "cudaGetLastError resets it";

  // The emulator's device stays usable: a launch without a bad value works.
  values[bad] = 1;
  d_values.upload(values);
  lockstep::launch(assert_all_positive, grid, block)(d_values.get(), doubled.get());
  EXPECT_EQ(doubled.download()[bad], 2);
}

TEST(DeviceIo, BuiltInsOutsideAKernelThrow) {
  EXPECT_THROW((void)threadIdx.x, std::logic_error);
  EXPECT_THROW((void)blockIdx.x, std::logic_error);
  EXPECT_THROW((void)blockDim.x, std::logic_error);
  EXPECT_THROW((void)gridDim.x, std::logic_error);
  EXPECT_THROW(__syncthreads(), std::logic_error);
  try {
    (void)threadIdx.y;
    FAIL() << "threadIdx outside a kernel did not throw";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("threadIdx"), std::string::npos) << e.what();
  }
}
#endif

}  // namespace
