"""lockstep.matmul against a float64 NumPy reference."""

import threading

import numpy as np
import pytest

import lockstep

ALGOS = ["naive", "tiled_static", "tiled_dynamic"]
SHAPES = [(1, 1, 1), (17, 33, 5), (64, 64, 64), (100, 37, 129)]  # (m, k, n)


def random_matrix(rng, rows, cols):
    return rng.uniform(-1, 1, size=(rows, cols)).astype(np.float32)


def relative_error(out, ref):
    return np.linalg.norm(out.astype(np.float64) - ref) / max(np.linalg.norm(ref), 1e-300)


@pytest.mark.parametrize("algo", ALGOS)
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_matches_reference(rng, algo, m, k, n):
    a, b = random_matrix(rng, m, k), random_matrix(rng, k, n)
    c = lockstep.matmul(a, b, algo=algo)
    assert c.dtype == np.float32 and c.shape == (m, n)
    assert not np.isnan(c).any(), "an output element was never written"
    assert relative_error(c, a.astype(np.float64) @ b.astype(np.float64)) < 1e-5


@pytest.mark.parametrize("algo", ALGOS)
def test_empty_inner_dimension_gives_zeros(algo):
    c = lockstep.matmul(np.zeros((3, 0), np.float32), np.zeros((0, 5), np.float32), algo=algo)
    assert np.array_equal(c, np.zeros((3, 5), np.float32))


def test_concurrent_calls_from_threads(rng):
    # The GIL is released while a kernel runs; launches from several Python
    # threads must still each get their own correct result.
    pairs = [(random_matrix(rng, 40, 24), random_matrix(rng, 24, 33)) for _ in range(4)]
    results = [None] * len(pairs)

    def work(i):
        results[i] = lockstep.matmul(*pairs[i], algo=ALGOS[i % len(ALGOS)])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(pairs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (a, b), c in zip(pairs, results):
        assert relative_error(c, a.astype(np.float64) @ b.astype(np.float64)) < 1e-5


def test_launch_error_keeps_the_message():
    # 65537 block rows exceed the grid's y limit of 65535.
    a, b = np.zeros((16 * 65537, 0), np.float32), np.zeros((0, 1), np.float32)
    with pytest.raises(lockstep.LaunchError, match="grid dimension y is 65537") as caught:
        lockstep.matmul(a, b)
    assert isinstance(caught.value, lockstep.CudaError)
    assert str(caught.value).startswith("cudaErrorInvalidConfiguration")


def test_wrong_dtype():
    with pytest.raises(TypeError, match="float32.*float64"):
        lockstep.matmul(np.zeros((2, 2)), np.zeros((2, 2), np.float32))
    with pytest.raises(TypeError, match="float32.*int32"):
        lockstep.matmul(np.zeros((2, 2), np.float32), np.zeros((2, 2), np.int32))


def test_wrong_shape():
    with pytest.raises(ValueError, match="2-dimensional"):
        lockstep.matmul(np.zeros(4, np.float32), np.zeros((4, 1), np.float32))


def test_not_contiguous(rng):
    a = random_matrix(rng, 6, 6)
    with pytest.raises(ValueError, match="numpy.ascontiguousarray"):
        lockstep.matmul(a.T, a)  # Fortran order
    with pytest.raises(ValueError, match="numpy.ascontiguousarray"):
        lockstep.matmul(a, a[:, ::2][:3])


def test_inner_dimension_mismatch(rng):
    with pytest.raises(ValueError, match="inner dimensions"):
        lockstep.matmul(random_matrix(rng, 3, 4), random_matrix(rng, 5, 3))


def test_unknown_algo(rng):
    a = random_matrix(rng, 2, 2)
    with pytest.raises(ValueError, match="tiled_static"):
        lockstep.matmul(a, a, algo="strassen")
