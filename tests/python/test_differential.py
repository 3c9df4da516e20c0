"""The engines compared on generated kernels (tools/differential), a fixed-seed
slice: 80 random kernels (barriers in uniform loops and branches, shared and
private storage of every kind live across barriers, atomics, warp shuffles and
votes, early returns, device functions with barriers, templates), each
deterministic by construction, built with ``lockstep nvcc`` and run as region
loops and on fibers in forward, reverse and random thread orders. Any
difference in any kernel's output is a bug of an engine (or of the generator's
promise); a split the host compiler refuses is one too. The long campaign and
the GPU slice are in bench/RESULTS.md."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_generated_kernels_agree_on_every_engine(tmp_path):
    summary = tmp_path / "summary.json"
    ran = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "differential"),
            "--seed",
            "100000",
            "--count",
            "80",
            "--batch",
            "40",
            "--nvcc",
            f"{sys.executable} -m lockstep nvcc",
            "--work",
            str(tmp_path / "work"),
            "--summary",
            str(summary),
        ],
        capture_output=True,
        text=True,
        env=dict(os.environ, LOCKSTEP_CACHE_DIR=str(tmp_path / "cache")),
    )
    assert summary.exists(), ran.stdout[-3000:] + ran.stderr[-3000:]
    result = json.loads(summary.read_text())
    assert result["generated"] == 80
    assert not result["mismatches"], ran.stdout[-3000:]
    assert not result["refused_splits"], ran.stdout[-3000:]
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    # The fast path is exercised, not skipped: most kernels with barriers run as loops
    # (a fall to fibers of them all would compare the fibers with themselves).
    assert result["with_barriers_as_loops"] >= result["with_barriers"] // 2, result["on_fibers"]
