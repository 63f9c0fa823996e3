"""Issue 23: checks that are hard to fool. Wrong kernels that once passed now fail, with a
message and a failure class that name the mistake; a right kernel once refused now passes."""

from __future__ import annotations

import pytest

from course_lib.kernels.tasks import KernelCheckError, check_kernel
from kernel_solutions import ONCE_PASSED, dot_shared_atomic_kernel


@pytest.mark.parametrize("variant", sorted(ONCE_PASSED))
def test_once_passing_wrong_kernel_fails(variant):
    task, kernel, failure, words = ONCE_PASSED[variant]
    with pytest.raises(KernelCheckError) as err:
        check_kernel(task, kernel)
    msg = str(err.value)
    assert words in msg, msg
    assert err.value.failure == failure, msg
    assert "read again: Lesson 09, section '" in msg, msg


def test_shared_memory_atomic_dot_product_passes():
    runs = check_kernel("dot", dot_shared_atomic_kernel)
    for run in runs:
        assert run.profile.shared_atomics == min(run.sizes["n"], run.profile.launch.n_threads)
        assert run.profile.global_atomics == run.profile.launch.n_blocks


# ----------------------------------------------------------------------------- every case, every task

from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from course_lib.kernels import cuda  # noqa: E402
from course_lib.kernels.tasks import SECTIONS, TASKS, _DEFAULT_MISTAKES, learner_seed, run_task  # noqa: E402
from course_lib.kernels.trace import FULL_MASK, KernelCrash, WarpSyncError, trace_launch  # noqa: E402
from course_lib.kernels.profile import profile_trace  # noqa: E402
from kernel_solutions import GOOD  # noqa: E402

LESSON = Path(__file__).resolve().parent.parent / "notebooks" / "09_kernel_lab.py"


def test_every_section_a_mistake_names_is_a_heading_of_the_lesson():
    headings = {line[len("# ## "):].strip() for line in LESSON.read_text().splitlines() if line.startswith("# ## ")}
    mistakes = list(_DEFAULT_MISTAKES.values())
    for task in TASKS.values():
        mistakes += list(task.mistakes.values()) + [c.mistake for c in task.cases if c.mistake]
        mistakes += [t.mistake for t in task.targets if t.mistake]
    used = {m.heading for m in mistakes}
    assert used <= headings, used - headings
    assert set(SECTIONS.values()) <= headings, set(SECTIONS.values()) - headings


@pytest.mark.parametrize("task", sorted(GOOD))
def test_good_kernel_passes_every_case(task):
    runs = check_kernel(task, GOOD[task])
    assert len(runs) == len(TASKS[task].cases) >= 3


def test_learners_get_their_own_sizes_the_same_every_time():
    a, b = learner_seed("map", "ada"), learner_seed("map", "grace")
    assert a != b and a == learner_seed("map", "ada")
    sizes = {run.sizes["n"] for name in ("ada", "grace", "alan", "edsger")
             for run in check_kernel("map", GOOD["map"], cases=1, learner=name)}
    assert len(sizes) >= 3


def test_outputs_start_as_nan_except_those_accumulated_into():
    @cuda.jit
    def nothing(a, out):
        pass

    @cuda.jit
    def nothing3(a, b, out):
        pass
    assert np.isnan(run_task("map", nothing, seed=1).data["out"]).all()
    assert (run_task("dot", nothing3, seed=1).data["out"] == 0).all()


# ----------------------------------------------------------------------------- warp-level primitives

def _lanes_of(kernel, n=32, values=None, block=None):
    """Run ``kernel(a, out)`` on one block of ``block`` threads; out[t] is thread t's result."""
    a = np.arange(n, dtype=np.float32) if values is None else np.asarray(values, np.float32)
    out = np.full(n, -1.0, np.float32)
    tr = trace_launch(kernel, 1, block or n, a, out)
    return out, profile_trace(tr)


def test_shuffles_by_hand():
    @cuda.jit
    def k(a, out):
        t = cuda.threadIdx.x
        v = a[t]
        idx = cuda.shfl_sync(FULL_MASK, v, 5)              # every lane gets lane 5's value
        idx_wrap = cuda.shfl_sync(FULL_MASK, v, 37)        # 37 mod 32 = lane 5 again
        up = cuda.shfl_up_sync(FULL_MASK, v, 3)            # lane - 3; lanes 0..2 keep their own
        down = cuda.shfl_down_sync(FULL_MASK, v, 3)        # lane + 3; lanes 29..31 keep their own
        x = cuda.shfl_xor_sync(FULL_MASK, v, 1)            # pairs swap
        out[t] = idx if t < 8 else (idx_wrap if t < 12 else (up if t < 20 else (down if t < 30 else x)))
    out, prof = _lanes_of(k, values=10 + np.arange(32))
    lane = np.arange(32)
    want = np.where(lane < 12, 15,
                    np.where(lane < 20, np.where(lane < 3, lane, lane - 3) + 10,
                             np.where(lane < 30, np.where(lane + 3 > 31, lane, lane + 3) + 10, (lane ^ 1) + 10)))
    assert (out == want).all(), out
    assert prof.warp_shuffles == 5 and prof.warp_votes == 0
    assert "5 shuffles" in prof.summary()


