"""math.* and NumPy's scalar functions in kernels, as numba types them: C's
math functions, in float32 when every argument is float32 (or float16), else
in float64. A function is known by its module and ``__name__`` (NumPy 2's
aliases, np.asin for np.arcsin, are the same functions)."""

from __future__ import annotations

import ast
import math

from ._registry import IntrinsicCall, Known, define, float_type, suffixed
from ._types import Record, Scalar, Tuple, Type, boolean, float64, int32, int64
from ._values import cast, float_literal


def _names(function: str, modules: str) -> tuple[str, ...]:
    """``modules``: "mn" for math.function and numpy.function, "m" or "n" for one of them."""
    return tuple(f"{module}.{function}" for module, key in (("math", "m"), ("numpy", "n")) if key in modules)


def _float_type(call: IntrinsicCall) -> Type:
    return float_type(*call.args)


def _unary(names: tuple[str, ...], c_function: str, doc: str) -> None:
    define(
        names,
        doc,
        arity=1,
        numbers=True,
        typing=_float_type,
        emit=lambda call, t: f"{suffixed(c_function, t)}({cast(call.args[0], t)})",  # type: ignore[arg-type]
    )


def _binary(names: tuple[str, ...], c_function: str, doc: str) -> None:
    define(
        names,
        doc,
        arity=2,
        numbers=True,
        typing=_float_type,
        emit=lambda call, t: f"{suffixed(c_function, t)}({cast(call.args[0], t)}, {cast(call.args[1], t)})",  # type: ignore[arg-type]
    )


_unary(_names("sqrt", "mn"), "sqrt", "The square root.")
_unary(_names("exp", "mn"), "exp", "e to the x.")
_unary(_names("exp2", "mn"), "exp2", "2 to the x.")
_unary(_names("expm1", "mn"), "expm1", "e to the x, minus 1 (exact near 0).")
_unary(_names("log2", "mn"), "log2", "The base-2 logarithm.")
_unary(_names("log10", "mn"), "log10", "The base-10 logarithm.")
_unary(_names("log1p", "mn"), "log1p", "The natural logarithm of 1 + x (exact near 0).")
_unary(_names("sin", "mn"), "sin", "The sine.")
_unary(_names("cos", "mn"), "cos", "The cosine.")
_unary(_names("tan", "mn"), "tan", "The tangent.")
_unary(_names("asin", "m") + _names("arcsin", "n"), "asin", "The arc sine.")
_unary(_names("acos", "m") + _names("arccos", "n"), "acos", "The arc cosine.")
_unary(_names("atan", "m") + _names("arctan", "n"), "atan", "The arc tangent.")
_unary(_names("sinh", "mn"), "sinh", "The hyperbolic sine.")
_unary(_names("cosh", "mn"), "cosh", "The hyperbolic cosine.")
_unary(_names("tanh", "mn"), "tanh", "The hyperbolic tangent.")
_unary(_names("asinh", "m") + _names("arcsinh", "n"), "asinh", "The inverse hyperbolic sine.")
_unary(_names("acosh", "m") + _names("arccosh", "n"), "acosh", "The inverse hyperbolic cosine.")
_unary(_names("atanh", "m") + _names("arctanh", "n"), "atanh", "The inverse hyperbolic tangent.")
_unary(_names("erf", "m"), "erf", "The error function.")
_unary(_names("erfc", "m"), "erfc", "1 - erf(x).")
_unary(_names("gamma", "m"), "tgamma", "The gamma function.")
_unary(_names("lgamma", "m"), "lgamma", "The logarithm of the gamma function's absolute value.")
_unary(_names("fabs", "mn"), "fabs", "The absolute value, a float.")
_unary(_names("cbrt", "mn"), "cbrt", "The cube root.")
_binary(_names("atan2", "m") + _names("arctan2", "n"), "atan2", "The angle of the point (x, y): atan2(y, x).")
_binary(_names("hypot", "mn"), "hypot", "sqrt(x * x + y * y), without overflow.")
_binary(_names("copysign", "mn"), "copysign", "x's magnitude with y's sign.")
_binary(_names("fmod", "mn"), "fmod", "C's remainder of x / y (the sign of x).")
_binary(_names("pow", "m"), "pow", "x to the y, a float.")
_binary(_names("remainder", "mn"), "remainder", "C's remainder (IEEE: x - n * y for the n nearest x / y).")
_binary(_names("nextafter", "mn"), "nextafter", "The next float after x towards y.")


def _log_type(call: IntrinsicCall) -> Type:
    if len(call.args) not in (1, 2):
        call.fail(f"{call.name} takes a number and, optionally, the base")
    return float_type(*call.args)


def _log(call: IntrinsicCall, t: Type) -> str:
    f = suffixed("log", t)  # type: ignore[arg-type]
    if len(call.args) == 2:
        return f"({f}({cast(call.args[0], t)}) / {f}({cast(call.args[1], t)}))"
    return f"{f}({cast(call.args[0], t)})"


