// cuRAND's host API with device generators, as Monte Carlo programs use it
// (the CUDA samples MC_EstimatePiP and MC_EstimatePiQ): curandCreateGenerator,
// a seed, a stream, curandGenerate* into memory from cudaMalloc,
// cudaMallocManaged and cudaMallocHost, kernels that consume it. On the
// emulator the generators are libcurand's host generators, which cuRAND's
// documentation says give the device generators' sequences: the program
// prints a checksum per generator (the sum of the first 1000 values of each
// distribution) that a GPU's run prints alike (an H100's: all but the float
// normals' and log-normals', whose last bits differ, from the GPU's float
// functions, by 5e-5 at most in the sums), and checks the XORWOW and Philox
// numbers against the device API's (curand_init), laid out as cuRAND
// documents. It checks what must hold of any correct generator: uniforms in
// (0, 1], the moments of each distribution within five standard errors,
// Sobol's points exactly, the same seed giving the same numbers, calls
// continuing the sequence, absolute offsets, a different seed giving
// different numbers, kernels seeing what was generated, and the statuses a
// GPU gives for errors.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include <curand.h>
#include <curand_kernel.h>

namespace {

int failures = 0;

void expect(bool ok, const char* generator, const char* what) {
  if (ok) return;
  std::printf("%s: FAILED: %s\n", generator, what);
  ++failures;
}

void expect_status(curandStatus_t status, curandStatus_t expected, const char* generator, const char* what) {
  if (status == expected) return;
  std::printf("%s: FAILED: %s: status %d, expected %d\n", generator, what, int(status), int(expected));
  ++failures;
}

// A copy on the host of memory from cudaMalloc, cudaMallocManaged or cudaMallocHost.
template <class T>
std::vector<T> to_host(const T* device, std::size_t n) {
  std::vector<T> host(n);
  if (cudaMemcpy(host.data(), device, n * sizeof(T), cudaMemcpyDefault) != cudaSuccess) ++failures;
  return host;
}

template <class T>
double sum_of_first(const std::vector<T>& values, std::size_t count) {
  double sum = 0;
  for (std::size_t i = 0; i < count && i < values.size(); ++i) sum += double(values[i]);
  return sum;
}

struct moments {
  double mean = 0, variance = 0;
};

template <class T, class F>
moments moments_of(const std::vector<T>& values, F transform) {
  moments m;
  for (const T v : values) m.mean += transform(double(v));
  m.mean /= double(values.size());
  for (const T v : values) m.variance += (transform(double(v)) - m.mean) * (transform(double(v)) - m.mean);
  m.variance /= double(values.size() - 1);
  return m;
}

// Mean and variance within five standard errors of the distribution's: the
// variance's standard error is sqrt((mu4 - variance^2) / n), mu4 the fourth
// central moment.
void expect_moments(const moments& m, double mean, double variance, double mu4, std::size_t n, const char* generator, const char* what) {
  const bool ok = std::fabs(m.mean - mean) <= 5 * std::sqrt(variance / double(n)) &&
                  std::fabs(m.variance - variance) <= 5 * std::sqrt((mu4 - variance * variance) / double(n));
  if (!ok) std::printf("%s: %s: mean %.6f (expected %.6f), variance %.6f (expected %.6f)\n", generator, what, m.mean, mean, m.variance, variance);
  expect(ok, generator, what);
}

__global__ void histogram(const float* values, int n, unsigned int* bins) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) atomicAdd(&bins[min(int(values[i] * 1024.0f), 1023)], 1u);
}

template <class T>
__global__ void count_below(const T* values, int n, T threshold, unsigned int* count) {
  unsigned int mine = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) mine += values[i] < threshold;
  atomicAdd(count, mine);
}

// Points (x[i], y[i]) inside the unit quarter circle, in double: the squares of floats are exact.
__global__ void quarter_circle(const float* x, const float* y, int n, unsigned int* inside) {
  unsigned int mine = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) mine += double(x[i]) * x[i] + double(y[i]) * y[i] < 1.0;
  atomicAdd(inside, mine);
}

