"""A Python kernel, typed as numba types it, translated into CUDA C++ over
lockstep/python_kernels.h.

Each function is read from its source (``inspect``), typed by running the
translation until every variable's type is stable (a variable takes the one
type of all its assignments, as numba unifies), and written once more with
those types. Every statement carries a ``#line`` directive, so compiler
messages, kernel faults and check-mode findings name the Python file and line.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import textwrap
from typing import Any, Callable

import numpy as np

from . import _intrinsics as intr
from ._calls import CallTranslator
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
    none,
    numeric_result,
    scalar_named,
    true_division_result,
    unify,
)
from ._values import (
    ConstArgument,
    NotConstant,
    TypingError,
    Value,
    cast,
    cpp_identifier,
    literal,
    record_code,
    record_item,
    unique_name,
)

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}
_CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


class Program:
    """One generated source: the kernel, the device functions it calls (one
    per argument types) and the constant arrays it reads."""

    def __init__(self) -> None:
        self.definitions: list[str] = []
        self.device_functions: dict[tuple[Any, tuple[Any, ...]], tuple[str, Type]] = {}
        self.in_progress: set[tuple[Any, tuple[Any, ...]]] = set()
        self.constants: dict[int, tuple[str, Array]] = {}
        self.names: set[str] = set()

    def unique(self, base: str) -> str:
        return unique_name(base, self.names)

    def device_function(self, func: Callable[..., Any], arg_types: tuple[Any, ...], at: FunctionTranslator, node: ast.AST) -> tuple[str, Type]:
        key = (func, arg_types)
        if key in self.device_functions:
            return self.device_functions[key]
        if key in self.in_progress:
            at.fail(node, f"{func.__name__} calls itself; kernels and device functions cannot recurse here")
        self.in_progress.add(key)
        translator = FunctionTranslator(self, func, list(arg_types), kernel=False, cpp_name=self.unique(cpp_identifier(func.__name__)))
        definition = translator.translate()
        self.in_progress.discard(key)
        result = (translator.cpp_name, translator.return_type or none)
        self.device_functions[key] = result
        self.definitions.append(definition)
        return result

    def constant_array(self, array: np.ndarray, at: FunctionTranslator, node: ast.AST) -> tuple[str, Array]:
        if id(array) in self.constants:
            return self.constants[id(array)]
        dtype = scalar_named(array.dtype)
        if dtype is None or dtype.name == "float16":
            at.fail(node, f"a constant array of {array.dtype} is not supported; use a numeric dtype such as float32 or int32")
        if array.ndim == 0:
            at.fail(node, "a 0-d array cannot be a constant array; use a Python number")
        name = self.unique("constant")
        flat = np.ascontiguousarray(array).reshape(-1)
        items = ", ".join(literal(x.item()).code or "" for x in flat) if flat.size else "0"
        space = "__constant__" if array.nbytes <= 32768 else "__device__"
        self.definitions.insert(0, f"{space} const {dtype.cpp} {name}_storage[{max(flat.size, 1)}] = {{{items}}};")
        view = (
            f"lockstep::py::over<{dtype.cpp}, {array.ndim}>(const_cast<{dtype.cpp}*>({name}_storage), {{{', '.join(str(s) for s in array.shape)}}})"
        )
        result = (view, Array(dtype, array.ndim, True, readonly=True))
        self.constants[id(array)] = result
        return result


class _Assigned(ast.NodeVisitor):
    """The names a function assigns anywhere: Python makes them local throughout."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.counts: dict[str, int] = {}

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.counts[node.id] = self.counts.get(node.id, 0) + 1
            if node.id not in self.names:
                self.names.append(node.id)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        for stmt in node.body:
            self.visit(stmt)


