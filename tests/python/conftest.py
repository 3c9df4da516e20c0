"""Shared fixtures: a fresh random generator per run, and emulator options that never leak between tests."""

import os
import secrets

import numpy as np
import pytest

import lockstep

# A fresh seed each run (LOCKSTEP_TEST_SEED repeats one), shown in the report header.
SEED = int(os.environ.get("LOCKSTEP_TEST_SEED", secrets.randbits(32)))


def pytest_report_header(config):
    return f"lockstep test seed: {SEED} (set LOCKSTEP_TEST_SEED={SEED} to repeat)"


@pytest.fixture
def rng(request):
    """A NumPy generator seeded from the run's seed and the test's name, so each test draws its own data."""
    return np.random.default_rng([SEED, *request.node.nodeid.encode()])


@pytest.fixture(autouse=True)
def restore_emulator_options():
    """Put back whatever options a test changed."""
    saved = lockstep.emulator_options()
    yield
    lockstep.set_emulator_options(**saved)
