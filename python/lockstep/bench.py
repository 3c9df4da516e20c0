"""``lockstep bench``: the lectures' speed ladder on whatever machine it runs,
each rung against the reference of its kind, timed right before it in the
same run.

- matmul, float32: a pure-Python loop and NumPy on the CPU, the emulator's
  kernels, and on a GPU every lockstep SIMT kernel against cuBLAS SGEMM (and
  PyTorch if installed);
- matmul on tensor cores (GPU): wmma (tf32 and bf16) and Hopper's wgmma
  against cuBLAS in the same precision, with B in the nn.Linear layout (w.T);
- memory-bound kernels (GPU): grayscale, elementwise relu and add, and a full
  sum against the device's copy bandwidth (bytes read plus written by a
  device-to-device copy);
- the emulator's own speed (group "emulator"): the lectures' kernels on one
  core against the same computation as a plain C++ loop and against PoCL
  (OpenCL on the CPU) running the same kernels, where it is installed;
- kernels written in Python (lockstep.cuda): the lecture's numba tiled matmul
  on the emulator against numba's simulator (where numba is installed) and
  against the same kernel in CUDA C++ through lockstep.compile; on a GPU
  against numba-cuda's compiled kernel, and the launch overhead of both.

Prints a table, writes ladder.csv and, with matplotlib, ladder.png.

    lockstep bench [--quick] [--out DIR]        (also: python -m lockstep.bench)
"""

from __future__ import annotations

import argparse
import csv
import pathlib
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

import lockstep
from lockstep import _core

# The rungs come from the kernels' recipe tables (include/lockstep/kernels/matmul_recipes.h).
MATMUL_ALGOS = _core.matmul_algos()
FLOAT32_GPU_ALGOS = tuple(a["name"] for a in MATMUL_ALGOS if a["family"] == "simt")
# On the emulator: the lecture's own kernels and the fastest rung there (what "auto" runs for float32).
EMULATOR_ALGOS = tuple(a["name"] for a in MATMUL_ALGOS if a["family"] == "simt" and a["lecture"]) + (_core.auto_matmul_algo("float32", "cpu"),)
TENSOR_CORE_ALGOS = tuple(a["name"] for a in MATMUL_ALGOS if a["family"] == "tensor_core")
# How the bench names a tensor-core rung's precision (and its cuBLAS reference) by input dtype.
PRECISION = {"float32": "tf32", "bfloat16": "bf16"}


@dataclass
class Row:
    group: str  # "matmul float32", "matmul tensor cores", "bandwidth"
    rung: str
    device: str
    size: str
    seconds: float
    work: float  # floating-point operations, or bytes moved
    reference: str
    reference_seconds: float  # the reference's time for the same work

    @property
    def unit(self) -> str:
        return "GB/s" if self.group == "bandwidth" else "GFLOP/s"

    @property
    def rate(self) -> float:
        return self.work / self.seconds / 1e9

    @property
    def rate_text(self) -> str:
        if self.work == 0:  # launch overhead: the time is the result
            return "-"
        if self.unit == "GFLOP/s" and self.rate >= 1000:
            return f"{self.rate / 1000:.1f} TFLOP/s"
        return f"{self.rate:.3g} {self.unit}" if self.rate < 1000 else f"{self.rate:.0f} {self.unit}"

    @property
    def fraction_of_reference(self) -> float:
        return self.reference_seconds / self.seconds