def _declared_where_assigned(function: ast.FunctionDef, counts: dict[str, int], params: list[str]) -> set[str]:
    """Names assigned once, by an assignment every read of them follows in its own statement list,
    or as a for loop's variable read only inside the loop.

    They are declared with their value where the Python assigns them
    (``const long long i = ...``) instead of at the top and assigned later:
    the region-loop compiler then sees what each thread's value is made of (an
    index that moves by one from thread to thread) and can vectorise the loops
    that read through it.
    """
    loads: dict[str, list[ast.Name]] = {}
    for n in ast.walk(function):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            loads.setdefault(n.id, []).append(n)
    found: set[str] = set()
    for holder in ast.walk(function):
        if isinstance(holder, ast.For) and isinstance(holder.target, ast.Name) and counts.get(holder.target.id) == 1:
            inside = {id(n) for stmt in holder.body for n in ast.walk(stmt)}
            if holder.target.id not in params and all(id(use) in inside for use in loads.get(holder.target.id, [])):
                found.add(holder.target.id)  # a loop variable read only in its loop: declared in each step
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(holder, field, None)
            if not isinstance(statements, list):
                continue
            for k, stmt in enumerate(statements):
                if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
                    continue
                target = stmt.targets[0]
                names = [target] if isinstance(target, ast.Name) else list(target.elts) if isinstance(target, (ast.Tuple, ast.List)) else []
                after = {id(n) for later in statements[k + 1 :] for n in ast.walk(later)}
                for name in names:
                    if not isinstance(name, ast.Name) or counts.get(name.id) != 1 or name.id in params:
                        continue
                    if all(id(use) in after for use in loads.get(name.id, [])):
                        found.add(name.id)
    return found


