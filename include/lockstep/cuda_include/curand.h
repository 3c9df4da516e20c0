// <curand.h>: the installed CUDA toolkit's header (which curand_kernel.h
// includes too), and its host library (-lcurand, libcurand.so) runs on the CPU
// as it is: host generators (curandCreateGeneratorHost), direction vectors
// and scramble constants need no GPU. A "device" generator
// (curandCreateGenerator) would: the toolkit's fails to be created without one
// (CURAND_STATUS_INITIALIZATION_FAILED). On the emulator, where device memory
// is host memory, this header makes a device generator a host generator of the
// same type. The program's calls of seed, offset, dimensions, curandSetStream
// (kept, and harmless: work is done when issued, which is the stream's order)
// and curandGenerateSeeds go to libcurand unchanged. cuRAND's documentation
// says device and host generators give the same sequence for the same setup;
// tests/programs/curand_host.cu checks the host's against the device API's
// layout and prints checksums, which an H100 prints alike but for float
// normals and log-normals (their last bits: the GPU's float functions).
//
// How: weak definitions, with hidden visibility, of libcurand functions below.
// A program's object file that includes this header defines them; a
// definition in an object file (weak or not) wins over a shared library's at
// link time, so every call of the program's own code reaches them (also from
// its files that do not include this header), while libcurand's internal
// calls and other shared objects are untouched (hidden: never exported).
// Several translation units may each define them: weak definitions merge into
// one. libcurand's own functions are reached through dlsym(RTLD_NEXT).
// - curandCreateGenerator: curandCreateGeneratorHost, noting the generator
//   and its type (a null pointer, an invalid type: its statuses,
//   CURAND_STATUS_NOT_INITIALIZED and CURAND_STATUS_TYPE_ERROR, as a GPU's);
// - curandGenerate* (but Binomial, which this libcurand lacks): for a device
//   generator, libcurand's numbers in host memory of their own, put in the
//   program's memory (cudaMalloc, cudaMallocManaged, cudaMallocHost) by
//   cudaMemcpy, as a kernel's stores: check mode sees them written, and
//   memory too small is refused (CURAND_STATUS_LAUNCH_FAILURE) not overrun;
// - curandSetGeneratorOrdering: CURAND_ORDERING_PSEUDO_DYNAMIC (an ordering
//   "adjusted to the device", whose numbers differ between GPUs), which a host
//   generator refuses, is the default ordering for the device generators that
//   take it (XORWOW, MRG32k3a, MTGP32, Philox4_32_10); all else as libcurand
//   says;
// - curandDestroyGenerator: forgets the generator.
// Not covered: a program none of whose files includes this header (one that
// includes only <curand_kernel.h> gets the toolkit's curand.h from it), a
// static libcurand (its strong definitions win), C files (the definitions are
// C++; a C file gets the toolkit's header alone).
//
// This folder is on the include path of programs lockstep builds only (nvcc
// never sees this file), so no guard: __CUDACC__ would not do, as
// lockstep/emu/program.h defines it for the program's code.
#pragma once
#if __has_include_next(<curand.h>)
#include_next <curand.h>
#else
#error "lockstep: cuRAND (curand.h) comes from the CUDA toolkit, and no toolkit was found: set CUDA_HOME"
#endif

#ifdef __cplusplus
#include <dlfcn.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <new>
#include <unordered_map>

