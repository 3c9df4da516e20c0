// The random seed of a test run: fresh each run, or LOCKSTEP_TEST_SEED to
// repeat one. Plain C++ (nvcc and host compilers alike).
#pragma once
#include <cstdint>
#include <cstdlib>
#include <random>

namespace testing_util {

inline std::uint64_t fresh_seed() {
  static const std::uint64_t seed = [] {
    if (const char* s = std::getenv("LOCKSTEP_TEST_SEED")) return std::uint64_t{std::strtoull(s, nullptr, 10)};
    return std::uint64_t{(std::uint64_t{std::random_device{}()} << 32) | std::random_device{}()};
  }();
  return seed;
}

}  // namespace testing_util
