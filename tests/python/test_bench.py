"""``lockstep bench``: the ladder runs and reports every rung it measured."""

import csv
import pathlib

import pytest

import lockstep
from lockstep import bench


def test_quick_ladder_measures_and_reports_every_rung(tmp_path, capsys):
    rows = bench.run(quick=True)
    rungs = [r.rung for r in rows]
    assert rungs[:2] == ["pure Python loop", "NumPy"]
    assert rungs[2:6] == [f"emulator {algo}" for algo in bench.EMULATOR_ALGOS]
    assert all(r.seconds > 0 and (r.rate > 0 or r.work == 0) for r in rows)  # (launch overhead rows time no work)
    # The lecture's numba kernel as a lockstep.cuda kernel, against the same kernel in C++ (and numba's simulator, a test dependency).
    python_rows = {r.reference: r for r in rows if r.group == "python kernels" and r.device == "cpu"}
    assert {"CUDA C++ (lockstep.compile)", "numba simulator"} <= set(python_rows)
    assert python_rows["numba simulator"].fraction_of_reference > 10
    # @lockstep.fuse's chain and the same ops one by one, on the emulator.
    assert {"emulator eager chain (5 ops)", "emulator fused chain (5 ops)"} <= set(rungs)
    # The emulator's kernels against plain C++ (and PoCL, which the test command installs), results checked by emulator_bench.
    emulator = [r for r in rows if r.group == "emulator"]
    kernels = {r.rung for r in emulator}
    shuffles = "warp shuffle sum 256 threads, 10 shuffles, 1 barrier"
    assert {"matmul tiled static 16x16", "block sum 512 threads, 9 barriers", "grayscale 1-D 256", shuffles} <= kernels
    assert {r.rung for r in emulator if r.reference == "plain C++, 1 core"} == kernels
    if pathlib.Path("/etc/OpenCL/vendors/pocl.icd").exists():
        # Every kernel but the shuffles, which OpenCL C cannot write.
        assert {r.rung for r in emulator if r.reference == "PoCL, 1 thread"} == kernels - {shuffles}
    # The interpreted loop is far behind NumPy on any machine.
    assert rows[0].fraction_of_reference < 0.1
    progress = capsys.readouterr().err
    assert "1/" in progress and "pure Python" in progress
    bench.report(rows, tmp_path)
    table = capsys.readouterr().out
    assert all(f"| {rung} |" in table for rung in rungs)
    with open(tmp_path / "ladder.csv") as f:
        assert [row["rung"] for row in csv.DictReader(f)] == rungs


@pytest.mark.gpu
def test_quick_ladder_on_a_gpu_has_every_kernel():
    rungs = {r.rung: r for r in bench.run(quick=True)}
    for algo in bench.FLOAT32_GPU_ALGOS:
        assert f"GPU {algo}" in rungs
    for rung in (
        "GPU cuBLAS SGEMM",
        "GPU wmma tf32",
        "GPU wmma bf16",
        "device copy",
        "grayscale vectorized",
        "relu",
        "add",
        "sum",
        "eager chain (5 ops)",
        "fused chain (5 ops)",
        "eager bias + gelu",
        "fused bias + gelu",
    ):
        assert rungs[rung].rate > 0
    if lockstep._core.device_arch("cuda:0") == "sm_90":
        assert "GPU wgmma bf16" in rungs and "GPU wgmma tf32" in rungs


def test_interleaved_timing_takes_each_rivals_samples_in_turn():
    calls = []
    runs = {name: (lambda name=name: calls.append(name)) for name in ("a", "b", "c")}
    seconds = bench._interleaved_seconds(runs, repeats=4, device="cpu", batch=2)
    assert set(seconds) == {"a", "b", "c"} and all(s >= 0 for s in seconds.values())
    assert [calls.count(name) for name in "abc"] == [1 + 4 * 2] * 3  # a warm-up, then 4 samples of 2 calls
    samples = [calls[i] for i in range(3, len(calls), 2)]  # the first call of each sample, after the warm-ups
    assert samples == list("abcbcacababc")  # each round in a rotated order
