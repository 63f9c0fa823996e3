"""Tests of the kernel lab (course_lib.kernels): the traced executor, the profiler, the tasks.

1. The profiler's counts equal counts done by hand on small ``@cuda.jit`` kernels (coalesced,
   strided and broadcast loads, bank conflicts, a divergent branch, atomics), and agree with
   lessons 02-03's calculators (``coalescing``, ``conflict_degree``, ``run_simt``) on the same
   access patterns.
2. Safety: out-of-bounds and float indices, races (one whose output is still right), an
   uninitialized shared read, barrier divergence, endless loops, oversized launches and bad
   arguments all give a clear error or a named problem; a trace is deterministic.
3. Tasks: every good kernel of tests/kernel_solutions.py passes ``check_kernel``; every broken
   variant fails it with a message that names its problem; the tiled matmul reads exactly
   lesson 06's count; ``predict_task`` is the roofline computed by hand from the catalog.
4. ``warp_lane_timeline``: a branch's two paths one after the other, then reconvergence.

Inputs are random, of sizes no block or warp divides, so a wrong count cannot pass by luck.
"""

from __future__ import annotations

import functools
import math
import os
import re
import signal
import time

import numpy as np
import pytest

from course_lib.hardware import get_accelerator
from course_lib.kernels import cuda
from course_lib.kernels.profile import WARP_SIZE, profile_trace
from course_lib.kernels.tasks import (BLOCK, TASKS, TILE, KernelCheckError, check_kernel,
                                      predict_task, run_task)
from course_lib.kernels.trace import (MAX_THREAD_STEPS, MAX_THREADS, KernelCrash, KernelStepLimit,
                                      OutOfBoundsError, trace_launch)
from course_lib.kernels.warp import warp_access, warp_access_cost, warp_lane_timeline
from course_lib.memory import column_read_conflict_degree, conflict_degree, strided_conflict_degree
from course_lib.simt import If, Let, While, coalescing, run_simt, strided_addresses
from course_lib.tiling import tiled_matmul_traffic
from kernel_solutions import BROKEN, GOOD, block_sum_no_sync_kernel, map_no_guard_kernel


def _profile(kernel, grid, block, *args, **kw):
    return profile_trace(trace_launch(kernel, grid, block, *args, **kw))


def _inst(profile, space, op, array=None):
    """The one memory instruction of ``profile`` in ``space`` doing ``op`` (on ``array``)."""
    found = [i for i in profile.instructions
             if i.space == space and i.op == op and (array is None or i.array == array)]
    assert len(found) == 1, found
    return found[0]


def _base(profile, name):
    return next(a.base_bytes for a in profile.trace.arrays if a.name == name)


