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

from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
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
from ._output import kernel_output_to_sys_stdout

__version__ = "0.1.0"

__all__ = [
    "ArgumentError", "CompileError", "CudaError", "Device", "DeviceUnavailable", "Kernel", "KernelError", "LaunchError", "Module",
    "ShapeError", "Tensor", "__version__", "abs", "add", "asarray", "check", "compile", "cuda_available", "cuda_device_count",
    "copy", "cuda_unavailable_reason", "Event", "default_device", "device", "div", "emulator_options", "emulator_options_scope", "empty",
    "exp", "from_dlpack", "is_available", "kernel_output_to_sys_stdout", "log", "map", "matmul", "max", "maximum", "mean",
    "min", "minimum", "mul", "neg", "prod", "reduce", "relu", "rgb_to_grayscale", "set_emulator_options", "sigmoid", "sqrt",
    "sub", "sum", "synchronize", "tanh", "zip",
]

DeviceLike = Union[str, "Device", None]
DTypeLike = Any  # "float32", numpy.float32, numpy.dtype("float32"), torch.float32

# ---------------------------------------------------------------- devices

_state = threading.local()


class Device:
    """A lockstep device, "cpu" (the emulator) or "cuda:N"; as a context
    manager it is the default device of the ``with`` block on this thread."""

    def __init__(self, name: str):
        self.name = _core.check_device(str(name))

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"lockstep.device({self.name!r})"

    def __eq__(self, other: object) -> bool:
        return str(self) == str(other)

    def __hash__(self) -> int:
        return hash(self.name)

    def __enter__(self) -> "Device":
        _state.stack = getattr(_state, "stack", []) + [self.name]
        return self

    def __exit__(self, *exc: object) -> None:
        _state.stack.pop()

    @property
    def name_of_hardware(self) -> str:
        """The GPU's name, or "lockstep emulator"."""
        return _core.device_name(self.name)


def device(name: str) -> Device:
    """The device "cpu" or "cuda:N" (also usable as ``with lockstep.device(...):``)."""
    return Device(name)


def default_device() -> str:
    """The device used when a call names none: the innermost ``with
    lockstep.device(...)`` block, else "cpu"."""
    stack = getattr(_state, "stack", [])
    return stack[-1] if stack else "cpu"


def _device_name(d: DeviceLike) -> str:
    return default_device() if d is None else _core.check_device(str(d))


def is_available(d: str = "cuda") -> bool:
    """Whether device kind "cuda" (or "cpu", always) can be used here."""
    return True if str(d) == "cpu" else cuda_available()


def Event(d: DeviceLike = None) -> "_core.Event":
    """A marker in the device's default stream: ``start.record()``, work,
    ``stop.record()``, ``stop.synchronize()``, then ``start.elapsed_ms(stop)``."""
    return _core.Event(_device_name(d))


def synchronize(d: DeviceLike = None) -> None:
    """Wait for the device's work to finish (kernel printf from a GPU appears here)."""
    with kernel_output_to_sys_stdout():
        _core.synchronize(_device_name(d))


# ---------------------------------------------------------------- tensors

def from_dlpack(array: Any) -> Tensor:
    """A tensor over ``array``'s memory (NumPy, PyTorch, CuPy; CPU or CUDA), no copy."""
    return _core.from_dlpack(array)


def asarray(obj: Any, device: DeviceLike = None, dtype: DTypeLike = None) -> Tensor:
    """``obj`` as a lockstep tensor on ``device``: the given one, else the
    device of an enclosing ``with lockstep.device(...)`` block, else the
    array's own. Arrays with DLPack or the buffer protocol (NumPy, PyTorch,
    CuPy) are used in place when already there, copied otherwise; lists and
    scalars go through NumPy. ``dtype`` converts (a copy) when it differs."""
    if isinstance(obj, Tensor):
        t = obj
    elif hasattr(obj, "__dlpack__"):
        t = _core.from_dlpack(obj)
    else:
        t = _core.from_dlpack(np.asarray(obj, order="C"))  # (np.ascontiguousarray would make scalars 1-D)
    target = device if device is not None else (getattr(_state, "stack", None) or [None])[-1]
    if target is not None and t.device != _core.check_device(str(target)):
        t = t.to_device(_core.check_device(str(target)))
    if dtype is not None and t.dtype != _dtype_name(dtype):
        t = t.to_dtype(_dtype_name(dtype))
    return t


def empty(shape: Sequence[int], dtype: DTypeLike = "float32", device: DeviceLike = None) -> Tensor:
    """A new uninitialised contiguous tensor."""
    return _core.empty(list(shape), _dtype_name(dtype), _device_name(device))


