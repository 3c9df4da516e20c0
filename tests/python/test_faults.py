"""A kernel that faults on the "cpu" device raises KernelError naming the CUDA
error, the kernel, block, thread and line, and Python goes on: the next
launch gives the right answer. A kernel that never ends stops at
KeyboardInterrupt (SIGINT) or at the emulator's time limit, also in a
notebook."""

import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid

import numpy as np
import pytest

import lockstep

SOURCE = r"""
#include <cassert>
#include <cstdint>

// Thread `who` reads through `bad` (an address given as an integer), the others copy.
__global__ void read_through(const float* in, float* out, long long bad, int who) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float* p = i == who ? reinterpret_cast<const float*>(bad) : in;
  out[i] = p[i];
}

__global__ void store_past(float* a, int n, long long far) {
  if (threadIdx.x == 3) a[n + far] = 1.0f;
}

__global__ void divide(const int* num, const int* den, int* out) {
  const int i = threadIdx.x;
  out[i] = num[i] / den[i];
}

__device__ int recurse(int depth) {
  volatile char frame[512];
  frame[depth & 511] = static_cast<char>(depth);
  if (depth == 0) return 0;
  return recurse(depth - 1) + frame[(depth * 7) & 511];
}

__global__ void deep_recursion(int* out, int depth, int barrier) {
  if (barrier) __syncthreads();
  out[threadIdx.x] = threadIdx.x == 2 ? recurse(depth) : 1;
}

__global__ void large_local_array(const int* in, int* out) {
  volatile int big[96 * 1024];
  __syncthreads();
  for (int k = 0; k < 96 * 1024; k += 1024) big[k + threadIdx.x] = in[threadIdx.x] + k;
  __syncthreads();
  out[threadIdx.x] = big[threadIdx.x];
}

__global__ void load_float4(const float* in, float4* out) {
  out[threadIdx.x] = reinterpret_cast<const float4*>(in)[threadIdx.x];
}

__global__ void reverse_in_shared(const float* in, float* out) {
  extern __shared__ float tile[];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = in[i];
  __syncthreads();
  out[i] = tile[blockDim.x - 1 - threadIdx.x];
}

__global__ void trap_in(int* out, int who) {
  out[threadIdx.x] = 1;
  if (threadIdx.x == who) __trap();
}

__global__ void assert_below(const int* in, int limit) {
  assert(in[threadIdx.x] < limit);
}

__global__ void spin(volatile int* flag, volatile int* started) {
  if (threadIdx.x == 0) {
    *started = 1;
    while (flag[0] == 0) {
    }
  }
}

__global__ void add_one(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] + 1.0f;
}
"""

# The line of each kernel's faulting statement in SOURCE (kernel.cu, as the JIT names it).
LINES = {text: i + 1 for i, text in enumerate(SOURCE.splitlines())}


def line_of(statement: str) -> str:
    (number,) = [n for text, n in LINES.items() if statement in text]
    return f"kernel.cu:{number}"


@pytest.fixture(scope="module")
def mod():
    return lockstep.compile(SOURCE, device="cpu")


def device_works(mod):
    x = np.random.default_rng().random(1000, dtype=np.float32)
    out = np.zeros_like(x)
    mod.add_one[8, 128](x, out, x.size)
    np.testing.assert_array_equal(out, x + 1)


def read_through(mod, bad, who=37):
    x = np.arange(64, dtype=np.float32)
    with pytest.raises(lockstep.KernelError) as caught:
        mod.read_through[2, 32](x, np.zeros_like(x), bad, who)
    return str(caught.value)


def test_null_pointer(mod):
    message = read_through(mod, 0)
    assert message.startswith(
        "cudaErrorIllegalAddress: kernel 'read_through(float const*, float*, long long, int)', block (1, 0, 0), thread (5, 0, 0)"
    )
    assert "reads address 0x94, a null pointer + 148" in message  # element 37 of a null float*
    assert f" at {line_of('out[i] = p[i];')} (in read_through(" in message  # the file as compiled, not a path that does not exist
    assert "lockstep.check()" in message
    device_works(mod)


