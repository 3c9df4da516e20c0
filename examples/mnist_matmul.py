"""The lecture's MNIST-shaped product, (50000, 784) @ (784, 10), with the
lecture's matmul kernels and the ladder's fastest, on the emulator and on the
GPU when present, each checked against a float64 NumPy reference.

    python examples/mnist_matmul.py
"""

import sys
import time

import numpy as np

import lockstep


def main() -> int:
    rng = np.random.default_rng()
    images = rng.standard_normal((50000, 784), dtype=np.float32)  # a batch of flattened 28x28 images
    weights = rng.standard_normal((784, 10), dtype=np.float32)  # a linear layer to 10 classes
    reference = images.astype(np.float64) @ weights.astype(np.float64)
    devices = ["cpu"] + (["cuda:0"] if lockstep.cuda_available() else [])
    # The lecture's kernels and the ladder's fastest rung (what "auto" runs for float32).
    ladder = lockstep._core.matmul_algos()
    algos = [a["name"] for a in ladder if a["family"] == "simt" and a["lecture"]] + lockstep._core.auto_matmul_candidates("float32")
    failed = False
    print("| device | algo | seconds | relative error |\n|---|---|---:|---:|")
    for device in devices:
        a = lockstep.asarray(images, device=device)
        b = lockstep.asarray(weights, device=device)
        for algo in algos:
            lockstep.matmul(a[:256], b, algo=algo)  # warm up: load the kernel module
            lockstep.synchronize(device)
            start = time.perf_counter()
            c = lockstep.matmul(a, b, algo=algo)
            lockstep.synchronize(device)
            seconds = time.perf_counter() - start
            result = c.to("cpu").numpy().astype(np.float64)
            error = np.linalg.norm(result - reference) / np.linalg.norm(reference)
            failed |= not error < 1e-5
            print(f"| {device} | {algo} | {seconds:.4f} | {error:.1e} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
