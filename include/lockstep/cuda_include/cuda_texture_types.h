// <cuda_texture_types.h>: not emulated; a clear error instead of the installed toolkit's header, which cannot work here.
#pragma once
#error "lockstep: textures are not emulated: read the data through a pointer"
