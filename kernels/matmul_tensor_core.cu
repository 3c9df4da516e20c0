// Matrix multiply on the tensor cores: C[m,n] = A[m,k] @ B[k,n] with B given
// as its transpose b_t[n,k] (both operands k-contiguous, the layout of
// nn.Linear weights and of cuBLAS "TN"), accumulation in float32. The float32
// SIMT ladder is in matmul.cu; these are its tensor-core rungs, simplest first.
// Both take matmul's fused epilogue (lockstep/kernels/matmul_epilogue.h:
// act(alpha * acc + bias) + residual, bias and residual of C's dtype) and
// apply it to the float accumulators as they store C, rounding once.
#pragma once
#include "lockstep/cuda.h"
#include "lockstep/kernels/matmul_tensor_core_recipes.h"
#include "matmul_epilogue.cuh"
#include "vector16.cuh"

namespace lockstep::kernels {

// Rung 1, wmma: the portable warp-matrix API (runs on the emulator too).
// Takes the fused epilogue (matmul_epilogue.h), applied on its staging tile of C.
// float inputs go through tf32 (m16n16k8), bf16 inputs use m16n16k16;
// accumulation in float. Block tile 128x128, eight warps of 64x32 (4x2
// fragments of 16x16 held in registers: each A fragment feeds two products,
// each B fragment four), k tiles of 128-byte rows (64 bf16 or 32 float). The
// operands go through two shared-memory stages (dynamic shared memory, 72
// KiB, two blocks per SM on Hopper, and within the 99 KiB of sm_86/sm_89,
// where wmma is the default bf16 algo): while the warps multiply one stage,
// the copies of the next are in flight (cp.async on sm_80 and later, plain
// loads on the emulator), one barrier per k tile. Where k, the row strides
// and the pointers allow it (k % (16 / sizeof(T)) == 0, 16-byte aligned
// rows), a copy moves 16 bytes, and a 16-byte piece is wholly inside or
// wholly outside the matrix, so edge tiles zero-fill whole pieces; otherwise
// every element goes through a bounds-checked scalar load. Shared rows are
// padded by 16 bytes (a 144-byte pitch): the eight rows of a fragment load
// fall in different banks, and every fragment stays 32-byte aligned with ldm
// a multiple of 16 bytes. The accumulators leave through a float staging
// tile in the same shared memory, so stores are coalesced (16 bytes where C
// allows it), bounds-checked at the edges, and bf16 outputs are rounded once
// (after the epilogue, which works on the staging tile).
// Before: a 64x64 tile of four 32x32 warps, k tile 32, one shared buffer
// filled by scalar loads, two barriers per k tile: the tensor cores waited on
// the staging loads (bf16 0.066, tf32 0.085 of cuBLAS). Tried beside it (same
// probe run, H100 4096^3, cudaEvent timing): three stages, 0.278 / 0.185;
// 128x256 tiles of 64x64 warps, three stages (162 KiB, one block per SM),
// 0.324 / 0.215, not kept as it does not fit pre-Hopper GPUs. Still short of
// cuBLAS: mma.sync through wmma's fixed fragment layouts, and tf32 pays a
// rounding per fragment element (__float_to_tf32).
// H100 4096^3 (the same probe): bf16 215 TFLOP/s, 0.275 of cuBLAS bf16;
// tf32 70.5 TFLOP/s, 0.176 of cuBLAS tf32.
template <class T>
struct wmma_input;
template <>
struct wmma_input<float> {
  using fragment_type = nvcuda::wmma::precision::tf32;
  static constexpr int fragment_k = 8;
};
template <>
struct wmma_input<__nv_bfloat16> {
  using fragment_type = __nv_bfloat16;
  static constexpr int fragment_k = 16;
};
__device__ inline void store_converted(float* out, float x) { *out = x; }
__device__ inline void store_converted(__nv_bfloat16* out, float x) { *out = __float2bfloat16(x); }

// The tile shapes (wmma_shape, matmul_wmma_shape) are in
// lockstep/kernels/matmul_tensor_core_recipes.h, the same bytes for both input types.

#if defined(__CUDACC__)
#define LOCKSTEP_WMMA_UNROLL _Pragma("unroll")
#else
#define LOCKSTEP_WMMA_UNROLL
#endif

namespace wmma_detail {

// 16 bytes from global src (when inside; zeros otherwise) to shared dst.
__device__ __forceinline__ void copy16(void* dst, const void* src, bool inside) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(address), "l"(src), "r"(inside ? 16 : 0) : "memory");
#else
  *reinterpret_cast<uint4*>(dst) = inside ? *reinterpret_cast<const uint4*>(src) : make_uint4(0u, 0u, 0u, 0u);
#endif
}
__device__ __forceinline__ void copies_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
// Waits until at most `pending` committed groups of this thread's copies are in flight.
template <int pending>
__device__ __forceinline__ void copies_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending) : "memory");
#endif
}

