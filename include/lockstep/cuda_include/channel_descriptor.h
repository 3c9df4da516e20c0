// <channel_descriptor.h>: not emulated; a clear error instead of the installed toolkit's header, which cannot work here.
#pragma once
#error "lockstep: CUDA arrays and textures are not emulated"
