#include "opencl_reference.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <stdexcept>

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

namespace opencl_reference {
namespace {

// emulator_bench.cu's kernels (kernels/matmul.cu and kernels/grayscale.cu
// for the library's), written in OpenCL C statement for statement.
constexpr const char* kernels_source = R"CL(
#pragma OPENCL FP_CONTRACT OFF
__kernel void matmul_naive(__global const float* a, __global const float* b, __global float* c, int m, int n, int k) {
  int row = get_group_id(1) * get_local_size(1) + get_local_id(1);
  int col = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (row < m && col < n) {
    float acc = 0.0f;
    for (int i = 0; i < k; ++i) acc += a[row * k + i] * b[i * n + col];
    c[row * n + col] = acc;
  }
}

#define TILE 16
__kernel void matmul_tiled_static(__global const float* a, __global const float* b, __global float* c, int m, int n, int k) {
  __local float a_tile[TILE][TILE];
  __local float b_tile[TILE][TILE];
  int tx = get_local_id(0), ty = get_local_id(1);
  int row = get_group_id(1) * TILE + ty, col = get_group_id(0) * TILE + tx;
  float acc = 0.0f;
  for (int t0 = 0; t0 < k; t0 += TILE) {
    a_tile[ty][tx] = (row < m && t0 + tx < k) ? a[row * k + t0 + tx] : 0.0f;
    b_tile[ty][tx] = (t0 + ty < k && col < n) ? b[(t0 + ty) * n + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = 0; i < TILE; ++i) acc += a_tile[ty][i] * b_tile[i][tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < m && col < n) c[row * n + col] = acc;
}

__kernel void matmul_tiled_dynamic(__global const float* a, __global const float* b, __global float* c, int m, int n, int k,
                                   __local float* tiles) {
  const int tile_size = get_local_size(0);
  __local float* a_tile = tiles;
  __local float* b_tile = tiles + tile_size * tile_size;
  int tx = get_local_id(0), ty = get_local_id(1);
  int row = get_group_id(1) * tile_size + ty, col = get_group_id(0) * tile_size + tx;
  float acc = 0.0f;
  for (int t0 = 0; t0 < k; t0 += tile_size) {
    a_tile[ty * tile_size + tx] = (row < m && t0 + tx < k) ? a[row * k + t0 + tx] : 0.0f;
    b_tile[ty * tile_size + tx] = (t0 + ty < k && col < n) ? b[(t0 + ty) * n + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = 0; i < tile_size; ++i) acc += a_tile[ty * tile_size + i] * b_tile[i * tile_size + tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < m && col < n) c[row * n + col] = acc;
}

uchar grey_level(uint r, uint g, uint b) { return (uchar)(0.2989f * (float)r + 0.5870f * (float)g + 0.1140f * (float)b); }

__kernel void rgb_to_grayscale_1d(__global uchar* out, __global const uchar* in, int pixels) {
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i < pixels) out[i] = grey_level(in[i], in[i + pixels], in[i + 2 * pixels]);
}

__kernel void rgb_to_grayscale_2d(__global uchar* out, __global const uchar* in, int width, int height) {
  int col = get_group_id(0) * get_local_size(0) + get_local_id(0);
  int row = get_group_id(1) * get_local_size(1) + get_local_id(1);
  if (col < width && row < height) {
    int i = row * width + col, pixels = width * height;
    out[i] = grey_level(in[i], in[i + pixels], in[i + 2 * pixels]);
  }
}

#define SUM_THREADS 512
__kernel void block_sum(__global float* block_sums, __global const float* in, int n) {
  __local float partial[SUM_THREADS];
  const int t = get_local_id(0);
  const int i = get_group_id(0) * SUM_THREADS + t;
  partial[t] = i < n ? in[i] : 0.0f;
  for (int stride = SUM_THREADS / 2; stride > 0; stride /= 2) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t < stride) partial[t] += partial[t + stride];
  }
  if (t == 0) block_sums[get_group_id(0)] = partial[0];
}
)CL";

