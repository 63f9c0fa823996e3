"""Tiling: how blocking a matrix multiplication cuts the bytes it moves to and from HBM.

An output-stationary tiled matmul C[m,n] = A[m,k] @ B[k,n] gives each thread block one
``tile_m x tile_n`` tile of C. The block streams the row panel of A and the column panel of B
through shared memory in steps of ``tile_k`` and writes its C tile once, so

    bytes_moved = b * (m*k * ceil(n / tile_n)  +  k*n * ceil(m / tile_m)  +  m*n)

A is read once per column of tiles, B once per row of tiles. For square tiles T on a large
matmul the intensity is about 2mkn / (2b mkn / T) = T / b FLOP per byte: doubling the tile
halves the traffic. The tile is bounded by on-chip capacity: shared memory holds the A and
B slices, the register file holds the C accumulators.

This module also counts what the smaller tiles buy (warp tiles in registers, the tensor
core's MMA shape), the bytes kernel fusion saves, and shows how a weak test lets two
classic kernel bugs through. Pure NumPy; drawing lives in ``course_lib.plots.tiling``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from ._validate import (check_array, check_bool, check_choice, check_float_dtype, check_int, check_number,
                        check_sequence)
from .hardware import bytes_per_element as _bytes_per_element
from .hardware import get_accelerator

__all__ = [
    "MatmulTraffic",
    "tiled_matmul_traffic",
    "simulate_tiled_matmul",
    "traffic_sweep",
    "TrafficSweep",
    "smem_bytes_per_block",
    "TileLimit",
    "tile_limit",
    "MMA_SHAPES",
    "TileInstructionCounts",
    "tile_instruction_counts",
    "ReuseLevel",
    "tiling_hierarchy",
    "FusionResult",
    "fusion_traffic",
    "tiled_matmul",
    "matmul_indexing_bug",
    "matmul_precision_bug",
    "weak_matmul_cases",
    "strong_matmul_cases",
    "KernelCheck",
    "check_matmul_kernel",
    "GraphTraffic",
    "graph_traffic",
    "layernorm_gelu_residual_graph",
]


# --------------------------------------------------------------------------- HBM traffic

@dataclass(frozen=True)
class MatmulTraffic:
    """HBM bytes of one tiled matmul, split by operand, and what they mean on the roofline."""

    m: int
    k: int
    n: int
    tile_m: int
    tile_n: int
    bytes_per_element: float
    a_bytes: float
    b_bytes: float
    c_bytes: float

    @property
    def bytes_moved(self) -> float:
        return self.a_bytes + self.b_bytes + self.c_bytes

    @property
    def flops(self) -> float:
        return 2.0 * self.m * self.k * self.n

    @property
    def intensity_flops_per_byte(self) -> float:
        return self.flops / self.bytes_moved

    @property
    def min_bytes(self) -> float:
        """The floor: every operand read once and C written once, b*(mk + kn + mn)."""
        return self.bytes_per_element * (self.m * self.k + self.k * self.n + self.m * self.n)

    @property
    def excess_factor(self) -> float:
        """How many times the floor this tiling moves (1.0 when one tile covers C)."""
        return self.bytes_moved / self.min_bytes


def _shape_and_tiles(m, k, n, tile_m, tile_n):
    m = check_int("m", m, min_value=1)
    k = check_int("k", k, min_value=1)
    n = check_int("n", n, min_value=1)
    tile_m = check_int("tile_m", tile_m, min_value=1)
    tile_n = check_int("tile_n", tile_n, min_value=1)
    return m, k, n, tile_m, tile_n


def tiled_matmul_traffic(m, k, n, tile_m, tile_n=None, bytes_per_element=2) -> MatmulTraffic:
    """Predicted HBM bytes of an output-stationary tiled matmul (formula, edge tiles exact).

        a_bytes = b * m*k * ceil(n/tile_n),  b_bytes = b * k*n * ceil(m/tile_m),  c_bytes = b * m*n

    An edge tile loads only the rows or columns that exist, so the ceilings are exact, not a
    bound. ``tile_n`` defaults to ``tile_m`` (square tiles). Example: 4096^3 in BF16 with
    128 x 128 tiles reads A and B 32 times each: 2 * 4096^2 * (32 + 32 + 1) = 2.18 GB.
    """
    tile_n = tile_m if tile_n is None else tile_n
    m, k, n, tile_m, tile_n = _shape_and_tiles(m, k, n, tile_m, tile_n)
    b = check_number("bytes_per_element", bytes_per_element, min_value=0, allow_min=False)
    return MatmulTraffic(m, k, n, tile_m, tile_n, b,
                         a_bytes=b * m * k * math.ceil(n / tile_n),
                         b_bytes=b * k * n * math.ceil(m / tile_m),
                         c_bytes=b * m * n)


@dataclass(frozen=True)
class TileWalk:
    """What a simulated walk over the tiles saw: per-element load and store counts."""

    traffic: MatmulTraffic
    a_loads: np.ndarray      # how many times each element of A came from HBM
    b_loads: np.ndarray
    c_stores: np.ndarray
    tiles: int               # output tiles visited
    k_steps: int             # (tile, k-step) pairs visited: one shared-memory fill each


def simulate_tiled_matmul(m, k, n, tile_m, tile_n=None, tile_k=32, bytes_per_element=2) -> TileWalk:
    """Walk the tiles of an output-stationary matmul as a GPU would and count every load.

    For each output tile, for each k-step, the slices of A and B it stages in shared memory
    are marked in per-element counters; the finished C tile is marked once. The bytes are the
    counters' sums times ``bytes_per_element``: an independent check of
    :func:`tiled_matmul_traffic`, edge tiles included. Cost: one NumPy slice update per
    (tile, k-step), so keep m/tile_m * n/tile_n * k/tile_k below about 10^5.
    """
    tile_n = tile_m if tile_n is None else tile_n
    m, k, n, tile_m, tile_n = _shape_and_tiles(m, k, n, tile_m, tile_n)
    tile_k = check_int("tile_k", tile_k, min_value=1)
    b = check_number("bytes_per_element", bytes_per_element, min_value=0, allow_min=False)
    steps = math.ceil(m / tile_m) * math.ceil(n / tile_n) * math.ceil(k / tile_k)
    if steps > 2_000_000:
        raise ValueError(f"the walk would visit {steps:,} (tile, k-step) pairs; use larger tiles "
                         "or a smaller matrix (tiled_matmul_traffic gives the same count instantly)")
    a_loads = np.zeros((m, k), dtype=np.int64)
    b_loads = np.zeros((k, n), dtype=np.int64)
    c_stores = np.zeros((m, n), dtype=np.int64)
    tiles = visited = 0
    for i0 in range(0, m, tile_m):
        i1 = min(i0 + tile_m, m)
        for j0 in range(0, n, tile_n):
            j1 = min(j0 + tile_n, n)
            for k0 in range(0, k, tile_k):
                k1 = min(k0 + tile_k, k)
                a_loads[i0:i1, k0:k1] += 1          # stage A[i-tile, k-step] in shared memory
                b_loads[k0:k1, j0:j1] += 1          # stage B[k-step, j-tile]
                visited += 1
            c_stores[i0:i1, j0:j1] += 1             # the accumulators go back once
            tiles += 1
    traffic = MatmulTraffic(m, k, n, tile_m, tile_n, b,
                            a_bytes=b * float(a_loads.sum()), b_bytes=b * float(b_loads.sum()),
                            c_bytes=b * float(c_stores.sum()))
    return TileWalk(traffic, a_loads, b_loads, c_stores, tiles, visited)


def smem_bytes_per_block(tile_m, tile_n, tile_k, bytes_per_element=2, stages=2) -> float:
    """Shared memory a block needs: stages * b * (tile_m*tile_k + tile_k*tile_n) bytes.

    ``stages`` = 2 is double buffering (load the next k-step while computing this one).
    Example: 128 x 128 tiles, tile_k = 32, BF16, 2 stages: 2*2*(4096 + 4096) = 32 KiB.
    """
    tile_m = check_int("tile_m", tile_m, min_value=1)
    tile_n = check_int("tile_n", tile_n, min_value=1)
    tile_k = check_int("tile_k", tile_k, min_value=1)
    b = check_number("bytes_per_element", bytes_per_element, min_value=0, allow_min=False)
    stages = check_int("stages", stages, min_value=1)
    return stages * b * (tile_m * tile_k + tile_k * tile_n)


@dataclass(frozen=True)
class TileLimit:
    """The largest square output tile one block can hold on an accelerator, and why."""

    accelerator: str
    precision: str
    tile_k: int
    stages: int
    smem_limit: int          # largest T whose A and B slices fit the per-block shared memory
    register_limit: int      # largest T whose FP32 accumulators leave room in the SM's register file
    multiple: int

    @property
    def largest(self) -> int:
        return min(self.smem_limit, self.register_limit)

    @property
    def binding(self) -> str:
        return "shared memory" if self.smem_limit <= self.register_limit else "registers"


def tile_limit(accelerator="H100 SXM", precision="bf16", tile_k=32, stages=2,
               accumulator_bytes=4, multiple=16) -> TileLimit:
    """Largest square tile T (a multiple of ``multiple``) that fits one block's on-chip storage.

        shared memory:  stages * b * 2*T*tile_k  <=  max shared memory per block
        registers:      T*T * accumulator_bytes  <   register file per SM

    The register bound is strict because the accumulators cannot take every register: the
    threads also need registers for operand fragments, addresses and loop counters. It is still
    generous, so real kernels stop below it. H100, BF16, tile_k 32, 2 stages: shared memory
    allows T = 896, the 256 KiB register file only T = 240 (256 x 256 FP32 accumulators are
    65,536 registers, the whole file, with none left for anything else).
    """
    acc = get_accelerator(accelerator)
    b = _bytes_per_element(precision)
    tile_k = check_int("tile_k", tile_k, min_value=1)
    stages = check_int("stages", stages, min_value=1)
    acc_b = check_number("accumulator_bytes", accumulator_bytes, min_value=0, allow_min=False)
    multiple = check_int("multiple", multiple, min_value=1)
    smem = acc.max_shared_mem_bytes_per_block or acc.shared_mem_bytes_per_sm
    if smem is None or acc.register_file_bytes_per_sm is None:
        raise ValueError(f"the catalog has no shared-memory or register-file size for {acc.name}")
    t_smem = int(smem // (stages * b * 2 * tile_k))
    t_reg = int(math.isqrt(int(acc.register_file_bytes_per_sm // acc_b)))
    if t_reg * t_reg * acc_b >= acc.register_file_bytes_per_sm:     # would fill the file: no room left
        t_reg -= 1
    return TileLimit(acc.name, precision.lower(), tile_k, stages,
                     smem_limit=t_smem // multiple * multiple,
                     register_limit=t_reg // multiple * multiple, multiple=multiple)


@dataclass(frozen=True)
class TrafficSweep:
    """HBM traffic against square tile size: formula for every tile, walk for a few."""

    m: int
    k: int
    n: int
    bytes_per_element: float
    tiles: np.ndarray
    predicted_bytes: np.ndarray
    simulated_tiles: np.ndarray
    simulated_bytes: np.ndarray
    min_bytes: float
    tile_limit: int | None = None       # largest tile the chosen accelerator can hold
    current_tile: int | None = None


def traffic_sweep(m, k, n, tiles, bytes_per_element=2, simulate=(), tile_k=32,
                  limit: int | None = None, current_tile: int | None = None) -> TrafficSweep:
    """Traffic for each square tile in ``tiles`` by formula, and by walking for those in ``simulate``."""
    tiles_arr = np.asarray([check_int("tiles[i]", t, min_value=1)
                            for t in check_sequence("tiles", tiles, max_len=10_000)], dtype=np.int64)
    if tiles_arr.size == 0:
        raise ValueError("tiles must hold at least one tile size")
    predicted = np.array([tiled_matmul_traffic(m, k, n, int(t), bytes_per_element=bytes_per_element).bytes_moved
                          for t in tiles_arr])
    sim_tiles = np.asarray([check_int("simulate[i]", t, min_value=1)
                            for t in check_sequence("simulate", simulate, min_len=0, max_len=16)],
                           dtype=np.int64)
    if limit is not None:
        limit = check_int("limit", limit, min_value=1)
    if current_tile is not None:
        current_tile = check_int("current_tile", current_tile, min_value=1)
    sim_bytes = np.array([simulate_tiled_matmul(m, k, n, int(t), tile_k=tile_k,
                                                bytes_per_element=bytes_per_element).traffic.bytes_moved
                          for t in sim_tiles])
    floor = tiled_matmul_traffic(m, k, n, 1, bytes_per_element=bytes_per_element).min_bytes
    return TrafficSweep(int(m), int(k), int(n), float(bytes_per_element), tiles_arr, predicted,
                        sim_tiles, sim_bytes, floor, limit, current_tile)


# --------------------------------------------------------------------------- down to the tensor core

#: Warp-level MMA shapes (M, N, K) for 16-bit inputs with FP32 accumulation.
#: Source: NVIDIA PTX ISA, section "Warp Level Matrix Multiply-Accumulate Instructions",
#: ``mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`` (sm_80 and later) and
#: ``mma.sync.aligned.m16n8k8`` (sm_75 and later). One instruction is issued by a whole warp.
MMA_SHAPES = MappingProxyType({"m16n8k16": (16, 8, 16), "m16n8k8": (16, 8, 8)})


@dataclass(frozen=True)
class TileInstructionCounts:
    """One tile of C += A @ B done two ways: scalar FMAs or tensor-core MMAs, per warp."""

    tile: tuple
    mma_shape: tuple
    warp_size: int
    flops: float
    fma_instructions: int            # warp-wide FFMA/HFMA instructions (each does warp_size FMAs)
    mma_instructions: int            # warp-wide mma.sync instructions
    fma_operand_elements: int        # A and B elements read from registers by the FMAs
    mma_operand_elements: int        # A and B fragment elements read by the MMAs

    @property
    def instruction_ratio(self) -> float:
        return self.fma_instructions / self.mma_instructions

    @property
    def fma_flops_per_operand(self) -> float:
        return self.flops / self.fma_operand_elements

    @property
    def mma_flops_per_operand(self) -> float:
        return self.flops / self.mma_operand_elements


def _mma(mma):
    if isinstance(mma, str):
        return MMA_SHAPES[check_choice("mma", mma, MMA_SHAPES)]
    if isinstance(mma, tuple) and len(mma) == 3:
        return tuple(check_int(f"mma[{i}]", v, min_value=1) for i, v in enumerate(mma))
    raise TypeError(f"mma must be one of {list(MMA_SHAPES)} or an (m, n, k) tuple, got {mma!r}")


def tile_instruction_counts(tile_m, tile_n, tile_k, mma="m16n8k16", warp_size=32) -> TileInstructionCounts:
    """Instructions and operand reads for a tile_m x tile_n x tile_k multiply-accumulate.

        scalar:  tile_m*tile_n*tile_k FMAs  = that / warp_size warp instructions,
                 each FMA reads one A and one B element: 1 FLOP per operand element
        tensor:  ceil(tile_m/M)*ceil(tile_n/N)*ceil(tile_k/K) mma.sync instructions,
                 each reads an M x K and a K x N fragment: 2MNK / (MK + KN) FLOP per element

    One m16n8k16 is 2048 FMAs (4096 FLOP): 64 warp-wide FMA instructions, 10.7 FLOP per operand.
    """
    tm = check_int("tile_m", tile_m, min_value=1)
    tn = check_int("tile_n", tile_n, min_value=1)
    tk = check_int("tile_k", tile_k, min_value=1)
    ws = check_int("warp_size", warp_size, min_value=1)
    M, N, K = _mma(mma)
    fmas = tm * tn * tk
    n_mma = math.ceil(tm / M) * math.ceil(tn / N) * math.ceil(tk / K)
    return TileInstructionCounts(
        tile=(tm, tn, tk), mma_shape=(M, N, K), warp_size=ws, flops=2.0 * fmas,
        fma_instructions=math.ceil(fmas / ws), mma_instructions=n_mma,
        fma_operand_elements=2 * fmas, mma_operand_elements=n_mma * (M * K + K * N))


@dataclass(frozen=True)
class ReuseLevel:
    """One level of the tiling hierarchy: the tile it works on and the reuse it buys."""

    level: str
    tile: tuple                      # (m, n, k) of the work one unit does per step
    units_per_parent: int            # e.g. warps per block tile, MMAs per warp tile
    flops: float                     # per step of one unit
    elements_loaded: int             # operand elements brought into this level per step

    @property
    def flops_per_element(self) -> float:
        return self.flops / self.elements_loaded


def tiling_hierarchy(block=(128, 128, 32), warp=(64, 64), mma="m16n8k16") -> list[ReuseLevel]:
    """FLOP per operand element at each level: HBM -> shared memory -> registers -> tensor core.

    Each level loads its A and B slices once and reuses them across its tile:
    an (m, n, k) step loads (m + n) * k elements and does 2*m*n*k FLOP, so the reuse is
    2mn / (m + n) FLOP per element. A scalar FMA is the bottom line: 1 FLOP per element.
    Block 128x128: 128 FLOP per element from HBM; warp 64x64: 64; MMA 16x8x16: 10.7.
    """
    if not (isinstance(block, tuple) and len(block) == 3):
        raise TypeError(f"block must be a (m, n, k) tuple, got {block!r}")
    if not (isinstance(warp, tuple) and len(warp) == 2):
        raise TypeError(f"warp must be a (m, n) tuple, got {warp!r}")
    bm, bn, bk = (check_int(f"block[{i}]", v, min_value=1) for i, v in enumerate(block))
    wm, wn = (check_int(f"warp[{i}]", v, min_value=1) for i, v in enumerate(warp))
    M, N, K = _mma(mma)
    if bm % wm or bn % wn:
        raise ValueError(f"warp tile {warp} must divide the block tile {block[:2]}")
    if wm % M or wn % N or bk % K:
        raise ValueError(f"the MMA shape {(M, N, K)} must divide the warp tile {(wm, wn, bk)}")

    def level(name, m, n, k, units):
        return ReuseLevel(name, (m, n, k), units, 2.0 * m * n * k, (m + n) * k)

    return [
        level("block tile (HBM -> shared memory)", bm, bn, bk, 1),
        level("warp tile (shared memory -> registers)", wm, wn, bk, (bm // wm) * (bn // wn)),
        level(f"MMA m{M}n{N}k{K} (registers -> tensor core)", M, N, K, (wm // M) * (wn // N) * (bk // K)),
        level("scalar FMA (registers -> FP unit)", 1, 1, 1, M * N * K),
    ]


# --------------------------------------------------------------------------- kernel fusion

@dataclass(frozen=True)
class FusionResult:
    """Bias + activation + dropout over a rows x cols tensor, as three kernels or one."""

    rows: int
    cols: int
    precision: str
    accelerator: str
    bandwidth_bytes_per_s: float
    bytes_unfused: float
    bytes_fused: float
    kernels_unfused: int
    kernels_fused: int

    @property
    def t_unfused_s(self) -> float:
        return self.bytes_unfused / self.bandwidth_bytes_per_s

    @property
    def t_fused_s(self) -> float:
        return self.bytes_fused / self.bandwidth_bytes_per_s

    @property
    def speedup(self) -> float:
        return self.bytes_unfused / self.bytes_fused


def fusion_traffic(rows, cols, precision="bf16", accelerator="H100 SXM", save_mask=True) -> FusionResult:
    """HBM bytes of y = dropout(act(x + bias)) unfused (three kernels) and fused (one).

        unfused: (x + bias) reads x and bias, writes t1; act reads t1, writes t2;
                 dropout reads t2, writes y (and a 1-byte mask)      = b*(6E + cols) [+ E]
        fused:   read x and bias, write y (and the mask)             = b*(2E + cols) [+ E]

    E = rows * cols elements of b bytes. ``save_mask`` keeps a one-byte-per-element dropout
    mask for the backward pass (PyTorch stores a bool mask); without it the mask is
    regenerated from the random seed. The time is bytes / HBM bandwidth: these kernels do a
    handful of FLOP per element, so memory bounds them.
    """
    r = check_int("rows", rows, min_value=1)
    c = check_int("cols", cols, min_value=1)
    b = _bytes_per_element(precision)
    save = check_bool("save_mask", save_mask)
    acc = get_accelerator(accelerator)
    e = r * c
    mask = e * 1.0 if save else 0.0
    unfused = b * (e + c + e) + b * (e + e) + b * (e + e) + mask
    fused = b * (e + c + e) + mask
    return FusionResult(r, c, precision.lower(), acc.name, acc.mem_bandwidth, unfused, fused, 3, 1)


# --------------------------------------------------------------------------- a kernel and its tests

def _matmul_inputs(a, b):
    a = check_array("a", a, ndim=2, dtype=None)
    b = check_array("b", b, ndim=2, dtype=None)
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"a is {a.shape} and b is {b.shape}: a's columns must equal b's rows")
    return a, b


def tiled_matmul(a, b, tile=32, tile_k=16) -> np.ndarray:
    """C = A @ B computed tile by tile, FP32 (or wider) accumulators, rounded once to the inputs' type.

    The correct kernel: edge tiles are clipped to the matrix, rows bound by m, columns by n.
    """
    a, b = _matmul_inputs(a, b)
    tile = check_int("tile", tile, min_value=1)
    tile_k = check_int("tile_k", tile_k, min_value=1)
    m, k = a.shape
    n = b.shape[1]
    out_dtype = np.result_type(a, b)
    acc_dtype = np.result_type(out_dtype, np.float32)      # FP32 accumulators (FP64 stays FP64)
    c = np.empty((m, n), dtype=out_dtype)
    for i0 in range(0, m, tile):
        for j0 in range(0, n, tile):
            acc = np.zeros((min(tile, m - i0), min(tile, n - j0)), dtype=acc_dtype)
            for k0 in range(0, k, tile_k):
                acc += a[i0:i0 + tile, k0:k0 + tile_k].astype(acc_dtype) @ \
                    b[k0:k0 + tile_k, j0:j0 + tile].astype(acc_dtype)
            c[i0:i0 + tile, j0:j0 + tile] = acc.astype(out_dtype)
    return c


def matmul_indexing_bug(a, b, tile=32, tile_k=16) -> np.ndarray:
    """A plausible bug: the column loop runs to m instead of n (they are equal in a square test).

    When n > m the columns past m are never computed and keep whatever the buffer held (zeros).
    """
    a, b = _matmul_inputs(a, b)
    tile = check_int("tile", tile, min_value=1)
    tile_k = check_int("tile_k", tile_k, min_value=1)
    m, k = a.shape
    n = b.shape[1]
    out_dtype = np.result_type(a, b)
    acc_dtype = np.result_type(out_dtype, np.float32)
    c = np.zeros((m, n), dtype=out_dtype)
    for i0 in range(0, m, tile):
        for j0 in range(0, m, tile):                     # BUG: should be range(0, n, tile)
            acc = np.zeros((min(tile, m - i0), max(0, min(tile, n - j0))), dtype=acc_dtype)
            for k0 in range(0, k, tile_k):
                acc += a[i0:i0 + tile, k0:k0 + tile_k].astype(acc_dtype) @ \
                    b[k0:k0 + tile_k, j0:j0 + tile].astype(acc_dtype)
            c[i0:i0 + tile, j0:j0 + tile] = acc.astype(out_dtype)
    return c


def matmul_precision_bug(a, b, tile=32, tile_k=16) -> np.ndarray:
    """A plausible bug: the accumulator has the inputs' type, so FP16 inputs round after every k-step.

    Sums of small integers (an all-ones test) are exact in FP16 up to 2048, so a weak test passes.
    """
    a, b = _matmul_inputs(a, b)
    tile = check_int("tile", tile, min_value=1)
    tile_k = check_int("tile_k", tile_k, min_value=1)
    m, k = a.shape
    n = b.shape[1]
    out_dtype = np.result_type(a, b)
    c = np.empty((m, n), dtype=out_dtype)
    for i0 in range(0, m, tile):
        for j0 in range(0, n, tile):
            acc = np.zeros((min(tile, m - i0), min(tile, n - j0)), dtype=out_dtype)   # BUG: FP16
            for k0 in range(0, k, tile_k):
                partial = a[i0:i0 + tile, k0:k0 + tile_k].astype(np.float32) @ \
                    b[k0:k0 + tile_k, j0:j0 + tile].astype(np.float32)
                acc = (acc.astype(np.float32) + partial).astype(out_dtype)
            c[i0:i0 + tile, j0:j0 + tile] = acc
    return c


def weak_matmul_cases(size=64, dtype=np.float16) -> list[tuple[np.ndarray, np.ndarray]]:
    """The test people write first: square, a power of two, all ones. Catches almost nothing."""
    size = check_int("size", size, min_value=1, max_value=4096, why="the test matrices are size x size")
    ones = np.ones((size, size), dtype=check_float_dtype("dtype", dtype, "np.float16"))
    return [(ones, ones.copy())]


def strong_matmul_cases(rng, count=4, max_dim=200, max_k=2000, dtype=np.float16) -> list[tuple[np.ndarray, np.ndarray]]:
    """Random normal operands of random, distinct, odd-sized shapes (m < n and m > n both occur).

    m and n are drawn below ``max_dim``, the reduction length k between ``max_dim`` and
    ``max_k`` (long reductions are where accumulation errors build up); none is a multiple
    of 8, so a tile size of 8, 16 or 32 leaves a ragged edge tile in every dimension.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    count = check_int("count", count, min_value=2, max_value=64, why="each case is checked by a Python loop")
    max_dim = check_int("max_dim", max_dim, min_value=20, max_value=1024, why="larger cases take seconds each")
    max_k = check_int("max_k", max_k, min_value=max_dim + 10, max_value=16384,
                      why="larger cases take seconds each")
    dtype = check_float_dtype("dtype", dtype, "np.float16")
    cases = []
    for i in range(count):
        while True:
            m, n = (int(x) for x in rng.integers(9, max_dim, size=2))
            k = int(rng.integers(max_dim, max_k))
            if len({m, k, n}) == 3 and all(x % 8 for x in (m, k, n)) and ((m < n) == (i % 2 == 0)):
                break
        cases.append((rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)))
    return cases