// Rows [row0, row0 + tile_rows) x columns [k0, k0 + row_bytes / sizeof(T)) of the
// k-contiguous matrix src (rows x k, row stride ld) into the shared tile dst
// (pitch `pitch` elements), zero outside.
template <class S, int tile_rows, class T>
__device__ __forceinline__ void load_tile(T* dst, const T* src, long long ld, int row0, int rows, int k0, int k, bool vector_ok) {
  constexpr int tile_k = S::row_bytes / sizeof(T), pitch = S::pitch_bytes / sizeof(T);
  constexpr int piece = 16 / sizeof(T), pieces = tile_k / piece, threads = S::threads;
  if (vector_ok) {
    LOCKSTEP_WMMA_UNROLL
    for (int l = 0; l < tile_rows * pieces / threads; ++l) {
      const int index = static_cast<int>(threadIdx.x) + l * threads, r = index / pieces, kk = index % pieces * piece;
      const int row = row0 + r, kg = k0 + kk;
      const bool inside = row < rows && kg < k;
      copy16(dst + r * pitch + kk, inside ? src + row * ld + kg : src, inside);
    }
  } else {
    for (int e = static_cast<int>(threadIdx.x); e < tile_rows * tile_k; e += threads) {
      const int r = e / tile_k, kk = e % tile_k, row = row0 + r, kg = k0 + kk;
      dst[r * pitch + kk] = (row < rows && kg < k) ? src[row * ld + kg] : T(0.0f);
    }
  }
}

}  // namespace wmma_detail

