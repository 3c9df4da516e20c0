// The host-build rewrite of dynamic shared memory declarations.
#include <gtest/gtest.h>

#include <algorithm>

#include "emulator/compile_time/host_source/host_source.h"

using lockstep::emu::host_source;

namespace {
const std::string pointer_to_dynamic = "*>(::lockstep::emu::dynamic_shared_memory());";
}

TEST(HostSource, RewritesExternSharedArray) {
  const std::string out = host_source("void k() { extern __shared__ float tiles[]; tiles[0] = 1; }");
  EXPECT_NE(out.find("float* const tiles = reinterpret_cast<float" + pointer_to_dynamic), std::string::npos) << out;
  EXPECT_EQ(out.find("extern"), std::string::npos) << out;
}

// `__shared__` may stand anywhere among the specifiers, as the CUDA samples write it.
TEST(HostSource, RewritesSharedAfterTheType) {
  const std::string out = host_source("void k() { extern double __shared__ sdata[]; extern const int __shared__ counts[]; }");
  EXPECT_NE(out.find("double* const sdata = reinterpret_cast<double" + pointer_to_dynamic), std::string::npos) << out;
  EXPECT_NE(out.find("const int* const counts = reinterpret_cast<const int" + pointer_to_dynamic), std::string::npos) << out;
}

TEST(HostSource, DropsAlignmentFromTheCastOnly) {
  const std::string out = host_source("void k() { extern __shared__ __align__(16) unsigned char raw[ ]; }");
  EXPECT_NE(out.find("__align__(16) unsigned char* const raw = reinterpret_cast<unsigned char" + pointer_to_dynamic), std::string::npos) << out;
}

// lockstep nvcc rewrites the preprocessed source, where `__align__(16)` is an attribute.
TEST(HostSource, DropsAttributesFromTheCastOnly) {
  const std::string out = host_source("void k() { extern __shared__ __attribute__((aligned(16))) float tiles[]; }");
  EXPECT_NE(out.find("__attribute__((aligned(16))) float* const tiles = reinterpret_cast<float" + pointer_to_dynamic), std::string::npos) << out;
}

// At file scope (or in a namespace) no launch is running when the program
// starts: the name reads the running block's buffer where a kernel uses it.
TEST(HostSource, ExternSharedAtFileScopeReadsTheRunningBlocksBuffer) {
  const std::string out = host_source(
      "extern __shared__ unsigned char block[];\n"
      "namespace n { extern __shared__ __align__(8) float in_namespace[]; }\n"
      "extern \"C\" { extern __shared__ int in_linkage[]; }\n"
      "__global__ void k() { extern __shared__ double local[]; }\n");
  EXPECT_NE(out.find("static const ::lockstep::emu::dynamic_shared_array<unsigned char> block{};"), std::string::npos) << out;
  EXPECT_NE(out.find("static const ::lockstep::emu::dynamic_shared_array<float> in_namespace{};"), std::string::npos) << out;
  EXPECT_NE(out.find("static const ::lockstep::emu::dynamic_shared_array<int> in_linkage{};"), std::string::npos) << out;
  EXPECT_NE(out.find("double* const local = reinterpret_cast<double" + pointer_to_dynamic), std::string::npos) << out;
}

// `extern __shared__ T name[][N];` in a kernel (the CUDA samples' tensor-core
// GEMMs): a pointer to rows of N.
TEST(HostSource, ExternSharedRowsBecomeAPointerToRows) {
  const std::string out = host_source("__global__ void k() { extern __shared__ int4 rows[][8 * 4 + 2]; rows[1][2] = int4(); }");
  EXPECT_NE(out.find("int4 (* const rows)[8 * 4 + 2] = reinterpret_cast<int4 (*)[8 * 4 + 2]>(::lockstep::emu::dynamic_shared_memory());"),
            std::string::npos)
      << out;
}

TEST(HostSource, KeepsLineNumbers) {
  const std::string in = "a\nextern\n  __shared__\n  int s[];\nb\n";
  const std::string out = host_source(in);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), std::count(in.begin(), in.end(), '\n')) << out;
  EXPECT_EQ(out.substr(out.rfind('\n', out.size() - 2) + 1), "b\n");
}

