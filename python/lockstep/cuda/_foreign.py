"""``cuda.declare_device``: a CUDA C++ device function kernels call, given by
its name and numba signature, its source given by ``link=`` (on the kernel's
``@cuda.jit`` or on the declaration). numba's ABI (the default) is
``extern "C" __device__ int name(R* result, args...)``, returning a status
the caller ignores; ``abi="c"`` is ``extern "C" __device__ R name(args...)``.
The sources are CUDA C++ files, pasted into the kernel's source before it
(lockstep compiles one source; NVRTC and the host compiler alike)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from ._types import Scalar, Type, parse_signature

SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".cpp")


@dataclass(frozen=True)
class ForeignFunction:
    """What ``cuda.declare_device`` gives: callable in kernels only."""

    name: str
    result: Type | None  # None: void
    params: tuple[Type, ...]
    abi: str = "numba"
    link: tuple[str, ...] = field(default=())

    def __call__(self, *args: object) -> object:
        raise RuntimeError(f"{self.name} is a device function declared with cuda.declare_device; call it inside a @cuda.jit kernel")

    def declaration(self) -> str:
        """Its C++ declaration, which the generated source carries before the kernels that call it."""
        params = [t.cpp for t in self.params]
        if self.abi == "numba":
            result = "void" if self.result is None else self.result.cpp
            return f'extern "C" __device__ int {self.name}({", ".join([f"{result}*", *params])});'
        return f'extern "C" __device__ {"void" if self.result is None else self.result.cpp} {self.name}({", ".join(params)});'


def declare_device(
    name: str, sig: str, link: Iterable[str] | str | None = None, use_cooperative: bool = False, abi: str = "numba"
) -> ForeignFunction:
    """numba.cuda.declare_device: the device function ``name`` of numba signature ``sig`` ("float32(float32, float32)")."""
    if abi not in ("numba", "c"):
        raise NotImplementedError(f"abi={abi!r}: declare_device takes abi='numba' (result through a pointer) or abi='c'")
    result, params = parse_signature(sig)
    for t in params + ([result] if result is not None else []):
        if not isinstance(t, Scalar):
            raise TypeError(f"declare_device({name!r}, {sig!r}): lockstep passes numbers to foreign device functions, not a {t}")
    return ForeignFunction(name, result, tuple(params), abi, link_sources(link))


def link_sources(link: Iterable[str] | str | None) -> tuple[str, ...]:
    """``link=``'s files, checked to be CUDA C++ sources (lockstep compiles them with the kernel)."""
    files = (link,) if isinstance(link, str) else tuple(link or ())
    for path in files:
        if not str(path).endswith(SOURCE_SUFFIXES):
            raise ValueError(
                f"link={path!r}: lockstep.cuda links CUDA C++ source files ({', '.join(SOURCE_SUFFIXES)}), compiled with the kernel; "
                "PTX, cubins, fatbins and libraries are a GPU toolchain's"
            )
        if not os.path.isfile(path):
            raise FileNotFoundError(f"link={path!r}: no such file")
    return tuple(os.path.abspath(p) for p in files)


def linked_source(paths: Iterable[str]) -> str:
    """The files' text, each after a #line naming it, so compiler messages name its lines."""
    parts = []
    for path in dict.fromkeys(paths):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        escaped = path.replace("\\", "\\\\").replace('"', '\\"')
        parts.append(f'#line 1 "{escaped}"\n{text}' + ("" if text.endswith("\n") else "\n"))
    return "".join(parts)
