"""minitorch's module 2 tensor-data tests (tasks 2.1 and 2.2: layout, strides,
index <-> position, permute, broadcasting) ported to lockstep's views: a
lockstep tensor is minitorch's TensorData (storage, shape, strides), its
strides are in elements, and an index's storage position is read off the
address ``t[index].data_ptr`` or off the value when the storage holds
0, 1, 2, ... (then the element at a position is the position itself).

Written from scratch after reading minitorch/minitorch@7d35d59
tests/test_tensor_data.py and tests/tensor_strategies.py; no code is taken
from them. Where minitorch and torch differ (negative indices, fewer indices
than dims), these follow torch."""

import itertools

import numpy as np
import pytest

import lockstep


def host(t):
    return t.to("cpu").numpy()


def numbered(device, shape, dtype=np.float32):
    """A contiguous tensor whose storage holds 0, 1, 2, ...: an element's value is its position."""
    return lockstep.asarray(np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape), device=device)


def position(index, strides):
    """minitorch's index_to_position: the storage offset of an index, from the strides."""
    return sum(i * s for i, s in zip(index, strides))


def element(t, index):
    return host(t[index]).item()


def storage_offset(t, base):
    """How many elements past ``base``'s first one the view ``t`` starts."""
    return (t.data_ptr - base.data_ptr) // np.dtype(t.dtype).itemsize


def random_layout(rng, device):
    """minitorch's tensor_data strategy: a shape of 1 to 4 extents of 1 to 3, laid out
    contiguously in a random order of its dims and permuted back, so the strides
    are those of some permutation. Storage holds 0, 1, 2, ..."""
    shape = tuple(int(s) for s in rng.integers(1, 4, size=rng.integers(1, 5)))
    order = [int(d) for d in rng.permutation(len(shape))]
    base = numbered(device, [shape[d] for d in order])
    view = base.permute([int(d) for d in np.argsort(order)])
    assert view.shape == shape
    return base, view


SEVERAL = 8  # random layouts per test


# ---------------------------------------------------------------- task 2.1: layout and strides


def test_layout(device):
    t = numbered(device, (3, 5))
    assert t.is_contiguous()
    assert t.shape == (3, 5) and t.strides == (5, 1)
    assert position((1, 0), t.strides) == 5 and element(t, (1, 0)) == 5
    assert position((1, 2), t.strides) == 7 and element(t, (1, 2)) == 7

    # the same 15 elements seen as (5, 3) with strides (1, 5): column-major, not contiguous
    columns = t.transpose(0, 1)
    assert columns.shape == (5, 3) and columns.strides == (1, 5)
    assert not columns.is_contiguous()
    assert element(columns, (2, 1)) == position((2, 1), (1, 5)) == 7

    assert numbered(device, (4, 2, 2)).strides == (4, 2, 1)


def test_layout_bad(device):
    # minitorch refuses strides that do not fit the shape; lockstep never takes strides
    # from a user, so the wrong-sized reshapes and permutations are what it refuses.
    t = numbered(device, (3, 5))
    with pytest.raises(lockstep.ShapeError, match="15 elements"):
        t.reshape([4, 4])
    with pytest.raises(lockstep.ShapeError):
        t.permute([0])
    with pytest.raises(lockstep.ShapeError):
        t.permute([1, 1])


def test_enumeration(rng, device):
    for _ in range(SEVERAL):
        _, view = random_layout(rng, device)
        indices = list(itertools.product(*(range(s) for s in view.shape)))
        assert len(indices) == view.size == len(set(indices))
        positions = sorted(position(index, view.strides) for index in indices)
        assert positions == list(range(view.size)), "every storage position, each once"


def test_index(rng, device):
    for _ in range(SEVERAL):
        base, view = random_layout(rng, device)
        for index in itertools.product(*(range(s) for s in view.shape)):
            where = position(index, view.strides)
            assert 0 <= where < view.size
            assert element(view, index) == where  # the storage holds positions
            assert storage_offset(view[index], base) == where


def test_index_out_of_range(device):
    t = numbered(device, (2, 3, 4))
    assert element(t, (-1, -1, -1)) == 23  # torch counts negative indices from the end
    assert t[1].shape == (3, 4) and element(t[1], (0, 0)) == 12  # fewer indices: a view of the rest
    with pytest.raises(IndexError):
        t[2]
    with pytest.raises(IndexError):
        t[0, 3]
    with pytest.raises(IndexError):
        t[0, 0, -5]
    with pytest.raises(IndexError):
        t[0, 0, 0, 0]


def test_permute(rng, device):
    for _ in range(SEVERAL):
        _, view = random_layout(rng, device)
        reverse = list(range(view.ndim))[::-1]
        flipped = view.permute(reverse)
        assert flipped.shape == view.shape[::-1] and flipped.strides == view.strides[::-1]
        for index in itertools.product(*(range(s) for s in view.shape)):
            assert position(index, view.strides) == position(index[::-1], flipped.strides)
            assert element(view, index) == element(flipped, index[::-1])
        back = flipped.permute(reverse)
        assert (back.shape, back.strides, back.data_ptr) == (view.shape, view.strides, view.data_ptr)


