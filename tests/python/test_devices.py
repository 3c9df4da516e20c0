"""Devices: names, the default device and ``with lockstep.device(...)``,
per-call ``device=``, what happens without a GPU, and (on a GPU) tensors
moving to cuda:0 and back and PyTorch CUDA tensors in and out without copies."""

import threading

import numpy as np
import pytest

import lockstep

FILL_SOURCE = "__global__ void fill(float* out, float value, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = value; }"


# ---------------------------------------------------------------- names


@pytest.mark.parametrize("text,name", [("cpu", "cpu"), ("cuda", "cuda:0"), ("cuda:0", "cuda:0"), ("cuda:3", "cuda:3"), ("cuda:12", "cuda:12")])
def test_device_names(text, name):
    d = lockstep.device(text)  # naming a device does not need it to exist
    assert isinstance(d, lockstep.Device)
    assert d.name == str(d) == name
    assert d == name and d == lockstep.device(name) and hash(d) == hash(lockstep.device(name))
    assert repr(d) == f"lockstep.device({name!r})"
    assert lockstep.device(d).name == name


@pytest.mark.parametrize("text", ["gpu", "CPU", "", "cuda:", "cuda:x", "cuda:-1", "cuda0", "cpu:0", " cpu"])
def test_bad_device_names_list_the_accepted_forms(text):
    with pytest.raises(ValueError, match=r"unknown device .*\"cpu\" \(the emulator\), \"cuda\" or \"cuda:N\""):
        lockstep.device(text)
    with pytest.raises(ValueError, match="unknown device"):
        lockstep.empty((2,), device=text)


def test_cpu_device_is_the_emulator():
    assert lockstep.device("cpu").name_of_hardware == "lockstep emulator"
    assert lockstep.is_available("cpu")
    assert lockstep.is_available("cuda") == lockstep.cuda_available() == (lockstep.cuda_device_count() > 0)


# ---------------------------------------------------------------- the default device


def test_default_device_nests_and_restores():
    assert lockstep.default_device() == "cpu"
    with lockstep.device("cuda:1") as outer:
        assert outer == "cuda:1"
        assert lockstep.default_device() == "cuda:1"
        with lockstep.device("cpu"):
            assert lockstep.default_device() == "cpu"
            with lockstep.device("cuda"):
                assert lockstep.default_device() == "cuda:0"
            assert lockstep.default_device() == "cpu"
        assert lockstep.default_device() == "cuda:1"
    assert lockstep.default_device() == "cpu"


def test_default_device_restored_after_an_error():
    with pytest.raises(KeyError):
        with lockstep.device("cuda:2"):
            raise KeyError("leave the block")
    assert lockstep.default_device() == "cpu"


def test_default_device_is_per_thread():
    seen = []
    with lockstep.device("cuda:5"):
        worker = threading.Thread(target=lambda: seen.append(lockstep.default_device()))
        worker.start()
        worker.join()
        assert lockstep.default_device() == "cuda:5"
    assert seen == ["cpu"]


def test_per_call_device_overrides_the_block(rng):
    x = rng.uniform(size=(3, 4)).astype(np.float32)
    with lockstep.device("cuda:7"):  # never touched: every call below names "cpu"
        t = lockstep.asarray(x, device="cpu")
        assert t.device == "cpu" and t.data_ptr == x.ctypes.data
        assert lockstep.empty((2, 2), device="cpu").device == "cpu"
        assert lockstep.compile(FILL_SOURCE, device="cpu").device == "cpu"
        assert lockstep.asarray([1.0, 2.0], device=lockstep.device("cpu")).device == "cpu"


def test_block_device_is_used_where_a_call_names_none(rng):
    with lockstep.device("cpu"):
        t = lockstep.asarray(rng.uniform(size=4))
        mod = lockstep.compile(FILL_SOURCE)
    assert t.device == "cpu" and mod.device == "cpu"
    out = lockstep.empty((10,), "float32")
    mod.fill[1, 32](out, 1.5, 10)
    assert out.numpy().tolist() == [1.5] * 10


# ---------------------------------------------------------------- without (or beyond) the GPUs


def test_asking_for_a_missing_gpu():
    count = lockstep.cuda_device_count()
    beyond = f"cuda:{count}"  # one past the last GPU: cuda:0 where there is none
    with pytest.raises(lockstep.DeviceUnavailable):
        lockstep.empty((2,), device=beyond)
    with pytest.raises(lockstep.DeviceUnavailable):
        lockstep.compile(FILL_SOURCE, device=beyond)
    if lockstep.cuda_available():
        assert lockstep.cuda_unavailable_reason() == ""
        assert lockstep.asarray(np.ones(3, np.float32), device="cuda:0").device == "cuda:0"
    else:
        reason = lockstep.cuda_unavailable_reason()
        assert reason and "'cpu'" in reason
        with pytest.raises(lockstep.DeviceUnavailable, match="'cpu'") as caught:
            lockstep.asarray(np.ones(3, np.float32), device="cuda:0")
        assert str(caught.value) == reason
        assert isinstance(caught.value, RuntimeError)
        with pytest.raises(lockstep.DeviceUnavailable, match="'cpu'"):
            with lockstep.device("cuda:0"):
                lockstep.asarray([1.0, 2.0])
        with pytest.raises(lockstep.DeviceUnavailable, match="'cpu'"):
            lockstep.asarray(np.ones(3, np.float32)).to("cuda:0")
        with pytest.raises(lockstep.DeviceUnavailable, match="'cpu'"):
            lockstep.synchronize("cuda:0")


# ---------------------------------------------------------------- on the GPU


