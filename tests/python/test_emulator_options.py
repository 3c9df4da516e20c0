"""Results must not depend on how the emulator schedules threads and blocks."""

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


def run_under_each_setting(compute):
    results = []
    for setting in SETTINGS:
        with lockstep.emulator_options_scope(**setting):
            results.append(compute())
    return results


@pytest.mark.parametrize("launch", ["1d", "2d"])
def test_grayscale_is_independent_of_options(rng, launch):
    image = rng.integers(0, 256, size=(3, 37, 41), dtype=np.uint8)
    first, *rest = run_under_each_setting(lambda: lockstep.rgb_to_grayscale(image, launch=launch))
    for other in rest:
        assert np.array_equal(first, other)


@pytest.mark.parametrize("algo", ["naive", "tiled_static", "tiled_dynamic"])
def test_matmul_is_independent_of_options(rng, algo):
    a = rng.uniform(-1, 1, size=(45, 38)).astype(np.float32)
    b = rng.uniform(-1, 1, size=(38, 29)).astype(np.float32)
    first, *rest = run_under_each_setting(lambda: lockstep.matmul(a, b, algo=algo))
    for other in rest:
        assert np.array_equal(first, other)  # each thread sums in a fixed order: bitwise equal