def _dtype_name(dtype: Any) -> str:
    """"float32" for "float32", numpy.float32, numpy.dtype("float32") or torch.float32."""
    if isinstance(dtype, str):
        return dtype
    text = str(dtype)
    if text.startswith("torch."):
        return text[len("torch."):]
    try:
        return str(np.dtype(dtype).name)
    except TypeError:
        return text


def _tensor(x: Any, like: Optional[Tensor] = None) -> Tensor:
    if isinstance(x, Tensor):
        return x
    if like is not None and not hasattr(x, "__dlpack__"):  # a Python number beside a tensor: takes its dtype
        if isinstance(x, (float, np.floating)) and like.dtype in ("uint8", "int32", "int64"):
            raise TypeError(f"{x!r} with a {like.dtype} tensor would be truncated; convert the tensor first, e.g. .to('float32')")
        if like.dtype == "bfloat16":  # NumPy has none: through float32
            return asarray(np.asarray(x, dtype=np.float32), device=like.device).to_dtype("bfloat16")
        return asarray(np.asarray(x, dtype=like.dtype), device=like.device)
    return asarray(x)


# ---------------------------------------------------------------- ops

def map(op: str, x: Any) -> Tensor:
    """Apply the unary ``op`` elementwise: copy, neg, abs, exp, log, sqrt, relu, sigmoid, tanh, square, reciprocal."""
    return _core.map(op, _tensor(x))


def zip(op: str, a: Any, b: Any) -> Tensor:
    """Apply the binary ``op`` with NumPy broadcasting: add, sub, mul, div, maximum, minimum, pow, eq, lt, gt."""
    ta = a if isinstance(a, Tensor) else None
    tb = b if isinstance(b, Tensor) else None
    return _core.zip(op, _tensor(a, tb), _tensor(b, ta))


def reduce(op: str, x: Any, dim: Optional[int] = None, keepdim: bool = False) -> Tensor:
    """Reduce with sum, max, min, prod or mean along ``dim``, or, with ``dim=None``
    (the default), over every element to a 0-d tensor as ``torch.sum(x)`` does
    (at memory bandwidth; ``keepdim`` then keeps every dimension with extent 1).
    The result has ``x``'s dtype. Sum of no elements is 0, product 1; max, min
    and mean of no elements raise ShapeError."""
    t = _tensor(x)
    if dim is not None:
        return _core.reduce(op, t, dim, keepdim)
    out = _core.reduce_all(op, t)
    return out.reshape([1] * t.ndim) if keepdim else out


def matmul(a: Any, b: Any, algo: str = "auto") -> Tensor:
    """``a @ b``, batch dimensions broadcast like NumPy's, with the kernel ``algo``.

    float32, the lectures' SIMT ladder, simplest to fastest: "naive",
    "tiled_static", "tiled_dynamic", "register_1d", "register_2d",
    "vectorized", "warp_tiled", "double_buffered"; "cublas" is the reference
    (cuda devices only). Tensor cores, float32 (through tf32) or bfloat16, the
    output in the inputs' dtype: "wmma", "wgmma" (Hopper GPUs), and the
    references "cublas" (bfloat16) and "cublas_tf32". They read B best
    as ``w.T`` of a (n, k) ``w``, the nn.Linear layout; other layouts are
    copied once. "auto" (the default, also of ``@``): double_buffered for
    float32; for bfloat16 wgmma on a Hopper GPU, else wmma."""
    return _core.matmul(_tensor(a), _tensor(b), algo)


def rgb_to_grayscale(image: Any, launch: str = "vectorized") -> Tensor:
    """Channels-first uint8 (3, H, W) -> (H, W), or a batch (B, 3, H, W) -> (B, H, W),
    with the lecture's weights 0.2989/0.5870/0.1140 (float32, truncated).
    ``launch``: "vectorized" (16 pixels per thread, at copy bandwidth), or the
    lecture's "1d" or "2d" (batches: "2d"); all give the same bits."""
    return _core.rgb_to_grayscale(_tensor(image), launch)


def copy(x: Any) -> Tensor:
    """A new packed copy of ``x`` on its device. A contiguous ``x`` is copied with
    the device's memcpy (cuMemcpyDtoD on a GPU), no kernel: the reference for
    copy bandwidth. A strided one is packed by the copy kernel."""
    return _core.copy(_tensor(x))


def neg(x: Any) -> Tensor:
    """Elementwise ``-x``."""
    return map("neg", x)


