// What the runner reads from a kernel's engine record at a launch
// (engine_record.cpp): how the kernel runs, and the line it says once when
// it runs on fibers though the options allow loops.
#pragma once
#include "lockstep/emu/kernel_engine.h"
#include "runs_as_loops.h"

namespace lockstep::emu {

struct engine_verdict {
  enum kind_t {
    loops,       // split: its blocks run as loops
    asked,       // the settings ask for fibers (engine option, check mode, order, cooperative launch): nothing to say
    declined,    // the compiler declined it: said at its first launch
    unit,        // its unit was not split (no libclang, not parsed): said at its first wait on a barrier
    unrecorded,  // built without lockstep's compiler at all: said once per program, at the first wait
  } kind = asked;
  kernel_engine engine;
};

engine_verdict engine_verdict_of(const void* kernel, const engine_settings& settings);
// The once-per-kernel (unrecorded: once-per-program) lines on stderr, unless
// options::quiet_fibers: a declined kernel's at its launch; one not split
// or built without the compiler at its first barrier on fibers, as kernels
// without barriers lose little there.
void say_fibers_at_launch(const void* kernel, const engine_verdict& v);
void say_fibers_at_wait(const void* kernel, const engine_verdict& v);

}  // namespace lockstep::emu
