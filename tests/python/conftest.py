"""Shared fixtures and markers.

- A fresh random seed each run (LOCKSTEP_TEST_SEED repeats one).
- New tensors are poisoned (0xff bytes, NaN for floats), so an element a
  kernel forgets to write shows up in the results.
- Emulator options never leak from one test to the next.
- Markers: ``torch`` (needs PyTorch), ``cupy`` (needs CuPy), ``numba`` (needs
  numba, which the test extra installs) and ``gpu`` (needs an NVIDIA GPU). Where
  the need is not met those tests are deselected, not skipped, with one line
  saying how many and why; on a machine with both they run.
"""

import importlib.util
import os
import secrets

import numpy as np
import pytest

import lockstep

# A fresh seed each run (LOCKSTEP_TEST_SEED repeats one), shown in the report header.
SEED = int(os.environ.get("LOCKSTEP_TEST_SEED", secrets.randbits(32)))

HAVE_TORCH = importlib.util.find_spec("torch") is not None
HAVE_CUPY = importlib.util.find_spec("cupy") is not None
HAVE_NUMBA = importlib.util.find_spec("numba") is not None
HAVE_GPU = lockstep.cuda_available()

lockstep._core.set_poison_new_tensors(True)


def pytest_configure(config):
    config.addinivalue_line("markers", "torch: needs PyTorch (deselected where it is not installed)")
    config.addinivalue_line("markers", "cupy: needs CuPy (deselected where it is not installed)")
    config.addinivalue_line("markers", "numba: needs numba (a test dependency; deselected where it is not installed)")
    config.addinivalue_line("markers", "gpu: needs an NVIDIA GPU (deselected where lockstep.cuda_available() is false)")


def pytest_report_header(config):
    return f"lockstep test seed: {SEED} (set LOCKSTEP_TEST_SEED={SEED} to repeat)"


def pytest_collection_modifyitems(config, items):
    missing = {}
    if not HAVE_TORCH:
        missing["torch"] = "PyTorch is not installed"
    if not HAVE_CUPY:
        missing["cupy"] = "CuPy is not installed"
    if not HAVE_NUMBA:
        missing["numba"] = "numba is not installed"
    if not HAVE_GPU:
        missing["gpu"] = "no GPU (" + lockstep.cuda_unavailable_reason().split(":")[0] + ")"
    if not missing:
        return
    kept, left_out = [], []
    for item in items:
        (left_out if any(m.name in missing for m in item.iter_markers()) else kept).append(item)
    if not left_out:
        return
    config.hook.pytest_deselected(items=left_out)
    items[:] = kept
    why = "; ".join(f"'{name}': {reason}" for name, reason in missing.items())
    line = f"lockstep: left out {len(left_out)} test(s) marked {' or '.join(missing)} ({why})"
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(line)
    else:
        print(line)


@pytest.fixture
def rng(request):
    """A NumPy generator seeded from the run's seed and the test's name, so each test draws its own data."""
    return np.random.default_rng([SEED, *request.node.nodeid.encode()])


@pytest.fixture(params=["cpu", pytest.param("cuda:0", marks=pytest.mark.gpu)])
def device(request):
    """Each device a test should run on: the emulator always, the GPU where there is one."""
    return request.param


@pytest.fixture(autouse=True)
def restore_emulator_options():
    """Put back whatever options a test changed."""
    saved = lockstep.emulator_options()
    yield
    lockstep.set_emulator_options(**saved)
