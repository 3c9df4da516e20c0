"""``@lockstep.fuse``: a function of tensors traced once per input signature into one CUDA C++ kernel.

The function runs once on traced values that record each op (elementwise ops with broadcasting and PyTorch's
promotion, comparisons, ``where``, casts, and optionally one final reduction); the record is written as a kernel
that reads each input once and writes only the result, compiled through ``lockstep.compile`` (the host compiler
and the emulator on "cpu", NVRTC on a GPU; cached in memory per signature and on disk by the JIT).
``fn.inspect_cuda(*args)`` shows the kernel. What the tracer does not take (an op it does not know, a reduction
whose result is used further, float16/bfloat16 tensors) runs the function eagerly instead, with a one-time note
naming the op and the line.

A signature is, per argument: a tensor's dtype, rank, which extents are 1, and how the kernel finds element i of
the broadcast result in it (packed: at i; periodic, a packed tensor repeated over leading dims such as a bias: at
i % its size; strided: from its strides); a number's
Python type; and the device. Extents and strides are launch arguments, so new shapes of the same pattern reuse
the kernel.
"""

from __future__ import annotations

import builtins
import functools
import math
import re
import struct
import sys
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from . import _core, _ops
from ._core import Tensor
from ._kernels import compile as compile_source
from ._op_codes import BINARY, UNARY
from ._promotion import DEFAULT_FLOAT, ITEMSIZE, is_floating, result_type
from ._tensor import asarray, dtype_name
from ._toolkit import toolkit_include_dirs as _toolkit_include_dirs

# Each dtype's C type in memory; the 16-bit floats compute in float, rounded to 16 bits after each op as eager
# ops round (_compute, _rounded).
_C_TYPES = {
    "bool": "bool",
    "uint8": "unsigned char",
    "int32": "int",
    "int64": "long long",
    "float16": "__half",
    "bfloat16": "__nv_bfloat16",
    "float32": "float",
    "float64": "double",
}
_HALVES = ("float16", "bfloat16")
# The emulator has the 16-bit float types from lockstep/cuda.h; NVRTC from the CUDA toolkit's headers, whose folder
# the compile adds (_toolkit_include_dirs).
_HALF_HEADERS = """#include "lockstep/cuda.h"
#if defined(__CUDACC_RTC__)
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#endif"""
_MAX_DIMS = 8  # lockstep/kernels/strided_layout.h's max_dims
_THREADS = 256
# The row kernel adds threads to a row (up to 1024) until each has at most _ROW_ITEMS elements, which it keeps in
# registers (longer rows are read once per pass). Its launch bounds ask for 2048 threads an SM, 32 registers a
# thread, a few bytes spilled; on an H100 softmax over rows of 4096 ran at 0.93 of copy bandwidth so, 0.87 with 40
# registers, 0.75 with 4 elements a thread, 0.47 with 16 (150 registers, one block an SM).
_ROW_ITEMS = 8
# The reductions that have no value for no elements (eager ops refuse them with ShapeError too).
_NEED_ELEMENTS = ("max", "min", "mean")
# Each reduction: the accumulator's start and how it takes the next value `v`.
_REDUCE = {
    "sum": ("0", "acc + v"),
    "mean": ("0", "acc + v"),
    "prod": ("1", "acc * v"),
    "max": ("fused_lowest<A>()", "lockstep::kernels::binary_maximum<A>(acc, v)"),
    "min": ("fused_highest<A>()", "lockstep::kernels::binary_minimum<A>(acc, v)"),
}

# What the generated kernels call: each op's function, lockstep::kernels::unary_<op> and binary_<op>
# (lockstep/kernels/op_functions.h, from op_codes.h's rows, as the eager kernels compute), in the dtype's compute
# type; the strided offset, vectors and the reductions' identities.
_PRELUDE = r"""#include "lockstep/kernels/op_functions.h"
#include "lockstep/kernels/strided_layout.h"
using lockstep::kernels::strided_layout;

// The memory offset of row-major element i of `shape` in a layout over it.
__device__ inline long long fused_offset(long long i, const strided_layout& shape, const strided_layout& layout) {
  long long offset = 0;
  for (int d = shape.ndim - 1; d >= 0; --d) {
    offset += (i % shape.shape[d]) * layout.strides[d];
    i /= shape.shape[d];
  }
  return offset;
}
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
// On a GPU, float division within 2 units in the last place over the whole range (div.full.f32, as Triton
// divides), and max and min that pass NaN on in one instruction: the IEEE division and the compares cost a row
// kernel 3-4% of its time on an H100. Fused kernels only: the eager ops divide as IEEE.
namespace lockstep::kernels {
template <> __host__ __device__ inline float binary_div<float>(float a, float b) {
  float q;
  asm("div.full.f32 %0, %1, %2;" : "=f"(q) : "f"(a), "f"(b));
  return q;
}
template <> __host__ __device__ inline float binary_maximum<float>(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
template <> __host__ __device__ inline float binary_minimum<float>(float a, float b) {
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
}  // namespace lockstep::kernels
#endif
// Four consecutive elements, for one vector access.
template <class T> struct alignas(4 * sizeof(T)) fused_vector { T lane[4]; };
template <class A> __device__ inline A fused_lowest() {
  if constexpr (A(1) / A(2) == A(0)) return A(-9223372036854775807LL - 1); else return A(-__longlong_as_double(0x7ff0000000000000LL));
}
template <class A> __device__ inline A fused_highest() {
  if constexpr (A(1) / A(2) == A(0)) return A(9223372036854775807LL); else return A(__longlong_as_double(0x7ff0000000000000LL));
}
"""


class Unsupported(Exception):
    """Something @lockstep.fuse does not trace (the function then runs eagerly)."""


@dataclass
class _Node:
    kind: str  # input, number, constant, unary, binary, where, cast, reduce
    dtype: str
    args: tuple[int, ...] = ()
    op: str = ""
    value: Any = None  # a constant's value, an input's or number's position
    line: str = ""  # the user's file:line that made it
    dims: tuple[int, ...] = ()  # a reduction's
    keepdim: bool = False


@dataclass
class _Graph:
    code: Any  # the traced function's code object (to find the user's lines)
    ndim: int  # the rank of the domain: the arguments broadcast together
    nodes: list[_Node] = field(default_factory=list)

    def add(self, node: _Node) -> Traced:
        node.line = node.line or self.line()
        self.nodes.append(node)
        return Traced(self, len(self.nodes) - 1)

    def unsupported(self, what: str) -> Unsupported:
        return Unsupported(f"{what} ({self.line()})")

    def line(self) -> str:
        frame = sys._getframe(1)
        while frame is not None and frame.f_code is not self.code:
            frame = frame.f_back
        return f"{self.code.co_filename}:{frame.f_lineno}" if frame is not None else self.code.co_filename


