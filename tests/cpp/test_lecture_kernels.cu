// The lectures' kernels: RGB->grayscale with 1-D and 2-D blocks, naive matmul
// with 16x16 blocks, shared-memory tiled matmul with static and with dynamic
// shared memory, and the ladder after it (register blocking to double
// buffering, 2-D and batched), checked against float64 references on fresh
// random inputs.
#include "grayscale.cu"
#include "matmul.cu"
#include "test_util.h"
#if !defined(__CUDACC__)
#include "lockstep/emu/options.h"
#endif

using namespace testing_util;
using namespace lockstep::kernels;

namespace {

std::vector<double> grayscale_reference(const std::vector<unsigned char>& rgb, int pixels) {
  std::vector<double> ref(pixels);
  for (int i = 0; i < pixels; ++i) ref[i] = std::floor(0.2989 * rgb[i] + 0.5870 * rgb[i + pixels] + 0.1140 * rgb[i + 2 * pixels]);
  return ref;
}

// float32 and float64 may truncate differently when the weighted sum lands
// within rounding of an integer: allow a difference of 1 on those pixels only.
void expect_grayscale(const std::vector<unsigned char>& out, const std::vector<double>& ref) {
  int off_by_one = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double d = std::abs(out[i] - ref[i]);
    ASSERT_LE(d, 1.0) << "pixel " << i << " (seed " << fresh_seed() << ")";
    off_by_one += d != 0;
  }
  EXPECT_LE(off_by_one, static_cast<int>(ref.size() / 1000) + 1);
}

struct image_size {
  int height, width;
};

class Grayscale : public ::testing::TestWithParam<image_size> {};

TEST_P(Grayscale, OneDimensionalBlocks) {
  const auto [h, w] = GetParam();
  const int pixels = h * w;
  auto rgb = random_vector<unsigned char>(3 * pixels, 0, 255);
  device_buffer<unsigned char> in(rgb), out(pixels);
  lockstep::launch(rgb_to_grayscale_1d, (pixels + 255) / 256, 256)(out.get(), in.get(), pixels);
  expect_grayscale(out.download(), grayscale_reference(rgb, pixels));
}

TEST_P(Grayscale, TwoDimensionalBlocks) {
  const auto [h, w] = GetParam();
  const int pixels = h * w;
  auto rgb = random_vector<unsigned char>(3 * pixels, 0, 255);
  device_buffer<unsigned char> in(rgb), out(pixels);
  lockstep::launch(rgb_to_grayscale_2d, dim3((w + 15) / 16, (h + 15) / 16), dim3(16, 16))(out.get(), in.get(), w, h);
  expect_grayscale(out.download(), grayscale_reference(rgb, pixels));
}

INSTANTIATE_TEST_SUITE_P(Sizes, Grayscale, ::testing::Values(image_size{1, 1}, image_size{17, 255}, image_size{64, 64}, image_size{1066, 1600}));

struct matmul_size {
  int m, n, k;
};

std::vector<double> matmul_reference(const std::vector<float>& a, const std::vector<float>& b, int m, int n, int k) {
  std::vector<double> c(std::size_t(m) * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < k; ++p)
      for (int j = 0; j < n; ++j) c[std::size_t(i) * n + j] += double(a[std::size_t(i) * k + p]) * b[std::size_t(p) * n + j];
  return c;
}

class Matmul : public ::testing::TestWithParam<matmul_size> {
 protected:
  void SetUp() override {
    const auto [m, n, k] = GetParam();
    a = random_vector<float>(std::size_t(m) * k);
    b = random_vector<float>(std::size_t(k) * n);
    ref = matmul_reference(a, b, m, n, k);
  }
  dim3 grid_of(int tile) const { return dim3((GetParam().n + tile - 1) / tile, (GetParam().m + tile - 1) / tile); }
  std::vector<float> a, b;
  std::vector<double> ref;
};

TEST_P(Matmul, Naive16x16) {
  const auto [m, n, k] = GetParam();
  device_buffer<float> da(a), db(b), dc(std::size_t(m) * n);
  lockstep::launch(matmul_naive, grid_of(16), dim3(16, 16))(da.get(), db.get(), dc.get(), m, n, k);
  EXPECT_CLOSE(dc.download(), ref, 1e-5);
}

