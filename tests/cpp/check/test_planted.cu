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

// The findings of one run: a launch's check_error, or failing CUDA API calls.
std::vector<check_report> findings_of(const planted::planted_case& c, bool bug, std::string& text) {
  lockstep::emu::take_api_findings();  // none left from an earlier test
  try {
    c.run(bug);
  } catch (const check_error& e) {
    text = e.what();
    return e.reports();
  }
  std::vector<check_report> api = lockstep::emu::take_api_findings();
  for (const check_report& r : api) text += r.str() + "\n";
  return api;
}

TEST_P(Planted, BugIsFoundWithItsKindAndLine) {
  const auto& [c, order] = GetParam();
  const std::set<unsigned> bug = marked_lines("BUG", c.name), peers = marked_lines("PEER", c.name);
  ASSERT_EQ(bug.size(), 1u) << "planted_kernels.cuh must mark one line BUG(" << c.name << ")";
  check_scope checking(order);
  std::string text;
  const std::vector<check_report> reports = findings_of(c, true, text);
  ASSERT_FALSE(reports.empty()) << c.name << ": no finding";
  for (const check_report& r : reports) EXPECT_STREQ(to_string(r.tool), c.tool) << text;
  const check_report& first = reports.front();
  EXPECT_TRUE(ends_with(first.at.file, "planted_kernels.cuh")) << text;
  if (first.race == hazard::none) {
    EXPECT_EQ(first.at.line, *bug.begin()) << text;
  } else {
    // A race has two sides; which one the checker meets second depends on
    // the thread order. Both must be marked, one of them as the bug.
    std::set<unsigned> sides{first.at.line};
    if (first.other.line) sides.insert(first.other.line);
    EXPECT_TRUE(sides.count(*bug.begin())) << text;
    for (unsigned line : sides) EXPECT_TRUE(line == *bug.begin() || peers.count(line)) << line << "\n" << text;
  }
}

TEST_P(Planted, CorrectTwinHasNoFindings) {
  const auto& [c, order] = GetParam();
  check_scope checking(order);
  std::string text;
  EXPECT_TRUE(findings_of(c, false, text).empty()) << text;
}

INSTANTIATE_TEST_SUITE_P(Cases, Planted, ::testing::ValuesIn(all_runs()), name_of);

TEST(PlantedSuite, HasAtLeastTwelveBugs) { EXPECT_GE(planted::cases().size(), 12u); }

}  // namespace
