// Which function a launch `k<<<...>>>(args)` names when `k` is overloaded:
// host code often has a function of the kernel's own name that launches it
// (llm.c's `gelu_forward1(...)` around `gelu_forward1<<<...>>>`). The
// rewrite (src/emulator/compile_time/host_source/launch_syntax.cpp) passes the launch's
// argument count: of an overload set, the one function taking that many
// parameters is the kernel (deduction picks it, the others failing), else the
// only function of that name. The rewrite uses the answer only where its
// parameter count is the launch's argument count; a kernel with default
// arguments, or a template that the arguments' types deduce, is called by name
// instead (lockstep/emu/launch_api.h).
#pragma once
#include <cstddef>

namespace lockstep::emu {

struct any_arity {};
template <std::size_t N>
struct arity : any_arity {};
// arity<N> as a type that depends on the launch's argument types, so that the
// rewrite's tests of kernel_named are made when those types are known.
template <std::size_t N, class... ArgumentTypes>
struct arity_for : arity<N> {};

template <class Kernel>
inline constexpr std::size_t parameter_count = 0;
template <class... Params>
inline constexpr std::size_t parameter_count<void (*)(Params...)> = sizeof...(Params);

template <class... Params>
constexpr auto kernel_named(any_arity, void (*kernel)(Params...)) {
  return kernel;
}

constexpr auto kernel_named(arity<0>, void (*kernel)()) { return kernel; }

template <class A0>
constexpr auto kernel_named(arity<1>, void (*kernel)(A0)) {
  return kernel;
}

template <class A0, class A1>
constexpr auto kernel_named(arity<2>, void (*kernel)(A0, A1)) {
  return kernel;
}

template <class A0, class A1, class A2>
constexpr auto kernel_named(arity<3>, void (*kernel)(A0, A1, A2)) {
  return kernel;
}

template <class A0, class A1, class A2, class A3>
constexpr auto kernel_named(arity<4>, void (*kernel)(A0, A1, A2, A3)) {
  return kernel;
}

template <class A0, class A1, class A2, class A3, class A4>
constexpr auto kernel_named(arity<5>, void (*kernel)(A0, A1, A2, A3, A4)) {
  return kernel;
}

template <class A0, class A1, class A2, class A3, class A4, class A5>
constexpr auto kernel_named(arity<6>, void (*kernel)(A0, A1, A2, A3, A4, A5)) {
  return kernel;
}

template <class A0, class A1, class A2, class A3, class A4, class A5, class A6>
constexpr auto kernel_named(arity<7>, void (*kernel)(A0, A1, A2, A3, A4, A5, A6)) {
  return kernel;
}

template <class A0, class A1, class A2, class A3, class A4, class A5, class A6, class A7>
constexpr auto kernel_named(arity<8>, void (*kernel)(A0, A1, A2, A3, A4, A5, A6, A7)) {
  return kernel;
}

template <class A0, class A1, class A2, class A3, class A4, class A5, class A6, class A7, class A8>
constexpr auto kernel_named(arity<9>, void (*kernel)(A0, A1, A2, A3, A4, A5, A6, A7, A8)) {
  return kernel;
}

template <class A0, class A1, class A2, class A3, class A4, class A5, class A6, class A7, class A8, class A9>
constexpr auto kernel_named(arity<10>, void (*kernel)(A0, A1, A2, A3, A4, A5, A6, A7, A8, A9)) {
  return kernel;
}

template <class A0, class A1, class A2, class A3, class A4, class A5, class A6, class A7, class A8, class A9, class A10>
constexpr auto kernel_named(arity<11>, void (*kernel)(A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10)) {
  return kernel;
}

template <class A0, class A1, class A2, class A3, class A4, class A5, class A6, class A7, class A8, class A9, class A10, class A11>
constexpr auto kernel_named(arity<12>, void (*kernel)(A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11)) {
  return kernel;
}

template <class A0, class A1, class A2, class A3, class A4, class A5, class A6, class A7, class A8, class A9, class A10, class A11, class A12>
constexpr auto kernel_named(arity<13>, void (*kernel)(A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12)) {
  return kernel;
}

template <class A0, class A1, class A2, class A3, class A4, class A5, class A6, class A7, class A8, class A9, class A10, class A11, class A12,
          class A13>
constexpr auto kernel_named(arity<14>, void (*kernel)(A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13)) {
  return kernel;
}

template <class A0, class A1, class A2, class A3, class A4, class A5, class A6, class A7, class A8, class A9, class A10, class A11, class A12,
          class A13, class A14>
constexpr auto kernel_named(arity<15>, void (*kernel)(A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14)) {
  return kernel;
}

template <class A0, class A1, class A2, class A3, class A4, class A5, class A6, class A7, class A8, class A9, class A10, class A11, class A12,
          class A13, class A14, class A15>
constexpr auto kernel_named(arity<16>, void (*kernel)(A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15)) {
  return kernel;
}

template <class A0, class A1, class A2, class A3, class A4, class A5, class A6, class A7, class A8, class A9, class A10, class A11, class A12,
          class A13, class A14, class A15, class A16>
constexpr auto kernel_named(arity<17>, void (*kernel)(A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16)) {
  return kernel;
}

template <class A0, class A1, class A2, class A3, class A4, class A5, class A6, class A7, class A8, class A9, class A10, class A11, class A12,
          class A13, class A14, class A15, class A16, class A17>
constexpr auto kernel_named(arity<18>, void (*kernel)(A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17)) {
  return kernel;
}

template <class A0, class A1, class A2, class A3, class A4, class A5, class A6, class A7, class A8, class A9, class A10, class A11, class A12,
          class A13, class A14, class A15, class A16, class A17, class A18>
constexpr auto kernel_named(arity<19>, void (*kernel)(A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17, A18)) {
  return kernel;
}

template <class A0, class A1, class A2, class A3, class A4, class A5, class A6, class A7, class A8, class A9, class A10, class A11, class A12,
          class A13, class A14, class A15, class A16, class A17, class A18, class A19>
constexpr auto kernel_named(arity<20>, void (*kernel)(A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17, A18, A19)) {
  return kernel;
}

template <class A0, class A1, class A2, class A3, class A4, class A5, class A6, class A7, class A8, class A9, class A10, class A11, class A12,
          class A13, class A14, class A15, class A16, class A17, class A18, class A19, class A20>
constexpr auto kernel_named(arity<21>,
                            void (*kernel)(A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17, A18, A19, A20)) {
  return kernel;
}

template <class A0, class A1, class A2, class A3, class A4, class A5, class A6, class A7, class A8, class A9, class A10, class A11, class A12,
          class A13, class A14, class A15, class A16, class A17, class A18, class A19, class A20, class A21>
constexpr auto kernel_named(arity<22>,
                            void (*kernel)(A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17, A18, A19, A20, A21)) {
  return kernel;
}

template <class A0, class A1, class A2, class A3, class A4, class A5, class A6, class A7, class A8, class A9, class A10, class A11, class A12,
          class A13, class A14, class A15, class A16, class A17, class A18, class A19, class A20, class A21, class A22>
constexpr auto kernel_named(arity<23>,
                            void (*kernel)(A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17, A18, A19, A20, A21, A22)) {
  return kernel;
}

template <class A0, class A1, class A2, class A3, class A4, class A5, class A6, class A7, class A8, class A9, class A10, class A11, class A12,
          class A13, class A14, class A15, class A16, class A17, class A18, class A19, class A20, class A21, class A22, class A23>
constexpr auto kernel_named(arity<24>, void (*kernel)(A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17, A18, A19, A20,
                                                      A21, A22, A23)) {
  return kernel;
}

}  // namespace lockstep::emu
