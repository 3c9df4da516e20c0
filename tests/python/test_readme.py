"""The README's C++ example is the file the build compiles and CTest runs."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_readme_cpp_example_is_examples_saxpy():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```cpp\n(// examples/saxpy\.cu.*?)```", readme, re.S)
    assert block, "README lost its examples/saxpy.cu block"
    assert block.group(1) == (ROOT / "examples" / "saxpy.cu").read_text()
