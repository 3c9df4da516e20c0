// The planted-bug suite in the emulator's check mode: every bug is found by
// the right checker at the marked line, under every thread order, and its
// correct twin runs without a single finding.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "check_scope.h"
#include "planted_kernels.cuh"

namespace {

using lockstep::emu::check_error;
using lockstep::emu::check_report;
using lockstep::emu::hazard;

// Lines of planted_kernels.cuh that carry `// MARKER(name)`.
std::set<unsigned> marked_lines(const std::string& marker, const std::string& name) {
  std::ifstream source(planted::source_file);
  std::set<unsigned> lines;
  std::string text;
  for (unsigned line = 1; std::getline(source, text); ++line)
    if (text.find("// " + marker + "(" + name + ")") != std::string::npos) lines.insert(line);
  return lines;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct planted_run {
  planted::planted_case which;
  lockstep::emu::thread_order order;
};

std::string name_of(const ::testing::TestParamInfo<planted_run>& info) {
  return std::string(info.param.which.name) + "_" + lockstep::emu::to_string(info.param.order);
}

std::vector<planted_run> all_runs() {
  std::vector<planted_run> runs;
  for (const auto& c : planted::cases())
    for (auto order : {lockstep::emu::thread_order::forward, lockstep::emu::thread_order::reverse, lockstep::emu::thread_order::random})
      runs.push_back({c, order});
  return runs;
}

class Planted : public ::testing::TestWithParam<planted_run> {};

TEST_P(Planted, BugIsFoundWithItsKindAndLine) {
  const auto& [c, order] = GetParam();
  const std::set<unsigned> bug = marked_lines("BUG", c.name), peers = marked_lines("PEER", c.name);
  ASSERT_EQ(bug.size(), 1u) << "planted_kernels.cuh must mark one line BUG(" << c.name << ")";
  check_scope checking(order);
  try {
    c.run(true);
    FAIL() << c.name << ": no finding";
  } catch (const check_error& e) {
    ASSERT_FALSE(e.reports().empty()) << e.what();
    for (const check_report& r : e.reports()) EXPECT_STREQ(to_string(r.tool), c.tool) << e.what();
    const check_report& first = e.reports().front();
    EXPECT_TRUE(ends_with(first.at.file, "planted_kernels.cuh")) << e.what();
    if (first.race == hazard::none) {
      EXPECT_EQ(first.at.line, *bug.begin()) << e.what();
    } else {
      // A race has two sides; which one the checker meets second depends on
      // the thread order. Both must be marked, one of them as the bug.
      std::set<unsigned> sides{first.at.line};
      if (first.other.line) sides.insert(first.other.line);
      EXPECT_TRUE(sides.count(*bug.begin())) << e.what();
      for (unsigned line : sides) EXPECT_TRUE(line == *bug.begin() || peers.count(line)) << line << "\n" << e.what();
    }
  }
}

TEST_P(Planted, CorrectTwinHasNoFindings) {
  const auto& [c, order] = GetParam();
  check_scope checking(order);
  try {
    c.run(false);
  } catch (const check_error& e) {
    FAIL() << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, Planted, ::testing::ValuesIn(all_runs()), name_of);

TEST(PlantedSuite, HasAtLeastTwelveBugs) { EXPECT_GE(planted::cases().size(), 12u); }

}  // namespace
