"""The package itself: import without a driver, version, docstrings,
annotations and type stubs, exceptions, and the built extension."""

import ast
import difflib
import importlib.metadata
import inspect
import os
import pathlib
import re
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
        "print('libcuda' in maps, 'libnvrtc' in maps)\n"
    )
    assert out.split() == ["False", "False"]


def cmake_project_version():
    """The version in project() of the top CMakeLists.txt, found with the regex pyproject.toml gives scikit-build-core."""
    import tomllib

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" in pyproject["project"]["dynamic"] and "version" not in pyproject["project"]
    provider = pyproject["tool"]["scikit-build"]["metadata"]["version"]
    match = re.search(provider["regex"], (ROOT / provider["input"]).read_text(), re.MULTILINE)
    assert match, f"{provider['regex']!r} finds no version in {provider['input']}"
    return match.group("value")


def test_version_is_the_cmake_project_version():
    assert lockstep.__version__ == cmake_project_version()


def test_version_is_the_installed_distributions():
    # pip-installed, the metadata's version; built and installed by CMake alone, the project's.
    installed = [
        d
        for d in importlib.metadata.distributions()
        if d.metadata["Name"] == "lockstep" and pathlib.Path(d.locate_file("lockstep/__init__.py")).resolve() == PACKAGE / "__init__.py"
    ]
    expected = installed[0].version if installed else cmake_project_version()
    assert lockstep.__version__ == expected


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


def test_type_stub_is_the_checked_in_reference():
    # The build generates _core.pyi from the bindings (nanobind's stub generator,
    # python/CMakeLists.txt); python/lockstep/_core.pyi must be that output, so
    # a change to the bindings comes with its stub.
    generated = (PACKAGE / "_core.pyi").read_text().splitlines(keepends=True)
    reference = (ROOT / "python" / "lockstep" / "_core.pyi").read_text().splitlines(keepends=True)
    diff = "".join(difflib.unified_diff(reference, generated, "python/lockstep/_core.pyi", str(PACKAGE / "_core.pyi")))
    assert not diff, (
        "the generated stub differs from python/lockstep/_core.pyi; refresh it with "
        "`cmake --build <build dir> --target update_core_stub` (or copy the generated one over it):\n" + diff
    )


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
        if not name.startswith("_") or name in (
            "__dlpack__",
            "__dlpack_device__",
            "__getitem__",
            "__array__",
            "__matmul__",
            "__add__",
            "__radd__",
            "__mul__",
            "__truediv__",
            "__neg__",
        ):
            assert name in members, f"_core.pyi's Tensor lacks {name}"
    compile_error = next(node for node in stub.body if isinstance(node, ast.ClassDef) and node.name == "CompileError")
    assert any(isinstance(node, ast.AnnAssign) and node.target.id == "log" for node in compile_error.body)
    # EmulatorOptions (python/stubgen_patterns.txt) names the keys emulator_options() returns
    options = next(node for node in stub.body if isinstance(node, ast.ClassDef) and node.name == "EmulatorOptions")
    assert {node.target.id for node in options.body if isinstance(node, ast.AnnAssign)} == set(lockstep.emulator_options())


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
    (section_offset,) = struct.unpack_from("<Q", elf, 0x28)
    entry_size, count = struct.unpack_from("<HH", elf, 0x3A)
    types = [struct.unpack_from("<I", elf, section_offset + i * entry_size + 4)[0] for i in range(count)]
    assert 2 in types, "no SHT_SYMTAB section: the extension was stripped"


def test_headers_and_kernels_are_installed_beside_the_extension():
    assert (PACKAGE / "include" / "lockstep" / "cuda.h").exists()
    assert (PACKAGE / "liblockstep_kernels.so").exists()
