"""``lockstep nvcc``, ``lockstep run`` and ``lockstep check`` on whole programs written as CUDA is written."""

import os
import subprocess
import sys
import textwrap

import pytest

# A kernel file with a launcher, a header with a kernel launched through a
# macro, and a host file that only knows the runtime API: nothing of lockstep.
KERNELS = textwrap.dedent(
    r"""
    #include "scale.cuh"

    __global__ void offset(float* y, float by, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i GUARD n) y[i] += by;
    }

    void scale_then_offset(float* y, int n) {
      SCALE_LAUNCH(y, n);
      offset<<<(n + 127) / 128, 128>>>(y, 0.5f, n);
    }
    """
)
HEADER = textwrap.dedent(
    r"""
    #pragma once
    template <int factor>
    __global__ void scale(float* y, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) y[i] *= factor;
    }
    #define SCALE_LAUNCH(y, n) scale<FACTOR><<<((n) + 63) / 64, 64>>>(y, n)
    """
)
MAIN = textwrap.dedent(
    r"""
    #include <cstdio>
    #include <cstdlib>
    #include <cuda_runtime.h>

    void scale_then_offset(float* y, int n);

    int main(int argc, char** argv) {
      const int n = argc > 1 ? std::atoi(argv[1]) : 100;
      float* host = static_cast<float*>(std::malloc(n * sizeof(float)));
      for (int i = 0; i < n; ++i) host[i] = float(i);
      float* y;
      cudaMalloc(&y, n * sizeof(float));
      cudaMemcpy(y, host, n * sizeof(float), cudaMemcpyHostToDevice);
      scale_then_offset(y, n);
      cudaMemcpy(host, y, n * sizeof(float), cudaMemcpyDeviceToHost);
      std::printf("n=%d last=%g error=%s\n", n, host[n - 1], cudaGetErrorName(cudaGetLastError()));
      cudaFree(y);
      return 0;
    }
    """
)


