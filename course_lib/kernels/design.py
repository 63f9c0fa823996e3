"""The traffic of lesson 09's worked kernels by formula, at any size: one model for the lesson,
``predict_task`` and the explorer.

:func:`design_bytes` is the model. The lesson's worked kernels (``kernels.demos``) use it, with
the tile they are written for, as their tasks' traffic, and the lesson asserts it equal to the
trace at the traced sizes (rows a whole number of 32-byte sectors, blocks partial); ``predict_task``
scales it to a large size by the traced / model ratio, which is then exactly 1. The explorer
(:func:`kernel_design`) evaluates the same function on N x N matrices (a batch of one N x N x N
product), so the two give one time for one kernel, size and accelerator. All in float32 (4 bytes),
blocks of ``tile x tile`` threads (a warp is 32/T rows of T threads), every 32-byte sector a warp's
access touches counted, with no reuse by the caches (the profiler's model):

* copy (grid-stride): each element read and written once, coalesced: 8 n bytes.
* symmetrize, out = (a + a^T) / 2 on N x N: the shared-tile kernels read a twice and write once,
  coalesced: 12 N^2. The naive one reads a[c, r] with a warp's T columns in T rows, one sector each:
  T sectors per 32 elements, so 8 N^2 + T N^2 (40 N^2 at T = 32).
* a^T b (a is k x m, b is k x n, out m x n), naive: per step along k a warp reads a[p, i] for its
  32/T rows, neighbouring floats of one row of a (one sector), and T neighbouring floats of b
  (T/8 sectors): 32 (1 + T/8) bytes per 32 threads, so m k n (1 + T/8) + 4 m n (an upper bound:
  on a GPU the caches catch much of it).
* a^T b, tiled: lesson 06's formula, 4 (m k ceil(n/T) + k n ceil(m/T) + m n).

Each times ``batch`` for a batch of products.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._validate import check_choice, check_int
from ..tiling import tiled_matmul_traffic
from .profile import Prediction, predict_time

__all__ = ["DESIGNS", "TILES", "DesignPoint", "design_bytes", "kernel_design", "design_sweep"]

_F = 4
TILES = (8, 16, 32)
DESIGNS = ("copy (grid-stride)", "symmetrize (naive)", "symmetrize (shared tile)", "symmetrize (padded tile)",
           "a^T b (naive)", "a^T b (tiled)")


@dataclass(frozen=True)
class DesignPoint:
    design: str
    tile: int
    size: int
    flops: float
    bytes_moved: float
    shared_mem_per_block: int
    prediction: Prediction

    @property
    def threads_per_block(self) -> int:
        return self.tile * self.tile


def design_bytes(design: str, sizes: dict, tile: int) -> float:
    """DRAM bytes of one design (see the module docstring). ``sizes``: ``n`` for the copy, ``n``
    (the side) for symmetrize, ``m``, ``k``, ``n`` and optionally ``batch`` for a^T b.
    Example: symmetrize (naive) at n = 40, tile 32: 40 x 40^2 = 64,000 bytes."""
    design = check_choice("design", design, DESIGNS)
    tile = check_int("tile", tile, min_value=1, max_value=32)
    need = ("n",) if not design.startswith("a^T b") else ("m", "k", "n")
    if not isinstance(sizes, dict) or any(d not in sizes for d in need):
        raise TypeError(f"sizes must be a dict with the keys {need} for {design!r}, got {sizes!r}")
    sizes = {d: check_int(f"sizes[{d!r}]", v, min_value=1) for d, v in sizes.items() if d in need + ("batch",)}
    n = sizes["n"]
    if design == "copy (grid-stride)":
        return 2.0 * _F * n
    if design.startswith("symmetrize"):
        return (2.0 * _F + tile) * n * n if design.endswith("(naive)") else 3.0 * _F * n * n
    m, k, batch = sizes["m"], sizes["k"], sizes.get("batch", 1)
    if design == "a^T b (naive)":
        return batch * (m * k * n * (1.0 + tile / 8.0) + _F * m * n)
    return batch * tiled_matmul_traffic(m, k, n, tile, tile, bytes_per_element=_F).bytes_moved


def _point(design: str, n: int, tile: int) -> tuple[float, float, int]:
    """(FLOP, bytes, shared bytes per block) of one design on N x N (x N) with tile x tile blocks."""
    if design == "copy (grid-stride)":
        return 0.0, design_bytes(design, {"n": n * n}, tile), 0
    if design.startswith("symmetrize"):
        smem = {"(naive)": 0, "(shared tile)": _F * tile * tile, "(padded tile)": _F * tile * (tile + 1)}
        return 2.0 * n * n, design_bytes(design, {"n": n}, tile), smem[design.split(" ", 1)[1]]
    smem = 0 if design.endswith("(naive)") else 2 * _F * tile * tile
    return 2.0 * n ** 3, design_bytes(design, {"m": n, "k": n, "n": n}, tile), smem


def kernel_design(design: str, tile: int = 16, accelerator: str = "H100 SXM", size: int = 4096) -> DesignPoint:
    """Traffic, FLOP, occupancy and predicted time of one design (see the module docstring).

    Example: a copy of a 4096 x 4096 matrix moves 2 x 4 x 4096^2 = 134 MB; on an H100 SXM, 40 us.
    """
    design = check_choice("design", design, DESIGNS)
    tile = check_int("tile", tile, min_value=1, max_value=32)
    if tile not in TILES:
        raise ValueError(f"tile must be one of {TILES} (blocks of tile x tile threads), got {tile}")
    size = check_int("size", size, min_value=1, max_value=1 << 16)
    flops, nbytes, smem = _point(design, size, tile)
    pred = predict_time(flops, nbytes, accelerator, "fp32", tile * tile, smem)
    return DesignPoint(design, tile, size, flops, nbytes, smem, pred)


def design_sweep(tile: int = 16, accelerator: str = "H100 SXM", size: int = 4096) -> list[DesignPoint]:
    """Every design at one tile, accelerator and size."""
    return [kernel_design(d, tile, accelerator, size) for d in DESIGNS]
