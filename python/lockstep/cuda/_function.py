"""One Python function (kernel or device function) translated for one set of
argument types: its source read, its names analysed, then two passes. The
typing pass walks the body until every variable's type is stable and gives a
table (FunctionTypes: variables, return type, every expression's type); the
emission pass writes the C++ reading that table, which it may not change.
Both passes walk the tree through the same rules (statements, expressions,
subscripts and calls are mixins, one file each): a rule gives an expression's
type and its code together, the typing pass keeps the types and writes no lines."""

from __future__ import annotations

import ast
import builtins
import inspect
import textwrap
from dataclasses import dataclass
from typing import Any, Callable

from ._calls import CallTranslator
from ._expressions import ExpressionTranslator
from ._local_names import AssignedNames, declared_where_assigned, read_before_assignment
from ._program import Program
from ._statements import StatementTranslator
from ._subscripts import SubscriptTranslator
from ._types import NoneType, Scalar, Type, none
from ._ufuncs import UfuncTranslator
from ._values import ConstArgument, TypingError, Value, cast, cpp_identifier, unique_name


@dataclass(frozen=True)
class FunctionTypes:
    """What the typing pass found for one function, which the emission pass reads:
    each variable's type, the return type, and the type of every expression node
    (by the node's id; the tree is parsed once, so both passes see the same nodes)."""

    variables: dict[str, Type | None]
    return_type: Type | None
    expressions: dict[int, Type | None]


class FunctionTranslator(StatementTranslator, ExpressionTranslator, SubscriptTranslator, CallTranslator, UfuncTranslator):
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
        collector = AssignedNames()
        collector.visit(self.tree)
        self.locals = list(dict.fromkeys(self.params + collector.names))
        unassigned = read_before_assignment(self.tree, collector.names, self.params)
        if unassigned is not None:
            name = unassigned.id
            self.fail(
                unassigned,
                f"the variable {name!r} is read here before any assignment to it (Python would raise UnboundLocalError; "
                f"numba refuses to compile it: \"Variable '{name}' is not defined\"); give it a value before this line (e.g. {name} = 0)",
            )
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
        self.declared_where_assigned = declared_where_assigned(self.tree, collector.counts, self.params)
        closure = dict(zip(func.__code__.co_freevars, (c.cell_contents for c in (func.__closure__ or ())))) if func.__closure__ else {}
        self.scope = {**vars(builtins), **func.__globals__, **closure}
        self.cpp_names = {name: cpp_identifier(name) for name in self.locals}
        self.evaluating: set[str] = set()
        self.aliases: dict[str, Any] = {}  # local names standing for translation-time objects
        # A ufunc on arrays is translated as its scalar call on each element: those calls' nodes, made once for both passes.
        self.ufunc_elements: dict[int, list[str]] = {}
        self.ufunc_calls: dict[int, ast.Call] = {}

    # ---- errors ----
    def line_of(self, node: ast.AST) -> int:
        return getattr(node, "lineno", 1) + self.line_offset

    def fail(self, node: ast.AST, message: str) -> None:
        line = self.line_of(node)
        text = self.source_lines[line - self.line_offset - 1].strip() if 0 <= line - self.line_offset - 1 < len(self.source_lines) else ""
        raise TypingError(f'File "{self.file}", line {line}, in {self.func.__name__}:\n    {text}\n{message}')

    # ---- the passes ----
    def translate(self) -> str:
        """The typing pass, then the emission pass over its table."""
        return self.emit(self.infer_types())

    def infer_types(self) -> FunctionTypes:
        """The typing pass: the body walked, its lines discarded, until every
        variable's type (and the return type) is stable; a variable takes the one
        type of all its assignments, as numba unifies."""
        self.typing = True
        self.var_types: dict[str, Type | None] = {name: None for name in self.locals if name not in self.const_params}
        for name, t in zip(self.params, self.arg_types):
            if not isinstance(t, ConstArgument):
                self.var_types[name] = t
        for _ in range(8):
            before = (dict(self.var_types), self.return_type)
            self.expression_types: dict[int, Type | None] = {}
            self.walk_body()
            if (self.var_types, self.return_type) == before:
                break
        # A variable still untyped here would reach the host compiler undeclared: refused at its first read instead.
        untyped = {name for name, t in self.var_types.items() if t is None and name not in self.aliases}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in untyped:
                self.fail(node, f"the variable {node.id!r} has no type numba's rules give it (each of its assignments needs its own value first)")
        return FunctionTypes(dict(self.var_types), self.return_type, self.expression_types)

    def emit(self, types: FunctionTypes) -> str:
        """The emission pass: the body written with the typing pass's types. It
        reads them from ``types`` and may not change them: an expression whose
        type differs from the table's is the translator's bug, not the user's."""
        self.typing = False
        self.types = types
        self.var_types = dict(types.variables)
        self.return_type = types.return_type
        self.walk_body()
        if self.var_types != types.variables or self.return_type != types.return_type:
            raise AssertionError(f"{self.func.__name__}: the emission pass changed a type the typing pass fixed")
        return self.definition()

    def walk_body(self) -> None:
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

    def typed(self, node: ast.AST, value: Value) -> Value:
        """``value``, the translation of expression ``node``: recorded in the typing pass, checked against the table in emission."""
        if self.typing:
            self.expression_types[id(node)] = value.type
        elif self.types.expressions.get(id(node), value.type) != value.type:
            raise AssertionError(f"{self.func.__name__}: {ast.unparse(node)} typed {self.types.expressions[id(node)]}, emitted as {value.type}")
        return value

    def definition(self) -> str:
        """The C++ function: its signature from the parameters' types, local declarations, then the body."""
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
        if not self.typing:  # the typing pass writes nothing
            self.lines.append("  " * self.depth + line)

    def line_directive(self, node: ast.AST) -> None:
        if self.typing:
            return
        file = self.file.replace("\\", "\\\\").replace('"', '\\"')
        self.lines.append(f'#line {self.line_of(node)} "{file}"')

    def local_unique(self, base: str) -> str:
        return unique_name(base, self.local_names)

    def temporary(self, base: str = "lockstep_t") -> str:
        """A C++ name no Python name can take (those starting with "lockstep" get a "_")."""
        self.temporaries += 1
        return f"{base}{self.temporaries}" if base == "lockstep_t" else base
