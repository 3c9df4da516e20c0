// <surface_types.h> on the emulator: lockstep maps the whole of it in lockstep/cuda.h (textures: lockstep/emu/textures.h, runtime_textures.h).
#pragma once
#include "lockstep/cuda.h"
