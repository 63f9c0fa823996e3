"""The puzzles of lesson 10: a Triton kernel to write, its data, its reference and its cost target.

Each :class:`TileTask` fixes a kernel signature and a launch, makes random data of sizes that no
block divides (per learner, from a seed), computes the reference with PyTorch, and states a cost
target in bytes that the profile must meet. :func:`check_tile_kernel` runs a kernel on three
cases (random sizes; random sizes with adversarial values; a size smaller than one block) and
raises :class:`TileCheckError` naming the first problem and its likely mistake:

* an access outside a tensor (the profiler's :class:`TileAccessError`): a missing mask;
* NaN or inf where the reference is finite: the task's numerics mistake (no max subtracted...);
* a wrong output that equals what a known mistake produces (each task lists its mistakes);
* any other wrong output, with the first wrong element;
* a cost target missed: bytes over the limit, with the mistake that usually causes it.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import triton
from .kernels import next_pow2
from .order import grouped_matmul_traffic, tile_order
from .profile import TileAccessError, TileProfile, profile_launch

__all__ = ["TileTask", "TileCheckError", "TileRun", "Mistake", "CostTarget", "TASKS", "check_tile_kernel", "run_tile_task"]


def _torch():
    import torch
    return torch


class TileCheckError(AssertionError):
    """A tile kernel that does not pass its task's check; the message names the problem."""


@dataclass(frozen=True)
class Mistake:
    """A likely mistake: the outputs it produces (``outputs(data, sizes)``) and what to say."""

    key: str
    message: str
    outputs: Callable


@dataclass(frozen=True)
class CostTarget:
    """``measure(profile, sizes) <= limit(sizes)``, with the mistake that usually breaks it."""

    what: str
    measure: Callable
    limit: Callable
    mistake: str


@dataclass(frozen=True)
class TileTask:
    name: str
    signature: str
    launch_text: str
    sizes: Callable                 # rng -> dict of sizes (random, no block divides them)
    small: dict                     # sizes smaller than one block
    make_data: Callable             # (rng, sizes, adversarial) -> dict: argument name -> tensor or number
    args: Callable                  # (data, sizes) -> (positional args, constexpr kwargs)
    grid: Callable                  # sizes -> grid
    reference: Callable             # (data, sizes) -> dict: output name -> expected tensor
    targets: tuple = ()
    mistakes: tuple = ()
    nonfinite_mistake: str = ""
    atol: float = 1e-4
    rtol: float = 1e-4
    adversarial_text: str = "large magnitudes"
    adversarial_mistake: str = ""   # said when only the adversarial case is wrong


@dataclass(frozen=True)
class TileRun:
    task: TileTask
    sizes: dict
    adversarial: bool
    data: dict = field(repr=False)
    profile: TileProfile = field(repr=False)


def _seed(name: str, seed) -> int:
    return zlib.crc32(f"{name}:{seed}".encode())


def run_tile_task(task: TileTask, kernel, sizes: dict, adversarial=False, seed=0) -> TileRun:
    """Make the task's data at ``sizes`` and run ``kernel`` on it under the profiler."""
    rng = np.random.default_rng(_seed(task.name, (seed, tuple(sorted(sizes.items())), adversarial)))
    data = task.make_data(rng, sizes, adversarial)
    args, constexprs = task.args(data, sizes)
    prof = profile_launch(kernel, task.grid(sizes), *args, **constexprs)
    return TileRun(task, dict(sizes), adversarial, data, prof)


def _sizes_text(sizes) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def check_tile_kernel(task: TileTask, kernel, seed=0) -> list[TileRun]:
    """Check ``kernel`` on three cases; raise :class:`TileCheckError` on the first problem."""
    __tracebackhide__ = True
    import inspect
    fn = getattr(kernel, "fn", None)
    if fn is None or not callable(fn):
        raise TypeError(f"{task.name}: expected a @triton.jit kernel, got {type(kernel).__name__}")
    theirs = list(inspect.signature(fn).parameters)
    wanted = [p.split(":")[0].strip() for p in task.signature.split("(", 1)[1].rstrip(")").split(",")]
    if theirs != wanted:
        raise TileCheckError(f"{task.name}: the kernel's parameters are ({', '.join(theirs)}); the puzzle's "
                             f"are ({', '.join(wanted)})")
    rng = np.random.default_rng(_seed(task.name, seed))
    first = task.sizes(rng)
    second = task.sizes(rng)
    cases = [(first, False), (second, True), (dict(task.small), False)]
    runs = []
    for sizes, adversarial in cases:
        where = (f"{task.name} at {_sizes_text(sizes)}"
                 + (f", with {task.adversarial_text}" if adversarial else ""))
        try:
            run = run_tile_task(task, kernel, sizes, adversarial, seed)
        except TileAccessError as exc:
            raise TileCheckError(f"{where}: {exc}") from None
        expected = task.reference(run.data, sizes)
        for name, want in expected.items():
            got = run.data[name]
            _compare(task, where, name, got, want, run)
        for target in task.targets:
            value, limit = target.measure(run.profile, sizes), target.limit(sizes)
            if value > limit:
                raise TileCheckError(f"{where}: over the cost target: {target.what} is {value:,.0f}, the "
                                     f"target is at most {limit:,.0f}. Likely mistake: {target.mistake}")
        runs.append(run)
    return runs


