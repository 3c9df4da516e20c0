// Run-time compilation on the cpu device (the emulator): compile, launch,
// the disk cache, argument checking, compile errors, several processes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "lockstep/runtime.h"

namespace fs = std::filesystem;
using lockstep::arg;
using lockstep::buffer;
using lockstep::compile;
using lockstep::compile_options;
using lockstep::device;
using lockstep::kernel_arg;

extern char** environ;

namespace {

const device cpu = device::cpu();

// The cpu device everywhere; a GPU too where there is one (the device run
// recorded in bench/RESULTS.md), so the same tests cover both JIT paths.
std::vector<device> devices_here() {
  std::vector<device> all{device::cpu()};
  if (lockstep::cuda_available()) all.push_back(device::cuda(0));
  return all;
}

// Every test gets its own empty cache directory and a source no earlier run
// has compiled (a unique comment), so a "miss" really is a miss.
class Jit : public ::testing::TestWithParam<device> {
 protected:
  const device& dev() const { return GetParam(); }
  std::string artifact_extension() const { return dev() == cpu ? ".so" : ".cubin"; }
  void SetUp() override {
    cache_dir_ = fs::temp_directory_path() / ("lockstep-jit-test-" + std::to_string(getpid()) + "-" + unique_);
    fs::create_directories(cache_dir_);
    setenv("LOCKSTEP_CACHE_DIR", cache_dir_.c_str(), 1);
  }
  void TearDown() override { fs::remove_all(cache_dir_); }
  std::string fresh(const std::string& source) { return "// run " + unique_ + "\n" + source; }
  std::vector<fs::path> artifacts(const std::string& extension) const {
    std::vector<fs::path> found;
    for (const auto& e : fs::recursive_directory_iterator(cache_dir_))
      if (e.path().extension() == extension) found.push_back(e.path());
    return found;
  }
  std::string unique_ = std::to_string(std::random_device{}()) + std::to_string(std::random_device{}());
  fs::path cache_dir_;
};

const char* saxpy_source = R"(
__global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

TEST_P(Jit, CompileLaunchAndCacheHit) {
  const int n = 1000;
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) x[i] = dist(rng), y[i] = dist(rng);
  const std::string source = fresh(saxpy_source);
  {
    lockstep::module m = compile(source, {}, dev());
    EXPECT_FALSE(m.from_cache());
    EXPECT_EQ(m.names(), std::vector<std::string>{"saxpy"});
    buffer dx = buffer::from_host(dev(), x), dy = buffer::from_host(dev(), y);
    m.get("saxpy")(dim3((n + 127) / 128), dim3(128), 0, 2.5f, dx.data_as<const float>(), dy.data_as<float>(), n);
    std::vector<float> got = dy.to_host<float>();
    // The GPU fuses a*x+y into one rounding (FMA): allow float rounding.
    for (int i = 0; i < n; ++i) {
      const double want = 2.5 * x[i] + y[i];
      ASSERT_NEAR(got[i], want, 1e-6 * (2.5 * std::abs(x[i]) + std::abs(y[i]))) << i;
    }
  }
  EXPECT_EQ(artifacts(artifact_extension()).size(), 1u);
  // The module is gone from this process: the next compile loads the artifact.
  lockstep::module again = compile(source, {}, dev());
  EXPECT_TRUE(again.from_cache());
  EXPECT_EQ(artifacts(artifact_extension()).size(), 1u);
}

TEST_P(Jit, TemplateInstancesByName) {
  compile_options o;
  o.names = {"scale<2>", "scale<3>", "ns::offset"};
  lockstep::module m = compile(fresh(R"(
template <int factor>
__global__ void scale(int* x) { x[threadIdx.x] *= factor; }
namespace ns { __global__ void offset(int* x, int by) { x[threadIdx.x] += by; } }
)"),
                               o, dev());
  std::vector<int> v(32);
  for (int i = 0; i < 32; ++i) v[i] = i - 7;
  buffer d = buffer::from_host(dev(), v);
  m.get("scale<2>")(dim3(1), dim3(32), 0, d.data_as<int>());
  m.get("scale<3>")(dim3(1), dim3(32), 0, d.data_as<int>());
  m.get("ns::offset")(dim3(1), dim3(32), 0, d.data_as<int>(), 5);
  std::vector<int> got = d.to_host<int>();
  for (int i = 0; i < 32; ++i) ASSERT_EQ(got[i], (i - 7) * 6 + 5);
  EXPECT_THROW(m.get("scale<4>"), std::out_of_range);
}

