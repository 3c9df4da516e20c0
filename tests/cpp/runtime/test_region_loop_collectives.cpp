// The warp collectives the region-loop compiler runs as collective steps are
// one table (lockstep/emu/collectives.h): every intrinsic of sync.h that
// meets its warp (calls warp_collective) has its line there, and every line
// names one. A collective added to sync.h without its line fails here, instead
// of silently keeping its kernels on fibers (or worse, counted as waiting for
// nothing by the cheap pre-parse test).
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "emulator/compile_time/region_loops/region_loops.h"
#include "lockstep/emu/collectives.h"

namespace region_loops = lockstep::emu::region_loops;

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The end of the braces opened at text[open].
std::size_t matching_brace(const std::string& text, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < text.size(); ++i) {
    depth += text[i] == '{';
    depth -= text[i] == '}';
    if (depth == 0) return i;
  }
  return text.size();
}

// The intrinsics sync.h defines (LOCKSTEP_SYNC_WRAPPER functions, and those a
// macro of its defines per invocation) whose bodies call `primitive`.
std::set<std::string> callers_in_sync_h(const std::string& primitive) {
  const std::string text = read(std::string(LOCKSTEP_SOURCE_INCLUDE_DIR) + "/lockstep/emu/sync.h");
  std::set<std::string> found, macro_parameters;
  const std::regex definition(R"(LOCKSTEP_SYNC_WRAPPER[^{;(]*?\b(\w+)\s*\()");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), definition); it != std::sregex_iterator(); ++it) {
    const std::size_t open = text.find('{', std::size_t(it->position() + it->length()));
    if (open != std::string::npos && text.substr(open, matching_brace(text, open) - open).find(primitive) != std::string::npos)
      found.insert((*it)[1]);
  }
  // `#define LOCKSTEP_SHFL(fn, op, arg_t) ... fn(...) { warp_collective(...) }`: each invocation's first argument.
  const std::regex macro(R"(#define (\w+)\((\w+),[^\n]*\\\n((?:[^\n]*\\\n)*[^\n]*))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), macro); it != std::sregex_iterator(); ++it) {
    if ((*it)[3].str().find(primitive) == std::string::npos) continue;
    macro_parameters.insert((*it)[2]);
    const std::regex invocation("\\n" + (*it)[1].str() + R"(\((\w+),)");
    for (auto use = std::sregex_iterator(text.begin(), text.end(), invocation); use != std::sregex_iterator(); ++use) found.insert((*use)[1]);
  }
  for (const std::string& parameter : macro_parameters) found.erase(parameter);
  return found;
}

TEST(RegionLoopCollectives, EveryCollectiveOfSyncHIsInTheTableAndNoOther) {
  const std::set<std::string> declared = callers_in_sync_h("warp_collective(");
  ASSERT_GT(declared.size(), 10u);  // the scan still reads sync.h
  std::set<std::string> table(std::begin(region_loops::gathered_intrinsics), std::end(region_loops::gathered_intrinsics));
  for (const std::string& name : declared)
    EXPECT_TRUE(table.count(name)) << name << " calls warp_collective in sync.h but has no line in lockstep/emu/collectives.h";
  for (const std::string& name : table) EXPECT_TRUE(declared.count(name)) << name << " is in collectives.h but sync.h defines no such collective";
}

TEST(RegionLoopCollectives, EveryBlockVoteOfSyncHIsInTheTableAndNoOther) {
  std::set<std::string> declared;
  for (const char* reduce : {"barrier_reduce::count", "barrier_reduce::all", "barrier_reduce::any"})
    for (const std::string& name : callers_in_sync_h(reduce)) declared.insert(name);
  ASSERT_FALSE(declared.empty());  // the scan still reads sync.h
  std::set<std::string> table;
#define LOCKSTEP_VOTE_NAME(name, reduce) table.insert(#name);
  LOCKSTEP_BLOCK_VOTES(LOCKSTEP_VOTE_NAME)
#undef LOCKSTEP_VOTE_NAME
  EXPECT_EQ(declared, table) << "each barrier of sync.h that answers a vote needs its line in LOCKSTEP_BLOCK_VOTES (lockstep/emu/collectives.h)";
}

TEST(RegionLoopCollectives, ThePreParseTestSeesEachCollective) {
  for (const std::string_view name : region_loops::gathered_intrinsics) {
    EXPECT_TRUE(region_loops::mentions_synchronization("x = " + std::string(name) + "(m, v);")) << name;
  }
  EXPECT_FALSE(region_loops::mentions_synchronization("int shuffle = 1;"));
}

}  // namespace
