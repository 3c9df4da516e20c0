"""An unchanged numba CUDA project on lockstep: ``python -m lockstep.numba
script.py`` and ``LOCKSTEP_NUMBA_CUDA=1 python script.py`` make ``numba.cuda``
and ``from numba import cuda`` lockstep.cuda (kernels and host calls), while
njit and numba's types stay numba's. Each on both emulator engines."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytestmark = pytest.mark.numba

# A numba project's file, written for numba and not edited: kernels through `from numba import cuda`
# and `numba.cuda.*`, host calls through both, and numba's CPU JIT beside them.
PROJECT = textwrap.dedent(
    """
    import sys

    import numba
    import numpy as np
    from numba import cuda, njit

    import lockstep.cuda

    assert cuda.jit is lockstep.cuda.jit and numba.cuda.to_device is lockstep.cuda.to_device
    assert type(njit(lambda v: v)).__module__.startswith("numba.core")  # numba's own CPU JIT

    @cuda.jit(device=True)
    def twice(v):
        return v * numba.float64(2)

    @cuda.jit
    def scaled_sums(x, out):
        tile = cuda.shared.array(32, numba.float64)
        t = numba.cuda.threadIdx.x
        i = cuda.grid(1)
        tile[t] = twice(x[i]) if i < x.size else 0.0
        numba.cuda.syncthreads()
        if t == 0:
            total = 0.0
            for k in range(32):
                total += tile[k]
            out[cuda.blockIdx.x] = total

    @njit
    def reference(x, blocks):
        out = np.zeros(blocks)
        for i in range(x.size):
            out[i // 32] += 2 * x[i]
        return out

    assert numba.cuda.is_available() and not cuda.is_cuda_array(np.zeros(1))
    x = np.random.default_rng(int(sys.argv[1])).standard_normal(200)
    blocks = (x.size + 31) // 32
    d_x = numba.cuda.to_device(x)
    d_out = cuda.device_array(blocks)
    scaled_sums[blocks, 32](d_x, d_out)
    cuda.synchronize()
    got = np.array(d_out)
    assert np.allclose(got, reference(x, blocks), rtol=1e-12, atol=1e-12), (got, reference(x, blocks))
    try:
        import numba.cuda.cudadrv  # noqa: F401  (numba's driver: not lockstep's)
    except ImportError:
        pass
    else:
        raise AssertionError("numba.cuda's submodules should not be found")
    print("ran on lockstep", type(d_out).__module__)
    """
)


def _run(command, tmp_path, engine, **env):
    script = tmp_path / "project.py"
    script.write_text(PROJECT)
    seed = str(np.random.default_rng().integers(1 << 30))
    environment = dict(os.environ, LOCKSTEP_EMU_ENGINE=engine, **env)
    environment.pop("NUMBA_ENABLE_CUDASIM", None)
    return subprocess.run([sys.executable, *command, str(script), seed], capture_output=True, text=True, timeout=300, env=environment, cwd=tmp_path)


@pytest.mark.parametrize("engine", ["loops", "fibers"])
def test_python_dash_m_lockstep_numba_runs_an_unedited_numba_script(tmp_path, engine):
    ran = _run(["-m", "lockstep.numba"], tmp_path, engine)
    assert ran.returncode == 0, ran.stderr
    assert "ran on lockstep lockstep.cuda._arrays" in ran.stdout


@pytest.mark.parametrize("engine", ["loops", "fibers"])
def test_the_environment_variable_runs_an_unedited_numba_script(tmp_path, engine):
    ran = _run([], tmp_path, engine, LOCKSTEP_NUMBA_CUDA="1")
    assert ran.returncode == 0, ran.stderr
    assert "ran on lockstep lockstep.cuda._arrays" in ran.stdout


def test_without_the_switch_numba_cuda_is_numba_s(tmp_path):
    script = tmp_path / "which.py"
    script.write_text("from numba import cuda\nprint(cuda.jit.__module__)\n")
    environment = dict(os.environ, LOCKSTEP_NUMBA_CUDA="0")
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=environment)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip().startswith("numba.cuda")
