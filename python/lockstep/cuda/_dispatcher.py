"""@cuda.jit: a Python function as a kernel (``kernel[grid, block](args)``) or
a device function, specialised on its arguments' types at first launch (or
on the signatures given), translated to CUDA C++ and compiled by lockstep's
JIT for the device the launch runs on (the host compiler and the emulator on
"cpu", NVRTC on a GPU), cached per types, device and check mode."""

from __future__ import annotations

import functools
import hashlib
import warnings
from collections.abc import Iterator
from typing import Any, Callable

import numpy as np

from .. import _core
from .._emulator import emulator_options
from .._kernels import FibersWarning, _extents, _stream_handle, compile
from .._output import _stdout_is_fd1, kernel_output_to_sys_stdout
from .._toolkit import toolkit_include_dirs
from ._arrays import ArrayArgument, array_argument, array_device, current_device, tuple_argument
from ._device_functions import JitFunction
from ._foreign import link_sources
from ._python_terms import in_python_terms, python_signature
from ._translate import KernelSource, TypingError, kernel_types, translate_kernel
from ._types import Array, Scalar, Type, parse_signature, scalar_named, typeof_number


def _signature_types(signature: Any) -> tuple[Type | None, list[Type]]:
    if isinstance(signature, str):
        return parse_signature(signature)
    if hasattr(signature, "args"):  # numba's Signature objects: void(float32[:], int32)
        return None, [_numba_type(a) for a in signature.args]
    if isinstance(signature, (tuple, list)):
        return None, [_numba_type(a) for a in signature]
    raise TypeError(f"cannot read the signature {signature!r}; write it as numba does, e.g. 'void(float32[:], int32)'")


def _numba_type(t: Any) -> Type:
    if hasattr(t, "ndim") and hasattr(t, "dtype") and hasattr(t, "layout"):
        dtype = scalar_named(t.dtype)
        if dtype is None:
            raise TypeError(f"arrays of {t.dtype} are not supported")
        return Array(dtype, t.ndim, t.layout == "C")
    scalar = scalar_named(t)
    if scalar is None:
        raise TypeError(f"the type {t!r} is not supported in signatures")
    return scalar


class _Specialization:
    """One kernel specialisation, as numba's ``overloads`` values: its C++ name, source and compiled functions."""

    __slots__ = ("name", "source", "functions", "argument_types", "cooperative", "static_shared_bytes")

    def __init__(self, name: str, translated: KernelSource, argument_types: tuple[Type, ...]):
        self.name, self.source, self.argument_types = name, translated.text, argument_types
        self.functions: dict[tuple[str, str], _core.Function] = {}  # per device and check mode
        self.cooperative = translated.cooperative  # grid.sync(): every block resident at once, as numba launches it
        self.static_shared_bytes = translated.static_shared_bytes

    def max_cooperative_grid_blocks(self, blockdim: Any, dynsmemsize: int = 0) -> int:
        """numba's: how many blocks of ``blockdim`` threads a cooperative launch of this kernel can have."""
        threads = int(np.prod(_dims(blockdim, "threads")))
        return int(_core.max_cooperative_blocks(current_device(), threads, self.static_shared_bytes + int(dynsmemsize)))

    def inspect_cuda(self) -> str:
        return self.source

    @property
    def signature(self) -> str:
        return "(" + ", ".join(str(t) for t in self.argument_types) + ")"

    def __repr__(self) -> str:
        return f"<lockstep.cuda kernel specialisation {self.signature}>"


class _Overloads(dict):  # type: ignore[type-arg]
    """A kernel's specialisations by argument types: lockstep's types, or numba's signature (a tuple of its types, a string)."""

    @staticmethod
    def _key(key: Any) -> Any:
        if isinstance(key, tuple) and all(isinstance(k, (Scalar, Array)) for k in key):
            return key
        try:
            return tuple(_signature_types(key)[1])
        except (TypeError, ValueError):
            return key

    def __getitem__(self, key: Any) -> _Specialization:
        return super().__getitem__(self._key(key))

    def __contains__(self, key: Any) -> bool:
        return super().__contains__(self._key(key))

    def get(self, key: Any, default: Any = None) -> Any:
        return super().get(self._key(key), default)


