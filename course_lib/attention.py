"""Attention two ways: naive (the N x N scores in memory) and FlashAttention's tiled online softmax.

    O = softmax(Q K^T * scale) V          Q: (N, d), K: (N_k, d), V: (N_k, d_v), scale = 1/sqrt(d)

Naive attention writes the scores S and probabilities P (N x N each) to memory. FlashAttention
(Dao et al., "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness",
NeurIPS 2022, arXiv:2205.14135) never forms them: it walks blocks of keys, keeping per query
row a running maximum m, a running sum l of exponentials and an unnormalised output o,

    m' = max(m, rowmax(S_blk)),   alpha = exp(m - m'),   P_blk = exp(S_blk - m')
    l' = alpha * l + rowsum(P_blk),                      o' = alpha * o + P_blk V_blk

and divides o by l at the end. The result is exact (up to rounding), not an approximation.
Theorem 2 of the paper: with SRAM of M elements (d <= M <= N d), standard attention makes
Theta(N d + N^2) HBM accesses and FlashAttention Theta(N^2 d^2 / M).

Everything here is NumPy; leading batch/head dimensions broadcast. Drawing lives in
``course_lib.plots.attention``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validate import MAX_ELEMENTS, check_array, check_bool, check_choice, check_int, check_number, check_sequence

__all__ = [
    "H100_SFU_FLOPS_FA3",
    "exp_to_matmul_time",
    "WarpgroupSchedule",
    "warpgroup_schedule",
    "fp8_scores_error",
    "naive_attention",
    "flash_attention",
    "online_softmax_update",
    "AttentionTraffic",
    "naive_attention_traffic",
    "flash_attention_traffic",
    "paper_block_sizes",
    "paper_flash_hbm_elements",
    "naive_hbm_elements",
    "attention_memory_bytes",
    "MemorySweep",
    "memory_sweep",
    "TrafficSweep",
    "attention_traffic_sweep",
    "DEFAULT_BLOCK_SIZE",
]

#: Default query and key block: 512 x 512 float64 scores are 2 MiB, large enough that the
#: per-block matmuls amortise Python's loop overhead, small enough to stay far below 64 MB.
DEFAULT_BLOCK_SIZE = 512


# --------------------------------------------------------------------------- input checks

def _inputs(q, k, v, causal, scale):
    arrays = []
    for name, value in (("q", q), ("k", k), ("v", v)):
        arr = check_array(name, value, finite=False, dtype=None)
        if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
            raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
        if arr.ndim < 2:
            raise ValueError(f"{name} must have shape (..., sequence, head_dim), got shape {arr.shape}")
        if arr.shape[-1] == 0 or arr.shape[-2] == 0:
            raise ValueError(f"{name} must not be empty, got shape {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must contain only finite numbers (no NaN or infinity)")
        arrays.append(arr)
    q, k, v = arrays
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must share the head dimension: q is {q.shape}, k is {k.shape}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must have the same sequence length: k is {k.shape}, v is {v.shape}")
    try:
        np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(f"the leading (batch/head) dimensions of q {q.shape}, k {k.shape} and "
                         f"v {v.shape} do not broadcast") from None
    causal = check_bool("causal", causal)
    if causal and q.shape[-2] != k.shape[-2]:
        raise ValueError(f"causal masking needs as many queries as keys, got {q.shape[-2]} and {k.shape[-2]}")
    d = q.shape[-1]
    scale = 1.0 / math.sqrt(d) if scale is None else check_number("scale", scale, min_value=0, allow_min=False)
    dtype = np.result_type(q.dtype, k.dtype, v.dtype, np.float32)
    return q.astype(dtype, copy=False), k.astype(dtype, copy=False), v.astype(dtype, copy=False), causal, scale


def _block_sizes(block_size):
    if isinstance(block_size, tuple):
        if len(block_size) != 2:
            raise ValueError(f"block_size must be an int or a (block_q, block_k) pair, got {block_size!r}")
        return (check_int("block_size[0]", block_size[0], min_value=1),
                check_int("block_size[1]", block_size[1], min_value=1))
    b = check_int("block_size", block_size, min_value=1)
    return b, b


# --------------------------------------------------------------------------- the two algorithms

def naive_attention(q, k, v, causal=False, scale=None) -> np.ndarray:
    """softmax(Q K^T * scale) V with the full score matrix in memory (the reference).

    The row maximum is subtracted before exponentiating, so large scores do not overflow.
    With ``causal``, query i sees keys 0..i only.
    """
    q, k, v, causal, scale = _inputs(q, k, v, causal, scale)
    s = (q @ np.swapaxes(k, -1, -2)) * scale
    if causal:
        n = s.shape[-1]
        s = np.where(np.tri(n, dtype=bool), s, -np.inf)
    s -= s.max(axis=-1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=-1, keepdims=True)
    return s @ v


def online_softmax_update(m_prev, l_prev, o_prev, s_block, v_block):
    """One FlashAttention step: fold a block of scores into the running (m, l, o) of each row.

        m_new = max(m_prev, rowmax(s_block))
        alpha = exp(m_prev - m_new)                   (rescales what was summed so far)
        p     = exp(s_block - m_new)
        l_new = alpha * l_prev + rowsum(p)
        o_new = alpha * o_prev + p @ v_block          (unnormalised; the answer is o / l)

    Shapes: m_prev, l_prev (..., r); o_prev (..., r, d_v); s_block (..., r, c); v_block (..., c, d_v).
    Start from m = -inf, l = 0, o = 0. A row whose scores are all -inf so far (fully masked)
    keeps m = -inf, l = 0, o = 0 instead of turning into NaN.
    """
    m_prev, l_prev, o_prev = np.asarray(m_prev), np.asarray(l_prev), np.asarray(o_prev)
    s_block, v_block = np.asarray(s_block), np.asarray(v_block)
    if s_block.ndim < 2 or v_block.ndim < 2:
        raise ValueError(f"s_block and v_block must be at least 2-D, got shapes {s_block.shape} and {v_block.shape}")
    if m_prev.shape != s_block.shape[:-1] or l_prev.shape != m_prev.shape:
        raise ValueError(f"m_prev and l_prev must have shape {s_block.shape[:-1]} (one per row of s_block), "
                         f"got {m_prev.shape} and {l_prev.shape}")
    if v_block.shape[-2] != s_block.shape[-1]:
        raise ValueError(f"v_block must have one row per column of s_block ({s_block.shape[-1]}), "
                         f"got shape {v_block.shape}")
    if o_prev.shape != m_prev.shape + (v_block.shape[-1],):
        raise ValueError(f"o_prev must have shape {m_prev.shape + (v_block.shape[-1],)}, got {o_prev.shape}")
    m_new = np.maximum(m_prev, s_block.max(axis=-1))
    # exp(-inf - (-inf)) is NaN; a row that has seen only -inf keeps shift 0 so it stays at zero.
    shift = np.where(np.isneginf(m_new), 0.0, m_new)
    alpha = np.exp(m_prev - shift)
    p = np.exp(s_block - shift[..., None])
    l_new = alpha * l_prev + p.sum(axis=-1)
    o_new = alpha[..., None] * o_prev + p @ v_block
    return m_new, l_new, o_new


def flash_attention(q, k, v, block_size=DEFAULT_BLOCK_SIZE, causal=False, scale=None,
                    return_traffic=False):
    """Exact attention by FlashAttention's tiled online softmax, never forming the N x N scores.

    q: (..., N, d), k: (..., N_k, d), v: (..., N_k, d_v); leading dimensions broadcast.
    ``block_size`` is an int (queries and keys alike) or a ``(block_q, block_k)`` pair; it need
    not divide N. The loop order is FlashAttention-2's: each block of queries stays resident
    while every block of keys and values streams past it, so O is written once. Inside a block
    pair the work is two matmuls (block_q x d x block_k), hence fast in NumPy. With ``causal``,
    key blocks wholly above the diagonal are skipped, not just masked.

    With ``return_traffic`` also returns an :class:`AttentionTraffic` counting the elements
    this walk read from and wrote to the arrays that play HBM (Q, K, V, O and the row
    statistics), for comparison with :func:`flash_attention_traffic` and the paper.
    """
    q, k, v, causal, scale = _inputs(q, k, v, causal, scale)
    bq, bk = _block_sizes(block_size)
    return_traffic = check_bool("return_traffic", return_traffic)
    n_q, d = q.shape[-2], q.shape[-1]
    n_k, d_v = k.shape[-2], v.shape[-1]
    lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    heads = int(np.prod(lead)) if lead else 1
    out = np.empty(lead + (n_q, d_v), dtype=q.dtype)
    kt = np.swapaxes(k, -1, -2)
    reads = writes = 0
    for i0 in range(0, n_q, bq):
        i1 = min(i0 + bq, n_q)
        q_blk = q[..., i0:i1, :] * scale              # fold the scale into the small Q block
        reads += (i1 - i0) * d
        m = np.full(lead + (i1 - i0,), -np.inf, dtype=q.dtype)
        l = np.zeros(lead + (i1 - i0,), dtype=q.dtype)
        o = np.zeros(lead + (i1 - i0, d_v), dtype=q.dtype)
        j_end = min(n_k, i1) if causal else n_k       # keys past the block's last query: skip
        for j0 in range(0, j_end, bk):
            j1 = min(j0 + bk, j_end)
            s = q_blk @ kt[..., :, j0:j1]
            reads += (j1 - j0) * (d + d_v)
            if causal and j1 > i0:                     # the block touches the diagonal: mask it
                rows = np.arange(i0, i1)[:, None]
                cols = np.arange(j0, j1)[None, :]
                s = np.where(cols <= rows, s, -np.inf)
            m, l, o = online_softmax_update(m, l, o, s, v[..., j0:j1, :])
        out[..., i0:i1, :] = o / l[..., None]
        writes += (i1 - i0) * (d_v + 1)               # O and the log-sum-exp kept for backward
    if not return_traffic:
        return out
    traffic = AttentionTraffic("flash (counted)", n_q, d, reads * heads, writes * heads, bq, bk)
    return out, traffic


# --------------------------------------------------------------------------- traffic and memory

@dataclass(frozen=True)
class AttentionTraffic:
    """Elements moved between HBM and the chip by one attention forward pass."""

    method: str
    n: int
    d: int
    elements_read: float
    elements_written: float
    block_q: int | None = None
    block_k: int | None = None

    @property
    def elements_moved(self) -> float:
        return self.elements_read + self.elements_written

    def bytes_moved(self, bytes_per_element=2) -> float:
        b = check_number("bytes_per_element", bytes_per_element, min_value=0, allow_min=False)
        return b * self.elements_moved


def naive_attention_traffic(n, d, causal=False) -> AttentionTraffic:
    """Standard attention (the paper's Algorithm 0) in HBM elements, one head, N_k = N.

        read Q, K (2Nd); write S (N^2); read S, write P (2N^2); read P, V (N^2 + Nd); write O (Nd)
        total = 4N^2 + 4Nd

    A causal mask is applied to S in place and does not shrink S, so the count is the same.
    """
    n = check_int("n", n, min_value=1)
    d = check_int("d", d, min_value=1)
    check_bool("causal", causal)
    reads = 2 * n * d + n * n + n * n + n * d
    writes = n * n + n * n + n * d
    return AttentionTraffic("naive", n, d, float(reads), float(writes))


def flash_attention_traffic(n, d, block_size=DEFAULT_BLOCK_SIZE, causal=False) -> AttentionTraffic:
    """The elements :func:`flash_attention`'s loop moves, by formula (one head, N_k = N, d_v = d).

        reads  = N d  (each Q block once)  +  2 d * sum over query blocks of the keys it visits
        writes = N (d + 1)                  (O and one log-sum-exp per row)

    Non-causal, every query block visits all N keys: reads = N d + 2 N d * ceil(N / block_q).
    Causal, query block [i0, i1) visits keys [0, i1): about half as many.
    """
    n = check_int("n", n, min_value=1)
    d = check_int("d", d, min_value=1)
    bq, bk = _block_sizes(block_size)
    causal = check_bool("causal", causal)
    blocks = -(-n // bq)
    # causal: query block i visits keys [0, min((i + 1) * bq, n)); summed in closed form
    keys = bq * (blocks - 1) * blocks // 2 + n if causal else n * blocks
    reads = n * d + 2 * d * float(keys)
    writes = n * (d + 1)
    return AttentionTraffic("flash (formula)", n, d, reads, float(writes), bq, bk)


def paper_block_sizes(d, sram_elements) -> tuple[int, int]:
    """Algorithm 1's block sizes for SRAM of M elements: B_c = ceil(M / 4d), B_r = min(B_c, d)."""
    d = check_int("d", d, min_value=1)
    m_el = check_int("sram_elements", sram_elements, min_value=d)
    b_c = math.ceil(m_el / (4 * d))
    return min(b_c, d), b_c


def paper_flash_hbm_elements(n, d, sram_elements) -> float:
    """HBM elements of the paper's Algorithm 1 (outer loop over K/V blocks, inner over Q blocks).

        initialise O, l, m in HBM:             N d + 2N    writes
        load each K_j, V_j once:               2 N d       reads
        per outer step, for every Q block:     read Q_i, O_i, l_i, m_i; write O_i, l_i, m_i
                                               = 3 N d + 4 N per outer step, T_c = ceil(N / B_c) steps
        total = N d + 2N + 2 N d + T_c (3 N d + 4 N)  ~  12 N^2 d^2 / M   (Theorem 2: Theta(N^2 d^2 / M))
    """
    n = check_int("n", n, min_value=1)
    d = check_int("d", d, min_value=1)
    _, b_c = paper_block_sizes(d, sram_elements)
    t_c = math.ceil(n / b_c)
    return float(n * d + 2 * n + 2 * n * d + t_c * (3 * n * d + 4 * n))


def naive_hbm_elements(n, d) -> float:
    """Standard attention's HBM elements: 4N^2 + 4Nd (Theorem 2: Theta(N d + N^2))."""
    return naive_attention_traffic(n, d).elements_moved


def attention_memory_bytes(n, d, bytes_per_element=2, block_size=DEFAULT_BLOCK_SIZE, heads=1):
    """Memory beyond Q, K, V and O for one forward pass: ``(naive_bytes, flash_bytes)``.

        naive:  heads * N^2 * b                      (the score matrix; P can overwrite it)
        flash:  heads * (block_q*block_k + block_q*(d + 2)) * b  per block in flight, plus
                heads * N * b for the log-sum-exp saved for the backward pass

    32768 tokens in FP16, one head: 32768^2 * 2 B = 2.15 GB (2 GiB) for the scores alone.
    """
    n = check_int("n", n, min_value=1)
    d = check_int("d", d, min_value=1)
    b = check_number("bytes_per_element", bytes_per_element, min_value=0, allow_min=False)
    bq, bk = _block_sizes(block_size)
    h = check_int("heads", heads, min_value=1)
    bq, bk = min(bq, n), min(bk, n)
    naive = h * float(n) * n * b
    flash = h * b * (bq * bk + bq * (d + 2) + n)
    return naive, flash


@dataclass(frozen=True)
class MemorySweep:
    """Extra memory against sequence length for naive and flash attention."""

    n: np.ndarray
    d: int
    bytes_per_element: float
    block_size: tuple
    naive_bytes: np.ndarray
    flash_bytes: np.ndarray
    capacity_bytes: float | None = None
    capacity_label: str = ""
    measured_n: np.ndarray = None          # optional tracemalloc measurements (float64 NumPy)
    measured_naive_bytes: np.ndarray = None
    measured_flash_bytes: np.ndarray = None


def memory_sweep(ns, d=64, bytes_per_element=2, block_size=DEFAULT_BLOCK_SIZE, heads=1,
                 capacity_bytes=None, capacity_label="") -> MemorySweep:
    """:func:`attention_memory_bytes` for every sequence length in ``ns``."""
    ns = np.asarray([check_int("ns[i]", x, min_value=1)
                     for x in check_sequence("ns", ns, max_len=10_000)], dtype=np.int64)
    if capacity_bytes is not None:
        capacity_bytes = check_number("capacity_bytes", capacity_bytes, min_value=0, allow_min=False)
    if not isinstance(capacity_label, str):
        raise TypeError(f"capacity_label must be a string, got {type(capacity_label).__name__}")
    pairs = [attention_memory_bytes(int(x), d, bytes_per_element, block_size, heads) for x in ns]
    return MemorySweep(ns, int(d), float(bytes_per_element), _block_sizes(block_size),
                       np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs]),
                       capacity_bytes, capacity_label)


