#!/usr/bin/env python3
"""Keeps calls going one way: fails when a file #includes a header of a room it may not use.

Each quoted #include is resolved the way the build resolves it (the including file's folder,
then include/, src/ and src/emulator/) and the header's room is looked up in ROOMS; the pair
must appear in MAY_USE. ARCHITECTURE.md draws the same rooms.

Usage: check_includes.py [REPO_ROOT]   (exit 1 and one line per violation on failure)
       check_includes.py --self-test     (plants violations in a scratch tree and expects them found)
"""

import pathlib
import re
import sys
import tempfile

# Room of a path: the longest matching prefix wins.
ROOMS = {
    "src/toolchain/": "toolchain",
    # The emulator by trade: the execution model (check mode is part of it:
    # the runner reports to the checker, which reads the runner's records),
    # the CUDA API surface over it, the libraries programs link, and the
    # compile-time tools, which know nothing of the rest.
    "src/emulator/execution/": "execution",
    "src/emulator/check/": "execution",
    "src/emulator/cuda_api/": "cuda api",
    "src/emulator/libraries/": "libraries",
    "src/emulator/compile_time/": "compile time",
    "src/emulator/compile_time/region_loops/": "compile time",
    "src/emulator/compile_time/host_source/": "compile time",
    "src/host_build/": "host build",
    # What the host compiler sees instead of CUDA.
    "include/lockstep/emu/": "emulator headers",
    "include/lockstep/cuda.h": "emulator headers",
    "include/lockstep/cuda_include/": "emulator headers",
    "include/lockstep/launch.h": "emulator headers",
    "include/lockstep/launch_limits.h": "emulator headers",
    "include/lockstep/errors.h": "emulator headers",
    "src/runtime/": "runtime",
    "include/lockstep/runtime.h": "runtime public",
    "include/lockstep/cuda_libraries.h": "runtime public",
    "include/lockstep/jit/": "runtime public",
    "src/jit/": "jit",
    "kernels/": "kernels",
    # What kernels written in Python (lockstep.cuda) compile to: kernel code like kernels/.
    "include/lockstep/python_kernels.h": "kernels",
    "include/lockstep/kernels/": "kernels public",
    # Device functions made from op_codes.h's rows, which kernels and fused kernels call: kernel code.
    "include/lockstep/kernels/op_functions.h": "kernels",
    # Python's //, % and ** for every path: device code, as python_kernels.h.
    "include/lockstep/python_arithmetic.h": "kernels",
    # numba.cuda.random's generator, for kernels written in Python: device code, as python_kernels.h.
    "include/lockstep/python_random.h": "kernels",
    "src/tensor/": "tensor",
    "include/lockstep/tensor.h": "tensor public",
    "include/lockstep/ops.h": "tensor public",
    "include/lockstep/nvrtc/": "nvrtc shims",
    "python/src/": "python",
    "tools/": "tools",
}

EMULATOR = {"execution", "cuda api", "emulator headers"}
# Which rooms each room may include from, besides its own.
MAY_USE = {
    "toolchain": set(),
    "emulator headers": set(),
    "execution": {"emulator headers", "toolchain"},
    "cuda api": {"execution", "emulator headers", "toolchain"},
    "libraries": {"cuda api", "execution", "emulator headers", "toolchain"},
    "compile time": {"toolchain", "emulator headers"},
    # The build room reads the runner's rule for when blocks run as loops.
    "host build": {"compile time", "execution", "toolchain", "emulator headers"},
    "runtime public": {"emulator headers"},
    "runtime": {"runtime public", "toolchain"} | EMULATOR,
    "jit": {"runtime", "runtime public", "host build", "compile time", "toolchain"} | EMULATOR,
    "kernels public": set(),
    "kernels": {"kernels public", "emulator headers"},
    "tensor public": {"runtime public", "kernels public", "emulator headers"},
    # The tensor layer uses only the runtime's public headers, never src/runtime.
    "tensor": {"tensor public", "runtime public", "kernels public", "emulator headers"},
    # So does the Python module.
    "python": {"tensor public", "runtime public", "kernels public", "emulator headers"},
    "tools": {"toolchain", "runtime", "runtime public", "jit", "host build", "compile time"} | EMULATOR,
    "nvrtc shims": set(),
}

SOURCE_SUFFIXES = {".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def room_of(relative: str):
    best = None
    for prefix, room in ROOMS.items():
        if relative == prefix or (prefix.endswith("/") and relative.startswith(prefix)):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, room)
    return best[1] if best else None


def violations(root: pathlib.Path):
    search = [root / "include", root / "src", root / "src" / "emulator"]
    tops = ("include", "src", "kernels", "python", "tools")
    for path in sorted(p for top in tops if (root / top).is_dir() for p in (root / top).rglob("*")):
        if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
            continue
        relative = path.relative_to(root).as_posix()
        source_room = room_of(relative)
        if source_room is None:
            continue  # tests, bench and examples may use everything
        for match in INCLUDE.finditer(path.read_text(errors="replace")):
            name = match.group(1)
            for folder in [path.parent, *search]:
                target = folder / name
                if target.is_file():
                    break
            else:
                continue  # a generated or system header
            target_room = room_of(target.resolve().relative_to(root.resolve()).as_posix())
            if target_room in (None, source_room):
                continue
            if target_room not in MAY_USE[source_room]:
                line = path.read_text(errors="replace").count("\n", 0, match.start()) + 1
                yield f'{relative}:{line}: the {source_room} room includes "{name}" from the {target_room} room'


def self_test() -> int:
    """The check must see an upward or private include, and pass a clean tree."""
    with tempfile.TemporaryDirectory() as scratch:
        root = pathlib.Path(scratch)
        files = {
            "src/runtime/backend.h": "",
            "src/jit/cache.h": "",
            "include/lockstep/runtime.h": "",
            "src/tensor/ops.cpp": '#include "lockstep/runtime.h"\n#include "runtime/backend.h"\n',
            "src/emulator/execution/executor.cpp": '#include <vector>\n  #  include "jit/cache.h"\n',
            # The execution model below the API surface, the compile-time tools beside it.
            "src/emulator/cuda_api/runtime_calls.h": "",
            "src/emulator/execution/block_runner.cpp": '#include "cuda_api/runtime_calls.h"\n',
            "src/emulator/compile_time/region_loops/emit.cpp": '#include "execution/block_runner.cpp"\n',
        }
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        found = list(violations(root))
        expected = [
            'src/emulator/compile_time/region_loops/emit.cpp:1: the compile time room includes "execution/block_runner.cpp" from the execution room',
            'src/emulator/execution/block_runner.cpp:1: the execution room includes "cuda_api/runtime_calls.h" from the cuda api room',
            'src/emulator/execution/executor.cpp:2: the execution room includes "jit/cache.h" from the jit room',
            'src/tensor/ops.cpp:2: the tensor room includes "runtime/backend.h" from the runtime room',
        ]
        if found != expected:
            print("self-test: expected", expected, "found", found)
            return 1
        (root / "src/tensor/ops.cpp").write_text('#include "lockstep/runtime.h"\n')
        cleaned = (
            "src/emulator/execution/executor.cpp",
            "src/emulator/execution/block_runner.cpp",
            "src/emulator/compile_time/region_loops/emit.cpp",
        )
        for name in cleaned:
            (root / name).write_text("")
        if list(violations(root)):
            print("self-test: a clean tree was reported:", list(violations(root)))
            return 1
    print("self-test passed")
    return 0


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
    found = list(violations(root))
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} include(s) go against the rooms' direction (tests/structure/check_includes.py, ARCHITECTURE.md)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
