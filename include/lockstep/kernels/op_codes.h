// The operations of the elementwise and reduction kernels, listed once. Each
// list generates the op's enumerator (the tensor layer passes it to the
// kernels as an int), its name (lockstep::op_name, parse_*_op), its row of
// properties, and, for the unary and binary ops, the function that computes
// it (lockstep/kernels/op_functions.h: unary_<name> and binary_<name>, which
// the eager kernels' switches in kernels/unary_ops.cuh and
// kernels/elementwise.cu, matmul's epilogue and @lockstep.fuse's kernels
// call; the reductions' cases are kernels/reduce.cu's). So an op is one row:
// nothing pairs lists by position, and fusion reads the rows' names and
// flags from this file (python/lockstep/_op_codes.py). Plain C++, read by
// the host compiler, nvcc and NVRTC; the result expressions are only
// expanded inside op_functions.h and the kernel files.
#pragma once

// X(name, floating_only, result...): result is the op of `x` in `M`, the type
// it is computed in; floating_only ops refuse integer tensors, and the eager
// kernels compute them in double (the result rounded once to the dtype;
// fusion computes in the dtype's compute type, float for float32 and the
// 16-bit floats). gelu is PyTorch's default (erf) form, gelu_tanh its
// approximate="tanh" one (lockstep/kernels/op_functions.h).
#define LOCKSTEP_UNARY_OPS(X)               \
  X(copy, false, x)                         \
  X(neg, false, -x)                         \
  X(abs, false, x < M(0) ? -x : x)          \
  X(exp, true, exp(x))                      \
  X(log, true, log(x))                      \
  X(sqrt, true, sqrt(x))                    \
  X(relu, false, x > M(0) ? x : M(0))       \
  X(sigmoid, true, M(1) / (M(1) + exp(-x))) \
  X(tanh, true, tanh(x))                    \
  X(square, false, x* x)                    \
  X(reciprocal, true, M(1) / x)             \
  X(gelu, true, gelu_erf_form(x))           \
  X(gelu_tanh, true, gelu_tanh_form(x))

// X(name, gives_bool, integers_only, in_double, result...): the op of `a` and
// `b` in the type `M` it is computed in (lockstep/python_arithmetic.h has
// Python's //, % and ** and the integer-safe division). gives_bool: a
// comparison or logical op, whose output is a bool tensor (M(1) or M(0)
// stored as bool); integers_only: bitwise ops, which refuse floating-point
// tensors; in_double: the eager kernels compute floating operands in double
// (the others in the compute type; fusion always in the compute type).
#define LOCKSTEP_BINARY_OPS(X)                                                 \
  X(add, false, false, false, a + b)                                           \
  X(sub, false, false, false, a - b)                                           \
  X(mul, false, false, false, a* b)                                            \
  X(div, false, false, false, arithmetic::divide(a, b))                        \
  X(floor_divide, false, false, true, arithmetic::floor_divide(a, b))          \
  X(remainder, false, false, true, arithmetic::remainder(a, b))                \
  X(maximum, false, false, false, maximum(a, b))                               \
  X(minimum, false, false, false, minimum(a, b))                               \
  X(pow, false, false, true, arithmetic::power(a, b))                          \
  X(bitwise_and, false, true, false, bitwise(a, b, 0))                         \
  X(bitwise_or, false, true, false, bitwise(a, b, 1))                          \
  X(bitwise_xor, false, true, false, bitwise(a, b, 2))                         \
  X(eq, true, false, false, a == b ? M(1) : M(0))                              \
  X(ne, true, false, false, a != b ? M(1) : M(0))                              \
  X(lt, true, false, false, a < b ? M(1) : M(0))                               \
  X(le, true, false, false, a <= b ? M(1) : M(0))                              \
  X(gt, true, false, false, a > b ? M(1) : M(0))                               \
  X(ge, true, false, false, a >= b ? M(1) : M(0))                              \
  X(logical_and, true, false, false, (a != M(0)) && (b != M(0)) ? M(1) : M(0)) \
  X(logical_or, true, false, false, (a != M(0)) || (b != M(0)) ? M(1) : M(0))  \
  X(logical_xor, true, false, false, (a != M(0)) != (b != M(0)) ? M(1) : M(0))

// X(name, divides_by_count, identity, combine...): in the accumulate type
// `A`, the value of no elements, and `acc` combined with the next element `x`;
// divides_by_count: the result is the combination divided by the element count.
// max and min skip NaNs (a comparison with NaN keeps acc).
#define LOCKSTEP_REDUCE_OPS(X)                         \
  X(sum, false, A(0), acc + x)                         \
  X(max, false, lowest_value<A>(), x > acc ? x : acc)  \
  X(min, false, highest_value<A>(), x < acc ? x : acc) \
  X(prod, false, A(1), acc* x)                         \
  X(mean, true, A(0), acc + x)

namespace lockstep::kernels {

#define LOCKSTEP_OP_ENUMERATOR(name, ...) name,
enum class unary_op : int { LOCKSTEP_UNARY_OPS(LOCKSTEP_OP_ENUMERATOR) };
enum class binary_op : int { LOCKSTEP_BINARY_OPS(LOCKSTEP_OP_ENUMERATOR) };
enum class reduce_op : int { LOCKSTEP_REDUCE_OPS(LOCKSTEP_OP_ENUMERATOR) };
#undef LOCKSTEP_OP_ENUMERATOR

#if !defined(__CUDACC_RTC__)  // not for kernels compiled at run time, where each would be a global of the module
// One row per op, for the tensor layer (names, and which ops refuse integers).
template <class Op>
struct op_row {
  Op op;
  const char* name;
  bool floating_only;
};
struct binary_op_row {
  binary_op op;
  const char* name;
  bool gives_bool, integers_only;
};

#define LOCKSTEP_UNARY_ROW(name, floating_only, ...) {unary_op::name, #name, floating_only},
#define LOCKSTEP_BINARY_ROW(name, gives_bool, integers_only, ...) {binary_op::name, #name, gives_bool, integers_only},
#define LOCKSTEP_REDUCE_ROW(name, divides_by_count, ...) {reduce_op::name, #name, divides_by_count},
inline constexpr op_row<unary_op> unary_ops[] = {LOCKSTEP_UNARY_OPS(LOCKSTEP_UNARY_ROW)};
inline constexpr binary_op_row binary_ops[] = {LOCKSTEP_BINARY_OPS(LOCKSTEP_BINARY_ROW)};
// The ops that divide (mean) refuse integer tensors.
inline constexpr op_row<reduce_op> reduce_ops[] = {LOCKSTEP_REDUCE_OPS(LOCKSTEP_REDUCE_ROW)};
#undef LOCKSTEP_UNARY_ROW
#undef LOCKSTEP_BINARY_ROW
#undef LOCKSTEP_REDUCE_ROW

#endif

}  // namespace lockstep::kernels