namespace lockstep::curand_device {

// The device generators of this program (the executable or shared object) and their types.
struct generators {
  std::mutex mutex;
  std::unordered_map<curandGenerator_t, curandRngType_t> types;
};
[[gnu::visibility("hidden")]] inline generators& device_generators() {
  static generators* const all = new generators;  // never destroyed: generators may be destroyed during exit
  return *all;
}

// Whether `generator` came from curandCreateGenerator; its type in `type`.
[[gnu::visibility("hidden")]] inline bool is_device_generator(curandGenerator_t generator, curandRngType_t* type = nullptr) {
  generators& all = device_generators();
  const std::lock_guard<std::mutex> lock(all.mutex);
  const auto found = all.types.find(generator);
  if (found == all.types.end()) return false;
  if (type) *type = found->second;
  return true;
}

// libcurand's definition of `name` (the next after this program's).
template <class Function>
[[gnu::visibility("hidden")]] Function* library_function(const char* name) {
  return reinterpret_cast<Function*>(dlsym(RTLD_NEXT, name));
}

// n numbers for `output` from `library_generate(destination)`, libcurand's
// curandGenerate* into destination. A device generator's go to host memory of
// their own first, then cudaMemcpy puts them in the program's memory, as a
// kernel's stores would: check mode sees them written, and memory too small
// is refused (CURAND_STATUS_LAUNCH_FAILURE) instead of overrun.
template <class T, class Generate>
[[gnu::visibility("hidden")]] curandStatus_t generate(curandGenerator_t generator, T* output, std::size_t n, Generate library_generate) {
  if (n == 0 || !is_device_generator(generator)) return library_generate(output);
  const std::unique_ptr<T[]> numbers(new (std::nothrow) T[n]);
  if (!numbers) return CURAND_STATUS_ALLOCATION_FAILED;
  const curandStatus_t status = library_generate(numbers.get());
  if (status != CURAND_STATUS_SUCCESS) return status;
  return cudaMemcpy(output, numbers.get(), n * sizeof(T), cudaMemcpyDefault) == cudaSuccess ? CURAND_STATUS_SUCCESS : CURAND_STATUS_LAUNCH_FAILURE;
}

}  // namespace lockstep::curand_device