@dataclass(frozen=True)
class KernelCheck:
    """The verdict of a kernel test: passed, and the worst normwise error seen (and where)."""

    kernel: str
    passed: bool
    worst_error: float
    worst_shape: tuple
    tolerance: float
    cases: int


def check_matmul_kernel(kernel, cases, tolerance=None) -> KernelCheck:
    """Compare ``kernel(a, b)`` against a float64 reference on every case.

        error = max|C - C_ref| / max|C_ref|        (normwise, so near-zero entries do not explode it)

    The default tolerance is 2 units of roundoff of the output type (2 * 2^-11 for FP16): a
    kernel that accumulates in FP32 and rounds once meets it; one that rounds every k-step does not.
    """
    if not callable(kernel):
        raise TypeError(f"kernel must be callable as kernel(a, b), got {type(kernel).__name__}")
    if not isinstance(cases, (list, tuple)):
        raise TypeError(f"cases must be a list of (a, b) pairs, as weak_matmul_cases() returns, "
                        f"got {type(cases).__name__}")
    cases = list(cases)
    if any(not isinstance(c, (list, tuple)) or len(c) != 2 for c in cases):
        raise TypeError("cases must be a list of (a, b) pairs, as weak_matmul_cases() returns")
    if not cases:
        raise ValueError("cases must hold at least one (a, b) pair")
    worst, where = -1.0, ()
    tol = None
    for a, b in cases:
        a, b = _matmul_inputs(a, b)
        out_dtype = np.result_type(a, b)
        if tolerance is None:
            # 2 units of roundoff u = eps/2 of the output type
            tol = float(np.finfo(out_dtype).eps) if np.issubdtype(out_dtype, np.floating) else 0.0
        else:
            tol = check_number("tolerance", tolerance, min_value=0)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        got = np.asarray(kernel(a, b), dtype=np.float64)
        if got.shape != ref.shape:
            err = math.inf
        else:
            err = float(np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), np.finfo(float).tiny))
        if err > worst:
            worst, where = err, (a.shape[0], a.shape[1], b.shape[1])
    name = getattr(kernel, "__name__", repr(kernel))
    return KernelCheck(name, worst <= tol, worst, where, tol, len(cases))



