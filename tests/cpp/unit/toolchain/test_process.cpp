// Running a program without a shell: its output, exit status and signals.
#include <gtest/gtest.h>

#include <system_error>

#include "toolchain/process.h"

namespace {

using lockstep::toolchain::run_process;

TEST(RunProcess, CapturesOutputAndExitCode) {
  const auto result = run_process({"sh", "-c", "echo to stdout; echo to stderr >&2; exit 3"});
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_NE(result.output.find("to stdout\n"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("to stderr\n"), std::string::npos) << result.output;
  EXPECT_EQ(run_process({"true"}).exit_code, 0);
}

TEST(RunProcess, PassesArgumentsAsTheyAre) {
  const auto result = run_process({"printf", "[%s]", "two words", "'quotes\" $HOME;", ""});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.output, "[two words]['quotes\" $HOME;][]");
}

TEST(RunProcess, ReportsSignalsAndMissingPrograms) {
  EXPECT_EQ(run_process({"sh", "-c", "kill -9 $$"}).exit_code, 128 + 9);
  EXPECT_THROW(run_process({"lockstep-no-such-program"}), std::system_error);
}

TEST(RunProcess, ReadsLargeOutput) {
  // More than a pipe holds (64 KiB), so the child blocks unless it is read.
  const auto result = run_process({"head", "-c", "1000000", "/dev/zero"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.output.size(), 1000000u);
}

}  // namespace
