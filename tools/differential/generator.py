"""Random CUDA kernels that are deterministic by construction (Csmith/CLsmith style).

Every kernel is generated from a seed, so `kernel(seed)` is reproducible. What keeps
each one deterministic, so that any difference between engines is a bug:
- integers only, unsigned (wrapping, no undefined overflow), shifts masked to 0..31,
  divisors forced odd (`| 1u`);
- shared memory: each thread writes only its own slots (`s[k][tid]`); between two
  barriers an array is either written (own slots), read (any slot) or updated by
  atomics, never two of these, and a thread reads its own slot only where no atomic
  may update it (`Phase` tracks it through branches and loops);
- barriers, warp collectives and calls holding barriers only where every thread
  (resp. every lane) is there: uniform branches and loops, converged code;
- atomics only commutative ones, their old value unused, and each address updated by one
  operation only (an atomicOr and an atomicMin on one word depend on their order): each
  operation has its own accumulator slots (`ATOMIC_OPS`, `accumulator`);
- early returns of a whole block, or of whole warps before the first barrier.

The grammar is the table `STATEMENTS` (and `STORAGES`, `EXPRESSION_LEAVES`): a row
is a weight, the context it needs and a function writing the statement.
"""

from __future__ import annotations

import dataclasses
import random

FULL = "0xffffffffu"
MAX_BLOCKS = 3
# The atomic operations, each with its own words of `acc`: one for the whole
# grid, then one per block (ACCUMULATORS in all), and its own shared slot.
ATOMIC_OPS = ["atomicAdd", "atomicXor", "atomicOr", "atomicAnd", "atomicMax", "atomicMin"]
SHARED_ATOMIC_OPS = ATOMIC_OPS[:3] + ["atomicMax"]
ACCUMULATORS = len(ATOMIC_OPS) * (1 + MAX_BLOCKS)


def accumulator(fn: str, per_block: bool) -> str:
    """The index in `acc` of operation fn's word: the grid's, or the running block's."""
    k = ATOMIC_OPS.index(fn)
    return f"{len(ATOMIC_OPS)}u + blockIdx.x * {len(ATOMIC_OPS)}u + {k}u" if per_block else f"{k}u"


@dataclasses.dataclass
class Storage:
    """A thread-private variable the kernel keeps live across barriers."""

    declaration: list[str]
    reads: list[str]  # expressions yielding unsigned, "{i}" = any index expression
    writes: list[str]  # lvalues, "{i}" = any index expression
    values: list[str]  # every element, folded into the output at the end
    array: str | None = None  # a plain unsigned[4] a device function may write through a pointer


def _storage_array(g: Gen, name: str) -> Storage:
    return Storage(
        [f"unsigned {name}[4] = {{tid, {g.const()}, {g.const()}, tid ^ {g.const()}}};"],
        [f"{name}[({{i}}) & 3u]"],
        [f"{name}[({{i}}) & 3u]"],
        [f"{name}[{k}]" for k in range(4)],
        name,
    )


def _storage_struct_array(g: Gen, name: str) -> Storage:
    return Storage(
        [f"agg {name} = {{{{tid, {g.const()}, 3u, tid * 5u}}, {g.const()}}};"],
        [f"{name}.a[({{i}}) & 3u]", f"{name}.x"],
        [f"{name}.a[({{i}}) & 3u]", f"{name}.x"],
        [f"{name}.a[{k}]" for k in range(4)] + [f"{name}.x"],
    )


def _storage_struct_pointer(g: Gen, name: str) -> Storage:
    return Storage(
        [f"unsigned {name}_store[4] = {{{g.const()}, tid, tid + 1u, {g.const()}}};", f"holder {name}{{{name}_store}};"],
        [f"{name}.p[({{i}}) & 3u]"],
        [f"{name}.p[({{i}}) & 3u]"],
        [f"{name}_store[{k}]" for k in range(4)],
        f"{name}_store",
    )


