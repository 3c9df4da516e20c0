// <surface_indirect_functions.h>: not emulated; a clear error instead of the installed toolkit's header, which cannot work here.
#pragma once
#error "lockstep: surfaces are not emulated"
