"""Calls in kernels: the registry's intrinsics and math functions (typed,
then written, through their definitions), Python's built-ins, print, NumPy's
and numba's dtype casts, and device functions. A mixin of FunctionTranslator
(_function.py), whose expression and statement methods it uses."""

from __future__ import annotations

import ast
import inspect
import math
from typing import Any, Callable

import numpy as np

from . import _intrinsics as intr
from ._cooperative import GridSync
from ._device_functions import python_function
from ._foreign import ForeignFunction
from ._registry import IntrinsicCall, Known
from ._supported import definition_of, shown_name
from ._types import Array, NoneType, Record, Scalar, Tuple, Type, boolean, float32, float64, int32, int64, none, scalar_named, unify
from ._ufuncs import is_array_ufunc_call
from ._values import ConstArgument, Value, cast, record_item


def _math_name(obj: Any) -> tuple[str, str] | None:
    """("math" or "numpy", name) for a function of math or NumPy lockstep.cuda translates."""
    for module, kind in ((math, "math"), (np, "numpy")):
        name = getattr(obj, "__name__", None)
        if isinstance(name, str) and getattr(module, name, None) is obj:
            return kind, name
    return None


class CallTranslator:
    # ---- calls ----
    def expr_Call(self, node: ast.Call) -> Value:
        callee = self.expr(node.func)
        if not callee.is_const:
            self.fail(node, f"{ast.unparse(node.func)} is not a function kernels can call")
        f = callee.const
        if isinstance(f, intr.Intrinsic):
            return self.call_intrinsic(f.name, node)
        if f is print:
            return self.call_print(node)
        if isinstance(f, ForeignFunction):
            return self.call_foreign(f, node)
        if isinstance(f, GridSync):  # g.sync() of g = cuda.cg.this_grid()
            return self.call_intrinsic("cg.grid_sync", node)
        if f in (min, max, abs, int, float, bool, len, round, range, pow):
            return self.call_builtin(f, node)
        dtype = scalar_named(f) if f not in (int, float, bool) else None
        if dtype is not None and (inspect.isclass(f) or type(f).__module__.startswith("numba") or isinstance(f, np.dtype)):
            (arg,) = self.call_args(node, 1)
            return Value(cast(arg, dtype), dtype)
        named = _math_name(f)
        if named is not None:
            if named[0] == "numpy" and is_array_ufunc_call(f, node):
                return self.call_ufunc_on_arrays(f, f"numpy.{named[1]}", node)  # np.sin(x, out): every element of out
            return self.call_intrinsic(f"{named[0]}.{named[1]}", node)
        func = python_function(f)
        if func is not None:
            return self.call_device_function(func, node, getattr(f, "_declared", None))
        self.fail(
            node, f"{ast.unparse(node.func)} cannot be called in kernels; call @cuda.jit(device=True) functions, math functions and cuda.* intrinsics"
        )
        raise AssertionError

    def call_args(self, node: ast.Call, count: int | None = None, names: tuple[str, ...] = ()) -> list[Value]:
        args = [self.runtime(self.expr(a), a) for a in node.args]
        for kw in node.keywords:
            if kw.arg in names and names.index(kw.arg) >= len(args):
                while len(args) < names.index(kw.arg):
                    args.append(None)  # type: ignore[arg-type]
                args.append(self.runtime(self.expr(kw.value), kw.value))
            else:
                self.fail(node, f"unexpected keyword argument {kw.arg!r}")
        if count is not None and len(args) != count:
            self.fail(node, f"{ast.unparse(node.func)} takes {count} argument{'s' if count != 1 else ''}, {len(args)} given")
        return args

    def scalar_args(self, node: ast.Call, count: int) -> list[Value]:
        args = self.call_args(node, count)
        for a in args:
            if a.type is not None and not isinstance(a.type, Scalar):
                callee = self.expr(node.func)
                hint = ""
                if callee.is_const and isinstance(callee.const, np.ufunc) and isinstance(a.type, Array):
                    hint = f"; on arrays give the output array too ({ast.unparse(node.func)}(x, out)), as numba's kernels need (they cannot allocate)"
                self.fail(node, f"{ast.unparse(node.func)} takes numbers, not a {a.type}{hint}")
        return args

    def call_device_function(self, func: Callable[..., Any], node: ast.Call, declared: list[list[Type]] | None = None) -> Value:
        if node.keywords:
            self.fail(node, "device functions take positional arguments")
        specs: list[Type | ConstArgument] = []
        runtime: list[Value] = []
        signature = next((d for d in declared or () if len(d) == len(node.args)), None)
        if declared and signature is None:
            self.fail(node, f"{func.__name__} was declared with {len(declared[0])} parameters; it is called with {len(node.args)}")
        for k, a in enumerate(node.args):
            v = self.expr(a)
            if v.is_const and not isinstance(v.const, str) and signature is None:
                specs.append(ConstArgument.of(v.const))
                continue
            v = self.runtime(v, a)
            if v.type is None:
                return Value(f"{func.__name__}(...)", None)
            if signature is not None:  # a declared signature converts the arguments, as numba does
                v = Value(cast(v, signature[k]), signature[k])
            specs.append(v.type)
            runtime.append(v)
        name, result = self.program.device_function(func, tuple(specs), self, node)
        call = f"{name}({', '.join(a.code or '' for a in runtime)})"
        return Value(call, result) if not isinstance(result, NoneType) else Value(call, none)

    def call_foreign(self, f: ForeignFunction, node: ast.Call) -> Value:
        """A cuda.declare_device function: its arguments converted to the declared types, as numba converts them."""
        args = self.scalar_args(node, len(f.params))
        self.program.foreign(f)
        converted = [cast(a, t) if a.type else (a.code or "") for a, t in zip(args, f.params)]
        result = f.result or none
        if f.abi == "c":
            return Value(f"{f.name}({', '.join(converted)})", result)
        return Value(f"lockstep::py::call_numba_abi<{result.cpp}>({', '.join([f.name, *converted])})", result)

    def call_print(self, node: ast.Call) -> Value:
        """print(...) as numba prints: items separated by spaces, floats with %f, bools as True/False."""
        formats: list[str] = []
        values: list[str] = []

        def item(v: Value, a: ast.expr) -> str:
            if isinstance(v.type, Scalar):
                if v.type.is_bool:
                    values.append(f'({v.code} ? "True" : "False")')
                    return "%s"
                if v.type.is_float:
                    values.append(cast(v, float64))
                    return "%f"
                values.append(cast(v, Scalar("uint64")) if v.type.is_unsigned else cast(v, int64))
                return "%llu" if v.type.is_unsigned else "%lld"
            if isinstance(v.type, (Tuple, Record)):
                if isinstance(v.type, Tuple):
                    parts = [Value(p, v.type.item) for p in v.items or [f"{v.code}.item[{k}]" for k in range(v.type.count)]]
                else:
                    parts = [Value(record_item(v.code or "", k), t) for k, t in enumerate(v.type.items)]
                inner = [item(p, a) for p in parts]
                return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
            if v.type is None:
                values.append(v.code or "")
                return "%lld"
            self.fail(a, f"print() in kernels takes strings, numbers and tuples of numbers, not a {v.type}")
            return ""

        for a in node.args:
            v = self.expr(a)
            if v.is_const and isinstance(v.const, str):
                formats.append(v.const.replace("%", "%%").replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n"))
                continue
            if v.is_const and isinstance(v.const, intr.Dim3):
                v = Value(None, Tuple(int32, 3), items=[f"static_cast<int>({v.const.name}.{axis})" for axis in "xyz"])
            else:
                v = self.runtime(v, a)
            formats.append(item(v, a))
        text = " ".join(formats) + "\\n"
        return Value(f'printf("{text}"{"".join(", " + v for v in values)})', none)

    def call_builtin(self, f: Any, node: ast.Call) -> Value:
        if f is range:
            self.fail(node, "range() is only for for loops")
        if f is len:
            (a,) = self.call_args(node, 1)
            if isinstance(a.type, Array):
                return Value(f"{a.code}.shape[0]", int64)
            if isinstance(a.type, Tuple):
                return Value(None, None, a.type.count)
            if isinstance(a.type, Record):
                return Value(None, None, len(a.type.items))
            if a.type is None:
                return Value(f"len({a.code})", int64)
            self.fail(node, f"len() of a {a.type}")
        if f in (int, float, bool):
            if not node.args:
                return Value(None, None, f())
            (a,) = self.scalar_args(node, 1)
            target = {int: int64, float: float64, bool: boolean}[f]
            return Value(cast(a, target), target)
        if f is abs:
            (a,) = self.scalar_args(node, 1)
            if a.type is None:
                return a
            t = a.type
            assert isinstance(t, Scalar)
            if t.is_float:
                return Value(f"fabs{'f' if t == float32 else ''}({a.code})", t)
            if t.is_unsigned:
                return a
            t = int64 if t.is_bool else t
            return Value(f"lockstep::py::abs_of<{t.cpp}>({cast(a, t)})", t)
        if f is round:
            args = self.scalar_args(node, None)  # type: ignore[arg-type]
            if len(args) == 2:  # round(x, ndigits): a float of x's type (an int stays an int)
                a, digits = args
                if isinstance(a.type, Scalar) and not a.type.is_float:
                    return Value(cast(a, int64), int64)
                t = a.type if a.type == float32 else float64
                return Value(cast(Value(f"lockstep::py::round_digits({cast(a, float64)}, {cast(digits, int64)})", float64), t), t)
            if len(args) != 1:
                self.fail(node, "round() takes a number and, optionally, the digits to keep")
            a = args[0]
            if isinstance(a.type, Scalar) and not a.type.is_float:
                return Value(cast(a, int64), int64)
            return Value(f"lockstep::py::round_half_even({a.code})", int64)
        if f is pow:
            left, right = self.scalar_args(node, 2)
            return self.binary(ast.Pow(), left, right, node)
        # min and max of numbers (Python: the first of equal ones).
        args = self.scalar_args(node, None)  # type: ignore[arg-type]
        if len(args) < 2:
            self.fail(node, f"{f.__name__}() takes two or more numbers in kernels")
        t: Type | None = None
        for a in args:
            t = unify(t, a.type)
        if t is None:
            return Value(f"{f.__name__}(...)", None)
        code = cast(args[0], t)
        for a in args[1:]:
            code = f"lockstep::py::{f.__name__}_of<{t.cpp}>({code}, {cast(a, t)})"
        return Value(code, t)

    # ---- the kernel language ----
    def call_intrinsic(self, name: str, node: ast.Call) -> Value:
        """A call of a registered intrinsic or math function: its arguments read,
        then typed by its typing rule, then written by its emission."""
        definition = definition_of(name)
        if definition is None:
            self.fail(node, f"{shown_name(name)} is not supported in kernels")
        assert definition is not None
        if definition.kind == "value":
            self.fail(node, f"{shown_name(name)} is a value, not a function")
        if definition.translate is not None:
            return definition.translate(self, node)
        assert definition.typing is not None and definition.emit is not None
        if definition.numbers:
            args = self.scalar_args(node, definition.arity)  # type: ignore[arg-type]
        else:
            args = self.call_args(node, definition.arity, definition.keywords)
        call = IntrinsicCall(name, node, args, self)
        result = definition.typing(call)
        if isinstance(result, Known):
            return Value(None, None, result.value)
        return Value(definition.emit(call, result), result)  # type: ignore[arg-type]

    def intrinsic_value(self, marker: intr.Intrinsic, node: ast.AST) -> Value:
        """cuda.threadIdx.x, cuda.laneid, cuda.warpsize read as values."""
        definition = definition_of(marker.name)
        assert definition is not None
        if definition.kind != "value":
            self.fail(node, f"cuda.{marker.name} is a function: call it")
        call = IntrinsicCall(marker.name, node, [], self)  # type: ignore[arg-type]
        result = definition.typing(call)  # type: ignore[misc]
        return Value(definition.emit(call, result), result)  # type: ignore[arg-type, misc]

    @staticmethod
    def is_intrinsic_value(marker: intr.Intrinsic) -> bool:
        """cuda.threadIdx.x, cuda.laneid, cuda.warpsize: values, not functions."""
        definition = definition_of(marker.name)
        return definition is not None and definition.kind == "value"
