"""lockstep: CUDA C++ kernels run on a CPU emulator, callable from NumPy.

The kernels are the lectures' own source files (kernels/*.cu), compiled with
the host compiler against lockstep's emulator; nothing here needs a GPU, an
NVIDIA driver or a CUDA library.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import numpy as np

from . import _core
from ._core import CudaError, KernelError, LaunchError, emulator_options, set_emulator_options

__version__ = "0.1.0"

__all__ = [
    "CudaError",
    "KernelError",
    "LaunchError",
    "__version__",
    "emulator_options",
    "emulator_options_scope",
    "matmul",
    "rgb_to_grayscale",
    "set_emulator_options",
]


@contextlib.contextmanager
def emulator_options_scope(**options: Any) -> Iterator[dict]:
    """Set emulator options for the ``with`` block and restore the previous ones after it.

    Takes the keyword arguments of :func:`set_emulator_options` and yields the
    options in force inside the block::

        with lockstep.emulator_options_scope(order="random", seed=7):
            ...
    """
    previous = emulator_options()
    set_emulator_options(**options)
    try:
        yield emulator_options()
    finally:
        set_emulator_options(**previous)


def _check_array(name: str, array: Any, dtype: type, ndim: int) -> None:
    """Raise TypeError or ValueError unless ``array`` is a C-contiguous ``ndim``-D NumPy array of ``dtype``."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"{name} must be a numpy.ndarray, got {type(array).__name__}")
    if array.dtype != np.dtype(dtype):
        raise TypeError(f"{name} must have dtype {np.dtype(dtype)}, got {array.dtype}")
    if array.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {array.shape}")
    if not array.flags.c_contiguous:
        # The kernels read the buffer in place; copying behind the caller's back would hide the cost.
        raise ValueError(f"{name} must be C-contiguous; call numpy.ascontiguousarray({name}) first")


def rgb_to_grayscale(image: np.ndarray, launch: str = "2d") -> np.ndarray:
    """Convert a channels-first RGB image to grayscale with the lecture's kernel.

    ``image`` is a C-contiguous ``uint8`` array of shape ``(3, H, W)`` (planes
    R, G, B). Returns a new ``uint8`` array of shape ``(H, W)`` holding
    ``uint8(0.2989*r + 0.5870*g + 0.1140*b)`` computed in float32, truncated.

    ``launch="1d"`` runs ``rgb_to_grayscale_1d`` with 256 threads per block
    (one thread per pixel); ``launch="2d"`` runs ``rgb_to_grayscale_2d`` with
    16x16 blocks over columns and rows.

    Raises TypeError for a wrong type or dtype, ValueError for a wrong shape,
    a non-contiguous array or an unknown ``launch``, and LaunchError or
    KernelError if the emulator refuses or fails the launch.
    """
    _check_array("image", image, np.uint8, 3)
    if image.shape[0] != 3:
        raise ValueError(f"image must have shape (3, height, width) (channels first), got {image.shape}")
    return _core.rgb_to_grayscale(image, launch)


def matmul(a: np.ndarray, b: np.ndarray, algo: str = "tiled_static") -> np.ndarray:
    """Multiply two float32 matrices with one of the lecture's matmul kernels.

    ``a`` (m, k) and ``b`` (k, n) are C-contiguous ``float32`` arrays; returns
    a new ``float32`` array (m, n). ``algo`` picks the kernel: ``"naive"``
    (one thread per output, 16x16 blocks), ``"tiled_static"``
    (``matmul_tiled_static<16>``, 16x16 tiles in static shared memory) or
    ``"tiled_dynamic"`` (the same with 16x16 tiles in dynamic shared memory).

    Raises TypeError for a wrong type or dtype, ValueError for a wrong number
    of dimensions, a non-contiguous array, differing inner dimensions or an
    unknown ``algo``, and LaunchError or KernelError if the emulator refuses
    or fails the launch.
    """
    _check_array("a", a, np.float32, 2)
    _check_array("b", b, np.float32, 2)
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul: inner dimensions differ: a is {a.shape}, b is {b.shape}")
    return _core.matmul(a, b, algo)
