"""Arrays a Python kernel is launched with: lockstep.cuda's device arrays
(numba's to_device, device_array, copy_to_host), and every array argument
turned into what the kernel's array parameter receives (its first element's
address, extents and byte strides), on the device the launch runs on."""

from __future__ import annotations

import functools
import struct
from typing import Any

import numpy as np

from .. import _core
from .._devices import default_device
from .._tensor import asarray
from ._types import Array, Record, Scalar, Tuple, element_named, record_offsets, scalar_named, size_and_alignment, typeof_number

# Tensors hold these dtypes; other element types travel as one of the same size.
_STORAGE = {1: np.uint8, 2: np.float16, 4: np.int32, 8: np.int64}
_TENSOR_DTYPES = {"uint8", "int32", "int64", "float16", "float32", "float64"}


def _storage_view(host: np.ndarray) -> np.ndarray:
    return host if host.dtype.name in _TENSOR_DTYPES else host.view(_STORAGE[host.dtype.itemsize])


def _host_copy(tensor: _core.Tensor) -> np.ndarray:
    """A tensor's elements in host memory (the tensor's own on "cpu")."""
    return (tensor if tensor.device == "cpu" else tensor.to_device("cpu")).numpy()


class DeviceNDArray:
    """An array in a lockstep device's memory ("cpu": the emulator's host
    memory, or "cuda:N"), as numba's: ``shape``, ``strides`` in bytes,
    ``dtype``, ``copy_to_host()``, ``copy_to_device(ary)``, slicing and
    ``reshape``; ``.tensor`` is the lockstep Tensor over the same memory."""

    def __init__(self, tensor: _core.Tensor, dtype: np.dtype):
        self.tensor = tensor
        self.dtype = np.dtype(dtype)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.tensor.shape)

    @property
    def strides(self) -> tuple[int, ...]:
        return tuple(s * self.dtype.itemsize for s in self.tensor.strides)

    @property
    def ndim(self) -> int:
        return self.tensor.ndim

    @property
    def size(self) -> int:
        return self.tensor.size

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def device(self) -> str:
        return self.tensor.device

    def __len__(self) -> int:
        return self.shape[0]

    def is_c_contiguous(self) -> bool:
        return self.tensor.is_contiguous()

    def copy_to_host(self, ary: np.ndarray | None = None, stream: Any = 0) -> np.ndarray:
        """The array's contents in a new NumPy array (or written into ``ary``)."""
        host = np.array(_host_copy(self.tensor), copy=True).view(self.dtype)
        if ary is None:
            return host
        if ary.shape != host.shape:
            raise ValueError(f"copy_to_host into an array of shape {ary.shape} from one of shape {host.shape}")
        ary[...] = host
        return ary

    def copy_to_device(self, ary: Any, stream: Any = 0) -> None:
        """Overwrite the contents with ``ary`` (same shape)."""
        source = np.asarray(ary.copy_to_host() if isinstance(ary, DeviceNDArray) else ary, dtype=self.dtype)
        if source.shape != self.shape:
            raise ValueError(f"copy_to_device of shape {source.shape} into a device array of shape {self.shape}")
        if self.device == "cpu":
            np.copyto(self.tensor.numpy_view(), _storage_view(source))
            return
        if not self.is_c_contiguous():
            raise ValueError("copy_to_device into a non-contiguous view of a GPU array; copy into the whole array")
        staged = asarray(np.ascontiguousarray(_storage_view(source)), device=self.device)
        _copy_bytes(self.tensor, staged)

    def __setitem__(self, key: Any, value: Any) -> None:
        """d[key] = value on the host's side, as numba's device arrays allow."""
        if self.device == "cpu":
            self.tensor.numpy_view().view(self.dtype)[key] = value
            return
        host = self.copy_to_host()
        host[key] = value
        self.copy_to_device(host)

    @property
    def T(self) -> DeviceNDArray:  # noqa: N802 (NumPy's name)
        return DeviceNDArray(self.tensor.T, self.dtype)

    @property
    def flags(self) -> dict[str, bool]:
        c = self.is_c_contiguous()
        return {"C_CONTIGUOUS": c, "F_CONTIGUOUS": c and self.ndim <= 1 or self.T.is_c_contiguous()}

    def __getitem__(self, key: Any) -> Any:
        """A view, or, where every dimension is indexed, the element itself (copied to the host, as numba does)."""
        view = self.tensor[key]
        if view.ndim == 0:
            return _host_copy(view).view(self.dtype).reshape(())[()]
        return DeviceNDArray(view, self.dtype)

    def reshape(self, *shape: Any) -> DeviceNDArray:
        dims = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return DeviceNDArray(self.tensor.reshape(list(dims)), self.dtype)

    def ravel(self) -> DeviceNDArray:
        return self.reshape(-1)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """``np.array(d)``, ``np.asarray(d)``: the contents in one copy (NumPy would
        otherwise read a sequence element by element through ``__getitem__``)."""
        if copy is False:
            raise ValueError("a lockstep.cuda device array converts to NumPy by copying; use copy=None or True")
        host = self.copy_to_host()
        return host if dtype is None else host.astype(dtype, copy=False)

    @property
    def __array_interface__(self) -> dict[str, Any]:
        """On "cpu" the memory is the host's: NumPy reads it in place (``np.asarray`` is a view, ``np.array`` one copy)."""
        if self.device != "cpu":
            raise AttributeError("__array_interface__: this array is in a GPU's memory; np.array(d) copies it to the host")
        return {"shape": self.shape, "strides": self.strides, "typestr": self.dtype.str, "data": (self.tensor.data_ptr, False), "version": 3}

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self.tensor.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.tensor.__dlpack_device__()

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        if self.device == "cpu":
            raise AttributeError("__cuda_array_interface__: this array is in the emulator's (host) memory")
        return {
            "shape": self.shape,
            "strides": None if self.is_c_contiguous() else self.strides,
            "typestr": self.dtype.str,
            "data": (self.tensor.data_ptr, False),
            "version": 3,
        }

    def __repr__(self) -> str:
        return f"<lockstep.cuda DeviceNDArray shape={self.shape} dtype={self.dtype} on {self.device}>"

    def _kernel_argument(self) -> ArrayArgument:
        return _tensor_argument(self.tensor, self.dtype, False, self)