# --------------------------------------------------------------------------- what a fusing compiler removes

@dataclass(frozen=True)
class GraphTraffic:
    """HBM bytes of an operator graph run as the given kernels (a partition of its ops)."""

    kernels: tuple            # tuple of tuples of op names, one per kernel
    read_bytes: tuple         # per kernel: tensors it reads that it did not produce
    write_bytes: tuple        # per kernel: tensors it produces that leave it (another kernel or the graph's output)
    flops: float

    @property
    def bytes_moved(self) -> float:
        return float(sum(self.read_bytes) + sum(self.write_bytes))

    @property
    def n_kernels(self) -> int:
        return len(self.kernels)


def graph_traffic(ops, sizes, kernels, outputs) -> GraphTraffic:
    """Count the HBM traffic of an operator graph when its ops are grouped into kernels.

    ``ops``: sequence of ``(name, inputs, outputs, flops)``; ``sizes``: bytes of every tensor;
    ``kernels``: a partition of the op names, one group per kernel (ops in graph order);
    ``outputs``: tensors the graph must leave in memory. Inside a kernel a tensor stays on chip;
    a kernel reads each tensor it needs from outside it once, and writes each tensor it makes
    that a later kernel reads or the graph returns. So fusing everything costs one read of the
    graph's inputs and one write of its outputs; one kernel per op costs every intermediate twice.
    """
    ops = check_sequence("ops", ops, min_len=1, max_len=10_000, scalar_ok=False)
    if not isinstance(sizes, dict):
        raise TypeError(f"sizes must be a dict {{tensor name: bytes}}, got {type(sizes).__name__} {sizes!r:.60}")
    sizes = {t: check_number(f"sizes[{t!r}]", b, min_value=0) for t, b in sizes.items()}
    kernels = check_sequence("kernels", kernels, min_len=1, max_len=10_000, scalar_ok=False)
    for i, g in enumerate(kernels):
        if not isinstance(g, (tuple, list)):
            raise TypeError(f"kernels[{i}] must be a tuple of op names, got {type(g).__name__} {g!r:.60}")
    if isinstance(outputs, str):
        outputs = (outputs,)
    outputs = check_sequence("outputs", outputs, min_len=0, max_len=10_000, scalar_ok=False)
    op_list = []
    for op in ops:
        if not (isinstance(op, tuple) and len(op) == 4):
            raise TypeError(f"ops must hold (name, inputs, outputs, flops) tuples, got {op!r}")
        name, ins, outs, fl = op
        if not isinstance(ins, (tuple, list)) or not isinstance(outs, (tuple, list)):
            raise TypeError(f"ops must hold (name, inputs, outputs, flops) tuples whose inputs and outputs are "
                            f"tuples of tensor names, got {op!r:.80}")
        op_list.append((str(name), tuple(ins), tuple(outs), check_number(f"flops of {name}", fl, min_value=0)))
    names = [o[0] for o in op_list]
    if len(set(names)) != len(names):
        raise ValueError("op names must be unique")
    producer = {}
    for name, _, outs, _ in op_list:
        for t in outs:
            if t in producer:
                raise ValueError(f"tensor {t!r} is produced twice")
            producer[t] = name
    for name, ins, outs, _ in op_list:
        for t in ins + outs:
            if t not in sizes:
                raise ValueError(f"sizes has no entry for tensor {t!r} (used by op {name!r})")
    groups = [tuple(str(n) for n in g) for g in kernels]
    flat = [n for g in groups for n in g]
    if sorted(flat) != sorted(names):
        raise ValueError(f"kernels must partition the ops {names}: each op in exactly one kernel, got {groups}")
    outs_set = set(outputs)
    for t in outs_set:
        if t not in producer:
            raise ValueError(f"outputs must name tensors the ops produce: {t!r} is not produced by any op")
    kernel_of = {n: i for i, g in enumerate(groups) for n in g}
    by_name = {o[0]: o for o in op_list}
    consumers = {}
    for name, ins, _, _ in op_list:
        for t in ins:
            consumers.setdefault(t, set()).add(kernel_of[name])
    reads, writes = [], []
    for i, g in enumerate(groups):
        needed = {t for n in g for t in by_name[n][1] if kernel_of.get(producer.get(t), -1) != i}
        made = {t for n in g for t in by_name[n][2]}
        leaving = {t for t in made if t in outs_set or consumers.get(t, set()) - {i}}
        reads.append(float(sum(sizes[t] for t in needed)))
        writes.append(float(sum(sizes[t] for t in leaving)))
    return GraphTraffic(tuple(groups), tuple(reads), tuple(writes), float(sum(o[3] for o in op_list)))


