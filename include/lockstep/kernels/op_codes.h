// The operations of the elementwise and reduction kernels, listed once. Each
// list generates the op's enumerator (the tensor layer passes it to the
// kernels as an int), its name (lockstep::op_name, parse_*_op), its row of
// properties, and its case in the kernels' switch (kernels/unary_ops.cuh,
// which map and matmul's epilogue share; kernels/elementwise.cu,
// kernels/reduce.cu), so an op is one row: nothing pairs lists by position.
// Plain C++, read by the host compiler, nvcc and NVRTC; the result
// expressions are only expanded inside the kernel files.
#pragma once

// X(name, floating_only, result...): result is the op of `x` in `C`, the
// compute type (float for the half types, else the element type itself);
// floating_only ops refuse integer tensors. gelu is PyTorch's default (erf)
// form, gelu_tanh its approximate="tanh" one (kernels/unary_ops.cuh).
#define LOCKSTEP_UNARY_OPS(X)                                                  \
  X(copy, false, x)                                                            \
  X(neg, false, -x)                                                            \
  X(abs, false, x < C(0) ? -x : x)                                             \
  X(exp, true, static_cast<C>(exp(static_cast<double>(x))))                    \
  X(log, true, static_cast<C>(log(static_cast<double>(x))))                    \
  X(sqrt, true, static_cast<C>(sqrt(static_cast<double>(x))))                  \
  X(relu, false, x > C(0) ? x : C(0))                                          \
  X(sigmoid, true, static_cast<C>(1.0 / (1.0 + exp(-static_cast<double>(x))))) \
  X(tanh, true, static_cast<C>(tanh(static_cast<double>(x))))                  \
  X(square, false, x* x)                                                       \
  X(reciprocal, true, static_cast<C>(1.0 / static_cast<double>(x)))            \
  X(gelu, true, static_cast<C>(gelu_erf_form(static_cast<double>(x))))         \
  X(gelu_tanh, true, static_cast<C>(gelu_tanh_form(static_cast<double>(x))))

// X(name, gives_bool, integers_only, result...): the op of `a` and `b` in the
// compute type `C` (divide, floor_divide, remainder and power are
// kernels/elementwise.cu's integer-safe forms). gives_bool: a comparison or
// logical op, whose output is a bool tensor (C(1) or C(0) stored as bool);
// integers_only: bitwise ops, which refuse floating-point tensors.
#define LOCKSTEP_BINARY_OPS(X)                                          \
  X(add, false, false, a + b)                                           \
  X(sub, false, false, a - b)                                           \
  X(mul, false, false, a* b)                                            \
  X(div, false, false, divide(a, b))                                    \
  X(floor_divide, false, false, floor_divide(a, b))                     \
  X(remainder, false, false, remainder(a, b))                           \
  X(maximum, false, false, maximum(a, b))                               \
  X(minimum, false, false, minimum(a, b))                               \
  X(pow, false, false, power(a, b))                                     \
  X(bitwise_and, false, true, bitwise(a, b, 0))                         \
  X(bitwise_or, false, true, bitwise(a, b, 1))                          \
  X(bitwise_xor, false, true, bitwise(a, b, 2))                         \
  X(eq, true, false, a == b ? C(1) : C(0))                              \
  X(ne, true, false, a != b ? C(1) : C(0))                              \
  X(lt, true, false, a < b ? C(1) : C(0))                               \
  X(le, true, false, a <= b ? C(1) : C(0))                              \
  X(gt, true, false, a > b ? C(1) : C(0))                               \
  X(ge, true, false, a >= b ? C(1) : C(0))                              \
  X(logical_and, true, false, (a != C(0)) && (b != C(0)) ? C(1) : C(0)) \
  X(logical_or, true, false, (a != C(0)) || (b != C(0)) ? C(1) : C(0))  \
  X(logical_xor, true, false, (a != C(0)) != (b != C(0)) ? C(1) : C(0))

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

}  // namespace lockstep::kernels
