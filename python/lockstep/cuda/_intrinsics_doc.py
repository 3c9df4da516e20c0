"""docs/numba_intrinsics.md, written from the registry: a table per group of
intrinsics (name, what it is, notes). ``python -m lockstep.cuda._intrinsics_doc``
prints the page; a test checks the checked-in page is this rendering."""

from __future__ import annotations

from ._registry import IntrinsicDefinition
from ._supported import INTRINSICS, is_library_function, shown_name

_SECTIONS = (
    ("Thread indices and warp values", "Read as values, not called (``cuda.threadIdx.x``, ``cuda.laneid``)."),
    ("Barriers, warps and bits", "Functions of ``cuda``; a predicate is any number or bool, a mask an integer."),
    ("Arrays", "``cuda.shared``, ``cuda.local`` and ``cuda.const``: shape and dtype known when the kernel is translated."),
    ("cuda.fp16", "Half precision: the arguments are converted to float16."),
    ("cuda.atomic", "``cuda.atomic.op(ary, idx, val)`` on one element of an array argument, shared or local array; each gives the old value."),
    ("cuda.cg", "Cooperative groups: the grid and its barrier."),
    ("cuda.random", "numba.cuda.random's generators, of the host's ``create_xoroshiro128p_states(n, seed)``."),
    ("math and NumPy", "In float32 when every argument is float32 (or float16), else in float64."),
)


def _section(definition: IntrinsicDefinition) -> str:
    name = definition.name
    if is_library_function(name):
        return "math and NumPy"
    if definition.kind == "value":
        return "Thread indices and warp values"
    prefix = name.split(".")[0] if "." in name else ""
    if prefix in ("shared", "local", "const"):
        return "Arrays"
    if prefix in ("fp16", "atomic", "random", "cg"):
        return f"cuda.{prefix}"
    return "Barriers, warps and bits"


def _shown(definition: IntrinsicDefinition) -> str:
    call = "" if definition.kind == "value" else "()"
    return " / ".join(f"`{shown_name(n)}{call}`" for n in definition.names)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_intrinsics_page() -> str:
    """The page's Markdown."""
    definitions = list(dict.fromkeys(INTRINSICS.values()))  # one row per definition, in the order declared
    out = [
        "# numba's CUDA intrinsics in lockstep.cuda",
        "",
        "<!-- Generated from lockstep.cuda's registry (python/lockstep/cuda/_registry.py): do not edit by hand;",
        "     regenerate with `python -m lockstep.cuda._intrinsics_doc > docs/numba_intrinsics.md`. -->",
        "",
        "What a `@cuda.jit` kernel or device function may call beyond plain Python (Python's built-ins min, max, abs,",
        "int, float, bool, round, len, pow, range, enumerate, zip and print are translated too). Each row is one",
        "declaration of the registry: its typing rule and its CUDA C++ live there, next to this line. Anything",
        "else a kernel calls is refused with a `cuda.TypingError` at its line.",
    ]
    for title, summary in _SECTIONS:
        rows = [d for d in definitions if _section(d) == title]
        out += ["", f"## {title}", "", summary, "", "| Name | What it is | Notes |", "| --- | --- | --- |"]
        out += [f"| {_shown(d)} | {_cell(d.doc)} | {_cell(d.notes)} |" for d in rows]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(render_intrinsics_page(), end="")
