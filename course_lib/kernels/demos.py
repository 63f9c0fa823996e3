"""The worked kernels of lesson 09, as tasks: data, reference, launch, FLOP and traffic.

These are the lesson's own examples, neighbours of the puzzles (a leaky ReLU beside the map, a
causal mask beside the 2D map, a block argmax beside the block sum, a grid-stride copy beside the
2D copy, the symmetric part of a matrix beside the transposes, a batch of a^T b products beside
the matmuls). They are :class:`~course_lib.kernels.tasks.KernelTask` objects, so ``run_task`` and
``predict_task`` take them, but they are not in ``tasks.TASKS``: no puzzle asks for them, and the
lesson prints their kernels. Sizes are fixed, not drawn: rows are a whole number of 32-byte
sectors and blocks are partial, so a trace of a design moves exactly the bytes
``design.design_bytes`` gives, and ``predict_task`` at a large size equals the explorer's time.
"""

from __future__ import annotations

import numpy as np

from .design import design_bytes
from .tasks import BLOCK, TILE, TILE_T, KernelTask, _f32, _grid1, _grid2, _odd, _t

__all__ = ["DEMOS", "COPY_STEPS"]

_F = 4
#: The copies' launch: enough blocks of BLOCK threads for about COPY_STEPS elements per thread
#: (2 blocks for the lesson's 2,200 elements, 58,255 for 2^26).
COPY_STEPS = 9


def _block_argmax(d):
    a = d["a"]
    starts = np.arange(0, a.size, BLOCK)
    return {"out": np.array([s + int(np.argmax(a[s:s + BLOCK])) for s in starts], np.int32)}


def _causal(d):
    a = d["a"]
    keep = np.tril(np.ones(a.shape, bool))
    return {"out": np.where(keep, a, -np.inf).astype(np.float32)}


def _bmm_data(rng, s):
    b, m, k, n = s["batch"], s["m"], s["k"], s["n"]
    return {"a": _f32(rng, b, k, m), "b": _f32(rng, b, k, n), "out": np.zeros((b, m, n), np.float32)}


def _bmm_launch(s):
    (gx, gy), block = _grid2(s["m"], s["n"], (TILE, TILE))
    return (gx, gy, s["batch"]), block


_BMM_LARGE = {"batch": 1, "m": 4096, "k": 4096, "n": 4096}

