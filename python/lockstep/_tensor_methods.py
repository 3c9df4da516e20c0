"""The methods and operators the package adds to _core.Tensor: .to, .numpy, indexing, repr, .T,
arithmetic operators and the ops as methods (x.sum(dim=0) is lockstep.sum(x, dim=0)).

python/stubgen_patterns.txt declares them in _core.pyi; keep the two in step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _ops
from ._core import Tensor
from ._devices import Device
from ._tensor import dtype_name


def _to(self: Tensor, target: Any) -> Tensor:
    """A copy on another device ("cpu", "cuda:0", a Device) or with another
    dtype ("float16", numpy.float16, torch.float16); this tensor itself when
    it is already there."""
    if isinstance(target, (str, Device)) or type(target).__name__ == "device":  # also torch.device
        name = str(target)
        if name == "cpu" or name.startswith("cuda"):
            return self.to_device(name)
    return self.to_dtype(dtype_name(target))


def _numpy(self: Tensor) -> np.ndarray:
    """A NumPy array over this CPU tensor's memory (no copy)."""
    if self.dtype == "bfloat16":
        raise TypeError("NumPy has no bfloat16; call .to('float32') first")
    return self.numpy_view()


def _array(self: Tensor, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
    """NumPy's array protocol: np.asarray(t) is a view, np.array(t) a copy."""
    if copy:
        return np.array(self.numpy(), dtype=dtype, copy=True)
    return np.asarray(self.numpy(), dtype=dtype)


def _getitem(self: Tensor, key: Any) -> Tensor:
    """Basic indexing: ints and slices with positive steps, per dimension."""
    keys = key if isinstance(key, tuple) else (key,)
    if len(keys) > self.ndim:
        raise IndexError(f"too many indices for a tensor of {self.ndim} dimensions")
    t, dim = self, 0
    for k in keys:
        if isinstance(k, slice):
            start, stop, step = k.indices(t.shape[dim])
            if step <= 0:
                raise IndexError("lockstep slices need a positive step")
            t = t.slice(dim, start, stop, step)
            dim += 1
        elif isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            t = t.select(dim, int(k))
        else:
            raise IndexError(f"lockstep tensors index with ints and slices, got {type(k).__name__}")
    return t


def _repr(self: Tensor) -> str:
    body = ""
    if self.device == "cpu" and self.size <= 64 and self.dtype != "bfloat16":
        body = np.array2string(self.numpy_view(), separator=", ") + ", "
    return f"lockstep.Tensor({body}shape={self.shape}, dtype={self.dtype}, device={self.device})"


Tensor.to = _to  # type: ignore
Tensor.numpy = _numpy  # type: ignore
Tensor.__array__ = _array  # type: ignore
# NumPy's operators defer to Tensor's, so ``array * tensor`` runs on lockstep
# and gives a Tensor, as ``tensor * array`` does.
Tensor.__array_ufunc__ = None  # type: ignore
Tensor.__getitem__ = _getitem  # type: ignore
Tensor.__repr__ = _repr  # type: ignore
Tensor.T = property(lambda self: self.permute(list(range(self.ndim))[::-1]), doc="A view with the dimensions reversed.")  # type: ignore
Tensor.__neg__ = lambda self: _ops.map("neg", self)  # type: ignore
Tensor.__abs__ = lambda self: _ops.map("abs", self)  # type: ignore
Tensor.__matmul__ = lambda self, other: _ops.matmul(self, other)  # type: ignore
for _name, _op in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div")):
    setattr(Tensor, f"__{_name}__", (lambda op: lambda self, other: _ops.zip(op, self, other))(_op))
    setattr(Tensor, f"__r{_name}__", (lambda op: lambda self, other: _ops.zip(op, other, self))(_op))
# The package's functions as methods (x.sum(dim=0) is lockstep.sum(x, dim=0)), docstrings included.
Tensor.sum, Tensor.mean, Tensor.max, Tensor.min, Tensor.prod = _ops.sum, _ops.mean, _ops.max, _ops.min, _ops.prod  # type: ignore
Tensor.exp, Tensor.log, Tensor.sqrt = _ops.exp, _ops.log, _ops.sqrt  # type: ignore
Tensor.relu, Tensor.sigmoid, Tensor.tanh = _ops.relu, _ops.sigmoid, _ops.tanh  # type: ignore
