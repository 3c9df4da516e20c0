"""A pytest plugin that writes every CUDA C++ source lockstep.cuda translates
during a run into $LOCKSTEP_DUMP_DIR, one file per kernel specialisation
(named by the kernel's C++ name, which carries a digest of its types), so two
runs (before and after a translator change) compare with ``diff -r``:

    PYTHONPATH=scripts LOCKSTEP_DUMP_DIR=/tmp/before python -m pytest -p dump_cuda_translations tests/python -k cuda
"""

import os
import pathlib

import lockstep.cuda._dispatcher as dispatcher

_translate = dispatcher.translate_kernel
_folder = pathlib.Path(os.environ["LOCKSTEP_DUMP_DIR"])
_folder.mkdir(parents=True, exist_ok=True)


def _recording(func, arg_types, name, *rest):
    translated = _translate(func, arg_types, name, *rest)
    # The source's #line directives and origin comments name the test file's path, which differs between trees.
    (_folder / f"{func.__module__}.{name}.cu").write_text(translated.text.replace(os.getcwd(), "<tree>"))
    return translated


dispatcher.translate_kernel = _recording
