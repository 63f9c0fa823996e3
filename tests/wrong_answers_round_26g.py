"""Blind round 26g of wrong answers to lessons 01-08 (issue 26's last "done when").

Each entry is a mistake a learner could make working the exercise for the first time with the
lesson open, written down (with the value it gives) before any check was run and without the
answer key: only the lessons, the exercise files and the library's public functions were read.
"""
import math
import numpy as np
R = []
def m(ex, mistake):
    """Register the value a learner who makes ``mistake`` on exercise ``ex`` would submit."""
    def deco(f):
        R.append((ex, mistake, f))
        return f
    return deco


# ============================================================================ lesson 01

@m("01.1", "predicts registers: takes 40 registers x 128 threads = 5120 per block against a register file it remembers as 64 KiB = 16384 registers, so only 3 blocks fit")
def _():
    return "registers"


@m("01.1", "predicts warps: 128-thread blocks are 4 warps and it only thinks of the 64-warp cap, never adding the 1 KiB reserved per block to the 40 KiB")
def _():
    return "warps"


@m("01.2", "computes it for the H100 SXM of the lesson's worked example instead of the H200 that variant('01.2') names")
def _():
    from course_lib.latency import ASSUMED_DRAM_LATENCY_S, littles_law
    return littles_law("H100 SXM", ASSUMED_DRAM_LATENCY_S).bytes_in_flight_per_sm / 1e3


@m("01.2", "gives the whole chip's bytes in flight in kB, forgetting to divide by the H200's 132 SMs")
def _():
    from course_lib.hardware import get_accelerator
    from course_lib.latency import ASSUMED_DRAM_LATENCY_S, bytes_in_flight
    return bytes_in_flight(get_accelerator("H200").mem_bandwidth, ASSUMED_DRAM_LATENCY_S) / 1e3


@m("01.3", "takes np.argmax(util >= 0.9) as the answer: the 0-based index into arange(1, 65), one less than the warp count")
def _():
    from course_lib.latency import simulate_latency_hiding
    sweep = simulate_latency_hiding(np.arange(1, 65), 24, 700)
    return int(np.argmax(sweep.utilisation >= 0.9))


@m("01.3", "passes the cycles to simulate_latency_hiding in the wrong order (700 as the compute burst, 24 as the latency), so one warp already looks busy enough")
def _():
    from course_lib.latency import simulate_latency_hiding
    n = np.arange(1, 65)
    sweep = simulate_latency_hiding(n, 700, 24)
    return int(n[np.argmax(sweep.utilisation >= 0.9)])


