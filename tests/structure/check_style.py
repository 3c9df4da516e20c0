#!/usr/bin/env python3
"""The tree is formatted as its configurations say: clang-format (.clang-format) for C++ and
CUDA, ruff (pyproject.toml) for Python. Prints what is off and the command that fixes it.

Usage: check_style.py REPO_ROOT
"""

import pathlib
import shutil
import subprocess
import sys

CXX_SUFFIXES = {".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh"}
CXX_FOLDERS = ("include", "src", "kernels", "python", "tools", "tests", "bench", "examples")


def tracked_files(root: pathlib.Path):
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=root, capture_output=True, text=True)
    if listed.returncode == 0:
        return [root / line for line in listed.stdout.splitlines() if (root / line).is_file()]
    return [p for folder in CXX_FOLDERS for p in (root / folder).rglob("*") if p.is_file()]


def main() -> int:
    root = pathlib.Path(sys.argv[1]).resolve()
    failed = False
    clang_format = shutil.which("clang-format")
    if not clang_format:
        print("clang-format is not installed (Debian: apt-get install clang-format; scripts/test.sh installs it)")
        return 1
    sources = [str(p) for p in tracked_files(root) if p.suffix in CXX_SUFFIXES and p.relative_to(root).parts[0] in CXX_FOLDERS]
    result = subprocess.run([clang_format, "--dry-run", "--Werror", *sources], capture_output=True, text=True)
    if result.returncode != 0:
        off = sorted({line.split(":")[0] for line in result.stderr.splitlines() if ": error:" in line})
        print("not formatted by clang-format:\n  " + "\n  ".join(off) + "\nfix: clang-format -i FILE...")
        failed = True
    for command in (["check"], ["format", "--check"]):
        result = subprocess.run([sys.executable, "-m", "ruff", *command, str(root)], capture_output=True, text=True)
        if result.returncode != 0:
            print(result.stdout + result.stderr)
            print("fix: ruff check --fix . && ruff format .   (ruff comes with pip install '.[test]')")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
