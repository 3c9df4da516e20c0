// The library's kernels as the tensor layer launches them: looked up once per
// device by name, and the launch shape of the elementwise family.
#pragma once
#include <string>
#include <vector>

#include "lockstep/kernels/launch_shapes.h"
#include "lockstep/tensor.h"

namespace lockstep::detail {

// `lockstep::kernels::<name>` in the built-in module of `d`; `checked`: its
// build instrumented for check mode (builtin_kernels(d, checked)).
const function& builtin_function(const device& d, const std::string& name, bool checked);

// Whether the tensor ops run the instrumented kernels: while the emulator's
// checks are on (emu::options::checks), as kernels compiled then are. The
// one place the tensor layer reads that setting; the ops below pass it.
bool ops_run_checked();

// For the tensor ops: `lockstep::kernels::<name>`, checked as ops_run_checked().
const function& builtin_function(const device& d, const std::string& name);
// `lockstep::kernels::<family><T>` for the dtype's element type T, checked as ops_run_checked().
const function& builtin_function(const device& d, const std::string& family, dtype t);

kernel_arg pointer_arg(const tensor& t, bool writable);

// The launch of the grid-stride kernels over n outputs (kernels::grid_stride_launch).
launch_config grid_stride_config(std::int64_t n);
// The launch of the kernels that give each thread one 16-byte vector (kernels::vector_launch).
launch_config vector_launch_config(const device& d, std::int64_t vectors);
kernel_arg layout_arg(const kernels::strided_layout& layout);

// Launches a kernel of the form (out, out_layout, in0, in0_layout, ..., n,
// extra...) over every element of `out`, each input broadcast to out's shape.
void launch_elementwise(const function& f, const tensor& out, const std::vector<tensor>& inputs, const std::vector<kernel_arg>& extra);

// Throws std::invalid_argument naming `op` unless a and b are on one device.
void check_same_device(const char* op, const tensor& a, const tensor& b);

}  // namespace lockstep::detail
