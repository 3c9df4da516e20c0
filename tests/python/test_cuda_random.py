"""numba.cuda.random on lockstep: create_xoroshiro128p_states and the
xoroshiro128p draws in kernels give numba's streams bit for bit, against a
NumPy implementation of the generator written here (seeding, jumps, uniform
floats) and against numba's own CPU implementation of numba.cuda.random
(normals too), on both engines; numba's function objects and
``import numba.cuda.random`` in the no-edit mode are lockstep's."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import lockstep
from lockstep import cuda
from lockstep.cuda.random import (
    create_xoroshiro128p_states,
    xoroshiro128p_dtype,
    xoroshiro128p_normal_float32,
    xoroshiro128p_normal_float64,
    xoroshiro128p_uniform_float32,
    xoroshiro128p_uniform_float64,
)

ENGINES = [pytest.param(True, id="loops"), pytest.param(False, id="fibers")]
MASK = (1 << 64) - 1


# ---- the generator in plain Python integers (xoroshiro128+ with splitmix64 seeding), the reference ----
def _rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & MASK


def _next(state):
    s0, s1 = state
    result = (s0 + s1) & MASK
    s1 ^= s0
    state[0] = _rotl(s0, 55) ^ s1 ^ ((s1 << 14) & MASK)
    state[1] = _rotl(s1, 36)
    return result


def _jump(state):
    s0 = s1 = 0
    for word in (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922):
        for b in range(64):
            if word >> b & 1:
                s0 ^= state[0]
                s1 ^= state[1]
            _next(state)
    state[:] = [s0, s1]


def reference_states(n, seed, subsequence_start):
    z = (seed + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    z ^= z >> 31
    states = [[z, z]]
    for _ in range(subsequence_start):
        _jump(states[0])
    for _ in range(1, n):
        states.append(list(states[-1]))
        _jump(states[-1])
    return states


def as_words(states_array):
    host = states_array.copy_to_host() if hasattr(states_array, "copy_to_host") else states_array
    return [[int(s["s0"]), int(s["s1"])] for s in host]


@cuda.jit
def draw_uniforms(states, u32, u64):
    i = cuda.grid(1)
    if i < u32.shape[0]:
        for k in range(u32.shape[1]):
            u32[i, k] = xoroshiro128p_uniform_float32(states, i)
            u64[i, k] = xoroshiro128p_uniform_float64(states, i)


@pytest.mark.parametrize("region_loops", ENGINES)
def test_seeded_states_and_uniforms_are_the_generator_s_bit_for_bit(rng, region_loops):
    n, draws = int(rng.integers(20, 70)), int(rng.integers(2, 6))
    seed, start = int(rng.integers(0, 1 << 64, dtype=np.uint64)), int(rng.integers(0, 3))
    states = create_xoroshiro128p_states(n, seed=seed, subsequence_start=start)
    assert states.shape == (n,) and states.dtype == xoroshiro128p_dtype
    want_states = reference_states(n, seed, start)
    assert as_words(states) == want_states
    u32, u64 = np.full((n, draws), np.nan, np.float32), np.full((n, draws), np.nan)
    with lockstep.emulator_options_scope(region_loops=region_loops):
        draw_uniforms[(n + 31) // 32, 32](states, u32, u64)
    want32, want64 = np.empty((n, draws), np.float32), np.empty((n, draws))
    for i, state in enumerate(want_states):
        for k in range(draws):
            want32[i, k] = np.float32((_next(state) >> 11) * 2.0**-53)  # numba: the float64 uniform, rounded
            want64[i, k] = (_next(state) >> 11) * 2.0**-53
    np.testing.assert_array_equal(u32, want32)
    np.testing.assert_array_equal(u64, want64)
    assert as_words(states) == want_states  # each generator advanced in place, two draws a step
    assert 0 <= u64.min() and u64.max() < 1


@cuda.jit
def draw_all(states, u32, u64, n32, n64):
    i = cuda.grid(1)
    if i < u32.shape[0]:
        for k in range(u32.shape[1]):
            u32[i, k] = xoroshiro128p_uniform_float32(states, i)
            u64[i, k] = xoroshiro128p_uniform_float64(states, i)
            n32[i, k] = xoroshiro128p_normal_float32(states, i)
            n64[i, k] = xoroshiro128p_normal_float64(states, i)


@pytest.mark.numba
@pytest.mark.parametrize("region_loops", ENGINES)
def test_every_draw_equals_numba_s_own_implementation(rng, region_loops):
    numba_random = pytest.importorskip("numba.cuda.random")  # numba's module; its functions run on the CPU too
    n, draws = int(rng.integers(20, 70)), int(rng.integers(2, 5))
    seed, start = int(rng.integers(0, 1 << 63)), int(rng.integers(0, 2))
    outs = [np.full((n, draws), np.nan, t) for t in (np.float32, np.float64, np.float32, np.float64)]
    with lockstep.emulator_options_scope(region_loops=region_loops):
        draw_all[(n + 31) // 32, 32](create_xoroshiro128p_states(n, seed, start), *outs)
    theirs = np.empty(n, dtype=numba_random.xoroshiro128p_dtype)
    numba_random.init_xoroshiro128p_states_cpu(theirs, seed, start)
    functions = (
        numba_random.xoroshiro128p_uniform_float32,
        numba_random.xoroshiro128p_uniform_float64,
        numba_random.xoroshiro128p_normal_float32,
        numba_random.xoroshiro128p_normal_float64,
    )
    wants = [np.empty((n, draws), t) for t in (np.float32, np.float64, np.float32, np.float64)]
    for i in range(n):
        for k in range(draws):
            for want, function in zip(wants, functions):
                want[i, k] = function(theirs, i)
    for got, want in zip(outs, wants):
        np.testing.assert_array_equal(got, want)


@pytest.mark.numba
def test_numba_s_own_random_functions_in_a_kernel_are_lockstep_s(rng):
    from numba.cuda.random import xoroshiro128p_normal_float64 as numbas_normal  # numba's object, not lockstep's

    @cuda.jit
    def normals(states, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = numbas_normal(states, i)

    n, seed = int(rng.integers(10, 90)), int(rng.integers(1 << 40))
    out, want = np.full(n, np.nan), np.empty(n)
    normals[(n + 31) // 32, 32](create_xoroshiro128p_states(n, seed), out)
    mine = create_xoroshiro128p_states(n, seed)

    @cuda.jit
    def with_lockstep_s(states, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = xoroshiro128p_normal_float64(states, i)

    with_lockstep_s[(n + 31) // 32, 32](mine, want)
    np.testing.assert_array_equal(out, want)


def test_states_refuse_arithmetic_and_other_arrays_in_python_terms():
    @cuda.jit
    def wrong(x, out):
        out[0] = xoroshiro128p_uniform_float32(x, 0)

    with pytest.raises(cuda.TypingError, match="takes the array create_xoroshiro128p_states made, not a array.float64"):
        wrong[1, 1](np.zeros(3), np.zeros(1, np.float32))


def test_import_numba_cuda_random_in_the_no_edit_mode_is_lockstep_s(tmp_path):
    script = tmp_path / "mc.py"
    script.write_text(
        textwrap.dedent(
            """
            import numpy as np
            from numba import cuda
            from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

            @cuda.jit
            def estimate(states, hits):
                i = cuda.grid(1)
                x, y = xoroshiro128p_uniform_float32(states, i), xoroshiro128p_uniform_float32(states, i)
                if x * x + y * y <= 1.0:
                    cuda.atomic.add(hits, 0, 1)

            hits = np.zeros(1, np.int64)
            estimate[8, 64](create_xoroshiro128p_states(512, seed=3), hits)
            print(create_xoroshiro128p_states.__module__, 4 * hits[0] / 512)
            """
        )
    )
    ran = subprocess.run([sys.executable, "-m", "lockstep.numba", str(script)], capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert ran.returncode == 0, ran.stderr
    module, estimate = ran.stdout.split()
    assert module == "lockstep.cuda.random" and abs(float(estimate) - np.pi) < 0.4


@pytest.mark.gpu
def test_on_a_gpu_the_generators_and_uniforms_are_numba_s(rng):
    """NVRTC's build of python_random.h: the states, seeded on the GPU, and the uniforms bit for bit; the
    normals within a few float32 ulps (the GPU's logf and cosf, as numba's GPU kernels have them, are not glibc's)."""
    n, draws = int(rng.integers(100, 300)), 3
    seed = int(rng.integers(0, 1 << 63))
    with lockstep.device("cuda:0"):
        states = create_xoroshiro128p_states(n, seed)
        assert states.device == "cuda:0" and as_words(states) == reference_states(n, seed, 0)
        outs = [np.full((n, draws), np.nan, t) for t in (np.float32, np.float64, np.float32, np.float64)]
        draw_all[(n + 63) // 64, 64](states, *outs)
    want_states = reference_states(n, seed, 0)
    for i, state in enumerate(want_states):
        for k in range(draws):
            words = [_next(state) for _ in range(6)]  # u32, u64, two for n32, two for n64
            assert outs[0][i, k] == np.float32((words[0] >> 11) * 2.0**-53)
            assert outs[1][i, k] == (words[1] >> 11) * 2.0**-53
            for out, pair in ((outs[2], words[2:4]), (outs[3], words[4:6])):
                u1, u2 = (np.float64(np.float32((w >> 11) * 2.0**-53)) for w in pair)  # numba: both normals from float32 uniforms
                normal = np.sqrt(-2.0 * np.log(u1)) * np.cos(2 * np.pi * u2)
                np.testing.assert_allclose(out[i, k], normal, rtol=2e-6, atol=2e-6)