// The OpenCL entry points, from the ICD loader.
struct api {
  void* library = nullptr;
// clang-format off
#define LOCKSTEP_CL_FUNCTIONS(X) \
  X(clGetPlatformIDs) \
  X(clGetDeviceIDs) \
  X(clGetDeviceInfo) \
  X(clCreateContext) \
  X(clCreateCommandQueue) \
  X(clCreateProgramWithSource) \
  X(clBuildProgram) \
  X(clGetProgramBuildInfo) \
  X(clCreateKernel) \
  X(clCreateBuffer) \
  X(clEnqueueWriteBuffer) \
  X(clEnqueueReadBuffer) \
  X(clSetKernelArg) \
  X(clEnqueueNDRangeKernel) \
  X(clFinish) \
  X(clReleaseMemObject) \
  X(clReleaseKernel) \
  X(clReleaseProgram) \
  X(clReleaseCommandQueue) \
  X(clReleaseContext)
// clang-format on
#define LOCKSTEP_CL_MEMBER(name) decltype(&::name) name = nullptr;
  LOCKSTEP_CL_FUNCTIONS(LOCKSTEP_CL_MEMBER)
#undef LOCKSTEP_CL_MEMBER

  bool load(std::string& why_not) {
    library = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      why_not = "no OpenCL library (libOpenCL.so.1): install pocl-opencl-icd";
      return false;
    }
#define LOCKSTEP_CL_LOAD(name)                                    \
  name = reinterpret_cast<decltype(name)>(dlsym(library, #name)); \
  if (!name) {                                                    \
    why_not = "libOpenCL.so.1 lacks " #name;                      \
    return false;                                                 \
  }
    LOCKSTEP_CL_FUNCTIONS(LOCKSTEP_CL_LOAD)
#undef LOCKSTEP_CL_LOAD
    return true;
  }
};

void check(cl_int status, const char* what) {
  if (status != CL_SUCCESS) throw std::runtime_error(std::string("OpenCL: ") + what + " failed (" + std::to_string(status) + ")");
}

class cl_session final : public session {
 public:
  bool open(unsigned compute_units, std::string& why_not) {
    // PoCL reads these when its CPU device starts: the OS threads it runs work groups on.
    if (compute_units) {
      const std::string units = std::to_string(compute_units);
      setenv("POCL_CPU_MAX_CU_COUNT", units.c_str(), 1);
      setenv("POCL_MAX_PTHREAD_COUNT", units.c_str(), 1);
    }
    if (!cl_.load(why_not)) return false;
    cl_uint platforms = 0;
    if (cl_.clGetPlatformIDs(0, nullptr, &platforms) != CL_SUCCESS || platforms == 0) {
      why_not = "no OpenCL platform: install pocl-opencl-icd";
      return false;
    }
    std::vector<cl_platform_id> ids(platforms);
    cl_.clGetPlatformIDs(platforms, ids.data(), nullptr);
    for (cl_platform_id p : ids)
      if (cl_.clGetDeviceIDs(p, CL_DEVICE_TYPE_CPU, 1, &device_, nullptr) == CL_SUCCESS) break;
    if (!device_) {
      why_not = "no OpenCL CPU device: install pocl-opencl-icd";
      return false;
    }
    char name[256] = {};
    cl_.clGetDeviceInfo(device_, CL_DEVICE_NAME, sizeof name - 1, name, nullptr);
    name_ = name;
    cl_int status = CL_SUCCESS;
    context_ = cl_.clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &status);
    check(status, "clCreateContext");
    queue_ = cl_.clCreateCommandQueue(context_, device_, 0, &status);
    check(status, "clCreateCommandQueue");
    const char* source = kernels_source;
    program_ = cl_.clCreateProgramWithSource(context_, 1, &source, nullptr, &status);
    check(status, "clCreateProgramWithSource");
    if (cl_.clBuildProgram(program_, 1, &device_, "-cl-std=CL1.2", nullptr, nullptr) != CL_SUCCESS) {
      std::string log(1 << 16, '\0');
      cl_.clGetProgramBuildInfo(program_, device_, CL_PROGRAM_BUILD_LOG, log.size() - 1, log.data(), nullptr);
      why_not = "PoCL did not build the OpenCL kernels: " + std::string(log.c_str());
      return false;
    }
    return true;
  }
  ~cl_session() override {
    release_buffers();
    for (auto& [name, kernel] : kernels_) cl_.clReleaseKernel(kernel);
    if (program_) cl_.clReleaseProgram(program_);
    if (queue_) cl_.clReleaseCommandQueue(queue_);
    if (context_) cl_.clReleaseContext(context_);
  }