class Traced:
    """A value inside a traced function: ops on it record nodes."""

    def __init__(self, graph: _Graph, index: int) -> None:
        self.graph, self.index = graph, index

    @property
    def node(self) -> _Node:
        return self.graph.nodes[self.index]

    @property
    def dtype(self) -> str:
        return self.node.dtype

    @property
    def ndim(self) -> int:
        return self.graph.ndim

    def _constant(self, x: Any) -> Traced:
        if isinstance(x, Traced):
            return x
        if isinstance(x, (bool, int, float, np.number, np.bool_)):
            value = x.item() if isinstance(x, np.generic) else x
            return self.graph.add(_Node("constant", _full_dtype(value), value=value))
        raise self.graph.unsupported(f"a {type(x).__name__} operand (fused functions take tensors and numbers)")

    def _checked(self) -> None:
        """An op on a reduction's result is fused (a row kernel) when the reduction keeps its dims and they are
        the trailing ones, so each row's results broadcast back over the row."""
        n = self.node
        if n.kind == "reduce" and not (n.keepdim and n.dims == tuple(range(self.graph.ndim - len(n.dims), self.graph.ndim))):
            raise self.graph.unsupported("an op on a reduction's result other than over the trailing dims with keepdim=True")

    # -- the ops _ops hands over (lockstep.exp(t), t + 1, lockstep.where(...), t.sum(...))
    def map(self, op: str) -> Traced:
        self._checked()
        if op not in UNARY:
            raise self.graph.unsupported(f"the unary op {op}")
        x = self.cast(DEFAULT_FLOAT) if UNARY[op].floating_only and not is_floating(self.dtype) else self
        if op == "neg" and x.dtype == "bool":
            raise TypeError("negation (-) of a bool tensor is not supported; use ~ or lockstep.logical_not")
        return self.graph.add(_Node("unary", x.dtype, (x.index,), op))

    @staticmethod
    def zip(op: str, a: Any, b: Any, out_dtype: str | None = None) -> Traced:
        anchor = a if isinstance(a, Traced) else b
        a, b = anchor._constant(a), anchor._constant(b)
        a._checked(), b._checked()
        if op not in BINARY:
            raise anchor.graph.unsupported(f"the binary op {op}")
        dtype = out_dtype or result_type(_operand_view(a), _operand_view(b))
        if op == "div" and not is_floating(dtype):
            dtype = DEFAULT_FLOAT
        if BINARY[op].integers_only and is_floating(dtype):
            raise TypeError(f"{op} needs integer or bool tensors, got {dtype}")
        return anchor.graph.add(_Node("binary", "bool" if BINARY[op].gives_bool else dtype, (a.cast(dtype).index, b.cast(dtype).index), op))

    @staticmethod
    def where(condition: Any, a: Any, b: Any) -> Traced:
        anchor = next(x for x in (condition, a, b) if isinstance(x, Traced))
        condition, a, b = anchor._constant(condition), anchor._constant(a), anchor._constant(b)
        if condition.dtype != "bool":
            raise TypeError("where: the condition must be a bool tensor (a comparison, say)")
        dtype = result_type(_operand_view(a), _operand_view(b))
        return anchor.graph.add(_Node("where", dtype, (condition.index, a.cast(dtype).index, b.cast(dtype).index)))

    def reduce(self, op: str, dim: Any, keepdim: bool) -> Traced:
        self._checked()
        if op not in _REDUCE:
            raise self.graph.unsupported(f"the reduction {op}")
        if op == "mean" and not is_floating(self.dtype):
            raise TypeError(f"mean needs a floating-point tensor, got {self.dtype} (as PyTorch); convert it with .to('float32')")
        ndim = self.graph.ndim
        dims = tuple(range(ndim)) if dim is None else tuple(sorted({d % ndim for d in (dim if isinstance(dim, (tuple, list)) else (dim,))}))
        dtype = "int64" if op in ("sum", "prod") and not is_floating(self.dtype) else self.dtype
        return self.graph.add(_Node("reduce", dtype, (self.cast(dtype).index,), op, dims=dims, keepdim=keepdim))

    def cast(self, dtype: str) -> Traced:
        if dtype == self.dtype:
            return self
        if dtype not in _C_TYPES and self.node.kind not in ("constant", "number"):  # a number meets a half tensor: fine
            raise self.graph.unsupported(f"a cast to {dtype}")
        return self.graph.add(_Node("cast", dtype, (self.index,)))

    def to(self, target: Any) -> Traced:
        return self.cast(dtype_name(target))

    def __getattr__(self, name: str) -> Any:
        if name in _ops.METHODS:
            return functools.partial(getattr(_ops, name), self)
        raise self.graph.unsupported(f"Tensor.{name}")

    def __bool__(self) -> bool:
        raise self.graph.unsupported("a Python branch on a tensor's value")

    def __matmul__(self, other: Any) -> Traced:
        if not isinstance(other, Traced) or self.dtype != other.dtype:
            raise self.graph.unsupported("a matmul of a traced value and something else, or of two dtypes")
        return self.graph.add(_Node("matmul", self.dtype, (self.index, other.index)))

    def transpose(self, dim0: int, dim1: int) -> Traced:
        """Of an argument, as a matmul's operand: the last two dims swapped (x @ w.T, the nn.Linear layout)."""
        last_two = {dim0, dim1} == {-2, -1} or (self.graph.ndim == 2 and {dim0, dim1} == {0, 1})
        if self.node.kind != "input" or not last_two:
            raise self.graph.unsupported("a transpose other than an argument's last two dims (a matmul operand)")
        return self.graph.add(_Node("transpose", self.dtype, (self.index,)))

    @property
    def mT(self) -> Traced:  # noqa: N802 (PyTorch's name)
        return self.transpose(-2, -1)

    @property
    def T(self) -> Traced:  # noqa: N802 (all dims reversed: the last two of a matrix)
        if self.graph.ndim != 2:
            raise self.graph.unsupported(".T of a tensor of more than 2 dims (use .mT or transpose(-2, -1))")
        return self.transpose(-2, -1)

    def __rmatmul__(self, other: Any) -> Traced:
        raise self.graph.unsupported(f"a matmul of a {type(other).__name__} and a tensor argument")

    def __getitem__(self, key: Any) -> Traced:
        raise self.graph.unsupported("indexing")

    def __setitem__(self, key: Any, value: Any) -> None:
        raise self.graph.unsupported("assignment")

    def __iter__(self) -> Any:
        raise self.graph.unsupported("iteration")


def _operand_view(x: Traced) -> Any:
    """A traced operand as result_type sees it: constants and number arguments are Python numbers, the rest tensors."""
    if x.node.kind == "constant":
        return x.node.value
    if x.node.kind == "number":
        return {"bool": False, "int64": 0}.get(x.node.dtype, 0.0)
    return x


def _full_dtype(x: Any) -> str:
    """The C type a Python number is kept in inside the kernel: no precision lost before it meets its operand."""
    return "bool" if isinstance(x, (bool, np.bool_)) else "int64" if isinstance(x, (int, np.integer)) else "float64"


def _binary_operator(op: str, reflected: bool = False) -> Callable[[Traced, Any], Traced]:
    if reflected:
        return lambda self, other: _ops.zip(op, other, self)
    return lambda self, other: _ops.zip(op, self, other)


for _name, _op in _ops.OPERATORS.items():
    setattr(Traced, f"__{_name}__", _binary_operator(_op))
    setattr(Traced, f"__r{_name}__", _binary_operator(_op, reflected=True))
for _name in _ops.COMPARISONS:
    setattr(Traced, f"__{_name}__", _binary_operator(_name))
