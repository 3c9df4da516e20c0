// The checks of the whole-program tests: each failed one is printed with its
// line and counted in `failures`, and the program exits non-zero if any failed.
// Plain CUDA C++, as the programs are built by nvcc too.
#pragma once
#include <cstdio>

#include <cuda_runtime.h>

static int failures = 0;
#define EXPECT(condition)                                                           \
  do {                                                                              \
    if (!(condition)) {                                                             \
      std::fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #condition); \
      ++failures;                                                                   \
    }                                                                               \
  } while (0)
#define EXPECT_ERROR(call, expected)                                                                                                          \
  do {                                                                                                                                        \
    const cudaError_t got = (call);                                                                                                           \
    if (got != (expected)) {                                                                                                                  \
      std::fprintf(stderr, "%s:%d: %s gave %s, expected %s\n", __FILE__, __LINE__, #call, cudaGetErrorName(got), cudaGetErrorName(expected)); \
      ++failures;                                                                                                                             \
    }                                                                                                                                         \
  } while (0)