class WideElementArray(DeviceNDArray):
    """A device array of elements wider than a tensor's (numba.cuda.random's
    16-byte generator states): a C-contiguous int64 tensor with one more, last,
    dimension holding each element's words."""

    def __init__(self, tensor: _core.Tensor, dtype: np.dtype):
        super().__init__(tensor, dtype)
        self.words = self.dtype.itemsize // 8

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.tensor.shape)[:-1]

    @property
    def strides(self) -> tuple[int, ...]:
        return tuple(s * 8 for s in self.tensor.strides)[:-1]

    @property
    def ndim(self) -> int:
        return self.tensor.ndim - 1

    @property
    def size(self) -> int:
        return self.tensor.size // self.words

    def copy_to_host(self, ary: np.ndarray | None = None, stream: Any = 0) -> np.ndarray:
        host = np.ascontiguousarray(_host_copy(self.tensor)).view(self.dtype).reshape(self.shape)
        if ary is None:
            return host.copy()
        ary[...] = host
        return ary

    def copy_to_device(self, ary: Any, stream: Any = 0) -> None:
        source = np.ascontiguousarray(ary.copy_to_host() if isinstance(ary, DeviceNDArray) else ary, dtype=self.dtype)
        if source.shape != self.shape:
            raise ValueError(f"copy_to_device of shape {source.shape} into a device array of shape {self.shape}")
        words = source.view(np.int64).reshape(self.tensor.shape)
        if self.device == "cpu":
            np.copyto(self.tensor.numpy_view(), words)
        else:
            _copy_bytes(self.tensor, asarray(words, device=self.device))

    def __getitem__(self, key: Any) -> Any:
        return self.copy_to_host()[key]  # elements and views copied to the host

    def __setitem__(self, key: Any, value: Any) -> None:
        host = self.copy_to_host()
        host[key] = value
        self.copy_to_device(host)

    def reshape(self, *shape: Any) -> DeviceNDArray:
        raise TypeError(f"an array of {self.dtype} cannot be reshaped on the device here; copy_to_host() first")

    @property
    def T(self) -> DeviceNDArray:  # noqa: N802 (NumPy's name)
        raise TypeError(f"an array of {self.dtype} cannot be transposed on the device here; copy_to_host() first")

    def _kernel_argument(self) -> ArrayArgument:
        return ArrayArgument(_array_type(self.dtype, self.ndim, True, False), pack(self.tensor.data_ptr, self.shape, self.strides), None, self)


