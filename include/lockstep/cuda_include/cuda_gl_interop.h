// <cuda_gl_interop.h>: OpenGL buffer objects mapped for kernels (lockstep/emu/runtime_graphics.h).
// CUDA's header brings in OpenGL's, which programs rely on.
#pragma once
#if __has_include(<GL/gl.h>)
#include <GL/gl.h>
#endif
#include "lockstep/cuda.h"
