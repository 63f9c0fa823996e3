"""A vectorised SIMT simulator and a memory-coalescing calculator for one warp's addresses.

A kernel is a short list of statements in a small Python form:

    kernel = [
        Let("x", lambda v: v["data"][v["tid"]]),                # one instruction
        If(lambda v: v["x"] > 0,
           then=[Let("y", lambda v: v["x"] * 2)],
           orelse=[Let("y", lambda v: -v["x"]), Let("y", lambda v: v["y"] + 1)]),
        While(lambda v: v["y"] > 1, [Let("y", lambda v: v["y"] // 2)]),
    ]

``run_simt`` runs it over every thread at once: each variable is an array with one value per
thread, and an active mask says which threads execute. A statement issues one instruction for
every warp with at least one active lane and fills one lane-slot per active lane; a branch that
splits a warp runs both paths, each with the other path's lanes masked off; a loop runs until
no lane of the warp wants another iteration. So, per warp w,

    issued[w] += 1 if active_lanes(w) > 0,   slots[w] += active_lanes(w)    (each statement)
    SIMT efficiency = active lane-slots / (issued instructions * warp size)

How it stays fast: the threads are held in *groups*, sorted by thread id so that each warp's
threads are contiguous; a group keeps its own array of each variable over just its threads.
A branch only masks (both paths run over the group); a loop, once most of its group has left,
continues on a new group of the threads still looping, so each later instruction costs NumPy
work in proportion to those threads, not to all of them. When the loop ends, the new group's
variables are copied back. The per-warp counts of a mask are computed once (np.add.reduceat over
the warps' runs of threads) and reused by every instruction issued under it. Kernel functions
therefore see the arrays of the current group: they must compute each thread's value from that
thread's own values (and from shared inputs indexed with ``v["tid"]``), as CUDA threads do.

Coalescing: a warp's load is served in 32-byte sectors of 128-byte cache lines
(CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory"), so

    efficiency = bytes requested / bytes moved = distinct bytes asked for / (32 * sectors touched)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ._validate import check_array, check_choice, check_int

#: Byte addresses stay below 2**48 (256 TiB), the virtual address space of a GPU.
MAX_ADDRESS = 2 ** 48


def _check_last_address(last: int, formula: str) -> None:
    if last >= MAX_ADDRESS:
        raise ValueError(f"the warp's last address, {formula} = {last:.3g} bytes, must stay below "
                         f"2**48 (256 TiB, a GPU's virtual address space); use smaller arguments")

__all__ = [
    "Let", "If", "While",
    "SimtResult", "run_simt",
    "SECTOR_BYTES", "LINE_BYTES",
    "Coalescing", "coalescing", "strided_addresses", "aos_addresses", "soa_addresses",
]

#: DRAM/L2 access granularity of NVIDIA GPUs of compute capability 6.0 on (CUDA C++ Best Practices Guide,
#: "Coalesced Access to Global Memory": accesses are serviced in 32-byte transactions).
SECTOR_BYTES = 32
#: L1/L2 cache line: four sectors (CUDA C++ Programming Guide, compute capability 5.x+ global memory).
LINE_BYTES = 128


@dataclass(frozen=True)
class Let:
    """``name = fn(vars)`` for the active lanes: one instruction."""

    name: str
    fn: Callable
    label: str = ""

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise TypeError(f"Let name must be an identifier string, got {self.name!r}")
        if not callable(self.fn):
            raise TypeError("Let fn must be callable: fn(vars) -> array")


@dataclass(frozen=True)
class If:
    """Evaluate ``cond`` (one instruction), then run ``then`` on lanes where it holds and ``orelse``
    on the others. A warp whose lanes all agree runs one path only."""

    cond: Callable
    then: Sequence = ()
    orelse: Sequence = ()
    label: str = "if"

    def __post_init__(self):
        if not callable(self.cond):
            raise TypeError("If cond must be callable: cond(vars) -> bool array")


@dataclass(frozen=True)
class While:
    """Loop: test ``cond`` (one instruction) and run ``body`` while any lane of the warp needs it."""

    cond: Callable
    body: Sequence = ()
    label: str = "while"
    max_iterations: int = 100_000

    def __post_init__(self):
        if not callable(self.cond):
            raise TypeError("While cond must be callable: cond(vars) -> bool array")
        check_int("max_iterations", self.max_iterations, min_value=1, max_value=10_000_000)


@dataclass(frozen=True)
class SimtResult:
    """What a SIMT run issued and computed, per warp and in total."""

    n_threads: int
    warp_size: int
    issued_per_warp: np.ndarray        # instructions each warp issued
    active_slots_per_warp: np.ndarray  # lane-slots that did useful work
    variables: dict                    # final value of every variable, one per thread
    trace: np.ndarray = field(repr=False)   # (issues, warp_size) bool: lanes of the traced warp
    trace_labels: tuple = field(repr=False, default=())
    traced_warp: int = 0
    schedule: str = "stack"

    @property
    def n_warps(self) -> int:
        return int(self.issued_per_warp.size)

    @property
    def issued(self) -> int:
        """Total instructions issued over all warps."""
        return int(self.issued_per_warp.sum())

    @property
    def active_lane_slots(self) -> int:
        return int(self.active_slots_per_warp.sum())

    @property
    def simt_efficiency(self) -> float:
        """active lane-slots / (issued * warp_size), in (0, 1]."""
        return self.active_lane_slots / (self.issued * self.warp_size) if self.issued else 1.0

    @property
    def time_cycles(self) -> int:
        """Issue cycles of the slowest warp (one instruction per cycle per warp)."""
        return int(self.issued_per_warp.max()) if self.issued_per_warp.size else 0


#: A loop moves to a new group of its remaining threads once they are at most this fraction of
#: its group (measured: 0.5 to 0.85 are about equally fast on the Collatz benchmark).
_COMPACT_BELOW = 0.7
#: Issue counts are tallied in batches of this many _Actives (small matrices stay in cache).
_TALLY_EVERY = 32


class _Active:
    """Which threads of a group execute a block: a mask over the group (None: all of them), the
    count of those threads in each of the group's warps, and how many instructions they issued."""

    __slots__ = ("mask", "counts", "total", "times", "row", "_positions")

    def __init__(self, mask, counts, total):
        self.mask, self.counts, self.total = mask, counts, total
        self.times = 0
        self.row = False                   # traced warp's lane mask, computed on first issue
        self._positions = None

    def positions(self):
        """Indices of the active threads within the group. Writing through indices costs the same
        whatever the mask looks like; a boolean mask (x[mask], np.where) is several times slower
        when the lanes that branch one way are scattered unpredictably, as in divergent code."""
        if self._positions is None:
            self._positions = self.mask.nonzero()[0]
        return self._positions