@dataclass(frozen=True)
class TrafficSweep:
    """HBM traffic against sequence length: naive, flash (formula), the paper's Algorithm 1."""

    n: np.ndarray
    d: int
    sram_elements: int
    block_size: tuple
    naive_elements: np.ndarray
    flash_elements: np.ndarray
    paper_elements: np.ndarray
    counted_n: np.ndarray
    counted_elements: np.ndarray
    bytes_per_element: float = 2.0
    current_n: int | None = None


def attention_traffic_sweep(ns, d=64, block_size=DEFAULT_BLOCK_SIZE, sram_elements=None,
                            count_ns=(), bytes_per_element=2, rng=None, current_n=None) -> TrafficSweep:
    """HBM elements for every N in ``ns``; for N in ``count_ns`` also run flash_attention and count.

    ``sram_elements`` defaults to the elements one block pair needs: block_q*d (Q) +
    2*block_k*d (K, V) + block_q*block_k (S) + block_q*d (O accumulator).
    """
    bq, bk = _block_sizes(block_size)
    d = check_int("d", d, min_value=1)
    if sram_elements is None:
        sram_elements = bq * d + 2 * bk * d + bq * bk + bq * d
    sram_elements = check_int("sram_elements", sram_elements, min_value=d)
    ns = np.asarray([check_int("ns[i]", x, min_value=1)
                     for x in check_sequence("ns", ns, max_len=10_000)], dtype=np.int64)
    count_ns = np.asarray([check_int("count_ns[i]", x, min_value=1, max_value=8192,
                                     why="each is counted by running flash_attention")
                           for x in check_sequence("count_ns", count_ns, min_len=0, max_len=16)],
                          dtype=np.int64)
    bytes_per_element = check_number("bytes_per_element", bytes_per_element, min_value=0,
                                      allow_min=False)
    if current_n is not None:
        current_n = check_int("current_n", current_n, min_value=1)
    if count_ns.size and not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator when count_ns is given")
    counted = []
    for x in count_ns:
        qkv = rng.standard_normal((3, int(x), d))
        _, traffic = flash_attention(qkv[0], qkv[1], qkv[2], block_size=(bq, bk), return_traffic=True)
        counted.append(traffic.elements_moved)
    return TrafficSweep(
        ns, d, sram_elements, (bq, bk),
        naive_elements=np.array([naive_hbm_elements(int(x), d) for x in ns]),
        flash_elements=np.array([flash_attention_traffic(int(x), d, (bq, bk)).elements_moved for x in ns]),
        paper_elements=np.array([paper_flash_hbm_elements(int(x), d, sram_elements) for x in ns]),
        counted_n=count_ns, counted_elements=np.array(counted, dtype=float),
        bytes_per_element=float(bytes_per_element), current_n=current_n)



