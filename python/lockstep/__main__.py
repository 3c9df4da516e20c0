"""The ``lockstep`` command.

    lockstep check [-I DIR]... [-D NAME[=VALUE]]... [--checks LIST] FILE.cu [ARGS...]
        builds FILE.cu, a single-source CUDA program with its own main (a test
        harness), for the emulator in check mode and runs it; exits non-zero,
        with every finding, if a kernel touched memory it should not, raced,
        diverged at a barrier or read what nothing wrote.

    lockstep bench [--quick] [--out DIR]
        the matmul speed ladder on this machine (see lockstep.bench).

Also ``python -m lockstep ...``.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

USAGE = "\n".join(
    (
        "usage: lockstep check [-I DIR]... [-D NAME[=VALUE]]... [--checks LIST] FILE.cu [ARGS...]",
        "       lockstep bench [--quick] [--out DIR]",
    )
)


def main(argv: list[str] | None = None) -> int:
    """Run the ``lockstep`` command with ``argv`` (default: the process's arguments)."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "bench":
        from . import bench

        return bench.main(args[1:])
    if not args or args[0] != "check":
        print(USAGE, file=sys.stderr)
        return 2
    package = pathlib.Path(__file__).resolve().parent
    tool = package / "lockstep-check"
    if not tool.exists():
        print(f"lockstep: {tool} is missing; reinstall lockstep (pip install .)", file=sys.stderr)
        return 2
    # The tool finds lockstep's headers and library through these, installed beside this file.
    env = dict(os.environ, LOCKSTEP_INCLUDE_DIR=str(package / "include"), LOCKSTEP_LIBRARY_DIR=str(package))
    return subprocess.run([str(tool), *args[1:]], env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