// The numbers of the host API's XORWOW and Philox4_32_10 generators, as cuRAND's
// documentation lays them out ("Order"), from the device API: the i-th is the
// first of curand_init(seed, subsequence, offset) with subsequence (i / width)
// % threads and offset width * (i / width / threads) + i % width. Counts the
// generated numbers (every stride-th of n) that differ.
template <class State, int threads, int width>
__global__ void device_api_mismatches(unsigned long long seed, const unsigned int* generated, int n, int stride, unsigned int* mismatches) {
  for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < (n + stride - 1) / stride; k += gridDim.x * blockDim.x) {
    const int i = k * stride, q = i / width;
    State state;
    curand_init(seed, q % threads, (unsigned long long)width * (q / threads) + i % width, &state);
    if (curand(&state) != generated[i]) atomicAdd(mismatches, 1u);
  }
}

// What the kernels count, on the host.
unsigned int count_inside(const std::vector<float>& x, std::size_t x_first, const std::vector<float>& y, std::size_t y_first, std::size_t n) {
  unsigned int inside = 0;
  for (std::size_t i = 0; i < n; ++i) inside += double(x[x_first + i]) * x[x_first + i] + double(y[y_first + i]) * y[y_first + i] < 1.0;
  return inside;
}

// A zeroed counter in device memory, and its value after the stream's work.
struct counter {
  unsigned int* device = nullptr;
  std::size_t count;
  explicit counter(std::size_t n = 1) : count(n) {
    cudaMalloc(&device, n * sizeof(unsigned int));
    cudaMemset(device, 0, n * sizeof(unsigned int));
  }
  ~counter() { cudaFree(device); }
  std::vector<unsigned int> read(cudaStream_t stream) const {
    if (cudaStreamSynchronize(stream) != cudaSuccess) ++failures;
    return to_host(device, count);
  }
};