// The body of matmul_wmma for tile shape S.
template <class S, class T, class Out>
__device__ __forceinline__ void wmma_product(const T* a, int lda, const T* b_t, int ldb, Out* c, int ldc, int m, int n, int k,
                                             const matmul_epilogue& epilogue) {
  using namespace nvcuda;
  constexpr int tile_m = S::tile_m, tile_n = S::tile_n, tile_k = S::row_bytes / sizeof(T), pitch = S::pitch_bytes / sizeof(T);
  constexpr int stages = S::stages, threads = S::threads, warp_m = S::warp_m, warp_n = S::warp_n;
  constexpr int frags_m = warp_m / 16, frags_n = warp_n / 16, warps_n = tile_n / warp_n;
  constexpr int stage_elements = (tile_m + tile_n) * pitch;
  constexpr int fragment_k = wmma_input<T>::fragment_k;
  static_assert(threads / 32 == (tile_m / warp_m) * warps_n, "one warp per warp tile");
  static_assert(stages * stage_elements * static_cast<int>(sizeof(T)) <= S::shared_bytes &&
                    tile_m * S::staging_pitch * static_cast<int>(sizeof(float)) <= S::shared_bytes,
                "the operand stages and the staging tile fit in what S::shared_bytes, and so the host, allocates");
  using fragment_type = typename wmma_input<T>::fragment_type;
  // Operand stages [a tile | b tile] x stages, later the float staging tile of C.
  extern __shared__ __align__(128) unsigned char wmma_shared[];
  T* const operands = reinterpret_cast<T*>(wmma_shared);

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int warp_row = warp / warps_n * warp_m, warp_col = warp % warps_n * warp_n;
  const int block_row = blockIdx.y * tile_m, block_col = blockIdx.x * tile_n;
  constexpr int piece = 16 / sizeof(T);
  const bool vector_ok = k % piece == 0 && lda % piece == 0 && ldb % piece == 0 && aligned16(a) && aligned16(b_t);

  auto load_stage = [&](int stage, int kt) {
    T* a_tile = operands + stage * stage_elements;
    wmma_detail::load_tile<S, tile_m>(a_tile, a, lda, block_row, m, kt * tile_k, k, vector_ok);
    wmma_detail::load_tile<S, tile_n>(a_tile + tile_m * pitch, b_t, ldb, block_col, n, kt * tile_k, k, vector_ok);
  };

  wmma::fragment<wmma::accumulator, 16, 16, fragment_k, float> acc[frags_m][frags_n];
  LOCKSTEP_WMMA_UNROLL
  for (int i = 0; i < frags_m; ++i) LOCKSTEP_WMMA_UNROLL
  for (int j = 0; j < frags_n; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  const int k_tiles = (k + tile_k - 1) / tile_k;
  for (int s = 0; s < stages - 1; ++s) {
    if (s < k_tiles) load_stage(s, s);
    wmma_detail::copies_commit();
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    wmma_detail::copies_wait<stages - 2>();  // this thread's copies of tile kt have landed
    __syncthreads();                         // everyone's have, and everyone is done with tile kt - 1
    const int next = kt + stages - 1;        // into the stage tile kt - 1 used
    if (next < k_tiles) load_stage(next % stages, next);
    wmma_detail::copies_commit();
    const T* a_tile = operands + (kt % stages) * stage_elements + warp_row * pitch;
    const T* b_tile = operands + (kt % stages) * stage_elements + (tile_m + warp_col) * pitch;
    LOCKSTEP_WMMA_UNROLL
    for (int kk = 0; kk < tile_k; kk += fragment_k) {
      wmma::fragment<wmma::matrix_a, 16, 16, fragment_k, fragment_type, wmma::row_major> a_frag[frags_m];
      wmma::fragment<wmma::matrix_b, 16, 16, fragment_k, fragment_type, wmma::col_major> b_frag[frags_n];
      LOCKSTEP_WMMA_UNROLL
      for (int i = 0; i < frags_m; ++i) {
        wmma::load_matrix_sync(a_frag[i], a_tile + 16 * i * pitch + kk, pitch);
        if constexpr (sizeof(T) == 4)  // tf32: round as the hardware expects
          for (int e = 0; e < a_frag[i].num_elements; ++e) a_frag[i].x[e] = wmma::__float_to_tf32(a_frag[i].x[e]);
      }
      LOCKSTEP_WMMA_UNROLL
      for (int j = 0; j < frags_n; ++j) {
        wmma::load_matrix_sync(b_frag[j], b_tile + 16 * j * pitch + kk, pitch);
        if constexpr (sizeof(T) == 4)
          for (int e = 0; e < b_frag[j].num_elements; ++e) b_frag[j].x[e] = wmma::__float_to_tf32(b_frag[j].x[e]);
      }
      LOCKSTEP_WMMA_UNROLL
      for (int i = 0; i < frags_m; ++i) LOCKSTEP_WMMA_UNROLL
      for (int j = 0; j < frags_n; ++j) wmma::mma_sync(acc[i][j], a_frag[i], b_frag[j], acc[i][j]);
    }
  }
  wmma_detail::copies_wait<0>();
  __syncthreads();  // the operand stages become the staging tile

  float* const staging = reinterpret_cast<float*>(wmma_shared);
  constexpr int staging_pitch = S::staging_pitch;
  LOCKSTEP_WMMA_UNROLL
  for (int i = 0; i < frags_m; ++i) LOCKSTEP_WMMA_UNROLL
  for (int j = 0; j < frags_n; ++j)
    wmma::store_matrix_sync(staging + (warp_row + 16 * i) * staging_pitch + warp_col + 16 * j, acc[i][j], staging_pitch, wmma::mem_row_major);
  __syncthreads();

  // The epilogue, in place on the staging tile: consecutive threads take
  // consecutive columns, so bias, residual and the staging tile are read
  // coalesced, and the stores below are the ones without an epilogue.
  if (epilogue_active(epilogue)) {  // the same in every thread
    LOCKSTEP_EPILOGUE_LOOP
    for (int e = static_cast<int>(threadIdx.x); e < tile_m * tile_n; e += threads) {
      const int r = e / tile_n, cc = e % tile_n, row = block_row + r, col = block_col + cc;
      if (row < m && col < n) staging[r * staging_pitch + cc] = apply_epilogue<Out>(epilogue, staging[r * staging_pitch + cc], row, col, n);
    }
    __syncthreads();
  }

  // 16 bytes of C per thread and step where C's rows allow it.
  constexpr int out_piece = 16 / sizeof(Out), pieces = tile_n / out_piece;
  const bool out_vector_ok = ldc % out_piece == 0 && aligned16(c);
  LOCKSTEP_WMMA_UNROLL
  for (int l = 0; l < tile_m * pieces / threads; ++l) {
    const int index = static_cast<int>(threadIdx.x) + l * threads, r = index / pieces, cc = index % pieces * out_piece;
    const int row = block_row + r, col = block_col + cc;
    if (row >= m) continue;
    const float* from = staging + r * staging_pitch + cc;
    Out* to = c + static_cast<long long>(row) * ldc + col;
    if (out_vector_ok && col + out_piece <= n) {
      float x[out_piece];
      LOCKSTEP_WMMA_UNROLL
      for (int q = 0; q < out_piece; q += 4) {
        const float4 v = *reinterpret_cast<const float4*>(from + q);
        x[q] = v.x, x[q + 1] = v.y, x[q + 2] = v.z, x[q + 3] = v.w;
      }
      if constexpr (sizeof(Out) == 4) {
        *reinterpret_cast<float4*>(to) = make_float4(x[0], x[1], x[2], x[3]);
      } else {
        unsigned packed[4];
        LOCKSTEP_WMMA_UNROLL
        for (int q = 0; q < 4; ++q) {
          const Out lo = Out(x[2 * q]), hi = Out(x[2 * q + 1]);
          unsigned short lo_bits, hi_bits;
          memcpy(&lo_bits, &lo, 2);
          memcpy(&hi_bits, &hi, 2);
          packed[q] = static_cast<unsigned>(lo_bits) | static_cast<unsigned>(hi_bits) << 16;
        }
        *reinterpret_cast<uint4*>(to) = make_uint4(packed[0], packed[1], packed[2], packed[3]);
      }
    } else {
      for (int q = 0; q < out_piece && col + q < n; ++q) store_converted(to + q, from[q]);
    }
  }
}
#undef LOCKSTEP_WMMA_UNROLL

template <class T, class Out>
__global__ void __launch_bounds__(matmul_wmma_shape::threads, matmul_wmma_shape::min_blocks)
    matmul_wmma(const T* a, int lda, const T* b_t, int ldb, Out* c, int ldc, int m, int n, int k, matmul_epilogue epilogue) {
  wmma_product<matmul_wmma_shape>(a, lda, b_t, ldb, c, ldc, m, n, k, epilogue);
}

#if defined(__CUDACC__) && !defined(__CUDACC_RTC__)
// Rung 2, wgmma (Hopper only, sm_90a; not on the emulator): the warpgroup
// matrix instructions with operands read straight from shared memory, which
// the bulk-tensor copy engine (TMA) fills. Per block: one producer warpgroup
// whose single thread issues the TMA copies into a ring of `stages` shared
// buffers, and two consumer warpgroups that each multiply a 64 x tile_n half
// of the 128 x tile_n output tile with m64n256 instructions (k16 for bf16,
// k8 for tf32 from float inputs); full/empty mbarriers hand buffers back and
// forth, so loads of later k tiles overlap the math. The grid is persistent
// (one block per SM walking output tiles), so the producer already loads the
// next tile while the consumers store the last one. TMA zero-fills reads
// past the matrix edges, so any m, n and any k with 16-byte aligned rows
// work (the host pads other rows); edge stores are checked.
// H100 4096^3 (lockstep bench, 2026-11-22): bf16 0.89 of cuBLAS bf16 (0.80-0.89
// over nine runs; 689 TFLOP/s against 772 on a cool GPU); tf32 0.86-0.97 of
// cuBLAS tf32.
// B in the nn.Linear layout (w.T) for both.
// Takes the fused epilogue (matmul_epilogue.h), applied in its stores of C.

// The CUtensorMap the host encodes (cuTensorMapEncodeTiled), opaque here.
struct alignas(64) tma_descriptor {
  unsigned long long opaque[16];
};

namespace wgmma_detail {

__device__ inline unsigned shared_address(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

__device__ inline void mbarrier_init(unsigned long long* barrier, unsigned arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(barrier)), "r"(arrivals));
}
__device__ inline void mbarrier_arrive(unsigned long long* barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(barrier)) : "memory");
}
// The producer's arrival, announcing the bytes the copies will deliver.
__device__ inline void mbarrier_arrive_expect_bytes(unsigned long long* barrier, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(barrier)), "r"(bytes) : "memory");
}
__device__ inline void mbarrier_wait(unsigned long long* barrier, unsigned parity) {
  asm volatile(
      "{\n.reg .pred done;\n"
      "wait_again:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_again;\n}\n" ::"r"(shared_address(barrier)),
      "r"(parity)
      : "memory");
}
// A box of the 2-D tensor at (inner, outer) element coordinates into shared
// memory, completing on `barrier`.
__device__ inline void tma_load(void* destination, const tma_descriptor* map, unsigned long long* barrier, int inner, int outer) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(
                   shared_address(destination)),
               "l"(reinterpret_cast<unsigned long long>(map)), "r"(shared_address(barrier)), "r"(inner), "r"(outer)
               : "memory");
}

