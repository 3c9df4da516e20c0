"""numba's cooperative groups in kernels: ``g = cuda.cg.this_grid()`` and
``g.sync()``, a barrier of every thread of the grid. A kernel that calls it
is launched cooperatively (every block resident at once), as numba launches
such kernels; the dispatcher knows one by GRID_SYNC in its C++."""

from __future__ import annotations

from typing import Any

from ._registry import define
from ._types import none
from ._values import Value

GRID_SYNC = "cooperative_groups::this_grid().sync()"
"""The C++ of g.sync(): what the translator writes and what marks a kernel for a cooperative launch."""


class GridSync:
    """``g.sync`` of a grid group, called as ``g.sync()``."""

    def __repr__(self) -> str:
        return "<lockstep.cuda cg.this_grid().sync>"


class GridGroup:
    """What ``cuda.cg.this_grid()`` gives in a kernel (a value known while translating, as numba's GridGroup is
    empty): its only method is ``sync``."""

    sync = GridSync()

    def __repr__(self) -> str:
        return "<lockstep.cuda cg.this_grid()>"


THE_GRID = GridGroup()  # one object: a local name standing for it (g = cuda.cg.this_grid()) stands for one thing


def _this_grid(translator: Any, node: Any) -> Value:
    if node.args or node.keywords:
        translator.fail(node, "cuda.cg.this_grid() takes no arguments")
    return Value(None, None, THE_GRID)


define(
    "cg.this_grid",
    "The grid as a group: ``g = cuda.cg.this_grid()``, then ``g.sync()`` waits for every thread of the grid.",
    notes="A kernel calling ``g.sync()`` is launched cooperatively, as numba launches it (every block resident at once); on the emulator for now.",
    translate=_this_grid,
)
define(
    "cg.grid_sync",
    "``g.sync()`` of ``g = cuda.cg.this_grid()``: the barrier of the whole grid (CUDA's ``this_grid().sync()``).",
    arity=0,
    typing=none,
    emit=GRID_SYNC,
)