void check_pseudo(const char* name, curandRngType_t type) {
  const std::size_t n = std::size_t(1) << 18;
  const unsigned long long seed = 1234;
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  curandGenerator_t generator;
  expect_status(curandCreateGenerator(&generator, type), CURAND_STATUS_SUCCESS, name, "curandCreateGenerator");
  expect_status(curandSetStream(generator, stream), CURAND_STATUS_SUCCESS, name, "curandSetStream");
  expect_status(curandSetPseudoRandomGeneratorSeed(generator, seed), CURAND_STATUS_SUCCESS, name, "curandSetPseudoRandomGeneratorSeed");

  float *uniforms, *normals, *log_normals;
  double *uniform_doubles, *normal_doubles;
  unsigned int* poissons;
  cudaMalloc(&uniforms, n * sizeof(float));
  cudaMallocManaged(&uniform_doubles, n * sizeof(double));
  cudaMallocHost(&normals, n * sizeof(float));
  cudaMalloc(&normal_doubles, n * sizeof(double));
  cudaMalloc(&log_normals, n * sizeof(float));
  cudaMalloc(&poissons, n * sizeof(unsigned int));
  const double lambda = 4.0;
  expect_status(curandGenerateUniform(generator, uniforms, n), CURAND_STATUS_SUCCESS, name, "curandGenerateUniform (cudaMalloc)");
  expect_status(curandGenerateUniformDouble(generator, uniform_doubles, n), CURAND_STATUS_SUCCESS, name,
                "curandGenerateUniformDouble (cudaMallocManaged)");
  expect_status(curandGenerateNormal(generator, normals, n, 0.0f, 1.0f), CURAND_STATUS_SUCCESS, name, "curandGenerateNormal (cudaMallocHost)");
  expect_status(curandGenerateNormalDouble(generator, normal_doubles, n, 2.0, 3.0), CURAND_STATUS_SUCCESS, name, "curandGenerateNormalDouble");
  expect_status(curandGenerateLogNormal(generator, log_normals, n, 0.0f, 0.5f), CURAND_STATUS_SUCCESS, name, "curandGenerateLogNormal");
  expect_status(curandGeneratePoisson(generator, poissons, n, lambda), CURAND_STATUS_SUCCESS, name, "curandGeneratePoisson");

  // Kernels in the generator's stream consume what it generated.
  counter bins(1024), doubles_below_half, negative_normals, inside;
  histogram<<<64, 256, 0, stream>>>(uniforms, int(n), bins.device);
  count_below<double><<<64, 256, 0, stream>>>(uniform_doubles, int(n), 0.5, doubles_below_half.device);
  count_below<float><<<64, 256, 0, stream>>>(normals, int(n), 0.0f, negative_normals.device);
  quarter_circle<<<64, 256, 0, stream>>>(uniforms, uniforms + n / 2, int(n / 2), inside.device);
  const std::vector<unsigned int> device_bins = bins.read(stream);
  const unsigned int device_doubles_below_half = doubles_below_half.read(stream)[0], device_negative_normals = negative_normals.read(stream)[0],
                     device_inside = inside.read(stream)[0];

  const std::vector<float> u = to_host(uniforms, n), z = to_host(normals, n), l = to_host(log_normals, n);
  const std::vector<double> ud = to_host(uniform_doubles, n), zd = to_host(normal_doubles, n);
  const std::vector<unsigned int> p = to_host(poissons, n);

  std::vector<unsigned int> host_bins(1024);
  for (const float v : u) ++host_bins[std::min(int(v * 1024.0f), 1023)];
  expect(device_bins == host_bins, name, "a kernel's histogram of the uniforms");
  expect(device_doubles_below_half == std::size_t(std::count_if(ud.begin(), ud.end(), [](double v) { return v < 0.5; })), name,
         "a kernel's count of the uniform doubles below 0.5 (cudaMallocManaged)");
  expect(device_negative_normals == std::size_t(std::count_if(z.begin(), z.end(), [](float v) { return v < 0.0f; })), name,
         "a kernel's count of the negative normals (cudaMallocHost)");
  expect(device_inside == count_inside(u, 0, u, n / 2, n / 2), name, "a kernel's count of the points in the quarter circle");
  const double pi = 4.0 * device_inside / double(n / 2), quarter = M_PI / 4;
  expect(std::fabs(pi - M_PI) <= 5 * 4 * std::sqrt(quarter * (1 - quarter) / double(n / 2)), name, "pi from the uniforms");

  expect(std::all_of(u.begin(), u.end(), [](float v) { return v > 0.0f && v <= 1.0f; }), name, "uniform floats in (0, 1]");
  expect(std::all_of(ud.begin(), ud.end(), [](double v) { return v > 0.0 && v <= 1.0; }), name, "uniform doubles in (0, 1]");
  expect(std::all_of(z.begin(), z.end(), [](float v) { return std::isfinite(v); }), name, "finite normals");
  expect(std::all_of(l.begin(), l.end(), [](float v) { return v > 0.0f && std::isfinite(v); }), name, "positive log-normals");
  const auto same = [](double v) { return v; };
  // Uniform: variance 1/12, mu4 1/80. Normal: mu4 3 sigma^4. Poisson: variance lambda, mu4 lambda (1 + 3 lambda).
  expect_moments(moments_of(u, same), 0.5, 1.0 / 12, 1.0 / 80, n, name, "uniform floats' moments");
  expect_moments(moments_of(ud, same), 0.5, 1.0 / 12, 1.0 / 80, n, name, "uniform doubles' moments");
  expect_moments(moments_of(z, same), 0.0, 1.0, 3.0, n, name, "normal floats' moments");
  expect_moments(moments_of(zd, same), 2.0, 9.0, 3.0 * 81, n, name, "normal doubles' moments (mean 2, deviation 3)");
  expect_moments(moments_of(l, [](double v) { return std::log(v); }), 0.0, 0.25, 3.0 * 0.0625, n, name, "log-normals' logarithms' moments");
  expect_moments(moments_of(p, same), lambda, lambda, lambda * (1 + 3 * lambda), n, name, "Poisson's moments");

  std::printf("%s: checksums: uniform %.6f, uniform double %.6f, normal %.6f, normal double %.6f, log-normal %.6f, poisson %.6f\n", name,
              sum_of_first(u, 1000), sum_of_first(ud, 1000), sum_of_first(z, 1000), sum_of_first(zd, 1000), sum_of_first(l, 1000),
              sum_of_first(p, 1000));

  // The same seed again, in two calls: the same numbers (each call continues the sequence).
  float* again;
  cudaMalloc(&again, n * sizeof(float));
  curandGenerator_t same_seed;
  expect_status(curandCreateGenerator(&same_seed, type), CURAND_STATUS_SUCCESS, name, "curandCreateGenerator (again)");
  curandSetPseudoRandomGeneratorSeed(same_seed, seed);
  expect_status(curandGenerateUniform(same_seed, again, 1000), CURAND_STATUS_SUCCESS, name, "curandGenerateUniform (first part)");
  expect_status(curandGenerateUniform(same_seed, again + 1000, n - 1000), CURAND_STATUS_SUCCESS, name, "curandGenerateUniform (the rest)");
  expect(to_host(again, n) == u, name, "the same seed, in two calls, gives the same numbers");
  // An offset is absolute: 1000 skips the first 1000 numbers of the seed's sequence.
  const curandStatus_t offset_status = curandSetGeneratorOffset(same_seed, 1000);
  std::printf("%s: curandSetGeneratorOffset: status %d\n", name, int(offset_status));
  if (type == CURAND_RNG_PSEUDO_MTGP32) {
    expect(offset_status == CURAND_STATUS_SUCCESS || offset_status == CURAND_STATUS_TYPE_ERROR, name, "curandSetGeneratorOffset");
  } else {
    expect_status(offset_status, CURAND_STATUS_SUCCESS, name, "curandSetGeneratorOffset");
  }
  if (offset_status == CURAND_STATUS_SUCCESS) {
    expect_status(curandGenerateUniform(same_seed, again, 4096), CURAND_STATUS_SUCCESS, name, "curandGenerateUniform (offset 1000)");
    const std::vector<float> skipped = to_host(again, 4096);
    expect(std::equal(skipped.begin(), skipped.end(), u.begin() + 1000), name, "offset 1000 starts at the 1000th number");
  }
  curandDestroyGenerator(same_seed);

  // Another seed: other numbers.
  curandGenerator_t other_seed;
  expect_status(curandCreateGenerator(&other_seed, type), CURAND_STATUS_SUCCESS, name, "curandCreateGenerator (another seed)");
  curandSetPseudoRandomGeneratorSeed(other_seed, seed + 1);
  curandGenerateUniform(other_seed, again, n);
  const std::vector<float> other = to_host(again, n);
  std::size_t equal = 0;
  for (std::size_t i = 0; i < n; ++i) equal += other[i] == u[i];
  expect(equal < 16, name, "another seed gives other numbers");

  // Orderings: default, best and legacy are every pseudorandom generator's; dynamic ("adjusted to the device") is taken by these four.
  const curandOrdering_t orderings[] = {CURAND_ORDERING_PSEUDO_BEST,   CURAND_ORDERING_PSEUDO_DEFAULT, CURAND_ORDERING_PSEUDO_SEEDED,
                                        CURAND_ORDERING_PSEUDO_LEGACY, CURAND_ORDERING_PSEUDO_DYNAMIC, CURAND_ORDERING_QUASI_DEFAULT};
  curandStatus_t ordering_status[6];
  for (int i = 0; i < 6; ++i) ordering_status[i] = curandSetGeneratorOrdering(other_seed, orderings[i]);
  std::printf("%s: curandSetGeneratorOrdering: best %d, default %d, seeded %d, legacy %d, dynamic %d, quasi default %d\n", name,
              int(ordering_status[0]), int(ordering_status[1]), int(ordering_status[2]), int(ordering_status[3]), int(ordering_status[4]),
              int(ordering_status[5]));
  expect_status(ordering_status[0], CURAND_STATUS_SUCCESS, name, "ordering best");
  expect_status(ordering_status[1], CURAND_STATUS_SUCCESS, name, "ordering default");
  expect_status(ordering_status[3], CURAND_STATUS_SUCCESS, name, "ordering legacy");
  expect_status(ordering_status[4], CURAND_STATUS_SUCCESS, name, "ordering dynamic");
  expect_status(ordering_status[5], CURAND_STATUS_OUT_OF_RANGE, name, "a quasirandom ordering");

  // The null stream, and errors: a quasirandom generator's setting, and (printed only) an odd count of normals.
  expect_status(curandSetStream(other_seed, 0), CURAND_STATUS_SUCCESS, name, "curandSetStream (the null stream)");
  expect_status(curandSetQuasiRandomGeneratorDimensions(other_seed, 2), CURAND_STATUS_TYPE_ERROR, name, "dimensions of a pseudorandom generator");
  std::printf("%s: curandGenerateNormal of 999 numbers: status %d\n", name, int(curandGenerateNormal(other_seed, normals, 999, 0.0f, 1.0f)));
  cudaDeviceSynchronize();
  curandDestroyGenerator(other_seed);

  // The dynamic ordering, set before the first numbers as programs do (an
  // H100's MTGP32 generator that changes its ordering after generating gives
  // too many numbers below 1/8).
  curandGenerator_t dynamic_generator;
  expect_status(curandCreateGenerator(&dynamic_generator, type), CURAND_STATUS_SUCCESS, name, "curandCreateGenerator (dynamic ordering)");
  expect_status(curandSetGeneratorOrdering(dynamic_generator, CURAND_ORDERING_PSEUDO_DYNAMIC), CURAND_STATUS_SUCCESS, name, "ordering dynamic");
  curandSetStream(dynamic_generator, stream);
  curandSetPseudoRandomGeneratorSeed(dynamic_generator, seed);
  expect_status(curandGenerateUniform(dynamic_generator, again, n), CURAND_STATUS_SUCCESS, name, "curandGenerateUniform (dynamic ordering)");
  cudaStreamSynchronize(stream);
  const std::vector<float> dynamic = to_host(again, n);
  expect(std::all_of(dynamic.begin(), dynamic.end(), [](float v) { return v > 0.0f && v <= 1.0f; }), name, "uniforms in (0, 1], dynamic ordering");
  expect_moments(moments_of(dynamic, same), 0.5, 1.0 / 12, 1.0 / 80, n, name, "uniform floats' moments, dynamic ordering");
  curandDestroyGenerator(dynamic_generator);

  expect_status(curandDestroyGenerator(generator), CURAND_STATUS_SUCCESS, name, "curandDestroyGenerator");
  cudaFree(uniforms);
  cudaFree(uniform_doubles);
  cudaFreeHost(normals);
  cudaFree(normal_doubles);
  cudaFree(log_normals);
  cudaFree(poissons);
  cudaFree(again);
  cudaStreamDestroy(stream);
}