# ----------------------------------------------------------------------------------------------
# FlashAttention-3 on Hopper: exponentials against matmuls, ping-pong warpgroups, FP8 scores
# ----------------------------------------------------------------------------------------------

#: Special-function (exp) throughput of the H100 SXM5 as FlashAttention-3 states it: "989 TFLOPS
#: of FP16 matmul but only 3.9 TFLOPS of special functions" (Shah et al. 2024, arXiv:2407.08608,
#: section 3.1). NVIDIA's datasheets give no such figure; it is the paper's.
H100_SFU_FLOPS_FA3 = 3.9e12


def exp_to_matmul_time(head_dim, matmul_flops_per_s, exp_per_s=H100_SFU_FLOPS_FA3) -> float:
    """Time of the exponentials over the time of the matmuls, per attention score.

    Each score needs one exp and 4d matmul FLOP (2d in Q K^T, 2d in P V):
        ratio = (1 / exp_per_s) / (4 d / matmul_flops_per_s)
    H100, d = 128: (1 / 3.9e12) / (512 / 989e12) = 0.50.
    """
    d = check_int("head_dim", head_dim, min_value=1)
    mm = check_number("matmul_flops_per_s", matmul_flops_per_s, min_value=0, allow_min=False)
    ex = check_number("exp_per_s", exp_per_s, min_value=0, allow_min=False)
    return (1.0 / ex) / (4.0 * d / mm)


