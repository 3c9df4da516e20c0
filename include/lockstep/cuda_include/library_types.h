// CUDA's <library_types.h> on the emulator: lockstep's declarations (lockstep/emu/library_types.h).
#pragma once
#include "lockstep/emu/library_types.h"
