"""lockstep's compiled core; use the lockstep package."""

import builtins
from collections.abc import Sequence
from typing import Any, TypedDict

from numpy.typing import NDArray


class EmulatorOptions(TypedDict):
    workers: int
    order: str
    seed: int
    stack_kib: int
    checks: str
    timeout: float
    region_loops: bool

class CudaError(RuntimeError):
    """
    A CUDA error; the message starts with CUDA's error name (cudaErrorInvalidConfiguration, ...).
    """

class LaunchError(CudaError):
    """
    A launch refused before it ran: grid, block or shared memory outside the device's limits.
    """

class KernelError(CudaError):
    """
    A kernel that failed while it ran: a fault (a bad address, a stack overflow, __trap()), a device assert, a deadlock at a barrier, a bad warp mask, a time limit.
    """

class ArgumentError(TypeError):
    """
    Kernel arguments that do not match the kernel's parameters (count, type, range, device).
    """

class ShapeError(ValueError):
    """Shapes that do not broadcast, reshape or multiply; dims out of range."""

class DeviceUnavailable(RuntimeError):
    """
    A device that cannot be used here: no NVIDIA driver, no such GPU, kernels not installed.
    """

class CompileError(RuntimeError):
    """Source that did not compile; .log holds the compiler's messages."""

    log: str

def cuda_available() -> bool:
    """True when an NVIDIA driver loads and sees at least one GPU."""

def cuda_device_count() -> int:
    """How many GPUs the NVIDIA driver sees (0 without a driver)."""

def cuda_unavailable_reason() -> str:
    """
    Why cuda_available() is false, in words that say what to do; "" when it is true.
    """

def region_loops_unavailable_reason() -> str:
    """
    Why kernels with barriers compiled for "cpu" run on fibers, not as region loops, because no libclang loads (and the fix); "" when libclang is there.
    """

def device_name(arg: str, /) -> str: ...

def device_arch(arg: str, /) -> str: ...

def check_device(arg: str, /) -> str: ...

def max_cooperative_blocks(device: str, threads: int, shared_bytes: int) -> int:
    """
    How many blocks of `threads` threads using `shared_bytes` of shared memory a cooperative launch on the device holds at once.
    """

def synchronize(arg: str, /) -> None: ...

def emulator_options() -> EmulatorOptions:
    """
    The emulator's options: a dict with workers (OS threads running blocks), order ("forward", "reverse" or "random": the order a block's threads start and resume after a barrier), seed (for "random"), stack_kib, checks and timeout (seconds a launch may run before it fails with cudaErrorLaunchTimeout; 0: no limit) and region_loops (kernels split at their barriers run each block as loops over its threads; False: every kernel on fibers, one per thread).
    """

def set_emulator_options(workers: int | None = None, order: str | None = None, seed: int | None = None, stack_kib: int | None = None, checks: str | None = None, timeout: float | None = None, region_loops: bool | None = None) -> None:
    """
    Change the emulator options that are given (not None); the others keep their values.
    """

def set_poison_new_tensors(on: bool) -> None:
    """
    Fill new tensors with 0xff bytes (NaN for floats), so that elements a kernel forgets to write stand out (for tests).
    """

