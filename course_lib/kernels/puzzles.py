"""The kernel lab's design puzzles: kernels the lesson does not print (issue 23).

Each is a :class:`~course_lib.kernels.tasks.KernelTask` registered in ``TASKS`` beside the
lesson's own, and each is taught by a neighbouring example in lesson 09 (sections 12 and 13):
the lesson shows the technique on another problem, the puzzle asks for it here. Every task has
a cost target and the reason for it, and adversarial cases (sizes of one, rows shorter than a
warp, empty rows, a zero row, extreme values...).

* ``histogram``: counts of small integers, privatised per block in shared memory with shared
  atomics, then merged with one global atomic per bin per block.
* ``scan_block`` and ``scan``: an inclusive prefix sum within each block, then over the whole
  array by one block that walks it tile by tile and carries the running total.
* ``warp_sum``: a sum with warp shuffles and no shared memory; one global atomic per warp.
* ``matmul_register``: a tiled matmul whose threads each compute a 2 x 2 micro-tile held in
  registers: the plain tiled kernel's DRAM loads, a quarter of its threads and half its shared
  reads per multiply-add.
* ``int8_gemv``: y = (w_scale * x_scale) * (W x) on INT8 weights and activations, one warp per row.
* ``rmsnorm``: x / sqrt(mean(x^2) + eps) * g, one block per row, fused (x read twice, not three
  times).
* ``spmv_csr``: y = A x for a CSR matrix, one warp per row, whose SIMT efficiency the profile
  shows against one thread per row.
* ``conv1d``: a 7-tap convolution with zero padding, the block's tile and its halo staged in
  shared memory.
"""

from __future__ import annotations

import numpy as np

from ..tiling import tiled_matmul_traffic
from .tasks import (BLOCK, TILE, Case, CostTarget, KernelTask, Mistake, _add, _f32, _grid1, _loads_at_most,
                    _odd, _stores_at_most, _t)

__all__ = ["NBINS", "RADIUS", "TAPS", "MICRO", "RT_THREADS", "RT_K", "RMS_EPS", "PUZZLES"]

#: Bins of the histogram (more than a warp, fewer than a block: threads t < NBINS merge).
NBINS = 64
#: The convolution's half-width and taps (2 RADIUS + 1).
RADIUS = 3
TAPS = 2 * RADIUS + 1
#: The register-tiled matmul: each thread computes MICRO x MICRO outputs; a block is
#: RT_THREADS x RT_THREADS threads, so it covers TILE x TILE outputs (TILE = MICRO * RT_THREADS),
#: and the k dimension is staged RT_K at a time.
MICRO = 2
RT_THREADS = TILE // MICRO
RT_K = 8
#: RMSNorm's epsilon (inside the square root, as in the RMSNorm paper and most implementations).
RMS_EPS = 1e-6
_F = 4