def _compare(task, where, name, got, want, run):
    torch = _torch()
    got_f, want_f = got.double(), want.double()
    if torch.allclose(got_f, want_f, atol=task.atol, rtol=task.rtol):
        return
    bad_nonfinite = ~torch.isfinite(got_f) & torch.isfinite(want_f)
    if bad_nonfinite.any():
        idx = tuple(int(i) for i in torch.nonzero(bad_nonfinite)[0])
        raise TileCheckError(f"{where}: {name}{list(idx)} is {float(got_f[idx])} where the answer is "
                             f"{float(want_f[idx]):.6g}. Likely mistake: {task.nonfinite_mistake or 'an overflow'}")
    for mistake in task.mistakes:
        try:
            theirs = mistake.outputs(run.data, run.sizes)[name].double()
        except Exception:                      # a mistake model that does not apply to these sizes
            continue
        if theirs.shape == got_f.shape and torch.allclose(got_f, theirs, atol=task.atol * 10, rtol=task.rtol * 10,
                                                          equal_nan=True):
            raise TileCheckError(f"{where}: {name} is wrong, and equals what this mistake gives: {mistake.message} "
                                 f"[mistake: {mistake.key}]")
    diff = (got_f - want_f).abs() - task.atol - task.rtol * want_f.abs()
    diff = torch.nan_to_num(diff, nan=math.inf)
    idx = tuple(int(i) for i in torch.nonzero(diff > 0)[0])
    likely = (f" Likely mistake (the first case, with ordinary values, passed): {task.adversarial_mistake}"
              if run.adversarial and task.adversarial_mistake else "")
    raise TileCheckError(f"{where}: {name}{list(idx)} is {float(got_f[idx]):.6g}, expected {float(want_f[idx]):.6g} "
                         f"({int((diff > 0).sum())} of {got_f.numel()} elements wrong).{likely}")


# --------------------------------------------------------------------------------------------
# Helpers for the tasks
# --------------------------------------------------------------------------------------------

def _randn(rng, *shape, scale=1.0, shift=0.0):
    return _torch().from_numpy((rng.standard_normal(shape) * scale + shift).astype(np.float32))


def _not_multiple(rng, lo, hi, *blocks):
    while True:
        v = int(rng.integers(lo, hi + 1))
        if all(v % b for b in blocks):
            return v


def _bytes(name, kind="read"):
    def measure(p, s):
        t = p.tensor(name)
        return t.bytes_read if kind == "read" else t.bytes_written
    return measure


def _total_bytes(p, s):
    return p.bytes_moved


BLOCK = 128
BLOCK_2D = 32
BLOCK_COLS = 64


# --- 10.1 a masked map -------------------------------------------------------------------------

def _leaky_data(rng, s, adv):
    x = _randn(rng, s["n"], scale=1e4 if adv else 1.0)
    return {"x_ptr": x, "out_ptr": _torch().full_like(x, math.nan), "slope": 0.1}


def _leaky_ref(d, s):
    x = d["x_ptr"]
    return {"out_ptr": _torch().where(x > 0, x, d["slope"] * x)}


LEAKY_RELU = TileTask(
    "leaky_relu", "leaky_relu_kernel(x_ptr, out_ptr, n, slope, BLOCK: tl.constexpr)",
    f"ceil(n / BLOCK) programs, BLOCK = {BLOCK}",
    sizes=lambda rng: {"n": _not_multiple(rng, 300, 1000, BLOCK)}, small={"n": 37},
    make_data=_leaky_data,
    args=lambda d, s: ((d["x_ptr"], d["out_ptr"], s["n"], d["slope"]), {"BLOCK": BLOCK}),
    grid=lambda s: (triton.cdiv(s["n"], BLOCK),), reference=_leaky_ref,
    targets=(CostTarget("bytes moved", _total_bytes, lambda s: 8 * s["n"],
                        "x read more than once, or out written twice"),),
    mistakes=(Mistake("relu", "negative inputs became 0; leaky ReLU keeps slope * x for them",
                      lambda d, s: {"out_ptr": _torch().clamp(d["x_ptr"], min=0)}),
              Mistake("max-slope", "x was compared with the slope; the slope multiplies negative inputs",
                      lambda d, s: {"out_ptr": _torch().clamp(d["x_ptr"], min=d["slope"])}),))


