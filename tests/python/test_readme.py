"""The README's C++ example is the file the build compiles and CTest runs."""

import pathlib
import re
import runpy

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_readme_cpp_example_is_examples_saxpy():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```cpp\n(// examples/saxpy\.cu.*?)```", readme, re.S)
    assert block, "README lost its examples/saxpy.cu block"
    assert block.group(1) == (ROOT / "examples" / "saxpy.cu").read_text()


def test_readme_python_example_runs(tmp_path):
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert blocks, "README lost its Python example"
    for number, block in enumerate(blocks):
        # Run from a file of its own: lockstep.cuda translates kernels from their source file.
        path = tmp_path / f"readme_python_block_{number}.py"
        path.write_text(block)
        runpy.run_path(str(path), run_name="readme_example")
