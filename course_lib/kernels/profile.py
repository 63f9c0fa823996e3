"""Per-warp counts from a kernel trace: traffic, coalescing, bank conflicts, divergence, races.

A trace (``course_lib.kernels.trace``) says what each CUDA thread did. A GPU issues work per
*warp*: 32 consecutive threads of a block, one instruction at a time for all of them. This
module regroups the trace that way.

**A source line stands in for an instruction.** Line L executed for the k-th time by a thread is
one warp instruction, shared by every lane of its warp that also executed L a k-th time; the
j-th array access on that line is one memory instruction. A real compiler emits several
instructions per line, so absolute counts are of lines, not SASS; ratios (SIMT efficiency,
sectors per request, conflict degree) are what carry over.

* **Divergence** (lesson 02): per warp, ``issued`` = distinct (line, k) pairs its lanes ran,
  ``slots`` = lane-lines executed, SIMT efficiency = slots / (issued x 32). A warp whose lanes
  took different paths issues both paths.
* **Coalescing** (lesson 02): per global memory instruction, the 32-byte sectors its lanes'
  addresses touch; efficiency = distinct bytes requested / (32 x sectors).
* **Bank conflicts** (lesson 03): per shared-memory instruction, the most distinct 4-byte words
  any one of the 32 banks must serve (bank = word mod 32); lanes reading one word share it.
* **Races**: within one block and between two barriers, a shared location written by one thread
  and read or written by another (atomics only conflict with plain accesses); in global memory,
  the same across blocks at any time. Also: shared memory read before any thread wrote it, and
  threads of a block that passed different numbers of barriers.

Traffic to DRAM is estimated as every sector a global instruction touches, with no reuse from
L1 or L2: exact for kernels that touch each byte once (copies, transposes, elementwise), an upper
bound for kernels that reuse data through the caches (a naive matmul).
"""

from __future__ import annotations

import functools
import math
import tomllib
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

from .._validate import check_int, check_number
from ..hardware import get_accelerator
from ..latency import LaunchError, occupancy
from ..roofline import Kernel, KernelPoint, place_kernel
from ..memory import BANK_BYTES, N_BANKS
from ..simt import SECTOR_BYTES
from .trace import ATOMIC, GLOBAL, READ, SHARED, WARP_OPS, WARP_SIZE, WRITE, Trace

__all__ = [
    "WARP_SIZE", "Problem", "MemoryInstruction", "LineStats", "KernelProfile",
    "profile_trace", "uninitialized_output_read", "Prediction", "predict_time", "ASSUMED_REGISTERS",
    "NsightMetric", "nsight_metrics", "nsight_report",
]

@dataclass(frozen=True)
class NsightMetric:
    """The Nsight Compute metric one count of a profile corresponds to, as ``ncu --metrics`` takes
    it: ``count`` (a :class:`KernelProfile` attribute), ``metric``, ``relation`` (how the two
    compare), ``status`` ("verified" where a primary NVIDIA source names it, else "unverified")
    and ``source``."""

    count: str
    metric: str
    relation: str
    status: str
    source: str


@functools.cache
def _nsight_data() -> dict:
    text = resources.files("course_lib").joinpath("data/nsight_metrics.toml").read_bytes()
    return tomllib.loads(text.decode("utf-8"))


def nsight_metrics() -> tuple[NsightMetric, ...]:
    """Every count's Nsight Compute name, from ``data/nsight_metrics.toml`` (each with its source).
    A line of source stands for an instruction here, so instruction counts do not carry over to
    SASS; sectors, requests, wavefronts and the ratios do."""
    data = _nsight_data()
    return tuple(NsightMetric(m["count"], m["metric"], m["relation"], m["status"], data["sources"][m["source"]])
                 for m in data["metric"])


def nsight_report() -> dict:
    """The real Nsight Compute report stored beside the names (``[report]`` of the data file):
    ``source``, ``kernel``, ``element_bytes`` and ``metrics`` (name -> value). Not this course's
    kernel: a user's run quoted on NVIDIA's forum (lesson 09, section 14)."""
    report = _nsight_data()["report"]
    return {**report, "metrics": dict(report["metrics"])}

#: The occupancy beside a prediction assumes this many registers per thread (the compiler decides;
#: 32 is typical for the short kernels of lesson 09 and does not limit occupancy on any catalog GPU).
ASSUMED_REGISTERS = 32


@dataclass(frozen=True)
class Problem:
    """A safety problem found in a trace: ``kind`` is 'race', 'uninitialized' or 'barrier'."""

    kind: str
    message: str