class Tensor:
    """A strided tensor on a lockstep device (see lockstep.asarray)."""

    @property
    def shape(self) -> tuple:
        """The extents, a tuple of ints."""

    @property
    def strides(self) -> tuple:
        """Strides in elements (not bytes, unlike NumPy's)."""

    @property
    def dtype(self) -> str:
        """
        The element type's name: bool, uint8, int32, int64, float16, bfloat16, float32 or float64.
        """

    @property
    def device(self) -> str:
        """"cpu" or "cuda:N"."""

    @property
    def ndim(self) -> int:
        """The number of dimensions."""

    @property
    def size(self) -> int:
        """The number of elements."""

    @property
    def data_ptr(self) -> int:
        """The address of the first element (host or device memory), as an int."""

    def is_contiguous(self) -> bool:
        """Whether the elements lie row-major without gaps."""

    def permute(self, dims: Sequence[int]) -> Tensor:
        """A view with the dimensions reordered."""

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        """A view with two dimensions swapped."""

    def reshape(self, shape: Sequence[int]) -> Tensor:
        """
        A view with another shape (one extent may be -1); ShapeError when the strides do not allow one.
        """

    def slice(self, dim: int, start: int, stop: int, step: int = 1) -> Tensor:
        """A view of every step-th index in [start, stop) of dim."""

    def select(self, dim: int, index: int) -> Tensor:
        """A view of one index of dim, which it drops."""

    def flip_view(self, dim: int) -> Tensor:
        """A view with dim in reverse order (a negative stride)."""

    def unsqueeze(self, dim: int) -> Tensor:
        """A view with a new dimension of extent 1 at dim."""

    def expand(self, shape: Sequence[int]) -> Tensor:
        """A view broadcast to shape (extents of 1 repeat with stride 0)."""

    def contiguous(self) -> Tensor:
        """This tensor if contiguous, else a packed copy."""

    def clone(self) -> Tensor:
        """A packed copy."""

    def to_device(self, device: str) -> Tensor:
        """
        A copy on the device (this tensor when it is already there); use .to().
        """

    def to_dtype(self, dtype: str) -> Tensor:
        """A copy converted to the dtype (this tensor when it has it); use .to()."""

    def numpy_view(self) -> NDArray:
        """A NumPy array over this CPU tensor's memory (no copy); use .numpy()."""

    def __dlpack__(self, stream: object | None = None, max_version: object | None = None, dl_device: object | None = None, copy: object | None = None) -> NDArray:
        """
        The tensor as a DLPack capsule (the array API's protocol; used by numpy/torch/cupy.from_dlpack).
        """

    def __dlpack_device__(self) -> tuple:
        """
        (DLPack device type, device index): (1, 0) on the CPU, (2, N) on cuda:N.
        """

    # Added by the lockstep package (python/lockstep/_tensor_methods.py).
    @property
    def T(self) -> Tensor:
        """A view with the dimensions reversed."""

    @property
    def mT(self) -> Tensor:
        """A view with the last two dimensions swapped (PyTorch's mT)."""

    def to(self, target: Any) -> Tensor:
        """A copy on another device ("cpu", "cuda:0") or with another dtype ("float16", numpy.float16, torch.float16); this tensor itself when it is already there."""

    def numpy(self) -> NDArray:
        """A NumPy array over this CPU tensor's memory (no copy)."""

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> NDArray: ...
    def __getitem__(self, key: Any) -> Tensor:
        """Ints, slices (any step), None, ..., integer arrays and bool masks; views for the basic keys."""

    def __setitem__(self, key: Any, value: Any) -> None:
        """Assignment through the same keys; the value is broadcast and cast to this tensor's dtype."""

    def __len__(self) -> int: ...
    def __iter__(self) -> Any: ...
    def __bool__(self) -> bool: ...
    def __float__(self) -> float: ...
    def __int__(self) -> int: ...
    def __index__(self) -> int: ...
    def __hash__(self) -> int: ...
    @property
    def __cuda_array_interface__(self) -> dict[str, Any]: ...
    def item(self) -> bool | int | float: ...
    def tolist(self) -> Any: ...
    def numel(self) -> int: ...
    def copy_(self, source: Any) -> Tensor: ...
    def fill_(self, value: Any) -> Tensor: ...
    def __neg__(self) -> Tensor: ...
    def __pos__(self) -> Tensor: ...
    def __abs__(self) -> Tensor: ...
    def __invert__(self) -> Tensor: ...
    def __matmul__(self, other: Any) -> Tensor:
        """``lockstep.matmul(self, other)`` with the default algo, "auto"."""

    def __rmatmul__(self, other: Any) -> Tensor: ...
    def __add__(self, other: Any) -> Tensor: ...
    def __radd__(self, other: Any) -> Tensor: ...
    def __iadd__(self, other: Any) -> Tensor: ...
    def __sub__(self, other: Any) -> Tensor: ...
    def __rsub__(self, other: Any) -> Tensor: ...
    def __isub__(self, other: Any) -> Tensor: ...
    def __mul__(self, other: Any) -> Tensor: ...
    def __rmul__(self, other: Any) -> Tensor: ...
    def __imul__(self, other: Any) -> Tensor: ...
    def __truediv__(self, other: Any) -> Tensor: ...
    def __rtruediv__(self, other: Any) -> Tensor: ...
    def __itruediv__(self, other: Any) -> Tensor: ...
    def __floordiv__(self, other: Any) -> Tensor: ...
    def __rfloordiv__(self, other: Any) -> Tensor: ...
    def __ifloordiv__(self, other: Any) -> Tensor: ...
    def __mod__(self, other: Any) -> Tensor: ...
    def __rmod__(self, other: Any) -> Tensor: ...
    def __imod__(self, other: Any) -> Tensor: ...
    def __pow__(self, other: Any) -> Tensor: ...
    def __rpow__(self, other: Any) -> Tensor: ...
    def __ipow__(self, other: Any) -> Tensor: ...
    def __and__(self, other: Any) -> Tensor: ...
    def __rand__(self, other: Any) -> Tensor: ...
    def __iand__(self, other: Any) -> Tensor: ...
    def __or__(self, other: Any) -> Tensor: ...
    def __ror__(self, other: Any) -> Tensor: ...
    def __ior__(self, other: Any) -> Tensor: ...
    def __xor__(self, other: Any) -> Tensor: ...
    def __rxor__(self, other: Any) -> Tensor: ...
    def __ixor__(self, other: Any) -> Tensor: ...
    def __eq__(self, other: Any) -> Tensor: ...  # type: ignore[override]
    def __ne__(self, other: Any) -> Tensor: ...  # type: ignore[override]
    def __lt__(self, other: Any) -> Tensor: ...  # type: ignore[override]
    def __le__(self, other: Any) -> Tensor: ...  # type: ignore[override]
    def __gt__(self, other: Any) -> Tensor: ...  # type: ignore[override]
    def __ge__(self, other: Any) -> Tensor: ...  # type: ignore[override]
    def sum(self, dim: int | None = None, keepdim: bool = False) -> Tensor: ...
    def mean(self, dim: int | None = None, keepdim: bool = False) -> Tensor: ...
    def max(self, dim: int | None = None, keepdim: bool = False) -> Tensor: ...
    def min(self, dim: int | None = None, keepdim: bool = False) -> Tensor: ...
    def prod(self, dim: int | None = None, keepdim: bool = False) -> Tensor: ...
    def argmax(self, dim: int | None = None, keepdim: bool = False) -> Tensor: ...
    def argmin(self, dim: int | None = None, keepdim: bool = False) -> Tensor: ...
    def all(self, dim: int | None = None, keepdim: bool = False) -> Tensor: ...
    def any(self, dim: int | None = None, keepdim: bool = False) -> Tensor: ...
    def exp(self) -> Tensor: ...
    def log(self) -> Tensor: ...
    def sqrt(self) -> Tensor: ...
    def relu(self) -> Tensor: ...
    def sigmoid(self) -> Tensor: ...
    def tanh(self) -> Tensor: ...
    def abs(self) -> Tensor: ...
    def neg(self) -> Tensor: ...
    def logical_not(self) -> Tensor: ...
    def clamp(self, min: Any = None, max: Any = None) -> Tensor: ...
    def softmax(self, dim: int) -> Tensor: ...
    def log_softmax(self, dim: int) -> Tensor: ...
    def maximum(self, other: Any) -> Tensor: ...
    def minimum(self, other: Any) -> Tensor: ...
    def pow(self, other: Any) -> Tensor: ...
    def eq(self, other: Any) -> Tensor: ...
    def ne(self, other: Any) -> Tensor: ...
    def lt(self, other: Any) -> Tensor: ...
    def le(self, other: Any) -> Tensor: ...
    def gt(self, other: Any) -> Tensor: ...
    def ge(self, other: Any) -> Tensor: ...
    def logical_and(self, other: Any) -> Tensor: ...
    def logical_or(self, other: Any) -> Tensor: ...
    def logical_xor(self, other: Any) -> Tensor: ...