_COPY_SOURCE = r"""
__global__ void copy_bytes(unsigned long long to, unsigned long long from, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    reinterpret_cast<unsigned char*>(to)[i] = reinterpret_cast<const unsigned char*>(from)[i];
}"""


def _copy_bytes(to: _core.Tensor, source: _core.Tensor) -> None:
    from .._kernels import compile

    nbytes = to.size * (np.dtype(to.dtype).itemsize if to.dtype != "bfloat16" else 2)
    kernel = compile(_COPY_SOURCE, device=to.device).copy_bytes
    kernel[max(1, min(1024, (nbytes + 255) // 256)), 256](to.data_ptr, source.data_ptr, nbytes)


def to_device(obj: Any, stream: Any = 0, copy: bool = True, to: DeviceNDArray | None = None) -> DeviceNDArray:
    """A device copy of ``obj`` on lockstep.cuda's current device (see
    select_device); with ``to``, copies into that array instead."""
    if to is not None:
        to.copy_to_device(obj, stream)
        return to
    if isinstance(obj, DeviceNDArray):
        return obj
    host = np.asarray(obj)
    if host.dtype.itemsize not in _STORAGE and element_named(host.dtype) is not None:  # generator states
        wide = device_array(host.shape, host.dtype)
        wide.copy_to_device(host)
        return wide
    if host.dtype.name not in _TENSOR_DTYPES and host.dtype.itemsize not in _STORAGE:
        raise TypeError(f"lockstep.cuda arrays hold numbers; got dtype {host.dtype}")
    tensor = asarray(np.ascontiguousarray(_storage_view(host)))
    tensor = tensor.to_device(current_device()) if current_device() != "cpu" else tensor.clone()
    return DeviceNDArray(tensor, host.dtype)


def as_cuda_array(obj: Any, sync: bool = True) -> Any:
    """A device array over ``obj``'s memory, no copy (PyTorch, CuPy, any DLPack
    array, on a GPU or, for the emulator, on the CPU); an array known only by
    ``__cuda_array_interface__`` is returned as it is, which kernels take too."""
    if isinstance(obj, DeviceNDArray):
        return obj
    if hasattr(obj, "__dlpack__"):
        tensor = _core.from_dlpack(obj)
        return DeviceNDArray(tensor, np.dtype(tensor.dtype if tensor.dtype != "bfloat16" else "uint16"))
    if hasattr(obj, "__cuda_array_interface__"):
        return obj
    raise TypeError(f"{type(obj).__name__} is not an array lockstep.cuda can use in place (no __dlpack__ or __cuda_array_interface__)")


def is_cuda_array(obj: Any) -> bool:
    """Whether ``obj`` is an array on a GPU (``__cuda_array_interface__``, or DLPack on a CUDA device)."""
    return hasattr(obj, "__cuda_array_interface__") or (array_device(obj) or "cpu").startswith("cuda")


def device_array(shape: Any, dtype: Any = np.float64, strides: Any = None, order: str = "C", stream: Any = 0) -> DeviceNDArray:
    """An uninitialised device array (float64 unless told, as numba's)."""
    dims = [int(shape)] if isinstance(shape, (int, np.integer)) else [int(s) for s in shape]
    real = np.dtype(dtype)
    if real.itemsize not in _STORAGE and real.itemsize % 8 == 0 and element_named(real) is not None:
        return WideElementArray(_core.empty(dims + [real.itemsize // 8], "int64", current_device()), real)
    storage = real.name if real.name in _TENSOR_DTYPES else np.dtype(_STORAGE[real.itemsize]).name
    return DeviceNDArray(_core.empty(dims, storage, current_device()), real)


def device_array_like(ary: Any, stream: Any = 0) -> DeviceNDArray:
    return device_array(ary.shape, ary.dtype)


_selected: list[str] = []


def select_device(device: Any) -> str:
    """Where launches with only host arrays run: an int selects GPU N ("cuda:N"),
    or a lockstep device name ("cpu", "cuda:0"). Without it, lockstep's
    default device ("cpu" unless inside ``with lockstep.device(...)``)."""
    name = f"cuda:{int(device)}" if isinstance(device, (int, np.integer)) else _core.check_device(str(device))
    _selected[:] = [name]
    return name


def current_device() -> str:
    from .._devices import enclosing_device

    return enclosing_device() or (_selected[0] if _selected else default_device())


class ArrayArgument:
    """One array argument ready for a launch: its type, the packed struct the
    kernel receives, and what must happen after the launch (copy back)."""

    __slots__ = ("type", "packed", "copy_back", "keep")

    def __init__(self, type_: Array, packed: bytes, copy_back: Any = None, keep: Any = None):
        self.type, self.packed, self.copy_back, self.keep = type_, packed, copy_back, keep


def pack(pointer: int, shape: tuple[int, ...], strides: tuple[int, ...]) -> bytes:
    n = len(shape)
    return struct.pack(f"<Q{n}q{n}q", pointer, *shape, *strides)


@functools.cache
def _array_type(dtype: np.dtype, ndim: int, contiguous: bool, readonly: bool) -> Array:
    scalar = element_named(dtype)
    if scalar is None:
        raise TypeError(f"kernels take arrays of numbers (and numba.cuda.random's generator states); got dtype {dtype}")
    if ndim == 0:
        raise TypeError("0-d arrays cannot be kernel arguments; pass the number itself, or reshape to (1,)")
    return Array(scalar, ndim, contiguous, readonly)


def _tensor_argument(tensor: _core.Tensor, dtype: np.dtype, readonly: bool, keep: Any, copy_back: Any = None) -> ArrayArgument:
    shape = tuple(tensor.shape)
    array_type = _array_type(dtype, len(shape), tensor.is_contiguous(), readonly)
    strides = tuple(s * dtype.itemsize for s in tensor.strides)
    return ArrayArgument(array_type, pack(tensor.data_ptr, shape, strides), copy_back, keep)


def _host_argument(host: np.ndarray) -> ArrayArgument:
    """A NumPy array used in place by the emulator, outside check mode (which needs it registered, as a tensor)."""
    flags = host.flags
    array_type = _array_type(host.dtype, host.ndim, flags.c_contiguous, not flags.writeable)
    return ArrayArgument(array_type, pack(host.__array_interface__["data"][0], host.shape, host.strides), None, host)


def array_device(obj: Any) -> str | None:
    """The device an array argument lives on, None for host arrays (NumPy) and non-arrays."""
    if isinstance(obj, DeviceNDArray):
        return obj.device
    if isinstance(obj, _core.Tensor):
        return obj.device
    if isinstance(obj, np.ndarray):
        return None
    if hasattr(obj, "__dlpack_device__"):
        kind, index = obj.__dlpack_device__()
        return "cpu" if kind in (1, 3) else f"cuda:{index}"
    if hasattr(obj, "__cuda_array_interface__"):
        return "cuda:0"
    return None


def array_argument(obj: Any, device: str, checked: bool = False) -> ArrayArgument:
    """``obj`` (a DeviceNDArray, lockstep Tensor, NumPy array, or any DLPack or
    __cuda_array_interface__ array) as a kernel running on ``device`` sees it.
    NumPy arrays are used in place on "cpu" and copied in and back out on a
    GPU, as numba does; ``checked``: check mode runs the launch, which must
    know host memory as a tensor."""
    if isinstance(obj, DeviceNDArray):
        _same_device(obj.device, device)
        return obj._kernel_argument()
    if isinstance(obj, np.ndarray):
        if device == "cpu" and not checked:
            return _host_argument(obj)
        readonly = not obj.flags.writeable
        tensor = _core.from_dlpack(_storage_view(obj))
        if device == "cpu":
            return _tensor_argument(tensor, obj.dtype, readonly, tensor)
        on_device = tensor.to_device(device)

        def copy_back() -> None:
            obj[...] = _host_copy(on_device).view(obj.dtype)

        return _tensor_argument(on_device, obj.dtype, readonly, on_device, None if readonly else copy_back)
    if isinstance(obj, _core.Tensor):
        _same_device(obj.device, device)
        return _tensor_argument(obj, np.dtype(obj.dtype if obj.dtype != "bfloat16" else "uint16"), False, obj)
    if hasattr(obj, "__dlpack__"):
        try:
            tensor = _core.from_dlpack(obj)
        except TypeError:
            tensor = None
        if tensor is not None:
            _same_device(tensor.device, device)
            return _tensor_argument(tensor, np.dtype(tensor.dtype), False, (tensor, obj))
    interface = getattr(obj, "__cuda_array_interface__", None)
    if interface is not None:
        _same_device("cuda:0", device)
        dtype = np.dtype(interface["typestr"])
        shape = tuple(interface["shape"])
        strides = interface.get("strides") or tuple(int(np.prod(shape[k + 1 :], dtype=np.int64)) * dtype.itemsize for k in range(len(shape)))
        scalar = scalar_named(dtype)
        if scalar is None or not shape:
            raise TypeError(f"cannot pass a {dtype} array of shape {shape} to a kernel")
        contiguous = interface.get("strides") is None
        return ArrayArgument(
            Array(scalar, len(shape), contiguous, bool(interface["data"][1])), pack(interface["data"][0], shape, tuple(strides)), None, obj
        )
    raise TypeError(f"cannot pass a {type(obj).__name__} to a kernel")


_STRUCT_CODES = {"bool": "?", "int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "int32": "i", "uint32": "I", "int64": "q", "uint64": "Q"}
_STRUCT_CODES.update(float32="f", float64="d")


def _number_bytes(t: Scalar, value: Any) -> bytes:
    if t.name == "float16":
        return np.float16(value).tobytes()
    python = float if t.is_float else bool if t.is_bool else int
    return struct.pack("<" + _STRUCT_CODES[t.name], python(value))


def tuple_argument(values: tuple[Any, ...], device: str, checked: bool = False) -> ArrayArgument:
    """A tuple passed to a kernel, by value: numbers of one type as a UniTuple,
    anything else (mixed numbers, arrays, nested tuples, a namedtuple) as a
    record laid out as python_kernels.h lays it out."""
    parts: list[tuple[Any, bytes, Any, Any]] = []
    for v in values:
        number = typeof_number(v) if not isinstance(v, np.ndarray) else None
        if number is not None:
            parts.append((number, _number_bytes(number, v), None, None))
            continue
        a = tuple_argument(v, device, checked) if isinstance(v, tuple) else array_argument(v, device, checked)
        parts.append((a.type, a.packed, a.copy_back, a.keep))
    types = tuple(p[0] for p in parts)
    names = getattr(type(values), "_fields", None)
    copy_backs = [p[2] for p in parts if p[2] is not None]

    def copy_back() -> None:
        for c in copy_backs:
            c()

    after = copy_back if copy_backs else None
    keep = [p[3] for p in parts]
    if types and not names and all(isinstance(t, Scalar) and t == types[0] for t in types):
        return ArrayArgument(Tuple(types[0], len(types)), b"".join(p[1] for p in parts), after, keep)
    record = Record(types, tuple(names) if names else None)
    buffer = bytearray(size_and_alignment(record)[0])
    for offset, part in zip(record_offsets(record), parts):
        buffer[offset : offset + len(part[1])] = part[1]
    return ArrayArgument(record, bytes(buffer), after, keep)


def _same_device(array_device: str, device: str) -> None:
    if array_device != device:
        raise _core.ArgumentError(
            f"an array argument is on {array_device} but the kernel runs on {device}; "
            "pass arrays of one device (NumPy arrays are copied to a GPU and back as needed)"
        )