const char* every_scalar_source = R"(
__global__ void store_all(bool b, char c, signed char sc, unsigned char uc, short s, unsigned short us, int i,
                          unsigned u, long l, unsigned long ul, long long ll, unsigned long long ull, float f,
                          double d, double* out) {
  out[0] = b; out[1] = c; out[2] = sc; out[3] = uc; out[4] = s; out[5] = us; out[6] = i; out[7] = u;
  out[8] = l; out[9] = ul; out[10] = ll; out[11] = ull; out[12] = f; out[13] = d;
}
)";

TEST_P(Jit, EveryScalarTypeTypedAndConverted) {
  lockstep::module m = compile(fresh(every_scalar_source), {}, dev());
  lockstep::function f = m.get("store_all");
  EXPECT_EQ(f.signature_text(),
            "store_all(bool, int8, int8, uint8, int16, uint16, int32, uint32, int64, uint64, int64, uint64, float32, float64, float64*)");
  buffer out(dev(), 14 * sizeof(double));
  out.fill_bytes(0xff);
  f(dim3(1), dim3(1), 0, true, char(-5), static_cast<signed char>(-100), static_cast<unsigned char>(200), short(-30000),
    static_cast<unsigned short>(60000), -2000000000, 4000000000u, -9000000000000L, 18000000000000000000UL, -9000000000000LL, 18000000000000000000ULL,
    1.5f, -2.25, out.data_as<double>());
  const std::vector<double> want{1,
                                 -5,
                                 -100,
                                 200,
                                 -30000,
                                 60000,
                                 -2000000000,
                                 4000000000.0,
                                 -9000000000000.0,
                                 18000000000000000000.0,
                                 -9000000000000.0,
                                 18000000000000000000.0,
                                 1.5,
                                 -2.25};
  EXPECT_EQ(out.to_host<double>(), want);

  // Untyped numbers (as from Python) convert when they fit.
  std::vector<kernel_arg> args;
  for (long long v : {1LL, -5LL, -100LL, 200LL, -30000LL, 60000LL, -2000000000LL, 4000000000LL, -9000000000000LL})
    args.push_back(kernel_arg::integer(v));
  args.push_back(kernel_arg::integer(9000000000000LL));
  args.push_back(kernel_arg::integer(-9000000000000LL));
  args.push_back(kernel_arg::integer(9000000000000LL));
  args.push_back(kernel_arg::real(1.5));
  args.push_back(kernel_arg::integer(3));  // an integer for a double parameter
  args.push_back(arg(out.data_as<double>()));
  out.fill_bytes(0xff);
  f.launch({dim3(1), dim3(1), 0, nullptr}, args);
  const std::vector<double> converted{
      1, -5, -100, 200, -30000, 60000, -2000000000, 4000000000.0, -9000000000000.0, 9000000000000.0, -9000000000000.0, 9000000000000.0, 1.5, 3};
  EXPECT_EQ(out.to_host<double>(), converted);
}

struct particle {
  int id;
  float mass;
  double position[2];
};

TEST_P(Jit, StructByValue) {
  lockstep::module m = compile(fresh(R"(
struct particle { int id; float mass; double position[2]; };
__global__ void unpack(particle p, double* out) {
  out[0] = p.id; out[1] = p.mass; out[2] = p.position[0]; out[3] = p.position[1];
}
)"),
                               {}, dev());
  buffer out(dev(), 4 * sizeof(double));
  const particle p{42, 2.5f, {-1.25, 8.0}};
  m.get("unpack")(dim3(1), dim3(1), 0, p, out.data_as<double>());
  EXPECT_EQ(out.to_host<double>(), (std::vector<double>{42, 2.5, -1.25, 8.0}));
  struct smaller {
    int id;
  } wrong{1};
  EXPECT_THROW(m.get("unpack")(dim3(1), dim3(1), 0, wrong, out.data_as<double>()), lockstep::argument_error);
}

std::string argument_error_of(const lockstep::function& f, std::vector<kernel_arg> args) {
  try {
    f.launch({dim3(1), dim3(1), 0, nullptr}, args);
  } catch (const lockstep::argument_error& e) {
    return e.what();
  }
  return "no error";
}

