// Warp collectives: the four shuffles with every width, votes, __activemask,
// __syncwarp, sm_80 warp reductions and match, partial masks and partial warps.
#include "test_util.h"

using namespace testing_util;

namespace {

enum shuffle_kind { idx, up, down, bfly };

template <class T>
__global__ void shuffle(const T* in, T* out, int kind, int arg, int width) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  T v = in[i];
  switch (kind) {
    case idx:
      v = __shfl_sync(0xffffffffu, v, arg, width);
      break;
    case up:
      v = __shfl_up_sync(0xffffffffu, v, arg, width);
      break;
    case down:
      v = __shfl_down_sync(0xffffffffu, v, arg, width);
      break;
    default:
      v = __shfl_xor_sync(0xffffffffu, v, arg, width);
      break;
  }
  out[i] = v;
}

// CUDA's documented source lane for lane `lane`, or -1 for "keeps its own".
// The hardware (PTX shfl) reads only the low 5 bits of the lane argument, so
// a delta of 34 shifts by 2 (seen on an H100).
int documented_source(int kind, int lane, int arg, int width) {
  arg &= 31;
  const int group = lane / width * width, pos = lane % width;
  switch (kind) {
    case idx:
      return group + arg % width;
    case up:
      return pos >= arg ? lane - arg : -1;
    case down:
      return pos + arg < width ? lane + arg : -1;
    default:
      return lane ^ arg;  // arg < width keeps it inside the group
  }
}

template <class T>
void check_shuffles(double lo, double hi) {
  const int threads = 128;
  auto v = random_vector<T>(threads, lo, hi);
  device_buffer<T> in(v);
  for (int width : {1, 2, 4, 8, 16, 32})
    for (int kind : {idx, up, down, bfly})
      for (int arg : {0, 1, 3, width - 1, width + 2, 34}) {
        if (kind == bfly && arg % 32 >= width) continue;
        if (kind != idx && arg < 0) continue;
        device_buffer<T> out(threads);
        lockstep::launch(shuffle<T>, 1, threads)(in.get(), out.get(), kind, arg, width);
        auto got = out.download();
        for (int lane = 0; lane < threads; ++lane) {
          const int src = documented_source(kind, lane % 32, arg, width);
          const T want = v[lane / 32 * 32 + (src < 0 ? lane % 32 : src)];
          ASSERT_EQ(got[lane], want) << "kind " << kind << " width " << width << " arg " << arg << " lane " << lane;
        }
      }
}

TEST(Warp, ShufflesInt) { check_shuffles<int>(-1000000, 1000000); }
TEST(Warp, ShufflesFloat) { check_shuffles<float>(-1, 1); }
TEST(Warp, ShufflesDouble) { check_shuffles<double>(-1, 1); }
TEST(Warp, ShufflesLongLong) { check_shuffles<long long>(-1e15, 1e15); }

__global__ void votes(const int* pred, unsigned* ballot, int* any, int* all, unsigned* active) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int p = pred[i];
  ballot[i] = __ballot_sync(0xffffffffu, p);
  any[i] = __any_sync(0xffffffffu, p);
  all[i] = __all_sync(0xffffffffu, p);
  active[i] = __activemask();
}

TEST(Warp, VotesAndActiveMask) {
  const int threads = 256;
  std::vector<int> pred = random_vector<int>(threads, 0, 1);
  for (int lane = 0; lane < 32; ++lane) pred[32 + lane] = 1;  // warp 1: all true
  for (int lane = 0; lane < 32; ++lane) pred[64 + lane] = 0;  // warp 2: all false
  device_buffer<int> dpred(pred), any(threads), all(threads);
  device_buffer<unsigned> ballot(threads), active(threads);
  lockstep::launch(votes, 1, threads)(dpred.get(), ballot.get(), any.get(), all.get(), active.get());
  auto b = ballot.download();
  auto an = any.download(), al = all.download();
  auto ac = active.download();
  for (int w = 0; w < threads / 32; ++w) {
    unsigned want = 0;
    for (int lane = 0; lane < 32; ++lane) want |= (pred[w * 32 + lane] != 0 ? 1u : 0u) << lane;
    for (int lane = 0; lane < 32; ++lane) {
      const int i = w * 32 + lane;
      ASSERT_EQ(b[i], want) << "warp " << w;
      ASSERT_EQ(an[i] != 0, want != 0) << "warp " << w;
      ASSERT_EQ(al[i] != 0, want == 0xffffffffu) << "warp " << w;
      ASSERT_EQ(ac[i], 0xffffffffu);
    }
  }
}

