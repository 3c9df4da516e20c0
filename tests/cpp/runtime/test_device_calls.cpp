// The runtime's public calls for code that manages device memory itself (the
// tensor layer): copies and fills by address, the multiprocessor count, and
// the NVIDIA library calls (TMA descriptors, cuBLAS), which refuse the
// emulator and, on a GPU, compute what they say.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "lockstep/cuda_libraries.h"
#include "lockstep/runtime.h"

namespace {

using lockstep::buffer;
using lockstep::device;

std::vector<device> devices_here() {
  std::vector<device> all{device::cpu()};
  if (lockstep::cuda_available()) all.push_back(device::cuda(0));
  return all;
}

TEST(DeviceCalls, CopiesAndFillsByAddress) {
  for (const device& d : devices_here()) {
    SCOPED_TRACE(d.str());
    std::vector<int> host(100);
    std::iota(host.begin(), host.end(), 7);
    buffer a(d, host.size() * sizeof(int)), b(d, host.size() * sizeof(int));
    lockstep::copy_to_device(d, a.data(), host.data(), host.size() * sizeof(int));
    // Into the middle of b, from the middle of a.
    lockstep::fill_bytes(d, b.data(), 0xab, b.bytes());
    lockstep::copy_on_device(d, b.data_as<int>() + 10, a.data_as<int>() + 20, 30 * sizeof(int));
    std::vector<int> back(host.size());
    lockstep::copy_to_host(d, back.data(), b.data(), b.bytes());
    int filled;
    std::memset(&filled, 0xab, sizeof filled);
    for (std::size_t i = 0; i < back.size(); ++i) EXPECT_EQ(back[i], i >= 10 && i < 40 ? host[i + 10] : filled) << "element " << i;
  }
}

TEST(DeviceCalls, MultiprocessorCount) {
  EXPECT_EQ(lockstep::multiprocessor_count(device::cpu()), 1);
  if (lockstep::cuda_available()) EXPECT_GT(lockstep::multiprocessor_count(device::cuda(0)), 1);
}

TEST(DeviceCalls, LibraryCallsRefuseTheEmulator) {
  buffer a(device::cpu(), 64 * 64 * sizeof(float));
  auto expect_refused = [](auto&& call) {
    try {
      call();
      ADD_FAILURE() << "did not throw";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("cuda devices"), std::string::npos) << e.what();
    }
  };
  expect_refused([&] {
    lockstep::encode_tma_2d(device::cpu(), a.data(), lockstep::jit::scalar_type::float32, 64, 64, 256, 64, 32, lockstep::tma_swizzle::bytes_128);
  });
  expect_refused([&] { lockstep::cublas_sgemm_row_major(device::cpu(), a.data_as<float>(), a.data_as<float>(), a.data_as<float>(), 8, 8, 8); });
  expect_refused([&] {
    lockstep::cublas_gemm_row_major_nt(device::cpu(), lockstep::tensor_core_precision::tf32, a.data(), 8, a.data(), 8, a.data(), 8, 8, 8, 8);
  });
}

// On a GPU: SGEMM of small matrices against the host product, and a TMA
// descriptor that the driver fills in.
TEST(DeviceCalls, CublasAndTmaOnAGpu) {
  if (!lockstep::cuda_available()) GTEST_SKIP() << "no GPU: " << lockstep::cuda_unavailable_reason();
  const device gpu = device::cuda(0);
  const int m = 5, n = 7, k = 3;
  std::vector<float> a(m * k), b(k * n), want(m * n, 0.0f);
  std::iota(a.begin(), a.end(), 1.0f);
  std::iota(b.begin(), b.end(), -4.0f);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int p = 0; p < k; ++p) want[i * n + j] += a[i * k + p] * b[p * n + j];
  buffer da = buffer::from_host(gpu, a), db = buffer::from_host(gpu, b), dc(gpu, want.size() * sizeof(float));
  lockstep::cublas_sgemm_row_major(gpu, da.data_as<float>(), db.data_as<float>(), dc.data_as<float>(), m, n, k);
  EXPECT_EQ(dc.to_host<float>(), want);

  buffer matrix(gpu, 256 * 64 * sizeof(float));
  const lockstep::tma_descriptor map = lockstep::encode_tma_2d(gpu, matrix.data(), lockstep::jit::scalar_type::float32, 256, 64, 64 * sizeof(float),
                                                               128, 32, lockstep::tma_swizzle::bytes_128);
  EXPECT_TRUE(std::any_of(std::begin(map.bytes), std::end(map.bytes), [](unsigned char c) { return c != 0; }));
}

}  // namespace
