// The elementwise family's kernels (kernels/elementwise.cu), as the tensor
// layer finds them in the built-in modules and the modules instantiate them:
// each a template over the element type, cast_strided over a pair of them.
#pragma once
#include "lockstep/kernels/launch_shapes.h"

namespace lockstep::kernels {

// Any strided operands, broadcast to the output's shape: grid_stride_launch.
inline constexpr const char* map_strided_kernel = "map_strided";
inline constexpr const char* zip_strided_kernel = "zip_strided";
// Packed operands of the output's shape: vector_launch, a thread per vector_bytes.
inline constexpr const char* map_contiguous_kernel = "map_contiguous";
inline constexpr const char* zip_contiguous_kernel = "zip_contiguous";
// Comparisons and logical ops (a bool output), where, integer-array indexing,
// arange/linspace and random numbers: grid_stride_launch.
inline constexpr const char* compare_strided_kernel = "compare_strided";
inline constexpr const char* where_strided_kernel = "where_strided";
inline constexpr const char* index_select_kernel = "index_select_strided";
inline constexpr const char* iota_kernel = "iota_strided";
inline constexpr const char* random_kernel = "random_strided";
// cast_strided<From, To>, for every pair of dtypes: grid_stride_launch.
inline constexpr const char* cast_kernel = "cast_strided";

// name<T> for every dtype T (cast_kernel aside).
inline constexpr const char* elementwise_kernels_per_dtype[] = {
    map_strided_kernel,   zip_strided_kernel,  map_contiguous_kernel, zip_contiguous_kernel, compare_strided_kernel,
    where_strided_kernel, index_select_kernel, iota_kernel,           random_kernel};

}  // namespace lockstep::kernels
