"""numba.cuda.random's device functions (xoroshiro128p_uniform_float32 and
friends): each takes the generator array from create_xoroshiro128p_states
and a generator's index, and becomes python_random.h's function of that
generator, which repeats numba's operations bit for bit."""

from __future__ import annotations

from ._registry import IntrinsicCall, define
from ._types import Array, RandomState, Scalar, Type, float32, float64, int64, none, uint64
from ._values import cast


def _generator(call: IntrinsicCall) -> str | None:
    """``states[index]``, as C++: the generator the call advances (None while an argument's type is not known)."""
    states, index = call.args[0], call.args[1]
    if states.type is None or index.type is None:
        return None
    if not (isinstance(states.type, Array) and isinstance(states.type.dtype, RandomState) and states.type.ndim == 1):
        call.fail(f"cuda.random.{call.name.split('.')[1]} takes the array create_xoroshiro128p_states made, not a {states.type}")
    if not (isinstance(index.type, Scalar) and (index.type.is_integer or index.type.is_bool)):
        call.fail(f"cuda.random.{call.name.split('.')[1]}'s index is an integer, not a {index.type}")
    return f"{states.code}({cast(index, int64)})"


def _typed(result: Type):  # type: ignore[no-untyped-def]
    def typing(call: IntrinsicCall) -> Type | None:
        return result if _generator(call) is not None else None

    return typing


def _emit(call: IntrinsicCall, result: Type) -> str:
    return f"lockstep::py::{call.name.split('.')[1]}({_generator(call)})"


for _name, _result, _doc in (
    ("xoroshiro128p_uniform_float32", float32, "A float32 in [0, 1) from generator ``states[index]``, which it advances."),
    ("xoroshiro128p_uniform_float64", float64, "A float64 in [0, 1) from generator ``states[index]``, which it advances."),
    ("xoroshiro128p_normal_float32", float32, "A float32 of the standard normal distribution (Box-Muller), advancing the generator two steps."),
    ("xoroshiro128p_normal_float64", float64, "A float64 of the standard normal distribution (Box-Muller), advancing the generator two steps."),
    ("xoroshiro128p_next", uint64, "The generator's next uint64 (xoroshiro128+)."),
    ("xoroshiro128p_jump", none, "Moves the generator 2**64 steps on."),
):
    define(
        f"random.{_name}",
        _doc,
        notes="numba's generator bit for bit (numba's normal_float64 draws from two float32 uniforms, as here)." if "normal" in _name else "",
        arity=2,
        typing=_typed(_result),
        emit=_emit,
    )
