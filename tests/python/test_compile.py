"""Kernels from source: lockstep.compile, kernel[grid, block(, shared(, stream))](...)
launches, arguments typed from the kernel's signature, errors, the disk cache,
and kernel printf reaching sys.stdout."""

import ctypes
import gc
import os
import re
import struct
import subprocess
import sys
import uuid

import numpy as np
import pytest

import lockstep
from lockstep._output import kernel_output_to_sys_stdout

SOURCE = r"""
#include <cassert>
#include <cstdio>

struct P { int a; float b; };

__global__ void scale(float* v, float by, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] *= by;
}

// Each thread writes its coordinates, encoded, at its place in launch order.
__global__ void coords(long long* out, long long* dims) {
  const long long block = (blockIdx.z * (long long)gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  const long long thread = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  out[block * blockDim.x * blockDim.y * blockDim.z + thread] =
      blockIdx.x + 10 * blockIdx.y + 100 * blockIdx.z + 1000 * threadIdx.x + 100000LL * threadIdx.y + 10000000LL * threadIdx.z;
  if (block == 0 && thread == 0) {
    dims[0] = gridDim.x; dims[1] = gridDim.y; dims[2] = gridDim.z;
    dims[3] = blockDim.x; dims[4] = blockDim.y; dims[5] = blockDim.z;
  }
}

// Reverses each block's run of `in` through dynamic shared memory.
__global__ void reverse_in_blocks(const float* in, float* out) {
  extern __shared__ float tile[];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = in[i];
  __syncthreads();
  out[i] = tile[blockDim.x - 1 - threadIdx.x];
}

__global__ void store_scalars(double* out, float f, double d, unsigned char u8, short s, long long ll, unsigned u, bool b) {
  out[0] = f; out[1] = d; out[2] = u8; out[3] = s; out[4] = (double)ll; out[5] = u; out[6] = b;
}

__global__ void use_struct(P p, float* out) {
  out[0] = p.a;
  out[1] = p.b;
}

__global__ void hello(int n) {
  if (threadIdx.x < n) printf("hello from thread %d of block %d\n", (int)threadIdx.x, (int)blockIdx.x);
}

__global__ void check_positive(const int* v) {
  assert(v[threadIdx.x] > 0);
}
"""

KERNEL_NAMES = ["scale", "coords", "reverse_in_blocks", "store_scalars", "use_struct", "hello", "check_positive"]


@pytest.fixture(scope="module", params=["cpu", pytest.param("cuda:0", marks=pytest.mark.gpu)])
def mod(request):
    return lockstep.compile(SOURCE, device=request.param)


def on(mod, array):
    return lockstep.asarray(array, device=mod.device)


def host(t):
    return t.to("cpu").numpy()


def test_module_lists_its_kernels(mod):
    assert sorted(mod.names) == sorted(KERNEL_NAMES)
    assert mod.scale.name == "scale"
    assert mod.scale.signature == "scale(float32*, float32, int32)"
    assert mod["store_scalars"].signature == "store_scalars(float64*, float32, float64, uint8, int16, int64, uint32, bool)"
    assert "struct of 8 bytes" in mod.use_struct.signature
    assert set(KERNEL_NAMES) <= set(dir(mod))
    assert repr(mod.scale).startswith("<lockstep kernel scale(")
    with pytest.raises(AttributeError, match="scale"):
        mod.no_such_kernel
    with pytest.raises(KeyError, match="scale"):
        mod["no_such_kernel"]