class Dispatcher(JitFunction):
    """A @cuda.jit function. Kernels launch as ``kernel[grid, block]`` or
    ``kernel[grid, block, stream, shared_bytes]`` (numba's order);
    ``inspect_cuda(*args)`` gives the CUDA C++ written for those arguments.
    Device functions are called from kernels (and, on the host, run as the
    Python function they are)."""

    def __init__(self, py_func: Callable[..., Any], device: bool, signatures: list[Any] | None, options: dict[str, Any]):
        self.py_func = py_func
        self.device = device
        self.options = options
        self._specializations: dict[tuple[Type, ...], _Specialization] = {}
        self._declared = [_signature_types(s)[1] for s in signatures] if signatures else None
        self._link = link_sources(options.get("link"))  # CUDA C++ sources for cuda.declare_device functions
        functools.update_wrapper(self, py_func)
        if self._declared and not device:
            for types in self._declared:  # numba compiles eagerly when told the types: errors show now
                self._specialize(tuple(types))

    def __repr__(self) -> str:
        return f"<lockstep.cuda {'device function' if self.device else 'kernel'} {self.py_func.__qualname__}>"

    def __call__(self, *args: Any) -> Any:
        if self.device:
            return self.py_func(*args)
        raise TypeError(f"launch the kernel {self.py_func.__name__} with a configuration: {self.py_func.__name__}[blocks, threads](...)")

    def __getitem__(self, config: Any) -> _Launch:
        if self.device:
            raise TypeError(f"{self.py_func.__name__} is a device function; call it from a kernel")
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise ValueError("launch with kernel[blocks, threads], kernel[blocks, threads, stream] or kernel[blocks, threads, stream, shared_bytes]")
        grid, block, stream, shared = (tuple(config) + (0, 0))[:4]
        return _Launch(self, _dims(grid, "blocks"), _dims(block, "threads"), _stream_handle(stream), int(shared))

    def forall(self, ntasks: int, tpb: int = 128, stream: Any = 0, sharedmem: int = 0) -> _Launch:
        """Enough blocks of ``tpb`` threads for ``ntasks`` threads, as numba's forall."""
        if int(ntasks) < 0:
            raise ValueError(f"Can't create ForAll with negative task count: {ntasks}")
        blocks = max(1, (int(ntasks) + tpb - 1) // tpb)
        return self[blocks, tpb, stream, sharedmem]

    # ---- specialisation ----
    def _specialize(self, types: tuple[Type, ...]) -> _Specialization:
        spec = self._specializations.get(types)
        if spec is None:
            digest = hashlib.sha1(repr((self.py_func.__qualname__, types)).encode()).hexdigest()[:8]
            name = f"{self.py_func.__name__}_{digest}"
            spec = _Specialization(name, translate_kernel(self.py_func, list(types), name, self._link), types)
            self._specializations[types] = spec
        return spec

    def _argument_types(self, args: tuple[Any, ...], device: str, checked: bool = False) -> tuple[list[Any], list[ArrayArgument | None]]:
        values: list[Any] = []
        arrays: list[ArrayArgument | None] = []
        for index, a in enumerate(args):
            number = typeof_number(a) if type(a) is not np.ndarray else None
            if number is not None:
                values.append(number)
                arrays.append(None)
                continue
            try:
                arg = tuple_argument(a, device, checked) if isinstance(a, tuple) else array_argument(a, device, checked)
            except TypeError as e:
                raise _core.ArgumentError(f"argument {index} of {self.py_func.__name__}: {e}") from None
            values.append(arg.type)
            arrays.append(arg)
        return values, arrays

    def _types_for(self, found: list[Type]) -> tuple[Type, ...]:
        if self._declared is None:
            return tuple(found)
        for declared in self._declared:
            if len(declared) == len(found) and all(_fits(d, f, exact_element=True) for d, f in zip(declared, found)):
                return tuple(declared)
        if (
            len(self._declared) == 1
            and len(self._declared[0]) == len(found)
            and all(_fits(d, f, exact_element=False) for d, f in zip(self._declared[0], found))
        ):
            # One signature: numba passes arrays to it as they are, their bits read as the declared element type.
            return tuple(self._declared[0])
        wanted = " or ".join("(" + ", ".join(str(t) for t in d) + ")" for d in self._declared)
        raise _core.ArgumentError(f"{self.py_func.__name__} was declared for {wanted}; got ({', '.join(str(t) for t in found)})")

    def inspect_cuda(self, *args: Any, signature: Any = None) -> str:
        """The CUDA C++ lockstep wrote for these arguments (or a numba
        signature); with neither, for the last launch."""
        if self.device:
            raise TypeError("inspect the kernel that calls this device function; its source holds both")
        if signature is not None:
            return self._specialize(tuple(_signature_types(signature)[1])).source
        if args:
            types, _ = self._argument_types(args, _launch_device(args))
            return self._specialize(self._types_for(types)).source
        if not self._specializations:
            raise ValueError(f"{self.py_func.__name__} has not been launched; pass example arguments: inspect_cuda(a, b, n)")
        return list(self._specializations.values())[-1].source

    @property
    def signatures(self) -> list[str]:
        """The argument types of each specialisation so far."""
        return [spec.signature for spec in self._specializations.values()]

    @property
    def overloads(self) -> _Overloads:
        """numba's overloads: argument types -> the specialisation compiled for them (``inspect_cuda()``);
        numba's own signatures index it too (``kernel.overloads[(int32[:, ::1],)]``)."""
        return _Overloads(self._specializations)

    @property
    def specialized(self) -> bool:
        """Whether this dispatcher was made by ``specialize`` (it takes those argument types only)."""
        return bool(self.options.get("_specialized"))

    def specialize(self, *args: Any) -> Dispatcher:
        """numba's specialize: a new kernel for the types of ``args`` only, translated now."""
        if self.device:
            raise TypeError("specialize a kernel, not a device function")
        if self.specialized:
            raise RuntimeError("Dispatcher already specialized")
        found, _ = self._argument_types(args, _launch_device(args))
        types = self._types_for(found)
        made = Dispatcher(self.py_func, False, None, {**self.options, "_specialized": True})
        made._declared = [list(types)]
        made._specialize(tuple(types))
        return made

    def inspect_types(self, file: Any = None) -> None:
        """Each specialisation's Python source with the types numba's rules gave its variables, as numba's
        inspect_types prints them (lockstep's typing pass: kernel_types); into ``file``, else sys.stdout."""
        import inspect
        import sys

        out = file if file is not None else sys.stdout
        lines, first = inspect.getsourcelines(self.py_func)
        for types, spec in self._specializations.items():
            table = kernel_types(self.py_func, list(types))
            print(f"{self.py_func.__name__} {spec.signature}", file=out)
            print("-" * 80, file=out)
            print(f"# File: {inspect.getsourcefile(self.py_func)}", file=out)
            shown: set[str] = set()
            for k, text in enumerate(lines):
                print(f"# --- LINE {first + k} --- ", file=out)
                print(text.rstrip("\n"), file=out)
                for name, t in table.variables.items():
                    if name not in shown and t is not None and _assigns(text, name):
                        shown.add(name)
                        print(f"#   {name} :: {t}", file=out)
            print("=" * 80, file=out)


def _assigns(line: str, name: str) -> bool:
    """Whether the source line is where ``name`` gets a value (a parameter of the def, an assignment, a for target)."""
    import re

    code = line.split("#", 1)[0]
    word = rf"\b{re.escape(name)}\b"
    parameter, assignment, loop = rf"^\s*def .*{word}", rf"{word}[^=()]*(?<![=!<>])[-+*/%&|^]?=(?!=)", rf"^\s*for\b.*{word}.*\bin\b"
    pattern = f"({parameter})|({assignment})|({loop})"
    return re.search(pattern, code) is not None


def _dims(value: Any, what: str) -> list[int]:
    if type(value) is int and value >= 0:  # the common cases, without the general checks' cost
        return [value]
    if type(value) is tuple and 1 <= len(value) <= 3 and all(type(e) is int and e >= 0 for e in value):
        return list(value)
    return _extents(value, what)


def _fits(declared: Type, found: Type, exact_element: bool) -> bool:
    """Whether an argument of type ``found`` may take a parameter declared ``declared``:
    an array of the same rank (and element type, or element size where numba
    reinterprets), C-contiguous where that was declared; any number for a number."""
    if isinstance(declared, Array):
        return (
            isinstance(found, Array)
            and found.ndim == declared.ndim
            and (found.dtype == declared.dtype if exact_element else found.dtype.bits == declared.dtype.bits)
            and (found.contiguous or not declared.contiguous)
        )
    return isinstance(found, Scalar)


def _gpu_devices(args: tuple[Any, ...]) -> Iterator[str]:
    """The GPUs the array arguments live on (arrays inside tuples too)."""
    for a in args:
        if type(a) in (np.ndarray, int, float, bool):
            continue
        if isinstance(a, tuple):
            yield from _gpu_devices(a)
        elif (d := array_device(a)) is not None and d != "cpu":
            yield d


def _launch_device(args: tuple[Any, ...]) -> str:
    gpus = sorted(set(_gpu_devices(args)))
    if len(gpus) > 1:
        raise _core.ArgumentError(f"the kernel's arrays are on several GPUs ({', '.join(gpus)}); pass arrays of one device")
    return gpus[0] if gpus else current_device()


class _Launch:
    def __init__(self, dispatcher: Dispatcher, grid: list[int], block: list[int], stream: int, shared: int):
        self.dispatcher, self.grid, self.block, self.stream, self.shared = dispatcher, grid, block, stream, shared

    def __call__(self, *args: Any) -> None:
        d = self.dispatcher
        device = _launch_device(args)
        checks = emulator_options()["checks"] if device == "cpu" else "none"
        found, arrays = d._argument_types(args, device, checks != "none")
        types = d._types_for(found)
        spec = d._specialize(types)
        function = spec.functions.get((device, checks))
        if function is None:
            try:
                module = compile(
                    spec.source, device=device, names=[spec.name], source_name=f"{d.py_func.__name__}.cu", **_float16_options(spec, device)
                )
            except _core.CompileError as e:
                # Whatever the Python got past the translator should compile: a message here is lockstep's bug, in Python's terms.
                where = f"{d.py_func.__code__.co_filename}:{d.py_func.__code__.co_firstlineno}"
                raise TypingError(
                    f"lockstep.cuda translated {python_signature(d.py_func.__name__, types)} ({where}) into CUDA C++ that did not compile: "
                    "lockstep's bug, not yours (inspect_cuda() shows the C++; the lines below name the Python line of each error):\n"
                    + in_python_terms(str(e), spec.name, d.py_func.__name__, types)
                ) from None
            function = spec.functions[(device, checks)] = module[spec.name]._function
        values = [a.packed if a is not None else _scalar_value(v, t) for a, v, t in zip(arrays, args, types)]
        # Taken before the launch, which then prints nothing: said once, as a warning at the user's line.
        if notice := function.take_fibers_notice():
            warnings.warn(in_python_terms(notice, spec.name, d.py_func.__name__, types), FibersWarning, stacklevel=2)
        try:
            if _stdout_is_fd1():
                function.launch(device, self.grid, self.block, self.shared, self.stream, values, spec.cooperative)
            else:
                with kernel_output_to_sys_stdout():  # kernel printf into a notebook's cell
                    function.launch(device, self.grid, self.block, self.shared, self.stream, values, spec.cooperative)
        except _core.CudaError as e:  # faults and check-mode findings, naming the kernel as Python wrote it
            raise type(e)(in_python_terms(str(e), spec.name, d.py_func.__name__, types)) from None
        for a in arrays:
            if a is not None and a.copy_back is not None:
                a.copy_back()


def _float16_options(spec: _Specialization, device: str) -> dict[str, Any]:
    """NVRTC has no cuda_fp16.h of its own: a float16 kernel on a GPU compiles with the toolkit's."""
    if device == "cpu" or "__half" not in spec.source:
        return {}
    folders = toolkit_include_dirs()
    if not folders:
        raise TypingError("float16 kernels on a GPU need the CUDA toolkit's cuda_fp16.h; set CUDA_HOME to the toolkit's folder")
    return {"defines": ["LOCKSTEP_PY_FLOAT16"], "include_dirs": folders}


def _scalar_value(value: Any, declared: Type) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(declared, Scalar):
        return value
    if declared.is_float:
        return float(value)
    if isinstance(value, float):
        raise _core.ArgumentError(f"{value!r} is passed where the kernel takes {declared}")
    if declared.is_bool:
        return bool(value)
    # Integers convert as C converts them (numba wraps out-of-range values);
    # a uint64 parameter receives its bits as a signed 64-bit integer.
    bits = declared.bits
    wrapped = int(value) & ((1 << bits) - 1)
    if (not declared.is_unsigned or bits == 64) and wrapped >= 1 << (bits - 1):
        wrapped -= 1 << bits
    return wrapped


def jit(func_or_sig: Any = None, device: bool = False, **options: Any) -> Any:
    """numba.cuda.jit: ``@cuda.jit``, ``@cuda.jit(device=True)``,
    ``@cuda.jit("void(float32[:], int64)")`` or a list of signatures.
    ``link=[files]`` gives CUDA C++ sources of cuda.declare_device functions.
    numba's other options (debug, opt, lineinfo, fastmath, cache, inline,
    max_registers) are accepted; lockstep compiles with line information
    always and caches on disk always."""
    if callable(func_or_sig) and not isinstance(func_or_sig, (str, list, tuple)) and not hasattr(func_or_sig, "args"):
        return Dispatcher(func_or_sig, device, None, options)
    signatures = None if func_or_sig is None else func_or_sig if isinstance(func_or_sig, list) else [func_or_sig]

    def decorate(func: Callable[..., Any]) -> Dispatcher:
        return Dispatcher(func, device, signatures, options)

    return decorate
