// Host entry points for the lecture kernels in kernels/, run on the emulator.
//
// The pointers are ordinary host memory: on the emulator device memory is host
// memory, so the kernels read NumPy's buffers in place. The launches block
// until the kernel has finished and throw lockstep::launch_error or
// lockstep::kernel_error on failure.
#pragma once

namespace lockstep::python {

// image: 3 planes of height*width bytes (channels-first); gray: height*width.
void rgb_to_grayscale_1d(unsigned char* gray, const unsigned char* image, int width, int height);
void rgb_to_grayscale_2d(unsigned char* gray, const unsigned char* image, int width, int height);

// c[m,n] = a[m,k] @ b[k,n], all row-major float32.
void matmul_naive(const float* a, const float* b, float* c, int m, int n, int k);
void matmul_tiled_static(const float* a, const float* b, float* c, int m, int n, int k);
void matmul_tiled_dynamic(const float* a, const float* b, float* c, int m, int n, int k);

}  // namespace lockstep::python
