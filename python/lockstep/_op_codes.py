"""The unary and binary ops of lockstep/kernels/op_codes.h, read from its X-macro rows: each op's name and flags.

The header is the ops' one list: the eager kernels' switches, the tensor layer's names and the functions
``lockstep::kernels::unary_<name>`` and ``binary_<name>`` (lockstep/kernels/op_functions.h) are generated from its
rows, and ``@lockstep.fuse`` (python/lockstep/_fuse.py) takes from here which ops it can fuse, calling those same
functions, so a new row is fused with no edit here. Read once, from the headers the package ships (where the JIT
finds them too: LOCKSTEP_INCLUDE_DIR, the include/ folder beside the library, or the source tree's).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import NamedTuple


# Each list's flag columns are its tuple's fields, in the rows' order after the name (op_codes.h's comments name
# them); the rest of a row is the op's formula, which stays C++.
class UnaryOp(NamedTuple):
    floating_only: bool  # refuses integer tensors (integers are converted to the default float first)


class BinaryOp(NamedTuple):
    gives_bool: bool  # a comparison or logical op: a bool result
    integers_only: bool  # a bitwise op: refuses floating-point operands
    in_double: bool  # the eager kernels compute floating operands in double (fusion: in the compute type)


def _op_codes_header() -> Path:
    package = Path(__file__).resolve().parent
    candidates = [Path(os.environ["LOCKSTEP_INCLUDE_DIR"])] if os.environ.get("LOCKSTEP_INCLUDE_DIR") else []
    candidates += [package / "include", package.parent.parent / "include"]
    for include in candidates:
        header = include / "lockstep" / "kernels" / "op_codes.h"
        if header.is_file():
            return header
    raise FileNotFoundError(f"lockstep/kernels/op_codes.h is not in any of {[str(c) for c in candidates]}; set LOCKSTEP_INCLUDE_DIR")


def _split_top_level(text: str) -> list[str]:
    """A macro row's arguments: split at the commas outside parentheses."""
    fields, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += c == "("
        depth -= c == ")"
        if c == "," and depth == 0:
            fields.append(text[start:i].strip())
            start = i + 1
    fields.append(text[start:].strip())
    return fields


def rows(text: str, macro: str, flags: tuple[str, ...]) -> dict[str, tuple[bool, ...]]:
    """The rows of ``#define <macro>(X)`` in the header text: each op's name and its flag columns."""
    found = re.search(rf"^#define {macro}\(X\)((?:.*\\\n)*.*)$", text, re.MULTILINE)
    if found is None:
        raise ValueError(f"op_codes.h defines no {macro}(X)")
    body = found.group(1).replace("\\\n", " ")
    table: dict[str, tuple[bool, ...]] = {}
    at = 0
    while (row := re.compile(r"\bX\(").search(body, at)) is not None:
        depth, end = 0, row.end() - 1
        for end in range(row.end() - 1, len(body)):
            depth += body[end] == "("
            depth -= body[end] == ")"
            if depth == 0:
                break
        name, *values = _split_top_level(body[row.end() : end])[: 1 + len(flags)]
        if len(values) != len(flags) or not all(v in ("true", "false") for v in values):
            raise ValueError(f"{macro}'s row {name}: expected the flags {', '.join(flags)} (true or false), found {values}")
        table[name] = tuple(v == "true" for v in values)
        at = end + 1
    return table


_TEXT = _op_codes_header().read_text()
UNARY: dict[str, UnaryOp] = {name: UnaryOp(*values) for name, values in rows(_TEXT, "LOCKSTEP_UNARY_OPS", UnaryOp._fields).items()}
BINARY: dict[str, BinaryOp] = {name: BinaryOp(*values) for name, values in rows(_TEXT, "LOCKSTEP_BINARY_OPS", BinaryOp._fields).items()}