@dataclass(frozen=True)
class MemoryInstruction:
    """All warp-level requests of one source line's j-th access, summed over warps."""

    line: int
    order: int
    space: str            # 'global' or 'shared'
    op: str               # 'load', 'store' or 'atomic'
    array: str
    requests: int         # warp-level requests (one per warp per execution)
    accesses: int         # thread-level element accesses
    bytes_requested: int  # distinct bytes the lanes asked for, summed over requests
    sectors: int          # global: 32-byte sectors touched, summed over requests
    wavefronts: int       # shared: passes the banks need (sum of conflict degrees)
    max_degree: int       # shared: worst conflict degree of one request

    @property
    def efficiency(self) -> float:
        """Global: bytes requested / bytes moved; shared: requests / wavefronts."""
        if self.space == "global":
            return self.bytes_requested / (SECTOR_BYTES * self.sectors) if self.sectors else 1.0
        return self.requests / self.wavefronts if self.wavefronts else 1.0

    @property
    def sectors_per_request(self) -> float:
        return self.sectors / self.requests if self.requests else 0.0

    @property
    def mean_degree(self) -> float:
        return self.wavefronts / self.requests if self.requests else 0.0


@dataclass(frozen=True)
class LineStats:
    """How one source line executed over all warps."""

    line: int
    text: str
    issued: int           # warp instructions (one per warp per execution)
    slots: int            # lane executions