DEMOS: dict[str, KernelTask] = {t.name: t for t in (
    KernelTask(
        "leaky_relu", "kernel(a, out)", "out[i] = a[i] if a[i] > 0 else 0.1 * a[i] (one thread per element)",
        ("a", "out"), ("out",),
        make_sizes=lambda rng: {"n": 600},                      # 75 sectors; 4 blocks, the last partial
        make_data=lambda rng, s: {"a": _f32(rng, s["n"]), "out": np.zeros(s["n"], np.float32)},
        reference=lambda d: {"out": np.where(d["a"] > 0, d["a"], np.float32(0.1) * d["a"]).astype(np.float32)},
        launch=lambda s: _grid1(s["n"]),
        flops=_t("n"), min_bytes=_t("n", factor=2 * _F), large={"n": 1 << 26}),
    KernelTask(
        "causal_mask", "kernel(a, out)", "out[r, c] = a[r, c] where c <= r, else -inf (2D grid, x = column)",
        ("a", "out"), ("out",),
        make_sizes=lambda rng: {"rows": _odd(rng, 20, 40), "cols": _odd(rng, 40, 70)},
        make_data=lambda rng, s: {"a": _f32(rng, s["rows"], s["cols"]),
                                  "out": np.zeros((s["rows"], s["cols"]), np.float32)},
        reference=_causal, launch=lambda s: _grid2(s["rows"], s["cols"]),
        flops=lambda s: 0.0, min_bytes=_t("rows", "cols", factor=2 * _F), large={"rows": 8192, "cols": 8192}),
    KernelTask(
        "block_argmax", "kernel(a, out)", "out[b] = the index of the largest of the BLOCK elements block b covers",
        ("a", "out"), ("out",),
        make_sizes=lambda rng: {"n": 3 * BLOCK - 5},            # three blocks, the last one partial
        make_data=lambda rng, s: {"a": _f32(rng, s["n"]), "out": np.zeros(-(-s["n"] // BLOCK), np.int32)},
        reference=_block_argmax, launch=lambda s: _grid1(s["n"]),
        flops=_t("n"), min_bytes=lambda s: _F * (s["n"] + -(-s["n"] // BLOCK)), large={"n": 1 << 26}),
    KernelTask(
        "copy_1d", "kernel(a, out)", "out[i] = a[i], about COPY_STEPS elements per thread (a grid-stride loop)",
        ("a", "out"), ("out",),
        make_sizes=lambda rng: {"n": 2200},                      # 275 sectors; 9 passes, the last partial
        make_data=lambda rng, s: {"a": _f32(rng, s["n"]), "out": np.zeros(s["n"], np.float32)},
        reference=lambda d: {"out": d["a"].copy()}, launch=lambda s: _grid1(s["n"], BLOCK * COPY_STEPS)[:1] + ((BLOCK,),),
        flops=lambda s: 0.0, min_bytes=_t("n", factor=2 * _F),
        bytes_model=lambda s: design_bytes("copy (grid-stride)", s, TILE), large={"n": 8192 * 8192}),
    KernelTask(
        "symmetrize", "kernel(a, out)", "out = (a + a^T) / 2 for a square matrix, TILE_T x TILE_T blocks",
        ("a", "out"), ("out",),
        make_sizes=lambda rng: {"n": 40},                       # rows of 5 sectors; 2 x 2 tiles, partial
        make_data=lambda rng, s: {"a": _f32(rng, s["n"], s["n"]), "out": np.zeros((s["n"], s["n"]), np.float32)},
        reference=lambda d: {"out": (0.5 * (d["a"] + d["a"].T)).astype(np.float32)},
        launch=lambda s: _grid2(s["n"], s["n"], (TILE_T, TILE_T)),
        flops=_t("n", "n", factor=2), min_bytes=_t("n", "n", factor=2 * _F),
        bytes_model=lambda s: design_bytes("symmetrize (shared tile)", s, TILE_T), large={"n": 8192}),
    KernelTask(
        "bmm_tn", "kernel(a, b, out)", "out[z] = a[z]^T @ b[z], one thread per output element (a[z] is k x m)",
        ("a", "b", "out"), ("out",),
        make_sizes=lambda rng: {"batch": 2, "m": 8, "k": 21, "n": 16},   # partial tiles in m and k
        make_data=_bmm_data,
        reference=lambda d: {"out": np.einsum("zkm,zkn->zmn", d["a"].astype(np.float64), d["b"]).astype(np.float32)},
        launch=_bmm_launch, flops=_t("batch", "m", "k", "n", factor=2),
        min_bytes=lambda s: _F * s["batch"] * (s["m"] * s["k"] + s["k"] * s["n"] + s["m"] * s["n"]),
        bytes_model=lambda s: design_bytes("a^T b (naive)", s, TILE), large=_BMM_LARGE, rtol=1e-4, atol=1e-4),
)}
DEMOS["bmm_tn_tiled"] = KernelTask(
    "bmm_tn_tiled", DEMOS["bmm_tn"].signature, "out[z] = a[z]^T @ b[z] with TILE x TILE tiles in shared memory",
    ("a", "b", "out"), ("out",), make_sizes=DEMOS["bmm_tn"].make_sizes, make_data=_bmm_data,
    reference=DEMOS["bmm_tn"].reference, launch=_bmm_launch, flops=DEMOS["bmm_tn"].flops,
    min_bytes=DEMOS["bmm_tn"].min_bytes, bytes_model=lambda s: design_bytes("a^T b (tiled)", s, TILE),
    large=_BMM_LARGE, rtol=1e-4, atol=1e-4)
