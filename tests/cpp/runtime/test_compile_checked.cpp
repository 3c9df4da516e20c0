// Check mode is a compile option: the JIT instruments a module when it is asked
// to (compile_options::checked, builtin_kernels(d, true)), whatever the
// emulator's options are while it compiles.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>

#include "lockstep/emu/check.h"
#include "lockstep/emu/options.h"
#include "lockstep/runtime.h"

namespace fs = std::filesystem;
using lockstep::buffer;
using lockstep::compile;
using lockstep::compile_options;
using lockstep::device;

namespace {

const device cpu = device::cpu();

const char* missing_barrier = R"(
__global__ void shift_left(const float* in, float* out) {
  __shared__ float tile[64];
  tile[threadIdx.x] = in[threadIdx.x];
  out[threadIdx.x] = tile[(threadIdx.x + 1) % 64];  // a neighbour's write, no __syncthreads
}
)";

// Checks on (all four unless told) for the scope.
class checks_on {
 public:
  explicit checks_on(unsigned checks = lockstep::emu::all_checks) : saved_(lockstep::emu::get_options()) {
    lockstep::emu::options o = saved_;
    o.checks = checks;
    lockstep::emu::set_options(o);
  }
  ~checks_on() { lockstep::emu::set_options(saved_); }
  checks_on(const checks_on&) = delete;
  checks_on& operator=(const checks_on&) = delete;

 private:
  lockstep::emu::options saved_;
};

// Its own cache directory and a source no other run compiled.
class CompileChecked : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_dir_ = fs::temp_directory_path() / ("lockstep-checked-test-" + std::to_string(getpid()) + "-" + unique_);
    fs::create_directories(cache_dir_);
    setenv("LOCKSTEP_CACHE_DIR", cache_dir_.c_str(), 1);
  }
  void TearDown() override { fs::remove_all(cache_dir_); }
  std::string fresh(const std::string& source) const { return "// run " + unique_ + "\n" + source; }

  // Launches shift_left of `m` over 64 threads while all checks are on (memory
  // allocated then, as a program run in check mode allocates it).
  static void run_checked(const lockstep::module& m) {
    const checks_on checking;
    buffer in(cpu, 64 * sizeof(float)), out(cpu, 64 * sizeof(float));
    in.fill_bytes(0);
    m.get("shift_left")(dim3(1), dim3(64), 0, in.data_as<const float>(), out.data_as<float>());
  }

  std::string unique_ = std::to_string(std::random_device{}()) + std::to_string(std::random_device{}());
  fs::path cache_dir_;
};

TEST_F(CompileChecked, AnInstrumentedModuleIsCheckedThoughCompiledWithChecksOff) {
  compile_options options;
  options.checked = true;
  const lockstep::module m = compile(fresh(missing_barrier), options, cpu);
  try {
    run_checked(m);
    FAIL() << "the missing barrier was not reported";
  } catch (const lockstep::emu::check_error& e) {
    EXPECT_TRUE(std::any_of(e.reports().begin(), e.reports().end(), [](const auto& r) { return r.tool == lockstep::emu::check_tool::racecheck; }))
        << e.what();
  }
}

TEST_F(CompileChecked, ChecksOnWhileCompilingDoNotInstrumentAModuleNotAskedFor) {
  const lockstep::module m = [&] {
    const checks_on checking;
    return compile(fresh(missing_barrier), {}, cpu);
  }();
  try {
    run_checked(m);
    FAIL() << "memory checks ran on a module not compiled for them";
  } catch (const lockstep::launch_error& e) {
    EXPECT_NE(std::string(e.what()).find("not compiled for check mode"), std::string::npos) << e.what();
  }
}

TEST_F(CompileChecked, TheSameSourceCheckedAndNotIsTwoModules) {
  compile_options options;
  options.checked = true;
  const std::string source = fresh(missing_barrier);
  const lockstep::module plain = compile(source, {}, cpu), instrumented = compile(source, options, cpu);
  EXPECT_THROW(run_checked(plain), lockstep::launch_error);
  EXPECT_THROW(run_checked(instrumented), lockstep::emu::check_error);
  EXPECT_TRUE(compile(source, options, cpu).from_cache()) << "the checked module is remembered under its own key";
}

TEST(BuiltinKernelsChecked, TheInstrumentedBuildIsAParameter) {
  const int n = 16;
  // memcheck alone: the runtime's fill does not count as a write for initcheck.
  const checks_on checking(unsigned(lockstep::emu::check_tool::memcheck));
  buffer a(cpu, n * n * sizeof(float)), b(cpu, n * n * sizeof(float)), c(cpu, n * n * sizeof(float));
  a.fill_bytes(0);
  b.fill_bytes(0);
  auto launch = [&](bool checked) {
    lockstep::builtin_kernels(cpu, checked)
        .get("lockstep::kernels::matmul_tiled_static<16>")(dim3(1, 1), dim3(16, 16), 0, a.data_as<const float>(), b.data_as<const float>(),
                                                           c.data_as<float>(), n, n, n);
  };
  EXPECT_THROW(launch(false), lockstep::launch_error);
  // The plain module loaded first must not lend the checked one its __shared__ arrays (kernels/CMakeLists.txt).
  EXPECT_NO_THROW(launch(true));
  EXPECT_EQ(c.to_host<float>(), std::vector<float>(n * n, 0.0f));
}

}  // namespace