TEST_P(Jit, WrongArgumentsAreRejectedWithTheirTypes) {
  lockstep::function f = compile(fresh(saxpy_source), {}, dev()).get("saxpy");
  buffer x(dev(), 64), y(dev(), 64);
  const float* cx = x.data_as<const float>();
  float* fy = y.data_as<float>();
  auto has = [](const std::string& what, const std::string& part) { return what.find(part) != std::string::npos; };

  std::string what = argument_error_of(f, {arg(2.0f), arg(cx), arg(fy)});
  EXPECT_TRUE(has(what, "takes 4 arguments, got 3")) << what;
  EXPECT_TRUE(has(what, "saxpy(float32, const float32*, float32*, int32)")) << what;

  what = argument_error_of(f, {arg(2.0), arg(cx), arg(fy), arg(16)});
  EXPECT_TRUE(has(what, "argument 0")) << what;
  EXPECT_TRUE(has(what, "the parameter is float32 but got float64")) << what;

  what = argument_error_of(f, {arg(2.0f), arg(x.data_as<const int>()), arg(fy), arg(16)});
  EXPECT_TRUE(has(what, "argument 1")) << what;
  EXPECT_TRUE(has(what, "pointer to const int32")) << what;

  what = argument_error_of(f, {arg(2.0f), arg(cx), arg(y.data_as<const float>()), arg(16)});
  EXPECT_TRUE(has(what, "argument 2")) << what;
  EXPECT_TRUE(has(what, "read-only")) << what;

  what = argument_error_of(f, {arg(2.0f), arg(cx), arg(fy), kernel_arg::integer(1LL << 40)});
  EXPECT_TRUE(has(what, "argument 3")) << what;
  EXPECT_TRUE(has(what, "does not fit")) << what;

  what = argument_error_of(f, {arg(2.0f), arg(cx), arg(fy), kernel_arg::real(16.0)});
  EXPECT_TRUE(has(what, "a real number does not convert to an integer parameter")) << what;

  what = argument_error_of(f, {arg(2.0f), kernel_arg::integer(0), arg(fy), arg(16)});
  EXPECT_TRUE(has(what, "pass a device buffer or pointer")) << what;
}

TEST_P(Jit, CompileErrorNamesTheUsersLine) {
  compile_options o;
  o.source_name = "broken.cu";
  try {
    compile(fresh("__global__ void k(int* p) {\n  int i = threadIdx.x;\n  p[i] = undefined_name;\n}\n"), o, dev());
    FAIL() << "expected compile_error";
  } catch (const lockstep::compile_error& e) {
    // fresh() adds one line above the source: the error is on line 4.
    // The host compiler writes file:line, NVRTC file(line).
    EXPECT_NE(e.log().find(dev() == cpu ? "broken.cu:4" : "broken.cu(4)"), std::string::npos) << e.log();
    EXPECT_NE(e.log().find("undefined_name"), std::string::npos) << e.log();
  }
  EXPECT_TRUE(artifacts(artifact_extension()).empty()) << "a failed build leaves nothing in the cache";
}

TEST_P(Jit, CorruptCacheEntryIsRebuilt) {
  const std::string source = fresh(saxpy_source);
  compile(source, {}, dev());
  auto files = artifacts(artifact_extension());
  ASSERT_EQ(files.size(), 1u);
  fs::resize_file(files[0], fs::file_size(files[0]) / 2);
  lockstep::module m = compile(source, {}, dev());
  EXPECT_FALSE(m.from_cache()) << "a truncated artifact must not be trusted";
  buffer x = buffer::from_host(dev(), std::vector<float>(8, 1.0f)), y = buffer::from_host(dev(), std::vector<float>(8, 2.0f));
  m.get("saxpy")(dim3(1), dim3(8), 0, 3.0f, x.data_as<const float>(), y.data_as<float>(), 8);
  EXPECT_EQ(y.to_host<float>(), std::vector<float>(8, 5.0f));
}