def test_null_pointer_after_a_kernel_with_barriers_compiled(mod):
    """Compiling a kernel with barriers parses it with libclang, whose crash
    handlers must not come between a kernel's fault and the emulator."""
    device_works(mod)  # the emulator's fault handlers are in place
    fresh = f"// {uuid.uuid4()}: not in the kernel cache\n" + SOURCE
    lockstep.compile(fresh, device="cpu")
    assert "reads address 0x94, a null pointer + 148" in read_through(mod, 0)
    device_works(mod)


def test_wild_pointer(mod):
    message = read_through(mod, 0x100000000000)
    assert "cudaErrorIllegalAddress" in message and "reads address 0x100000000094" in message
    assert line_of("out[i] = p[i];") in message
    device_works(mod)


def test_store_far_past_an_array(mod):
    a = np.zeros(256, np.float32)
    with pytest.raises(lockstep.KernelError) as caught:
        mod.store_past[1, 32](a, 256, 16 << 20)
    message = str(caught.value)
    assert "cudaErrorIllegalAddress" in message and "thread (3, 0, 0) writes address" in message
    assert f"67108864 bytes past the end of a host array (host memory, 1024 bytes at {a.ctypes.data:#x})" in message
    assert line_of("a[n + far] = 1.0f;") in message
    device_works(mod)


def test_integer_division_by_zero(mod):
    den = np.full(32, 3, np.int32)
    den[7] = 0
    with pytest.raises(lockstep.KernelError) as caught:
        mod.divide[1, 32](np.full(32, 100, np.int32), den, np.zeros(32, np.int32))
    message = str(caught.value)
    assert message.startswith("cudaErrorLaunchFailure: kernel 'divide(int const*, int const*, int*)', block (0, 0, 0), thread (7, 0, 0)")
    assert "divided an integer by zero" in message and "a GPU does not" in message
    assert line_of("out[i] = num[i] / den[i];") in message
    device_works(mod)


@pytest.mark.parametrize("barrier", [0, 1])
def test_deep_recursion(mod, barrier):
    with lockstep.emulator_options_scope(stack_kib=256), pytest.raises(lockstep.KernelError) as caught:
        mod.deep_recursion[1, 32](np.zeros(32, np.int32), 1 << 20, barrier)
    message = str(caught.value)
    assert "cudaErrorIllegalAddress" in message and "thread (2, 0, 0) overflowed its stack of 256 KiB" in message
    assert "(in recurse(int))" in message
    assert "stack_kib=1024" in message and "LOCKSTEP_EMU_STACK_KIB" in message
    device_works(mod)


def test_large_local_array(mod):
    with lockstep.emulator_options_scope(stack_kib=256), pytest.raises(lockstep.KernelError) as caught:
        mod.large_local_array[1, 32](np.ones(32, np.int32), np.zeros(32, np.int32))
    assert "thread (0, 0, 0) overflowed its stack of 256 KiB" in str(caught.value)
    out = np.zeros(32, np.int32)
    with lockstep.emulator_options_scope(stack_kib=1024):
        mod.large_local_array[1, 32](np.full(32, 7, np.int32), out)
    np.testing.assert_array_equal(out, 7)
    device_works(mod)


def test_misaligned_float4_load_on_a_view(mod):
    x = lockstep.asarray(np.arange(33, dtype=np.float32))
    with pytest.raises(lockstep.KernelError) as caught:
        mod.load_float4[1, 4](x[1:], np.zeros((4, 4), np.float32))
    message = str(caught.value)
    assert message.startswith("cudaErrorMisalignedAddress: kernel 'load_float4(float const*, float4*)', block (0, 0, 0), thread (0, 0, 0)")
    assert "not a multiple of 16" in message and "byte 4 of a host array (host memory, 132 bytes at" in message
    assert line_of("out[threadIdx.x] = reinterpret_cast") in message
    device_works(mod)


def test_extern_shared_without_dynamic_bytes(mod):
    x = np.arange(64, dtype=np.float32)
    with pytest.raises(lockstep.KernelError) as caught:
        mod.reverse_in_shared[2, 32](x, np.zeros_like(x))
    message = str(caught.value)
    assert message.startswith(
        "cudaErrorIllegalAddress: kernel 'reverse_in_shared(float const*, float*)' uses extern __shared__ memory "
        "but was launched with 0 bytes of dynamic shared memory"
    )
    assert line_of("tile[threadIdx.x] = in[i];") in message and "k[grid, block, bytes]" in message
    out = np.zeros_like(x)
    mod.reverse_in_shared[2, 32, 32 * 4](x, out)
    np.testing.assert_array_equal(out, np.concatenate([x[31::-1], x[:31:-1]]))