def _storage_array_of_structs(g: Gen, name: str) -> Storage:
    return Storage(
        [
            f"agg {name}[2];",
            f"for (unsigned q = 0; q < 2u; ++q) {{ for (unsigned r = 0; r < 4u; ++r) {name}[q].a[r] = tid * (q + 1u) + r; {name}[q].x = q; }}",
        ],
        [f"{name}[({{i}}) & 1u].a[({{i}}) & 3u]", f"{name}[({{i}}) & 1u].x"],
        [f"{name}[({{i}}) & 1u].a[({{i}}) & 3u]"],
        [f"{name}[{q}].a[{k}]" for q in range(2) for k in range(4)] + [f"{name}[{q}].x" for q in range(2)],
    )


def _storage_view(g: Gen, name: str) -> Storage:
    return Storage(
        [f"unsigned {name}_store[4] = {{tid, {g.const()}, tid * 3u, {g.const()}}};", f"view {name}{{{name}_store}};"],
        [f"{name}[({{i}}) & 3u]"],
        [f"{name}[({{i}}) & 3u]"],
        [f"{name}_store[{k}]" for k in range(4)],
        f"{name}_store",
    )


def _storage_reference(g: Gen, name: str) -> Storage:
    return Storage(
        [f"unsigned {name}_store[2] = {{tid + {g.const()}, {g.const()}}};", f"unsigned& {name} = {name}_store[{g.rng.randrange(2)}];"],
        [name, f"{name}_store[({{i}}) & 1u]"],
        [name],
        [f"{name}_store[{k}]" for k in range(2)],
    )


def _storage_wide(g: Gen, name: str) -> Storage:
    return Storage(
        [f"unsigned long long {name}[2] = {{tid * 0x100000001ull, {g.const()}ll << 33}};"],
        [f"(unsigned)({name}[({{i}}) & 1u] >> 17)", f"(unsigned){name}[({{i}}) & 1u]"],
        [f"{name}[({{i}}) & 1u]"],
        [f"(unsigned)({name}[{k}] >> 32)" for k in range(2)] + [f"(unsigned){name}[{k}]" for k in range(2)],
    )


# name, weight, builder
STORAGES = [
    ("array", 3, _storage_array),
    ("struct_array", 2, _storage_struct_array),
    ("struct_pointer", 2, _storage_struct_pointer),
    ("array_of_structs", 1, _storage_array_of_structs),
    ("view", 3, _storage_view),
    ("reference", 2, _storage_reference),
    ("wide", 1, _storage_wide),
]


class Phase:
    """What each shared array has been used for since the last barrier, on some path."""

    def __init__(self, uses: dict[str, frozenset[str]] | None = None):
        self.uses = dict(uses or {})

    def copy(self) -> Phase:
        return Phase(self.uses)

    def allows(self, array: str, use: str) -> bool:
        # A thread's read of its own slot ("own") goes with its writes and
        # everyone's reads, not with atomics (another thread's may land on the slot).
        return self.uses.get(array, frozenset()) - ({"own"} if use != "atomic" else set()) <= {use}

    def add(self, array: str, use: str) -> None:
        self.uses[array] = self.uses.get(array, frozenset()) | {use}

    def merge(self, other: Phase) -> None:
        for a, u in other.uses.items():
            self.uses[a] = self.uses.get(a, frozenset()) | u

    def barrier(self) -> None:
        self.uses.clear()


@dataclasses.dataclass
class Where:
    uniform: bool  # every thread of the block is here (barriers allowed)
    converged: bool  # every lane of the warp is here (warp collectives allowed)
    depth: int
    in_loop_with_barrier: bool = False


