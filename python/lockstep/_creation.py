"""Making new tensors as PyTorch's creation functions do: zeros, ones, full, arange, linspace, the *_like
forms, and random numbers (rand, randn, randint) from counter-based generators, filled by kernels on the
tensor's device. A seed gives the same numbers on every device (not PyTorch's numbers)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _core
from ._core import Tensor
from ._devices import DeviceLike, device_name_or_default
from ._promotion import DEFAULT_FLOAT, is_floating, scalar_dtype
from ._tensor import DTypeLike, dtype_name

# PyTorch's default generator starts from this seed too (torch.initial_seed()).
_DEFAULT_SEED = 67280421310721


class Generator:
    """A source of random numbers: a seed and a counter of the numbers drawn so far. Element i of a draw is
    a hash of (seed, counter + i), so the numbers do not depend on the device or the launch."""

    def __init__(self, seed: int = _DEFAULT_SEED) -> None:
        self.manual_seed(seed)

    def manual_seed(self, seed: int) -> Generator:
        """Starts over from ``seed``."""
        self.seed, self.offset = int(seed) & (2**64 - 1), 0
        return self

    def initial_seed(self) -> int:
        """The seed this generator started from."""
        return self.seed

    def _take(self, count: int) -> int:
        offset, self.offset = self.offset, self.offset + count
        return offset


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seeds the default generator (rand, randn and randint without ``generator=``)."""
    return default_generator.manual_seed(seed)


def _shape(size: tuple[Any, ...]) -> list[int]:
    """zeros(2, 3) and zeros((2, 3)) alike."""
    dims = size[0] if len(size) == 1 and isinstance(size[0], (Sequence, np.ndarray)) else size
    out = [int(d) for d in dims]
    if any(d < 0 for d in out):
        raise ValueError(f"negative extent in shape {tuple(out)}")
    return out


def _new(shape: list[int], dtype: DTypeLike, device: DeviceLike) -> Tensor:
    return _core.empty(shape, dtype_name(dtype), device_name_or_default(device))


def full(size: Sequence[int], fill_value: Any, dtype: DTypeLike = None, device: DeviceLike = None) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value``; the dtype is the value's (bool, int64 or float32) unless given."""
    out = _new(_shape((size,)), dtype if dtype is not None else scalar_dtype(fill_value), device)
    return out.fill_(fill_value)


def zeros(*size: Any, dtype: DTypeLike = DEFAULT_FLOAT, device: DeviceLike = None) -> Tensor:
    """A tensor of zeros (float32 unless ``dtype`` says otherwise)."""
    return _new(_shape(size), dtype, device).fill_(0)


def ones(*size: Any, dtype: DTypeLike = DEFAULT_FLOAT, device: DeviceLike = None) -> Tensor:
    """A tensor of ones (float32 unless ``dtype`` says otherwise)."""
    return _new(_shape(size), dtype, device).fill_(1)


def empty_like(t: Tensor, dtype: DTypeLike = None, device: DeviceLike = None) -> Tensor:
    """An uninitialised tensor of ``t``'s shape (and dtype and device, unless given)."""
    return _new(list(t.shape), dtype or t.dtype, device or t.device)


def zeros_like(t: Tensor, dtype: DTypeLike = None, device: DeviceLike = None) -> Tensor:
    """Zeros of ``t``'s shape (and dtype and device, unless given)."""
    return empty_like(t, dtype, device).fill_(0)


def ones_like(t: Tensor, dtype: DTypeLike = None, device: DeviceLike = None) -> Tensor:
    """Ones of ``t``'s shape (and dtype and device, unless given)."""
    return empty_like(t, dtype, device).fill_(1)


def full_like(t: Tensor, fill_value: Any, dtype: DTypeLike = None, device: DeviceLike = None) -> Tensor:
    """``fill_value`` in ``t``'s shape (and dtype and device, unless given)."""
    return empty_like(t, dtype, device).fill_(fill_value)


def arange(start: Any, end: Any = None, step: Any = 1, dtype: DTypeLike = None, device: DeviceLike = None) -> Tensor:
    """``start, start + step, ...`` below ``end`` (``arange(end)`` starts at 0): int64 when every bound is an
    int, else float32, unless ``dtype`` is given."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    count = max(0, math.ceil((end - start) / step))
    all_ints = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (start, end, step))
    out = _new([count], dtype if dtype is not None else ("int64" if all_ints else DEFAULT_FLOAT), device)
    _core.fill_sequence(out, float(start), float(step), 0.0, False)
    return out


def linspace(start: float, end: float, steps: int, dtype: DTypeLike = DEFAULT_FLOAT, device: DeviceLike = None) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end``, both included (float32 unless given)."""
    if steps < 0:
        raise ValueError("linspace: steps must be non-negative")
    out = _new([int(steps)], dtype, device)
    step = (end - start) / (steps - 1) if steps > 1 else 0.0
    _core.fill_sequence(out, float(start), float(step), float(end), True)
    return out


def _random(size: tuple[Any, ...], kind: int, low: float, high: float, dtype: DTypeLike, device: DeviceLike, generator: Generator | None) -> Tensor:
    out = _new(_shape(size), dtype, device)
    source = generator if generator is not None else default_generator
    _core.fill_random(out, source.seed, source._take(out.size), kind, float(low), float(high))
    return out


def rand(*size: Any, dtype: DTypeLike = DEFAULT_FLOAT, device: DeviceLike = None, generator: Generator | None = None) -> Tensor:
    """Uniform random numbers in [0, 1)."""
    if not is_floating(dtype_name(dtype)):
        raise TypeError(f"rand makes floating-point tensors, not {dtype_name(dtype)}")
    return _random(size, 0, 0.0, 1.0, dtype, device, generator)


def randn(*size: Any, dtype: DTypeLike = DEFAULT_FLOAT, device: DeviceLike = None, generator: Generator | None = None) -> Tensor:
    """Normally distributed random numbers, mean 0 and deviation 1."""
    if not is_floating(dtype_name(dtype)):
        raise TypeError(f"randn makes floating-point tensors, not {dtype_name(dtype)}")
    return _random(size, 1, 0.0, 1.0, dtype, device, generator)


def randint(
    low: int,
    high: int | None = None,
    size: Sequence[int] = (),
    dtype: DTypeLike = "int64",
    device: DeviceLike = None,
    generator: Generator | None = None,
) -> Tensor:
    """Random integers in [low, high) (``randint(high, size)`` starts at 0)."""
    if high is None:
        low, high = 0, low
    if high <= low:
        raise ValueError(f"randint: high ({high}) must be greater than low ({low})")
    return _random((size,), 2, low, high, dtype, device, generator)
