"""minitorch's 256x256 matmul through its CUDA backend on lockstep, warm: the time of one call
(``a @ b`` on CudaOps tensors, with and without reading the result back to NumPy) against the
time of the solution's own matmul kernel launched alone on the same device arrays.

    python scripts/minitorch_matmul_timing.py CHECKOUT [--repeat N] [--profile]

CHECKOUT is a completed minitorch solution (minitorch/cuda_ops.py filled in), unchanged: numba.cuda
is lockstep.cuda through the no-edit mode, installed here before minitorch is imported. The engine is
LOCKSTEP_EMU_ENGINE's. --profile prints cProfile's top entries of the warm calls. Fetches nothing.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time

import lockstep.numba


def best_of(repeat: int, fn) -> float:
    """The fastest of ``repeat`` timed calls, in seconds (the machine is shared; the minimum is the cost)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("checkout")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()

    lockstep.numba.install()
    sys.path.insert(0, args.checkout)
    import minitorch
    import numpy as np
    from minitorch import cuda_ops
    from numba import cuda

    backend = minitorch.TensorBackend(minitorch.CudaOps)
    rng = np.random.default_rng()
    n = args.size
    a_np, b_np = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    a = minitorch.tensor(a_np.tolist(), backend=backend)
    b = minitorch.tensor(b_np.tolist(), backend=backend)

    def call() -> minitorch.Tensor:
        return a @ b

    def call_and_read() -> np.ndarray:
        return (a @ b).to_numpy()

    got = call_and_read()  # warm: the kernels compile here
    np.testing.assert_allclose(got, a_np @ b_np, rtol=1e-9, atol=1e-9)

    # The kernel alone: the same launch matrix_multiply makes, on its 3-d views, storages already on the device.
    a3, b3 = a.contiguous().view(1, n, n), b.contiguous().view(1, n, n)
    out = a3.zeros((1, n, n))
    for t in (a3, b3, out):
        t._tensor.to_cuda_()
    tpb = cuda_ops.THREADS_PER_BLOCK
    grid = ((n + tpb - 1) // tpb, (n + tpb - 1) // tpb, 1)

    def kernel() -> None:
        cuda_ops.tensor_matrix_multiply[grid, (tpb, tpb, 1)](*out.tuple(), out.size, *a3.tuple(), *b3.tuple())
        cuda.synchronize()

    kernel()
    t_kernel = best_of(args.repeat, kernel)
    t_call = best_of(args.repeat, call)
    t_read = best_of(args.repeat, call_and_read)
    print(
        f"{n}x{n} matmul: kernel {t_kernel * 1e3:.1f} ms, a @ b {t_call * 1e3:.1f} ms "
        f"({t_call / t_kernel:.2f}x), a @ b then to_numpy {t_read * 1e3:.1f} ms ({t_read / t_kernel:.2f}x)"
    )
    if args.profile:
        profile = cProfile.Profile()
        profile.runcall(lambda: [call_and_read() for _ in range(args.repeat)])
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
    return 0


if __name__ == "__main__":
    sys.exit(main())
