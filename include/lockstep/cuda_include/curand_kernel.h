// <curand_kernel.h>: not emulated; a clear error instead of the installed toolkit's header, which cannot work here.
#pragma once
#error "lockstep: cuRAND (device API) is not emulated"
