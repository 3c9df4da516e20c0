"""The import hook of lockstep's no-edit mode (lockstep/numba.py): a finder
that answers ``import numba.cuda`` with lockstep.cuda's names.

It lives outside the lockstep package, and imports nothing of lockstep until
numba.cuda is imported, because lockstep_numba_cuda.pth installs it while the
interpreter starts: then a venv made with --system-site-packages has not yet
put the system's site-packages (NumPy, numba) on sys.path, and importing
lockstep there would fail.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import types
from typing import Any

ENVIRONMENT_VARIABLE = "LOCKSTEP_NUMBA_CUDA"


class NumbaCudaModule(types.ModuleType):
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


class NumbaCudaFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers ``import numba.cuda`` (and ``numba.cuda.random``) with lockstep.cuda's
    names; numba.cuda's other submodules are not found, as lockstep has none."""

    SUBMODULES = {"numba.cuda": "lockstep.cuda", "numba.cuda.random": "lockstep.cuda.random"}

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.SUBMODULES:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=fullname == "numba.cuda")

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = NumbaCudaModule(spec.name, f"{self.SUBMODULES[spec.name]}, standing for {spec.name}")
        if spec.name == "numba.cuda":
            module.__path__ = []  # a package whose only submodule is random: numba.cuda.cudadrv and friends are not found
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        import importlib

        source = importlib.import_module(self.SUBMODULES[module.__name__])
        module.__dict__.update({k: v for k, v in vars(source).items() if not k.startswith("__")})
        if hasattr(source, "__all__"):
            module.__all__ = list(source.__all__)


FINDER = NumbaCudaFinder()


def install() -> None:
    """From now on ``numba.cuda`` is lockstep.cuda. Refused when numba's own numba.cuda is already imported."""
    if FINDER in sys.meta_path:
        return
    existing = sys.modules.get("numba.cuda")
    if existing is not None and not isinstance(existing, NumbaCudaModule):
        raise RuntimeError("numba.cuda was imported before lockstep.numba.install(); call it first (or use python -m lockstep.numba)")
    sys.meta_path.insert(0, FINDER)


def installed() -> bool:
    return FINDER in sys.meta_path


def install_if_requested() -> None:
    """What lockstep_numba_cuda.pth runs at each interpreter start: install() where LOCKSTEP_NUMBA_CUDA is set (not 0)."""
    if os.environ.get(ENVIRONMENT_VARIABLE, "0") not in ("", "0"):
        install()
