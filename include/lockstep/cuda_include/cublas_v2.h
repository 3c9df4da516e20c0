// CUDA's <cublas_v2.h> on the emulator: lockstep's declarations (lockstep/emu/cublas.h).
#pragma once
#include "lockstep/emu/cublas.h"
