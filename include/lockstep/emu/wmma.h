// nvcuda::wmma (CUDA's <mma.h>, the warp matrix functions) on the emulator.
//
// Fragments are spread over the lanes as on the GPU: each lane holds
// num_elements elements, the same count mma.h declares for the shape and type
// (8 floats of a 16x16 accumulator, 16 halves of a 16x16 half matrix_a, where
// the hardware holds every element twice, 4 floats of a 16x8 tf32 matrix_a).
// Why not let every lane hold the whole tile: code sized by num_elements or
// code that changes only some lanes' elements (a lane-dependent x[i] update,
// a divergent bug) would then behave differently from the GPU, and every lane
// would repeat the whole product (32 times the work, and 32 times the memory
// accesses check mode records). CUDA leaves which element a lane holds
// unspecified, so the emulator picks the simplest map: lane l's x[e] is
// element (e * 32 + l) mod (rows * cols) of the tile in row-major order,
// whatever the fragment's layout. A store therefore writes every element of
// the tile exactly once (racecheck sees one writer per element).
//
// mma_sync is the one function that needs the other lanes' elements. Every
// lane publishes the addresses of its A and B fragments in a per-warp table,
// meets the warp, computes its own elements of D reading A and B from the
// other lanes' fibers, and meets the warp again so that no lane changes its
// fragments while another still reads them. The table is thread-local, as a
// block runs on one OS thread at a time, and the functions that touch it or
// the other lanes' stacks are not instrumented in check mode: they are the
// hardware's register exchange, not memory the kernel accesses.
//
// In region loops (lockstep/emu/region_loops.h) each *_sync call is a
// collective step that runs the call twice: gathering, a lane only records
// its call (mma_sync publishes its fragments first), and the second run, its
// warp answered, does the lane's work; mma_sync's lanes then read the
// others' fragments in the block's per-thread arrays, which stay put.
//
// Every *_sync function is a warp rendezvous of its own kind (warp_op::wmma_*),
// as the hardware requires all 32 lanes to execute it convergently: a lane that
// skips it, exits first or reaches another one is reported like a divergent
// __syncwarp, and a warp with fewer than 32 threads is refused. Racecheck
// orders the lanes' accesses around these calls as around __syncwarp.
//
// Arithmetic: products are exact in float (half, bf16 and tf32 significands
// are at most 11 bits), summed in float in k order onto C, then converted to
// D's type. tf32 inputs are read as the tensor cores read them: the low 13
// significand bits of the stored float are ignored (kernels round first with
// __float_to_tf32, which rounds to nearest, ties away from zero, as the
// hardware's cvt.rna.tf32.f32).
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "lockstep/emu/builtins.h"
#include "lockstep/emu/half.h"
#include "lockstep/emu/sync.h"
#include "lockstep/emu/waits.h"

