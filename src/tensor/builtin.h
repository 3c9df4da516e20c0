// The library's kernels as the tensor layer launches them: looked up once per
// device by name, and the launch shape of the elementwise family.
#pragma once
#include <string>
#include <vector>

#include "lockstep/tensor.h"

namespace lockstep::detail {

// `lockstep::kernels::<name>` in the built-in module of `d`.
const function& builtin_function(const device& d, const std::string& name);
// `lockstep::kernels::<family><T>` for the dtype's element type T.
const function& builtin_function(const device& d, const std::string& family, dtype t);

kernel_arg pointer_arg(const tensor& t, bool writable);

// The launch shape of the grid-stride kernels (elementwise, reduce) over n
// outputs: enough blocks to fill a GPU, few enough that the emulator's
// per-block cost stays small.
launch_config grid_stride_config(std::int64_t n);
// The launch shape of the kernels that give each thread one 16-byte vector
// (vectorized grayscale, contiguous map and zip): a thread per vector on a
// GPU (grid-strided loops over fewer blocks ran slower on the H100); the
// emulator pays per block, so there at most 1024 blocks walk the rest.
launch_config vector_launch_config(const device& d, std::int64_t vectors);
kernel_arg layout_arg(const kernels::strided_layout& layout);

// Launches a kernel of the form (out, out_layout, in0, in0_layout, ..., n,
// extra...) over every element of `out`, each input broadcast to out's shape.
void launch_elementwise(const function& f, const tensor& out, const std::vector<tensor>& inputs, const std::vector<kernel_arg>& extra);

}  // namespace lockstep::detail
