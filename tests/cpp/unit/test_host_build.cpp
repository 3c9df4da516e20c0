// The emulator build room (src/host_build): the decisions the JIT and lockstep
// nvcc share, with each caller's differences as named parameters.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "emulator/compile_time/region_loops/region_loops.h"
#include "host_build/flags.h"
#include "host_build/headers.h"
#include "host_build/region_loops_build.h"
#include "lockstep/emu/check.h"

namespace {
namespace hb = lockstep::host_build;

constexpr hb::split_policy jit{.parse_only_if_mentions_barrier = false, .honour_engine_option = true};
constexpr hb::split_policy driver{.parse_only_if_mentions_barrier = true, .honour_engine_option = false};
constexpr const char* barrier_kernel = "__global__ void k(float* p) { __syncthreads(); }";
constexpr const char* plain_kernel = "__global__ void k(float* p) { p[threadIdx.x] = 0; }";

bool contains(const std::vector<std::string>& flags, const std::string& f) { return std::find(flags.begin(), flags.end(), f) != flags.end(); }

// Sets an environment variable for one test, as it was afterwards.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~scoped_env() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};
}  // namespace

TEST(HostBuild, ChecksAndTheEngineDecideWhetherBlocksRunAsLoops) {
  static_assert(lockstep::emu::blocks_may_run_as_loops({}));
  static_assert(!lockstep::emu::blocks_may_run_as_loops({.checked = true}));
  static_assert(!lockstep::emu::blocks_may_run_as_loops({.region_loops_option = false}));
  static_assert(!lockstep::emu::blocks_may_run_as_loops({.forward_order = false}));
  static_assert(!lockstep::emu::blocks_may_run_as_loops({.grid_sync = true}));
}

TEST(HostBuild, CheckModeNeverSplits) {
  for (const auto& policy : {jit, driver})
    EXPECT_FALSE(hb::should_split({.checked = true, .has_precompiled_prelude = true, .own_text = barrier_kernel}, policy));
}

TEST(HostBuild, TheEngineOptionCountsForTheJitOnly) {
  const hb::split_inputs fibers{.engine_allows_loops = false, .own_text = barrier_kernel};
  EXPECT_FALSE(hb::should_split(fibers, jit));
  EXPECT_TRUE(hb::should_split(fibers, driver));  // the program's run chooses its engine
  EXPECT_TRUE(hb::should_split({.own_text = barrier_kernel}, jit));
}

TEST(HostBuild, ASourceWithoutBarriersIsParsedOnlyWithThePrelude) {
  EXPECT_FALSE(hb::should_split({.own_text = plain_kernel}, jit));
  EXPECT_EQ(hb::should_split({.has_precompiled_prelude = true, .own_text = plain_kernel}, jit), lockstep::emu::region_loops::available());
  EXPECT_FALSE(hb::should_split({.has_precompiled_prelude = true, .own_text = plain_kernel}, driver));
  EXPECT_TRUE(hb::should_split({.own_text = "__global__ void k() { __shfl_sync(~0u, 1, 0); }"}, driver));
}

TEST(HostBuild, ARefusedSplitIsBuiltAsWritten) {
  const scoped_env lenient("LOCKSTEP_REGION_LOOPS_STRICT", nullptr);
  int as_written = 0;
  EXPECT_FALSE(hb::build_split_else_as_written(
      "k.cu", [] { return std::nullopt; }, [&] { ++as_written; }));
  EXPECT_EQ(as_written, 0);
  EXPECT_FALSE(hb::build_split_else_as_written(
      "k.cu", [] { return std::optional<std::string>("k.cu:1: error: no"); }, [&] { ++as_written; }));
  EXPECT_EQ(as_written, 1);
}

TEST(HostBuild, ARefusedSplitIsAnErrorWhenStrictAfterTheBuildAsWritten) {
  const scoped_env strict("LOCKSTEP_REGION_LOOPS_STRICT", "1");
  int as_written = 0;
  const auto refused = hb::build_split_else_as_written(
      "k.cu", [] { return std::optional<std::string>("k.cu:1: error: no"); }, [&] { ++as_written; });
  EXPECT_EQ(as_written, 1);
  ASSERT_TRUE(refused);
  EXPECT_EQ(*refused, "k.cu:1: error: no");
  // The source as written failing too fails with its own error.
  EXPECT_THROW(hb::build_split_else_as_written(
                   "k.cu", [] { return std::optional<std::string>("split"); }, [] { throw std::runtime_error("as written"); }),
               std::runtime_error);
}

