// <curand.h>: the installed CUDA toolkit's, which curand_kernel.h includes
// too. Of the host library (-lcurand), what runs on the CPU works (host
// generators, curandGetDirectionVectors*); a generator made with
// curandCreateGenerator needs a GPU and fails to be created.
#pragma once
#if __has_include_next(<curand.h>)
#include_next <curand.h>
#else
#error "lockstep: cuRAND (curand.h) comes from the CUDA toolkit, and no toolkit was found: set CUDA_HOME"
#endif