_NOBODY = _Active(None, None, 0)


class _Vars(dict):
    """A group's variables for the kernel's functions: ``v[name]`` holds one value per thread of
    the group. Per-thread variables are copied from the parent group on first use; any other
    name is a shared input."""

    def __init__(self, group):
        super().__init__()
        self.group = group

    def __missing__(self, name):
        g = self.group
        if name in g.machine.per_thread:
            if g.parent is not None:
                value = g.parent.vars[name][g.sel]
            else:                         # an input that a Let overwrites: one copy per thread
                value = np.array(np.broadcast_to(g.machine.shared[name], (g.size,)))
            self[name] = value
            return value
        return g.machine.shared[name]     # shared input (or KeyError, as for any unknown name)


class _Group:
    """Threads that run a stretch of the kernel together, stored compactly: their ids in ascending
    order (so each warp's threads are contiguous) and a private array of each variable over them.

    ``warps[i]`` has ``counts[i]`` threads here, starting at position ``starts[i]``."""

    def __init__(self, machine, parent, sel, warps, counts):
        self.machine, self.parent, self.sel = machine, parent, sel
        self.warps, self.counts = warps, counts
        self.starts = np.zeros(counts.size, dtype=np.intp)
        np.cumsum(counts[:-1], out=self.starts[1:])
        self.size = int(counts.sum())
        self.vars = _Vars(self)
        self.written = []                 # names to copy back into the parent group on close
        self.actives = []                 # _Actives with issues not yet tallied
        self._ids = None
        self.everyone = _Active(None, counts, self.size)
        self.trace_pos = None             # index of the traced warp in ``warps``, if it is here
        tw = machine.trace_warp
        if tw is not None:
            p = int(np.searchsorted(warps, tw))
            if p < warps.size and warps[p] == tw:
                self.trace_pos = p

    @property
    def ids(self):
        """Thread ids of the group's threads."""
        if self._ids is None:
            self._ids = self.parent.ids[self.sel]
        return self._ids

    def select(self, act, cond, rest=None):
        """The threads of ``act`` where ``cond`` (a mask over the group) holds; ``rest``, if given,
        is the _Active of the threads of ``act`` where it does not."""
        mask = cond if act.mask is None else act.mask & cond
        total = act.total - rest.total if rest is not None else int(np.count_nonzero(mask))
        if total == act.total:
            return act                    # the same threads: they share one tally
        if total == 0:
            return _NOBODY
        if rest is not None:
            counts = act.counts - rest.counts
        else:
            counts = np.add.reduceat(mask, self.starts, dtype=np.intp)
        return _Active(mask, counts, total)

    def subgroup(self, act):
        """A new group of the threads of ``act``: later work touches only them."""
        keep = act.counts > 0
        return _Group(self.machine, self, act.positions(), self.warps[keep], act.counts[keep])

    def issue(self, act, label):
        """One instruction for every warp with a thread in ``act``, counted now (act.times) and
        added to the per-warp totals by ``tally``."""
        if act.times == 0:
            if len(self.actives) == _TALLY_EVERY:
                self.tally()
            self.actives.append(act)
        act.times += 1
        m = self.machine
        if self.trace_pos is not None and len(m.trace) < m.max_trace:
            if act.row is False:
                act.row = self._trace_row(act)
            if act.row is not None:
                m.trace.append(act.row)
                m.labels.append(label)

    def tally(self):
        """Add the issues counted so far to the per-warp totals, as two matrix-vector products:

            issued[w] += sum_a times_a * (counts_a[w] > 0),   slots[w] += sum_a times_a * counts_a[w]

        Tallying a few dozen _Actives at a time keeps the matrices small (and in cache)."""
        acts, self.actives = self.actives, []
        if acts:
            times = np.array([a.times for a in acts], dtype=np.int64)
            counts = np.array([a.counts for a in acts], dtype=np.int64)
            m = self.machine
            m.slots[self.warps] += times @ counts
            m.issued[self.warps] += times @ (counts > 0)
            for a in acts:
                a.times = 0                # issued again later, it is tallied again

    def _trace_row(self, act):
        """The traced warp's lanes in ``act`` as a (warp_size,) mask, or None if it has none."""
        p = self.trace_pos
        if act.counts[p] == 0:
            return None
        s, k = self.starts[p], self.counts[p]
        lanes = self.ids[s:s + k] % self.machine.ws
        if act.mask is not None:
            lanes = lanes[act.mask[s:s + k]]
        row = np.zeros(self.machine.ws, dtype=bool)
        row[lanes] = True
        return row

    def values(self, fn, what):
        """``fn(vars)`` as one value per thread of the group (a scalar stays 0-d)."""
        out = np.asarray(fn(self.vars))
        if out.ndim == 0 or out.shape == (self.size,):
            return out
        n = self.machine.n
        if out.shape == (n,):             # one value for every thread of the run: take ours
            return out[self.ids]
        raise ValueError(f"{what} returned shape {out.shape}, expected ({n},): one value per thread")

    def condition(self, fn, what):
        """``fn(vars)`` as a boolean mask over the group."""
        c = self.values(fn, what).astype(bool, copy=False)
        return np.broadcast_to(c, (self.size,)) if c.ndim == 0 else c

    def let(self, stmt, act):
        """``name = fn(vars)`` for the threads of ``act``."""
        new = self.values(stmt.fn, f"Let {stmt.name!r}")
        name = stmt.name
        self.machine.per_thread.setdefault(name, None)
        try:
            old = self.vars[name]         # ours, or the parent group's copied over
        except KeyError:
            old = None                    # a new variable
        if act.mask is not None:
            # Threads outside the mask keep their value (zero for a new variable); the array
            # takes the wider dtype of old and new, as one array holding both must.
            at = act.positions()
            if old is None:
                value = np.zeros(self.size, dtype=new.dtype)
            else:
                value = old.astype(np.result_type(old, new))     # a copy: never write in place
            value[at] = new if new.ndim == 0 else new[at]
        else:
            value = np.broadcast_to(new, (self.size,)) if new.ndim == 0 else new
            if old is not None:
                wider = np.result_type(old, new)
                if wider != value.dtype:
                    value = value.astype(wider)
        self.vars[name] = value
        if name not in self.written:
            self.written.append(name)

    def close(self):
        """Add this group's issues to the per-warp totals; copy its variables into the parent."""
        self.tally()
        parent = self.parent
        if parent is None:
            return
        for name in self.written:
            value = self.vars[name]
            try:
                base = parent.vars[name]
            except KeyError:
                base = np.zeros(parent.size, dtype=value.dtype)
            merged = base.astype(np.result_type(base, value))     # a copy: arrays are never
            merged[self.sel] = value                              # changed in place
            parent.vars[name] = merged
            if name not in parent.written:
                parent.written.append(name)