def from_dlpack(array: object) -> Tensor:
    """A tensor over the array's memory (no copy)."""

def empty(arg0: Sequence[int], arg1: str, arg2: str, /) -> Tensor: ...

def map(arg0: str, arg1: Tensor, /) -> Tensor: ...

def zip(arg0: str, arg1: Tensor, arg2: Tensor, /) -> Tensor: ...

def zip_into(arg0: str, arg1: Tensor, arg2: Tensor, arg3: Tensor, /) -> None: ...

def copy_into(arg0: Tensor, arg1: Tensor, /) -> None: ...

def where(arg0: Tensor, arg1: Tensor, arg2: Tensor, /) -> Tensor: ...

def index_select(arg0: Tensor, arg1: int, arg2: Tensor, /) -> Tensor: ...

def fill_sequence(arg0: Tensor, arg1: float, arg2: float, arg3: float, arg4: bool, /) -> None: ...

def fill_random(arg0: Tensor, arg1: int, arg2: int, arg3: int, arg4: float, arg5: float, /) -> None: ...

def arg_reduce(arg0: Tensor, arg1: int, arg2: bool, arg3: bool, /) -> Tensor: ...

def reduce(arg0: str, arg1: Tensor, arg2: int, arg3: bool, /) -> Tensor: ...