// Shared-memory matrix descriptor of a k-major tile written by TMA with the
// 128-byte swizzle: rows of 128 bytes (64 bf16 or 32 float), 8-row groups
// 1024 bytes apart.
__device__ inline unsigned long long matrix_descriptor(const void* tile) {
  const unsigned long long address = shared_address(tile);
  return ((address & 0x3FFFF) >> 4) | (1ull << 16) | ((1024ull >> 4) << 32) | (1ull << 62);
}

// d[64 x 256] (+)= A[64 x K] B[K x 256], both from shared memory: K = 16
// for bf16 inputs, 8 for tf32 (float inputs whose low 13 bits are ignored).
// The 128 accumulators of a thread as asm operands %0..%127.
#define LOCKSTEP_WGMMA_ACCUMULATORS                                                                                                                  \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),  \
      "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), \
      "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), \
      "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), \
      "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
      "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), \
      "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), \
      "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), \
      "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), \
      "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),    \
      "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),    \
      "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
#define LOCKSTEP_WGMMA_ACCUMULATOR_REGISTERS                                                     \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                       \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "             \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "             \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "             \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "             \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "             \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"

template <class T>
__device__ inline void wgmma_m64n256(float (&d)[128], unsigned long long a_descriptor, unsigned long long b_descriptor, int accumulate) {
  if constexpr (sizeof(T) == 2)
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {" LOCKSTEP_WGMMA_ACCUMULATOR_REGISTERS "}, %128, %129, p, 1, 1, 0, 0;\n}\n"
        : LOCKSTEP_WGMMA_ACCUMULATORS
        : "l"(a_descriptor), "l"(b_descriptor), "r"(accumulate));
  else
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {" LOCKSTEP_WGMMA_ACCUMULATOR_REGISTERS "}, %128, %129, p, 1, 1;\n}\n"
        : LOCKSTEP_WGMMA_ACCUMULATORS
        : "l"(a_descriptor), "l"(b_descriptor), "r"(accumulate));
}
#undef LOCKSTEP_WGMMA_ACCUMULATORS
#undef LOCKSTEP_WGMMA_ACCUMULATOR_REGISTERS