// Lanes that returned early are not active; the rest shuffle with that mask.
__global__ void active_after_early_exit(unsigned* mask_out, int* sum_out, int live) {
  if (static_cast<int>(threadIdx.x % 32) >= live) return;
  const unsigned mask = __activemask();
  int v = threadIdx.x % 32;
  for (int offset = 16; offset > 0; offset /= 2) {
    const int other = __shfl_down_sync(mask, v, offset);
    if (threadIdx.x % 32 + offset < static_cast<unsigned>(live)) v += other;
  }
  mask_out[threadIdx.x] = mask;
  sum_out[threadIdx.x] = v;
}

TEST(Warp, ActiveMaskAfterEarlyExit) {
  for (int live : {1, 20, 31}) {
    device_buffer<unsigned> mask(64);
    device_buffer<int> sum(64);
    lockstep::launch(active_after_early_exit, 1, 64)(mask.get(), sum.get(), live);
    auto m = mask.download();
    auto s = sum.download();
    for (int w = 0; w < 2; ++w) {
      ASSERT_EQ(m[w * 32], (1u << live) - 1) << "live " << live;
      ASSERT_EQ(s[w * 32], live * (live - 1) / 2) << "live " << live;
    }
  }
}

// Two half-warps shuffle independently, each naming only its own lanes.
__global__ void half_warp_rotate(const int* in, int* out) {
  const int lane = threadIdx.x % 32;
  int v = in[threadIdx.x];
  if (lane < 16)
    v = __shfl_sync(0x0000ffffu, v, (lane + 1) % 16);
  else
    v = __shfl_sync(0xffff0000u, v, 16 + (lane + 1) % 16);
  out[threadIdx.x] = v;
}

TEST(Warp, DisjointPartialMasks) {
  auto v = random_vector<int>(64, -1000, 1000);
  device_buffer<int> in(v), out(64);
  lockstep::launch(half_warp_rotate, 1, 64)(in.get(), out.get());
  auto got = out.download();
  for (int i = 0; i < 64; ++i) {
    const int lane = i % 32, base = i / 32 * 32;
    const int src = lane < 16 ? (lane + 1) % 16 : 16 + (lane + 1) % 16;
    ASSERT_EQ(got[i], v[base + src]) << i;
  }
}

// A block of 48 threads: its second warp has 16 lanes. A full-mask reduction
// still works there, as on the GPU, where the missing lanes do not exist.
__global__ void partial_warp_sum(const int* in, int* out) {
  int v = in[threadIdx.x];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  out[threadIdx.x] = v;
}

TEST(Warp, PartialLastWarp) {
  auto v = random_vector<int>(48, -1000, 1000);
  device_buffer<int> in(v), out(48);
  lockstep::launch(partial_warp_sum, 1, 48)(in.get(), out.get());
  auto got = out.download();
  int first = 0;
  for (int i = 0; i < 32; ++i) first += v[i];
  for (int i = 0; i < 32; ++i) ASSERT_EQ(got[i], first);
}

// Lanes exchange through shared memory, ordered by __syncwarp alone.
__global__ void syncwarp_exchange(const int* in, int* out) {
  __shared__ int slots[64];
  slots[threadIdx.x] = in[threadIdx.x];
  __syncwarp();
  out[threadIdx.x] = slots[(threadIdx.x / 32) * 32 + (threadIdx.x + 5) % 32];
}

TEST(Warp, SyncwarpOrdersSharedMemory) {
  auto v = random_vector<int>(64, -1000, 1000);
  device_buffer<int> in(v), out(64);
  lockstep::launch(syncwarp_exchange, 1, 64)(in.get(), out.get());
  auto got = out.download();
  for (int i = 0; i < 64; ++i) ASSERT_EQ(got[i], v[(i / 32) * 32 + (i + 5) % 32]);
}

__global__ void warp_reductions(const int* in, int* sum, int* mn, int* mx, unsigned* band, unsigned* bor, unsigned* bxor, unsigned* match) {
  const int i = threadIdx.x;
  const int v = in[i];
  sum[i] = __reduce_add_sync(0xffffffffu, v);
  mn[i] = __reduce_min_sync(0xffffffffu, v);
  mx[i] = __reduce_max_sync(0xffffffffu, v);
  band[i] = __reduce_and_sync(0xffffffffu, static_cast<unsigned>(v));
  bor[i] = __reduce_or_sync(0xffffffffu, static_cast<unsigned>(v));
  bxor[i] = __reduce_xor_sync(0xffffffffu, static_cast<unsigned>(v));
  match[i] = __match_any_sync(0xffffffffu, v % 4);
}

