"""The names of numba's CUDA kernel language (cuda.threadIdx, cuda.syncthreads,
cuda.shared.array, cuda.atomic.add, ...) as markers: the translator knows each
by its ``name``; called outside a kernel they say where they belong."""

from __future__ import annotations

from typing import Any


class Intrinsic:
    """A function or value of the kernel language, meaningful only in a kernel."""

    def __init__(self, name: str, doc: str = ""):
        self.name = name
        self.__doc__ = doc or f"cuda.{name} (in kernels only)"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"cuda.{self.name}() can only be called inside a @cuda.jit kernel or device function")

    def __repr__(self) -> str:
        return f"<lockstep.cuda intrinsic {self.name}>"


class Dim3:
    """threadIdx, blockIdx, blockDim, gridDim: ``.x``, ``.y``, ``.z`` in kernels."""

    def __init__(self, name: str):
        self.name = name
        self.x, self.y, self.z = (Intrinsic(f"{name}.{axis}") for axis in "xyz")

    def __repr__(self) -> str:
        return f"<lockstep.cuda {self.name}>"


class Namespace:
    """cuda.shared, cuda.local, cuda.const and cuda.atomic: groups of intrinsics."""

    def __init__(self, prefix: str, names: tuple[str, ...]):
        for n in names:
            setattr(self, n, Intrinsic(f"{prefix}.{n}"))


threadIdx, blockIdx, blockDim, gridDim = (Dim3(n) for n in ("threadIdx", "blockIdx", "blockDim", "gridDim"))
laneid = Intrinsic("laneid", "The thread's lane in its warp, 0 to 31.")
warpsize = Intrinsic("warpsize", "32.")
shared = Namespace("shared", ("array",))
local = Namespace("local", ("array",))
const = Namespace("const", ("array_like",))
# cuda.fp16: numba's half-precision intrinsics.
FP16_BINARY = ("hadd", "hsub", "hmul", "hdiv", "hmax", "hmin")
FP16_COMPARISONS = ("heq", "hne", "hgt", "hge", "hlt", "hle")
FP16_UNARY = (
    "hneg",
    "habs",
    "hsin",
    "hcos",
    "hlog",
    "hlog10",
    "hlog2",
    "hexp",
    "hexp10",
    "hexp2",
    "hsqrt",
    "hrsqrt",
    "hfloor",
    "hceil",
    "hrcp",
    "hrint",
    "htrunc",
)
fp16 = Namespace("fp16", FP16_BINARY + FP16_COMPARISONS + FP16_UNARY + ("hfma",))
atomic = Namespace("atomic", ("add", "sub", "max", "min", "nanmax", "nanmin", "exch", "cas", "compare_and_swap", "inc", "dec", "and_", "or_", "xor"))

# Functions: the translator's table in _translate.py says what each becomes.
FUNCTIONS = (
    "grid",
    "gridsize",
    "syncthreads",
    "syncthreads_count",
    "syncthreads_and",
    "syncthreads_or",
    "syncwarp",
    "threadfence",
    "threadfence_block",
    "threadfence_system",
    "shfl_sync",
    "shfl_up_sync",
    "shfl_down_sync",
    "shfl_xor_sync",
    "all_sync",
    "any_sync",
    "eq_sync",
    "ballot_sync",
    "match_any_sync",
    "match_all_sync",
    "match_all_sync",
    "activemask",
    "lanemask_lt",
    "popc",
    "brev",
    "clz",
    "ffs",
    "fma",
    "cbrt",
    "selp",
)
functions = {name: Intrinsic(name) for name in FUNCTIONS}
