"""What a function's names are, read from its AST before translating: the
names it assigns (local throughout, as Python makes them) and those that can
be declared where they are assigned."""

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
