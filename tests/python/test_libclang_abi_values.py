"""The enumerator values lockstep declares for libclang's C ABI
(src/emulator/compile_time/region_loops/libclang_abi.h, written by hand so that
the build needs no libclang headers) against libclang's own: the Python
bindings that come with the libclang wheel (clang.cindex) carry every cursor
and type kind with its value. A value typed wrong would make the region-loop
compiler misread the tree without a build error."""

import pathlib
import re

import clang.cindex

HEADER = pathlib.Path(__file__).resolve().parents[2] / "src/emulator/compile_time/region_loops/libclang_abi.h"


def declared(enum_name):
    """{enumerator: value} of `enum enum_name : int { ... }` in the header."""
    body = re.search(r"enum " + enum_name + r" : int \{(.*?)\};", HEADER.read_text(), re.S).group(1)
    body = re.sub(r"//[^\n]*", "", body)
    return {name: int(value, 0) for name, value in re.findall(r"(\w+)\s*=\s*(\w+)", body)}


# The few kinds the bindings spell otherwise than Index.h.
BINDINGS_NAMES = {
    "NonTypeTemplateParameter": "TemplateNonTypeParameter",
    "CompoundAssignOperator": "CompoundAssignmentOperator",
    "UnaryExpr": "CXXUnaryExpr",
}


def normalized(name):
    return BINDINGS_NAMES.get(name, name).replace("_", "").upper()


def bindings_values(kind_class):
    """{normalized name: value} of every kind the bindings name (class attributes that are kinds)."""
    kinds = {name: getattr(kind_class, name) for name in dir(kind_class) if not name.startswith("_")}
    return {normalized(name): kind.value for name, kind in kinds.items() if isinstance(kind, kind_class)}


def check(enum_name, prefix, kind_class, ranges=()):
    ours = declared(enum_name)
    theirs = bindings_values(kind_class)
    assert len(ours) > 10, f"the header's {enum_name} was not read"
    for name, value in ours.items():
        short = name[len(prefix) :]
        if short in ranges:
            continue
        assert normalized(short) in theirs, f"{name}: libclang's bindings have no such kind"
        assert value == theirs[normalized(short)], f"{name} = {value} in libclang_abi.h, {theirs[normalized(short)]} in libclang"
    return ours


def test_cursor_kinds_are_libclangs():
    ours = check("CXCursorKind", "CXCursor_", clang.cindex.CursorKind, ranges=("FirstAttr", "LastAttr"))
    attributes = [kind.value for kind in clang.cindex.CursorKind.get_all_kinds() if kind.is_attribute()]
    assert ours["CXCursor_FirstAttr"] == min(attributes)
    assert ours["CXCursor_LastAttr"] == max(attributes)


def test_type_kinds_are_libclangs():
    check("CXTypeKind", "CXType_", clang.cindex.TypeKind)
