"""The memory hierarchy: levels and their speeds, a cache simulator, shared-memory banks, double buffering.

Four parts, all pure NumPy, SI units (bytes, bytes/s, seconds):

* **The ladder.** ``memory_hierarchy(acc)`` lists registers, shared memory / L1, L2, device memory
  (HBM) and the host and peer links with capacity and bandwidth. Datasheet figures come from the
  catalog; on-chip bandwidths are *derived* from catalog fields (or bounded, where nothing is
  published to derive them from, such as the L2 of every part but the V100 and A100), and each
  level's ``source`` says how. ``transfer_table`` gives the time to move one tensor across each level:
  ``t = bytes / bandwidth``.
* **A set-associative LRU cache simulator**, vectorised (``simulate_cache``), with trace generators
  for sequential, strided, random and tiled access (``make_trace``) and a hit-rate sweep.
* **Shared-memory bank conflicts**: 32 banks of 4-byte words; a warp's request takes as many passes
  as the largest number of *distinct* words that fall in one bank (``conflict_degree``).
* **Double buffering**: a two-stage copy/compute pipeline (``pipeline_timeline``); the copy hides
  behind the compute exactly when ``t_copy <= t_compute``.

Drawing lives in ``course_lib.plots.memory``; the explorer widgets in ``course_lib.widgets.memory``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validate import MAX_ELEMENTS, MAX_INT, check_array, check_choice, check_count, check_int, check_number
from .hardware import SHARED_MEM_BYTES_PER_CLOCK_PER_SM, Accelerator, get_accelerator

__all__ = [
    "SHARED_MEM_BYTES_PER_CLOCK_PER_SM",
    "N_BANKS",
    "BANK_BYTES",
    "MemoryLevel",
    "memory_hierarchy",
    "transfer_time_s",
    "TransferRow",
    "transfer_table",
    "CacheResult",
    "n_sets",
    "simulate_cache",
    "PATTERNS",
    "make_trace",
    "HitRateCurve",
    "hit_rate_sweep",
    "bank_of",
    "conflict_degree",
    "strided_conflict_degree",
    "column_read_conflict_degree",
    "PipelineTimeline",
    "pipeline_timeline",
    "pipelined_time_s",
    "copy_hidden",
    "BUS_BANDWIDTH_TOLERANCE",
    "bus_bandwidth_bytes_per_s",
    "BusCheck",
    "bus_check",
    "MEMORY_WALL_PARTS",
    "MemoryWall",
    "memory_wall",
    "TMA_MAX_BOX_ELEMENTS",
    "CP_ASYNC_MAX_BYTES",
    "TileCopyWork",
    "tile_copy_work",
    "multicast_l2_reads",
]

#: Shared memory delivers one 4-byte word from each of its 32 banks per clock: 128 bytes/clock/SM.
#: Source: NVIDIA CUDA C++ Programming Guide, "Shared Memory" under compute capabilities 5.x and
#: later: "Shared memory has 32 banks ... Each bank has a bandwidth of 32 bits per clock cycle."
#: Banks of shared memory, and the width of one bank in bytes (same source).
N_BANKS = 32
BANK_BYTES = 4

_FMA_OPERANDS = 3          # a fused multiply-add d = a*b + c reads three registers
_FP32_BYTES = 4
_GATHER_LIMIT = 1 << 22    # elements in one (queries x block) gather of the cache simulator


# --------------------------------------------------------------------------------------------
# 1. The ladder
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MemoryLevel:
    """One level of an accelerator's memory hierarchy.

    ``capacity_bytes`` is the total across the chip (None where it has no fixed size, the host);
    ``bandwidth_bytes_per_s`` is the chip-wide rate (None where neither published nor derivable);
    ``bandwidth_low/high_bytes_per_s`` bound it where only bounds are known (then the point value is
    None). ``kind`` is "catalog" (a datasheet number), "derived" (arithmetic on catalog fields, shown
    in ``source``) or "bounds".
    """

    name: str
    scope: str
    capacity_bytes: float | None
    bandwidth_bytes_per_s: float | None
    kind: str
    source: str
    bandwidth_low_bytes_per_s: float | None = None
    bandwidth_high_bytes_per_s: float | None = None

    @property
    def bandwidth_for_plot(self) -> float | None:
        """The point bandwidth, or the geometric middle of the bounds (only for placing a label)."""
        if self.bandwidth_bytes_per_s is not None:
            return self.bandwidth_bytes_per_s
        if self.bandwidth_low_bytes_per_s and self.bandwidth_high_bytes_per_s:
            return math.sqrt(self.bandwidth_low_bytes_per_s * self.bandwidth_high_bytes_per_s)
        return None


def _register_bandwidth(acc: Accelerator) -> float | None:
    """Operand reads that keep every FP32 lane busy: (FP32 FLOP/clock/SM / 2) FMA x 3 x 4 B x SMs x clock."""
    if not (acc.fp32_flops_per_clock_per_sm and acc.boost_clock_hz):
        return None
    fma_per_clock = acc.fp32_flops_per_clock_per_sm / 2
    return fma_per_clock * _FMA_OPERANDS * _FP32_BYTES * acc.sm_count * acc.boost_clock_hz


def memory_hierarchy(accelerator="H100 SXM") -> tuple[MemoryLevel, ...]:
    """The levels the catalog knows for ``accelerator``, fastest first.

    * registers: capacity = register file per SM x SMs; bandwidth *derived* as the operand reads
      that keep every FP32 lane issuing one FMA per clock: (FP32 FLOP/clock/SM / 2) x 3 operands x
      4 bytes x SMs x boost clock. H100 SXM: 128 x 12 B x 132 x 1.98 GHz = 401 TB/s.
    * shared memory / L1: capacity = shared memory per SM x SMs (the L1 share is not in the
      catalog); bandwidth *derived*: 128 B/clock/SM x SMs x boost clock = 33.5 TB/s on H100 SXM.
    * L2: capacity from the catalog. Where NVIDIA publishes an L2 read bandwidth per clock (the
      A100 whitepaper: 5120 B/clock for the A100, 2048 for the V100) it is *derived* as that figure
      x boost clock: 5120 x 1.41 GHz = 7.22 TB/s on the A100. For the other parts (Hopper, Ada,
      Blackwell: no published figure) only *bounds* are given: at least the HBM bandwidth (every
      HBM byte passes through L2 on its way to an SM) and at most the shared-memory/L1 figure (the
      SMs cannot take in more than their L1 delivers).
    * HBM (device memory): capacity and bandwidth from the datasheet.
    * peer GPUs over NVLink and the host over PCIe: datasheet totals are for both directions;
      the per-direction half is given, since a copy moves data one way.
    """
    acc = get_accelerator(accelerator)
    levels = []
    reg_bw = _register_bandwidth(acc)
    reg_cap = acc.register_file_bytes_per_sm * acc.sm_count if acc.register_file_bytes_per_sm else None
    if reg_cap is not None or reg_bw is not None:
        levels.append(MemoryLevel(
            "registers", f"per {acc.compute_unit}, private to each thread", reg_cap, reg_bw,
            "derived" if reg_bw is not None else "catalog",
            "capacity: register file per SM x SMs; bandwidth derived: (FP32 FLOP/clock/SM / 2) FMA "
            "x 3 operands x 4 B x SMs x boost clock" if reg_bw is not None
            else "capacity: register file per SM x SMs; bandwidth not derivable (no clock)"))
    smem_bw = acc.shared_mem_bandwidth
    smem_cap = acc.shared_mem_bytes_per_sm * acc.sm_count if acc.shared_mem_bytes_per_sm else None
    if smem_cap is not None:
        levels.append(MemoryLevel(
            "shared memory / L1", f"per {acc.compute_unit}, shared by a block", smem_cap, smem_bw,
            "derived" if smem_bw is not None else "catalog",
            "capacity: shared memory per SM x SMs; bandwidth derived: 32 banks x 4 B = 128 B/clock/SM "
            "x SMs x boost clock (CUDA C++ Programming Guide)" if smem_bw is not None
            else "capacity: shared memory per SM x SMs; bandwidth not published"))
    if acc.l2_cache_bytes and acc.l2_bandwidth is not None:
        levels.append(MemoryLevel(
            "L2", "chip, shared by all SMs", acc.l2_cache_bytes, acc.l2_bandwidth, "derived",
            f"capacity: catalog; bandwidth derived: published L2 read bandwidth "
            f"{acc.l2_read_bytes_per_clock} B/clock x boost clock (NVIDIA A100 whitepaper, L2 cache section)"))
    elif acc.l2_cache_bytes:
        low = acc.mem_bandwidth
        high = smem_bw if smem_bw is not None and smem_bw > low else None
        levels.append(MemoryLevel(
            "L2", "chip, shared by all SMs", acc.l2_cache_bytes, None,
            "bounds" if high is not None else "catalog",
            "capacity: catalog; no L2 bandwidth published for this part: bounded below by HBM "
            "bandwidth and above by the shared-memory/L1 figure" if high is not None
            else "capacity: catalog; no L2 bandwidth published for this part",
            bandwidth_low_bytes_per_s=low if high is not None else None,
            bandwidth_high_bytes_per_s=high))
    levels.append(MemoryLevel(
        f"device memory ({acc.mem_type})", "chip, off-die", acc.mem_capacity, acc.mem_bandwidth,
        "catalog", f"catalog: {acc.source}"))
    if acc.interconnect_bandwidth:
        levels.append(MemoryLevel(
            f"peer accelerator ({acc.interconnect})", "between accelerators", None, acc.interconnect_bandwidth / 2,
            "catalog", "catalog total for both directions, halved"))
    if acc.host_link_bandwidth:
        levels.append(MemoryLevel(
            f"host memory ({acc.host_link})", "CPU memory across the bus", None, acc.host_link_bandwidth / 2,
            "catalog", "catalog total for both directions, halved"))
    return tuple(levels)


def transfer_time_s(tensor_bytes, bandwidth_bytes_per_s) -> float:
    """Time to move ``tensor_bytes`` at ``bandwidth_bytes_per_s``: t = bytes / bandwidth (seconds).

    >>> transfer_time_s(2 * 4096 * 4096, 3.35e12)   # a 4096 x 4096 BF16 matrix over H100 HBM3
    1.0016191044776119e-05
    """
    b = check_number("tensor_bytes", tensor_bytes, min_value=0)
    bw = check_number("bandwidth_bytes_per_s", bandwidth_bytes_per_s, min_value=0, allow_min=False)
    return b / bw


@dataclass(frozen=True)
class TransferRow:
    """Moving one tensor across one level: the time (or its bounds) and whether the tensor fits."""

    level: MemoryLevel
    tensor_bytes: float
    t_s: float | None
    t_low_s: float | None
    t_high_s: float | None
    fits: bool | None


def transfer_table(tensor_bytes, accelerator="H100 SXM") -> list[TransferRow]:
    """For each level of ``memory_hierarchy``: time to stream ``tensor_bytes`` through it, and whether it fits.

    Where a level has only bandwidth bounds, ``t_low_s``/``t_high_s`` hold the time range
    (fast bound first). ``fits`` is None for the links (no capacity of their own).
    """
    b = check_number("tensor_bytes", tensor_bytes, min_value=0)
    rows = []
    for level in memory_hierarchy(accelerator):
        t = t_low = t_high = None
        if level.bandwidth_bytes_per_s is not None:
            t = b / level.bandwidth_bytes_per_s
        elif level.bandwidth_low_bytes_per_s and level.bandwidth_high_bytes_per_s:
            t_low = b / level.bandwidth_high_bytes_per_s
            t_high = b / level.bandwidth_low_bytes_per_s
        fits = None if level.capacity_bytes is None else bool(b <= level.capacity_bytes)
        rows.append(TransferRow(level, b, t, t_low, t_high, fits))
    return rows


# --------------------------------------------------------------------------------------------
# 2. A set-associative LRU cache simulator
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CacheResult:
    """Outcome of running an address trace through one cache.

    ``hit`` is per access, in trace order. ``hit_rate = hits / accesses``.
    """

    capacity_bytes: int
    line_bytes: int
    ways: int
    sets: int
    hit: np.ndarray

    @property
    def accesses(self) -> int:
        return int(self.hit.size)

    @property
    def hits(self) -> int:
        return int(np.count_nonzero(self.hit))

    @property
    def misses(self) -> int:
        return self.accesses - self.hits

    @property
    def hit_rate(self) -> float:
        if not self.accesses:
            raise ValueError("hit_rate is undefined: the addresses given to simulate_cache were empty")
        return self.hits / self.accesses

    @property
    def bytes_from_next_level(self) -> int:
        """Each miss fetches one whole line from the level below: misses x line_bytes."""
        return self.misses * self.line_bytes


def n_sets(capacity_bytes, line_bytes=128, ways=4) -> int:
    """Number of sets: capacity / (line_bytes x ways). It must come out a whole number.

    >>> n_sets(32 * 1024, 128, 4)     # 32 KiB, 128-byte lines, 4-way: 64 sets
    64
    """
    cap = check_int("capacity_bytes", capacity_bytes, min_value=1)
    line = check_int("line_bytes", line_bytes, min_value=1)
    w = check_int("ways", ways, min_value=1)
    if cap % (line * w):
        raise ValueError(f"capacity_bytes ({cap}) must be a multiple of line_bytes x ways "
                         f"({line} x {w} = {line * w})")
    return cap // (line * w)


def _addresses(name, addresses) -> np.ndarray:
    if isinstance(addresses, (str, bytes)) or not hasattr(addresses, "__len__"):
        raise TypeError(f"{name} must be a 1-D array of non-negative integer byte addresses")
    arr = np.asarray(addresses)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
        raise TypeError(f"{name} must hold integers (byte addresses), got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    arr = arr.astype(np.int64, copy=False)
    if arr.size and arr.min() < 0:
        raise ValueError(f"{name} must be non-negative byte addresses")
    return arr


def simulate_cache(addresses, capacity_bytes, line_bytes=128, ways=4) -> CacheResult:
    """Run a trace of byte addresses through a set-associative cache with LRU replacement.

    Line = address // line_bytes; set = line mod sets. Within a set, LRU with W ways hits exactly
    when fewer than W *distinct* lines of that set were touched since the previous access to the
    same line (the LRU stack property). The simulator uses that directly, vectorised:

    1. order accesses by set (stably), so each set's accesses are contiguous;
    2. for each access find the previous access to its line (``prev``) and each access's next one
       (``nxt``); a first touch is a compulsory miss, and a gap shorter than W is a sure hit;
    3. for the rest, count the distinct lines in the gap as the accesses j in it whose next touch is
       after this access (the last touch of each line in the gap), scanning backwards in growing
       blocks for all open accesses at once until W are found (miss) or the gap ends (hit).

    Cost: two sorts plus about W steps per access that needs a scan, independent of how the trace
    spreads over sets: millions of accesses per second at 4 to 16 ways, far fewer for a large
    fully associative cache (``ways = capacity_bytes // line_bytes``), where W is in the hundreds.
    """
    addr = _addresses("addresses", addresses)
    if addr.size > MAX_ELEMENTS:
        raise ValueError(f"addresses must hold at most {MAX_ELEMENTS:,} accesses (more would take "
                         f"minutes), got {addr.size:,}")
    sets = n_sets(capacity_bytes, line_bytes, ways)
    line_bytes, ways = int(line_bytes), int(ways)
    n = addr.size
    hit_sorted = np.zeros(n, dtype=bool)
    if n == 0:
        return CacheResult(int(capacity_bytes), line_bytes, ways, sets, hit_sorted)

    line = addr // line_bytes
    set_idx = line % sets
    order = np.argsort(set_idx, kind="stable")
    line_s = line[order]
    # prev/nxt: neighbours in (line, position) order; a line lives in one set, so they stay in it.
    by_line = np.argsort(line_s, kind="stable")
    same = line_s[by_line[1:]] == line_s[by_line[:-1]]
    prev = np.full(n, -1, dtype=np.int64)
    nxt = np.full(n, n, dtype=np.int64)
    prev[by_line[1:][same]] = by_line[:-1][same]
    nxt[by_line[:-1][same]] = by_line[1:][same]

    pos = np.arange(n, dtype=np.int64)
    gap = pos - prev - 1                       # accesses strictly between the two touches
    has_prev = prev >= 0
    hit_sorted[has_prev & (gap < ways)] = True
    open_k = pos[has_prev & (gap >= ways)]

    found = np.zeros(open_k.size, dtype=np.int64)   # distinct lines seen so far in each gap
    scanned = np.zeros(open_k.size, dtype=np.int64)  # how far back each gap has been scanned
    width = max(ways, 8)
    while open_k.size:
        keep = np.zeros(open_k.size, dtype=bool)
        new_found = np.zeros(open_k.size, dtype=np.int64)
        batch = max(1, _GATHER_LIMIT // width)
        for lo in range(0, open_k.size, batch):
            sl = slice(lo, lo + batch)
            k = open_k[sl]
            j = (k - scanned[sl])[:, None] - np.arange(1, width + 1, dtype=np.int64)[None, :]
            inside = j > prev[k][:, None]
            last_touch = inside & (nxt[np.where(inside, j, 0)] > k[:, None])
            counts = found[sl][:, None] + np.cumsum(last_touch, axis=1)
            is_miss = counts[:, -1] >= ways
            is_hit = ~inside[:, -1] & ~is_miss        # the gap ended inside this block
            hit_sorted[k[is_hit]] = True
            keep[sl] = ~(is_miss | is_hit)
            new_found[sl] = counts[:, -1]
        found = new_found[keep]
        scanned = scanned[keep] + width
        open_k = open_k[keep]
        width *= 2

    hit = np.empty(n, dtype=bool)
    hit[order] = hit_sorted
    return CacheResult(int(capacity_bytes), line_bytes, ways, sets, hit)


#: Access patterns ``make_trace`` knows.
PATTERNS = ("sequential", "strided", "random", "tiled")


def make_trace(pattern, working_set_bytes, n_accesses, element_bytes=4, stride_elements=33,
               tile_bytes=8192, reuse=8, rng=None) -> np.ndarray:
    """Byte addresses of ``n_accesses`` loads over a buffer of ``working_set_bytes``.

    * "sequential": sweep the buffer element by element, again and again.
    * "strided": element i*stride_elements mod (elements), i = 0, 1, ...; an odd stride visits every
      element before repeating, a stride of a whole line uses one element per line.
    * "random": independent uniform elements (needs ``rng``, a numpy Generator).
    * "tiled": split the buffer into tiles of ``tile_bytes``; sweep each tile ``reuse`` times, then
      move to the next (blocking, as a tiled matmul reuses a tile held on chip).
    """
    pattern = check_choice("pattern", pattern, PATTERNS)
    ws = check_int("working_set_bytes", working_set_bytes, min_value=1)
    n = check_count("n_accesses", n_accesses, min_value=0)
    eb = check_int("element_bytes", element_bytes, min_value=1)
    stride = check_int("stride_elements", stride_elements, min_value=1)
    tb = check_int("tile_bytes", tile_bytes, min_value=eb)
    r = check_int("reuse", reuse, min_value=1)
    if ws < eb:
        raise ValueError(f"working_set_bytes ({ws}) must hold at least one element of {eb} bytes")
    elements = ws // eb
    i = np.arange(n, dtype=np.int64)
    if pattern == "sequential":
        idx = i % elements
    elif pattern == "strided":
        idx = (i * (stride % elements)) % elements
    elif pattern == "random":
        if not isinstance(rng, np.random.Generator):
            raise TypeError("rng must be a numpy.random.Generator for the random pattern "
                            "(e.g. np.random.default_rng(0))")
        idx = rng.integers(0, elements, size=n, dtype=np.int64)
    else:
        per_tile = max(1, min(tb // eb, elements))
        n_tiles = -(-elements // per_tile)
        sweep = i // per_tile                  # which sweep of which tile
        tile = (sweep // r) % n_tiles
        idx = tile * per_tile + i % per_tile
        idx = np.where(idx < elements, idx, idx % elements)
    return idx * eb


@dataclass(frozen=True)
class HitRateCurve:
    """Hit rate of one access pattern against working-set size, for one cache."""

    pattern: str
    working_set_bytes: np.ndarray
    hit_rate: np.ndarray
    capacity_bytes: int
    line_bytes: int
    ways: int


def hit_rate_sweep(pattern, working_sets_bytes, capacity_bytes, line_bytes=128, ways=4,
                   n_accesses=20000, rng=None, **trace_kwargs) -> HitRateCurve:
    """``simulate_cache(make_trace(pattern, ws, ...))`` for every working set ``ws``; hit rates in order."""
    sizes = check_array("working_sets_bytes", working_sets_bytes, ndim=(0, 1)).reshape(-1)
    check_count("n_accesses", n_accesses, max_value=MAX_ELEMENTS // max(1, sizes.size),
                why="the sweep simulates n_accesses per working set")
    if sizes.size == 0 or np.any(sizes < 1) or np.any(sizes > MAX_INT):
        raise ValueError("working_sets_bytes must be a non-empty list of sizes >= 1 byte")
    rates = np.empty(sizes.size)
    for k, ws in enumerate(sizes.astype(np.int64)):
        trace = make_trace(pattern, int(ws), n_accesses, rng=rng, **trace_kwargs)
        rates[k] = simulate_cache(trace, capacity_bytes, line_bytes, ways).hit_rate
    return HitRateCurve(check_choice("pattern", pattern, PATTERNS), sizes.astype(np.int64), rates,
                        int(capacity_bytes), int(line_bytes), int(ways))


# --------------------------------------------------------------------------------------------
# 3. Shared-memory bank conflicts
# --------------------------------------------------------------------------------------------

def bank_of(byte_addresses, n_banks=N_BANKS, bank_bytes=BANK_BYTES) -> np.ndarray:
    """Bank of each byte address: (address // bank_bytes) mod n_banks. Byte 132 -> word 33 -> bank 1."""
    arr = np.asarray(byte_addresses)
    flat = _addresses("byte_addresses", arr.reshape(-1))
    nb = check_int("n_banks", n_banks, min_value=1)
    bb = check_int("bank_bytes", bank_bytes, min_value=1)
    return ((flat // bb) % nb).reshape(arr.shape)


def conflict_degree(byte_addresses, n_banks=N_BANKS, bank_bytes=BANK_BYTES):
    """Passes one warp-wide shared-memory request needs: the most distinct words in any one bank.

    ``byte_addresses`` has shape (..., lanes), one row per request (4-byte loads). Lanes reading
    the *same* word are served by one broadcast, so only distinct words count. 1 means
    conflict-free; 32 means fully serialised. Returns an int for one request, else an array.
    """
    arr = np.asarray(byte_addresses)
    if arr.ndim == 0 or arr.shape[-1] == 0:
        raise ValueError("byte_addresses must have shape (..., lanes) with at least one lane")
    flat = _addresses("byte_addresses", arr.reshape(-1))
    nb = check_int("n_banks", n_banks, min_value=1)
    bb = check_int("bank_bytes", bank_bytes, min_value=1)
    rows = flat.reshape(-1, arr.shape[-1])
    words = np.sort(rows // bb, axis=1)
    distinct = np.ones_like(words, dtype=bool)
    distinct[:, 1:] = words[:, 1:] != words[:, :-1]
    bank = words % nb
    r = np.broadcast_to(np.arange(rows.shape[0])[:, None], bank.shape)
    counts = np.zeros((rows.shape[0], nb), dtype=np.int64)
    np.add.at(counts, (r[distinct], bank[distinct]), 1)
    degree = counts.max(axis=1)
    if arr.ndim == 1:
        return int(degree[0])
    return degree.reshape(arr.shape[:-1])


def strided_conflict_degree(stride_words, lanes=32, n_banks=N_BANKS) -> int:
    """Conflict degree when lane t reads 4-byte word t * stride_words: gcd(stride, banks) for a full warp.

    Lane t lands in bank (t * s) mod 32; the banks reached repeat with period 32 / gcd(s, 32), so
    each bank serves gcd(s, 32) distinct words. Stride 0 is a broadcast (degree 1). For fewer lanes
    than banks the count is ceil(lanes / period). Stride 2 -> 2-way, 32 -> 32-way, 33 -> 1.
    """
    s = check_int("stride_words", stride_words, min_value=0)
    t = check_int("lanes", lanes, min_value=1)
    nb = check_int("n_banks", n_banks, min_value=1)
    if s == 0:
        return 1
    period = nb // math.gcd(s, nb)
    return -(-t // period)


def column_read_conflict_degree(row_words, pad_words=0, lanes=32, n_banks=N_BANKS) -> int:
    """A tile stored row-major with ``row_words + pad_words`` words per row; lane t reads row t of one column.

    The stride between lanes is the padded row length, so the degree is
    ``strided_conflict_degree(row_words + pad_words)``: a 32-wide float tile gives 32-way conflicts,
    one word of padding (33) removes them.
    """
    r = check_int("row_words", row_words, min_value=1)
    p = check_int("pad_words", pad_words, min_value=0)
    return strided_conflict_degree(r + p, lanes, n_banks)


# --------------------------------------------------------------------------------------------
# 4. Copy and compute: asynchronous copies and double buffering
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PipelineTimeline:
    """Start and end times (seconds) of each tile's copy and compute, and the total."""

    n_tiles: int
    buffers: int
    t_copy_s: float
    t_compute_s: float
    copy_start_s: np.ndarray
    copy_end_s: np.ndarray
    compute_start_s: np.ndarray
    compute_end_s: np.ndarray

    @property
    def total_s(self) -> float:
        return float(self.compute_end_s[-1])

    @property
    def compute_busy_fraction(self) -> float:
        """Fraction of the run the compute units are working: n t_compute / total."""
        return self.n_tiles * self.t_compute_s / self.total_s


def pipeline_timeline(n_tiles, t_copy_s, t_compute_s, buffers=2) -> PipelineTimeline:
    """Event times of a copy engine and a compute unit sharing ``buffers`` tile buffers.

    Rules: copies run one after another; tile i's copy may start once copy i-1 is done and its
    buffer is free (the compute of tile i - buffers has finished); compute i starts when copy i
    and compute i-1 are done. One buffer serialises copy and compute; two or more overlap them.
    """
    n = check_count("n_tiles", n_tiles, max_value=100_000, why="the timeline is computed tile by tile")
    tc = check_number("t_copy_s", t_copy_s, min_value=0)
    tk = check_number("t_compute_s", t_compute_s, min_value=0)
    b = check_int("buffers", buffers, min_value=1)
    cs, ce, ks, ke = (np.zeros(n) for _ in range(4))
    for i in range(n):        # n is a handful of tiles in every use here; the recurrence is sequential
        free = ke[i - b] if i >= b else 0.0
        cs[i] = max(ce[i - 1] if i else 0.0, free)
        ce[i] = cs[i] + tc
        ks[i] = max(ce[i], ke[i - 1] if i else 0.0)
        ke[i] = ks[i] + tk
    return PipelineTimeline(n, b, tc, tk, cs, ce, ks, ke)


def pipelined_time_s(n_tiles, t_copy_s, t_compute_s, buffers=2) -> float:
    """Closed form: one buffer, n (t_copy + t_compute); two or more, t_copy + t_compute + (n-1) max(t_copy, t_compute)."""
    n = check_count("n_tiles", n_tiles, max_value=100_000, why="the timeline is computed tile by tile")
    tc = check_number("t_copy_s", t_copy_s, min_value=0)
    tk = check_number("t_compute_s", t_compute_s, min_value=0)
    b = check_int("buffers", buffers, min_value=1)
    if b == 1:
        return n * (tc + tk)
    return tc + tk + (n - 1) * max(tc, tk)


def copy_hidden(t_copy_s, t_compute_s) -> bool:
    """True when a double-buffered copy hides entirely behind the compute: t_copy <= t_compute."""
    tc = check_number("t_copy_s", t_copy_s, min_value=0)
    tk = check_number("t_compute_s", t_compute_s, min_value=0)
    return tc <= tk


# --------------------------------------------------------------------------------------------
# 5. Where device-memory bandwidth comes from, and how it kept pace with compute
# --------------------------------------------------------------------------------------------

#: Relative tolerance for bus width x data rate against a datasheet bandwidth. Datasheets round
#: bandwidth to three significant figures (3.35 TB/s, 900 GB/s), which is off by at most 0.5%;
#: the per-pin rate is rounded too (5.238 Gbit/s from a 2619 MHz clock), so twice that.
BUS_BANDWIDTH_TOLERANCE = 0.01


def bus_bandwidth_bytes_per_s(bus_width_bits, data_rate_bits_per_s_per_pin) -> float:
    """Peak bandwidth of a memory interface: every data pin moves ``data_rate`` bits per second.

        bandwidth = bus_width_bits x data_rate_per_pin / 8

    H100 SXM: 5120 pins x 5.238 Gbit/s / 8 = 3.352 TB/s (the datasheet's 3.35 TB/s). An HBM stack
    has a 1024-bit interface (JEDEC JESD235/JESD238), so five stacks give the 5120-bit bus.
    """
    w = check_int("bus_width_bits", bus_width_bits, min_value=1, max_value=1 << 20)
    r = check_number("data_rate_bits_per_s_per_pin", data_rate_bits_per_s_per_pin, min_value=0,
                     allow_min=False, max_value=1e12)
    return w * r / 8


@dataclass(frozen=True)
class BusCheck:
    """An accelerator's datasheet bandwidth against its bus width and per-pin data rate."""

    accelerator: str
    mem_type: str
    bandwidth_bytes_per_s: float
    bus_width_bits: int | None
    data_rate_bits_per_s_per_pin: float | None

    @property
    def implied_rate_bits_per_s_per_pin(self) -> float | None:
        """The per-pin rate the datasheet bandwidth implies: bandwidth x 8 / bus width."""
        return None if self.bus_width_bits is None else self.bandwidth_bytes_per_s * 8 / self.bus_width_bits

    @property
    def bus_bandwidth_bytes_per_s(self) -> float | None:
        if self.bus_width_bits is None or self.data_rate_bits_per_s_per_pin is None:
            return None
        return bus_bandwidth_bytes_per_s(self.bus_width_bits, self.data_rate_bits_per_s_per_pin)

    @property
    def rel_difference(self) -> float | None:
        """(bus width x rate / 8) / datasheet bandwidth - 1, where both are known."""
        b = self.bus_bandwidth_bytes_per_s
        return None if b is None else b / self.bandwidth_bytes_per_s - 1

    @property
    def agrees(self) -> bool | None:
        d = self.rel_difference
        return None if d is None else abs(d) <= BUS_BANDWIDTH_TOLERANCE


def bus_check(accelerator="H100 SXM") -> BusCheck:
    """Check an accelerator's memory bandwidth as bus width x per-pin data rate / 8."""
    acc = get_accelerator(accelerator)
    return BusCheck(accelerator=acc.name, mem_type=acc.mem_type, bandwidth_bytes_per_s=acc.mem_bandwidth,
                    bus_width_bits=acc.mem_bus_width_bits,
                    data_rate_bits_per_s_per_pin=acc.mem_data_rate_bits_per_s_per_pin)


#: NVIDIA's data-centre line, one part per generation, for the memory wall.
MEMORY_WALL_PARTS = ("V100 SXM2", "A100 SXM 80GB", "H100 SXM", "B200")


@dataclass(frozen=True)
class MemoryWall:
    """Peak compute and memory bandwidth across generations, indexed to the first part."""

    names: tuple
    years: np.ndarray
    precision: str
    peak_flops: np.ndarray
    bandwidth_bytes_per_s: np.ndarray

    @property
    def compute_index(self) -> np.ndarray:
        return self.peak_flops / self.peak_flops[0]

    @property
    def bandwidth_index(self) -> np.ndarray:
        return self.bandwidth_bytes_per_s / self.bandwidth_bytes_per_s[0]

    @property
    def ridge_points(self) -> np.ndarray:
        return self.peak_flops / self.bandwidth_bytes_per_s

    def growth_per_year(self, which="compute") -> float:
        """Fitted yearly growth factor: exp of the least-squares slope of ln(value) against year."""
        which = check_choice("which", which, ("compute", "bandwidth"))
        y = self.peak_flops if which == "compute" else self.bandwidth_bytes_per_s
        if np.ptp(self.years) == 0:
            raise ValueError("the parts must span more than one year to fit a growth rate")
        slope = np.polyfit(self.years.astype(float), np.log(y), 1)[0]
        return float(np.exp(slope))


def memory_wall(names=MEMORY_WALL_PARTS, precision="fp16") -> MemoryWall:
    """Dense peak at ``precision`` and memory bandwidth of ``names``, oldest first.

        compute index = peak / peak_first,  bandwidth index = bandwidth / bandwidth_first

    When compute grows faster than bandwidth, the ridge point (peak / bandwidth) rises and more
    kernels fall on the memory side of the roofline: the "memory wall" (Wulf and McKee, "Hitting
    the Memory Wall", ACM SIGARCH Computer Architecture News 23(1), 1995, for CPUs and DRAM).
    """
    if isinstance(names, str) or not hasattr(names, "__iter__"):
        raise TypeError(f"names must be a sequence of accelerator names, got {names!r}")
    accs = [get_accelerator(n) for n in names]
    if len(accs) < 2:
        raise ValueError("names must list at least two accelerators")
    accs.sort(key=lambda a: a.year)
    return MemoryWall(names=tuple(a.name for a in accs), years=np.array([a.year for a in accs]),
                      precision=str(precision).lower(),
                      peak_flops=np.array([a.peak(precision) for a in accs]),
                      bandwidth_bytes_per_s=np.array([a.mem_bandwidth for a in accs]))


# --------------------------------------------------------------------------------------------
# 6. TMA: one instruction for a tile copy
# --------------------------------------------------------------------------------------------

#: The largest extent of a TMA box along any dimension, in elements: ``boxDim[i] <= 256``
#: (CUDA Driver API, ``cuTensorMapEncodeTiled``).
TMA_MAX_BOX_ELEMENTS = 256
#: Bytes one ``cp.async`` (Ampere) copies per thread per instruction at most: 16.
CP_ASYNC_MAX_BYTES = 16


@dataclass(frozen=True)
class TileCopyWork:
    """The instructions one global -> shared tile copy takes with per-thread copies and with TMA."""

    rows: int
    cols: int
    bytes_per_element: float
    threads: int
    tile_bytes: int
    copy_instructions: int           # per-thread cp.async operations, 16 bytes each, all threads together
    instructions_per_thread: float
    tma_instructions: int            # one cp.async.bulk.tensor, issued by one thread
    tma_boxes: int                   # boxes of at most 256 x 256 elements the tile needs

    @property
    def copy_warp_instructions(self) -> int:
        """The warp instructions those copies take: one issue covers a warp's 32 threads, so
        ceil(threads / 32) warps x ceil(copies per thread); 4 x 8 = 32 for 128 threads and 1024
        copies. The unit lesson 06 counts instructions in (32 warp instructions against 1 TMA)."""
        return -(-self.threads // 32) * -(-self.copy_instructions // self.threads)

    @property
    def instructions_saved(self) -> int:
        return self.copy_instructions - self.tma_instructions


def tile_copy_work(rows, cols, bytes_per_element=2, threads=128) -> TileCopyWork:
    """Count the copy instructions for one (rows x cols) tile from global to shared memory.

        per-thread copies (cp.async):  ceil(rows x cols x b / 16) instructions, each with its own
                                       address computed by its thread
        TMA (cp.async.bulk.tensor):    one instruction per box of at most 256 x 256 elements,
                                       issued by one thread; the unit generates the addresses

    Sources: NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022), "Asynchronous execution"
    and the TMA section; CUDA C++ Programming Guide, "Asynchronous Data Copies using the Tensor
    Memory Accelerator (TMA)". A 128 x 64 BF16 tile: 16 KiB, 1024 per-thread cp.async copies (8 per
    thread of 128), that is 32 warp instructions, against 1 TMA instruction.
    """
    r = check_int("rows", rows, min_value=1, max_value=1 << 16)
    c = check_int("cols", cols, min_value=1, max_value=1 << 16)
    b = check_number("bytes_per_element", bytes_per_element, min_value=0.5, max_value=16)
    t = check_int("threads", threads, min_value=1, max_value=1024)
    tile_bytes = int(math.ceil(r * c * b))
    n_copy = -(-tile_bytes // CP_ASYNC_MAX_BYTES)
    boxes = -(-r // TMA_MAX_BOX_ELEMENTS) * -(-c // TMA_MAX_BOX_ELEMENTS)
    return TileCopyWork(rows=r, cols=c, bytes_per_element=b, threads=t, tile_bytes=tile_bytes,
                        copy_instructions=n_copy, instructions_per_thread=n_copy / t,
                        tma_instructions=boxes, tma_boxes=boxes)


def multicast_l2_reads(tile_bytes, cluster_size) -> tuple[float, float]:
    """L2 bytes read when ``cluster_size`` thread blocks of a cluster all need the same tile.

        without multicast: cluster_size x tile_bytes     with TMA multicast: tile_bytes

    TMA multicast reads the tile once and writes it into the shared memory of every block of
    the cluster (H100 whitepaper, "Thread Block Clusters" and TMA; a cluster holds at most 8
    blocks portably, 16 with an opt-in on the H100: CUDA C++ Programming Guide, "Thread Block
    Clusters").
    """
    tb = check_number("tile_bytes", tile_bytes, min_value=0, allow_min=False)
    k = check_int("cluster_size", cluster_size, min_value=1, max_value=16)
    return tb * k, tb