TEST_P(Matmul, TiledStaticShared) {
  const auto [m, n, k] = GetParam();
  device_buffer<float> da(a), db(b), dc(std::size_t(m) * n);
  lockstep::launch(matmul_tiled_static<16>, grid_of(16), dim3(16, 16))(da.get(), db.get(), dc.get(), m, n, k);
  EXPECT_CLOSE(dc.download(), ref, 1e-5);
}

TEST_P(Matmul, TiledStaticSharedTile8) {
  const auto [m, n, k] = GetParam();
  device_buffer<float> da(a), db(b), dc(std::size_t(m) * n);
  lockstep::launch(matmul_tiled_static<8>, grid_of(8), dim3(8, 8))(da.get(), db.get(), dc.get(), m, n, k);
  EXPECT_CLOSE(dc.download(), ref, 1e-5);
}

TEST_P(Matmul, TiledDynamicShared) {
  const auto [m, n, k] = GetParam();
  for (int tile : {8, 16, 32}) {
    device_buffer<float> da(a), db(b), dc(std::size_t(m) * n);
    lockstep::launch(matmul_tiled_dynamic, grid_of(tile), dim3(tile, tile), 2 * tile * tile * sizeof(float))(da.get(), db.get(), dc.get(), m, n, k);
    EXPECT_CLOSE(dc.download(), ref, 1e-5) << "tile " << tile;
  }
}

// The ladder after the tiled kernel: each 2-D kernel with its launch shape
// (kernels/matmul.cu), and its batched kernel.
using matmul_kernel = void (*)(const float*, const float*, float*, int, int, int);
using matmul_batched_kernel = void (*)(const float*, const float*, float*, int, int, int, const long long*, const long long*);
struct ladder_rung {
  const char* name;
  matmul_kernel kernel;
  matmul_batched_kernel batched;
  int threads, tile_m, tile_n;
  int shared_bytes = 0;  // dynamic; over 48 KiB the limit is raised first (set_shared_limit)
};
// double_buffered's kernels also take the fused epilogue: these are its
// product with none, in the other rungs' signatures (the epilogue's own
// tests are tests/cpp/tensor/test_matmul_epilogue.cpp).
__global__ void __launch_bounds__(double_buffered_threads, 1)
    double_buffered_no_epilogue(const float* a, const float* b, float* c, int m, int n, int k) {
  matmul_double_buffered_product<double_buffered_config>(a, b, c, m, n, k, matmul_epilogue{});
}
__global__ void __launch_bounds__(double_buffered_threads, 1)
    double_buffered_batched_no_epilogue(const float* a, const float* b, float* c, int m, int n, int k, const long long* a_offsets,
                                        const long long* b_offsets) {
  const long long z = blockIdx.z;
  matmul_double_buffered_product<double_buffered_config>(a + a_offsets[z], b + b_offsets[z], c + z * m * n, m, n, k, matmul_epilogue{});
}
void set_shared_limit(const ladder_rung& rung) {
  if (rung.shared_bytes > 48 * 1024) {
    ASSERT_EQ(cudaFuncSetAttribute(rung.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, rung.shared_bytes), cudaSuccess);
    ASSERT_EQ(cudaFuncSetAttribute(rung.batched, cudaFuncAttributeMaxDynamicSharedMemorySize, rung.shared_bytes), cudaSuccess);
  }
}
const ladder_rung ladder[] = {
    {"register_1d", matmul_register_1d, matmul_register_1d_batched, register_1d_threads, register_1d_bm, register_1d_bn},
    {"register_2d", matmul_register_2d, matmul_register_2d_batched, register_2d_threads, register_2d_bm, register_2d_bn},
    {"vectorized", matmul_vectorized, matmul_vectorized_batched, vectorized_threads, vectorized_bm, vectorized_bn},
    {"warp_tiled", matmul_warp_tiled, matmul_warp_tiled_batched, warp_tiled_threads, warp_tiled_bm, warp_tiled_bn},
    {"double_buffered", double_buffered_no_epilogue, double_buffered_batched_no_epilogue, double_buffered_threads, double_buffered_bm,
     double_buffered_bn, double_buffered_shared_bytes},
};

TEST_P(Matmul, RegisterBlockedToDoubleBuffered) {
  const auto [m, n, k] = GetParam();
  for (const ladder_rung& rung : ladder) {
    device_buffer<float> da(a), db(b), dc(std::size_t(m) * n);
    set_shared_limit(rung);
    lockstep::launch(rung.kernel, dim3((n + rung.tile_n - 1) / rung.tile_n, (m + rung.tile_m - 1) / rung.tile_m), rung.threads, rung.shared_bytes)(
        da.get(), db.get(), dc.get(), m, n, k);
    EXPECT_CLOSE(dc.download(), ref, 1e-5) << rung.name;
  }
}

