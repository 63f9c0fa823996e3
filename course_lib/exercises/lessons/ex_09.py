"""Checks for lesson 09, the kernel lab (answers in solutions/09_kernel_lab.py).

Exercises 09.1 to 09.13 are ``@cuda.jit`` kernels for tasks of ``course_lib.kernels.tasks``, which
holds the data, the launch, the NumPy reference and the cost targets; nothing is typed here.
09.14 and 09.15 give the learner a correct but slow kernel and its profile: their answers are
computed from the traced profiles of that kernel and of the changes 09.15 proposes. This module
imports no part of the kernel lab (nor numba): that happens when a check runs.
"""

from __future__ import annotations

import functools

import numpy as np

from course_lib.exercises.feedback import Misconception
from course_lib.exercises.types import ChoiceExercise, KernelExercise, ValueExercise
from course_lib.exercises.misconceptions import shared
from course_lib.hardware import get_accelerator

__all__ = ["EXERCISES"]


def _form(signature: str, what: str) -> str:
    return f"a @cuda.jit kernel {signature} that {what}"


# --- 09.14 (predict) and 09.15 (diagnose, then fix): a correct but slow kernel -----------------

_COPY = "5. A coalesced copy and a strided one"
_TRANSPOSE = "6. A transpose through shared memory, and padding"
_REDUCTION = "4. A block reduction in shared memory, and the race"

cuda = None                   # the kernel lab's cuda, imported on first use (the tracer swaps this global)


def _import_cuda():
    global cuda
    from course_lib.kernels import cuda


def _slow():
    """course_lib.kernels.slow, imported when a check runs (importing the checks imports no part
    of the kernel lab)."""
    from course_lib.kernels import slow
    return slow


def waste_factors(profile) -> dict:
    """How many times its ideal each limit makes the kernel work, from a ``KernelProfile``:
    sectors moved over sectors needed, the worst bank-conflict degree, issue slots over useful
    lane slots, and the most atomics on one address (1 = no waste)."""
    return {"uncoalesced": 1 / profile.coalescing_efficiency,
            "bank-conflicts": max(1, profile.bank_conflict_degree),
            "divergence": 1 / profile.simt_efficiency,
            "atomics": max(1, profile.atomic_max_contention)}


@functools.lru_cache(maxsize=None)
def _profile(exercise_id: str, fix: str | None = None):
    """The profile of 09.14's or 09.15's kernel (or of one of 09.15's changes) on its data."""
    from course_lib.kernels.profile import profile_trace
    from course_lib.kernels.trace import trace_launch

    kernel, grid, block, args = _slow().slow_launch(exercise_id)
    if fix is not None:
        kernel = _FIXES[fix]()
    return profile_trace(trace_launch(kernel, grid, block, *args))


# --- 09.14 (what-if): the row sums on narrower rows than the traced ones ----------------------
# The traced launch has 24-column rows (96 bytes apart: one sector per lane); production rows have
# 6 columns (24 bytes apart: lanes share sectors), so the traced sectors cannot simply be rescaled.

_PREDICT = "9. From a profile to a predicted time"
LARGE_ROWS, LARGE_COLS, PREDICT_ACCELERATOR = 2 ** 20, 6, "H100 SXM"


@functools.lru_cache(maxsize=None)
def _narrow_profile():
    """The profile of 09.14's kernel on 128 rows of LARGE_COLS columns (the check's measurement;
    the learner is shown only the 24-column one)."""
    from course_lib.kernels.profile import profile_trace
    from course_lib.kernels.trace import trace_launch

    kernel, grid, block, (a, out) = _slow().slow_launch("09.14")
    return profile_trace(trace_launch(kernel, grid, block, np.ascontiguousarray(a[:, :LARGE_COLS]), out))


def _scaled(count: float) -> float:
    """A count of a traced 128-row launch scaled to LARGE_ROWS rows (every warp of the kernel
    does the same work, so the count grows with the rows)."""
    return count * LARGE_ROWS / _slow().ROWS


