"""lockstep.cuda's registry of intrinsics: what users import, what the
translator accepts and what docs/numba_intrinsics.md lists all come from its
declarations; and the package's modules import one another without a circle."""

import ast
import pathlib
import subprocess
import sys
import types

import numpy as np
import pytest

import lockstep
from lockstep import cuda
from lockstep.cuda import _intrinsics, _registry
from lockstep.cuda._intrinsics_doc import render_intrinsics_page
from lockstep.cuda._supported import INTRINSICS, is_library_function

ROOT = pathlib.Path(__file__).resolve().parents[2]
CUDA_PACKAGE = pathlib.Path(cuda.__file__).resolve().parent


def _package_imports(path: pathlib.Path) -> set[str]:
    """The lockstep.cuda modules ``path`` imports, anywhere in it (a function's lazy import too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level == 1 and node.module:  # from ._x import y
            found.add(node.module.split(".")[0])
        elif node.level == 1:  # from . import _x, _y
            found.update(alias.name for alias in node.names)
        elif node.module and node.module.startswith("lockstep.cuda."):
            found.add(node.module.split(".")[2])
    return found


def _import_graph() -> dict[str, set[str]]:
    modules = {p.stem: p for p in CUDA_PACKAGE.glob("*.py")}
    return {name: _package_imports(path) & set(modules) for name, path in modules.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A circle of imports in ``graph`` (the modules along it), or None."""
    state: dict[str, str] = {}

    def visit(module: str, path: list[str]) -> list[str] | None:
        state[module] = "open"
        for imported in sorted(graph[module]):
            if state.get(imported) == "open":
                return path[path.index(imported) :] + [imported] if imported in path else [module, imported]
            if imported not in state:
                found = visit(imported, path + [imported])
                if found:
                    return found
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            found = visit(module, [module])
            if found:
                return found
    return None


def test_the_cycle_finder_finds_a_circle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_lockstep_cuda_modules_import_one_another_without_a_circle():
    graph = _import_graph()
    assert {"__init__", "_calls", "_dispatcher", "_translate", "_registry"} <= set(graph)
    assert "_dispatcher" not in graph["_calls"]  # the circle this replaced: _calls -> _dispatcher -> _translate -> _calls
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


@pytest.mark.parametrize("module", sorted(p.stem for p in CUDA_PACKAGE.glob("_*.py") if p.stem != "__init__"))
def test_each_lockstep_cuda_module_imports_first_in_a_fresh_interpreter(module):
    result = subprocess.run([sys.executable, "-c", f"import lockstep.cuda.{module}"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_the_doc_page_is_the_registry_rendered():
    page = ROOT / "docs" / "numba_intrinsics.md"
    assert page.read_text() == render_intrinsics_page(), (
        "docs/numba_intrinsics.md is not the registry's rendering; regenerate it: python -m lockstep.cuda._intrinsics_doc > docs/numba_intrinsics.md"
    )


def test_every_declaration_has_a_row_in_the_doc_page():
    page = render_intrinsics_page()
    for name, definition in INTRINSICS.items():
        shown = name if is_library_function(name) else f"cuda.{name}"
        assert f"`{shown}{'' if definition.kind == 'value' else '()'}`" in page, name
        assert definition.doc.replace("|", "\\|") in page  # a table cell escapes its pipes


def _marker(name: str):
    obj = cuda
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def test_every_cuda_intrinsic_is_a_marker_users_import_and_nothing_else_is():
    declared = {name for name in INTRINSICS if not is_library_function(name)}
    for name in declared:
        marker = _marker(name)
        assert isinstance(marker, _intrinsics.Intrinsic) and marker.name == name
        assert marker.__doc__ == INTRINSICS[name].doc
    markers = set()
    for attribute in cuda.__all__:
        obj = getattr(cuda, attribute)
        if isinstance(obj, _intrinsics.Intrinsic):
            markers.add(obj.name)
        elif isinstance(obj, (_intrinsics.Namespace, types.ModuleType)):  # cuda.random is a module, as numba's
            markers.update(m.name for m in vars(obj).values() if isinstance(m, _intrinsics.Intrinsic))
    assert markers == declared
    assert isinstance(cuda.threadIdx, _intrinsics.Dim3) and not isinstance(cuda.atomic, _intrinsics.Dim3)


def test_markers_called_outside_a_kernel_say_where_they_belong():
    with pytest.raises(RuntimeError, match=r"cuda.fp16.hadd\(\) can only be called inside a @cuda.jit kernel"):
        cuda.fp16.hadd(1, 2)


def test_an_intrinsic_is_declared_once():
    with pytest.raises(ValueError, match="declared twice"):
        _registry.define("syncthreads", "again", typing=None, emit="x", translate=lambda t, n: None)
    with pytest.raises(ValueError, match="needs a typing rule and an emission"):
        _registry.define("not_an_intrinsic", "half a declaration", emit="x")
    assert "not_an_intrinsic" not in INTRINSICS


def test_a_value_of_the_kernel_language_refuses_a_call():
    @cuda.jit
    def calls_warpsize(out):
        out[0] = cuda.warpsize()

    with pytest.raises(cuda.TypingError, match="cuda.warpsize is a value, not a function"):
        calls_warpsize[1, 1](np.zeros(1, np.int32))


# ---- the intrinsic added through the registry: cuda.nanosleep ----


@cuda.jit
def _handoff(flag, out):
    # Thread 0 polls until thread 32 (another warp) raises the flag, sleeping between polls.
    i = cuda.threadIdx.x
    if i == 0:
        while cuda.atomic.add(flag, 0, 0) == 0:
            cuda.nanosleep(100)
        out[0] = out[1] + 1
    elif i == 32:
        out[1] = 41
        cuda.threadfence()
        cuda.atomic.exch(flag, 0, 1)


def test_nanosleep_lets_a_polling_thread_wait_for_another_warp(device):
    flag = lockstep.asarray(np.zeros(1, np.int32), device=device)
    out = lockstep.asarray(np.zeros(2, np.int32), device=device)
    _handoff[1, 64](flag, out)
    assert out.to("cpu").numpy().tolist() == [42, 41]
    assert "__nanosleep(static_cast<unsigned int>(100LL));" in _handoff.inspect_cuda(flag, out)


def test_nanosleep_takes_one_number():
    @cuda.jit
    def sleeps_on_an_array(a):
        cuda.nanosleep(a)

    with pytest.raises(cuda.TypingError, match="cuda.nanosleep takes numbers, not a array"):
        sleeps_on_an_array[1, 1](np.zeros(1, np.int32))

    @cuda.jit
    def sleeps_twice(a):
        cuda.nanosleep(1, 2)

    with pytest.raises(cuda.TypingError, match="cuda.nanosleep takes 1 argument, 2 given"):
        sleeps_twice[1, 1](np.zeros(1, np.int32))
