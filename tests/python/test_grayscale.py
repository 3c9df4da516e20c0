"""lockstep.rgb_to_grayscale against a NumPy reference."""

import numpy as np
import pytest

import lockstep

SIZES = [(1, 1), (17, 255), (33, 1), (1, 300), (64, 64), (129, 77)]  # (height, width)


def reference(image):
    """The lecture's formula in float64, truncated to uint8."""
    r, g, b = image.astype(np.float64)
    return np.floor(0.2989 * r + 0.5870 * g + 0.1140 * b).astype(np.uint8)


def random_image(rng, height, width):
    return rng.integers(0, 256, size=(3, height, width), dtype=np.uint8)


@pytest.mark.parametrize("launch", ["1d", "2d"])
@pytest.mark.parametrize("height,width", SIZES)
def test_matches_reference(rng, launch, height, width):
    image = random_image(rng, height, width)
    original = image.copy()
    gray = lockstep.rgb_to_grayscale(image, launch=launch)
    assert gray.dtype == np.uint8 and gray.shape == (height, width)
    assert np.array_equal(image, original), "the input was modified"
    # The kernel sums in float32, the reference in float64: a sum just below an
    # integer can truncate one lower, on a tiny fraction of pixels.
    diff = np.abs(gray.astype(np.int16) - reference(image).astype(np.int16))
    assert diff.max() <= 1
    assert np.count_nonzero(diff) <= max(1, diff.size // 1000)


def test_read_only_input(rng):
    image = random_image(rng, 5, 7)
    image.flags.writeable = False
    assert lockstep.rgb_to_grayscale(image).shape == (5, 7)


def test_empty_image():
    assert lockstep.rgb_to_grayscale(np.zeros((3, 0, 4), np.uint8)).shape == (0, 4)


def test_wrong_dtype():
    with pytest.raises(TypeError, match="uint8.*float64"):
        lockstep.rgb_to_grayscale(np.zeros((3, 4, 4), np.float64))


def test_not_an_array():
    with pytest.raises(TypeError, match="numpy.ndarray"):
        lockstep.rgb_to_grayscale([[[0]]] * 3)


@pytest.mark.parametrize("shape", [(4, 4), (4, 4, 3), (1, 3, 4, 4)])
def test_wrong_shape(shape):
    with pytest.raises(ValueError, match="shape|dimensional"):
        lockstep.rgb_to_grayscale(np.zeros(shape, np.uint8))


def test_not_contiguous(rng):
    image = random_image(rng, 8, 16)[:, :, ::2]
    with pytest.raises(ValueError, match="numpy.ascontiguousarray"):
        lockstep.rgb_to_grayscale(image)
    assert lockstep.rgb_to_grayscale(np.ascontiguousarray(image)).shape == (8, 8)


def test_unknown_launch(rng):
    with pytest.raises(ValueError, match="1d"):
        lockstep.rgb_to_grayscale(random_image(rng, 2, 2), launch="3d")
