"""Conformance of lockstep's tensor API (issue 15: PyTorch semantics) with PyTorch, checked against NumPy.

Each case in CASES is one expression, written once against a small namespace adapter ``xp`` so that the same
code runs on lockstep, on NumPy and on PyTorch; operators (``a + b``, ``1.5 == t``, ``t[mask]``, ``a += 1``) run
natively on each. A case writes down what PyTorch does -- the result's dtype (or Python type) or the exception it
raises -- and that is what lockstep must do, except where a case says otherwise:

- ``ls=``: lockstep's outcome where it differs from torch's on purpose. torch raises RuntimeError for many kinds
  of error; lockstep raises the Python class the API names (a result that cannot be cast to an in-place target or
  a wrong dtype -> TypeError, a broadcast failure -> lockstep.ShapeError, an element count -> ValueError). Also
  lockstep's documented deviations: negative-step slices follow NumPy, integer // and % by zero give 0.
- ``numpy=``: NumPy's outcome where it differs from torch's. For instance int32 / int32 is float64 in NumPy and
  float32 in torch; NumPy sums uint8 to uint64, torch to int64; NumPy (NEP 50) lets a 0-d array take part in
  promotion like any array, torch lets only dimensioned tensors decide within a category; float(t) of a 1-element
  1-D array is a TypeError in NumPy 2.4; NumPy raises OverflowError for uint8 + 300, torch wraps.

Three tests run the table:

- test_lockstep_conforms (each device): lockstep's outcome is the expected one, and its values equal NumPy's,
  computed from the same inputs with floating inputs in float64, to a tolerance that fits the result's dtype.
- test_numpy_outcome_is_as_documented: NumPy does what the table says (torch's outcome unless ``numpy=``), so
  each NumPy difference named here is checked, and every reference computation runs.
- test_torch_outcome_is_as_written (marked torch, so it runs only where PyTorch is installed): torch really does
  what each case says, with the same values, so the expectations lockstep is held to cannot drift from PyTorch.

Random inputs are multiples of 1/8 (1/2 where ties should happen) in a small range: exact in every float dtype.
"""

from __future__ import annotations

import contextlib
import operator
import re
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

import lockstep

FLOATS = ("float16", "bfloat16", "float32", "float64")
EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}


def numpy_dtype(name):
    """NumPy has no bfloat16: its side of a bfloat16 case runs in float32 (the values are exact in both)."""
    return np.dtype("float32" if name == "bfloat16" else name)


def dtype_name(x):
    """A lockstep, NumPy or torch result's dtype as a string, e.g. 'float32'."""
    return x.dtype if isinstance(x.dtype, str) else str(x.dtype).replace("torch.", "")


# ---------------------------------------------------------------- the three namespaces


class Library:
    """``xp`` for lockstep and torch, which spell almost everything the same: xp.name is module.name."""

    REDUCTIONS = ("sum", "prod", "mean", "max", "min", "argmax", "argmin", "all", "any")  # xp.sum(x, dim=None, keepdim=False)
    SHAPED = ("zeros", "ones", "empty", "rand", "randn")  # xp.zeros(2, 3) or xp.zeros((2, 3)); dtype=None
    MAKERS = ("full", "arange", "linspace", "randint")  # xp.full(shape, value), xp.arange(*args), ...; dtype=None

    def __init__(self, module, device):
        self.module, self.device = module, device

    def __getattr__(self, name):
        if name in self.REDUCTIONS:
            return lambda x, dim=None, keepdim=False: self.reduce(name, x, dim, keepdim)
        if name in self.SHAPED:
            return lambda *shape, dtype=None: self.shaped(name, shape, dtype)
        if name in self.MAKERS:
            return lambda *args, dtype=None: getattr(self.module, name)(*args, **self.kw(dtype))
        return getattr(self.module, name)

    def reduce(self, name, x, dim, keepdim):
        function = getattr(self.module, name)
        return function(x) if dim is None else function(x, dim=dim, keepdim=keepdim)

    def shaped(self, name, shape, dtype):
        return getattr(self.module, name)(*shape, **self.kw(dtype))

    def dtype(self, name):
        return name

    def kw(self, dtype):
        return {"device": self.device, **({"dtype": self.dtype(dtype)} if dtype else {})}

    def copy_(self, dst, src):
        return dst.copy_(src)

    def fill_(self, dst, value):
        return dst.fill_(value)


class Lockstep(Library):
    def __init__(self, device):
        super().__init__(lockstep, device)

    def tensor(self, array, dtype):  # an input, copied: in-place cases must not write into the drawn array
        if dtype == "bfloat16":
            return lockstep.asarray(array.astype(np.float32), device=self.device).to("bfloat16")
        return lockstep.asarray(array.copy(), device=self.device)

    def asarray(self, obj):
        return lockstep.asarray(obj, device=self.device)

    def host(self, x):
        if isinstance(x, lockstep.Tensor):
            x = x.to("cpu")
            return (x.to("float32") if x.dtype == "bfloat16" else x).numpy()
        return [self.host(v) for v in x] if isinstance(x, list) else x


class Torch(Library):
    def __init__(self, device="cpu"):
        import torch

        super().__init__(torch, device)

    def reduce(self, name, x, dim, keepdim):
        out = super().reduce(name, x, dim, keepdim)
        return out.values if name in ("max", "min") and dim is not None else out  # lockstep gives values only (documented)

    def dtype(self, name):
        return getattr(self.module, name)

    def tensor(self, array, dtype):
        return self.module.tensor(array, device=self.device).to(self.dtype(dtype))

    def asarray(self, obj):
        return self.module.tensor(obj, device=self.device)

    def host(self, x):
        if isinstance(x, self.module.Tensor):
            x = x.detach().cpu()
            return (x.float() if x.dtype == self.module.bfloat16 else x).numpy()
        return [self.host(v) for v in x] if isinstance(x, list) else x


def _softmax(x, dim):
    e = np.exp(x - np.max(x, axis=dim, keepdims=True))
    return e / np.sum(e, axis=dim, keepdims=True)


def _log_softmax(x, dim):
    shifted = x - np.max(x, axis=dim, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))