@dataclass(frozen=True)
class WarpgroupSchedule:
    """Warpgroups sharing one tensor-core pipe: each alternates a GEMM and a softmax per block."""

    groups: int
    blocks_per_group: int
    gemm_s: float
    softmax_s: float
    gemm_start_s: np.ndarray          # (groups, blocks): when each block's GEMM started
    makespan_s: float

    @property
    def tensor_busy_fraction(self) -> float:
        """Share of the run the tensor cores spend on GEMMs."""
        return self.groups * self.blocks_per_group * self.gemm_s / self.makespan_s


def warpgroup_schedule(gemm_s, softmax_s, blocks_per_group, groups=2) -> WarpgroupSchedule:
    """Simulate ``groups`` warpgroups that each run GEMM then softmax on ``blocks_per_group`` blocks.

    The GEMMs share the tensor cores (one at a time, first ready first served); a softmax runs on
    its own warpgroup's units and overlaps other groups' GEMMs. This is FlashAttention-3's
    "ping-pong" scheduling (Shah et al. 2024, section 3.1) reduced to its timing. Closed forms:
    one group takes blocks x (gemm + softmax); two groups with softmax <= gemm take
    2 x blocks x gemm + softmax.
    """
    g = check_number("gemm_s", gemm_s, min_value=0, allow_min=False)
    s = check_number("softmax_s", softmax_s, min_value=0)
    n = check_int("blocks_per_group", blocks_per_group, min_value=1, max_value=100_000)
    k = check_int("groups", groups, min_value=1, max_value=64)
    ready = np.zeros(k)
    done = np.zeros(k, dtype=int)
    starts = np.zeros((k, n))
    tensor_free = 0.0
    for _ in range(k * n):
        waiting = np.flatnonzero(done < n)
        i = waiting[np.argmin(ready[waiting])]            # first ready (lowest index on a tie)
        start = max(ready[i], tensor_free)
        starts[i, done[i]] = start
        tensor_free = start + g
        ready[i] = start + g + s
        done[i] += 1
    return WarpgroupSchedule(k, n, g, s, starts, float(ready.max()))


