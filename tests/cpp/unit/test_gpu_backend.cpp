// The GPU side of the runtime where there may be no GPU: the driver is
// loaded at run time and says why it cannot be used, and NVRTC (which needs
// no GPU) compiles kernels to CUBIN with the names the driver finds them by.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "jit/nvrtc.h"
#include "runtime/backend.h"
#include "runtime/cuda_driver.h"

namespace {

using lockstep::detail::compile_with_nvrtc;
using lockstep::detail::nvrtc_output;

const std::vector<std::string> sm90_options = {"-arch=sm_90", "-std=c++17", "-I" LOCKSTEP_SOURCE_INCLUDE_DIR};

// A kernel as src/jit/translation_unit.cpp assembles it for NVRTC: the
// kernel-table header, the user's text, a signature per named kernel.
const std::string saxpy_source = R"(#include "lockstep/jit/kernel_table.h"
__global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
template <int N> __global__ void k(float* out) { out[threadIdx.x] = N; }
extern "C" __device__ const lockstep::jit::signature lockstep_signature_0 = lockstep::jit::signature_of<decltype(saxpy)>::value;
)";

// Why NVRTC cannot be used here ("" when it can): its tests skip then.
std::string nvrtc_missing_reason() {
  try {
    lockstep::detail::nvrtc_version();
    return "";
  } catch (const lockstep::device_unavailable& e) {
    return e.what();
  }
}

}  // namespace

TEST(CudaDriver, CountAndReasonAgree) {
  const int count = lockstep::detail::cuda_device_count_or_zero();
  const std::string reason = lockstep::detail::cuda_driver_unavailable_reason();
  if (count > 0) {
    EXPECT_EQ(reason, "");
    GTEST_SKIP() << "this machine has " << count << " GPU(s); the no-GPU messages are not shown";
  }
  EXPECT_EQ(count, 0);
  EXPECT_NE(reason.find("driver"), std::string::npos) << reason;
  EXPECT_NE(reason.find("'cpu' device"), std::string::npos) << reason;
}

TEST(CudaDriver, NoDriverNamesTheLibraryThatWasTried) {
  if (lockstep::detail::cuda_device_count_or_zero() > 0) GTEST_SKIP() << "a GPU is present";
  const std::string reason = lockstep::detail::cuda_driver_unavailable_reason();
  // Either libcuda is missing (say which file) or it loaded and found nothing.
  EXPECT_TRUE(reason.find("libcuda.so.1") != std::string::npos || reason.find("driver loaded") != std::string::npos) << reason;
}

TEST(CudaBackend, MissingDeviceThrowsDeviceUnavailable) {
  const int count = lockstep::detail::cuda_device_count_or_zero();
  // One past the last GPU exists nowhere, with or without a driver.
  EXPECT_THROW(lockstep::detail::make_cuda_backend(count), lockstep::device_unavailable);
  EXPECT_THROW(lockstep::detail::make_cuda_backend(-1), lockstep::device_unavailable);
  if (count == 0) {
    try {
      lockstep::detail::make_cuda_backend(0);
      FAIL() << "make_cuda_backend(0) did not throw without a GPU";
    } catch (const lockstep::device_unavailable& e) {
      EXPECT_EQ(std::string(e.what()), lockstep::detail::cuda_driver_unavailable_reason());
    }
  }
}