class Gen:
    """One kernel: call `kernel()`."""

    def __init__(self, seed: int, name: str):
        self.rng = random.Random(seed)
        self.name = name
        self.counter = 0
        self.lines: list[str] = []
        self.indent = 1
        self.phase = Phase()
        self.vars: list[str] = []  # thread-private scalars
        self.uniform_vars: list[str] = ["n", "blockIdx.x", "NT"]
        self.loop_vars: list[str] = []  # read, never assigned
        self.storages: list[Storage] = []
        self.shared: list[tuple[str, int]] = []  # name, rows
        self.features: set[str] = set()
        self.barriers = 0
        self.threads_returned = False

    # --- small pieces -----------------------------------------------------
    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def const(self) -> str:
        return f"{self.rng.choice([0, 1, 2, 3, 5, 7, 31, 255, 0x9E37, 0x7FFFFFFF, 0xDEADBEEF, self.rng.randrange(1 << 32)])}u"

    def emit(self, line: str) -> None:
        self.lines.append("  " * self.indent + line)

    def pick(self, rows):
        return self.rng.choices(rows, weights=[r[1] for r in rows])[0]

    # --- expressions -----------------------------------------------------
    def uniform_expr(self, depth: int = 0) -> str:
        r = self.rng.random()
        if depth > 1 or r < 0.5:
            return self.rng.choice(self.uniform_vars + [self.const()])
        a, b = self.uniform_expr(depth + 1), self.uniform_expr(depth + 1)
        return self.rng.choice([f"({a} + {b})", f"({a} ^ {b})", f"({a} * {b})", f"cdiv({a}, ({b}) | 1u)", f"mix<unsigned>({a}, {b})"])

    def leaf(self) -> str:
        kinds = ["var", "var", "const", "tid", "in", "uniform"]
        if self.storages:
            kinds += ["storage", "storage"]
        readable = [s for s, _ in self.shared if self.phase.allows(s, "read")]
        own = [s for s, _ in self.shared if "atomic" not in self.phase.uses.get(s, frozenset())]
        if readable:
            kinds += ["shared_any"] * 2
        if own:
            kinds += ["shared_own"]
        k = self.rng.choice(kinds)
        if k == "var" and self.vars + self.loop_vars:
            return self.rng.choice(self.vars + self.loop_vars)
        if k == "tid":
            return self.rng.choice(["tid", "lane", "warp", "gid"])
        if k == "in":
            return f"in[({self.small_expr()}) % 1024u]"
        if k == "uniform":
            return self.rng.choice(self.uniform_vars)
        if k == "storage":
            return self.rng.choice(self.rng.choice(self.storages).reads).replace("{i}", self.small_expr())
        if k == "shared_any":
            s = self.rng.choice(readable)
            self.phase.add(s, "read")
            return f"{s}[{self.rng.randrange(self.shared_rows(s))}][({self.small_expr()}) % ACTIVE]"
        if k == "shared_own":
            s = self.rng.choice(own)
            self.phase.add(s, "own")
            return f"{s}[{self.rng.randrange(self.shared_rows(s))}][tid]"
        return self.const()

    def small_expr(self) -> str:
        return self.rng.choice(self.vars + ["tid", "lane", self.const()]) if self.vars else "tid"

    def shared_rows(self, name: str) -> int:
        return dict(self.shared)[name]

    def expr(self, depth: int = 0) -> str:
        if depth > 2 or self.rng.random() < 0.35:
            return self.leaf()
        a, b = self.expr(depth + 1), self.expr(depth + 1)
        return self.rng.choice(
            [
                f"({a} + {b})",
                f"({a} - {b})",
                f"({a} * {b})",
                f"({a} ^ {b})",
                f"({a} & {b})",
                f"({a} | {b})",
                f"({a} << (({b}) & 31u))",
                f"({a} >> (({b}) & 31u))",
                f"({a} / (({b}) | 1u))",
                f"({a} % (({b}) | 1u))",
                f"({a} < {b} ? {a} : {b})",
                f"mix<unsigned>({a}, {b})",
                f"rotl({a}, {b})",
            ]
        )

    def condition(self) -> str:
        return f"(({self.expr(1)}) & {self.rng.choice([1, 3, 7])}u) == 0u"

    def uniform_condition(self) -> str:
        return f"(({self.uniform_expr()}) & {self.rng.choice([1, 3])}u) == 0u"

    # --- statements ------------------------------------------------------
    def block(self, where: Where, count: int) -> None:
        for _ in range(count):
            rows = [r for r in STATEMENTS if r[2](self, where)]
            self.pick(rows)[3](self, where)

    def nested(self, header: str, where: Where, count: int) -> None:
        self.emit(header + " {")
        self.indent += 1
        self.block(where, count)
        self.indent -= 1
        self.emit("}")

    def inner(self, where: Where, **changes) -> Where:
        return dataclasses.replace(where, depth=where.depth + 1, **changes)