def _row_sums_us(bytes_moved=None) -> float:
    from course_lib.kernels.profile import predict_time
    q = _scaled(_narrow_profile().bytes_moved) if bytes_moved is None else bytes_moved
    return predict_time(LARGE_ROWS * LARGE_COLS, q, PREDICT_ACCELERATOR).t_s * 1e6     # one add per element


REQUESTED_NOT_MOVED = Misconception(
    "requested-bytes-not-sectors", "The bytes the kernel asks for taken as the bytes it moves: a "
    "warp's load whose lanes are 24 bytes apart spans 32 x 24 bytes of the matrix and touches "
    "every sector in that span, of which it uses a sixth.", "09", _COPY,
    "Count the 32-byte sectors one warp's load of column c touches, and 32 bytes for each.")
LINEAR_RESCALE = Misconception(
    "traced-bytes-rescaled", "The traced bytes rescaled by the rows and the columns: at 24 columns "
    "each lane needs its own sector; at 6 columns neighbouring lanes are 24 bytes apart and share "
    "sectors, so a request's sectors do not follow the columns.", "09", _COPY,
    "Model one warp's request at 6 columns: how far apart are neighbouring lanes' addresses, and "
    "how many sectors does the span of 32 lanes cover?")
SECTOR_PER_LANE = Misconception(
    "one-sector-per-lane", "One sector per lane kept from the traced profile: that holds when "
    "lanes are 32 bytes or more apart, not 24.", "09", _COPY,
    "Lanes 24 bytes apart share sectors: count the sectors of the whole span, not one per lane.")
WIDE_ROWS = Misconception(
    "traced-columns-kept", "The 24-column rows of the trace kept: production rows have 6 columns, "
    "so a warp loads 6 times, not 24.", "09", _PREDICT,
    "Count the loads per warp at 6 columns, then the sectors each touches.")
NOT_SCALED = Misconception(
    "traced-size-not-scaled", "The time of a 128-row launch, not of the 2^20-row one: every warp "
    "moves the same sectors, so the bytes grow with the rows.", "09", _PREDICT,
    "Scale one warp's sectors by the warps of the large launch before dividing by the bandwidth.")
STORES_FORGOTTEN = Misconception(
    "stores-forgotten", "Only the loads counted: the kernel also writes one float per row, and Q "
    "counts every sector a global instruction touches, stores too.", "09", _PREDICT,
    "Add the store's sectors (the profile's second row) to the loads'.")
ROWS_FOR_WARPS = Misconception(
    "per-warp-sectors-per-row", "A warp's sectors multiplied by the rows: one warp sums 32 rows, so "
    "the large launch has 2^20 / 32 warps, not 2^20.", "09", _PREDICT,
    "Count the warps of the large launch first, then multiply by one warp's sectors.")
FLOP_BOUND = Misconception(
    "flop-time-taken", "The FLOP time taken: one add per 4-byte element is far below the FP32 "
    "ridge point, so the bytes set the time.", "09", _PREDICT,
    "Compute both F / peak and Q / bandwidth and keep the larger.")


def _global_sectors(profile, op: str) -> int:
    return sum(i.sectors for i in profile.instructions if i.space == "global" and i.op == op)