# --- 10.2 a 2D broadcast -----------------------------------------------------------------------

def _outer_data(rng, s, adv):
    return {"x_ptr": _randn(rng, s["M"]), "y_ptr": _randn(rng, s["N"]),
            "out_ptr": _torch().full((s["M"], s["N"]), math.nan)}


def _outer_ref(d, s):
    return {"out_ptr": d["x_ptr"][:, None] + d["y_ptr"][None, :]}


def _outer_transposed(d, s):
    t = (d["x_ptr"][None, :] + d["y_ptr"][:, None]).reshape(-1)       # written at j * M + i
    return {"out_ptr": t.reshape(s["M"], s["N"])}


OUTER_ADD = TileTask(
    "outer_add", "outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr)",
    f"a (ceil(M / {BLOCK_2D}), ceil(N / {BLOCK_2D})) grid, BLOCK_M = BLOCK_N = {BLOCK_2D}",
    sizes=lambda rng: {"M": _not_multiple(rng, 40, 100, BLOCK_2D), "N": _not_multiple(rng, 40, 100, BLOCK_2D)},
    small={"M": 5, "N": 11}, make_data=_outer_data,
    args=lambda d, s: ((d["x_ptr"], d["y_ptr"], d["out_ptr"], s["M"], s["N"]),
                       {"BLOCK_M": BLOCK_2D, "BLOCK_N": BLOCK_2D}),
    grid=lambda s: (triton.cdiv(s["M"], BLOCK_2D), triton.cdiv(s["N"], BLOCK_2D)), reference=_outer_ref,
    targets=(CostTarget("bytes read", lambda p, s: p.bytes_read,
                        lambda s: 4 * (s["M"] * math.ceil(s["N"] / BLOCK_2D) + s["N"] * math.ceil(s["M"] / BLOCK_2D)),
                        "x or y loaded as a BLOCK_M x BLOCK_N tile; load each as a vector once per program "
                        "and broadcast it (x[:, None] + y[None, :])"),),
    mistakes=(Mistake("transposed", "out[i, j] was written at j * M + i; row-major puts it at i * N + j",
                      _outer_transposed),))


# --- 10.3 a row sum longer than one block -------------------------------------------------------

def _rows_data(rng, s, adv):
    return {"x_ptr": _randn(rng, s["rows"], s["cols"], scale=1e3 if adv else 1.0),
            "out_ptr": _torch().full((s["rows"],), math.nan)}