  std::string device_name() const override { return name_; }

  int upload(const void* host, std::size_t bytes) override {
    cl_int status = CL_SUCCESS;
    cl_mem m = cl_.clCreateBuffer(context_, CL_MEM_READ_WRITE, std::max<std::size_t>(bytes, 1), nullptr, &status);
    check(status, "clCreateBuffer");
    buffers_.push_back(m);
    if (host) check(cl_.clEnqueueWriteBuffer(queue_, m, CL_TRUE, 0, bytes, host, 0, nullptr, nullptr), "clEnqueueWriteBuffer");
    return int(buffers_.size() - 1);
  }
  void download(int buffer, void* host, std::size_t bytes) override {
    check(cl_.clEnqueueReadBuffer(queue_, buffers_.at(buffer), CL_TRUE, 0, bytes, host, 0, nullptr, nullptr), "clEnqueueReadBuffer");
  }
  void release_buffers() override {
    for (cl_mem m : buffers_) cl_.clReleaseMemObject(m);
    buffers_.clear();
  }

  double time(const std::string& kernel_name, const std::vector<std::size_t>& global, const std::vector<std::size_t>& local,
              const std::vector<argument>& arguments, int repeats) override {
    cl_kernel& kernel = kernels_[kernel_name];
    cl_int status = CL_SUCCESS;
    if (!kernel) kernel = cl_.clCreateKernel(program_, kernel_name.c_str(), &status);
    check(status, "clCreateKernel");
    for (cl_uint i = 0; i < arguments.size(); ++i) {
      const argument& a = arguments[i];
      if (a.buffer >= 0)
        status = cl_.clSetKernelArg(kernel, i, sizeof(cl_mem), &buffers_.at(a.buffer));
      else if (a.local_bytes)
        status = cl_.clSetKernelArg(kernel, i, a.local_bytes, nullptr);
      else
        status = cl_.clSetKernelArg(kernel, i, a.value.size(), a.value.data());
      check(status, "clSetKernelArg");
    }
    auto run = [&] {
      check(cl_.clEnqueueNDRangeKernel(queue_, kernel, cl_uint(global.size()), nullptr, global.data(), local.data(), 0, nullptr, nullptr),
            "clEnqueueNDRangeKernel");
      check(cl_.clFinish(queue_), "clFinish");
    };
    run();  // warm-up: PoCL compiles the kernel for this work-group size here
    std::vector<double> times;
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      run();
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  }

 private:
  api cl_;
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_program program_ = nullptr;
  std::string name_;
  std::vector<cl_mem> buffers_;
  std::map<std::string, cl_kernel> kernels_;
};

}  // namespace

std::unique_ptr<session> session::open(unsigned compute_units, std::string& why_not) {
  auto s = std::make_unique<cl_session>();
  try {
    if (!s->open(compute_units, why_not)) return nullptr;
  } catch (const std::exception& e) {
    why_not = e.what();
    return nullptr;
  }
  return s;
}

}  // namespace opencl_reference