def abs(x: Any) -> Tensor:
    """Elementwise absolute value."""
    return map("abs", x)


def exp(x: Any) -> Tensor:
    """Elementwise e**x (floating-point tensors)."""
    return map("exp", x)


def log(x: Any) -> Tensor:
    """Elementwise natural logarithm (floating-point tensors)."""
    return map("log", x)


def sqrt(x: Any) -> Tensor:
    """Elementwise square root (floating-point tensors)."""
    return map("sqrt", x)


def relu(x: Any) -> Tensor:
    """Elementwise max(x, 0)."""
    return map("relu", x)


def sigmoid(x: Any) -> Tensor:
    """Elementwise 1 / (1 + e**-x) (floating-point tensors)."""
    return map("sigmoid", x)


def tanh(x: Any) -> Tensor:
    """Elementwise hyperbolic tangent (floating-point tensors)."""
    return map("tanh", x)


def add(a: Any, b: Any) -> Tensor:
    """Elementwise ``a + b`` with NumPy broadcasting."""
    return zip("add", a, b)


def sub(a: Any, b: Any) -> Tensor:
    """Elementwise ``a - b`` with NumPy broadcasting."""
    return zip("sub", a, b)


def mul(a: Any, b: Any) -> Tensor:
    """Elementwise ``a * b`` with NumPy broadcasting."""
    return zip("mul", a, b)


def div(a: Any, b: Any) -> Tensor:
    """Elementwise ``a / b`` with NumPy broadcasting (integer tensors divide as C++ does)."""
    return zip("div", a, b)


def maximum(a: Any, b: Any) -> Tensor:
    """Elementwise maximum with NumPy broadcasting."""
    return zip("maximum", a, b)


def minimum(a: Any, b: Any) -> Tensor:
    """Elementwise minimum with NumPy broadcasting."""
    return zip("minimum", a, b)


def sum(x: Any, dim: Optional[int] = None, keepdim: bool = False) -> Tensor:
    """The sum along ``dim``, or of every element (a 0-d tensor) when ``dim`` is None."""
    return reduce("sum", x, dim, keepdim)


def mean(x: Any, dim: Optional[int] = None, keepdim: bool = False) -> Tensor:
    """The mean along ``dim``, or of every element when ``dim`` is None (floating-point tensors)."""
    return reduce("mean", x, dim, keepdim)


def max(x: Any, dim: Optional[int] = None, keepdim: bool = False) -> Tensor:
    """The largest element along ``dim``, or over every element when ``dim`` is None."""
    return reduce("max", x, dim, keepdim)


def min(x: Any, dim: Optional[int] = None, keepdim: bool = False) -> Tensor:
    """The smallest element along ``dim``, or over every element when ``dim`` is None."""
    return reduce("min", x, dim, keepdim)


def prod(x: Any, dim: Optional[int] = None, keepdim: bool = False) -> Tensor:
    """The product along ``dim``, or over every element when ``dim`` is None."""
    return reduce("prod", x, dim, keepdim)


def _to(self: Tensor, target: Any) -> Tensor:
    """A copy on another device ("cpu", "cuda:0", a Device) or with another
    dtype ("float16", numpy.float16, torch.float16); this tensor itself when
    it is already there."""
    if isinstance(target, (str, Device)) or type(target).__name__ == "device":  # also torch.device
        name = str(target)
        if name == "cpu" or name.startswith("cuda"):
            return self.to_device(name)
    return self.to_dtype(_dtype_name(target))


def _numpy(self: Tensor) -> np.ndarray:
    """A NumPy array over this CPU tensor's memory (no copy)."""
    if self.dtype == "bfloat16":
        raise TypeError("NumPy has no bfloat16; call .to('float32') first")
    return self.numpy_view()


def _array(self: Tensor, dtype: Any = None, copy: Optional[bool] = None) -> np.ndarray:
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
Tensor.__neg__ = lambda self: map("neg", self)  # type: ignore
Tensor.__abs__ = lambda self: map("abs", self)  # type: ignore
Tensor.__matmul__ = lambda self, other: matmul(self, other)  # type: ignore
for _name, _op in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div")):
    setattr(Tensor, f"__{_name}__", (lambda op: lambda self, other: zip(op, self, other))(_op))
    setattr(Tensor, f"__r{_name}__", (lambda op: lambda self, other: zip(op, other, self))(_op))