ROW_SUM = TileTask(
    "row_sum", "row_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK_COLS: tl.constexpr)",
    f"one program per row, BLOCK_COLS = {BLOCK_COLS} (rows are longer than one block)",
    sizes=lambda rng: {"rows": int(rng.integers(5, 12)), "cols": _not_multiple(rng, 150, 400, BLOCK_COLS)},
    small={"rows": 3, "cols": 20}, make_data=_rows_data,
    args=lambda d, s: ((d["x_ptr"], d["out_ptr"], s["cols"]), {"BLOCK_COLS": BLOCK_COLS}),
    grid=lambda s: (s["rows"],), reference=lambda d, s: {"out_ptr": d["x_ptr"].sum(1)},
    targets=(CostTarget("bytes read from x", _bytes("x_ptr"), lambda s: 4 * s["rows"] * s["cols"],
                        "x read more than once: one pass over the row in steps of BLOCK_COLS is enough"),),
    mistakes=(Mistake("one-block", f"only the first BLOCK_COLS = {BLOCK_COLS} columns were summed: loop over the "
                      "row in steps of BLOCK_COLS", lambda d, s: {"out_ptr": d["x_ptr"][:, :BLOCK_COLS].sum(1)}),
              Mistake("last-block", "only the last block of the row was kept: accumulate the blocks' sums "
                      "(acc += tl.sum(...)) instead of overwriting", lambda d, s: {"out_ptr": d["x_ptr"][
                          :, (s["cols"] - 1) // BLOCK_COLS * BLOCK_COLS:].sum(1)}),),
    atol=1e-2, rtol=1e-4)


# --- 10.4 LayerNorm ----------------------------------------------------------------------------

def _ln_data(rng, s, adv):
    torch = _torch()
    x = _randn(rng, s["rows"], s["cols"], scale=1.0, shift=1000.0 if adv else 0.0)
    return {"x_ptr": x, "w_ptr": _randn(rng, s["cols"], scale=0.5, shift=1.0), "b_ptr": _randn(rng, s["cols"]),
            "y_ptr": torch.full_like(x, math.nan), "eps": 1e-5}


def _ln(x, w, b, eps, mean=None, var=None):
    mean = x.double().mean(1, keepdim=True) if mean is None else mean
    var = ((x.double() - mean) ** 2).mean(1, keepdim=True) if var is None else var
    return ((x.double() - mean) / (var + eps).sqrt() * w.double() + b.double()).float()


def _ln_padded_var(d, s):
    x, n = d["x_ptr"].double(), s["cols"]
    block = next_pow2(n)
    mean = x.mean(1, keepdim=True)
    var = (((x - mean) ** 2).sum(1, keepdim=True) + (block - n) * mean ** 2) / n
    return {"y_ptr": _ln(d["x_ptr"], d["w_ptr"], d["b_ptr"], d["eps"], mean, var)}


def _ln_block_divisor(d, s):
    x, n = d["x_ptr"].double(), s["cols"]
    block = next_pow2(n)
    mean = x.sum(1, keepdim=True) / block
    var = (((x - mean) ** 2).sum(1, keepdim=True) + (block - n) * mean ** 2) / block
    return {"y_ptr": _ln(d["x_ptr"], d["w_ptr"], d["b_ptr"], d["eps"], mean, var)}


LAYERNORM = TileTask(
    "layernorm", "layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK_COLS: tl.constexpr)",
    "one program per row, BLOCK_COLS = the next power of two >= n_cols (a row is one tile)",
    sizes=lambda rng: {"rows": int(rng.integers(4, 10)), "cols": _not_multiple(rng, 40, 120, 16)},
    small={"rows": 2, "cols": 3}, make_data=_ln_data,
    args=lambda d, s: ((d["x_ptr"], d["w_ptr"], d["b_ptr"], d["y_ptr"], s["cols"], d["eps"]),
                       {"BLOCK_COLS": next_pow2(s["cols"])}),
    grid=lambda s: (s["rows"],), reference=lambda d, s: {"y_ptr": _ln(d["x_ptr"], d["w_ptr"], d["b_ptr"], d["eps"])},
    targets=(CostTarget("bytes read from x", _bytes("x_ptr"), lambda s: 4 * s["rows"] * s["cols"],
                        "x loaded twice: keep the row in registers between the mean and the variance"),),
    mistakes=(Mistake("padded-variance", "the padded lanes entered the variance: after subtracting the mean, "
                      "set them back to 0 (tl.where(mask, x - mean, 0.0))", _ln_padded_var),
              Mistake("block-divisor", "divided by BLOCK_COLS, not by n_cols: the padded lanes are not data",
                      _ln_block_divisor)),
    nonfinite_mistake="the variance was computed as E[x^2] - E[x]^2, which cancels to 0 or below when the mean "
                      "is large: subtract the mean first, then average the squares",
    adversarial_mistake="the variance was computed as E[x^2] - E[x]^2, which loses every digit when the mean is "
                        "large against the spread: subtract the mean first, then average the squares",
    atol=2e-3, rtol=2e-3, adversarial_text="rows whose mean is 1000 and spread 1")


# --- 10.5 softmax over rows longer than one block -----------------------------------------------

def _sm_data(rng, s, adv):
    x = _randn(rng, s["rows"], s["cols"], scale=50.0 if adv else 1.0, shift=100.0 if adv else 0.0)
    return {"x_ptr": x, "y_ptr": _torch().full_like(x, math.nan)}


def _sm_no_rescale(d, s):
    torch = _torch()
    x = d["x_ptr"].double()
    m = torch.full((x.shape[0],), -math.inf, dtype=torch.float64)
    l_sum = torch.zeros(x.shape[0], dtype=torch.float64)
    for j in range(0, x.shape[1], BLOCK_COLS):
        blk = x[:, j:j + BLOCK_COLS]
        m = torch.maximum(m, blk.max(1).values)
        l_sum = l_sum + torch.exp(blk - m[:, None]).sum(1)
    return {"y_ptr": (torch.exp(x - m[:, None]) / l_sum[:, None]).float()}


SOFTMAX_LONG = TileTask(
    "softmax_long", "softmax_long_kernel(x_ptr, y_ptr, n_cols, BLOCK_COLS: tl.constexpr)",
    f"one program per row, BLOCK_COLS = {BLOCK_COLS} (rows are longer than one block)",
    sizes=lambda rng: {"rows": int(rng.integers(3, 8)), "cols": _not_multiple(rng, 150, 330, BLOCK_COLS)},
    small={"rows": 2, "cols": 10}, make_data=_sm_data,
    args=lambda d, s: ((d["x_ptr"], d["y_ptr"], s["cols"]), {"BLOCK_COLS": BLOCK_COLS}),
    grid=lambda s: (s["rows"],), reference=lambda d, s: {"y_ptr": _torch().softmax(d["x_ptr"].double(), 1).float()},
    targets=(CostTarget("bytes read from x", _bytes("x_ptr"), lambda s: 2 * 4 * s["rows"] * s["cols"],
                        "x read three times (max, sum, write): fold the max and the sum into one pass, "
                        "rescaling the sum when the max grows (online softmax, lesson 06)"),),
    mistakes=(Mistake("no-rescale", "when the running max grows, the sum so far must be multiplied by "
                      "exp(m_old - m_new)", _sm_no_rescale),),
    nonfinite_mistake="exp of a large score overflows: subtract the row's (running) max before tl.exp",
    atol=1e-6, rtol=1e-4, adversarial_text="scores around 100 with spread 50")


# --- 10.6 a matmul with a fused epilogue ---------------------------------------------------------

def _mm_sizes(rng):
    return {"M": _not_multiple(rng, 40, 90, BLOCK_2D), "N": _not_multiple(rng, 40, 90, BLOCK_2D),
            "K": _not_multiple(rng, 20, 60, BLOCK_2D)}


def _mbr_data(rng, s, adv):
    scale = 30.0 if adv else 1.0
    return {"a_ptr": _randn(rng, s["M"], s["K"], scale=scale), "b_ptr": _randn(rng, s["K"], s["N"]),
            "bias_ptr": _randn(rng, s["N"]), "c_ptr": _torch().full((s["M"], s["N"]), math.nan)}


def _mbr(d, bias_times=1, relu_first=False):
    acc = d["a_ptr"].double() @ d["b_ptr"].double()
    if relu_first:
        return {"c_ptr": (acc.clamp(min=0) + d["bias_ptr"].double()).float()}
    return {"c_ptr": (acc + bias_times * d["bias_ptr"].double()).clamp(min=0).float()}


def _mm_bytes(s, bias=True):
    f = tiled_bytes(s["M"], s["K"], s["N"])
    return f + (4 * s["N"] * math.ceil(s["M"] / BLOCK_2D) if bias else 0)


def tiled_bytes(m, k, n, block=BLOCK_2D, b=4):
    """Lesson 06's bytes for BLOCK x BLOCK tiles of C (float32)."""
    from ..tiling import tiled_matmul_traffic
    return tiled_matmul_traffic(m, k, n, block, block, bytes_per_element=b).bytes_moved


MATMUL_BIAS_RELU = TileTask(
    "matmul_bias_relu",
    "matmul_bias_relu_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, "
    "BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr)",
    f"a (ceil(M / {BLOCK_2D}), ceil(N / {BLOCK_2D})) grid, BLOCK_M = BLOCK_N = BLOCK_K = {BLOCK_2D}",
    sizes=_mm_sizes, small={"M": 7, "N": 5, "K": 9}, make_data=_mbr_data,
    args=lambda d, s: ((d["a_ptr"], d["b_ptr"], d["bias_ptr"], d["c_ptr"], s["M"], s["N"], s["K"]),
                       {"BLOCK_M": BLOCK_2D, "BLOCK_N": BLOCK_2D, "BLOCK_K": BLOCK_2D}),
    grid=lambda s: (triton.cdiv(s["M"], BLOCK_2D), triton.cdiv(s["N"], BLOCK_2D)),
    reference=lambda d, s: _mbr(d),
    targets=(CostTarget("bytes moved", _total_bytes, _mm_bytes,
                        "C stored and loaded again for the epilogue, or the bias loaded inside the K loop: apply "
                        "bias and ReLU to the accumulator, then store C once"),),
    mistakes=(Mistake("bias-in-loop", "the bias was added once per K step: add it once, after the loop",
                      lambda d, s: _mbr(d, bias_times=math.ceil(s["K"] / BLOCK_2D))),
              Mistake("relu-first", "ReLU was applied before the bias: relu(A B + bias), bias first",
                      lambda d, s: _mbr(d, relu_first=True)),),
    atol=2e-3, rtol=1e-4, adversarial_text="entries of A around 30")


# --- 10.7 grouped program order, by columns -----------------------------------------------------
# Lesson 10's worked matmul groups tile *rows* (GROUP_M); this puzzle asks for groups of GROUP_N tile
# columns walked row by row: the same idea on the transposed grid, so the lesson's kernel is a
# neighbour, not the answer. Its bytes in waves equal the row model on the transposed problem.

GROUP_N = 4
WAVE = 8


def _gm_data(rng, s, adv):
    return {"a_ptr": _randn(rng, s["M"], s["K"]), "b_ptr": _randn(rng, s["K"], s["N"]),
            "c_ptr": _torch().full((s["M"], s["N"]), math.nan)}


def _gm_programs(s):
    return triton.cdiv(s["M"], BLOCK_2D) * triton.cdiv(s["N"], BLOCK_2D)


def _programs_out_of_order(p, s):
    """Programs whose stores are not exactly the C tile that column-grouped order gives them."""
    n_n = triton.cdiv(s["N"], BLOCK_2D)
    want = tile_order(s["N"], s["M"], BLOCK_2D, BLOCK_2D, GROUP_N)[:, ::-1]     # (pid_m, pid_n)
    pos, off = p._writes["c_ptr"]
    tile = (off // s["N"]) // BLOCK_2D * n_n + (off % s["N"]) // BLOCK_2D
    wrong = 0
    for q in range(p.programs):
        stored = np.unique(tile[pos == q])
        if stored.size != 1 or stored[0] != want[q, 0] * n_n + want[q, 1]:
            wrong += 1
    return wrong


GROUPED_MATMUL = TileTask(
    "grouped_matmul",
    "grouped_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, "
    "BLOCK_K: tl.constexpr, GROUP_N: tl.constexpr)",
    f"a 1D grid of ceil(M / {BLOCK_2D}) * ceil(N / {BLOCK_2D}) programs, blocks of {BLOCK_2D}, GROUP_N = {GROUP_N}",
    sizes=lambda rng: {"M": _not_multiple(rng, 100, 127, BLOCK_2D), "N": _not_multiple(rng, 130, 159, BLOCK_2D),
                       "K": _not_multiple(rng, 10, 30, BLOCK_2D)},
    small={"M": 6, "N": 9, "K": 5}, make_data=_gm_data,
    args=lambda d, s: ((d["a_ptr"], d["b_ptr"], d["c_ptr"], s["M"], s["N"], s["K"]),
                       {"BLOCK_M": BLOCK_2D, "BLOCK_N": BLOCK_2D, "BLOCK_K": BLOCK_2D, "GROUP_N": GROUP_N}),
    grid=lambda s: (_gm_programs(s),), reference=lambda d, s: {"c_ptr": d["a_ptr"] @ d["b_ptr"]},
    targets=(CostTarget(f"HBM bytes in waves of {WAVE} programs", lambda p, s: p.hbm_bytes(WAVE),
                        lambda s: grouped_matmul_traffic(s["N"], s["K"], s["M"], BLOCK_2D, BLOCK_2D, GROUP_N, WAVE,
                                                         bytes_per_element=4).bytes_waves,
                        "programs in row-major order: map pid to (pid_m, pid_n) so that each group of "
                        "GROUP_N tile columns is walked row by row"),
             CostTarget("programs not on their tile of column-grouped order", _programs_out_of_order,
                        lambda s: 0,
                        "the tiles are in another order (the lesson's kernel groups rows): here program pid "
                        "takes the tile that groups of GROUP_N tile columns, walked row by row, give it"),
             CostTarget("bytes moved (no reuse)", _total_bytes, lambda s: _mm_bytes(s, bias=False),
                        "a tile loaded more than once per K step")),
    atol=1e-3, rtol=1e-4, adversarial_text="a second draw of sizes")


# --- 10.8 sliding-window attention --------------------------------------------------------------

ATT_BLOCK = 16


def _win_sizes(rng):
    window = int(rng.integers(9, 21))
    return {"N": _not_multiple(rng, 4 * window + 20, 4 * window + 50, ATT_BLOCK), "D": int(rng.integers(9, 16)),
            "WINDOW": window}


def _win_data(rng, s, adv):
    scale = 8.0 if adv else 1.0
    n, d = s["N"], s["D"]
    return {"q_ptr": _randn(rng, n, d, scale=scale), "k_ptr": _randn(rng, n, d, scale=scale),
            "v_ptr": _randn(rng, n, d), "o_ptr": _torch().full((n, d), math.nan), "scale": 1.0 / math.sqrt(d)}


def _window_ref(d, s, window=None, rescale=True):
    torch = _torch()
    w = s["WINDOW"] if window is None else window
    q, k, v = (d[x].double() for x in ("q_ptr", "k_ptr", "v_ptr"))
    n = q.shape[0]
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    keep = (j <= i) & (j > i - w)
    sc = (q @ k.T) * d["scale"]
    sc = sc.masked_fill(~keep, -math.inf)
    return {"o_ptr": (torch.softmax(sc, 1) @ v).float()}


def _window_no_rescale(d, s):
    """What the kernel computes when it forgets to rescale by exp(m_old - m_new): each key block's
    exponentials are taken against the running max of their own step and simply added."""
    torch = _torch()
    q, k, v = (d[x].double() for x in ("q_ptr", "k_ptr", "v_ptr"))
    n, w = q.shape[0], s["WINDOW"]
    out = torch.empty_like(q)
    for i0 in range(0, n, ATT_BLOCK):
        i1 = min(i0 + ATT_BLOCK, n)
        rows = torch.arange(i0, i1)[:, None]
        m = torch.full((i1 - i0,), -math.inf, dtype=torch.float64)
        l_sum = torch.zeros(i1 - i0, dtype=torch.float64)
        acc = torch.zeros(i1 - i0, q.shape[1], dtype=torch.float64)
        for j0 in range(max(0, i0 - w + 1) // ATT_BLOCK * ATT_BLOCK, i1, ATT_BLOCK):
            j1 = min(j0 + ATT_BLOCK, i1)
            cols = torch.arange(j0, j1)[None, :]
            sc = (q[i0:i1] @ k[j0:j1].T) * d["scale"]
            sc = sc.masked_fill(~((cols <= rows) & (cols > rows - w)), -math.inf)
            m = torch.maximum(m, sc.max(1).values)
            safe = torch.where(torch.isinf(m), torch.zeros_like(m), m)
            p = torch.exp(sc - safe[:, None])
            l_sum = l_sum + p.sum(1)
            acc = acc + p @ v[j0:j1]
        out[i0:i1] = acc / l_sum[:, None]
    return {"o_ptr": out.float()}


def _win_keys(s):
    """Keys a query block visits: from the window's start, rounded down to a key block, to its last query."""
    n, w = s["N"], s["WINDOW"]
    total = 0
    for i0 in range(0, n, ATT_BLOCK):
        i1 = min(i0 + ATT_BLOCK, n)
        lo = max(0, i0 - w + 1) // ATT_BLOCK * ATT_BLOCK
        total += i1 - lo
    return total


WINDOW_ATTENTION = TileTask(
    "window_attention",
    "window_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, D, scale, WINDOW, BLOCK_M: tl.constexpr, "
    "BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr)",
    f"ceil(N / {ATT_BLOCK}) programs, BLOCK_M = BLOCK_N = {ATT_BLOCK}, BLOCK_D = 16 (>= D); query i sees keys "
    f"i - WINDOW < j <= i",
    sizes=_win_sizes, small={"N": 5, "D": 3, "WINDOW": 2}, make_data=_win_data,
    args=lambda d, s: ((d["q_ptr"], d["k_ptr"], d["v_ptr"], d["o_ptr"], s["N"], s["D"], d["scale"], s["WINDOW"]),
                       {"BLOCK_M": ATT_BLOCK, "BLOCK_N": ATT_BLOCK, "BLOCK_D": 16}),
    grid=lambda s: (triton.cdiv(s["N"], ATT_BLOCK),), reference=lambda d, s: _window_ref(d, s),
    targets=(CostTarget("elements of K and V read", lambda p, s: (p.tensor("k_ptr").bytes_read
                                                                  + p.tensor("v_ptr").bytes_read) / 4,
                        lambda s: 2 * s["D"] * _win_keys(s),
                        "the key loop starts at 0: start it at the first key block the window reaches "
                        "(max(0, start_m - WINDOW + 1), rounded down to BLOCK_N)"),),
    mistakes=(Mistake("no-rescale", "when a row's running max grows, what was summed so far (l and the output) "
                      "must be multiplied by alpha = exp(m_old - m_new)", _window_no_rescale),
              Mistake("window-off-by-one", "each query saw WINDOW + 1 keys: query i sees i - WINDOW < j <= i",
                      lambda d, s: _window_ref(d, s, window=s["WINDOW"] + 1)),
              Mistake("causal-only", "the window was not applied (plain causal attention): mask j <= i - WINDOW too",
                      lambda d, s: _window_ref(d, s, window=s["N"] + 1))),
    nonfinite_mistake="a row whose scores in a key block are all -inf (outside its window) makes exp(-inf - (-inf)) "
                      "= NaN: keep the running max finite for such rows, and rescale by exp(m_old - m_new) only "
                      "where m_new is finite; or the max was not subtracted before tl.exp",
    atol=1e-4, rtol=1e-3, adversarial_text="queries and keys 8 times larger (scores in the hundreds)")


# --- 10.9 a matmul with packed INT4 weights ------------------------------------------------------

def _i4_sizes(rng):
    return {"M": _not_multiple(rng, 10, 30, 16), "N": 2 * _not_multiple(rng, 20, 40, 16),
            "K": _not_multiple(rng, 20, 60, 32)}


def _i4_data(rng, s, adv):
    torch = _torch()
    k, n = s["K"], s["N"]
    codes = rng.integers(-8, 8, size=(k, n))
    packed = ((codes[:, 0::2] + 8) | ((codes[:, 1::2] + 8) << 4)).astype(np.uint8)
    scales = (rng.random(n) * 0.1 + 0.01).astype(np.float32)
    return {"x_ptr": _randn(rng, s["M"], k, scale=100.0 if adv else 1.0), "w_ptr": torch.from_numpy(packed),
            "s_ptr": torch.from_numpy(scales), "y_ptr": torch.full((s["M"], n), math.nan),
            "_codes": torch.from_numpy(codes.astype(np.float64))}


def _i4_ref(d, s, codes=None):
    c = d["_codes"] if codes is None else codes
    return {"y_ptr": (d["x_ptr"].double() @ (c * d["s_ptr"].double()[None, :])).float()}


def _i4_unsigned(d, s):
    return _i4_ref(d, s, d["_codes"] + 8)


def _i4_swapped(d, s):
    c = d["_codes"].clone()
    c[:, 0::2], c[:, 1::2] = d["_codes"][:, 1::2], d["_codes"][:, 0::2]
    return _i4_ref(d, s, c)


INT4_MATMUL = TileTask(
    "int4_matmul",
    "int4_matmul_kernel(x_ptr, w_ptr, s_ptr, y_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, "
    "BLOCK_K: tl.constexpr)",
    "a (ceil(M / 16), ceil(N / 32)) grid, BLOCK_M = 16, BLOCK_N = 32 output columns (16 packed bytes), BLOCK_K = 32",
    sizes=_i4_sizes, small={"M": 3, "N": 6, "K": 5}, make_data=_i4_data,
    args=lambda d, s: ((d["x_ptr"], d["w_ptr"], d["s_ptr"], d["y_ptr"], s["M"], s["N"], s["K"]),
                       {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 32}),
    grid=lambda s: (triton.cdiv(s["M"], 16), triton.cdiv(s["N"], 32)), reference=lambda d, s: _i4_ref(d, s),
    targets=(CostTarget("bytes read from w", _bytes("w_ptr"), lambda s: s["K"] * s["N"] // 2 * math.ceil(s["M"] / 16),
                        "each packed byte loaded twice (once per nibble): load the byte tile once and take both "
                        "nibbles from it"),),
    mistakes=(Mistake("unsigned", "the nibbles were used as 0..15: they hold code + 8, so subtract 8",
                      _i4_unsigned),
              Mistake("swapped-nibbles", "the nibbles were swapped: the low nibble (byte & 15) is the even column",
                      _i4_swapped)),
    atol=5e-3, rtol=1e-4, adversarial_text="activations around 100")


# --- 10.10 fused cross-entropy -----------------------------------------------------------------

def _ce_data(rng, s, adv):
    torch = _torch()
    x = _randn(rng, s["rows"], s["cols"], scale=40.0 if adv else 1.0, shift=80.0 if adv else 0.0)
    target = torch.from_numpy(rng.integers(0, s["cols"], size=s["rows"]).astype(np.int32))
    return {"x_ptr": x, "t_ptr": target, "loss_ptr": torch.full((s["rows"],), math.nan)}


def _ce_ref(d, s, row0=False):
    x = d["x_ptr"].double()
    t = d["t_ptr"].long()
    picked = x[0, t] if row0 else x[_torch().arange(x.shape[0]), t]
    return {"loss_ptr": (_torch().logsumexp(x, 1) - picked).float()}


CROSS_ENTROPY = TileTask(
    "cross_entropy", "cross_entropy_kernel(x_ptr, t_ptr, loss_ptr, n_cols, BLOCK_COLS: tl.constexpr)",
    "one program per row, BLOCK_COLS = the next power of two >= n_cols",
    sizes=lambda rng: {"rows": int(rng.integers(4, 10)), "cols": _not_multiple(rng, 30, 120, 16)},
    small={"rows": 2, "cols": 3}, make_data=_ce_data,
    args=lambda d, s: ((d["x_ptr"], d["t_ptr"], d["loss_ptr"], s["cols"]), {"BLOCK_COLS": next_pow2(s["cols"])}),
    grid=lambda s: (s["rows"],), reference=lambda d, s: _ce_ref(d, s),
    targets=(CostTarget("bytes read from x", _bytes("x_ptr"), lambda s: 4 * s["rows"] * s["cols"] + 4 * s["rows"],
                        "the row loaded more than once: one load of the row gives the max, the sum and the "
                        "target's logit"),),
    mistakes=(Mistake("target-of-row-0", "the target's logit was read from row 0: add row * n_cols to its offset",
                      lambda d, s: _ce_ref(d, s, row0=True)),),
    nonfinite_mistake="exp of a large logit overflows: subtract the row's max before tl.exp (log-sum-exp = "
                      "max + log(sum(exp(x - max))))",
    atol=1e-4, rtol=1e-4, adversarial_text="logits around 80 with spread 40")


TASKS = {t.name: t for t in (LEAKY_RELU, OUTER_ADD, ROW_SUM, LAYERNORM, SOFTMAX_LONG, MATMUL_BIAS_RELU,
                             GROUPED_MATMUL, WINDOW_ATTENTION, INT4_MATMUL, CROSS_ENTROPY)}