@m("01.4", "divides the whole register file by the registers per warp, never flooring per sub-partition")
def _():
    from course_lib.hardware import get_accelerator
    def warps_by_registers(registers_per_thread, accelerator):
        acc = get_accelerator(accelerator)
        unit = acc.register_alloc_unit
        per_warp = -(-32 * registers_per_thread // unit) * unit
        return int(acc.registers_per_sm // per_warp)
    return warps_by_registers


@m("01.4", "uses register_file_bytes_per_sm (bytes) where the register count registers_per_sm is meant: four times too many warps")
def _():
    from course_lib.hardware import get_accelerator
    def warps_by_registers(registers_per_thread, accelerator):
        acc = get_accelerator(accelerator)
        unit = acc.register_alloc_unit
        per_warp = -(-32 * registers_per_thread // unit) * unit
        sub = acc.register_file_bytes_per_sm // acc.warp_alloc_granularity
        return int(sub // per_warp) * acc.warp_alloc_granularity
    return warps_by_registers


@m("01.5", "compares the spill footprint with the whole 256 KiB, not with what the resident blocks' shared memory leaves free, and takes the smallest cap that passes")
def _():
    from course_lib.latency import H100_L1_SHARED_BYTES_PER_SM, register_pressure
    caps = (255, 128, 96, 80, 64, 48)
    rows = register_pressure(128, 150, caps, shared_mem_per_block=12 * 1024, accelerator="H100 SXM")
    ok = [r for r in rows if r.spill_footprint_per_sm <= H100_L1_SHARED_BYTES_PER_SM]
    return max(ok, key=lambda r: (r.warps_per_sm, -r.cap)).cap


@m("01.6", "uses the simulator's default single scheduler instead of the H100 SM's four, so far fewer warps seem enough and the budget comes out near the maximum")
def _():
    from course_lib.latency import LaunchError, analytic_utilisation, occupancy
    best = None
    for r in range(1, 256):
        try:
            w = occupancy(128, r, 12 * 1024, "H100 SXM").warps_per_sm
        except LaunchError:
            continue
        if analytic_utilisation(w, 60, 500, 1) >= 0.9:
            best = r
    return best


@m("01.6", "leaves the 12 KiB of shared memory per block out of the occupancy call (passes 0)")
def _():
    from course_lib.latency import LaunchError, analytic_utilisation, occupancy
    best = None
    for r in range(1, 256):
        try:
            w = occupancy(128, r, 0, "H100 SXM").warps_per_sm
        except LaunchError:
            continue
        if analytic_utilisation(w, 60, 500, 4) >= 0.9:
            best = r
    return best


def _k_for(latency_s, extra_regs=True):
    from course_lib.hardware import get_accelerator
    from course_lib.latency import occupancy
    h200 = get_accelerator("H200")
    need = h200.mem_bandwidth * latency_s
    for k in range(1, 200):
        regs = 72 + k if extra_regs else 72
        w = occupancy(256, regs, 0, "H200").warps_per_sm
        if w * 32 * 4 * k * h200.sm_count >= need:
            return k
    return None


@m("01.7", "scales k linearly with the bandwidth gap, ceil(4.8 / 0.5), as if the resident warps stayed those of k = 1")
def _():
    from course_lib.hardware import get_accelerator
    return math.ceil(get_accelerator("H200").mem_bandwidth / 0.5e12)


@m("01.7", "uses the lessons' ASSUMED_DRAM_LATENCY_S (600 ns) instead of the latency the 0.5 TB/s profile implies")
def _():
    from course_lib.latency import ASSUMED_DRAM_LATENCY_S
    return _k_for(ASSUMED_DRAM_LATENCY_S)


# ============================================================================ lesson 02

@m("02.1", "answers 'same': each lane asks for 4 bytes in both layouts, so it counts 128 bytes either way and forgets that whole sectors move")
def _():
    return "same"


@m("02.2", "uses NVIDIA's warp of 32 lanes in the formula 1 - p^w - (1-p)^w instead of the MI300X's wavefront of 64")
def _():
    p, w = 0.05, 32
    return 1 - p ** w - (1 - p) ** w


@m("02.2", "returns the probability that a wavefront does NOT diverge, (1-p)^w + p^w")
def _():
    from course_lib.hardware import get_accelerator
    p, w = 0.05, get_accelerator("MI300X").warp_size
    return (1 - p) ** w + p ** w


def _uneven(test, n_threads=1000, warp_size=32):
    from course_lib.simt import Let, While, run_simt
    kernel = [Let("i", lambda v: 0),
              While(test, [Let("a", lambda v: 2 * v["i"]), Let("a", lambda v: v["a"] + 1),
                           Let("i", lambda v: v["i"] + 1)])]
    return run_simt(kernel, n_threads, warp_size=warp_size).simt_efficiency


@m("02.3", "writes the loop test as i < tid % 7, dropping the + 1, so one thread in seven never enters the loop")
def _():
    return float(_uneven(lambda v: v["i"] < v["tid"] % 7))


@m("02.3", "runs 1024 threads (32 full warps) instead of 1000")
def _():
    return float(_uneven(lambda v: v["i"] < v["tid"] % 7 + 1, n_threads=1024))


@m("02.4", "counts only the sector of each start address, so an access that straddles two sectors counts once")
def _():
    def sectors_touched(addresses, bytes_per_access):
        a = np.asarray(addresses, dtype=np.int64)
        return int(np.unique(a // 32).size)
    return sectors_touched


@m("02.4", "takes the last byte as a + bytes_per_access instead of a + bytes_per_access - 1, so an aligned access reaches into the next sector")
def _():
    def sectors_touched(addresses, bytes_per_access):
        a = np.asarray(addresses, dtype=np.int64)
        s = set()
        for x in a:
            s.update(range(x // 32, (x + bytes_per_access) // 32 + 1))
        return len(s)
    return sectors_touched


def _avg_moved(w, cols=1002, only_first=False, use_lines=False):
    from course_lib.simt import coalescing
    h = 256 // w
    moved = []
    for by in range(64 // h):
        for bx in range(256 // w):
            tid = np.arange(256)
            tx, ty = tid % w, tid // w
            r, c = by * h + ty, bx * w + tx
            addr = 4 * (r * cols + c)
            for k in range(8):
                co = coalescing(addr[32 * k:32 * k + 32])
                moved.append(co.n_lines * 128 if use_lines else co.bytes_moved)
                if only_first:
                    return moved[0]
    return float(np.mean(moved))


_WIDTHS = [w for w in (4, 8, 16, 32, 64, 128, 256) if 256 // w <= 64]


@m("02.5", "ignores the 1002-column row length and computes addresses as if rows were 1024 floats (every row 128-byte aligned)")
def _():
    return min(w for w in _WIDTHS if _avg_moved(w, cols=1024) <= 1.5 * 128)


@m("02.5", "checks only the first warp of block (0, 0), which starts at address 0, instead of averaging over every warp of the launch")
def _():
    return min(w for w in _WIDTHS if _avg_moved(w, only_first=True) <= 1.5 * 128)


def _sort_pays(q_mixed, grouping_per_warp):
    for L in range(1, 1001):
        ungrouped = 10 + q_mixed * L
        grouped = grouping_per_warp + L / 64 + 10 * 63 / 64
        if grouped <= ungrouped:
            return L
    return 1000


@m("02.6", "takes the share of warps with a long lane from the recorded sample (a simulated estimate) instead of the exact 1 - (63/64)^32")
def _():
    sample = np.random.default_rng(2026).random(4096) < 1 / 64
    q = float(sample.reshape(-1, 32).any(axis=1).mean())
    return _sort_pays(q, 11)


@m("02.6", "counts the grouping cost per warp as 11/32 of an instruction (per thread divided among the lanes) instead of 11 instructions, which every lane issues together")
def _():
    return _sort_pays(1 - (63 / 64) ** 32, 11 / 32)


# ============================================================================ lesson 03

@m("03.1", "predicts hidden: the H200's larger bandwidth must be enough, without computing t_copy against t_compute per SM")
def _():
    return "hidden"


@m("03.2", "divides by the H100's HBM bandwidth (mem_bandwidth) instead of its PCIe host link")
def _():
    from course_lib.hardware import get_accelerator
    return 7e9 * 2 / get_accelerator("H100 SXM").mem_bandwidth * 1e3


@m("03.2", "reads 7B as 7 x 2^30 parameters (binary billions)")
def _():
    from course_lib.hardware import get_accelerator
    return 7 * 2 ** 30 * 2 / (get_accelerator("H100 SXM").host_link_bandwidth / 2) * 1e3


@m("03.3", "leaves simulate_cache's line_bytes at its default 128 instead of the 64-byte lines asked")
def _():
    from course_lib.memory import make_trace, simulate_cache
    trace = make_trace("sequential", 6 * 4096, 6 * 500, element_bytes=4096)
    for ways in (1, 2, 4, 8, 16, 32):
        if simulate_cache(trace, 16 * 1024, 128, ways).hit_rate >= 0.9:
            return ways
    return 32


@m("03.3", "reasons without running the simulator: six addresses conflict, so six ways, and answers 6")
def _():
    return 6


@m("03.4", "ignores the broadcast: counts lanes per bank, not distinct words per bank")
def _():
    def passes(byte_addresses):
        banks = (np.asarray(byte_addresses) // 4) % 32
        return int(np.bincount(banks, minlength=32).max())
    return passes


@m("03.4", "takes the bank as byte_address % 32, forgetting to divide by the 4-byte word first")
def _():
    def passes(byte_addresses):
        a = np.asarray(byte_addresses)
        words = a // 4
        banks = a % 32
        return int(max(len(set(words[banks == b])) for b in np.unique(banks)))
    return passes


@m("03.5", "computes a stack's bandwidth by hand as 1024 pins x 9.2 Gbit/s, forgetting to divide bits by 8")
def _():
    from course_lib.hardware import get_accelerator
    need = get_accelerator("B200").peak("bf16") / get_accelerator("H100 SXM").ridge_point("bf16")
    return math.ceil(need / (1024 * 9.2e9))


@m("03.5", "keeps the B200's own ridge point (so the B200's own bandwidth) instead of the H100 SXM's")
def _():
    from course_lib.hardware import get_accelerator
    from course_lib.memory import bus_bandwidth_bytes_per_s
    b200 = get_accelerator("B200")
    need = b200.peak("bf16") / b200.ridge_point("bf16")
    return math.ceil(need / bus_bandwidth_bytes_per_s(1024, 9.2e9))


@m("03.6", "reads the printed columns the wrong way round (0.9 us as the copy, 1.3 us as the compute) and speeds up the math")
def _():
    return "faster math"


@m("03.6", "halves the copy with FP8 and forgets the 0.3 us of dequantization that makes each tile's compute 1.2 us")
def _():
    return "fp8 inputs"


def _pad_ok(pad, cache=True, bank_limit=4, need_mult4=True, row_major_walk=False):
    from course_lib.memory import column_read_conflict_degree, simulate_cache
    if need_mult4 and pad % 4:
        return False
    if bank_limit is not None and column_read_conflict_degree(1024, pad_words=pad) > bank_limit:
        return False
    if cache:
        j, i = np.meshgrid(np.arange(64), np.arange(64), indexing="ij")
        if row_major_walk:
            i, j = j, i
        addr = (4 * (i * (1024 + pad) + j)).ravel()
        if simulate_cache(addr, 32 * 1024, 128, 4).hit_rate < 0.9:
            return False
    return True


@m("03.7", "applies only the cache rule and the multiple-of-4 rule and forgets the shared-memory bank rule")
def _():
    return next(p for p in range(0, 400, 4) if _pad_ok(p, bank_limit=None))


@m("03.7", "builds the trace row by row (i outer, j inner) instead of column by column, so the cache sees a sequential walk")
def _():
    return next(p for p in range(0, 400, 4) if _pad_ok(p, row_major_walk=True))


# ============================================================================ lesson 04

@m("04.1", "predicts compute: billions of FLOP sound like a lot of arithmetic, without comparing the intensity with the B200's ridge")
def _():
    return "compute"


@m("04.2", "uses the H100 SXM of the lesson's GEMV example instead of the H200 of variant('04.2')")
def _():
    from course_lib.hardware import get_accelerator
    acc, n = get_accelerator("H100 SXM"), 8192
    F, Q = 2 * n * n, 2 * (n + n * n + n)
    return max(F / acc.peak("bf16"), Q / acc.mem_bandwidth) * 1e6


@m("04.2", "counts 4 bytes per element (FP32) for the bytes moved although the weights are BF16")
def _():
    from course_lib.hardware import get_accelerator
    acc, n = get_accelerator("H200"), 8192
    F, Q = 2 * n * n, 4 * (n + n * n + n)
    return max(F / acc.peak("bf16"), Q / acc.mem_bandwidth) * 1e6


@m("04.3", "takes the datasheet's BF16 rate with sparsity (twice the dense peak) for the ridge point")
def _():
    from course_lib import roofline as rl
    from course_lib.hardware import get_accelerator
    h = get_accelerator("H100 SXM")
    ridge = rl.ridge_point(2 * h.peak("bf16"), h.mem_bandwidth)
    return next(mm for mm in range(1, 20000) if rl.matmul_intensity(mm, 8192, 8192) >= ridge)


@m("04.3", "approximates the intensity as m FLOP per byte (only the weights' bytes counted) and answers ceil(ridge)")
def _():
    from course_lib.hardware import get_accelerator
    return math.ceil(get_accelerator("H100 SXM").ridge_point("bf16"))


@m("04.4", "forgets the write of C: bytes = b (mk + kn)")
def _():
    def matmul_intensity(m, k, n, bytes_per_element=2):
        return 2 * m * k * n / (bytes_per_element * (m * k + k * n))
    return matmul_intensity


@m("04.4", "sizes C as n x k by a typo (C's bytes b n k instead of b m n)")
def _():
    def matmul_intensity(m, k, n, bytes_per_element=2):
        return 2 * m * k * n / (bytes_per_element * (m * k + k * n + n * k))
    return matmul_intensity


@m("04.5", "computes the ridge upside down, bandwidth / peak, and switches to the peak at that intensity")
def _():
    def roofline(intensity, peak_flops, bandwidth):
        i = np.asarray(intensity, dtype=float)
        return np.where(i >= bandwidth / peak_flops, peak_flops, bandwidth * i)
    return roofline


@m("04.5", "divides by 2 bytes per element, thinking the intensity is in FLOP per element")
def _():
    def roofline(intensity, peak_flops, bandwidth):
        return np.minimum(peak_flops, bandwidth * np.asarray(intensity) / 2)
    return roofline


@m("04.6", "picks the kernel furthest below its roof (the layer norm, latency-limited), not the one whose time saved times calls is largest")
def _():
    return "layer norm"


@m("04.6", "picks the kernel called most often per step, the decode GEMV, without weighing the time each call could save")
def _():
    return "decode GEMV"


def _l2_needed(ms, tile_exact=True, peak_only=False, hbm_only=False):
    from course_lib import roofline as rl
    from course_lib.hardware import get_accelerator
    from course_lib.tiling import tiled_matmul_traffic
    a100 = get_accelerator("A100")
    peak, hbm = a100.peak("bf16"), a100.mem_bandwidth
    need = 0.0
    for mm in ms:
        F = 2.0 * mm * 8192 * 8192
        if tile_exact:
            q_l2 = tiled_matmul_traffic(mm, 8192, 8192, 64).bytes_moved
        else:
            q_l2 = 2 * (mm * 8192 * (8192 / 64) + 8192 * 8192 * (mm / 64) + mm * 8192)
        i_l2 = F / q_l2
        target = peak if peak_only else min(peak, hbm * rl.matmul_intensity(mm, 8192, 8192))
        if hbm_only:
            target = hbm * rl.matmul_intensity(mm, 8192, 8192)
        need = max(need, target / i_l2)
    return need / 1e12


@m("04.7", "asks the L2 roof only to match the HBM roof at every m (L2 x tiled intensity >= HBM x intensity), forgetting the peak caps both")
def _():
    return _l2_needed(range(1, 4097), hbm_only=True)


@m("04.7", "requires the L2 roof to reach the peak at every m, ignoring that the HBM roof already binds at small prefills")
def _():
    return _l2_needed(range(1, 4097), peak_only=True)


def _gemm_fq(b):
    return 2.0 * b * 8192 * 8192, 2.0 * (b * 8192 + 8192 * 8192 + b * 8192)


@m("04.8", "uses the catalog's rated peak and bandwidth instead of the rates the two measurements imply")
def _():
    from course_lib.hardware import get_accelerator
    h = get_accelerator("H100 SXM")
    ok = [b for b in range(1, 20000) if max(_gemm_fq(b)[0] / h.peak("bf16"), _gemm_fq(b)[1] / h.mem_bandwidth) <= 60e-6]
    return max(ok)


@m("04.8", "draws a straight line through the two measured points and solves it for 60 us")
def _():
    (b1, t1), (b2, t2) = (32, 46.4e-6), (2048, 389.5e-6)
    slope = (t2 - t1) / (b2 - b1)
    return int(math.floor(b1 + (60e-6 - t1) / slope))


# ============================================================================ lesson 05

@m("05.1", "believes the seed text: BF16 is the newer format, so it must store 1/3 more accurately")
def _():
    return "bf16"


@m("05.2", "uses the H100 SXM's bandwidth from the catalog instead of the H200's")
def _():
    from course_lib.hardware import get_accelerator
    bw = get_accelerator("H100 SXM").mem_bandwidth
    return 70e9 * (2 - 0.5) / bw * 1e3


@m("05.2", "counts INT4 weights as 1 byte each (two 4-bit values thought to take a byte each once widened)")
def _():
    from course_lib.hardware import get_accelerator
    bw = get_accelerator("H200").mem_bandwidth
    return 70e9 * (2 - 1) / bw * 1e3


def _kmin(fmt="fp16", threshold=0.001):
    from course_lib import formats as F
    g = F.gradient_like(np.random.default_rng(0), 50_000)
    for k in range(0, 40):
        if F.cast_stats(g, fmt, 2.0 ** k).flushed_fraction < threshold:
            return k
    return 40


@m("05.3", "reads 0.1% as a flushed fraction below 0.1 instead of 0.001")
def _():
    return _kmin("fp16", 0.1)


@m("05.3", "answers loss_scale_sweep's best_log2_scale (the lesson's best scale) instead of the smallest k under 0.1 %")
def _():
    from course_lib import formats as F
    g = F.gradient_like(np.random.default_rng(0), 50_000)
    return int(F.loss_scale_sweep(g, "fp16", range(0, 33)).best_log2_scale)


@m("05.4", "gives each row one scale (per channel) instead of one per block of block_size elements")
def _():
    def quantize_blocks_int8(x, block_size):
        x = np.asarray(x, dtype=float)
        s = np.abs(x).max(axis=1, keepdims=True) / 127
        s = np.where(s == 0, 1.0, s)
        return np.round(x / s) * s
    return quantize_blocks_int8


@m("05.4", "flattens the matrix and cuts blocks along the flattened array, so blocks run across the ends of rows")
def _():
    def quantize_blocks_int8(x, block_size):
        x = np.asarray(x, dtype=float)
        flat = x.ravel()
        out = np.empty_like(flat)
        for j in range(0, flat.size, block_size):
            blk = flat[j:j + block_size]
            s = np.abs(blk).max() / 127 or 1.0
            out[j:j + block_size] = np.round(blk / s) * s
        return out.reshape(x.shape)
    return quantize_blocks_int8


@m("05.5", "uses the all-ones exponent field as a normal exponent, forgetting it is reserved for infinity and NaN")
def _():
    def ieee_max(exponent_bits, mantissa_bits):
        bias = 2 ** (exponent_bits - 1) - 1
        return (2 - 2.0 ** -mantissa_bits) * 2.0 ** (2 ** exponent_bits - 1 - bias)
    return ieee_max


@m("05.5", "writes the largest significand as 2 - 2^-(M+1), one mantissa bit too many")
def _():
    def ieee_max(exponent_bits, mantissa_bits):
        bias = 2 ** (exponent_bits - 1) - 1
        return (2 - 2.0 ** -(mantissa_bits + 1)) * 2.0 ** (2 ** exponent_bits - 2 - bias)
    return ieee_max


def _grads():
    from course_lib import formats as F
    return F.drifting_tensor(np.random.default_rng(2026), 30, 2000, median=2.0 ** -20, decades=0.8,
                             growth=1.25, spike_step=21, spike_factor=3.0)


@m("05.6", "runs simulate_fp8_scaling with history_len left at its default 16 instead of the 4 steps of the recipe")
def _():
    from course_lib import formats as F
    g = _grads()
    for mg in range(0, 20):
        if F.simulate_fp8_scaling(g, "fp8_e5m2", "delayed", margin=mg).overflow_counts.sum() == 0:
            return mg
    return 20


@m("05.6", "compounds the growth over all four history steps on top of the jump: ceil(log2(1.25^4 x 3)), although the history's largest amax is the most recent one")
def _():
    return math.ceil(math.log2(1.25 ** 4 * 3))


def _schemes(w, channel_axis=0):
    from course_lib import formats as F
    out = {}
    out["int8 per tensor"] = F.quantize(w, "int8", "tensor")
    out["int8 per channel"] = F.quantize(w, "int8", "channel", axis=channel_axis)
    out["int8 per block"] = F.quantize(w, "int8", "block", block_size=32)
    out["fp8_e4m3 per tensor"] = F.quantize(w, "fp8_e4m3", "tensor")
    out["fp8_e4m3 per channel"] = F.quantize(w, "fp8_e4m3", "channel", axis=channel_axis)
    out["mxfp8"] = F.mx_quantize(w, "fp8_e4m3")
    out["int4 per block"] = F.quantize(w, "int4", "block", block_size=32)
    out["mxfp4"] = F.mx_quantize(w, "fp4_e2m1")
    return {k: (q.dequantized, q.bits_per_element) for k, q in out.items()}


def _outliers_apart(w, channel_axis=0):
    from course_lib import formats as F
    rms = np.sqrt(np.mean(w ** 2, axis=1, keepdims=True))
    apart = np.abs(w) > 8 * rms
    q = F.quantize(np.where(apart, 0.0, w), "int8", "channel", axis=channel_axis)
    deq = np.where(apart, w, q.dequantized)
    return deq, q.bits_per_element + 64 * apart.sum() / w.size


def _choose_scheme(per_row=True, count_scales=True, channel_axis=0):
    from course_lib import formats as F
    w = F.outlier_matrix(np.random.default_rng(507), 256, 1000)
    cands = _schemes(w, channel_axis)
    cands["int8 per channel, outliers apart"] = _outliers_apart(w, channel_axis)
    elem_bits = {"int8": 8, "fp8": 8, "mxfp8": 8, "int4": 4, "mxfp4": 4}
    best = None
    for name, (deq, bits) in cands.items():
        if not count_scales:
            bits = elem_bits[name.split()[0].split("_")[0]]
        if per_row:
            err = np.sqrt(np.mean((deq - w) ** 2, axis=1) / np.mean(w ** 2, axis=1)).max()
        else:
            err = np.sqrt(np.mean((deq - w) ** 2) / np.mean(w ** 2))
        if bits <= 9.5 and err <= 0.015 and (best is None or bits < best[1]):
            best = (name, bits)
    return best[0] if best else "int8 per channel, outliers apart"


@m("05.7", "checks the 1.5 % budget on the whole matrix's relative RMS error instead of on every row")
def _():
    return _choose_scheme(per_row=False)


@m("05.7", "quantizes 'per channel' with axis=1 as in the lesson's MLP example, so each column, not each row, gets a scale")
def _():
    return _choose_scheme(channel_axis=1)


def _one_sum_bits(rounder):
    products = np.random.default_rng(508).uniform(0.0, 0.02, 2 ** 14)
    exact = math.fsum(products)
    for M in range(7, 24):
        s = 0.0
        for p in products.tolist():
            s = rounder(s + p, M)
        if abs(s - exact) / exact <= 0.01:
            return M
    return 23


@m("05.8", "rounds with math.frexp's significand in [0.5, 1) scaled by 2^M, which keeps M bits including the leading one: one mantissa bit short, so the answer comes out one too high")
def _():
    def rnd(x, M):
        mant, e = math.frexp(x)
        return round(mant * 2 ** M) / 2 ** M * 2.0 ** e
    return _one_sum_bits(rnd)


@m("05.8", "scales the chunk result without simulating: 7 bits work for 128 terms, 16384 = 128 x 128 terms need log2(128) = 7 more, so 14")
def _():
    return 7 + int(math.log2(2 ** 14 / 128))


# ============================================================================ lesson 06

@m("06.1", "predicts quarters: a tile twice as wide has four times the area, so it reads a quarter as often")
def _():
    return "quarters"


@m("06.1", "predicts unchanged: every element of A and B must still be read, whatever the tile")
def _():
    return "unchanged"


@m("06.2", "forgets the two stages of double buffering: 2 bytes x (64T + 64T) <= the limit")
def _():
    from course_lib.hardware import get_accelerator
    limit = get_accelerator("H200").max_shared_mem_bytes_per_block
    return max(T for T in range(16, 4096, 16) if 2 * (64 * T + 64 * T) <= limit)


@m("06.2", "counts 4 bytes per element (FP32) for the staged slices")
def _():
    from course_lib.hardware import get_accelerator
    from course_lib import tiling
    limit = get_accelerator("H200").max_shared_mem_bytes_per_block
    return max(T for T in range(16, 4096, 16) if tiling.smem_bytes_per_block(T, T, 64, 4, 2) <= limit)


def _flash_saving(block_size=200, causal=True, moved=True):
    from course_lib import attention
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((3000, 48)) for _ in range(3))
    kw = {} if block_size is None else {"block_size": block_size}
    _, tr = attention.flash_attention(q, k, v, causal=causal, return_traffic=True, **kw)
    naive = 4 * 3000 ** 2 + 4 * 3000 * 48
    return naive / (tr.elements_moved if moved else tr.elements_read)


@m("06.3", "leaves block_size at the function's default instead of 200")
def _():
    return float(_flash_saving(block_size=None))


@m("06.3", "divides by the elements FlashAttention reads only, leaving out the output it writes")
def _():
    return float(_flash_saving(moved=False))


@m("06.4", "rescales the running sum l by alpha but forgets to rescale the running output o")
def _():
    def online_softmax_step(m_prev, l_prev, o_prev, s_block, v_block):
        m_new = np.maximum(m_prev, s_block.max(axis=1))
        alpha = np.exp(m_prev - m_new)
        p = np.exp(s_block - m_new[:, None])
        return m_new, alpha * l_prev + p.sum(axis=1), o_prev + p @ v_block
    return online_softmax_step


@m("06.4", "keeps the block's own maximum as the running maximum instead of max(m_prev, rowmax(s_block))")
def _():
    def online_softmax_step(m_prev, l_prev, o_prev, s_block, v_block):
        m_blk = s_block.max(axis=1)
        alpha = np.exp(m_prev - m_blk)
        p = np.exp(s_block - m_blk[:, None])
        return m_blk, alpha * l_prev + p.sum(axis=1), alpha[:, None] * o_prev + p @ v_block
    return online_softmax_step


def _softmax_saving(b=2, vec_full=False, outputs=("O",)):
    from course_lib import tiling
    r, c = 1000, 3001
    vec = r * c if vec_full else r
    sizes = {"S": b * r * c, "m": b * vec, "P": b * r * c, "l": b * vec, "O": b * r * c}
    ops = [("rowmax", ("S",), ("m",), r * c), ("sub_exp", ("S", "m"), ("P",), 2 * r * c),
           ("rowsum", ("P",), ("l",), r * c), ("divide", ("P", "l"), ("O",), r * c)]
    names = [o[0] for o in ops]
    unfused = tiling.graph_traffic(ops, sizes, [(n,) for n in names], outputs)
    fused = tiling.graph_traffic(ops, sizes, [tuple(names)], outputs)
    return unfused.bytes_moved - fused.bytes_moved


@m("06.5", "copies the matrix size for the row maxima m and row sums l too, as if they were 1000 x 3001")
def _():
    return _softmax_saving(vec_full=True)


@m("06.5", "lists P among the graph's outputs (keeping it for the backward pass), so the fused kernel must write it too")
def _():
    return _softmax_saving(outputs=("O", "P"))


def _register_kib(stages=2, acc_bytes=4, exact=True):
    from course_lib import tiling
    sides = range(16, 513, 16)
    tiles = []
    for tm in sides:
        for tn in sides:
            if tiling.smem_bytes_per_block(tm, tn, 32, 2, stages) > 64 * 1024:
                continue
            if exact:
                q = tiling.tiled_matmul_traffic(200, 8192, 8192, tm, tn).bytes_moved
            else:
                q = 2 * (200 * 8192 * 8192 / tn + 8192 * 8192 * 200 / tm + 200 * 8192)
            tiles.append((q, tm, tn, acc_bytes * tm * tn))
    tiles.sort()
    for kib in range(1, 4097):
        fit = [t for t in tiles if t[3] <= kib * 1024]
        if fit and fit[0][1] >= 200:
            return kib
    return 4096


@m("06.6", "sizes the shared memory with one stage (smem_bytes_per_block(..., stages=1)), forgetting the double buffering")
def _():
    return _register_kib(stages=1)


@m("06.6", "counts the running sums in BF16 (2 bytes) instead of FP32")
def _():
    return _register_kib(acc_bytes=2)


def _attention_elements(o_bytes=4, reg_budget=128 * 1024, square=False):
    from course_lib import attention
    d, best = 64, None
    for bq in range(16, 1025, 16):
        if o_bytes * bq * d > reg_budget:
            continue
        for bk in ([bq] if square else range(16, 1025, 16)):
            smem = 2 * bq * d + 2 * 2 * (2 * bk * d) + 4 * bq * bk
            if smem > 192 * 1024:
                continue
            e = attention.flash_attention_traffic(4000, d, (bq, bk)).elements_moved
            best = e if best is None else min(best, e)
    return best


@m("06.7", "counts the unnormalised output in BF16 (2 bytes, like Q, K and V) against the register budget instead of FP32")
def _():
    return _attention_elements(o_bytes=2)


@m("06.7", "passes one int block_size, so only square pairs block_q = block_k are tried")
def _():
    return _attention_elements(square=True)


# ============================================================================ lesson 07

@m("07.1", "predicts compute: 32 sequences at once on four GPUs feels like a large batch")
def _():
    return "compute"


@m("07.2", "calls training_time_s and leaves utilization at its default 0.4 instead of 0.35")
def _():
    from course_lib.economics import get_model, training_time_s
    return training_time_s(get_model("Llama 3 70B").params, 15e12, accelerator="H100 SXM", n_devices=2048) / 86400


@m("07.2", "passes precision='fp8' for the peak, thinking H100 training runs in FP8")
def _():
    from course_lib.economics import get_model, training_time_s
    return training_time_s(get_model("Llama 3 70B").params, 15e12, accelerator="H100 SXM", n_devices=2048,
                           utilization=0.35, precision="fp8") / 86400


@m("07.3", "takes one sequence's rate 1 / t_step as the tokens per second, not batch / t_step")
def _():
    from course_lib.economics import cost_per_million_tokens_usd, decode_step
    st = decode_step("Mistral 7B", "H200", 64, 3000, "fp8")
    return cost_per_million_tokens_usd(1 / st.t_step_s, 3.10)


@m("07.3", "leaves context_tokens at the default 1024 instead of 3000")
def _():
    from course_lib.economics import cost_per_million_tokens_usd, decode_step
    st = decode_step("Mistral 7B", "H200", 64, precision="fp8")
    return cost_per_million_tokens_usd(st.tokens_per_s, 3.10)


@m("07.4", "rounds crossover_batch down with int() instead of up")
def _():
    from course_lib.economics import crossover_batch
    return int(crossover_batch("Llama 3 8B", "B200", 100, "int8 weights"))


@m("07.4", "leaves crossover_batch's accelerator at its default, the H100 SXM, instead of the B200")
def _():
    from course_lib.economics import crossover_batch
    return math.ceil(crossover_batch("Llama 3 8B", context_tokens=100, precision="int8 weights"))


@m("07.5", "copies the decode step's (T + 1) tokens and counts one more token than the context")
def _():
    def kv_cache_total_bytes(layers, kv_heads, head_dim, bytes_per_element, context_tokens, batch):
        return 2 * layers * kv_heads * head_dim * bytes_per_element * (context_tokens + 1) * batch
    return kv_cache_total_bytes


@m("07.5", "hard-codes 2 bytes (BF16) and ignores the bytes_per_element argument")
def _():
    def kv_cache_total_bytes(layers, kv_heads, head_dim, bytes_per_element, context_tokens, batch):
        return 2 * layers * kv_heads * head_dim * 2 * context_tokens * batch
    return kv_cache_total_bytes


@m("07.6", "solves C = 6 N x 20 as if it were linear in N: N = C / 120, no square root")
def _():
    return 2.4e24 / 120


@m("07.6", "stores compute_optimal(...).tokens, the training tokens, instead of the parameters")
def _():
    from course_lib.economics import compute_optimal
    return compute_optimal(2.4e24).tokens


@m("07.7", "sizes the cache for the 1024 tokens of the step-time formula instead of the 2048 every slot must hold, and takes the most slots that fit 40 GB")
def _():
    from course_lib.economics import get_model, kv_cache_bytes
    llama = get_model("Llama 3 8B")
    return int(40e9 // kv_cache_bytes(llama, 1024))


@m("07.7", "compares latency_percentile_steps(99) directly with 16 (steps taken for seconds) and, finding no slot count that passes, takes the one with the lowest p99 in steps")
def _():
    from course_lib.economics import decode_step, get_model, simulate_batching
    from course_lib.hardware import get_accelerator
    rng = np.random.default_rng(707)
    arrival_s = np.cumsum(rng.exponential(1 / 60, 1500))
    out = np.minimum(1536, np.maximum(1, np.round(rng.lognormal(np.log(250) - 0.5, 1.0, 1500)))).astype(int)
    llama, h100 = get_model("Llama 3 8B"), get_accelerator("H100 SXM")
    best = None
    for slots in (16, 32, 64, 128, 256):
        step_s = decode_step(llama, h100, slots, 1024).t_step_s
        p99 = simulate_batching(np.floor(arrival_s / step_s), out, slots).latency_percentile_steps(99)
        if p99 <= 16:
            return slots
        if best is None or p99 < best[0]:
            best = (p99, slots)
    return best[1]


def _deploy(use_catalog=False, gpus=(2, 4, 8), fixed_per_gpu=False, pay_all=True):
    t8, m8 = 12.6e-3, 38.0e9
    t40, m40 = 16.2e-3, 48.7e9
    tk, mk = (t40 - t8) / 32, (m40 - m8) / 32
    t0, m0 = t8 - 8 * tk, m8 - 8 * mk
    best = None
    for g in gpus:
        s = 4 / g
        for b in range(1, 5000):
            if use_catalog:
                from course_lib.economics import decode_step
                st = decode_step("Llama 3 70B", "H100 SXM", b, 4096, n_devices=g)
                t, fits = st.t_step_s, st.fits
            else:
                t = (t0 + b * tk) * s
                mem = (m0 if fixed_per_gpu else m0 * s) + b * mk * s
                fits = mem <= 80e9
            if t > 20e-3 or not fits:
                break
            usd = 3.0 * (g if pay_all else 1) / 3600 / (b / t) * 1e6
            best = usd if best is None else min(best, usd)
    return best


@m("07.8", "ignores the profile and uses decode_step with Llama 3 70B's catalog figures for the rates")
def _():
    return _deploy(use_catalog=True)


@m("07.8", "keeps the four GPUs and only picks the batch, never trying 2 or 8")
def _():
    return _deploy(gpus=(4,))


def _fp8_wins(context=4096, promise=True, step=0.01):
    import dataclasses
    from course_lib.economics import decode_step, max_batch
    from course_lib.hardware import get_accelerator
    h200 = get_accelerator("H200")

    def best_rate(acc, prec):
        one = decode_step("Llama 3 70B", acc, 1, context, prec)
        bmax = max_batch("Llama 3 70B", acc, context, prec)
        b = np.arange(1, bmax + 1)
        t = np.maximum(b * one.flops / one.peak_flops,
                       (one.weight_bytes + b * one.kv_bytes) / one.bandwidth_bytes_per_s)
        ok = t <= 20e-3 if promise else np.ones_like(t, dtype=bool)
        return float((b[ok] / t[ok]).max()) if ok.any() else 0.0

    for i in range(int(round(4.80 / step)), int(round(60 / step))):
        bw = round(i * step, 2)
        acc = dataclasses.replace(h200, mem_bandwidth=bw * 1e12)
        if best_rate(acc, "fp8") >= best_rate(acc, "int4 weights"):
            return bw
    return 60.0


@m("07.9", "forgets the 20 ms promise and compares each scheme at the largest batch that fits")
def _():
    return _fp8_wins(promise=False)


@m("07.9", "steps the bandwidth in 0.1 TB/s instead of 0.01 TB/s")
def _():
    return _fp8_wins(step=0.1)


# ============================================================================ lesson 08

@m("08.1", "predicts less: an all-reduce is tiny next to 8192-wide matmuls, thinking of NVLink's bandwidth, not one InfiniBand port's")
def _():
    return "less"


@m("08.2", "halves the catalog link's bandwidth, thinking it counts both directions together (it is per direction)")
def _():
    from course_lib.collectives import collective_time_s, get_link
    link = get_link("H200", "nvlink")
    return collective_time_s("all_reduce", 13e9 * 2, 8, bandwidth_bytes_per_s=link.bandwidth_bytes_per_s / 2,
                             latency_s=link.latency_s) * 1e3


@m("08.2", "sends the whole gradient once per rank, S / beta, instead of the ring's 2(n-1)/n S")
def _():
    from course_lib.collectives import get_link
    link = get_link("H200", "nvlink")
    return (13e9 * 2 / link.bandwidth_bytes_per_s + link.latency_s) * 1e3


@m("08.3", "draws the values with rng.random (float64, 8 bytes) instead of float32, doubling every byte count")
def _():
    from course_lib.collectives import simulate_ring_all_reduce
    data = np.random.default_rng(0).random((6, 23))
    return float(simulate_ring_all_reduce(data).link_bytes.max())


@m("08.3", "answers the textbook 2(n-1)/n x S instead of the simulated busiest link")
def _():
    return 2 * 5 / 6 * 23 * 4


@m("08.4", "shifts the stages by one: stage 1 already shards the gradients and stage 2 the weights")
def _():
    def zero_bytes(n_params, dp, stage):
        w, g, o = 2 * n_params, 2 * n_params, 12 * n_params
        if stage >= 1:
            o /= dp
            g /= dp
        if stage >= 2:
            w /= dp
        return w + g + o
    return zero_bytes


@m("08.4", "stores weights and gradients in FP32 (4 bytes each) despite mixed precision")
def _():
    def zero_bytes(n_params, dp, stage):
        w, g, o = 4 * n_params, 4 * n_params, 12 * n_params
        if stage >= 1:
            o /= dp
        if stage >= 2:
            g /= dp
        if stage >= 3:
            w /= dp
        return w + g + o
    return zero_bytes


@m("08.5", "checks the step time and throughput on the whole H100 SXM, only the 40 GB on the slice, and takes the smallest batch reaching 2800 tokens/s")
def _():
    from course_lib.economics import decode_step
    from course_lib.sharing import mig_accelerator
    sl = mig_accelerator("3g.40gb", "H100 SXM")
    for b in range(1, 2000):
        full = decode_step("Llama 3 8B", "H100 SXM", b, 2048)
        if decode_step("Llama 3 8B", sl, b, 2048).fits and full.t_step_s <= 20e-3 and full.tokens_per_s >= 2800:
            return b
    return 1


@m("08.5", "leaves context_tokens at the default 1024 and takes the largest batch meeting all three there")
def _():
    from course_lib.economics import decode_step
    from course_lib.sharing import mig_accelerator
    sl = mig_accelerator("3g.40gb", "H100 SXM")
    best = 1
    for b in range(1, 2000):
        st = decode_step("Llama 3 8B", sl, b)
        if not st.fits:
            break
        if st.t_step_s <= 20e-3 and st.tokens_per_s >= 2800:
            best = b
    return best


def _fastest_plan(scale_acts=True, scale_total=False, fixed_micro=False):
    from course_lib.parallelism import ParallelPlan, estimate_training_step, transformer_for_params
    model = transformer_for_params(70e9)
    tokens = 4 * 2 ** 20
    ref = estimate_training_step(model, ParallelPlan(256, 8, 1, 1, 32, "selective"), "H100 SXM", tokens)
    ratio = 46.4e9 / ref.memory["activations"]
    seqs = tokens // model.seq_len
    best = None
    for tp in (1, 2, 4, 8, 16):
        for pp in (1, 2, 4, 8):
            dp = 256 // (tp * pp)
            per_replica = seqs // dp
            if per_replica < 1:
                continue
            mb = 32 if fixed_micro else min(32, per_replica)
            for z in (1, 2, 3):
                for rc in ("none", "selective", "full"):
                    try:
                        est = estimate_training_step(model, ParallelPlan(256, tp, pp, z, mb, rc), "H100 SXM", tokens)
                    except ValueError:
                        continue
                    mem = dict(est.memory)
                    if scale_total:
                        total = est.memory_bytes * ratio
                    elif scale_acts:
                        total = est.memory_bytes + mem["activations"] * (ratio - 1)
                    else:
                        total = est.memory_bytes
                    if total <= est.capacity_bytes and (best is None or est.step_time_s < best):
                        best = est.step_time_s
    return best


@m("08.6", "trusts the estimate's own memory (est.fits) and never scales the activations by the measured 46.4 GB")
def _():
    return _fastest_plan(scale_acts=False)


@m("08.6", "keeps 32 micro-batches in every plan, even when a replica has fewer than 32 sequences")
def _():
    return _fastest_plan(fixed_micro=True)


def _fewest_stages(overhead_f=4.0, overhead_b=4.0):
    from course_lib.parallelism import simulate_pipeline
    for p in (1, 2, 3, 4, 6, 8, 12, 16, 24, 48):
        run = simulate_pipeline(p, 20, "1f1b", 240 / p + overhead_f, 480 / p + overhead_b)
        if run.makespan <= 2000:
            return p
    return 48


@m("08.7", "leaves the 4 ms per forward and backward out, as section 3's simulator does")
def _():
    return _fewest_stages(0.0, 0.0)


@m("08.7", "times the step as m x (forward + backward) of one stage, leaving out the pipeline's fill and drain")
def _():
    for p in (1, 2, 3, 4, 6, 8, 12, 16, 24, 48):
        if 20 * ((240 / p + 4) + (480 / p + 4)) <= 2000:
            return p
    return 48


if __name__ == "__main__":
    import time
    for ex, mistake, f in R:
        t = time.time()
        v = f()
        print(f"{ex}  {time.time() - t:6.2f}s  {v!r:.60}  | {mistake[:60]}")
    print(len(R), "mistakes on", len({e for e, _, _ in R}), "exercises")

# Judged after the checks ran (step 3 of the round): indices are positions in R, 0-based.
RIGHT_BY_LUCK = {10, 21, 27, 32, 61, 66, 77}
WRONGLY_ACCEPTED = set()
NAMED = {
    1: 'occupancy-threads-only',
    2: 'other-accelerator',
    3: 'per-gpu-not-per-sm',
    4: 'index-not-count',
    5: 'compute-and-latency-swapped',
    6: 'register-subpartitions-ignored',
    7: 'registers-256k',
    8: 'l1-shared-memory-ignored',
    9: 'one-scheduler-per-sm',
    11: 'loads-in-flight-cost-no-registers',
    12: 'assumed-latency-not-measured',
    13: 'bytes-requested-not-moved',
    14: 'warp-32-not-64',
    15: 'uniform-not-divergent',
    16: 'loop-test-plus-one-dropped',
    17: 'threads-rounded-to-whole-warps',
    18: 'access-straddle-ignored',
    19: 'access-end-byte-past-the-end',
    20: 'rows-assumed-aligned',
    22: 'sample-not-expectation',
    24: 'more-bandwidth-hides-the-copy',
    25: 'hbm-slowest',
    28: 'one-way-per-line',
    29: 'same-bank-always-conflicts',
    30: 'bank-from-bytes',
    31: 'pin-rate-in-bytes',
    34: 'biggest-cut-of-the-bottleneck',
    35: 'cache-pad-ignores-banks',
    37: 'ridge-tens-of-flop-per-byte',
    38: 'other-accelerator',
    39: 'fp32-bytes',
    40: 'sparse-peak',
    41: 'weights-bytes-only',
    42: 'c-write-forgotten',
    46: 'furthest-from-roof-first',
    47: 'most-called-kernel-first',
    48: 'l2-need-without-peak',
    49: 'l2-need-without-hbm-roof',
    50: 'rated-not-sustained',
    51: 'linear-between-measurements',
    52: 'bf16-more-precise',
    53: 'other-accelerator',
    54: 'fp8-not-int4',
    55: 'percent-read-as-fraction',
    56: 'sweep-best-scale-not-smallest',
    57: 'one-scale-per-row',
    58: 'blocks-across-rows',
    59: 'top-exponent-not-reserved',
    62: 'scale-from-oldest-amax',
    63: 'whole-matrix-error-hides-rows',
    64: 'channel-taken-as-column',
    65: 'implicit-bit-counted',
    67: 'traffic-follows-tile-area',
    68: 'tiling-reads-once',
    69: 'no-double-buffering',
    70: 'fp32-bytes',
    71: 'block-size-left-at-default',
    72: 'flash-reads-only',
    73: 'output-not-rescaled',
    74: 'max-from-block-alone',
    78: 'accumulators-in-bf16',
    80: 'key-block-equals-query-block',
    81: 'batch-makes-compute-bound',
    82: 'utilization-left-at-default',
    83: 'peak-fp8-for-bf16',
    84: 'batch-forgotten',
    85: 'context-left-at-default',
    86: 'crossover-rounded-down',
    87: 'other-accelerator-h100-sxm',
    88: 'kv-token-being-generated-counted',
    89: 'kv-bytes-per-element-fixed',
    90: 'chinchilla-no-square-root',
    91: 'tokens-for-parameters',
    92: 'cache-sized-at-default-context',
    94: 'rated-bandwidth-not-profiled',
    95: 'profiled-deployment-only',
    96: 'largest-batch-scheme',
    97: 'bandwidth-grid-too-coarse',
    98: 'nvlink-across-nodes',
    100: 'whole-buffer-once',
    101: 'float64-for-float32',
    102: 'chunks-assumed-even',
    105: 'throughput-floor-on-whole-gpu',
    106: 'mig-context-left-at-default-largest',
    107: 'estimate-trusted-over-measurement',
    108: 'micro-batches-fixed-at-32',
    109: 'pipeline-overhead-ignored',
    110: 'pipeline-bubble-ignored',
}
PARTLY = {23, 33, 44, 79}
NOT_NAMED = {0, 26, 36, 43, 45, 60, 75, 76, 93, 99, 103, 104}


#: The entries judged partly or not named above, named after the feedback was tuned on this round
#: (fix-g): in sample from then on. tests/test_checks_round_26.py keeps them named.
NAMED_AFTER_TUNING = {
    0: 'register-count-read-as-bytes',
    23: 'sort-cost-shared-among-lanes',
    26: 'billions-read-as-binary',
    33: 'profile-columns-swapped',
    36: 'walk-traced-row-by-row',
    43: 'c-sized-n-by-k',
    44: 'ridge-upside-down',
    45: 'sloped-roof-divided-by-element-size',
    60: 'significand-one-mantissa-bit-too-many',
    75: 'row-statistics-sized-as-matrix',
    76: 'p-kept-as-graph-output',
    79: 'output-accumulator-in-bf16',
    93: 'p99-steps-taken-for-seconds',
    99: 'nvlink-bandwidth-halved-per-direction',
    103: 'zero-stages-one-ahead',
    104: 'zero-fp32-weights-and-gradients',
}
