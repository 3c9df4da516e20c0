// Whether a kernel's blocks run as region loops: the one rule, asked by the
// builds (host_build::should_split: a build splits only where loops can run)
// and by the block runner at each claim (src/emulator/execution/block_runner.cpp); it lives with the
// runner, below the builds, which read it.
#pragma once

namespace lockstep::emu {

// Whether blocks of a kernel may run as region loops, at build time and at
// launch: the one rule, which both builds and the block runner
// (block_runner.cpp, claim_for_loops) ask. Check mode observes
// every thread's accesses on fibers; the reverse and random orders change
// thread order, which loops cannot; a grid-wide barrier needs every thread
// on a fiber of its own; LOCKSTEP_EMU_ENGINE=fibers asks for fibers.
struct engine_settings {
  bool region_loops_option = true;  // emu::options::region_loops (LOCKSTEP_EMU_ENGINE)
  bool checked = false;
  bool forward_order = true;  // thread_order::forward; a build assumes it (the order is chosen per launch)
  bool grid_sync = false;     // a cooperative launch; a build assumes none (chosen per launch)
};
constexpr bool blocks_may_run_as_loops(const engine_settings& s) { return s.region_loops_option && !s.checked && s.forward_order && !s.grid_sync; }

}  // namespace lockstep::emu