Traced.__neg__ = lambda self: _ops.neg(self)  # type: ignore[attr-defined]
Traced.__abs__ = lambda self: _ops.abs(self)  # type: ignore[attr-defined]
Traced.__invert__ = lambda self: _ops.bitwise_not(self)  # type: ignore[attr-defined]
Traced.__hash__ = object.__hash__  # type: ignore[method-assign]
_ops.traced_type = Traced


# ---------------------------------------------------------------- the kernel


def _literal(value: Any, dtype: str) -> str:
    if dtype == "bool":
        return "true" if value else "false"
    if is_floating(dtype):
        text = repr(float(value))  # infinities and NaN by their bits: NVRTC has no math.h macros
        bits = {"inf": "0x7ff0000000000000LL", "-inf": "0xfff0000000000000LL", "nan": "0x7ff8000000000000LL"}.get(text)
        if bits:
            return f"static_cast<{_compute(dtype)}>(__longlong_as_double({bits}))"
        return _rounded(text, dtype) if dtype in _HALVES else f"{text}f" if dtype == "float32" else text
    return f"{int(value)}LL"


@dataclass
class _Plan:
    source: str
    kernels: list[str]
    inputs: list[int]  # argument positions of the tensor inputs, in the kernel's order
    numbers: list[tuple[int, str]]  # argument positions and C types of the number arguments
    outputs: list[_Node]
    reduce: _Node | None
    vectorized: bool  # the elementwise kernel's last parameter says whether every address is vector-aligned
    row_dims: int = 0  # a row kernel: the trailing dims its reductions cover
    row_threads: int = 0  # a row kernel: threads per row (blockDim.x)
    row_reductions: tuple[str, ...] = ()  # a row kernel: its reductions' ops


def _load(access: list[str], k: int, T: str, n: _Node) -> str:
    """Input k's element i (an input node of C type T) as its access mode finds it."""
    at = {"packed": "i", "periodic": f"i % in{k}_period", "row": "j"}.get(access[n.value], f"fused_offset(i, shape, in{k}_layout)")
    return f"reinterpret_cast<const {T}*>(in{k})[{at}]"


def _compute(dtype: str) -> str:
    """The C type a dtype's values are computed in."""
    return "float" if dtype in _HALVES else _C_TYPES[dtype]


def _rounded(expression: str, dtype: str) -> str:
    """An expression's value as its dtype holds it, in the dtype's compute type."""
    if dtype in _HALVES:
        return f"static_cast<float>(static_cast<{_C_TYPES[dtype]}>({expression}))"
    return f"static_cast<{_C_TYPES[dtype]}>({expression})"


def _element_lines(nodes: list[_Node], order: list[int], load: Callable[[int, str, _Node], str], inputs: list[int], numbers: list[int]) -> list[str]:
    """The fused ops of one element, a named temporary and a comment each, inputs read by load(k, C type, node);
    a reduction among them is its row's scalar r<index>. A constant that only feeds a cast becomes the cast's literal."""
    direct = {a for j in order if nodes[j].kind != "cast" for a in nodes[j].args}
    lines = []
    for i in order:
        n, T = nodes[i], _compute(nodes[i].dtype)
        if n.kind == "reduce":
            lines.append(f"const {T} v{i} = r{i};  // the row's {n.op}")
        elif n.kind == "input":
            lines.append(f"const {T} v{i} = static_cast<{T}>({load(inputs.index(i), _C_TYPES[n.dtype], n)});  // argument {n.value}")
        elif n.kind == "number":
            lines.append(f"const {T} v{i} = {_rounded(f'number{numbers.index(i)}', n.dtype)};  // argument {n.value}")
        elif n.kind == "constant":
            if i in direct or i == order[-1]:
                lines.append(f"const {T} v{i} = {_literal(n.value, n.dtype)};")
        elif n.kind == "cast" and nodes[n.args[0]].kind == "constant":
            lines.append(f"const {T} v{i} = {_literal(nodes[n.args[0]].value, n.dtype)};")
        elif n.kind == "cast":
            lines.append(f"const {T} v{i} = {_rounded(f'v{n.args[0]}', n.dtype)};  // to {n.dtype}, {n.line}")
        elif n.kind == "unary":
            expression = f"lockstep::kernels::unary_{n.op}<{T}>(v{n.args[0]})"
            lines.append(f"const {T} v{i} = {_rounded(expression, n.dtype)};  // {n.op}, {n.line}")
        elif n.kind == "binary":  # in the operands' compute type (a comparison's result is bool)
            operands = _compute(nodes[n.args[0]].dtype)
            expression = f"lockstep::kernels::binary_{n.op}<{operands}>(v{n.args[0]}, v{n.args[1]})"
            lines.append(f"const {T} v{i} = {_rounded(expression, n.dtype)};  // {n.op}, {n.line}")
        elif n.kind == "where":
            c, a, b = n.args
            lines.append(f"const {T} v{i} = v{c} ? v{a} : v{b};  // where, {n.line}")
    return lines


def _header(graph: _Graph) -> list[str]:
    """A generated kernel's first lines: where it comes from, the 16-bit float headers if it needs them, the helpers."""
    halves = [_HALF_HEADERS] if builtins.any(n.dtype in _HALVES for n in graph.nodes) else []
    return [f"// Written by @lockstep.fuse for {graph.code.co_name} ({graph.code.co_filename}:{graph.code.co_firstlineno}).", *halves, _PRELUDE]


def _reach(nodes: list[_Node], targets: list[int]) -> list[int]:
    """The nodes the targets need, in order; a reduction among them is a leaf (its row's scalar by then)."""
    seen: set[int] = set()
    stack = list(targets)
    while stack:
        i = stack.pop()
        if i not in seen:
            seen.add(i)
            if nodes[i].kind != "reduce":
                stack.extend(nodes[i].args)
    return sorted(seen)