def _warp_lanes(n_threads, block):
    """Active lanes of each warp of a 1D launch over ``n_threads`` elements (guarded kernel):
    a list of index arrays, one per warp that has at least one active lane."""
    grid = -(-n_threads // block)
    tids = np.arange(grid * block)
    return [t[t < n_threads] for t in np.split(tids, grid * block // WARP_SIZE) if t[0] < n_threads]


# =============================================================================================
# 1. Profiler counts by hand, and against lessons 02-03's calculators
# =============================================================================================

@cuda.jit
def copy1d(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i]


@cuda.jit
def gather_strided(a, out, stride, offset):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i * stride + offset]


def test_coalesced_load_is_four_sectors_per_full_warp():
    rng = np.random.default_rng(101)
    n = int(rng.integers(300, 700)) | 1                  # odd: the last warp is partial
    a = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    p = _profile(copy1d, -(-n // BLOCK), BLOCK, a, out)
    full, rem = divmod(n, WARP_SIZE)
    # A full warp reads 32 floats = 128 bytes from a 256-byte aligned base: 4 sectors; the
    # partial warp reads rem floats: ceil(4 rem / 32) sectors. Same for the store.
    for op, name in (("load", "a"), ("store", "out")):
        ins = _inst(p, "global", op, name)
        assert ins.requests == full + 1
        assert ins.accesses == n
        assert ins.sectors == 4 * full + math.ceil(4 * rem / 32)
        assert ins.bytes_requested == 4 * n
    assert p.global_loads == p.global_stores == n
    assert p.bytes_moved == 32 * 2 * (4 * full + math.ceil(4 * rem / 32))
    assert np.array_equal(out, a)


@pytest.mark.parametrize("stride, offset", [(1, 1), (2, 0), (3, 0), (5, 2), (8, 0), (13, 0)])
def test_strided_load_sectors_by_hand_and_by_coalescing(stride, offset):
    rng = np.random.default_rng(stride * 31 + offset)
    n = int(rng.integers(100, 300)) | 1
    a = rng.standard_normal(n * stride + offset).astype(np.float32)
    out = np.zeros(n, np.float32)
    p = _profile(gather_strided, -(-n // 64), 64, a, out, stride, offset)
    ld = _inst(p, "global", "load", "a")
    warps = _warp_lanes(n, 64)
    # By hand: lane l of a warp reads float (w*32 + l)*stride + offset; the warp's first float
    # is float 32*w*stride, 128*w*stride bytes (a multiple of 128) past a 256-byte aligned base.
    # With no offset, L lanes touch sectors floor(l*stride/8) for l < L: all of 0..floor((L-1)
    # stride/8) when stride <= 8 (no sector skipped), one per lane when stride >= 8.
    if offset == 0:
        by_hand = sum(min(len(t), (len(t) - 1) * stride // 8 + 1) for t in warps)
        assert ld.sectors == by_hand
        full = min(32, 31 * stride // 8 + 1)
        assert full == coalescing(strided_addresses(stride)).n_sectors
    elif stride == 1:
        # One float off: a full warp's 32 floats, bytes 4 to 131 of its 128-byte span, straddle
        # 5 sectors; the partial warp's rem floats end at byte 4 rem + 3.
        rem = n % 32
        assert ld.sectors == 5 * (n // 32) + (4 * rem + 3) // 32 + 1
        assert coalescing(strided_addresses(1, offset_bytes=4)).n_sectors == 5
    # Lesson 02's calculator, one request at a time on the same byte addresses.
    base = _base(p, "a")
    per_warp = [coalescing(base + 4 * (t * stride + offset)) for t in warps]
    assert ld.requests == len(warps)
    assert ld.sectors == sum(c.n_sectors for c in per_warp)
    assert ld.bytes_requested == sum(c.bytes_requested for c in per_warp)
    assert ld.efficiency == pytest.approx(sum(c.bytes_requested for c in per_warp)
                                          / sum(c.bytes_moved for c in per_warp))
    assert np.array_equal(out, a[np.arange(n) * stride + offset])
    # warp_access (the sector picture's input) gives the same addresses, -1 for idle lanes.
    last = len(warps) - 1
    wa = warp_access(p.trace, ld.line, warp=last, array="a")
    assert np.array_equal(wa.addresses[wa.active], base + 4 * (warps[last] * stride + offset))
    assert wa.active.sum() == len(warps[last]) < 32
    # warp_access_cost (what the sector picture draws) counts that warp's sectors as the profile does.
    cost = warp_access_cost(p.trace, ld.line, warp=last, array="a")
    assert cost.coalescing.n_sectors == per_warp[last].n_sectors and cost.banks is None
    assert np.array_equal(cost.lanes, np.nonzero(wa.active)[0])


@cuda.jit
def copy2d(a, out):
    c, r = cuda.grid(2)
    if r < a.shape[0] and c < a.shape[1]:
        out[r, c] = a[r, c]


def test_a_transposed_view_is_counted_by_its_real_layout_or_refused():
    rng = np.random.default_rng(8)
    a = rng.standard_normal((64, 32)).astype(np.float32).T      # (32, 64), column-major in memory
    try:
        p = _profile(copy2d, (2, 4), (32, 8), a, np.zeros((32, 64), np.float32))
    except (TypeError, ValueError) as exc:
        assert "contiguous" in str(exc)
        return
    ld = _inst(p, "global", "load", "a")
    # Lanes take consecutive columns of the view: 32 floats = 128 bytes apart in memory.
    assert ld.sectors == 32 * ld.requests


@cuda.jit
def broadcast(a, out):
    s = cuda.shared.array(4, np.float32)
    t = cuda.threadIdx.x
    if t == 0:
        s[1] = 2.5
    cuda.syncthreads()
    out[cuda.grid(1)] = a[3] + s[1]


def test_broadcast_is_one_sector_one_word_no_conflict():
    rng = np.random.default_rng(5)
    a = rng.standard_normal(7).astype(np.float32)
    out = np.zeros(3 * 96, np.float32)
    p = _profile(broadcast, 3, 96, a, out)                # 3 warps per block, 9 warps
    g = _inst(p, "global", "load", "a")
    assert (g.requests, g.accesses, g.sectors, g.bytes_requested) == (9, 288, 9, 9 * 4)
    assert g.efficiency == pytest.approx(4 / 32)          # one float used of a 32-byte sector
    sh = _inst(p, "shared", "load", "s")
    assert (sh.requests, sh.accesses, sh.wavefronts, sh.max_degree) == (9, 288, 9, 1)
    assert sh.bytes_requested == 9 * 4                     # one distinct word per request
    # Lessons 02 and 03 on 32 lanes reading one address.
    assert coalescing(np.full(32, _base(p, "a") + 12)).n_sectors == 1
    assert coalescing(np.full(32, _base(p, "a") + 12)).bytes_requested == 4
    assert conflict_degree(np.full(32, _base(p, "s") + 4)) == 1 == strided_conflict_degree(0)
    assert np.allclose(out, a[3] + 2.5)


@cuda.jit
def shared_strided(out, stride):
    s = cuda.shared.array(1600, np.float32)
    t = cuda.threadIdx.x
    s[t * stride] = t
    cuda.syncthreads()
    out[t] = s[t * stride]


@pytest.mark.parametrize("stride, full_degree, half_degree", [(2, 2, 1), (32, 32, 16), (33, 1, 1)])
def test_bank_conflict_degree_by_hand_and_by_lesson_03(stride, full_degree, half_degree):
    # A block of 48 threads: warp 0 has 32 lanes, warp 1 has 16. Lane t touches word t*stride,
    # bank (t*stride) mod 32: stride 2 puts two lanes on each even bank (16 lanes: one each);
    # stride 32 puts every lane on bank 0; stride 33 gives every lane its own bank.
    out = np.zeros(48, np.float32)
    p = _profile(shared_strided, 1, 48, out, stride)
    for op in ("store", "load"):
        ins = _inst(p, "shared", op, "s")
        assert ins.requests == 2
        assert ins.max_degree == full_degree
        assert ins.wavefronts == full_degree + half_degree
    assert p.bank_conflict_degree == full_degree
    assert full_degree == strided_conflict_degree(stride)
    assert half_degree == strided_conflict_degree(stride, lanes=16)
    base = _base(p, "s")
    assert full_degree == conflict_degree(base + 4 * stride * np.arange(32))
    assert half_degree == conflict_degree(base + 4 * stride * np.arange(32, 48))
    # warp_access_cost (what the bank picture draws): per-bank distinct words, their max the degree.
    for warp, degree, lanes in ((0, full_degree, 32), (1, half_degree, 16)):
        cost = warp_access_cost(p.trace, ins.line, warp=warp, array="s")
        assert cost.conflict_degree == degree == cost.bank_words.max() and cost.coalescing is None
        assert cost.bank_words.sum() == lanes and cost.lanes.size == lanes
        assert np.array_equal(cost.banks, (base // 4 + stride * (np.arange(lanes) + 32 * warp)) % 32)
    assert np.array_equal(out, np.arange(48))


@cuda.jit
def branchy(out):
    i = cuda.grid(1)
    if cuda.threadIdx.x % 32 < 8:
        out[i] = 1.0
        out[i] += 2.0
    else:
        out[i] = 4.0
    out[i] *= 2.0


def test_divergent_branch_issue_and_efficiency_by_hand():
    # Blocks of 40 threads: warp 0 of a block has 32 lanes, 8 take the if path, 24 the else;
    # warp 1 has 8 lanes, all on the if path (so it does not diverge).
    out = np.zeros(3 * 40, np.float32)
    p = _profile(branchy, 3, 40, out)
    # warp 0: grid, if, 2 then-lines, 1 else-line, the line after: 6 issued,
    #         32 + 32 + 8 + 8 + 24 + 32 = 136 lane-slots;  warp 1: 5 lines x 8 lanes.
    assert list(p.issued_per_warp) == [6, 5] * 3
    assert list(p.slots_per_warp) == [136, 40] * 3
    assert list(p.divergent_per_warp) == [True, False] * 3
    assert p.divergent_warps == 3
    assert p.simt_efficiency == pytest.approx(3 * (136 + 40) / (32 * 3 * (6 + 5)))
    stats = {s.text: (s.issued, s.slots) for s in p.lines}
    assert stats["out[i] = 1.0"] == (6, 3 * (8 + 8))
    assert stats["out[i] = 4.0"] == (3, 3 * 24)
    lane = np.arange(120) % 40
    assert np.array_equal(out, np.where(lane % 32 < 8, 6.0, 8.0))


@cuda.jit
def branch_and_loop(x, reps, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        if v > 0.3:
            v = v * 2.0
            v = v + 1.0
        else:
            v = -v
        j = 0
        while j < reps[i]:
            v = v * 0.5
            j += 1
        out[i] = v


def _branch_and_loop_simt(x, reps):
    # The same statements for lesson 02's simulator, one per kernel source line.
    n = x.size

    def own(arr):
        return lambda v: arr[np.minimum(v["tid"], n - 1)]

    return [Let("i", lambda v: v["tid"]),
            If(lambda v: v["tid"] < n, then=[
                Let("v", own(x)),
                If(lambda v: v["v"] > 0.3,
                   then=[Let("v", lambda v: v["v"] * 2.0), Let("v", lambda v: v["v"] + 1.0)],
                   orelse=[Let("v", lambda v: -v["v"])]),
                Let("j", lambda v: 0),
                While(lambda v: v["j"] < own(reps)(v),
                      [Let("v", lambda v: v["v"] * 0.5), Let("j", lambda v: v["j"] + 1)]),
                Let("out", lambda v: v["v"])])]


def test_divergence_agrees_with_run_simt():
    # How the two models line up: the profiler counts one instruction per source line a warp
    # executes (the k-th execution of line L by its lanes is one issue); run_simt counts one per
    # Let, one per If condition and one per While test. Written one statement per line, the
    # kernel's lines and run_simt's statements are the same list: `if` and `while` lines are
    # executed (as conditions) every time run_simt evaluates them, `else:` is no line of its own,
    # and a loop's test line runs once more than its body, as run_simt's While test does. The
    # guard `if i < x.size` is an If over all launched threads. So per warp both the issued
    # count and the lane-slots agree exactly, partial warps and data-dependent loops included.
    rng = np.random.default_rng(2024)
    n = int(rng.integers(200, 400)) | 1
    block = 128
    x = rng.standard_normal(n).astype(np.float32)
    reps = rng.integers(0, 7, n)
    out = np.zeros(n, np.float32)
    p = _profile(branch_and_loop, -(-n // block), block, x, reps, out)
    r = run_simt(_branch_and_loop_simt(x, reps), -(-n // block) * block, {})
    assert np.array_equal(p.issued_per_warp, r.issued_per_warp)
    assert np.array_equal(p.slots_per_warp, r.active_slots_per_warp)
    assert p.simt_efficiency == pytest.approx(r.simt_efficiency)
    assert r.simt_efficiency < 0.95                       # the test has divergence to count
    expected = np.where(x > 0.3, 2 * x + 1, -x) * 0.5 ** reps
    assert np.allclose(out, expected.astype(np.float32), rtol=1e-6)


@cuda.jit
def histogram(a, hist):
    i = cuda.grid(1)
    if i < a.size:
        cuda.atomic.add(hist, a[i], 1)


def test_atomics_count_and_contention():
    rng = np.random.default_rng(9)
    n = int(rng.integers(300, 600)) | 1
    a = rng.integers(0, 7, n)
    a[rng.integers(0, n, 40)] = 4                         # one bin clearly the most contended
    hist = np.zeros(7, np.int64)
    p = _profile(histogram, -(-n // BLOCK), BLOCK, a, hist)
    counts = np.bincount(a, minlength=7)
    assert np.array_equal(hist, counts)
    assert p.atomics == n
    assert p.atomic_max_contention == counts.max()
    assert _inst(p, "global", "atomic", "hist").accesses == n
    assert p.global_loads == n                            # a[i]; atomics are counted apart
    assert p.safe                                         # atomics do not race with each other


def test_transpose_conflicts_match_column_read_degree():
    # Lesson 03's tile calculator on lesson 09's transposes: a 32-float row is a 32-way column
    # read; one word of padding makes it conflict-free.
    assert _good_run("transpose").profile.bank_conflict_degree == column_read_conflict_degree(32)
    assert _good_run("transpose_padded").profile.bank_conflict_degree == column_read_conflict_degree(32, 1)


# =============================================================================================
# 2. Safety: clear errors and named problems
# =============================================================================================

@cuda.jit
def offset_read(a, out, shift):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i + shift]


@cuda.jit
def offset_write(a, out, shift):
    i = cuda.grid(1)
    if i < a.size:
        out[i + shift] = a[i]


@pytest.mark.parametrize("kernel, shift, array, index, tid", [
    (offset_read, 3, "a", 103, 100),      # thread 100 reads a[103] (the first past the end)
    (offset_read, -2, "a", -2, 0),        # thread 0 reads a[-2]: must not wrap to a[101]
    (offset_write, 1, "out", 103, 102),
    (offset_write, -1, "out", -1, 0),
])
def test_out_of_bounds_names_thread_array_and_index(kernel, shift, array, index, tid):
    a = np.arange(103, dtype=np.float32)
    out = np.zeros(103, np.float32)
    before = out.copy()
    with pytest.raises(OutOfBoundsError) as err:
        trace_launch(kernel, 2, 64, a, out, shift)
    msg = str(err.value)
    block, thread = divmod(tid, 64)
    assert f"thread {thread} of block {block}" in msg
    assert f"{array}[{index}]" in msg
    assert "out of bounds for axis 0 of size 103" in msg
    if index < 0:
        assert "do not wrap" in msg
        assert np.array_equal(out[-2:], before[-2:])      # nothing written through a wrap


@cuda.jit
def row_overrun(a, out):
    out[0] = a[1, a.shape[1]]


def test_out_of_bounds_on_a_row_does_not_spill_into_the_next():
    a = np.arange(15, dtype=np.float32).reshape(3, 5)
    with pytest.raises(OutOfBoundsError, match=r"a\[1, 5\].*axis 1 of size 5"):
        trace_launch(row_overrun, 1, 1, a, np.zeros(1, np.float32))


@cuda.jit
def float_index(a, out):
    i = cuda.grid(1)
    out[i] = a[i / 2]


def test_float_index_is_refused_with_a_hint():
    with pytest.raises(OutOfBoundsError, match=r"float .*not an integer.*//"):
        trace_launch(float_index, 1, 8, np.zeros(8, np.float32), np.zeros(8, np.float32))


@cuda.jit
def shift_through_shared(a, out):
    s = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = a[i]
    if t > 0:
        out[i] = s[t - 1]                 # no syncthreads: thread t-1's write is not ordered


def test_shared_race_is_found_even_when_the_output_is_right():
    # The executor runs a block's threads in order, so thread t-1 has always written s[t-1]
    # when thread t reads it: the output is right. The race is still in the trace.
    rng = np.random.default_rng(3)
    a = rng.standard_normal(128).astype(np.float32)
    out = np.zeros(128, np.float32)
    p = _profile(shift_through_shared, 2, 64, a, out)
    expected = np.where(np.arange(128) % 64 > 0, np.roll(a, 1), 0)
    assert np.array_equal(out, expected)                  # right answer ...
    assert [q.kind for q in p.problems] == ["race"]       # ... and still a race
    msg = p.problems[0].message
    assert "shared-memory race" in msg
    assert "thread 0 of block 0 wrote s[0]" in msg and "thread 1 of block 0 read s[0]" in msg
    assert "s[t] = a[i]" in msg and "out[i] = s[t - 1]" in msg
    assert not p.safe


def test_reduction_without_syncthreads_is_a_race_naming_both_threads():
    rng = np.random.default_rng(4)
    n = 2 * BLOCK + 37
    a = rng.standard_normal(n).astype(np.float32)
    p = _profile(block_sum_no_sync_kernel, 3, BLOCK, a, np.zeros(3, np.float32))
    races = [q for q in p.problems if q.kind == "race"]
    assert races
    msg = races[0].message
    assert "shared-memory race" in msg and "s[t] += s[t + stride]" in msg
    assert msg.count("of block 0") == 2 and "wrote s[" in msg and "read s[" in msg


@cuda.jit
def last_block_wins(out):
    if cuda.threadIdx.x == 0:
        out[0] = cuda.blockIdx.x


def test_global_write_write_race_across_blocks():
    p = _profile(last_block_wins, 3, 32, np.zeros(1, np.float32))
    assert [q.kind for q in p.problems] == ["race"]
    msg = p.problems[0].message
    assert "global-memory race" in msg
    assert "thread 0 of block 0 wrote out[0]" in msg and "thread 0 of block 1 wrote out[0]" in msg


@cuda.jit
def read_before_any_write(out):
    s = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    out[t] = s[t]


@cuda.jit
def read_before_the_barrier(out):
    s = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    out[t] = s[31 - t]
    cuda.syncthreads()
    s[t] = 1.0


def test_uninitialized_shared_read():
    p = _profile(read_before_any_write, 1, 32, np.zeros(32, np.float32))
    assert [q.kind for q in p.problems] == ["uninitialized"]
    assert "thread 0 of block 0 read s[0]" in p.problems[0].message
    assert "no thread of its block ever wrote it" in p.problems[0].message
    p = _profile(read_before_the_barrier, 1, 32, np.zeros(32, np.float32))
    assert [q.kind for q in p.problems] == ["uninitialized"]
    assert "before any thread of its block had written it" in p.problems[0].message


@cuda.jit
def accumulate_into_uninitialized(out):
    s = cuda.shared.array(32, np.int32)
    t = cuda.threadIdx.x
    s[t] += 1                             # reads s[t] before anything was stored there
    out[t] = s[t]


def test_uninitialized_read_then_write_by_the_same_thread():
    p = _profile(accumulate_into_uninitialized, 1, 32, np.zeros(32, np.int32))
    assert [q.kind for q in p.problems] == ["uninitialized"]


@cuda.jit
def atomic_on_uninitialized(out):
    s = cuda.shared.array(1, np.int32)
    cuda.atomic.add(s, 0, 1)              # adds to whatever the fresh shared memory held
    cuda.syncthreads()
    out[cuda.threadIdx.x] = s[0]


def test_atomic_on_uninitialized_shared_memory():
    p = _profile(atomic_on_uninitialized, 1, 32, np.zeros(32, np.int32))
    assert [q.kind for q in p.problems] == ["uninitialized"]


@cuda.jit
def early_return_then_barrier(out):
    t = cuda.threadIdx.x
    if t >= 20:
        return
    cuda.syncthreads()
    out[cuda.grid(1)] = 1.0


def test_barrier_divergence():
    p = _profile(early_return_then_barrier, 2, 32, np.zeros(64, np.float32))
    assert [q.kind for q in p.problems] == ["barrier"]
    msg = p.problems[0].message
    assert "thread 20 of block 0 passed 0 syncthreads" in msg and "thread 0 of block 0 passed 1" in msg


@cuda.jit
def endless(out):
    x = 0
    while x >= 0:
        x += 1
    out[0] = x


def test_endless_loop_stops_with_step_limit():
    # One thread past MAX_THREAD_STEPS lines is called an endless loop, naming it and its line.
    out = np.zeros(1, np.float32)
    with pytest.raises(KernelStepLimit, match=rf"thread 0 of block 0 ran more than {MAX_THREAD_STEPS:,} "
                                              rf"lines.*line \d+.*endless loop"):
        trace_launch(endless, 1, 4, out)
    # The launch-wide limit stops many threads that each run a long while.
    with pytest.raises(KernelStepLimit, match=r"launch ran more than 5,000 kernel lines \(stopped in "
                                              r"thread 0 of block 0\)"):
        trace_launch(endless, 1, 4, out, max_steps=5000)


#: Seconds a step-limited endless loop may take to stop, on a machine as loaded as these get.
STOP_WITHIN_S = 20.0


def _stops_within(fn, seconds):
    """Run ``fn`` in a forked child; True when it returned within ``seconds``, else kill it.

    An endless loop the tracer cannot see would hang the test run; a child is killed instead.
    The bound is generous (a loop the step limit stops returns in milliseconds on a quiet machine):
    it tells a loop that stops from one that never does, not a fast tracer from a slow one.
    """
    pid = os.fork()
    if pid == 0:                          # child: report by exit status only
        code = 1
        try:
            fn()
        except KernelStepLimit:
            code = 0
        except BaseException:
            code = 2
        os._exit(code)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status) == 0
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return False


@cuda.jit
def spin_forever(out):
    while True: pass  # noqa: E701  (one line: no new line event per iteration)


def test_one_line_endless_loop_stops():
    assert _stops_within(lambda: trace_launch(spin_forever, 1, 2, np.zeros(1), max_steps=1000), STOP_WITHIN_S)


@cuda.jit(device=True)
def count_up(x):
    while x >= 0:
        x += 1
    return x


@cuda.jit
def calls_endless_device_function(out):
    out[0] = count_up(0)


def test_endless_loop_in_a_device_function_stops():
    assert _stops_within(lambda: trace_launch(calls_endless_device_function, 1, 1, np.zeros(1),
                                              max_steps=1000), STOP_WITHIN_S)


def test_launch_over_the_thread_limit_is_refused_before_running():
    out = np.zeros(4, np.float32)
    grid = MAX_THREADS // 1024 + 1
    with pytest.raises(KernelStepLimit, match=f"{grid * 1024:,} threads.*at most {MAX_THREADS:,}"):
        trace_launch(endless, grid, 1024, out)
    with pytest.raises(KernelStepLimit, match="at most 96"):
        trace_launch(endless, 4, 32, out, max_threads=96)
    assert not out.any()


@pytest.mark.parametrize("call, error, words", [
    (lambda o: trace_launch(copy1d, 1, 1025, o, o), ValueError, "at most 1024 threads per block"),
    (lambda o: trace_launch(copy1d, 1, (32, 16, 4), o, o), ValueError, "2048 threads"),
    (lambda o: trace_launch(copy1d, 0, 32, o, o), ValueError, "grid"),
    (lambda o: trace_launch(copy1d, 1, 32, o), TypeError, r"copy1d takes 2 argument\(s\) \(a, out\), got 1"),
    (lambda o: trace_launch(np.add, 1, 32, o, o), TypeError, "decorated with @cuda.jit"),
    (lambda o: trace_launch("copy1d", 1, 32, o, o), TypeError, "decorated with @cuda.jit"),
])
def test_bad_launch_arguments_are_refused_clearly(call, error, words):
    with pytest.raises(error, match=words):
        call(np.zeros(32, np.float32))


@cuda.jit
def divide_by_zero(out):
    i = cuda.grid(1)
    out[i] = 1 / (i - 5)


def test_exception_in_kernel_code_names_the_thread():
    with pytest.raises(KernelCrash, match=r"thread 5 of block 0 at line \d+ "
                                          r"\(out\[i\] = 1 / \(i - 5\)\).*ZeroDivisionError"):
        trace_launch(divide_by_zero, 1, 8, np.zeros(8))


@cuda.jit
def read_neighbour(a, out):
    i = cuda.grid(1)
    out[i] = a[i - 1]


def test_device_array_arguments_are_checked_or_refused():
    a = cuda.to_device(np.arange(4.0))
    with pytest.raises((OutOfBoundsError, TypeError, ValueError)):
        trace_launch(read_neighbour, 1, 4, a, np.zeros(4))


@cuda.jit
def mixed(a, hist, out):
    s = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = a[i] if i < a.size else 0.0
    cuda.syncthreads()
    if t % 3 == 0 and i < a.size:
        cuda.atomic.add(hist, int(a[i] > 0), 1)
    if i < a.size:
        out[i] = s[(t + 1) % 64]


def test_two_traces_of_one_launch_are_identical():
    rng = np.random.default_rng(12)
    a = rng.standard_normal(150).astype(np.float32)
    runs = []
    for _ in range(2):
        hist, out = np.zeros(2, np.int64), np.zeros(150, np.float32)
        runs.append((trace_launch(mixed, 3, 64, a, hist, out), hist, out))
    (t1, h1, o1), (t2, h2, o2) = runs
    for field in ("acc_tid", "acc_array", "acc_index", "acc_kind", "acc_epoch", "acc_event",
                  "line_no", "line_start", "barriers"):
        assert np.array_equal(getattr(t1, field), getattr(t2, field)), field
    assert t1.arrays == t2.arrays and t1.launch == t2.launch
    assert np.array_equal(h1, h2) and np.array_equal(o1, o2)
    assert profile_trace(t1).summary() == profile_trace(t2).summary()


# =============================================================================================
# 3. Tasks: good kernels pass, broken ones fail for their reason, costs against lessons 04, 06
# =============================================================================================

@functools.lru_cache(maxsize=None)
def _good_runs(task):
    return tuple(check_kernel(task, GOOD[task], cases=1))


def _good_run(task):
    return _good_runs(task)[0]


def test_every_task_has_a_good_kernel():
    assert set(GOOD) == set(TASKS)


@pytest.mark.parametrize("task", sorted(GOOD))
def test_good_kernel_passes_check(task):
    run = _good_run(task)
    assert run.correct and run.profile.safe
    assert all(v % 2 == 1 for v in run.sizes.values())      # odd sizes: no block divides them


def _measured_allowed(msg):
    """The two numbers of a cost-target failure: '... measured 7,656, allowed 3,828' (or 'required' for a floor)."""
    m = re.search(r"measured ([\d,.]+)(%?), (?:allowed|required) ([\d,.]+)(%?)", msg)
    assert m, msg
    return tuple(float(m.group(g).replace(",", "")) / (100 if m.group(g + 1) else 1) for g in (1, 3))


def _sizes_in(msg):
    """The sizes a check message quotes: 'matmul_tiled at m=31, k=33, n=27: ...'."""
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", msg.split(":")[0])}


@pytest.mark.parametrize("variant", sorted(BROKEN))
def test_broken_kernel_fails_check_naming_the_problem(variant):
    task, kernel, words = BROKEN[variant]
    with pytest.raises(KernelCheckError) as err:
        check_kernel(task, kernel, cases=1)
    msg = str(err.value)
    assert words in msg
    assert f"run_task({task!r}, kernel, seed=" in msg     # says how to rerun the case
    s = _sizes_in(msg)
    # The figures the message quotes, against counts by hand at the sizes it quotes.
    if variant == "map_no_guard":
        assert f"indexed a[{s['n']}]" in msg              # the first element past the end
    elif variant == "block_sum_serial_no_sync":
        assert "output may still look right" in msg
    elif variant == "dot_atomic_per_thread":
        assert _measured_allowed(msg) == (s["n"], -(-s["n"] // BLOCK))
    elif variant == "copy_strided":
        # Lanes `rows` floats apart, rows > 8: one 32-byte sector per 4-byte element (12.5%;
        # the message rounds to whole percent).
        got, allowed = _measured_allowed(msg)
        assert s["rows"] > 8 and got == pytest.approx(4 / 32, abs=0.01) and allowed == 0.6
    elif variant == "transpose_unpadded":
        assert _measured_allowed(msg) == (column_read_conflict_degree(32), 1)
    elif variant in ("matmul_tiled_twice", "matmul_untiled"):
        t = tiled_matmul_traffic(s["m"], s["k"], s["n"], TILE, TILE, bytes_per_element=1)
        tiled = t.a_bytes + t.b_bytes
        untiled = 2 * s["m"] * s["k"] * s["n"]             # every thread reads a row and a column
        assert _measured_allowed(msg) == ((2 * tiled if variant == "matmul_tiled_twice" else untiled), tiled)
    elif variant == "softmax_three_pass":
        cells = s["rows"] * s["cols"]
        assert _measured_allowed(msg) == (3 * cells, 2 * cells)


def test_check_message_reruns_the_failing_case():
    with pytest.raises(KernelCheckError) as err:
        check_kernel("map", map_no_guard_kernel, cases=1)
    seed = int(re.search(r"seed=(\d+)", str(err.value)).group(1))
    with pytest.raises(OutOfBoundsError, match=f"a\\[{_sizes_in(str(err.value))['n']}\\]"):
        run_task("map", map_no_guard_kernel, seed=seed)


def test_tiled_matmul_loads_equal_lesson_06_count():
    run = _good_run("matmul_tiled")
    m, k, n = run.sizes["m"], run.sizes["k"], run.sizes["n"]
    assert m % TILE and k % TILE and n % TILE                # edge tiles in every dimension
    t = tiled_matmul_traffic(m, k, n, TILE, TILE, bytes_per_element=1)
    assert run.profile.global_loads == t.a_bytes + t.b_bytes
    assert run.profile.global_stores == m * n


def test_predict_task_is_the_roofline_by_hand():
    run = _good_run("map")
    n = run.sizes["n"]
    h100 = get_accelerator("H100 SXM")
    flops = 2 * n                                          # 10 * a + 1: one multiply, one add
    # a and out are 256-byte aligned: each full warp moves 4 sectors per array, the last
    # warp ceil(rem / 8); twice (read a, write out).
    bytes_moved = 2 * 32 * (4 * (n // 32) + math.ceil((n % 32) / 8))
    want = max(flops / h100.peak("fp32"), bytes_moved / h100.mem_bandwidth)
    pred = predict_task(run)
    assert pred.flops == flops and pred.bytes_moved == bytes_moved
    assert pred.t_s == pytest.approx(want, rel=1e-12)
    assert pred.bound == "memory"
    # At the task's large size: the model bytes (8 n) scaled by the traced waste.
    big = TASKS["map"].large["n"]
    large = predict_task(run, sizes="large")
    assert large.bytes_moved == pytest.approx(8 * big * bytes_moved / (8 * n))
    assert large.t_s == pytest.approx(max(2 * big / h100.peak("fp32"),
                                          large.bytes_moved / h100.mem_bandwidth))


# =============================================================================================
# 4. One warp over time
# =============================================================================================

def test_warp_lane_timeline_issues_both_paths_then_reconverges():
    out = np.zeros(2 * 40, np.float32)
    tr = trace_launch(branchy, 2, 40, out)
    timeline = warp_lane_timeline(tr, 0)
    lines, mask = timeline.lines, timeline.mask
    assert (timeline.kernel_name, timeline.warp, timeline.issued) == (tr.kernel_name, 0, len(lines))
    assert timeline.active_slots == mask.sum() and timeline.simt_efficiency == mask.sum() / (32 * len(lines))
    text = [tr.line_text(ln) for ln in lines]
    assert text[:2] == ["i = cuda.grid(1)", "if cuda.threadIdx.x % 32 < 8:"]
    assert mask[:2].all()                                  # everyone before the branch
    then_rows = [s for s, t in enumerate(text) if t in ("out[i] = 1.0", "out[i] += 2.0")]
    else_rows = [s for s, t in enumerate(text) if t == "out[i] = 4.0"]
    assert len(then_rows) == 2 and len(else_rows) == 1
    lane = np.arange(32)
    for s in then_rows:
        assert np.array_equal(mask[s], lane < 8)
    assert np.array_equal(mask[else_rows[0]], lane >= 8)  # the complementary lanes
    # The paths run one after the other (not interleaved), and only then the shared line.
    assert sorted(then_rows + else_rows) == [2, 3, 4]
    assert then_rows == [then_rows[0], then_rows[0] + 1]
    assert text[5:] == ["out[i] *= 2.0"] and mask[5].all()  # reconverged
    assert len(lines) == tr.line_no[tr.line_start[0]:tr.line_start[1]].size + 1  # 6 issues
    # Warp 1 of block 0 (8 lanes, all on the if path) never splits.
    mask1 = warp_lane_timeline(tr, 1).mask
    assert mask1.sum(axis=1).tolist() == [8] * 5
    assert mask1[:, 8:].sum() == 0