def layernorm_gelu_residual_graph(rows, cols, precision="bf16"):
    """The ops of y = GELU(LayerNorm(x + r)), keeping h = x + r for the next residual, and
    three ways to run them as kernels.

    Returns ``(ops, sizes, outputs, plans)``; ``plans`` maps a name to a kernel partition:
    "one kernel per primitive" (eager PyTorch written out op by op), "library LayerNorm"
    (add, fused layer_norm, gelu: three kernels) and "one fused kernel" (what torch.compile's
    Inductor or XLA generate for a chain of pointwise ops and row reductions). Per-row
    statistics are ``rows`` elements; gamma and beta ``cols``. FLOP per element: add 1, mean 1,
    subtract 1, square 1, mean 1, scale 1, affine 2, GELU about 8 (the tanh form).
    """
    r = check_int("rows", rows, min_value=1)
    c = check_int("cols", cols, min_value=1)
    b = _bytes_per_element(precision)
    e = r * c
    big, row, col = b * e, b * r, b * c
    sizes = {"x": big, "r": big, "h": big, "mu": row, "centred": big, "sq": big, "var": row,
             "rstd": row, "norm": big, "gamma": col, "beta": col, "a": big, "y": big}
    ops = [
        ("add", ("x", "r"), ("h",), e),
        ("mean", ("h",), ("mu",), e),
        ("subtract", ("h", "mu"), ("centred",), e),
        ("square", ("centred",), ("sq",), e),
        ("variance", ("sq",), ("var",), e),
        ("rsqrt", ("var",), ("rstd",), 2 * r),
        ("scale", ("centred", "rstd"), ("norm",), e),
        ("affine", ("norm", "gamma", "beta"), ("a",), 2 * e),
        ("gelu", ("a",), ("y",), 8 * e),
    ]
    names = [o[0] for o in ops]
    plans = MappingProxyType({
        "one kernel per primitive": tuple((n,) for n in names),
        "library LayerNorm": (("add",), tuple(names[1:8]), ("gelu",)),
        "one fused kernel": (tuple(names),),
    })
    return ops, sizes, ("h", "y"), plans