TEST(CudaDriver, ErrorsSayWhatFailedAndWhatToDo) {
  namespace cu = lockstep::detail::cu;
  const std::string out_of_memory = cu::describe_error(cu::CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc of 1024 bytes");
  EXPECT_EQ(out_of_memory.rfind("cuMemAlloc of 1024 bytes failed: ", 0), 0u) << out_of_memory;
  EXPECT_NE(out_of_memory.find("free buffers"), std::string::npos) << out_of_memory;
  EXPECT_NE(cu::describe_error(cu::CUDA_ERROR_NO_BINARY_FOR_GPU, "loading").find("arch"), std::string::npos);
  EXPECT_NO_THROW(cu::check(cu::CUDA_SUCCESS, "nothing"));
}

TEST(CudaDriver, KernelFaultsThrowKernelErrorAndOthersCudaError) {
  namespace cu = lockstep::detail::cu;
  try {
    cu::check(cu::CUDA_ERROR_ILLEGAL_ADDRESS, "cuCtxSynchronize");
    FAIL() << "no exception";
  } catch (const lockstep::kernel_error& e) {
    EXPECT_EQ(e.code(), cudaErrorIllegalAddress);
    EXPECT_NE(std::string(e.what()).find("must restart"), std::string::npos) << e.what();
  }
  try {
    cu::check(cu::CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc");
    FAIL() << "no exception";
  } catch (const lockstep::kernel_error& e) {
    FAIL() << "out of memory is not a kernel fault: " << e.what();
  } catch (const lockstep::cuda_error& e) {
    EXPECT_EQ(e.code(), cudaErrorMemoryAllocation);
  }
  EXPECT_THROW(cu::throw_launch_error(cu::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "launch of kernel 'k'"), lockstep::launch_error);
  EXPECT_THROW(cu::throw_launch_error(cu::CUDA_ERROR_LAUNCH_FAILED, "launch of kernel 'k'"), lockstep::kernel_error);
}

TEST(Nvrtc, CompilesToCubinWithLoweredNames) {
  if (const std::string why = nvrtc_missing_reason(); !why.empty()) GTEST_SKIP() << why;
  const nvrtc_output out = compile_with_nvrtc(saxpy_source, "kernel.cu", sm90_options, {"saxpy", "k<16>"});
  ASSERT_GE(out.cubin.size(), 64u);
  EXPECT_EQ(out.cubin.substr(0, 4),
            "\x7f"
            "ELF");
  ASSERT_EQ(out.lowered_names.size(), 2u);
  EXPECT_EQ(out.lowered_names[0], "_Z5saxpyfPKfPfi");  // saxpy(float, const float*, float*, int)
  EXPECT_EQ(out.lowered_names[1].rfind("_Z", 0), 0u) << out.lowered_names[1];
  EXPECT_NE(out.lowered_names[1].find("ILi16E"), std::string::npos) << out.lowered_names[1];  // the <16> instance
  // The signature the runtime reads back with cuModuleGetGlobal is in the image.
  EXPECT_NE(out.cubin.find("lockstep_signature_0"), std::string::npos);
}

TEST(Nvrtc, VersionIsMajorDotMinor) {
  if (const std::string why = nvrtc_missing_reason(); !why.empty()) GTEST_SKIP() << why;
  const std::string version = lockstep::detail::nvrtc_version();
  const auto dot = version.find('.');
  ASSERT_NE(dot, std::string::npos) << version;
  EXPECT_GE(std::stoi(version.substr(0, dot)), 11) << version;
}

TEST(Nvrtc, CompileErrorCarriesTheLogWithTheUsersLineNumbers) {
  if (const std::string why = nvrtc_missing_reason(); !why.empty()) GTEST_SKIP() << why;
  const std::string source = "__global__ void k(float* out) {\n  int i = threadIdx.x;\n  out[i] = undeclared_value;\n}\n";
  try {
    compile_with_nvrtc(source, "kernel.cu", sm90_options, {"k"});
    FAIL() << "a source with an undeclared name compiled";
  } catch (const lockstep::compile_error& e) {
    EXPECT_NE(std::string(e.what()).find("NVRTC could not compile kernel.cu"), std::string::npos) << e.what();
    EXPECT_NE(e.log().find("kernel.cu(3)"), std::string::npos) << e.log();
    EXPECT_NE(e.log().find("undeclared_value"), std::string::npos) << e.log();
  }
}

TEST(Nvrtc, AVirtualArchitectureIsRefusedWithAHint) {
  if (const std::string why = nvrtc_missing_reason(); !why.empty()) GTEST_SKIP() << why;
  try {
    compile_with_nvrtc("__global__ void k() {}\n", "kernel.cu", {"-arch=compute_90"}, {"k"});
    FAIL() << "compiling for a virtual architecture gave no CUBIN but no error either";
  } catch (const lockstep::compile_error& e) {
    EXPECT_NE(std::string(e.what()).find("-arch=sm_90"), std::string::npos) << e.what();
  }
}

TEST(Nvrtc, AnUnknownOptionIsACompileError) {
  if (const std::string why = nvrtc_missing_reason(); !why.empty()) GTEST_SKIP() << why;
  EXPECT_THROW(compile_with_nvrtc("__global__ void k() {}\n", "kernel.cu", {"-arch=sm_90", "--no-such-option"}, {"k"}), lockstep::compile_error);
}
