// PTX's special registers, for the one form of inline PTX the emulator runs:
// `asm("mov.u32 %0, %%laneid;" : "=r"(lane));`, a read of a special register
// into a variable (src/emulator/compile_time/host_source/inline_ptx.cpp rewrites it to
// `(lane) = ::lockstep::emu::ptx::laneid()`): the registers that no built-in
// variable or clock function of lockstep already reads. Other inline PTX is
// refused at build time, naming its line.
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
inline unsigned clock() { return static_cast<unsigned>(::clock64()); }
inline unsigned globaltimer_lo() { return static_cast<unsigned>(__globaltimer()); }
inline unsigned globaltimer_hi() { return static_cast<unsigned>(__globaltimer() >> 32); }

}  // namespace lockstep::emu::ptx
