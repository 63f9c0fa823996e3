"""The kernels of lesson 09 and its puzzles: data, reference, launch, FLOP, traffic and targets.

A :class:`KernelTask` is everything needed to run, check and cost one kernel *except* the
kernel: how to make random inputs of awkward sizes, the NumPy reference, the launch
configuration, the FLOP the computation needs, the DRAM bytes a good kernel moves, and the
cost targets a puzzle enforces. ``check_kernel(task, kernel)`` runs a learner's kernel on the
task's :class:`Case` list: random sizes that no block size divides, fewer elements than one
block, and the task's adversarial cases (values whose exponentials overflow without the max
subtraction, rows shorter than a warp, masked -inf entries, sizes of one...). It raises
:class:`KernelCheckError` with the first problem, its failure class (``failure``: out of
bounds, race, uninitialized, barrier, warp sync, numerics, wrong, cost, crash, step limit) and
the :class:`Mistake` it most likely comes from, with the lesson section to read again.

Outputs start as NaN (garbage integers for integer outputs), as freshly allocated GPU memory
holds whatever was there; only the outputs a task accumulates into (``accumulates``) start at 0.
Sizes are drawn per case from a seed: a fixed one per task, or one from the learner's identity
(``learner=``), so two learners get different sizes; the message says how to rerun the exact
case with :func:`run_task`.
"""

from __future__ import annotations

import hashlib
import inspect
import re
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .._validate import check_choice, check_int
from ..tiling import tiled_matmul_traffic
from .profile import KernelProfile, Problem, predict_time, profile_trace, Prediction, uninitialized_output_read
from .trace import (KernelCrash, KernelFault, KernelStepLimit, OutOfBoundsError, UninitializedSharedRead, WarpSyncError,
                    python_function, trace_launch)

__all__ = [
    "CostTarget", "KernelTask", "KernelCheckError", "TaskRun", "TASKS", "get_task",
    "list_tasks", "run_task", "check_kernel", "predict_task", "BLOCK", "BLOCK_2D", "TILE_T", "TILE",
]

#: Threads per block of the 1D tasks; the 2D block of the elementwise tasks (a warp is one row
#: segment of 32 columns); the tile edge of the transposes (32 x 32 threads, one per element) and
#: of the matmuls (16 x 16). The sizes drawn never divide any of them.
BLOCK = 128
BLOCK_2D = (32, 8)
TILE_T = 32
TILE = 16


#: Lesson 09's sections, as their ``## `` headings read (without the hashes): a mistake names one.
SECTIONS = {
    "grid": "1. Grid, block, warp, lane",
    "map": "2. A map, and what the guard is for",
    "2d": "3. Two dimensions, and which way the warp runs",
    "reduction": "4. A block reduction in shared memory, and the race",
    "copy": "5. A coalesced copy and a strided one",
    "transpose": "6. A transpose through shared memory, and padding",
    "matmul": "7. Matmul: naive, then tiled in shared memory",
    "softmax": "8. A row softmax",
    "predict": "9. From a profile to a predicted time",
    "warp": "12. Warp-level primitives: a reduction without shared memory",
    "patterns": "13. More patterns: privatise, scan, stage a halo, tile in registers",
    "nsight": "14. The same counts in Nsight Compute's names",
}


@dataclass(frozen=True)
class Mistake:
    """A misconception a failing kernel most likely holds: ``key`` (stable, lower-case words
    joined by '-'), ``text`` (one sentence naming it), ``section`` (a key of :data:`SECTIONS`)
    and ``hint`` (what to look at, never the answer). The exercise layer turns it into its
    ``Misconception``; the kernel lab itself imports no exercise machinery."""

    key: str
    text: str
    section: str
    hint: str

    def __post_init__(self):
        if self.section not in SECTIONS:
            raise ValueError(f"Mistake {self.key}: section must be one of {sorted(SECTIONS)}, got {self.section!r}")

    @property
    def heading(self) -> str:
        return SECTIONS[self.section]

    @property
    def where(self) -> str:
        return f"Lesson 09, section '{self.heading}'"


class KernelCheckError(AssertionError):
    """A kernel that does not pass its check; the message names the problem (no traceback).

    ``failure`` is the class of the failure (out of bounds, race, uninitialized, barrier, warp
    sync, numerics, wrong, cost, crash, step limit) and ``mistake`` the :class:`Mistake` it
    most likely comes from (or None)."""

    def __init__(self, message="", failure="wrong", mistake=None):
        super().__init__(message)
        self.failure = failure
        self.mistake = mistake

    def _render_traceback_(self):
        lines = str(self).splitlines()
        return [f"KernelCheckError: {lines[0]}"] + lines[1:]


@dataclass(frozen=True)
class CostTarget:
    """A limit on one profile metric: ``metric(profile) <= limit(sizes)`` (or ``>=`` when ``at_least``).

    ``metric`` is a :class:`KernelProfile` attribute name (or a function of the profile); ``what``
    says it in words; ``why`` is
    the reason for the limit and ``mistake`` what a kernel over it most likely does.
    """

    metric: str
    limit: Callable[[dict], float]
    what: str
    at_least: bool = False
    mistake: Mistake | None = None
    why: str = ""

    def format(self, value: float) -> str:
        """A measured or allowed value as the messages print it: 76% for an efficiency, 3,828 for a count."""
        if isinstance(self.metric, str) and self.metric.endswith("efficiency"):
            return f"{value:.0%}"
        return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.3g}"

    def evaluate(self, profile: KernelProfile, sizes: dict):
        got = float(self.metric(profile) if callable(self.metric) else getattr(profile, self.metric))
        lim = float(self.limit(sizes))
        ok = got >= lim - 1e-12 if self.at_least else got <= lim + 1e-9
        return ok, got, lim


@dataclass(frozen=True)
class Case:
    """One case of a check: ``label`` (says what is special), ``sizes`` (rng -> dict), ``data``
    (rng, sizes -> inputs; None: the task's own ``make_data``), and the :class:`Mistake` a kernel
    that fails only here most likely holds (None: the failure's class decides)."""

    label: str
    sizes: Callable[[np.random.Generator], dict]
    data: Callable | None = None
    mistake: Mistake | None = None