namespace nvcuda {
namespace wmma {

struct row_major;
struct col_major;
struct matrix_a;
struct matrix_b;
struct accumulator;
namespace precision {
struct tf32;
}

enum layout_t { mem_row_major, mem_col_major };

inline float __float_to_tf32(float in) {
  std::uint32_t x;
  std::memcpy(&x, &in, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    x = 0x7fffffffu;  // NaN: the canonical NaN
  else
    x = (x + 0x1000u) & 0xffffe000u;  // magnitude + half a tf32 unit, truncated: ties away from zero
  float out;
  std::memcpy(&out, &x, 4);
  return out;
}

template <typename T>
struct helper_traits {
  typedef T element_type;
  typedef T storage_element_type;
  typedef T fill_argument_type;
};
template <>
struct helper_traits<precision::tf32> {
  typedef precision::tf32 element_type;
  typedef float storage_element_type;
  typedef float fill_argument_type;
};

template <typename T, int size, int packed_size = size>
struct alignas(8) __frag_base {
  enum { num_elements = size };
  enum { num_storage_elements = packed_size };
  typedef T element_type;
  typedef typename helper_traits<T>::storage_element_type storage_element_type;
  storage_element_type x[num_storage_elements];
};

namespace detail {

// Elements per lane on the GPU (mma.h's sizes); 0 where CUDA has no such fragment.
template <class Use, int m, int n, int k, class T>
inline constexpr int lane_elements = 0;
// m16n16k16, m32n8k16, m8n32k16 with __half: A and B hold 16 halves, the accumulators 8.
template <int m, int n>
inline constexpr int lane_elements<matrix_a, m, n, 16, __half> = (m == 16 && n == 16) || (m == 32 && n == 8) || (m == 8 && n == 32) ? 16 : 0;
template <int m, int n>
inline constexpr int lane_elements<matrix_b, m, n, 16, __half> = (m == 16 && n == 16) || (m == 32 && n == 8) || (m == 8 && n == 32) ? 16 : 0;
template <int m, int n>
inline constexpr int lane_elements<accumulator, m, n, 16, __half> = (m == 16 && n == 16) || (m == 32 && n == 8) || (m == 8 && n == 32) ? 8 : 0;
template <int m, int n>
inline constexpr int lane_elements<accumulator, m, n, 16, float> = (m == 16 && n == 16) || (m == 32 && n == 8) || (m == 8 && n == 32) ? 8 : 0;
// __nv_bfloat16: no duplicated elements, so A is m*16/32 and B 16*n/32.
template <int m, int n>
inline constexpr int lane_elements<matrix_a, m, n, 16, __nv_bfloat16> = (m == 16 && n == 16) || (m == 32 && n == 8) || (m == 8 && n == 32) ? m / 2
                                                                                                                                           : 0;
template <int m, int n>
inline constexpr int lane_elements<matrix_b, m, n, 16, __nv_bfloat16> = (m == 16 && n == 16) || (m == 32 && n == 8) || (m == 8 && n == 32) ? n / 2
                                                                                                                                           : 0;
// m16n16k8 with precision::tf32.
template <>
inline constexpr int lane_elements<matrix_a, 16, 16, 8, precision::tf32> = 4;
template <>
inline constexpr int lane_elements<matrix_b, 16, 16, 8, precision::tf32> = 4;
template <>
inline constexpr int lane_elements<accumulator, 16, 16, 8, float> = 8;

// The tile a fragment holds: A is m x k, B is k x n, C and D are m x n.
template <class Use, int m, int n, int k>
struct tile {
  static constexpr int rows = std::is_same_v<Use, matrix_a> ? m : std::is_same_v<Use, matrix_b> ? k : m;
  static constexpr int cols = std::is_same_v<Use, matrix_a> ? k : n;
  static constexpr int elements = rows * cols;
};

}  // namespace detail

template <typename Use, int m, int n, int k, typename T, typename Layout = void>
class fragment : public __frag_base<T, detail::lane_elements<Use, m, n, k, T>> {
  static_assert(detail::lane_elements<Use, m, n, k, T> > 0, "nvcuda::wmma: no fragment of this use, shape and element type");
  static_assert(std::is_same_v<Use, accumulator> ? std::is_same_v<Layout, void>
                                                 : std::is_same_v<Layout, row_major> || std::is_same_v<Layout, col_major>,
                "nvcuda::wmma: matrix_a and matrix_b fragments take row_major or col_major, accumulators no layout");
};

template <typename Use, int m, int n, int k, typename T, typename Layout>
inline void fill_fragment(fragment<Use, m, n, k, T, Layout>& f, const typename helper_traits<T>::fill_argument_type& in) {
  for (int i = 0; i < f.num_storage_elements; i++) f.x[i] = in;
}

namespace detail {

// The element lane `lane` holds in slot e, as (row, column) of the tile.
template <class Use, int m, int n, int k>
inline void element_of(int lane, int e, int& row, int& col) {
  using t = tile<Use, m, n, k>;
  const int i = (e * 32 + lane) % t::elements;
  row = i / t::cols;
  col = i % t::cols;
}

inline unsigned lane_id() { return ::lockstep::emu::current.linear_tid % 32; }

template <class Frag, class Use, int m, int n, int k, class P>
inline void load_lane(Frag& f, const P* p, unsigned ldm, bool row_major_memory) {
  const int lane = static_cast<int>(lane_id());
  for (int e = 0; e < f.num_storage_elements; ++e) {
    int r, c;
    element_of<Use, m, n, k>(lane, e, r, c);
    f.x[e] = p[row_major_memory ? std::size_t(r) * ldm + c : std::size_t(c) * ldm + r];
  }
}

// The per-warp table of fragment addresses mma_sync exchanges (at most 32 warps a block).
struct exchange {
  const void* a[32];
  const void* b[32];
};
inline thread_local exchange exchange_table[32];

__attribute__((noinline, no_sanitize("thread"))) inline void publish(const void* a, const void* b) {
  const unsigned t = ::lockstep::emu::current.linear_tid;
  exchange_table[t / 32].a[t % 32] = a;
  exchange_table[t / 32].b[t % 32] = b;
}

template <class T>
inline float operand(T v) {
  return static_cast<float>(v);
}
// tf32 operands: the tensor cores read the sign, exponent and top 10 significand bits.
inline float tf32_operand(float v) {
  std::uint32_t x;
  std::memcpy(&x, &v, 4);
  if ((x & 0x7f800000u) != 0x7f800000u) x &= 0xffffe000u;
  std::memcpy(&v, &x, 4);
  return v;
}

// The lane's elements of D = A * B + C, reading A and B from every lane of the warp.
template <int m, int n, int k, class TA, class TB, class FD, class FC>
__attribute__((noinline, no_sanitize("thread"))) void mma_lane(FD& d, const FC& c) {
  using frag_a = __frag_base<TA, lane_elements<matrix_a, m, n, k, TA>>;
  using frag_b = __frag_base<TB, lane_elements<matrix_b, m, n, k, TB>>;
  const unsigned t = ::lockstep::emu::current.linear_tid;
  const exchange& x = exchange_table[t / 32];
  const int lane = static_cast<int>(t % 32);
  // Element (r, j) of a tile with `cols` columns is slot i / 32 of lane i % 32,
  // i = r * cols + j (its first copy). No lambdas here: they would be
  // functions of their own, instrumented in check mode.
  float a_row[k], b_col[k];
  for (int e = 0; e < d.num_storage_elements; ++e) {
    int r, col;
    element_of<accumulator, m, n, k>(lane, e, r, col);
    for (int kk = 0; kk < k; ++kk) {
      const int ia = r * k + kk, ib = kk * n + col;
      a_row[kk] = operand(static_cast<const frag_a*>(x.a[ia % 32])->x[ia / 32]);
      b_col[kk] = operand(static_cast<const frag_b*>(x.b[ib % 32])->x[ib / 32]);
      if constexpr (std::is_same_v<TA, precision::tf32>) a_row[kk] = tf32_operand(a_row[kk]);
      if constexpr (std::is_same_v<TB, precision::tf32>) b_col[kk] = tf32_operand(b_col[kk]);
    }
    float acc = static_cast<float>(c.x[e]);
    for (int kk = 0; kk < k; ++kk) acc += a_row[kk] * b_col[kk];
    d.x[e] = static_cast<typename FD::storage_element_type>(acc);
  }
}

}  // namespace detail

// matrix_a and matrix_b: the layout is the fragment's; ldm counts elements.
template <typename Use, int m, int n, int k, typename T, typename Layout>
requires(!std::is_same_v<Use, accumulator>) LOCKSTEP_SYNC_WRAPPER LOCKSTEP_WAITS(warp)
void load_matrix_sync(fragment<Use, m, n, k, T, Layout>& a, const typename helper_traits<T>::storage_element_type* p, unsigned ldm) {
  ::lockstep::emu::warp_collective(::lockstep::emu::warp_op::wmma_load, 0xffffffffu, 0, 0, 32);
  if (::lockstep::emu::loop_gathering()) return;
  detail::load_lane<fragment<Use, m, n, k, T, Layout>, Use, m, n, k>(a, p, ldm, std::is_same_v<Layout, row_major>);
}

// Accumulators: the layout in memory is an argument.
template <int m, int n, int k, typename T>
LOCKSTEP_SYNC_WRAPPER LOCKSTEP_WAITS(warp) void load_matrix_sync(fragment<accumulator, m, n, k, T>& a, const T* p, unsigned ldm, layout_t layout) {
  ::lockstep::emu::warp_collective(::lockstep::emu::warp_op::wmma_load, 0xffffffffu, 0, 0, 32);
  if (::lockstep::emu::loop_gathering()) return;
  detail::load_lane<fragment<accumulator, m, n, k, T>, accumulator, m, n, k>(a, p, ldm, layout == mem_row_major);
}

// Each lane writes its own elements: the warp writes each element of the tile once.
template <int m, int n, int k, typename T>
LOCKSTEP_SYNC_WRAPPER LOCKSTEP_WAITS(warp) void store_matrix_sync(T* p, const fragment<accumulator, m, n, k, T>& a, unsigned ldm, layout_t layout) {
  ::lockstep::emu::warp_collective(::lockstep::emu::warp_op::wmma_store, 0xffffffffu, 0, 0, 32);
  if (::lockstep::emu::loop_gathering()) return;
  const int lane = static_cast<int>(detail::lane_id());
  for (int e = 0; e < a.num_storage_elements; ++e) {
    int r, c;
    detail::element_of<accumulator, m, n, k>(lane, e, r, c);
    p[layout == mem_row_major ? std::size_t(r) * ldm + c : std::size_t(c) * ldm + r] = a.x[e];
  }
}

// D = A * B + C. A and B take the same element type; C and D are float or
// (with __half inputs) __half, in any combination, as in mma.h.
template <int m, int n, int k, typename TAB, typename LA, typename LB, typename TD, typename TC>
requires((std::is_same_v<TD, float> || (std::is_same_v<TD, __half> && std::is_same_v<TAB, __half>)) &&
         (std::is_same_v<TC, float> || (std::is_same_v<TC, __half> && std::is_same_v<TAB, __half>))) LOCKSTEP_SYNC_WRAPPER LOCKSTEP_WAITS(warp)
void mma_sync(fragment<accumulator, m, n, k, TD>& d, const fragment<matrix_a, m, n, k, TAB, LA>& a, const fragment<matrix_b, m, n, k, TAB, LB>& b,
              const fragment<accumulator, m, n, k, TC>& c) {
  const __frag_base<TAB, detail::lane_elements<matrix_a, m, n, k, TAB>>& a_elements = a;
  const __frag_base<TAB, detail::lane_elements<matrix_b, m, n, k, TAB>>& b_elements = b;
  detail::publish(&a_elements, &b_elements);
  ::lockstep::emu::warp_collective(::lockstep::emu::warp_op::wmma_mma, 0xffffffffu, 0, 0, 32);
  if (::lockstep::emu::loop_gathering()) return;
  detail::mma_lane<m, n, k, TAB, TAB>(d, c);
  ::lockstep::emu::warp_collective(::lockstep::emu::warp_op::wmma_mma, 0xffffffffu, 0, 0, 32);
}

}  // namespace wmma
}  // namespace nvcuda
