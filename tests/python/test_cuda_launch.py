"""lockstep.cuda launches as numba's: streams and shared bytes in the
configuration, synchronize, select_device, arguments through
__cuda_array_interface__ and DLPack (CuPy), numba's own type objects."""

import numpy as np
import pytest

import lockstep
from lockstep import cuda


@cuda.jit
def fill(x, value):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = value


def test_stream_and_shared_bytes_in_the_configuration(device):
    with lockstep.device(device):
        s = cuda.stream()
        d = cuda.device_array(100, dtype=np.float32)
        fill[1, 128, s, 0](d, 2.5)
        s.synchronize()
        cuda.synchronize()
        np.testing.assert_array_equal(d.copy_to_host(), 2.5)
        fill[1, 128, cuda.default_stream()](d, 1)
        np.testing.assert_array_equal(d.copy_to_host(), 1.0)
    assert cuda.is_available()


def test_forall_covers_every_task(device):
    with lockstep.device(device):
        x = np.zeros(1000, dtype=np.int64)
        fill.forall(x.size)(x, 7)
    np.testing.assert_array_equal(x, 7)


def test_select_device_picks_where_host_arrays_go():
    previous = cuda.get_current_device().name
    try:
        assert cuda.select_device("cpu") == "cpu"
        x = np.zeros(10)
        fill[1, 32](x, 3)
        np.testing.assert_array_equal(x, 3)
        with pytest.raises(ValueError):
            cuda.select_device("tpu:0")
    finally:
        cuda.select_device(previous)


class _InterfaceOnly:
    """An array known only by __cuda_array_interface__ (as numba's device arrays are)."""

    def __init__(self, owner):
        self.owner = owner
        self.__cuda_array_interface__ = owner.__cuda_array_interface__


@pytest.mark.gpu
@pytest.mark.torch
def test_cuda_array_interface_arguments():
    import torch

    t = torch.zeros(300, dtype=torch.float64, device="cuda")
    fill[3, 128](_InterfaceOnly(t), 4.0)
    torch.cuda.synchronize()
    assert (t.cpu().numpy() == 4.0).all()


@pytest.mark.gpu
@pytest.mark.cupy
def test_cupy_arrays_are_arguments():
    import cupy

    x = cupy.zeros((50,), dtype=cupy.int32)
    fill[1, 64](x, 9)
    assert (cupy.asnumpy(x) == 9).all()


@pytest.mark.numba
def test_numba_types_as_dtypes_casts_and_signatures():
    import numba

    @cuda.jit
    def typed(out, v):
        tile = cuda.shared.array(4, numba.float32)
        i = cuda.threadIdx.x
        tile[i] = numba.float32(v) / 3
        cuda.syncthreads()
        out[i] = tile[3 - i] + numba.int32(2.9)

    out = np.full(4, np.nan, dtype=np.float32)
    typed[1, 4](out, 1.0)
    np.testing.assert_array_equal(out, np.float32(1.0) / np.float32(3) + 2)
    assert "float tile_storage" in typed.inspect_cuda(out, 1.0)

    @cuda.jit(numba.void(numba.float32[:], numba.int64))
    def declared(x, n):
        i = cuda.grid(1)
        if i < n:
            x[i] = i

    x = np.zeros(8, dtype=np.float32)
    declared[1, 8](x, 8)
    np.testing.assert_array_equal(x, np.arange(8))
