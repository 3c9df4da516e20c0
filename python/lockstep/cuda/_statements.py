"""Statements of a kernel or device function in CUDA C++: assignments (numba's
one type per variable), if/while/for (over range(), arrays, tuples, enumerate,
zip), return, assert. A mixin of FunctionTranslator (_function.py)."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from . import _intrinsics as intr
from ._types import Array, Record, Scalar, Tuple, Type, TypeConflict, int64, none, numeric_result, unify
from ._values import Value, cast, cpp_identifier, literal, record_item


class StatementTranslator:
    """The statements of a FunctionTranslator."""

    # ---- statements ----
    def block(self, body: list[ast.stmt]) -> None:
        self.depth += 1
        for stmt in body:
            self.statement(stmt)
        self.depth -= 1

    def statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a docstring
        self.line_directive(node)
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            allowed = "assignments, if/elif/else, for over range(), while, break, continue, return, pass, assert and calls"
            self.fail(node, f"the statement {type(node).__name__} is not supported in kernels; use {allowed}")
        method(node)

    def stmt_Pass(self, node: ast.Pass) -> None:
        pass

    def stmt_Break(self, node: ast.Break) -> None:
        self.out("break;")

    def stmt_Continue(self, node: ast.Continue) -> None:
        self.out("continue;")

    def stmt_Expr(self, node: ast.Expr) -> None:
        v = self.expr(node.value)
        if v.code is not None:
            self.out(f"{v.code};")

    def stmt_Assert(self, node: ast.Assert) -> None:
        test = self.truth(self.expr(node.test))
        message = ast.unparse(node.test).replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
        self.out(f'if (!({test})) {{ printf("AssertionError: {message}\\n"); __trap(); }}')

    def stmt_Return(self, node: ast.Return) -> None:
        if node.value is None or (isinstance(node.value, ast.Constant) and node.value.value is None):
            # `return` and `return None`: how a void function ends (minitorch's broadcast_index), as in numba.
            if not self.kernel and self.return_type not in (None, none):
                self.fail(node, "this function returns a value elsewhere; return one here too")
            self.return_type = self.return_type or none
            self.out("return;")
            return
        if self.kernel:
            self.fail(node, "a kernel cannot return a value; write results into an array argument")
        v = self.runtime(self.expr(node.value), node)
        try:
            self.return_type = unify(self.return_type if self.return_type != none else None, v.type)
        except TypeConflict as e:
            self.fail(node, f"this function returns values of different types: {e}")
        self.out(f"return {cast(v, self.return_type) if self.return_type else v.code};")

    def stmt_If(self, node: ast.If) -> None:
        test = self.expr(node.test)
        if test.is_const and not isinstance(test.const, intr.Intrinsic):
            # Decided while translating (a flag from a global or closure), as numba prunes branches.
            self.block_inline(node.body if test.const else node.orelse)
            return
        self.out(f"if ({self.truth(test)}) {{")
        self.block(node.body)
        if node.orelse:
            self.out("} else {")
            self.block(node.orelse)
        self.out("}")

    def block_inline(self, body: list[ast.stmt]) -> None:
        self.out("{")
        self.block(body)
        self.out("}")

    def stmt_While(self, node: ast.While) -> None:
        if node.orelse:
            self.fail(node, "while ... else is not supported; use a flag variable")
        # `while (test)` where the test is one expression, so that lockstep's region-loop compiler sees the loop's
        # condition (a loop with a barrier runs as loops over threads when it is the block's); else the statements
        # the test needs run first in each iteration.
        start = len(self.lines)
        self.depth += 1
        test = self.truth(self.expr(node.test))
        self.depth -= 1
        needs = self.lines[start:]
        del self.lines[start:]
        self.out(f"while ({test}) {{" if not needs else "while (true) {")
        self.lines.extend(needs)
        self.depth += 1
        if needs:
            self.out(f"if (!({test})) break;")
        for stmt in node.body:
            self.statement(stmt)
        self.depth -= 1
        self.out("}")

    def stmt_For(self, node: ast.For) -> None:
        if node.orelse:
            self.fail(node, "for ... else is not supported; use a flag variable")
        it = node.iter
        callee = self.expr(it.func) if isinstance(it, ast.Call) else None
        if callee is None or callee.const is not range:
            self.sequence_loop(node, callee.const if callee is not None and callee.is_const else None)
            return
        if not isinstance(node.target, ast.Name) or it.keywords:  # type: ignore[union-attr]
            self.fail(node, "a for loop over range() has one name as its variable (for i in range(n))")
        args = [self.runtime(self.expr(a), a) for a in it.args]  # type: ignore[union-attr]
        if not 1 <= len(args) <= 3 or any(not (isinstance(a.type, Scalar) and (a.type.is_integer or a.type.is_bool)) for a in args if a.type):
            self.fail(node, "range() takes 1 to 3 integers")
        start, stop, step = (literal(0), args[0], literal(1)) if len(args) == 1 else (args[0], args[1], literal(1)) if len(args) == 2 else args
        index_type: Type = int64
        for a in args:
            if a.type is not None:
                index_type = numeric_result(index_type, a.type) if a.type.is_unsigned else index_type  # type: ignore[union-attr]
        assert isinstance(index_type, Scalar)
        name = node.target.id
        step_const = self.const_int(it.args[2]) if len(args) == 3 else 1  # type: ignore[union-attr]
        if step_const == 0:
            self.fail(node, "range() step must not be zero")
        # Python evaluates range()'s arguments once and counts with a hidden
        # iterator (assigning the loop variable in the body changes nothing).
        i = self.temporary(f"lockstep_{self.cpp_names[name]}")
        t = index_type.cpp
        assigned_in_body = {n.id for stmt in node.body for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        bounds = [f"{t} {i} = {cast(start, index_type)}"]

        def once(v: Value) -> str:
            code = cast(v, index_type)
            simple = code.rstrip("L").lstrip("-").isdigit() or (code.isidentifier() and code not in (self.cpp_names.get(n) for n in assigned_in_body))
            if simple:
                return code
            held = self.temporary(f"lockstep_{self.cpp_names[name]}_bound")
            bounds.append(f"{held} = {code}")
            return held

        end = once(stop)
        if step_const is not None:
            condition = f"{i} {'<' if step_const > 0 else '>'} {end}"
            increment = f"++{i}" if step_const == 1 else f"--{i}" if step_const == -1 else f"{i} += {step_const}"
        else:
            by = once(step)
            condition, increment = f"({by} > 0 ? {i} < {end} : {i} > {end})", f"{i} += {by}"
        self.out(f"for ({', '.join(bounds)}; {condition}; {increment}) {{")
        self.depth += 1
        self.assign_name(name, Value(i, index_type), node)
        for stmt in node.body:
            self.statement(stmt)
        self.depth -= 1
        self.out("}")

    def sequence_loop(self, node: ast.For, callee: Any) -> None:
        """for x in a, for i, x in enumerate(a[, start]), for x, y in zip(a, b, ...) over
        arrays (first dimension) and tuples: a loop over the items' indices."""
        it = node.iter
        if callee is enumerate:
            assert isinstance(it, ast.Call)
            start_node = it.args[1] if len(it.args) > 1 else next((k.value for k in it.keywords if k.arg == "start"), None)
            sequences = it.args[:1]
        elif callee is zip:
            assert isinstance(it, ast.Call)
            start_node, sequences = None, it.args
        else:
            start_node, sequences = None, [it]
        held: list[tuple[str, Type]] = []
        for sequence in sequences:
            v = self.runtime(self.expr(sequence), sequence)
            if v.type is not None and not isinstance(v.type, (Array, Tuple)):
                self.fail(node, f"kernels loop over range(), arrays and tuples of one type (with enumerate and zip), not a {v.type}")
            if v.type is None:
                return
            name = self.temporary()
            self.out(f"const {v.type.cpp} {name} = {v.code};")
            held.append((name, v.type))
        lengths = [f"{name}.shape[0]" if isinstance(t, Array) else f"{t.count}LL" for name, t in held]  # type: ignore[union-attr]
        count = lengths[0]
        for length in lengths[1:]:
            count = f"lockstep::py::min_of<long long>({count}, {length})"
        k = self.temporary()
        self.out(f"for (long long {k} = 0, {k}_count = {count}; {k} < {k}_count; ++{k}) {{")
        self.depth += 1
        items = []
        for name, t in held:
            if isinstance(t, Tuple):
                items.append(Value(f"{name}[{k}]", t.item))
            elif isinstance(t, Array) and t.ndim == 1:
                items.append(Value(f"{name}({k})", t.dtype))
            else:
                assert isinstance(t, Array)
                items.append(Value(f"{name}.template leading<1>({k})", Array(t.dtype, t.ndim - 1, t.contiguous, t.readonly)))
        targets: list[ast.expr] = [node.target]
        if callee in (enumerate, zip):
            expected = 2 if callee is enumerate else len(items)
            if not isinstance(node.target, ast.Tuple) or len(node.target.elts) != expected:
                self.fail(node, f"unpack {callee.__name__}() into {expected} names (for i, x in ...)")
            targets = list(node.target.elts)  # type: ignore[union-attr]
        if callee is enumerate:
            start = self.runtime(self.expr(start_node), start_node) if start_node is not None else literal(0)
            items = [Value(f"({cast(start, int64)} + {k})", int64), items[0]]
        for target, item in zip(targets, items):
            self.store(target, item, node)
        for stmt in node.body:
            self.statement(stmt)
        self.depth -= 1
        self.out("}")

    def stmt_Assign(self, node: ast.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0], (ast.Tuple, ast.List)) and isinstance(node.value, (ast.Tuple, ast.List)):
            # a, b = b, a: every value first, then the names.
            targets, values = node.targets[0].elts, node.value.elts
            if len(targets) != len(values):
                self.fail(node, f"{len(values)} values cannot be unpacked into {len(targets)} names")
            held = []
            for v_node in values:
                v = self.expr(v_node)
                if self.is_alias(v):  # cbi, tid = cuda.blockIdx, cuda.threadIdx
                    held.append(v)
                    continue
                v = self.runtime(v, v_node)
                tmp = self.temporary()
                if v.type is not None:
                    self.out(f"const {v.type.cpp} {tmp} = {v.code};")
                held.append(Value(tmp, v.type))
            for target, v in zip(targets, held):
                self.store(target, v, node)
            return
        first = node.targets[0]
        self.name_hint = self.cpp_names.get(first.id) if isinstance(first, ast.Name) else None
        value = self.expr(node.value)
        self.name_hint = None
        if len(node.targets) > 1 or isinstance(node.targets[0], (ast.Tuple, ast.List)):
            value = self.runtime(value, node.value)
            if value.type is not None and len(node.targets) > 1:
                tmp = self.temporary()
                self.out(f"const {value.type.cpp} {tmp} = {value.code};")
                value = Value(tmp, value.type)
        for target in node.targets:
            self.store(target, value, node)

    def stmt_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.store(node.target, self.expr(node.value), node)

    def stmt_AugAssign(self, node: ast.AugAssign) -> None:
        target = node.target
        if isinstance(target, ast.Subscript):
            # a[i] += v: the element's address once.
            place = self.expr(target)
            if not isinstance(place.type, Scalar) and place.type is not None:
                self.fail(node, "+= and friends on a subscript work on one array element")
            self.check_writable(target, node)
            ref = self.temporary()
            self.out(f"auto& {ref} = {place.code};")
            result = self.binary(node.op, Value(ref, place.type), self.runtime(self.expr(node.value), node.value), node)
            self.out(f"{ref} = {cast(result, place.type) if place.type else result.code};")
            return
        if not isinstance(target, ast.Name):
            self.fail(node, "+= and friends update a variable or an array element")
        current = self.expr(target)
        operand = self.runtime(self.expr(node.value), node.value)
        result = self.binary(node.op, current, operand, node)
        compound = {ast.Add: "+=", ast.Sub: "-=", ast.Mult: "*=", ast.Div: "/=", ast.BitAnd: "&=", ast.BitOr: "|=", ast.BitXor: "^="}
        if type(node.op) in compound and result.type is not None and result.type == self.var_types.get(target.id) == current.type:  # type: ignore[union-attr]
            # x += y reads as written when x keeps its type.
            self.out(f"{current.code} {compound[type(node.op)]} {cast(operand, result.type)};")
            return
        self.assign_name(target.id, result, node)  # type: ignore[union-attr]

    def check_writable(self, target: ast.Subscript, node: ast.AST) -> None:
        base = self.expr(target.value)
        if isinstance(base.type, Array) and base.type.readonly:
            self.fail(node, "constant arrays (cuda.const.array_like and global NumPy arrays) are read-only in kernels")
        if isinstance(base.type, Tuple):
            self.fail(node, "tuples are immutable; use cuda.local.array for a small array the thread writes")

    def store(self, target: ast.expr, value: Value, node: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self.assign_name(target.id, value, node)
        elif isinstance(target, ast.Subscript):
            self.check_writable(target, node)
            place = self.expr(target)
            value = self.runtime(value, node)
            if isinstance(place.type, Array):  # a[1:3] = 0, a[:] = b[::2]: every element of the view
                if isinstance(value.type, Array) and value.type.ndim != place.type.ndim:
                    self.fail(node, f"cannot assign a {value.type.ndim}-d array to a {place.type.ndim}-d slice")
                if isinstance(value.type, Tuple):
                    self.fail(node, "assign a number or an array to a slice")
                self.out(f"lockstep::py::fill({place.code}, {value.code});")
                return
            self.out(f"{place.code} = {cast(value, place.type) if place.type else value.code};")
        elif isinstance(target, (ast.Tuple, ast.List)):
            value = self.runtime(value, node)
            if isinstance(value.type, Record):
                if len(value.type.items) != len(target.elts):
                    self.fail(node, f"cannot unpack {len(value.type.items)} values into {len(target.elts)} names")
                held = self.temporary()
                self.out(f"const {value.type.cpp} {held} = {value.code};")
                for k, (t, item_type) in enumerate(zip(target.elts, value.type.items)):
                    self.store(t, Value(record_item(held, k), item_type), node)
                return
            if value.type is not None and not isinstance(value.type, Tuple):
                self.fail(node, f"cannot unpack a {value.type} into {len(target.elts)} names")
            if isinstance(value.type, Tuple) and value.type.count != len(target.elts):
                self.fail(node, f"cannot unpack {value.type.count} values into {len(target.elts)} names")
            if value.items and isinstance(value.type, Tuple):
                for t, part in zip(target.elts, value.items):
                    self.store(t, Value(part, value.type.item), node)
                return
            tmp = self.temporary()
            if value.type is not None:
                self.out(f"const {value.type.cpp} {tmp} = {value.code};")
            item = value.type.item if isinstance(value.type, Tuple) else None
            for k, t in enumerate(target.elts):
                self.store(t, Value(f"{tmp}.item[{k}]", item), node)
        else:
            self.fail(node, f"cannot assign to {ast.unparse(target)}; assign to names and array elements")

    def is_alias(self, v: Value) -> bool:
        """Whether ``v`` is a translation-time object a local name may stand for (cuda.threadIdx, math, a device function)."""
        if not v.is_const or isinstance(v.const, (bool, int, float, str, tuple, np.number, np.bool_, np.ndarray)):
            return False
        return not (isinstance(v.const, intr.Intrinsic) and self.is_intrinsic_value(v.const))

    def assign_name(self, name: str, value: Value, node: ast.AST) -> None:
        if self.is_alias(value):
            if self.aliases.setdefault(name, value.const) is not value.const:
                self.fail(node, f"{name} stands for {self.aliases[name]!r} elsewhere; give {value.const!r} another name")
            return
        if name not in self.var_types:
            self.var_types[name] = None
        value = self.runtime(value, node) if value.code is not None or value.is_const else value
        try:
            self.var_types[name] = unify(self.var_types[name], value.type)
        except TypeConflict:
            self.fail(
                node,
                f"{name} is assigned a {value.type} here but is a {self.var_types[name]} elsewhere; "
                "numba gives a variable one type: use another name",
            )
        t = self.var_types[name]
        if value.code is not None and t is not None:
            cpp = self.cpp_names.setdefault(name, cpp_identifier(name))
            declaration = ("const " if isinstance(t, Scalar) else "") + t.cpp + " " if name in self.declared_where_assigned else ""
            self.out(f"{declaration}{cpp} = {cast(value, t)};")
