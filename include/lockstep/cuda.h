// lockstep/cuda.h - the single-source header.
//
// Include it at the top of a kernel file. Under nvcc or NVRTC it is plain CUDA
// (plus lockstep::launch on the host side of nvcc). Under a host C++ compiler it
// maps CUDA's keywords, built-in variables, intrinsics and a subset of the
// runtime API onto lockstep's emulator, so the same text runs on any CPU.
#pragma once

#if defined(__CUDACC_RTC__)
// NVRTC: the compiler provides everything; nothing to add.
#elif defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>
#include "lockstep/launch.h"
#else
#include "lockstep/emu/atomics.h"
#include "lockstep/emu/builtins.h"
#include "lockstep/emu/device_io.h"
#include "lockstep/emu/half.h"
#include "lockstep/emu/launch_api.h"
// CUDA's device math (min/max overloads, rsqrtf, __expf, ...) is not part of
// a host-only file's world under nvcc: programs define their own there
// (the CUDA samples' helper_math.h).
#if !defined(LOCKSTEP_HOST_ONLY_FILE)
#include "lockstep/emu/math.h"
#endif
#include "lockstep/emu/ptx_registers.h"
#include "lockstep/emu/qualifiers.h"
#include "lockstep/emu/region_loops.h"
#include "lockstep/emu/runtime_api.h"
#include "lockstep/emu/sync.h"
#include "lockstep/emu/textures.h"
#include "lockstep/emu/vector_types.h"
#include "lockstep/emu/wmma.h"
#include "lockstep/launch.h"
#endif