// Three products per launch from one buffer per operand, at element offsets
// that keep 16-byte alignment for some products and break it for others (the
// kernels must then take their scalar loads), C packed.
TEST_P(Matmul, BatchedAtMisalignedOffsets) {
  const auto [m, n, k] = GetParam();
  const std::size_t mk = std::size_t(m) * k, kn = std::size_t(k) * n, mn = std::size_t(m) * n;
  const std::vector<long long> a_offsets = {0, static_cast<long long>(mk) + 1, 2 * static_cast<long long>(mk) + 6};
  const std::vector<long long> b_offsets = {3, static_cast<long long>(kn) + 4, 2 * static_cast<long long>(kn) + 8};
  std::vector<float> a_all = random_vector<float>(3 * mk + 8), b_all = random_vector<float>(3 * kn + 12);
  std::vector<std::vector<double>> refs;
  for (int z = 0; z < 3; ++z)
    refs.push_back(matmul_reference(std::vector<float>(a_all.begin() + a_offsets[z], a_all.begin() + a_offsets[z] + mk),
                                    std::vector<float>(b_all.begin() + b_offsets[z], b_all.begin() + b_offsets[z] + kn), m, n, k));
  device_buffer<long long> d_a_offsets(a_offsets), d_b_offsets(b_offsets);
  for (const ladder_rung& rung : ladder) {
    device_buffer<float> da(a_all), db(b_all), dc(3 * mn);
    set_shared_limit(rung);
    lockstep::launch(rung.batched, dim3((n + rung.tile_n - 1) / rung.tile_n, (m + rung.tile_m - 1) / rung.tile_m, 3), rung.threads,
                     rung.shared_bytes)(da.get(), db.get(), dc.get(), m, n, k, d_a_offsets.get(), d_b_offsets.get());
    const std::vector<float> c = dc.download();
    for (int z = 0; z < 3; ++z)
      EXPECT_CLOSE(std::vector<float>(c.begin() + z * mn, c.begin() + (z + 1) * mn), refs[z], 1e-5) << rung.name << " product " << z;
  }
}

// Beyond one 128x128 tile, k not a multiple of 4 or 8; (131, 260, 36) and
// (128, 128, 128) where the 16-byte loads are legal, with partial and with
// only full blocks.
INSTANTIATE_TEST_SUITE_P(Sizes, Matmul,
                         ::testing::Values(matmul_size{1, 1, 1}, matmul_size{17, 33, 5}, matmul_size{64, 64, 64}, matmul_size{100, 37, 129},
                                           matmul_size{256, 256, 256}, matmul_size{130, 67, 257}, matmul_size{255, 129, 513},
                                           matmul_size{131, 260, 36}, matmul_size{128, 128, 128}));

#if !defined(__CUDACC__)
// The tiled kernel sums each element in a fixed order, so the result is
// bitwise the same however many workers run blocks and in whatever order the
// threads of a block run.
TEST(Matmul, ResultsDoNotDependOnEmulatorOptions) {
  const int m = 70, n = 50, k = 90;
  auto a = random_vector<float>(m * k), b = random_vector<float>(k * n);
  std::vector<float> reference;
  const lockstep::emu::options saved = lockstep::emu::get_options();
  struct restore {
    lockstep::emu::options options;
    ~restore() { lockstep::emu::set_options(options); }
  } restore_at_exit{saved};
  for (unsigned workers : {1u, 2u, 3u, 8u})
    for (auto o : {lockstep::emu::thread_order::forward, lockstep::emu::thread_order::reverse, lockstep::emu::thread_order::random}) {
      lockstep::emu::options opts = saved;
      opts.workers = workers;
      opts.order = o;
      opts.seed = workers;
      lockstep::emu::set_options(opts);
      device_buffer<float> da(a), db(b), dc(m * n);
      lockstep::launch(lockstep::kernels::matmul_tiled_static<16>, dim3((n + 15) / 16, (m + 15) / 16), dim3(16, 16))(da.get(), db.get(), dc.get(), m,
                                                                                                                     n, k);
      auto c = dc.download();
      if (reference.empty()) reference = c;
      ASSERT_EQ(c, reference) << "workers " << workers << " order " << lockstep::emu::to_string(o);
    }
}

#endif

}  // namespace