TEST_P(Jit, TwoProcessesCompileTheSameSourceAtOnce) {
  const fs::path source_file = cache_dir_ / "fill.cu";
  std::ofstream(source_file) << fresh("__global__ void fill(int* out, int v) { out[threadIdx.x] = v; }\n");
  const fs::path child = fs::path(::testing::internal::GetArgvs()[0]).parent_path() / "jit_compile_child";
  ASSERT_TRUE(fs::exists(child)) << child;
  std::vector<std::pair<pid_t, fs::path>> children;
  for (int i = 0; i < 2; ++i) {
    const fs::path log = cache_dir_ / ("child" + std::to_string(i) + ".log");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::string child_path = child.string(), source_path = source_file.string(), device_name = dev().str();
    char* argv[] = {child_path.data(), source_path.data(), device_name.data(), nullptr};
    pid_t pid = 0;
    ASSERT_EQ(posix_spawn(&pid, child_path.c_str(), &actions, nullptr, argv, environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    children.emplace_back(pid, log);
  }
  int misses = 0;
  for (auto& [pid, log] : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    std::ifstream in(log);
    std::string line;
    std::getline(in, line);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << line;
    EXPECT_EQ(line.rfind("ok ", 0), 0u) << line;
    misses += line == "ok miss";
  }
  EXPECT_EQ(misses, 1) << "one process builds, the other waits for it and loads the result";
  EXPECT_EQ(artifacts(artifact_extension()).size(), 1u);
}

TEST_P(Jit, BuiltinKernelsLaunchThroughTheSameRuntime) {
  lockstep::module m = lockstep::builtin_kernels(dev());
  lockstep::function matmul = m.get("lockstep::kernels::matmul_tiled_static<16>");
  const int rows = 20, inner = 30, cols = 10;
  std::vector<float> a(rows * inner), b(inner * cols);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-1, 1);
  for (auto& v : a) v = dist(rng);
  for (auto& v : b) v = dist(rng);
  buffer da = buffer::from_host(dev(), a), db = buffer::from_host(dev(), b), dc(dev(), rows * cols * sizeof(float));
  dc.fill_bytes(0xff);
  matmul(dim3(1, 2), dim3(16, 16), 0, da.data_as<const float>(), db.data_as<const float>(), dc.data_as<float>(), rows, cols, inner);
  std::vector<float> c = dc.to_host<float>();
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      double ref = 0;
      for (int p = 0; p < inner; ++p) ref += double(a[i * inner + p]) * b[p * cols + j];
      ASSERT_NEAR(c[i * cols + j], ref, 1e-5) << i << "," << j;
    }
}

TEST(Runtime, DevicesAndTheirErrors) {
  EXPECT_EQ(device::parse("cpu"), device::cpu());
  EXPECT_EQ(device::parse("cuda:3"), device::cuda(3));
  EXPECT_EQ(device::parse("cuda").str(), "cuda:0");
  EXPECT_THROW(device::parse("gpu"), std::invalid_argument);
  EXPECT_THROW(device::parse("cuda:x"), std::invalid_argument);
  EXPECT_EQ(lockstep::cuda_available(), lockstep::cuda_device_count() > 0);
  EXPECT_EQ(lockstep::cuda_available(), lockstep::cuda_unavailable_reason().empty());
  if (!lockstep::cuda_available()) {
    // Asking for a GPU without one names the reason and the way out.
    try {
      buffer b(device::cuda(0), 16);
      FAIL() << "allocated on a GPU that is not there";
    } catch (const lockstep::device_unavailable& e) {
      EXPECT_NE(std::string(e.what()).find("cpu"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(lockstep::device_arch(device::cpu()), "emulator");
}

TEST(Runtime, BuffersStreamsEvents) {
  buffer b(cpu, 64);
  std::vector<unsigned char> bytes(64);
  for (int i = 0; i < 64; ++i) bytes[i] = static_cast<unsigned char>(i * 3);
  b.copy_from_host(bytes.data(), 64);
  buffer c(cpu, 64);
  c.copy_from(b);
  EXPECT_EQ(c.to_host<unsigned char>(), bytes);
  EXPECT_THROW(b.copy_from_host(bytes.data(), 64, 8), std::out_of_range);
  lockstep::stream s(cpu);
  lockstep::event start(cpu), stop(cpu);
  start.record(&s);
  b.fill_bytes(7);
  stop.record(&s);
  stop.synchronize();
  EXPECT_GE(lockstep::event::elapsed_ms(start, stop), 0.0);
  EXPECT_EQ(b.to_host<unsigned char>(), std::vector<unsigned char>(64, 7));
}

INSTANTIATE_TEST_SUITE_P(Devices, Jit, ::testing::ValuesIn(devices_here()),
                         [](const auto& info) { return info.param == cpu ? std::string("cpu") : "cuda" + std::to_string(info.param.index); });

}  // namespace
