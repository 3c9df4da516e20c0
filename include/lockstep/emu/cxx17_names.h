// What `lockstep nvcc` makes a program written for C++17 or older see first:
// lockstep's headers need C++20, so such a program is built as C++20, where
// libstdc++'s <math.h> puts std::lerp in the global namespace too. A program's
// own `float lerp(float, float, float)` (the CUDA samples' helper_math.h) then
// clashes with it; under C++17, as under nvcc, the name is the program's.
#pragma once
#define lerp lockstep_cxx20_std_lerp
#include <math.h>
#include <cmath>
#undef lerp
