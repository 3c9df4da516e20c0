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
placed first on ``sys.meta_path`` before numba.cuda is first imported
(in _lockstep_numba_cuda.py, outside this package: the .pth installs it while
the interpreter starts, before NumPy can be imported).
"""

from __future__ import annotations

import os
import runpy
import sys

from _lockstep_numba_cuda import ENVIRONMENT_VARIABLE, NumbaCudaModule, install, install_if_requested, installed

__all__ = ["ENVIRONMENT_VARIABLE", "NumbaCudaModule", "install", "install_if_requested", "installed", "main"]


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