def _assign(g: Gen, w: Where) -> None:
    if not g.vars or g.rng.random() < 0.25:
        v = g.fresh("v")
        g.emit(f"unsigned {v} = {g.expr()};")
        if w.depth == 0:
            g.vars.append(v)
        return
    g.emit(f"{g.rng.choice(g.vars)} {g.rng.choice(['=', '+=', '^=', '*='])} {g.expr()};")


def _mixed_declaration(g: Gen, w: Where) -> None:
    """One declaration of a value every thread has alike and one of its own (`tile = blockDim.x, tr = threadIdx.y`)."""
    u, v = g.fresh("u"), g.fresh("v")
    declarators = [f"{u} = {g.uniform_expr()}", f"{v} = {g.expr()}"]
    g.rng.shuffle(declarators)
    g.emit(f"unsigned {', '.join(declarators)};")
    if w.depth == 0:
        g.uniform_vars.append(u)
        g.vars.append(v)


def _storage_write(g: Gen, w: Where) -> None:
    s = g.rng.choice(g.storages)
    g.emit(f"{g.rng.choice(s.writes).replace('{i}', g.small_expr())} = {g.expr()};")


def _shared_write(g: Gen, w: Where) -> None:
    own = [s for s, _ in g.shared if g.phase.allows(s, "write")]
    if not own:
        return _assign(g, w)
    s = g.rng.choice(own)
    value = g.expr()
    if not g.phase.allows(s, "write"):  # the value read it from others' slots
        return g.emit(f"{g.rng.choice(g.vars) if g.vars else 'out[gid * 4u]'} ^= {value};")
    g.phase.add(s, "write")
    g.emit(f"{s}[{g.rng.randrange(g.shared_rows(s))}][tid] = {value};")


def _output_write(g: Gen, w: Where) -> None:
    g.emit(f"out[gid * 4u + {g.rng.randrange(3)}u] {g.rng.choice(['=', '^=', '+='])} {g.expr()};")


def _branch(g: Gen, w: Where) -> None:
    # Threads of the block take both sides within one phase: the else side
    # continues the phase the then side used (a write there and a read here race).
    inside = g.inner(w, uniform=False, converged=False)
    g.nested(f"if ({g.condition()})", inside, g.rng.randint(1, 3))
    if g.rng.random() < 0.5:
        g.nested("else", inside, g.rng.randint(1, 2))


def _uniform_branch(g: Gen, w: Where) -> None:
    g.features.add("uniform_branch")
    inside = g.inner(w)
    before = g.phase.copy()
    g.nested(f"if ({g.uniform_condition()})", inside, g.rng.randint(1, 4))
    taken, g.phase = g.phase, before.copy()
    if g.rng.random() < 0.5:
        g.nested("else", inside, g.rng.randint(1, 3))
    g.phase.merge(taken)


def _uniform_loop(g: Gen, w: Where) -> None:
    i = g.fresh("i")
    bound = g.pick(LOOP_BOUNDS)[2](g)
    g.features.add("uniform_loop")
    before = g.phase.copy()
    g.emit(f"for (unsigned {i} = 0; {i} < {bound}; ++{i}) {{")
    g.indent += 1
    g.uniform_vars.append(i)
    g.loop_vars.append(i)
    g.block(g.inner(w, in_loop_with_barrier=True), g.rng.randint(2, 5))
    # The next iteration's first phase continues this one's last: end on a barrier.
    g.emit("__syncthreads();")
    g.barriers += 1
    g.uniform_vars.remove(i)
    g.loop_vars.remove(i)
    g.indent -= 1
    g.emit("}")
    g.phase = before  # zero trips leave it; any trip ends on a barrier


def _thread_loop(g: Gen, w: Where) -> None:
    i = g.fresh("j")
    g.emit(f"for (unsigned {i} = 0, {i}_end = ({g.small_expr()}) & 3u; {i} < {i}_end; ++{i}) {{")
    g.indent += 1
    g.loop_vars.append(i)
    before = g.phase.copy()
    g.block(g.inner(w, uniform=False, converged=False), g.rng.randint(1, 3))
    g.phase.merge(before)
    g.loop_vars.remove(i)
    g.indent -= 1
    g.emit("}")


