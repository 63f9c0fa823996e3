"""Program order and L2: the HBM bytes of a blocked matmul when programs that run together share reads.

A blocked matmul launches one program per ``BLOCK_M x BLOCK_N`` tile of C. Lesson 06 counts
every program's loads from HBM:

    bytes (no reuse) = b (m k ceil(n / BN) + k n ceil(m / BM) + m n)

On a GPU, the programs that are resident at once (a *wave*, about one per SM) read some of the
same row panels of A and column panels of B; L2 serves the repeats. With waves of W consecutive
programs and nothing kept from one wave to the next,

    bytes (waves of W) = b (sum over waves of (rows of A its tiles need) k + (columns of B) k) + b m n

Row-major order (GROUP_M = 1) makes a wave one long row of C tiles: it reads one panel of A and
many of B. Grouped order walks GROUP_M tile rows column by column, so a wave is closer to a
square and reads fewer panels. This module computes that from the tile arithmetic of
:func:`course_lib.tiles.kernels.matmul_kernel` alone (no launch), so it is instant at 4096^3;
lesson 10 checks it against a traced launch's :meth:`TileProfile.hbm_bytes`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validate import check_int, check_number

__all__ = ["GroupedTraffic", "grouped_matmul_traffic", "tile_order", "GroupSweep", "group_sweep"]


def tile_order(m, n, block_m, block_n, group_m=1) -> np.ndarray:
    """``(pid_m, pid_n)`` of each program in launch order: the grouped-order arithmetic of
    :func:`course_lib.tiles.kernels.matmul_kernel`, in NumPy. GROUP_M = 1 is row-major."""
    m, n = check_int("m", m, min_value=1), check_int("n", n, min_value=1)
    bm, bn = check_int("block_m", block_m, min_value=1), check_int("block_n", block_n, min_value=1)
    g = check_int("group_m", group_m, min_value=1)
    n_m, n_n = -(-m // bm), -(-n // bn)
    pid = np.arange(n_m * n_n)
    per_group = g * n_n
    first_m = (pid // per_group) * g
    rows = np.minimum(n_m - first_m, g)
    return np.stack([first_m + (pid % per_group) % rows, (pid % per_group) // rows], axis=1)


@dataclass(frozen=True)
class GroupedTraffic:
    """HBM bytes of one blocked matmul in a given program order, with and without wave reuse."""

    m: int
    k: int
    n: int
    block_m: int
    block_n: int
    group_m: int
    programs_per_wave: int
    bytes_per_element: float
    order: np.ndarray                # (programs, 2): (pid_m, pid_n) in launch order
    bytes_no_reuse: float            # lesson 06's formula
    bytes_waves: float               # reads shared within each wave

    @property
    def programs(self) -> int:
        return int(self.order.shape[0])

    @property
    def waves(self) -> int:
        return -(-self.programs // self.programs_per_wave)

    @property
    def min_bytes(self) -> float:
        return self.bytes_per_element * (self.m * self.k + self.k * self.n + self.m * self.n)

    @property
    def flops(self) -> float:
        return 2.0 * self.m * self.k * self.n


def grouped_matmul_traffic(m, k, n, block_m, block_n, group_m=1, programs_per_wave=132,
                           bytes_per_element=2) -> GroupedTraffic:
    """HBM bytes of C = A B (m x k times k x n) by BLOCK_M x BLOCK_N programs in grouped order.

    Example: 4096^3 in BF16 with 128 x 128 tiles and waves of 132 programs (an H100's SMs):
    row-major, each wave spans 4-5 rows of C tiles and all 32 columns; grouped by 8, about
    8 rows and 17 columns.
    """
    m, k, n = (check_int(nm, v, min_value=1) for nm, v in (("m", m), ("k", k), ("n", n)))
    bm = check_int("block_m", block_m, min_value=1)
    bn = check_int("block_n", block_n, min_value=1)
    g = check_int("group_m", group_m, min_value=1)
    w = check_int("programs_per_wave", programs_per_wave, min_value=1)
    b = check_number("bytes_per_element", bytes_per_element, min_value=0, allow_min=False)
    order = tile_order(m, n, bm, bn, g)
    n_m, n_n = -(-m // bm), -(-n // bn)
    rows_of = np.minimum(bm, m - bm * np.arange(n_m))          # rows in each tile row (the last is short)
    cols_of = np.minimum(bn, n - bn * np.arange(n_n))
    no_reuse = b * (m * k * n_n + k * n * n_m + m * n)
    wave = np.arange(order.shape[0]) // w
    # distinct (wave, tile row) and (wave, tile column) pairs: the panels each wave reads once
    row_pairs = np.unique(wave * n_m + order[:, 0])
    col_pairs = np.unique(wave * n_n + order[:, 1])
    reads = k * (rows_of[row_pairs % n_m].sum() + cols_of[col_pairs % n_n].sum())
    return GroupedTraffic(m, k, n, bm, bn, g, w, float(b), order, float(no_reuse), float(b * (reads + m * n)))


@dataclass(frozen=True)
class GroupSweep:
    """HBM bytes of one matmul against GROUP_M, all else fixed (for ``plot_group_sweep``)."""

    groups: np.ndarray
    bytes_waves: np.ndarray
    bytes_no_reuse: float
    min_bytes: float
    current: GroupedTraffic


def group_sweep(m, k, n, block_m, block_n, group_m=8, programs_per_wave=132, bytes_per_element=2,
                groups=(1, 2, 4, 8, 16, 32, 64)) -> GroupSweep:
    """:func:`grouped_matmul_traffic` at each GROUP_M in ``groups``, and at ``group_m``."""
    gs = np.array(sorted({check_int("groups[i]", g, min_value=1) for g in groups}), dtype=np.int64)
    rows = [grouped_matmul_traffic(m, k, n, block_m, block_n, int(g), programs_per_wave, bytes_per_element)
            for g in gs]
    current = grouped_matmul_traffic(m, k, n, block_m, block_n, group_m, programs_per_wave, bytes_per_element)
    return GroupSweep(gs, np.array([r.bytes_waves for r in rows]), current.bytes_no_reuse, current.min_bytes,
                      current)
