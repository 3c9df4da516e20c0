// <cudaTypedefs.h>: not emulated; a clear error instead of the installed toolkit's header, which cannot work here.
#pragma once
#error "lockstep: the CUDA driver API is not emulated; the runtime API (cuda* calls) is"