TEST(Warp, ReductionsAndMatch) {
  auto v = random_vector<int>(32, -1000, 1000);
  device_buffer<int> in(v), sum(32), mn(32), mx(32);
  device_buffer<unsigned> band(32), bor(32), bxor(32), match(32);
  lockstep::launch(warp_reductions, 1, 32)(in.get(), sum.get(), mn.get(), mx.get(), band.get(), bor.get(), bxor.get(), match.get());
  int s = 0, lo = v[0], hi = v[0];
  unsigned a = ~0u, o = 0, x = 0;
  for (int e : v) {
    s += e;
    lo = std::min(lo, e);
    hi = std::max(hi, e);
    a &= static_cast<unsigned>(e);
    o |= static_cast<unsigned>(e);
    x ^= static_cast<unsigned>(e);
  }
  auto gs = sum.download(), gmn = mn.download(), gmx = mx.download();
  auto ga = band.download(), go = bor.download(), gx = bxor.download(), gm = match.download();
  for (int i = 0; i < 32; ++i) {
    ASSERT_EQ(gs[i], s);
    ASSERT_EQ(gmn[i], lo);
    ASSERT_EQ(gmx[i], hi);
    ASSERT_EQ(ga[i], a);
    ASSERT_EQ(go[i], o);
    ASSERT_EQ(gx[i], x);
    unsigned same = 0;
    for (int k = 0; k < 32; ++k) same |= (v[k] % 4 == v[i] % 4 ? 1u : 0u) << k;
    ASSERT_EQ(gm[i], same);
  }
}

#if !defined(__CUDACC__)
// Misuse the GPU leaves undefined; the emulator names it.

__global__ void mask_without_self(int* out) { out[threadIdx.x] = __shfl_sync(0x1u, static_cast<int>(threadIdx.x), 0); }

__global__ void shuffle_after_exit(int* out) {
  if (threadIdx.x == 7) return;
  out[threadIdx.x] = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x), 0);
}

template <class Kernel>
std::string kernel_error_of(Kernel kernel) {
  device_buffer<int> out(32);
  try {
    lockstep::launch(kernel, 1, 32)(out.get());
  } catch (const lockstep::kernel_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Warp, MaskMustNameTheCallingLane) {
  const std::string what = kernel_error_of(mask_without_self);
  EXPECT_NE(what.find("does not name the calling lane 1"), std::string::npos) << what;
  EXPECT_NE(what.find("thread (1, 0, 0)"), std::string::npos) << what;
}

TEST(Warp, MaskNamingAnExitedLaneFails) {
  const std::string what = kernel_error_of(shuffle_after_exit);
  EXPECT_NE(what.find("exited"), std::string::npos) << what;
  EXPECT_NE(what.find("__shfl_sync"), std::string::npos) << what;
}
#endif

}  // namespace

__global__ void warp_match_all(const int* in, unsigned* mask, int* all_same) {
  const int i = threadIdx.x;
  int pred = -1;
  mask[i] = __match_all_sync(0xffffffffu, in[i], &pred);
  all_same[i] = pred;
}

TEST(Warp, MatchAll) {
  // The first warp holds two values, the second one value.
  std::vector<int> v(64, 7);
  v[5] = 8;
  device_buffer<int> in(v), all_same(64);
  device_buffer<unsigned> mask(64);
  lockstep::launch(warp_match_all, 1, 64)(in.get(), mask.get(), all_same.get());
  auto m = mask.download();
  auto a = all_same.download();
  for (int i = 0; i < 64; ++i) {
    ASSERT_EQ(m[i], i < 32 ? 0u : 0xffffffffu) << i;
    ASSERT_EQ(a[i], i < 32 ? 0 : 1) << i;
  }
  // A partial warp of 10 lanes with a full mask: the answer is the lanes there are.
  device_buffer<int> few(std::vector<int>(10, 3)), few_same(10);
  device_buffer<unsigned> few_mask(10);
  lockstep::launch(warp_match_all, 1, 10)(few.get(), few_mask.get(), few_same.get());
  for (unsigned m : few_mask.download()) ASSERT_EQ(m, 0x3ffu);
  for (int p : few_same.download()) ASSERT_EQ(p, 1);
}
