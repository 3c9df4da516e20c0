"""The lectures' first two kernels, run from Python on lockstep's CUDA emulator.

    python examples/lecture.py

Converts a random channels-first RGB image to grayscale with the 1-D and 2-D
kernels, multiplies two matrices with each matmul kernel of the ladder, checks
every result against NumPy, and times each against NumPy in the same run.
"""

import time

import numpy as np

import lockstep


def median_seconds(fn, repeats=5):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def main():
    rng = np.random.default_rng()
    print(f"lockstep {lockstep.__version__}, emulator options {lockstep.emulator_options()}\n")

    image = rng.integers(0, 256, size=(3, 1066, 1600), dtype=np.uint8)
    weights = np.array([0.2989, 0.5870, 0.1140], dtype=np.float32)
    reference = np.einsum("c,chw->hw", weights, image.astype(np.float32)).astype(np.uint8)
    numpy_s = median_seconds(lambda: np.einsum("c,chw->hw", weights, image.astype(np.float32)).astype(np.uint8))
    print("| computation | lockstep emulator (ms) | NumPy (ms) | max abs diff |\n|---|---:|---:|---:|")
    for launch in ("1d", "2d"):
        gray = lockstep.rgb_to_grayscale(image, launch=launch)
        diff = np.abs(gray.astype(int) - reference.astype(int)).max()
        seconds = median_seconds(lambda: lockstep.rgb_to_grayscale(image, launch=launch))
        print(f"| grayscale {launch} 1066x1600 | {seconds * 1e3:.2f} | {numpy_s * 1e3:.2f} | {diff} |")

    a = rng.standard_normal((256, 256), dtype=np.float32)
    b = rng.standard_normal((256, 256), dtype=np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    numpy_s = median_seconds(lambda: a @ b)
    for algo in ("naive", "tiled_static", "tiled_dynamic"):
        c = lockstep.matmul(a, b, algo=algo)
        error = np.linalg.norm(c - exact) / np.linalg.norm(exact)
        seconds = median_seconds(lambda: lockstep.matmul(a, b, algo=algo))
        print(f"| matmul {algo} 256^3 | {seconds * 1e3:.2f} | {numpy_s * 1e3:.2f} | rel. error {error:.1e} |")
        assert error < 1e-5, f"{algo}: relative error {error}"


if __name__ == "__main__":
    main()