TEST(HostSource, LeavesCommentsStringsAndOtherExternsAlone) {
  const std::string in =
      "// extern __shared__ float a[];\n"
      "/* extern __shared__ float b[]; */\n"
      "const char* s = \"extern __shared__ float c[];\";\n"
      "extern \"C\" __global__ void k();\n"
      "extern int counter;\n"
      "__shared__ float tile[16][16];\n";
  EXPECT_EQ(host_source(in), in);
}

TEST(HostSource, ReadsDeclarationsAsTokens) {
  const std::string out = host_source("void k() { extern /* dynamic */ __shared__\n  pair<int, float> cells [ ] ;\nint after; }\n");
  EXPECT_EQ(
      out,
      "void k() { pair<int, float>* const cells = reinterpret_cast<pair<int, float>*>(::lockstep::emu::dynamic_shared_memory());\n\nint after; }\n");
}

TEST(HostSource, LeavesWhatIsNotOneUnsizedArrayAlone) {
  const std::string in =
      "extern __shared__ float two[], arrays[];\n"
      "extern __shared__ float sized[4];\n"
      "extern __shared__ float rows[][4];\n"
      "#define DECLARE extern __shared__ float in_macro[];\n"
      "const char* raw = R\"(extern __shared__ float in_raw_string[];)\";\n";
  EXPECT_EQ(host_source(in), in);
}

TEST(HostSource, RewritesEveryDeclaration) {
  const std::string out = host_source("void a() { extern __shared__ int x[]; }\nvoid b() { extern __shared__ double y[]; }\n");
  EXPECT_NE(out.find("int* const x = reinterpret_cast<int" + pointer_to_dynamic), std::string::npos) << out;
  EXPECT_NE(out.find("double* const y = reinterpret_cast<double" + pointer_to_dynamic), std::string::npos) << out;
}

// CUDA's launch syntax becomes a call whose resolver names the kernel: by the
// launch's argument count (kernel_named, which picks it from an overload set),
// by the arguments' exact types, or by a call of the name as written.
struct rewritten_launch {
  std::string prefix;  // the resolver up to the kernel's written text
  std::string rest;    // from the kernel's written text on
};
rewritten_launch split_launch(const std::string& out) {
  const std::string marker = "lockstep_param) { ";
  const std::size_t at = out.rfind(marker);
  if (at == std::string::npos) return {out, ""};
  return {out.substr(0, at + marker.size()), out.substr(at + marker.size())};
}

TEST(HostSource, RewritesLaunchSyntax) {
  const auto expect_launch = [](const std::string& in, const std::string& kernel_tokens, const std::string& name, std::size_t arguments,
                                const std::string& rest) {
    const rewritten_launch out = split_launch(host_source(in));
    EXPECT_EQ(out.prefix.rfind("::lockstep::emu::chevron_launch([&](auto... lockstep_arg) {", 0), 0u) << out.prefix;
    EXPECT_NE(out.prefix.find("arity_for<" + std::to_string(arguments) + ", "), std::string::npos) << out.prefix;
    EXPECT_NE(out.prefix.find("kernel_named(lockstep_arity{}, " + kernel_tokens + ")"), std::string::npos) << out.prefix;
    EXPECT_NE(out.prefix.find("static_cast<void (*)(typename decltype(lockstep_arg)::type...)>(" + kernel_tokens + ")"), std::string::npos)
        << out.prefix;
    EXPECT_NE(out.prefix.find("call_by_name<typename decltype(lockstep_arg)::type...>(\"" + name + "\""), std::string::npos) << out.prefix;
    EXPECT_EQ(out.rest, rest);
  };
  expect_launch("k<<<grid, block>>>(a, b);", "k ", "k", 2, "k(lockstep_param...); }); }, grid, block)(a, b);");
  expect_launch("ns::k<T, 4><<<g, b, shared, stream>>>(x);", "ns :: k < T , 4 > ", "ns::k<T,4>", 1,
                "ns::k<T, 4>(lockstep_param...); }); }, g, b, shared, stream)(x);");
  expect_launch("::k<<<1, 32>>>();", ":: k ", "::k", 0, "::k(lockstep_param...); }); }, 1, 32)();");
  expect_launch("(*fp)<<<1, 32>>>(p);", "( * fp ) ", "(*fp)", 1, "(*fp)(lockstep_param...); }); }, 1, 32)(p);");
  expect_launch("Outer<int>::k<<<1, 32>>>(p);", "Outer < int > :: k ", "Outer<int>::k", 1, "Outer<int>::k(lockstep_param...); }); }, 1, 32)(p);");
  expect_launch("k<std::vector<int>><<<1, 32>>>(p);", "k < std :: vector < int >> ", "k<std::vector<int>>", 1,
                "k<std::vector<int>>(lockstep_param...); }); }, 1, 32)(p);");
  expect_launch("k<<<1, 32>>>(f(a, b), c[i, j], {1, 2});", "k ", "k", 3, "k(lockstep_param...); }); }, 1, 32)(f(a, b), c[i, j], {1, 2});");
}

