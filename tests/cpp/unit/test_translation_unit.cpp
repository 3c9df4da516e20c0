// Finding kernels in a source and assembling the JIT's translation unit.
#include <gtest/gtest.h>

#include "jit/translation_unit.h"

using lockstep::jit::assemble_translation_unit;
using lockstep::jit::compile_target;
using lockstep::jit::discover_kernel_names;
using names = std::vector<std::string>;

TEST(TranslationUnit, FindsPlainAndExternCKernels) {
  EXPECT_EQ(discover_kernel_names("__global__ void a(int* p) {}\n"
                                  "extern \"C\" __global__ void b(float x) { }\n"
                                  "extern \"C\" { __global__ void c() {} }\n"
                                  "static __global__ void __launch_bounds__(256, 2) d(int n) {}\n"),
            (names{"a", "b", "c", "d"}));
}

TEST(TranslationUnit, QualifiesNamespacesAndSkipsTemplates) {
  EXPECT_EQ(discover_kernel_names("namespace outer { namespace inner {\n"
                                  "__global__ void k(int* p) { if (p) { *p = 1; } }\n"
                                  "} }\n"
                                  "namespace { __global__ void hidden() {} }\n"
                                  "template <int N>\n__global__ void t(float* x) {}\n"
                                  "__global__ void after_template(int) {}\n"),
            (names{"outer::inner::k", "hidden", "after_template"}));
}

TEST(TranslationUnit, IgnoresCommentsStringsDeclarationsTwiceAndMembers) {
  EXPECT_EQ(discover_kernel_names("// __global__ void commented() {}\n"
                                  "/* __global__ void block_comment() {} */\n"
                                  "const char* s = \"__global__ void in_string()\";\n"
                                  "#define K __global__ void from_macro()\n"
                                  "__global__ void declared(int);\n"
                                  "__global__ void declared(int n) {}\n"),
            (names{"declared"}));
}

TEST(TranslationUnit, QualifiesNestedNamespaceDefinitions) {
  EXPECT_EQ(discover_kernel_names("namespace a::b { __global__ void k() {} }\n"
                                  "namespace c { inline namespace v1 { __global__ void l() {} } }\n"
                                  "struct s { static __global__ void member() {} };\n"
                                  "namespace d { class e { }; __global__ void m(e*) {} }\n"),
            (names{"a::b::k", "c::v1::l", "d::m"}));
}

TEST(TranslationUnit, IgnoresRawStringsAndContinuedMacros) {
  EXPECT_EQ(discover_kernel_names("const char* doc = R\"(\n__global__ void in_raw() {}\n)\";\n"
                                  "#define KERNEL \\\n  __global__ void continued() {}\n"
                                  "__global__ void __launch_bounds__(128) __maxnreg__(64) real() {}\n"),
            (names{"real"}));
}

TEST(TranslationUnit, AssemblesTableAndKeepsUserLines) {
  const std::string tu = assemble_translation_unit("__global__ void k(int* p) {}\n", "user.cu", {"k", "t<4>"}, compile_target::host);
  EXPECT_NE(tu.find("#line 1 \"user.cu\"\n__global__ void k"), std::string::npos) << tu;
  EXPECT_NE(tu.find("lockstep_signature_1 = ::lockstep::jit::signature_of<decltype(t<4>)>::value;"), std::string::npos) << tu;
  EXPECT_NE(tu.find("&::lockstep::jit::launcher<&t<4>>"), std::string::npos) << tu;
  EXPECT_NE(tu.find("lockstep_kernel_count = 2;"), std::string::npos) << tu;
  const std::string rtc = assemble_translation_unit("", "user.cu", {"k"}, compile_target::nvrtc);
  EXPECT_NE(rtc.find("extern \"C\" __device__ const ::lockstep::jit::signature lockstep_signature_0"), std::string::npos) << rtc;
  EXPECT_EQ(rtc.find("lockstep_kernel_table"), std::string::npos) << "NVRTC modules have no host launchers";
}