def test_shuffle_up_and_down_keep_their_own_value_past_the_ends():
    @cuda.jit
    def k(a, out):
        t = cuda.threadIdx.x
        out[t] = cuda.shfl_up_sync(FULL_MASK, a[t], 3) - cuda.shfl_down_sync(FULL_MASK, a[t], 3)
    out, _ = _lanes_of(k)
    lane = np.arange(32)
    assert (out == np.where(lane >= 3, lane - 3, lane) - np.where(lane + 3 <= 31, lane + 3, lane)).all()


def test_warp_sum_by_shuffle_down_on_two_warps():
    @cuda.jit
    def k(a, out):
        t = cuda.threadIdx.x
        v = a[t]
        off = 16
        while off > 0:
            v += cuda.shfl_down_sync(FULL_MASK, v, off)
            off //= 2
        out[t] = v
    vals = np.arange(64) % 7
    out, prof = _lanes_of(k, n=64, values=vals)
    assert out[0] == vals[:32].sum() and out[32] == vals[32:].sum()
    assert prof.warp_shuffles == 2 * 5                       # five steps in each of two warps


def test_votes_by_hand():
    @cuda.jit
    def k(a, out):
        t = cuda.threadIdx.x
        odd = a[t] % 2 == 1
        b = cuda.ballot_sync(FULL_MASK, odd)
        al = cuda.all_sync(FULL_MASK, a[t] >= 0)
        an = cuda.any_sync(FULL_MASK, a[t] > 30)
        no = cuda.any_sync(FULL_MASK, a[t] > 31)
        out[t] = (b == -1431655766) + 2 * al + 4 * an + 8 * no    # 0xAAAAAAAA as a signed int32
    out, prof = _lanes_of(k)
    assert (out == 1 + 2 + 4).all()
    assert prof.warp_votes == 4


def test_activemask_in_a_branch_is_the_lanes_on_that_path():
    @cuda.jit
    def k(a, out):
        t = cuda.threadIdx.x
        if t < 10:
            m = cuda.activemask()
        else:
            m = cuda.activemask()
        out[t] = m
    out, _ = _lanes_of(k)
    assert (out[:10] == (1 << 10) - 1).all() and (out[10:] == np.float32(((1 << 32) - 1) ^ ((1 << 10) - 1))).all()


def test_a_partial_mask_meets_only_its_lanes():
    @cuda.jit
    def k(a, out):
        t = cuda.threadIdx.x
        if t < 16:
            out[t] = cuda.shfl_xor_sync(0x0000FFFF, a[t], 8)
        else:
            out[t] = cuda.shfl_sync(0xFFFF0000, a[t], 31)
    out, _ = _lanes_of(k)
    lane = np.arange(32)
    assert (out == np.where(lane < 16, lane ^ 8, 31)).all()


def test_a_lane_in_the_mask_that_never_arrives_is_an_error_naming_the_lanes():
    @cuda.jit
    def k(a, out):
        t = cuda.threadIdx.x
        if t < 20:
            out[t] = cuda.shfl_down_sync(FULL_MASK, a[t], 1)     # lanes 20..31 never come
    with pytest.raises(WarpSyncError, match=r"lanes 20, 21, 22, .* and 4 more \(exited\)"):
        _lanes_of(k)
    with pytest.raises(KernelCheckError) as err:
        check_kernel("map", k, cases=1)
    assert err.value.failure == "warp sync" and "never arrive" in str(err.value)


def test_a_lane_waiting_at_syncthreads_while_others_shuffle_is_named():
    @cuda.jit
    def k(a, out):
        t = cuda.threadIdx.x
        if t == 3:
            cuda.syncthreads()
        else:
            out[t] = cuda.shfl_sync(FULL_MASK, a[t], 0)
    with pytest.raises(WarpSyncError, match=r"lane 3 \(waiting at cuda.syncthreads"):
        _lanes_of(k)


def test_a_mask_without_the_caller_and_a_source_outside_the_mask_are_errors():
    @cuda.jit
    def no_self(a, out):
        t = cuda.threadIdx.x
        out[t] = cuda.shfl_sync(0x1, a[t], 0)
    with pytest.raises(WarpSyncError, match="does not include its own lane"):
        _lanes_of(no_self)

    @cuda.jit
    def outside(a, out):
        t = cuda.threadIdx.x
        if t < 16:
            out[t] = cuda.shfl_down_sync(0x0000FFFF, a[t], 8)     # lanes 8..15 read 16..23
    with pytest.raises(WarpSyncError, match="reads lane 16, which is not in the mask"):
        _lanes_of(outside)