TEST(HostSource, LaunchSyntaxKeepsLines) {
  const std::string in = "k<float>\n  <<<dim3(n / 64),\n     64>>>(y,\n          n);\nint after;\n";
  const rewritten_launch out = split_launch(host_source(in));
  EXPECT_EQ(out.prefix.find('\n'), std::string::npos) << out.prefix;
  EXPECT_EQ(out.rest, "k<float>\n  (lockstep_param...); }); }, dim3(n / 64),\n     64)(y,\n          n);\nint after;\n");
}

TEST(HostSource, LeavesShiftsAndTextAlone) {
  const std::string in =
      "int a = b << c >> d;\n"
      "// k<<<1, 2>>>(x);\n"
      "const char* s = \"k<<<1, 2>>>(x)\";\n"
      "#define LAUNCH k<<<1, 2>>>(x)\n";
  EXPECT_EQ(host_source(in), in);
}

// In preprocessed source `__shared__` is kept, and an extern array's is rewritten with its declaration.
TEST(HostSource, ExternSharedAfterTheTypeInPreprocessedSource) {
  using lockstep::emu::source_form;
  const std::string out = host_source("__global__ void k() { __shared__ int s[4]; extern double __shared__ sdata[]; }", source_form::preprocessed);
  EXPECT_NE(out.find("thread_local int s[4];"), std::string::npos) << out;
  EXPECT_NE(out.find("double* const sdata = reinterpret_cast<double" + pointer_to_dynamic), std::string::npos) << out;
}

// `__shared__ alignas(16) float a[8];`: thread_local cannot come before a standard attribute.
TEST(HostSource, SharedBeforeAlignasPutsTheAlignmentFirst) {
  using lockstep::emu::source_form;
  const std::string out = host_source("__global__ void k() { __shared__ alignas(alignof(float4)) float a[8]; }", source_form::preprocessed);
  EXPECT_NE(out.find("alignas(alignof(float4)) thread_local float a[8];"), std::string::npos) << out;
}

// A __constant__ definition is `used`: one only the host writes (through
// cuModuleGetGlobal) must not be folded to zeros; an extern declaration is left plain.
TEST(HostSource, ConstantDefinitionsAreKept) {
  using lockstep::emu::source_form;
  const std::string out = host_source("static __constant__ float c[4];\nextern __constant__ float d[4];\n", source_form::preprocessed);
  EXPECT_NE(out.find("static __attribute__((used)) float c[4];"), std::string::npos) << out;
  EXPECT_NE(out.find("extern  float d[4];"), std::string::npos) << out;
}