def _write_kernel(graph: _Graph, outputs: list[Traced], name: str, access: list[str]) -> _Plan:
    nodes = graph.nodes
    reduce = outputs[0].node if outputs[0].node.kind == "reduce" else None
    needed = _reach(nodes, [reduce.args[0]] if reduce else [o.index for o in outputs])
    inputs = [i for i in needed if nodes[i].kind == "input"]
    numbers = [i for i in needed if nodes[i].kind == "number"]

    def body_with(load: Callable[[int, str, _Node], str]) -> list[str]:
        return _element_lines(nodes, needed, load, inputs, numbers)

    body = body_with(lambda k, T, n: _load(access, k, T, n))
    all_packed = builtins.all(access[nodes[i].value] in ("packed", "periodic") for i in inputs)
    # Inputs come as addresses: views of any strides (a kernel's pointer parameter takes packed tensors only).
    parameters = [f"unsigned long long in{k}, strided_layout in{k}_layout, long long in{k}_period" for k, i in enumerate(inputs)]
    parameters += [f"double number{k}" if is_floating(nodes[i].dtype) else f"long long number{k}" for k, i in enumerate(numbers)]
    loop = "\n".join("    " + line for line in body)
    grid_stride = "for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)"
    source = _header(graph)
    common = ", ".join(parameters + ["strided_layout shape", "long long n"])
    if reduce is None:
        outs = ", ".join(f"{_C_TYPES[o.dtype]}* out{k}" for k, o in enumerate(outputs))
        stores = "\n".join(f"    out{k}[i] = v{o.index};" for k, o in enumerate(outputs))
        if not all_packed:
            source.append(f"__global__ void {name}({outs}, {common}) {{\n  {grid_stride} {{\n{loop}\n{stores}\n  }}\n}}\n")
        else:
            # Every operand packed: a thread takes 4 consecutive elements of each with one vector access (when
            # `aligned`: every address a multiple of the vector's size), the rest element by element.
            # (A periodic input's vector starts at (4 g) % period, a multiple of 4 when `aligned`.)
            lanes = body_with(lambda k, T, n: f"in{k}_vector.lane[e]")
            vector_loads = "\n".join(
                f"    const fused_vector<{_C_TYPES[nodes[i].dtype]}> in{k}_vector = "
                f"reinterpret_cast<const fused_vector<{_C_TYPES[nodes[i].dtype]}>*>(in{k})"
                + ("[g];" if access[nodes[i].value] == "packed" else f"[(g * 4) % in{k}_period / 4];")
                for k, i in enumerate(inputs)
            )
            vector_outs = "\n".join(f"    fused_vector<{_C_TYPES[o.dtype]}> out{k}_vector;" for k, o in enumerate(outputs))
            lane_stores = "\n".join(f"      out{k}_vector.lane[e] = v{o.index};" for k, o in enumerate(outputs))
            vector_stores = "\n".join(
                f"    reinterpret_cast<fused_vector<{_C_TYPES[o.dtype]}>*>(out{k})[g] = out{k}_vector;" for k, o in enumerate(outputs)
            )
            lane_body = "\n".join("      " + line for line in lanes)
            source.append(
                f"__global__ void {name}({outs}, {common}, int aligned) {{\n"
                f"  const long long first = blockIdx.x * (long long)blockDim.x + threadIdx.x, stride = (long long)gridDim.x * blockDim.x;\n"
                f"  const long long groups = aligned ? n / 4 : 0;\n"
                f"  for (long long g = first; g < groups; g += stride) {{\n{vector_loads}\n{vector_outs}\n"
                f"#pragma unroll\n    for (int e = 0; e < 4; ++e) {{\n{lane_body}\n{lane_stores}\n    }}\n{vector_stores}\n  }}\n"
                f"  for (long long i = groups * 4 + first; i < n; i += stride) {{\n{loop}\n{stores}\n  }}\n}}\n"
            )
        kernels = [name]
    else:
        identity, combine = _REDUCE[reduce.op]
        A = "double" if is_floating(reduce.dtype) else "long long"
        source.append(f"using A = {A};  // the {reduce.op}'s accumulator ({reduce.line})")
        if len(reduce.dims) == graph.ndim:  # every element: a partial per block, then one block folds them
            source.append(
                f"__global__ void {name}_partial(A* partials, {common}) {{\n  __shared__ A share[{_THREADS}];\n  A acc = {identity};\n"
                f"  {grid_stride} {{\n{loop}\n    const A v = static_cast<A>(v{reduce.args[0]});\n    acc = {combine};\n  }}\n"
                f"  share[threadIdx.x] = acc;\n  __syncthreads();\n"
                f"  for (int half = {_THREADS // 2}; half > 0; half /= 2) {{\n"
                f"    if (threadIdx.x < half) {{\n      const A v = share[threadIdx.x + half];\n"
                f"      acc = share[threadIdx.x];\n      share[threadIdx.x] = {combine};\n    }}\n"
                f"    __syncthreads();\n  }}\n  if (threadIdx.x == 0) partials[blockIdx.x] = share[0];\n}}\n"
            )
            finish = "acc / static_cast<A>(n)" if reduce.op == "mean" else "acc"
            source.append(
                f"__global__ void {name}_finish({_C_TYPES[reduce.dtype]}* out, const A* partials, int count, long long n) {{\n"
                f"  A acc = {identity};\n  for (int b = 0; b < count; ++b) {{ const A v = partials[b]; acc = {combine}; }}\n"
                f"  out[0] = static_cast<{_C_TYPES[reduce.dtype]}>({finish});\n}}\n"
            )
            kernels = [f"{name}_partial", f"{name}_finish"]
        else:  # some dims: a thread per output element walks the reduced ones
            reduced = " || ".join(f"d == {d}" for d in reduce.dims)
            finish = "acc / static_cast<A>(count)" if reduce.op == "mean" else "acc"
            walk = loop.replace("\n    ", "\n      ")
            source.append(
                f"__global__ void {name}({_C_TYPES[reduce.dtype]}* out, {common}) {{\n"
                f"  long long count = 1;\n  for (int d = 0; d < shape.ndim; ++d) if ({reduced}) count *= shape.shape[d];\n"
                f"  const long long outputs = n / (count ? count : 1);\n"
                f"  for (long long o = blockIdx.x * (long long)blockDim.x + threadIdx.x; o < outputs; o += (long long)gridDim.x * blockDim.x) {{\n"
                f"    A acc = {identity};\n    for (long long r = 0; r < count; ++r) {{\n"
                f"      // the row-major index i of (o over the kept dims, r over the reduced ones)\n"
                f"      long long i = 0, step = 1, kept = o, rest = r;\n"
                f"      for (int d = shape.ndim - 1; d >= 0; --d) {{\n"
                f"        const long long e = shape.shape[d];\n"
                f"        i += (({reduced}) ? rest % e : kept % e) * step;\n"
                f"        if ({reduced}) rest /= e; else kept /= e;\n        step *= e;\n      }}\n"
                f"{walk}\n      const A v = static_cast<A>(v{reduce.args[0]});\n      acc = {combine};\n    }}\n"
                f"    out[o] = static_cast<{_C_TYPES[reduce.dtype]}>({finish});\n  }}\n}}\n"
            )
            kernels = [name]
    numbers_out = [(nodes[i].value, nodes[i].dtype) for i in numbers]
    return _Plan("\n".join(source), kernels, [nodes[i].value for i in inputs], numbers_out, outputs, reduce, reduce is None and all_packed)


def _row_launch(row_length: int) -> tuple[int, int]:
    """The row kernel's threads per row (a power of two, 32 to 1024) and elements per thread kept in registers
    (0: the row is too long for registers and is read from memory once per pass)."""
    threads = 32
    while threads < 1024 and threads * _ROW_ITEMS < row_length:
        threads *= 2
    items = 1
    while items * threads < row_length:
        items *= 2
    return (threads, items) if items <= _ROW_ITEMS else (1024, 0)