// libcurand's `name`, looked up once, in the function that replaces it.
#define LOCKSTEP_CURAND_LIBRARY(name)                                                            \
  static auto* const library = lockstep::curand_device::library_function<decltype(name)>(#name); \
  if (!library) return CURAND_STATUS_INTERNAL_ERROR

extern "C" {

[[gnu::weak, gnu::visibility("hidden")]] curandStatus_t CURANDAPI curandCreateGenerator(curandGenerator_t* generator, curandRngType_t rng_type) {
  // Looked up, not called by name: a program of the device API alone (curand_kernel.h, which includes
  // this header) links no libcurand.
  static auto* const create_host = lockstep::curand_device::library_function<decltype(curandCreateGeneratorHost)>("curandCreateGeneratorHost");
  if (!create_host) return CURAND_STATUS_INITIALIZATION_FAILED;
  const curandStatus_t status = create_host(generator, rng_type);
  if (status == CURAND_STATUS_SUCCESS) {
    lockstep::curand_device::generators& all = lockstep::curand_device::device_generators();
    const std::lock_guard<std::mutex> lock(all.mutex);
    all.types[*generator] = rng_type;
  }
  return status;
}

[[gnu::weak, gnu::visibility("hidden")]] curandStatus_t CURANDAPI curandDestroyGenerator(curandGenerator_t generator) {
  LOCKSTEP_CURAND_LIBRARY(curandDestroyGenerator);
  {
    lockstep::curand_device::generators& all = lockstep::curand_device::device_generators();
    const std::lock_guard<std::mutex> lock(all.mutex);
    all.types.erase(generator);
  }
  return library(generator);
}

[[gnu::weak, gnu::visibility("hidden")]] curandStatus_t CURANDAPI curandSetGeneratorOrdering(curandGenerator_t generator, curandOrdering_t order) {
  LOCKSTEP_CURAND_LIBRARY(curandSetGeneratorOrdering);
  curandRngType_t type;
  if (order == CURAND_ORDERING_PSEUDO_DYNAMIC && lockstep::curand_device::is_device_generator(generator, &type) &&
      (type == CURAND_RNG_PSEUDO_DEFAULT || type == CURAND_RNG_PSEUDO_XORWOW || type == CURAND_RNG_PSEUDO_MRG32K3A ||
       type == CURAND_RNG_PSEUDO_MTGP32 || type == CURAND_RNG_PSEUDO_PHILOX4_32_10))
    return library(generator, CURAND_ORDERING_PSEUDO_DEFAULT);
  return library(generator, order);
}

[[gnu::weak, gnu::visibility("hidden")]] curandStatus_t CURANDAPI curandGenerate(curandGenerator_t generator, unsigned int* output, size_t n) {
  LOCKSTEP_CURAND_LIBRARY(curandGenerate);
  return lockstep::curand_device::generate(generator, output, n, [&](unsigned int* to) { return library(generator, to, n); });
}

[[gnu::weak, gnu::visibility("hidden")]] curandStatus_t CURANDAPI curandGenerateLongLong(curandGenerator_t generator, unsigned long long* output,
                                                                                         size_t n) {
  LOCKSTEP_CURAND_LIBRARY(curandGenerateLongLong);
  return lockstep::curand_device::generate(generator, output, n, [&](unsigned long long* to) { return library(generator, to, n); });
}

[[gnu::weak, gnu::visibility("hidden")]] curandStatus_t CURANDAPI curandGenerateUniform(curandGenerator_t generator, float* output, size_t n) {
  LOCKSTEP_CURAND_LIBRARY(curandGenerateUniform);
  return lockstep::curand_device::generate(generator, output, n, [&](float* to) { return library(generator, to, n); });
}

[[gnu::weak, gnu::visibility("hidden")]] curandStatus_t CURANDAPI curandGenerateUniformDouble(curandGenerator_t generator, double* output, size_t n) {
  LOCKSTEP_CURAND_LIBRARY(curandGenerateUniformDouble);
  return lockstep::curand_device::generate(generator, output, n, [&](double* to) { return library(generator, to, n); });
}

[[gnu::weak, gnu::visibility("hidden")]] curandStatus_t CURANDAPI curandGenerateNormal(curandGenerator_t generator, float* output, size_t n,
                                                                                       float mean, float stddev) {
  LOCKSTEP_CURAND_LIBRARY(curandGenerateNormal);
  return lockstep::curand_device::generate(generator, output, n, [&](float* to) { return library(generator, to, n, mean, stddev); });
}

[[gnu::weak, gnu::visibility("hidden")]] curandStatus_t CURANDAPI curandGenerateNormalDouble(curandGenerator_t generator, double* output, size_t n,
                                                                                             double mean, double stddev) {
  LOCKSTEP_CURAND_LIBRARY(curandGenerateNormalDouble);
  return lockstep::curand_device::generate(generator, output, n, [&](double* to) { return library(generator, to, n, mean, stddev); });
}

[[gnu::weak, gnu::visibility("hidden")]] curandStatus_t CURANDAPI curandGenerateLogNormal(curandGenerator_t generator, float* output, size_t n,
                                                                                          float mean, float stddev) {
  LOCKSTEP_CURAND_LIBRARY(curandGenerateLogNormal);
  return lockstep::curand_device::generate(generator, output, n, [&](float* to) { return library(generator, to, n, mean, stddev); });
}

[[gnu::weak, gnu::visibility("hidden")]] curandStatus_t CURANDAPI curandGenerateLogNormalDouble(curandGenerator_t generator, double* output, size_t n,
                                                                                                double mean, double stddev) {
  LOCKSTEP_CURAND_LIBRARY(curandGenerateLogNormalDouble);
  return lockstep::curand_device::generate(generator, output, n, [&](double* to) { return library(generator, to, n, mean, stddev); });
}

[[gnu::weak, gnu::visibility("hidden")]] curandStatus_t CURANDAPI curandGeneratePoisson(curandGenerator_t generator, unsigned int* output, size_t n,
                                                                                        double lambda) {
  LOCKSTEP_CURAND_LIBRARY(curandGeneratePoisson);
  return lockstep::curand_device::generate(generator, output, n, [&](unsigned int* to) { return library(generator, to, n, lambda); });
}

[[gnu::weak, gnu::visibility("hidden")]] curandStatus_t CURANDAPI curandGeneratePoissonMethod(curandGenerator_t generator, unsigned int* output,
                                                                                              size_t n, double lambda, curandMethod_t method) {
  LOCKSTEP_CURAND_LIBRARY(curandGeneratePoissonMethod);
  return lockstep::curand_device::generate(generator, output, n, [&](unsigned int* to) { return library(generator, to, n, lambda, method); });
}

}  // extern "C"
#undef LOCKSTEP_CURAND_LIBRARY
#endif
