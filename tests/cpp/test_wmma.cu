// The warp matrix functions (nvcuda::wmma): one 16x16x16 tile with __half and
// __nv_bfloat16, one 16x16x8 tile with tf32, every layout of A, B, C and D,
// fill_fragment, element-wise work on fragments, __float_to_tf32's rounding,
// and a tiled matmul of four warps a block staging tiles in shared memory.
// Results are compared with float64 products of the same rounded inputs.
#include "test_util.h"

using namespace testing_util;
using namespace nvcuda;

// bf16 and tf32 fragments need sm_80; the GPU build is sm_90.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define WMMA_TEST_DEVICE_CODE 0
#else
#define WMMA_TEST_DEVICE_CODE 1
#endif

namespace {

template <class T>
using storage_t = typename wmma::helper_traits<T>::storage_element_type;
template <class T>
constexpr int k_of = std::is_same_v<T, wmma::precision::tf32> ? 8 : 16;

// The host side's rounding of a value to the inputs' element type.
std::uint32_t bits_of(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
float float_of(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
float tf32_round(float f) { return float_of((bits_of(f) + 0x1000u) & 0xffffe000u); }  // finite values: ties away from zero

// The value the tensor cores multiply: tf32 inputs are rounded by the kernels (__float_to_tf32).
template <class T>
double as_input(storage_t<T> v) {
  if constexpr (std::is_same_v<T, wmma::precision::tf32>)
    return tf32_round(v);
  else
    return static_cast<double>(static_cast<float>(v));
}

// Element (r, c) of a matrix stored row- or column-major with leading dimension ld.
inline std::size_t at(bool row_major, std::size_t r, std::size_t c, std::size_t ld) { return row_major ? r * ld + c : c * ld + r; }

template <class L>
constexpr bool is_row = std::is_same_v<L, wmma::row_major>;

// One warp: D = scale * (A * B + C), C loaded or filled, every layout a parameter.
template <class T, class LA, class LB>
__global__ void one_tile(const storage_t<T>* a, const storage_t<T>* b, const float* c, float* d, unsigned lda, unsigned ldb, unsigned ldc,
                         unsigned ldd, wmma::layout_t c_layout, wmma::layout_t d_layout, float fill, float scale) {
#if WMMA_TEST_DEVICE_CODE
  constexpr int K = k_of<T>;
  wmma::fragment<wmma::matrix_a, 16, 16, K, T, LA> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, K, T, LB> fb;
  wmma::fragment<wmma::accumulator, 16, 16, K, float> acc;
  wmma::load_matrix_sync(fa, a, lda);
  wmma::load_matrix_sync(fb, b, ldb);
  if constexpr (std::is_same_v<T, wmma::precision::tf32>) {
    for (int i = 0; i < fa.num_elements; i++) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
    for (int i = 0; i < fb.num_elements; i++) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
  }
  if (c)
    wmma::load_matrix_sync(acc, c, ldc, c_layout);
  else
    wmma::fill_fragment(acc, fill);
  wmma::mma_sync(acc, fa, fb, acc);
  for (int i = 0; i < acc.num_elements; i++) acc.x[i] *= scale;
  wmma::store_matrix_sync(d, acc, ldd, d_layout);
#endif
}

// Checks one tile against float64: within 1e-5 of the sum of |products| of
// the rounded inputs (fp32 accumulation), and with a relative error within
// `tolerance` of the product of the unrounded inputs.
template <class T, class LA, class LB>
void check_one_tile(bool load_c, bool c_row, bool d_row, float scale, double tolerance) {
  constexpr int M = 16, N = 16, K = k_of<T>;
  // Leading dimensions larger than the tile, multiples of 8 elements (the GPU wants 16 bytes).
  const unsigned lda = (is_row<LA> ? K : M) + 8, ldb = (is_row<LB> ? N : K) + 8, ldc = 24, ldd = 32;
  const auto a_exact = random_vector<float>(std::size_t(lda) * 32), b_exact = random_vector<float>(std::size_t(ldb) * 32);
  std::vector<storage_t<T>> ha(a_exact.size()), hb(b_exact.size());
  for (std::size_t i = 0; i < ha.size(); ++i) ha[i] = storage_t<T>(a_exact[i]);
  for (std::size_t i = 0; i < hb.size(); ++i) hb[i] = storage_t<T>(b_exact[i]);
  const auto hc = random_vector<float>(std::size_t(ldc) * 16);
  const float fill = 0.75f;
  device_buffer<storage_t<T>> da(ha), db(hb);
  device_buffer<float> dc(hc), dd(std::size_t(ldd) * 16);  // dd: NaN until written
  (void)cudaGetLastError();                                // an earlier test's failed launch is not this one's
  lockstep::launch(one_tile<T, LA, LB>, 1, 32)(da.get(), db.get(), load_c ? dc.get() : nullptr, dd.get(), lda, ldb, ldc, ldd,
                                               c_row ? wmma::mem_row_major : wmma::mem_col_major, d_row ? wmma::mem_row_major : wmma::mem_col_major,
                                               fill, scale);
  CUDA_OK(cudaGetLastError());
  const auto got = dd.download();
  std::vector<float> out(M * N);
  std::vector<double> exact(M * N);
  for (int r = 0; r < M; ++r)
    for (int col = 0; col < N; ++col) {
      const double cval = load_c ? hc[at(c_row, r, col, ldc)] : fill;
      double rounded = cval, unrounded = cval, magnitude = std::abs(cval);
      for (int k = 0; k < K; ++k) {
        const double x = as_input<T>(ha[at(is_row<LA>, r, k, lda)]), y = as_input<T>(hb[at(is_row<LB>, k, col, ldb)]);
        rounded += x * y;
        magnitude += std::abs(x * y);
        unrounded += double(a_exact[at(is_row<LA>, r, k, lda)]) * b_exact[at(is_row<LB>, k, col, ldb)];
      }
      const float g = got[at(d_row, r, col, ldd)];
      out[r * N + col] = g;
      exact[r * N + col] = scale * unrounded;
      ASSERT_LE(std::abs(double(g) - scale * rounded), 1e-5 * std::abs(scale) * magnitude)
          << "element (" << r << ", " << col << "): got " << g << ", want " << scale * rounded << " (seed " << fresh_seed() << ")";
    }
  EXPECT_CLOSE(out, exact, tolerance);
  // What the tile does not cover stays poisoned: the store wrote the tile only.
  for (std::size_t i = 0; i < got.size(); ++i)
    if ((d_row ? i % ldd : i / ldd) >= 16 || (d_row ? i / ldd : i % ldd) >= 16) ASSERT_TRUE(std::isnan(got[i])) << i;
}

template <class T>
void check_layouts(double tolerance) {
  check_one_tile<T, wmma::row_major, wmma::row_major>(true, true, true, 1.0f, tolerance);
  check_one_tile<T, wmma::row_major, wmma::col_major>(true, false, true, 1.0f, tolerance);
  check_one_tile<T, wmma::col_major, wmma::row_major>(true, true, false, 1.0f, tolerance);
  check_one_tile<T, wmma::col_major, wmma::col_major>(true, false, false, 1.0f, tolerance);
  // fill_fragment for C, accumulators scaled by 2 through x[i].
  check_one_tile<T, wmma::row_major, wmma::col_major>(false, true, true, 2.0f, tolerance);
  check_one_tile<T, wmma::col_major, wmma::row_major>(false, true, false, 2.0f, tolerance);
}

TEST(Wmma, HalfTileEveryLayout) { check_layouts<__half>(1e-3); }
TEST(Wmma, Bfloat16TileEveryLayout) { check_layouts<__nv_bfloat16>(5e-3); }
TEST(Wmma, Tf32TileEveryLayout) { check_layouts<wmma::precision::tf32>(1e-3); }

// Four warps a block, each 32x32 of the block's 64x64 output (2x2
// fragments), A (M x K) and B (K x N) row-major, staged in shared memory.
constexpr int block_tile = 64, stage_k = 32, pad = 8;

template <class T>
__global__ void tiled_matmul(const storage_t<T>* a, const storage_t<T>* b, float* c, int m, int n, int k) {
#if WMMA_TEST_DEVICE_CODE
  constexpr int K = k_of<T>;
  using S = storage_t<T>;
  __shared__ __align__(32) S as[block_tile][stage_k + pad];
  __shared__ __align__(32) S bs[stage_k][block_tile + pad];
  const int warp = threadIdx.x / 32, row0 = blockIdx.y * block_tile, col0 = blockIdx.x * block_tile;
  const int wr = (warp / 2) * 32, wc = (warp % 2) * 32;
  wmma::fragment<wmma::accumulator, 16, 16, K, float> acc[2][2];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.0f);
  for (int k0 = 0; k0 < k; k0 += stage_k) {
    for (int e = threadIdx.x; e < block_tile * stage_k; e += blockDim.x) {
      as[e / stage_k][e % stage_k] = a[(row0 + e / stage_k) * k + k0 + e % stage_k];
      bs[e / block_tile][e % block_tile] = b[(k0 + e / block_tile) * n + col0 + e % block_tile];
    }
    __syncthreads();
    for (int kk = 0; kk < stage_k; kk += K) {
      wmma::fragment<wmma::matrix_a, 16, 16, K, T, wmma::row_major> fa[2];
      wmma::fragment<wmma::matrix_b, 16, 16, K, T, wmma::row_major> fb[2];
      for (int i = 0; i < 2; i++) {
        wmma::load_matrix_sync(fa[i], &as[wr + 16 * i][kk], stage_k + pad);
        wmma::load_matrix_sync(fb[i], &bs[kk][wc + 16 * i], block_tile + pad);
        if constexpr (std::is_same_v<T, wmma::precision::tf32>) {
          for (int e = 0; e < fa[i].num_elements; e++) fa[i].x[e] = wmma::__float_to_tf32(fa[i].x[e]);
          for (int e = 0; e < fb[i].num_elements; e++) fb[i].x[e] = wmma::__float_to_tf32(fb[i].x[e]);
        }
      }
      for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    __syncthreads();
  }
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++)
      wmma::store_matrix_sync(c + std::size_t(row0 + wr + 16 * i) * n + col0 + wc + 16 * j, acc[i][j], n, wmma::mem_row_major);
#endif
}

template <class T>
void check_tiled_matmul(int m, int n, int k, double tolerance) {
  const auto a_exact = random_vector<float>(std::size_t(m) * k), b_exact = random_vector<float>(std::size_t(k) * n);
  std::vector<storage_t<T>> ha(a_exact.size()), hb(b_exact.size());
  for (std::size_t i = 0; i < ha.size(); ++i) ha[i] = storage_t<T>(a_exact[i]);
  for (std::size_t i = 0; i < hb.size(); ++i) hb[i] = storage_t<T>(b_exact[i]);
  device_buffer<storage_t<T>> da(ha), db(hb);
  device_buffer<float> dc(std::size_t(m) * n);  // NaN until written
  (void)cudaGetLastError();
  lockstep::launch(tiled_matmul<T>, dim3(n / block_tile, m / block_tile), 128)(da.get(), db.get(), dc.get(), m, n, k);
  CUDA_OK(cudaGetLastError());
  const auto got = dc.download();
  std::vector<double> exact(got.size());
  for (int r = 0; r < m; ++r)
    for (int col = 0; col < n; ++col) {
      double rounded = 0, unrounded = 0, magnitude = 0;
      for (int i = 0; i < k; ++i) {
        const double x = as_input<T>(ha[std::size_t(r) * k + i]), y = as_input<T>(hb[std::size_t(i) * n + col]);
        rounded += x * y;
        magnitude += std::abs(x * y);
        unrounded += double(a_exact[std::size_t(r) * k + i]) * b_exact[std::size_t(i) * n + col];
      }
      exact[std::size_t(r) * n + col] = unrounded;
      const float g = got[std::size_t(r) * n + col];
      ASSERT_LE(std::abs(double(g) - rounded), 1e-5 * magnitude)
          << "element (" << r << ", " << col << "): got " << g << ", want " << rounded << " (seed " << fresh_seed() << ")";
    }
  EXPECT_CLOSE(got, exact, tolerance);
}

TEST(Wmma, HalfTiledMatmul) { check_tiled_matmul<__half>(128, 192, 160, 1e-3); }
TEST(Wmma, Bfloat16TiledMatmul) { check_tiled_matmul<__nv_bfloat16>(128, 192, 160, 5e-3); }
TEST(Wmma, Tf32TiledMatmul) { check_tiled_matmul<wmma::precision::tf32>(128, 192, 160, 1e-3); }

__global__ void to_tf32(const float* in, float* out, int n) {
#if WMMA_TEST_DEVICE_CODE
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = wmma::__float_to_tf32(in[i]);
#endif
}

// cvt.rna.tf32.f32: 10 significand bits, round to nearest with ties away from
// zero, the 13 bits below cleared.
TEST(Wmma, FloatToTf32RoundsToNearestTiesAway) {
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> cases = {
      {0x3f800000u, 0x3f800000u},  // 1.0: exact
      {0x3f800fffu, 0x3f800000u},  // just below half a unit: down
      {0x3f801000u, 0x3f802000u},  // a tie, even below: away from zero (up), not to even
      {0x3f803000u, 0x3f804000u},  // a tie, odd below: up
      {0x3f801001u, 0x3f802000u},  // above half: up
      {0xbf801000u, 0xbf802000u},  // negative tie: away from zero
      {0x3fffffffu, 0x40000000u},  // carries into the exponent
      {0x00001000u, 0x00002000u},  // subnormal tie
      {0x80000000u, 0x80000000u},  // -0
      {0x7f800000u, 0x7f800000u},  // infinity
  };
  std::vector<float> in;
  for (const auto& c : cases) in.push_back(float_of(c.first));
  device_buffer<float> din(in), dout(in.size());
  lockstep::launch(to_tf32, 1, 32)(din.get(), dout.get(), static_cast<int>(in.size()));
  const auto got = dout.download();
  for (std::size_t i = 0; i < cases.size(); ++i)
    EXPECT_EQ(bits_of(got[i]), cases[i].second) << std::hex << "input 0x" << cases[i].first << " gave 0x" << bits_of(got[i]);
}

#if !defined(__CUDACC__)
// Misuse the GPU leaves undefined; the emulator names it.

__global__ void divergent_mma(float* out) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(fa, __half(1.0f));
  wmma::fill_fragment(fb, __half(1.0f));
  wmma::fill_fragment(acc, 0.0f);
  if (threadIdx.x != 3) wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(out, acc, 16, wmma::mem_row_major);
}

__global__ void half_warp_store(float* out) {
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 1.0f);
  wmma::store_matrix_sync(out, acc, 16, wmma::mem_row_major);
}

std::string kernel_error_of(void (*kernel)(float*), int threads) {
  device_buffer<float> out(256);
  try {
    lockstep::launch(kernel, 1, threads)(out.get());
  } catch (const lockstep::kernel_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Wmma, LaneSkippingMmaSyncIsReported) {
  const std::string what = kernel_error_of(divergent_mma, 32);
  EXPECT_NE(what.find("wmma::mma_sync"), std::string::npos) << what;
  EXPECT_NE(what.find("wmma::store_matrix_sync"), std::string::npos) << what;
}

TEST(Wmma, PartialWarpIsRefused) {
  const std::string what = kernel_error_of(half_warp_store, 16);
  EXPECT_NE(what.find("wmma::store_matrix_sync in a warp of 16 threads"), std::string::npos) << what;
}
#endif

}  // namespace
