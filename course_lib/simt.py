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
thread, and an active mask of shape (warps, lanes) says which lanes execute. A statement issues
one instruction for every warp with at least one active lane and fills one lane-slot per active
lane; a branch that splits a warp runs both paths, each with the other path's lanes masked off;
a loop runs until no lane of the warp wants another iteration. So

    SIMT efficiency = active lane-slots / (issued instructions * warp size)

Coalescing: a warp's load is served in 32-byte sectors of 128-byte cache lines
(CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory"), so

    efficiency = bytes requested / bytes moved = distinct bytes asked for / (32 * sectors touched)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ._validate import check_array, check_int

__all__ = [
    "Let", "If", "While",
    "SimtResult", "run_simt",
    "SECTOR_BYTES", "LINE_BYTES",
    "Coalescing", "coalescing", "strided_addresses", "aos_addresses", "soa_addresses",
]

#: DRAM/L2 access granularity of NVIDIA GPUs from Maxwell on (CUDA C++ Best Practices Guide,
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


class _Machine:
    def __init__(self, n_threads, warp_size, env, trace_warp, max_trace):
        self._n = n_threads
        self.n_warps = -(-n_threads // warp_size)
        self.ws = warp_size
        self.env = env
        self.issued = np.zeros(self.n_warps, dtype=np.int64)
        self.lane_slots = np.zeros((self.n_warps, warp_size), dtype=np.int64)
        self.trace_warp = trace_warp
        self.max_trace = max_trace
        self.trace, self.labels = [], []
        self.owned = set()                 # variables whose arrays this run created (safe to write)
        self.padded = self.n_warps * warp_size

    def _vals(self, fn, what):
        out = np.asarray(fn(self.env))
        if out.shape == ():
            out = np.broadcast_to(out, (self.n_threads,))
        if out.shape != (self.n_threads,):
            raise ValueError(f"{what} returned shape {out.shape}, expected ({self.n_threads},): "
                             f"one value per thread")
        return out

    @property
    def n_threads(self):
        return self._n

    def _warp_any(self, mask2d):
        if self.ws % 8 == 0:
            # Eight lanes per 64-bit word: a warp is active when any of its words is non-zero.
            return mask2d.view(np.uint64).any(axis=1)
        return mask2d.any(axis=1)

    def _issue(self, mask2d, label):
        warp_active = self._warp_any(mask2d)
        self.issued += warp_active
        # Lane-slots are summed per lane here and per warp once, at the end (cheaper than a
        # reduction per instruction).
        np.add(self.lane_slots, mask2d, out=self.lane_slots, casting="unsafe")
        if self.trace_warp is not None and warp_active[self.trace_warp] and len(self.trace) < self.max_trace:
            self.trace.append(mask2d[self.trace_warp].copy())
            self.labels.append(label)

    def _flat(self, mask2d):
        return mask2d.reshape(-1)[: self.n_threads]

    def run(self, stmts, mask2d, schedule):
        for stmt in stmts:
            if not (mask2d.view(np.uint64) if self.ws % 8 == 0 else mask2d).any():
                return
            self.step(stmt, mask2d, schedule)

    def step(self, stmt, mask2d, schedule):
        if isinstance(stmt, Let):
            self._issue(mask2d, stmt.label or stmt.name)
            new = self._vals(stmt.fn, f"Let {stmt.name!r}")
            flat = self._flat(mask2d)
            old = self.env.get(stmt.name)
            if old is None:
                old = np.zeros(self.n_threads, dtype=new.dtype)
            else:
                old = np.asarray(old)
                wider = np.result_type(old, new)
                if wider != old.dtype or stmt.name not in self.owned:
                    old = old.astype(wider)          # a private copy: inputs are never written
            np.copyto(old, new, where=flat)
            self.env[stmt.name] = old
            self.owned.add(stmt.name)
        elif isinstance(stmt, If):
            self._issue(mask2d, stmt.label)
            cond = self._cond(stmt.cond, "If cond")
            then_mask = mask2d & cond
            else_mask = mask2d & ~cond
            if schedule == "interleaved":
                self._interleave(stmt.then, then_mask, stmt.orelse, else_mask)
            else:
                self.run(stmt.then, then_mask, schedule)
                self.run(stmt.orelse, else_mask, schedule)
        elif isinstance(stmt, While):
            live = mask2d.copy()
            for it in range(stmt.max_iterations + 1):
                self._issue(live, stmt.label)
                live = live & self._cond(stmt.cond, "While cond")
                busy = np.flatnonzero(live.any(axis=1))
                if busy.size == 0:
                    return
                if self.n_warps >= 16 and 2 * busy.size <= self.n_warps:
                    # Most warps have left the loop: finish it on the busy warps' threads only.
                    rest = While(stmt.cond, stmt.body, stmt.label, stmt.max_iterations - it)
                    self._compacted(busy, live, list(stmt.body) + [rest], schedule)
                    return
                self.run(stmt.body, live, schedule)
            raise RuntimeError(f"While loop ran more than max_iterations = {stmt.max_iterations}")
        else:
            raise TypeError(f"kernel statements must be Let, If or While, got {type(stmt).__name__}")

    def _compacted(self, warps, mask2d, stmts, schedule):
        """Run ``stmts`` on the threads of ``warps`` only, then scatter results and counts back.

        Issue counts are unchanged: warps outside ``warps`` have no active lane, so they would
        issue nothing; skipping them only saves NumPy work on their lanes.
        """
        lanes = (warps[:, None] * self.ws + np.arange(self.ws)[None, :]).reshape(-1)
        threads = lanes[lanes < self.n_threads]
        per_thread = ("tid", "lane", "warp", *sorted(self.owned))
        env = dict(self.env)
        for name in per_thread:
            env[name] = np.asarray(self.env[name])[threads]
        trace_warp = None
        if self.trace_warp is not None:
            hit = np.flatnonzero(warps == self.trace_warp)
            trace_warp = int(hit[0]) if hit.size else None
        sub = _Machine(threads.size, self.ws, env, trace_warp, self.max_trace - len(self.trace))
        sub.owned = set(self.owned)
        sub.run(stmts, mask2d[warps], schedule)
        self.issued[warps] += sub.issued
        self.lane_slots[warps] += sub.lane_slots
        self.trace.extend(sub.trace)
        self.labels.extend(sub.labels)
        for name in sub.owned:
            value = sub.env[name]
            full = self.env.get(name)
            if full is None or name not in self.owned:
                full = np.zeros(self.n_threads, dtype=value.dtype) if full is None else np.array(full)
            if np.result_type(full, value) != full.dtype:
                full = full.astype(np.result_type(full, value))
            full[threads] = value
            self.env[name] = full
            self.owned.add(name)

    def _interleave(self, a, mask_a, b, mask_b):
        """Volta-style: alternate the two paths statement by statement (each path its own PC)."""
        for i in range(max(len(a), len(b))):
            if i < len(a) and mask_a.any():
                self.step(a[i], mask_a, "interleaved")
            if i < len(b) and mask_b.any():
                self.step(b[i], mask_b, "interleaved")

    @property
    def slots(self):
        return self.lane_slots.sum(axis=1)

    def _cond(self, fn, what):
        c = self._vals(fn, what).astype(bool, copy=False)
        if self.padded == self.n_threads:
            return c.reshape(self.n_warps, self.ws)
        pad = np.zeros(self.padded, dtype=bool)
        pad[: self.n_threads] = c
        return pad.reshape(self.n_warps, self.ws)


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
    if schedule not in ("stack", "interleaved"):
        raise ValueError(f"schedule must be 'stack' or 'interleaved', got {schedule!r}")
    n_warps = -(-n // ws)
    if trace_warp is not None:
        trace_warp = check_int("trace_warp", trace_warp, min_value=0, max_value=n_warps - 1)
    max_trace = check_int("max_trace", max_trace, min_value=0)
    inputs = {} if inputs is None else inputs
    if not isinstance(inputs, dict):
        raise TypeError("inputs must be a dict of name -> array or scalar")
    tid = np.arange(n)
    env = {"tid": tid, "lane": tid % ws, "warp": tid // ws}
    for name, value in inputs.items():
        if name in env:
            raise ValueError(f"inputs may not redefine {name!r}")
        env[name] = value
    machine = _Machine(n, ws, env, trace_warp, max_trace)
    mask = np.zeros(n_warps * ws, dtype=bool)
    mask[:n] = True
    machine.run(list(kernel), mask.reshape(n_warps, ws), schedule)
    trace = np.array(machine.trace, dtype=bool).reshape(-1, ws)
    variables = {k: v for k, v in env.items() if k not in inputs}
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
    return base + offset + np.arange(ws, dtype=np.int64) * stride * size


def aos_addresses(struct_bytes, field_offset_bytes, warp_size=32, base_bytes=0) -> np.ndarray:
    """Array of structures: lane i reads one field of struct i at base + i * struct + offset."""
    sb = check_int("struct_bytes", struct_bytes, min_value=1)
    fo = check_int("field_offset_bytes", field_offset_bytes, min_value=0, max_value=sb - 1)
    ws = check_int("warp_size", warp_size, min_value=1, max_value=1024)
    base = check_int("base_bytes", base_bytes, min_value=0)
    return base + np.arange(ws, dtype=np.int64) * sb + fo


def soa_addresses(field_index, field_bytes=4, n_elements=1 << 20, warp_size=32, base_bytes=0) -> np.ndarray:
    """Structure of arrays: field f is its own array; lane i reads element i of that array."""
    f = check_int("field_index", field_index, min_value=0)
    fb = check_int("field_bytes", field_bytes, min_value=1)
    n = check_int("n_elements", n_elements, min_value=1)
    ws = check_int("warp_size", warp_size, min_value=1, max_value=1024)
    base = check_int("base_bytes", base_bytes, min_value=0)
    return base + f * n * fb + np.arange(ws, dtype=np.int64) * fb