# The package's functions as methods (x.sum(dim=0) is lockstep.sum(x, dim=0)), docstrings included.
Tensor.sum, Tensor.mean, Tensor.max, Tensor.min, Tensor.prod = sum, mean, max, min, prod  # type: ignore
Tensor.exp, Tensor.log, Tensor.sqrt, Tensor.relu, Tensor.sigmoid, Tensor.tanh = exp, log, sqrt, relu, sigmoid, tanh  # type: ignore

# ---------------------------------------------------------------- kernels from source


class Kernel:
    """A kernel of a compiled module: ``kernel[grid, block](*args)``, or
    ``kernel[grid, block, shared_bytes]`` / ``[grid, block, shared_bytes, stream]``
    where ``stream`` is a CUDA stream handle (int, or an object with ``.cuda_stream``
    or ``.ptr``, such as torch's and CuPy's streams). Arguments: tensors or
    arrays (by pointer), ints and floats (converted to the parameter's type)
    and bytes (a struct by value)."""

    def __init__(self, function: "_core.Function", device: str):
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

    def set_max_dynamic_shared_bytes(self, nbytes: int) -> None:
        """Allow more than 48 KiB of dynamic shared memory (up to 227 KiB on an H100)."""
        self._function.set_max_dynamic_shared_bytes(nbytes)

    def __getitem__(self, config: Tuple[Any, ...]) -> "_Launch":
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise TypeError("launch with kernel[grid, block], kernel[grid, block, shared_bytes] or kernel[grid, block, shared_bytes, stream]")
        grid, block, shared, stream = (tuple(config) + (0, 0))[:4]
        return _Launch(self, _extents(grid, "grid"), _extents(block, "block"), int(shared), _stream_handle(stream))

    def __repr__(self) -> str:
        return f"<lockstep kernel {self.signature} on {self._device}>"


def _extents(value: Any, what: str) -> List[int]:
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
    def __init__(self, kernel: Kernel, grid: List[int], block: List[int], shared: int, stream: int):
        self._kernel, self._grid, self._block, self._shared, self._stream = kernel, grid, block, shared, stream

    def __call__(self, *args: Any) -> None:
        # NumPy scalars (numpy.float32(2), an element of an array) pass as numbers, not as 0-d arrays.
        values = [a.item() if isinstance(a, np.generic) else a for a in args]
        with kernel_output_to_sys_stdout():
            self._kernel._function.launch(self._kernel._device, self._grid, self._block, self._shared, self._stream, values)


class Module:
    """Kernels compiled from one source string; ``module.name`` or
    ``module["name<16>"]`` gives a Kernel."""

    def __init__(self, core: "_core.Module"):
        self._core = core

    @property
    def names(self) -> List[str]:
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


def compile(source: str, *, device: DeviceLike = None, names: Optional[Sequence[str]] = None,
            defines: Optional[Sequence[str]] = None, include_dirs: Optional[Sequence[str]] = None,
            std: str = "c++17", arch: Optional[str] = None, flags: Optional[Sequence[str]] = None,
            source_name: str = "kernel.cu") -> Module:
    """Compile CUDA C++ ``source`` for ``device``: NVRTC on a GPU, the host
    compiler and the emulator on "cpu". Non-template ``__global__`` functions
    are found by themselves; template instances and the like go in ``names``
    (e.g. ``["matmul<16>"]``). Results are cached on disk (LOCKSTEP_CACHE_DIR).
    Raises CompileError, whose ``.log`` holds the compiler's messages."""
    core = _core.compile(source, _device_name(device), list(names or []), list(defines or []), list(include_dirs or []),
                         std, arch or "", list(flags or []), source_name)
    return Module(core)


# ---------------------------------------------------------------- emulator options

@contextlib.contextmanager
def emulator_options_scope(**options: Any) -> Iterator["_core.EmulatorOptions"]:
    """Set emulator options (workers, order, seed, stack_kib, checks) for the
    ``with`` block and restore the previous ones after it; yields the options
    in force."""
    previous = emulator_options()
    set_emulator_options(**options)
    try:
        yield emulator_options()
    finally:
        set_emulator_options(**previous)


def check(checks: str = "all") -> "contextlib.AbstractContextManager[_core.EmulatorOptions]":
    """Check mode for the ``with`` block: kernels run on the emulator under
    memcheck, racecheck, synccheck and initcheck (or the comma list given) and
    a launch with findings raises KernelError listing each one with its kind,
    kernel, block, thread, address and source line. Compile kernels inside the
    block (``lockstep.compile`` then instruments them); the library's own ops
    use their instrumented build automatically::

        with lockstep.check():
            mod = lockstep.compile(source)
            mod.kernel[grid, block](x, n)
    """
    return emulator_options_scope(checks=checks)