@dataclass(frozen=True)
class KernelTask:
    """One kernel to write: its signature, data, reference and costs (see the module docstring)."""

    name: str
    signature: str                                   # e.g. "kernel(a, out)"
    description: str
    params: tuple                                    # kernel parameter names, in order
    outputs: tuple                                   # which params the kernel writes
    make_sizes: Callable[[np.random.Generator], dict]
    make_data: Callable[[np.random.Generator, dict], dict]   # name -> array or scalar
    reference: Callable[[dict], dict]                # inputs -> expected outputs
    launch: Callable[[dict], tuple]                  # sizes -> (grid, block)
    flops: Callable[[dict], float]
    min_bytes: Callable[[dict], float]               # compulsory DRAM bytes: inputs read once, outputs written once
    bytes_model: Callable[[dict], float] | None = None   # DRAM bytes this kernel design moves (default min_bytes)
    targets: tuple = ()
    large: dict = field(default_factory=dict)        # a realistic size for the predicted time
    edge_sizes: Callable[[np.random.Generator], dict] | None = None   # sizes of the check's second case
    rtol: float = 1e-5
    atol: float = 1e-6
    special: tuple = ()                              # Case: the adversarial cases after those two
    accumulates: tuple = ()                          # outputs the kernel adds into: they start at 0
    mistakes: dict = field(default_factory=dict)     # failure class -> Mistake, over the defaults
    #: for a wrong value, a closer reading of the run: (run, output name, index, written) ->
    #: (failure class, Mistake), or None to keep the class and the mistake the tables give
    diagnose: Callable | None = None

    def model_bytes(self, sizes: dict) -> float:
        return float((self.bytes_model or self.min_bytes)(sizes))

    @property
    def costed_cases(self) -> int:
        """How many of the first cases are held to the cost targets (random sizes, and fewer than
        one block when the task has such sizes); the adversarial ones after them are not."""
        return 1 + (self.edge_sizes is not None)

    @property
    def cases(self) -> tuple:
        """The check's cases in order: random sizes, fewer than one block (when the task has
        such sizes), then the adversarial ones (where only safety and values are checked: a
        cost target means little on one element)."""
        first = [Case("random sizes", self.make_sizes)]
        if self.edge_sizes is not None:
            first.append(Case("fewer elements than one block", self.edge_sizes))
        return tuple(first) + tuple(self.special)


@dataclass(frozen=True)
class TaskRun:
    """A kernel run on one task's data: the sizes, inputs, outputs, expected outputs, profile."""

    task: KernelTask
    sizes: dict
    data: dict
    expected: dict
    profile: KernelProfile

    @property
    def correct(self) -> bool:
        return all(np.allclose(self.data[k], self.expected[k], rtol=self.task.rtol, atol=self.task.atol,
                               equal_nan=False) for k in self.task.outputs)


# --------------------------------------------------------------------------------------------
# Sizes, data and launches
# --------------------------------------------------------------------------------------------