// Sobol32 in two dimensions: the points, dimension by dimension (all of the
// first dimension's, then the second's), are Gray-code Sobol points from
// cuRAND's direction vectors (Joe and Kuo's); the first eight of each are
// known.
void check_sobol() {
  const char* name = "Sobol32";
  const std::size_t points = std::size_t(1) << 16, dimensions = 2, n = points * dimensions;
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  curandGenerator_t generator;
  expect_status(curandCreateGenerator(&generator, CURAND_RNG_QUASI_SOBOL32), CURAND_STATUS_SUCCESS, name, "curandCreateGenerator");
  expect_status(curandSetStream(generator, stream), CURAND_STATUS_SUCCESS, name, "curandSetStream");
  expect_status(curandSetQuasiRandomGeneratorDimensions(generator, dimensions), CURAND_STATUS_SUCCESS, name,
                "curandSetQuasiRandomGeneratorDimensions");
  expect_status(curandSetPseudoRandomGeneratorSeed(generator, 1), CURAND_STATUS_TYPE_ERROR, name, "a seed for a quasirandom generator");
  expect_status(curandSetGeneratorOrdering(generator, CURAND_ORDERING_PSEUDO_DYNAMIC), CURAND_STATUS_OUT_OF_RANGE, name, "a pseudorandom ordering");
  expect_status(curandSetGeneratorOrdering(generator, CURAND_ORDERING_QUASI_DEFAULT), CURAND_STATUS_SUCCESS, name, "ordering quasi default");

  unsigned int* bits;
  float* uniforms;
  double* normals;
  cudaMalloc(&bits, n * sizeof(unsigned int));
  cudaMalloc(&uniforms, n * sizeof(float));
  cudaMalloc(&normals, n * sizeof(double));
  expect_status(curandGenerate(generator, bits, n), CURAND_STATUS_SUCCESS, name, "curandGenerate");
  expect_status(curandSetGeneratorOffset(generator, 0), CURAND_STATUS_SUCCESS, name, "curandSetGeneratorOffset");
  expect_status(curandGenerateUniform(generator, uniforms, n), CURAND_STATUS_SUCCESS, name, "curandGenerateUniform");
  curandSetGeneratorOffset(generator, 0);
  expect_status(curandGenerateNormalDouble(generator, normals, n, 0.0, 1.0), CURAND_STATUS_SUCCESS, name, "curandGenerateNormalDouble");
  expect_status(curandGenerateUniform(generator, uniforms, n - 1), CURAND_STATUS_LENGTH_NOT_MULTIPLE, name,
                "a count that is not a multiple of the dimensions");

  counter inside;
  quarter_circle<<<64, 256, 0, stream>>>(uniforms, uniforms + points, int(points), inside.device);
  const unsigned int device_inside = inside.read(stream)[0];

  const std::vector<unsigned int> x = to_host(bits, n);
  const std::vector<float> u = to_host(uniforms, n);
  const std::vector<double> z = to_host(normals, n);
  const unsigned int first[2][8] = {{0x00000000u, 0x80000000u, 0xC0000000u, 0x40000000u, 0x60000000u, 0xE0000000u, 0xA0000000u, 0x20000000u},
                                    {0x00000000u, 0x80000000u, 0x40000000u, 0xC0000000u, 0x60000000u, 0xE0000000u, 0x20000000u, 0xA0000000u}};
  for (std::size_t d = 0; d < dimensions; ++d)
    expect(std::equal(first[d], first[d] + 8, x.begin() + d * points), name,
           d == 0 ? "the first dimension's first points" : "the second dimension's first points");
  curandDirectionVectors32_t* vectors = nullptr;
  expect_status(curandGetDirectionVectors32(&vectors, CURAND_DIRECTION_VECTORS_32_JOEKUO6), CURAND_STATUS_SUCCESS, name,
                "curandGetDirectionVectors32");
  bool gray_code = vectors != nullptr;
  for (std::size_t d = 0; d < dimensions && gray_code; ++d) {
    unsigned int point = 0;
    for (std::size_t i = 0; i < points; ++i) {
      if (x[d * points + i] != point) gray_code = false;
      int zero = 0;  // the lowest zero bit of i
      while ((i >> zero) & 1) ++zero;
      point ^= vectors[d][zero];
    }
  }
  expect(gray_code, name, "the points from the direction vectors");
  bool converted = true;
  for (std::size_t i = 0; i < n; ++i) converted = converted && u[i] > 0.0f && u[i] <= 1.0f && std::fabs(u[i] - x[i] * 0x1p-32) <= 0x1p-24;
  expect(converted, name, "uniforms in (0, 1] from the points");
  expect(device_inside == count_inside(u, 0, u, points, points), name, "a kernel's count of the points in the quarter circle");
  const double pi = 4.0 * device_inside / double(points);
  expect(std::fabs(pi - M_PI) < 1e-3, name, "pi from the points");  // quasirandom: error near 1/points, not 1/sqrt(points)
  const auto same = [](double v) { return v; };
  expect_moments(moments_of(z, same), 0.0, 1.0, 3.0, n, name, "normal doubles' moments");
  std::printf("%s: pi %.6f; checksums: uniform %.6f, normal double %.6f\n", name, pi, sum_of_first(u, 1000), sum_of_first(z, 1000));

  // Offset 3: each dimension starts at its fourth point.
  curandGenerator_t offset;
  curandCreateGenerator(&offset, CURAND_RNG_QUASI_DEFAULT);
  curandSetQuasiRandomGeneratorDimensions(offset, dimensions);
  expect_status(curandSetGeneratorOffset(offset, 3), CURAND_STATUS_SUCCESS, name, "curandSetGeneratorOffset (3)");
  curandGenerate(offset, bits, 2 * 8);
  const std::vector<unsigned int> shifted = to_host(bits, 2 * 8);
  expect(std::equal(shifted.begin(), shifted.begin() + 8, x.begin() + 3) && std::equal(shifted.begin() + 8, shifted.end(), x.begin() + points + 3),
         name, "offset 3 starts each dimension at its fourth point");
  curandDestroyGenerator(offset);

  expect_status(curandDestroyGenerator(generator), CURAND_STATUS_SUCCESS, name, "curandDestroyGenerator");
  cudaFree(bits);
  cudaFree(uniforms);
  cudaFree(normals);
  cudaStreamDestroy(stream);
}