@dataclass(frozen=True)
class KernelProfile:
    """Counts for one launch, per warp and in total. Built by :func:`profile_trace`."""

    trace: Trace = field(repr=False)
    flops: float
    issued_per_warp: np.ndarray
    slots_per_warp: np.ndarray
    lanes_per_warp: np.ndarray
    divergent_per_warp: np.ndarray
    instructions: tuple                 # MemoryInstruction, in source order
    lines: tuple                        # LineStats, in source order
    problems: tuple                     # Problem
    shared_bytes_per_block: int
    atomic_max_contention: int          # most atomics on one address

    # --- the launch
    @property
    def kernel_name(self) -> str:
        return self.trace.kernel_name

    @property
    def launch(self):
        return self.trace.launch

    @property
    def n_warps(self) -> int:
        return int(self.issued_per_warp.size)

    # --- divergence
    @property
    def issued(self) -> int:
        return int(self.issued_per_warp.sum())

    @property
    def simt_efficiency(self) -> float:
        """Active lane-slots / (issued x 32), over all warps."""
        return float(self.slots_per_warp.sum() / (WARP_SIZE * self.issued)) if self.issued else 1.0

    @property
    def divergent_warps(self) -> int:
        return int(self.divergent_per_warp.sum())

    # --- memory
    def _sum(self, attr, space=None, op=None) -> int:
        return int(sum(getattr(i, attr) for i in self.instructions
                       if (space is None or i.space == space) and (op is None or i.op == op)))

    @property
    def global_loads(self) -> int:
        """Thread-level global element reads (atomics not included)."""
        return self._sum("accesses", "global", "load")

    @property
    def global_stores(self) -> int:
        return self._sum("accesses", "global", "store")

    @property
    def global_load_requests(self) -> int:
        return self._sum("requests", "global", "load")

    @property
    def global_store_requests(self) -> int:
        return self._sum("requests", "global", "store")

    @property
    def global_load_sectors(self) -> int:
        return self._sum("sectors", "global", "load")

    @property
    def global_store_sectors(self) -> int:
        return self._sum("sectors", "global", "store")

    @property
    def shared_bank_conflicts(self) -> int:
        """Extra passes the banks needed: wavefronts beyond one per request. Nsight Compute counts
        the same for 4-byte elements; for wider ones it subtracts the passes a request needs anyway
        (two for 8-byte elements, four for 16-byte), so its figure is lower there."""
        return self.shared_wavefronts - self.shared_requests

    # --- the same counts as Nsight Compute splits them (nsight_metrics(), lesson 09 section 14)
    @property
    def global_load_bytes_per_sector(self) -> float:
        """Bytes the lanes asked for per 32-byte sector their loads touched (32 = every byte used)."""
        sectors = self.global_load_sectors
        return self._sum("bytes_requested", "global", "load") / sectors if sectors else 0.0

    @property
    def global_store_bytes_per_sector(self) -> float:
        sectors = self.global_store_sectors
        return self._sum("bytes_requested", "global", "store") / sectors if sectors else 0.0

    @property
    def shared_load_requests(self) -> int:
        return self._sum("requests", "shared", "load")

    @property
    def shared_store_requests(self) -> int:
        return self._sum("requests", "shared", "store")

    @property
    def shared_load_wavefronts(self) -> int:
        return self._sum("wavefronts", "shared", "load")

    @property
    def shared_store_wavefronts(self) -> int:
        return self._sum("wavefronts", "shared", "store")

    @property
    def shared_load_bank_conflicts(self) -> int:
        return self.shared_load_wavefronts - self.shared_load_requests

    @property
    def shared_store_bank_conflicts(self) -> int:
        return self.shared_store_wavefronts - self.shared_store_requests

    @property
    def lanes_per_instruction(self) -> float:
        """Active lanes per warp instruction: the SIMT efficiency x 32."""
        return WARP_SIZE * self.simt_efficiency

    def nsight(self, occupancy: float | None = None) -> str:
        """Each count beside the Nsight Compute metric it corresponds to (:func:`nsight_metrics`),
        so a real report can be read against the trace. ``occupancy`` (a fraction: lesson 01's
        theoretical occupancy) fills that row; achieved occupancy is measured on a GPU only.
        Unverified names are marked ``?``."""
        rows = [f"{'trace count':28s} {'value':>12s}  {'Nsight Compute metric (? = unverified)':66s} relation"]
        for m in nsight_metrics():
            if m.count == "theoretical_occupancy":
                value = "n/a" if occupancy is None else f"{occupancy:.0%}"
            elif m.count == "achieved_occupancy":
                value = "GPU only"
            else:
                v = getattr(self, m.count)
                value = f"{v:,.2f}" if isinstance(v, float) else f"{v:,}"
            mark = "" if m.status == "verified" else " ?"
            rows.append(f"{m.count:28s} {value:>12s}  {m.metric + mark:66s} {m.relation}")
        return "\n".join(rows)

    @property
    def global_bytes_requested(self) -> int:
        return self._sum("bytes_requested", "global")

    @property
    def global_sectors(self) -> int:
        return self._sum("sectors", "global")

    @property
    def bytes_moved(self) -> int:
        """Estimated DRAM traffic: 32 bytes per sector touched by any global instruction."""
        return SECTOR_BYTES * self.global_sectors

    @property
    def coalescing_efficiency(self) -> float:
        """Global bytes requested / bytes moved, over all global instructions."""
        return self.global_bytes_requested / self.bytes_moved if self.bytes_moved else 1.0

    @property
    def shared_accesses(self) -> int:
        return self._sum("accesses", "shared")

    @property
    def shared_loads(self) -> int:
        """Thread-level shared-memory reads."""
        return self._sum("accesses", "shared", "load")

    @property
    def shared_stores(self) -> int:
        return self._sum("accesses", "shared", "store")

    @property
    def shared_requests(self) -> int:
        return self._sum("requests", "shared")

    @property
    def shared_wavefronts(self) -> int:
        return self._sum("wavefronts", "shared")

    @property
    def bank_conflict_degree(self) -> int:
        """The worst conflict degree of any shared request (1 = conflict-free)."""
        return max((i.max_degree for i in self.instructions if i.space == "shared"), default=0)

    @property
    def atomics(self) -> int:
        """Thread-level atomics, global and shared together."""
        return self._sum("accesses", op="atomic")

    @property
    def global_atomics(self) -> int:
        """Atomics on global memory: each is a read-modify-write at the L2 cache."""
        return self._sum("accesses", "global", "atomic")

    @property
    def shared_atomics(self) -> int:
        """Atomics on shared memory: done by the SM's own shared memory, no trip to L2 or DRAM."""
        return self._sum("accesses", "shared", "atomic")

    # --- warp-level primitives (warp instructions, one per warp per call)
    def _warp_count(self, ops) -> int:
        codes = [WARP_OPS.index(o) for o in ops]
        return int(np.isin(self.trace.warp_ops[:, 2], codes).sum()) if self.trace.warp_ops.size else 0

    @property
    def warp_shuffles(self) -> int:
        return self._warp_count(("shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync"))

    @property
    def warp_votes(self) -> int:
        return self._warp_count(("ballot_sync", "all_sync", "any_sync", "eq_sync", "activemask"))

    @property
    def warp_syncs(self) -> int:
        return self._warp_count(("syncwarp",))

    @property
    def barriers(self) -> int:
        """syncthreads calls per thread, at most (a loop's barrier counts each time)."""
        return int(self.trace.barriers.max()) if self.trace.barriers.size else 0

    @property
    def intensity_flops_per_byte(self) -> float:
        return self.flops / self.bytes_moved if self.bytes_moved else math.inf

    @property
    def safe(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        """A short text report: the launch, divergence, global and shared memory, safety."""
        lc = self.launch
        rows = [
            f"{self.kernel_name}: grid {_dims(lc.grid)} x block {_dims(lc.block)} = "
            f"{lc.n_threads:,} threads in {self.n_warps:,} warps",
            f"  SIMT efficiency {self.simt_efficiency:6.1%}   divergent warps {self.divergent_warps}"
            f"   barriers/thread {self.barriers}",
            f"  global: {self.global_loads:,} loads, {self.global_stores:,} stores, "
            f"{self.global_bytes_requested:,} B requested, {self.global_sectors:,} sectors = "
            f"{self.bytes_moved:,} B moved (coalescing {self.coalescing_efficiency:.0%})",
        ]
        if self.shared_requests:
            rows.append(f"  shared: {self.shared_accesses:,} accesses in {self.shared_requests:,} "
                        f"requests, {self.shared_wavefronts:,} wavefronts (worst conflict "
                        f"{self.bank_conflict_degree}-way)")
        if self.atomics:
            rows.append(f"  atomics: {self.global_atomics:,} global, {self.shared_atomics:,} shared "
                        f"(at most {self.atomic_max_contention} on one address)")
        if self.trace.warp_ops.size:
            rows.append(f"  warp primitives: {self.warp_shuffles:,} shuffles, {self.warp_votes:,} votes, "
                        f"{self.warp_syncs:,} syncwarps (warp instructions)")
        if self.flops:
            rows.append(f"  FLOP {self.flops:,.0f}, intensity {self.intensity_flops_per_byte:.3g} FLOP/B")
        rows.append("  Nsight Compute names for these counts: .nsight()")
        rows.append("  safety: " + ("no races, no uninitialized reads, barriers agree" if self.safe
                                    else f"{len(self.problems)} problem(s); first: {self.problems[0].message}"))
        return "\n".join(rows)

    def table(self) -> str:
        """One row per memory instruction: where the traffic and the conflicts come from.

        ``effic.`` is, for a global row, the bytes its lanes asked for over the bytes of the
        sectors it touched (Nsight Compute: bytes per sector / 32); for a shared row, requests
        over wavefronts, 1 / the mean conflict degree (100% = one pass per request). The last line
        says so under the table."""
        head = f"{'line':>4s} {'space':6s} {'op':6s} {'array':8s} {'requests':>8s} {'sect/req':>8s} {'effic.':>7s} {'conflict':>8s}  source"
        rows = [head]
        for i in self.instructions:
            sect = f"{i.sectors_per_request:8.2f}" if i.space == "global" else f"{'':8s}"
            conf = f"{i.mean_degree:7.2f}x" if i.space == "shared" else f"{'':8s}"
            rows.append(f"{i.line:4d} {i.space:6s} {i.op:6s} {i.array[:8]:8s} {i.requests:8d} {sect} "
                        f"{i.efficiency:7.0%} {conf}  {self.trace.line_text(i.line)[:60]}")
        rows.append("effic.: global, bytes used / bytes of the sectors touched; shared, requests / "
                    "wavefronts (1 / conflict degree)")
        return "\n".join(rows)

    def __str__(self):
        return self.summary()


def _dims(d) -> str:
    n = 1 if d[1:] == (1, 1) else (2 if d[2] == 1 else 3)
    return str(d[0]) if n == 1 else "(" + ", ".join(str(x) for x in d[:n]) + ")"


# --------------------------------------------------------------------------------------------
# Building a profile
# --------------------------------------------------------------------------------------------

def _warp_ids(trace: Trace, tids: np.ndarray) -> np.ndarray:
    block, local = np.divmod(tids, trace.launch.threads_per_block)
    return block * trace.launch.warps_per_block + local // WARP_SIZE


def _occurrence(keys: np.ndarray) -> np.ndarray:
    """For each entry, how many earlier entries share its key (a cumulative count per key)."""
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    start = np.concatenate([[True], sk[1:] != sk[:-1]]) if sk.size else np.zeros(0, bool)
    first = np.maximum.accumulate(np.where(start, np.arange(sk.size), 0)) if sk.size else sk
    occ = np.empty_like(keys)
    occ[order] = np.arange(sk.size) - first
    return occ


def _line_events(trace: Trace):
    """Per executed line: its thread, warp, line number and occurrence k within the thread."""
    counts = np.diff(trace.line_start)
    tids = np.repeat(np.arange(trace.n_threads, dtype=np.int64), counts)
    occ = _occurrence(_combine(tids, trace.line_no))
    return tids, occ


def _combine(*cols) -> np.ndarray:
    """One int64 key per row from several int columns (same order as a lexicographic sort)."""
    key = np.zeros(cols[0].shape, np.int64)
    for col in cols:
        col = np.asarray(col, np.int64)
        col = col - col.min() if col.size else col
        span = int(col.max()) + 1 if col.size else 1
        if key.size and (int(key.max()) + 1) * span >= (1 << 62):
            key = np.unique(key, return_inverse=True)[1].reshape(-1).astype(np.int64)
        key = key * span + col
    return key


def _distinct_per_group(group: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """Number of distinct ``values`` in each group 0..n_groups-1."""
    if group.size == 0:
        return np.zeros(n_groups, np.int64)
    first = np.unique(_combine(group, values), return_index=True)[1]
    return np.bincount(group[first], minlength=n_groups).astype(np.int64)


def _check_trace(trace) -> None:
    if not isinstance(trace, Trace):
        raise TypeError(f"trace must be a Trace from trace_launch, got {type(trace).__name__}")


def profile_trace(trace: Trace, flops: float = 0.0) -> KernelProfile:
    """Per-warp counts of a trace (see the module docstring). ``flops`` is the FLOP the launch
    must do, from the reference (a trace records data movement, not arithmetic)."""
    if not isinstance(trace, Trace):
        raise TypeError(f"trace must be a Trace from trace_launch, got {type(trace).__name__}")
    flops = check_number("flops", flops, min_value=0)
    n_warps = trace.launch.n_warps

    # ---- divergence: distinct (line, occurrence) per warp
    l_tid, l_occ = _line_events(trace)
    l_warp = _warp_ids(trace, l_tid)
    _, first = np.unique(_combine(l_warp, trace.line_no, l_occ), return_index=True)
    issued = np.bincount(l_warp[first], minlength=n_warps).astype(np.int64)
    slots = np.bincount(l_warp, minlength=n_warps).astype(np.int64)
    lanes = np.bincount(_warp_ids(trace, np.arange(trace.n_threads)), minlength=n_warps)
    # A warp diverged when some instruction it issued had fewer active lanes than the warp has.
    divergent = slots < issued * lanes
    line_issued = np.bincount(trace.line_no[first], minlength=int(trace.line_no.max(initial=0)) + 1)
    line_slots = np.bincount(trace.line_no)
    lines = tuple(LineStats(int(ln), trace.line_text(ln), int(line_issued[ln]), int(line_slots[ln]))
                  for ln in np.nonzero(line_slots)[0])

    instructions, problems = (), []
    if trace.acc_tid.size:
        instructions = _memory_instructions(trace, l_occ)
        problems = _problems(trace)
    problems += _barrier_problems(trace)
    shared_bytes = sum(int(np.prod(a.shape)) * a.itemsize for a in trace.arrays if a.space == SHARED)
    atom = trace.acc_kind == ATOMIC
    contention = 0
    if atom.any():
        _, counts = np.unique(_combine(trace.acc_array[atom], trace.acc_index[atom]), return_counts=True)
        contention = int(counts.max())
    return KernelProfile(trace, flops, issued, slots, lanes, divergent, instructions, lines,
                         tuple(problems), int(shared_bytes), contention)


def _element_offsets(trace: Trace, rows=None) -> np.ndarray:
    """Element offset in memory of each access (its flat index, unless its array is a strided view)."""
    aid = trace.acc_array if rows is None else trace.acc_array[rows]
    idx = trace.acc_index if rows is None else trace.acc_index[rows]
    out = idx.copy()
    for a, info in enumerate(trace.arrays):
        if info.layout is not None:
            sel = aid == a
            out[sel] = info.element_offsets(idx[sel])
    return out


def _memory_instructions(trace: Trace, l_occ: np.ndarray) -> tuple:
    arrays = trace.arrays
    event = trace.line_start[trace.acc_tid] + np.maximum(trace.acc_event, 0)
    line = trace.line_no[event]
    occ = l_occ[event]
    warp = _warp_ids(trace, trace.acc_tid)
    itemsize = np.array([a.itemsize for a in arrays], np.int64)[trace.acc_array]
    base = np.array([a.base_bytes for a in arrays], np.int64)[trace.acc_array]
    space = np.array([a.space for a in arrays], np.int64)[trace.acc_array]
    addr = base + _element_offsets(trace) * itemsize
    # The j-th access of one array and kind on one line event: ``order`` counts per (thread,
    # line event, array, kind), so a lane that skips an access (a short-circuit, a conditional
    # expression) never shifts another array's access into the wrong instruction.
    order = _occurrence(_combine(trace.acc_tid, trace.acc_event, trace.acc_array, trace.acc_kind))
    # One instruction = (line, array, kind, order); one request = that, per warp and occurrence.
    inst_u, inst_of_acc = np.unique(_combine(line, trace.acc_array, trace.acc_kind, order), return_inverse=True)
    inst_of_acc = inst_of_acc.reshape(-1)
    req_u, req_id = np.unique(_combine(inst_of_acc, warp, occ), return_inverse=True)
    req_id = req_id.reshape(-1)
    n_req = req_u.size
    req_inst = np.zeros(n_req, np.int64)
    req_inst[req_id] = inst_of_acc
    # Distinct bytes requested per request (elements never straddle: itemsize-aligned addresses).
    req_itemsize = np.zeros(n_req, np.int64)
    req_itemsize[req_id] = itemsize
    req_bytes = _distinct_per_group(req_id, addr, n_req) * req_itemsize
    sectors = _distinct_per_group(req_id, addr // SECTOR_BYTES, n_req)
    # Shared: every 4-byte word an access touches (an 8-byte element touches two); the degree of
    # a request is the most distinct words any one bank must serve.
    is_sh = space == SHARED
    words, rid_w = addr[is_sh] // BANK_BYTES, req_id[is_sh]
    wide = itemsize[is_sh] > BANK_BYTES
    if wide.any():
        words = np.concatenate([words, words[wide] + 1])
        rid_w = np.concatenate([rid_w, rid_w[wide]])
    degree = np.zeros(n_req, np.int64)
    if words.size:
        _, first = np.unique(_combine(rid_w, words), return_index=True)
        d_req, d_bank = rid_w[first], words[first] % N_BANKS
        _, bfirst, counts = np.unique(_combine(d_req, d_bank), return_index=True, return_counts=True)
        np.maximum.at(degree, d_req[bfirst], counts)
    req_acc = np.bincount(req_id, minlength=n_req)
    # Per instruction: sums over its requests.
    n_inst = inst_u.size
    first_acc = np.zeros(n_inst, np.int64)
    first_acc[inst_of_acc[::-1]] = np.arange(inst_of_acc.size)[::-1]

    def per_inst(v):
        return np.bincount(req_inst, weights=v, minlength=n_inst).astype(np.int64)

    requests = np.bincount(req_inst, minlength=n_inst)
    accesses, nbytes = per_inst(req_acc), per_inst(req_bytes)
    nsect, waves = per_inst(sectors), per_inst(degree)
    worst = np.zeros(n_inst, np.int64)
    np.maximum.at(worst, req_inst, degree)
    out = []
    for g in range(n_inst):
        i = first_acc[g]
        sp = "global" if space[i] == GLOBAL else "shared"
        shared = sp == "shared"
        out.append(MemoryInstruction(
            line=int(line[i]), order=int(order[i]), space=sp,
            op={READ: "load", WRITE: "store", ATOMIC: "atomic"}[int(trace.acc_kind[i])],
            array=arrays[int(trace.acc_array[i])].name,
            requests=int(requests[g]), accesses=int(accesses[g]), bytes_requested=int(nbytes[g]),
            sectors=0 if shared else int(nsect[g]), wavefronts=int(waves[g]) if shared else 0,
            max_degree=int(worst[g]) if shared else 0))
    out.sort(key=lambda m: (m.line, m.space != "global", m.array, m.op, m.order))
    return tuple(out)


def _conflicts(owner, location, kind):
    """For groups of accesses (one group per ``location`` id), the first conflicting pair.

    A pair conflicts when two different owners touch the location and at least one access is a
    plain write, or one is atomic and the other plain. Returns (group, idx_a, idx_b) or None.
    """
    if location.size == 0:
        return None
    order = np.lexsort((owner, location))
    loc, own, knd = location[order], owner[order], kind[order]
    start = np.concatenate([[True], loc[1:] != loc[:-1]])
    gid = np.cumsum(start) - 1
    G = int(gid[-1]) + 1
    big = np.iinfo(np.int64).max

    def minmax(mask):
        lo = np.full(G, big, np.int64)
        hi = np.full(G, -1, np.int64)
        np.minimum.at(lo, gid[mask], own[mask])
        np.maximum.at(hi, gid[mask], own[mask])
        return lo, hi

    w_lo, w_hi = minmax(knd == WRITE)
    a_lo, a_hi = minmax(np.ones_like(knd, dtype=bool))
    t_lo, t_hi = minmax(knd == ATOMIC)
    p_lo, p_hi = minmax(knd != ATOMIC)
    has_w = w_hi >= 0
    ww = has_w & (w_lo != w_hi)
    rw = has_w & ((a_lo != w_lo) | (a_hi != w_hi))
    ap = (t_hi >= 0) & (p_hi >= 0) & ~((p_lo == p_hi) & (t_lo == t_hi) & (p_lo == t_lo))
    bad = np.nonzero(ww | rw | ap)[0]
    if bad.size == 0:
        return None
    g = int(bad[0])
    members = np.nonzero(gid == g)[0]
    writers = members[knd[members] != READ]
    a = writers[0] if writers.size else members[0]
    others = members[own[members] != own[a]]
    b = others[0]
    return g, int(order[a]), int(order[b])


def _access_text(trace: Trace, i: int) -> str:
    arr = trace.arrays[int(trace.acc_array[i])]
    idx = np.unravel_index(int(trace.acc_index[i]), arr.shape)
    what = {READ: "read", WRITE: "wrote", ATOMIC: "atomically updated"}[int(trace.acc_kind[i])]
    ev = trace.line_start[trace.acc_tid[i]] + max(int(trace.acc_event[i]), 0)
    line = int(trace.line_no[ev]) if trace.line_no.size else 0
    where = ", ".join(str(int(x)) for x in idx)
    return (f"{trace.describe_thread(int(trace.acc_tid[i]))} {what} {arr.name}[{where}] "
            f"(line {line}: {trace.line_text(line)})")


def _interval_conflicts(trace: Trace, rows: np.ndarray, block: np.ndarray):
    """The first conflicting pair among ``rows`` of one block and one barrier interval. Without
    warp-level meetings, any two threads conflict; with them, two lanes of one warp conflict only
    between the same two meetings, and lanes of different warps as before."""
    loc = (block[rows], trace.acc_epoch[rows], trace.acc_array[rows], trace.acc_index[rows])
    tid, kind = trace.acc_tid[rows], trace.acc_kind[rows]
    if trace.acc_warp_epoch is None:
        _, location = np.unique(_combine(*loc), return_inverse=True)
        return _conflicts(tid, location.reshape(-1), kind)
    warp = _warp_ids(trace, tid)
    _, location = np.unique(_combine(*loc), return_inverse=True)
    hit = _conflicts(warp, location.reshape(-1), kind)               # across warps
    if hit is None:
        _, location = np.unique(_combine(*loc, warp, trace.acc_warp_epoch[rows]), return_inverse=True)
        hit = _conflicts(tid, location.reshape(-1), kind)            # lanes of one warp, one segment
    return hit


def _problems(trace: Trace) -> list:
    problems = []
    space = np.array([a.space for a in trace.arrays], np.int64)[trace.acc_array]
    block = trace.block_of(trace.acc_tid)
    # Shared: same block, same barrier interval.
    sh = np.nonzero(space == SHARED)[0]
    if sh.size:
        hit = _interval_conflicts(trace, sh, block)
        if hit is not None:
            _, a, b = hit
            problems.append(Problem("race", f"shared-memory race: {_access_text(trace, sh[a])}, and "
                                            f"{_access_text(trace, sh[b])}, with no syncthreads between them"))
        # Uninitialized: a read (or an atomic, which reads) of a shared location that no write
        # reached: none in an earlier barrier interval, none earlier in the same thread.
        # (A write by another thread in the same interval is a race, reported above.)
        k = trace.acc_kind[sh]
        ep = trace.acc_epoch[sh]
        tid = trace.acc_tid[sh]
        _, loc2 = np.unique(_combine(block[sh], trace.acc_array[sh], trace.acc_index[sh]), return_inverse=True)
        loc2 = loc2.reshape(-1)
        big = np.iinfo(np.int64).max
        writes = k != READ
        first_w = np.full(loc2.max() + 1, big, np.int64)
        np.minimum.at(first_w, loc2[writes], ep[writes])
        _, own = np.unique(_combine(loc2, tid, ep), return_inverse=True)
        own = own.reshape(-1)
        row = np.arange(sh.size, dtype=np.int64)          # rows of one thread are in program order
        own_first = np.full(own.max() + 1, big, np.int64)
        np.minimum.at(own_first, own[writes], row[writes])
        # Another thread writing the location in the same interval is a race (reported above),
        # not an uninitialized read.
        _, interval = np.unique(_combine(loc2, ep), return_inverse=True)
        interval = interval.reshape(-1)
        w_lo = np.full(interval.max() + 1, big, np.int64)
        w_hi = np.full(interval.max() + 1, -1, np.int64)
        plain = k == WRITE                                 # atomics by others do not initialize
        np.minimum.at(w_lo, interval[plain], tid[plain])
        np.maximum.at(w_hi, interval[plain], tid[plain])
        other_writer = (w_hi[interval] >= 0) & ((w_lo[interval] != tid) | (w_hi[interval] != tid))
        reads = k != WRITE
        early = np.nonzero(reads & ~(ep > first_w[loc2]) & ~(own_first[own] < row) & ~other_writer)[0]
        if early.size:
            i = sh[early[0]]
            never = first_w[loc2[early[0]]] == big
            problems.append(Problem("uninitialized", f"uninitialized shared memory: {_access_text(trace, i)} "
                                    + ("but no thread of its block ever wrote it" if never else
                                       "before any thread of its block had written it")))
    # Global: within a block between barriers (threads), and across blocks (blocks never sync).
    gl = np.nonzero(space == GLOBAL)[0]
    if gl.size:
        hit = _interval_conflicts(trace, gl, block)
        if hit is None:
            _, location = np.unique(_combine(trace.acc_array[gl], trace.acc_index[gl]), return_inverse=True)
            hit = _conflicts(block[gl], location.reshape(-1), trace.acc_kind[gl])
        if hit is not None:
            _, a, b = hit
            problems.append(Problem("race", f"global-memory race: {_access_text(trace, gl[a])}, and "
                                            f"{_access_text(trace, gl[b])}, with nothing ordering them"))
    return problems


def uninitialized_output_read(trace: Trace, names) -> Problem | None:
    """The first read (or atomic) of an element of the global arrays ``names`` that nothing wrote
    before it: not its own thread earlier in program order, nor a thread of its block in an earlier
    barrier interval. For outputs that start as garbage (fresh GPU memory), such a read is of
    garbage: ``out[i] += v`` is the common case. None when there is none."""
    _check_trace(trace)
    aids = [i for i, a in enumerate(trace.arrays) if a.space == GLOBAL and a.name in set(names)]
    rows = np.nonzero(np.isin(trace.acc_array, aids))[0] if aids else np.zeros(0, np.int64)
    if rows.size == 0:
        return None
    tid, kind, ep = trace.acc_tid[rows], trace.acc_kind[rows], trace.acc_epoch[rows]
    block = trace.block_of(tid)
    _, loc = np.unique(_combine(trace.acc_array[rows], trace.acc_index[rows]), return_inverse=True)
    loc = loc.reshape(-1)
    big = np.iinfo(np.int64).max
    plain = kind == WRITE
    _, own = np.unique(_combine(loc, tid), return_inverse=True)
    own = own.reshape(-1)
    own_first = np.full(own.max() + 1, big, np.int64)
    np.minimum.at(own_first, own[plain], rows[plain])          # rows of a thread run in program order
    _, blk = np.unique(_combine(loc, block), return_inverse=True)
    blk = blk.reshape(-1)
    blk_first = np.full(blk.max() + 1, big, np.int64)
    np.minimum.at(blk_first, blk[plain], ep[plain])
    early = np.nonzero((kind != WRITE) & ~(own_first[own] < rows) & ~(blk_first[blk] < ep))[0]
    if early.size == 0:
        return None
    i = int(rows[early[0]])
    return Problem("uninitialized", f"uninitialized output: {_access_text(trace, i)} before any thread had "
                                    f"written it; an output's memory holds garbage at launch (the check "
                                    f"fills it with NaN), and reading it adds global loads the "
                                    f"computation does not need")


def _barrier_problems(trace: Trace) -> list:
    tpb = trace.launch.threads_per_block
    per_block = trace.barriers.reshape(trace.launch.n_blocks, tpb)
    lo, hi = per_block.min(axis=1), per_block.max(axis=1)
    bad = np.nonzero(lo != hi)[0]
    if bad.size:
        b = int(bad[0])
        t_lo = b * tpb + int(np.argmin(per_block[b]))
        t_hi = b * tpb + int(np.argmax(per_block[b]))
        return [Problem("barrier", f"barrier divergence: {trace.describe_thread(t_lo)} passed {int(lo[b])} "
                                   f"syncthreads but {trace.describe_thread(t_hi)} passed {int(hi[b])}: a "
                                   f"syncthreads inside a branch or after an early return is undefined behaviour")]
    # The same count, but the same barriers? Match each thread's k-th syncthreads by call site.
    sites = trace.barrier_site
    if sites.size == 0 or not trace.barrier_sites:
        return []
    start = 0
    for b in range(trace.launch.n_blocks):
        n = int(per_block[b, 0])
        if n:
            seq = sites[start:start + n * tpb].reshape(tpb, n)
            differs = np.nonzero((seq != seq[0]).any(axis=1))[0]
            if differs.size:
                t = int(differs[0])
                k = int(np.nonzero(seq[t] != seq[0])[0][0])
                l0, l1 = trace.barrier_sites[seq[0, k]][0], trace.barrier_sites[seq[t, k]][0]
                return [Problem("barrier", f"barrier divergence: at their barrier number {k + 1}, "
                                           f"{trace.describe_thread(b * tpb)} waited at the syncthreads on "
                                           f"line {l0} and {trace.describe_thread(b * tpb + t)} at a different "
                                           f"syncthreads, on line {l1}: every thread of a block must reach the "
                                           f"same syncthreads call (one in each branch of an if is undefined "
                                           f"behaviour, even when the counts agree)")]
        start += n * tpb
    return []


# --------------------------------------------------------------------------------------------
# Predicted time on a catalog accelerator
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Prediction:
    """Roofline time of a launch on one accelerator (lesson 04's :class:`KernelPoint`, at FP32),
    and the occupancy of its block configuration (lesson 01's calculator)."""

    point: KernelPoint
    bandwidth_bytes_per_s: float
    occupancy: float | None         # None when the accelerator has no occupancy rules or cannot launch
    occupancy_limiter: str

    @property
    def accelerator(self) -> str:
        return self.point.accelerator

    @property
    def flops(self) -> float:
        return self.point.kernel.flops

    @property
    def bytes_moved(self) -> float:
        return self.point.kernel.bytes_moved

    @property
    def peak_flops(self) -> float:
        return self.point.peak_flops

    @property
    def t_compute_s(self) -> float:
        return self.point.t_compute_s

    @property
    def t_memory_s(self) -> float:
        return self.point.t_memory_s

    @property
    def t_s(self) -> float:
        """max(FLOP / peak, bytes / bandwidth): the roofline's lower bound."""
        return self.point.t_min_s

    @property
    def bound(self) -> str:
        return self.point.bound

    @property
    def intensity_flops_per_byte(self) -> float:
        return self.point.intensity_flops_per_byte


def predict_time(flops, bytes_moved, accelerator="H100 SXM", precision="fp32",
                 threads_per_block=None, shared_mem_per_block=0) -> Prediction:
    """The roofline time t = max(F / peak, Q / bandwidth) of a kernel on ``accelerator``.

    CUDA Python kernels of lesson 09 run on the FP32 vector units (no tensor cores), hence the
    default precision. With ``threads_per_block``, the occupancy of that configuration (lesson
    01's calculator, :data:`ASSUMED_REGISTERS` registers per thread) is given beside it. A
    kernel at low occupancy may not reach the bandwidth roof: the time is a lower bound.
    Example: a copy of 2^26 floats reads and writes 2^29 bytes; on an H100 SXM at 3.35 TB/s,
    0.16 ms.
    """
    acc = get_accelerator(accelerator)
    flops = check_number("flops", flops, min_value=0, max_value=1e30)
    bytes_moved = check_number("bytes_moved", bytes_moved, min_value=0, max_value=1e30, allow_min=False)
    occ, limiter = None, "n/a"
    if threads_per_block is not None:
        tpb = check_int("threads_per_block", threads_per_block, min_value=1, max_value=1024)
        smem = check_int("shared_mem_per_block", shared_mem_per_block, min_value=0)
        if acc.max_warps_per_sm is not None:
            try:
                o = occupancy(tpb, ASSUMED_REGISTERS, smem, acc)
                occ, limiter = o.occupancy, o.limiter
            except LaunchError as exc:
                limiter = f"cannot launch: {exc}"
    point = place_kernel(Kernel("launch", flops, bytes_moved), acc, precision)
    return Prediction(point, acc.mem_bandwidth, occ, limiter)
