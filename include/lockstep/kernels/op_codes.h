// The operations of the elementwise and reduction kernels, numbered once for
// the kernels (which switch on them) and the tensor layer (which picks them).
#pragma once

namespace lockstep::kernels {

enum class unary_op : int { copy, neg, abs, exp, log, sqrt, relu, sigmoid, tanh, square, reciprocal };
enum class binary_op : int { add, sub, mul, div, maximum, minimum, pow, eq, lt, gt };
enum class reduce_op : int { sum, max, min, prod, mean };

}  // namespace lockstep::kernels
