#!/usr/bin/env python3
"""Keeps the region-loop compiler buildable where libclang's headers are not installed
(a bare machine's `pip install .`): fails when a file of the tree includes a clang-c/
header or a CMake file looks for one. The declarations the compiler needs are lockstep's
own (src/emulator/compile_time/region_loops/libclang_abi.h).

Usage: check_no_libclang_headers.py [REPO_ROOT]   (exit 1 and one line per finding)
       check_no_libclang_headers.py --self-test     (plants findings in a scratch tree and expects them found)
"""

import pathlib
import re
import sys
import tempfile

SOURCE_SUFFIXES = {".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh", ".c", ".S"}
TOP_FOLDERS = ("src", "include", "tools", "tests", "bench", "kernels", "examples", "python", "cmake")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]clang-c/', re.MULTILINE)
CMAKE_LOOKUP = re.compile(r"clang-c/|find_path\([^)]*Index\.h", re.IGNORECASE)


def findings(root: pathlib.Path) -> list[str]:
    out = []
    files = [root / "CMakeLists.txt"] + [p for top in TOP_FOLDERS for p in sorted((root / top).rglob("*")) if p.is_file()]
    for path in files:
        if not path.is_file() or "build" in path.relative_to(root).parts[:1]:
            continue
        cmake = path.name == "CMakeLists.txt" or path.suffix == ".cmake"
        if path.suffix not in SOURCE_SUFFIXES and not cmake:
            continue
        text = path.read_text(errors="replace")
        pattern = CMAKE_LOOKUP if cmake else INCLUDE
        for match in pattern.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            out.append(f"{path.relative_to(root)}:{line}: needs libclang's headers (use region_loops/libclang_abi.h)")
    return out


def self_test() -> int:
    with tempfile.TemporaryDirectory() as scratch:
        root = pathlib.Path(scratch)
        (root / "src").mkdir()
        (root / "CMakeLists.txt").write_text("project(x)\n")
        (root / "src" / "clean.cpp").write_text('#include "libclang_abi.h"\n// clang-c/Index.h in a comment is fine\n')
        if findings(root):
            print("self-test: a clean tree was reported:", findings(root))
            return 1
        (root / "src" / "uses.cpp").write_text("#include <clang-c/Index.h>\n")
        (root / "cmake").mkdir()
        (root / "cmake" / "find.cmake").write_text("find_path(X clang-c/Index.h)\n")
        found = findings(root)
        if len(found) != 2:
            print("self-test: expected the include and the CMake lookup, found", found)
            return 1
    print("self-test passed")
    return 0


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
    found = findings(root)
    for f in found:
        print(f)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