def _odd(rng, low, high) -> int:
    """A random odd size in [low, high): no power-of-two block divides it."""
    return int(rng.integers(low, high)) | 1


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _grid1(n, block=BLOCK):
    return (-(-n // block),), (block,)


def _grid2(rows, cols, block=BLOCK_2D):
    # x runs along columns (the fast index), y along rows: grid = (col blocks, row blocks).
    return (-(-cols // block[0]), -(-rows // block[1])), tuple(block)


def _softmax(x):
    z = x.astype(np.float64) - x.max(axis=1, keepdims=True)
    e = np.exp(z)
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def _elements(*names):
    return lambda s: float(np.prod([s[n] for n in names]))


def _t(*names, factor=1.0):
    return lambda s: factor * float(np.prod([s[n] for n in names]))


_F = 4   # bytes per float32

# Mistakes the cost targets name.
_EXTRA_LOADS = Mistake(
    "inputs-read-twice", "An element read more than once (or an output read as well as written): "
    "every read is a load, and a memory-bound kernel's time is its bytes.", "copy",
    "Count the reads of each array per thread in your kernel; keep a value you need twice in a "
    "local variable.")
_EXTRA_STORES = Mistake(
    "stores-per-thread", "More stores than outputs: a result written by every thread (or written "
    "and rewritten) where one store per output element is enough.", "reduction",
    "Which thread holds the finished value? Let only that one store it, once.")
_UNCOALESCED = Mistake(
    "lanes-far-apart", "A warp's 32 lanes on elements far apart in memory: each lane then needs its "
    "own 32-byte sector, where neighbouring lanes on neighbouring elements share four-byte slots of "
    "the same sectors.", "copy",
    "Which index follows threadIdx.x? Make it the last (fastest) index of the arrays the warp reads "
    "and writes.")
_CONFLICTS = Mistake(
    "column-in-one-bank", "A warp reading a column of a 32-wide shared tile: its 32 words are 32 "
    "apart, all in one bank, so the read takes 32 passes.", "transpose",
    "Bank = word index mod 32: write the word index of tile[tx, ty] for tx = 0..31, then change the "
    "row length so that a column steps through every bank.")
_GLOBAL_ATOMICS = Mistake(
    "global-atomic-per-element", "One global atomic per element: every one is a read-modify-write "
    "at the L2 cache, and all of them on one address run one after another. (Shared-memory atomics "
    "stay in the SM and are not counted against this target.)", "reduction",
    "Combine the block's values first (a tree in shared memory, shared atomics, or warp shuffles), "
    "then one thread adds the block's total to out[0].")


# Cost targets used by several tasks.
def _loads_at_most(expr, what, mistake=_EXTRA_LOADS, why=""):
    return CostTarget("global_loads", expr, f"global loads at most {what}", mistake=mistake, why=why)


def _stores_at_most(expr, what, mistake=_EXTRA_STORES, why=""):
    return CostTarget("global_stores", expr, f"global stores at most {what}", mistake=mistake, why=why)


def _coalesced(fraction=0.75):
    return CostTarget("coalescing_efficiency", lambda s: fraction,
                      f"coalescing efficiency at least {fraction:.0%} (bytes used / bytes moved)",
                      at_least=True, mistake=_UNCOALESCED)


_NO_CONFLICTS = CostTarget("bank_conflict_degree", lambda s: 1, "no shared-memory bank conflicts (degree 1)",
                           mistake=_CONFLICTS)

# Adversarial cases shared by several tasks.
_ONE_1D = Case("a size of one", lambda rng: {"n": 1})
_ONE_ROW = Case("a single row", lambda rng: {"rows": 1, "cols": _odd(rng, 33, 90)})
_ONE_COL = Case("a single column", lambda rng: {"rows": _odd(rng, 9, 41), "cols": 1})
_SPECIAL_2D = (_ONE_ROW, _ONE_COL)


def _matmul_sizes(rng):
    """Odd sizes, all different: m spans two 16-wide tiles, n three, k two; no edge tile is full,
    and m < n, so a kernel that swaps rows and columns misses part of the output.
    (Small: the simulator runs about 100,000 kernel lines per second.)"""
    m = int(rng.choice(np.arange(19, 32, 2)))
    n = int(rng.choice(np.arange(35, 48, 2)))
    k = int(rng.choice([v for v in range(19, 32, 2) if v != m]))
    return {"m": m, "k": k, "n": n}


def _matmul_edge(rng):
    """The other way round, and smaller than one tile in m: n < m, m < 16."""
    return {"m": _odd(rng, 5, 15), "k": _odd(rng, 17, 31), "n": _odd(rng, 3, 5)}


_MATMUL_SPECIAL = (Case("sizes of one", lambda rng: {"m": 1, "k": 1, "n": 1}),)
_ACC_IN_GLOBAL = Mistake(
    "accumulating-in-global", "The running sum kept in out[i, j] (out[i, j] += ... inside the loop): "
    "each step then reads and writes global memory, where a local variable is a register.", "matmul",
    "Sum into a local variable and store out[i, j] once after the loop.")
_TILES_NOT_REUSED = Mistake(
    "tiles-not-reused", "Each thread reading its own row of a and column of b from global memory (or "
    "reading a tile's element more than once): the point of a tile is that each element is loaded "
    "once per tile and then read TILE times from shared memory.", "matmul",
    "Per step along k, each thread loads exactly one element of a and one of b into the tiles; every "
    "product reads the tiles.")


def _tiled_loads(s, tile=TILE):
    t = tiled_matmul_traffic(s["m"], s["k"], s["n"], tile, tile, bytes_per_element=1)
    return t.a_bytes + t.b_bytes          # elements of A and B read, lesson 06's formula


TASKS: dict[str, KernelTask] = {}


def _add(task: KernelTask) -> KernelTask:
    TASKS[task.name] = task
    return task


_add(KernelTask(
    "map", "kernel(a, out)", "out[i] = 10 * a[i] + 1 for every i (one thread per element, guarded)",
    ("a", "out"), ("out",),
    make_sizes=lambda rng: {"n": _odd(rng, 300, 700)}, edge_sizes=lambda rng: {"n": _odd(rng, 3, 120)},
    make_data=lambda rng, s: {"a": _f32(rng, s["n"]), "out": np.zeros(s["n"], np.float32)},
    reference=lambda d: {"out": (10 * d["a"] + 1).astype(np.float32)},
    launch=lambda s: _grid1(s["n"]),
    flops=_t("n", factor=2), min_bytes=_t("n", factor=2 * _F),
    targets=(_loads_at_most(_elements("n"), "one per element"),
             _stores_at_most(_elements("n"), "one per element")),
    large={"n": 1 << 26}, special=(_ONE_1D,)))

_add(KernelTask(
    "zip", "kernel(a, b, out)", "out[i] = a[i] + b[i] (vector add)",
    ("a", "b", "out"), ("out",),
    make_sizes=lambda rng: {"n": _odd(rng, 300, 700)}, edge_sizes=lambda rng: {"n": _odd(rng, 3, 120)},
    make_data=lambda rng, s: {"a": _f32(rng, s["n"]), "b": _f32(rng, s["n"]),
                              "out": np.zeros(s["n"], np.float32)},
    reference=lambda d: {"out": d["a"] + d["b"]},
    launch=lambda s: _grid1(s["n"]),
    flops=_t("n"), min_bytes=_t("n", factor=3 * _F),
    targets=(_loads_at_most(_t("n", factor=2), "two per element"), _coalesced(0.9)),
    large={"n": 1 << 26}, special=(_ONE_1D,)))

_add(KernelTask(
    "map2d", "kernel(a, out)", "out[r, c] = a[r, c] + 1 on a rows x cols matrix, 2D grid (x = column)",
    ("a", "out"), ("out",),
    make_sizes=lambda rng: {"rows": _odd(rng, 20, 50), "cols": _odd(rng, 40, 90)},
    make_data=lambda rng, s: {"a": _f32(rng, s["rows"], s["cols"]),
                              "out": np.zeros((s["rows"], s["cols"]), np.float32)},
    reference=lambda d: {"out": d["a"] + 1},
    launch=lambda s: _grid2(s["rows"], s["cols"]),
    flops=_elements("rows", "cols"), min_bytes=_t("rows", "cols", factor=2 * _F),
    targets=(_loads_at_most(_elements("rows", "cols"), "one per element"), _coalesced(0.6)),
    large={"rows": 8192, "cols": 8192}, special=_SPECIAL_2D))

_add(KernelTask(
    "outer", "kernel(a, b, out)", "out[r, c] = a[r] * b[c] (outer product; a has rows, b has cols entries)",
    ("a", "b", "out"), ("out",),
    make_sizes=lambda rng: {"rows": _odd(rng, 20, 50), "cols": _odd(rng, 40, 90)},
    make_data=lambda rng, s: {"a": _f32(rng, s["rows"]), "b": _f32(rng, s["cols"]),
                              "out": np.zeros((s["rows"], s["cols"]), np.float32)},
    reference=lambda d: {"out": np.outer(d["a"], d["b"]).astype(np.float32)},
    launch=lambda s: _grid2(s["rows"], s["cols"]),
    flops=_elements("rows", "cols"),
    min_bytes=lambda s: _F * (s["rows"] + s["cols"] + s["rows"] * s["cols"]),
    targets=(_loads_at_most(_t("rows", "cols", factor=2), "two per output element"), _coalesced(0.6)),
    large={"rows": 8192, "cols": 8192}, special=_SPECIAL_2D))

_add(KernelTask(
    "block_sum", "kernel(a, out)",
    "out[b] = sum of the BLOCK elements block b covers (a tree reduction in shared memory)",
    ("a", "out"), ("out",),
    make_sizes=lambda rng: {"n": _odd(rng, 600, 1400)}, edge_sizes=lambda rng: {"n": _odd(rng, 3, 120)},
    make_data=lambda rng, s: {"a": _f32(rng, s["n"]), "out": np.zeros(-(-s["n"] // BLOCK), np.float32)},
    reference=lambda d: {"out": np.add.reduceat(d["a"].astype(np.float64),
                                                np.arange(0, d["a"].size, BLOCK)).astype(np.float32)},
    launch=lambda s: _grid1(s["n"]),
    flops=_t("n"), min_bytes=lambda s: _F * (s["n"] + -(-s["n"] // BLOCK)),
    targets=(_loads_at_most(_elements("n"), "one per element"),
             _stores_at_most(lambda s: -(-s["n"] // BLOCK), "one per block")),
    large={"n": 1 << 26}, rtol=1e-4, atol=1e-4, special=(_ONE_1D,)))

_add(KernelTask(
    "dot", "kernel(a, b, out)",
    "out[0] = sum of a[i] * b[i]: each block reduces in shared memory, then one atomic add per block",
    ("a", "b", "out"), ("out",),
    make_sizes=lambda rng: {"n": _odd(rng, 600, 1400)}, edge_sizes=lambda rng: {"n": _odd(rng, 3, 120)},
    make_data=lambda rng, s: {"a": _f32(rng, s["n"]), "b": _f32(rng, s["n"]), "out": np.zeros(1, np.float32)},
    reference=lambda d: {"out": np.array([np.dot(d["a"].astype(np.float64), d["b"])], np.float32)},
    launch=lambda s: _grid1(s["n"]),
    flops=_t("n", factor=2), min_bytes=lambda s: _F * (2 * s["n"] + 1),
    targets=(_loads_at_most(_t("n", factor=2), "two per element"),
             CostTarget("global_atomics", lambda s: -(-s["n"] // BLOCK), "global atomics at most one per block",
                        mistake=_GLOBAL_ATOMICS,
                        why="each global atomic is a read-modify-write at L2, one at a time per address")),
    large={"n": 1 << 26}, rtol=1e-4, atol=1e-3, special=(_ONE_1D,), accumulates=("out",)))

_add(KernelTask(
    "copy", "kernel(a, out)", "out[r, c] = a[r, c], one thread per element, consecutive threads on consecutive columns",
    ("a", "out"), ("out",),
    make_sizes=lambda rng: {"rows": _odd(rng, 20, 50), "cols": _odd(rng, 40, 90)},
    make_data=lambda rng, s: {"a": _f32(rng, s["rows"], s["cols"]),
                              "out": np.zeros((s["rows"], s["cols"]), np.float32)},
    reference=lambda d: {"out": d["a"].copy()},
    launch=lambda s: _grid2(s["rows"], s["cols"]),
    flops=lambda s: 0.0, min_bytes=_t("rows", "cols", factor=2 * _F),
    targets=(_coalesced(0.6),
             _loads_at_most(_elements("rows", "cols"), "one per element",
                            why="a copy reads each element of a once and nothing else"),
             _stores_at_most(_elements("rows", "cols"), "one per element", mistake=_EXTRA_LOADS)),
    large={"rows": 8192, "cols": 8192}, special=_SPECIAL_2D))

_add(KernelTask(
    "transpose", "kernel(a, out)",
    "out[c, r] = a[r, c] through a TILE_T x TILE_T shared tile: global reads and writes both coalesced",
    ("a", "out"), ("out",),
    make_sizes=lambda rng: {"rows": _odd(rng, 20, 50), "cols": _odd(rng, 40, 90)},
    make_data=lambda rng, s: {"a": _f32(rng, s["rows"], s["cols"]),
                              "out": np.zeros((s["cols"], s["rows"]), np.float32)},
    reference=lambda d: {"out": d["a"].T.copy()},
    launch=lambda s: _grid2(s["rows"], s["cols"], (TILE_T, TILE_T)),
    flops=lambda s: 0.0, min_bytes=_t("rows", "cols", factor=2 * _F),
    targets=(_coalesced(0.6),),
    large={"rows": 8192, "cols": 8192}, special=_SPECIAL_2D))

_add(KernelTask(
    "transpose_padded", "kernel(a, out)",
    "the shared-tile transpose with no bank conflicts (pad the tile) and coalesced global access",
    ("a", "out"), ("out",),
    make_sizes=TASKS["transpose"].make_sizes, make_data=TASKS["transpose"].make_data,
    reference=TASKS["transpose"].reference, launch=TASKS["transpose"].launch,
    flops=lambda s: 0.0, min_bytes=_t("rows", "cols", factor=2 * _F),
    targets=(_coalesced(0.6), _NO_CONFLICTS),
    large={"rows": 8192, "cols": 8192}, special=_SPECIAL_2D))

_add(KernelTask(
    "matmul", "kernel(a, b, out)", "out = a @ b, one thread per output element (a is m x k, b is k x n)",
    ("a", "b", "out"), ("out",),
    make_sizes=_matmul_sizes,
    make_data=lambda rng, s: {"a": _f32(rng, s["m"], s["k"]), "b": _f32(rng, s["k"], s["n"]),
                              "out": np.zeros((s["m"], s["n"]), np.float32)},
    reference=lambda d: {"out": (d["a"].astype(np.float64) @ d["b"]).astype(np.float32)},
    launch=lambda s: _grid2(s["m"], s["n"], (TILE, TILE)),
    flops=lambda s: 2.0 * s["m"] * s["k"] * s["n"],
    min_bytes=lambda s: _F * (s["m"] * s["k"] + s["k"] * s["n"] + s["m"] * s["n"]),
    # Sectors with TILE = 16 (a warp is 2 rows x 16 columns): per thread and step along k,
    # 2 sectors of a (a broadcast per row) and 2 of b, 128 bytes per 32 threads: 4 m k n bytes.
    bytes_model=lambda s: _F * (s["m"] * s["k"] * s["n"] + s["m"] * s["n"]),
    targets=(_loads_at_most(lambda s: 2 * s["m"] * s["k"] * s["n"], "2 m k n", mistake=_ACC_IN_GLOBAL),),
    large={"m": 4096, "k": 4096, "n": 4096}, rtol=1e-4, atol=1e-4, edge_sizes=_matmul_edge,
    special=_MATMUL_SPECIAL))

_add(KernelTask(
    "matmul_tiled", "kernel(a, b, out)",
    "out = a @ b with TILE x TILE tiles of a and b staged in shared memory",
    ("a", "b", "out"), ("out",),
    make_sizes=_matmul_sizes, make_data=TASKS["matmul"].make_data, reference=TASKS["matmul"].reference,
    launch=TASKS["matmul"].launch, flops=TASKS["matmul"].flops, min_bytes=TASKS["matmul"].min_bytes,
    bytes_model=lambda s: _F * (_tiled_loads(s) + s["m"] * s["n"]),
    targets=(_loads_at_most(_tiled_loads, "lesson 06's tiled count, m k ceil(n/TILE) + k n ceil(m/TILE)",
                            mistake=_TILES_NOT_REUSED,
                            why="each element of a tile is read from DRAM once per tile of the output it serves"),),
    large={"m": 4096, "k": 4096, "n": 4096}, rtol=1e-4, atol=1e-4, edge_sizes=_matmul_edge,
    special=_MATMUL_SPECIAL))


def _softmax_sizes(rng):
    return {"rows": _odd(rng, 3, 8), "cols": _odd(rng, 150, 400)}


def _softmax_edge(rng):
    """Fewer columns than threads: some threads own no element (their running max stays -inf)."""
    return {"rows": _odd(rng, 2, 6), "cols": _odd(rng, 20, 120)}


def _softmax_data(rng, s):
    return {"x": 4 * _f32(rng, s["rows"], s["cols"]), "out": np.zeros((s["rows"], s["cols"]), np.float32)}


def _offset_rows(rng, s, low=100.0, high=900.0):
    """N(0, 4) rows shifted by large offsets of both signs: row 0 far above 0, row 1 far below."""
    sign = rng.choice([-1.0, 1.0], s["rows"])
    sign[:2] = (1.0, -1.0)
    offsets = sign * rng.uniform(low, high, s["rows"])
    offsets[:2] = sign[:2] * rng.uniform(0.8 * high, high, 2)
    return (4 * _f32(rng, s["rows"], s["cols"]) + offsets[:, None]).astype(np.float32)


def _softmax_large_data(rng, s):
    return {"x": _offset_rows(rng, s), "out": np.zeros((s["rows"], s["cols"]), np.float32)}


def _softmax_short_data(rng, s):
    """Rows shorter than a warp, far from 0, and row 2 masked: its last columns are -inf (a causal
    mask), so some threads own only -inf. (A fully masked row has no softmax: none here.)"""
    x = _offset_rows(rng, s, 50.0, 800.0)
    x[2, s["cols"] // 2 + 1:] = -np.inf
    return {"x": x, "out": np.zeros((s["rows"], s["cols"]), np.float32)}


_MAX_NOT_SUBTRACTED = Mistake(
    "max-not-subtracted", "exp of the raw values: exp(89) is past float32's largest value and "
    "exp(710) past float64's, while exp(-800) is 0. softmax(x) = softmax(x - max x): subtract the "
    "row's maximum and every exponent is at most 0, the largest term exactly 1; a running maximum "
    "starts at -inf, the identity of max, never at 0.", "softmax",
    "Print the row's largest value and exp of it; then compute exp(x - max) instead.")
_EMPTY_SLICE = Mistake(
    "empty-thread-merge", "A thread that owns no element (a row shorter than the block) or only "
    "masked -inf ones must enter every reduction as the identity, (max, sum) = (-inf, 0), and must "
    "not compute exp(-inf - (-inf)), which is exp(NaN): when both maxima are -inf the merged sum is "
    "0, and a -inf element adds nothing.", "softmax",
    "Trace by hand a row of 5 columns with 128 threads: what do threads 5 to 127 hold, and what "
    "does each step of your merge compute for two of them?")
_SOFTMAX_SPECIAL = (
    Case("rows far from zero (|x| up to 900)", lambda rng: {"rows": _odd(rng, 3, 6), "cols": _odd(rng, 130, 200)},
         _softmax_large_data, _MAX_NOT_SUBTRACTED),
    Case("rows shorter than a warp, one masked with -inf",
         lambda rng: {"rows": _odd(rng, 3, 6), "cols": _odd(rng, 5, 31)}, _softmax_short_data, _EMPTY_SLICE),
    Case("a size of one", lambda rng: {"rows": 1, "cols": 1}),
)
_EXTRA_PASS = Mistake(
    "extra-pass", "A third pass over the row: the online softmax keeps the maximum and a sum rescaled "
    "to it in one pass, so x is read once for (max, sum) and once for the output.", "softmax",
    "Count the loops that read x; merge the first two by rescaling the sum whenever the maximum moves.")


_add(KernelTask(
    "softmax", "kernel(x, out)",
    "out[r, :] = softmax(x[r, :]); one block of BLOCK threads per row, shared-memory reductions",
    ("x", "out"), ("out",),
    make_sizes=_softmax_sizes, edge_sizes=_softmax_edge,
    make_data=_softmax_data,
    reference=lambda d: {"out": _softmax(d["x"])},
    launch=lambda s: ((s["rows"],), (BLOCK,)),
    flops=_t("rows", "cols", factor=5), min_bytes=_t("rows", "cols", factor=2 * _F),
    bytes_model=_t("rows", "cols", factor=4 * _F),
    targets=(_loads_at_most(_t("rows", "cols", factor=3), "three per element"),),
    large={"rows": 4096, "cols": 8192}, rtol=1e-4, atol=1e-6,
    special=_SOFTMAX_SPECIAL, mistakes={"numerics": _EMPTY_SLICE}))

_add(KernelTask(
    "online_softmax", "kernel(x, out)",
    "the row softmax reading x only twice: one pass keeps a running max and a rescaled running sum",
    ("x", "out"), ("out",),
    make_sizes=_softmax_sizes, edge_sizes=_softmax_edge, make_data=TASKS["softmax"].make_data, reference=TASKS["softmax"].reference,
    launch=TASKS["softmax"].launch,
    flops=_t("rows", "cols", factor=5), min_bytes=_t("rows", "cols", factor=2 * _F),
    bytes_model=_t("rows", "cols", factor=3 * _F),
    targets=(_loads_at_most(_t("rows", "cols", factor=2), "two per element", mistake=_EXTRA_PASS),),
    large={"rows": 4096, "cols": 8192}, rtol=1e-4, atol=1e-6,
    special=_SOFTMAX_SPECIAL, mistakes={"numerics": _EMPTY_SLICE}))


def list_tasks() -> list[str]:
    return list(TASKS)


def get_task(name) -> KernelTask:
    if isinstance(name, KernelTask):
        return name
    key = check_choice("task", name, tuple(TASKS))
    return TASKS[key]


# --------------------------------------------------------------------------------------------
# Running and checking
# --------------------------------------------------------------------------------------------

def learner_seed(task, learner: str) -> int:
    """The seed of ``learner``'s sizes for ``task``: SHA-256 of 'task|learner' (the recipe of
    lessons 01-08's variants), so the same learner always gets the same sizes."""
    task = get_task(task)
    if not isinstance(learner, str) or not learner.strip():
        raise TypeError(f"learner must be a non-empty string (a name or id), got {learner!r}")
    digest = hashlib.sha256(f"{task.name}|{learner.strip()}".encode()).hexdigest()
    return int(digest[:12], 16) % (1 << 40)


def _case_of(task, case, edge) -> int:
    if not isinstance(edge, bool):
        raise TypeError(f"edge must be True or False, got {edge!r}")
    labels = [c.label for c in task.cases]
    if case is None:
        return 1 if edge and task.edge_sizes is not None else 0
    if isinstance(case, str):
        if case not in labels:
            raise ValueError(f"case must be one of {labels} (or its index), got {case!r}")
        return labels.index(case)
    return check_int("case", case, min_value=0, max_value=len(labels) - 1)


def _garbage(a: np.ndarray) -> None:
    """Fill an output as fresh GPU memory would leave it: NaN for floats, a pattern for ints."""
    a.fill(np.nan if a.dtype.kind in "fc" else (0x5A5A5A5A % (1 << (8 * a.itemsize - 1))))


def _case_data(task, index, seed):
    case = task.cases[index]
    rng = np.random.default_rng(seed)
    drawn = case.sizes(rng)
    return case, rng, drawn


def run_task(task, kernel, seed=0, sizes=None, edge=False, case=None) -> TaskRun:
    """Run ``kernel`` on ``task``'s data (random sizes from ``seed``, or ``sizes``), traced.
    ``case`` picks one of ``task.cases`` by index or label (``edge=True``: the fewer-than-one-block
    case); by default the first, random sizes.

    Outputs start as NaN (or garbage integers), except those the task accumulates into. The
    outputs are compared by :func:`check_kernel`; here they are only returned. Kernel faults
    (out of bounds, crashes, step limits) propagate as :class:`~course_lib.kernels.trace.KernelFault`.
    """
    task = get_task(task)
    seed = check_int("seed", seed, min_value=0)
    index = _case_of(task, case, edge)
    spec, rng, drawn = _case_data(task, index, seed)
    if sizes is not None:
        if not isinstance(sizes, dict) or set(sizes) - set(drawn):
            raise ValueError(f"sizes must be a dict with keys from {sorted(drawn)}, got {sizes!r}")
        drawn.update({k: check_int(f"sizes[{k!r}]", v, min_value=1, max_value=1 << 14) for k, v in sizes.items()})
    data = (spec.data or task.make_data)(rng, drawn)
    for name in task.outputs:
        if name not in task.accumulates and isinstance(data[name], np.ndarray):
            _garbage(data[name])
    expected = task.reference({k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in data.items()})
    grid, block = task.launch(drawn)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # an overflow shows in the output instead
        trace = trace_launch(kernel, grid, block, *[data[p] for p in task.params], names=task.params)
    profile = profile_trace(trace, flops=task.flops(drawn))
    return TaskRun(task, drawn, data, expected, profile)


def _sizes_text(sizes: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def _first_wrong(run: TaskRun):
    task = run.task
    for name in task.outputs:
        got, want = np.asarray(run.data[name]), np.asarray(run.expected[name])
        with np.errstate(all="ignore"):
            bad = ~np.isclose(got, want, rtol=task.rtol, atol=task.atol, equal_nan=True)
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            nonfinite = bool((~np.isfinite(got[bad]) & np.isfinite(want[bad])).any()) \
                if got.dtype.kind == "f" else False
            return name, idx, int(bad.sum()), got[idx], want[idx], nonfinite
    return None


def _numbers(got, want) -> tuple[str, str]:
    """Two values as a message prints them: integers in full (16,777,217 is not 16,777,216),
    floats to 6 digits, or 9 where 6 would print the two the same."""
    if np.asarray(got).dtype.kind in "iu":
        return f"{int(got):,}", f"{int(want):,}"
    g, w = f"{got:.6g}", f"{want:.6g}"
    return (f"{got:.9g}", f"{want:.9g}") if g == w else (g, w)


def _writer_of(run: TaskRun, name: str, idx: tuple) -> str:
    tr = run.profile.trace
    aid = next((i for i, a in enumerate(tr.arrays) if a.name == name and a.space == 0), None)
    if aid is None:
        return "no thread wrote it"
    flat = int(np.ravel_multi_index(idx, tr.arrays[aid].shape))
    hits = np.nonzero((tr.acc_array == aid) & (tr.acc_index == flat) & (tr.acc_kind != 0))[0]
    if hits.size == 0:
        return "no thread wrote it (is a guard too strict, or the grid mapping off?)"
    return f"last written by {tr.describe_thread(int(tr.acc_tid[hits[-1]]))}"


# --- what a failure of each class most likely means (a task, a case or a target may say better)

_DEFAULT_MISTAKES = {
    "out of bounds": Mistake(
        "guard-missing", "A thread past the end of the data touched memory: the grid is rounded up "
        "to whole blocks, so the last block has threads with no element, and they must neither read "
        "nor write.", "map",
        "Compare the thread's index with the array's size before any access (reads too), in every "
        "dimension."),
    "race": Mistake(
        "barrier-missing", "Shared memory read by one thread while another may still be writing it "
        "(or the reverse): the threads of a block agree on shared memory only after a "
        "cuda.syncthreads() that all of them pass.", "reduction",
        "The message names the two accesses: put a syncthreads between the write and the other "
        "thread's read, outside any if."),
    "global race in a block": Mistake(
        "threads-unordered", "Two threads of one block (two lanes of a warp, or two warps) touched one "
        "global element, at least one writing, with a plain load and store: nothing orders them, so "
        "the result is whichever lands last.", "reduction",
        "Give the element one writer (the lane or thread that holds the finished value), or combine "
        "the threads' values first and add them with cuda.atomic.add."),
    "negative index": Mistake(
        "index-below-zero", "An index computed below 0 (t - d, i - 1, a left neighbour): negative "
        "indices do not wrap on a GPU, they read memory outside the array.", "map",
        "Guard the access with the condition that keeps its index at least 0 (t >= d, i > 0), and "
        "give those threads the identity instead."),
    "global race": Mistake(
        "blocks-unordered", "Two blocks touched one global element, at least one writing: blocks never "
        "wait for each other, so the result is whichever lands last.", "reduction",
        "Give every output element one writer, or combine the blocks' values with cuda.atomic.add."),
    "uninitialized": Mistake(
        "shared-memory-starts-garbage", "Shared memory read before any thread of the block wrote it: "
        "it starts with whatever was there (the tracer fills floats with NaN, integers with a garbage pattern), including the slots of "
        "threads that have no element.", "reduction",
        "Every slot a later step reads must be written first: a thread without an element writes the "
        "identity (0 for a sum, -inf for a maximum)."),
    "uninitialized output": Mistake(
        "output-read-before-written", "An output read before the kernel wrote it (out[i] += ... reads "
        "out): its memory holds garbage at launch, and the read is one more load per element than "
        "the computation needs.", "copy",
        "Compute the value in a register and store it once with =; read only the inputs."),
    "barrier": Mistake(
        "barrier-in-branch", "A syncthreads that not every thread of the block reaches at the same "
        "call (inside an if, after an early return, or one in each branch): every thread of the block "
        "must wait at the same barrier, or the behaviour is undefined.", "reduction",
        "Move the syncthreads out of the if so that every thread runs the same one, and guard only "
        "the work inside."),
    "warp sync": Mistake(
        "warp-mask-lanes-missing", "A warp primitive whose mask names lanes that never reach it (they "
        "took another branch, exited, or wait elsewhere): the lanes named by the mask must all arrive "
        "at the same primitive with the same mask.", "warp",
        "Call the primitive where every lane of the mask runs it (outside the if), or build the mask "
        "from the lanes that do."),
    "numerics": Mistake(
        "numerics-unguarded", "A computation that is right in exact arithmetic but overflows, "
        "underflows or divides by zero on the check's data (inf, NaN, or a crash).", "softmax",
        "Look at the case's label and at the first non-finite element: which intermediate value "
        "leaves float32's range there?"),
    "wrong": Mistake(
        "wrong-mapping", "Some output elements are wrong or never written: the mapping from thread to "
        "element, or a guard, misses part of the output.", "2d",
        "The message names an element and the thread that last wrote it: work out by hand which "
        "thread should own that element."),
    "edge": Mistake(
        "edge-sizes-unhandled", "Right on large sizes, wrong on sizes smaller than one block (or of "
        "one): the kernel assumes every block, row or tile is full.", "map",
        "Trace by hand a launch whose size is smaller than one block: which threads have an element, "
        "and what do the others contribute?"),
    "cost": Mistake(
        "cost-target-missed", "A correct kernel that moves or issues more than the design needs.",
        "predict", "Read the profile's table for the line that costs the most, and ask what it "
        "should cost."),
    "crash": Mistake(
        "kernel-crash", "The kernel's own code raised an exception in one thread.", "grid",
        "Read the exception and the line the message names; run that thread's index by hand."),
    "step limit": Mistake(
        "endless-loop", "A loop that never ends (or a launch far larger than the simulator runs).",
        "reduction", "Check each while loop's exit: does the stride or the index really reach it?"),
}


def _mistake(task, failure: str, case=None, target=None):
    if target is not None and target.mistake is not None:
        return target.mistake
    if case is not None and case.mistake is not None and failure in ("numerics", "wrong"):
        return case.mistake
    if failure in task.mistakes:
        return task.mistakes[failure]
    if failure == "wrong" and case is not None and case.label != "random sizes":
        return _DEFAULT_MISTAKES["edge"]
    return _DEFAULT_MISTAKES.get(failure)


def _problem_class(p: Problem) -> tuple[str, str]:
    """(failure class, mistake key of _DEFAULT_MISTAKES) of a profile problem."""
    if p.kind == "race":
        if not p.message.startswith("global"):
            return "race", "race"
        blocks = re.findall(r" of block (\([^)]*\)|\d+)", p.message)
        return "race", ("global race in a block" if len(blocks) >= 2 and blocks[0] == blocks[1] else "global race")
    if p.kind == "uninitialized":
        return "uninitialized", ("uninitialized output" if "output" in p.message else "uninitialized")
    return p.kind, p.kind


def _fault_class(exc: KernelFault) -> str:
    if isinstance(exc, OutOfBoundsError):
        return "out of bounds"
    if isinstance(exc, UninitializedSharedRead):
        return "uninitialized"
    if isinstance(exc, WarpSyncError):
        return "warp sync"
    if isinstance(exc, KernelStepLimit):
        return "step limit"
    text = str(exc)
    if isinstance(exc, KernelCrash) and any(w in text for w in ("OverflowError", "ZeroDivisionError",
                                                                 "FloatingPointError", "math domain error")):
        return "numerics"
    return "crash"


def _fail(task, where, problem, failure, again, mistake, note=""):
    lines = [f"{where}: {problem}{note}"]
    if mistake is not None:
        lines.append(f"  misconception: {mistake.text} [misconception: {mistake.key}]")
        lines.append(f"  read again: {mistake.where}")
        lines.append(f"  hint: {mistake.hint}")
    lines.append(f"  {again}")
    return KernelCheckError("\n".join(lines), failure, mistake)


def check_kernel(task, kernel, seed=None, cases=None, learner=None) -> list[TaskRun]:
    """Check ``kernel`` on the task's cases (all by default, or the first ``cases``): safe,
    correct, within every cost target.

    Returns the runs when all pass; raises :class:`KernelCheckError` with the first problem
    otherwise. The seed is ``seed``, else :func:`learner_seed` of ``learner``, else a fixed
    value per task; case c uses seed + c, so a failure can be reproduced with
    ``run_task(task, kernel, seed=..., case=...)``, which the message quotes.
    """
    task = get_task(task)
    all_cases = task.cases
    n = len(all_cases) if cases is None else min(check_int("cases", cases, min_value=1, max_value=8),
                                                 len(all_cases))
    if seed is not None:
        base = check_int("seed", seed, min_value=0)
    elif learner is not None:
        base = learner_seed(task, learner)
    else:
        base = sum(map(ord, task.name)) * 7919
    fn = python_function(kernel)
    params = list(inspect.signature(fn).parameters)
    if len(params) != len(task.params):
        raise KernelCheckError(f"{task.name}: your kernel {fn.__name__}({', '.join(params)}) takes "
                               f"{len(params)} parameter(s), but the launch passes {len(task.params)}: "
                               f"{task.signature}", "crash", None)
    runs = []
    for c in range(n):
        spec = all_cases[c]
        s = base + c
        again = f"run_task({task.name!r}, kernel, seed={s}{f', case={c}' if c else ''}) reruns this case"
        try:
            run = run_task(task, kernel, seed=s, case=c)
        except KernelFault as exc:
            sizes = spec.sizes(np.random.default_rng(s))
            failure = _fault_class(exc)
            mistake = _mistake(task, failure, spec)
            if failure == "out of bounds" and "negative indices" in str(exc) and failure not in task.mistakes:
                mistake = _DEFAULT_MISTAKES["negative index"]
            raise _fail(task, f"{task.name} at {_sizes_text(sizes)} ({spec.label})", str(exc), failure,
                        again, mistake) from None
        where = f"{task.name} at {_sizes_text(run.sizes)} ({spec.label})"
        problems = list(run.profile.problems)
        fresh = [o for o in task.outputs if o not in task.accumulates]
        late = uninitialized_output_read(run.profile.trace, fresh) if fresh else None
        if late is not None:
            problems.append(late)
        if problems:
            p = problems[0]
            failure, key = _problem_class(p)
            note = " (the output may still look right: the race is in the trace, not in luck)" \
                if p.kind == "race" and run.correct else ""
            mistake = task.mistakes.get(key) or task.mistakes.get(failure) or _DEFAULT_MISTAKES[key]
            raise _fail(task, where, p.message, failure, again, mistake, note)
        wrong = _first_wrong(run)
        if wrong is not None:
            name, idx, count, got, want, nonfinite = wrong
            index = ", ".join(str(i) for i in idx)
            writer = _writer_of(run, name, idx)
            written = not writer.startswith("no thread")       # a NaN never written is garbage, not numerics
            failure = "numerics" if (nonfinite and written) or (spec.mistake is not None and c >= task.costed_cases) \
                else "wrong"
            mistake = _mistake(task, failure, spec)
            closer = task.diagnose(run, name, idx, written) if task.diagnose is not None else None
            if closer is not None:
                failure, mistake = closer
            got_text, want_text = _numbers(got, want)
            raise _fail(task, where, f"{name}[{index}] is {got_text}, expected {want_text} ({count} wrong "
                        f"element(s); {writer})", failure, again, mistake)
        for target in task.targets if c < task.costed_cases else ():   # adversarial: safety and values
            ok, got, lim = target.evaluate(run.profile, run.sizes)
            if not ok:
                why = f" ({target.why})" if target.why else ""
                raise _fail(task, where, f"correct, but {'under' if target.at_least else 'over'} a cost "
                            f"target: {target.what}{why}; measured {target.format(got)}, "
                            f"{'required' if target.at_least else 'allowed'} {target.format(lim)}",
                            "cost", again, _mistake(task, "cost", spec, target))
        runs.append(run)
    return runs


# --------------------------------------------------------------------------------------------
# Predicted time at the launch's size and at a large one
# --------------------------------------------------------------------------------------------

def predict_task(run: TaskRun, accelerator="H100 SXM", sizes=None) -> Prediction:
    """Roofline time of ``run``'s kernel on ``accelerator``, at the traced size or at ``sizes``.

    At the traced size (the default) the bytes are the trace's sectors. At other ``sizes`` (a dict,
    or ``"large"`` for the task's realistic size) they are the task's traffic model scaled by how far the traced kernel was
    from its model at the traced size (measured / model): a kernel that wastes half its sectors
    on a small matrix is assumed to waste them on a large one too.
    """
    if not isinstance(run, TaskRun):
        raise TypeError(f"run must be a TaskRun from run_task or check_kernel, got {type(run).__name__}")
    task, prof = run.task, run.profile
    tpb = prof.launch.threads_per_block
    if sizes is None:
        return predict_time(prof.flops, prof.bytes_moved, accelerator, "fp32", tpb, prof.shared_bytes_per_block)
    if not (sizes == "large" if isinstance(sizes, str) else isinstance(sizes, dict)):
        raise TypeError(f"sizes must be None, 'large' or a dict of sizes such as {dict(run.sizes)!r}, "
                        f"got {sizes!r}")
    target = run.sizes | (task.large if sizes == "large" else sizes)
    ratio = prof.bytes_moved / task.model_bytes(run.sizes)
    return predict_time(task.flops(target), task.model_bytes(target) * ratio, accelerator, "fp32",
                        tpb, prof.shared_bytes_per_block)
