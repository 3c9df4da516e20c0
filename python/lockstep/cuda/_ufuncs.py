"""NumPy ufuncs on arrays inside kernels, in the form numba accepts there:
with the output array given (``np.sin(x, out)``, ``np.add(a, b, out=c)``),
since a kernel cannot allocate. As in numba, the calling thread computes
every element of ``out`` (NumPy's broadcasting of the inputs: numbers, and
arrays of fewer dimensions or extent 1), each element as the scalar ufunc
(the registry's typing and C++) converted to ``out``'s element type; the
call's value is ``out``. A mixin of FunctionTranslator (_function.py)."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from ._types import Array, Scalar
from ._values import Value, cast


def is_array_ufunc_call(f: Any, node: ast.Call) -> bool:
    """Whether a call of NumPy function ``f`` names an output (an argument past its inputs, or out=)."""
    return isinstance(f, np.ufunc) and (len(node.args) > f.nin or any(k.arg == "out" for k in node.keywords))


class UfuncTranslator:
    def call_ufunc_on_arrays(self, f: np.ufunc, name: str, node: ast.Call) -> Value:
        spelled = f"np.{f.__name__}"
        if f.nout != 1:
            self.fail(node, f"{spelled} on arrays (it has {f.nout} outputs) is not supported in kernels; call it element by element")
        outs = node.args[f.nin :] + [k.value for k in node.keywords if k.arg == "out"]
        if len(node.args) < f.nin or len(outs) != 1 or any(k.arg != "out" for k in node.keywords):
            self.fail(node, f"{spelled}(...) in kernels takes {f.nin} input(s) and one output array ({spelled}(x, out) or out=out)")
        inputs = [self.runtime(self.expr(a), a) for a in node.args[: f.nin]]
        out = self.runtime(self.expr(outs[0]), outs[0])
        if out.type is None or any(v.type is None for v in inputs):
            return Value(out.code, out.type)  # an early typing round
        if not isinstance(out.type, Array) or out.type.readonly or not isinstance(out.type.dtype, Scalar):
            self.fail(node, f"{spelled}'s output is an array the kernel may write, not a {out.type}")
        assert isinstance(out.type, Array)
        for v in inputs:
            if isinstance(v.type, Array) and v.type.ndim > out.type.ndim:
                self.fail(node, f"{spelled}: an input of {v.type.ndim} dimensions does not broadcast to an output of {out.type.ndim}")
            if not isinstance(v.type, (Array, Scalar)):
                self.fail(node, f"{spelled} takes arrays and numbers, not a {v.type}")
        held = self.temporary()
        self.out(f"const {out.type.cpp} {held} = {out.code};")
        arrays = {}  # every array input evaluated once, before the loops
        for k, v in enumerate(inputs):
            if isinstance(v.type, Array):
                arrays[k] = self.temporary()
                self.out(f"const {v.type.cpp} {arrays[k]} = {v.code};")
        ndim = out.type.ndim
        index = [self.temporary() for _ in range(ndim)]
        for d, i in enumerate(index):
            self.out(f"for (long long {i} = 0; {i} < {held}.shape[{d}]; ++{i}) {{")
            self.depth += 1
        # Each input's element as a name of the synthetic scalar call, typed as its element type.
        names = self.ufunc_elements.setdefault(id(node), [f"lockstep ufunc {k}" for k in range(f.nin)])
        for k, (name_, v) in enumerate(zip(names, inputs)):
            if isinstance(v.type, Array):
                array = arrays[k]
                lead = ndim - v.type.ndim
                at = [f"({array}.shape[{j}] == 1 ? 0LL : {index[lead + j]})" for j in range(v.type.ndim)]
                self.var_types[name_], self.cpp_names[name_] = v.type.dtype, f"{array}({', '.join(at)})"
            else:
                self.var_types[name_], self.cpp_names[name_] = v.type, v.code or ""
        call = self.ufunc_calls.setdefault(id(node), ast.Call(func=node.func, args=[ast.Name(id=n, ctx=ast.Load()) for n in names], keywords=[]))
        ast.copy_location(call, node)
        try:
            element = self.call_intrinsic(name, call)
        finally:
            for name_ in names:
                del self.var_types[name_], self.cpp_names[name_]
        if isinstance(element.type, Scalar) and element.type.is_float and not out.type.dtype.is_float:
            self.fail(node, f"{spelled} gives {element.type}, which NumPy's casting (same_kind) does not write into an array of {out.type.dtype}")
        self.out(f"{held}({', '.join(index)}) = {cast(element, out.type.dtype)};")
        for _ in index:
            self.depth -= 1
            self.out("}")
        return Value(held, out.type)
