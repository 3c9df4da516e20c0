// Check mode's behaviour beyond the planted bugs: what a report holds, which
// memory a kernel may touch, choosing checks, and what is not a finding.
#include <gtest/gtest.h>

#include <vector>

#include "check_scope.h"
#include "planted_kernels.cuh"

namespace {

using lockstep::emu::check_error;
using lockstep::emu::check_tool;
using lockstep::emu::hazard;

// The check_error a call throws; fails the test if it throws none.
template <class F>
check_error findings_of(F&& run) {
  try {
    run();
  } catch (const check_error& e) {
    return e;
  }
  ADD_FAILURE() << "no finding";
  return check_error(cudaSuccess, "", {}, 0);
}

TEST(CheckMode, ReportNamesKernelBlockThreadAddressAndAllocation) {
  check_scope checking;
  const int n = 100;
  planted::device_array<float> in(planted::ramp(n)), out(n);
  const check_error e = findings_of([&] { lockstep::launch(planted::scale_off_by_one, 2, planted::threads)(in.ptr, out.ptr, n); });
  ASSERT_EQ(e.reports().size(), 1u) << e.what();
  const auto& r = e.reports()[0];
  EXPECT_EQ(e.code(), cudaErrorIllegalAddress);
  EXPECT_EQ(cudaGetLastError(), cudaErrorIllegalAddress) << "a failed launch is the next runtime call's error, as on a GPU";
  EXPECT_EQ(r.tool, check_tool::memcheck);
  EXPECT_NE(r.kernel.find("scale_off_by_one"), std::string::npos);
  EXPECT_EQ(r.block.x, 1u);
  EXPECT_EQ(r.thread.x, 36u);  // element 100
  EXPECT_EQ(r.address, reinterpret_cast<std::uintptr_t>(in.ptr + n));
  EXPECT_EQ(r.size, 4u);
  EXPECT_FALSE(r.write);
  EXPECT_NE(r.memory.find("just past the end of cudaMalloc'd 400 bytes"), std::string::npos) << r.memory;
  EXPECT_NE(r.at.function.find("scale_off_by_one"), std::string::npos) << r.at.function;
}

TEST(CheckMode, TheEmulatorGoesOnAfterAStoppedBlock) {
  check_scope checking;
  EXPECT_THROW(planted::run_off_by_one_guard(true), check_error);
  EXPECT_NO_THROW(planted::run_off_by_one_guard(false));
  EXPECT_NO_THROW(planted::run_missing_barrier_after_read(false));
}

TEST(CheckMode, HostMemoryIsDeviceMemoryOnlyOnceRegistered) {
  check_scope checking;
  const int n = 100;
  std::vector<float> host = planted::ramp(n);
  planted::device_array<float> out(n);
  const check_error e = findings_of([&] { lockstep::launch(planted::scale, 2, planted::threads)(host.data(), out.ptr, n); });
  ASSERT_FALSE(e.reports().empty());
  EXPECT_NE(e.reports()[0].what.find("not device memory"), std::string::npos) << e.what();

  lockstep::emu::register_host_memory(host.data(), n * sizeof(float), "host");
  EXPECT_NO_THROW(lockstep::launch(planted::scale, 2, planted::threads)(host.data(), out.ptr, n));
  lockstep::emu::unregister_host_memory(host.data());
}

TEST(CheckMode, OnlyTheChosenChecksRun) {
  check_scope checking;
  lockstep::emu::options o = lockstep::emu::get_options();
  o.checks = unsigned(check_tool::memcheck);
  lockstep::emu::set_options(o);
  EXPECT_NO_THROW(planted::run_missing_barrier_after_read(true)) << "a race is not memcheck's";
  o.checks = unsigned(check_tool::racecheck);
  lockstep::emu::set_options(o);
  const check_error e = findings_of([] { planted::run_missing_barrier_after_read(true); });
  for (const auto& r : e.reports()) EXPECT_EQ(r.tool, check_tool::racecheck);
}

TEST(CheckMode, FailingApiCallsReturnTheirErrorAndAreFindings) {
  check_scope checking;
  lockstep::emu::take_api_findings();
  float* p = nullptr;
  ASSERT_EQ(cudaMalloc(&p, 64 * sizeof(float)), cudaSuccess);
  std::vector<float> host(65);
  EXPECT_EQ(cudaMemcpy(p, host.data(), 65 * sizeof(float), cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemset(p + 1, 0, 64 * sizeof(float)), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(p + 1), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(p), cudaSuccess);
  EXPECT_EQ(cudaFree(p), cudaErrorInvalidValue);
  const std::vector<lockstep::emu::check_report> found = lockstep::emu::take_api_findings();
  ASSERT_EQ(found.size(), 4u);
  for (const auto& r : found) {
    EXPECT_EQ(r.tool, check_tool::memcheck);
    EXPECT_TRUE(r.kernel.empty());
    EXPECT_NE(r.at.file.find("test_check_mode.cu"), std::string::npos) << r.str();
  }
  EXPECT_NE(found[0].what.find("cudaMemcpy failed with cudaErrorInvalidValue: 260 bytes from destination"), std::string::npos) << found[0].what;
  EXPECT_NE(found[0].what.find("run 4 bytes past the end"), std::string::npos) << found[0].what;
  EXPECT_NE(found[1].what.find("cudaMemset"), std::string::npos) << found[1].what;
  EXPECT_NE(found[2].what.find("points 4 bytes into cudaMalloc'd 256 bytes"), std::string::npos) << found[2].what;
  EXPECT_NE(found[3].what.find("freed already"), std::string::npos) << found[3].what;
  EXPECT_TRUE(lockstep::emu::take_api_findings().empty()) << "taken findings are gone";
}

// Every thread stores the same flag, or its own index, into one shared word.
__global__ void store_into_one_word(int* out, bool same_value) {
  __shared__ int flag;
  flag = same_value ? 1 : static_cast<int>(threadIdx.x);
  __syncthreads();
  out[threadIdx.x] = flag;
}

TEST(CheckMode, WritingTheValueAlreadyThereIsNoRace) {
  check_scope checking;
  planted::device_array<int> out(64);
  EXPECT_NO_THROW(lockstep::launch(store_into_one_word, 1, 64)(out.ptr, true));
  const check_error e = findings_of([&] { lockstep::launch(store_into_one_word, 1, 64)(out.ptr, false); });
  ASSERT_FALSE(e.reports().empty());
  EXPECT_EQ(e.reports()[0].race, hazard::write_after_write) << e.what();
}

// The CAS-loop idiom over global memory: each thread reads the word plainly
// as a guess and lets atomicCAS check it (here a float maximum, which CUDA
// has no atomic for). The guess is no race; a plain reset of the word while
// other blocks update it atomically is.
__global__ void global_float_max(const float* in, float* result) {
  const float mine = in[blockIdx.x * blockDim.x + threadIdx.x];
  auto* word = reinterpret_cast<int*>(result);
  int seen = *word;
  while (__int_as_float(seen) < mine) {
    const int guess = seen;
    seen = atomicCAS(word, guess, __float_as_int(mine));
    if (seen == guess) break;
  }
}
__global__ void count_with_reset(int* counter) {
  if (threadIdx.x == 0) *counter = 0;
  atomicAdd(counter, 1);
}

TEST(CheckMode, AGuessCheckedByAtomicCasIsNoRaceButAPlainResetIs) {
  for (auto order : {lockstep::emu::thread_order::forward, lockstep::emu::thread_order::reverse, lockstep::emu::thread_order::random}) {
    check_scope checking(order);
    std::vector<float> values = planted::ramp(4 * planted::threads);
    values[77] = 500.0f;
    planted::device_array<float> in(values), result(1);
    const float lowest = -1e30f;
    ASSERT_EQ(cudaMemcpy(result.ptr, &lowest, sizeof lowest, cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_NO_THROW(lockstep::launch(global_float_max, 4, planted::threads)(in.ptr, result.ptr));
    float got = 0;
    ASSERT_EQ(cudaMemcpy(&got, result.ptr, sizeof got, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(got, 500.0f);

    planted::device_array<int> counter(1);
    const check_error e = findings_of([&] { lockstep::launch(count_with_reset, 4, planted::threads)(counter.ptr); });
    ASSERT_FALSE(e.reports().empty());
    EXPECT_EQ(e.reports()[0].tool, check_tool::racecheck) << e.what();
    EXPECT_NE(e.reports()[0].what.find("atomically"), std::string::npos) << e.what();
  }
}

// wmma: warp 0 stores a tile into shared memory with store_matrix_sync, and
// warp 1 reads it, with or without the barrier between.
__global__ void wmma_tile_to_next_warp(float* out, bool barrier) {
  __shared__ float tile[16 * 16];
  if (threadIdx.x < 32) {
    nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> acc;
    nvcuda::wmma::fill_fragment(acc, 1.0f);
    nvcuda::wmma::store_matrix_sync(tile, acc, 16, nvcuda::wmma::mem_row_major);
  }
  if (barrier) __syncthreads();
  if (threadIdx.x >= 32)
    for (int i = threadIdx.x - 32; i < 16 * 16; i += 32) out[i] = tile[i];
}

// A lane that exits instead of joining its warp's store_matrix_sync.
__global__ void wmma_lane_skips_store(float* out) {
  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> acc;
  nvcuda::wmma::fill_fragment(acc, 1.0f);
  if (threadIdx.x == 5) return;
  nvcuda::wmma::store_matrix_sync(out, acc, 16, nvcuda::wmma::mem_row_major);
}

TEST(CheckMode, WmmaStoresAreCheckedAndMustBeReachedByTheWholeWarp) {
  check_scope checking;
  planted::device_array<float> out(256);
  EXPECT_NO_THROW(lockstep::launch(wmma_tile_to_next_warp, 1, 64)(out.ptr, true));
  const check_error race = findings_of([&] { lockstep::launch(wmma_tile_to_next_warp, 1, 64)(out.ptr, false); });
  ASSERT_FALSE(race.reports().empty());
  EXPECT_EQ(race.reports()[0].race, hazard::read_after_write) << race.what();
  const check_error sync = findings_of([&] { lockstep::launch(wmma_lane_skips_store, 1, 32)(out.ptr); });
  ASSERT_FALSE(sync.reports().empty());
  EXPECT_EQ(sync.reports()[0].tool, check_tool::synccheck) << sync.what();
  EXPECT_NE(sync.reports()[0].what.find("wmma::store_matrix_sync"), std::string::npos) << sync.what();
}

}  // namespace
