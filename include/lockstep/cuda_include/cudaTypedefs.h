// <cudaTypedefs.h>: not emulated; a clear error instead of the installed toolkit's header, which cannot work here.
#pragma once
#error \
    "lockstep: cudaTypedefs.h (the driver API's function-pointer types, for cuGetProcAddress) is not provided: call the driver API's functions by name (<cuda.h>)"
