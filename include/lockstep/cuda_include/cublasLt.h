// CUDA's <cublasLt.h> on the emulator: lockstep's declarations (lockstep/emu/cublas_lt.h).
#pragma once
#include "lockstep/emu/cublas_lt.h"