// Preprocessed input: keywords the driver kept are mapped here.
TEST(HostSource, MapsKeptKeywordsInPreprocessedSource) {
  using lockstep::emu::source_form;
  // A kernel's body starts with the test that a call outside a launch runs nothing.
  const std::string unlaunched = " if (::lockstep::emu::kernel_called_unlaunched()) return ::lockstep::emu::record_unlaunched_kernel_call();";
  EXPECT_EQ(host_source("__global__ void k(int* p) { __shared__ float t[4]; }", source_form::preprocessed),
            "__attribute__((used)) void k(int* p) {" + unlaunched +
                " thread_local float t[4]; } static inline const bool lockstep_kernel_registered_51 = "
                "::lockstep::emu::register_kernel(static_cast<void (*)(int * p )>(&k));");
  // Overloaded kernels are registered by their type, default arguments left out.
  const std::string overloads = host_source(
      "__global__ void h(float* y, std::pair<int, int> q = {1, 2}, int n = 3) {}\n__global__ void h(double* y) {}", source_form::preprocessed);
  EXPECT_NE(overloads.find("register_kernel(static_cast<void (*)(float * y , std :: pair < int , int > q , int n )>(&h))"), std::string::npos)
      << overloads;
  EXPECT_NE(overloads.find("register_kernel(static_cast<void (*)(double * y )>(&h))"), std::string::npos) << overloads;
  // Declarations and templates are not registered (a template has no one address).
  EXPECT_EQ(host_source("__global__ void k(int);\ntemplate <int n> __global__ void t() {}", source_form::preprocessed),
            "__attribute__((used)) void k(int);\ntemplate <int n> __attribute__((used)) void t() {" + unlaunched + "}");
  const std::string dynamic = host_source("void k() { extern __shared__ float s[]; }", source_form::preprocessed);
  EXPECT_NE(dynamic.find("float* const s = reinterpret_cast<float" + pointer_to_dynamic), std::string::npos) << dynamic;
  EXPECT_EQ(host_source("__global__ void k();"), "__global__ void k();");  // written source: the macros map them
}

// clock() is the SM's cycle counter in kernels: calls go to a function that
// asks whether a kernel runs; std::clock(), members and declarations stay.
TEST(HostSource, DeviceClockCallsOnly) {
  const std::string out = host_source(
      "clock_t clock();\n"
      "__global__ void k(long* t) { clock_t start = clock(); t[0] = clock() - start; }\n"
      "long f(timer& x) { return clock() + std::clock() + ::clock() + x.clock() + x->clock(); }\n");
  EXPECT_NE(out.find("clock_t clock();"), std::string::npos) << out;
  EXPECT_NE(out.find("clock_t start = ::lockstep::emu::device_or_host_clock();"), std::string::npos) << out;
  EXPECT_NE(out.find("t[0] = ::lockstep::emu::device_or_host_clock() - start;"), std::string::npos) << out;
  EXPECT_NE(out.find("return ::lockstep::emu::device_or_host_clock() + std::clock() + ::clock() + x.clock() + x->clock();"), std::string::npos)
      << out;
}

