"""Cold and warm build+load time of the same small CUDA kernel through
torch.utils.cpp_extension.load_inline, the lectures' way, for comparison with
bench/jit_bench (run both in one session on the same machine).

cold: a new build directory. warm: a new Python process loading the same
extension from that build directory (ninja finds it up to date).

    python bench/load_inline_bench.py
"""

import subprocess
import sys
import tempfile
import time

CUDA_SOURCE = r"""
__global__ void saxpy_kernel(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
torch::Tensor saxpy(double a, torch::Tensor x, torch::Tensor y) {
  int n = x.numel();
  saxpy_kernel<<<(n + 127) / 128, 128>>>(static_cast<float>(a), x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
"""
CPP_SOURCE = "torch::Tensor saxpy(double a, torch::Tensor x, torch::Tensor y);"


def build_and_run(directory):
    """Milliseconds to build (or find) and load the extension and run it once."""
    import torch
    from torch.utils.cpp_extension import load_inline

    x = torch.ones(1024, device="cuda")
    y = torch.zeros(1024, device="cuda")
    torch.cuda.synchronize()
    start = time.perf_counter()
    module = load_inline(
        name="lockstep_bench_saxpy",
        cpp_sources=CPP_SOURCE,
        cuda_sources=CUDA_SOURCE,
        functions=["saxpy"],
        build_directory=directory,
        extra_cuda_cflags=["-arch=sm_90"],
    )
    module.saxpy(2.0, x, y)
    torch.cuda.synchronize()
    elapsed = (time.perf_counter() - start) * 1e3
    assert torch.allclose(y, torch.full_like(y, 2.0))
    return elapsed


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--warm":
        print(build_and_run(sys.argv[2]))
        return
    import torch

    with tempfile.TemporaryDirectory() as directory:
        cold = build_and_run(directory)
        warm = float(subprocess.check_output([sys.executable, __file__, "--warm", directory], text=True).split()[-1])
    print("| torch load_inline | cold build+load (ms) | warm, new process (ms) |\n|---|---:|---:|")
    print(f"| {torch.cuda.get_device_name()} | {cold:.0f} | {warm:.1f} |")


if __name__ == "__main__":
    main()