def test_extern_shared_past_its_dynamic_bytes(mod):
    x = np.arange(64, dtype=np.float32)
    with pytest.raises(lockstep.KernelError) as caught:
        mod.reverse_in_shared[2, 32, 64](x, np.zeros_like(x))
    message = str(caught.value)
    assert "thread (16, 0, 0) writes just past the end of the 64 bytes of dynamic shared memory it was launched with" in message
    device_works(mod)


def test_extern_shared_in_check_mode_speaks_of_dynamic_shared_memory():
    with lockstep.check():
        checked = lockstep.compile(SOURCE, device="cpu", names=["reverse_in_shared"])
        x = np.arange(64, dtype=np.float32)
        with pytest.raises(lockstep.KernelError) as caught:
            checked.reverse_in_shared[2, 32](x, np.zeros_like(x))
    message = str(caught.value)
    assert "launched with 0 bytes of dynamic shared memory" in message
    assert "not device memory" not in message


def test_trap(mod):
    with pytest.raises(lockstep.KernelError) as caught:
        mod.trap_in[1, 32](np.zeros(32, np.int32), 9)
    message = str(caught.value)
    assert message.startswith("cudaErrorLaunchFailure: kernel 'trap_in(int*, int)', block (0, 0, 0), thread (9, 0, 0): __trap() called at kernel.cu:")
    assert line_of("__trap();") in message
    device_works(mod)


def test_failed_assert(mod):
    values = np.zeros(32, np.int32)
    values[4] = 50
    with pytest.raises(lockstep.KernelError) as caught:
        mod.assert_below[1, 32](values, 10)
    message = str(caught.value)
    assert message.startswith("cudaErrorAssert: kernel 'assert_below(int const*, int)', block (0, 0, 0), thread (4, 0, 0)")
    assert line_of("assert(in[threadIdx.x] < limit);") in message
    device_works(mod)


def test_sigint_stops_a_spinning_kernel_with_keyboard_interrupt(mod):
    flag, started = np.zeros(1, np.int32), np.zeros(1, np.int32)
    sent = []

    def interrupt():
        while not started[0]:
            time.sleep(0.005)
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    thread = threading.Thread(target=interrupt)
    thread.start()
    with pytest.raises(KeyboardInterrupt):
        mod.spin[4, 32](flag, started)
    elapsed = time.monotonic() - sent[0]
    thread.join()
    assert elapsed < 1.0
    device_works(mod)
    time.sleep(0.05)  # a second KeyboardInterrupt would come here


def test_time_limit_stops_a_spinning_kernel(mod):
    flag, started = np.zeros(1, np.int32), np.zeros(1, np.int32)
    start = time.monotonic()
    with lockstep.emulator_options_scope(timeout=0.3), pytest.raises(lockstep.KernelError) as caught:
        mod.spin[4, 32](flag, started)
    elapsed = time.monotonic() - start
    message = str(caught.value)
    assert 0.3 <= elapsed < 2.0
    assert message.startswith(
        "cudaErrorLaunchTimeout: kernel 'spin(int volatile*, int volatile*)' ran longer than the emulator's time limit of 0.3 s"
    )
    # Run as region loops, the block's record of its running thread lags behind: the message says so.
    assert re.search(r"block \(\d, 0, 0\), (thread \(0, 0, 0\)|a thread the emulator cannot name \(.*\)) at kernel\.cu:(\d+)", message)
    assert line_of("while (flag[0] == 0) {") in message
    assert lockstep.emulator_options()["timeout"] == 0
    device_works(mod)


def test_timeout_option():
    with lockstep.emulator_options_scope(timeout=2.5):
        assert lockstep.emulator_options()["timeout"] == 2.5
    with pytest.raises(ValueError, match="timeout"):
        lockstep.set_emulator_options(timeout=-1)


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)


