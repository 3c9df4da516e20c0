"""The CUDA toolkit on this machine, as far as lockstep's Python side needs it:
the header folders NVRTC compiles float16 and bfloat16 code with (NVRTC ships
no cuda_fp16.h of its own)."""

from __future__ import annotations

import os


def toolkit_include_dirs() -> list[str]:
    """The CUDA toolkit's header folders (cuda_fp16.h and the CCCL it includes), or none found."""
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and os.path.isfile(os.path.join(root, "include", "cuda_fp16.h")):
            return [os.path.join(root, "include")] + [os.path.join(root, "include", "cccl")] * os.path.isdir(os.path.join(root, "include", "cccl"))
    return []