def _seconds(run: Callable[[], object], repeats: int, device: str | None = None, batch: int = 1) -> float:
    """Median over `repeats` of the time per call, each sample `batch` calls
    back to back. On a device the calls queue up and the sample is the device
    time between two events around them, so host overhead hides behind device
    work and the wait at the end is not counted."""
    run()  # warm-up: module loads, caches, clocks
    if device:
        lockstep.synchronize(device)
    samples = []
    for _ in range(repeats):
        if device:
            samples.append(_device_sample(run, device, batch))
        else:
            began = time.perf_counter()
            for _ in range(batch):
                run()
            samples.append((time.perf_counter() - began) / batch)
    return sorted(samples)[len(samples) // 2]


def _device_sample(run: Callable[[], object], device: str, batch: int) -> float:
    """Seconds per call of `batch` calls queued back to back, the device time between two events around them."""
    start, stop = lockstep.Event(device), lockstep.Event(device)
    start.record()
    for _ in range(batch):
        run()
    stop.record()
    stop.synchronize()
    return start.elapsed_ms(stop) / 1e3 / batch


def _interleaved_seconds(runs: dict[str, Callable[[], object]], repeats: int, device: str, batch: int) -> dict[str, float]:
    """_seconds of several rivals on a device, their samples taken in turn (each round in a rotated order), so
    that a drift of the GPU's clocks over the run (an H100 slows as it warms) does not favour whichever ran
    first: the medians of rivals measured one after the other differed by up to 3% from these."""
    for run in runs.values():
        run()  # warm-up
    lockstep.synchronize(device)
    names, samples = list(runs), {name: [] for name in runs}
    for i in range(repeats):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            samples[name].append(_device_sample(runs[name], device, batch))
    return {name: sorted(times)[len(times) // 2] for name, times in samples.items()}


class _Progress:
    """One line on stderr, redrawn in place on a terminal, a line per step otherwise."""

    def __init__(self, total: int):
        self.total, self.done, self.tty = total, 0, sys.stderr.isatty()

    def step(self, what: str) -> None:
        width = 24
        filled = width * self.done // max(self.total, 1)
        line = f"[{'#' * filled}{'.' * (width - filled)}] {self.done + 1}/{self.total} {what}"
        if self.tty:
            sys.stderr.write("\r" + line.ljust(100)[:100])
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()
        self.done += 1

    def close(self) -> None:
        if self.tty:
            sys.stderr.write("\r" + " " * 100 + "\r")
            sys.stderr.flush()


def _python_matmul(a: list, b: list, n: int) -> list:
    return [[sum(a[i][p] * b[p][j] for p in range(n)) for j in range(n)] for i in range(n)]


def _torch_cuda():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def _cupy_fusions() -> tuple[Callable | None, dict[str, Callable]]:
    """cupy.from_dlpack and cupy.fuse of the fusion rows it applies to (elementwise with broadcasting; a
    reduction may only end a cupy.fuse function, so softmax and layernorm have none), written with CuPy's
    functions, which take the same float32 arrays (shared through DLPack); (None, {}) without CuPy and a GPU."""
    try:
        import cupy
    except ImportError:
        return None, {}
    if not cupy.cuda.is_available():
        return None, {}

    def chain(x):
        y = cupy.maximum(x * 2.0 + 1.0, 0.0) - 0.5
        return 1.0 / (1.0 + cupy.exp(-y)) * x

    def bias_gelu(x, b):
        y = x + b
        return 0.5 * y * (1.0 + cupy.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))

    return cupy.from_dlpack, {"chain (5 ops)": cupy.fuse(chain), "bias + gelu": cupy.fuse(bias_gelu)}


def run(quick: bool = False) -> list[Row]:
    """Measure the ladder and return its rows."""
    rng = np.random.default_rng()
    repeats = 3 if quick else 7
    gpu = lockstep.cuda_available()
    torch = _torch_cuda() if gpu else None
    jobs: list[Callable[[], None]] = []  # each measures one or more rows
    labels: list[str] = []
    rows: list[Row] = []

    def job(label: str):
        def register(fn):
            jobs.append(fn)
            labels.append(label)
            return fn

        return register

    # ---- matmul float32 on the CPU
    n_py = 48 if quick else 96
    a_py = rng.standard_normal((n_py, n_py), dtype=np.float32)
    b_py = rng.standard_normal((n_py, n_py), dtype=np.float32)

    @job(f"pure Python and NumPy at {n_py}^3")
    def _():
        python_s = _seconds(lambda: _python_matmul(a_py.tolist(), b_py.tolist(), n_py), 1)
        numpy_s = _seconds(lambda: a_py @ b_py, repeats, batch=10)
        flops = 2.0 * n_py**3
        rows.append(Row("matmul float32", "pure Python loop", "cpu", f"{n_py}^3", python_s, flops, "NumPy", numpy_s))
        rows.append(Row("matmul float32", "NumPy", "cpu", f"{n_py}^3", numpy_s, flops, "NumPy", numpy_s))

    n_emu = 128 if quick else 256
    a_emu = rng.standard_normal((n_emu, n_emu), dtype=np.float32)
    b_emu = rng.standard_normal((n_emu, n_emu), dtype=np.float32)
    for algo in EMULATOR_ALGOS:

        @job(f"emulator {algo} at {n_emu}^3")
        def _(algo=algo):
            numpy_s = _seconds(lambda: a_emu @ b_emu, repeats, batch=10)
            seconds = _seconds(lambda: lockstep.matmul(a_emu, b_emu, algo=algo), repeats)
            rows.append(Row("matmul float32", f"emulator {algo}", "cpu", f"{n_emu}^3", seconds, 2.0 * n_emu**3, "NumPy", numpy_s))

    if gpu:
        dev = "cuda:0"
        n = 2048 if quick else 4096
        flops = 2.0 * n**3
        size = f"{n}^3"
        batch = 3 if quick else 10
        a32 = lockstep.asarray(rng.uniform(-1, 1, (n, n)).astype(np.float32), device=dev)
        b32 = lockstep.asarray(rng.uniform(-1, 1, (n, n)).astype(np.float32), device=dev)
        w32 = lockstep.asarray(rng.uniform(-1, 1, (n, n)).astype(np.float32), device=dev)  # (n, k): B = w.T
        a16, w16 = a32.to("bfloat16"), w32.to("bfloat16")
        side = 4096 if quick else 8192
        count = 2**26 if quick else 2**28
        image = lockstep.asarray(rng.integers(0, 256, (3, side, side), dtype=np.uint8), device=dev)
        floats = lockstep.asarray(rng.uniform(-1, 1, count).astype(np.float32), device=dev)
        floats_size, copy_bytes = f"2^{count.bit_length() - 1} floats", 2.0 * 4 * count  # a copy reads and writes

        references = {
            "cuBLAS": (lambda: lockstep.matmul(a32, b32, algo="cublas"), flops),
            "cuBLAS tf32": (lambda: lockstep.matmul(a32, w32.T, algo="cublas_tf32"), flops),
            "cuBLAS bf16": (lambda: lockstep.matmul(a16, w16.T, algo="cublas"), flops),
            "copy": (lambda: lockstep.copy(floats), copy_bytes),
        }

        def measure(group: str, rung: str, size: str, run: Callable[[], object], work: float, reference: str) -> None:
            """The rung and its reference timed back to back, so both meet the GPU
            in the same state (its clocks drift as it warms up over the ladder);
            the reference's time is scaled to the rung's work (bytes, for copy)."""
            run_reference, reference_work = references[reference]
            reference_seconds = _seconds(run_reference, repeats, dev, batch) * work / reference_work
            rows.append(Row(group, rung, dev, size, _seconds(run, repeats, dev, batch), work, reference, reference_seconds))

        for algo in FLOAT32_GPU_ALGOS:
            job(f"GPU {algo} at {size}")(
                lambda algo=algo: measure("matmul float32", f"GPU {algo}", size, lambda: lockstep.matmul(a32, b32, algo=algo), flops, "cuBLAS")
            )
        job(f"cuBLAS SGEMM at {size}")(lambda: measure("matmul float32", "GPU cuBLAS SGEMM", size, references["cuBLAS"][0], flops, "cuBLAS"))
        if torch is not None:
            ta, tb = torch.from_dlpack(a32), torch.from_dlpack(b32)
            torch.backends.cuda.matmul.allow_tf32 = False
            job(f"PyTorch float32 at {size}")(lambda: measure("matmul float32", "PyTorch float32", size, lambda: ta @ tb, flops, "cuBLAS"))

        operands = {"float32": (a32, w32), "bfloat16": (a16, w16)}
        arch = _core.device_arch(dev)
        tensor_core_rungs = [
            (f"{algo['name']} {PRECISION[dtype]}", *operands[dtype], algo["name"], PRECISION[dtype])
            for algo in MATMUL_ALGOS
            if algo["family"] == "tensor_core" and algo["arch"] in (None, arch)
            for dtype in algo["dtypes"]
        ]
        for rung, a, w, algo, precision in tensor_core_rungs:
            job(f"GPU {rung} at {size}")(
                lambda rung=rung, a=a, w=w, algo=algo, precision=precision: measure(
                    "matmul tensor cores", f"GPU {rung}", size, lambda: lockstep.matmul(a, w.T, algo=algo), flops, f"cuBLAS {precision}"
                )
            )
        for precision in ("tf32", "bf16"):
            reference = f"cuBLAS {precision}"
            job(f"{reference} at {size}")(
                lambda reference=reference: measure("matmul tensor cores", f"GPU {reference}", size, references[reference][0], flops, reference)
            )
        if torch is not None:
            ta16, tw16 = torch.from_dlpack(a16), torch.from_dlpack(w16)
            job(f"PyTorch bf16 at {size}")(lambda: measure("matmul tensor cores", "PyTorch bf16", size, lambda: ta16 @ tw16.T, flops, "cuBLAS bf16"))

        # ---- memory-bound kernels against the copy bandwidth
        job(f"device copy of {4 * count >> 20} MiB")(
            lambda: measure("bandwidth", "device copy", floats_size, references["copy"][0], copy_bytes, "copy")
        )
        for launch in ("2d", "vectorized"):  # three planes read, one written
            job(f"grayscale {launch} at {side}x{side}")(
                lambda launch=launch: measure(
                    "bandwidth",
                    f"grayscale {launch}",
                    f"{side}x{side}",
                    lambda: lockstep.rgb_to_grayscale(image, launch=launch),
                    4.0 * side * side,
                    "copy",
                )
            )
        others = lockstep.asarray(rng.uniform(-1, 1, count).astype(np.float32), device=dev)
        job(f"relu of {floats_size}")(lambda: measure("bandwidth", "relu", floats_size, lambda: lockstep.relu(floats), 8.0 * count, "copy"))
        job(f"add of {floats_size}")(lambda: measure("bandwidth", "add", floats_size, lambda: floats + others, 12.0 * count, "copy"))
        job(f"sum of {floats_size}")(lambda: measure("bandwidth", "sum", floats_size, lambda: lockstep.sum(floats), 4.0 * count, "copy"))
        if torch is not None:
            torch_floats = torch.from_dlpack(floats)
            job(f"PyTorch sum of {floats_size}")(
                lambda: measure("bandwidth", "PyTorch sum", floats_size, lambda: torch_floats.sum(), 4.0 * count, "copy")
            )

    _fusion_jobs(job, rows, rng, repeats, quick, gpu, torch)
    _python_kernel_jobs(job, rows, rng, repeats, quick, gpu)
    job("the emulator against plain C++ and PoCL, one core")(lambda: rows.extend(emulator_rows(repeats)))

    progress = _Progress(len(jobs))
    try:
        for label, run_job in zip(labels, jobs):
            progress.step(label)
            run_job()
    finally:
        progress.close()
    return rows


def _chain(x):
    """The fusion rows' elementwise chain of five ops."""
    return ((x * 2.0 + 1.0).relu() - 0.5).sigmoid() * x


def _bias_gelu(x, b):
    """GELU (tanh form) of x + b, b broadcast over the rows."""
    y = x + b
    return 0.5 * y * (1.0 + (0.7978845608 * (y + 0.044715 * y * y * y)).tanh())


def _softmax(x):
    """Softmax of each row, from x - max so large inputs do not overflow."""
    largest = x.max(dim=-1, keepdim=True)
    largest = largest[0] if isinstance(largest, tuple) else largest  # PyTorch's max(dim) gives (values, indices)
    shifted = (x - largest).exp()
    return shifted / shifted.sum(dim=-1, keepdim=True)


def _layernorm(x, w, b):
    """Layer normalisation of each row, then the scale w and shift b."""
    mean = x.mean(dim=-1, keepdim=True)
    centered = x - mean
    variance = (centered * centered).mean(dim=-1, keepdim=True)
    return centered / (variance + 1e-5).sqrt() * w + b


def _linear_relu(x, w, b):
    """The matmul-epilogue rows: a linear layer and its activation, w of shape (k, n)."""
    return (x @ w + b).relu()


def _linear_relu_nn(x, w, b):
    """The same with w of shape (n, k), nn.Linear's layout (the tensor-core kernels read it in place)."""
    return (x @ w.mT + b).relu()


def _fusion_jobs(job: Callable, rows: list[Row], rng: np.random.Generator, repeats: int, quick: bool, gpu: bool, torch: Any) -> None:
    """@lockstep.fuse against the same expressions op by op (eager), PyTorch eager, torch.compile and cupy.fuse, as the
    fraction of the device copy's bandwidth over the minimal bytes (each input read once, the output written
    once); on the emulator, fused against eager."""
    fused_chain, fused_bias_gelu = lockstep.fuse(_chain), lockstep.fuse(_bias_gelu)
    fused_softmax, fused_layernorm = lockstep.fuse(_softmax), lockstep.fuse(_layernorm)
    n_emu = 2**18 if quick else 2**20
    x_emu = lockstep.asarray(rng.uniform(-1, 1, n_emu).astype(np.float32))

    @job(f"fused and eager chain of 5 ops on the emulator, 2^{n_emu.bit_length() - 1} floats")
    def _():
        eager_s = _seconds(lambda: _chain(x_emu), repeats)
        fused_s = _seconds(lambda: fused_chain(x_emu), repeats)
        size = f"2^{n_emu.bit_length() - 1} floats"
        rows.append(Row("bandwidth", "emulator eager chain (5 ops)", "cpu", size, eager_s, 8.0 * n_emu, "eager", eager_s))
        rows.append(Row("bandwidth", "emulator fused chain (5 ops)", "cpu", size, fused_s, 8.0 * n_emu, "eager", eager_s))

    if not gpu:
        return
    dev = "cuda:0"
    cupy_from_dlpack, cupy_fusions = _cupy_fusions()
    batch = 3 if quick else 10
    count, side = (2**26, 4096) if quick else (2**28, 8192)
    x = lockstep.asarray(rng.uniform(-1, 1, count).astype(np.float32), device=dev)
    m = lockstep.asarray(rng.uniform(-1, 1, (side, side)).astype(np.float32), device=dev)
    b = lockstep.asarray(rng.uniform(-1, 1, side).astype(np.float32), device=dev)
    rows_n, row_length = (8192, 4096) if quick else (32768, 4096)
    r = lockstep.asarray(rng.uniform(-1, 1, (rows_n, row_length)).astype(np.float32), device=dev)
    w, bias = (lockstep.asarray(rng.uniform(-1, 1, row_length).astype(np.float32), device=dev) for _ in range(2))
    copy_of = {count: lambda: lockstep.copy(x), side * side: lambda: lockstep.copy(m), rows_n * row_length: lambda: lockstep.copy(r)}
    row_size, row_bytes = f"{rows_n}x{row_length}", 8.0 * rows_n * row_length
    cases = [
        ("chain (5 ops)", f"2^{count.bit_length() - 1} floats", count, _chain, fused_chain, (x,), 8.0 * count),
        ("bias + gelu", f"{side}x{side}", side * side, _bias_gelu, fused_bias_gelu, (m, b), 8.0 * side * side + 4.0 * side),
        ("row softmax", row_size, rows_n * row_length, _softmax, fused_softmax, (r,), row_bytes),
        ("layernorm", row_size, rows_n * row_length, _layernorm, fused_layernorm, (r, w, bias), row_bytes + 8.0 * row_length),
    ]
    for name, size, elements, eager, fused, args, minimal_bytes in cases:

        @job(f"{name}: eager, fused, PyTorch at {size}")
        def _(name=name, size=size, elements=elements, eager=eager, fused=fused, args=args, minimal_bytes=minimal_bytes):
            runs = {"copy": copy_of[elements], f"eager {name}": lambda: eager(*args), f"fused {name}": lambda: fused(*args)}
            if torch is not None:
                torch_args = [torch.from_dlpack(a) for a in args]
                runs[f"PyTorch eager {name}"] = lambda: eager(*torch_args)
                try:
                    compiled = torch.compile(eager)
                    compiled(*torch_args)
                    runs[f"torch.compile {name}"] = lambda: compiled(*torch_args)
                except Exception as e:  # no Triton, say
                    print(f"torch.compile's row is left out: {type(e).__name__}: {e}")
            if name in cupy_fusions:
                cupy_args = [cupy_from_dlpack(a) for a in args]
                cupy_fused = cupy_fusions[name]
                # A row only for the same results (cupy's exp and tanh may round differently from ours).
                if np.allclose(fused(*args).to("cpu").numpy(), cupy_fused(*cupy_args).get(), rtol=1e-5, atol=1e-6):
                    runs[f"cupy.fuse {name}"] = lambda: cupy_fused(*cupy_args)
                else:
                    print(f"cupy.fuse's {name} row is left out: its results differ from the fused kernel's")
            seconds = _interleaved_seconds(runs, repeats, dev, batch)
            copy_s = seconds.pop("copy") * minimal_bytes / (8.0 * elements)
            for rung, rung_s in seconds.items():
                rows.append(Row("bandwidth", rung, dev, size, rung_s, minimal_bytes, "copy", copy_s))

    n = 2048 if quick else 4096
    for dtype, group, linear, plain in (
        ("float32", "matmul float32", _linear_relu, lambda a, w: a @ w),
        ("bfloat16", "matmul tensor cores", _linear_relu_nn, lambda a, w: a @ w.mT),
    ):

        @job(f"matmul epilogue relu(x @ w + b): {dtype} at {n}^3")
        def _(dtype=dtype, group=group, linear=linear, plain=plain):
            a, w, b = (lockstep.asarray(rng.uniform(-1, 1, shape).astype(np.float32), device=dev).to(dtype) for shape in ((n, n), (n, n), (n,)))
            fused = lockstep.fuse(linear)
            runs = {"plain": lambda: plain(a, w), "eager relu(x @ w + b)": lambda: linear(a, w, b), "fused relu(x @ w + b)": lambda: fused(a, w, b)}
            if torch is not None:
                torch_args = [torch.from_dlpack(t) for t in (a, w, b)]
                runs["PyTorch eager relu(x @ w + b)"] = lambda: linear(*torch_args)
                try:
                    compiled = torch.compile(linear)
                    compiled(*torch_args)
                    runs["torch.compile relu(x @ w + b)"] = lambda: compiled(*torch_args)
                except Exception as e:  # no Triton, say
                    print(f"torch.compile's row is left out: {type(e).__name__}: {e}")
            seconds = _interleaved_seconds(runs, repeats, dev, batch)
            plain_s = seconds.pop("plain")
            for rung, rung_s in seconds.items():
                rows.append(Row(group, f"{rung} {dtype}", dev, f"{n}^3", rung_s, 2.0 * n**3, "plain matmul", plain_s))


def _python_kernel_jobs(job: Callable, rows: list[Row], rng: np.random.Generator, repeats: int, quick: bool, gpu: bool) -> None:
    """The lecture's numba tiled matmul as a lockstep.cuda kernel against numba's
    simulator, the CUDA C++ twin through lockstep.compile, and numba-cuda."""
    import importlib.util
    import os
    import subprocess

    from lockstep import _bench_kernels as lecture
    from lockstep import cuda as lockstep_cuda

    tpb = lecture.TPB
    kernel = lecture.bound(lecture.tiled_matmul, lockstep_cuda)

    def host_operands(n: int) -> tuple:
        return rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32), np.zeros((n, n), dtype=np.float32)

    def operands(n: int, device: str) -> tuple:
        return tuple(lockstep.asarray(x, device=device) for x in host_operands(n))

    def python_kernel(n: int, a, b, c) -> Callable[[], None]:
        return lambda: kernel[(n // tpb, n // tpb), (tpb, tpb)](a, b, c)

    n_sim = 64
    if importlib.util.find_spec("numba") is not None:

        @job(f"lockstep.cuda and numba's simulator at {n_sim}^3")
        def _():
            env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
            done = subprocess.run([sys.executable, "-m", "lockstep._bench_kernels", str(n_sim)], env=env, capture_output=True, text=True, check=True)
            simulator_s = float(done.stdout.strip().splitlines()[-1])
            seconds = _seconds(python_kernel(n_sim, *operands(n_sim, "cpu")), repeats)
            rows.append(
                Row("python kernels", "lockstep.cuda tiled matmul", "cpu", f"{n_sim}^3", seconds, 2.0 * n_sim**3, "numba simulator", simulator_s)
            )

    n_emu = 128 if quick else 256

    @job(f"lockstep.cuda and CUDA C++ at {n_emu}^3")
    def _():
        a, b, c = operands(n_emu, "cpu")
        twin = lockstep.compile(lecture.TILED_MATMUL_CPP, device="cpu").tiled_matmul
        grid = (n_emu // tpb, n_emu // tpb)
        cpp_s = _seconds(lambda: twin[grid, (tpb, tpb)](a, b, c, n_emu), repeats)
        seconds = _seconds(python_kernel(n_emu, a, b, c), repeats)
        rows.append(
            Row("python kernels", "lockstep.cuda tiled matmul", "cpu", f"{n_emu}^3", seconds, 2.0 * n_emu**3, "CUDA C++ (lockstep.compile)", cpp_s)
        )

    if not gpu:
        return
    numba_cuda = None
    if importlib.util.find_spec("numba") is not None:
        try:
            from numba import cuda as numba_cuda

            numba_cuda = numba_cuda if numba_cuda.is_available() else None
            if numba_cuda is not None:  # a trial compile: numba-cuda may not work with this NumPy
                lecture.bound(lecture.empty_kernel, numba_cuda)[1, 32](numba_cuda.to_device(np.zeros(32, dtype=np.float32)))
        except Exception as e:  # numba without its CUDA target, or one that cannot compile here
            print(f"numba-cuda's rows are left out: it cannot compile a kernel here ({type(e).__name__}: {e})")
            numba_cuda = None
    if numba_cuda is None:
        return
    dev, n = "cuda:0", 1024 if quick else 2048
    batch = 3 if quick else 10

    def numba_seconds(run: Callable[[], object], count: int) -> float:
        run()
        numba_cuda.synchronize()
        samples = []
        for _ in range(repeats):
            start, stop = numba_cuda.event(), numba_cuda.event()
            start.record()
            for _ in range(count):
                run()
            stop.record()
            stop.synchronize()
            samples.append(numba_cuda.event_elapsed_time(start, stop) / 1e3 / count)
        return sorted(samples)[len(samples) // 2]

    @job(f"lockstep.cuda and numba-cuda at {n}^3 on the GPU")
    def _():
        host = host_operands(n)
        a, b, c = (lockstep.asarray(x, device=dev) for x in host)
        reference = lecture.bound(lecture.tiled_matmul, numba_cuda)
        na, nb, nc = (numba_cuda.to_device(x) for x in host)
        grid = (n // tpb, n // tpb)
        numba_s = numba_seconds(lambda: reference[grid, (tpb, tpb)](na, nb, nc), batch)
        seconds = _seconds(python_kernel(n, a, b, c), repeats, dev, batch)
        rows.append(Row("python kernels", "lockstep.cuda tiled matmul", dev, f"{n}^3", seconds, 2.0 * n**3, "numba-cuda", numba_s))

    @job("launch overhead of lockstep.cuda and numba-cuda")
    def _():
        x = lockstep.asarray(np.zeros(256, dtype=np.float32), device=dev)
        nx = numba_cuda.to_device(np.zeros(256, dtype=np.float32))
        ours, theirs = lecture.bound(lecture.empty_kernel, lockstep_cuda), lecture.bound(lecture.empty_kernel, numba_cuda)
        launches = 200 if quick else 2000

        def wall(run: Callable[[], object], synchronize: Callable[[], object]) -> float:
            run()
            synchronize()
            began = time.perf_counter()
            for _ in range(launches):
                run()
            synchronize()
            return (time.perf_counter() - began) / launches

        numba_s = wall(lambda: theirs[1, 32](nx), numba_cuda.synchronize)
        seconds = wall(lambda: ours[1, 32](x), lambda: lockstep.synchronize(dev))
        rows.append(
            Row("python kernels", "launch overhead, lockstep.cuda (host time per launch)", dev, "empty kernel", seconds, 0.0, "numba-cuda", numba_s)
        )


EMULATOR_BENCH = pathlib.Path(__file__).parent / "emulator_bench"


def emulator_rows(repeats: int, program: pathlib.Path = EMULATOR_BENCH) -> list[Row]:
    """The lectures' kernels on the emulator, one worker, each against the same
    computation as a plain C++ loop and as OpenCL run by PoCL (one thread),
    from the ``emulator_bench`` program built beside the package (bench/emulator_bench.cu).
    A result that differs from the C++ loop's raises."""
    if not program.exists():
        print(f"the emulator rows are left out: {program} is not there (build with LOCKSTEP_BUILD_PYTHON or LOCKSTEP_BUILD_BENCH)")
        return []
    done = subprocess.run([str(program), "--workers", "1", "--repeats", str(repeats), "--tsv"], capture_output=True, text=True, check=True)
    lines = done.stdout.strip().splitlines()
    header = lines[0].split("\t")
    rows = []
    for line in lines[1:]:
        field = dict(zip(header, line.split("\t")))
        kernel, size = field["kernel"].rsplit(", ", 1)
        if float(field["max_abs_diff"]) > 1e-3 or float(field["pocl_max_abs_diff"]) > 1e-3:
            raise RuntimeError(f"emulator_bench: {field['kernel']} differs from the plain C++ loop's result: {line}")
        seconds = float(field["seconds"])
        rows.append(Row("emulator", kernel, "cpu", size, seconds, 0.0, "plain C++, 1 core", float(field["host_loop_seconds"])))
        if float(field["pocl_seconds"]) > 0:
            rows.append(Row("emulator", kernel, "cpu", size, seconds, 0.0, "PoCL, 1 thread", float(field["pocl_seconds"])))
    return rows


def report(rows: list[Row], out: pathlib.Path) -> None:
    """Print the table and write ladder.csv (and ladder.png with matplotlib) into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    print("| group | rung | device | size | ms | rate | vs reference |\n|---|---|---|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r.group} | {r.rung} | {r.device} | {r.size} | {r.seconds * 1e3:.3f} | {r.rate_text} | "
            f"{r.fraction_of_reference:.3g} of {r.reference} |"
        )
    with open(out / "ladder.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["group", "rung", "device", "size", "seconds", "rate", "unit", "reference", "fraction_of_reference"])
        for r in rows:
            writer.writerow([r.group, r.rung, r.device, r.size, r.seconds, r.rate, r.unit, r.reference, r.fraction_of_reference])
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"wrote {out / 'ladder.csv'} (install matplotlib for ladder.png)")
        return
    groups = [g for g in ("matmul float32", "matmul tensor cores", "bandwidth", "python kernels") if any(r.group == g and r.work for r in rows)]
    heights = [sum(r.group == g and bool(r.work) for r in rows) for g in groups]
    fig, axes = plt.subplots(
        len(groups), 1, figsize=(10, 0.42 * sum(heights) + 1.2 * len(groups)), gridspec_kw={"height_ratios": heights}, squeeze=False
    )
    for ax, group in zip(axes[:, 0], groups):
        part = [r for r in rows if r.group == group and r.work][::-1]
        bars = ax.barh(
            [f"{r.rung} ({r.device}, {r.size})" for r in part],
            [r.rate for r in part],
            color=["#4c72b0" if r.device == "cpu" else "#dd8452" for r in part],
        )
        for bar, r in zip(bars, part):
            ax.annotate(
                f" {r.fraction_of_reference:.3g} of {r.reference}", (bar.get_width(), bar.get_y() + bar.get_height() / 2), va="center", fontsize=8
            )
        if group != "bandwidth":
            ax.set_xscale("log")
        ax.set_xlabel(part[0].unit + (" (log scale)" if group != "bandwidth" else ""))
        ax.set_title(f"lockstep {group}")
        ax.margins(x=0.25)
    fig.tight_layout()
    fig.savefig(out / "ladder.png", dpi=120)
    plt.close(fig)
    print(f"wrote {out / 'ladder.csv'} and {out / 'ladder.png'}")


def main(argv: list[str] | None = None) -> int:
    """Run ``lockstep bench`` with ``argv``."""
    parser = argparse.ArgumentParser(prog="lockstep bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats: about a minute")
    parser.add_argument("--out", default="lockstep-bench", help="folder for ladder.csv and ladder.png")
    options = parser.parse_args(argv)
    report(run(quick=options.quick), pathlib.Path(options.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
