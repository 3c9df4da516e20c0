"""Kernels from source: lockstep.compile, its Module, each Kernel, and launches ``kernel[grid, block](*args)``."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from . import _core, _libclang
from ._devices import DeviceLike, device_name_or_default
from ._output import kernel_output_to_sys_stdout


class FibersWarning(UserWarning):
    """A kernel runs on fibers (a stack per thread, several times slower) though region loops are
    enabled: said once per kernel, with the reason and where. ``LOCKSTEP_QUIET_FIBERS=1`` (or
    ``warnings.simplefilter("ignore", lockstep.FibersWarning)``) silences it."""


@dataclasses.dataclass(frozen=True)
class Engine:
    """How a kernel runs under the current settings: ``name`` is "gpu", "loops" (the block as loops
    over its threads, the emulator's fast path) or "fibers"; ``why`` says why not loops; ``where``
    is the kernel's "file:line" where the compiler recorded it."""

    name: str
    why: str
    where: str


class Kernel:
    """A kernel of a compiled module: ``kernel[grid, block](*args)``, or
    ``kernel[grid, block, shared_bytes]`` / ``[grid, block, shared_bytes, stream]``
    where ``stream`` is a CUDA stream handle (int, or an object with ``.cuda_stream``
    or ``.ptr``, such as torch's and CuPy's streams). Arguments: tensors or
    arrays (by pointer), ints and floats (converted to the parameter's type)
    and bytes (a struct by value)."""

    def __init__(self, function: _core.Function, device: str):
        self._function = function
        self._device = device

    @property
    def name(self) -> str:
        """The kernel's name expression, e.g. "saxpy" or "matmul<16>"."""
        return self._function.name

    @property
    def signature(self) -> str:
        """The parameters as lockstep sees them, e.g. "saxpy(float32, const float32*, float32*, int32)"."""
        return self._function.signature

    @property
    def engine(self) -> Engine:
        """Which engine runs this kernel now, and why not region loops (see Engine)."""
        return Engine(*self._function.engine)

    def set_max_dynamic_shared_bytes(self, nbytes: int) -> None:
        """Allow more than 48 KiB of dynamic shared memory (up to 227 KiB on an H100)."""
        self._function.set_max_dynamic_shared_bytes(nbytes)

    def _launch(self, grid: list[int], block: list[int], arguments: list[Any]) -> None:
        """A launch by lockstep's own code (fused kernels), whose shapes and arguments are right by construction
        and which prints nothing: without the checks and the capture of printf that a user's launch gets."""
        self._function.launch(self._device, grid, block, 0, 0, arguments)

    def __getitem__(self, config: tuple[Any, ...]) -> _Launch:
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise TypeError("launch with kernel[grid, block], kernel[grid, block, shared_bytes] or kernel[grid, block, shared_bytes, stream]")
        grid, block, shared, stream = (tuple(config) + (0, 0))[:4]
        return _Launch(self, _extents(grid, "grid"), _extents(block, "block"), int(shared), _stream_handle(stream))

    def __repr__(self) -> str:
        return f"<lockstep kernel {self.signature} on {self._device}>"


def _extents(value: Any, what: str) -> list[int]:
    def is_count(e: Any) -> bool:
        return isinstance(e, (int, np.integer)) and not isinstance(e, bool) and bool(e >= 0)

    extents = [value] if is_count(value) else list(value) if isinstance(value, (tuple, list)) else []
    if not 1 <= len(extents) <= 3 or not all(is_count(e) for e in extents):
        raise TypeError(f"{what} must be an int or a tuple of 1 to 3 non-negative ints, got {value!r}")
    return [int(e) for e in extents]


def _stream_handle(stream: Any) -> int:
    if stream is None or isinstance(stream, int):
        return stream or 0
    for attribute in ("cuda_stream", "ptr", "handle"):
        if hasattr(stream, attribute):
            return int(getattr(stream, attribute))
    raise TypeError(f"cannot use {type(stream).__name__} as a CUDA stream; pass its handle as an int")


class _Launch:
    def __init__(self, kernel: Kernel, grid: list[int], block: list[int], shared: int, stream: int):
        self._kernel, self._grid, self._block, self._shared, self._stream = kernel, grid, block, shared, stream

    def __call__(self, *args: Any) -> None:
        # NumPy scalars (numpy.float32(2), an element of an array) pass as numbers, not as 0-d arrays.
        values = [a.item() if isinstance(a, np.generic) else a for a in args]
        # Taken before the launch, which then prints nothing: said once, as a Python warning.
        if notice := self._kernel._function.take_fibers_notice():
            warnings.warn(notice, FibersWarning, stacklevel=2)
        with kernel_output_to_sys_stdout():
            self._kernel._function.launch(self._kernel._device, self._grid, self._block, self._shared, self._stream, values)


class Module:
    """Kernels compiled from one source string; ``module.name`` or
    ``module["name<16>"]`` gives a Kernel."""

    def __init__(self, core: _core.Module):
        self._core = core

    @property
    def names(self) -> list[str]:
        """The kernels' name expressions."""
        return list(self._core.names)

    @property
    def device(self) -> str:
        """The device the module was compiled for."""
        return self._core.device

    @property
    def from_cache(self) -> bool:
        """Whether no compiler ran: the module came from the disk cache or was already loaded."""
        return self._core.from_cache

    def __getitem__(self, name: str) -> Kernel:
        try:
            return Kernel(self._core.get(name), self._core.device)
        except IndexError as e:
            raise KeyError(str(e)) from None

    def __getattr__(self, name: str) -> Kernel:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError as e:
            raise AttributeError(str(e)) from None

    def __dir__(self) -> Iterable[str]:
        return list(super().__dir__()) + [n for n in self.names if n.isidentifier()]


def compile(
    source: str,
    *,
    device: DeviceLike = None,
    names: Sequence[str] | None = None,
    defines: Sequence[str] | None = None,
    include_dirs: Sequence[str] | None = None,
    std: str = "c++17",
    arch: str | None = None,
    flags: Sequence[str] | None = None,
    source_name: str = "kernel.cu",
) -> Module:
    """Compile CUDA C++ ``source`` for ``device``: NVRTC on a GPU, the host
    compiler and the emulator on "cpu". Non-template ``__global__`` functions
    are found by themselves; template instances and the like go in ``names``
    (e.g. ``["matmul<16>"]``). Results are cached on disk (LOCKSTEP_CACHE_DIR).
    Raises CompileError, whose ``.log`` holds the compiler's messages."""
    device_name = device_name_or_default(device)
    if device_name == "cpu":
        _libclang.warn_once_if_unavailable()
    core = _core.compile(
        source,
        device_name,
        list(names or []),
        list(defines or []),
        list(include_dirs or []),
        std,
        arch or "",
        list(flags or []),
        source_name,
    )
    return Module(core)