def _row_sums_wrong() -> dict:
    from course_lib.kernels.profile import predict_time
    wide, narrow = _profile("09.14"), _narrow_profile()
    warps = _slow().ROWS // 32
    store_sectors = _global_sectors(narrow, "store")
    cols_ratio = LARGE_COLS / _slow().COLS
    wrong = {REQUESTED_NOT_MOVED: _row_sums_us(_scaled(narrow.global_bytes_requested)),
             LINEAR_RESCALE: _row_sums_us(_scaled(wide.bytes_moved) * cols_ratio),
             SECTOR_PER_LANE: _row_sums_us(_scaled(32 * (warps * LARGE_COLS * 32 + store_sectors))),
             WIDE_ROWS: predict_time(LARGE_ROWS * _slow().COLS, _scaled(wide.bytes_moved),
                                     PREDICT_ACCELERATOR).t_s * 1e6,
             NOT_SCALED: predict_time(_slow().ROWS * LARGE_COLS, narrow.bytes_moved, PREDICT_ACCELERATOR).t_s * 1e6,
             STORES_FORGOTTEN: _row_sums_us(_scaled(32 * _global_sectors(narrow, "load"))),
             ROWS_FOR_WARPS: _row_sums_us(_scaled(narrow.bytes_moved) * 32),
             FLOP_BOUND: LARGE_ROWS * LARGE_COLS / get_accelerator(PREDICT_ACCELERATOR).peak("fp32") * 1e6,
             shared("seconds-for-unit", "09", _PREDICT): _row_sums_us() / 1e6}
    right = _row_sums_us()
    if any(abs(v - right) <= 1e-3 * right for v in wrong.values()):
        raise RuntimeError("09.14: a named mistake lands on the answer")
    return wrong


# --- 09.15 (diagnose, then fix): which change mends the staged row sums -----------------------

def _padded_row_sums():
    _import_cuda()

    @cuda.jit
    def padded_row_sums(a, out):
        tile = cuda.shared.array((32, 34), np.float32)
        t = cuda.threadIdx.x
        r0 = cuda.blockIdx.x * 32
        for r in range(32):
            tile[r, t] = a[r0 + r, t]
        cuda.syncthreads()
        s = 0.0
        for c in range(32):
            s += tile[t, c]
        out[r0 + t] = s
    return padded_row_sums


def _swizzled_row_sums():
    _import_cuda()

    @cuda.jit
    def swizzled_row_sums(a, out):
        tile = cuda.shared.array((32, 32), np.float32)
        t = cuda.threadIdx.x
        r0 = cuda.blockIdx.x * 32
        for r in range(32):
            tile[r, (t + r) % 32] = a[r0 + r, t]
        cuda.syncthreads()
        s = 0.0
        for c in range(32):
            s += tile[t, (c + t) % 32]
        out[r0 + t] = s
    return swizzled_row_sums


def _swapped_row_sums():
    _import_cuda()

    @cuda.jit
    def swapped_row_sums(a, out):
        tile = cuda.shared.array((32, 32), np.float32)
        t = cuda.threadIdx.x
        r0 = cuda.blockIdx.x * 32
        for r in range(32):
            tile[t, r] = a[r0 + r, t]
        cuda.syncthreads()
        s = 0.0
        for c in range(32):
            s += tile[c, t]
        out[r0 + t] = s
    return swapped_row_sums


def _direct_row_sums():
    _import_cuda()

    @cuda.jit
    def direct_row_sums(a, out):
        t = cuda.threadIdx.x
        r0 = cuda.blockIdx.x * 32
        s = 0.0
        for c in range(32):
            s += a[r0 + t, c]
        out[r0 + t] = s
    return direct_row_sums


def _unsynced_row_sums():
    _import_cuda()

    @cuda.jit
    def unsynced_row_sums(a, out):
        tile = cuda.shared.array((32, 32), np.float32)
        t = cuda.threadIdx.x
        r0 = cuda.blockIdx.x * 32
        for r in range(32):
            tile[r, t] = a[r0 + r, t]
        s = 0.0
        for c in range(32):
            s += tile[t, c]
        out[r0 + t] = s
    return unsynced_row_sums


#: 09.15's candidate changes, each a whole kernel that the prompt shows as a one- or two-line change.
_FIXES = {"pad-2": _padded_row_sums, "swap": _swapped_row_sums, "swizzle": _swizzled_row_sums,
          "direct": _direct_row_sums, "no-barrier": _unsynced_row_sums}
FIXES = tuple(_FIXES)


def _mends(profile) -> bool:
    return profile.safe and all(f == 1 for f in waste_factors(profile).values())


def _the_fix() -> str:
    mended = [fix for fix in FIXES if _mends(_profile("09.15", fix))]
    if len(mended) != 1:
        raise RuntimeError(f"09.15 must have exactly one change that mends the kernel: {mended}")
    return mended[0]


