// cg::plus, less, greater, bit_and, bit_or, bit_xor: the operators cg::reduce
// and the scans take (any callable works as well), as CUDA defines them.
#pragma once

namespace cooperative_groups {

template <class T>
struct plus {
  T operator()(T a, T b) const { return a + b; }
};
template <class T>
struct less {  // the smaller
  T operator()(T a, T b) const { return b < a ? b : a; }
};
template <class T>
struct greater {  // the larger
  T operator()(T a, T b) const { return a < b ? b : a; }
};
template <class T>
struct bit_and {
  T operator()(T a, T b) const { return a & b; }
};
template <class T>
struct bit_or {
  T operator()(T a, T b) const { return a | b; }
};
template <class T>
struct bit_xor {
  T operator()(T a, T b) const { return a ^ b; }
};

}  // namespace cooperative_groups
