"""The emulator's options from Python: they round-trip, reach the emulator
(the thread order is observable), come from the environment, and results do
not depend on them."""

import os
import subprocess
import sys

import numpy as np
import pytest

import lockstep

SETTINGS = [
    {"workers": 1, "order": "forward"},
    {"workers": 2, "order": "forward"},
    {"workers": 1, "order": "reverse"},
    {"workers": 2, "order": "reverse"},
    {"workers": 2, "order": "random", "seed": 1},
    {"workers": 1, "order": "random", "seed": 12345},
]

# Each thread takes the next slot: the slots list the threads in the order they ran.
ORDER_SOURCE = r"""
__global__ void record_order(int* counter, int* order) {
  order[atomicAdd(counter, 1)] = threadIdx.x;
}
"""


def run_under_each_setting(compute):
    results = []
    for setting in SETTINGS:
        with lockstep.emulator_options_scope(**setting) as inside:
            assert {k: inside[k] for k in setting} == setting
            results.append(compute())
    return results


@pytest.mark.parametrize("launch", ["1d", "2d"])
def test_grayscale_is_independent_of_options(rng, launch):
    image = rng.integers(0, 256, size=(3, 37, 41), dtype=np.uint8)
    first, *rest = run_under_each_setting(lambda: lockstep.rgb_to_grayscale(image, launch=launch).numpy())
    for other in rest:
        assert np.array_equal(first, other)


@pytest.mark.parametrize("algo", ["naive", "tiled_static", "tiled_dynamic"])
def test_matmul_is_independent_of_options(rng, algo):
    a = rng.uniform(-1, 1, size=(45, 38)).astype(np.float32)
    b = rng.uniform(-1, 1, size=(38, 29)).astype(np.float32)
    first, *rest = run_under_each_setting(lambda: lockstep.matmul(a, b, algo=algo).numpy())
    for other in rest:
        assert np.array_equal(first, other)  # each thread sums in a fixed order: bitwise equal


def test_reductions_are_independent_of_options(rng):
    x = lockstep.asarray(rng.uniform(size=(300, 70)).astype(np.float32))
    first, *rest = run_under_each_setting(lambda: x.sum(dim=0).numpy())
    for other in rest:
        assert np.array_equal(first, other)


@pytest.fixture(scope="module")
def order_kernel():
    return lockstep.compile(ORDER_SOURCE, device="cpu").record_order


def thread_order(kernel, threads=32):
    counter, order = np.zeros(1, np.int32), np.full(threads, -1, np.int32)
    kernel[1, threads](counter, order)
    assert counter[0] == threads
    return order.tolist()


def test_thread_order_reaches_the_emulator(order_kernel):
    with lockstep.emulator_options_scope(workers=1, order="forward"):
        assert thread_order(order_kernel) == list(range(32))
    with lockstep.emulator_options_scope(order="reverse"):
        assert thread_order(order_kernel) == list(range(31, -1, -1))
    with lockstep.emulator_options_scope(order="random", seed=7):
        seven = thread_order(order_kernel)
        assert sorted(seven) == list(range(32)) and seven != list(range(32))
    with lockstep.emulator_options_scope(order="random", seed=7):
        assert thread_order(order_kernel) == seven, "the same seed must give the same order"
    others = []
    for seed in (8, 9, 10):
        with lockstep.emulator_options_scope(order="random", seed=seed):
            others.append(thread_order(order_kernel))
    assert any(o != seven for o in others), "the seed changes nothing"


def test_options_round_trip():
    before = lockstep.emulator_options()
    try:
        lockstep.set_emulator_options(workers=1, order="reverse", seed=42, stack_kib=128, region_loops=False)
        expected = {"workers": 1, "order": "reverse", "seed": 42, "stack_kib": 128, "checks": "none", "timeout": 0.0, "region_loops": False}
        assert lockstep.emulator_options() == expected
        lockstep.set_emulator_options(order="random")  # only what is given changes
        assert lockstep.emulator_options() == {**expected, "order": "random"}
    finally:  # the tests that follow run with the defaults
        lockstep.set_emulator_options(**before)
    assert lockstep.emulator_options() == before


def test_options_scope_restores_even_after_an_error():
    before = lockstep.emulator_options()
    with pytest.raises(KeyError):
        with lockstep.emulator_options_scope(workers=2, order="random", seed=7) as inside:
            assert inside == lockstep.emulator_options()
            assert (inside["workers"], inside["order"], inside["seed"]) == (2, "random", 7)
            raise KeyError("leave the block")
    assert lockstep.emulator_options() == before


def test_bad_options_name_the_allowed_values():
    before = lockstep.emulator_options()
    with pytest.raises(ValueError, match="forward.*reverse.*random"):
        lockstep.set_emulator_options(order="backwards")
    with pytest.raises(ValueError):
        lockstep.set_emulator_options(stack_kib=1)  # below the emulator's 16 KiB minimum
    with pytest.raises(TypeError):
        lockstep.set_emulator_options(threads=4)  # not an option
    assert lockstep.emulator_options() == before


def test_options_from_the_environment():
    package_parent = os.path.dirname(os.path.dirname(lockstep.__file__))
    env = dict(
        os.environ,
        LOCKSTEP_EMU_WORKERS="3",
        LOCKSTEP_EMU_ORDER="random:99",
        LOCKSTEP_EMU_STACK_KIB="512",
        LOCKSTEP_EMU_TIMEOUT="2.5",
        LOCKSTEP_EMU_ENGINE="fibers",
        PYTHONPATH=os.pathsep.join([package_parent, os.environ.get("PYTHONPATH", "")]),
    )
    child = subprocess.run(
        [sys.executable, "-c", "import lockstep; print(lockstep.emulator_options())"], capture_output=True, text=True, env=env, timeout=60
    )
    assert child.returncode == 0, child.stderr
    expected = {"workers": 3, "order": "random", "seed": 99, "stack_kib": 512, "checks": "none", "timeout": 2.5, "region_loops": False}
    assert child.stdout.strip() == str(expected)
