// CUDA's <cublas_api.h> on the emulator: lockstep's declarations (lockstep/emu/cublas.h).
#pragma once
#include "lockstep/emu/cublas.h"