def _write_row_kernel(graph: _Graph, outputs: list[Traced], name: str, access: list[str], threads: int, items: int, fixed_length: int = 0) -> _Plan:
    """Reductions over the trailing dims whose results the outputs use (softmax, layernorm): a row per
    threadIdx.y, its elements spread over threadIdx.x in groups of `width` consecutive ones (one vector access each
    where the kernel's `aligned` says every packed row is vector-aligned). With `items` > 0 each thread keeps its
    `items` elements of the inputs the reductions read in registers, so the row is read from memory once; each
    reduction is then a pass over the registers and a reduction over the row's threads (shuffles within warps,
    shared memory across them), the earlier ones scalars in the later ones, and the outputs a last pass.
    A `fixed_length` > 0 is compiled in as the row length: the bounds checks fold away and the kernel needs
    fewer registers (on the H100, softmax and layernorm at 4096 went from 0.96 and 0.93 of copy bandwidth to
    1.00 and 1.03)."""
    nodes = graph.nodes
    if builtins.any(o.node.kind == "reduce" for o in outputs):
        raise graph.unsupported("a reduction among the results of a reduce-then-map function")
    reductions = [i for i, n in enumerate(nodes) if n.kind == "reduce"]
    dims = {nodes[i].dims for i in reductions}
    if len(dims) != 1:
        raise graph.unsupported("reductions over different dims in one function")
    row_dims = len(dims.pop())

    phases = [(r, _reach(nodes, [nodes[r].args[0]])) for r in reductions]
    final = _reach(nodes, [o.index for o in outputs])
    everything = sorted({i for _, p in phases for i in p} | set(final))
    inputs = [i for i in everything if nodes[i].kind == "input"]
    numbers = [i for i in everything if nodes[i].kind == "number"]
    cached = sorted({i for _, p in phases for i in p if nodes[i].kind == "input"}) if items else []
    width = 4 if items >= 4 else 1

    def load(k: int, T: str, n: _Node) -> str:
        return f"in{k}_row[e]" if inputs[k] in cached else _load(access, k, T, n)

    def each_element(order: list[int], tail: list[str], before: tuple[str, ...] = (), after: tuple[str, ...] = ()) -> list[str]:
        """A pass over the thread's elements of the row: the ops in `order`, then `tail`, for each; in registers
        mode `before` and `after` each group of `width` (j0: the group's first element in the row)."""
        body = [*_element_lines(nodes, order, load, inputs, numbers), *tail]
        if not items:
            loop = "for (long long j = threadIdx.x; row_ok && j < row_length; j += blockDim.x) {"
            return [loop, "  const long long i = first + j;", *("  " + b for b in body), "}"]
        return [
            "#pragma unroll",
            "for (int g = 0; g < items / width; ++g) {",
            "  const int j0 = (g * blockDim.x + threadIdx.x) * width;",
            *("  " + b for b in before),
            "#pragma unroll",
            "  for (int q = 0; q < width; ++q) {",
            "    const int e = g * width + q;",
            "    const int j = j0 + q;",
            "    const long long i = first + j;",
            "    if (!row_ok || j >= row_length) continue;",
            *("    " + b for b in body),
            "  }",
            *("  " + a for a in after),
            "}",
        ]

    def indented(lines: list[str], indent: str) -> list[str]:
        return [line if line.startswith("#") else indent + line for line in lines]

    parameters = [f"unsigned long long in{k}, strided_layout in{k}_layout, long long in{k}_period" for k in range(len(inputs))]
    parameters += [f"double number{k}" if is_floating(nodes[i].dtype) else f"long long number{k}" for k, i in enumerate(numbers)]
    length = "long long row_length_argument" if fixed_length else "long long row_length"
    parameters += ["strided_layout shape", "long long rows", length, "int aligned"]
    outs = ", ".join(f"{_C_TYPES[o.dtype]}* out{k}" for k, o in enumerate(outputs))
    keeping = f"{items} elements per thread kept in registers" if items else "the row read from memory once per pass"
    block = builtins.max(_THREADS, threads)  # threads per row x rows per block; 2048 threads an SM: 32 registers each
    source = _header(graph)
    body = [
        f"constexpr int items = {items}, width = {width};  // {keeping}, in groups of width",
        f"__global__ void __launch_bounds__({block}, {builtins.max(1, 2048 // block)})",
        f"{name}({outs}, {', '.join(parameters)}) {{",
        *([f"  constexpr long long row_length = {fixed_length};  // compiled for this length: the bounds checks fold away"] if fixed_length else []),
        "  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;",
        "  for (long long block_row = (long long)blockIdx.x * blockDim.y; block_row < rows; block_row += (long long)gridDim.x * blockDim.y) {",
        "    const long long row = block_row + threadIdx.y, first = row * row_length;",
        "    const bool row_ok = row < rows;  // a row past the end still takes part in the barriers",
    ]
    for k, i in enumerate(inputs):
        if i in cached:
            T = _C_TYPES[nodes[i].dtype]
            scalar = each_element([], [f"in{k}_row[e] = {_load(access, k, T, nodes[i])};"])
            body.append(f"    {_compute(nodes[i].dtype)} in{k}_row[items];  // argument {nodes[i].value}, this thread's elements of the row")
            if access[nodes[i].value] == "packed" and width > 1:
                vector = [
                    "#pragma unroll",
                    "for (int g = 0; g < items / width; ++g) {",
                    "  const int j0 = (g * blockDim.x + threadIdx.x) * width;",
                    "  if (!row_ok || j0 >= row_length) continue;",
                    f"  const fused_vector<{T}> v = reinterpret_cast<const fused_vector<{T}>*>(in{k})[(first + j0) / width];",
                    "#pragma unroll",
                    f"  for (int q = 0; q < width; ++q) in{k}_row[g * width + q] = v.lane[q];",
                    "}",
                ]
                body += ["    if (aligned) {", *indented(vector, "      "), "    } else {", *indented(scalar, "      "), "    }"]
            else:
                body += indented(scalar, "    ")
    for r, order in phases:
        n = nodes[r]
        identity, combine = _REDUCE[n.op]
        finish = "acc / static_cast<A>(row_length)" if n.op == "mean" else "acc"
        accumulate = each_element(order, [f"const A v = static_cast<A>(v{n.args[0]});", f"acc = {combine};"])
        body += [
            f"    // the row's {n.op} ({n.line})",
            f"    {_compute(n.dtype)} r{r};",
            "    {",
            f"      using A = {_compute(n.dtype) if is_floating(n.dtype) else 'long long'};",
            f"      __shared__ A share[{_THREADS // 32}][32];",
            f"      A acc = {identity};",
            *indented(accumulate, "      "),
            "      for (int offset = 16; offset > 0; offset /= 2) {",
            "        const A v = __shfl_xor_sync(0xffffffffu, acc, offset);",
            f"        acc = {combine};",
            "      }",
            "      if (warps > 1) {  // the row's warps: their results through shared memory, then shuffles again",
            "        if (lane == 0) share[threadIdx.y][warp] = acc;",
            "        __syncthreads();",
            f"        acc = lane < warps ? share[threadIdx.y][lane] : {identity};",
            "        for (int offset = 16; offset > 0; offset /= 2) {",
            "          const A v = __shfl_xor_sync(0xffffffffu, acc, offset);",
            f"          acc = {combine};",
            "        }",
            "        __syncthreads();  // every thread has read share before the next row reuses it",
            "      }",
            f"      r{r} = {_rounded(finish, n.dtype)};",
            "    }",
        ]
    if width > 1:  # each group's outputs gathered into vectors, stored at once where aligned
        vectors = [f"fused_vector<{_C_TYPES[o.dtype]}>" for o in outputs]
        before = tuple(f"{vector} out{k}_vector;" for k, vector in enumerate(vectors))
        stores = [f"if (aligned) out{k}_vector.lane[q] = v{o.index}; else out{k}[i] = v{o.index};" for k, o in enumerate(outputs)]
        after = tuple(
            f"if (aligned && row_ok && j0 < row_length) reinterpret_cast<{vector}*>(out{k})[(first + j0) / width] = out{k}_vector;"
            for k, vector in enumerate(vectors)
        )
    else:
        before, after = (), ()
        stores = [f"out{k}[i] = v{o.index};" for k, o in enumerate(outputs)]
    body += indented(each_element(final, stores, before, after), "    ")
    body += ["  }", "}"]
    source.append("\n".join(body) + "\n")
    numbers_out = [(nodes[i].value, nodes[i].dtype) for i in numbers]
    return _Plan(
        "\n".join(source),
        [name],
        [nodes[i].value for i in inputs],
        numbers_out,
        outputs,
        reduce=None,
        vectorized=False,
        row_dims=row_dims,
        row_threads=threads,
        row_reductions=tuple(nodes[r].op for r in reductions),
    )


