"""Every function of lockstep's device headers that waits says so on its declaration.

Which calls may synchronise is written once, on each declaration
(LOCKSTEP_WAITS in include/lockstep/emu/waits.h), for the region-loop
compiler to read instead of lists of names. This test parses lockstep's headers with libclang (the
`libclang` package's Python bindings) and follows each function's body: a
function that reaches an annotated one must be annotated itself, and an
annotated function must reach a waiting primitive (the runtime's, declared
without a body in sync.h). So a collective added without its annotation, or
an annotation left on a function that no longer waits, fails here.
"""

import os
import subprocess
from pathlib import Path

import clang.cindex as cindex
import pytest

ROOT = Path(__file__).resolve().parents[2]
INCLUDE = ROOT / "include"
ANNOTATION = "lockstep::waits::"
FUNCTION_KINDS = {
    cindex.CursorKind.FUNCTION_DECL,
    cindex.CursorKind.CXX_METHOD,
    cindex.CursorKind.FUNCTION_TEMPLATE,
    cindex.CursorKind.CONSTRUCTOR,
    cindex.CursorKind.CONVERSION_FUNCTION,
}
# Every device header a kernel may include.
SOURCE = """
#include "lockstep/cuda.h"
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
"""


def _parse():
    # (Once another test has loaded the bindings' library, it stays: the wheel's, as here by default.)
    if os.environ.get("LOCKSTEP_LIBCLANG") and not cindex.Config.loaded:
        cindex.Config.set_library_file(os.environ["LOCKSTEP_LIBCLANG"])
    # The libclang wheel carries no compiler headers (stddef.h): the host compiler's stand in.
    gcc_headers = subprocess.run(["g++", "-print-file-name=include"], capture_output=True, text=True).stdout.strip()
    args = ["-x", "c++", "-std=c++20", f"-I{INCLUDE}", f"-I{INCLUDE / 'lockstep' / 'cuda_include'}", "-isystem", gcc_headers]
    tu = cindex.Index.create().parse("waits.cpp", args=args, unsaved_files=[("waits.cpp", SOURCE)])
    errors = [str(d) for d in tu.diagnostics if d.severity >= cindex.Diagnostic.Error]
    assert not errors, "lockstep's headers do not parse: " + "; ".join(errors[:5])
    return tu


def _in_lockstep(cursor):
    f = cursor.location.file
    return f is not None and str(Path(f.name).resolve()).startswith(str(INCLUDE / "lockstep"))


def _key(cursor):
    return cursor.canonical.get_usr() or cursor.get_usr()


def _annotation(cursor):
    for c in (cursor, cursor.canonical):
        for child in c.get_children():
            if child.kind.is_attribute() and child.spelling.startswith(ANNOTATION):
                return child.spelling[len(ANNOTATION) :]
    return None


def _overloads(cursor):
    lib = cindex.conf.lib
    return [lib.clang_getOverloadedDecl(cursor, i) for i in range(lib.clang_getNumOverloadedDecls(cursor))]


def _facts():
    """Per function of lockstep's headers: its cursor, annotation, and what its body calls."""
    tu = _parse()
    functions, calls, unresolved = {}, {}, {}

    def body_references(function):
        named, by_name = set(), set()
        for c in function.walk_preorder():
            if c.kind == cindex.CursorKind.OVERLOADED_DECL_REF:
                named |= {_key(o) for o in _overloads(c)}
            elif c.kind in (cindex.CursorKind.CALL_EXPR, cindex.CursorKind.MEMBER_REF_EXPR, cindex.CursorKind.DECL_REF_EXPR):
                target = c.referenced
                if target is not None and target.kind in FUNCTION_KINDS:
                    named.add(_key(target))
                    template = cindex.conf.lib.clang_getSpecializedCursorTemplate(target)
                    if template is not None:
                        named.add(_key(template))
                elif target is None and c.kind == cindex.CursorKind.MEMBER_REF_EXPR:
                    # A dependent member call (group.sync()): libclang names it by its last identifier only.
                    names = [t.spelling for t in c.get_tokens() if t.kind == cindex.TokenKind.IDENTIFIER]
                    if names:
                        by_name.add(names[-1])
        return named, by_name

    for c in tu.cursor.walk_preorder():
        if c.kind in FUNCTION_KINDS and _in_lockstep(c):
            key = _key(c)
            functions.setdefault(key, c)
            if _annotation(c):
                functions[key] = c
            if c.is_definition():
                named, by_name = body_references(c)
                calls.setdefault(key, set()).update(named)
                unresolved.setdefault(key, set()).update(by_name)
    return functions, calls, unresolved


def _waiting(functions, calls, unresolved):
    """The functions that reach an annotated primitive (declared without a body)."""
    annotated = {k for k, c in functions.items() if _annotation(c)}
    primitives = {k for k in annotated if k not in calls}
    annotated_names = {functions[k].spelling for k in annotated}
    waiting = set(primitives)
    changed = True
    while changed:
        changed = False
        for key, callees in calls.items():
            if key in waiting:
                continue
            if callees & waiting or unresolved.get(key, set()) & annotated_names:
                waiting.add(key)
                changed = True
    return annotated, primitives, waiting


@pytest.fixture(scope="module")
def headers():
    """The functions of lockstep's headers, and which are annotated, primitives and waiting."""
    functions, calls, unresolved = _facts()
    annotated, primitives, waiting = _waiting(functions, calls, unresolved)
    return functions, annotated, primitives, waiting


def _where(cursor):
    return f"{cursor.displayname} ({Path(cursor.location.file.name).relative_to(INCLUDE)}:{cursor.location.line})"


def test_the_primitives_are_annotated(headers):
    functions, _, primitives, _ = headers
    assert {"block_barrier", "warp_collective", "grid_sync", "device_yield"} <= {functions[k].spelling for k in primitives}


def test_every_function_that_waits_is_annotated(headers):
    functions, annotated, _, waiting = headers
    missing = sorted(_where(functions[k]) for k in waiting - annotated)
    assert not missing, "functions that wait without LOCKSTEP_WAITS on their declaration: " + ", ".join(missing)


def test_every_annotated_function_waits(headers):
    functions, annotated, _, waiting = headers
    stale = sorted(_where(functions[k]) for k in annotated - waiting)
    assert not stale, "LOCKSTEP_WAITS on functions that reach no waiting primitive: " + ", ".join(stale)
