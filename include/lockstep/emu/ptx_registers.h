// PTX's special registers, for the one form of inline PTX the emulator runs:
// `asm("mov.u32 %0, %%laneid;" : "=r"(lane));`, a read of a special register
// into a variable (src/emulator/host_source/inline_ptx.cpp rewrites it to
// `(lane) = ::lockstep::emu::ptx::laneid()`). Other inline PTX is refused at
// build time, naming its line.
#pragma once
#include "lockstep/emu/builtins.h"
#include "lockstep/emu/device_io.h"
#include "lockstep/launch_limits.h"

namespace lockstep::emu::ptx {

inline unsigned laneid() { return in_kernel("%laneid").linear_tid & 31u; }
// The warp's number in its block: a GPU's %warpid is the warp's slot on its SM, which no program may rely on.
inline unsigned warpid() { return in_kernel("%warpid").linear_tid / 32u; }
inline unsigned nwarpid() { return ::lockstep::h100_sm_limits.max_threads / 32u; }
// Blocks go to the SMs round-robin in their linear order.
inline unsigned smid() {
  const thread_context& t = in_kernel("%smid");
  const unsigned block = t.block_idx.x + t.grid_dim.x * (t.block_idx.y + t.grid_dim.y * t.block_idx.z);
  return block % ::lockstep::h100_sm_limits.multiprocessors;
}
inline unsigned nsmid() { return ::lockstep::h100_sm_limits.multiprocessors; }
inline unsigned lanemask_eq() { return 1u << laneid(); }
inline unsigned lanemask_lt() { return lanemask_eq() - 1u; }
inline unsigned lanemask_le() { return lanemask_lt() | lanemask_eq(); }
inline unsigned lanemask_gt() { return ~lanemask_le(); }
inline unsigned lanemask_ge() { return ~lanemask_lt(); }
inline unsigned long long clock64() { return static_cast<unsigned long long>(::clock64()); }
inline unsigned clock() { return static_cast<unsigned>(::clock64()); }
inline unsigned long long globaltimer() { return __globaltimer(); }
inline unsigned globaltimer_lo() { return static_cast<unsigned>(__globaltimer()); }
inline unsigned globaltimer_hi() { return static_cast<unsigned>(__globaltimer() >> 32); }
inline unsigned tid_x() { return in_kernel("%tid").thread_idx.x; }
inline unsigned tid_y() { return in_kernel("%tid").thread_idx.y; }
inline unsigned tid_z() { return in_kernel("%tid").thread_idx.z; }
inline unsigned ntid_x() { return in_kernel("%ntid").block_dim.x; }
inline unsigned ntid_y() { return in_kernel("%ntid").block_dim.y; }
inline unsigned ntid_z() { return in_kernel("%ntid").block_dim.z; }
inline unsigned ctaid_x() { return in_kernel("%ctaid").block_idx.x; }
inline unsigned ctaid_y() { return in_kernel("%ctaid").block_idx.y; }
inline unsigned ctaid_z() { return in_kernel("%ctaid").block_idx.z; }
inline unsigned nctaid_x() { return in_kernel("%nctaid").grid_dim.x; }
inline unsigned nctaid_y() { return in_kernel("%nctaid").grid_dim.y; }
inline unsigned nctaid_z() { return in_kernel("%nctaid").grid_dim.z; }

}  // namespace lockstep::emu::ptx
