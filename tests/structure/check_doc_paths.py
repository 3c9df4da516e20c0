#!/usr/bin/env python3
"""Every file or folder a document names exists in the tree.

Names are taken from `backticks` and from the paths in fenced diagrams. A name counts as a
path when it has a '/' (or is a file name with a source suffix) and no spaces. It exists when
it is found from the repository root, include/, include/lockstep/ or src/ (documents name
headers as they are #included), or, as tables name files relative to the row's folder, when
a file of the tree ends with it; a name without suffix (`src/emulator/process`) may stand for
its .h/.cpp pair. `*` matches as in a glob. Build outputs (build/...), home-folder paths
(~/...) and URLs are not the tree's.

Usage: check_doc_paths.py REPO_ROOT DOCUMENT.md [DOCUMENT.md ...]
"""

import pathlib
import re
import sys

SUFFIXES = (".h", ".cpp", ".cu", ".cuh", ".py", ".pyi", ".md", ".S", ".cmake", ".txt", ".toml", ".sh", ".csv", ".png")
BACKTICKED = re.compile(r"`([^`\s]+)`")
FENCED = re.compile(r"```[a-z]*\n(.*?)```", re.S)
DIAGRAM_PATH = re.compile(r"[\w.*-]+(?:/[\w.*-]+)+/?|[\w*-]+\.(?:h|cpp|cu|cuh|py|S)\b")
NOT_THE_TREES = ("build", "~", "http", "$", "-", "/", ".device")


def looks_like_path(text: str) -> bool:
    if text.startswith(NOT_THE_TREES) or "::" in text or "(" in text or "=" in text or "<" in text:
        return False
    return "/" in text or (text.endswith(SUFFIXES) and text not in SUFFIXES)


def exists(root: pathlib.Path, tree: list, name: str) -> bool:
    bare = name.rstrip("/")
    for base in (root, root / "include", root / "include" / "lockstep", root / "src"):
        if any(base.glob(bare)) or any(base.glob(bare + ".*")):
            return True
    pattern = re.compile("(^|/)" + re.escape(bare).replace(r"\*", "[^/]*") + r"(\.\w+)?(/|$)")
    return any(pattern.search(path) for path in tree)


def names_in(text: str):
    """(name, offset) for each path-like name: backticked, or in a fenced diagram."""
    fenced = [(m.start(1), m.end(1)) for m in FENCED.finditer(text)]
    for match in BACKTICKED.finditer(text):
        if not any(begin <= match.start() < end for begin, end in fenced):
            yield match.group(1).rstrip(".,:;"), match.start()
    for begin, end in fenced:
        if text[max(0, begin - 10) : begin].rstrip().endswith(("cpp", "python", "sh", "bash", "cmake")):
            continue  # code, not a diagram
        for match in DIAGRAM_PATH.finditer(text, begin, end):
            yield match.group(0), match.start()


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    tops = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "build"))]
    tree = [p.relative_to(root).as_posix() for top in tops for p in top.rglob("*") if "__pycache__" not in p.parts]
    missing = []
    for document in sys.argv[2:]:
        text = (root / document).read_text()
        for name, offset in names_in(text):
            if looks_like_path(name) and not exists(root, tree, name):
                line = text.count("\n", 0, offset) + 1
                missing.append(f"{document}:{line}: `{name}` names no file or folder of the tree")
    for line in missing:
        print(line)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