def lockstep(*args, cwd, env=None):
    return subprocess.run(
        [sys.executable, "-m", "lockstep", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=dict(os.environ, LOCKSTEP_CACHE_DIR=str(cwd / "cache"), **(env or {})),
    )


@pytest.fixture
def project(tmp_path):
    def write(guard="<"):
        (tmp_path / "include").mkdir(exist_ok=True)
        (tmp_path / "include" / "scale.cuh").write_text(HEADER)
        (tmp_path / "kernels.cu").write_text(KERNELS.replace("GUARD", guard))
        (tmp_path / "main.cpp").write_text(MAIN)
        return tmp_path

    return write


def test_builds_a_program_of_several_files_as_nvcc_does(project):
    root = project()
    built = lockstep("nvcc", "-arch=sm_90", "-O2", "-DFACTOR=3", "-Iinclude", "kernels.cu", "main.cpp", "-o", "prog", cwd=root)
    assert built.returncode == 0, built.stderr
    assert "ignoring GPU-only option -arch=sm_90" in built.stderr
    ran = subprocess.run([str(root / "prog"), "1000"], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert "n=1000 last=2997.5 error=cudaSuccess" in ran.stdout  # 999 * 3 + 0.5


def test_c_files_are_compiled_as_c(tmp_path):
    # As nvcc does: a .c file is C (`class` is a name there) and its functions have C linkage.
    (tmp_path / "twice.c").write_text("int twice(int x) { int class = 2; return class * x; }\n")
    (tmp_path / "main.cu").write_text(
        textwrap.dedent(
            r"""
            #include <cstdio>
            extern "C" int twice(int);
            __global__ void store(int* out, int value) { *out = value; }
            int main() {
              int* out;
              cudaMallocManaged(&out, sizeof(int));
              store<<<1, 1>>>(out, twice(21));
              cudaDeviceSynchronize();
              std::printf("value=%d\n", *out);
              return 0;
            }
            """
        )
    )
    built = lockstep("nvcc", "main.cu", "twice.c", "-o", "prog", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True)
    assert "value=42" in ran.stdout, ran.stdout + ran.stderr


def test_a_cxx17_program_keeps_its_own_names_in_host_files(tmp_path):
    # lockstep builds C++17 programs as C++20, where <math.h> also names
    # std::lerp; a host-only file has no built-in variables and none of CUDA's
    # device math: under nvcc these names are the program's (the CUDA samples'
    # helper_math.h, particles, volumeFiltering).
    (tmp_path / "blend.cpp").write_text(
        textwrap.dedent(
            r"""
            #include <math.h>
            #include <cuda_runtime.h>
            #include <cuda_fp16.h>
            float lerp(float a, float b, float t) { return a + t * (b - a); }
            inline int max(int a, int b) { return a > b ? a : b; }
            inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
            unsigned grid_cells() { unsigned gridDim = 4; return gridDim * gridDim + max(0, 0) * rsqrtf(1.0f); }
            """
        )
    )
    (tmp_path / "main.cu").write_text(
        textwrap.dedent(
            r"""
            #include <cstdio>
            float lerp(float a, float b, float t);
            unsigned grid_cells();
            __global__ void blocks(unsigned* out) { *out = gridDim.x; }
            int main() {
              unsigned* out;
              cudaMallocManaged(&out, sizeof(unsigned));
              blocks<<<3, 1>>>(out);
              cudaDeviceSynchronize();
              std::printf("lerp=%g cells=%u blocks=%u\n", lerp(1.0f, 3.0f, 0.25f), grid_cells(), *out);
              return 0;
            }
            """
        )
    )
    built = lockstep("nvcc", "-std=c++17", "main.cu", "blend.cpp", "-o", "prog", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True)
    assert "lerp=1.5 cells=16 blocks=3" in ran.stdout, ran.stdout + ran.stderr


def test_opengl_interop_answers_without_a_context(tmp_path):
    # <cuda_gl_interop.h> builds; in a process without OpenGL the calls
    # answer as a GPU's do (H200, driver 580.159.04, the same program built
    # by nvcc: bench/RESULTS.md), and bad handles are refused.
    (tmp_path / "main.cu").write_text(
        textwrap.dedent(
            r"""
            #include <cstdio>
            #include <cuda_runtime.h>
            #include <cuda_gl_interop.h>
            int main() {
              cudaGraphicsResource_t resource = nullptr;
              const cudaError_t registered = cudaGraphicsGLRegisterBuffer(&resource, 1, cudaGraphicsRegisterFlagsNone);
              const cudaError_t mapped = cudaGraphicsMapResources(1, &resource, 0);
              void* pointer = nullptr;
              size_t bytes = 0;
              const cudaError_t got = cudaGraphicsResourceGetMappedPointer(&pointer, &bytes, resource);
              const cudaError_t image = cudaGraphicsGLRegisterImage(&resource, 1, 0x0DE1, cudaGraphicsRegisterFlagsNone);
              std::printf("%s %s %s %s %s\n", cudaGetErrorName(registered), cudaGetErrorName(mapped), cudaGetErrorName(got),
                          cudaGetErrorName(image), cudaGetErrorString(registered));
              return 0;
            }
            """
        )
    )
    built = lockstep("nvcc", "main.cu", "-o", "prog", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True)
    assert ran.stdout.split(" ", 4) == [
        "cudaErrorOperatingSystem",
        "cudaErrorInvalidResourceHandle",
        "cudaErrorInvalidResourceHandle",
        "cudaErrorOperatingSystem",
        "OS call failed or operation not supported on this OS\n",
    ], ran.stdout + ran.stderr


def test_nccl_ranks_on_host_threads(tmp_path):
    # NCCL's "one device per thread" pattern: each host thread joins the
    # communicator as one rank on its own device and all-reduces; -lnccl links
    # the emulator's NCCL from the installed package.
    (tmp_path / "main.cu").write_text(
        textwrap.dedent(
            r"""
            #include <cstdio>
            #include <thread>
            #include <vector>
            #include <nccl.h>
            __global__ void fill(float* x, float v, int n) {
              int i = blockIdx.x * blockDim.x + threadIdx.x;
              if (i < n) x[i] = v + i;
            }
            int main() {
              int n_dev = 0;
              cudaGetDeviceCount(&n_dev);
              ncclUniqueId id;
              ncclGetUniqueId(&id);
              const int n = 1000;
              std::vector<float> first(n);
              std::vector<ncclResult_t> results(n_dev);
              std::vector<std::thread> threads;
              for (int rank = 0; rank < n_dev; ++rank)
                threads.emplace_back([&, rank] {
                  cudaSetDevice(rank);
                  ncclComm_t comm;
                  results[rank] = ncclCommInitRank(&comm, n_dev, id, rank);
                  float* x;
                  cudaMalloc(&x, n * sizeof(float));
                  fill<<<(n + 255) / 256, 256>>>(x, float(rank), n);
                  if (results[rank] == ncclSuccess) results[rank] = ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm, 0);
                  if (rank == 0) cudaMemcpy(first.data(), x, n * sizeof(float), cudaMemcpyDeviceToHost);
                  ncclCommDestroy(comm);
                  cudaFree(x);
                });
              for (auto& t : threads) t.join();
              for (int rank = 0; rank < n_dev; ++rank) std::printf("%s ", ncclGetErrorString(results[rank]));
              std::printf("%g %g\n", first[0], first[n - 1]);
              return 0;
            }
            """
        )
    )
    built = lockstep("nvcc", "main.cu", "-o", "prog", "-lnccl", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True, env=dict(os.environ, LOCKSTEP_EMU_DEVICES="3"))
    # Ranks add v + i with v = 0, 1, 2: 3i + 3.
    assert ran.stdout == "no error no error no error 3 3000\n", ran.stdout + ran.stderr


def test_nccl_rank_whose_process_ended_fails_the_others_calls(tmp_path):
    # Rank 1 joins in a child process and exits; rank 0's collective then
    # fails with ncclRemoteError naming it, where NCCL on a GPU would hang.
    (tmp_path / "main.cu").write_text(
        textwrap.dedent(
            r"""
            #include <cstdio>
            #include <sys/wait.h>
            #include <unistd.h>
            #include <nccl.h>
            int main() {
              ncclUniqueId id;
              ncclGetUniqueId(&id);
              if (fork() == 0) {
                ncclComm_t comm;
                ncclCommInitRank(&comm, 2, id, 1);
                _exit(0);
              }
              wait(nullptr);
              ncclComm_t comm;
              ncclCommInitRank(&comm, 2, id, 0);
              float* x;
              cudaMalloc(&x, 256 * sizeof(float));
              ncclResult_t result = ncclAllReduce(x, x, 256, ncclFloat, ncclSum, comm, 0);
              ncclResult_t async = ncclSuccess;
              ncclCommGetAsyncError(comm, &async);
              std::printf("%d %d %s\n", result == ncclRemoteError, async == ncclRemoteError, ncclGetLastError(comm));
              ncclCommDestroy(comm);
              return 0;
            }
            """
        )
    )
    built = lockstep("nvcc", "main.cu", "-o", "prog", "-lnccl", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True, timeout=60)
    assert ran.stdout.startswith("1 1 rank 1 (process "), ran.stdout + ran.stderr
    assert "ended while this rank waited for it" in ran.stdout


def test_compiles_objects_then_links_them(project):
    root = project()
    for source in ("kernels.cu", "main.cpp"):
        compiled = lockstep("nvcc", "-c", "-DFACTOR=2", "-I", "include", source, cwd=root)
        assert compiled.returncode == 0, compiled.stderr
    linked = lockstep("nvcc", "kernels.o", "main.o", "-o", "linked", cwd=root)
    assert linked.returncode == 0, linked.stderr
    ran = subprocess.run([str(root / "linked"), "10"], capture_output=True, text=True)
    assert "n=10 last=18.5" in ran.stdout, ran.stdout + ran.stderr


def test_run_builds_once_and_passes_arguments(project):
    root = project()
    first = lockstep("run", "-DFACTOR=5", "-Iinclude", "kernels.cu", "main.cpp", "--", "7", cwd=root)
    assert first.returncode == 0, first.stderr
    assert "n=7 last=30.5" in first.stdout


def test_run_caches_a_cuda_only_program(tmp_path):
    (tmp_path / "one.cu").write_text(
        textwrap.dedent(
            r"""
            #include <cstdio>
            __global__ void square(int* v) { v[threadIdx.x] *= v[threadIdx.x]; }
            int main(int argc, char** argv) {
              int h[4] = {1, 2, 3, argc}, *d;
              cudaMalloc(&d, sizeof h);
              cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
              square<<<1, 4>>>(d);
              cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
              std::printf("%d %d %d %d\n", h[0], h[1], h[2], h[3]);
            }
            """
        )
    )
    first = lockstep("run", "one.cu", "x", "y", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "1 4 9 9"  # no lockstep header, no cuda_runtime.h: CUDA's names are there as under nvcc
    entries = sorted(p.name for p in (tmp_path / "cache").rglob("*.program"))
    assert len(entries) == 1, entries
    again = lockstep("run", "one.cu", cwd=tmp_path)
    assert again.stdout.strip() == "1 4 9 1"
    assert sorted(p.name for p in (tmp_path / "cache").rglob("*.program")) == entries  # the same build, reused


# A shared-memory tree sum (split into region loops by `lockstep nvcc`), a
# helper header's device function with a barrier, and a kernel whose thread
# waits on a flag another thread sets (left on fibers, where waiting lets the
# others run). The program checks itself against float64 sums.
BARRIER_PROGRAM = textwrap.dedent(
    r"""
    #include <cmath>
    #include <cstdio>
    #include <vector>
    #include "tile.cuh"

    __global__ void block_sums(const float* in, float* out, int n) {
      __shared__ float partial[256];
      const int i = blockIdx.x * blockDim.x + threadIdx.x;
      float mine = i < n ? in[i] : 0.0f;
      partial[threadIdx.x] = mine;
      tree_sum(partial);
      if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
    }

    __global__ void flag_wait(int* out) {
      __shared__ volatile int flag;
      if (threadIdx.x == 0) flag = 0;
      __syncthreads();
      if (threadIdx.x == blockDim.x - 1) flag = 7;
      if (threadIdx.x == 0) {
        while (flag == 0) __nanosleep(100);
        out[blockIdx.x] = flag;
      }
    }

    int main() {
      const int n = 1000, blocks = (n + 255) / 256;
      std::vector<float> in(n), out(blocks, -1.0f);
      for (int i = 0; i < n; ++i) in[i] = std::sin(0.37 * i);
      float *d_in, *d_out;
      int* d_flags;
      cudaMalloc(&d_in, n * sizeof(float));
      cudaMalloc(&d_out, blocks * sizeof(float));
      cudaMalloc(&d_flags, 2 * sizeof(int));
      cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice);
      cudaMemcpy(d_out, out.data(), blocks * sizeof(float), cudaMemcpyHostToDevice);
      block_sums<<<blocks, 256>>>(d_in, d_out, n);
      flag_wait<<<2, 64>>>(d_flags);
      int flags[2] = {0, 0};
      cudaMemcpy(out.data(), d_out, blocks * sizeof(float), cudaMemcpyDeviceToHost);
      cudaMemcpy(flags, d_flags, sizeof flags, cudaMemcpyDeviceToHost);
      int bad = 0;
      for (int b = 0; b < blocks; ++b) {
        double want = 0;
        for (int i = b * 256; i < n && i < (b + 1) * 256; ++i) want += in[i];
        if (std::fabs(out[b] - want) > 1e-4 * (1 + std::fabs(want))) ++bad;
      }
      std::printf("bad=%d flags=%d,%d\n", bad, flags[0], flags[1]);
      return bad;
    }
    """
)
TILE_HEADER = textwrap.dedent(
    r"""
    #pragma once
    __device__ void tree_sum(float* partial) {
      for (int half = blockDim.x / 2; half > 0; half /= 2) {
        __syncthreads();
        if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
      }
      __syncthreads();
    }
    """
)


def test_kernels_with_barriers_run_as_loops_and_waiting_kernels_on_fibers(tmp_path):
    (tmp_path / "sums.cu").write_text(BARRIER_PROGRAM)
    (tmp_path / "tile.cuh").write_text(TILE_HEADER)
    built = lockstep("nvcc", "-O2", "sums.cu", "-o", "sums", cwd=tmp_path, env={"LOCKSTEP_REGION_LOOPS_LOG": "1"})
    assert built.returncode == 0, built.stderr
    assert "kernel block_sums runs as loops over threads" in built.stderr
    assert "kernel flag_wait" in built.stderr and "stays on fibers" in built.stderr
    for engine in ("loops", "fibers"):
        ran = subprocess.run([str(tmp_path / "sums")], capture_output=True, text=True, timeout=120, env=dict(os.environ, LOCKSTEP_EMU_ENGINE=engine))
        assert ran.returncode == 0, (engine, ran.stdout, ran.stderr)
        assert ran.stdout.strip() == "bad=0 flags=7,7", engine


# A kernel without barriers whose index is `blockIdx.x * blockDim.x +
# threadIdx.x` runs its blocks along x several to a call (lockstep nvcc's test
# for a call outside a launch, which starts every kernel, reads no thread's
# coordinates), and dynamic shared memory declared with an alignment builds.
ALONG_X_PROGRAM = textwrap.dedent(
    r"""
    #include <cstdio>
    #include <vector>

    __global__ void saxpy(const float* x, float* y, float a, int n) {
      const int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) y[i] = a * x[i] + y[i];
    }

    __global__ void reverse_blocks(const float* in, float* out) {
      extern __shared__ __align__(16) float staged[];
      const int base = blockIdx.x * blockDim.x;
      staged[threadIdx.x] = in[base + threadIdx.x];
      __syncthreads();
      out[base + threadIdx.x] = staged[blockDim.x - 1 - threadIdx.x];
    }

    int main() {
      const int n = 1000, threads = 128, blocks = (n + threads - 1) / threads;
      std::vector<float> x(blocks * threads), y(n), reversed(blocks * threads, -1.0f);
      for (int i = 0; i < blocks * threads; ++i) x[i] = 0.25f * (i % 97);
      for (int i = 0; i < n; ++i) y[i] = 1.0f + i % 13;
      float *d_x, *d_y, *d_reversed;
      cudaMalloc(&d_x, x.size() * sizeof(float));
      cudaMalloc(&d_y, n * sizeof(float));
      cudaMalloc(&d_reversed, x.size() * sizeof(float));
      cudaMemcpy(d_x, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice);
      cudaMemcpy(d_y, y.data(), n * sizeof(float), cudaMemcpyHostToDevice);
      saxpy<<<blocks, threads>>>(d_x, d_y, 2.0f, n);
      reverse_blocks<<<blocks, threads, threads * sizeof(float)>>>(d_x, d_reversed);
      std::vector<float> got(n);
      cudaMemcpy(got.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost);
      cudaMemcpy(reversed.data(), d_reversed, x.size() * sizeof(float), cudaMemcpyDeviceToHost);
      int bad = 0;
      for (int i = 0; i < n; ++i) bad += got[i] != 2.0f * x[i] + y[i];
      for (int i = 0; i < blocks * threads; ++i) bad += reversed[i] != x[i / threads * threads + threads - 1 - i % threads];
      std::printf("bad=%d\n", bad);
      return bad;
    }
    """
)


def test_index_only_kernels_run_blocks_along_x_and_aligned_dynamic_shared_memory_builds(tmp_path):
    (tmp_path / "along.cu").write_text(ALONG_X_PROGRAM)
    built = lockstep("nvcc", "along.cu", "-o", "along", cwd=tmp_path, env={"LOCKSTEP_REGION_LOOPS_LOG": "1", "LOCKSTEP_REGION_LOOPS_STRICT": "1"})
    assert built.returncode == 0, built.stderr
    assert "kernel saxpy runs as loops over threads, blocks along x several to a call" in built.stderr
    assert "kernel reverse_blocks runs as loops over threads" in built.stderr
    for engine in ("loops", "fibers"):
        ran = subprocess.run([str(tmp_path / "along")], capture_output=True, text=True, timeout=120, env=dict(os.environ, LOCKSTEP_EMU_ENGINE=engine))
        assert ran.returncode == 0, (engine, ran.stdout, ran.stderr)
        assert ran.stdout.strip() == "bad=0", engine


def test_check_finds_an_off_by_one_in_a_multi_file_program(project):
    root = project(guard="<=")
    checked = lockstep("check", "-DFACTOR=1", "-Iinclude", "kernels.cu", "main.cpp", cwd=root)
    assert checked.returncode != 0
    report = checked.stdout + checked.stderr
    guard_line = KERNELS.splitlines().index("  if (i GUARD n) y[i] += by;") + 1
    assert "memcheck" in report and f"kernels.cu:{guard_line}" in report, report


def test_check_passes_the_correct_program(project):
    root = project()
    checked = lockstep("check", "-DFACTOR=1", "-Iinclude", "kernels.cu", "main.cpp", "--", "64", cwd=root)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "no findings" in checked.stderr


def test_compile_errors_name_the_users_file_and_line(tmp_path):
    (tmp_path / "broken.cu").write_text("__global__ void k(float* y) {\n  y[threadIdx.x] = undefined_name;\n}\n")
    built = lockstep("nvcc", "-c", "broken.cu", cwd=tmp_path)
    assert built.returncode != 0
    assert "broken.cu:2:" in built.stderr and "undefined_name" in built.stderr, built.stderr


def test_unsupported_features_are_named_with_their_line(tmp_path):
    (tmp_path / "fft.cu").write_text("void plan(int n) {\n  cufftHandle p;\n  cufftPlan1d(&p, n, CUFFT_C2C, 1);\n}\n")
    built = lockstep("nvcc", "-c", "fft.cu", cwd=tmp_path)
    assert built.returncode != 0
    assert "fft.cu:2: cufftHandle: cuFFT is not emulated" in built.stderr, built.stderr


def test_refuses_options_nvcc_does_not_know(tmp_path):
    (tmp_path / "k.cu").write_text("__global__ void k() {}\n")
    built = lockstep("nvcc", "--frobnicate", "k.cu", cwd=tmp_path)
    assert built.returncode == 2 and "unknown option '--frobnicate'" in built.stderr
