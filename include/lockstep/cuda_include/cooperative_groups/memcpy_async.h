// <cooperative_groups/memcpy_async.h> on the emulator.
#pragma once
#include "lockstep/cuda.h"
#include "lockstep/emu/cooperative_groups/memcpy_async.h"
