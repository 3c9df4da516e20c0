// The library's kernels, built ahead of time into one module per target
// (liblockstep_kernels.so for the emulator, liblockstep_kernels_gpu.so by
// nvcc) and loaded by lockstep::builtin_kernels. The kernels it exports are
// those of the families' recipe tables (lockstep/kernels/builtin_kernel_names.h).
#include "elementwise.cu"
#include "grayscale.cu"
#include "matmul.cu"
#include "matmul_tensor_core.cu"
#include "reduce.cu"