def test_syncwarp_orders_shared_memory_inside_a_warp_only():
    @cuda.jit
    def warp_tree(a, out):
        s = cuda.shared.array(32, np.float32)
        t = cuda.threadIdx.x
        s[t] = a[t]
        cuda.syncwarp(FULL_MASK)
        stride = 16
        while stride > 0:
            v = s[t + stride] if t < stride else 0.0
            cuda.syncwarp(FULL_MASK)
            if t < stride:
                s[t] += v
            cuda.syncwarp(FULL_MASK)
            stride //= 2
        out[t] = s[0]
    out, prof = _lanes_of(warp_tree)
    assert (out == np.arange(32).sum()).all() and prof.safe and prof.warp_syncs == 11

    @cuda.jit
    def no_syncwarp(a, out):
        s = cuda.shared.array(32, np.float32)
        t = cuda.threadIdx.x
        s[t] = a[t]
        out[t] = s[31 - t]
    _, prof = _lanes_of(no_syncwarp)
    assert not prof.safe and "race" in prof.problems[0].message

    @cuda.jit
    def across_warps(a, out):                                    # syncwarp does not order two warps
        s = cuda.shared.array(64, np.float32)
        t = cuda.threadIdx.x
        s[t] = a[t]
        cuda.syncwarp(FULL_MASK)
        out[t] = s[63 - t]
    _, prof = _lanes_of(across_warps, n=64)
    assert not prof.safe and "race" in prof.problems[0].message


def test_an_unsupported_primitive_says_so_in_one_line():
    @cuda.jit
    def k(a, out):
        out[0] = cuda.match_any_sync(FULL_MASK, a[0])
    with pytest.raises(KernelCrash) as err:
        _lanes_of(k)
    msg = str(err.value)
    assert "cuda.match_any_sync is not supported" in msg and "\n" not in msg


# ----------------------------------------------------------------------------- design puzzles

from course_lib.kernels.puzzles import PUZZLES  # noqa: E402
from kernel_solutions import PUZZLE_BROKEN  # noqa: E402


def test_at_least_eight_puzzles_each_with_three_broken_variants_one_numeric_or_edge():
    assert len(PUZZLES) >= 8
    for task in PUZZLES:
        variants = [v for v in PUZZLE_BROKEN.values() if v[0] == task]
        assert len(variants) >= 3, task
        assert any(f in ("numerics", "out of bounds", "warp sync", "uninitialized") or "edge" in f
                   for _, _, f, _ in variants) or task in ("scan",), task


@pytest.mark.parametrize("variant", sorted(PUZZLE_BROKEN))
def test_broken_puzzle_kernel_fails_naming_the_problem(variant):
    task, kernel, failure, words = PUZZLE_BROKEN[variant]
    with pytest.raises(KernelCheckError) as err:
        check_kernel(task, kernel)
    msg = str(err.value)
    assert err.value.failure == failure and words in msg, msg
    if failure != "crash":
        assert "read again: Lesson 09, section '" in msg and "run_task(" in msg


# ----------------------------------------------------------------------------- the December 2026 study

from kernel_solutions import STUDY_PASSED  # noqa: E402


@pytest.mark.parametrize("variant", sorted(STUDY_PASSED))
def test_kernel_the_study_found_passing_now_fails_naming_the_problem(variant):
    """docs/studies/kernel_lab_study_2026-12.md: seven wrong kernels and two bypasses passed."""
    task, kernel, failure, words = STUDY_PASSED[variant]
    with pytest.raises(KernelCheckError) as err:
        check_kernel(task, kernel)
    msg = str(err.value)
    assert err.value.failure == failure and words in msg, msg
    assert "read again: Lesson 09, section '" in msg and "run_task(" in msg, msg


from kernel_solutions import FEEDBACK  # noqa: E402


@pytest.mark.parametrize("variant", sorted(FEEDBACK))
def test_the_misconception_follows_the_mistake(variant):
    """The study's misfires: a wrong value on a 1D launch named 'wrong-mapping, section 3' (2D
    grids), 'two blocks' for two warps of one block, an int32 garbage read called a crash..."""
    task, kernel, failure, key = FEEDBACK[variant]
    with pytest.raises(KernelCheckError) as err:
        check_kernel(task, kernel)
    msg = str(err.value)
    assert err.value.failure == failure and f"[misconception: {key}]" in msg, msg
    assert "Two dimensions" not in msg and "Two blocks" not in msg, msg
