// NCCL's <nccl.h> on the emulator: lockstep's declarations (lockstep/emu/nccl.h).
#pragma once
#include "lockstep/emu/nccl.h"