def _barrier(g: Gen, w: Where) -> None:
    g.barriers += 1
    r = g.rng.random()
    if r < 0.7:
        g.phase.barrier()
        g.emit("__syncthreads();")
    else:
        v = g.fresh("u")
        fn = g.rng.choice(["__syncthreads_count", "__syncthreads_or", "__syncthreads_and"])
        g.features.add("syncthreads_reduction")
        condition = g.condition()  # evaluated before the barrier: its reads belong to the phase that ends
        g.phase.barrier()
        g.emit(f"const unsigned {v} = {fn}({condition});")
        g.uniform_vars.append(v) if w.depth == 0 else None


def _shared_broadcast(g: Gen, w: Where) -> None:
    """A value every thread reads from one slot after a barrier: uniform."""
    readable = [s for s, _ in g.shared if g.phase.allows(s, "read")]
    if not readable or w.depth > 0:
        return _barrier(g, w)
    s = g.rng.choice(readable)
    g.phase.add(s, "read")
    u = g.fresh("u")
    g.emit(f"const unsigned {u} = {s}[0][{g.rng.randrange(32)}u] & 7u;")
    g.uniform_vars.append(u)
    g.features.add("shared_broadcast")


def _warp_op(g: Gen, w: Where) -> None:
    g.features.add("warp")
    v = g.rng.choice(g.vars) if g.vars else "tid"
    target = g.fresh("v")
    op = g.rng.choice(
        [
            f"__shfl_sync({FULL}, {v}, ({g.small_expr()}) & 31u)",
            f"__shfl_xor_sync({FULL}, {v}, {g.rng.choice([1, 2, 4, 8, 16])})",
            f"__shfl_up_sync({FULL}, {v}, {g.rng.randrange(1, 32)})",
            f"__shfl_down_sync({FULL}, {v}, {g.rng.randrange(1, 32)})",
            f"__ballot_sync({FULL}, {g.condition()})",
            f"(unsigned)__all_sync({FULL}, {g.condition()})",
            f"(unsigned)__any_sync({FULL}, {g.condition()})",
            f"(unsigned)__shfl_sync({FULL}, (unsigned long long){v} * 0x100000001ull, lane ^ 1u)",
        ]
    )
    g.emit(f"unsigned {target} = {op};")
    if w.depth == 0:
        g.vars.append(target)
    else:
        g.emit(f"out[gid * 4u + 2u] ^= {target};")


def _warp_scan(g: Gen, w: Where) -> None:
    """The numba users' warp scan of issue 51 (int64 values)."""
    g.features.add("warp_scan")
    s, d = g.fresh("scan"), g.fresh("d")
    g.emit(f"long long {s} = (long long)({g.expr(1)}) - 1000;")
    g.emit(f"for (unsigned {d} = 1; {d} < 32u; {d} *= 2u) {{")
    g.emit(f"  long long t_{s} = __shfl_up_sync({FULL}, {s}, {d});")
    g.emit(f"  if (lane >= {d}) {s} += t_{s};")
    g.emit("}")
    v = g.fresh("v")
    g.emit(f"unsigned {v} = (unsigned){s} ^ (unsigned)({s} >> 32);")
    if w.depth == 0:
        g.vars.append(v)
    else:
        g.emit(f"out[gid * 4u + 1u] += {v};")


def _global_atomic(g: Gen, w: Where) -> None:
    g.features.add("atomic")
    fn = g.rng.choice(ATOMIC_OPS)
    g.emit(f"{fn}(&acc[{accumulator(fn, g.rng.random() < 0.5)}], {g.expr()});")