def test_a_host_fault_outside_kernels_still_reaches_pythons_faulthandler():
    result = run_python(
        f"""
        import ctypes, faulthandler, numpy as np, lockstep
        faulthandler.enable()
        mod = lockstep.compile({SOURCE!r}, device="cpu", names=["read_through"])
        x = np.arange(64, dtype=np.float32)
        try:
            mod.read_through[2, 32](x, np.zeros_like(x), 0, 3)
        except lockstep.KernelError:
            print("kernel fault caught", flush=True)
        ctypes.string_at(0)  # a fault in the host's own code
        """
    )
    assert "kernel fault caught" in result.stdout
    assert result.returncode == -signal.SIGSEGV, result.stderr
    assert "Fatal Python error: Segmentation fault" in result.stderr


def test_notebook_survives_a_crashing_kernel_and_an_interrupted_loop():
    import nbclient
    import nbformat
    from jupyter_client.manager import KernelManager

    cells = [
        f"import numpy as np, lockstep\nmod = lockstep.compile({SOURCE!r}, device='cpu')",
        "x = np.arange(64, dtype=np.float32)\nmod.read_through[2, 32](x, np.zeros_like(x), 0, 3)",
        "flag, started = np.zeros(1, np.int32), np.zeros(1, np.int32)\nmod.spin[4, 32](flag, started)",
        "out = np.zeros(64, np.float32)\nmod.add_one[1, 64](x, out, 64)\nprint(int(out.sum()))",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    # The blocking kernel manager, so that the timer's thread can call interrupt_kernel() as it is.
    client = nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=True, kernel_manager_class=KernelManager)
    with client.setup_kernel():
        client.execute_cell(notebook.cells[0], 0)
        client.execute_cell(notebook.cells[1], 1)
        # Interrupt the spinning cell once it runs, as the notebook's stop button does.
        timer = threading.Timer(3.0, client.km.interrupt_kernel)
        timer.start()
        started = time.monotonic()
        client.execute_cell(notebook.cells[2], 2)
        timer.cancel()
        assert time.monotonic() - started < 3.0 + 5
        client.execute_cell(notebook.cells[3], 3)
    errors = [[o for o in cell.outputs if o.output_type == "error"] for cell in notebook.cells]
    assert errors[0] == []
    assert [e.ename for e in errors[1]] == ["KernelError"] and "a null pointer" in errors[1][0].evalue
    assert [e.ename for e in errors[2]] == ["KeyboardInterrupt"]
    assert errors[3] == []
    assert notebook.cells[3].outputs[0].text.strip() == str(int(np.arange(64).sum() + 64))


def test_lines_come_from_the_module_that_faulted_not_one_unloaded_before():
    """Modules dropped and compiled again reuse addresses; each fault names its own module's line."""
    import gc

    kernel = "__global__ void null_read(float* out) { out[threadIdx.x] = *reinterpret_cast<volatile float*>(16 * threadIdx.x); }\n"
    for blank_lines in range(1, 5):  # the same code, its line moving down
        module = lockstep.compile("\n" * blank_lines + kernel, device="cpu")
        with pytest.raises(lockstep.KernelError) as caught:
            module.null_read[1, 1](np.zeros(1, np.float32))
        assert f"kernel.cu:{blank_lines + 1} " in str(caught.value)
        del module
        gc.collect()


def test_a_cached_module_names_its_lines_from_any_working_directory(tmp_path):
    """The compile cache is shared between processes working in different folders: a module
    compiled in one names "kernel.cu:LINE" in a fault report of another, not the first one's folder."""
    code = textwrap.dedent(
        """
        import numpy as np, lockstep
        module = lockstep.compile("__global__ void null_read(float* out) {\\n  out[threadIdx.x] = *(volatile float*)nullptr;\\n}\\n", device="cpu")
        try:
            module.null_read[1, 1](np.zeros(1, np.float32))
        except lockstep.KernelError as e:
            print(e)
        """
    )
    environment = dict(os.environ, LOCKSTEP_CACHE_DIR=str(tmp_path / "cache"))
    for folder in ("first", "second"):  # the second process loads the first one's module from the cache
        (tmp_path / folder).mkdir()
        run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path / folder, env=environment, capture_output=True, text=True, timeout=120)
        assert " at kernel.cu:2 " in run.stdout, run.stdout + run.stderr
