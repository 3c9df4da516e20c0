"""Calls in kernels: the kernel language's intrinsics (cuda.*), atomics,
math and NumPy scalar functions, Python's built-ins, print, shared, local and
constant arrays, and device functions. A mixin of FunctionTranslator
(_translate.py), whose expression and statement methods it uses."""

from __future__ import annotations

import ast
import inspect
import math
from typing import Any, Callable

import numpy as np

from . import _intrinsics as intr
from ._types import (
    Array,
    NoneType,
    Record,
    Scalar,
    Tuple,
    Type,
    boolean,
    float32,
    float64,
    int32,
    int64,
    none,
    scalar_named,
    uint32,
    unify,
)
from ._values import ConstArgument, NotConstant, Value, cast, float_literal, literal, record_item

# math.* and numpy's scalar functions: name -> C function for float64 (float32 adds "f").
_FLOAT_FUNCTIONS = {
    "sqrt": "sqrt",
    "exp": "exp",
    "exp2": "exp2",
    "expm1": "expm1",
    "log2": "log2",
    "log10": "log10",
    "log1p": "log1p",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "asin": "asin",
    "acos": "acos",
    "atan": "atan",
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "sinh": "sinh",
    "cosh": "cosh",
    "tanh": "tanh",
    "asinh": "asinh",
    "acosh": "acosh",
    "atanh": "atanh",
    "arcsinh": "asinh",
    "arccosh": "acosh",
    "arctanh": "atanh",
    "erf": "erf",
    "erfc": "erfc",
    "gamma": "tgamma",
    "lgamma": "lgamma",
    "fabs": "fabs",
    "cbrt": "cbrt",
}
_BINARY_FLOAT_FUNCTIONS = {
    "atan2": "atan2",
    "arctan2": "atan2",
    "hypot": "hypot",
    "copysign": "copysign",
    "fmod": "fmod",
    "pow": "pow",
    "power": "pow",
    "remainder": "remainder",
    "nextafter": "nextafter",
}
_FLOAT_PREDICATES = {"isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite"}
# Python's math.floor/ceil/trunc give ints; NumPy's give floats.
_ROUNDING = {"floor": "floor", "ceil": "ceil", "trunc": "trunc"}


def _math_name(obj: Any) -> tuple[str, str] | None:
    """("math" or "numpy", name) for a function of math or NumPy lockstep.cuda translates."""
    for module, kind in ((math, "math"), (np, "numpy")):
        name = getattr(obj, "__name__", None)
        if isinstance(name, str) and getattr(module, name, None) is obj:
            return kind, name
    return None


_ATOMICS = {
    "add": "atomic_add",
    "sub": "atomic_sub",
    "max": "atomic_max",
    "min": "atomic_min",
    "nanmax": "atomic_max",
    "nanmin": "atomic_min",
    "exch": "atomic_exch",
    "inc": "atomic_inc",
    "dec": "atomic_dec",
    "and_": "atomic_and",
    "or_": "atomic_or",
    "xor": "atomic_xor",
}
_SHUFFLES = {"shfl_sync": "__shfl_sync", "shfl_up_sync": "__shfl_up_sync", "shfl_down_sync": "__shfl_down_sync", "shfl_xor_sync": "__shfl_xor_sync"}


