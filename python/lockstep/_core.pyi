"""lockstep's compiled core: the CUDA emulator's options and the lecture kernels run on it."""

from typing import Optional, TypedDict

import numpy as np
from numpy.typing import NDArray

class EmulatorOptions(TypedDict):
    workers: int
    order: str
    seed: int
    stack_kib: int

class CudaError(RuntimeError):
    """A CUDA error raised by lockstep; the message starts with CUDA's error name."""

class LaunchError(CudaError):
    """The launch was refused: a configuration outside the device's limits."""

class KernelError(CudaError):
    """A thread failed while the kernel ran: a device assert, a deadlock at a barrier, a bad warp mask."""

def emulator_options() -> EmulatorOptions:
    """Return the emulator's options as a dict with keys workers, order, seed and stack_kib."""

def set_emulator_options(
    workers: Optional[int] = None,
    order: Optional[str] = None,
    seed: Optional[int] = None,
    stack_kib: Optional[int] = None,
) -> None:
    """Change the emulator options that are given (not None); the others keep their values."""

def rgb_to_grayscale(image: NDArray[np.uint8], launch: str = "2d") -> NDArray[np.uint8]:
    """Grayscale of a (3, H, W) C-contiguous uint8 image; use lockstep.rgb_to_grayscale."""

def matmul(a: NDArray[np.float32], b: NDArray[np.float32], algo: str = "tiled_static") -> NDArray[np.float32]:
    """a @ b for C-contiguous float32 matrices; use lockstep.matmul."""
