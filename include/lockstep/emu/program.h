// What every CUDA file compiled by lockstep's driver (`lockstep nvcc`) sees
// first, as nvcc makes every .cu see <cuda_runtime.h>: CUDA's names on the
// emulator, then the macros by which code recognizes that nvcc compiles it.
//
// The macros come after lockstep's own headers, which take __CUDACC__ to mean
// "build for a GPU"; the program's code sees them as under nvcc's host pass
// (__CUDA_ARCH__ stays undefined: the emulator runs device code as host code).
#pragma once
// The emulator has no 8-bit floats: libcu++ (CCCL) must not reach for the
// installed toolkit's <cuda_fp8.h>, which would bring NVIDIA's half types too.
#ifndef CCCL_DISABLE_NVFP8_SUPPORT
#define CCCL_DISABLE_NVFP8_SUPPORT
#endif
#include "lockstep/cuda.h"

#ifndef __CUDACC__
#define __CUDACC__ 1
#endif
#ifndef __NVCC__
#define __NVCC__ 1
#endif
#define __CUDACC_VER_MAJOR__ 13
#define __CUDACC_VER_MINOR__ 0
#define __CUDACC_VER_BUILD__ 0
// The include guards of the CUDA headers lockstep/cuda.h stands for: code
// tests them to learn what is declared (the CUDA samples' helper_cuda.h does).
#define __CUDA_RUNTIME_H__
#define __CUDA_RUNTIME_API_H__
#define __DRIVER_TYPES_H__
#define __VECTOR_TYPES_H__
#define __DEVICE_LAUNCH_PARAMETERS_H__
#define __CUDA_TEXTURE_TYPES_H__
#define __CUDA_SURFACE_TYPES_H__
#ifndef CUDART_VERSION
#define CUDART_VERSION 13000
#endif
