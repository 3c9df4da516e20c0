"""One generated CUDA C++ source: the kernel, the device functions it calls
(one definition per argument types) and the constant arrays it reads."""

from __future__ import annotations

import ast
from typing import Any, Callable

import numpy as np

from ._types import Array, Type, none, scalar_named
from ._values import cpp_identifier, literal, unique_name


class Program:
    """One generated source: the kernel, the device functions it calls (one
    per argument types) and the constant arrays it reads."""

    def __init__(self) -> None:
        self.definitions: list[str] = []
        self.device_functions: dict[tuple[Any, tuple[Any, ...]], tuple[str, Type]] = {}
        self.in_progress: set[tuple[Any, tuple[Any, ...]]] = set()
        self.constants: dict[int, tuple[str, Array]] = {}
        self.names: set[str] = set()
        self.declarations: dict[str, str] = {}  # cuda.declare_device functions called: name -> C++ declaration
        self.links: list[str] = []  # their link= sources
        self.static_shared_bytes = 0  # the cuda.shared.array storage of the kernel and its device functions

    def foreign(self, f: Any) -> None:
        """A cuda.declare_device function called: its declaration, and its link= sources, go into the source."""
        if self.declarations.setdefault(f.name, f.declaration()) != f.declaration():
            raise ValueError(f"{f.name} is declared with two signatures in one kernel")
        self.links.extend(p for p in f.link if p not in self.links)

    def unique(self, base: str) -> str:
        return unique_name(base, self.names)

    def device_function(self, func: Callable[..., Any], arg_types: tuple[Any, ...], at: Any, node: ast.AST) -> tuple[str, Type]:
        """The C++ name and result type of ``func`` for ``arg_types``, translated on first use by a translator of ``at``'s class."""
        key = (func, arg_types)
        if key in self.device_functions:
            return self.device_functions[key]
        if key in self.in_progress:
            at.fail(node, f"{func.__name__} calls itself; kernels and device functions cannot recurse here")
        self.in_progress.add(key)
        translator = type(at)(self, func, list(arg_types), kernel=False, cpp_name=self.unique(cpp_identifier(func.__name__)))
        definition = translator.translate()
        self.in_progress.discard(key)
        result = (translator.cpp_name, translator.return_type or none)
        self.device_functions[key] = result
        self.definitions.append(definition)
        return result

    def constant_array(self, array: np.ndarray, at: Any, node: ast.AST) -> tuple[str, Array]:
        if id(array) in self.constants:
            return self.constants[id(array)]
        dtype = scalar_named(array.dtype)
        if dtype is None or dtype.name == "float16":
            at.fail(node, f"a constant array of {array.dtype} is not supported; use a numeric dtype such as float32 or int32")
        if array.ndim == 0:
            at.fail(node, "a 0-d array cannot be a constant array; use a Python number")
        name = self.unique("constant")
        flat = np.ascontiguousarray(array).reshape(-1)
        items = ", ".join(literal(x.item()).code or "" for x in flat) if flat.size else "0"
        space = "__constant__" if array.nbytes <= 32768 else "__device__"
        self.definitions.insert(0, f"{space} const {dtype.cpp} {name}_storage[{max(flat.size, 1)}] = {{{items}}};")
        view = (
            f"lockstep::py::over<{dtype.cpp}, {array.ndim}>(const_cast<{dtype.cpp}*>({name}_storage), {{{', '.join(str(s) for s in array.shape)}}})"
        )
        result = (view, Array(dtype, array.ndim, True, readonly=True))
        self.constants[id(array)] = result
        return result
