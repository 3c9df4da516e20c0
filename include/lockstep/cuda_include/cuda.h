// <cuda.h> on the emulator: the runtime API (lockstep/cuda.h) and the driver
// API (lockstep/emu/driver_api.h: contexts, modules built for the emulator,
// cuLaunchKernel, memory, streams and events).
#pragma once
#include "lockstep/cuda.h"
#include "lockstep/emu/driver_api.h"