def _hadamard(n: int) -> np.ndarray:
    h = np.ones((1, 1))
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return h / np.sqrt(n)


def fp8_scores_error(q, k, scaling="tensor", block_rows=64, rotate=False, rng=None) -> float:
    """Relative RMS error of Q K^T when Q and K are cast to FP8 E4M3 first.

    ``scaling``: "tensor" (one scale each for Q and K, their max mapped to E4M3's 448) or
    "block" (one scale per ``block_rows`` rows, as FlashAttention-3 quantises per tile).
    ``rotate``: multiply Q and K by the same random orthogonal matrix M (a Hadamard matrix
    with random signs) before casting; (QM)(KM)^T = Q K^T, and the rotation spreads an outlier
    feature over all d features ("incoherent processing", Shah et al. 2024, section 3.3).
    d must be a power of two when rotating. Error: ||S_fp8 - S|| / ||S|| (Frobenius).
    """
    from .formats import round_to_format
    qa = check_array("q", q, ndim=2)
    ka = check_array("k", k, ndim=2)
    if qa.shape[1] != ka.shape[1]:
        raise ValueError(f"q and k must have the same head dimension, got {qa.shape[1]} and {ka.shape[1]}")
    if min(qa.shape + ka.shape) == 0:
        raise ValueError(f"q and k must hold at least one row and one feature, got shapes {qa.shape} and {ka.shape}")
    if qa.shape[0] * ka.shape[0] > MAX_ELEMENTS or qa.shape[1] > 4096:
        raise ValueError(f"q rows x k rows must be <= {MAX_ELEMENTS:.0e} scores and the head dimension <= 4096 "
                         f"(more would need hundreds of MB), got shapes {qa.shape} and {ka.shape}")
    mode = check_choice("scaling", scaling, ("tensor", "block"))
    br = check_int("block_rows", block_rows, min_value=1)
    rot = check_bool("rotate", rotate)
    exact = qa @ ka.T
    norm = float(np.linalg.norm(exact))
    if not 0 < norm < np.inf:
        raise ValueError("q and k must give scores Q K^T that are not all zero and stay finite "
                         f"(||Q K^T|| = {norm:g}): the relative error is undefined otherwise")
    if rot:
        d = qa.shape[1]
        if d & (d - 1):
            raise ValueError(f"rotate=True needs a power-of-two head dimension, got {d}")
        if not isinstance(rng, np.random.Generator):
            raise TypeError("rotate=True needs rng, a numpy Generator, for the random signs")
        m = _hadamard(d) * rng.choice([-1.0, 1.0], size=d)[None, :]
        qa, ka = qa @ m, ka @ m

    def cast(x):
        out = np.empty_like(x)
        step = x.shape[0] if mode == "tensor" else br
        for r0 in range(0, x.shape[0], step):
            blk = x[r0:r0 + step]
            scale = 448.0 / max(float(np.abs(blk).max()), np.finfo(float).tiny)
            out[r0:r0 + step] = round_to_format(blk * scale, "fp8_e4m3", saturate=True) / scale
        return out

    approx = cast(qa) @ cast(ka).T
    return float(np.linalg.norm(approx - exact) / norm)

