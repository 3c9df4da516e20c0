// The driver's list of what lockstep does not provide (tools/driver/
// unsupported_features) held to what lockstep does provide: its headers'
// declarations and the programs its tests build and run.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "driver/unsupported_features.h"
#include "toolchain/lexer.h"

namespace {
namespace fs = std::filesystem;
using lockstep::driver::feature_family;
using lockstep::driver::unsupported_feature_of;

const fs::path include_dir = LOCKSTEP_SOURCE_INCLUDE_DIR;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A header of lockstep's that only says its library is not emulated.
bool says_not_emulated(const std::string& text) { return text.find("#error") != std::string::npos; }

// The names `text` declares or calls as functions: an identifier before `(`.
std::set<std::string> called_or_declared(const std::string& text) {
  std::set<std::string> names;
  const auto tokens = lockstep::toolchain::code_tokens(text);
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i)
    if (tokens[i].is(lockstep::toolchain::token_kind::identifier) && tokens[i + 1].is("(")) names.emplace(tokens[i].text);
  return names;
}

// Every identifier of a program's code.
std::set<std::string> identifiers(const std::string& text) {
  std::set<std::string> names;
  for (const auto& t : lockstep::toolchain::code_tokens(text))
    if (t.is(lockstep::toolchain::token_kind::identifier)) names.emplace(t.text);
  return names;
}

}  // namespace

// A function lockstep's headers declare is not "not emulated", except CUDA
// graphs' calls, which runtime_graphs.h declares as cudaErrorNotSupported
// stubs, and the driver API's entry, which names the rest of its family.
TEST(UnsupportedFeatures, NoEntryNamesAFunctionLockstepDeclares) {
  std::size_t checked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(include_dir / "lockstep")) {
    if (!entry.is_regular_file()) continue;
    const std::string text = read_file(entry.path());
    if (says_not_emulated(text)) continue;
    const bool graph_stubs = entry.path().filename() == "runtime_graphs.h";
    for (const std::string& name : called_or_declared(text)) {
      ++checked;
      const auto* f = unsupported_feature_of(name);
      if (!f || f->family == feature_family::driver_api_remainder || f->family == feature_family::from_toolkit) continue;
      EXPECT_TRUE(graph_stubs && f->family == feature_family::graphs)
          << entry.path() << " declares " << name << ", which the list calls: " << f->what;
    }
  }
  EXPECT_GT(checked, 1000u);  // the scan saw lockstep's API
}

// A header the list names is one lockstep provides only as an #error saying so.
TEST(UnsupportedFeatures, NoEntryNamesAHeaderLockstepProvides) {
  std::size_t headers = 0;
  for (const auto& entry : fs::recursive_directory_iterator(include_dir / "lockstep" / "cuda_include")) {
    if (!entry.is_regular_file()) continue;
    ++headers;
    const auto* f = unsupported_feature_of(entry.path().stem().string());
    if (!f || f->family != feature_family::not_provided) continue;
    EXPECT_TRUE(says_not_emulated(read_file(entry.path()))) << entry.path() << " is provided, yet the list says: " << f->what;
  }
  EXPECT_GT(headers, 20u);
}

// What lockstep's test programs use runs on the emulator: no entry says it is not provided.
TEST(UnsupportedFeatures, NoEntryNamesWhatTheTestProgramsUse) {
  std::size_t programs = 0;
  for (const auto& entry : fs::directory_iterator(include_dir.parent_path() / "tests" / "programs")) {
    if (entry.path().extension() != ".cu") continue;
    ++programs;
    for (const std::string& name : identifiers(read_file(entry.path()))) {
      const auto* f = unsupported_feature_of(name);
      EXPECT_TRUE(!f || f->family == feature_family::driver_api_remainder || f->family == feature_family::from_toolkit)
          << entry.path().filename() << " uses " << name << ", which the list calls: " << f->what;
    }
  }
  EXPECT_GT(programs, 5u);
}

// The cases the list was wrong about.
TEST(UnsupportedFeatures, GraphicsInteropIpcAndThrustAreNotCalledMissing) {
  EXPECT_EQ(unsupported_feature_of("cudaGraphicsMapResources"), nullptr);
  EXPECT_EQ(unsupported_feature_of("cudaIpcOpenMemHandle"), nullptr);
  ASSERT_NE(unsupported_feature_of("thrust::sort"), nullptr);
  EXPECT_EQ(unsupported_feature_of("thrust::sort")->family, feature_family::from_toolkit);
  ASSERT_NE(unsupported_feature_of("cudaGraphAddKernelNode"), nullptr);
  EXPECT_EQ(unsupported_feature_of("cudaGraphAddKernelNode")->family, feature_family::graphs);
  ASSERT_NE(unsupported_feature_of("cufftPlan1d"), nullptr);
}