TEST(HostBuild, OlderDialectsAreRaisedToCxx20EachCallersWay) {
  using enum hb::older_dialect;
  EXPECT_EQ(hb::cxx20_dialect("c++17", same_family_cxx20), "c++20");
  EXPECT_EQ(hb::cxx20_dialect("gnu++14", same_family_cxx20), "gnu++20");
  EXPECT_EQ(hb::cxx20_dialect("c++23", same_family_cxx20), "c++23");
  EXPECT_EQ(hb::cxx20_dialect("c++17", plain_cxx20), "c++20");
  EXPECT_EQ(hb::cxx20_dialect("gnu++17", plain_cxx20), "c++20");
  EXPECT_EQ(hb::cxx20_dialect("", plain_cxx20), "c++20");
  EXPECT_EQ(hb::cxx20_dialect("gnu++20", plain_cxx20), "gnu++20");
}

TEST(HostBuild, DefaultsGiveWayToTheUsersChoices) {
  EXPECT_EQ(hb::optimisation_defaults({}, true), (std::vector<std::string>{"-O3", "-g1", "-fPIC"}));
  EXPECT_EQ(hb::optimisation_defaults({"-O0", "-g"}, false), std::vector<std::string>{});
  EXPECT_TRUE(hb::names_a_target({"-march=skylake"}));
  EXPECT_TRUE(hb::native_target_flags(true).empty());
  EXPECT_EQ(hb::parse_flags_of({"-O3", "-Ia", "-DX=1", "-UY", "-std=c++20", "-fPIC"}),
            (std::vector<std::string>{"-Ia", "-DX=1", "-UY", "-std=c++20"}));
}

TEST(HostBuild, CheckFlagsHaveOneHome) {
  const std::vector<std::string> flags = hb::check_flags();
  EXPECT_FALSE(flags.empty());
  EXPECT_EQ(flags, lockstep::emu::check_compile_flags());
  EXPECT_TRUE(std::any_of(flags.begin(), flags.end(), [](const std::string& f) { return f.starts_with("-fsanitize="); }));
}

TEST(HostBuild, LockstepsCudaHeadersComeFirst) {
  const std::filesystem::path include = LOCKSTEP_SOURCE_INCLUDE_DIR;
  EXPECT_TRUE(hb::holds_lockstep_headers(include));
  EXPECT_EQ(hb::first_with_lockstep_headers({include / "nowhere", include}), include);
  EXPECT_TRUE(hb::first_with_lockstep_headers({include / "nowhere"}).empty());
  EXPECT_EQ(hb::cuda_headers_first(include), "-I" + (include / "lockstep" / "cuda_include").string());
  EXPECT_TRUE(std::filesystem::exists(hb::cuda_include_directory(include) / "cuda_runtime.h"));
}

TEST(HostBuild, TheRegionLoopsKeyNamesVersionAndLibclang) {
  const std::string key = hb::region_loops_key();
  EXPECT_TRUE(key.starts_with("region loops " + std::to_string(lockstep::emu::region_loops::version)));
  EXPECT_EQ(key.ends_with(" (no libclang)"), !lockstep::emu::region_loops::available());
  const std::string a = hb::prelude_key("#include <a>\n", {"-std=c++20"}, "f", "w");
  EXPECT_EQ(a, hb::prelude_key("#include <a>\n", {"-std=c++20"}, "f", "w"));
  EXPECT_NE(a, hb::prelude_key("#include <a>\n", {"-std=c++23"}, "f", "w"));
  EXPECT_NE(a, hb::prelude_key("#include <a>\n", {"-std=c++20"}, "f", "w2"));
  EXPECT_NE(a, hb::prelude_key("#include <b>\n", {"-std=c++20"}, "f", "w"));
}