CONFLICT_MOVED = Misconception(
    "conflict-moved-to-stores", "Swapping the tile's indices moves the conflict, it does not remove "
    "it: the reads then run along a row of the tile, but the stores put lane t at tile[t, r], 32 "
    "words apart, all in one bank.", "09", _TRANSPOSE,
    "For each shared instruction of the changed kernel, write lane t's word index and take it mod 32.")
BACK_TO_UNCOALESCED = Misconception(
    "staging-undone", "Reading a directly undoes the staging: lane t then reads row r0 + t, 128 "
    "bytes from its neighbour's, and every load touches 32 sectors again.", "09", _COPY,
    "How many bytes apart are lane 0's and lane 1's addresses in a[r0 + t, c]?")
BARRIER_AS_COST = Misconception(
    "barrier-taken-for-the-cost", "The barrier taken for the cost: without it a lane may read "
    "tile elements another lane has not stored yet (a race), and the reads still conflict 32-way.",
    "09", _REDUCTION, "Who writes tile[t, c], and who reads it? The profile's safety line says what "
    "dropping the barrier breaks.")


EVEN_PADDING = Misconception(
    "even-padding", "Any padding taken to remove conflicts: with 34 words per row, lane t's row starts "
    "at word 34 t, in bank 2 t mod 32, so lanes t and t + 16 share a bank and the reads still take "
    "two passes. A padding helps when the row length it makes is odd.", "09", _TRANSPOSE,
    "Write the bank of tile[t, c] for lanes 0 and 16 with 34 words per row.")


def _staged_wrong() -> dict:
    wrong = {}
    if waste_factors(_profile("09.15", "pad-2"))["bank-conflicts"] > 1:
        wrong[EVEN_PADDING] = "pad-2"
    if waste_factors(_profile("09.15", "swap"))["bank-conflicts"] > 1:
        wrong[CONFLICT_MOVED] = "swap"
    if waste_factors(_profile("09.15", "direct"))["uncoalesced"] > 1:
        wrong[BACK_TO_UNCOALESCED] = "direct"
    if not _profile("09.15", "no-barrier").safe:
        wrong[BARRIER_AS_COST] = "no-barrier"
    return wrong



