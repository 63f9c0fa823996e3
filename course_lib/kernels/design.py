"""Kernel designs at any size, by formula: the widget's compute step (instant, no simulation).

The lesson checks each formula against a trace at a small size; here they are evaluated at the
size the learner picks. All kernels work on float32 (4 bytes), N x N matrices (N x N x N for a
matmul), in blocks of ``tile x tile`` threads. Traffic counts every 32-byte sector a warp's
access touches, with no reuse by the caches (the profiler's model):

* copy, shared-tile transpose: read and write each element once, coalesced: 8 N^2 bytes.
* naive transpose: reads coalesced, but a warp (32/T rows of T threads) writes T output rows,
  one sector for each of its T columns: T sectors per 32 elements, so 4 N^2 + T N^2 bytes
  (8x too much on the write side at T = 32).
* naive matmul: for each of the N steps along k, a warp of 32/T rows x T columns touches 32/T
  sectors of A (one address per row, a broadcast) and T/8 of B (T neighbouring floats): per
  thread and step (32/T + T/8) bytes, so N^3 (32/T + T/8) + 4 N^2 bytes in all (an upper bound:
  on a GPU the caches catch much of it).
* tiled matmul: lesson 06's formula, 4 (N^2 ceil(N/T) + N^2 ceil(N/T) + N^2) bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._validate import check_choice, check_int
from ..tiling import tiled_matmul_traffic
from .profile import Prediction, predict_time

__all__ = ["DESIGNS", "TILES", "DesignPoint", "kernel_design", "design_sweep"]

_F = 4
TILES = (8, 16, 32)
DESIGNS = ("copy", "transpose (naive)", "transpose (shared tile)", "transpose (padded tile)",
           "matmul (naive)", "matmul (tiled)")


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


def _traffic(design: str, n: int, tile: int) -> tuple[float, float, int]:
    """(FLOP, bytes, shared bytes per block) of one design at size n with tile x tile blocks."""
    if design == "copy":
        return 0.0, 2.0 * _F * n * n, 0
    if design == "transpose (naive)":
        return 0.0, _F * n * n + float(tile) * n * n, 0
    if design == "transpose (shared tile)":
        return 0.0, 2.0 * _F * n * n, _F * tile * tile
    if design == "transpose (padded tile)":
        return 0.0, 2.0 * _F * n * n, _F * tile * (tile + 1)
    if design == "matmul (naive)":
        return 2.0 * n ** 3, float(n) ** 3 * (32.0 / tile + tile / 8.0) + _F * n * n, 0
    t = tiled_matmul_traffic(n, n, n, tile, tile, bytes_per_element=_F)
    return 2.0 * n ** 3, t.bytes_moved, 2 * _F * tile * tile


def kernel_design(design: str, tile: int = 16, accelerator: str = "H100 SXM", size: int = 4096) -> DesignPoint:
    """Traffic, FLOP, occupancy and predicted time of one design (see the module docstring).

    Example: a 4096 x 4096 copy moves 2 x 4 x 4096^2 = 134 MB; on an H100 SXM, 40 us.
    """
    design = check_choice("design", design, DESIGNS)
    tile = check_int("tile", tile, min_value=1, max_value=32)
    if tile not in TILES:
        raise ValueError(f"tile must be one of {TILES} (blocks of tile x tile threads), got {tile}")
    size = check_int("size", size, min_value=1, max_value=1 << 16)
    flops, nbytes, smem = _traffic(design, size, tile)
    pred = predict_time(flops, nbytes, accelerator, "fp32", tile * tile, smem)
    return DesignPoint(design, tile, size, flops, nbytes, smem, pred)


def design_sweep(tile: int = 16, accelerator: str = "H100 SXM", size: int = 4096) -> list[DesignPoint]:
    """Every design at one tile, accelerator and size."""
    return [kernel_design(d, tile, accelerator, size) for d in DESIGNS]
