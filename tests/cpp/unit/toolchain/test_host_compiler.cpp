// Running the host compiler: finding it, building and loading a shared object,
// and compile errors in the user's terms.
#include <dlfcn.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "toolchain/host_compiler.h"
#include "toolchain/process.h"

namespace fs = std::filesystem;
using lockstep::toolchain::compile_failure;
using lockstep::toolchain::compile_shared_object;
using lockstep::toolchain::find_host_compiler;
using lockstep::toolchain::run_process;

namespace {

// Each test gets a private TMPDIR, so that the compiler's temporary
// directory can be found in messages and checked to be gone afterwards.
class HostCompiler : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "lockstep-host-compiler-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    scratch_ = pattern;
    temporaries_ = scratch_ / "tmp";
    fs::create_directory(temporaries_);
    if (const char* old = std::getenv("TMPDIR")) old_tmpdir_ = old;
    ::setenv("TMPDIR", temporaries_.c_str(), 1);
  }
  void TearDown() override {
    if (old_tmpdir_)
      ::setenv("TMPDIR", old_tmpdir_->c_str(), 1);
    else
      ::unsetenv("TMPDIR");
    fs::remove_all(scratch_);
  }
  bool temporaries_empty() const { return fs::is_empty(temporaries_); }

  fs::path scratch_, temporaries_;
  std::optional<std::string> old_tmpdir_;
};

TEST_F(HostCompiler, FindsGxxOnce) {
  const auto& compiler = find_host_compiler();
  EXPECT_TRUE(fs::exists(compiler.path)) << compiler.path;
  EXPECT_NE(compiler.identity.find("g++"), std::string::npos) << compiler.identity;
  // The identity holds the version line.
  const std::string version = run_process({compiler.path, "--version"}).output;
  EXPECT_NE(compiler.identity.find(version.substr(0, version.find('\n'))), std::string::npos) << compiler.identity;
  EXPECT_EQ(&find_host_compiler(), &compiler);
}

TEST_F(HostCompiler, BuildsASharedObjectThatLoads) {
  const fs::path library = scratch_ / "forty_two.so";
  compile_shared_object("extern \"C\" int forty_two() { return 42; }\n", "forty_two.cu", {"-shared", "-fPIC", "-O1"}, library);
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << ::dlerror();
  const auto forty_two = reinterpret_cast<int (*)()>(::dlsym(handle, "forty_two"));
  ASSERT_NE(forty_two, nullptr) << ::dlerror();
  EXPECT_EQ(forty_two(), 42);
  ::dlclose(handle);
  EXPECT_TRUE(temporaries_empty());
}

#if defined(__x86_64__)
// The JIT's modules are built for this machine's CPU: its vector extensions
// are on exactly where the CPU has them, and the cache key names the CPU.
TEST_F(HostCompiler, NativeTargetBuildsForThisCpu) {
  const auto& native = lockstep::toolchain::find_native_target();
  ASSERT_EQ(native.flags, (std::vector<std::string>{"-march=native", "-mprefer-vector-width=512"}));
  EXPECT_EQ(native.cpu.size(), 32u) << native.cpu;
  EXPECT_EQ(&lockstep::toolchain::find_native_target(), &native);
  const fs::path library = scratch_ / "features.so";
  std::vector<std::string> flags{"-shared", "-fPIC", "-O1"};
  flags.insert(flags.end(), native.flags.begin(), native.flags.end());
  compile_shared_object(
      "extern \"C\" int features() {\n"
      "  int f = 0;\n"
      "#ifdef __AVX2__\n  f |= 1;\n#endif\n"
      "#ifdef __AVX512F__\n  f |= 2;\n#endif\n"
      "#ifdef __FMA__\n  f |= 4;\n#endif\n"
      "  return f;\n}\n",
      "features.cu", flags, library);
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << ::dlerror();
  const auto features = reinterpret_cast<int (*)()>(::dlsym(handle, "features"));
  ASSERT_NE(features, nullptr) << ::dlerror();
  __builtin_cpu_init();
  const int expected =
      (__builtin_cpu_supports("avx2") ? 1 : 0) | (__builtin_cpu_supports("avx512f") ? 2 : 0) | (__builtin_cpu_supports("fma") ? 4 : 0);
  EXPECT_EQ(features(), expected);
  ::dlclose(handle);
}
#endif

TEST_F(HostCompiler, ErrorsNameTheUsersFileAndLine) {
  try {
    compile_shared_object("#line 1 \"user.cu\"\nint fine = 1;\nint broken = ;\n", "user.cu", {"-shared", "-fPIC"}, scratch_ / "user.so");
    FAIL() << "expected a compile error";
  } catch (const compile_failure& error) {
    EXPECT_EQ(error.summary(), "the host compiler could not compile user.cu");
    EXPECT_TRUE(std::string(error.what()).starts_with(error.summary() + "\n" + error.log())) << error.what();
    EXPECT_NE(error.log().find("user.cu:2"), std::string::npos) << error.log();
    EXPECT_EQ(error.log().find(temporaries_.string()), std::string::npos) << error.log();
  }
  EXPECT_FALSE(fs::exists(scratch_ / "user.so"));
  EXPECT_TRUE(temporaries_empty());
}

TEST_F(HostCompiler, ErrorsWithoutLineDirectivesHideTheTemporaryDirectory) {
  try {
    compile_shared_object("int broken = ;\n", "dir/plain.cu", {"-fsyntax-only"}, scratch_ / "plain.so");
    FAIL() << "expected a compile error";
  } catch (const compile_failure& error) {
    EXPECT_NE(error.log().find("plain.cu:1"), std::string::npos) << error.log();
    EXPECT_EQ(error.log().find(temporaries_.string()), std::string::npos) << error.log();
  }
  EXPECT_TRUE(temporaries_empty());
}

}  // namespace