// Outputs (row, col) and (row, col + 1), `out` pointing at the first: one
// paired store where both are inside and the pair is aligned.
template <class T>
__device__ __forceinline__ void store_pair(T* out, float x, float y, bool pairs_aligned, int col, int n) {
  if (pairs_aligned && col + 1 < n) {
    if constexpr (sizeof(T) == 2)
      *reinterpret_cast<__nv_bfloat162*>(out) = __floats2bfloat162_rn(x, y);
    else
      *reinterpret_cast<float2*>(out) = make_float2(x, y);
  } else {
    if (col < n) store_converted(out, x);
    if (col + 1 < n) store_converted(out + 1, y);
  }
}

// Copies `bytes` (0 to two elements; the rest of the pair is zeros) from
// global memory to shared memory without holding registers (cp.async):
// `cp.async.wait_all` waits for it.
template <class T>
__device__ __forceinline__ void cp_async_pair(void* to_shared, const T* from, int bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(shared_address(to_shared)), "l"(from), "n"(2 * sizeof(T)), "r"(bytes)
               : "memory");
}

// A consumer's stores through the epilogue (the kernel's stores without one
// are below), its bias and residual for 8 column groups at a time loaded
// ahead of the math (matmul_epilogue.cuh).
template <activation_site site, class T>
__device__ __forceinline__ void store_through_epilogue(const float (&d)[128], T* c, int ldc, int m, int n, int row0, int col0, bool pairs_aligned,
                                                       const matmul_epilogue& epilogue) {
#pragma unroll
  for (int j0 = 0; j0 < 32; j0 += 8) {
    float bias[8][2], residual[8][2][2];
#pragma unroll
    for (int g = 0; g < 8; ++g)
#pragma unroll
      for (int q = 0; q < 2; ++q) {
        const int col = col0 + 8 * (j0 + g) + q;
        bias[g][q] = col < n ? epilogue_bias<T>(epilogue, col) : 0.0f;
#pragma unroll
        for (int half = 0; half < 2; ++half)
          residual[g][half][q] = row0 + 8 * half < m && col < n ? epilogue_residual<T>(epilogue, row0 + 8 * half, col, n) : 0.0f;
      }
#pragma unroll
    for (int g = 0; g < 8; ++g) {
      const int j = j0 + g, col = col0 + 8 * j;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = row0 + 8 * half;
        if (row >= m) continue;
        const float x = epilogue_math<site>(epilogue, d[4 * j + 2 * half], bias[g][0], residual[g][half][0]);
        const float y = epilogue_math<site>(epilogue, d[4 * j + 2 * half + 1], bias[g][1], residual[g][half][1]);
        store_pair(c + static_cast<long long>(row) * ldc + col, x, y, pairs_aligned, col, n);
      }
    }
  }
}

}  // namespace wgmma_detail

