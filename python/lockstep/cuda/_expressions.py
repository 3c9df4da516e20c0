"""Expressions of a kernel in CUDA C++, typed as numba types them: names,
constants, attributes, arithmetic, comparisons, boolean operators, tuples,
and the values known while translating (globals, closures, constants). A
mixin of FunctionTranslator (_function.py)."""

from __future__ import annotations

import ast
from types import ModuleType
from typing import Any

import numpy as np

from . import _intrinsics as intr
from ._numba_objects import NumbaCuda, lockstep_equivalent
from ._numba_objects import attribute as numba_attribute
from ._types import (
    Array,
    NoneType,
    Record,
    Scalar,
    Tuple,
    Type,
    TypeConflict,
    boolean,
    comparison_operand,
    int64,
    numeric_result,
    true_division_result,
    unify,
)
from ._values import NotConstant, TypingError, Value, cast, cpp_identifier, literal, record_code, record_item

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}
_CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


class ExpressionTranslator:
    """The expressions of a FunctionTranslator (indexing: _subscripts.py; calls: _calls.py)."""

    # ---- expressions ----
    def expr(self, node: ast.expr) -> Value:
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            self.fail(node, f"the expression {ast.unparse(node)!r} ({type(node).__name__}) is not supported in kernels")
        return self.typed(node, method(node))

    def runtime(self, v: Value, node: ast.AST) -> Value:
        """``v`` as C++ code: constants as literals, intrinsics as their value."""
        if not v.is_const:
            return v
        c = v.const
        if isinstance(c, intr.Intrinsic):
            return self.intrinsic_value(c, node)
        if isinstance(c, (bool, int, float, np.number, np.bool_)):
            try:
                return literal(c)
            except TypeError:
                self.fail(node, f"{c!r} does not fit in 64 bits")
        if isinstance(c, np.ndarray):
            code, t = self.program.constant_array(c, self, node)
            return Value(code, t)
        if isinstance(c, tuple):
            return self.tuple_of([self.runtime(Value(None, None, x), node) for x in c], node)
        self.fail(node, f"{ast.unparse(node)} is a {type(c).__name__}, which kernels cannot use as a value")
        raise AssertionError

    def expr_Constant(self, node: ast.Constant) -> Value:
        return Value(None, None, node.value)

    def expr_Name(self, node: ast.Name) -> Value:
        if node.id in self.const_params:
            return Value(None, None, self.const_params[node.id])
        if node.id in self.aliases:
            return Value(None, None, self.aliases[node.id])
        if node.id in self.var_types:
            return Value(self.cpp_names.setdefault(node.id, cpp_identifier(node.id)), self.var_types[node.id])
        if node.id in self.scope:
            return Value(None, None, self.numba_equivalent(self.scope[node.id], node))
        self.fail(node, f"name {node.id!r} is not defined")
        raise AssertionError

    def expr_Attribute(self, node: ast.Attribute) -> Value:
        base = self.expr(node.value)
        if base.is_const:
            c = base.const
            if isinstance(c, ModuleType) and c.__name__ == "numba" and node.attr == "cuda":
                return Value(None, None, numba_attribute(c, node.attr))
            if isinstance(c, NumbaCuda) and not hasattr(c, node.attr):
                self.fail(node, f"{ast.unparse(node)} is not supported in lockstep.cuda's kernels (docs/numba_intrinsics.md lists what is)")
            if isinstance(c, intr.Intrinsic) or not hasattr(c, node.attr):
                self.fail(node, f"{ast.unparse(node)} is not something kernels can use")
            return Value(None, None, self.numba_equivalent(getattr(c, node.attr), node))
        t = base.type
        if isinstance(t, Array):
            if node.attr in ("shape", "strides"):
                items = [f"{base.code}.{node.attr}[{k}]" for k in range(t.ndim)]
                return Value(f"lockstep::py::shape_of({base.code}.{node.attr})", Tuple(int64, t.ndim), items=items)
            if node.attr == "size":
                return Value(f"{base.code}.size()", int64)
            if node.attr == "ndim":
                return Value(None, None, t.ndim)
            if node.attr == "itemsize":
                return Value(None, None, np.dtype(t.dtype.name).itemsize)
            self.fail(node, f"arrays in kernels have shape, strides, size, ndim and itemsize, not {node.attr!r}")
        if isinstance(t, Scalar) and node.attr in ("real",):
            return base
        if isinstance(t, Record) and t.names and node.attr in t.names:
            k = t.names.index(node.attr)
            return Value(record_item(base.code or "", k), t.items[k])
        if t is None:
            return Value(f"{base.code}.{node.attr}", None)
        self.fail(node, f"a {t} has no attribute {node.attr!r} in kernels")
        raise AssertionError

    def numba_equivalent(self, obj: Any, node: ast.expr) -> Any:
        """``obj``, or lockstep.cuda's marker where it is numba's own (numba.cuda.syncthreads)."""
        try:
            return lockstep_equivalent(obj, ast.unparse(node))
        except LookupError as e:
            self.fail(node, str(e))
            raise AssertionError from None

    def truth(self, v: Value) -> str:
        v = self.runtime(v, ast.Constant(value=None))
        if isinstance(v.type, (Array, Tuple)):
            raise TypingError(f"the truth of a {v.type} is ambiguous in kernels")
        if v.type is None or v.type.is_bool:  # type: ignore[union-attr]
            return v.code or "false"
        return f"({v.code} != 0)"

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Value:
        operand = self.expr(node.operand)
        if operand.is_const and isinstance(operand.const, (int, float, bool)) and not isinstance(node.op, ast.Not):
            return Value(None, None, {ast.USub: lambda x: -x, ast.UAdd: lambda x: +x, ast.Invert: lambda x: ~x}[type(node.op)](operand.const))
        operand = self.runtime(operand, node)
        if isinstance(node.op, ast.Not):
            return Value(f"(!{self.truth(operand)})", boolean)
        t = operand.type
        if t is None:
            return Value(f"(-{operand.code})", None)
        if not isinstance(t, Scalar):
            self.fail(node, f"unary {ast.unparse(node)[0]} works on numbers, not a {t}")
        assert isinstance(t, Scalar)
        if t.is_bool:
            operand, t = Value(f"static_cast<long long>({operand.code})", int64), int64
        if isinstance(node.op, ast.Invert) and t.is_float:
            self.fail(node, "~ works on integers")
        op = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}[type(node.op)]
        if t.name in ("int8", "int16", "uint8", "uint16", "uint32", "int32") and op != "+":
            return Value(f"static_cast<{t.cpp}>({op}{operand.code})", t)
        return Value(f"({op}{operand.code})", t)

    def expr_BinOp(self, node: ast.BinOp) -> Value:
        left, right = self.expr(node.left), self.expr(node.right)
        if isinstance(node.op, ast.Mod) and left.is_const and isinstance(left.const, str):
            self.fail(node, "string formatting is not supported in kernels; print(...) the values")
        return self.binary(node.op, self.runtime(left, node.left), self.runtime(right, node.right), node)

    def binary(self, op: ast.operator, left: Value, right: Value, node: ast.AST) -> Value:
        a, b = left.type, right.type
        if a is None or b is None:
            return Value(f"({left.code} ? {right.code})", None)
        if not isinstance(a, Scalar) or not isinstance(b, Scalar):
            self.fail(node, f"arithmetic works on numbers, not on a {a if not isinstance(a, Scalar) else b}; index arrays element by element")
        assert isinstance(a, Scalar) and isinstance(b, Scalar)
        if isinstance(op, ast.Div):
            r = true_division_result(a, b)
            return Value(f"({cast(left, r)} / {cast(right, r)})", r)
        if isinstance(op, ast.MatMult):
            self.fail(node, "@ is not supported in kernels; write the loops")
        r = numeric_result(a, b)
        if a.is_bool and b.is_bool and isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
            return Value(f"({left.code} {_BINOPS[type(op)]} {right.code})", boolean)
        if isinstance(op, (ast.FloorDiv, ast.Mod, ast.Pow)):
            helper = {ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow"}[type(op)]
            return Value(f"lockstep::py::{helper}<{r.cpp}>({cast(left, r)}, {cast(right, r)})", r)
        if type(op) in (ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift) and r.is_float:
            self.fail(node, f"{_BINOPS[type(op)]} works on integers, not on {a} and {b}")
        return Value(f"({cast(left, r)} {_BINOPS[type(op)]} {cast(right, r)})", r)

    def expr_BoolOp(self, node: ast.BoolOp) -> Value:
        values = [self.runtime(self.expr(v), v) for v in node.values]
        joiner = " && " if isinstance(node.op, ast.And) else " || "
        if all(v.type is None or v.type == boolean for v in values):
            return Value("(" + joiner.join(self.truth(v) for v in values) + ")", boolean)
        # Python's value semantics: `a or b` is a when a is true, else b.
        t: Type | None = None
        for v in values:
            t = unify(t, v.type)
        result = cast(values[-1], t) if t else values[-1].code
        for v in reversed(values[:-1]):
            c = cast(v, t) if t else v.code
            result = f"({self.truth(v)} ? {result} : {c})" if isinstance(node.op, ast.And) else f"({self.truth(v)} ? {c} : {result})"
        return Value(result, t)

    def expr_Compare(self, node: ast.Compare) -> Value:
        parts = []
        left = self.runtime(self.expr(node.left), node.left)
        for op, right_node in zip(node.ops, node.comparators):
            right = self.runtime(self.expr(right_node), right_node)
            if isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
                self.fail(node, "is, is not, in and not in are not supported in kernels; compare with == and !=")
            if left.type is None or right.type is None:
                parts.append(f"({left.code} {_CMPOPS[type(op)]} {right.code})")
            else:
                if not isinstance(left.type, Scalar) or not isinstance(right.type, Scalar):
                    self.fail(node, "comparisons work on numbers")
                t = comparison_operand(left.type, right.type)  # type: ignore[arg-type]
                parts.append(f"({cast(left, t)} {_CMPOPS[type(op)]} {cast(right, t)})")
            left = right
        return Value(parts[0] if len(parts) == 1 else "(" + " && ".join(parts) + ")", boolean)

    def expr_IfExp(self, node: ast.IfExp) -> Value:
        test = self.truth(self.expr(node.test))
        a, b = self.runtime(self.expr(node.body), node.body), self.runtime(self.expr(node.orelse), node.orelse)
        try:
            t = unify(a.type, b.type)
        except TypeConflict as e:
            self.fail(node, f"the two values of this conditional expression have no common type ({e})")
        return Value(f"({test} ? {cast(a, t) if t else a.code} : {cast(b, t) if t else b.code})", t)

    def expr_Tuple(self, node: ast.Tuple) -> Value:
        values = [self.expr(e) for e in node.elts]
        if all(v.is_const for v in values):
            return Value(None, None, tuple(v.const for v in values))
        return self.tuple_of([self.runtime(v, e) for v, e in zip(values, node.elts)], node)

    def tuple_of(self, values: list[Value], node: ast.AST) -> Value:
        """numba's tuple of these values: a UniTuple when every item has one type, else a Tuple (a record)."""
        if any(v.type is None for v in values):
            return Value("{" + ", ".join(v.code or "" for v in values) + "}", None)
        types = [v.type for v in values]
        if values and all(isinstance(t, Scalar) and t == types[0] for t in types):
            t = types[0]
            assert isinstance(t, Scalar)
            return Value(f"{Tuple(t, len(values)).cpp}{{{{{', '.join(v.code or '' for v in values)}}}}}", Tuple(t, len(values)))
        if any(isinstance(t, NoneType) for t in types):
            self.fail(node, "a tuple cannot hold None in kernels")
        record = Record(tuple(types))
        return Value(record_code(record, [v.code or "" for v in values]), record)

    expr_List = expr_Tuple

    def const_value(self, node: ast.expr) -> Any:
        """A compile-time value (numbers, tuples of them, globals, closure
        variables, arithmetic on those, a local assigned once from those), as numba freezes globals."""
        if isinstance(node, ast.Name) and node.id in self.single_assignments and node.id not in self.evaluating:
            self.evaluating.add(node.id)
            try:
                return self.const_value(self.single_assignments[node.id])
            finally:
                self.evaluating.discard(node.id)
        v = self.expr(node)
        if v.is_const:
            return v.const
        if isinstance(node, ast.BinOp):
            a, b = self.const_value(node.left), self.const_value(node.right)
            ops = {ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y, ast.Mult: lambda x, y: x * y, ast.FloorDiv: lambda x, y: x // y}
            numbers = (int, float, np.number)
            if type(node.op) in ops and isinstance(a, numbers) and isinstance(b, numbers):
                return ops[type(node.op)](a, b)
        if isinstance(node, ast.Tuple):
            return tuple(self.const_value(e) for e in node.elts)
        raise NotConstant

    def const_int(self, node: ast.expr) -> int | None:
        try:
            v = self.const_value(node)
        except NotConstant:
            return None
        return int(v) if isinstance(v, (int, np.integer)) else None
