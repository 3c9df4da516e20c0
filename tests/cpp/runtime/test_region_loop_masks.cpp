// The region-loop compiler's masks (src/emulator/compile_time/region_loops/mask.h): kept as
// terms on each step, rendered once at emission, as a condition on the thread
// and as the byte a masked region's rows sum.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "emulator/compile_time/region_loops/mask.h"
#include "emulator/compile_time/region_loops/region_loops.h"

namespace region_loops = lockstep::emu::region_loops;
using region_loops::compiler::mask_term;
using region_loops::compiler::rendered;
using region_loops::compiler::rendered_as_byte;
using region_loops::compiler::thread_mask;

namespace {

TEST(RegionLoopMasks, RenderEachTermOnceJoinedInOrder) {
  EXPECT_EQ(rendered(thread_mask{}), "");
  EXPECT_EQ(rendered(thread_mask{{3, false}}), "__ls_mask_3[__ls_t]");
  EXPECT_EQ(rendered(thread_mask{{1, false}, {4, true}}), "__ls_mask_1[__ls_t] && !__ls_mask_4[__ls_t]");
  EXPECT_EQ(rendered(thread_mask{{4, true}, {1, false}}), "!__ls_mask_4[__ls_t] && __ls_mask_1[__ls_t]");
}

TEST(RegionLoopMasks, RenderAsBytesNegatingByXor) {
  EXPECT_EQ(rendered_as_byte(thread_mask{}), "");
  EXPECT_EQ(rendered_as_byte(thread_mask{{2, false}}), "::lockstep::emu::loop_mask_byte(__ls_mask_2[__ls_t])");
  EXPECT_EQ(rendered_as_byte(thread_mask{{1, false}, {4, true}}),
            "::lockstep::emu::loop_mask_byte(__ls_mask_1[__ls_t]) & (::lockstep::emu::loop_mask_byte(__ls_mask_4[__ls_t]) ^ 1)");
}

// A masked branch inside another's arm: the inner arm's regions carry both
// terms, the else arm's the negated one.
TEST(RegionLoopMasks, NestedDivergentBranchesCarryEveryTermAround) {
  const auto r = region_loops::split_kernels("#include \"lockstep/cuda.h\"\n" + std::string(R"(
__global__ void nested(const float* in, float* out, int n) {
  const int t = threadIdx.x;
  float acc = 0.0f;
  if (t % 3 == 0) {
    for (int i = 0; i < n; ++i) acc += in[i] * float(t);
    if (t % 2 == 0) {
      for (int i = 0; i < n; ++i) acc -= in[i];
      out[t] = acc;
    }
  } else {
    for (int i = 1; i < n; i += 2) acc += in[i];
    out[t] = acc;
  }
}
)"),
                                             "test.cu", {"-std=c++20", "-I" + std::string(LOCKSTEP_SOURCE_INCLUDE_DIR)});
  ASSERT_EQ(r.split, (std::vector<std::string>{"nested"})) << (r.notes.empty() ? "" : r.notes.back());
  EXPECT_TRUE(std::regex_search(r.source, std::regex(R"(if \(!\(__ls_mask_(\d+)\[__ls_t\] && __ls_mask_\d+\[__ls_t\]\)\) continue;)")));
  EXPECT_TRUE(std::regex_search(r.source, std::regex(R"(if \(!\(!__ls_mask_\d+\[__ls_t\]\)\) continue;)")));
  EXPECT_TRUE(std::regex_search(r.source, std::regex(R"(loop_mask_byte\(__ls_mask_\d+\[__ls_t\]\) & ::lockstep::emu::loop_mask_byte)")));
}

}  // namespace
