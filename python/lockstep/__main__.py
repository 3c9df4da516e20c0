"""The ``lockstep`` command.

    lockstep nvcc [nvcc options] FILES...
        builds a CUDA program (.cu, .cpp, .o files) as nvcc does, for the
        emulator: ``lockstep nvcc -o prog main.cu util.cu -lcublas``.

    lockstep run [nvcc options] FILES... [--] [ARGS...]
        builds the program (cached) and runs it with ARGS.

    lockstep check [--checks LIST] [--keep] [nvcc options] FILES... [--] [ARGS...]
        builds the program in check mode and runs it; exits non-zero, with
        every finding, if a kernel touched memory it should not, raced,
        diverged at a barrier or read what nothing wrote.

    lockstep bench [--quick] [--out DIR]
        the matmul speed ladder on this machine (see lockstep.bench).

Also ``python -m lockstep ...``; ``lockstep-nvcc`` is ``lockstep nvcc``.
"""

from __future__ import annotations

import os
import pathlib
import sys

USAGE = "\n".join(
    (
        "usage: lockstep nvcc [nvcc options] FILES...",
        "       lockstep run [nvcc options] FILES... [--] [ARGS...]",
        "       lockstep check [--checks LIST] [--keep] [nvcc options] FILES... [--] [ARGS...]",
        "       lockstep bench [--quick] [--out DIR]",
    )
)
DRIVER_COMMANDS = ("nvcc", "run", "check")


def _driver(args: list[str]) -> int:
    """Replace this process with the compiler driver installed beside the package."""
    package = pathlib.Path(__file__).resolve().parent
    tool = package / "lockstep-nvcc"
    if not tool.exists():
        print(f"lockstep: {tool} is missing; reinstall lockstep (pip install .)", file=sys.stderr)
        return 2
    # The driver finds lockstep's headers and libraries beside itself; exec
    # keeps the terminal, the exit status and Ctrl-C the program's own.
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(str(tool), [str(tool), *args])


def main(argv: list[str] | None = None) -> int:
    """Run the ``lockstep`` command with ``argv`` (default: the process's arguments)."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "bench":
        from . import bench

        return bench.main(args[1:])
    if not args or args[0] not in DRIVER_COMMANDS:
        print(USAGE, file=sys.stderr)
        return 2
    return _driver(args)


def nvcc() -> int:
    """The ``lockstep-nvcc`` command: ``lockstep nvcc`` under one name, for build files (NVCC=lockstep-nvcc)."""
    return _driver(["nvcc", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
