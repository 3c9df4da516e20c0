"""numba's cooperative groups: ``g = cuda.cg.this_grid(); g.sync()`` in a
kernel, which is then launched cooperatively (every block resident at once),
as numba launches it. numba's documentation example (each row from the
previous one, a grid barrier between rows) against NumPy, on both engines."""

import numpy as np
import pytest

import lockstep
from lockstep import cuda

ENGINES = [pytest.param(True, id="loops"), pytest.param(False, id="fibers")]


@cuda.jit
def sequential_rows(m):
    col = cuda.grid(1)
    g = cuda.cg.this_grid()
    for row in range(1, m.shape[0]):
        opposite = m.shape[1] - col - 1
        m[row, col] = m[row - 1, opposite] + 1
        g.sync()  # every thread's row done before any reads it


@cuda.jit
def heat_steps(a, b, steps):
    """numba's laplace example, reduced: ping-pong buffers, a grid barrier between time steps."""
    i = cuda.grid(1)
    if i >= a.size:
        return
    for step in range(steps):
        if step % 2 == 0:
            src = a
            dst = b
        else:
            src = b
            dst = a
        left = src[i - 1] if i > 0 else src[i]
        right = src[i + 1] if i < a.size - 1 else src[i]
        dst[i] = src[i] + 0.25 * (left - 2 * src[i] + right)
        cuda.cg.this_grid().sync()


@pytest.mark.parametrize("region_loops", ENGINES)
def test_rows_built_from_the_previous_row_across_blocks(rng, region_loops):
    blocks, threads = int(rng.integers(2, 9)), 32
    cols, rows = blocks * threads, int(rng.integers(5, 40))
    m = np.zeros((rows, cols), np.int32)
    with lockstep.emulator_options_scope(region_loops=region_loops):
        sequential_rows[blocks, threads](m)
    np.testing.assert_array_equal(m, np.tile(np.arange(rows, dtype=np.int32), (cols, 1)).T)
    assert all(spec.cooperative for spec in sequential_rows.overloads.values())


@pytest.mark.parametrize("region_loops", ENGINES)
def test_time_steps_with_a_grid_barrier_between_them(rng, region_loops):
    n, steps = int(rng.integers(100, 400)), int(rng.integers(3, 12))
    a, b = rng.uniform(0, 100, n), np.full(n, np.nan)
    want_a, want_b = a.copy(), np.full(n, np.nan)
    for step in range(steps):
        src, dst = (want_a, want_b) if step % 2 == 0 else (want_b, want_a)
        padded = np.concatenate([src[:1], src, src[-1:]])
        dst[:] = src + 0.25 * (padded[:-2] - 2 * src + padded[2:])
    with lockstep.emulator_options_scope(region_loops=region_loops):
        heat_steps[(n + 63) // 64, 64](a, b, steps)
    np.testing.assert_allclose(a if steps % 2 == 0 else b, want_a if steps % 2 == 0 else want_b, rtol=1e-12)


@cuda.jit("void(int32[:, ::1])")
def with_a_tile(m):
    tile = cuda.shared.array(3000, np.float64)  # static shared memory limits the blocks an SM holds
    col = cuda.grid(1)
    tile[cuda.threadIdx.x] = col
    cuda.cg.this_grid().sync()
    if col < m.shape[1]:
        m[0, col] = int(tile[cuda.threadIdx.x])


def test_max_cooperative_grid_blocks_is_the_limit_the_launch_enforces():
    """numba's question (kernel.overloads[sig].max_cooperative_grid_blocks(blockdim)) and the launch's refusal agree."""
    most = with_a_tile.overloads["void(int32[:, ::1])"].max_cooperative_grid_blocks(32)
    untiled = cuda.jit("void(int32[:, ::1])")(sequential_rows.py_func).overloads["void(int32[:, ::1])"].max_cooperative_grid_blocks(32)
    assert 0 < most < untiled  # the tile's 24000 bytes of shared memory leave fewer blocks per SM
    with pytest.raises(lockstep.LaunchError, match=f"at most {most} blocks"):
        with_a_tile[most + 1, 32](np.zeros((1, 32 * (most + 1)), np.int32))
    m = np.full((1, 32 * most), -1, np.int32)
    with_a_tile[most, 32](m)
    np.testing.assert_array_equal(m[0], np.arange(32 * most))


def test_kernels_without_a_grid_barrier_are_launched_as_before():
    @cuda.jit
    def plain(x):
        x[cuda.grid(1)] = 1

    x = np.zeros(64)
    plain[2, 32](x)
    assert x.sum() == 64 and not any(spec.cooperative for spec in plain.overloads.values())
