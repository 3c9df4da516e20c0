"""What a function's names are, read from its AST before translating: the
names it assigns (local throughout, as Python makes them), those that can
be declared where they are assigned, and a read of one before any assignment
(which numba refuses)."""

from __future__ import annotations

import ast


class AssignedNames(ast.NodeVisitor):
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


def declared_where_assigned(function: ast.FunctionDef, counts: dict[str, int], params: list[str]) -> set[str]:
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


class _ReadsInOrder(ast.NodeVisitor):
    """The function's names read and assigned, in the order Python's bytecode
    evaluates them (an assignment's value before its targets, ``x += v`` reads
    x before v and stores after), which is the order numba's bytecode analysis
    meets them in: a local read with no assignment before it in that order is
    numba's NotDefinedError."""

    def __init__(self, local: set[str]) -> None:
        self.local = local
        self.assigned: set[str] = set()
        self.first_unassigned_read: ast.Name | None = None

    def read(self, node: ast.Name) -> None:
        if node.id in self.local and node.id not in self.assigned and self.first_unassigned_read is None:
            self.first_unassigned_read = node

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.read(node)
        else:
            self.assigned.add(node.id)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self.visit(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self.visit(node.target)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Name):
            self.read(node.target)
            self.visit(node.value)
            self.assigned.add(node.target.id)
        else:
            self.visit(node.target)
            self.visit(node.value)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self.visit(node.target)

    def visit_For(self, node: ast.For) -> None:
        self.visit(node.iter)
        self.visit(node.target)
        for stmt in node.body + node.orelse:
            self.visit(stmt)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        pass  # a nested function's names are its own (and kernels refuse nested functions)

    def visit_ListComp(self, node: ast.expr) -> None:
        pass  # a comprehension's names are its own scope's (and kernels refuse comprehensions, by their name)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]
    visit_Lambda = visit_FunctionDef  # type: ignore[assignment]
    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp


def read_before_assignment(function: ast.FunctionDef, assigned: list[str], params: list[str]) -> ast.Name | None:
    """The first read of a local variable (a name the function assigns) that no
    assignment precedes in evaluation order (``acc += x`` with no ``acc = 0``
    before it), or None. numba refuses such a function at compile time; Python
    would raise UnboundLocalError when it ran."""
    visitor = _ReadsInOrder(set(assigned) - set(params))
    for stmt in function.body:
        visitor.visit(stmt)
    return visitor.first_unassigned_read
