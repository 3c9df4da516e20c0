// No silent fallback: a kernel the region-loop compiler declines says once,
// at its first launch, that it runs on fibers (name, line, reason); a split
// kernel says nothing; LOCKSTEP_QUIET_FIBERS (options::quiet_fibers)
// silences it; a run on fibers the options ask for says nothing; and the
// engine query (lockstep::function::engine, emu::engine_of) gives the same
// answer the runner acts on, read from the record the build carries.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "lockstep/emu/options.h"
#include "lockstep/runtime.h"

using lockstep::buffer;
using lockstep::device;

namespace {

const device cpu = device::cpu();

// Kernels named after the test that launches them: each says once per process.
// __match_all_sync meets its warp twice, which the loops do not run (a
// reason of the compiler's own, not one being fixed).
std::string kernels(const std::string& declined, const std::string& split) {
  return "#include \"lockstep/cuda.h\"\n"  // line 1
         "__global__ void " +
         declined +
         "(const int* in, int* out) {\n"  // line 2
         "  const int i = threadIdx.x;\n"
         "  int all = 0;\n"
         "  const unsigned m = __match_all_sync(0xffffffffu, in[i] / 1000, &all);\n"
         "  out[i] = in[i] + (all ? 1 : 0) + (m == 0xffffffffu ? 10 : 0);\n"
         "}\n"
         "__global__ void " +
         split +
         "(const int* in, int* out) {\n"  // line 8
         "  __shared__ int s[64];\n"
         "  s[threadIdx.x] = in[threadIdx.x];\n"
         "  __syncthreads();\n"
         "  out[threadIdx.x] = s[63 - threadIdx.x];\n"
         "}\n";
}

class KernelEngine : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = lockstep::emu::get_options();
    lockstep::emu::options o = saved_;
    o.region_loops = true;
    o.quiet_fibers = false;
    o.order = lockstep::emu::thread_order::forward;
    o.checks = 0;
    lockstep::emu::set_options(o);
    std::mt19937 rng(std::random_device{}());
    in_.resize(64);
    for (int& v : in_) v = int(rng() % 1000);  // one warp's values / 1000 all alike: match_all holds
  }
  void TearDown() override { lockstep::emu::set_options(saved_); }
  void set(void (*change)(lockstep::emu::options&)) {
    lockstep::emu::options o = lockstep::emu::get_options();
    change(o);
    lockstep::emu::set_options(o);
  }
  // Launches `name` (one block of `threads`) with outputs poisoned first; checks its results.
  void launch(const lockstep::module& m, const std::string& name, unsigned threads, bool reversed) {
    buffer in(cpu, 64 * 4), out(cpu, 64 * 4);
    in.copy_from_host(in_.data(), 64 * 4);
    out.fill_bytes(0xff);
    m.get(name)(dim3(1), dim3(threads), 0, in.data_as<int>(), out.data_as<int>());
    std::vector<int> got(64);
    out.copy_to_host(got.data(), 64 * 4);
    for (unsigned t = 0; t < threads; ++t) ASSERT_EQ(got[t], reversed ? in_[63 - t] : in_[t] + 11) << name << " thread " << t;
  }
  // What the launches print on stderr.
  template <class F>
  std::string stderr_of(F&& launches) {
    testing::internal::CaptureStderr();
    launches();
    return testing::internal::GetCapturedStderr();
  }
  static int count(const std::string& text, const std::string& what) {
    int n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  }
  lockstep::emu::options saved_;
  std::vector<int> in_;
};

TEST_F(KernelEngine, DeclinedKernelSaysOnceWithNameLineAndReason) {
  const lockstep::module m = lockstep::compile(kernels("declined_says", "split_quiet"), {.source_name = "engine.cu"}, cpu);
  const std::string said = stderr_of([&] {
    for (int i = 0; i < 3; ++i) {
      launch(m, "declined_says", 32, false);
      launch(m, "split_quiet", 64, true);
    }
  });
  EXPECT_EQ(count(said, "runs on fibers"), 1) << said;
  EXPECT_EQ(count(said, "lockstep: kernel declined_says (engine.cu:2) runs on fibers, not region loops: "), 1) << said;
  EXPECT_NE(said.find("__match_all_sync"), std::string::npos) << said;
  EXPECT_NE(said.find("LOCKSTEP_QUIET_FIBERS=1"), std::string::npos) << said;
  EXPECT_EQ(said.find("split_quiet"), std::string::npos) << said;

  const auto declined = m.get("declined_says").engine(), split = m.get("split_quiet").engine();
  EXPECT_EQ(declined.engine, "fibers");
  EXPECT_EQ(declined.where, "engine.cu:2");
  EXPECT_NE(declined.why.find("__match_all_sync"), std::string::npos) << declined.why;
  EXPECT_EQ(split.engine, "loops");
  EXPECT_EQ(split.why, "");
  EXPECT_EQ(split.where, "engine.cu:8");
}

TEST_F(KernelEngine, QuietSettingSilencesIt) {
  const lockstep::module m = lockstep::compile(kernels("declined_silenced", "split_silenced"), {.source_name = "engine.cu"}, cpu);
  set([](lockstep::emu::options& o) { o.quiet_fibers = true; });
  const std::string said = stderr_of([&] { launch(m, "declined_silenced", 32, false); });
  EXPECT_EQ(said.find("runs on fibers"), std::string::npos) << said;
  EXPECT_EQ(m.get("declined_silenced").take_fibers_notice(), "");
  EXPECT_EQ(m.get("declined_silenced").engine().engine, "fibers");  // quiet, not another answer
}

TEST_F(KernelEngine, FibersAskedForSayNothing) {
  const lockstep::module m = lockstep::compile(kernels("declined_asked", "split_asked"), {.source_name = "engine.cu"}, cpu);
  const std::string said = stderr_of([&] {
    set([](lockstep::emu::options& o) { o.region_loops = false; });
    launch(m, "declined_asked", 32, false);
    EXPECT_EQ(m.get("split_asked").engine().engine, "fibers");
    EXPECT_NE(m.get("split_asked").engine().why.find("LOCKSTEP_EMU_ENGINE=fibers"), std::string::npos);
    set([](lockstep::emu::options& o) {
      o.region_loops = true;
      o.order = lockstep::emu::thread_order::reverse;
    });
    launch(m, "declined_asked", 32, false);
    launch(m, "split_asked", 64, true);
    EXPECT_EQ(m.get("split_asked").engine().engine, "fibers");
  });
  EXPECT_EQ(said, "");
}

}  // namespace