def python_function(obj: Any) -> Callable[..., Any] | None:
    """The Python function behind a device function: ours, numba's, or a plain function."""
    from ._dispatcher import Dispatcher  # (a cycle: dispatchers translate)

    if isinstance(obj, Dispatcher):
        return obj.py_func
    if type(obj).__module__.startswith("numba") and hasattr(obj, "py_func"):
        return obj.py_func
    if inspect.isfunction(obj):
        return obj
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
        if f in (min, max, abs, int, float, bool, len, round, range, pow):
            return self.call_builtin(f, node)
        dtype = scalar_named(f) if f not in (int, float, bool) else None
        if dtype is not None and (inspect.isclass(f) or type(f).__module__.startswith("numba") or isinstance(f, np.dtype)):
            (arg,) = self.call_args(node, 1)
            return Value(cast(arg, dtype), dtype)
        named = _math_name(f)
        if named is not None:
            return self.call_math(named[0], named[1], node)
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
                self.fail(node, f"{ast.unparse(node.func)} takes numbers, not a {a.type}")
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

    def call_math(self, module: str, name: str, node: ast.Call) -> Value:
        if name in _ROUNDING or (name in ("floor", "ceil", "trunc") and module == "numpy"):
            (a,) = self.scalar_args(node, 1)
            if a.type is None:
                return a
            t = a.type
            assert isinstance(t, Scalar)
            if not t.is_float:
                return Value(cast(a, int64), int64) if module == "math" else Value(cast(a, float64), float64)
            code = f"{_ROUNDING[name]}{'f' if t == float32 else ''}({a.code})"
            return Value(f"static_cast<long long>({code})", int64) if module == "math" else Value(code, t)
        if name in ("abs", "absolute"):
            return self.call_builtin(abs, node)
        if name in ("minimum", "maximum", "fmin", "fmax"):
            return self.call_builtin(min if name in ("minimum", "fmin") else max, node)
        if name in ("radians", "degrees", "deg2rad", "rad2deg"):
            (a,) = self.scalar_args(node, 1)
            t = self.float_type(a)
            factor = math.pi / 180 if name in ("radians", "deg2rad") else 180 / math.pi
            return Value(f"({cast(a, t)} * {float_literal(factor, t)})", t)
        if name == "log":
            args = self.scalar_args(node, None)  # type: ignore[arg-type]
            if len(args) == 2:
                t = self.float_type(*args)
                f = "logf" if t == float32 else "log"
                return Value(f"({f}({cast(args[0], t)}) / {f}({cast(args[1], t)}))", t)
            (a,) = args
            t = self.float_type(a)
            return Value(f"log{'f' if t == float32 else ''}({cast(a, t)})", t)
        if name in _FLOAT_FUNCTIONS:
            (a,) = self.scalar_args(node, 1)
            t = self.float_type(a)
            return Value(f"{_FLOAT_FUNCTIONS[name]}{'f' if t == float32 else ''}({cast(a, t)})", t)
        if name in _BINARY_FLOAT_FUNCTIONS:
            a, b = self.scalar_args(node, 2)
            if name in ("pow", "power") and module == "numpy":
                return self.binary(ast.Pow(), a, b, node)
            t = self.float_type(a, b)
            return Value(f"{_BINARY_FLOAT_FUNCTIONS[name]}{'f' if t == float32 else ''}({cast(a, t)}, {cast(b, t)})", t)
        if name == "ldexp":
            a, e = self.scalar_args(node, 2)
            t = self.float_type(a)
            return Value(f"ldexp{'f' if t == float32 else ''}({cast(a, t)}, {cast(e, int32)})", t)
        if name == "frexp":
            (a,) = self.scalar_args(node, 1)
            t = self.float_type(a)
            return Value(f"lockstep::py::frexp_record<{t.cpp}>({cast(a, t)})", Record((t, int32)))
        if name == "modf":
            (a,) = self.scalar_args(node, 1)
            t = self.float_type(a)
            return Value(f"lockstep::py::modf_tuple<{t.cpp}>({cast(a, t)})", Tuple(t, 2))
        if name in _FLOAT_PREDICATES:
            (a,) = self.scalar_args(node, 1)
            if isinstance(a.type, Scalar) and not a.type.is_float:
                return Value(None, None, name == "isfinite")
            return Value(f"static_cast<bool>({_FLOAT_PREDICATES[name]}({a.code}))", boolean)
        self.fail(node, f"{module}.{name} is not supported in kernels")
        raise AssertionError

    def float_type(self, *args: Value) -> Scalar:
        """The floating type a math function computes in: float32 only when every argument is float32 (or float16)."""
        if all(isinstance(a.type, Scalar) and a.type.name in ("float32", "float16") for a in args):
            return float32
        return float64

    # ---- the kernel language ----
    def call_intrinsic(self, name: str, node: ast.Call) -> Value:
        if name in ("grid", "gridsize"):
            (n,) = node.args if len(node.args) == 1 and not node.keywords else (None,)
            ndim = self.const_int(n) if n is not None else None
            if ndim not in (1, 2, 3):
                self.fail(node, f"cuda.{name}(ndim) takes the constant 1, 2 or 3")
            axes = "xyz"[:ndim]
            parts = [
                f"(static_cast<long long>(threadIdx.{a}) + static_cast<long long>(blockIdx.{a}) * blockDim.{a})"
                if name == "grid"
                else f"(static_cast<long long>(blockDim.{a}) * gridDim.{a})"
                for a in axes
            ]
            if ndim == 1:
                return Value(parts[0], int64)
            return Value(f"{Tuple(int64, ndim).cpp}{{{{{', '.join(parts)}}}}}", Tuple(int64, ndim), items=parts)  # type: ignore[arg-type]
        if name == "syncthreads":
            self.call_args(node, 0)
            return Value("__syncthreads()", none)
        if name in ("syncthreads_count", "syncthreads_and", "syncthreads_or"):
            (p,) = self.scalar_args(node, 1)
            return Value(f"__{name}({self.truth(p)})", int32)
        if name == "syncwarp":
            args = self.call_args(node, None, ("mask",))
            mask = cast(args[0], uint32) if args else "0xffffffffu"
            return Value(f"__syncwarp({mask})", none)
        if name in ("threadfence", "threadfence_block", "threadfence_system"):
            self.call_args(node, 0)
            return Value(f"__{name}()", none)
        if name in _SHUFFLES:
            args = self.call_args(node, None, ("mask", "value", "src_lane" if name == "shfl_sync" else "delta", "width"))
            if len(args) not in (3, 4):
                self.fail(node, f"cuda.{name}(mask, value, {'src_lane' if name == 'shfl_sync' else 'delta'}) takes 3 arguments")
            mask, value, lane = args[:3]
            t = value.type
            if isinstance(t, Scalar) and t.is_bool:
                value, t = Value(cast(value, int32), int32), int32
            if t is not None and not (isinstance(t, Scalar) and t.name in ("int32", "int64", "uint32", "uint64", "float32", "float64")):
                self.fail(node, f"shuffles move int32, int64, uint32, uint64, float32 and float64 values, not {t}")
            width = f", {cast(args[3], int32)}" if len(args) == 4 else ""
            lane_type = uint32 if name != "shfl_sync" else int32
            return Value(f"{_SHUFFLES[name]}({cast(mask, uint32)}, {value.code}, {cast(lane, lane_type)}{width})", t)
        if name in ("all_sync", "any_sync", "eq_sync", "ballot_sync"):
            mask, predicate = self.call_args(node, 2)
            if isinstance(mask.type, Scalar) and not mask.type.is_integer:
                self.fail(node, f"Mask type must be an integer: a warp mask is an integer, not {mask.type}")
            if isinstance(predicate.type, Scalar) and predicate.type.is_float:
                self.fail(node, f"Predicate must be an integer or boolean, not {predicate.type}")
            p = self.truth(predicate)
            if name == "ballot_sync":
                return Value(f"__ballot_sync({cast(mask, uint32)}, {p})", uint32)
            if name == "eq_sync":
                m = cast(mask, uint32)
                return Value(f"static_cast<int>(__all_sync({m}, {p}) || !__any_sync({m}, {p}))", int32)
            return Value(f"__{name}({cast(mask, uint32)}, {p})", int32)
        if name == "match_any_sync":
            mask, value = self.call_args(node, 2)
            return Value(f"__match_any_sync({cast(mask, uint32)}, {value.code})", uint32)
        if name == "match_all_sync":
            mask, value = self.call_args(node, 2)
            return Value(f"lockstep::py::match_all({cast(mask, uint32)}, {value.code})", Record((uint32, boolean)))
        if name == "activemask":
            self.call_args(node, 0)
            return Value(f"lockstep::py::activemask_at({self.line_of(node) * 1000 + node.col_offset})", uint32)
        if name == "lanemask_lt":
            self.call_args(node, 0)
            return Value("((1u << lockstep::py::lane_id()) - 1u)", uint32)
        if name in ("popc", "clz", "ffs", "brev"):
            (a,) = self.scalar_args(node, 1)
            wide = isinstance(a.type, Scalar) and a.type.bits == 64
            suffix = "ll" if wide else ""
            if name == "brev":
                t = Scalar("uint64") if wide else uint32
                return Value(f"__brev{suffix}({cast(a, t)})", t)
            operand = cast(a, Scalar("uint64") if wide else uint32) if name == "popc" else cast(a, int64 if wide else int32)
            return Value(f"__{name}{suffix}({operand})", int32)
        if name == "fma":
            a, b, c = self.scalar_args(node, 3)
            t = self.float_type(a, b, c)
            return Value(f"fma{'f' if t == float32 else ''}({cast(a, t)}, {cast(b, t)}, {cast(c, t)})", t)
        if name == "cbrt":
            (a,) = self.scalar_args(node, 1)
            t = self.float_type(a)
            return Value(f"cbrt{'f' if t == float32 else ''}({cast(a, t)})", t)
        if name == "selp":
            p, a, b = self.call_args(node, 3)
            t = unify(a.type, b.type)
            return Value(f"({self.truth(p)} ? {cast(a, t) if t else a.code} : {cast(b, t) if t else b.code})", t)
        if name in ("shared.array", "local.array"):
            return self.declare_array(name.split(".")[0], node)
        if name == "const.array_like":
            if len(node.args) != 1:
                self.fail(node, "cuda.const.array_like(ary) takes one NumPy array")
            v = self.expr(node.args[0])
            if not (v.is_const and isinstance(v.const, np.ndarray)):
                self.fail(node, "cuda.const.array_like takes a NumPy array known when the kernel is compiled (a global or closure variable)")
            return self.runtime(v, node)
        if name.startswith("fp16."):
            return self.call_fp16(name.split(".", 1)[1], node)
        if name.startswith("atomic."):
            return self.call_atomic(name.split(".", 1)[1], node)
        if name in ("threadIdx.x", "laneid"):
            self.fail(node, f"cuda.{name} is a value, not a function")
        self.fail(node, f"cuda.{name} is not supported in kernels")
        raise AssertionError

    def declare_array(self, space: str, node: ast.Call) -> Value:
        names = ("shape", "dtype")
        given: dict[str, ast.expr] = dict(zip(names, node.args))
        for kw in node.keywords:
            if kw.arg not in names:
                self.fail(node, f"cuda.{space}.array(shape, dtype) has no argument {kw.arg!r}")
            given[kw.arg] = kw.value  # type: ignore[index]
        if set(given) != set(names):
            self.fail(node, f"cuda.{space}.array takes shape and dtype")
        if isinstance(given["shape"], ast.List):
            self.fail(node, f"cuda.{space}.array's shape is an int or a tuple of ints, not a list")
        try:
            shape = self.const_value(given["shape"])
            dtype_obj = self.const_value(given["dtype"])
        except NotConstant:
            self.fail(node, f"cuda.{space}.array needs a shape and dtype known when the kernel is compiled (numbers, globals, closure variables)")
        if isinstance(shape, list):
            self.fail(node, f"cuda.{space}.array's shape is an int or a tuple of ints, not a list")
        shape = tuple(shape) if isinstance(shape, tuple) else (shape,)
        if not shape or not all(isinstance(s, (int, np.integer)) and s >= 0 for s in shape):
            self.fail(node, f"cuda.{space}.array's shape must be non-negative integers, got {shape}")
        dtype = scalar_named(dtype_obj)
        if dtype is None:
            self.fail(node, f"cuda.{space}.array's dtype {dtype_obj!r} is not a numeric type (numba.float32, numpy.float32, 'float32', ...)")
        assert dtype is not None
        storage = self.local_unique(f"{self.name_hint or space}_storage")
        count = int(np.prod(shape))
        extents = ", ".join(str(int(s)) for s in shape)
        if space == "shared" and shape == (0,):
            # Dynamic shared memory: the launch's shared_bytes; every such array starts at its beginning, as in numba.
            self.prologue.append(f"  extern __shared__ __align__(16) unsigned char {storage}[];")
            return Value(f"lockstep::py::over<{dtype.cpp}, 1>(reinterpret_cast<{dtype.cpp}*>({storage}), {{1LL << 40}})", Array(dtype, 1, True))
        if count == 0:
            self.fail(node, f"cuda.{space}.array of no elements; use shape 0 (one dimension) for dynamic shared memory")
        qualifier = "__shared__ " if space == "shared" else ""
        align = "__align__(16) " if space == "shared" else ""
        self.prologue.append(f"  {qualifier}{align}{dtype.cpp} {storage}[{count}];")
        return Value(f"lockstep::py::over<{dtype.cpp}, {len(shape)}>({storage}, {{{extents}}})", Array(dtype, len(shape), True))

    def call_fp16(self, op: str, node: ast.Call) -> Value:
        """cuda.fp16.hadd and friends: CUDA's __half intrinsics, arguments converted to float16."""
        half = Scalar("float16")
        if op == "hfma":
            args = self.scalar_args(node, 3)
            return Value(f"__hfma({', '.join(cast(a, half) for a in args)})", half)
        if op in intr.FP16_BINARY or op in intr.FP16_COMPARISONS:
            a, b = self.scalar_args(node, 2)
            return Value(f"__{op}({cast(a, half)}, {cast(b, half)})", boolean if op in intr.FP16_COMPARISONS else half)
        (a,) = self.scalar_args(node, 1)
        function = f"__{op}" if op in ("hneg", "habs") else op
        return Value(f"{function}({cast(a, half)})", half)

    def call_atomic(self, op: str, node: ast.Call) -> Value:
        if op == "compare_and_swap":
            array, old, value = self.call_args(node, 3)
            index_values: list[Value] = [literal(0)] * (array.type.ndim if isinstance(array.type, Array) else 1)
        elif op == "cas":
            array, index, old, value = self.call_args(node, 4)
            index_values = self.atomic_index(index, node)
        else:
            array, index, value = self.call_args(node, 3)
            index_values = self.atomic_index(index, node)
        if array.type is None:
            return Value("atomic(...)", None)
        if not isinstance(array.type, Array) or array.type.readonly:
            self.fail(node, f"cuda.atomic.{op} works on an array argument, shared or local array")
        assert isinstance(array.type, Array)
        t = array.type.dtype
        if len(index_values) != array.type.ndim:
            self.fail(node, f"cuda.atomic.{op} on a {array.type.ndim}-d array needs {array.type.ndim} indices")
        place = f"&{array.code}({', '.join(cast(i, int64) if i.type else (i.code or '') for i in index_values)})"
        if op in ("cas", "compare_and_swap"):
            if not t.is_integer:
                self.fail(node, "cuda.atomic.cas works on integer arrays (int32, int64, uint32, uint64)")
            return Value(f"lockstep::py::atomic_cas<{t.cpp}>({place}, {cast(old, t)}, {cast(value, t)})", t)
        if op not in _ATOMICS:
            self.fail(node, f"cuda.atomic.{op} does not exist; numba has add, sub, max, min, exch, cas, inc, dec, and_, or_, xor")
        if op in ("and_", "or_", "xor", "inc", "dec") and not t.is_integer:
            self.fail(node, f"cuda.atomic.{op} works on integer arrays, not {t}")
        if t.bits < 32 or t.name == "float16":
            self.fail(node, f"atomics work on 32- and 64-bit elements, not {t}")
        return Value(f"lockstep::py::{_ATOMICS[op]}<{t.cpp}>({place}, {cast(value, t)})", t)

    def atomic_index(self, index: Value, node: ast.AST) -> list[Value]:
        if isinstance(index.type, Record):
            return [Value(record_item(index.code or "", k), t) for k, t in enumerate(index.type.items)]
        if isinstance(index.type, Tuple):
            return [Value(f"{index.code}.item[{k}]", index.type.item) for k in range(index.type.count)]
        return [index]