def test_launch_writes_through_pointers(rng, mod):
    x = rng.uniform(-1, 1, size=1000).astype(np.float32)
    expected = x * np.float32(2.5)
    t = on(mod, x)
    mod.scale[(t.size + 127) // 128, 128](t, 2.5, t.size)
    assert np.array_equal(host(t), expected)


@pytest.mark.parametrize(
    "grid,block", [(3, 32), ((2, 3), (4, 5)), ((2, 2, 2), (2, 3, 4)), ((5,), (7,)), (1, 1), (np.int64(2), (np.int32(3),))], ids=str
)
def test_grid_and_block_as_ints_and_tuples(mod, grid, block):
    g = (tuple(int(e) for e in grid) if isinstance(grid, tuple) else (int(grid),)) + (1, 1)
    b = (tuple(int(e) for e in block) if isinstance(block, tuple) else (int(block),)) + (1, 1)
    g, b = g[:3], b[:3]
    total = int(np.prod(g) * np.prod(b))
    out, dims = on(mod, np.full(total, -1, np.int64)), on(mod, np.zeros(6, np.int64))
    mod.coords[grid, block](out, dims)
    expected = [
        bx + 10 * by + 100 * bz + 1000 * tx + 100000 * ty + 10000000 * tz
        for bz in range(g[2])
        for by in range(g[1])
        for bx in range(g[0])
        for tz in range(b[2])
        for ty in range(b[1])
        for tx in range(b[0])
    ]
    assert host(out).tolist() == expected
    assert tuple(host(dims)) == g + b


def test_dynamic_shared_memory(rng, mod):
    block, grid = 64, 5
    x = rng.uniform(size=grid * block).astype(np.float32)
    out = on(mod, np.zeros_like(x))
    mod.reverse_in_blocks[grid, block, block * 4](on(mod, x), out)
    assert np.array_equal(host(out), x.reshape(grid, block)[:, ::-1].ravel())
    out2 = on(mod, np.zeros_like(x))
    mod.reverse_in_blocks[grid, block, block * 4, 0](on(mod, x), out2)  # the default stream, by handle
    assert np.array_equal(host(out2), host(out))


def test_dynamic_shared_memory_above_48_kib_needs_opting_in(rng, mod):
    kernel = mod.reverse_in_blocks
    x = on(mod, rng.uniform(size=32).astype(np.float32))
    with pytest.raises(lockstep.LaunchError, match="65536 bytes of dynamic shared memory but the kernel allows 49152"):
        kernel[1, 32, 64 * 1024](x, x.clone())
    kernel.set_max_dynamic_shared_bytes(64 * 1024)
    out = x.clone()
    kernel[1, 32, 64 * 1024](x, out)
    assert np.array_equal(host(out), host(x)[::-1])


def test_scalars_are_typed_from_the_signature(mod):
    out = on(mod, np.zeros(7, np.float64))
    mod.store_scalars[1, 1](out, 1 / 3, 1 / 3, 255, -32768, 2**62, 2**32 - 1, True)
    assert host(out).tolist() == [float(np.float32(1 / 3)), 1 / 3, 255, -32768, 2.0**62, 2**32 - 1, 1]
    mod.store_scalars[1, 1](out, 3, 4, 0, 0, -1, 0, False)  # ints convert to float parameters
    assert host(out).tolist() == [3, 4, 0, 0, -1, 0, 0]
    mod.store_scalars[1, 1](out, np.float32(0.1), np.float64(0.2), np.uint8(7), np.int16(-5), np.int64(9), np.uint32(3), np.bool_(True))
    assert host(out).tolist() == [float(np.float32(0.1)), 0.2, 7, -5, 9, 3, 1]


@pytest.mark.parametrize(
    "index,value,message",
    [
        (3, 1.0, r"argument 3 of store_scalars.*the parameter is uint8 but got real number.*does not convert to an integer"),
        (4, 2.5, r"argument 4 .*int16 but got real number"),
        (3, 256, r"argument 3 .*uint8 but got integer 256; the value does not fit"),
        (4, 32768, r"int16 but got integer 32768; the value does not fit"),
        (6, -1, r"uint32 but got integer -1; the value does not fit"),
        (7, 2, r"bool but got integer 2"),
        (5, 2**64, r"argument 5 is the integer 18446744073709551616, which does not fit in 64 bits"),
        (1, "1.0", r"argument 1 has type str"),
        (1, [1.0], r"argument 1 has type list"),
    ],
)
def test_scalars_out_of_type_or_range_raise(mod, index, value, message):
    args = [on(mod, np.zeros(7)), 1.0, 1.0, 1, 1, 1, 1, True]
    args[index] = value
    with pytest.raises(lockstep.ArgumentError, match=message):
        mod.store_scalars[1, 1](*args)
    assert issubclass(lockstep.ArgumentError, TypeError)


def test_struct_by_value_as_bytes(mod):
    out = on(mod, np.zeros(2, np.float32))
    mod.use_struct[1, 1](struct.pack("if", -7, 2.5), out)  # struct P { int a; float b; }
    assert host(out).tolist() == [-7.0, 2.5]
    with pytest.raises(lockstep.ArgumentError, match="struct of 8 bytes.*got 4 bytes by value"):
        mod.use_struct[1, 1](struct.pack("i", 1), out)
    with pytest.raises(lockstep.ArgumentError, match="argument 0 of use_struct.*struct of 8 bytes.*got integer"):
        mod.use_struct[1, 1](3, out)


def test_pointer_arguments_are_checked(rng, mod):
    floats = on(mod, np.zeros(4, np.float32))
    with pytest.raises(lockstep.ArgumentError, match="argument 0 of scale.*float32\\* but got pointer to int32.*element types differ"):
        mod.scale[1, 4](on(mod, np.zeros(4, np.int32)), 1.0, 4)
    with pytest.raises(lockstep.ArgumentError, match="argument 0 is not contiguous.*strides \\(2,\\).*contiguous\\(\\)"):
        mod.scale[1, 4](on(mod, np.zeros(8, np.float32))[::2], 1.0, 4)
    with pytest.raises(lockstep.ArgumentError, match="argument 2 of scale.*int32 but got pointer"):
        mod.scale[1, 4](floats, 1.0, floats)


def test_wrong_argument_count(mod):
    x = on(mod, np.zeros(4, np.float32))
    with pytest.raises(lockstep.ArgumentError, match=re.escape("kernel scale(float32*, float32, int32) takes 3 arguments, got 2")):
        mod.scale[1, 4](x, 1.0)
    with pytest.raises(lockstep.ArgumentError, match="takes 3 arguments, got 4"):
        mod.scale[1, 4](x, 1.0, 4, 5)


@pytest.mark.parametrize(
    "config,message",
    [
        ((1, 2048), "block has 2048 threads but the limit is 1024 threads per block"),
        ((1, (1, 1, 65)), "block dimension z is 65 but the limit is 64"),
        (((1, 70000), 32), "grid dimension y is 70000 but the limit is 65535"),
        ((2**31, 1), "grid dimension x is 2147483648 but the limit is 2147483647"),
        ((0, 32), "grid dimension x is 0; every grid and block dimension must be at least 1"),
        ((1, (32, 0)), "block dimension y is 0"),
        ((1, 32, 300 * 1024), "307200 bytes of dynamic shared memory"),
    ],
    ids=str,
)
def test_bad_launch_configuration_names_the_limit(mod, config, message):
    x = on(mod, np.zeros(4, np.float32))
    with pytest.raises(lockstep.LaunchError, match=message) as caught:
        mod.scale[config](x, 1.0, 4)
    assert str(caught.value).startswith("cudaError")


@pytest.mark.parametrize("config", [(1,), (1, 2, 3, 4, 5), ((1, 1, 1, 1), 1), (1, -1), (1.5, 32), (1, "32")], ids=str)
def test_malformed_launch_configuration(mod, config):
    with pytest.raises(TypeError, match="grid|block|launch with"):
        mod.scale[config]
    with pytest.raises(TypeError, match="launch with"):
        mod.scale[1]


def test_template_instances_by_name(rng):
    source = "template <int N> __global__ void k(int* out) { out[threadIdx.x] = N * threadIdx.x; }"
    module = lockstep.compile(source, names=["k<4>"])
    assert module.names == ["k<4>"]
    out = lockstep.asarray(np.zeros(8, np.int32))
    module["k<4>"][1, 8](out)
    assert out.numpy().tolist() == [4 * i for i in range(8)]
    with pytest.raises(KeyError, match="k<4>"):
        module["k<5>"]


def test_defines_reach_the_source():
    source = "__global__ void k(int* out) { out[0] = VALUE * 2; }"
    out = lockstep.asarray(np.zeros(1, np.int32))
    lockstep.compile(source, defines=["VALUE=21"]).k[1, 1](out)
    assert out.numpy()[0] == 42


BROKEN = """__global__ void broken(float* v) {
  int i = threadIdx.x;
  v[i] = undefined_name;
}
"""


def test_compile_error_carries_the_log(device):
    with pytest.raises(lockstep.CompileError) as caught:
        lockstep.compile(BROKEN, device=device, source_name="mine.cu")
    log = caught.value.log
    assert re.search(r"mine\.cu[:(]3\b", log), log  # g++ says mine.cu:3:10, NVRTC mine.cu(3)
    assert "undefined_name" in log
    assert log in str(caught.value)
    assert isinstance(caught.value, RuntimeError)


def test_kernel_assert_raises_kernel_error():
    # (CPU only: on a GPU a device-side assert leaves the context unusable.)
    module = lockstep.compile(SOURCE, device="cpu")
    module.check_positive[1, 4](np.array([1, 2, 3, 4], np.int32))
    with pytest.raises(lockstep.KernelError, match=r"block \(0, 0, 0\).*thread \(2, 0, 0\)"):
        module.check_positive[1, 4](np.array([1, 2, -3, 4], np.int32))


def test_tensor_on_another_device_is_refused_on_cpu_kernel():
    module = lockstep.compile(SOURCE, device="cpu")
    if lockstep.cuda_available():
        x = lockstep.asarray(np.zeros(4, np.float32), device="cuda:0")
        with pytest.raises(lockstep.ArgumentError, match='argument 0 is on cuda:0 but the kernel runs on cpu; move it with .to\\("cpu"\\)'):
            module.scale[1, 4](x, 1.0, 4)
    else:
        with pytest.raises(lockstep.DeviceUnavailable, match="'cpu'"):
            lockstep.asarray(np.zeros(4, np.float32), device="cuda:0")


@pytest.mark.gpu
def test_tensor_on_another_device_is_refused_on_gpu_kernel():
    module = lockstep.compile(SOURCE, device="cuda:0")
    with pytest.raises(lockstep.ArgumentError, match='argument 0 is on cpu but the kernel runs on cuda:0; move it with .to\\("cuda:0"\\)'):
        module.scale[1, 4](np.zeros(4, np.float32), 1.0, 4)
    with pytest.raises(lockstep.ArgumentError, match="is on cpu"):
        module.scale[1, 4](lockstep.asarray(np.zeros(4, np.float32)), 1.0, 4)


def test_disk_cache(tmp_path, monkeypatch, device):
    monkeypatch.setenv("LOCKSTEP_CACHE_DIR", str(tmp_path))
    token = uuid.uuid4().hex  # a source no earlier run has cached
    source = f"// {token}\n__global__ void fill(int* out, int value) {{ out[threadIdx.x] = value; }}\n"
    first = lockstep.compile(source, device=device)
    assert not first.from_cache
    assert any(tmp_path.iterdir()), "nothing was written to LOCKSTEP_CACHE_DIR"
    assert lockstep.compile(source, device=device).from_cache  # still loaded in this process
    del first
    gc.collect()
    again = lockstep.compile(source, device=device)  # released: from disk
    assert again.from_cache
    out = lockstep.asarray(np.zeros(4, np.int32), device=device)
    again.fill[1, 4](out, 9)
    assert host(out).tolist() == [9] * 4
    del again
    package_parent = os.path.dirname(os.path.dirname(lockstep.__file__))
    child = subprocess.run(
        [sys.executable, "-c", f"import lockstep, sys; print(lockstep.compile(sys.stdin.read(), device={device!r}).from_cache)"],
        input=source,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join([package_parent, os.environ.get("PYTHONPATH", "")])),
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == "True", "a fresh process compiled again instead of using the cache"


def test_world_writable_cache_folder_is_not_used(tmp_path, device):
    # In a child process: the warning is once per process, on stderr.
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    token = uuid.uuid4().hex
    value = int.from_bytes(os.urandom(2), "little")
    source = f"// {token}\n__global__ void fill(int* out, int value) {{ out[threadIdx.x] = value; }}\n"
    program = (
        "import sys, numpy as np, lockstep\n"
        f"m = lockstep.compile(sys.stdin.read(), device={device!r})\n"
        f"out = lockstep.asarray(np.zeros(4, np.int32), device={device!r})\n"
        f"m.fill[1, 4](out, {value})\n"
        "print(out.to('cpu').numpy().tolist())\n"
    )
    package_parent = os.path.dirname(os.path.dirname(lockstep.__file__))
    child = subprocess.run(
        [sys.executable, "-c", program],
        input=source,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, LOCKSTEP_CACHE_DIR=str(shared), PYTHONPATH=os.pathsep.join([package_parent, os.environ.get("PYTHONPATH", "")])),
    )
    assert child.returncode == 0, child.stderr
    assert f"not using the kernel cache folder {shared}: it is writable by others" in child.stderr
    assert f"chmod 700 {shared}" in child.stderr
    assert child.stdout.strip() == str([value] * 4), "compiling must still work, in a private folder"
    assert list(shared.iterdir()) == [], "nothing may be cached in a folder others can write"


