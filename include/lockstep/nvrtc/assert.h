// For NVRTC, which has no C library headers: `#include <cassert>` or
// <assert.h> in a kernel compiled at run time gets CUDA's device assert.
#pragma once
#if defined(__CUDACC_RTC__) && !defined(assert)
extern "C" __device__ void __assertfail(const char* message, const char* file, unsigned line, const char* function, unsigned long char_size);
#if defined(NDEBUG)
#define assert(e) ((void)0)
#else
#define assert(e) ((e) ? (void)0 : __assertfail(#e, __FILE__, __LINE__, __func__, sizeof(char)))
#endif
#endif