@pytest.mark.gpu
def test_tensors_to_the_gpu_and_back(rng):
    x = rng.uniform(-1, 1, size=(33, 17)).astype(np.float32)
    t = lockstep.asarray(x)
    g = t.to("cuda:0")
    assert (g.device, g.shape, g.dtype, g.strides) == ("cuda:0", x.shape, "float32", (17, 1))
    assert g.data_ptr != t.data_ptr
    assert g.__dlpack_device__() == (2, 0)  # kDLCUDA, device 0
    assert g.to("cuda:0").data_ptr == g.data_ptr
    with pytest.raises(TypeError, match='on cuda:0; copy it to the host with .to\\("cpu"\\)'):
        g.numpy()
    back = g.to("cpu")
    assert back.device == "cpu" and np.array_equal(back.numpy(), x)
    # a strided view goes over packed, and comes back equal
    view = lockstep.asarray(x)[::2, 1::3].to(lockstep.device("cuda:0"))
    assert view.is_contiguous() and np.array_equal(view.to("cpu").numpy(), x[::2, 1::3])
    assert lockstep.device("cuda:0").name_of_hardware  # the GPU's name


@pytest.mark.gpu
def test_gpu_block_puts_new_tensors_on_the_gpu(rng):
    x = rng.uniform(size=(5, 5)).astype(np.float32)
    with lockstep.device("cuda:0"):
        g = lockstep.asarray(x)
        e = lockstep.empty((3,))
        s = g * 2 + 1
        mod = lockstep.compile(FILL_SOURCE)
    assert (g.device, e.device, s.device, mod.device) == ("cuda:0",) * 4
    assert np.allclose(s.to("cpu").numpy(), x * 2 + 1)
    mod.fill[1, 32](e, 4.0, 3)
    lockstep.synchronize("cuda:0")
    assert e.to("cpu").numpy().tolist() == [4.0] * 3


@pytest.mark.gpu
@pytest.mark.torch
def test_torch_cuda_tensors_in_and_out_without_copies(rng):
    import torch

    source = torch.arange(24, dtype=torch.float32, device="cuda:0").reshape(4, 6)
    t = lockstep.asarray(source)
    assert t.device == "cuda:0" and t.data_ptr == source.data_ptr()
    result = t * 2 + 1  # lockstep kernels on torch's memory
    out = torch.from_dlpack(result)
    assert out.device == torch.device("cuda:0") and out.data_ptr() == result.data_ptr
    assert torch.equal(out, source * 2 + 1)
    assert torch.from_dlpack(t).data_ptr() == source.data_ptr()
    for dtype in (torch.uint8, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float64):
        typed = source.to(dtype)
        as_lockstep = lockstep.from_dlpack(typed)
        assert as_lockstep.dtype == str(dtype).split(".")[1] and as_lockstep.data_ptr == typed.data_ptr()
        assert torch.equal(torch.from_dlpack(as_lockstep.clone()), typed)


@pytest.mark.gpu
@pytest.mark.torch
def test_torch_cuda_tensors_in_kernels_and_ops(rng):
    import torch

    a = torch.randn(40, 24, device="cuda:0")
    b = torch.randn(24, 31, device="cuda:0")
    c = torch.from_dlpack(lockstep.matmul(a, b, algo="tiled_dynamic"))
    assert torch.allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    image = torch.randint(0, 256, (3, 20, 30), dtype=torch.uint8, device="cuda:0")
    gray = torch.from_dlpack(lockstep.rgb_to_grayscale(image))
    weights = torch.tensor([0.2989, 0.5870, 0.1140], dtype=torch.float64, device="cuda:0")
    reference = torch.floor(torch.einsum("c,chw->hw", weights, image.double())).to(torch.uint8)
    assert (gray.int() - reference.int()).abs().max() <= 1

    mod = lockstep.compile(FILL_SOURCE, device="cuda:0")
    out = torch.zeros(100, device="cuda:0")
    mod.fill[4, 32](out, 2.5, 100)  # torch's memory, written by a kernel from source
    torch.cuda.synchronize()
    assert torch.equal(out, torch.full((100,), 2.5, device="cuda:0"))
    stream = torch.cuda.Stream()
    mod.fill[4, 32, 0, stream](out, 3.5, 100)  # launched on torch's stream
    stream.synchronize()
    assert torch.equal(out, torch.full((100,), 3.5, device="cuda:0"))
    with pytest.raises(lockstep.ArgumentError, match="is on cuda:0 but the kernel runs on cpu"):
        lockstep.compile(FILL_SOURCE, device="cpu").fill[1, 1](out, 1.0, 1)


@pytest.mark.gpu
@pytest.mark.cupy
def test_cupy_arrays_in_and_out_without_copies(rng):
    import cupy

    x = cupy.asarray(rng.uniform(size=(6, 10)).astype(np.float32))
    t = lockstep.asarray(x)
    assert t.device == "cuda:0" and t.data_ptr == x.data.ptr
    doubled = cupy.from_dlpack(t * 2)
    assert doubled.dtype == cupy.float32 and cupy.allclose(doubled, x * 2)
    view = cupy.from_dlpack(t[1:, ::2])
    assert view.data.ptr == x[1:, ::2].data.ptr and cupy.array_equal(view, x[1:, ::2])
    lockstep.compile(FILL_SOURCE, device="cuda:0").fill[1, 64](x, 7.0, 60)
    cupy.cuda.runtime.deviceSynchronize()
    assert bool((x == 7).all())


def test_events_time_device_work(device):
    x = lockstep.asarray(np.ones(1 << 16, np.float32), device=device)
    start, stop = lockstep.Event(device), lockstep.Event(device)
    start.record()
    y = (x * 2).sum()
    stop.record()
    stop.synchronize()
    assert float(y.to("cpu").numpy()) == 2.0 * (1 << 16)
    assert start.elapsed_ms(stop) >= 0.0
