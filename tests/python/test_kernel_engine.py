"""No silent fallback, from Python: a kernel the region-loop compiler declines
warns once (lockstep.FibersWarning: its name, line and the reason), a split
kernel does not, and Kernel.engine answers what the runner does (loops, or
fibers and why), under the settings of the moment."""

import uuid
import warnings

import numpy as np
import pytest

import lockstep


def _source(tag):
    # __match_all_sync meets its warp twice, which the loops do not run.
    return f"""
__global__ void declined_{tag}(const int* in, int* out) {{
  const int i = threadIdx.x;
  int all = 0;
  const unsigned m = __match_all_sync(0xffffffffu, in[i] / 1000, &all);
  out[i] = in[i] + (all ? 1 : 0) + (m == 0xffffffffu ? 10 : 0);
}}
__global__ void split_{tag}(const int* in, int* out) {{
  __shared__ int s[64];
  s[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = s[63 - threadIdx.x];
}}
"""


@pytest.fixture
def module():
    tag = uuid.uuid4().hex[:12]  # a kernel says once per process: names no other test used
    return tag, lockstep.compile(_source(tag), device="cpu")


def _run(kernel, values):
    out = np.full(64, -1, dtype=np.int32)
    kernel[1, 64](values, out)
    return out


def test_a_declined_kernel_warns_once_with_its_reason_and_a_split_one_never(module):
    tag, m = module
    values = np.random.default_rng().integers(0, 100000, 64, dtype=np.int32)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        split = _run(m[f"split_{tag}"], values)
        first = _run(m[f"declined_{tag}"], values)
        again = _run(m[f"declined_{tag}"], values)
    fibers = [w for w in seen if issubclass(w.category, lockstep.FibersWarning)]
    assert len(fibers) == 1, [str(w.message) for w in seen]
    text = str(fibers[0].message)
    assert f"declined_{tag}" in text and "__match_all_sync" in text and "LOCKSTEP_QUIET_FIBERS" in text
    assert fibers[0].filename == __file__  # points at the user's launch, not lockstep's code
    np.testing.assert_array_equal(split, values[::-1])
    np.testing.assert_array_equal(first, again)
    assert (first >= values).all()


def test_kernel_engine_answers_what_runs(module):
    tag, m = module
    split, declined = m[f"split_{tag}"].engine, m[f"declined_{tag}"].engine
    assert (split.name, split.why) == ("loops", ""), split.why
    assert declined.name == "fibers" and "__match_all_sync" in declined.why
    assert declined.where.endswith(":2")  # the kernel's line in the source
    with lockstep.emulator_options_scope(region_loops=False):
        asked = m[f"split_{tag}"].engine
    assert asked.name == "fibers" and "fibers" in asked.why


def test_fibers_asked_for_say_nothing(module):
    tag, m = module
    values = np.arange(64, dtype=np.int32)
    with warnings.catch_warnings(record=True) as seen, lockstep.emulator_options_scope(region_loops=False):
        warnings.simplefilter("always")
        np.testing.assert_array_equal(_run(m[f"split_{tag}"], values), values[::-1])
    assert not [w for w in seen if issubclass(w.category, lockstep.FibersWarning)]


def test_a_python_kernel_that_runs_on_fibers_warns_in_python_terms():
    from lockstep import cuda

    @cuda.jit
    def same_in_every_lane(x, out):  # match_all meets its warp twice: the loops do not run it
        i = cuda.threadIdx.x
        mask, all_same = cuda.match_all_sync(0xFFFFFFFF, x[i] // 1000)
        out[i] = mask if all_same else 7

    x = np.random.default_rng().integers(0, 1000, 32).astype(np.int32)  # all in one thousand
    out = np.full(32, 1, dtype=np.uint32)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        same_in_every_lane[1, 32](x, out)
        same_in_every_lane[1, 32](x, out)
    fibers = [w for w in seen if issubclass(w.category, lockstep.FibersWarning)]
    assert len(fibers) == 1, [str(w.message) for w in seen]
    text = str(fibers[0].message)
    assert "same_in_every_lane" in text and "same_in_every_lane_" not in text  # the Python name, not the C++ one
    assert fibers[0].filename == __file__
    np.testing.assert_array_equal(out, np.full(32, 0xFFFFFFFF, dtype=np.uint32))