// A generator's 32-bit numbers (the default ordering, then the legacy one)
// against the device API's (device_api_mismatches).
template <class State, int threads, int width>
void check_layout(const char* name, curandRngType_t type, int n, int stride) {
  const unsigned long long seed = 1234;
  unsigned int* bits;
  cudaMalloc(&bits, n * sizeof(unsigned int));
  const curandOrdering_t orderings[] = {CURAND_ORDERING_PSEUDO_DEFAULT, CURAND_ORDERING_PSEUDO_LEGACY};
  for (const curandOrdering_t ordering : orderings) {
    curandGenerator_t generator;
    curandCreateGenerator(&generator, type);
    expect_status(curandSetGeneratorOrdering(generator, ordering), CURAND_STATUS_SUCCESS, name, "curandSetGeneratorOrdering");
    curandSetPseudoRandomGeneratorSeed(generator, seed);
    expect_status(curandGenerate(generator, bits, n), CURAND_STATUS_SUCCESS, name, "curandGenerate");
    counter mismatches;
    device_api_mismatches<State, threads, width><<<64, 256>>>(seed, bits, n, stride, mismatches.device);
    const unsigned int count = mismatches.read(0)[0];
    std::printf("%s: %s ordering: %u of %d numbers differ from the device API's\n", name,
                ordering == CURAND_ORDERING_PSEUDO_DEFAULT ? "default" : "legacy", count, (n + stride - 1) / stride);
    expect(count == 0, name, "the numbers are the device API's, laid out as documented");
    curandDestroyGenerator(generator);
  }
  cudaFree(bits);
}

