"""The kernels of lesson 09 and its puzzles: data, reference, launch, FLOP, traffic and targets.

A :class:`KernelTask` is everything needed to run, check and cost one kernel *except* the
kernel: how to make random inputs of awkward sizes, the NumPy reference, the launch
configuration, the FLOP the computation needs, the DRAM bytes a good kernel moves, and the
cost targets a puzzle enforces. ``check_kernel(task, kernel)`` runs a learner's kernel on two
random, asymmetric sizes that no block size divides and raises :class:`KernelCheckError` with
the first problem: a fault (out of bounds, a crash), a race or other unsafe pattern, a wrong
element (by index, with the thread that wrote it), or a missed cost target (what was measured
against what was allowed).

Sizes are drawn per check from ``np.random.default_rng(seed)``; the message says how to rerun
the exact case with :func:`run_task`.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .._validate import check_choice, check_int
from ..tiling import tiled_matmul_traffic
from .profile import KernelProfile, predict_time, profile_trace, Prediction
from .trace import KernelFault, python_function, trace_launch

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


class KernelCheckError(AssertionError):
    """A kernel that does not pass its check; the message names the problem (no traceback)."""

    def _render_traceback_(self):
        lines = str(self).splitlines()
        return [f"KernelCheckError: {lines[0]}"] + lines[1:]


@dataclass(frozen=True)
class CostTarget:
    """A limit on one profile metric: ``metric(profile) <= limit(sizes)`` (or ``>=`` when ``at_least``).

    ``metric`` is a :class:`KernelProfile` attribute name; ``what`` says it in words.
    """

    metric: str
    limit: Callable[[dict], float]
    what: str
    at_least: bool = False

    def format(self, value: float) -> str:
        """A measured or allowed value as the messages print it: 76% for an efficiency, 3,828 for a count."""
        if self.metric.endswith("efficiency"):
            return f"{value:.0%}"
        return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.3g}"

    def evaluate(self, profile: KernelProfile, sizes: dict):
        got = float(getattr(profile, self.metric))
        lim = float(self.limit(sizes))
        ok = got >= lim - 1e-12 if self.at_least else got <= lim + 1e-9
        return ok, got, lim


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

    def model_bytes(self, sizes: dict) -> float:
        return float((self.bytes_model or self.min_bytes)(sizes))


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

# Cost targets used by several tasks.
def _loads_at_most(expr, what):
    return CostTarget("global_loads", expr, f"global loads at most {what}")


def _stores_at_most(expr, what):
    return CostTarget("global_stores", expr, f"global stores at most {what}")


def _coalesced(fraction=0.75):
    return CostTarget("coalescing_efficiency", lambda s: fraction,
                      f"coalescing efficiency at least {fraction:.0%} (bytes used / bytes moved)",
                      at_least=True)


_NO_CONFLICTS = CostTarget("bank_conflict_degree", lambda s: 1, "no shared-memory bank conflicts (degree 1)")


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
    large={"n": 1 << 26}))

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
    large={"n": 1 << 26}))

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
    large={"rows": 8192, "cols": 8192}))

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
    large={"rows": 8192, "cols": 8192}))

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
    large={"n": 1 << 26}, rtol=1e-4, atol=1e-4))

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
             CostTarget("atomics", lambda s: -(-s["n"] // BLOCK), "atomics at most one per block")),
    large={"n": 1 << 26}, rtol=1e-4, atol=1e-3))

_add(KernelTask(
    "copy", "kernel(a, out)", "out[r, c] = a[r, c], one thread per element, consecutive threads on consecutive columns",
    ("a", "out"), ("out",),
    make_sizes=lambda rng: {"rows": _odd(rng, 20, 50), "cols": _odd(rng, 40, 90)},
    make_data=lambda rng, s: {"a": _f32(rng, s["rows"], s["cols"]),
                              "out": np.zeros((s["rows"], s["cols"]), np.float32)},
    reference=lambda d: {"out": d["a"].copy()},
    launch=lambda s: _grid2(s["rows"], s["cols"]),
    flops=lambda s: 0.0, min_bytes=_t("rows", "cols", factor=2 * _F),
    targets=(_coalesced(0.6),),
    large={"rows": 8192, "cols": 8192}))

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
    large={"rows": 8192, "cols": 8192}))

_add(KernelTask(
    "transpose_padded", "kernel(a, out)",
    "the shared-tile transpose with no bank conflicts (pad the tile) and coalesced global access",
    ("a", "out"), ("out",),
    make_sizes=TASKS["transpose"].make_sizes, make_data=TASKS["transpose"].make_data,
    reference=TASKS["transpose"].reference, launch=TASKS["transpose"].launch,
    flops=lambda s: 0.0, min_bytes=_t("rows", "cols", factor=2 * _F),
    targets=(_coalesced(0.6), _NO_CONFLICTS),
    large={"rows": 8192, "cols": 8192}))

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
    targets=(_loads_at_most(lambda s: 2 * s["m"] * s["k"] * s["n"], "2 m k n"),),
    large={"m": 4096, "k": 4096, "n": 4096}, rtol=1e-4, atol=1e-4, edge_sizes=_matmul_edge))

_add(KernelTask(
    "matmul_tiled", "kernel(a, b, out)",
    "out = a @ b with TILE x TILE tiles of a and b staged in shared memory",
    ("a", "b", "out"), ("out",),
    make_sizes=_matmul_sizes, make_data=TASKS["matmul"].make_data, reference=TASKS["matmul"].reference,
    launch=TASKS["matmul"].launch, flops=TASKS["matmul"].flops, min_bytes=TASKS["matmul"].min_bytes,
    bytes_model=lambda s: _F * (_tiled_loads(s) + s["m"] * s["n"]),
    targets=(_loads_at_most(_tiled_loads, "lesson 06's tiled count, m k ceil(n/TILE) + k n ceil(m/TILE)"),),
    large={"m": 4096, "k": 4096, "n": 4096}, rtol=1e-4, atol=1e-4, edge_sizes=_matmul_edge))


def _softmax_sizes(rng):
    return {"rows": _odd(rng, 3, 8), "cols": _odd(rng, 150, 400)}


def _softmax_edge(rng):
    """Fewer columns than threads: some threads own no element (their running max stays -inf)."""
    return {"rows": _odd(rng, 2, 6), "cols": _odd(rng, 20, 120)}


_add(KernelTask(
    "softmax", "kernel(x, out)",
    "out[r, :] = softmax(x[r, :]); one block of BLOCK threads per row, shared-memory reductions",
    ("x", "out"), ("out",),
    make_sizes=_softmax_sizes, edge_sizes=_softmax_edge,
    make_data=lambda rng, s: {"x": (4 * _f32(rng, s["rows"], s["cols"])),
                              "out": np.zeros((s["rows"], s["cols"]), np.float32)},
    reference=lambda d: {"out": _softmax(d["x"])},
    launch=lambda s: ((s["rows"],), (BLOCK,)),
    flops=_t("rows", "cols", factor=5), min_bytes=_t("rows", "cols", factor=2 * _F),
    bytes_model=_t("rows", "cols", factor=4 * _F),
    targets=(_loads_at_most(_t("rows", "cols", factor=3), "three per element"),),
    large={"rows": 4096, "cols": 8192}, rtol=1e-4, atol=1e-6))

_add(KernelTask(
    "online_softmax", "kernel(x, out)",
    "the row softmax reading x only twice: one pass keeps a running max and a rescaled running sum",
    ("x", "out"), ("out",),
    make_sizes=_softmax_sizes, edge_sizes=_softmax_edge, make_data=TASKS["softmax"].make_data, reference=TASKS["softmax"].reference,
    launch=TASKS["softmax"].launch,
    flops=_t("rows", "cols", factor=5), min_bytes=_t("rows", "cols", factor=2 * _F),
    bytes_model=_t("rows", "cols", factor=3 * _F),
    targets=(_loads_at_most(_t("rows", "cols", factor=2), "two per element"),),
    large={"rows": 4096, "cols": 8192}, rtol=1e-4, atol=1e-6))


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

def run_task(task, kernel, seed=0, sizes=None, edge=False) -> TaskRun:
    """Run ``kernel`` on ``task``'s data (random sizes from ``seed``, or ``sizes``), traced.
    ``edge=True`` draws the task's edge-case sizes (fewer elements than one block) when it has them.

    The outputs are compared by :func:`check_kernel`; here they are only returned. Kernel faults
    (out of bounds, crashes, step limits) propagate as :class:`~course_lib.kernels.trace.KernelFault`.
    """
    task = get_task(task)
    seed = check_int("seed", seed, min_value=0)
    rng = np.random.default_rng(seed)
    drawn = _draw_sizes(task, rng, edge)
    if sizes is not None:
        if not isinstance(sizes, dict) or set(sizes) - set(drawn):
            raise ValueError(f"sizes must be a dict with keys from {sorted(drawn)}, got {sizes!r}")
        drawn.update({k: check_int(f"sizes[{k!r}]", v, min_value=1, max_value=1 << 14) for k, v in sizes.items()})
    data = task.make_data(rng, drawn)
    expected = task.reference({k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in data.items()})
    grid, block = task.launch(drawn)
    trace = trace_launch(kernel, grid, block, *[data[p] for p in task.params], names=task.params)
    profile = profile_trace(trace, flops=task.flops(drawn))
    return TaskRun(task, drawn, data, expected, profile)


def _draw_sizes(task, rng, edge) -> dict:
    if not isinstance(edge, bool):
        raise TypeError(f"edge must be True or False, got {edge!r}")
    return (task.edge_sizes if edge and task.edge_sizes is not None else task.make_sizes)(rng)


def _sizes_text(sizes: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def _first_wrong(run: TaskRun):
    task = run.task
    for name in task.outputs:
        got, want = np.asarray(run.data[name]), np.asarray(run.expected[name])
        bad = ~np.isclose(got, want, rtol=task.rtol, atol=task.atol)
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            return name, idx, int(bad.sum()), got[idx], want[idx]
    return None


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


def check_kernel(task, kernel, seed=None, cases=2) -> list[TaskRun]:
    """Check ``kernel`` on ``cases`` random sizes: safe, correct, within every cost target.

    Returns the runs when all pass; raises :class:`KernelCheckError` with the first problem
    otherwise. The seed defaults to a fixed value per task, so a failure can be reproduced with
    ``run_task(task, kernel, seed=...)``, which the message quotes.
    """
    task = get_task(task)
    cases = check_int("cases", cases, min_value=1, max_value=5)
    base = (sum(map(ord, task.name)) * 7919) if seed is None else check_int("seed", seed, min_value=0)
    fn = python_function(kernel)
    params = list(inspect.signature(fn).parameters)
    if len(params) != len(task.params):
        raise KernelCheckError(f"{task.name}: your kernel {fn.__name__}({', '.join(params)}) takes "
                               f"{len(params)} parameter(s), but the launch passes {len(task.params)}: "
                               f"{task.signature}")
    runs = []
    for c in range(cases):
        s = base + c
        edge = c == 1 and task.edge_sizes is not None     # the second case: less than one block
        again = (f"run_task({task.name!r}, kernel, seed={s}{', edge=True' if edge else ''}) "
                 f"reruns this case")
        try:
            run = run_task(task, kernel, seed=s, edge=edge)
        except KernelFault as exc:
            sizes = _draw_sizes(task, np.random.default_rng(s), edge)
            raise KernelCheckError(f"{task.name} at {_sizes_text(sizes)}: {exc}\n  {again}") from None
        where = f"{task.name} at {_sizes_text(run.sizes)}"
        if run.profile.problems:
            p = run.profile.problems[0]
            note = " (the output may still look right: the race is in the trace, not in luck)" \
                if p.kind == "race" and run.correct else ""
            raise KernelCheckError(f"{where}: {p.message}{note}\n  {again}")
        wrong = _first_wrong(run)
        if wrong is not None:
            name, idx, count, got, want = wrong
            index = idx[0] if len(idx) == 1 else idx
            raise KernelCheckError(
                f"{where}: {name}[{index}] is {got:.6g}, expected {want:.6g} ({count} wrong element(s); "
                f"{_writer_of(run, name, idx)})\n  {again}")
        for target in task.targets:
            ok, got, lim = target.evaluate(run.profile, run.sizes)
            if not ok:
                raise KernelCheckError(
                    f"{where}: correct, but {'under' if target.at_least else 'over'} a cost target: "
                    f"{target.what}; measured {target.format(got)}, "
                    f"{'required' if target.at_least else 'allowed'} {target.format(lim)}\n  {again}")
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