def _access(t: Tensor, domain: tuple[int, ...]) -> str:
    """How the kernel finds element i of the domain in t: packed, periodic (t packed, repeated over leading dims) or strided."""
    if not t.is_contiguous():
        return "strided"
    if tuple(t.shape) == domain:
        return "packed"
    core = tuple(t.shape)
    while core and core[0] == 1:
        core = core[1:]
    return "periodic" if core and domain[len(domain) - len(core) :] == core else "strided"


@functools.lru_cache(maxsize=4096)
def _layout(shape: tuple[int, ...], strides: tuple[int, ...]) -> bytes:
    """lockstep/kernels/strided_layout.h's struct, by value."""
    padded = lambda v: list(v) + [0] * (_MAX_DIMS - len(v))  # noqa: E731
    return struct.pack(f"<i4x{_MAX_DIMS}q{_MAX_DIMS}q", len(shape), *padded(shape), *padded(strides))


# ---------------------------------------------------------------- matmul epilogues

_EPILOGUE_ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "sigmoid", "tanh")


@dataclass
class _MatmulEpilogue:
    """A matmul whose result the matmul kernel finishes in its store: out = act(alpha * (a @ b) + bias) + residual
    (lockstep/kernels/matmul_epilogue.h), each part optional. Argument positions; alpha a product of factors, each
    a constant or a number argument (position), or its reciprocal."""

    a: int
    b: int
    dtype: str
    transposed: list[bool]  # whether a and b are their arguments' .T
    factors: list[tuple[Any, bool]] = field(default_factory=list)  # (constant, or ("argument", position)), divides
    bias: int | None = None
    activation: str | None = None
    residual: int | None = None
    steps: list[str] = field(default_factory=list)  # what each fused op became, with its line

    def alpha(self, values: list[Any]) -> float:
        alpha = 1.0
        for factor, divides in self.factors:
            value = float(values[factor[1]]) if isinstance(factor, tuple) else float(factor)
            alpha = alpha / value if divides else alpha * value
        return alpha

    def run(self, values: list[Any]) -> Tensor:
        take = lambda position: None if position is None else values[position]  # noqa: E731
        a, b = (values[p].transpose(-2, -1) if t else values[p] for p, t in zip((self.a, self.b), self.transposed))
        return _core.matmul(a, b, "auto", alpha=self.alpha(values), bias=take(self.bias), residual=take(self.residual), activation=self.activation)

    def describe(self, fn: Callable[..., Any], device: str) -> str:
        algo = _core.auto_matmul_algo(self.dtype, device)
        in_store = any(a["name"] == algo and a["fused_epilogue"] for a in _core.matmul_algos())
        code = fn.__code__
        return "\n".join(
            [
                f"// @lockstep.fuse for {code.co_name} ({code.co_filename}:{code.co_firstlineno}): no kernel is generated;",
                f"// the library's matmul (algo {algo!r} on {device}) applies the epilogue "
                + ("in its store" if in_store else "after the product, as separate ops"),
                "// (lockstep/kernels/matmul_epilogue.h): out = act(alpha * (a @ b) + bias[col]) + residual[row, col]",
                *(f"//   {step}" for step in self.steps),
            ]
        )


def _match_epilogue(graph: _Graph, outputs: list[Traced], ranks: dict[int, tuple[bool, ...]]) -> _MatmulEpilogue:
    """The matmul epilogue a function computes, from the matmul up to the result in the order the kernels apply
    it (scale, bias, activation, residual), or Unsupported naming the op that does not fit. ranks: each tensor
    argument's extents-are-1 pattern (its rank and where it broadcasts)."""
    nodes = graph.nodes
    matmuls = [i for i, n in enumerate(nodes) if n.kind == "matmul"]
    if len(matmuls) != 1 or len(outputs) != 1:
        raise Unsupported("more than one matmul, or a matmul with several results (one matmul and its epilogue fuse)")
    live = set(_reach(nodes, [outputs[0].index]))
    current = matmuls[0]
    operands = [nodes[i] for i in nodes[current].args]
    transposed = [n.kind == "transpose" for n in operands]
    a, b = (nodes[n.args[0]] if t else n for n, t in zip(operands, transposed))
    if a.kind != "input" or b.kind != "input":
        raise Unsupported(f"a matmul of computed values ({nodes[current].line}): the matmul's operands must be arguments or their .T")
    if a.dtype not in ("float32", "bfloat16") or len(ranks[a.value]) < 2 or len(ranks[b.value]) < 2:
        raise Unsupported(f"a matmul of {a.dtype} or 1-D tensors ({nodes[current].line}): epilogues fuse into float32 and bfloat16 matrix products")
    out_rank = builtins.max(len(ranks[a.value]), len(ranks[b.value]))
    named = [f"argument {n.value}{'.T' if t else ''}" for n, t in zip((a, b), transposed)]
    plan = _MatmulEpilogue(a.value, b.value, a.dtype, transposed, steps=[f"a @ b: {named[0]} and {named[1]} ({nodes[current].line})"])

    def peeled(i: int) -> _Node:  # a constant or number as its operand's dtype: the value itself
        n = nodes[i]
        return nodes[n.args[0]] if n.kind == "cast" and nodes[n.args[0]].kind in ("constant", "number") else n

    stage = 0  # what may come next: 0 scale, 1 bias, 2 activation, 3 residual
    while current != outputs[0].index:
        users = [j for j in live if current in nodes[j].args]
        n = nodes[users[0]]
        if len(users) != 1 or n.args.count(current) != 1:
            raise Unsupported(f"the matmul's result used twice ({n.line}): only act(alpha * (a @ b) + bias) + residual fuses")
        other = peeled(next(iter(set(n.args) - {current}))) if n.kind == "binary" else None
        if n.kind == "binary" and n.op in ("mul", "div") and stage == 0 and other.kind in ("constant", "number"):
            if n.op == "div" and n.args[0] != current:
                raise Unsupported(f"a number divided by the matmul's result ({n.line})")
            plan.factors.append((other.value if other.kind == "constant" else ("argument", other.value), n.op == "div"))
            plan.steps.append(
                f"{'/' if n.op == 'div' else '*'} {other.value if other.kind == 'constant' else f'argument {other.value}'}: alpha ({n.line})"
            )
        elif (
            n.kind == "binary"
            and n.op == "add"
            and other.kind == "input"
            and stage <= 1
            and len(ranks[other.value]) <= 2
            and (len(ranks[other.value]) == 1 or ranks[other.value][0])
        ):
            plan.bias, stage = other.value, 2
            plan.steps.append(f"+ argument {other.value}: bias, one value per column ({n.line})")
        elif n.kind == "unary" and n.op in _EPILOGUE_ACTIVATIONS and stage <= 2:
            plan.activation, stage = n.op, 3
            plan.steps.append(f"{n.op}: activation ({n.line})")
        elif (
            n.kind == "binary"
            and n.op == "add"
            and other.kind == "input"
            and stage <= 3
            and len(ranks[other.value]) == out_rank
            and not builtins.any(ranks[other.value])
        ):
            plan.residual, stage = other.value, 4
            plan.steps.append(f"+ argument {other.value}: residual, the result's shape ({n.line})")
        else:
            what = n.op or n.kind
            raise Unsupported(f"{what} after the matmul ({n.line}): the matmul's epilogue is act(alpha * (a @ b) + bias) + residual")
        if n.dtype != a.dtype:
            raise Unsupported(f"a {n.dtype} result after the {a.dtype} matmul ({n.line})")
        current = users[0]
    return plan


