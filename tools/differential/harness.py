"""Build a program once per compiler, run it under every engine and order, compare the digests.

A program prints `name digest` lines (program.py's form); any other program is compared by
its whole stdout and exit status, as one entry named after the file.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import re
import subprocess

# Engine name -> environment. Reverse and random orders run on fibers (the emulator's rule);
# ENGINE=fibers says so rather than relying on it.
ENGINES = {
    "loops": {"LOCKSTEP_EMU_ENGINE": "loops", "LOCKSTEP_EMU_ORDER": "forward"},
    "fibers": {"LOCKSTEP_EMU_ENGINE": "fibers", "LOCKSTEP_EMU_ORDER": "forward"},
    "fibers-reverse": {"LOCKSTEP_EMU_ENGINE": "fibers", "LOCKSTEP_EMU_ORDER": "reverse"},
    "fibers-random": {"LOCKSTEP_EMU_ENGINE": "fibers", "LOCKSTEP_EMU_ORDER": "random:{seed}"},
}

LOOPS_LINE = re.compile(r"kernel (\w+) runs as loops over threads")
FIBERS_LINE = re.compile(r"kernel (?:or device function )?(\w+) \(([^)]*)\) stays on fibers: (.*)")


@dataclasses.dataclass
class Build:
    exe: pathlib.Path | None
    loops: set[str]  # kernels the region-loop compiler split
    fibers: dict[str, str]  # kernel -> why it stays on fibers
    refused: str = ""  # the host compiler refused the split source (all of it on fibers)
    error: str = ""  # the program did not build at all


def build_emulator(source: pathlib.Path, exe: pathlib.Path, compiler: list[str]) -> Build:
    """`lockstep nvcc` with the region-loop log, strict first: a refused split is a finding."""
    env = dict(os.environ, LOCKSTEP_REGION_LOOPS_LOG="1", LOCKSTEP_REGION_LOOPS_STRICT="1")
    cmd = [*compiler, "-std=c++20", "-o", str(exe), str(source)]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    refused = ""
    if r.returncode != 0 and "refused the region loops" in r.stderr:
        refused = "\n".join(line for line in r.stderr.splitlines() if "error" in line)[:4000]
        env.pop("LOCKSTEP_REGION_LOOPS_STRICT")
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        return Build(None, set(), {}, refused, r.stderr[-4000:])
    loops = set() if refused else set(LOOPS_LINE.findall(r.stderr))
    fibers = {m[0]: f"{m[1]}: {m[2]}" for m in FIBERS_LINE.findall(r.stderr)}
    return Build(exe, loops, fibers, refused)


def build_gpu(source: pathlib.Path, exe: pathlib.Path, nvcc: str) -> Build:
    # --fmad=false: the host compiler's order of float operations, for kernels that use floats.
    r = subprocess.run([nvcc, "-std=c++20", "-arch=sm_90", "--fmad=false", "-o", str(exe), str(source)], capture_output=True, text=True)
    return Build(exe if r.returncode == 0 else None, set(), {}, "", r.stderr[-4000:] if r.returncode else "")


def run(exe: pathlib.Path, env: dict[str, str], name: str, timeout: float = 120) -> dict[str, str]:
    """Kernel name -> digest (or the program's whole output under `name`)."""
    try:
        r = subprocess.run([str(exe)], env=dict(os.environ, **env), capture_output=True, text=True, timeout=timeout)
        out, rc = r.stdout, r.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or ""), "timeout"
    lines = [line.split(" ", 1) for line in out.splitlines()]
    if lines and all(len(p) == 2 and re.fullmatch(r"k\w*", p[0]) for p in lines):
        result = {p[0]: p[1] for p in lines}
        if rc != 0:
            result["<exit>"] = f"rc={rc}"
        return result
    return {name: f"rc={rc} " + out}


def compare(results: dict[str, dict[str, str]], reference: str) -> dict[str, dict[str, str]]:
    """Kernels whose digest differs between engines: kernel -> engine -> digest."""
    names = sorted(set().union(*(r.keys() for r in results.values())))
    mismatches = {}
    for name in names:
        seen = {engine: r.get(name, "missing") for engine, r in results.items()}
        if len(set(seen.values())) > 1:
            mismatches[name] = seen
    return mismatches


def run_all(builds: dict[str, Build], order_seed: int, name: str) -> dict[str, dict[str, str]]:
    """Runs the emulator build under every engine, and the GPU build if there is one."""
    results = {}
    emu = builds["emulator"]
    for engine, env in ENGINES.items():
        results[engine] = run(emu.exe, {k: v.format(seed=order_seed) for k, v in env.items()}, name)
    if "gpu" in builds and builds["gpu"].exe:
        results["gpu"] = run(builds["gpu"].exe, {}, name)
    return results
