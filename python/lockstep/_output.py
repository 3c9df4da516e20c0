"""Kernel printf in notebooks.

Device printf writes to the process's C-level stdout (file descriptor 1).
A terminal shows it, but Jupyter replaces ``sys.stdout`` with an object that
never sees fd 1. Around a launch (and a synchronize, when GPU printf is
flushed) fd 1 is pointed at a temporary file, then its contents are written
to ``sys.stdout``, the way wurlitzer does.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import tempfile
import threading
from collections.abc import Iterator

_libc = ctypes.CDLL(None)
# fd 1 is one per process: threads take turns redirecting it, or one would
# restore another's temporary file as fd 1 (and lose what was printed).
_fd1_lock = threading.RLock()


def _stdout_is_fd1() -> bool:
    try:
        return sys.stdout.fileno() == 1
    except (AttributeError, OSError, ValueError):
        return False


@contextlib.contextmanager
def kernel_output_to_sys_stdout(force: bool = False) -> Iterator[None]:
    """Send what kernels print to ``sys.stdout`` inside the block.

    Does nothing where ``sys.stdout`` already is the process's stdout (a
    terminal), unless ``force`` is true. Threads that capture at the same
    time take turns.
    """
    if not force and _stdout_is_fd1():
        yield
        return
    with _fd1_lock, tempfile.TemporaryFile(mode="w+b") as captured:
        _libc.fflush(None)
        saved = os.dup(1)
        os.dup2(captured.fileno(), 1)
        try:
            yield
        finally:
            _libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
            captured.seek(0)
            text = captured.read().decode(errors="replace")
            if text:
                sys.stdout.write(text)
                sys.stdout.flush()