void check_errors() {
  const char* name = "errors";
  curandGenerator_t generator;
  expect_status(curandCreateGenerator(&generator, curandRngType_t(5)), CURAND_STATUS_TYPE_ERROR, name, "an invalid generator type");
  expect_status(curandCreateGenerator(nullptr, CURAND_RNG_PSEUDO_DEFAULT), CURAND_STATUS_NOT_INITIALIZED, name, "a null generator pointer");
  expect_status(curandCreateGenerator(&generator, CURAND_RNG_PSEUDO_DEFAULT), CURAND_STATUS_SUCCESS, name, "curandCreateGenerator");
  float* normals;
  unsigned long long* bits;
  cudaMalloc(&normals, 1000 * sizeof(float));
  cudaMalloc(&bits, 1000 * sizeof(unsigned long long));
  expect_status(curandGenerateNormal(generator, normals, 999, 0.0f, 1.0f), CURAND_STATUS_LENGTH_NOT_MULTIPLE, name, "an odd count of XORWOW normals");
  expect_status(curandGenerateNormal(generator, normals, 1000, 0.0f, 1.0f), CURAND_STATUS_SUCCESS, name, "an even count of normals");
  expect_status(curandGenerateLongLong(generator, bits, 1000), CURAND_STATUS_TYPE_ERROR, name, "64-bit numbers from a 32-bit generator");
  expect_status(curandDestroyGenerator(generator), CURAND_STATUS_SUCCESS, name, "curandDestroyGenerator");
  cudaFree(normals);
  cudaFree(bits);
}

}  // namespace

int main() {
  check_pseudo("XORWOW", CURAND_RNG_PSEUDO_DEFAULT);
  check_pseudo("Philox4_32_10", CURAND_RNG_PSEUDO_PHILOX4_32_10);
  check_pseudo("MRG32k3a", CURAND_RNG_PSEUDO_MRG32K3A);
  check_pseudo("MTGP32", CURAND_RNG_PSEUDO_MTGP32);
  check_sobol();
  check_layout<curandStateXORWOW_t, 4096, 1>("XORWOW", CURAND_RNG_PSEUDO_XORWOW, 3 * 4096, 1);
  check_layout<curandStatePhilox4_32_10_t, 65536, 4>("Philox4_32_10", CURAND_RNG_PSEUDO_PHILOX4_32_10, 2 * 4 * 65536, 61);
  check_errors();
  if (cudaGetLastError() != cudaSuccess) ++failures;
  std::printf("curand_host: %s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
