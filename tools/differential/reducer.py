"""Delta debugging (ddmin) over a kernel's statements: drop lines and whole blocks while the finding persists.

A unit is one line of the kernel's body, or a line opening a block (`... {`) with everything up
to its closing `}` (and an `else` block after it). A candidate that does not build fails the
test, so the result still builds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from .generator import Kernel


def units(body: list[str]) -> list[list[str]]:
    out, i = [], 0
    while i < len(body):
        depth, j = 0, i
        while True:
            depth += body[j].count("{") - body[j].count("}")
            j += 1
            if depth <= 0 and not (j < len(body) and body[j].strip().startswith("else")):
                break
        out.append(body[i:j])
        i = j
    return out


def split_source(source: str) -> tuple[str, list[str], str]:
    """head (up to the kernel's opening line and its fixed preamble), body lines, tail."""
    lines = source.splitlines()
    open_at = next(i for i, line in enumerate(lines) if line.startswith("__global__"))
    # The preamble the generator writes first (constants, tid, gid) is kept whole.
    start = open_at + 1
    while start < len(lines) and (lines[start].strip().startswith(("constexpr", "using namespace", "const unsigned tid", "const unsigned gid"))):
        start += 1
    end = max(i for i, line in enumerate(lines) if line == "}")
    return "\n".join(lines[:start]), lines[start:end], "\n".join(lines[end:])


def reduce(kernel: Kernel, still_fails: Callable[[Kernel], bool], log: Callable[[str], None] = print) -> Kernel:
    head, body, tail = split_source(kernel.source)

    def make(parts: list[list[str]]) -> Kernel:
        text = "\n".join([head, *("\n".join(p) for p in parts), tail]) + "\n"
        return dataclasses.replace(kernel, source=text)

    current = units(body)
    # Recurse into blocks too: after a pass over the top level, a block's inner lines become units.
    changed = True
    while changed:
        changed = False
        n = 2
        while len(current) >= 1:
            chunk = max(1, len(current) // n)
            removed = False
            for start in range(0, len(current), chunk):
                candidate = current[:start] + current[start + chunk :]
                if candidate != current and still_fails(make(candidate)):
                    current, removed, changed = candidate, True, True
                    log(f"reduced to {sum(len(u) for u in current)} lines")
                    break
            if removed:
                n = max(2, n - 1)
            elif chunk == 1:
                break
            else:
                n = min(len(current), n * 2)
        # Open up blocks: replace a block by its inner units (keeping its header and closing line).
        expanded = []
        for u in current:
            if len(u) > 2 and u[0].rstrip().endswith("{"):
                inner = units(_dedent_block(u))
                expanded.append([u[0]])
                expanded.extend(inner)
                expanded.append([u[-1]])
            else:
                expanded.append(u)
        if len(expanded) != len(current):
            current, changed = expanded, True
            if not still_fails(make(current)):  # cannot happen unless the test is flaky
                break
    return make(current)


def _dedent_block(u: list[str]) -> list[str]:
    # The lines between a block's header and its last line (which may be `} else {`-shaped: kept whole then).
    return u[1:-1] if u[-1].strip() == "}" else u[1:-1]
