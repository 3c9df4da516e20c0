// The driver's reading of nvcc command lines (tools/driver/nvcc_command).
#include <gtest/gtest.h>

#include <algorithm>

#include "driver/nvcc_command.h"

using lockstep::driver::nvcc_command;
using lockstep::driver::parse_nvcc_command;
using lockstep::driver::usage_error;

namespace {
bool contains(const std::vector<std::string>& list, const std::string& item) { return std::find(list.begin(), list.end(), item) != list.end(); }
}  // namespace

TEST(NvccCommand, SortsSourcesAndFlags) {
  const nvcc_command c =
      parse_nvcc_command({"-o", "prog", "a.cu", "b.cpp", "lib.o", "-I", "inc", "-Iinc2", "-DX=1", "--define-macro", "Y", "-std=c++17", "-O3", "-g",
                          "-Xcompiler", "-fopenmp,-Wall", "-lcublas", "-L/opt/lib", "-Xlinker=--as-needed"});
  ASSERT_EQ(c.sources.size(), 2u);
  EXPECT_TRUE(c.sources[0].cuda);
  EXPECT_FALSE(c.sources[1].cuda);
  EXPECT_EQ(c.output, "prog");
  EXPECT_EQ(c.link_inputs, std::vector<std::string>{"lib.o"});
  EXPECT_EQ(c.preprocessor_flags, (std::vector<std::string>{"-Iinc", "-Iinc2", "-DX=1", "-DY"}));
  EXPECT_EQ(c.language_standard, "c++17");
  EXPECT_EQ(c.compiler_flags, (std::vector<std::string>{"-O3", "-g", "-fopenmp", "-Wall"}));
  EXPECT_EQ(c.linker_flags, (std::vector<std::string>{"-lcublas", "-L/opt/lib", "-Wl,--as-needed"}));
}

TEST(NvccCommand, IgnoresGpuOnlyOptionsWithTheirValues) {
  const nvcc_command c = parse_nvcc_command(
      {"-arch=sm_90", "-gencode", "arch=compute_90,code=sm_90", "--use_fast_math", "-lineinfo", "-G", "-Xptxas", "-v", "-rdc=true", "-m64", "k.cu"});
  ASSERT_EQ(c.sources.size(), 1u);
  EXPECT_EQ(c.ignored.size(), 8u);
  EXPECT_TRUE(contains(c.ignored, "-gencode arch=compute_90,code=sm_90"));
  EXPECT_TRUE(c.compiler_flags.empty());
}

TEST(NvccCommand, ModesAndLanguage) {
  EXPECT_TRUE(parse_nvcc_command({"-c", "k.cu"}).compile_only);
  EXPECT_TRUE(parse_nvcc_command({"-dc", "k.cu"}).compile_only);
  EXPECT_TRUE(parse_nvcc_command({"-E", "k.cu"}).preprocess_only);
  EXPECT_TRUE(parse_nvcc_command({"-shared", "k.cu"}).shared_library);
  const nvcc_command forced = parse_nvcc_command({"-x", "cu", "kernel.cpp"});
  ASSERT_EQ(forced.sources.size(), 1u);
  EXPECT_TRUE(forced.sources[0].cuda);
  const nvcc_command run = parse_nvcc_command({"--run", "k.cu", "--run-args", "1,2"});
  EXPECT_TRUE(run.run_after_build);
  EXPECT_EQ(run.run_arguments, (std::vector<std::string>{"1", "2"}));
}

TEST(NvccCommand, ProgramArgumentsFollowTheSources) {
  const nvcc_command c = parse_nvcc_command({"-arch", "sm_90", "prog.cu", "util.cu", "1024", "-v"}, true);
  EXPECT_EQ(c.sources.size(), 2u);
  EXPECT_EQ(c.run_arguments, (std::vector<std::string>{"1024", "-v"}));
  const nvcc_command after_dashes = parse_nvcc_command({"prog.cu", "--", "other.cu"}, true);
  EXPECT_EQ(after_dashes.run_arguments, std::vector<std::string>{"other.cu"});
}

TEST(NvccCommand, RefusesWhatNvccRefuses) {
  EXPECT_THROW(parse_nvcc_command({"--no-such-option", "k.cu"}), usage_error);
  EXPECT_THROW(parse_nvcc_command({"k.cu", "-o"}), usage_error);
  EXPECT_THROW(parse_nvcc_command({"notes.txt"}), usage_error);
  EXPECT_THROW(parse_nvcc_command({"-x", "fortran", "k.f"}), usage_error);
}
