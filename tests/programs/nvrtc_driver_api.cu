// NVRTC and the driver API as a program uses them: kernels compiled from a
// string at run time (an extern "C" kernel, a template's instance by name
// expression, a __device__ variable), loaded with cuModuleLoadData, launched
// with cuLaunchKernel through both ways of passing arguments; and the errors
// of a source that does not compile, a name the module lacks and a bad image.
// A texture object over a CUDA array made with the driver API is read too.
// Exit status 0 when everything holds; each failure is printed.
#include <cuda.h>
#include <nvrtc.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

int failures = 0;
void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::printf("FAILED: %s\n", what.c_str());
    ++failures;
  }
}
#define CU_OK(call) expect((call) == CUDA_SUCCESS, #call)
#define NVRTC_OK(call) expect((call) == NVRTC_SUCCESS, #call)

const char* const kernels = R"(
__device__ int launches;
static __constant__ int table[3];  // internal linkage, written only by the host: still found by name, and read as written
extern "C" __global__ void read_table(int* out) { out[threadIdx.x] = table[threadIdx.x]; }

extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
  if (i == 0) atomicAdd(&launches, 1);
}

extern "C" __global__ void fetch(float* out, cudaTextureObject_t texture, int width, int height) {
  const int x = threadIdx.x, y = blockIdx.x;
  if (x < width && y < height) out[y * width + x] = tex2D<float>(texture, x + 0.5f, y + 0.5f);
}

template <class T, int scale>
__global__ void scaled_copy(const T* in, T* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = in[i] * T(scale);
}
)";

std::vector<char> compile(const char* source, std::vector<const char*> name_expressions, std::vector<std::string>& lowered) {
  nvrtcProgram program = nullptr;
  NVRTC_OK(nvrtcCreateProgram(&program, source, "kernels.cu", 0, nullptr, nullptr));
  for (const char* e : name_expressions) NVRTC_OK(nvrtcAddNameExpression(program, e));
  const char* options[] = {"--gpu-architecture=sm_90", "-std=c++17"};
  const nvrtcResult compiled = nvrtcCompileProgram(program, 2, options);
  std::size_t log_size = 0;
  NVRTC_OK(nvrtcGetProgramLogSize(program, &log_size));
  std::string log(log_size, '\0');
  NVRTC_OK(nvrtcGetProgramLog(program, log.data()));
  expect(compiled == NVRTC_SUCCESS, std::string("nvrtcCompileProgram: ") + nvrtcGetErrorString(compiled) + "\n" + log);
  for (const char* e : name_expressions) {
    const char* name = nullptr;
    NVRTC_OK(nvrtcGetLoweredName(program, e, &name));
    lowered.emplace_back(name ? name : "");
  }
  std::size_t size = 0;
  NVRTC_OK(nvrtcGetCUBINSize(program, &size));
  std::vector<char> image(size);
  NVRTC_OK(nvrtcGetCUBIN(program, image.data()));
  NVRTC_OK(nvrtcDestroyProgram(&program));
  return image;
}

}  // namespace

