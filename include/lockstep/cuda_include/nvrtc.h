// <nvrtc.h> on the emulator: lockstep's NVRTC, whose output the driver API loads.
#pragma once
#include "lockstep/emu/nvrtc_api.h"
