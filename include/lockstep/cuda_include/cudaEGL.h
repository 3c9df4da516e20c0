// <cudaEGL.h>: not emulated; a clear error instead of the installed toolkit's header, which cannot work here.
#pragma once
#error "lockstep: EGL interoperability is not emulated"
