"""Indexing tensors as NumPy and PyTorch users expect: ints (negative ones count from the end, IndexError
past it), slices with any step (a negative step is a view with a negative stride, as NumPy's), None and
Ellipsis, integer arrays and boolean masks (a new tensor, gathered by a kernel); and assignment through the
same keys, broadcasting and casting the value."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _core, _ops
from ._core import Tensor
from ._promotion import ITEMSIZE


def _is_advanced(k: Any) -> bool:
    if isinstance(k, Tensor):
        return k.ndim > 0 or k.dtype == "bool"
    if isinstance(k, np.ndarray):
        return k.ndim > 0 or k.dtype == np.bool_
    return isinstance(k, (list, tuple))


def _expand_ellipsis(t: Tensor, key: Any) -> list[Any]:
    keys = list(key) if isinstance(key, tuple) else [key]
    if [k is Ellipsis for k in keys].count(True) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")

    def used(k: Any) -> int:
        if k is None or k is Ellipsis:
            return 0
        if isinstance(k, (Tensor, np.ndarray)) and str(k.dtype) in ("bool", "bool_"):
            return max(k.ndim, 1)
        return 1

    taken = sum(used(k) for k in keys)
    if taken > t.ndim:
        raise IndexError(f"too many indices for a tensor of {t.ndim} dimensions ({taken} given)")
    at = next((i for i, k in enumerate(keys) if k is Ellipsis), None)
    if at is None:
        return keys + [slice(None)] * (t.ndim - taken)
    return keys[:at] + [slice(None)] * (t.ndim - taken) + keys[at + 1 :]


def _slice(t: Tensor, dim: int, k: slice) -> Tensor:
    start, stop, step = k.indices(t.shape[dim])
    picked = range(start, stop, step)
    if step > 0:
        return t.slice(dim, start, stop, step)
    if len(picked) == 0:
        return t.slice(dim, 0, 0, 1)
    # The same elements in increasing order, then reversed (a negative stride).
    return t.slice(dim, picked[-1], picked[0] + 1, -step).flip_view(dim)


def _integer(t: Tensor, dim: int, k: Any) -> Tensor:
    i, n = int(k), t.shape[dim]
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of range for dimension {dim} with extent {n}")
    return t.select(dim, i)


def _basic(t: Tensor, keys: list[Any]) -> tuple[Tensor, list[tuple[int, Any]]]:
    """Applies every basic key; returns the view and the advanced keys with the dims they now index."""
    dim, advanced = 0, []
    for k in keys:
        if k is None:
            t = t.unsqueeze(dim)
            dim += 1
        elif isinstance(k, slice):
            t = _slice(t, dim, k)
            dim += 1
        elif _is_advanced(k):
            advanced.append((dim, k))
            dim += max(k.ndim, 1) if str(getattr(k, "dtype", "")) in ("bool", "bool_") else 1
        elif isinstance(k, (bool, np.bool_)):
            raise IndexError("a bool scalar index is not supported; use a bool tensor of the dimension's shape")
        elif isinstance(k, (int, np.integer)) or (isinstance(k, Tensor) and k.ndim == 0 and k.dtype in ("uint8", "int32", "int64")):
            t = _integer(t, dim, k.item() if isinstance(k, Tensor) else k)
        else:
            raise IndexError(f"tensors index with ints, slices, None, ..., integer arrays and bool masks, not {type(k).__name__}")
    return t, advanced


def _host_array(k: Any) -> np.ndarray:
    if isinstance(k, Tensor):
        return np.asarray(k.to_device("cpu").numpy())
    return np.asarray(k)


def _positions(t: Tensor, advanced: list[tuple[int, Any]]) -> tuple[int, int, np.ndarray]:
    """The advanced keys (adjacent dims) as (first dim, dims covered, int64 positions into those dims
    flattened, shaped as the result's new dims)."""
    dims = []
    arrays = []
    for dim, k in advanced:
        a = _host_array(k)
        if a.dtype == np.bool_:
            if a.shape != tuple(t.shape[dim : dim + a.ndim]):
                raise IndexError(f"the mask's shape {a.shape} does not match the indexed shape {tuple(t.shape[dim : dim + a.ndim])}")
            dims.extend(range(dim, dim + a.ndim))
            arrays.extend(np.nonzero(a))
        else:
            if a.dtype.kind not in "iu":
                raise IndexError(f"index arrays must hold integers or bools, not {a.dtype}")
            n = t.shape[dim]
            if a.size and (a.min() < -n or a.max() >= n):
                raise IndexError(f"an index is out of range for dimension {dim} with extent {n}")
            dims.append(dim)
            arrays.append(np.where(a < 0, a + n, a))
    if dims != list(range(dims[0], dims[0] + len(dims))):
        raise IndexError("advanced indices must index adjacent dimensions (separated ones are not supported)")
    try:
        arrays = np.broadcast_arrays(*arrays)
    except ValueError as e:
        raise IndexError(f"the index arrays do not broadcast together: {e}") from None
    extents = [t.shape[d] for d in dims]
    flat = np.ravel_multi_index(arrays, extents) if arrays[0].size else np.zeros(arrays[0].shape, np.int64)
    return dims[0], len(dims), np.asarray(flat, dtype=np.int64)


def _merged(t: Tensor, first: int, count: int) -> Tensor:
    """t with dims first .. first + count - 1 merged into one (a copy where the strides need one)."""
    shape = list(t.shape[:first]) + [-1] + list(t.shape[first + count :])
    try:
        return t.reshape(shape)
    except _core.ShapeError:
        return t.contiguous().reshape(shape)


def getitem(t: Tensor, key: Any) -> Tensor:
    view, advanced = _basic(t, _expand_ellipsis(t, key))
    if not advanced:
        return view
    first, count, positions = _positions(view, advanced)
    merged = _merged(view, first, count)
    index = _core.from_dlpack(positions.reshape(-1)).to_device(t.device)
    gathered = _core.index_select(merged, first, index)
    return gathered.reshape(list(view.shape[:first]) + list(positions.shape) + list(view.shape[first + count :]))


def setitem(t: Tensor, key: Any, value: Any) -> None:
    view, advanced = _basic(t, _expand_ellipsis(t, key))
    if not advanced:
        _core.copy_into(view, _value(value, view))
        return
    first, count, positions = _positions(view, advanced)
    merged = _merged(view, first, count)
    if merged.data_ptr != view.data_ptr or tuple(merged.strides[first + 1 :]) != tuple(view.strides[first + count :]):
        raise IndexError("assignment through an index array needs the indexed dimensions to be mergeable as a view; call .contiguous() first")
    selected = list(view.shape[:first]) + list(positions.shape) + list(view.shape[first + count :])
    source = _value(value, view)
    if source.ndim:
        source = source.expand(selected)
    flat = positions.reshape(-1)
    source = _merged(source, first, positions.ndim) if positions.ndim != 1 and source.ndim else source
    # One copy per position (a scatter kernel is still to come): positions are usually few.
    for j, at in enumerate(flat.tolist()):
        part = source.select(first, j) if source.ndim else source
        _core.copy_into(merged.select(first, at), part)


def _span(t: Tensor) -> tuple[int, int]:
    """The bytes [first, last] the tensor's elements lie in."""
    item = ITEMSIZE[t.dtype]
    low = sum((n - 1) * s for n, s in zip(t.shape, t.strides) if s < 0 and n > 0)
    high = sum((n - 1) * s for n, s in zip(t.shape, t.strides) if s > 0 and n > 0)
    return t.data_ptr + low * item, t.data_ptr + high * item + item - 1


def _value(value: Any, like: Tensor) -> Tensor:
    if isinstance(value, Tensor):
        if value.device != like.device:
            return value.to_device(like.device)
        if value.size and like.size:
            (a0, a1), (b0, b1) = _span(value), _span(like)
            if a0 <= b1 and b0 <= a1:  # t[1:] = t[:-1]: read everything before writing, as PyTorch does
                return value.clone()
        return value
    return _ops.as_dtype(value, like.dtype, like.device) if np.ndim(value) == 0 else _ops.as_dtype(np.asarray(value), like.dtype, like.device)
