"""cuda.fp16: numba's half-precision intrinsics, CUDA's __half functions of
cuda_fp16.h (the emulator's own on "cpu"), their arguments converted to
float16 first."""

from __future__ import annotations

from ._registry import IntrinsicCall, define
from ._types import Scalar, Type, boolean
from ._values import cast

half = Scalar("float16")


def _half_call(function: str):  # type: ignore[no-untyped-def]
    def emit(call: IntrinsicCall, result: Type) -> str:
        return f"{function}({', '.join(cast(a, half) for a in call.args)})"

    return emit


def _binary(op: str, doc: str) -> None:
    define(f"fp16.{op}", doc, arity=2, numbers=True, typing=half, emit=_half_call(f"__{op}"))


def _comparison(op: str, doc: str) -> None:
    define(f"fp16.{op}", doc, arity=2, numbers=True, typing=boolean, emit=_half_call(f"__{op}"))


def _unary(op: str, doc: str, function: str | None = None) -> None:
    define(f"fp16.{op}", doc, arity=1, numbers=True, typing=half, emit=_half_call(function or op))


_binary("hadd", "a + b in float16.")
_binary("hsub", "a - b in float16.")
_binary("hmul", "a * b in float16.")
_binary("hdiv", "a / b in float16.")
_binary("hmax", "The larger of a and b.")
_binary("hmin", "The smaller of a and b.")
_comparison("heq", "a == b, a bool.")
_comparison("hne", "a != b, a bool.")
_comparison("hgt", "a > b, a bool.")
_comparison("hge", "a >= b, a bool.")
_comparison("hlt", "a < b, a bool.")
_comparison("hle", "a <= b, a bool.")
_unary("hneg", "-a.", "__hneg")
_unary("habs", "The absolute value.", "__habs")
_unary("hsin", "The sine.")
_unary("hcos", "The cosine.")
_unary("hlog", "The natural logarithm.")
_unary("hlog10", "The base-10 logarithm.")
_unary("hlog2", "The base-2 logarithm.")
_unary("hexp", "e to the a.")
_unary("hexp10", "10 to the a.")
_unary("hexp2", "2 to the a.")
_unary("hsqrt", "The square root.")
_unary("hrsqrt", "1 / the square root.")
_unary("hfloor", "Rounded down to an integer.")
_unary("hceil", "Rounded up to an integer.")
_unary("hrcp", "1 / a.")
_unary("hrint", "Rounded to the nearest integer, ties to even.")
_unary("htrunc", "Rounded towards zero to an integer.")
define("fp16.hfma", "a * b + c in float16, rounded once.", arity=3, numbers=True, typing=half, emit=_half_call("__hfma"))
