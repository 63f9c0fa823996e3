"""A weight-stationary systolic array, simulated cycle by cycle, that computes C = A @ B exactly.

The array is a grid of ``rows x cols`` multiply-accumulate cells (PEs). A tile of B
(``rows`` values of k by ``cols`` values of n) is loaded once and stays put. The rows of A
stream in from the left edge, skewed by one cycle per array row; each PE multiplies the value
passing through by its weight, adds the partial sum arriving from above, and passes the value
right and the sum down. Finished dot products leave the bottom edge. PE (i, j) at cycle t sees

    a = A[t - i - j, k0 + i]      and emits    sum_{i' <= i} A[m, k0 + i'] * B[k0 + i', n0 + j]

with m = t - i - j, so the bottom row delivers C[m, n0 + j] at cycle m + rows - 1 + j, and one
tile takes M + rows + cols - 2 cycles to stream M rows. Every A value that enters is used by
``cols`` PEs and every weight by all M rows, so for one tile

    MACs / operand loads = M rows cols / (rows cols + M rows) -> cols   (large M)

The same reuse a GPU gets from a shared-memory tile (``course_lib.tiling``), here in wiring.
TPU matrix units are arrays of this kind. The first TPU's is 256 x 256, 65,536 8-bit MACs
(Jouppi et al., "In-Datacenter Performance Analysis of a Tensor Processing Unit", ISCA 2017,
section 2); from TPU v2 to v5 each MXU is 128 x 128, 16,384 MACs, several per chip (Google
Cloud TPU system architecture page). ``TPU_V1_MXU_SIDE`` and ``TPU_MXU_SIDE`` hold the two sides.

The simulation is vectorised NumPy: all tiles advance together, one NumPy step per cycle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validate import check_int, check_sequence
from .tiling import tiled_matmul_traffic

#: Side of the TPU v1 matrix unit: 256 x 256 = 65,536 MACs (Jouppi et al., ISCA 2017, section 2).
TPU_V1_MXU_SIDE = 256
#: Side of each MXU in TPU v2 through v5: 128 x 128 = 16,384 MACs (Google Cloud TPU system
#: architecture documentation).
TPU_MXU_SIDE = 128

__all__ = [
    "TPU_V1_MXU_SIDE",
    "TPU_MXU_SIDE",
    "SystolicRun",
    "systolic_matmul",
    "systolic_load_counts",
    "reuse_comparison",
]


@dataclass(frozen=True)
class SystolicRun:
    """The product and what the array did to compute it (counted by the simulation).

    ``macs`` counts multiply-accumulates with a real (non-padding) input and weight;
    ``weight_loads`` the B values loaded into PEs; ``input_loads`` the A values fed at the
    edge; ``output_accumulates`` the partial results read off the bottom and added into C.
    ``cycles`` assumes the tiles run one after another on a single array.
    """

    c: np.ndarray
    rows: int
    cols: int
    tiles: int
    cycles_per_tile: int
    macs: int
    pe_cycles: int
    weight_loads: int
    input_loads: int
    output_accumulates: int

    @property
    def cycles(self) -> int:
        return self.tiles * self.cycles_per_tile

    @property
    def operand_loads(self) -> int:
        return self.weight_loads + self.input_loads

    @property
    def macs_per_operand_load(self) -> float:
        return self.macs / self.operand_loads if self.operand_loads else 0.0

    @property
    def utilisation(self) -> float:
        """Useful MACs over PE-cycles: padding and the fill/drain of the skew cost slots."""
        return self.macs / self.pe_cycles if self.pe_cycles else 0.0


def _matrices(a, b):
    for name, x in (("a", a), ("b", b)):
        if isinstance(x, (str, bytes)) or x is None:
            raise TypeError(f"{name} must be a 2-D numeric array, got {type(x).__name__}")
    a, b = np.asarray(a), np.asarray(b)
    for name, x in (("a", a), ("b", b)):
        if x.dtype.kind not in "iuf":
            raise TypeError(f"{name} must hold integers or floats, got dtype {x.dtype}")
        if x.ndim != 2:
            raise ValueError(f"{name} must be 2-D, got shape {x.shape}")
        if x.size == 0:
            raise ValueError(f"{name} must not be empty, got shape {x.shape}")
        if x.dtype.kind == "f" and not np.all(np.isfinite(x)):
            raise ValueError(f"{name} must contain only finite numbers (no NaN or infinity)")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"a's columns ({a.shape[1]}) must equal b's rows ({b.shape[0]})")
    return a, b


def systolic_matmul(a, b, rows=8, cols=8) -> SystolicRun:
    """C = a @ b on a ``rows x cols`` weight-stationary array, every cycle simulated.

    Shapes need not divide by the array: edge tiles are padded with zeros, and the counts
    include only real values. Integer inputs give the exact integer product.
    """
    a, b = _matrices(a, b)
    rows = check_int("rows", rows, min_value=1)
    cols = check_int("cols", cols, min_value=1)
    m, k = a.shape
    n = b.shape[1]
    kt, nt = math.ceil(k / rows), math.ceil(n / cols)
    dtype = np.result_type(a, b)

    # Weights of every (k-tile, n-tile) pair: shape (tiles, rows, cols), tile index = kt_i * nt + nt_j.
    b_pad = np.zeros((kt * rows, nt * cols), dtype=dtype)
    b_pad[:k, :n] = b
    w = b_pad.reshape(kt, rows, nt, cols).transpose(0, 2, 1, 3).reshape(kt * nt, rows, cols)
    w_real = np.zeros((kt * rows, nt * cols), dtype=bool)
    w_real[:k, :n] = True
    w_real = w_real.reshape(kt, rows, nt, cols).transpose(0, 2, 1, 3).reshape(kt * nt, rows, cols)
    tile_k = np.repeat(np.arange(kt), nt)                  # which k-tile each tile reads

    # The skewed feed: row i of k-tile q receives A[t - i, q*rows + i] at cycle t.
    cycles = m + rows + cols - 2
    a_pad = np.zeros((m, kt * rows), dtype=dtype)
    a_pad[:, :k] = a
    a_real = np.zeros((m, kt * rows), dtype=bool)
    a_real[:, :k] = True
    t_idx = np.arange(cycles)[:, None]
    i_idx = np.arange(rows)[None, :]
    m_idx = t_idx - i_idx                                  # (cycles, rows)
    on = (m_idx >= 0) & (m_idx < m)
    m_safe = np.clip(m_idx, 0, m - 1)
    col = (np.arange(kt)[:, None] * rows + i_idx)          # (kt, rows) columns of A
    feed = np.where(on[:, None, :], a_pad[m_safe[:, None, :], col[None, :, :]], 0)      # (cycles, kt, rows)
    feed_real = on[:, None, :] & a_real[m_safe[:, None, :], col[None, :, :]]

    tiles = kt * nt
    a_reg = np.zeros((tiles, rows, cols), dtype=dtype)
    a_ok = np.zeros((tiles, rows, cols), dtype=bool)
    psum = np.zeros((tiles, rows, cols), dtype=dtype)
    bottom = np.zeros((cycles, tiles, cols), dtype=dtype)
    macs = 0
    input_loads = 0
    for t in range(cycles):
        a_reg[:, :, 1:] = a_reg[:, :, :-1]                 # values move one PE right
        a_ok[:, :, 1:] = a_ok[:, :, :-1]
        a_reg[:, :, 0] = feed[t, tile_k]
        a_ok[:, :, 0] = feed_real[t, tile_k]
        input_loads += int(np.count_nonzero(a_ok[:, :, 0]))
        prod = a_reg * w
        psum[:, 1:, :] = psum[:, :-1, :] + prod[:, 1:, :]  # sums move one PE down, gaining a term
        psum[:, 0, :] = prod[:, 0, :]
        macs += int(np.count_nonzero(a_ok & w_real))
        bottom[t] = psum[:, rows - 1, :]

    # C[m, n0 + j] leaves the bottom of column j at cycle m + rows - 1 + j.
    mm = np.arange(m)[:, None]
    jj = np.arange(cols)[None, :]
    out = bottom[mm + rows - 1 + jj, :, jj]                # (m, cols, tiles)
    out = out.transpose(2, 0, 1).reshape(kt, nt, m, cols)
    c = out.sum(axis=0).transpose(1, 0, 2).reshape(m, nt * cols)[:, :n]
    real_cols = np.minimum(cols, n - np.arange(nt) * cols)
    return SystolicRun(
        c=c, rows=rows, cols=cols, tiles=tiles, cycles_per_tile=cycles, macs=macs,
        pe_cycles=tiles * cycles * rows * cols,
        weight_loads=int(np.count_nonzero(w_real)),
        input_loads=input_loads,
        output_accumulates=int(kt * m * real_cols.sum()),
    )


def systolic_load_counts(m, k, n, rows, cols) -> dict:
    """The counts :func:`systolic_matmul` should find, from the formula (edge tiles exact):

        weight_loads = k n                      (each weight loaded once: weight-stationary)
        input_loads  = m k ceil(n / cols)       (each A value once per column of tiles)
        macs         = m k n
        cycles       = ceil(k/rows) ceil(n/cols) (m + rows + cols - 2)
    """
    m = check_int("m", m, min_value=1)
    k = check_int("k", k, min_value=1)
    n = check_int("n", n, min_value=1)
    rows = check_int("rows", rows, min_value=1)
    cols = check_int("cols", cols, min_value=1)
    kt, nt = math.ceil(k / rows), math.ceil(n / cols)
    return {"weight_loads": k * n, "input_loads": m * k * nt, "macs": m * k * n,
            "output_accumulates": m * n * kt, "cycles": kt * nt * (m + rows + cols - 2)}


def reuse_comparison(m, k, n, sizes=(8, 16, 32, 64, 128, 256)) -> dict:
    """MACs per operand load for a systolic array of side s against a GPU block tile of side s.

    The array loads k n + m k ceil(n/s) operands (weights stay put); the output-stationary GPU
    tile reads m k ceil(n/s) + k n ceil(m/s) from HBM (``course_lib.tiling``). Returns arrays
    keyed 'sizes', 'systolic', 'gpu_tile'.
    """
    m = check_int("m", m, min_value=1)
    k = check_int("k", k, min_value=1)
    n = check_int("n", n, min_value=1)
    sizes = np.array([check_int("sizes[i]", s, min_value=1, max_value=1 << 20)
                      for s in check_sequence("sizes", sizes, min_len=0, max_len=1000)], dtype=int)
    if sizes.size == 0:
        raise ValueError("sizes must hold at least one array or tile size")
    macs = m * k * n
    systolic = np.array([macs / (k * n + m * k * math.ceil(n / s)) for s in sizes])
    gpu = np.array([macs / ((tr := tiled_matmul_traffic(m, k, n, int(s), int(s), 1)).a_bytes + tr.b_bytes)
                    for s in sizes])
    return {"sizes": sizes, "systolic": systolic, "gpu_tile": gpu}