class _Machine:
    """Walks the kernel's statements over groups of threads (see the module docstring)."""

    def __init__(self, n_threads, warp_size, shared, trace_warp, max_trace):
        self.n, self.ws = n_threads, warp_size
        self.n_warps = -(-n_threads // warp_size)
        self.shared = shared
        self.per_thread = dict.fromkeys(("tid", "lane", "warp"))   # ordered set of per-thread names
        self.issued = np.zeros(self.n_warps, dtype=np.int64)
        self.slots = np.zeros(self.n_warps, dtype=np.int64)
        self.trace_warp, self.max_trace = trace_warp, max_trace
        self.trace, self.labels = [], []

    def root(self):
        counts = np.full(self.n_warps, self.ws, dtype=np.intp)
        counts[-1] = self.n - (self.n_warps - 1) * self.ws            # a partial last warp
        g = _Group(self, None, None, np.arange(self.n_warps), counts)
        tid = np.arange(self.n)
        g._ids = tid
        g.vars.update(tid=tid, lane=tid % self.ws, warp=tid // self.ws)
        return g

    def run(self, stmts, group, act, schedule):
        if act.total:
            for stmt in stmts:
                self.step(stmt, group, act, schedule)

    def step(self, stmt, group, act, schedule):
        if isinstance(stmt, Let):
            group.issue(act, stmt.label or stmt.name)
            group.let(stmt, act)
        elif isinstance(stmt, If):
            group.issue(act, stmt.label)
            cond = group.condition(stmt.cond, "If cond")
            then = group.select(act, cond)
            orelse = group.select(act, ~cond, rest=then)     # counts by difference: no second pass
            if schedule == "interleaved":
                self._interleave(stmt.then, stmt.orelse, group, then, orelse)
            else:
                self.run(stmt.then, group, then, schedule)
                self.run(stmt.orelse, group, orelse, schedule)
        elif isinstance(stmt, While):
            self._loop(stmt, group, act, schedule)
        else:
            raise TypeError(f"kernel statements must be Let, If or While, got {type(stmt).__name__}")

    def _loop(self, stmt, group, act, schedule):
        live, opened = act, []
        for _ in range(stmt.max_iterations + 1):
            group.issue(live, stmt.label)
            live = group.select(live, group.condition(stmt.cond, "While cond"))
            if live.total == 0:
                break
            if live.total <= _COMPACT_BELOW * group.size:
                # Most of the group has left the loop: go on with the remaining threads only, so
                # each instruction costs NumPy work in proportion to the threads still looping.
                group = group.subgroup(live)
                opened.append(group)
                live = group.everyone
            self.run(stmt.body, group, live, schedule)
        else:
            raise RuntimeError(f"While loop ran more than max_iterations = {stmt.max_iterations}")
        for g in reversed(opened):          # innermost first: each copies back into its parent
            g.close()

    def _interleave(self, a, b, group, act_a, act_b):
        """Volta-style: alternate the two paths statement by statement (each path its own PC)."""
        for i in range(max(len(a), len(b))):
            if i < len(a) and act_a.total:
                self.step(a[i], group, act_a, "interleaved")
            if i < len(b) and act_b.total:
                self.step(b[i], group, act_b, "interleaved")


def run_simt(kernel, n_threads, inputs=None, warp_size=32, trace_warp=0, schedule="stack",
             max_trace=4096) -> SimtResult:
    """Run ``kernel`` (a list of Let/If/While) over ``n_threads`` threads in warps of ``warp_size``.

    ``inputs`` maps names to arrays (shared by all threads: index them with ``v["tid"]``, never
    use a whole input array as one value per thread) or to scalars. Each thread sees ``tid`` (0..n_threads-1), ``lane`` (tid % warp_size) and ``warp``.
    The last warp may be partial: its missing lanes are masked off from the start.

    ``schedule="stack"`` runs a divergent branch's paths one after the other (pre-Volta
    reconvergence stack); ``"interleaved"`` alternates them instruction by instruction, as
    independent thread scheduling (Volta and later) may. Both issue the same instructions.
    ``trace_warp`` (or None) picks the warp whose lanes x time mask is recorded.
    """
    if not isinstance(kernel, (list, tuple)):
        raise TypeError("kernel must be a list of Let, If and While statements")
    n = check_int("n_threads", n_threads, min_value=1, max_value=50_000_000)
    ws = check_int("warp_size", warp_size, min_value=1, max_value=1024)
    schedule = check_choice("schedule", schedule, ("stack", "interleaved"))
    n_warps = -(-n // ws)
    if trace_warp is not None:
        trace_warp = check_int("trace_warp", trace_warp, min_value=0, max_value=n_warps - 1)
    max_trace = check_int("max_trace", max_trace, min_value=0)
    inputs = {} if inputs is None else inputs
    if not isinstance(inputs, dict):
        raise TypeError("inputs must be a dict of name -> array or scalar")
    for name in ("tid", "lane", "warp"):
        if name in inputs:
            raise ValueError(f"inputs may not redefine {name!r}")
    machine = _Machine(n, ws, inputs, trace_warp, max_trace)
    root = machine.root()
    machine.run(list(kernel), root, root.everyone, schedule)
    root.close()
    # One array per variable (a copy where the group's array is a view or a function's result).
    variables = {k: np.array(root.vars[k]) if k in root.written else root.vars[k]
                 for k in machine.per_thread if k not in inputs}
    trace = np.array(machine.trace, dtype=bool).reshape(-1, ws)
    return SimtResult(n, ws, machine.issued, machine.slots, variables, trace,
                      tuple(machine.labels), trace_warp if trace_warp is not None else -1, schedule)


# --------------------------------------------------------------------------- coalescing

@dataclass(frozen=True)
class Coalescing:
    """The sectors and lines one warp's access touches, and how many of the moved bytes it wanted."""

    addresses: np.ndarray      # byte address of each active lane's access
    bytes_per_access: int
    sectors: np.ndarray        # distinct 32-byte sector indices touched
    lines: np.ndarray          # distinct 128-byte line indices touched
    bytes_requested: int       # distinct bytes the lanes asked for

    @property
    def n_sectors(self) -> int:
        return int(self.sectors.size)

    @property
    def n_lines(self) -> int:
        return int(self.lines.size)

    @property
    def bytes_moved(self) -> int:
        return self.n_sectors * SECTOR_BYTES

    @property
    def efficiency(self) -> float:
        """bytes_requested / bytes_moved, in (0, 1]."""
        return self.bytes_requested / self.bytes_moved


def coalescing(addresses, bytes_per_access=4, active=None) -> Coalescing:
    """Sectors (32 B) and lines (128 B) touched by one warp's accesses of ``bytes_per_access`` each.

        sectors = { floor(b / 32) : b in [a, a + size) for each active lane's address a }
        efficiency = |distinct bytes requested| / (32 * |sectors|)

    32 lanes reading consecutive 4-byte floats from a 128-byte-aligned base: 4 sectors, 1 line,
    128 / 128 = 100%. The same with a stride of 2 floats: 8 sectors, 2 lines, 50%.
    """
    addr = check_array("addresses", addresses, ndim=1, dtype=float)
    if addr.size == 0:
        raise ValueError("addresses must hold at least one address")
    if np.any(addr < 0) or np.any(addr != np.round(addr)):
        raise ValueError("addresses must be whole byte addresses >= 0")
    if np.any(addr >= MAX_ADDRESS):
        raise ValueError(f"addresses must be below 2**48 (256 TiB, a GPU's virtual address space), "
                         f"got {addr.max():.3g}")
    size = check_int("bytes_per_access", bytes_per_access, min_value=1, max_value=128)
    addr = addr.astype(np.int64)
    if active is not None:
        act = np.asarray(active)
        if act.dtype != bool or act.shape != addr.shape:
            raise ValueError("active must be a boolean mask with one entry per address")
        addr = addr[act]
        if addr.size == 0:
            raise ValueError("active must leave at least one lane active")
    first = addr // SECTOR_BYTES
    last = (addr + size - 1) // SECTOR_BYTES
    span = int((last - first).max()) + 1
    cand = first[:, None] + np.arange(span)[None, :]
    sectors = np.unique(cand[cand <= last[:, None]])
    lines = np.unique(sectors * SECTOR_BYTES // LINE_BYTES)
    # Distinct bytes: merge the [a, a+size) intervals after sorting.
    starts = np.sort(addr)
    ends = starts + size
    reach = np.maximum.accumulate(ends)
    new_run = np.concatenate([[True], starts[1:] >= reach[:-1]])
    run_id = np.cumsum(new_run) - 1
    run_start = starts[new_run]
    run_end = np.zeros(run_start.size, dtype=np.int64)
    np.maximum.at(run_end, run_id, ends)
    requested = int((run_end - run_start).sum())
    return Coalescing(addr, size, sectors, lines, requested)


def strided_addresses(stride_elements=1, element_bytes=4, offset_bytes=0, warp_size=32,
                      base_bytes=0) -> np.ndarray:
    """Byte addresses of lane i reading element i * stride: base + offset + i * stride * size."""
    stride = check_int("stride_elements", stride_elements, min_value=0)
    size = check_int("element_bytes", element_bytes, min_value=1)
    offset = check_int("offset_bytes", offset_bytes, min_value=0)
    ws = check_int("warp_size", warp_size, min_value=1, max_value=1024)
    base = check_int("base_bytes", base_bytes, min_value=0)
    _check_last_address(base + offset + (ws - 1) * stride * size,
                        "base_bytes + offset_bytes + (warp_size - 1) * stride_elements * element_bytes")
    return base + offset + np.arange(ws, dtype=np.int64) * stride * size


def aos_addresses(struct_bytes, field_offset_bytes, warp_size=32, base_bytes=0) -> np.ndarray:
    """Array of structures: lane i reads one field of struct i at base + i * struct + offset."""
    sb = check_int("struct_bytes", struct_bytes, min_value=1)
    fo = check_int("field_offset_bytes", field_offset_bytes, min_value=0, max_value=sb - 1)
    ws = check_int("warp_size", warp_size, min_value=1, max_value=1024)
    base = check_int("base_bytes", base_bytes, min_value=0)
    _check_last_address(base + (ws - 1) * sb + fo,
                        "base_bytes + (warp_size - 1) * struct_bytes + field_offset_bytes")
    return base + np.arange(ws, dtype=np.int64) * sb + fo


def soa_addresses(field_index, field_bytes=4, n_elements=1 << 20, warp_size=32, base_bytes=0) -> np.ndarray:
    """Structure of arrays: field f is its own array; lane i reads element i of that array."""
    f = check_int("field_index", field_index, min_value=0)
    fb = check_int("field_bytes", field_bytes, min_value=1)
    n = check_int("n_elements", n_elements, min_value=1)
    ws = check_int("warp_size", warp_size, min_value=1, max_value=1024)
    base = check_int("base_bytes", base_bytes, min_value=0)
    _check_last_address(base + f * n * fb + (ws - 1) * fb,
                        "base_bytes + field_index * n_elements * field_bytes + (warp_size - 1) * field_bytes")
    return base + f * n * fb + np.arange(ws, dtype=np.int64) * fb