def test_permute_round_trips(rng, device):
    x = rng.uniform(-100, 100, size=(2, 3, 4, 5)).astype(np.float32)
    t = lockstep.asarray(x, device=device)
    for _ in range(SEVERAL):
        order = [int(d) for d in rng.permutation(4)]
        inverse = [int(d) for d in np.argsort(order)]
        p = t.permute(order)
        assert p.shape == tuple(x.shape[d] for d in order)
        assert np.array_equal(host(p), x.transpose(order))
        assert p.is_contiguous() == (order == [0, 1, 2, 3])
        q = p.permute(inverse)
        assert (q.shape, q.strides, q.data_ptr) == (t.shape, t.strides, t.data_ptr)
        packed = p.contiguous()
        assert packed.is_contiguous() and np.array_equal(host(packed), x.transpose(order))
        assert packed.strides == tuple(int(np.prod(packed.shape[d + 1 :])) for d in range(4))


def test_transpose_is_a_permutation(device):
    t = numbered(device, (2, 3, 4))
    for d0, d1 in [(0, 1), (0, 2), (1, 2), (-1, 0)]:
        order = [0, 1, 2]
        order[d0], order[d1] = order[d1], order[d0]
        swapped, permuted = t.transpose(d0, d1), t.permute(order)
        assert (swapped.shape, swapped.strides) == (permuted.shape, permuted.strides)
        assert np.array_equal(host(swapped), host(permuted))
    assert np.array_equal(host(t.T), np.arange(24).reshape(2, 3, 4).T)


def test_reshape_of_a_contiguous_layout_keeps_positions(device):
    t = numbered(device, (4, 6))
    for shape in [(24,), (2, 12), (3, 2, 4), (1, 24, 1), (2, -1)]:
        r = t.reshape(list(shape))
        assert r.is_contiguous() and r.data_ptr == t.data_ptr
        for index in itertools.product(*(range(s) for s in r.shape)):
            assert element(r, index) == position(index, r.strides)


# ---------------------------------------------------------------- task 2.2: broadcasting


def broadcast_shape(device, a, b):
    """The broadcast of two shapes, as the shape of a sum of zeros."""
    if hasattr(lockstep, "broadcast_shapes"):
        assert tuple(lockstep.broadcast_shapes(a, b)) == np.broadcast_shapes(a, b)
    zeros = [lockstep.asarray(np.zeros(s, np.float32), device=device) for s in (a, b)]
    return (zeros[0] + zeros[1]).shape


@pytest.mark.parametrize(
    "a,b,want",
    [
        ((1,), (5, 5), (5, 5)),
        ((5, 5), (1,), (5, 5)),
        ((1, 5, 5), (5, 5), (1, 5, 5)),
        ((5, 1, 5, 1), (1, 5, 1, 5), (5, 5, 5, 5)),
        ((2, 5), (5,), (2, 5)),
        ((), (3, 2), (3, 2)),
    ],
    ids=str,
)
def test_shape_broadcast(device, a, b, want):
    assert broadcast_shape(device, a, b) == want
    assert broadcast_shape(device, b, a) == want


@pytest.mark.parametrize("a,b", [((5, 7, 5, 1), (1, 5, 1, 5)), ((5, 2), (5,))], ids=str)
def test_shape_broadcast_refused(device, a, b):
    with pytest.raises(lockstep.ShapeError, match="do not broadcast"):
        broadcast_shape(device, a, b)


def broadcast_index(big_index, shape):
    """minitorch's broadcast_index: the index into ``shape`` an output index reads;
    leading dims drop, dims of extent 1 read their only element."""
    tail = big_index[len(big_index) - len(shape) :]
    return tuple(i if s > 1 else 0 for i, s in zip(tail, shape))


@pytest.mark.parametrize("small,big", [((3, 1), (2, 3, 4)), ((1,), (3, 2)), ((4,), (2, 3, 4)), ((2, 1, 3), (2, 5, 3))], ids=str)
def test_broadcast_index(device, small, big):
    t = numbered(device, small)
    wide = t.expand(list(big))
    assert wide.shape == big
    leading = len(big) - len(small)
    for d, extent in enumerate(big):
        if d < leading or small[d - leading] == 1:
            assert wide.strides[d] == 0 or extent == 1, "a broadcast dim repeats with stride 0"
    for index in itertools.product(*(range(s) for s in big)):
        assert element(wide, index) == element(t, broadcast_index(index, small))
    # the same mapping, as a zip with broadcasting reads it
    summed = host(wide * 0.0 + t)
    assert np.array_equal(summed, np.broadcast_to(np.arange(int(np.prod(small)), dtype=np.float32).reshape(small), big))


def test_string(rng, device):
    for _ in range(SEVERAL):
        _, view = random_layout(rng, device)
        text = repr(view)
        assert str(view.shape) in text and view.dtype in text and device in text
