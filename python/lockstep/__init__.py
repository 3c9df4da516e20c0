"""lockstep: CUDA C++ kernels on the GPU or, unchanged, on lockstep's CPU emulator.

    import numpy as np, lockstep
    x = lockstep.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))   # zero-copy
    y = (x * x).sum(dim=1)                                                 # library kernels
    mod = lockstep.compile(r'''
    __global__ void scale(float* v, float by, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) v[i] *= by;
    }''')
    mod.scale[1, 32](x, 2.0, x.size)                                      # numba's spelling

Devices are "cpu" (the emulator, always there) and "cuda:N". Arrays move
without copies through DLPack (NumPy, PyTorch, CuPy). Nothing here needs an
NVIDIA driver until a cuda device is used.
"""

from . import _core, _tensor_methods  # noqa: F401 (_tensor_methods adds Tensor's methods and operators)
from ._core import (
    ArgumentError,
    CompileError,
    CudaError,
    DeviceUnavailable,
    KernelError,
    LaunchError,
    ShapeError,
    Tensor,
    cuda_available,
    cuda_device_count,
    cuda_unavailable_reason,
    emulator_options,
    set_emulator_options,
)
from ._devices import Device, Event, default_device, device, is_available, synchronize
from ._emulator import check, emulator_options_scope
from ._kernels import Kernel, Module, compile
from ._ops import (
    abs,
    add,
    copy,
    div,
    exp,
    log,
    map,
    matmul,
    max,
    maximum,
    mean,
    min,
    minimum,
    mul,
    neg,
    prod,
    reduce,
    relu,
    rgb_to_grayscale,
    sigmoid,
    sqrt,
    sub,
    sum,
    tanh,
    zip,
)
from ._output import kernel_output_to_sys_stdout
from ._tensor import asarray, empty, from_dlpack
from ._version import __version__

__all__ = [
    "ArgumentError",
    "CompileError",
    "CudaError",
    "Device",
    "DeviceUnavailable",
    "Kernel",
    "KernelError",
    "LaunchError",
    "Module",
    "ShapeError",
    "Tensor",
    "__version__",
    "abs",
    "add",
    "asarray",
    "check",
    "compile",
    "cuda_available",
    "cuda_device_count",
    "copy",
    "cuda_unavailable_reason",
    "Event",
    "default_device",
    "device",
    "div",
    "emulator_options",
    "emulator_options_scope",
    "empty",
    "exp",
    "from_dlpack",
    "is_available",
    "kernel_output_to_sys_stdout",
    "log",
    "map",
    "matmul",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "mul",
    "neg",
    "prod",
    "reduce",
    "relu",
    "rgb_to_grayscale",
    "set_emulator_options",
    "sigmoid",
    "sqrt",
    "sub",
    "sum",
    "synchronize",
    "tanh",
    "zip",
]
