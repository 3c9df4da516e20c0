// <curand_kernel.h>: cuRAND's device API is code in headers that compiles for
// the host, so the installed CUDA toolkit's header serves (lockstep nvcc puts
// the toolkit's include folder last on the path), and its generators give the
// GPU's sequences. It includes <curand.h>, lockstep's first (the host API's
// device generators, which run on the CPU here).
#pragma once
#if __has_include_next(<curand_kernel.h>)
#include <curand.h>
#include_next <curand_kernel.h>
#else
#error "lockstep: cuRAND's device API comes from the CUDA toolkit's curand_kernel.h, and no toolkit was found: set CUDA_HOME"
#endif