// The built-in variables read the running thread; a program's own variable of
// the same name (host code's `dim3 gridDim(...)`) is its own to the end of its scope.
TEST(HostSource, BuiltinVariablesAndTheProgramsOwn) {
  const std::string out = host_source(
      "__global__ void k(float* p) { p[threadIdx.x + blockIdx.x * blockDim.x] = gridDim.x; }\n"
      "void run(float* p, int n) {\n"
      "  n += f(n, blockIdx);\n"
      "  dim3 gridDim(n / 16, 1), blockDim = dim3(16);\n"
      "  k<<<gridDim, blockDim>>>(p);\n"
      "}\n"
      "extern const uint3 blockIdx;\n"
      "void show(dim3 threadIdx) { print(threadIdx.x, s.blockIdx); }\n"
      "__global__ void after(float* p) { p[threadIdx.x] = blockDim.x; }\n");
  const std::string read = "::lockstep::emu::builtin_";
  EXPECT_NE(out.find("p[" + read + "thread_idx().x + " + read + "block_idx().x * " + read + "block_dim().x] = " + read + "grid_dim().x;"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("n += f(n, " + read + "block_idx());"), std::string::npos) << out;
  EXPECT_NE(out.find("dim3 gridDim_lockstep_own(n / 16, 1), blockDim_lockstep_own = dim3(16);"), std::string::npos) << out;
  EXPECT_NE(out.find("k(lockstep_param...); }); }, gridDim_lockstep_own, blockDim_lockstep_own)(p)"), std::string::npos) << out;
  EXPECT_NE(out.find("void show(dim3 threadIdx_lockstep_own) { print(threadIdx_lockstep_own.x, s.blockIdx); }"), std::string::npos) << out;
  EXPECT_NE(out.find("p[" + read + "thread_idx().x] = " + read + "block_dim().x;"), std::string::npos) << out;
  EXPECT_NE(out.find("extern const uint3 blockIdx_lockstep_declared;"), std::string::npos) << out;
}

namespace {

using lockstep::emu::device_arch_conditionals;

std::size_t lines_of(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }

// `#if __CUDA_ARCH__` around device code gets the device pass's answer (900, an H100's).
// Reads of PTX's special registers become assignments; only the tokens around the output change.
TEST(HostSource, InlinePtxSpecialRegisterReads) {
  const std::string out = host_source(
      "__global__ void k(unsigned* out) {\n"
      "  unsigned lane; unsigned long long t;\n"
      "  asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(lane));\n"
      "  __asm__(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t) :: \"memory\");\n"
      "  asm(\"mov.u32 %0, %%ctaid.y;\" : \"=r\"(out[threadIdx.x]));\n"
      "  asm(\"ld.global.nc.u32 %0, [%1];\" : \"=r\"(lane) : \"l\"(out));\n"
      "}\n");
  EXPECT_NE(out.find("  (lane) = ::lockstep::emu::ptx::laneid();\n"), std::string::npos) << out;
  EXPECT_NE(out.find("  (t) = ::__globaltimer();\n"), std::string::npos) << out;
  // The output expression keeps its own rewrite.
  EXPECT_NE(out.find("(out[::lockstep::emu::builtin_thread_idx().x]) = ::lockstep::emu::builtin_block_idx().y;"), std::string::npos) << out;
  // Other PTX is left for the driver to refuse with its line.
  EXPECT_NE(out.find("asm(\"ld.global.nc.u32 %0, [%1];\""), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 7) << out;
}

TEST(DeviceArchConditionals, DeviceCodeGetsTheDevicePassAnswer) {
  const std::string in =
      "#if __CUDA_ARCH__ >= 700\n"
      "template <bool b> __device__ void helper(float* p) { p[0] = 1; }\n"
      "#endif\n"
      "__global__ void __launch_bounds__(256) k(int* a, int* p = NULL) {\n"
      "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
      "  a[0] = 2;\n"
      "#elif defined __CUDA_ARCH__\n"
      "  a[0] = 1;\n"
      "#endif\n"
      "  if (a) {\n"
      "#ifdef __CUDA_ARCH__\n"
      "    a[1] = 3;\n"
      "#endif\n"
      "  }\n"
      "}\n";
  const std::string out = device_arch_conditionals(in);
  EXPECT_NE(out.find("#if 900 >= 700\ntemplate"), std::string::npos) << out;
  EXPECT_NE(out.find("#if 1 && 900 >= 800\n"), std::string::npos) << out;
  EXPECT_NE(out.find("#elif 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("#if 1 /* lockstep"), std::string::npos) << out;
  EXPECT_EQ(out.find("__CUDA_ARCH__"), out.find("__CUDA_ARCH__ is 900")) << out;  // only in the comment
  EXPECT_EQ(lines_of(out), lines_of(in));
}

// Host code, code for both sides and inline assembly keep the host pass's answer.
TEST(DeviceArchConditionals, HostAndSharedCodeKeepTheHostPassAnswer) {
  const std::string in =
      "__host__ __device__ int f() {\n"
      "#ifdef __CUDA_ARCH__\n"
      "  return 1;\n"
      "#endif\n"
      "  return 0;\n"
      "}\n"
      "int main() {\n"
      "#ifndef __CUDA_ARCH__\n"
      "  return 0;\n"
      "#endif\n"
      "}\n"
      "#if __CUDA_ARCH__ >= 800\n"
      "__device__ int g() { return 1; }\n"
      "int host_too() { return 2; }\n"
      "#endif\n"
      "__device__ int h() {\n"
      "#if __CUDA_ARCH__ >= 800\n"
      "  asm(\"trap;\");\n"
      "#endif\n"
      "  return 0;\n"
      "}\n";
  EXPECT_EQ(device_arch_conditionals(in), in);
}

// A continued #ifdef keeps its lines.
TEST(DeviceArchConditionals, ContinuedDirectivesKeepTheirLines) {
  const std::string in = "__global__ void k(int* a) {\n#ifdef \\\n  __CUDA_ARCH__\n  a[0] = 1;\n#endif\n}\n";
  const std::string out = device_arch_conditionals(in);
  EXPECT_NE(out.find("#if 1 /* lockstep"), std::string::npos) << out;
  EXPECT_EQ(lines_of(out), lines_of(in)) << out;
  EXPECT_EQ(device_arch_conditionals("int x;\n"), "int x;\n");
}

}  // namespace