int main() {
  CU_OK(cuInit(0));
  CUdevice device = 0;
  CU_OK(cuDeviceGet(&device, 0));
  CUcontext context = nullptr;
  CU_OK(cuDevicePrimaryCtxRetain(&context, device));
  CU_OK(cuCtxSetCurrent(context));

  std::vector<std::string> lowered;
  const std::vector<char> image = compile(kernels, {"scaled_copy<float, 3>", "scaled_copy<int, -2>"}, lowered);
  CUmodule module = nullptr;
  CU_OK(cuModuleLoadData(&module, image.data()));
  if (failures) return 1;

  std::mt19937 random(std::random_device{}());
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const int n = 1000 + static_cast<int>(random() % 500);
  std::vector<float> x(n), y(n), out(n, std::nanf(""));
  for (int i = 0; i < n; ++i) x[i] = uniform(random), y[i] = uniform(random);
  CUdeviceptr dx = 0, dy = 0, dout = 0;
  CU_OK(cuMemAlloc(&dx, n * sizeof(float)));
  CU_OK(cuMemAlloc(&dy, n * sizeof(float)));
  CU_OK(cuMemAlloc(&dout, n * sizeof(float)));
  CU_OK(cuMemcpyHtoD(dx, x.data(), n * sizeof(float)));
  CU_OK(cuMemcpyHtoD(dy, y.data(), n * sizeof(float)));

  // Arguments as an array of pointers.
  CUfunction axpy = nullptr;
  CU_OK(cuModuleGetFunction(&axpy, module, "axpy"));
  float a = 2.5f;
  void* params[] = {&a, &dx, &dy, const_cast<int*>(&n)};
  CU_OK(cuLaunchKernel(axpy, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr));
  // The same again with the arguments packed in one buffer, each at its
  // alignment: (float, pointer, pointer, int) at offsets 0, 8, 16, 24.
  char packed[28];
  std::memcpy(packed, &a, sizeof a);
  std::memcpy(packed + 8, &dx, sizeof dx);
  std::memcpy(packed + 16, &dy, sizeof dy);
  std::memcpy(packed + 24, &n, sizeof n);
  std::size_t packed_size = sizeof packed;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &packed_size, CU_LAUNCH_PARAM_END};
  CU_OK(cuLaunchKernel(axpy, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, nullptr, extra));
  CU_OK(cuCtxSynchronize());
  CU_OK(cuMemcpyDtoH(out.data(), dy, n * sizeof(float)));
  for (int i = 0; i < n; ++i) {
    const double expected = double(a) * x[i] + (double(a) * x[i] + y[i]);
    if (std::fabs(out[i] - expected) > 1e-5 * (1 + std::fabs(expected))) {
      expect(false, "axpy twice: element " + std::to_string(i) + " is " + std::to_string(out[i]) + ", expected " + std::to_string(expected));
      break;
    }
  }

  // The __device__ counter the kernel bumped once per launch.
  CUdeviceptr counter = 0;
  std::size_t counter_bytes = 0;
  CU_OK(cuModuleGetGlobal(&counter, &counter_bytes, module, "launches"));
  int launches = -1;
  CU_OK(cuMemcpyDtoH(&launches, counter, sizeof launches));
  expect(counter_bytes == sizeof(int) && launches == 2,
         "cuModuleGetGlobal: " + std::to_string(counter_bytes) + " bytes, " + std::to_string(launches) + " launches counted");

  // A static __constant__ array, which a module names too (binomialOptions_nvrtc's d_OptionData).
  CUdeviceptr table = 0;
  std::size_t table_bytes = 0;
  CU_OK(cuModuleGetGlobal(&table, &table_bytes, module, "table"));
  expect(table_bytes == 3 * sizeof(int), "cuModuleGetGlobal finds a static __constant__ array: " + std::to_string(table_bytes) + " bytes");
  if (table) {
    const int written[3] = {4, 5, 6};
    CU_OK(cuMemcpyHtoD(table, written, sizeof written));
    CUfunction read_table = nullptr;
    CU_OK(cuModuleGetFunction(&read_table, module, "read_table"));
    CUdeviceptr read = 0;
    CU_OK(cuMemAlloc(&read, sizeof written));
    void* table_args[] = {&read};
    CU_OK(cuLaunchKernel(read_table, 1, 1, 1, 3, 1, 1, 0, nullptr, table_args, nullptr));
    CU_OK(cuCtxSynchronize());
    int seen[3] = {};
    CU_OK(cuMemcpyDtoH(seen, read, sizeof seen));
    expect(seen[0] == 4 && seen[1] == 5 && seen[2] == 6, "a kernel reads what the host wrote into a static __constant__ array");
    CU_OK(cuMemFree(read));
  }

  // A template's instance, by the lowered name of its name expression.
  CUfunction scaled = nullptr;
  CU_OK(cuModuleGetFunction(&scaled, module, lowered.at(0).c_str()));
  std::fill(out.begin(), out.end(), std::nanf(""));
  CU_OK(cuMemcpyHtoD(dout, out.data(), n * sizeof(float)));
  void* scaled_params[] = {&dx, &dout, const_cast<int*>(&n)};
  CU_OK(cuLaunchKernel(scaled, 3, 1, 1, 64, 1, 1, 0, nullptr, scaled_params, nullptr));
  CU_OK(cuMemcpyDtoH(out.data(), dout, n * sizeof(float)));
  for (int i = 0; i < n; ++i)
    if (out[i] != x[i] * 3.0f) {
      expect(false, "scaled_copy<float, 3>: element " + std::to_string(i));
      break;
    }
  expect(lowered.at(0) != lowered.at(1) && !lowered.at(1).empty(), "two instances have two lowered names");

  // A CUDA array through cuArrayCreate and cuMemcpy2D, read by a texture
  // object: floats as they are, bytes as normalized floats (the driver's
  // default without CU_TRSF_READ_AS_INTEGER).
  CUfunction fetch = nullptr;
  CU_OK(cuModuleGetFunction(&fetch, module, "fetch"));
  int width = 8 + static_cast<int>(random() % 8), height = 3 + static_cast<int>(random() % 4);
  std::vector<float> texels(width * height);
  std::vector<unsigned char> bytes(width * height);
  for (int i = 0; i < width * height; ++i) texels[i] = uniform(random), bytes[i] = static_cast<unsigned char>(random() % 256);
  for (const bool as_bytes : {false, true}) {
    CUDA_ARRAY_DESCRIPTOR shape{};
    shape.Width = width;
    shape.Height = height;
    shape.Format = as_bytes ? CU_AD_FORMAT_UNSIGNED_INT8 : CU_AD_FORMAT_FLOAT;
    shape.NumChannels = 1;
    CUarray array = nullptr;
    CU_OK(cuArrayCreate(&array, &shape));
    const std::size_t element = as_bytes ? 1 : sizeof(float);
    CUDA_MEMCPY2D copy{};
    copy.srcMemoryType = CU_MEMORYTYPE_HOST;
    copy.srcHost = as_bytes ? static_cast<const void*>(bytes.data()) : static_cast<const void*>(texels.data());
    copy.srcPitch = width * element;
    copy.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    copy.dstArray = array;
    copy.WidthInBytes = width * element;
    copy.Height = height;
    CU_OK(cuMemcpy2D(&copy));
    CUDA_RESOURCE_DESC resource{};
    resource.resType = CU_RESOURCE_TYPE_ARRAY;
    resource.res.array.hArray = array;
    CUDA_TEXTURE_DESC sampling{};
    sampling.addressMode[0] = sampling.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
    sampling.filterMode = CU_TR_FILTER_MODE_POINT;
    CUtexObject texture = 0;
    CU_OK(cuTexObjectCreate(&texture, &resource, &sampling, nullptr));
    std::vector<float> fetched(width * height, std::nanf(""));
    CU_OK(cuMemcpyHtoD(dout, fetched.data(), width * height * sizeof(float)));
    void* fetch_params[] = {&dout, &texture, &width, &height};
    CU_OK(cuLaunchKernel(fetch, height, 1, 1, 32, 1, 1, 0, nullptr, fetch_params, nullptr));
    CU_OK(cuMemcpyDtoH(fetched.data(), dout, width * height * sizeof(float)));
    for (int i = 0; i < width * height; ++i) {
      const float expected = as_bytes ? bytes[i] / 255.0f : texels[i];
      if (std::fabs(fetched[i] - expected) > 1e-6f) {
        expect(false, std::string(as_bytes ? "bytes" : "floats") + " through a texture: element " + std::to_string(i) + " is " +
                          std::to_string(fetched[i]) + ", expected " + std::to_string(expected));
        break;
      }
    }
    CU_OK(cuTexObjectDestroy(texture));
    CU_OK(cuArrayDestroy(array));
  }

  // Errors: a name the module lacks, a bad image, a source that does not compile.
  CUfunction missing = nullptr;
  expect(cuModuleGetFunction(&missing, module, "no_such_kernel") == CUDA_ERROR_NOT_FOUND, "a missing kernel is CUDA_ERROR_NOT_FOUND");
  const char not_an_image[] = "this is not a module";
  CUmodule bad = nullptr;
  expect(cuModuleLoadData(&bad, not_an_image) != CUDA_SUCCESS, "a bad image is refused");
  nvrtcProgram broken = nullptr;
  NVRTC_OK(nvrtcCreateProgram(&broken, "extern \"C\" __global__ void k(int* p) {\n  *p = undeclared_name;\n}\n", "broken.cu", 0, nullptr, nullptr));
  expect(nvrtcCompileProgram(broken, 0, nullptr) == NVRTC_ERROR_COMPILATION, "a source that does not compile is NVRTC_ERROR_COMPILATION");
  std::size_t log_size = 0;
  NVRTC_OK(nvrtcGetProgramLogSize(broken, &log_size));
  std::string log(log_size, '\0');
  NVRTC_OK(nvrtcGetProgramLog(broken, log.data()));
  expect(log.find("undeclared_name") != std::string::npos, "the log names the error: " + log);
  NVRTC_OK(nvrtcDestroyProgram(&broken));

  // A quoted #include is found beside the file the program's name names,
  // relative to the working directory, and not in the working directory
  // when the name points elsewhere (the CUDA samples' *_nvrtc programs).
  {
    const std::string folder = "nvrtc_include_" + std::to_string(std::random_device{}());
    std::system(("mkdir -p " + folder).c_str());
    if (FILE* h = std::fopen((folder + "/beside.h").c_str(), "w")) {
      std::fputs("#define BESIDE_VALUE 7\n", h);
      std::fclose(h);
    }
    const char* includer = "#include \"beside.h\"\nextern \"C\" __global__ void k(int* p) { *p = BESIDE_VALUE; }\n";
    const char* options[] = {"--gpu-architecture=sm_90"};
    nvrtcProgram beside = nullptr, elsewhere = nullptr;
    NVRTC_OK(nvrtcCreateProgram(&beside, includer, (folder + "/x.cu").c_str(), 0, nullptr, nullptr));
    expect(nvrtcCompileProgram(beside, 1, options) == NVRTC_SUCCESS, "a header beside the named file is found");
    NVRTC_OK(nvrtcCreateProgram(&elsewhere, includer, "x.cu", 0, nullptr, nullptr));
    expect(nvrtcCompileProgram(elsewhere, 1, options) == NVRTC_ERROR_COMPILATION, "a header in another folder is not found");
    NVRTC_OK(nvrtcDestroyProgram(&beside));
    NVRTC_OK(nvrtcDestroyProgram(&elsewhere));
    std::system(("rm -rf " + folder).c_str());
  }

  const char* name = nullptr;
  CU_OK(cuGetErrorName(CUDA_ERROR_NOT_FOUND, &name));
  expect(name && std::strcmp(name, "CUDA_ERROR_NOT_FOUND") == 0, "cuGetErrorName");

  CU_OK(cuMemFree(dx));
  CU_OK(cuMemFree(dy));
  CU_OK(cuMemFree(dout));
  CU_OK(cuModuleUnload(module));
  CU_OK(cuDevicePrimaryCtxRelease(device));
  std::printf("%s\n", failures ? "nvrtc_driver_api: FAILED" : "nvrtc_driver_api: passed");
  return failures ? 1 : 0;
}
