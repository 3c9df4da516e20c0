"""numba's cuda.* functions and values of a thread's world: barriers and
fences, warp shuffles, votes and matches, lane masks, bit operations,
cuda.fma/cbrt/selp, and the thread's indices. Each becomes CUDA's own
function (lockstep's emulator has them all) or a helper of python_kernels.h."""

from __future__ import annotations

from ._registry import IntrinsicCall, define, float_type, suffixed
from ._types import Record, Scalar, Type, TypeConflict, boolean, int32, int64, none, uint32, uint64, unify
from ._values import Value, cast

# ---- the thread's place ----
for _dim3 in ("threadIdx", "blockIdx", "blockDim", "gridDim"):
    for _axis in "xyz":
        define(
            f"{_dim3}.{_axis}",
            f"The {_axis} of CUDA's {_dim3} (an int32).",
            kind="value",
            typing=int32,
            emit=f"static_cast<int>({_dim3}.{_axis})",
        )
define("laneid", "The thread's lane in its warp, 0 to 31.", kind="value", typing=int32, emit="lockstep::py::lane_id()")
define("warpsize", "32, the threads of a warp.", kind="value", typing=int32, emit="static_cast<int>(warpSize)")

# ---- barriers and fences ----
define("syncthreads", "Waits until every thread of the block has reached it (`__syncthreads()`).", arity=0, typing=none, emit="__syncthreads()")


def _barrier_with_predicate(call: IntrinsicCall, result: Type) -> str:
    return f"__{call.name}({call.truth(0)})"


define(
    "syncthreads_count",
    "A barrier that gives how many of the block's threads passed a true predicate.",
    arity=1,
    numbers=True,
    typing=int32,
    emit=_barrier_with_predicate,
)
define(
    "syncthreads_and",
    "A barrier that gives 1 if the predicate is true in every thread of the block.",
    arity=1,
    numbers=True,
    typing=int32,
    emit=_barrier_with_predicate,
)
define(
    "syncthreads_or",
    "A barrier that gives 1 if the predicate is true in any thread of the block.",
    arity=1,
    numbers=True,
    typing=int32,
    emit=_barrier_with_predicate,
)
define(
    "syncwarp",
    "Waits for the warp's threads in the mask (all 32 without one).",
    keywords=("mask",),
    typing=none,
    emit=lambda call, result: f"__syncwarp({cast(call.args[0], uint32) if call.args else '0xffffffffu'})",
)
define("threadfence", "Orders the thread's memory writes as seen by every thread of the device.", arity=0, typing=none, emit="__threadfence()")
define("threadfence_block", "Orders the thread's writes as seen by the threads of its block.", arity=0, typing=none, emit="__threadfence_block()")
define(
    "threadfence_system",
    "Orders the thread's memory writes as seen by the device and the host.",
    arity=0,
    typing=none,
    emit="__threadfence_system()",
)
define(
    "nanosleep",
    "Sleeps the thread for about ``ns`` nanoseconds (`__nanosleep`), as in a polling loop.",
    notes="On the emulator it lets the block's other threads run instead.",
    arity=1,
    numbers=True,
    typing=none,
    emit=lambda call, result: f"__nanosleep({cast(call.args[0], uint32)})",
)


# ---- warp shuffles ----
_SHUFFLED = ("int32", "int64", "uint32", "uint64", "float32", "float64")


def _lane_parameter(name: str) -> str:
    return "src_lane" if name == "shfl_sync" else "delta"


def _shuffle_type(call: IntrinsicCall) -> Type | None:
    if len(call.args) not in (3, 4):
        call.fail(f"cuda.{call.name}(mask, value, {_lane_parameter(call.name)}) takes 3 arguments")
    t = call.args[1].type
    if isinstance(t, Scalar) and t.is_bool:
        return int32  # a bool moves as an int32, as numba's
    if t is not None and not (isinstance(t, Scalar) and t.name in _SHUFFLED):
        call.fail(f"shuffles move int32, int64, uint32, uint64, float32 and float64 values, not {t}")
    return t


def _shuffle(call: IntrinsicCall, result: Type) -> str:
    mask, value, lane = call.args[:3]
    code = cast(value, int32) if isinstance(value.type, Scalar) and value.type.is_bool else value.code
    width = f", {cast(call.args[3], int32)}" if len(call.args) == 4 else ""
    lane_type = uint32 if call.name != "shfl_sync" else int32
    return f"__{call.name}({cast(mask, uint32)}, {code}, {cast(lane, lane_type)}{width})"


define(
    "shfl_sync",
    "The value ``value`` holds in lane ``src_lane`` of the warp.",
    keywords=("mask", "value", "src_lane", "width"),
    typing=_shuffle_type,
    emit=_shuffle,
)
define(
    "shfl_up_sync",
    "The value ``value`` holds in the lane ``delta`` below (the thread's own where there is none).",
    keywords=("mask", "value", "delta", "width"),
    typing=_shuffle_type,
    emit=_shuffle,
)
define(
    "shfl_down_sync",
    "The value ``value`` holds in the lane ``delta`` above (the thread's own where there is none).",
    keywords=("mask", "value", "delta", "width"),
    typing=_shuffle_type,
    emit=_shuffle,
)
define(
    "shfl_xor_sync",
    "The value ``value`` holds in the lane whose id is the thread's xor ``delta`` (butterfly reductions).",
    keywords=("mask", "value", "delta", "width"),
    typing=_shuffle_type,
    emit=_shuffle,
)