def _shared_atomic(g: Gen, w: Where) -> None:
    ok = [s for s, _ in g.shared if g.phase.allows(s, "atomic")]
    if not ok:
        return _global_atomic(g, w)
    s = g.rng.choice(ok)
    value = g.expr()
    if not g.phase.allows(s, "atomic"):
        return g.emit(f"atomicAdd(&acc[{accumulator('atomicAdd', False)}], {value});")
    g.phase.add(s, "atomic")
    g.features.add("shared_atomic")
    fn = g.rng.choice(SHARED_ATOMIC_OPS)
    g.emit(f"{fn}(&{s}[0][{SHARED_ATOMIC_OPS.index(fn)}u], {value});")


def _block_call(g: Gen, w: Where) -> None:
    """A device function holding barriers (begins and ends with one)."""
    g.features.add("device_call_barrier")
    g.barriers += 1
    arg = g.expr(1)  # evaluated before the function's first barrier: in the caller's phase
    g.phase.barrier()
    fn = g.rng.choice(["block_sum<NT, ACTIVE>", "block_max<NT, ACTIVE>", "neighbour<NT, ACTIVE>"])
    if g.vars:
        g.emit(f"{g.rng.choice(g.vars)} ^= {fn}(scratch, {arg}, tid);")
    else:
        g.emit(f"out[gid * 4u + 1u] = {fn}(scratch, {arg}, tid);")


def _local_call(g: Gen, w: Where) -> None:
    """A device function writing thread-private storage through a pointer."""
    g.features.add("device_call_private")
    arrays = [s.array for s in g.storages if s.array]
    if not arrays:
        return _storage_write(g, w)
    target = g.rng.choice(arrays)
    g.emit(f"put_slot({target}, {g.small_expr()}, {g.expr(1)});")


def _lambda(g: Gen, w: Where) -> None:
    if not g.storages or w.depth > 0:
        return _assign(g, w)
    g.features.add("lambda")
    s = g.rng.choice(g.storages)
    f = g.fresh("f")
    written = g.rng.choice(s.writes).replace("{i}", "x")
    read = g.rng.choice(s.reads).replace("{i}", "x + 1u")
    g.emit(f"auto {f} = [&](unsigned x) {{ {written} += x; return {read}; }};")
    v = g.fresh("v")
    g.emit(f"unsigned {v} = {f}({g.expr(1)});")
    g.vars.append(v)


def _uniform_return(g: Gen, w: Where) -> None:
    g.features.add("uniform_return")
    g.emit(f"if (blockIdx.x == {g.rng.randrange(3)}u && ({g.uniform_expr()} & 3u) == 1u) return;")


def _never(g: Gen, w: Where) -> bool:
    return False


def _always(g: Gen, w: Where) -> bool:
    return True


def _uniform(g: Gen, w: Where) -> bool:
    return w.uniform and w.depth < 3


def _converged(g: Gen, w: Where) -> bool:
    return w.converged


def _has_storage(g: Gen, w: Where) -> bool:
    return bool(g.storages)


# name, weight, where it may go, writer
STATEMENTS = [
    ("assign", 8, _always, _assign),
    ("mixed_declaration", 2, _always, _mixed_declaration),
    ("storage_write", 5, _has_storage, _storage_write),
    ("shared_write", 6, _always, _shared_write),
    ("output_write", 2, _always, _output_write),
    ("branch", 3, lambda g, w: w.depth < 3, _branch),
    ("thread_loop", 1, lambda g, w: w.depth < 3, _thread_loop),
    ("uniform_branch", 2, _uniform, _uniform_branch),
    ("uniform_loop", 3, _uniform, _uniform_loop),
    ("barrier", 6, lambda g, w: w.uniform, _barrier),
    ("shared_broadcast", 2, lambda g, w: w.uniform, _shared_broadcast),
    ("warp_op", 3, _converged, _warp_op),
    ("warp_scan", 1, _converged, _warp_scan),
    ("global_atomic", 2, _always, _global_atomic),
    ("shared_atomic", 2, _always, _shared_atomic),
    ("block_call", 2, lambda g, w: w.uniform, _block_call),
    ("local_call", 2, _has_storage, _local_call),
    ("lambda", 1, _has_storage, _lambda),
    ("uniform_return", 1, lambda g, w: w.uniform, _uniform_return),
]


