// Check mode with kernels compiled normally: synccheck needs no
// instrumentation; the memory checks refuse to run rather than see nothing.
#include <gtest/gtest.h>

#include <algorithm>

#include "check_scope.h"
#include "lockstep/emu/check.h"
#include "planted_kernels.cuh"

namespace {

using lockstep::emu::check_tool;

TEST(CheckOptions, ParsesLockstepCheck) {
  EXPECT_EQ(lockstep::emu::parse_checks("1"), lockstep::emu::all_checks);
  EXPECT_EQ(lockstep::emu::parse_checks("0"), 0u);
  EXPECT_EQ(lockstep::emu::parse_checks("memcheck,initcheck"), unsigned(check_tool::memcheck) | unsigned(check_tool::initcheck));
  EXPECT_THROW(lockstep::emu::parse_checks("memcheck,leakcheck"), std::invalid_argument);
  EXPECT_EQ(lockstep::emu::checks_to_string(unsigned(check_tool::racecheck) | unsigned(check_tool::synccheck)), "racecheck,synccheck");
}

TEST(CheckOptions, CompileFlagsAreCMakesOwn) {
  const std::vector<std::string> flags = lockstep::emu::check_compile_flags();
  for (const char* flag : {"-g", "-fsanitize=thread", "-fsanitize=bounds"})
    EXPECT_NE(std::find(flags.begin(), flags.end(), flag), flags.end()) << flag;
}

TEST(CheckOptions, MemoryChecksNeedAKernelCompiledForCheckMode) {
  check_scope checking;
  try {
    planted::run_off_by_one_guard(false);
    FAIL() << "checked a kernel it cannot see";
  } catch (const lockstep::launch_error& e) {
    EXPECT_NE(std::string(e.what()).find("not compiled for check mode"), std::string::npos) << e.what();
    for (const std::string& flag : lockstep::emu::check_compile_flags())  // the flags to use, all of them
      EXPECT_NE(std::string(e.what()).find(flag), std::string::npos) << flag << " missing from: " << e.what();
  }
}

TEST(CheckOptions, SynccheckAloneWorksOnAnyKernel) {
  check_scope checking;
  lockstep::emu::options o = lockstep::emu::get_options();
  o.checks = unsigned(check_tool::synccheck);
  lockstep::emu::set_options(o);
  try {
    planted::run_barrier_in_branch(true);
    FAIL() << "no finding";
  } catch (const lockstep::emu::check_error& e) {
    EXPECT_EQ(e.reports().at(0).tool, check_tool::synccheck) << e.what();
  }
  EXPECT_NO_THROW(planted::run_barrier_in_branch(false));
}

}  // namespace
