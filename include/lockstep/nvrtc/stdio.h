// For NVRTC, which has no C library headers: device printf is built in.
#pragma once
