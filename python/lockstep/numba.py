"""An unchanged numba CUDA project on lockstep: ``numba.cuda`` (and ``from
numba import cuda``) resolve to lockstep.cuda, kernels and host calls alike
(jit, to_device, device_array, is_available, is_cuda_array, synchronize,
...), while the rest of numba (njit, numba.int32, numba.types) stays numba's.

    python -m lockstep.numba script.py args...
    python -m lockstep.numba -m pytest tests/...
    LOCKSTEP_NUMBA_CUDA=1 python -m pytest tests/...   # through lockstep_numba_cuda.pth, installed with lockstep

numba's own simulator switches inside numba (numba/cuda/__init__.py imports
the simulator's names when NUMBA_ENABLE_CUDASIM=1); lockstep cannot edit
numba, so it answers the import of ``numba.cuda`` itself, with a finder
placed first on ``sys.meta_path`` before numba.cuda is first imported.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import runpy
import sys
import types
from typing import Any

ENVIRONMENT_VARIABLE = "LOCKSTEP_NUMBA_CUDA"


class _NumbaCudaModule(types.ModuleType):
    """``numba.cuda`` as lockstep.cuda: every name read from lockstep.cuda."""

    def __getattr__(self, name: str) -> Any:
        import lockstep.cuda

        try:
            return getattr(lockstep.cuda, name)
        except AttributeError:
            raise AttributeError(
                f"numba.cuda.{name} is not provided by lockstep.cuda, which stands for numba.cuda here ({ENVIRONMENT_VARIABLE}=1 "
                "or python -m lockstep.numba); docs/numba.md lists what is"
            ) from None

    def __dir__(self) -> list[str]:
        import lockstep.cuda

        return sorted(set(dir(lockstep.cuda)))


class _NumbaCudaFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers ``import numba.cuda`` with lockstep.cuda's names (its submodules: not found, as lockstep has none)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != "numba.cuda":
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _NumbaCudaModule(spec.name, "lockstep.cuda, standing for numba.cuda")
        module.__path__ = []  # a package with no submodules: numba.cuda.cudadrv and friends are not found
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        import lockstep.cuda

        module.__dict__.update({k: v for k, v in vars(lockstep.cuda).items() if not k.startswith("__")})
        module.__all__ = list(lockstep.cuda.__all__)


_FINDER = _NumbaCudaFinder()


def install() -> None:
    """From now on ``numba.cuda`` is lockstep.cuda. Refused when numba's own numba.cuda is already imported."""
    if _FINDER in sys.meta_path:
        return
    existing = sys.modules.get("numba.cuda")
    if existing is not None and not isinstance(existing, _NumbaCudaModule):
        raise RuntimeError("numba.cuda was imported before lockstep.numba.install(); call it first (or use python -m lockstep.numba)")
    sys.meta_path.insert(0, _FINDER)


def installed() -> bool:
    return _FINDER in sys.meta_path


def install_if_requested() -> None:
    """What lockstep_numba_cuda.pth runs at each interpreter start: install() where LOCKSTEP_NUMBA_CUDA is set (not 0)."""
    if os.environ.get(ENVIRONMENT_VARIABLE, "0") not in ("", "0"):
        install()


def main(argv: list[str] | None = None) -> int:
    """``python -m lockstep.numba script.py args`` or ``python -m lockstep.numba -m module args``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or (argv[0] == "-m" and len(argv) < 2):
        print(__doc__.split("\n\n")[1] if __doc__ else "", file=sys.stderr)
        print("usage: python -m lockstep.numba script.py [args] | -m module [args]", file=sys.stderr)
        return 2
    os.environ[ENVIRONMENT_VARIABLE] = "1"  # child Pythons (pytest-xdist, multiprocessing) too, through the .pth
    install()
    if argv[0] == "-m":
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
