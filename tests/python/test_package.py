"""The package itself: import without a driver, version, docstrings,
annotations and type stubs, exceptions, and the built extension."""

import ast
import inspect
import os
import pathlib
import struct
import subprocess
import sys

import lockstep

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = pathlib.Path(lockstep.__file__).resolve().parent


def run_python(code):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PACKAGE.parent), os.environ.get("PYTHONPATH", "")]))
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert child.returncode == 0, child.stderr
    return child.stdout


def test_import_needs_no_driver():
    # Importing lockstep and working on the emulator must not load the NVIDIA
    # driver (or fail without one); only a cuda device does.
    out = run_python(
        "import numpy as np, lockstep\n"
        "x = lockstep.asarray(np.ones((4, 4), np.float32))\n"
        "assert float((x @ x).sum(dim=1).sum(dim=0).numpy()) == 64.0\n"
        "maps = open('/proc/self/maps').read()\n"
        "print('libcuda' in maps, 'libnvrtc' in maps)\n")
    assert out.split() == ["False", "False"]


def test_version_matches_pyproject():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert lockstep.__version__ == project["version"]


def test_all_names_exist_and_have_docstrings():
    assert len(set(lockstep.__all__)) == len(lockstep.__all__)
    for name in lockstep.__all__:
        assert hasattr(lockstep, name), name
        if name == "__version__":
            continue
        doc = inspect.getdoc(getattr(lockstep, name)) or ""
        # nanobind puts the signature first: the text after it must say something
        text = doc.split("\n\n", 1)[1] if doc.startswith(f"{name}(") and "\n\n" in doc else doc
        assert len(text.strip()) > 10, f"lockstep.{name} has no docstring"


def test_public_methods_have_docstrings():
    for cls in (lockstep.Tensor, lockstep.Device, lockstep.Module, lockstep.Kernel):
        for name, member in vars(cls).items():
            if name.startswith("_") or name == "T":
                continue
            assert inspect.getdoc(member), f"{cls.__name__}.{name} has no docstring"


def test_python_functions_are_annotated():
    for name in lockstep.__all__:
        obj = getattr(lockstep, name)
        if not inspect.isfunction(obj):
            continue
        signature = inspect.signature(obj)
        assert signature.return_annotation is not inspect.Signature.empty, f"lockstep.{name} has no return annotation"
        for parameter in signature.parameters.values():
            if parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                assert parameter.annotation is not inspect.Parameter.empty, f"lockstep.{name}({parameter.name}) has no annotation"


def test_type_stubs_name_the_extension_api():
    assert (PACKAGE / "py.typed").exists()
    stub = ast.parse((PACKAGE / "_core.pyi").read_text())
    top = {node.name for node in stub.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    # everything the compiled module defines
    for name, obj in vars(lockstep._core).items():
        if not name.startswith("_") and (callable(obj) or isinstance(obj, type)):
            assert name in top, f"_core.pyi lacks {name}"
    # every public member of Tensor, the compiled ones and those the package adds
    tensor = next(node for node in stub.body if isinstance(node, ast.ClassDef) and node.name == "Tensor")
    members = {node.name for node in tensor.body if isinstance(node, ast.FunctionDef)}
    for name in dir(lockstep.Tensor):
        if not name.startswith("_") or name in ("__dlpack__", "__dlpack_device__", "__getitem__", "__array__", "__matmul__",
                                                "__add__", "__radd__", "__mul__", "__truediv__", "__neg__"):
            assert name in members, f"_core.pyi's Tensor lacks {name}"
    compile_error = next(node for node in stub.body if isinstance(node, ast.ClassDef) and node.name == "CompileError")
    assert any(isinstance(node, ast.AnnAssign) and node.target.id == "log" for node in compile_error.body)


def test_exception_hierarchy():
    assert issubclass(lockstep.CudaError, RuntimeError)
    assert issubclass(lockstep.LaunchError, lockstep.CudaError)
    assert issubclass(lockstep.KernelError, lockstep.CudaError)
    assert not issubclass(lockstep.LaunchError, lockstep.KernelError)
    assert issubclass(lockstep.ArgumentError, TypeError)
    assert issubclass(lockstep.ShapeError, ValueError)
    assert issubclass(lockstep.DeviceUnavailable, RuntimeError)
    assert issubclass(lockstep.CompileError, RuntimeError)


def test_extension_keeps_its_symbol_table():
    # The emulator finds each kernel's static __shared__ size in the module's
    # .symtab; a stripped build would silently lose it.
    with open(lockstep._core.__file__, "rb") as f:
        elf = f.read()
    assert elf[:4] == b"\x7fELF" and elf[4] == 2  # 64-bit
    section_offset, = struct.unpack_from("<Q", elf, 0x28)
    entry_size, count = struct.unpack_from("<HH", elf, 0x3A)
    types = [struct.unpack_from("<I", elf, section_offset + i * entry_size + 4)[0] for i in range(count)]
    assert 2 in types, "no SHT_SYMTAB section: the extension was stripped"


def test_headers_and_kernels_are_installed_beside_the_extension():
    assert (PACKAGE / "include" / "lockstep" / "cuda.h").exists()
    assert (PACKAGE / "liblockstep_kernels.so").exists()
