// <builtin_types.h> on the emulator: lockstep maps the whole of it in lockstep/cuda.h.
#pragma once
#include "lockstep/cuda.h"