class NumPy(Library):
    ALIASES = {
        **{"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal},
        **{"div": np.true_divide, "pow": np.power, "neg": np.negative, "mul": np.multiply, "sub": np.subtract},
        **{"relu": lambda x: np.maximum(x, 0), "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "softmax": _softmax, "log_softmax": _log_softmax},
        **{"clamp": lambda x, min=None, max=None: np.clip(x, min, max), "randint": lambda *args: np.random.default_rng().integers(*args)},
    }

    def __init__(self):
        super().__init__(np, None)

    def __getattr__(self, name):
        return self.ALIASES[name] if name in self.ALIASES else super().__getattr__(name)

    def reduce(self, name, x, dim, keepdim):
        return getattr(np, name)(x) if dim is None else getattr(np, name)(x, axis=dim, keepdims=keepdim)

    def dtype(self, name):
        return numpy_dtype(name)

    def kw(self, dtype):
        return {"dtype": self.dtype(dtype)} if dtype else {}

    def tensor(self, array, dtype):
        return np.array(array, dtype=numpy_dtype(dtype))

    def asarray(self, obj):
        return np.asarray(obj)

    def host(self, x):
        return [self.host(v) for v in x] if isinstance(x, list) else x

    def shaped(self, name, shape, dtype):
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        generator = np.random.default_rng()
        make = {"rand": generator.random, "randn": generator.standard_normal}.get(name) or getattr(np, name)
        return make(shape, **self.kw(dtype))

    def copy_(self, dst, src):
        np.copyto(dst, src, casting="unsafe")  # torch's copy_ casts whatever it must
        return dst

    def fill_(self, dst, value):
        dst[...] = value
        return dst


NUMPY = NumPy()


# ---------------------------------------------------------------- cases


@dataclass(frozen=True)
class T:
    """A random input: dtype, shape, range; floats are multiples of `step`."""

    dtype: str
    shape: tuple = (3, 4)
    lo: float | None = None
    hi: float | None = None
    nonzero: bool = False
    step: float = 0.125

    def draw(self, rng):
        if self.dtype == "bool":
            return rng.random(self.shape) < 0.5
        if self.dtype in FLOATS:
            lo, hi = self.lo if self.lo is not None else -4, self.hi if self.hi is not None else 4
            x = np.asarray(rng.integers(round(lo / self.step), round(hi / self.step), endpoint=True, size=self.shape) * self.step)
        else:
            lo = self.lo if self.lo is not None else (0 if self.dtype == "uint8" else -9)
            x = np.asarray(rng.integers(lo, self.hi if self.hi is not None else (20 if self.dtype == "uint8" else 9), endpoint=True, size=self.shape))
        if self.nonzero:
            x[x == 0] = 1
        return x.astype(numpy_dtype(self.dtype))


@dataclass(frozen=True)
class V:
    """A fixed input."""

    values: Any
    dtype: str

    def draw(self, rng):
        return np.array(self.values, dtype=numpy_dtype(self.dtype))


@dataclass
class Case:
    id: str
    f: Callable
    inputs: tuple
    torch: Any  # torch's outcome: a dtype name, a Python type (for .item(), len() ...), or an exception class
    ls: Any = None  # lockstep's outcome where it differs from torch's
    numpy: Any = None  # NumPy's outcome where it differs from torch's
    values: bool = True  # compare values (not for empty, rand ...)
    tol: float = 8  # in units of the result dtype's epsilon, relative to max(1, |reference|)
    cpu_only: bool = False  # reads host memory: on a GPU, TypeError (copy to the host first)
    ref: Callable | None = None  # the reference where NumPy cannot compute it with the same expression

    def draw(self, rng):
        return [(x.draw(rng), x.dtype) if isinstance(x, (T, V)) else (x, None) for x in self.inputs]


CASES: list[Case] = []


def C(id, f, *inputs, torch, **kw):
    CASES.append(Case(id, f, inputs, torch, **kw))


def case(id, *inputs, torch, **kw):
    """C as a decorator, for cases that take statements."""
    return lambda f: C(id, f, *inputs, torch=torch, **kw)


def put(t, key, value):
    t[key] = value
    return t


def same(out, t):
    """An in-place method or operator returns the tensor itself, as in torch and NumPy."""
    assert out is t, "returned a new tensor, not self"
    return t


def inplace(op):
    return lambda xp, a, b: same(op(a, b), a)


F, F4, I32, U, B = T("float32"), T("float32", (4,)), T("int32"), T("uint8"), T("bool")
COARSE = T("float32", step=0.5)  # ties are common
I_NZ, F_NZ = T("int32", nonzero=True), T("float32", nonzero=True)
TYPE_ERR = {"torch": RuntimeError, "ls": TypeError, "numpy": TypeError}  # torch: "... can't be cast", "not implemented for"
SHAPE_ERR = {"torch": RuntimeError, "ls": lockstep.ShapeError, "numpy": ValueError}

# -- comparisons: tensor-tensor and a scalar on either side (1.5 < t is t > 1.5)
for _name, _op in [("lt", operator.lt), ("le", operator.le), ("gt", operator.gt), ("ge", operator.ge), ("eq", operator.eq), ("ne", operator.ne)]:
    C(f"{_name}_tensor_tensor", lambda xp, a, b, op=_op: op(a, b), COARSE, COARSE, torch="bool")
    C(f"{_name}_tensor_scalar", lambda xp, a, op=_op: op(a, 1.5), COARSE, torch="bool")
    C(f"{_name}_scalar_tensor", lambda xp, a, op=_op: op(1.5, a), COARSE, torch="bool")
C("sum_plus_scalar_lt_tensor", lambda xp, a, b: a + 1.2 < b, F, F, torch="bool")
C("float16_sum_lt_tensor", lambda xp, a, b: a + 1.2 < b, T("float16"), T("float16"), torch="bool")
C("row_eq_scalar", lambda xp, t: t[1] == 1.5, COARSE, torch="bool")
C("int_gt_int_scalar_reflected", lambda xp, t: 2 > t, I32, torch="bool")
C("int_eq_fraction_is_false", lambda xp, t: t == 1.5, I32, torch="bool")
C("int_tensor_lt_float_tensor", lambda xp, a, b: a < b, I32, F, torch="bool")
C("uint8_ge_int64", lambda xp, a, b: a >= b, U, T("int64"), torch="bool")
C("bool_eq_bool", lambda xp, a, b: a == b, B, B, torch="bool")
C("bfloat16_eq_scalar", lambda xp, t: t == 0.5, T("bfloat16", step=0.5), torch="bool")
C("broadcast_lt", lambda xp, a, b: a < b, T("float32", (3, 1)), COARSE, torch="bool")
C("zero_d_gt_tensor", lambda xp, s, t: s > t, T("float32", ()), COARSE, torch="bool")
C("le_function", lambda xp, a, b: xp.le(a, b), COARSE, COARSE, torch="bool")
C("ne_function_scalar", lambda xp, a: xp.ne(a, 1.5), COARSE, torch="bool")

# -- bool tensors
C("bool_roundtrip", lambda xp, m: m, B, torch="bool")
C("bool_asarray", lambda xp: xp.asarray([True, False, True]), torch="bool")
C("bool_and", lambda xp, a, b: a & b, B, B, torch="bool")
C("bool_or", lambda xp, a, b: a | b, B, B, torch="bool")
C("bool_xor", lambda xp, a, b: a ^ b, B, B, torch="bool")
C("bool_invert", lambda xp, m: ~m, B, torch="bool")
C("bool_plus_int", lambda xp, m: m + 1, B, torch="int64")
C("bool_times_float", lambda xp, m: m * 1.5, B, torch="float32", numpy="float64")
C("bool_minus_bool", lambda xp, a, b: a - b, B, B, **TYPE_ERR)
C("bool_negate", lambda xp, m: -m, B, **TYPE_ERR)

# -- promotion, tensor-tensor (a + b): torch.result_type; bfloat16 on NumPy's side is float32
TORCH_PROMOTION = """
          bool      uint8     int32     int64     float16   bfloat16  float32   float64
bool      bool      uint8     int32     int64     float16   bfloat16  float32   float64
uint8     uint8     uint8     int32     int64     float16   bfloat16  float32   float64
int32     int32     int32     int32     int64     float16   bfloat16  float32   float64
int64     int64     int64     int64     int64     float16   bfloat16  float32   float64
float16   float16   float16   float16   float16   float16   float32   float32   float64
bfloat16  bfloat16  bfloat16  bfloat16  bfloat16  float32   bfloat16  float32   float64
float32   float32   float32   float32   float32   float32   float32   float32   float64
float64   float64   float64   float64   float64   float64   float64   float64   float64
"""
# NumPy: an integer with float16/float32 goes to float64 (torch keeps the float type); "bfloat16" is float32 there.
NUMPY_PROMOTION = """
          bool      uint8     int32     int64     float16   bfloat16  float32   float64
bool      bool      uint8     int32     int64     float16   float32   float32   float64
uint8     uint8     uint8     int32     int64     float16   float32   float32   float64
int32     int32     int32     int32     int64     float64   float64   float64   float64
int64     int64     int64     int64     int64     float64   float64   float64   float64
float16   float16   float16   float64   float64   float16   float32   float32   float64
bfloat16  float32   float32   float64   float64   float32   float32   float32   float64
float32   float32   float32   float64   float64   float32   float32   float32   float64
float64   float64   float64   float64   float64   float64   float64   float64   float64
"""


def promotion_table(text):
    columns, *rows = (line.split() for line in text.strip().splitlines())
    return {(row[0], column): result for row in rows for column, result in zip(columns, row[1:])}


_numpy_promotion = promotion_table(NUMPY_PROMOTION)
for (_a, _b), _result in promotion_table(TORCH_PROMOTION).items():
    _differs = _numpy_promotion[_a, _b] != _result
    C(f"promote_{_a}_{_b}", lambda xp, a, b: a + b, T(_a), T(_b), torch=_result, numpy=_numpy_promotion[_a, _b] if _differs else None)

# -- promotion with Python scalars and 0-d tensors: a scalar or 0-d tensor of the same category does not widen
C("int32_plus_float", lambda xp, t: t + 1.5, I32, torch="float32", numpy="float64")
C("int64_times_float", lambda xp, t: t * 2.5, T("int64"), torch="float32", numpy="float64")
C("float_minus_int32", lambda xp, t: 0.5 - t, I32, torch="float32", numpy="float64")
C("uint8_plus_int_stays_uint8", lambda xp, t: t + 3, U, torch="uint8")
C("uint8_plus_int_wraps", lambda xp, t: t + 250, U, torch="uint8")
C("uint8_minus_int_wraps", lambda xp, t: t - 30, U, torch="uint8")
C("uint8_plus_300_wraps", lambda xp, t: t + 300, U, torch="uint8", numpy=OverflowError, ref=lambda t: (t + np.int64(300)) % 256)
C("int32_plus_int", lambda xp, t: t + 5, I32, torch="int32")
C("int32_plus_true", lambda xp, t: t + True, I32, torch="int32")
C("float16_plus_float", lambda xp, t: t + 1.5, T("float16"), torch="float16")
C("bfloat16_times_float", lambda xp, t: t * 2.5, T("bfloat16"), torch="bfloat16", numpy="float32")
C("float32_plus_int", lambda xp, t: t + 1, F, torch="float32")
C("float16_plus_float64_0d", lambda xp, a, s: a + s, T("float16"), T("float64", ()), torch="float16", numpy="float64")
C("int32_plus_int64_0d", lambda xp, a, s: a + s, I32, T("int64", ()), torch="int32", numpy="int64")
C("int32_plus_float64_0d", lambda xp, a, s: a + s, I32, T("float64", ()), torch="float64")  # a 0-d tensor of a higher category decides
C("float32_0d_times_float16", lambda xp, s, a: s * a, T("float32", ()), T("float16"), torch="float16", numpy="float32")
C("int32_0d_plus_int64_0d", lambda xp, s, r: s + r, T("int32", ()), T("int64", ()), torch="int64")
C("asarray_int_is_int64", lambda xp: xp.asarray(3), torch="int64")
C("asarray_float_is_float32", lambda xp: xp.asarray(1.5), torch="float32", numpy="float64")
C("asarray_bool", lambda xp: xp.asarray(True), torch="bool")
C("asarray_float_list", lambda xp: xp.asarray([1.0, 2.5]), torch="float32", numpy="float64")

# -- true division: ints give float32 (NumPy: float64)
DIVIDEND, DIVISOR = V([-7, 7, -7, 7, 0, 9, -9], "int32"), V([2, 2, -2, -2, 5, 3, 4], "int32")
C("int32_truediv_int32", lambda xp, a, b: a / b, DIVIDEND, DIVISOR, torch="float32", numpy="float64")  # -7 / 2 == -3.5
C("int64_truediv_int", lambda xp, t: t / 2, T("int64"), torch="float32", numpy="float64")
C("uint8_truediv_uint8", lambda xp, a, b: a / b, U, T("uint8", lo=1), torch="float32", numpy="float64")
C("int_rtruediv", lambda xp, t: 1 / t, I_NZ, torch="float32", numpy="float64")
C("bool_truediv", lambda xp, m: m / 2, B, torch="float32", numpy="float64")
C("int_truediv_zero", lambda xp, t: t / 0, V([-7, 0, 7], "int32"), torch="float32", numpy="float64")  # -inf, nan, inf
C("div_function", lambda xp, a, b: xp.div(a, b), I32, I_NZ, torch="float32", numpy="float64")
C("true_divide_function", lambda xp, a, b: xp.true_divide(a, b), F, F_NZ, torch="float32")

# -- // floors and % takes the divisor's sign (Python's rules) for ints and floats
C("fixed_floordiv", lambda xp, a, b: a // b, DIVIDEND, DIVISOR, torch="int32")  # -7 // 2 == -4
C("fixed_mod", lambda xp, a, b: a % b, DIVIDEND, DIVISOR, torch="int32")  # -7 % 2 == 1, 7 % -2 == -1
C("int32_floordiv", lambda xp, a, b: a // b, I32, I_NZ, torch="int32")
C("int32_mod", lambda xp, a, b: a % b, I32, I_NZ, torch="int32")
C("int32_mod_negative_scalar", lambda xp, t: t % -3, I32, torch="int32")
C("int_rfloordiv", lambda xp, t: -7 // t, I_NZ, torch="int32")
C("int_rmod", lambda xp, t: 7 % t, I_NZ, torch="int32")
C("float_floordiv", lambda xp, a, b: a // b, F, F_NZ, torch="float32")
C("float_mod", lambda xp, a, b: a % b, F, F_NZ, torch="float32")
C("float_mod_negative_scalar", lambda xp, t: t % -1.5, F, torch="float32")
C("int_floordiv_float", lambda xp, t: t // 2.5, I32, torch="float32", numpy="float64")
C("float_mod_zero_is_nan", lambda xp, t: t % 0.0, F, torch="float32")
C("floor_divide_function", lambda xp, a, b: xp.floor_divide(a, b), I32, I_NZ, torch="int32")
C("remainder_function", lambda xp, a, b: xp.remainder(a, b), F, F_NZ, torch="float32")
# torch raises "ZeroDivisionError" (a RuntimeError) on CPU; lockstep gives 0, as NumPy does (a kernel cannot raise).
C("int_floordiv_zero", lambda xp, t: t // 0, I32, torch=RuntimeError, ls="int32", numpy="int32")
C("int_mod_zero", lambda xp, t: t % 0, I32, torch=RuntimeError, ls="int32", numpy="int32")

# -- **
C("int_pow_int", lambda xp, t: t**2, I32, torch="int32")
C("int_pow_int_tensor", lambda xp, a, b: a**b, I32, T("int32", lo=0, hi=4), torch="int32")
C("int_pow_half", lambda xp, t: t**0.5, T("int32", lo=0), torch="float32", numpy="float64")
C("float_pow_int", lambda xp, t: t**3, F, torch="float32")
C("float_pow_half", lambda xp, t: t**0.5, T("float32", lo=0), torch="float32")
C("float_pow_int_tensor", lambda xp, a, b: a**b, F, T("int32", lo=0, hi=3), torch="float32", numpy="float64")
C("int_rpow", lambda xp, t: 2**t, T("int32", lo=0, hi=8), torch="int32")
C("float_rpow_int_tensor", lambda xp, t: 2.0**t, I32, torch="float32", numpy="float64")
C("float16_pow", lambda xp, t: t**2, T("float16"), torch="float16")
C("pow_function", lambda xp, a, b: xp.pow(a, b), T("float32", lo=0.5), F, torch="float32", tol=64)
C("int_pow_negative_int", lambda xp, t: t**-1, I_NZ, torch=RuntimeError, ls=ValueError, numpy=ValueError)  # unsure: API is silent

# -- sum and prod of bool and ints accumulate in int64 (NumPy: uint8 -> uint64); mean of ints raises
C("uint8_sum_300_x_255", lambda xp, t: xp.sum(t), V([255] * 300, "uint8"), torch="int64", numpy="uint64")  # 76500
C("uint8_sum_dim", lambda xp, t: xp.sum(t, 1), U, torch="int64", numpy="uint64")
C("int32_sum", lambda xp, t: xp.sum(t), I32, torch="int64")
C("int32_sum_dim", lambda xp, t: xp.sum(t, 0), I32, torch="int64")
C("bool_sum", lambda xp, m: xp.sum(m), B, torch="int64")
C("bool_sum_dim_keepdim", lambda xp, m: xp.sum(m, 0, True), B, torch="int64")
C("uint8_prod_dim", lambda xp, t: xp.prod(t, 1), T("uint8", lo=1, hi=6), torch="int64", numpy="uint64")  # beyond 255
C("int32_prod", lambda xp, t: xp.prod(t), T("int32", (2, 3), lo=-5, hi=5), torch="int64")
C("bool_prod_dim", lambda xp, m: xp.prod(m, 0), B, torch="int64")
C("float16_sum_dim", lambda xp, t: xp.sum(t, 0), T("float16"), torch="float16")
C("float32_sum_keepdim", lambda xp, t: xp.sum(t, -1, True), F, torch="float32")
C("float_mean_dim", lambda xp, t: xp.mean(t, 1), F, torch="float32")
C("float16_mean", lambda xp, t: xp.mean(t), T("float16"), torch="float16")
C("int_mean_raises", lambda xp, t: xp.mean(t), I32, torch=RuntimeError, ls=TypeError, numpy="float64")
C("int_mean_dim_raises", lambda xp, t: xp.mean(t, 0), T("int64"), torch=RuntimeError, ls=TypeError, numpy="float64")
C("bool_mean_raises", lambda xp, m: xp.mean(m), B, torch=RuntimeError, ls=TypeError, numpy="float64")

# -- max min argmax argmin all any (with a dim, torch's (values, indices) is values here: lockstep's documented deviation)
C("max_all", lambda xp, t: xp.max(t), F, torch="float32")
C("max_dim", lambda xp, t: xp.max(t, 1), F, torch="float32")
C("max_dim_keepdim", lambda xp, t: xp.max(t, 0, True), F, torch="float32")
C("min_all_int", lambda xp, t: xp.min(t), I32, torch="int32")
C("min_dim_uint8", lambda xp, t: xp.min(t, -1), U, torch="uint8")
C("argmax_all", lambda xp, t: xp.argmax(t), F, torch="int64")  # an index into the flattened tensor
C("argmax_dim", lambda xp, t: xp.argmax(t, 1), COARSE, torch="int64")  # ties: the first
C("argmin_dim_keepdim", lambda xp, t: xp.argmin(t, 0, True), COARSE, torch="int64")
C("argmin_all_int", lambda xp, t: xp.argmin(t), I32, torch="int64")
C("all_bool", lambda xp, m: xp.all(m), B, torch="bool")
C("any_bool_dim", lambda xp, m: xp.any(m, 1), B, torch="bool")
C("all_float_dim", lambda xp, t: xp.all(t, 0), T("float32", lo=-1, hi=1, step=1), torch="bool")
C("any_int_dim_keepdim", lambda xp, t: xp.any(t, 1, True), T("int32", lo=0, hi=1), torch="bool")

# -- elementwise functions
C("abs_int32", lambda xp, t: xp.abs(t), I32, torch="int32")
C("abs_builtin_float16", lambda xp, t: abs(t), T("float16"), torch="float16")
C("neg_int32", lambda xp, t: -t, I32, torch="int32")
C("sqrt_float32", lambda xp, t: xp.sqrt(t), T("float32", lo=0), torch="float32")
C("sqrt_int_is_float32", lambda xp, t: xp.sqrt(t), T("int32", lo=0), torch="float32", numpy="float64")
C("exp_int64_is_float32", lambda xp, t: xp.exp(t), T("int64"), torch="float32", numpy="float64")
C("log_float64", lambda xp, t: xp.log(t), T("float64", lo=0.125), torch="float64")
C("relu", lambda xp, t: xp.relu(t), F, torch="float32")
C("sigmoid", lambda xp, t: xp.sigmoid(t), F, torch="float32")
C("tanh_float16", lambda xp, t: xp.tanh(t), T("float16"), torch="float16")
C("clamp_both", lambda xp, t: xp.clamp(t, min=-1, max=1.5), F, torch="float32")
C("clamp_min", lambda xp, t: xp.clamp(t, min=0), F, torch="float32")
C("clamp_max_int", lambda xp, t: xp.clamp(t, max=3), I32, torch="int32")
C("clamp_int_float_bound", lambda xp, t: xp.clamp(t, min=1.5), I32, torch="float32", numpy="float64")
C("maximum", lambda xp, a, b: xp.maximum(a, b), F, F, torch="float32")
C("minimum_broadcast", lambda xp, a, b: xp.minimum(a, b), T("float32", (3, 1)), F4, torch="float32")
C("maximum_int_float", lambda xp, a, b: xp.maximum(a, b), I32, F, torch="float32", numpy="float64")
C("minimum_uint8_int32", lambda xp, a, b: xp.minimum(a, b), U, I32, torch="int32")
C("where", lambda xp, m, a, b: xp.where(m, a, b), B, F, F, torch="float32")
C("where_float_scalar", lambda xp, t: xp.where(t > 0, t, 0.0), F, torch="float32")
C("where_int_scalar", lambda xp, t: xp.where(t > 0, t, 0), I32, torch="int32")
C("where_int_float", lambda xp, m, a, b: xp.where(m, a, b), B, I32, F, torch="float32", numpy="float64")
C("where_scalars", lambda xp, m: xp.where(m, 1.0, 0.0), B, torch="float32", numpy="float64")
C("where_broadcast", lambda xp, m, a, b: xp.where(m, a, b), T("bool", (3, 1)), F4, F, torch="float32")
C("logical_and", lambda xp, a, b: xp.logical_and(a, b), B, B, torch="bool")
C("logical_or_float", lambda xp, a, b: xp.logical_or(a, b), T("float32", step=1), T("float32", step=1), torch="bool")
C("logical_xor_int", lambda xp, a, b: xp.logical_xor(a, b), I32, I32, torch="bool")
C("logical_not_float", lambda xp, t: xp.logical_not(t), T("float32", step=1), torch="bool")
C("bitwise_and_int32", lambda xp, a, b: a & b, I32, I32, torch="int32")
C("bitwise_or_uint8", lambda xp, a, b: a | b, U, U, torch="uint8")
C("bitwise_xor_int64", lambda xp, a, b: a ^ b, T("int64"), T("int64"), torch="int64")
C("invert_int32", lambda xp, t: ~t, I32, torch="int32")
C("invert_uint8", lambda xp, t: ~t, U, torch="uint8")
C("invert_float_raises", lambda xp, t: ~t, F, torch=TypeError)
C("and_float_raises", lambda xp, a, b: a & b, F, F, **TYPE_ERR)

# -- softmax and log_softmax along a dim (floating only)
C("softmax_dim1", lambda xp, t: xp.softmax(t, 1), F, torch="float32")
C("softmax_dim0", lambda xp, t: xp.softmax(t, 0), F, torch="float32")
C("log_softmax_last", lambda xp, t: xp.log_softmax(t, -1), F, torch="float32")
C("softmax_float64_3d", lambda xp, t: xp.softmax(t, 1), T("float64", (2, 3, 4)), torch="float64")
C("log_softmax_float64_3d", lambda xp, t: xp.log_softmax(t, 0), T("float64", (2, 3, 4)), torch="float64")
C("softmax_int_raises", lambda xp, t: xp.softmax(t, 1), I32, torch=RuntimeError, ls=TypeError, numpy="float64")

# -- creation (NumPy's default float is float64, torch's float32)
C("zeros_ints", lambda xp: xp.zeros(2, 3), torch="float32", numpy="float64")
C("zeros_tuple_int32", lambda xp: xp.zeros((2, 3), dtype="int32"), torch="int32")
C("ones_bool", lambda xp: xp.ones((4,), dtype="bool"), torch="bool")
C("ones_float16", lambda xp: xp.ones(2, 2, dtype="float16"), torch="float16")
C("full_int_is_int64", lambda xp: xp.full((2, 3), 7), torch="int64")
C("full_float_is_float32", lambda xp: xp.full((2,), 1.5), torch="float32", numpy="float64")
C("full_bool", lambda xp: xp.full((3,), True), torch="bool")
C("full_dtype", lambda xp: xp.full((2, 2), 2.5, dtype="float16"), torch="float16")
C("arange_end", lambda xp: xp.arange(5), torch="int64")
C("arange_step", lambda xp: xp.arange(1, 10, 3), torch="int64")
C("arange_negative_step", lambda xp: xp.arange(10, 0, -3), torch="int64")
C("arange_float_step", lambda xp: xp.arange(0, 1, 0.25), torch="float32", numpy="float64")
C("arange_float_end", lambda xp: xp.arange(5.0), torch="float32", numpy="float64")
C("arange_dtype", lambda xp: xp.arange(5, dtype="float64"), torch="float64")
C("linspace", lambda xp: xp.linspace(0, 1, 5), torch="float32", numpy="float64")
C("linspace_float64", lambda xp: xp.linspace(-1, 1, 7, dtype="float64"), torch="float64")
C("empty", lambda xp: xp.empty(2, 3), torch="float32", numpy="float64", values=False)
C("empty_int64", lambda xp: xp.empty((4,), dtype="int64"), torch="int64", values=False)
C("zeros_like_int32", lambda xp, t: xp.zeros_like(t), I32, torch="int32")
C("ones_like_float16", lambda xp, t: xp.ones_like(t), T("float16"), torch="float16")
C("full_like_int32", lambda xp, t: xp.full_like(t, 7), I32, torch="int32")
C("full_like_int32_float_value", lambda xp, t: xp.full_like(t, 2.5), I32, torch="int32")  # 2
C("empty_like_float16", lambda xp, t: xp.empty_like(t), T("float16"), torch="float16", values=False)
C("rand", lambda xp: xp.rand(3, 4), torch="float32", numpy="float64", values=False)
C("rand_float64", lambda xp: xp.rand((2, 5), dtype="float64"), torch="float64", values=False)
C("randn", lambda xp: xp.randn(3, 4), torch="float32", numpy="float64", values=False)
C("randint", lambda xp: xp.randint(0, 10, (5,)), torch="int64", values=False)

# -- matmul as torch.matmul
C("matmul_1d_1d_is_0d", lambda xp, a, b: xp.matmul(a, b), T("float32", (8,)), T("float32", (8,)), torch="float32")
C("matmul_1d_2d", lambda xp, a, b: a @ b, F4, T("float32", (4, 3)), torch="float32")
C("matmul_2d_1d", lambda xp, a, b: a @ b, F, F4, torch="float32")
C("matmul_2d_2d", lambda xp, a, b: a @ b, F, T("float32", (4, 5)), torch="float32")
C("matmul_batched_broadcast", lambda xp, a, b: a @ b, T("float32", (2, 1, 3, 4)), T("float32", (5, 4, 2)), torch="float32")
C("matmul_batched_1d", lambda xp, a, b: a @ b, T("float32", (2, 3, 4)), F4, torch="float32")
C("matmul_1d_batched", lambda xp, a, b: a @ b, F4, T("float32", (2, 4, 3)), torch="float32")
C("matmul_float64", lambda xp, a, b: xp.matmul(a, b), T("float64", (5, 7)), T("float64", (7, 3)), torch="float64")
C("matmul_float16", lambda xp, a, b: a @ b, T("float16", (3, 8)), T("float16", (8, 5)), torch="float16", tol=32)
C("matmul_bfloat16", lambda xp, a, b: a @ b, T("bfloat16", (3, 8)), T("bfloat16", (8, 5)), torch="bfloat16", numpy="float32", tol=32)
C("matmul_mixed_dtypes", lambda xp, a, b: a @ b, F, T("float64", (4, 2)), torch=RuntimeError, ls=TypeError, numpy="float64")
C("matmul_shape_mismatch", lambda xp, a, b: a @ b, F, T("float32", (5,)), **SHAPE_ERR)


# -- in-place: writes through views, casts to the target's dtype where torch allows it, refuses where torch does
@case("inplace_through_row_view", F, torch="float32")
def _(xp, t):
    row = t[0]
    row += 1
    return t


@case("inplace_column_imul", F, torch="float32")
def _(xp, t):
    t[:, 1] *= 2
    return t


@case("inplace_through_strided_view_of_view", F, torch="float32")
def _(xp, t):
    view = t[1:][:, ::2]
    view -= 1.5
    return t


@case("inplace_through_transpose", F, T("float32", (4, 3)), torch="float32")
def _(xp, t, b):
    view = t.T
    view += b
    return t


def _element_view_ref(t):
    t = t.copy()
    t[1, 2] += 1
    return t


# t[1, 2] is a 0-d view in torch (and lockstep); NumPy gives a scalar copy, so its reference is written out.
@case("inplace_through_element_view", F, torch="float32", ref=_element_view_ref)
def _(xp, t):
    element = t[1, 2]
    element += 1
    return t


@case("int_gather_is_a_copy", F, torch="float32")
def _(xp, t):
    gathered = t[[0, 2]]
    gathered *= 0
    return t


@case("mask_gather_is_a_copy", F, B, torch="float32")
def _(xp, t, m):
    gathered = t[m]
    gathered += 1
    return t


C("iadd", inplace(operator.iadd), F, F, torch="float32")
C("isub_scalar", inplace(operator.isub), F, 1.5, torch="float32")
C("imul_broadcast", inplace(operator.imul), F, F4, torch="float32")
C("itruediv_int_scalar", inplace(operator.itruediv), F, 2, torch="float32")
C("ifloordiv_int", inplace(operator.ifloordiv), I32, I_NZ, torch="int32")
C("imod_int_scalar", inplace(operator.imod), I32, -3, torch="int32")
C("ipow_float", inplace(operator.ipow), F, 2, torch="float32")
C("iand_bool", inplace(operator.iand), B, B, torch="bool")
C("ior_bool", inplace(operator.ior), B, B, torch="bool")
C("ixor_int", inplace(operator.ixor), I32, I32, torch="int32")
C("iadd_int32_int64", inplace(operator.iadd), I32, T("int64"), torch="int32")
C("iadd_float16_float32", inplace(operator.iadd), T("float16"), F, torch="float16")
C("iadd_float32_float64_0d", inplace(operator.iadd), F, T("float64", ()), torch="float32")
C("iadd_uint8_wraps", inplace(operator.iadd), U, 250, torch="uint8")
C("iadd_int_float_refused", inplace(operator.iadd), I32, 1.5, **TYPE_ERR)  # "result type Float can't be cast to ... Int"
C("itruediv_int_refused", inplace(operator.itruediv), I32, 2, **TYPE_ERR)
C("iadd_int_float_tensor_refused", inplace(operator.iadd), I32, F, **TYPE_ERR)
C("iadd_bool_int_refused", inplace(operator.iadd), B, 1, **TYPE_ERR)
C("iadd_broadcast_to_bigger_refused", inplace(operator.iadd), F4, F, **SHAPE_ERR)

# -- __setitem__: scalars, tensors, array-likes, broadcast and cast to the target
C("setitem_scalar_row", lambda xp, t: put(t, 0, 5.0), F, torch="float32")
C("setitem_negative_indices", lambda xp, t: put(t, (-1, -2), 7), F, torch="float32")
C("setitem_slice", lambda xp, t: put(t, np.s_[:, 1:3], -1.5), F, torch="float32")
C("setitem_row_tensor", lambda xp, t, r: put(t, 1, r), F, F4, torch="float32")
C("setitem_broadcast_row", lambda xp, t, r: put(t, np.s_[1:], r), F, F4, torch="float32")
C("setitem_broadcast_column", lambda xp, t, c: put(t, np.s_[:, 2:], c), F, T("float32", (3, 1)), torch="float32")
C("setitem_float_into_int_truncates", lambda xp, t: put(t, 0, 2.7), I32, torch="int32")
C("setitem_float64_into_float16", lambda xp, t, r: put(t, -1, r), T("float16"), T("float64", (4,)), torch="float16")
# torch: TypeError "can't assign a list to a torch.FloatTensor"; the API takes array-likes, as NumPy does.
C("setitem_list_value", lambda xp, t: put(t, 0, [1, 2, 3, 4]), F, torch=TypeError, ls="float32", numpy="float32")
C("setitem_ellipsis", lambda xp, t: put(t, ..., 1.5), F, torch="float32")
C("setitem_mask_scalar", lambda xp, t, m: put(t, m, 0.0), F, B, torch="float32")
C("setitem_mask_from_comparison", lambda xp, t: put(t, t > 1, 1), F, torch="float32")
C("setitem_mask_values", lambda xp, t, m: put(t, m, t[m] * 2), F, B, torch="float32")
C("setitem_row_mask", lambda xp, t, m: put(t, m, 9), F, T("bool", (3,)), torch="float32")
C("setitem_int_list", lambda xp, t: put(t, [0, 2], -1), F, torch="float32")
C("setitem_index_tensor", lambda xp, t, r: put(t, xp.asarray([2, 0]), r), F, F4, torch="float32")
C("setitem_index_tensor_columns", lambda xp, t: put(t, (slice(None), xp.asarray([3, 1])), 0.5), F, torch="float32")
C("setitem_out_of_range", lambda xp, t: put(t, 3, 1.0), F, torch=IndexError)
C("setitem_shape_mismatch", lambda xp, t, r: put(t, 0, r), F, T("float32", (3,)), **SHAPE_ERR)

# -- copy_ and fill_ return the tensor itself
C("copy_casts_float64", lambda xp, t, s: same(xp.copy_(t, s), t), F, T("float64"), torch="float32")
C("copy_broadcasts", lambda xp, t, s: same(xp.copy_(t, s), t), F, F4, torch="float32")
C("copy_float_to_int_truncates", lambda xp, t, s: same(xp.copy_(t, s), t), I32, F, torch="int32")
C("copy_into_view", lambda xp, t, s: (xp.copy_(t[:, 0], s), t)[1], F, T("float32", (3,)), torch="float32")
C("copy_shape_mismatch", lambda xp, t, s: xp.copy_(t, s), F, T("float32", (3,)), **SHAPE_ERR)
C("fill_float", lambda xp, t: same(xp.fill_(t, 2.5), t), F, torch="float32")
C("fill_int", lambda xp, t: same(xp.fill_(t, 7), t), I32, torch="int32")
C("fill_bool", lambda xp, m: same(xp.fill_(m, True), m), B, torch="bool")
C("fill_view", lambda xp, t: (xp.fill_(t[1], -1), t)[1], F, torch="float32")

# -- indexing
T3 = T("float32", (2, 3, 4))
C("index_int", lambda xp, t: t[1], F, torch="float32")
C("index_negative", lambda xp, t: t[-1], F, torch="float32")
C("index_pair_is_0d", lambda xp, t: t[1, 2], F, torch="float32")
C("index_negative_pair", lambda xp, t: t[-1, -4], F, torch="float32")
C("index_column", lambda xp, t: t[:, 1], F, torch="float32")
C("slice", lambda xp, t: t[1:3], F, torch="float32")
C("slice_steps", lambda xp, t: t[::2, 1::2], F, torch="float32")
C("ellipsis", lambda xp, t: t[..., 1], T3, torch="float32")
C("none", lambda xp, t: t[None], F, torch="float32")
C("none_middle", lambda xp, t: t[:, None], F, torch="float32")
C("ellipsis_none", lambda xp, t: t[..., None], F, torch="float32")
C("int_ellipsis_none", lambda xp, t: t[1, ..., None], T3, torch="float32")
C("index_out_of_range", lambda xp, t: t[3], F, torch=IndexError)
C("index_negative_out_of_range", lambda xp, t: t[-4], F, torch=IndexError)
C("index_column_out_of_range", lambda xp, t: t[:, 4], F, torch=IndexError)
C("too_many_indices", lambda xp, t: t[0, 0, 0], F, torch=IndexError)
# torch refuses negative steps (ValueError "step must be greater than zero"); lockstep follows NumPy (documented).
C("negative_step", lambda xp, t: t[::-1], F, torch=ValueError, ls="float32", numpy="float32")
C("negative_step_columns", lambda xp, t: t[:, ::-2], F, torch=ValueError, ls="float32", numpy="float32")
C("negative_step_range", lambda xp, t: t[3:0:-1], F4, torch=ValueError, ls="float32", numpy="float32")
C("gather_list", lambda xp, t: t[[0, 2]], F, torch="float32")
C("gather_tensor_with_repeats", lambda xp, t: t[xp.asarray([2, 0, 2])], F, torch="float32")
C("gather_columns", lambda xp, t: t[:, [1, 3]], F, torch="float32")
C("gather_pairs", lambda xp, t: t[[0, 1, 2], [3, 0, 1]], F, torch="float32")
C("gather_2d_index", lambda xp, t, i: t[i], F, T("int64", (2, 3), lo=0, hi=2), torch="float32")
C("gather_negative", lambda xp, t: t[[-1, 0]], F, torch="float32")
C("gather_out_of_range", lambda xp, t: t[[0, 3]], F, torch=IndexError)
C("mask_same_shape", lambda xp, t, m: t[m], F, B, torch="float32")
C("mask_rows", lambda xp, t, m: t[m], F, T("bool", (3,)), torch="float32")
C("mask_from_comparison", lambda xp, t: t[t > 0], F, torch="float32")
C("mask_shape_mismatch", lambda xp, t, m: t[m], F, T("bool", (4,)), torch=IndexError)
C("len", lambda xp, t: len(t), F, torch=int)
C("len_0d", lambda xp, s: len(s), T("float32", ()), torch=TypeError)
C("list_of_rows", lambda xp, t: list(t), F, torch="float32")
C("list_of_0d", lambda xp, t: list(t), F4, torch="float32")
C("iterate_0d", lambda xp, s: list(s), T("float32", ()), torch=TypeError)
C("tolist", lambda xp, t: t.tolist(), F, torch=float)
C("item_0d", lambda xp, s: s.item(), T("float32", ()), torch=float)
C("item_1x1", lambda xp, t: t.item(), T("float32", (1, 1)), torch=float)
C("item_int64", lambda xp, t: t.item(), T("int64", (1,)), torch=int)
C("item_bool", lambda xp, m: m.item(), T("bool", ()), torch=bool)
C("item_many", lambda xp, t: t.item(), F, torch=RuntimeError, ls=ValueError, numpy=ValueError)
C("float_one_element", lambda xp, t: float(t), T("float32", (1,)), torch=float, numpy=TypeError, ref=lambda t: float(t[0]))
C("float_0d", lambda xp, s: float(s), T("float32", ()), torch=float)
C("int_truncates", lambda xp, t: int(t), V([-2.5], "float32"), torch=int, numpy=TypeError, ref=lambda t: int(t[0]))
C("int_0d", lambda xp, s: int(s), T("int64", ()), torch=int)
C("bool_one_element", lambda xp, t: bool(t), T("float32", (1,), lo=0, hi=1, step=1), torch=bool)
C("bool_many", lambda xp, t: bool(t), F, torch=RuntimeError, ls=ValueError, numpy=ValueError)
C("float_many", lambda xp, t: float(t), F, torch=ValueError, numpy=TypeError)
C("np_asarray", lambda xp, t: np.asarray(t), F, torch="float32", cpu_only=True)
C("np_asarray_int64", lambda xp, t: np.asarray(t), T("int64"), torch="int64", cpu_only=True)


# ---------------------------------------------------------------- running a case


def is_error(outcome):
    return isinstance(outcome, type) and issubclass(outcome, BaseException)


# Python's own TypeErrors for a method or operator a class lacks: an operation missing, not one refused
MISSING = re.compile(
    r"unsupported operand type|bad operand type|object is not (iterable|callable|subscriptable)|has no len\(\)|does not support item"
)


@contextlib.contextmanager
def quiet():
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


def arguments(xp, inputs):
    return [xp.tensor(x, dtype) if dtype else x for x, dtype in inputs]


def outcome(case, xp, inputs, expected):
    """Run the case and check its outcome is `expected`; return the result (None for an exception)."""
    args = arguments(xp, inputs)  # first: an input lockstep cannot make is no expected exception
    if is_error(expected):
        with pytest.raises(expected) as raised, quiet():
            case.f(xp, *args)
        assert not MISSING.search(str(raised.value)), f"{xp.module.__name__} lacks the operation: {raised.value}"
        return None
    with quiet():
        result = case.f(xp, *args)
    check_kind(result, expected)
    return result


def check_kind(result, expected):
    if isinstance(result, list):
        for item in result:
            check_kind(item, expected)
    elif isinstance(expected, type):
        assert type(result) is expected, f"{result!r}: expected a Python {expected.__name__}"
    else:
        assert dtype_name(result) == expected, f"dtype {dtype_name(result)}, expected {expected}"


def reference(case, inputs):
    """NumPy's values, with floating inputs in float64."""
    wide = [(x.astype(np.float64), "float64") if dtype in FLOATS else (x, dtype) for x, dtype in inputs]
    if case.ref is not None:
        return case.ref(*[x for x, _ in wide])
    with quiet():
        return case.f(NUMPY, *arguments(NUMPY, wide))


def assert_values(got, want, dtype, tol):
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_values(g, w, dtype, tol)
        return
    if type(want) in (bool, int, float):  # from item(), tolist(), len() ...
        assert got == want or (got != got and want != want), f"{got} != {want}"
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"shape {got.shape}, expected {want.shape}"
    if dtype in FLOATS:
        finite = np.abs(want[np.isfinite(want)])
        eps = tol * EPS[dtype]
        assert np.allclose(got, want, rtol=eps, atol=eps * max(1.0, finite.max(initial=0)), equal_nan=True), f"{got}\n!=\n{want}"
    else:
        assert np.array_equal(got, want), f"{got}\n!=\n{want}"


# ---------------------------------------------------------------- the tests


def test_the_table_is_well_formed():
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)), "case ids repeat"
    for c in CASES:
        if is_error(c.torch) and issubclass(c.torch, RuntimeError):  # torch's catch-all: the case says what lockstep raises
            assert c.ls is not None and not (is_error(c.ls) and issubclass(c.ls, RuntimeError)), c.id
            assert c.numpy is not None, c.id


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_lockstep_conforms(rng, device, case):
    inputs = case.draw(rng)
    expected = case.ls if case.ls is not None else case.torch
    if case.cpu_only and device != "cpu":
        expected = TypeError  # NumPy reads host memory: a GPU tensor says to copy it to the host first, as torch's
    xp = Lockstep(device)
    result = outcome(case, xp, inputs, expected)
    if isinstance(result, lockstep.Tensor):
        assert result.device == device
    if not is_error(expected) and case.values:
        assert_values(xp.host(result), reference(case, inputs), expected, case.tol)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_numpy_outcome_is_as_documented(rng, case):
    inputs = case.draw(rng)
    outcome(case, NUMPY, inputs, case.numpy if case.numpy is not None else case.torch)
    expected = case.ls if case.ls is not None else case.torch
    if not is_error(expected) and case.values:
        reference(case, inputs)  # runs


@pytest.mark.torch
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_torch_outcome_is_as_written(rng, case):
    inputs = case.draw(rng)
    xp = Torch("cpu")  # the CPU, where torch raises for integer // and % by zero
    result = outcome(case, xp, inputs, case.torch)
    if not is_error(case.torch) and case.values:
        assert_values(xp.host(result), reference(case, inputs), case.torch, case.tol)


# ---------------------------------------------------------------- random numbers, and np.asarray as a view


def test_random_creation_shapes_dtypes_and_ranges(rng, device):
    g = lockstep.Generator(int(rng.integers(2**31)))
    u = lockstep.rand((200, 500), generator=g, device=device)
    assert (u.shape, u.dtype, u.device) == ((200, 500), "float32", device)
    u = u.to("cpu").numpy()
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    z = lockstep.randn(200, 500, dtype="float64", generator=g, device=device)
    assert (z.shape, z.dtype) == ((200, 500), "float64")
    z = z.to("cpu").numpy()
    assert abs(z.mean()) < 0.02 and abs(z.std() - 1) < 0.02
    k = lockstep.randint(-3, 5, (10000,), generator=g, device=device)
    assert (k.shape, k.dtype) == ((10000,), "int64")
    assert set(np.unique(k.to("cpu").numpy())) == set(range(-3, 5))


def _draws(device, generator):
    return [
        lockstep.rand(64, generator=generator, device=device),
        lockstep.randn((8, 8), generator=generator, device=device),
        lockstep.randint(0, 1000, (64,), generator=generator, device=device),
    ]


def test_same_seed_same_numbers(rng, device):
    seed = int(rng.integers(2**31))
    first, again, other = (_draws(device, lockstep.Generator(s)) for s in (seed, seed, seed + 1))
    for a, b, c in zip(first, again, other):
        assert np.array_equal(a.to("cpu").numpy(), b.to("cpu").numpy())
        assert not np.array_equal(a.to("cpu").numpy(), c.to("cpu").numpy())
    lockstep.manual_seed(seed)
    x = lockstep.rand(64, device=device).to("cpu").numpy()
    lockstep.manual_seed(seed)
    y = lockstep.rand(64, device=device).to("cpu").numpy()
    z = lockstep.rand(64, device=device).to("cpu").numpy()
    assert np.array_equal(x, y) and not np.array_equal(y, z)  # the global generator moves on


@pytest.mark.gpu
def test_same_numbers_on_every_device(rng):
    seed = int(rng.integers(2**31))
    on_cpu, on_gpu = (_draws(device, lockstep.Generator(seed)) for device in ("cpu", "cuda:0"))
    for name, a, b in zip(("rand", "randn", "randint"), on_cpu, on_gpu):
        a, b = a.numpy(), b.to("cpu").numpy()
        if name == "randn":  # through log and cos, whose last bit may differ between the CPU and the GPU
            assert np.allclose(a, b, rtol=4e-7, atol=4e-7), name
        else:
            assert np.array_equal(a, b), name


def test_np_asarray_is_a_view_of_a_cpu_tensor(rng):
    t = lockstep.asarray(rng.uniform(-1, 1, size=(3, 4)).astype(np.float32)).clone()
    view = np.asarray(t)
    view[1, 2] = 42.0
    assert float(t[1, 2]) == 42.0