define(_names("log", "mn"), "The natural logarithm; math.log(x, base) too.", numbers=True, typing=_log_type, emit=_log)
define(
    _names("ldexp", "mn"),
    "x * 2 to the (integer) e.",
    arity=2,
    numbers=True,
    typing=lambda call: float_type(call.args[0]),
    emit=lambda call, t: f"{suffixed('ldexp', t)}({cast(call.args[0], t)}, {cast(call.args[1], int32)})",  # type: ignore[arg-type]
)
define(
    _names("frexp", "mn"),
    "(mantissa, exponent) of x: a float and an int32.",
    arity=1,
    numbers=True,
    typing=lambda call: Record((float_type(call.args[0]), int32)),
    emit=lambda call, t: f"lockstep::py::frexp_record<{t.items[0].cpp}>({cast(call.args[0], t.items[0])})",  # type: ignore[union-attr]
)
define(
    _names("modf", "mn"),
    "(fractional part, integer part) of x, both floats.",
    arity=1,
    numbers=True,
    typing=lambda call: Tuple(float_type(call.args[0]), 2),
    emit=lambda call, t: f"lockstep::py::modf_tuple<{t.item.cpp}>({cast(call.args[0], t.item)})",  # type: ignore[union-attr]
)


# ---- predicates: of an integer, known while translating ----
def _predicate(c_function: str, of_integer: bool, doc: str) -> None:
    def typing(call: IntrinsicCall) -> Type | Known:
        t = call.args[0].type
        return Known(of_integer) if isinstance(t, Scalar) and not t.is_float else boolean

    define(
        _names(c_function, "mn"),
        doc,
        arity=1,
        numbers=True,
        typing=typing,
        emit=lambda call, t: f"static_cast<bool>({c_function}({call.args[0].code}))",
    )


_predicate("isnan", False, "Whether x is NaN.")
_predicate("isinf", False, "Whether x is infinite.")
_predicate("isfinite", True, "Whether x is neither infinite nor NaN.")


# ---- rounding: Python's math gives ints, NumPy's floats ----
def _math_rounding_type(call: IntrinsicCall) -> Type | None:
    return None if call.args[0].type is None else int64


def _math_rounding(c_function: str):  # type: ignore[no-untyped-def]
    def emit(call: IntrinsicCall, t: Type | None) -> str:
        a = call.args[0]
        if a.type is None:
            return a.code or ""
        assert isinstance(a.type, Scalar)
        if not a.type.is_float:
            return cast(a, int64)
        return f"static_cast<long long>({suffixed(c_function, a.type)}({a.code}))"

    return emit


def _numpy_rounding_type(call: IntrinsicCall) -> Type | None:
    t = call.args[0].type
    return t if t is None or (isinstance(t, Scalar) and t.is_float) else float64


def _numpy_rounding(c_function: str):  # type: ignore[no-untyped-def]
    def emit(call: IntrinsicCall, t: Type | None) -> str:
        a = call.args[0]
        if a.type is None:
            return a.code or ""
        assert isinstance(a.type, Scalar)
        if not a.type.is_float:
            return cast(a, float64)
        return f"{suffixed(c_function, a.type)}({a.code})"

    return emit


for _function, _what in (("floor", "down"), ("ceil", "up"), ("trunc", "towards zero")):
    define(f"math.{_function}", f"x rounded {_what}, an int64.", arity=1, numbers=True, typing=_math_rounding_type, emit=_math_rounding(_function))
    define(
        f"numpy.{_function}",
        f"x rounded {_what}, a float (of x's type; float64 for an integer).",
        arity=1,
        numbers=True,
        typing=_numpy_rounding_type,
        emit=_numpy_rounding(_function),
    )


# ---- angles ----
def _angle(names: tuple[str, ...], factor: float, doc: str) -> None:
    define(
        names,
        doc,
        arity=1,
        numbers=True,
        typing=_float_type,
        emit=lambda call, t: f"({cast(call.args[0], t)} * {float_literal(factor, t)})",  # type: ignore[arg-type]
    )


_angle(_names("radians", "mn") + _names("deg2rad", "n"), math.pi / 180, "Degrees to radians.")
_angle(_names("degrees", "mn") + _names("rad2deg", "n"), 180 / math.pi, "Radians to degrees.")


# ---- NumPy's spellings of Python's built-ins ----
def _as_builtin(function: object):  # type: ignore[no-untyped-def]
    return lambda translator, node: translator.call_builtin(function, node)


define(("numpy.absolute", "numpy.abs"), "abs(x): of x's type.", translate=_as_builtin(abs))
define(_names("minimum", "n") + _names("fmin", "n"), "min(x, y), as Python's min.", translate=_as_builtin(min))
define(_names("maximum", "n") + _names("fmax", "n"), "max(x, y), as Python's max.", translate=_as_builtin(max))
define(
    _names("power", "n"),
    "x ** y, typed as ``**`` is.",
    translate=lambda translator, node: translator.binary(ast.Pow(), *translator.scalar_args(node, 2), node),
)


# ---- NumPy's ufuncs of Python's operators ----
for _ufunc, _operator in (
    ("add", ast.Add),
    ("subtract", ast.Sub),
    ("multiply", ast.Mult),
    ("true_divide", ast.Div),
    ("divide", ast.Div),
    ("floor_divide", ast.FloorDiv),
):
    define(
        _names(_ufunc, "n"),
        f"x {ast.unparse(ast.BinOp(ast.Name('x'), _operator(), ast.Name('y')))[2:-2]} y, typed as the operator is.",
        translate=lambda translator, node, op=_operator: translator.binary(op(), *translator.scalar_args(node, 2), node),
    )