# ---------------------------------------------------------------- the decorator


_Trace = "tuple[_Graph, list[Traced], list[str], int] | _MatmulEpilogue | str"


def _kernel_trace(graph: _Graph, outputs: list[Traced], key: tuple[Any, ...], values: list[Any]) -> tuple[_Graph, list[Traced], list[str], int]:
    """A traced function for a generated kernel: its graph, results, each argument's access mode and the trailing
    dims its row reductions cover (0: none)."""
    if builtins.any(n.kind == "transpose" for n in graph.nodes):
        raise Unsupported("a transpose that is not a matmul's operand")
    for position, v in enumerate(values):
        if isinstance(v, Tensor) and v.dtype not in _C_TYPES:
            raise Unsupported(f"{v.dtype} tensors (argument {position})")
    rows = [n for n in graph.nodes if n.kind == "reduce" and builtins.all(o.node is not n for o in outputs)]
    row_dims = len(rows[0].dims) if rows else 0
    access = [key[i][3] if isinstance(v, Tensor) else "" for i, v in enumerate(values)]
    for i, v in enumerate(values):
        ones = key[i][2] if isinstance(v, Tensor) else ()
        if access[i] == "periodic" and len(ones) - (ones + (False,)).index(False) == row_dims:
            access[i] = "row"  # a row's parameters (layernorm's scale): element j of each row
    return graph, outputs, access, row_dims