def test_kernel_printf_reaches_sys_stdout(mod, capsys):
    # Under capsys, sys.stdout is not file descriptor 1: what the kernel
    # writes to fd 1 must still land in sys.stdout.
    mod.hello[2, 4](3)
    lockstep.synchronize(mod.device)
    out = capsys.readouterr().out
    lines = sorted(line for line in out.splitlines() if line.startswith("hello"))
    assert lines == sorted(f"hello from thread {t} of block {b}" for b in range(2) for t in range(3))


def test_output_capture_of_c_level_writes(capsys):
    libc = ctypes.CDLL(None)
    with kernel_output_to_sys_stdout():
        libc.printf(b"written by C %d\n", 42)
    assert capsys.readouterr().out == "written by C 42\n"
    sys.stdout.write("nothing captured outside\n")
    assert capsys.readouterr().out == "nothing captured outside\n"


def test_printf_capture_from_several_threads(capsys):
    # Each launch points fd 1 at a temporary file and back; launches from
    # several threads must neither lose lines nor leave fd 1 pointing elsewhere.
    import threading

    module = lockstep.compile(SOURCE, device="cpu")
    fd1_before = os.fstat(1)
    errors = []

    def work():
        try:
            for _ in range(10):
                module.hello[1, 2](2)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    fd1_after = os.fstat(1)
    assert (fd1_after.st_dev, fd1_after.st_ino) == (fd1_before.st_dev, fd1_before.st_ino), "fd 1 was left redirected"
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("hello")]
    assert len(lines) == 4 * 10 * 2


# CUDA's own header names, as real kernels include them: lockstep's headers,
# even where an installed toolkit's are on the compiler's default paths.
CUDA_HEADERS_SOURCE = r"""
#include <cooperative_groups.h>
#include <cuda_fp16.h>
namespace cg = cooperative_groups;

__global__ void reverse_halves(const __half* in, float* out) {
  cg::thread_block block = cg::this_thread_block();
  __shared__ float staged[128];
  const unsigned t = block.thread_rank();
  staged[t] = __half2float(in[blockIdx.x * 128 + t]);
  block.sync();
  out[blockIdx.x * 128 + t] = staged[127 - t];
}
"""


def test_kernels_include_cuda_headers_by_their_names(rng):
    mod = lockstep.compile(CUDA_HEADERS_SOURCE, device="cpu")
    x = rng.standard_normal(3 * 128).astype(np.float16)
    out = np.full(x.size, np.nan, dtype=np.float32)
    mod.reverse_halves[3, 128](x, out)
    np.testing.assert_array_equal(out, x.astype(np.float32).reshape(3, 128)[:, ::-1].ravel())
