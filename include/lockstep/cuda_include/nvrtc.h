// <nvrtc.h>: not emulated; a clear error instead of the installed toolkit's header, which cannot work here.
#pragma once
#error "lockstep: NVRTC (compiling CUDA at run time) is not emulated: compile the kernel with the program, or use lockstep.compile from Python"
