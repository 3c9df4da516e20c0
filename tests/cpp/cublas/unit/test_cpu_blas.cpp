// The CPU BLAS loader behind the emulator's cuBLAS: which libraries it tries,
// what it says when none loads, and LOCKSTEP_BLAS.
#include <gtest/gtest.h>

#include <cstdlib>

#include "cpu_blas.h"

using namespace lockstep::emu::cublas;

namespace {

TEST(CpuBlas, ProcessBlasLoadsWithEveryEntryPoint) {
  const cpu_blas& blas = the_cpu_blas();
  ASSERT_TRUE(blas.unavailable_reason.empty()) << blas.unavailable_reason;
  EXPECT_NE(blas.sgemm, nullptr);
  EXPECT_NE(blas.idamax, nullptr);
  std::printf("CPU BLAS: %s\n", blas.library.c_str());
  // A 2x2 product through the loaded entry point.
  const float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8};
  float c[4] = {};
  blas.sgemm(cblas_col_major, cblas_no_trans, cblas_no_trans, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2);
  EXPECT_EQ(c[0], 1 * 5 + 3 * 6);
  EXPECT_EQ(c[3], 2 * 7 + 4 * 8);
}

TEST(CpuBlas, NoneLoadsSaysWhatWasTriedAndWhatToInstall) {
  const cpu_blas blas = load_cpu_blas({"/nonexistent/libopenblas.so.0", "libc.so.6"});
  EXPECT_EQ(blas.sgemm, nullptr);
  const std::string& why = blas.unavailable_reason;
  EXPECT_NE(why.find("/nonexistent/libopenblas.so.0"), std::string::npos) << why;
  EXPECT_NE(why.find("libc.so.6 lacks cblas_sgemm"), std::string::npos) << why;
  EXPECT_NE(why.find("apt install libopenblas0"), std::string::npos) << why;
  EXPECT_NE(why.find("LOCKSTEP_BLAS"), std::string::npos) << why;
}

TEST(CpuBlas, LockstepBlasComesFirstAndAFailureIsReported) {
  ASSERT_EQ(setenv("LOCKSTEP_BLAS", "/nonexistent/libblas.so", 1), 0);
  const std::vector<std::string> candidates = cpu_blas_candidates();
  unsetenv("LOCKSTEP_BLAS");
  ASSERT_FALSE(candidates.empty());
  EXPECT_EQ(candidates.front(), "/nonexistent/libblas.so");
  const cpu_blas blas = load_cpu_blas(candidates);
  ASSERT_TRUE(blas.unavailable_reason.empty()) << blas.unavailable_reason;
  EXPECT_NE(blas.warning.find("/nonexistent/libblas.so"), std::string::npos) << blas.warning;
  EXPECT_NE(blas.warning.find("using " + blas.library), std::string::npos) << blas.warning;
}

TEST(CpuBlas, WithoutLockstepBlasOpenBlasIsTriedFirst) {
  unsetenv("LOCKSTEP_BLAS");
  const std::vector<std::string> candidates = cpu_blas_candidates();
  ASSERT_GE(candidates.size(), 2u);
  EXPECT_EQ(candidates[0], "libopenblas.so.0");
}

}  // namespace