def _blocks(n, block=BLOCK) -> int:
    return -(-n // block)


# ----------------------------------------------------------------------------- histogram

_GLOBAL_ATOMIC_PER_ELEMENT = Mistake(
    "histogram-global-atomics", "A global atomic for every element: each is a read-modify-write at "
    "L2, and with few bins most of them wait for each other on the same address.", "patterns",
    "Count the block's elements into a shared-memory histogram with shared atomics (they stay in "
    "the SM), then merge it: one global atomic per bin per block.")


def _hist_data(rng, s, one_bin=False):
    x = rng.integers(0, NBINS, s["n"]).astype(np.int32)
    if one_bin:
        x[:] = int(rng.integers(0, NBINS))
    return {"x": x, "bins": np.zeros(NBINS, np.int32)}


_BINS_WRONG = Mistake(
    "histogram-bins-wrong", "Some bins wrong: every element must be counted once, in bin x[i], and "
    "every block must merge each of its NBINS shared counters into bins exactly once.", "patterns",
    "The message names a bin: which elements have that value, and which block's counts of it reach "
    "bins? Check the guard on the count (i < n) and on the merge (t < NBINS).")

_add(KernelTask(
    "histogram", "kernel(x, bins)",
    f"bins[v] += number of elements of x equal to v (0 <= v < NBINS = {NBINS}): a shared-memory "
    f"histogram per block, then merged into bins",
    ("x", "bins"), ("bins",),
    make_sizes=lambda rng: {"n": _odd(rng, 700, 1400)}, edge_sizes=lambda rng: {"n": _odd(rng, 3, 63)},
    make_data=_hist_data,
    reference=lambda d: {"bins": np.bincount(d["x"], minlength=NBINS).astype(np.int32)},
    launch=lambda s: _grid1(s["n"]),
    flops=lambda s: 0.0, min_bytes=lambda s: 4.0 * (s["n"] + NBINS),
    targets=(CostTarget("global_atomics", lambda s: _blocks(s["n"]) * NBINS,
                        "global atomics at most NBINS per block", mistake=_GLOBAL_ATOMIC_PER_ELEMENT,
                        why="one merge per bin per block; the elements are counted in shared memory"),
             _loads_at_most(lambda s: s["n"], "one per element")),
    large={"n": 1 << 26}, accumulates=("bins",), rtol=0, atol=0, mistakes={"wrong": _BINS_WRONG},
    special=(Case("every element in one bin", lambda rng: {"n": _odd(rng, 300, 500)},
                  lambda rng, s: _hist_data(rng, s, one_bin=True)),
             Case("a size of one", lambda rng: {"n": 1}))))


# ----------------------------------------------------------------------------- scans

def _int_data(rng, s):
    return {"x": rng.integers(-9, 10, s["n"]).astype(np.int32), "out": np.zeros(s["n"], np.int32)}


#: float32 holds every integer up to 2**24 = 16,777,216 exactly, and past it only the even ones
#: (past 2**25, multiples of 4): a scan in float32 rounds prefixes past 2**24.
FLOAT32_EXACT_INT = 2 ** 24


def _large_int_data(rng, s):
    """Values in [2**17, 2**18): a tile's prefixes pass 2**24 after about 85 elements (odd ones
    a float32 cannot hold), while the whole array's sum stays far below int32's 2**31."""
    return {"x": rng.integers(1 << 17, 1 << 18, s["n"]).astype(np.int32), "out": np.zeros(s["n"], np.int32)}


def _prefix_sizes(rng):
    """One full block: its prefixes pass 2**24 (and n % BLOCK is 0, a boundary no odd size has)."""
    return {"n": BLOCK}


def _block_scan_ref(d):
    x = d["x"].astype(np.int64)
    out = np.empty_like(x)
    for b0 in range(0, x.size, BLOCK):
        out[b0:b0 + BLOCK] = np.cumsum(x[b0:b0 + BLOCK])
    return {"out": out.astype(np.int32)}


_SCAN_EXCLUSIVE = Mistake(
    "scan-exclusive-or-shifted", "An exclusive scan (or one shifted by a step) where the inclusive "
    "one was asked: out[i] must include x[i] itself.", "patterns",
    "Check out[0]: it is x[0] in an inclusive scan.")
_SCAN_STEP_RACE = Mistake(
    "scan-read-write-same-step", "In one step of the scan, a thread adds s[t - d] while thread t - d "
    "may already have updated it: each step must read every value before any is overwritten.",
    "patterns",
    "Read s[t - d] into a local variable, syncthreads, then add it to s[t], and syncthreads again.")
_SCAN_IN_FLOAT = Mistake(
    "scan-in-float32", "An int32 scan summed in float32 (a float32 shared array, or a carry that "
    "starts at 0.0): float32 holds integers exactly only up to 2**24 = 16,777,216, so prefixes past "
    "it round to an even number (or a multiple of 4), and out is off by one or two.", "patterns",
    "Give the shared array x's dtype, np.int32, and start every integer sum at 0, not 0.0.")
_SCAN_SHORT = Mistake(
    "scan-steps-wrong", "The doubling steps of the scan do not reach the whole block: the distance "
    "must run d = 1, 2, 4, ... up to BLOCK // 2 (log2 BLOCK steps), each reading s[t - d] for "
    "t >= d, so that s[t] ends with every element from the block's first to t.", "patterns",
    "The message names an element: count how many elements before it its final sum includes, and "
    "check the while loop's last distance.")
_SERIAL_SCAN = Mistake(
    "serial-scan", "A serial scan: one thread walks the tile (BLOCK - 1 dependent steps) while the "
    "others wait at the barrier. The point of the parallel scan is log2 BLOCK = 7 steps, each done "
    "by every thread at once.", "patterns",
    "Let every thread take part in each step: at distance d = 1, 2, 4, ..., thread t adds s[t - d] "
    "(read into a local, then a barrier, then the add, then a barrier).")
_SCAN_TILES_SKIPPED = Mistake(
    "scan-tiles-not-walked", "Part of the array never written: the loop over tiles stops before "
    "the end of x (a fixed count of tiles, or a bound below x.size). One block walks every tile, carrying the "
    "running total from one to the next.",
    "patterns", "Walk base = 0, BLOCK, 2 BLOCK, ... while base < x.size, and check the last tile's "
    "guard.")
_SCAN_TILE_RACE = Mistake(
    "scan-shared-reused-early", "A shared value read while another thread may overwrite it: inside "
    "a step of the scan (thread t - d updating s[t - d] as t reads it), or across tiles (the next "
    "tile's load overwriting s[BLOCK - 1] before every thread has added it to its carry).",
    "patterns",
    "Look at the two lines the message names. A tile load against the carry's read: one more "
    "syncthreads at the end of the tile loop. Both inside the doubling loop: read s[t - d] into a "
    "local, syncthreads, add, syncthreads.")
_SCAN_CARRY = Mistake(
    "scan-carry-lost", "Each tile scanned on its own, but the total of the tiles before it not "
    "carried into it: a prefix sum runs over the whole array.", "patterns",
    "After each tile, every thread needs the tile's last value: add it to a running carry that "
    "the next tile starts from.")

def _float_rounded(got, want) -> bool:
    """True when an integer result is off by float32's rounding past 2**24 (a float path)."""
    want, got = float(want), float(got)
    return abs(want) > FLOAT32_EXACT_INT and 0 < abs(got - want) <= abs(want) * 2.0 ** -22


def _scan_block_diagnose(run, name, idx, written):
    got, want = run.data[name][idx], run.expected[name][idx]
    if written and _float_rounded(got, want):
        return "numerics", _SCAN_IN_FLOAT
    first = (idx[0] // BLOCK) * BLOCK
    if written and run.data[name][first] == run.expected[name][first]:
        return "wrong", _SCAN_SHORT          # the block's first element is right: not exclusive
    return None


def _scan_diagnose(run, name, idx, written):
    got, want = run.data[name][idx], run.expected[name][idx]
    if written and _float_rounded(got, want):
        return "numerics", _SCAN_IN_FLOAT
    if not written:
        return "wrong", _SCAN_TILES_SKIPPED
    return None


def _busiest_thread(profile) -> float:
    """Memory accesses (global and shared) of the thread that makes the most: a scan's critical
    path. Counted in accesses, not lines, so that how the loop is written does not matter."""
    tid = profile.trace.acc_tid
    return float(np.bincount(tid).max()) if tid.size else 0.0


#: A parallel scan of a tile takes log2 BLOCK = 7 steps of about 3 accesses per thread (a
#: Hillis-Steele scan makes about 25 in all, a work-efficient one about 55, a warp-shuffle scan
#: fewer); a serial one reads and writes each of the BLOCK elements in one thread (254 or more).
_STEP_ACCESSES = 16
_LOG2_BLOCK = BLOCK.bit_length() - 1


def _serial_target(tiles):
    return CostTarget(_busiest_thread, lambda s: _STEP_ACCESSES * _LOG2_BLOCK * tiles(s),
                      f"no thread makes more than {_STEP_ACCESSES} memory accesses per scan step "
                      f"(log2 BLOCK = {_LOG2_BLOCK} steps per tile)", mistake=_SERIAL_SCAN,
                      why="a parallel scan takes log2 BLOCK steps, a serial one BLOCK - 1")


_add(KernelTask(
    "scan_block", "kernel(x, out)",
    "out[i] = x[b0] + ... + x[i], where b0 is the first element of i's block (an inclusive scan "
    "within each block of BLOCK elements)",
    ("x", "out"), ("out",),
    make_sizes=lambda rng: {"n": _odd(rng, 300, 700)}, edge_sizes=lambda rng: {"n": _odd(rng, 3, 31)},
    make_data=_int_data, reference=_block_scan_ref, launch=lambda s: _grid1(s["n"]),
    flops=_t("n"), min_bytes=_t("n", factor=2 * _F),
    targets=(_loads_at_most(_t("n"), "one per element"), _stores_at_most(_t("n"), "one per element"),
             _serial_target(lambda s: 1)),
    large={"n": 1 << 26}, rtol=0, atol=0, mistakes={"wrong": _SCAN_EXCLUSIVE, "race": _SCAN_STEP_RACE},
    diagnose=_scan_block_diagnose,
    special=(Case("prefixes past 2**24 (int32 sums float32 cannot hold)", _prefix_sizes, _large_int_data,
                  _SCAN_IN_FLOAT),
             Case("a size of one", lambda rng: {"n": 1}))))

_add(KernelTask(
    "scan", "kernel(x, out)",
    "out[i] = x[0] + ... + x[i] over the whole array, by one block of BLOCK threads that scans it "
    "tile by tile and carries the running total",
    ("x", "out"), ("out",),
    make_sizes=lambda rng: {"n": _odd(rng, 2 * BLOCK + 3, 3 * BLOCK)}, edge_sizes=lambda rng: {"n": _odd(rng, 3, 31)},
    make_data=_int_data,
    reference=lambda d: {"out": np.cumsum(d["x"].astype(np.int64)).astype(np.int32)},
    launch=lambda s: ((1,), (BLOCK,)),
    flops=_t("n"), min_bytes=_t("n", factor=2 * _F),
    targets=(_loads_at_most(_t("n"), "one per element", why="each element is read once, into its tile"),
             _stores_at_most(_t("n"), "one per element"), _serial_target(lambda s: _blocks(s["n"]))),
    large={"n": 1 << 26}, rtol=0, atol=0,
    mistakes={"wrong": _SCAN_CARRY, "race": _SCAN_TILE_RACE}, diagnose=_scan_diagnose,
    special=(Case("exactly six tiles, prefixes past 2**24", lambda rng: {"n": 6 * BLOCK}, _large_int_data),
             Case("a size of one", lambda rng: {"n": 1}))))


# ----------------------------------------------------------------------------- warp-shuffle sum

_SHARED_IN_WARP_SUM = Mistake(
    "shared-memory-for-a-warp", "Shared memory (or a barrier) where the 32 lanes of a warp can "
    "exchange registers directly with shuffles.", "warp",
    "Halve the distance five times: v += cuda.shfl_down_sync(mask, v, d) for d = 16, 8, 4, 2, 1; "
    "lane 0 then holds the warp's sum.")
_WARP_ATOMICS = Mistake(
    "atomic-per-lane", "Every lane adding into out[0]: one global atomic per element, where one per "
    "warp is enough once the warp has summed.", "warp",
    "Only lane 0 (cuda.laneid == 0, or threadIdx.x % 32 == 0) holds the total after the shuffles.")

_NO_SHUFFLE = Mistake(
    "no-warp-shuffle", "A warp summed without shuffles (one lane loading and adding the warp's 32 "
    "elements): 31 dependent adds in one lane, and loads one lane wide, where five shuffle steps "
    "let all 32 lanes add at once.", "warp",
    "Each lane loads its own element; then v += cuda.shfl_down_sync(mask, v, d) for d = 16, 8, 4, 2, "
    "1, and lane 0 holds the sum.")
_WARP_SUM_WRONG = Mistake(
    "warp-total-incomplete", "out[0] misses part of the sum (or counts some of it twice): after "
    "shfl_down steps d = 16, 8, 4, 2, 1 only lane 0 holds the whole warp's total; another lane, "
    "fewer steps, or shfl_up leaves a partial sum.", "warp",
    "Write the five steps for lanes 0 and 31 by hand: which lanes' values does each hold at the end?")


def _warp_sum_diagnose(run, name, idx, written):
    if run.profile.global_atomics > run.profile.n_warps:          # more than one per launched warp
        return "wrong", _WARP_ATOMICS
    return None


_add(KernelTask(
    "warp_sum", "kernel(a, out)",
    "out[0] += sum of a: each warp sums its 32 elements with shuffles (no shared memory), then lane "
    "0 adds the warp's total with one global atomic",
    ("a", "out"), ("out",),
    make_sizes=lambda rng: {"n": _odd(rng, 600, 1400)}, edge_sizes=lambda rng: {"n": _odd(rng, 3, 31)},
    make_data=lambda rng, s: {"a": _f32(rng, s["n"]), "out": np.zeros(1, np.float32)},
    reference=lambda d: {"out": np.array([d["a"].astype(np.float64).sum()], np.float32)},
    launch=lambda s: _grid1(s["n"]),
    flops=_t("n"), min_bytes=lambda s: _F * (s["n"] + 1),
    targets=(CostTarget("shared_accesses", lambda s: 0, "no shared-memory accesses",
                        mistake=_SHARED_IN_WARP_SUM, why="a warp exchanges registers by shuffles"),
             CostTarget("global_atomics", lambda s: _blocks(s["n"]) * (BLOCK // 32),
                        "global atomics at most one per warp", mistake=_WARP_ATOMICS),
             _loads_at_most(_t("n"), "one per element"),
             CostTarget("warp_shuffles", lambda s: 5 * -(-s["n"] // 32),
                        "warp shuffles at least 5 per warp that has an element (log2 32 steps)",
                        at_least=True, mistake=_NO_SHUFFLE,
                        why="the puzzle is a shuffle reduction: a warp's lanes add in five steps")),
    large={"n": 1 << 26}, accumulates=("out",), rtol=1e-4, atol=1e-3,
    mistakes={"wrong": _WARP_SUM_WRONG}, diagnose=_warp_sum_diagnose,
    special=(Case("a size of one", lambda rng: {"n": 1}),)))


# ----------------------------------------------------------------------------- register-tiled matmul

def _rt_sizes(rng):
    # Two row tiles and three column tiles of TILE (a grid that is not square, so swapped block
    # indices fail); k odd between RT_K and 2 RT_K, so the k loop takes two steps (the second
    # barrier matters, the carry across steps matters) and its last step is partial. m, k and n
    # all differ. (k up to 31 took up to four steps: the check's time, not what it catches.)
    m = int(rng.choice(np.arange(19, 32, 2)))
    n = int(rng.choice(np.arange(35, 48, 2)))
    k = int(rng.choice(np.arange(RT_K + 1, 2 * RT_K, 2)))
    return {"m": m, "k": k, "n": n}


def _rt_threads(s) -> int:
    return -(-s["m"] // TILE) * -(-s["n"] // TILE) * RT_THREADS * RT_THREADS


def _rt_shared_reads(s) -> float:
    """One shared read per multiply-add: per step of RT_K, each thread reads MICRO elements of the
    a tile and MICRO of the b tile for each of RT_K products rows, MICRO^2 multiply-adds each."""
    steps = -(-s["k"] // RT_K)
    return float(_rt_threads(s) * steps * RT_K * MICRO * MICRO)


def _tiled16_loads(s) -> int:
    t = tiled_matmul_traffic(s["m"], s["k"], s["n"], TILE, TILE, bytes_per_element=1)
    return t.a_bytes + t.b_bytes


_REGISTERS_NOT_REUSED = Mistake(
    "micro-tile-not-in-registers", "More shared reads than one per multiply-add: each product "
    "reading both its operands from shared memory (a micro-tile pays off because one element of the "
    "a tile, held in a register, serves MICRO products, and one of the b tile serves MICRO more), "
    "or the k loop walking steps past k (a fixed range) and reading tiles no product needs.",
    "patterns",
    "Per p, load MICRO values of the a tile and MICRO of the b tile into local variables, then do "
    "the MICRO x MICRO multiply-adds from those; walk k0 in range(0, k, RT_K), k from a.shape[1].")
_RT_GLOBAL = Mistake(
    "micro-tile-loads", "More DRAM loads than the plain 16 x 16 tiled kernel: the block still covers "
    "a 16 x 16 tile of the output, so each element of a and b is loaded once per tile it serves.",
    "patterns",
    "Per step along k, the block's 64 threads load the 16 x RT_K tile of a and the RT_K x 16 tile "
    "of b: two elements of each per thread, no more.")

_MICRO_MAP = Mistake(
    "micro-tile-mapping", "Some outputs wrong or unwritten: thread (tx, ty) of block (bx, by) owns "
    "rows by * 16 + ty and + 8 and columns bx * 16 + tx and + 8, and each of its four sums runs over "
    "all of k (every step of RT_K, the last one partial and guarded).", "patterns",
    "The message names an element and its writer: work out which thread and which of its four "
    "sums should own it, and which k steps it adds.")

_add(KernelTask(
    "matmul_register", "kernel(a, b, out)",
    f"out = a @ b, each thread computing a {MICRO} x {MICRO} micro-tile of out in registers; a block "
    f"of {RT_THREADS} x {RT_THREADS} threads covers {TILE} x {TILE} outputs, k staged {RT_K} at a time",
    ("a", "b", "out"), ("out",),
    make_sizes=_rt_sizes,
    edge_sizes=lambda rng: {"m": _odd(rng, 3, 9), "k": _odd(rng, 3, 9), "n": _odd(rng, 17, 25)},
    make_data=lambda rng, s: {"a": _f32(rng, s["m"], s["k"]), "b": _f32(rng, s["k"], s["n"]),
                              "out": np.zeros((s["m"], s["n"]), np.float32)},
    reference=lambda d: {"out": (d["a"].astype(np.float64) @ d["b"]).astype(np.float32)},
    launch=lambda s: ((-(-s["n"] // TILE), -(-s["m"] // TILE)), (RT_THREADS, RT_THREADS)),
    flops=lambda s: 2.0 * s["m"] * s["k"] * s["n"],
    min_bytes=lambda s: _F * (s["m"] * s["k"] + s["k"] * s["n"] + s["m"] * s["n"]),
    bytes_model=lambda s: _F * (_tiled16_loads(s) + s["m"] * s["n"]),
    targets=(_loads_at_most(_tiled16_loads, "the plain tiled kernel's count (lesson 06's formula, 16 x 16 tiles)",
                            mistake=_RT_GLOBAL),
             CostTarget("shared_loads", _rt_shared_reads, "shared reads at most one per multiply-add "
                        "(the plain tiled kernel makes two)", mistake=_REGISTERS_NOT_REUSED,
                        why="each register value serves MICRO products")),
    large={"m": 4096, "k": 4096, "n": 4096}, rtol=1e-4, atol=1e-4, mistakes={"wrong": _MICRO_MAP},
    special=(Case("sizes of one", lambda rng: {"m": 1, "k": 1, "n": 1}),)))


# ----------------------------------------------------------------------------- INT8 GEMV

def _gemv_data(rng, s, extreme=False):
    w = rng.integers(-128, 128, (s["rows"], s["cols"])).astype(np.int8)
    x = rng.integers(-128, 128, s["cols"]).astype(np.int8)
    if extreme:                       # int8's most negative value everywhere: every product is +16384
        w[:] = -128
        x[:] = -128
    return {"w": w, "w_scale": rng.uniform(0.001, 0.02, s["rows"]).astype(np.float32),
            "x": x, "x_scale": np.array([rng.uniform(0.01, 0.05)], np.float32),
            "y": np.zeros(s["rows"], np.float32)}


def _gemv_ref(d):
    acc = d["w"].astype(np.int64) @ d["x"].astype(np.int64)
    return {"y": (acc * (d["w_scale"].astype(np.float64) * float(d["x_scale"][0]))).astype(np.float32)}


def _w_sectors_per_request(profile) -> float:
    """Sectors per warp request of the loads of w (the weights), over the launch."""
    loads = [i for i in profile.instructions if i.array == "w" and i.space == "global" and i.op == "load"]
    requests = sum(i.requests for i in loads)
    return sum(i.sectors for i in loads) / requests if requests else 0.0


_ROW_PER_THREAD = Mistake(
    "thread-per-row", "One thread per row: neighbouring lanes then read bytes a whole row apart, one "
    "sector each for one byte.", "warp",
    "Give each row to a warp: lane l reads w[r, l], w[r, l + 32], ... (32 neighbouring bytes, one "
    "sector), and the lanes' partial sums meet by shuffles.")

_GEMV_WRONG = Mistake(
    "gemv-scales-or-row", "y[r] wrong: it is row r's integer sum times both scales, w_scale[r] (one "
    "per row, not w_scale[0]) and x_scale[0], and only the lane that holds the warp's whole sum "
    "(lane 0 after shfl_down) stores it.", "warp",
    "Compute the named y[r] by hand from w[r], x and the two scales; then print your kernel's "
    "integer sum for that row before the scales.")

_NARROW_SUM = Mistake(
    "narrow-integer-sum", "A sum of int8 products kept in a narrow integer (an int8 or int16 array): "
    "one product is up to 128 x 128 = 16,384, so a few hundred of them need 32 bits. The tracer "
    "stops at the overflow; a GPU wraps it silently.", "warp",
    "Keep the partial sums in an int32 (or a plain Python int local), and read the message's value "
    "against the dtype it names.")

_add(KernelTask(
    "int8_gemv", "kernel(w, w_scale, x, x_scale, y)",
    "y[r] = w_scale[r] * x_scale[0] * sum_k w[r, k] * x[k] on INT8 w (rows x cols) and x, one warp "
    "per row (BLOCK // 32 rows per block), the sum in integers",
    ("w", "w_scale", "x", "x_scale", "y"), ("y",),
    make_sizes=lambda rng: {"rows": _odd(rng, 9, 17), "cols": _odd(rng, 150, 300)},
    edge_sizes=lambda rng: {"rows": _odd(rng, 3, 7), "cols": _odd(rng, 5, 31)},
    make_data=_gemv_data, reference=_gemv_ref,
    launch=lambda s: ((-(-s["rows"] // (BLOCK // 32)),), (BLOCK,)),
    flops=_t("rows", "cols", factor=2), min_bytes=lambda s: s["rows"] * s["cols"] + s["cols"] + 8 * s["rows"],
    targets=(CostTarget(_w_sectors_per_request, lambda s: 2,
                        "w's loads at most 2 sectors per warp request", mistake=_ROW_PER_THREAD,
                        why="a warp's 32 neighbouring bytes of one row span one or two 32-byte sectors"),
             _loads_at_most(lambda s: 2 * s["rows"] * s["cols"] + 2 * s["rows"] + s["rows"],
                            "w and x once per row, the scales once per row")),
    large={"rows": 8192, "cols": 8192}, rtol=1e-5, atol=1e-5, mistakes={"wrong": _GEMV_WRONG, "crash": _NARROW_SUM},
    special=(Case("every value -128 (int8's most negative)", lambda rng: {"rows": 5, "cols": _odd(rng, 200, 300)},
                  lambda rng, s: _gemv_data(rng, s, extreme=True)),
             Case("a size of one", lambda rng: {"rows": 1, "cols": 1}))))


# ----------------------------------------------------------------------------- RMSNorm

def _rms_data(rng, s, zero_row=False):
    x = 3 * _f32(rng, s["rows"], s["cols"])
    if zero_row:
        x[1] = 0.0                     # all zeros: mean(x^2) = 0, only eps keeps 1 / sqrt finite
    return {"x": x, "g": (1 + 0.1 * _f32(rng, s["cols"])).astype(np.float32),
            "out": np.zeros((s["rows"], s["cols"]), np.float32)}


def _rms_small_data(rng, s):
    """Row 1 of zeros, and row 2 of values about 1e-3: its mean(x^2) is about RMS_EPS, where eps's
    place shows (outside the square root, 1 / (1e-3 + 1e-6) against 1 / sqrt(2e-6): 40% apart)."""
    d = _rms_data(rng, s, zero_row=True)
    d["x"][2] *= np.float32(np.sqrt(RMS_EPS) / 3)
    return d


def _rms_diagnose(run, name, idx, written):
    x = run.data["x"][idx[0]].astype(np.float64)
    if written and 0 < (x * x).mean() < 100 * RMS_EPS:
        return "numerics", _EPS_OUTSIDE
    return None


def _rms_ref(d):
    x = d["x"].astype(np.float64)
    r = 1.0 / np.sqrt((x * x).mean(axis=1, keepdims=True) + RMS_EPS)
    return {"out": (x * r * d["g"]).astype(np.float32)}


_EPS_FORGOTTEN = Mistake(
    "eps-forgotten", "1 / sqrt(mean(x^2)) without the epsilon: a row of zeros (padding, a dead "
    "channel) gives 0 / 0.", "patterns",
    "RMSNorm divides by sqrt(mean(x^2) + eps), with RMS_EPS inside the square root.")
_EPS_OUTSIDE = Mistake(
    "eps-outside-sqrt", "The epsilon outside the square root, 1 / (sqrt(mean(x^2)) + eps): it keeps "
    "a row of zeros finite too, but on a row whose mean square is near eps (|x| about 1e-3) it is "
    "40% off. RMSNorm adds eps to the mean square.", "patterns",
    "Put RMS_EPS inside the square root: 1 / sqrt(s[0] / cols + RMS_EPS).")
_RMS_WRONG = Mistake(
    "rmsnorm-formula", "Some outputs wrong: out[r, c] = x[r, c] / sqrt(mean + RMS_EPS) * g[c], where "
    "mean is the sum of row r's squares divided by cols (not by BLOCK), and every element is "
    "multiplied by its gain g[c].", "patterns",
    "Compute the named element by hand: its row's sum of squares, the mean over cols, the scale, "
    "then x * scale * g; compare each with your kernel's.")
_RMS_PASSES = Mistake(
    "unfused-passes", "x read more than twice per element: one pass for the sum of squares and one "
    "for the output are enough (a third pass, or re-reading x per step, is the unfused kernel's "
    "traffic).", "patterns",
    "Count the loops that read x; the scale 1 / sqrt(...) is one number per row, kept in a register.")

_add(KernelTask(
    "rmsnorm", "kernel(x, g, out)",
    "out[r, c] = x[r, c] / sqrt(mean(x[r, :]^2) + RMS_EPS) * g[c]; one block of BLOCK threads per row",
    ("x", "g", "out"), ("out",),
    make_sizes=lambda rng: {"rows": _odd(rng, 3, 5), "cols": _odd(rng, 150, 400)},
    edge_sizes=lambda rng: {"rows": _odd(rng, 2, 6), "cols": _odd(rng, 5, 31)},
    make_data=_rms_data, reference=_rms_ref, launch=lambda s: ((s["rows"],), (BLOCK,)),
    flops=_t("rows", "cols", factor=4), min_bytes=lambda s: _F * (2 * s["rows"] * s["cols"] + s["cols"]),
    bytes_model=lambda s: _F * (4 * s["rows"] * s["cols"]),
    targets=(_loads_at_most(_t("rows", "cols", factor=3), "three per element (x twice, g once)",
                            mistake=_RMS_PASSES, why="fused: the sum of squares, then the output"),
             _stores_at_most(_t("rows", "cols"), "one per element")),
    large={"rows": 4096, "cols": 8192}, rtol=1e-4, atol=1e-5,
    mistakes={"numerics": _EPS_FORGOTTEN, "wrong": _RMS_WRONG},
    diagnose=_rms_diagnose,
    special=(Case("a row of zeros, and one whose mean square is near eps (|x| about 1e-3)",
                  lambda rng: {"rows": 3, "cols": _odd(rng, 40, 120)}, _rms_small_data, _EPS_FORGOTTEN),
             Case("a size of one", lambda rng: {"rows": 1, "cols": 1}))))


# ----------------------------------------------------------------------------- CSR SpMV

def _csr(rng, rows, cols, lengths):
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    indices = np.concatenate([np.sort(rng.choice(cols, size=int(l), replace=False)) for l in lengths]
                             or [np.zeros(0, int)]).astype(np.int32)
    return indptr, indices


def _spmv_data(rng, s, kind="skewed"):
    rows, cols = s["rows"], s["cols"]
    if kind == "skewed":       # a few long rows among short ones, and some empty: real matrices' spread
        lengths = np.minimum(rng.geometric(0.15, rows) - 1, cols)
        lengths[rng.choice(rows, 2, replace=False)] = cols // 2 + int(rng.integers(0, cols // 2))
        lengths[0] = 0
    elif kind == "empty":
        lengths = np.zeros(rows, int)
        lengths[rows // 2] = cols
    else:
        lengths = np.minimum(rng.integers(0, 4, rows), cols)
    indptr, indices = _csr(rng, rows, cols, lengths)
    return {"indptr": indptr, "indices": indices, "data": _f32(rng, indices.size) if indices.size else
            np.zeros(1, np.float32), "x": _f32(rng, cols), "y": np.zeros(rows, np.float32)}


def _spmv_ref(d):
    y = np.zeros(d["y"].size)
    for r in range(d["y"].size):
        lo, hi = d["indptr"][r], d["indptr"][r + 1]
        y[r] = np.dot(d["data"][lo:hi].astype(np.float64), d["x"][d["indices"][lo:hi]])
    return {"y": y.astype(np.float32)}


_SCALAR_CSR = Mistake(
    "thread-per-sparse-row", "One thread per row: a warp's lanes then run as long as its longest row "
    "(the short rows' lanes idle, divergence) and read data and indices a row apart (uncoalesced).",
    "patterns",
    "Give each row to a warp: lanes stride over the row's nonzeros 32 at a time, then sum by "
    "shuffles; look at the profile's SIMT efficiency before and after.")
_EMPTY_ROW = Mistake(
    "empty-row-not-written", "A row with no nonzeros left unwritten: its y is 0, and y starts as "
    "garbage.", "patterns", "Every row's warp writes y[r], even when its loop runs zero times.")

_ROW_CUT = Mistake(
    "long-row-cut", "A row's nonzeros not all summed: the lanes' loop stops before indptr[r + 1] "
    "(a fixed number of nonzeros per lane, or one pass of 32), so the long rows come out short.",
    "patterns",
    "Lane l takes j = indptr[r] + l, + 32, + 64, ... while j < indptr[r + 1], however long the row.")
_SPMV_WRONG = Mistake(
    "spmv-row-wrong", "y[r] wrong: it is the sum over row r's nonzeros j = indptr[r] .. indptr[r + 1] "
    "- 1 of data[j] * x[indices[j]], and only the lane holding the warp's whole sum (lane 0 after "
    "shfl_down) stores it.", "patterns",
    "Compute the named y[r] by hand from its nonzeros; then compare the row your warp takes "
    "(cuda.grid(1) // 32) and the nonzeros each lane adds.")


def _spmv_diagnose(run, name, idx, written):
    indptr = run.data["indptr"]
    r = idx[0]
    length = int(indptr[r + 1] - indptr[r])
    if length == 0:
        return "wrong", _EMPTY_ROW
    if written and length > 32:
        return "wrong", _ROW_CUT
    return None


_add(KernelTask(
    "spmv_csr", "kernel(indptr, indices, data, x, y)",
    "y[r] = sum of data[j] * x[indices[j]] for j in indptr[r] .. indptr[r + 1] - 1 (CSR), one warp per "
    "row (BLOCK // 32 rows per block)",
    ("indptr", "indices", "data", "x", "y"), ("y",),
    make_sizes=lambda rng: {"rows": _odd(rng, 17, 29), "cols": _odd(rng, 60, 120)},
    edge_sizes=lambda rng: {"rows": _odd(rng, 3, 7), "cols": _odd(rng, 3, 9)},
    make_data=_spmv_data, reference=_spmv_ref,
    launch=lambda s: ((-(-s["rows"] // (BLOCK // 32)),), (BLOCK,)),
    flops=lambda s: 0.0, min_bytes=lambda s: 4.0 * s["rows"],
    targets=(CostTarget("simt_efficiency", lambda s: 0.8, "SIMT efficiency at least 80% (active lanes / "
                        "issued lane slots)", at_least=True, mistake=_SCALAR_CSR,
                        why="one thread per row leaves most lanes of its warp idle while the longest row "
                        "runs: 30-70% on these matrices, against 90% for a warp per row"),),
    large={"rows": 1 << 20, "cols": 1 << 20}, rtol=1e-4, atol=1e-5,
    mistakes={"wrong": _SPMV_WRONG}, diagnose=_spmv_diagnose,
    special=(Case("empty rows and one dense row of 150 to 300 nonzeros (past three warps' width)",
                  lambda rng: {"rows": 9, "cols": _odd(rng, 150, 300)}, lambda rng, s: _spmv_data(rng, s, "empty")),
             Case("a size of one", lambda rng: {"rows": 1, "cols": 1},
                  lambda rng, s: _spmv_data(rng, s, "few")))))


# ----------------------------------------------------------------------------- 1D convolution

def _conv_data(rng, s):
    return {"x": _f32(rng, s["n"]), "w": _f32(rng, TAPS), "y": np.zeros(s["n"], np.float32)}


def _conv_ref(d):
    x = np.concatenate([np.zeros(RADIUS), d["x"].astype(np.float64), np.zeros(RADIUS)])
    n = d["x"].size
    return {"y": sum(d["w"][j] * x[j:j + n] for j in range(TAPS)).astype(np.float32)}


_NO_HALO = Mistake(
    "no-halo-staging", "x read from global memory more than once per element: each thread reading "
    "its TAPS neighbours there (every element then loaded TAPS times), or reading x[i] again beside "
    "the tile. A block's threads need its BLOCK elements plus RADIUS on each side, "
    "the halo: load those once into shared memory.", "patterns",
    "Allocate BLOCK + 2 * RADIUS floats of shared memory; each thread loads its element, the first "
    "RADIUS threads also load the halo on both sides (0.0 past the ends); then syncthreads.")
_HALO_EDGE = Mistake(
    "halo-past-the-ends", "The halo of the first and last block loaded from outside x: y is defined "
    "with zeros past both ends (zero padding).", "patterns",
    "Guard each halo load: 0.0 when its index is below 0 or at least n.")

_HALO_OR_TAPS = Mistake(
    "conv-taps-or-halo", "Some outputs wrong: y[i] pairs tap w[j] with x[i + j - RADIUS], so tap 0 "
    "meets the leftmost neighbour, read from tile[t + j]; the tile holds x[b0 - RADIUS] .. "
    "x[b0 + BLOCK + RADIUS - 1] for the block starting at b0.", "patterns",
    "Compute the named y[i] by hand; then check which element of x each tile slot holds and the "
    "order in which the taps meet them.")
_HALO_OFF = Mistake(
    "halo-off-by-one", "Outputs wrong only within RADIUS of a block's edge: the halo holds the wrong "
    "elements (shifted by one, or the left and right swapped). The left halo is x[b0 - RADIUS + t] "
    "in tile[t], the right one x[b0 + BLOCK + t] in tile[BLOCK + RADIUS + t], for t < RADIUS.",
    "patterns", "Write the x index each of the six halo slots should hold for block 1, and the one "
    "your kernel loads.")


def _conv_diagnose(run, name, idx, written):
    bad = ~np.isclose(run.data[name], run.expected[name], rtol=1e-4, atol=1e-5)
    pos = np.nonzero(bad)[0] % BLOCK
    if written and pos.size and ((pos < RADIUS) | (pos >= BLOCK - RADIUS)).all():
        return "wrong", _HALO_OFF
    return None


def _x_loads(profile) -> float:
    """Global loads of x alone (the taps' loads of w are not counted here)."""
    return float(sum(i.accesses for i in profile.instructions
                     if i.array == "x" and i.space == "global" and i.op == "load"))


def _edge_of_a_block(rng):
    """n a multiple of BLOCK, or one or two past one: the last block's right halo starts at n - 2 .. n."""
    return {"n": BLOCK * int(rng.integers(1, 3)) + int(rng.integers(0, 3))}


_add(KernelTask(
    "conv1d", "kernel(x, w, y)",
    f"y[i] = sum_j w[j] * x[i + j - RADIUS] for j < TAPS = {TAPS} (RADIUS = {RADIUS}, zeros past the "
    f"ends), with the block's tile of x and its halo staged in shared memory",
    ("x", "w", "y"), ("y",),
    make_sizes=lambda rng: {"n": _odd(rng, 300, 700)}, edge_sizes=lambda rng: {"n": _odd(rng, 9, 61)},
    make_data=_conv_data, reference=_conv_ref, launch=lambda s: _grid1(s["n"]),
    flops=_t("n", factor=2 * TAPS), min_bytes=lambda s: _F * (2 * s["n"] + TAPS),
    targets=(CostTarget(_x_loads, lambda s: s["n"] + _blocks(s["n"]) * 2 * RADIUS,
                        "global loads of x at most n + 2 RADIUS per block (each element once, and the "
                        "halos)", mistake=_NO_HALO,
                        why="the tile is staged once; every tap then reads shared memory"),
             _loads_at_most(lambda s: s["n"] + _blocks(s["n"]) * (2 * RADIUS + BLOCK * TAPS),
                            "n + per block 2 RADIUS halo elements, and TAPS loads of w per thread",
                            mistake=_NO_HALO, why="each element of x is loaded once, plus the halos")),
    large={"n": 1 << 26}, rtol=1e-4, atol=1e-5, mistakes={"out of bounds": _HALO_EDGE, "wrong": _HALO_OR_TAPS},
    diagnose=_conv_diagnose,
    special=(Case("n a multiple of BLOCK, or 1 or 2 past one", _edge_of_a_block),
             Case("shorter than the halo", lambda rng: {"n": int(rng.integers(1, RADIUS + 1))}))))

#: The design puzzles, in the order the exercises take them.
PUZZLES = ("histogram", "scan_block", "scan", "warp_sum", "matmul_register", "int8_gemv", "rmsnorm",
           "spmv_csr", "conv1d")
