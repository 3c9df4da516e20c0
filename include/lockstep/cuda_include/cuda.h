// <cuda.h> on the emulator: CUDA's version number and, through lockstep/cuda.h,
// the runtime API. The driver API (cuInit, cuModuleLoad, cuLaunchKernel) is not
// emulated: a program calling it fails to link, naming the cu* function.
#pragma once
#include "lockstep/cuda.h"
#ifndef CUDA_VERSION
#define CUDA_VERSION 13000
#endif
