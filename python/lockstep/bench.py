"""``lockstep bench``: the lectures' speed ladder for matrix multiplication on
whatever machine it runs, each rung against the reference of its kind in the
same run: a pure-Python loop and NumPy on the CPU, the emulator's kernels, and
on a GPU every lockstep matmul kernel, cuBLAS (the reference) and PyTorch if
installed. Prints a table, writes CSV and, with matplotlib, a PNG plot.

    lockstep bench [--quick] [--out DIR]        (also: python -m lockstep.bench)
"""

from __future__ import annotations

import argparse
import csv
import pathlib
import sys
import time
from typing import Callable, List, Optional

import numpy as np

import lockstep


def _median_seconds(run: Callable[[], object], repeats: int, sync: Optional[str] = None) -> float:
    run()  # warm-up: module loads, caches, clocks
    if sync:
        lockstep.synchronize(sync)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        if sync:
            lockstep.synchronize(sync)
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def _python_matmul(a: list, b: list, n: int) -> list:
    return [[sum(a[i][p] * b[p][j] for p in range(n)) for j in range(n)] for i in range(n)]


class _Row:
    def __init__(self, rung: str, device: str, size: int, seconds: float, reference: str, reference_seconds: float):
        self.rung, self.device, self.size, self.seconds = rung, device, size, seconds
        self.reference, self.reference_seconds = reference, reference_seconds

    @property
    def gflops(self) -> float:
        return 2.0 * self.size**3 / self.seconds / 1e9

    @property
    def fraction_of_reference(self) -> float:
        return self.reference_seconds / self.seconds


def _progress(step: str) -> None:
    print(f"  ... {step}", file=sys.stderr, flush=True)


def run(quick: bool = False) -> List[_Row]:
    """Measure the ladder and return its rows."""
    rng = np.random.default_rng()
    rows: List[_Row] = []
    repeats = 3 if quick else 5

    # The CPU rungs, at a size the Python loop can manage.
    n_python = 48 if quick else 96
    a = rng.standard_normal((n_python, n_python), dtype=np.float32)
    b = rng.standard_normal((n_python, n_python), dtype=np.float32)
    _progress(f"pure Python at {n_python}^3")
    python_s = _median_seconds(lambda: _python_matmul(a.tolist(), b.tolist(), n_python), 1)
    numpy_small = _median_seconds(lambda: a @ b, repeats)
    rows.append(_Row("pure Python loop", "cpu", n_python, python_s, "NumPy", numpy_small))
    rows.append(_Row("NumPy", "cpu", n_python, numpy_small, "NumPy", numpy_small))

    n_emulator = 128 if quick else 256
    a = rng.standard_normal((n_emulator, n_emulator), dtype=np.float32)
    b = rng.standard_normal((n_emulator, n_emulator), dtype=np.float32)
    numpy_s = _median_seconds(lambda: a @ b, repeats)
    for algo in ("naive", "tiled_static", "tiled_dynamic"):
        _progress(f"emulator {algo} at {n_emulator}^3")
        seconds = _median_seconds(lambda: lockstep.matmul(a, b, algo=algo), repeats)
        rows.append(_Row(f"emulator {algo}", "cpu", n_emulator, seconds, "NumPy", numpy_s))

    if lockstep.cuda_available():
        n_gpu = 2048 if quick else 4096
        a = lockstep.asarray(rng.standard_normal((n_gpu, n_gpu), dtype=np.float32), device="cuda:0")
        b = lockstep.asarray(rng.standard_normal((n_gpu, n_gpu), dtype=np.float32), device="cuda:0")
        _progress(f"cuBLAS at {n_gpu}^3")
        cublas_s = _median_seconds(lambda: lockstep.matmul(a, b, algo="cublas"), repeats, "cuda:0")
        for algo in ("naive", "tiled_static", "tiled_dynamic", "cublas"):
            _progress(f"GPU {algo} at {n_gpu}^3")
            seconds = cublas_s if algo == "cublas" else _median_seconds(lambda: lockstep.matmul(a, b, algo=algo), repeats, "cuda:0")
            rows.append(_Row(f"GPU {algo}", "cuda:0", n_gpu, seconds, "cuBLAS", cublas_s))
        try:
            import torch
        except ImportError:
            torch = None
        if torch is not None and torch.cuda.is_available():
            ta, tb = torch.from_dlpack(a), torch.from_dlpack(b)
            torch_s = _median_seconds(lambda: ta @ tb, repeats, "cuda:0")
            rows.append(_Row("PyTorch", "cuda:0", n_gpu, torch_s, "cuBLAS", cublas_s))
    return rows


def report(rows: List[_Row], out: pathlib.Path) -> None:
    """Print the table and write ladder.csv (and ladder.png with matplotlib) into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    print("| rung | device | size | ms | GFLOP/s | vs reference |\n|---|---|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r.rung} | {r.device} | {r.size}^3 | {r.seconds * 1e3:.3f} | {r.gflops:.3g} | "
              f"{r.fraction_of_reference:.3g} of {r.reference} |")
    with open(out / "ladder.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["rung", "device", "size", "seconds", "gflops", "reference", "fraction_of_reference"])
        for r in rows:
            writer.writerow([r.rung, r.device, r.size, r.seconds, r.gflops, r.reference, r.fraction_of_reference])
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"wrote {out / 'ladder.csv'} (install matplotlib for ladder.png)")
        return
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(rows) + 1.5))
    labels = [f"{r.rung} ({r.device}, {r.size}^3)" for r in rows]
    ax.barh(labels[::-1], [r.gflops for r in rows][::-1], color=["#4c72b0" if r.device == "cpu" else "#dd8452" for r in rows][::-1])
    ax.set_xscale("log")
    ax.set_xlabel("GFLOP/s (log scale)")
    ax.set_title("lockstep matmul ladder")
    fig.tight_layout()
    fig.savefig(out / "ladder.png", dpi=120)
    print(f"wrote {out / 'ladder.csv'} and {out / 'ladder.png'}")


def main(argv: Optional[List[str]] = None) -> int:
    """Run ``lockstep bench`` with ``argv``."""
    parser = argparse.ArgumentParser(prog="lockstep bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes: about a minute")
    parser.add_argument("--out", default="lockstep-bench", help="folder for ladder.csv and ladder.png")
    options = parser.parse_args(argv)
    report(run(quick=options.quick), pathlib.Path(options.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
