"""python tools/differential/campaign.py [options]: the long campaign, in shards on every core.

  --seed S --count N --shard K   N generated kernels from seed S, K to a shard (one run of tools/differential)
  --jobs J                       shards run side by side (default: the machine's cores)
  --gpu-every G                  every G-th shard is also built by --gpu-nvcc and run on the GPU (0: none)
  --deadline SECONDS             no shard starts after it (what a time-limited machine leaves)
  --nvcc CMD --gpu-nvcc PATH     as tools/differential's
  --out DIR                      each shard's summary and log; campaign.json, the totals
  --work DIR                     the shards' sources and programs (default: under --out)
  --merge                        run nothing: the totals of the shards already in --out

A shard that did not finish counts nothing. The totals (kernels, engines, kernels with barriers
run as loops, the reasons the others stayed on fibers, mismatches and refused splits by kernel)
are what bench/RESULTS.md records; a mismatching kernel is regenerated from its seed
(generator.kernel) and reduced where a reducer can run.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import pathlib
import re
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent


def run_shard(seed: int, count: int, gpu: bool, args) -> None:
    """One run of tools/differential; its summary lands in --out as shard_<seed>.json (the totals read them)."""
    out = pathlib.Path(args.out)
    summary = out / f"shard_{seed}.json"
    cmd = [sys.executable, str(HERE), "--seed", str(seed), "--count", str(count), "--nvcc", args.nvcc]
    work = pathlib.Path(args.work or out)
    cmd += ["--work", str(work / f"work_{seed}"), "--summary", str(summary)]
    if gpu:
        cmd += ["--gpu-nvcc", args.gpu_nvcc]
    env = dict(os.environ, LOCKSTEP_CACHE_DIR=str(work / f"cache_{seed}"))
    with open(out / f"shard_{seed}.log", "w") as log:
        subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)


def reason_of(why: str) -> str:
    """A fibers reason without its kernel's lines and names: `file:line: the condition at k.cu:12 ...`."""
    why = why.split(": ", 1)[-1]
    why = re.sub(r"\S+\.cu:\d+(:\d+)?", "<line>", why)
    return re.sub(r"'[^']*'", "'<name>'", why)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="campaign", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=1_000_000)
    p.add_argument("--count", type=int, default=10_000)
    p.add_argument("--shard", type=int, default=80)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--gpu-every", type=int, default=0)
    p.add_argument("--deadline", type=float, default=float("inf"))
    p.add_argument("--nvcc", default="lockstep-nvcc")
    p.add_argument("--gpu-nvcc", default="nvcc")
    p.add_argument("--out", required=True)
    p.add_argument("--work", default="")
    p.add_argument("--merge", action="store_true")
    args = p.parse_args(argv)
    pathlib.Path(args.out).mkdir(parents=True, exist_ok=True)
    started = time.time()
    starts = list(range(args.seed, args.seed + args.count, args.shard))

    def shard(i: int, start: int) -> None:
        if time.time() - started <= args.deadline:
            run_shard(start, min(args.shard, args.seed + args.count - start), args.gpu_every > 0 and i % args.gpu_every == 0, args)

    if not args.merge:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            list(pool.map(lambda a: shard(*a), enumerate(starts)))
    # The totals of every shard that finished (this run's and earlier runs' into --out).
    totals = collections.Counter()
    reasons = collections.Counter()
    mismatches, refused, seeds = {}, [], []
    engines: set[str] = set()
    for path in sorted(pathlib.Path(args.out).glob("shard_*.json")):
        s = json.loads(path.read_text())
        engines.update(s["engines"])
        seeds.append([s["seed"], s["seed"] + s["generated"] - 1])
        totals["shards"] += 1
        totals["generated"] += s["generated"]
        totals["generated_on_gpu"] += s["generated"] if "gpu" in s["engines"] else 0
        for key in ("ran_as_loops", "with_barriers", "with_barriers_as_loops"):
            totals[key] += s[key]
        reasons.update(reason_of(why) for why in s["on_fibers"].values())
        mismatches.update(s["mismatches"])
        refused.extend(s["refused_splits"])
    unfinished = [start for start in starts if not (pathlib.Path(args.out) / f"shard_{start}.json").exists()] if not args.merge else []
    result = {
        "seeds": sorted(seeds),
        "engines": sorted(engines),
        **totals,
        "fibers_reasons": dict(reasons.most_common()),
        "mismatches": mismatches,
        "refused_splits": refused,
        "unfinished_shards": unfinished,
        "seconds": round(time.time() - started, 1),
    }
    (pathlib.Path(args.out) / "campaign.json").write_text(json.dumps(result, indent=1))
    print(
        f"{totals['generated']} generated kernels in {totals['shards']} shards ({totals['generated_on_gpu']} also on the GPU), "
        f"engines {', '.join(sorted(engines))}: {totals['with_barriers_as_loops']} of {totals['with_barriers']} with barriers as loops, "
        f"{len(mismatches)} mismatches, {len(refused)} refused splits, {len(unfinished)} shards not run, {result['seconds']} s"
    )
    for why, n in reasons.most_common(12):
        print(f"  fibers {n:5d}: {why[:160]}")
    for name, seen in mismatches.items():
        print(f"MISMATCH {name}: " + "; ".join(f"{e}={d[:60]}" for e, d in seen.items()))
    return 1 if mismatches or refused else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
