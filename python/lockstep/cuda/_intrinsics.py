"""The names of numba's CUDA kernel language (cuda.threadIdx, cuda.syncthreads,
cuda.shared.array, cuda.atomic.add, ...) as markers, one per registry entry
(_registry.py, gathered in _supported.py): the translator knows each by its
``name``; called outside a kernel they say where they belong."""

from __future__ import annotations

from typing import Any

from ._supported import INTRINSICS, is_library_function


class Intrinsic:
    """A function or value of the kernel language, meaningful only in a kernel."""

    def __init__(self, name: str, doc: str = ""):
        self.name = name
        self.__doc__ = doc or f"cuda.{name} (in kernels only)"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"cuda.{self.name}() can only be called inside a @cuda.jit kernel or device function")

    def __repr__(self) -> str:
        return f"<lockstep.cuda intrinsic {self.name}>"


class Namespace:
    """cuda.shared, cuda.local, cuda.const, cuda.fp16 and cuda.atomic: groups of intrinsics."""

    def __init__(self, name: str, members: dict[str, Intrinsic]):
        self.name = name
        for member, marker in members.items():
            setattr(self, member, marker)

    def __repr__(self) -> str:
        return f"<lockstep.cuda {self.name}>"


class Dim3(Namespace):
    """threadIdx, blockIdx, blockDim, gridDim: ``.x``, ``.y``, ``.z`` in kernels."""


def _markers() -> dict[str, Any]:
    """cuda's attribute -> its marker: an Intrinsic, or a Namespace of them (a Dim3 where it holds x, y and z values)."""
    top: dict[str, Any] = {}
    groups: dict[str, dict[str, Intrinsic]] = {}
    for name, definition in INTRINSICS.items():
        if is_library_function(name):
            continue
        prefix, _, member = name.rpartition(".")
        marker = Intrinsic(name, definition.doc)
        if prefix:
            groups.setdefault(prefix, {})[member] = marker
        else:
            top[name] = marker
    for prefix, members in groups.items():
        values = all(INTRINSICS[f"{prefix}.{m}"].kind == "value" for m in members)
        top[prefix] = Dim3(prefix, members) if values and set(members) == set("xyz") else Namespace(prefix, members)
    return top


KERNEL_LANGUAGE: dict[str, Any] = _markers()
"""Every name of ``cuda`` a kernel uses: syncthreads, laneid, threadIdx, shared, atomic, fp16, ..."""
