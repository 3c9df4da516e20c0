"""Indexing in kernels: array elements, views (leading integers and slices),
tuple and record items. A mixin of FunctionTranslator (_function.py)."""

from __future__ import annotations

import ast

from ._types import Array, Record, Scalar, Tuple, int64
from ._values import Value, cast, record_item


class SubscriptTranslator:
    """The subscripts of a FunctionTranslator."""

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
