"""One warp of a traced kernel, as the pictures draw it: its lanes over time, and one request's cost.

    SIMT efficiency = active lane-slots / (issued instructions x 32)                      (lesson 02)
    global request:  sectors = { floor(b / 32) : b in the bytes the active lanes touch }  (lesson 02)
    shared request:  passes  = max over the 32 banks of the distinct 4-byte words it serves (lesson 03)

The counts over a whole launch are ``course_lib.kernels.profile``'s; this module looks at one
warp (:func:`warp_lane_timeline`) and one of its requests (:func:`warp_access`,
:func:`warp_access_cost`), with the same rules. Drawing: ``course_lib.plots.kernels``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validate import check_int
from ..memory import BANK_BYTES, N_BANKS, conflict_degree
from ..simt import Coalescing, coalescing
from .profile import _check_trace, _warp_ids
from .trace import ATOMIC, READ, WARP_SIZE, WRITE, Trace

__all__ = ["LaneTimeline", "warp_lane_timeline", "WarpAccess", "warp_access", "AccessCost", "warp_access_cost"]


# --------------------------------------------------------------------------------------------
# One warp over time (lesson 02's picture, from a real kernel)
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LaneTimeline:
    """One warp's issue order: ``mask[s, lane]`` is True when the lane executed the s-th issued
    instruction, whose source line is ``lines[s]``."""

    kernel_name: str
    warp: int
    lines: np.ndarray
    mask: np.ndarray

    @property
    def issued(self) -> int:
        """Instructions the warp issued (one source line each)."""
        return int(self.lines.size)

    @property
    def active_slots(self) -> int:
        """Lane-slots that did work: the sum of ``mask``."""
        return int(self.mask.sum())

    @property
    def simt_efficiency(self) -> float:
        """active_slots / (issued x 32): the fraction of lane-slots active (0 for no instruction)."""
        return self.active_slots / self.mask.size if self.mask.size else 0.0


def warp_lane_timeline(trace: Trace, warp: int = 0) -> LaneTimeline:
    """Issue order of one warp: which lanes ran each instruction it issued, in order.

    The lanes' line sequences are merged greedily: an instruction is issued when every lane that
    will execute it has reached it (so a branch's two paths run one after the other and the warp
    reconverges after both); among those ready, the one most lanes wait on goes first.
    """
    _check_trace(trace)
    w = check_int("warp", warp, min_value=0, max_value=trace.launch.n_warps - 1)
    tpb = trace.launch.threads_per_block
    block, local = divmod(w, trace.launch.warps_per_block)
    first = block * tpb + local * WARP_SIZE
    tids = range(first, min(first + WARP_SIZE, (block + 1) * tpb))
    seqs = []
    for t in tids:
        raw = trace.line_no[trace.line_start[t]:trace.line_start[t + 1]].tolist()
        seen, seq = {}, []
        for ln in raw:
            k = seen.get(ln, 0)
            seen[ln] = k + 1
            seq.append((ln, k))
        seqs.append(seq)
    total = {}
    for seq in seqs:
        for ev in seq:
            total[ev] = total.get(ev, 0) + 1
    ptr = [0] * len(seqs)
    heads = {}
    for lane, seq in enumerate(seqs):
        if seq:
            heads.setdefault(seq[0], []).append(lane)
    order, masks = [], []
    while heads:
        ready = [ev for ev, ls in heads.items() if len(ls) == total[ev]]
        pool = ready or list(heads)
        ev = min(pool, key=lambda e: (-len(heads[e]), e[0], e[1]))
        lanes_now = heads.pop(ev)
        row = np.zeros(WARP_SIZE, bool)
        row[lanes_now] = True
        order.append(ev[0])
        masks.append(row)
        for lane in lanes_now:
            ptr[lane] += 1
            if ptr[lane] < len(seqs[lane]):
                heads.setdefault(seqs[lane][ptr[lane]], []).append(lane)
    mask = np.array(masks, bool).reshape(-1, WARP_SIZE)
    return LaneTimeline(trace.kernel_name, w, np.array(order, np.int64), mask)


# --------------------------------------------------------------------------------------------
# One warp's access on one source line (for the sector and bank pictures)
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class WarpAccess:
    """The first request a warp made on one source line for one array: each lane's byte address.

    ``addresses[lane]`` is -1 for a lane that made no access in that request. ``space`` is
    'global' (addresses from a 256-byte aligned base) or 'shared' (offsets in the block's shared
    memory, so ``address // 4 % 32`` is the bank).
    """

    line: int
    array: str
    space: str
    op: str
    itemsize: int
    addresses: np.ndarray

    @property
    def active(self) -> np.ndarray:
        return self.addresses >= 0


def warp_access(trace: Trace, line: int, warp: int = 0, array: str | None = None) -> WarpAccess:
    """The addresses warp ``warp`` used on source line ``line`` (first execution, first access,
    or the first access to ``array``). A clear error when that warp made no access there."""
    _check_trace(trace)
    line = check_int("line", line, min_value=1)
    warp = check_int("warp", warp, min_value=0, max_value=trace.launch.n_warps - 1)
    if array is not None and not isinstance(array, str):
        raise TypeError(f"array must be an array's name (a string) or None, got {type(array).__name__}")
    event = trace.line_start[trace.acc_tid] + np.maximum(trace.acc_event, 0)
    lines_of_acc = trace.line_no[event] if trace.acc_tid.size else np.zeros(0, np.int64)
    sel = (lines_of_acc == line) & (_warp_ids(trace, trace.acc_tid) == warp)
    if array is not None:
        names = np.array([a.name for a in trace.arrays])
        sel &= names[trace.acc_array] == array
    hits = np.nonzero(sel)[0]
    if hits.size == 0:
        used = sorted({int(x) for x in lines_of_acc[_warp_ids(trace, trace.acc_tid) == warp]})
        raise ValueError(f"warp {warp} made no memory access on line {line}"
                         + (f" to array {array!r}" if array else "") + f"; its accesses are on lines {used}")
    first = hits[0]
    aid, kind = trace.acc_array[first], trace.acc_kind[first]
    tpb = trace.launch.threads_per_block
    lane_of = (trace.acc_tid % tpb) % WARP_SIZE
    info = trace.arrays[int(aid)]
    addresses = np.full(WARP_SIZE, -1, np.int64)
    same = hits[(trace.acc_array[hits] == aid) & (trace.acc_kind[hits] == kind)]
    for i in same:                       # the first such access of each lane
        lane = int(lane_of[i])
        if addresses[lane] < 0:
            addresses[lane] = info.base_bytes + int(trace.acc_index[i]) * info.itemsize
    return WarpAccess(line, info.name, info.space_name, {READ: "load", WRITE: "store", ATOMIC: "atomic"}[int(kind)],
                      info.itemsize, addresses)


@dataclass(frozen=True)
class AccessCost:
    """What one warp's request on one line cost, as the sector and bank pictures draw it.

    Global memory: ``coalescing``, the 32-byte sectors the active lanes' bytes touch. Shared
    memory: each active lane's ``banks`` entry (4-byte word mod 32), the distinct words each of
    the 32 banks serves (``bank_words``) and ``conflict_degree``, the passes through the banks
    (the largest of ``bank_words``). The fields of the other space are None.
    """

    access: WarpAccess
    warp: int
    lanes: np.ndarray
    coalescing: Coalescing | None
    banks: np.ndarray | None
    bank_words: np.ndarray | None
    conflict_degree: int | None


def warp_access_cost(trace: Trace, line: int, warp: int = 0, array: str | None = None) -> AccessCost:
    """The cost of warp ``warp``'s first request on source line ``line`` (:func:`warp_access`):

        global:  sectors = { floor(b / 32) : b in each active lane's bytes }      (lesson 02)
        shared:  passes  = max over banks of |distinct words in the bank|,  bank = word mod 32  (lesson 03)
    """
    acc = warp_access(trace, line, warp, array)
    act = acc.active
    lanes = np.nonzero(act)[0]
    if acc.space == "global":
        return AccessCost(acc, int(warp), lanes, coalescing(acc.addresses[act], acc.itemsize), None, None, None)
    words = acc.addresses[act] // BANK_BYTES
    banks = words % N_BANKS
    bank_words = np.array([np.unique(words[banks == b]).size for b in range(N_BANKS)], np.int64)
    degree = conflict_degree(acc.addresses[act])
    return AccessCost(acc, int(warp), lanes, None, banks, bank_words, int(degree))