def reduce_all(arg0: str, arg1: Tensor, /) -> Tensor: ...

def matmul(a: Tensor, b: Tensor, algo: str = 'auto', *, alpha: float = 1.0, bias: Tensor | None = None, residual: Tensor | None = None, activation: str | None = None) -> Tensor:
    """
    a @ b with one of matmul_algos() ("auto": auto_matmul_algo), batch dimensions broadcast, and the epilogue act(alpha * (a @ b) + bias) + residual: bias of shape (n,) or (1, n), residual of the output's shape, both of its dtype and device; activation a unary op's name ("relu", "gelu", "gelu_tanh", "sigmoid", "tanh", ...). The algos with fused_epilogue apply it as they store the product; after the others it is applied with map and zip.
    """

def matmul_algos() -> list:
    """
    Every matmul algo, simplest first, as a dict: name, family ("simt", "tensor_core" or "reference"), dtypes (the input dtypes it takes), kernels (dtype -> kernel name in lockstep::kernels), batched_kernel, block, tile_m, tile_n, tile_k_bytes, shared_bytes (dynamic), tensor_cores, fused_epilogue (its kernels apply matmul's epilogue), gpu_only, arch (the GPUs it needs, or None) and lecture (the lecture's own kernels). From the kernels' recipe tables (include/lockstep/kernels/matmul_recipes.h).
    """

def auto_matmul_candidates(dtype: str) -> list[str]:
    """
    The algos matmul's "auto" considers for inputs of this dtype on a GPU, in order: it runs the first the device runs (auto_matmul_algo says what it runs on the emulator).
    """

def auto_matmul_algo(dtype: str, device: str) -> str:
    """The algo matmul's "auto" runs for inputs of this dtype on this device."""

def rgb_to_grayscale(arg0: Tensor, arg1: str, /) -> Tensor: ...

def copy(arg: Tensor, /) -> Tensor: ...

class Event:
    """
    A marker in a device's default stream, for timing device work (like torch.cuda.Event).
    """

    def __init__(self, device: str) -> None: ...

    def record(self) -> None:
        """Mark the point after the work queued so far."""

    def synchronize(self) -> None:
        """Wait until the device has reached this marker."""

    def elapsed_ms(self, stop: Event) -> float:
        """
        Milliseconds of device time from this recorded event to `stop` (both reached).
        """

class Module:
    @property
    def names(self) -> list[str]: ...

    @property
    def device(self) -> str: ...

    @property
    def from_cache(self) -> bool: ...

    def get(self, arg: str, /) -> Function: ...

class Function:
    @property
    def name(self) -> str: ...

    @property
    def signature(self) -> str: ...

    def set_max_dynamic_shared_bytes(self, arg: int, /) -> None: ...

    @property
    def engine(self) -> tuple[str, str, str]: ...

    def take_fibers_notice(self) -> str: ...

    def launch(self, device: str, grid: Sequence[int], block: Sequence[int], shared_bytes: int, stream: int, args: list, cooperative: bool = False) -> None: ...

def compile(source: str, device: str, names: Sequence[str], defines: Sequence[str], include_dirs: Sequence[str], std: str, arch: str, flags: Sequence[str], source_name: str) -> Module: ...
