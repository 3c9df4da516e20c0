// The driver's reading of nvcc command lines (tools/driver/nvcc_command).
#include <gtest/gtest.h>

#include <algorithm>

#include "driver/nvcc_command.h"
#include "driver/unsupported_features.h"

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

// -fatbin, -cubin and -ptx build a module for the driver API: a shared object on the emulator.
TEST(NvccCommand, ModuleOptionsBuildASharedObject) {
  for (const char* option : {"-fatbin", "--fatbin", "-cubin", "-ptx"}) {
    const nvcc_command c = parse_nvcc_command({option, "-arch=sm_90", "kernels.cu", "-o", "kernels.bin"});
    EXPECT_TRUE(c.shared_library) << option;
    EXPECT_EQ(c.module_extension, std::string(".") + (option + std::string(option).find_first_not_of('-'))) << option;
    EXPECT_TRUE(c.compiler_flags.empty()) << option << " is not a host compiler flag";
  }
  EXPECT_FALSE(parse_nvcc_command({"-fopenmp", "k.cu"}).shared_library);
}

TEST(NvccCommand, RefusesWhatNvccRefuses) {
  EXPECT_THROW(parse_nvcc_command({"--no-such-option", "k.cu"}), usage_error);
  EXPECT_THROW(parse_nvcc_command({"k.cu", "-o"}), usage_error);
  EXPECT_THROW(parse_nvcc_command({"notes.txt"}), usage_error);
  EXPECT_THROW(parse_nvcc_command({"-x", "fortran", "k.f"}), usage_error);
}

// Unsupported features are named with their line, not left to "was not declared".
TEST(UnsupportedFeatures, NamesTheFeatureAndLine) {
  using lockstep::driver::explain_unsupported;
  const std::string fft = explain_unsupported("prog.cu:41:13: error: ‘cufftExecC2C’ was not declared in this scope\n");
  EXPECT_NE(fft.find("prog.cu:41: cufftExecC2C: cuFFT is not emulated"), std::string::npos) << fft;
  // Textures, surfaces and CUDA arrays are emulated: not named.
  EXPECT_EQ(explain_unsupported("prog.cu:41:13: error: ‘tex2D’ was not declared in this scope\n"), "");
  const std::string driver_api = explain_unsupported("main.cpp:7:3: error: ‘cuTexRefSetArray’ was not declared in this scope\n");
  EXPECT_NE(driver_api.find("main.cpp:7: cuTexRefSetArray: this part of CUDA's driver API is not emulated"), std::string::npos) << driver_api;
  const std::string header = explain_unsupported("mc.cu:3:10: fatal error: curand_kernel.h: No such file or directory\n");
  EXPECT_NE(header.find("mc.cu:3: <curand_kernel...>: cuRAND comes from the CUDA toolkit's headers"), std::string::npos) << header;
  // The runtime API and cuBLAS are not the driver API; an ordinary typo is not a feature.
  EXPECT_EQ(explain_unsupported("a.cu:1:1: error: ‘cudaMallocc’ was not declared in this scope\n"), "");
  EXPECT_EQ(explain_unsupported("a.cu:1:1: error: ‘cublasSgemmm’ was not declared in this scope\n"), "");
  EXPECT_EQ(explain_unsupported("a.cu:1:1: error: ‘counter’ was not declared in this scope\n"), "");
}

TEST(UnsupportedFeatures, FindsInlinePtxWithItsLine) {
  using lockstep::driver::inline_ptx_uses;
  const std::string text =
      "# 1 \"lane.cu\"\n"
      "__device__ float load(const float* p) {\n"
      "  float v;\n"
      "  asm volatile(\"ld.global.nc.f32 %0, [%1];\" : \"=f\"(v) : \"l\"(p));\n"
      "  return v;\n"
      "}\n";
  EXPECT_EQ(inline_ptx_uses(text),
            "lane.cu:3: inline PTX (asm) is not supported by the emulator: write the operation in CUDA C++ (an intrinsic, "
            "a shuffle, a plain load)\n");
  EXPECT_EQ(inline_ptx_uses("# 1 \"x.cpp\"\nvoid f() { asm volatile(\"pause\"); }\n"), "");  // x86 assembly is the host's own
}
