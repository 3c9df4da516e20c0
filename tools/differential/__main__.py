"""python tools/differential [options]: generated kernels and given programs, on every engine, compared.

  --seed S --count N [--batch B]   N generated kernels, seeds S..S+N-1, B to a program
  --files A.cu ...                 whole programs (the regression cases, the tree's programs)
  --nvcc CMD                       lockstep nvcc (default: lockstep-nvcc on PATH)
  --gpu-nvcc PATH                  real nvcc: also build for the GPU and compare with it
  --summary FILE                   write the summary (JSON) there
  --reduce DIR                     reduce each mismatching generated kernel, write DIR/<kernel>.cu
Exit status 1 on any mismatch or refused split.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import shlex
import sys
import tempfile
import time

if __package__ in (None, ""):
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
    __package__ = "differential"

from differential import generator, harness, program, reducer  # noqa: E402


def check_program(source: pathlib.Path, work: pathlib.Path, args, order_seed: int):
    builds = {"emulator": harness.build_emulator(source, work / (source.stem + ".emu"), args.nvcc)}
    if args.gpu_nvcc:
        builds["gpu"] = harness.build_gpu(source, work / (source.stem + ".gpu"), args.gpu_nvcc)
    if builds["emulator"].exe is None:
        return builds, {}, {source.name: {"build": builds["emulator"].error}}
    results = harness.run_all(builds, order_seed, source.name)
    return builds, results, harness.compare(results, "fibers")


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="differential", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--count", type=int, default=0)
    p.add_argument("--batch", type=int, default=40)
    p.add_argument("--files", nargs="*", default=[])
    p.add_argument("--nvcc", default="lockstep-nvcc")
    p.add_argument("--gpu-nvcc", default="")
    p.add_argument("--summary", default="")
    p.add_argument("--reduce", default="")
    p.add_argument("--work", default="")
    args = p.parse_args(argv)
    args.nvcc = shlex.split(args.nvcc)
    work = pathlib.Path(args.work or tempfile.mkdtemp(prefix="differential-"))
    work.mkdir(parents=True, exist_ok=True)
    started = time.time()
    summary = {
        "seed": args.seed,
        "generated": 0,
        "files": 0,
        "engines": list(harness.ENGINES) + (["gpu"] if args.gpu_nvcc else []),
        "ran_as_loops": 0,
        "with_barriers": 0,
        "with_barriers_as_loops": 0,
        "on_fibers": {},
        "mismatches": {},
        "refused_splits": [],
        "reduced": {},
    }
    mismatched_kernels: list[generator.Kernel] = []

    for start in range(args.seed, args.seed + args.count, args.batch):
        kernels = [generator.kernel(s) for s in range(start, min(start + args.batch, args.seed + args.count))]
        source = work / f"batch_{start}.cu"
        source.write_text(program.source(kernels))
        builds, results, mismatches = check_program(source, work, args, start)
        emu = builds["emulator"]
        summary["generated"] += len(kernels)
        if emu.refused:
            summary["refused_splits"].append({"batch": source.name, "seeds": [start, start + len(kernels) - 1], "errors": emu.refused})
        for k in kernels:
            summary["ran_as_loops"] += k.name in emu.loops
            if "barriers" in k.features:
                summary["with_barriers"] += 1
                summary["with_barriers_as_loops"] += k.name in emu.loops
            if k.name in emu.fibers:
                summary["on_fibers"][k.name] = emu.fibers[k.name]
        by_name = {k.name: k for k in kernels}
        for name, seen in mismatches.items():
            summary["mismatches"][name] = seen
            if name in by_name:
                mismatched_kernels.append(by_name[name])
        print(
            f"batch {start}: {len(kernels)} kernels, {len(emu.loops)} as loops, {len(mismatches)} mismatches"
            + (", split refused" if emu.refused else "")
            + f" ({time.time() - started:.0f} s)",
            flush=True,
        )

    for f in args.files:
        _, _, mismatches = check_program(pathlib.Path(f).resolve(), work, args, args.seed)
        summary["files"] += 1
        for name, seen in mismatches.items():
            summary["mismatches"][f"{pathlib.Path(f).name}:{name}"] = seen
        print(f"{f}: {len(mismatches)} mismatches", flush=True)

    if args.reduce:
        out_dir = pathlib.Path(args.reduce)
        out_dir.mkdir(parents=True, exist_ok=True)
        for k in mismatched_kernels:
            small = reduce_kernel(k, work, args)
            path = out_dir / f"{k.name}.cu"
            path.write_text(f"// Reduced by tools/differential from generated kernel seed {k.seed}: engines disagreed.\n" + program.source([small]))
            summary["reduced"][k.name] = str(path)
            print(f"reduced {k.name} -> {path}", flush=True)

    summary["seconds"] = round(time.time() - started, 1)
    text = json.dumps(summary, indent=1)
    if args.summary:
        pathlib.Path(args.summary).write_text(text)
    print(
        f"{summary['generated']} generated kernels ({summary['ran_as_loops']} as region loops; "
        f"{summary['with_barriers_as_loops']} of {summary['with_barriers']} with barriers), {summary['files']} programs, "
        f"engines {', '.join(summary['engines'])}: {len(summary['mismatches'])} mismatches, "
        f"{len(summary['refused_splits'])} refused splits, {summary['seconds']} s"
    )
    for name, seen in summary["mismatches"].items():
        print(f"MISMATCH {name}: " + "; ".join(f"{e}={d[:80]}" for e, d in seen.items()))
    for r in summary["refused_splits"]:
        print(f"REFUSED SPLIT {r['batch']} (seeds {r['seeds'][0]}..{r['seeds'][1]}): {r['errors'].splitlines()[0] if r['errors'] else ''}")
    return 1 if summary["mismatches"] or summary["refused_splits"] else 0


def reduce_kernel(k: generator.Kernel, work: pathlib.Path, args) -> generator.Kernel:
    counter = [0]

    def still_fails(candidate: generator.Kernel) -> bool:
        counter[0] += 1
        source = work / f"reduce_{k.name}_{counter[0]}.cu"
        source.write_text(program.source([candidate]))
        builds, results, mismatches = check_program(source, work, args, k.seed)
        return builds["emulator"].exe is not None and k.name in mismatches

    return reducer.reduce(k, still_fails, log=lambda m: print(f"  {k.name}: {m}", flush=True))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