# name, weight, bound writer: uniform loop bounds
LOOP_BOUNDS = [
    ("constant", 3, lambda g: f"{g.rng.randint(1, 4)}u"),
    ("cdiv", 3, lambda g: f"cdiv(n, {g.rng.choice(['TILE', '16u', '8u'])})"),
    ("uniform_value", 2, lambda g: f"(({g.uniform_expr()}) & 3u) + 1u"),
]

# how the thread count NT is spelled: the constexpr-tile-size idiom of issue 51 among them
SIZE_SPELLINGS = [
    ("template", 3),
    ("kernel_constexpr", 2),
    ("namespace_constexpr", 2),
]


@dataclasses.dataclass
class Kernel:
    name: str
    seed: int
    source: str  # the kernel's definition (and its namespace-scope constants)
    launch: str  # the statement launching it
    blocks: int
    threads: int
    features: set[str]


def kernel(seed: int, name: str | None = None) -> Kernel:
    """The kernel of this seed."""
    name = name or f"k{seed}"
    g = Gen(seed, name)
    rng = g.rng
    threads = rng.choice([32, 64, 96, 128, 256])
    blocks = rng.randint(1, MAX_BLOCKS)
    active = threads if threads == 32 or rng.random() < 0.8 else 32 * rng.randrange(1, threads // 32)
    tile = rng.choice([4, 8, 16, 32])
    spelling = g.pick(SIZE_SPELLINGS)[0]
    g.features.add("size_" + spelling)
    g.emit("const unsigned tid = threadIdx.x, lane = tid & 31u, warp = tid / 32u;")
    g.emit("const unsigned gid = blockIdx.x * NT + tid;")
    if active != threads:
        g.features.add("warp_return")
        g.emit("if (tid >= ACTIVE) return;  // whole warps, before any barrier")
    for _ in range(rng.randint(1, 3)):
        s, rows = g.fresh("s"), rng.randint(1, 2)
        g.shared.append((s, rows))
        g.emit(f"__shared__ unsigned {s}[{rows}][NT];")
        for r in range(rows):
            g.emit(f"{s}[{r}][tid] = in[(gid * {r + 1}u + {r}u) % 1024u] ^ tid;")
    g.emit("__shared__ unsigned scratch[NT];")
    for _ in range(rng.randint(1, 3)):
        row = g.pick(STORAGES)
        st = row[2](g, g.fresh("p"))
        g.features.add("storage_" + row[0])
        for d in st.declaration:
            g.emit(d)
        g.storages.append(st)
    g.emit("__syncthreads();")
    g.block(Where(uniform=True, converged=True, depth=0), rng.randint(6, 14))
    values = list(g.vars) + [v for s in g.storages for v in s.values]
    g.emit("unsigned long long h = 1469598103934665603ull;")
    for v in values:
        g.emit(f"h = (h ^ (unsigned)({v})) * 1099511628211ull;")
    g.emit("out[gid * 4u + 3u] = h;")
    body = "\n".join(g.lines)
    params = "const unsigned* __restrict__ in, unsigned long long* out, unsigned* acc, unsigned n"
    consts = f"constexpr unsigned ACTIVE = {active}u, TILE = {tile}u;"
    if spelling == "template":
        source = f"template <unsigned NT>\n__global__ void {name}({params}) {{\n  {consts}\n{body}\n}}\n"
        launch = f"{name}<{threads}u><<<{blocks}, {threads}>>>(in, out, acc, n)"
    elif spelling == "kernel_constexpr":
        source = f"__global__ void {name}({params}) {{\n  constexpr unsigned NT = {threads}u;\n  {consts}\n{body}\n}}\n"
        launch = f"{name}<<<{blocks}, {threads}>>>(in, out, acc, n)"
    else:
        source = f"namespace {name}_sizes {{\nconstexpr unsigned NT = {threads}u;\n{consts}\n}}  // namespace {name}_sizes\n"
        source += f"__global__ void {name}({params}) {{\n  using namespace {name}_sizes;\n{body}\n}}\n"
        launch = f"{name}<<<{blocks}, {threads}>>>(in, out, acc, n)"
    if g.barriers:
        g.features.add("barriers")
    return Kernel(name, seed, source, launch, blocks, threads, g.features)
