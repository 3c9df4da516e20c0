// Helpers for the kernel tests; the same text builds with nvcc and with the
// host compiler (where lockstep/cuda.h maps the runtime API onto the emulator).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "lockstep/cuda.h"
#include "test_seed.h"

#define CUDA_OK(expr) ASSERT_EQ((expr), cudaSuccess) << #expr

namespace testing_util {

// One engine per run, seeded by fresh_seed() (test_seed.h), which failures
// print so the run can be repeated.
inline std::mt19937_64& rng() {
  static std::mt19937_64 engine(fresh_seed());
  return engine;
}

template <class T>
std::vector<T> random_vector(std::size_t n, double lo = -1.0, double hi = 1.0) {
  std::vector<T> v(n);
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<double> d(lo, hi);
    for (auto& x : v) x = static_cast<T>(d(rng()));
  } else {
    std::uniform_int_distribution<long long> d(static_cast<long long>(lo), static_cast<long long>(hi));
    for (auto& x : v) x = static_cast<T>(d(rng()));
  }
  return v;
}

// Device memory that is filled with a poison byte pattern until written, so
// an element a kernel forgot to write fails the comparison.
template <class T>
class device_buffer {
 public:
  explicit device_buffer(std::size_t n, unsigned char poison = 0xff) : n_(n) {
    if (cudaMalloc(reinterpret_cast<void**>(&ptr_), bytes()) != cudaSuccess) throw std::bad_alloc();
    cudaMemset(ptr_, poison, bytes());
  }
  explicit device_buffer(const std::vector<T>& host) : device_buffer(host.size()) { upload(host); }
  ~device_buffer() { cudaFree(ptr_); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;

  void upload(const std::vector<T>& host) { cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice); }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    cudaDeviceSynchronize();
    cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost);
    return host;
  }
  T* get() const { return ptr_; }
  operator T*() const { return ptr_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  std::size_t n_;
};

// ||out - ref|| / ||ref|| in double; NaN (an unwritten, poisoned element)
// makes it NaN, which fails every comparison.
template <class T>
double relative_error(const std::vector<T>& out, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double d = static_cast<double>(out[i]) - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  return std::sqrt(num) / std::sqrt(den > 0 ? den : 1.0);
}

template <class T>
::testing::AssertionResult close_to(const std::vector<T>& out, const std::vector<double>& ref, double tolerance) {
  const double error = relative_error(out, ref);
  if (error <= tolerance) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "relative error " << error << " exceeds " << tolerance << " (seed " << fresh_seed()
                                       << "; rerun with LOCKSTEP_TEST_SEED to repeat)";
}

}  // namespace testing_util

#define EXPECT_CLOSE(out, ref, tol) EXPECT_TRUE(::testing_util::close_to((out), (ref), (tol)))