# ---- votes and matches ----
def _vote_type(call: IntrinsicCall) -> Type:
    mask, predicate = call.args
    if isinstance(mask.type, Scalar) and not mask.type.is_integer:
        call.fail(f"Mask type must be an integer: a warp mask is an integer, not {mask.type}")
    if isinstance(predicate.type, Scalar) and predicate.type.is_float:
        call.fail(f"Predicate must be an integer or boolean, not {predicate.type}")
    return uint32 if call.name == "ballot_sync" else int32


def _vote(call: IntrinsicCall, result: Type) -> str:
    mask, p = cast(call.args[0], uint32), call.truth(1)
    if call.name == "eq_sync":
        return f"static_cast<int>(__all_sync({mask}, {p}) || !__any_sync({mask}, {p}))"
    return f"__{call.name}({mask}, {p})"


define("all_sync", "1 if the predicate is true in every lane of the mask, else 0.", arity=2, typing=_vote_type, emit=_vote)
define("any_sync", "1 if the predicate is true in any lane of the mask, else 0.", arity=2, typing=_vote_type, emit=_vote)
define("eq_sync", "1 if the predicate is the same in every lane of the mask, else 0.", arity=2, typing=_vote_type, emit=_vote)
define("ballot_sync", "A uint32 with bit k set where lane k's predicate is true.", arity=2, typing=_vote_type, emit=_vote)
define(
    "match_any_sync",
    "The mask of the lanes whose ``value`` equals the thread's.",
    arity=2,
    typing=uint32,
    emit=lambda call, result: f"__match_any_sync({cast(call.args[0], uint32)}, {call.args[1].code})",
)
define(
    "match_all_sync",
    "(the mask, True) when every lane of the mask holds the same ``value``, else (0, False).",
    arity=2,
    typing=Record((uint32, boolean)),
    emit=lambda call, result: f"lockstep::py::match_all({cast(call.args[0], uint32)}, {call.args[1].code})",
)
define(
    "activemask",
    "The mask of the warp's lanes running this call together.",
    notes="On the emulator: the lanes that reached this line together.",
    arity=0,
    typing=uint32,
    emit=lambda call, result: f"lockstep::py::activemask_at({call.translator.line_of(call.node) * 1000 + call.node.col_offset})",
)
define("lanemask_lt", "The mask of the lanes below the thread's.", arity=0, typing=uint32, emit="((1u << lockstep::py::lane_id()) - 1u)")


# ---- bits ----
def _is_wide(v: Value) -> bool:
    return isinstance(v.type, Scalar) and v.type.bits == 64


def _counted_bits(call: IntrinsicCall, result: Type) -> str:
    (a,) = call.args
    wide = _is_wide(a)
    operand = cast(a, uint64 if wide else uint32) if call.name == "popc" else cast(a, int64 if wide else int32)
    return f"__{call.name}{'ll' if wide else ''}({operand})"


define("popc", "The number of set bits (of a 32- or 64-bit integer).", arity=1, numbers=True, typing=int32, emit=_counted_bits)
define("clz", "The number of leading zero bits.", arity=1, numbers=True, typing=int32, emit=_counted_bits)
define("ffs", "The position of the lowest set bit, counted from 1 (0: none set).", arity=1, numbers=True, typing=int32, emit=_counted_bits)
define(
    "brev",
    "The bits in reverse order (uint32, or uint64 for a 64-bit argument).",
    arity=1,
    numbers=True,
    typing=lambda call: uint64 if _is_wide(call.args[0]) else uint32,
    emit=lambda call, result: f"__brev{'ll' if result == uint64 else ''}({cast(call.args[0], result)})",
)


# ---- arithmetic ----
def _fma(call: IntrinsicCall, result: Type) -> str:
    assert isinstance(result, Scalar)
    return f"{suffixed('fma', result)}({', '.join(cast(a, result) for a in call.args)})"


define(
    "fma",
    "a * b + c, rounded once.",
    notes="float32 when every argument is float32, else float64.",
    arity=3,
    numbers=True,
    typing=lambda call: float_type(*call.args),
    emit=_fma,
)
define(
    "cbrt",
    "The cube root.",
    arity=1,
    numbers=True,
    typing=lambda call: float_type(*call.args),
    emit=lambda call, result: f"{suffixed('cbrt', result)}({cast(call.args[0], result)})",  # type: ignore[arg-type]
)


def _selected_type(call: IntrinsicCall) -> Type | None:
    try:
        return unify(call.args[1].type, call.args[2].type)
    except TypeConflict as e:
        call.fail(f"cuda.selp's two values have no common type ({e})")


def _select(call: IntrinsicCall, result: Type | None) -> str:
    _, a, b = call.args
    return f"({call.truth(0)} ? {cast(a, result) if result else a.code} : {cast(b, result) if result else b.code})"


define("selp", "``a`` where the predicate is true, else ``b`` (both evaluated).", arity=3, typing=_selected_type, emit=_select)
