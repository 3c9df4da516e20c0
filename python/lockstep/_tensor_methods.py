"""The methods and operators the package adds to _core.Tensor: .to, .numpy, indexing, repr, .T,
arithmetic operators and the ops as methods (x.sum(dim=0) is lockstep.sum(x, dim=0)).

python/stubgen_patterns.txt declares them in _core.pyi; keep the two in step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _indexing, _ops
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


def _item(self: Tensor) -> bool | int | float:
    """The value of a one-element tensor as a Python number."""
    if self.size != 1:
        raise ValueError(f"a tensor with {self.size} elements cannot be converted to a Python number (item() needs exactly one)")
    return _host(self).reshape(-1)[0].item()


def _host(self: Tensor) -> np.ndarray:
    t = self.to_device("cpu") if self.device != "cpu" else self
    return (t.to_dtype("float32") if t.dtype == "bfloat16" else t).numpy_view()


def _len(self: Tensor) -> int:
    """The extent of the first dimension."""
    if self.ndim == 0:
        raise TypeError("len() of a 0-d tensor")
    return self.shape[0]


def _iter(self: Tensor):  # noqa: ANN202 (a generator)
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    for i in range(self.shape[0]):
        yield self.select(0, i)


def _bool(self: Tensor) -> bool:
    if self.size != 1:
        raise ValueError(f"the truth value of a tensor with {self.size} elements is ambiguous; use .any() or .all()")
    return bool(_item(self))


def _index(self: Tensor) -> int:
    if self.dtype not in ("bool", "uint8", "int32", "int64") or self.size != 1:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return int(_item(self))


_TYPESTR = {"bool": "|b1", "uint8": "|u1", "int32": "<i4", "int64": "<i8", "float16": "<f2", "float32": "<f4", "float64": "<f8"}


def _cuda_array_interface(self: Tensor) -> dict[str, Any]:
    """Numba's and CuPy's protocol for GPU arrays (CUDA tensors only)."""
    if not self.device.startswith("cuda"):
        raise AttributeError(f"__cuda_array_interface__ is for tensors on a GPU; this one is on {self.device} (use np.asarray)")
    if self.dtype not in _TYPESTR:
        raise AttributeError(f"the CUDA array interface has no {self.dtype}")
    item = int(np.dtype(_TYPESTR[self.dtype]).itemsize)
    strides = None if self.is_contiguous() else tuple(s * item for s in self.strides)
    return {"shape": tuple(self.shape), "typestr": _TYPESTR[self.dtype], "data": (self.data_ptr, False), "version": 3, "strides": strides}


def _tolist(self: Tensor) -> Any:
    """The elements as nested Python lists (a number for a 0-d tensor)."""
    return _host(self).tolist()


def _numel(self: Tensor) -> int:
    """The number of elements (PyTorch's name for .size)."""
    return self.size


def _copy_(self: Tensor, source: Any) -> Tensor:
    """Copies ``source`` (broadcast to this tensor's shape, cast to its dtype) into this tensor, in place."""
    _indexing.setitem(self, (), source)
    return self


def _fill_(self: Tensor, value: Any) -> Tensor:
    """Fills this tensor (in place, through views) with ``value``."""
    _indexing.setitem(self, (), value)
    return self


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
Tensor.__getitem__ = _indexing.getitem  # type: ignore
Tensor.__setitem__ = _indexing.setitem  # type: ignore
Tensor.__repr__ = _repr  # type: ignore
Tensor.__len__ = _len  # type: ignore
Tensor.__iter__ = _iter  # type: ignore
Tensor.__bool__ = _bool  # type: ignore
Tensor.__float__ = lambda self: float(_item(self))  # type: ignore
Tensor.__int__ = lambda self: int(_item(self))  # type: ignore
Tensor.__index__ = _index  # type: ignore
Tensor.__hash__ = object.__hash__  # type: ignore (== is elementwise; tensors hash by identity, as PyTorch's)
Tensor.__cuda_array_interface__ = property(_cuda_array_interface)  # type: ignore
Tensor.item = _item  # type: ignore
Tensor.tolist = _tolist  # type: ignore
Tensor.numel = _numel  # type: ignore
Tensor.copy_ = _copy_  # type: ignore
Tensor.fill_ = _fill_  # type: ignore
Tensor.T = property(lambda self: self.permute(list(range(self.ndim))[::-1]), doc="A view with the dimensions reversed.")  # type: ignore
Tensor.mT = property(lambda self: self.transpose(-2, -1), doc="A view with the last two dimensions swapped (PyTorch's mT).")  # type: ignore
Tensor.__neg__ = lambda self: _ops.neg(self)  # type: ignore
Tensor.__pos__ = lambda self: self  # type: ignore
Tensor.__abs__ = lambda self: _ops.abs(self)  # type: ignore
Tensor.__invert__ = lambda self: _ops.bitwise_not(self)  # type: ignore
Tensor.__matmul__ = lambda self, other: _ops.matmul(self, other)  # type: ignore
Tensor.__rmatmul__ = lambda self, other: _ops.matmul(other, self)  # type: ignore
# Arithmetic, bitwise and comparison operators, their reflected and in-place forms, as PyTorch promotes.
for _name, _op in _ops.OPERATORS.items():
    setattr(Tensor, f"__{_name}__", (lambda op: lambda self, other: _ops.zip(op, self, other))(_op))
    setattr(Tensor, f"__r{_name}__", (lambda op: lambda self, other: _ops.zip(op, other, self))(_op))
    setattr(Tensor, f"__i{_name}__", (lambda op: lambda self, other: _ops.zip_(op, self, other))(_op))
for _name in _ops.COMPARISONS:
    # t == None is False (Python's identity fallback), as in PyTorch.
    setattr(Tensor, f"__{_name}__", (lambda op: lambda self, other: NotImplemented if other is None else _ops.zip(op, self, other))(_name))
# The package's functions as methods (x.sum(dim=0) is lockstep.sum(x, dim=0)), docstrings included.
for _name in _ops.METHODS:
    setattr(Tensor, _name, getattr(_ops, _name))
