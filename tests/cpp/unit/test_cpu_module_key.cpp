// The JIT cache's key of a cpu module (src/jit/cpu_module_key): it changes
// with everything the built shared object depends on, and with nothing else.
#include <gtest/gtest.h>

#include <string>

#include "host_build/engine_record.h"
#include "host_build/region_loops_build.h"
#include "jit/cpu_module_key.h"

namespace {
using lockstep::jit::cpu_module_key;

struct inputs {
  std::string host = "compiler g++ 12\nprocessor x86 avx512f";
  std::string headers = "0123abcd";
  std::vector<std::string> flags{"-std=c++20", "-O3", "-g1", "-fPIC"};
  std::vector<std::string> link{"-Wl,--no-as-needed", "/lib/liblockstep.so"};
  std::string tu = "__global__ void k() {}";
  bool split = true;
  std::string key() const { return cpu_module_key(host, headers, flags, link, tu, split); }
};
}  // namespace

TEST(CpuModuleKey, TheSameInputsGiveTheSameKey) { EXPECT_EQ(inputs{}.key(), inputs{}.key()); }

TEST(CpuModuleKey, EachInputChangesIt) {
  const std::string base = inputs{}.key();
  inputs i;
  i.host = "compiler g++ 12\nprocessor x86 avx2";  // another CPU
  EXPECT_NE(i.key(), base);
  i = {};
  i.headers = "0123abce";
  EXPECT_NE(i.key(), base);
  i = {};
  i.flags.push_back("-DN=4");
  EXPECT_NE(i.key(), base);
  i = {};
  std::swap(i.flags[1], i.flags[2]);  // the order of flags matters to the compiler (the last -O wins)
  EXPECT_NE(i.key(), base);
  i = {};
  i.link.back() = "/other/liblockstep.so";
  EXPECT_NE(i.key(), base);
  i = {};
  i.tu += " ";
  EXPECT_NE(i.key(), base);
  i = {};
  i.split = false;  // fibers only: check mode or LOCKSTEP_EMU_ENGINE=fibers
  EXPECT_NE(i.key(), base);
}

TEST(CpuModuleKey, ASplitKeyNamesTheRegionLoopCompiler) {
  EXPECT_NE(inputs{}.key().find(lockstep::host_build::region_loops_key()), std::string::npos);
  inputs fibers;
  fibers.split = false;
  EXPECT_EQ(fibers.key().find("region loops"), std::string::npos);
}

// The key's text as the JIT wrote it before the build room, so that a cache
// filled since keeps its entries, and then the engine record's version: a
// module built before carries no record (its kernels would say nothing of
// how they run), so it is built again once.
TEST(CpuModuleKey, KeepsItsEarlierTextAndNamesTheEngineRecord) {
  inputs i;
  i.split = false;
  EXPECT_EQ(i.key(),
            "lockstep-jit cpu\ncompiler g++ 12\nprocessor x86 avx512f\nheaders 0123abcd\nflags -std=c++20 -O3 -g1 -fPIC -Wl,--no-as-needed "
            "/lib/liblockstep.so\n__global__ void k() {}\nengine record " +
                std::to_string(lockstep::host_build::engine_record_version));
}