EXERCISES = [
    KernelExercise(
        "09.1", task="map", concepts=("guards",),
        form=_form("map_kernel(a, out)", "writes out[i] = 10 * a[i] + 1, one thread per element"),
        hints=("The grid has more threads than the vector has elements: what must the extra ones do?",
               "cuda.grid(1) is blockIdx.x * blockDim.x + threadIdx.x, the element of this thread; "
               "a thread whose element is past the end must not touch memory at all.",
               "i = cuda.grid(1); compare i with out.size before the thread reads a or writes out.")),
    KernelExercise(
        "09.2", task="zip", concepts=("coalescing", "guards"),
        form=_form("zip_kernel(a, b, out)", "writes out[i] = a[i] + b[i], lane k of a warp on "
                   "element k of a run of 32"),
        hints=("Coalescing asks the 32 lanes of a warp for 32 neighbouring elements at once.",
               "Map thread to element the simple way, block by block and lane by lane; a mapping "
               "that spreads a warp's lanes across the vector touches one sector per lane.",
               "i = cuda.grid(1) and a guard; read a[i] and b[i] once each.")),
    KernelExercise(
        "09.3", task="map2d", concepts=("guards",),
        form=_form("map2d_kernel(a, out)", "writes out[r, c] = a[r, c] + 1, with x along the columns"),
        hints=("Two sizes, two ways past the edge: the grid overshoots both the rows and the columns.",
               "cuda.grid(2) returns (x, y); x must follow the columns, the fast index of a row-major "
               "matrix, so that a warp reads one row segment.",
               "c, r = cuda.grid(2), then guard with r < a.shape[0] and c < a.shape[1] together.")),
    KernelExercise(
        "09.4", task="outer", concepts=("coalescing", "data-reuse"),
        form=_form("outer_kernel(a, b, out)", "writes out[r, c] = a[r] * b[c], with x along the columns"),
        hints=("Which index comes from x and which from y? The grid is sized for x along the columns.",
               "With x along the columns, a warp's lanes share one a[r] (a broadcast) and read "
               "neighbouring b[c]; each thread writes its element once and reads nothing else.",
               "c, r = cuda.grid(2), guard on out.shape, then out[r, c] = a[r] * b[c] (a plain "
               "assignment: `+=` would read out too).")),
    KernelExercise(
        "09.5", task="block_sum", concepts=("shared-memory", "synchronization", "reductions"),
        form=_form("block_sum_kernel(a, out)", "writes out[b], the sum of the BLOCK elements "
                   "block b covers, by a tree reduction in shared memory"),
        hints=("Each step of the tree reads partial sums another thread wrote in the step before.",
               "Load one element per thread into cuda.shared.array(BLOCK, np.float32) (0.0 past "
               "the end), then halve a stride from BLOCK // 2: threads t < stride add element "
               "t + stride into t; every step must finish before the next one starts.",
               "cuda.syncthreads() after the load and after every step of the while loop (outside "
               "the `if t < stride`), then thread 0 writes out[cuda.blockIdx.x].")),
    KernelExercise(
        "09.6", task="dot", concepts=("reductions",),
        form=_form("dot_kernel(a, b, out)", "adds sum(a * b) into out[0] with at most one global "
                   "cuda.atomic.add per block"),
        hints=("Blocks cannot wait for each other; a global atomic add is the one safe way for them "
               "to share out[0], and each is a read-modify-write at the L2 cache, one at a time per "
               "address (an atomic on shared memory stays inside the SM).",
               "Reduce the block's products in shared memory as in 09.5, so that only one thread "
               "per block has something to add.",
               "After the tree, `if t == 0: cuda.atomic.add(out, 0, partial[0])`.")),
    KernelExercise(
        "09.7", task="copy", concepts=("coalescing",),
        form=_form("copy_kernel(a, out)", "writes out[r, c] = a[r, c], consecutive threads on "
                   "consecutive columns"),
        hints=("Which way does memory run in a row-major matrix, and which way do a warp's lanes run?",
               "Lanes of a warp differ in threadIdx.x; make that the column, so a warp reads and "
               "writes 32 neighbouring addresses.",
               "c, r = cuda.grid(2) with a guard on both sizes.")),
    KernelExercise(
        "09.8", task="transpose", concepts=("shared-memory", "coalescing"),
        form=_form("transpose_kernel(a, out)", "writes out[c, r] = a[r, c] through a TILE_T x TILE_T "
                   "shared tile, reading and writing along rows"),
        hints=("A direct out[c, r] = a[r, c] reads along rows of a but writes down a column of out: "
               "every lane in its own sector.",
               "Block (x, y) loads its tile of a with lanes along the columns into "
               "tile[ty, tx], waits, and writes the tile of out at block position (y, x), again "
               "with lanes along the columns; the transposition happens in shared memory.",
               "Load a[by * TILE_T + ty, bx * TILE_T + tx] into tile[ty, tx]; after syncthreads "
               "write out[bx * TILE_T + ty, by * TILE_T + tx] from tile[tx, ty]; guard both.")),
    KernelExercise(
        "09.9", task="transpose_padded", concepts=("shared-memory",),
        form=_form("transpose_padded_kernel(a, out)", "transposes through a padded shared tile: "
                   "coalesced global access and no bank conflicts"),
        hints=("Bank = word index mod 32. Where do the 32 words that tile[tx, ty] names for "
               "tx = 0..31 fall?",
               "In a 32-word row, a column's words are 32 apart: one bank. Make each row one word "
               "longer and a column steps through all 32 banks.",
               "Allocate cuda.shared.array((TILE_T, TILE_T + 1), np.float32); nothing else changes "
               "from 09.8.")),
    KernelExercise(
        "09.10", task="matmul", concepts=("data-reuse",),
        form=_form("matmul_kernel(a, b, out)", "writes out[i, j], the dot product of row i of a and "
                   "column j of b, with x along the columns j"),
        hints=("Each of the k multiply-adds of a dot product needs one element of a and one of b; "
               "where does the running sum live?",
               "Sum into a local variable (a register) and write out[i, j] once at the end: "
               "`out[i, j] += ...` in the loop reads and writes global memory k times.",
               "j, i = cuda.grid(2) and a guard on out.shape; inside it, a loop over p in "
               "range(a.shape[1]) that accumulates into acc, and one write of out[i, j] after it.")),
    KernelExercise(
        "09.11", task="matmul_tiled", concepts=("data-reuse", "synchronization"),
        form=_form("matmul_tiled_kernel(a, b, out)", "computes a @ b with TILE x TILE tiles of a and "
                   "b staged in shared memory, with x along the columns of out"),
        hints=("Two barriers per step along k: one so that the tiles are complete before anyone "
               "reads them, one so that nobody overwrites them while others still read.",
               "For k0 in range(0, k, TILE): thread (tx, ty) loads a[i, k0 + tx] and b[k0 + ty, j] "
               "(0.0 when outside the matrix), then adds TILE products from the two tiles. Guard "
               "only the final write, so every thread reaches every barrier.",
               "tile_a[ty, tx] = a[i, k0 + tx] if i < m and k0 + tx < k else 0.0, and likewise "
               "tile_b[ty, tx] from b[k0 + ty, j]; syncthreads; acc += tile_a[ty, p] * tile_b[p, tx] "
               "for p in range(TILE); syncthreads.")),
    KernelExercise(
        "09.12", task="softmax", concepts=("reductions", "synchronization"),
        form=_form("softmax_kernel(x, out)", "writes the softmax of row r of x into row r of out, "
                   "one block of BLOCK threads per row"),
        hints=("Three passes over the row, each a strided loop c = t, t + BLOCK, ...: the maximum, "
               "the sum of exponentials, the output.",
               "After each of the first two passes, combine the threads' values with a tree in one "
               "shared array, as in 09.5 (max for the first, + for the second); every thread then "
               "reads the result from element 0.",
               "Before the second tree reuses the shared array, a cuda.syncthreads() must follow "
               "every thread's read of the maximum from element 0.")),
    KernelExercise(
        "09.13", task="online_softmax", concepts=("reductions", "data-reuse"),
        form=_form("online_softmax_kernel(x, out)", "writes the row softmax reading x only twice, "
                   "one block of BLOCK threads per row"),
        hints=("Keep the running maximum and a running sum that is always relative to it; rescale "
               "the sum whenever the maximum moves.",
               "Per element v: m_new = max(m, v); s = s * exp(m - m_new) + exp(v - m_new); "
               "m = m_new. Two threads' pairs (m_a, s_a) and (m_b, s_b) merge by the same rule "
               "in a tree over two shared arrays.",
               "Merge step for t < stride: m_new = max(m_a, m_b); s = s_a * exp(m_a - m_new) + "
               "s_b * exp(m_b - m_new); then one last strided pass writes exp(x - m) / s.")),
    ValueExercise(
        "09.14", expected=_row_sums_us, rel_tol=1e-3, wrong_answers=_row_sums_wrong,
        concepts=("coalescing",),
        form="a float: microseconds, section 9's predicted time of row_sums on 2^20 rows x 6 columns "
             "on an H100 SXM",
        hints=("Section 9's bound needs the FLOP and the bytes moved, Q = 32 x sectors. The traced "
               "profile is for 24-column rows: read it for what one warp's request costs there and "
               "why, then ask whether that reason still holds at 6 columns.",
               "Section 5's model: one warp's load of column c has 32 lane addresses; count the "
               "32-byte sectors they touch (the lesson's coalescing() does it for a list of "
               "addresses). Add the store, multiply by the warps of the large launch, then take "
               "the larger of F / FP32 peak and Q / bandwidth.",
               "Sanity check: per element, the 6-column launch should move fewer bytes than the "
               "24-column one, yet still several times the bytes it asks for.")),
    ChoiceExercise(
        "09.15", expected=_the_fix, choices=FIXES, wrong_answers=_staged_wrong,
        concepts=("shared-memory", "coalescing"),
        form="one of 'pad-2', 'swap', 'swizzle', 'direct' or 'no-barrier': the one change after which "
             "the profile shows no waste and no race",
        hints=("Diagnose first: which row of the profile's table is far from its ideal, and what does "
               "its conflict column mean? A change must fix that row without spoiling another.",
               "For each change, write lane t's index for every memory instruction it has: for shared "
               "memory the bank is the word index mod 32; for global memory, how far apart are "
               "neighbouring lanes' addresses? Then profile the change you trust to confirm it.",
               "Sanity check: after the right change the summary reads 100 % coalescing, no conflict "
               "worse than 1-way, and no race.")),
    # --- 09.16-09.24: design puzzles whose kernels the lesson does not print (sections 12, 13)
    KernelExercise(
        "09.16", task="histogram", concepts=("shared-memory", "reductions"),
        form=_form("histogram_kernel(x, bins)", "adds the counts of x's values (0 to NBINS - 1) "
                   "into bins through a shared-memory histogram per block"),
        hints=("A global atomic per element is right but slow: with 64 bins, many threads wait on "
               "the same address. Section 13 privatises a block's partial result first.",
               "Three phases, two barriers: clear a shared array of NBINS ints, count the block's "
               "elements into it with cuda.atomic.add on the shared array, then merge it into bins.",
               "Threads t < NBINS clear h[t] and later add h[t] into bins[t] (one global atomic per "
               "bin per block); every thread with an element adds 1 to h[x[i]].")),
    KernelExercise(
        "09.17", task="scan_block", concepts=("shared-memory", "synchronization"),
        form=_form("scan_block_kernel(x, out)", "writes the inclusive prefix sum of each block's "
                   "BLOCK elements of x"),
        hints=("The tree of section 4 halves the stride and keeps one value (the block's largest); "
               "a scan keeps every partial sum, so the distance doubles: d = 1, 2, 4, ... BLOCK / 2.",
               "At distance d, thread t >= d adds s[t - d] to s[t]; but thread t - d may be "
               "updating s[t - d] in the same step.",
               "Read v = s[t - d] (0 for t < d), syncthreads, s[t] += v, syncthreads; threads past "
               "the end hold 0 and store nothing.")),
    KernelExercise(
        "09.18", task="scan", concepts=("shared-memory", "synchronization"),
        form=_form("scan_kernel(x, out)", "writes the inclusive prefix sum of all of x, one block "
                   "walking it tile by tile"),
        hints=("One block, many tiles: scan each tile as in 09.17, and add what came before it.",
               "Keep a running carry in a register: after a tile, every thread adds the tile's last "
               "value to it.",
               "Before the next tile overwrites the shared array, every thread must have read its "
               "last value: one more syncthreads at the end of the tile loop.")),
    KernelExercise(
        "09.19", task="warp_sum", concepts=("reductions",),
        form=_form("warp_sum_kernel(a, out)", "adds sum(a) into out[0]: a shuffle reduction per "
                   "warp, no shared memory, one atomic per warp"),
        hints=("Section 12 sums a warp's values with shuffles: registers move between lanes, no "
               "shared memory, no barrier.",
               "cuda.shfl_down_sync(0xFFFFFFFF, v, d) gives each lane the v of lane + d; five steps "
               "from d = 16 leave the warp's sum in lane 0.",
               "Every lane of the mask must reach each shuffle: give lanes past the end v = 0.0 "
               "instead of skipping them; then only cuda.laneid == 0 adds to out[0].")),
    KernelExercise(
        "09.20", task="matmul_register", concepts=("data-reuse", "shared-memory"),
        form=_form("matmul_register_kernel(a, b, out)", "computes a @ b with each thread of an "
                   "8 x 8 block computing a 2 x 2 micro-tile of out in registers"),
        hints=("Section 13's register tile: a value loaded from shared memory into a register serves "
               "every product of the micro-tile it belongs to.",
               "Thread (tx, ty) owns rows i0 = by * 16 + ty and i0 + 8, columns j0 = bx * 16 + tx "
               "and j0 + 8; per step of RT_K = 8 along k it loads two elements of a into a 16 x 8 "
               "tile and two of b into an 8 x 16 tile.",
               "Per p in range(RT_K): a0, a1 = sa[ty, p], sa[ty + 8, p]; b0, b1 = sb[p, tx], "
               "sb[p, tx + 8]; four multiply-adds into four local sums; guard each of the four "
               "stores.")),
    KernelExercise(
        "09.21", task="int8_gemv", concepts=("coalescing", "reductions"),
        form=_form("int8_gemv_kernel(w, w_scale, x, x_scale, y)", "writes y[r] = w_scale[r] * "
                   "x_scale[0] * sum_k w[r, k] x[k], one warp per row"),
        hints=("INT8 rows are short in bytes: 32 lanes reading one row's neighbouring bytes need one "
               "or two sectors; one thread per row needs one sector per lane.",
               "Row r = cuda.grid(1) // 32; lane l sums w[r, c] * x[c] for c = l, l + 32, ... as an "
               "integer, then the warp adds its lanes' sums with shuffles (section 12).",
               "Multiply by both scales once, after the integer sum; lanes of a warp with no row "
               "still take part in the shuffles (with 0) but store nothing.")),
    KernelExercise(
        "09.22", task="rmsnorm", concepts=("reductions",),
        form=_form("rmsnorm_kernel(x, g, out)", "writes x / sqrt(mean(x^2) + RMS_EPS) * g, one "
                   "block of BLOCK threads per row"),
        hints=("Section 4 reduces a block in a shared-memory tree, and section 8 computes a statistic "
               "before its output; RMSNorm needs one reduction (the sum of squares) and one output pass.",
               "Strided sum of x^2, a tree in shared memory, then every thread reads s[0] and "
               "computes the row's scale once.",
               "scale = 1 / sqrt(s[0] / cols + RMS_EPS): the epsilon inside the square root keeps a "
               "row of zeros finite.")),
    KernelExercise(
        "09.23", task="spmv_csr", concepts=("coalescing", "reductions"),
        form=_form("spmv_csr_kernel(indptr, indices, data, x, y)", "writes y = A x for a CSR "
                   "matrix, one warp per row"),
        hints=("Section 13 compares a thread per row and a warp per row on rows of very different "
               "lengths: read the SIMT efficiency of each.",
               "Row r = cuda.grid(1) // 32; lane l sums data[j] * x[indices[j]] for j from indptr[r] "
               "+ l up to indptr[r + 1], step 32; then shuffles add the lanes' sums.",
               "Every row gets y[r] written, the empty ones too (the loop runs zero times: 0.0).")),
    KernelExercise(
        "09.24", task="conv1d", concepts=("shared-memory", "data-reuse"),
        form=_form("conv1d_kernel(x, w, y)", "writes the 7-tap convolution of x with w (zero "
                   "padding), staging the block's tile and halo in shared memory"),
        hints=("Each output needs RADIUS neighbours on each side: a block needs BLOCK + 2 RADIUS "
               "elements of x, its tile and the halo.",
               "Shared tile[BLOCK + 2 * RADIUS]: thread t loads x[i] into tile[t + RADIUS]; threads "
               "t < RADIUS also load the left halo x[i - RADIUS] and the right one x[block_start + "
               "BLOCK + t].",
               "Every load past either end of x is 0.0; syncthreads; then y[i] = sum of w[j] * "
               "tile[t + j] for j < TAPS.")),
]