// T: __nv_bfloat16 (bf16 inputs and output) or float (tf32 products of
// float inputs, float output).
template <class T>
__global__ void __launch_bounds__(wgmma_shape::threads, 1)
    matmul_wgmma(const __grid_constant__ tma_descriptor a_map, const __grid_constant__ tma_descriptor b_map, T* c, int ldc, int m, int n, int k,
                 matmul_epilogue epilogue) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using namespace wgmma_detail;
  // A k tile is one 128-byte row per matrix row; an instruction takes 32 bytes of it.
  constexpr int tile_m = wgmma_shape::tile_m, tile_n = wgmma_shape::tile_n, tile_k = wgmma_shape::row_bytes / sizeof(T);
  constexpr int instruction_k = 32 / sizeof(T), consumers = wgmma_shape::consumers, stages = wgmma_shape::stages;
  constexpr unsigned stage_bytes = (tile_m + tile_n) * tile_k * sizeof(T);
  constexpr int barrier_bytes = 2 * stages * static_cast<int>(sizeof(unsigned long long)), alignment_slack = 1024;
  static_assert(stages * static_cast<int>(stage_bytes) + barrier_bytes + wgmma_shape::bias_bytes + alignment_slack == wgmma_shape::shared_bytes,
                "the layout below (tiles, barriers, bias, alignment slack) is what wgmma_shape::shared_bytes, and so the host, allocates");
  extern __shared__ unsigned char shared_bytes[];
  // The 128-byte swizzle repeats every 1024 bytes: tiles start on that boundary.
  unsigned char* shared = shared_bytes + (1024 - shared_address(shared_bytes) % 1024) % 1024;
  T* a_tiles = reinterpret_cast<T*>(shared);
  T* b_tiles = a_tiles + stages * tile_m * tile_k;
  unsigned long long* full = reinterpret_cast<unsigned long long*>(b_tiles + stages * tile_n * tile_k);
  unsigned long long* empty = full + stages;
  unsigned char* bias_slots = reinterpret_cast<unsigned char*>(empty + stages);  // [consumer][2][tile_n * sizeof(T)]

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], consumers);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  const int tiles_m = (m + tile_m - 1) / tile_m, tiles_n = (n + tile_n - 1) / tile_n;
  const int tiles = tiles_m * tiles_n, k_tiles = (k + tile_k - 1) / tile_k;
  const int warpgroup = threadIdx.x / 128;

  if (warpgroup == 0) {
    // The producer needs few registers: give them to the consumers.
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (threadIdx.x == 0) {
      int stage = 0;
      unsigned phase = 0;
      for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const int tile_row = tile % tiles_m, tile_col = tile / tiles_m;
        for (int kt = 0; kt < k_tiles; ++kt) {
          mbarrier_wait(&empty[stage], phase);
          mbarrier_arrive_expect_bytes(&full[stage], stage_bytes);
          tma_load(a_tiles + stage * tile_m * tile_k, &a_map, &full[stage], kt * tile_k, tile_row * tile_m);
          tma_load(b_tiles + stage * tile_n * tile_k, &b_map, &full[stage], kt * tile_k, tile_col * tile_n);
          if (++stage == stages) stage = 0, phase ^= 1;
        }
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int consumer = warpgroup - 1, thread = threadIdx.x % 128;
    // Every buffer starts empty: complete the empty barriers' first phase.
    if (thread == 0)
      for (int s = 0; s < stages; ++s) mbarrier_arrive(&empty[s]);
    int stage = 0;
    unsigned phase = 0;
    float d[128];
    // With alpha 1 the bias is the accumulators' starting value, instead of
    // loads between the math and the stores, where they wait behind the
    // stores before them (H100, bfloat16 at 4096^3, bias and relu: 0.886 of
    // the plain product's speed that way; loaded as a tile starts, behind the
    // last tile's stores, 0.912). The next tile's bias is copied to shared
    // memory (cp.async, which holds no register) before this tile's stores.
    const bool bias_in_accumulators = epilogue.bias && epilogue.alpha == 1.0f;  // the same in every thread
    const bool bias_staged = bias_in_accumulators && reinterpret_cast<unsigned long long>(epilogue.bias) % (2 * sizeof(T)) == 0;
    matmul_epilogue after_product = epilogue;
    if (bias_in_accumulators) after_product.bias = nullptr;
    // Nothing left but relu, or nothing at all: the plain stores.
    const bool plain_stores = !after_product.residual && after_product.alpha == 1.0f &&
                              (after_product.activation == matmul_no_activation || after_product.activation == static_cast<int>(unary_op::relu));
    // Thread t copies columns 2t and 2t + 1 of a tile's bias into slot `tile_number` % 2.
    unsigned char* my_slots = bias_slots + consumer * 2 * tile_n * sizeof(T);
    const auto stage_bias = [&](int tile, int tile_number) {
      const int col = tile / tiles_m * tile_n + 2 * thread;
      const int inside = col + 1 < n ? 2 : col < n ? 1 : 0;
      const T* from = static_cast<const T*>(epilogue.bias) + (inside ? col : 0);
      cp_async_pair<T>(my_slots + (tile_number % 2 * tile_n + 2 * thread) * sizeof(T), from, inside * static_cast<int>(sizeof(T)));
    };
    if (bias_staged && blockIdx.x < tiles) stage_bias(blockIdx.x, 0);
    for (int tile = blockIdx.x, tile_number = 0; tile < tiles; tile += gridDim.x, ++tile_number) {
      const int tile_row = tile % tiles_m, tile_col = tile / tiles_m;
      // The accumulator layout of m64nN: warp w holds rows 16w..16w+15; lane
      // l rows l/4 and l/4 + 8, columns 2(l%4) and +1 of every 8-column group.
      const int row0 = tile_row * tile_m + consumer * 64 + (thread / 32) * 16 + (thread % 32) / 4;
      const int col0 = tile_col * tile_n + 2 * (thread % 4);
      if (bias_staged) {
        asm volatile("cp.async.wait_all;\n" ::: "memory");
        // The consumer's 128 threads (named barrier 1 + consumer): every copy is in.
        asm volatile("bar.sync %0, 128;\n" ::"r"(1 + consumer) : "memory");
        const T* bias = reinterpret_cast<const T*>(my_slots) + tile_number % 2 * tile_n + 2 * (thread % 4);
#pragma unroll
        for (int j = 0; j < 32; ++j)
#pragma unroll
          for (int q = 0; q < 2; ++q) d[4 * j + q] = d[4 * j + 2 + q] = static_cast<float>(bias[8 * j + q]);
      } else {
#pragma unroll
        for (int j = 0; j < 32; ++j)
#pragma unroll
          for (int q = 0; q < 2; ++q) {
            const int col = col0 + 8 * j + q;
            d[4 * j + q] = d[4 * j + 2 + q] = bias_in_accumulators && col < n ? epilogue_bias<T>(epilogue, col) : 0.0f;
          }
      }
      for (int kt = 0; kt < k_tiles; ++kt) {
        mbarrier_wait(&full[stage], phase);
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
        const T* a_tile = a_tiles + stage * tile_m * tile_k + consumer * 64 * tile_k;
        const T* b_tile = b_tiles + stage * tile_n * tile_k;
#pragma unroll
        for (int kk = 0; kk < tile_k; kk += instruction_k)
          wgmma_m64n256<T>(d, matrix_descriptor(a_tile + kk), matrix_descriptor(b_tile + kk), bias_in_accumulators || kt > 0 || kk > 0);
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
        if (thread == 0) mbarrier_arrive(&empty[stage]);
        if (++stage == stages) stage = 0, phase ^= 1;
      }
      if (bias_staged && tile + gridDim.x < tiles) stage_bias(tile + gridDim.x, tile_number + 1);
      const bool pairs_aligned = ldc % 2 == 0;
      if (!plain_stores) {  // the same in every thread
        if (epilogue.activation == matmul_no_activation || epilogue.activation == static_cast<int>(unary_op::relu))
          store_through_epilogue<activation_site::relu_or_none>(d, c, ldc, m, n, row0, col0, pairs_aligned, after_product);
        else
          store_through_epilogue<activation_site::unrolled>(d, c, ldc, m, n, row0, col0, pairs_aligned, after_product);
        continue;
      }
      if (after_product.activation == static_cast<int>(unary_op::relu))
#pragma unroll
        for (int i = 0; i < 128; ++i) d[i] = apply_unary(unary_op::relu, d[i]);
#pragma unroll
      for (int j = 0; j < 32; ++j) {
        const int col = col0 + 8 * j;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int row = row0 + 8 * half;
          if (row >= m) continue;
          store_pair(c + static_cast<long long>(row) * ldc + col, d[4 * j + 2 * half], d[4 * j + 2 * half + 1], pairs_aligned, col, n);
        }
      }
    }
  }
#else
  __trap();  // built without sm_90a: the host refuses to launch this
#endif
}

#endif

}  // namespace lockstep::kernels