class FunctionTranslator(CallTranslator):
    """One Python function (kernel or device function) for one set of argument types."""

    def __init__(self, program: Program, func: Callable[..., Any], arg_types: list[Type], kernel: bool, cpp_name: str):
        self.program, self.func, self.arg_types, self.kernel, self.cpp_name = program, func, arg_types, kernel, cpp_name
        self.return_type: Type | None = None
        try:
            source_lines, first_line = inspect.getsourcelines(func)
        except (OSError, TypeError) as e:
            raise TypingError(
                f"cannot read the source of {func.__name__} ({e}); lockstep.cuda translates functions defined in files or notebooks"
            ) from None
        self.file = inspect.getsourcefile(func) or func.__code__.co_filename
        self.source_lines = source_lines
        self.line_offset = first_line - 1
        tree = ast.parse(textwrap.dedent("".join(source_lines)))
        defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if not defs:
            raise TypingError(f"{self.file}:{first_line}: {func.__name__} is not a def; lambdas cannot be kernels or device functions")
        self.tree = defs[0]
        self.params = [a.arg for a in self.tree.args.args]
        if self.tree.args.vararg or self.tree.args.kwarg or self.tree.args.kwonlyargs:
            self.fail(self.tree, "*args, **kwargs and keyword-only parameters are not supported; list the parameters one by one")
        defaults = list(func.__defaults__ or ())
        if len(arg_types) != len(self.params):
            missing = len(self.params) - len(arg_types)
            if 0 < missing <= len(defaults):
                self.arg_types.extend(ConstArgument.of(value) for value in defaults[len(defaults) - missing :])
            else:
                self.fail(self.tree, f"{func.__name__} takes {len(self.params)} arguments, {len(arg_types)} given")
        collector = _Assigned()
        collector.visit(self.tree)
        self.locals = list(dict.fromkeys(self.params + collector.names))
        # Arguments known while translating: bound as constants, or, where the
        # function assigns the parameter, as a local variable's first value.
        self.const_params = {
            name: t.value for name, t in zip(self.params, self.arg_types) if isinstance(t, ConstArgument) and name not in collector.names
        }
        self.initial_values = {
            name: t.value for name, t in zip(self.params, self.arg_types) if isinstance(t, ConstArgument) and name in collector.names
        }
        # Names assigned once, from an expression: constants where one is needed (N = 100; cuda.shared.array(N, ...)).
        self.single_assignments = {
            n.targets[0].id: n.value
            for n in ast.walk(self.tree)
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and collector.counts[n.targets[0].id] == 1
        }
        self.declared_where_assigned = _declared_where_assigned(self.tree, collector.counts, self.params)
        closure = dict(zip(func.__code__.co_freevars, (c.cell_contents for c in (func.__closure__ or ())))) if func.__closure__ else {}
        self.scope = {**vars(builtins), **func.__globals__, **closure}
        self.cpp_names = {name: cpp_identifier(name) for name in self.locals}
        self.evaluating: set[str] = set()
        self.aliases: dict[str, Any] = {}  # local names standing for translation-time objects

    # ---- errors ----
    def line_of(self, node: ast.AST) -> int:
        return getattr(node, "lineno", 1) + self.line_offset

    def fail(self, node: ast.AST, message: str) -> None:
        line = self.line_of(node)
        text = self.source_lines[line - self.line_offset - 1].strip() if 0 <= line - self.line_offset - 1 < len(self.source_lines) else ""
        raise TypingError(f'File "{self.file}", line {line}, in {self.func.__name__}:\n    {text}\n{message}')

    # ---- the passes ----
    def translate(self) -> str:
        self.var_types: dict[str, Type | None] = {name: None for name in self.locals if name not in self.const_params}
        for name, t in zip(self.params, self.arg_types):
            if not isinstance(t, ConstArgument):
                self.var_types[name] = t
        for _ in range(8):
            before = (dict(self.var_types), self.return_type)
            self.emit_body(final=False)
            if (self.var_types, self.return_type) == before:
                break
        return self.emit_body(final=True)

    def emit_body(self, final: bool) -> str:
        self.final = final
        self.lines: list[str] = []
        self.prologue: list[str] = []
        self.temporaries = 0
        self.local_names: set[str] = set(self.cpp_names.values())
        self.name_hint: str | None = None
        self.depth = 1
        for name, value in self.initial_values.items():
            self.assign_name(name, Value(None, None, value), self.tree)
        for stmt in self.tree.body:
            self.statement(stmt)
        if not final:
            return ""
        params, copies = [], []
        for name, t in zip(self.params, self.arg_types):
            if isinstance(t, ConstArgument):
                continue
            cpp = self.cpp_names[name]
            if isinstance(t, Scalar) and t.name == "uint64":
                # Launch arguments travel as signed 64-bit integers: the bits of a uint64.
                params.append(f"long long {cpp}_bits")
                declared = self.var_types[name] or t
                copies.append(f"  {declared.cpp} {cpp} = static_cast<{declared.cpp}>(static_cast<unsigned long long>({cpp}_bits));")
                continue
            declared = self.var_types[name] or t
            if declared == t:
                params.append(f"{t.cpp} {cpp}")
            else:
                params.append(f"{t.cpp} {cpp}_argument")
                copies.append(f"  {declared.cpp} {cpp} = {cast(Value(cpp + '_argument', t), declared)};")
        declarations = []
        for name in self.locals:
            if name in self.params and name not in self.initial_values:
                continue
            t = self.var_types[name]
            if t is None or isinstance(t, NoneType) or name in self.declared_where_assigned:
                continue
            declarations.append(f"  {t.cpp} {self.cpp_names[name]}{{}};")
        head = f"__global__ void {self.cpp_name}" if self.kernel else f"__device__ {(self.return_type or none).cpp} {self.cpp_name}"
        origin = f"// {self.func.__name__} from {self.file}:{self.line_of(self.tree)}"
        body = copies + self.prologue + declarations + self.lines
        return "\n".join([origin, f"{head}({', '.join(params)}) {{", *body, "}"])

    def out(self, line: str) -> None:
        self.lines.append("  " * self.depth + line)

    def line_directive(self, node: ast.AST) -> None:
        file = self.file.replace("\\", "\\\\").replace('"', '\\"')
        self.lines.append(f'#line {self.line_of(node)} "{file}"')

    def local_unique(self, base: str) -> str:
        return unique_name(base, self.local_names)

    def temporary(self, base: str = "lockstep_t") -> str:
        """A C++ name no Python name can take (those starting with "lockstep" get a "_")."""
        self.temporaries += 1
        return f"{base}{self.temporaries}" if base == "lockstep_t" else base

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
        if node.value is None:
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

    def const_int(self, node: ast.expr) -> int | None:
        try:
            v = self.const_value(node)
        except NotConstant:
            return None
        return int(v) if isinstance(v, (int, np.integer)) else None

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

    # ---- expressions ----
    def expr(self, node: ast.expr) -> Value:
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            self.fail(node, f"the expression {ast.unparse(node)!r} ({type(node).__name__}) is not supported in kernels")
        return method(node)

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
            return Value(None, None, self.scope[node.id])
        self.fail(node, f"name {node.id!r} is not defined")
        raise AssertionError

    def expr_Attribute(self, node: ast.Attribute) -> Value:
        base = self.expr(node.value)
        if base.is_const:
            c = base.const
            if isinstance(c, intr.Intrinsic) or not hasattr(c, node.attr):
                self.fail(node, f"{ast.unparse(node)} is not something kernels can use")
            return Value(None, None, getattr(c, node.attr))
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

    # ---- indexing ----
    def expr_Subscript(self, node: ast.Subscript) -> Value:
        base = self.expr(node.value)
        if base.is_const and isinstance(base.const, tuple):
            index = self.const_int(node.slice)
            if index is not None:
                return Value(None, None, base.const[index])
        base = self.runtime(base, node.value)
        if base.type is None:
            return Value(f"{base.code}[?]", None)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if isinstance(base.type, Tuple):
            if len(items) != 1 or isinstance(items[0], ast.Slice):
                self.fail(node, "a tuple takes one integer index")
            k = self.const_int(items[0])
            if k is not None:
                if not -base.type.count <= k < base.type.count:
                    self.fail(node, f"tuple index {k} is out of range for {base.type.count} items")
                return Value(base.items[k] if base.items else f"{base.code}.item[{k % base.type.count}]", base.type.item)
            index = self.runtime(self.expr(items[0]), items[0])
            return Value(f"{base.code}[{cast(index, int64)}]", base.type.item)
        if isinstance(base.type, Record):
            k = self.const_int(items[0]) if len(items) == 1 else None
            count = len(base.type.items)
            if k is None or not -count <= k < count:
                self.fail(node, f"a tuple of mixed types takes a constant index from {-count} to {count - 1}")
            assert k is not None
            return Value(record_item(base.code or "", k % count), base.type.items[k % count])
        if not isinstance(base.type, Array):
            self.fail(node, f"a {base.type} cannot be indexed")
        array = base.type
        assert isinstance(array, Array)
        # An index that is itself a tuple (a[idx] with idx a tuple variable).
        indices: list[Value | ast.Slice] = []
        for item in items:
            if isinstance(item, ast.Slice):
                indices.append(item)
                continue
            v = self.runtime(self.expr(item), item)
            if isinstance(v.type, Tuple):
                indices.extend(Value(f"{v.code}.item[{k}]", v.type.item) for k in range(v.type.count))
            elif isinstance(v.type, Record):
                indices.extend(Value(record_item(v.code or "", k), t) for k, t in enumerate(v.type.items))
            elif v.type is None or (isinstance(v.type, Scalar) and (v.type.is_integer or v.type.is_bool)):
                indices.append(v)
            else:
                self.fail(item, f"array indices must be integers, not {v.type}; convert with int(...)")
        if len(indices) > array.ndim:
            self.fail(node, f"too many indices ({len(indices)}) for a {array.ndim}-d array")
        if len(indices) == array.ndim and all(isinstance(i, Value) for i in indices):
            return Value(f"{base.code}({', '.join(i.code or '' for i in indices)})", array.dtype)  # type: ignore[union-attr]
        # A view: leading integers drop dimensions, slices cut them.
        leading = 0
        while leading < len(indices) and isinstance(indices[leading], Value):
            leading += 1
        code, ndim, contiguous = base.code, array.ndim, array.contiguous
        if leading:
            args = ", ".join(i.code or "" for i in indices[:leading])  # type: ignore[union-attr]
            code, ndim = f"{code}.template leading<{leading}>({args})", ndim - leading
        position = 0
        for item in indices[leading:]:
            if isinstance(item, Value):
                self.fail(node, "an integer index after a slice (a[:, i]) is not supported; index the element a[j, i] in a loop")
            else:
                code = f"{code}.sliced({position}, {self.slice_code(item)})"
                contiguous = False
                position += 1
        return Value(code, Array(array.dtype, ndim, contiguous, array.readonly))

    def slice_code(self, s: ast.Slice) -> str:
        def bound(n: ast.expr | None) -> tuple[str, str]:
            if n is None:
                return "false", "0"
            return "true", cast(self.runtime(self.expr(n), n), int64)

        has_start, start = bound(s.lower)
        has_stop, stop = bound(s.upper)
        step = cast(self.runtime(self.expr(s.step), s.step), int64) if s.step is not None else "1"
        return f"lockstep::py::make_slice({has_start}, {start}, {has_stop}, {stop}, {step})"

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


def translate_kernel(func: Callable[..., Any], arg_types: list[Type], name: str) -> str:
    """The CUDA C++ of kernel ``func`` for ``arg_types``, as ``__global__ void name(...)``."""
    program = Program()
    program.names.add(name)
    kernel = FunctionTranslator(program, func, list(arg_types), kernel=True, cpp_name=name).translate()
    header = "#include <lockstep/python_kernels.h>\n"
    return header + "\n\n".join(program.definitions + [kernel]) + "\n"