class Fused:
    """A function fused into one kernel per input signature (see lockstep.fuse)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        functools.update_wrapper(self, fn)
        self.fn = fn
        self._traces: dict[tuple[Any, ...], _Trace] = {}
        self._plans: dict[tuple[Any, ...], tuple[_Plan, list[Any]]] = {}  # the plan and its kernels

    def _signature(self, args: tuple[Any, ...]) -> tuple[tuple[Any, ...], list[Any], tuple[int, ...] | None]:
        """The signature (its last item the device), the arguments (arrays as tensors) and their broadcast shape
        (None if they do not broadcast)."""
        values = [a if isinstance(a, (Tensor, bool, int, float, np.number, np.bool_)) else asarray(a) for a in args]
        tensors = [v for v in values if isinstance(v, Tensor)]
        if not tensors:
            raise TypeError(f"{self.fn.__name__}: a fused function needs at least one tensor argument")
        device = tensors[0].device
        for t in tensors:
            if t.device != device:
                raise ValueError(f"{self.fn.__name__}: the tensors are on different devices ({device} and {t.device}); move one with .to(device)")
        try:
            domain: tuple[int, ...] | None = _broadcast_shape([tuple(t.shape) for t in tensors])
        except ValueError:
            domain = None  # a matmul's operands, say; an error if the function turns out elementwise
        # Per tensor: dtype, rank, which extents are 1, and how element i of the domain is found in it.
        key = tuple(
            (v.dtype, v.ndim, tuple(s == 1 for s in v.shape), _access(v, domain) if domain else "strided")
            if isinstance(v, Tensor)
            else type(v).__name__
            for v in values
        )
        return (*key, device), values, domain

    def _trace(self, key: tuple[Any, ...], values: list[Any]) -> _Trace:
        """The function's graph for this signature, its results, each argument's access mode and the trailing dims
        its row reductions cover (0: none); a matmul and its epilogue; or why it runs eagerly."""
        if key in self._traces:
            return self._traces[key]
        graph = _Graph(self.fn.__code__, builtins.max(v.ndim for v in values if isinstance(v, Tensor)))
        arguments = []
        try:
            for position, v in enumerate(values):
                if isinstance(v, Tensor):
                    if v.ndim > _MAX_DIMS:
                        raise Unsupported(f"tensors of more than {_MAX_DIMS} dimensions")
                    arguments.append(graph.add(_Node("input", v.dtype, value=position, line="argument")))
                else:
                    arguments.append(graph.add(_Node("number", _full_dtype(v), value=position, line="argument")))
            result = self.fn(*arguments)
            outputs = list(result) if isinstance(result, tuple) else [result]
            if not outputs or not all(isinstance(o, Traced) for o in outputs):
                raise Unsupported("a result that is not a tensor computed from the arguments")
            if builtins.any(o.node.kind == "reduce" for o in outputs) and len(outputs) > 1:
                raise Unsupported("several results with a reduction among them")
            trace: _Trace
            if builtins.any(n.kind == "matmul" for n in graph.nodes):
                trace = _match_epilogue(graph, outputs, {i: key[i][2] for i, v in enumerate(values) if isinstance(v, Tensor)})
            else:
                trace = _kernel_trace(graph, outputs, key, values)
                self._write(trace, key, 1)  # the writers' refusals are the trace's
        except Unsupported as e:
            trace = f"@lockstep.fuse runs {self.fn.__name__} eagerly, unfused: {e}"
            warnings.warn(trace, stacklevel=4)
        self._traces[key] = trace
        return trace

    def _write(self, trace: tuple[_Graph, list[Traced], list[str], int], key: tuple[Any, ...], row_length: int) -> tuple[_Plan, list[Any]]:
        """The kernel for a traced signature (a row kernel's depends on the row length too), compiled: the plan
        and its kernels."""
        graph, outputs, access, row_dims = trace
        threads, items = _row_launch(row_length) if row_dims else (0, 0)
        # On a GPU a row kernel holding its row in registers is compiled per row length; the emulator's
        # compiles cost more than the checks, so it keeps one kernel for every length.
        fixed_length = row_length if items and key[-1] != "cpu" else 0
        if (key, threads, items, fixed_length) not in self._plans:
            name = "fused_" + re.sub(r"\W", "_", self.fn.__name__)  # a lambda's <lambda> too
            if row_dims:
                plan = _write_row_kernel(graph, outputs, name, access, threads, items, fixed_length)
            else:
                plan = _write_kernel(graph, outputs, name, access)
            include_dirs = []
            if _HALF_HEADERS in plan.source and key[-1] != "cpu":
                include_dirs = _toolkit_include_dirs()
                if not include_dirs:
                    raise Unsupported("16-bit floats on a GPU, which need the CUDA toolkit's cuda_fp16.h (set CUDA_HOME to its folder)")
            module = compile_source(plan.source, device=key[-1], source_name=f"{name}.cu", include_dirs=include_dirs)
            self._plans[(key, threads, items, fixed_length)] = (plan, [module[k] for k in plan.kernels])
        return self._plans[(key, threads, items, fixed_length)]

    def _plan(self, key: tuple[Any, ...], values: list[Any], domain: tuple[int, ...] | None) -> tuple[_Plan, list[Any]] | _MatmulEpilogue | str:
        trace = self._trace(key, values)
        if isinstance(trace, (str, _MatmulEpilogue)):
            return trace
        if domain is None:
            shapes = " and ".join(str(tuple(v.shape)) for v in values if isinstance(v, Tensor))
            raise _core.ShapeError(f"{self.fn.__name__}: the tensors' shapes {shapes} do not broadcast together")
        row_dims = trace[3]
        return self._write(trace, key, math.prod(domain[len(domain) - row_dims :]) if row_dims else 1)

    def __call__(self, *args: Any) -> Any:
        key, values, domain = self._signature(args)
        plan = self._plan(key, values, domain)
        if isinstance(plan, str):
            return self.fn(*values)
        if isinstance(plan, _MatmulEpilogue):
            return plan.run(values)
        assert domain is not None
        if plan[0].inputs and _broadcast_shape([tuple(values[p].shape) for p in plan[0].inputs]) != domain:
            return self.fn(*values)  # the result does not use the widest argument: its shape is the eager one's
        return _run(plan[0], plan[1], values, key[-1], domain)

    def inspect_cuda(self, *args: Any) -> str:
        """The CUDA C++ fused for these arguments (a note instead, if they run eagerly)."""
        key, values, domain = self._signature(args)
        plan = self._plan(key, values, domain)
        if isinstance(plan, _MatmulEpilogue):
            return plan.describe(self.fn, key[-1])
        return plan if isinstance(plan, str) else plan[0].source


def _broadcast_shape(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    """NumPy's broadcast of the shapes (a ValueError if they do not broadcast), without NumPy's per-call cost:
    a fused call's host time is part of its time when the kernel is short."""
    ndim = builtins.max(len(s) for s in shapes)
    result = [1] * ndim
    for s in shapes:
        for d, extent in enumerate(s, ndim - len(s)):
            if result[d] == 1:
                result[d] = extent
            elif extent not in (1, result[d]):
                raise ValueError(f"shapes {shapes} do not broadcast")
    return tuple(result)


@functools.lru_cache(maxsize=4096)
def _packed_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


def _run(plan: _Plan, kernels: list[Any], values: list[Any], device: str, domain: tuple[int, ...]) -> Any:
    n = math.prod(domain)
    shape = _layout(domain, _packed_strides(domain))
    arguments: list[Any] = []
    views = []  # alive until the launches return
    periods = []
    for position in plan.inputs:
        view = values[position].expand(list(domain)) if tuple(values[position].shape) != domain else values[position]
        views.append(view)
        periods.append(builtins.max(1, values[position].size))
        arguments += [view.data_ptr, _layout(domain, tuple(view.strides)), periods[-1]]
    arguments += [float(values[p]) if is_floating(dtype) else int(values[p]) for p, dtype in plan.numbers]
    arguments += [shape, n]
    cap = 64 if device == "cpu" else 1 << 20
    blocks = builtins.max(1, builtins.min((n + _THREADS - 1) // _THREADS, cap))
    partial_blocks = builtins.min(blocks, 1024)  # few enough for the one-thread fold that follows
    reduce = plan.reduce
    if plan.row_dims:
        outs = [_core.empty(list(domain), o.dtype, device) for o in plan.outputs]
        row_length = math.prod(domain[len(domain) - plan.row_dims :])
        rows = math.prod(domain[: len(domain) - plan.row_dims])
        emptied = [op for op in plan.row_reductions if op in _NEED_ELEMENTS]
        if row_length == 0 and rows and emptied:
            raise _core.ShapeError(f"{emptied[0]}: a reduced dimension is empty")
        if n:
            rows_per_block = builtins.max(1, _THREADS // plan.row_threads)
            blocks = builtins.max(1, builtins.min((rows + rows_per_block - 1) // rows_per_block, cap))
            aligned = row_length % 4 == 0 and builtins.all(t.data_ptr % (4 * ITEMSIZE[t.dtype]) == 0 for t in (*views, *outs))
            kernels[0]._launch([blocks], [plan.row_threads, rows_per_block], [*outs, *arguments[:-1], rows, row_length, int(aligned)])
        return tuple(outs) if len(outs) > 1 else outs[0]
    if reduce is None:
        outs = [_core.empty(list(domain), o.dtype, device) for o in plan.outputs]
        if n and plan.vectorized:
            aligned = builtins.all(t.data_ptr % (4 * ITEMSIZE[t.dtype]) == 0 for t in (*views, *outs)) and builtins.all(
                p % 4 == 0 for p in periods if p != n
            )
            threads_needed = (n // 4 + n % 4) if aligned else n
            vector_blocks = builtins.max(1, builtins.min((threads_needed + _THREADS - 1) // _THREADS, cap))
            kernels[0]._launch([vector_blocks], [_THREADS], [*outs, *arguments, int(aligned)])
        elif n:
            kernels[0]._launch([blocks], [_THREADS], [*outs, *arguments])
        return tuple(outs) if len(outs) > 1 else outs[0]
    kept = (
        [1 if d in reduce.dims else e for d, e in enumerate(domain)] if reduce.keepdim else [e for d, e in enumerate(domain) if d not in reduce.dims]
    )
    out = _core.empty(kept, reduce.dtype, device)
    accumulate = "float64" if is_floating(reduce.dtype) else "int64"
    if len(plan.kernels) == 2:
        if n == 0 and reduce.op in _NEED_ELEMENTS:
            raise _core.ShapeError(f"{reduce.op}: no elements to reduce")
        partials = _core.empty([partial_blocks], accumulate, device)
        kernels[0]._launch([partial_blocks], [_THREADS], [partials, *arguments])
        kernels[1]._launch([1], [1], [out, partials, partial_blocks, n])
    elif out.size:
        if builtins.any(domain[d] == 0 for d in reduce.dims) and reduce.op in _NEED_ELEMENTS:
            raise _core.ShapeError(f"{reduce.op}: a reduced dimension is empty")
        kernels[0]._launch([builtins.max(1, builtins.min((out.size + _THREADS - 1) // _THREADS, cap))], [_THREADS], [out, *arguments])
    return out


def fuse(fn: Callable[..., Any]) -> Fused:
    """Decorator: ``fn`` (a function of tensors and numbers, made of lockstep's elementwise ops, comparisons,
    ``where``, casts and at most one final reduction) runs as one generated kernel per input signature, on the
    tensors' device. ``fn.inspect_cuda(*args)`` shows the kernel. What is not fused runs eagerly, with a note."""
    return Fused(fn)
