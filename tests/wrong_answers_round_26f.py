"""Blind round 26f of wrong answers to lessons 01-08 (issue 26's last "done when").

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


import dataclasses

from course_lib import attention, tiling
from course_lib import formats as F
from course_lib import roofline as rl
from course_lib.checks import variant
from course_lib.collectives import collective_time_s, get_link, simulate_ring_all_reduce
from course_lib.economics import (cost_per_million_tokens_usd,
                                  crossover_batch, decode_step, get_model, max_batch,
                                  simulate_batching, training_time_s)
from course_lib.hardware import bytes_per_element, get_accelerator
from course_lib.latency import (ASSUMED_DRAM_LATENCY_S, H100_L1_SHARED_BYTES_PER_SM,
                                analytic_utilisation, littles_law, occupancy, register_pressure,
                                simulate_latency_hiding, warps_to_saturate)
from course_lib.memory import (bus_bandwidth_bytes_per_s, column_read_conflict_degree, simulate_cache)
from course_lib.parallelism import (ParallelPlan, RECOMPUTE, estimate_training_step,
                                    simulate_pipeline, transformer_for_params)
from course_lib.sharing import mig_accelerator
from course_lib.simt import Let, While, coalescing, run_simt


# =============================================================================================
# Lesson 01: throughput and latency
# =============================================================================================

@m("01.1", "predicts 'registers': 40 registers per thread sounds heavy and the lesson calls registers "
           "the scarcest resource, so the 40 KiB of shared memory per block is never weighed")
def _():
    return "registers"


@m("01.1", "predicts 'warps': 128-thread blocks look small, so the learner expects the SM's 64-warp "
           "limit to fill first")
def _():
    return "warps"


@m("01.2", "forgets to divide by the SM count: the whole H200's bytes in flight (bandwidth x latency), "
           "in kB, answered as if it were per SM")
def _():
    acc = get_accelerator(variant("01.2")["accelerator"])
    return acc.mem_bandwidth * ASSUMED_DRAM_LATENCY_S / 1e3


@m("01.2", "reuses the lesson's worked example: calls littles_law without an accelerator, so it "
           "computes the H100 SXM's kB per SM instead of the H200's")
def _():
    return littles_law(latency_s=ASSUMED_DRAM_LATENCY_S).bytes_in_flight_per_sm / 1e3


@m("01.3", "answers the knee ceil((C+L)/C), the warps for full utilisation (1.0), instead of the "
           "first count whose utilisation reaches 0.9")
def _():
    return int(warps_to_saturate(24, 700))


@m("01.3", "off by one: takes np.argmax(utilisation >= 0.9), an index into the sweep, as the warp "
           "count, forgetting that the sweep starts at 1 warp")
def _():
    sweep = simulate_latency_hiding(np.arange(1, 65), 24, 700)
    return int(np.argmax(sweep.utilisation >= 0.9))


@m("01.4", "pools the whole register file: floor(registers_per_sm / registers per warp), ignoring "
           "that each warp's registers come from one of the warp_alloc_granularity sub-partitions")
def _():
    def warps_by_registers(registers_per_thread, accelerator):
        acc = get_accelerator(accelerator)
        unit = acc.register_alloc_unit
        per_warp = math.ceil(32 * registers_per_thread / unit) * unit
        return int(acc.registers_per_sm // per_warp)
    return warps_by_registers


@m("01.4", "unit slip: uses register_file_bytes_per_sm (bytes) as the number of 32-bit registers, "
           "four times too many")
def _():
    def warps_by_registers(registers_per_thread, accelerator):
        acc = get_accelerator(accelerator)
        unit = acc.register_alloc_unit
        per_warp = math.ceil(32 * registers_per_thread / unit) * unit
        g = acc.warp_alloc_granularity
        return int((acc.register_file_bytes_per_sm // g) // per_warp * g)
    return warps_by_registers


def _cap_01_5(shared_mem, l1_free_for):
    rows = register_pressure(128, 150, (255, 128, 96, 80, 64, 48), shared_mem_per_block=shared_mem)
    ok = [r for r in rows if r.spill_footprint_per_sm <= l1_free_for(r)]
    return max(ok, key=lambda r: (r.warps_per_sm, r.cap)).cap


@m("01.5", "leaves shared memory out: calls register_pressure with its default shared_mem_per_block=0 "
           "and lets the spills use the whole 256 KiB of L1 + shared memory")
def _():
    return _cap_01_5(0, lambda r: H100_L1_SHARED_BYTES_PER_SM)


@m("01.5", "maximises resident warps and ignores the spill rule entirely: takes the cap with the "
           "most warps per SM")
def _():
    rows = register_pressure(128, 150, (255, 128, 96, 80, 64, 48), shared_mem_per_block=12 * 1024)
    return max(rows, key=lambda r: (r.warps_per_sm, r.cap)).cap


def _budget_01_6(schedulers, target):
    best = None
    for r in range(1, 256):
        w = occupancy(128, r, 12 * 1024, "H100 SXM").warps_per_sm
        if analytic_utilisation(w, 60, 500, schedulers) >= target:
            best = r
    return best


@m("01.6", "runs section 3's simulator with its default of one scheduler, not the H100 SM's four, "
           "so far fewer warps seem to reach 0.9 and the register budget comes out too large")
def _():
    return _budget_01_6(1, 0.9)


@m("01.6", "asks for full utilisation (the knee, U = 1) instead of at least 0.9")
def _():
    return _budget_01_6(4, 1.0)


def _k_01_7(latency_s, registers):
    h200 = get_accelerator("H200")
    need = h200.mem_bandwidth * latency_s
    for k in range(1, 184):
        warps = occupancy(256, registers(k), 0, "H200").warps_per_sm
        if warps * 32 * 4 * k * h200.sm_count >= need:
            return k


@m("01.7", "uses the lessons' assumed ASSUMED_DRAM_LATENCY_S (600 ns) instead of the latency the "
           "0.5 TB/s profile implies through Little's law")
def _():
    return _k_01_7(ASSUMED_DRAM_LATENCY_S, lambda k: 72 + k)


@m("01.7", "derives the latency from the profile but forgets that each load in flight holds a "
           "register: keeps the occupancy of 72 registers per thread for every k")
def _():
    h200 = get_accelerator("H200")
    w1 = occupancy(256, 73, 0, "H200").warps_per_sm
    latency = w1 * 32 * 4 * 1 * h200.sm_count / 0.5e12
    return _k_01_7(latency, lambda k: 72)


# =============================================================================================
# Lesson 02: SIMT, divergence and coalescing
# =============================================================================================

@m("02.1", "predicts 'same': both layouts request 32 x 4 = 128 bytes, so the learner counts bytes "
           "requested instead of the sectors moved")
def _():
    return "same"


@m("02.1", "predicts 'aos': believes keeping each particle's fields together gives better locality "
           "for the warp")
def _():
    return "aos"


@m("02.2", "uses NVIDIA's 32-lane warp (the lesson's WARP) instead of the MI300X's 64-lane wavefront")
def _():
    rho, w = 0.05, get_accelerator("H100 SXM").warp_size
    return 1 - rho ** w - (1 - rho) ** w


@m("02.2", "reuses section 4's worked example: computes with the lesson's rho = 0.02 instead of the "
           "task's 0.05")
def _():
    w = get_accelerator("MI300X").warp_size
    return 1 - 0.02 ** w - (1 - 0.02) ** w


def _loop_02_3(bound, n_threads):
    kernel = [Let("i", lambda v: 0),
              While(lambda v: v["i"] < bound(v["tid"]),
                    [Let("a", lambda v: 2 * v["i"]), Let("a", lambda v: v["a"] + 1),
                     Let("i", lambda v: v["i"] + 1)])]
    return float(run_simt(kernel, n_threads).simt_efficiency)


@m("02.3", "drops the +1 of the trip count: the loop test written as i < tid % 7")
def _():
    return _loop_02_3(lambda t: t % 7, 1000)


@m("02.3", "runs 1024 threads (a whole number of warps) instead of the 1000 the task asks for")
def _():
    return _loop_02_3(lambda t: t % 7 + 1, 1024)


@m("02.4", "ignores accesses that straddle a sector boundary: counts the distinct address // 32 only")
def _():
    def sectors_touched(addresses, bytes_per_access):
        return int(np.unique(np.asarray(addresses) // 32).size)
    return sectors_touched


@m("02.4", "assumes the lanes are contiguous: bytes requested / 32, rounded up")
def _():
    def sectors_touched(addresses, bytes_per_access):
        return int(math.ceil(len(addresses) * bytes_per_access / 32))
    return sectors_touched


def _width_02_5(cols=1002, lines=False, first_warp_only=False):
    for w in (4, 8, 16, 32, 64, 128, 256):
        h = 256 // w
        moved = []
        for by in range(64 // h):
            for bx in range(256 // w):
                for warp in range(8):
                    tid = np.arange(32 * warp, 32 * warp + 32)
                    row, col = by * h + tid // w, bx * w + tid % w
                    c = coalescing(4 * (row * cols + col))
                    moved.append(c.n_lines * 128 if lines else c.bytes_moved)
                    if first_warp_only:
                        break
                if first_warp_only:
                    break
            if first_warp_only:
                break
        if np.mean(moved) <= 1.5 * 128:
            return w


@m("02.5", "reads the matrix as 1024 columns (power-of-two habit), so every row starts aligned")
def _():
    return _width_02_5(cols=1024)


@m("02.5", "checks only the first warp of the first block, which starts at address 0, instead of "
           "averaging over every warp of the launch")
def _():
    return _width_02_5(first_warp_only=True)


def _shortest_02_6(grouping_per_warp, p_long_warp):
    p = 1 / 64
    p_short_warp = 1 - p ** 32
    for L in range(1, 1001):
        ungrouped = 1 + L * p_long_warp + 10 * p_short_warp
        grouped = grouping_per_warp + 1 + p * L + (1 - p) * 10
        if grouped <= ungrouped:
            return L


@m("02.6", "leaves the 11 grouping instructions out of the grouped run")
def _():
    return _shortest_02_6(0, 1 - (63 / 64) ** 32)


@m("02.6", "counts the grouping as 11 instructions per thread summed over the warp's 32 lanes "
           "(352 per warp) instead of 11 issued per warp")
def _():
    return _shortest_02_6(11 * 32, 1 - (63 / 64) ** 32)


# =============================================================================================
# Lesson 03: the memory hierarchy
# =============================================================================================

@m("03.1", "predicts 'hidden': the H200 has more bandwidth than the H100, so the learner assumes the "
           "copy now fits behind the compute without comparing with the ridge")
def _():
    return "hidden"


@m("03.2", "uses the catalog's host_link_bandwidth as is, both directions added together, for a "
           "one-way copy")
def _():
    v = variant("03.2")
    acc = get_accelerator(v["accelerator"])
    return v["billions"] * 1e9 * 2 / acc.host_link_bandwidth * 1e3


@m("03.2", "divides by the HBM bandwidth (mem_bandwidth) instead of the PCIe host link")
def _():
    v = variant("03.2")
    acc = get_accelerator(v["accelerator"])
    return v["billions"] * 1e9 * 2 / acc.mem_bandwidth * 1e3


@m("03.3", "answers 1 way without running the simulator: 384 bytes is 2% of the cache, so the "
           "learner expects even a direct-mapped cache to hold it")
def _():
    return 1


@m("03.3", "reasons six addresses need six ways and answers 6, which is not one of WAYS_CHOICES")
def _():
    return 6


@m("03.4", "no broadcast: counts the lanes per bank (np.bincount of the banks) instead of the "
           "distinct words per bank")
def _():
    def passes(byte_addresses):
        banks = (np.asarray(byte_addresses) // 4) % 32
        return int(np.bincount(banks, minlength=32).max())
    return passes


@m("03.4", "reuses the lesson's stride formula literally: stride = (a[1] - a[0]) // 4, answer "
           "gcd(stride, 32), whatever the other lanes read")
def _():
    def passes(byte_addresses):
        a = np.asarray(byte_addresses)
        return int(math.gcd(int(a[1] - a[0]) // 4, 32))
    return passes


def _needed_03_5():
    b200, h100 = get_accelerator("B200"), get_accelerator("H100 SXM")
    return b200.peak("bf16") / h100.ridge_point("bf16")


@m("03.5", "bits for bytes: per stack 1024 pins x 9.2 Gbit/s taken as bytes/s, without the /8")
def _():
    return math.ceil(_needed_03_5() / (1024 * 9.2e9))


@m("03.5", "sizes the stacks to match the B200's own datasheet bandwidth instead of the bandwidth "
           "that keeps the H100's ridge point")
def _():
    return math.ceil(get_accelerator("B200").mem_bandwidth / bus_bandwidth_bytes_per_s(1024, 9.2e9))


@m("03.6", "picks 'fp8 inputs': halving the bytes halves the copy, and the added 0.3 us of "
           "dequantization per tile is not weighed against the now-longer compute")
def _():
    return "fp8 inputs"


@m("03.6", "picks 'third buffer': more buffering to overlap more, without noticing the copy "
           "(1.3 us) is longer than the compute (0.9 us), so the pipeline is copy-bound")
def _():
    return "third buffer"


def _pad_03_7(cache=True, banks=True, byte_scale=4):
    for pad in range(0, 2049, 4):
        if banks and column_read_conflict_degree(1024, pad) > 4:
            continue
        if cache:
            walk = np.add.outer(np.arange(64), np.arange(64) * (1024 + pad))   # [j, i]: j outer, i inner
            trace = (byte_scale * walk).reshape(-1)
            if simulate_cache(trace, 32 * 1024, 128, 4).hit_rate < 0.9:
                continue
        return pad


@m("03.7", "forgets the shared-memory bank rule: the smallest multiple of 4 that passes the cache "
           "test alone")
def _():
    return _pad_03_7(banks=False)


@m("03.7", "forgets the cache test: the smallest multiple of 4 whose column read is at most 4-way")
def _():
    return _pad_03_7(cache=False)


# =============================================================================================
# Lesson 04: the roofline
# =============================================================================================

@m("04.1", "predicts 'compute': billions of FLOP sound compute-heavy; k = 128 is not seen to keep "
           "the intensity low")
def _():
    return "compute"


def _gemv_04_2(acc_name, b=2, combine=max):
    v = variant("04.2")
    acc = get_accelerator(acc_name or v["accelerator"])
    h = v["hidden"]
    flops = 2 * 1 * h * h
    q = b * (1 * h + h * h + 1 * h)
    return combine(flops / acc.peak("bf16"), q / acc.mem_bandwidth) * 1e6


@m("04.2", "adds the compute time and the memory time instead of taking the larger")
def _():
    return _gemv_04_2(None, combine=lambda a, c: a + c)


@m("04.2", "reuses the lesson's H100 SXM figures instead of the H200 of variant('04.2')")
def _():
    return _gemv_04_2("H100 SXM")


@m("04.3", "uses the square-matmul shortcut I = n/3, so m = ceil(3 x ridge)")
def _():
    return math.ceil(3 * get_accelerator("H100 SXM").ridge_point("bf16"))


@m("04.3", "counts only the weights' bytes: intensity = 2mkn / (2kn) = m, so m = ceil(ridge)")
def _():
    return math.ceil(get_accelerator("H100 SXM").ridge_point("bf16"))


@m("04.4", "forgets the write of C: bytes = b(mk + kn)")
def _():
    def matmul_intensity(m, k, n, bytes_per_element=2):
        return 2 * m * k * n / (bytes_per_element * (m * k + k * n))
    return matmul_intensity


@m("04.4", "counts multiply-adds, not FLOP: mkn / (b(mk + kn + mn))")
def _():
    def matmul_intensity(m, k, n, bytes_per_element=2):
        return m * k * n / (bytes_per_element * (m * k + k * n + m * n))
    return matmul_intensity


@m("04.5", "takes the larger of the two roofs (np.maximum) instead of the lower")
def _():
    def roofline(intensity, peak_flops, bandwidth):
        return np.maximum(peak_flops, bandwidth * np.asarray(intensity, dtype=float))
    return roofline


@m("04.5", "returns only the sloped roof, bandwidth x intensity, never capped at the peak")
def _():
    def roofline(intensity, peak_flops, bandwidth):
        return bandwidth * np.asarray(intensity, dtype=float)
    return roofline


def _profile_04_6():
    step_profile = {
        "decode GEMV": (48e-6, 134_250_496, 134_217_728, 80),
        "layer norm": (22e-6, 16_777_216, 33_554_432, 64),
        "MLP GEMM": (1.65e-3, 1.2e9, 2 * 8192 ** 3, 4),
    }
    return {k: (rl.read_profile(k, t, q, f, "H100 SXM", "bf16"), calls)
            for k, (t, q, f, calls) in step_profile.items()}


@m("04.6", "picks the kernel furthest from its roof (lowest fraction_of_roof), not weighing its "
           "duration or how often the step calls it")
def _():
    p = _profile_04_6()
    return min(p, key=lambda k: p[k][0].fraction_of_roof)


@m("04.6", "picks the kernel the step calls most often (80 calls), without asking how far each call "
           "runs from its roof")
def _():
    p = _profile_04_6()
    return max(p, key=lambda k: p[k][1])


def _l2_parts_04_7(mm):
    a100 = get_accelerator("A100")
    flops = rl.matmul_flops(mm, 8192, 8192)
    i_hbm = flops / rl.matmul_bytes(mm, 8192, 8192)
    i_l2 = tiling.tiled_matmul_traffic(mm, 8192, 8192, 64).intensity_flops_per_byte
    return a100, i_hbm, i_l2


@m("04.7", "checks only the largest prefill, m = 4096, instead of every m from 1 to 4096")
def _():
    a100, i_hbm, i_l2 = _l2_parts_04_7(4096)
    target = min(a100.peak("bf16"), a100.mem_bandwidth * i_hbm)
    return target / i_l2 / 1e12


@m("04.7", "reads 'cost nothing' as 'reach the peak': asks the L2 roof to reach the dense peak at "
           "every m, even where HBM already holds the matmul below it")
def _():
    worst = 0.0
    for mm in range(1, 4097):
        a100, _, i_l2 = _l2_parts_04_7(mm)
        worst = max(worst, a100.peak("bf16") / i_l2)
    return worst / 1e12


def _b_04_8(peak, bw, limit=None):
    k = n = 8192
    best = None
    for b in range(1, 20000):
        f = 2 * b * k * n
        q = 2 * (b * k + k * n + b * n)
        t = q / bw if peak is None else max(f / peak, q / bw)
        if t <= 60e-6:
            best = b
    return best


@m("04.8", "uses the catalog's peak and bandwidth for the H100 SXM instead of the rates the two "
           "measurements imply")
def _():
    h100 = get_accelerator("H100 SXM")
    return _b_04_8(h100.peak("bf16"), h100.mem_bandwidth)


@m("04.8", "draws a straight line through the two measured (batch, time) points and solves it for "
           "60 us, instead of the roofline's max of two terms")
def _():
    (b1, t1), (b2, t2) = sorted({32: 46.4e-6, 2048: 389.5e-6}.items())
    slope = (t2 - t1) / (b2 - b1)
    return int(math.floor(b1 + (60e-6 - t1) / slope))


# =============================================================================================
# Lesson 05: numeric formats
# =============================================================================================

@m("05.1", "predicts 'bf16', believing the seed text that BF16 has higher precision than FP16")
def _():
    return "bf16"


@m("05.2", "answers the ratio t_BF16 / t_INT4 instead of the difference in milliseconds")
def _():
    h200 = get_accelerator("H200")
    t16 = 70e9 * bytes_per_element("bf16") / h200.mem_bandwidth
    t4 = 70e9 * bytes_per_element("int4") / h200.mem_bandwidth
    return t16 / t4


@m("05.2", "takes an INT4 weight as 1 byte (the storage size of ml_dtypes.int4) instead of half a byte")
def _():
    import ml_dtypes
    h200 = get_accelerator("H200")
    t16 = 70e9 * 2 / h200.mem_bandwidth
    t4 = 70e9 * np.dtype(ml_dtypes.int4).itemsize / h200.mem_bandwidth
    return (t16 - t4) * 1e3


@m("05.3", "reads 0.1% as the fraction 0.1 (10%): the smallest k with flushed_fraction < 0.1")
def _():
    g = F.gradient_like(np.random.default_rng(0), 50_000)
    return next(k for k in range(0, 40) if F.cast_stats(g, "fp16", 2.0 ** k).flushed_fraction < 0.1)


@m("05.3", "answers loss_scale_sweep's best_log2_scale (fewest lost values overall) instead of the "
           "smallest k that gets below 0.1% flushed")
def _():
    g = F.gradient_like(np.random.default_rng(0), 50_000)
    return int(F.loss_scale_sweep(g, "fp16", range(0, 33)).best_log2_scale)


@m("05.4", "one absmax scale per row (per channel) instead of per block of block_size elements")
def _():
    def quantize_blocks_int8(x, block_size):
        x = np.asarray(x, dtype=float)
        s = np.max(np.abs(x), axis=1, keepdims=True) / 127
        s = np.where(s > 0, s, 1.0)
        return np.round(x / s) * s
    return quantize_blocks_int8


@m("05.4", "truncates the codes with astype(int) instead of rounding to the nearest integer")
def _():
    def quantize_blocks_int8(x, block_size):
        x = np.asarray(x, dtype=float)
        out = np.empty_like(x)
        for j in range(0, x.shape[1], block_size):
            blk = x[:, j:j + block_size]
            s = np.max(np.abs(blk), axis=1, keepdims=True) / 127
            s = np.where(s > 0, s, 1.0)
            out[:, j:j + block_size] = (blk / s).astype(int) * s
        return out
    return quantize_blocks_int8


@m("05.5", "does not reserve the top exponent field: 2^(2^E - 1 - bias) x (2 - 2^-M)")
def _():
    def ieee_max(exponent_bits, mantissa_bits):
        bias = 2 ** (exponent_bits - 1) - 1
        return (2 - 2.0 ** -mantissa_bits) * 2.0 ** (2 ** exponent_bits - 1 - bias)
    return ieee_max


@m("05.5", "drops the implicit leading 1: the largest mantissa taken as 1 - 2^-M")
def _():
    def ieee_max(exponent_bits, mantissa_bits):
        bias = 2 ** (exponent_bits - 1) - 1
        return (1 - 2.0 ** -mantissa_bits) * 2.0 ** (2 ** exponent_bits - 2 - bias)
    return ieee_max


def _grads_05_6():
    return F.drifting_tensor(np.random.default_rng(2026), 30, 2000, median=2.0 ** -20, decades=0.8,
                             growth=1.25, spike_step=21, spike_factor=3.0)


@m("05.6", "leaves simulate_fp8_scaling's history_len at its default of 16 instead of the 4 steps "
           "of the task")
def _():
    g = _grads_05_6()
    return next(mg for mg in range(0, 10)
                if F.simulate_fp8_scaling(g, "fp8_e5m2", "delayed", margin=mg).overflow_counts.sum() == 0)


@m("05.6", "sizes the margin for the 25% growth per step alone, ceil(log2 1.25), forgetting the jump")
def _():
    return math.ceil(math.log2(1.25))


def _schemes_05_7(whole_matrix=False, channel_axis=0, outlier_bits=64):
    w = F.outlier_matrix(np.random.default_rng(507), 256, 1000)
    results = {
        "int8 per tensor": F.quantize(w, "int8", "tensor"),
        "int8 per channel": F.quantize(w, "int8", "channel", axis=channel_axis),
        "int8 per block": F.quantize(w, "int8", "block"),
        "fp8_e4m3 per tensor": F.quantize(w, "fp8_e4m3", "tensor"),
        "fp8_e4m3 per channel": F.quantize(w, "fp8_e4m3", "channel", axis=channel_axis),
        "mxfp8": F.mx_quantize(w, "fp8_e4m3"),
        "int4 per block": F.quantize(w, "int4", "block"),
        "mxfp4": F.mx_quantize(w, "fp4_e2m1"),
    }
    table = {name: (q.bits_per_element, q.dequantized) for name, q in results.items()}
    rms_row = np.sqrt(np.mean(w ** 2, axis=1, keepdims=True))
    apart = np.abs(w) > 8 * rms_row
    q = F.quantize(np.where(apart, 0.0, w), "int8", "channel", axis=channel_axis)
    deq = np.where(apart, w, q.dequantized)
    table["int8 per channel, outliers apart"] = (q.bits_per_element + outlier_bits * apart.sum() / w.size, deq)
    ok = []
    for name, (bits, deq) in table.items():
        if whole_matrix:
            err = np.sqrt(np.mean((deq - w) ** 2) / np.mean(w ** 2))
        else:
            err = np.max(np.sqrt(np.mean((deq - w) ** 2, axis=1) / np.mean(w ** 2, axis=1)))
        if bits <= 9.5 and err <= 0.015:
            ok.append((bits, name))
    return min(ok)[1]


@m("05.7", "checks the error budget on the whole matrix (rel_rms_error of all of w) instead of on "
           "every row")
def _():
    return _schemes_05_7(whole_matrix=True)


@m("05.7", "takes a channel to be a column: quantizes 'per channel' with axis=1, as section 8d does "
           "for its layer weights")
def _():
    return _schemes_05_7(channel_axis=1)


def _sum_mbits(values, mbits, rounding):
    s = 0.0
    for v in values:
        t = s + v
        if t == 0.0:
            s = 0.0
            continue
        q = math.ldexp(1.0, math.frexp(t)[1] - 1 - mbits)
        s = rounding(t / q) * q
    return s


@m("05.8", "uses section 7's stagnation formula with the mean product 0.01: the fewest M whose "
           "stall point 2^(ceil(log2 c) + M + 1) lies above the exact sum, ignoring the rounding "
           "error that builds up before the stall")
def _():
    products = np.random.default_rng(508).uniform(0.0, 0.02, 2 ** 14)
    total = products.sum()
    c = products.mean()
    return next(mb for mb in range(7, 24) if 2.0 ** (math.ceil(math.log2(c)) + mb + 1) > total)


@m("05.8", "simulates the accumulator with truncation (math.floor of the scaled sum) instead of "
           "rounding to nearest, ties to even")
def _():
    products = np.random.default_rng(508).uniform(0.0, 0.02, 2 ** 14)
    exact = math.fsum(products)
    vals = products.tolist()
    return next(mb for mb in range(7, 24)
                if abs(_sum_mbits(vals, mb, math.floor) - exact) / exact <= 0.01)


# =============================================================================================
# Lesson 06: tiling and FlashAttention
# =============================================================================================

@m("06.1", "predicts 'quarters': a tile twice as wide has four times the area, so the learner "
           "expects four times fewer bytes")
def _():
    return "quarters"


@m("06.1", "predicts 'unchanged': the same FLOP and the same matrices, so the learner expects the "
           "same bytes")
def _():
    return "unchanged"


@m("06.2", "forgets the two stages: fits one T x 64 + 64 x T pair of BF16 slices")
def _():
    smem = get_accelerator("H200").max_shared_mem_bytes_per_block
    return int(smem // (1 * 2 * 2 * 64)) // 16 * 16


@m("06.2", "calls tiling.tile_limit('H200') and answers .largest: its default tile_k = 32 and its "
           "register cap on the accumulators are not what the task asks")
def _():
    return int(tiling.tile_limit("H200", "bf16").largest)


def _qkv_06_3():
    return np.random.default_rng(0).standard_normal((3, 3000, 48))


@m("06.3", "leaves causal at its default False when running flash_attention")
def _():
    q, k, v = _qkv_06_3()
    _, traffic = attention.flash_attention(q, k, v, block_size=200, return_traffic=True)
    n, d = 3000, 48
    return (4 * n * n + 4 * n * d) / traffic.elements_moved


@m("06.3", "uses flash_attention_traffic with its default block size instead of block_size=200")
def _():
    n, d = 3000, 48
    return (4 * n * n + 4 * n * d) / attention.flash_attention_traffic(n, d, causal=True).elements_moved


@m("06.4", "forgets to rescale the previous output: o_new = o_prev + p @ v_block (l is rescaled)")
def _():
    def online_softmax_step(m_prev, l_prev, o_prev, s_block, v_block):
        m_new = np.maximum(m_prev, s_block.max(axis=-1))
        alpha = np.exp(m_prev - m_new)
        p = np.exp(s_block - m_new[:, None])
        return m_new, alpha * l_prev + p.sum(axis=-1), o_prev + p @ v_block
    return online_softmax_step


@m("06.4", "flips the sign of the rescaling factor: alpha = exp(m_new - m_prev)")
def _():
    def online_softmax_step(m_prev, l_prev, o_prev, s_block, v_block):
        m_new = np.maximum(m_prev, s_block.max(axis=-1))
        alpha = np.exp(m_new - m_prev)
        p = np.exp(s_block - m_new[:, None])
        return m_new, alpha * l_prev + p.sum(axis=-1), alpha[:, None] * o_prev + p @ v_block
    return online_softmax_step


def _softmax_06_5(b=2, outputs=("O",)):
    r, c = 1000, 3001
    sizes = {"S": b * r * c, "m": b * r, "P": b * r * c, "l": b * r, "O": b * r * c}
    ops = [("rowmax", ("S",), ("m",), r * c), ("sub_exp", ("S", "m"), ("P",), 2 * r * c),
           ("rowsum", ("P",), ("l",), r * c), ("divide", ("P", "l"), ("O",), r * c)]
    unfused = tiling.graph_traffic(ops, sizes, [("rowmax",), ("sub_exp",), ("rowsum",), ("divide",)], outputs)
    fused = tiling.graph_traffic(ops, sizes, [("rowmax", "sub_exp", "rowsum", "divide")], outputs)
    return unfused.bytes_moved - fused.bytes_moved


@m("06.5", "gives graph_traffic sizes in elements, not bytes, so the saving comes out in elements")
def _():
    return _softmax_06_5(b=1)


@m("06.5", "sizes the tensors at 4 bytes per element (FP32) although the scores are BF16")
def _():
    return _softmax_06_5(b=4)


def _register_kib_06_6(acc_bytes=4, stages=2, square=False):
    sides = range(16, 513, 16)
    cands = []
    for tm in sides:
        for tn in ([tm] if square else sides):
            if stages * 2 * (tm * 32 + 32 * tn) > 64 * 1024:
                continue
            q = tiling.tiled_matmul_traffic(200, 8192, 8192, tm, tn).bytes_moved
            cands.append((math.ceil(tm * tn * acc_bytes / 1024), q, tm, tn))
    cands.sort()
    best = None
    for i, (kib, q, tm, tn) in enumerate(cands):
        if best is None or q < best[1]:
            best = (kib, q, tm, tn)
        last_of_budget = i + 1 == len(cands) or cands[i + 1][0] > kib
        if last_of_budget and best[2] >= 200:
            return kib


@m("06.6", "keeps the running sums in BF16 (2 bytes) instead of FP32 when sizing the registers")
def _():
    return _register_kib_06_6(acc_bytes=2)


@m("06.6", "forgets the double buffering: one stage of A and B slices in the 64 KiB of shared memory")
def _():
    return _register_kib_06_6(stages=1)


def _fa_06_7(prefetch=True, score_bytes=4, registers=True):
    best = None
    for bq in range(16, 1025, 16):
        if registers and bq * 64 * 4 > 128 * 1024:
            continue
        for bk in range(16, 1025, 16):
            smem = bq * 64 * 2 + (2 if prefetch else 1) * 2 * bk * 64 * 2 + bq * bk * score_bytes
            if smem <= 192 * 1024:
                e = attention.flash_attention_traffic(4000, 64, (bq, bk)).elements_moved
                best = e if best is None else min(best, e)
    return best


@m("06.7", "forgets the prefetch: counts one key block and one value block in shared memory, not two "
           "of each")
def _():
    return _fa_06_7(prefetch=False)


@m("06.7", "ignores the 128 KiB register budget for the FP32 output block")
def _():
    return _fa_06_7(registers=False)


# =============================================================================================
# Lesson 07: inference economics
# =============================================================================================

@m("07.1", "predicts 'compute': four GPUs and 32 sequences sound like plenty of batching")
def _():
    return "compute"


def _train_07_2(**kw):
    v = variant("07.2")
    return training_time_s(get_model(v["model"]).params, v["tokens"], accelerator=v["accelerator"], **kw)


@m("07.2", "leaves training_time_s's utilization keyword at its default 0.4 instead of 0.35")
def _():
    return _train_07_2(n_devices=variant("07.2")["gpus"]) / 86400


@m("07.2", "forgets n_devices, so the time is that of a single GPU")
def _():
    return _train_07_2(utilization=0.35) / 86400


@m("07.3", "leaves decode_step's precision at its default 'bf16' instead of 'fp8'")
def _():
    st = decode_step("Mistral 7B", "H200", 64, 3000)
    return cost_per_million_tokens_usd(st.tokens_per_s, 3.10)


@m("07.3", "uses one sequence's rate, 1 / t_step, instead of the batch's 64 tokens per step")
def _():
    st = decode_step("Mistral 7B", "H200", 64, 3000, "fp8")
    return cost_per_million_tokens_usd(1 / st.t_step_s, 3.10)


@m("07.4", "rounds crossover_batch down with int() instead of up")
def _():
    return int(crossover_batch("Llama 3 8B", "B200", 100, "int8 weights"))


@m("07.4", "leaves the precision at the default 'bf16' instead of 'int8 weights'")
def _():
    return math.ceil(crossover_batch("Llama 3 8B", "B200", 100))


@m("07.5", "forgets the factor 2: counts the keys but not the values")
def _():
    def kv_cache_total_bytes(layers, kv_heads, head_dim, bytes_per_element, context_tokens, batch):
        return layers * kv_heads * head_dim * bytes_per_element * context_tokens * batch
    return kv_cache_total_bytes


@m("07.5", "forgets the batch: returns one sequence's cache")
def _():
    def kv_cache_total_bytes(layers, kv_heads, head_dim, bytes_per_element, context_tokens, batch):
        return 2 * layers * kv_heads * head_dim * bytes_per_element * context_tokens
    return kv_cache_total_bytes


@m("07.6", "drops the 6 of C = 6ND: N = sqrt(C / 20)")
def _():
    return math.sqrt(2.4e24 / 20)


@m("07.6", "solves C = 6 N x 20 as if D were 20 tokens, not 20 per parameter: N = C / 120")
def _():
    return 2.4e24 / 120


def _trace_07_7():
    rng = np.random.default_rng(707)
    arrival_s = np.cumsum(rng.exponential(1 / 60, 1500))
    out = np.minimum(1536, np.maximum(1, np.round(rng.lognormal(np.log(250) - 0.5, 1.0, 1500)))).astype(int)
    return arrival_s, out


def _latency_07_7(slots, pct=99):
    arrival_s, out = _trace_07_7()
    step_s = decode_step("Llama 3 8B", "H100 SXM", slots, 1024).t_step_s
    run = simulate_batching(np.floor(arrival_s / step_s), out, slots)
    return run.latency_percentile_steps(pct) * step_s


def _largest_slots_07_7(cap):
    for slots in range(cap, 0, -1):
        if _latency_07_7(slots) <= 16:
            return slots


@m("07.7", "sizes the memory cap at 1024 tokens per slot (the context of the step time) instead of "
           "the 2048 every slot may grow to, and takes the largest slots that meet the latency")
def _():
    kv = get_model("Llama 3 8B").kv_bytes_per_token("bf16")
    return _largest_slots_07_7(int(40e9 // (1024 * kv)))


@m("07.7", "reads 40 GB as 40 GiB (40 x 2^30 bytes) and takes the largest slots under that cap")
def _():
    kv = get_model("Llama 3 8B").kv_bytes_per_token("bf16")
    return _largest_slots_07_7(int(40 * 2 ** 30 // (2048 * kv)))


def _deploy_07_8(gpus=(2, 4, 8), memory=True, paid_gpus=None):
    (b1, (t1, m1)), (b2, (t2, m2)) = sorted({8: (12.6e-3, 38.0e9), 40: (16.2e-3, 48.7e9)}.items())
    t_seq, mem_seq = (t2 - t1) / (b2 - b1), (m2 - m1) / (b2 - b1)
    t_fix, mem_fix = t1 - b1 * t_seq, m1 - b1 * mem_seq
    best = None
    for g in gpus:
        share = 4 / g
        b_time = int((20e-3 / share - t_fix) // t_seq)
        b_mem = int((80e9 / share - mem_fix) // mem_seq)
        b = min(b_time, b_mem) if memory else b_time
        if b < 1:
            continue
        tps = b / ((t_fix + t_seq * b) * share)
        usd = cost_per_million_tokens_usd(tps, 3.00, n_devices=paid_gpus or g)
        best = usd if best is None else min(best, usd)
    return best


@m("07.8", "does not redeploy: keeps the four GPUs and only picks the largest batch that meets "
           "20 ms and fits")
def _():
    return _deploy_07_8(gpus=(4,))


@m("07.8", "forgets the memory: takes the largest batch within 20 ms on each deployment, whether "
           "its cache fits or not")
def _():
    return _deploy_07_8(memory=False)


def _best_tps_07_9(acc, scheme, fit=True, latency=True):
    hi = max_batch("Llama 3 70B", acc, 4096, scheme) if fit else 100_000
    if latency:
        lo_b, hi_b = 0, hi
        while lo_b < hi_b:
            mid = (lo_b + hi_b + 1) // 2
            if decode_step("Llama 3 70B", acc, mid, 4096, scheme).t_step_s <= 20e-3:
                lo_b = mid
            else:
                hi_b = mid - 1
        hi = lo_b
    if hi < 1:
        return 0.0
    return decode_step("Llama 3 70B", acc, hi, 4096, scheme).tokens_per_s


def _tbs_07_9(**kw):
    h200 = get_accelerator("H200")
    for c in range(480, 5001):
        acc = dataclasses.replace(h200, mem_bandwidth=c / 100 * 1e12)
        if _best_tps_07_9(acc, "fp8", **kw) >= _best_tps_07_9(acc, "int4 weights", **kw):
            return c / 100


@m("07.9", "ignores the memory: each scheme's best batch is the largest that meets 20 ms, whether "
           "its weights and cache fit in 141 GB or not")
def _():
    return _tbs_07_9(fit=False)


@m("07.9", "ignores the 20 ms promise: each scheme's best batch is simply the largest that fits "
           "(max_batch)")
def _():
    return _tbs_07_9(latency=False)


# =============================================================================================
# Lesson 08: beyond one chip
# =============================================================================================

@m("08.1", "predicts 'less': InfiniBand's 400 Gb/s sounds close to NVLink, and the learner "
           "expects the big matmuls of h = 8192 to dwarf the all-reduces")
def _():
    return "less"


@m("08.2", "uses the catalog's interconnect_bandwidth (both directions added) as the per-direction "
           "bandwidth of the ring")
def _():
    h200 = get_accelerator("H200")
    link = get_link("H200", "nvlink")
    return collective_time_s("all_reduce", 13e9 * 2, 8, bandwidth_bytes_per_s=h200.interconnect_bandwidth,
                             latency_s=link.latency_s) * 1e3


@m("08.2", "charges the whole 26 GB tensor at every one of the 2(n-1) ring steps instead of a "
           "chunk of S/n per step")
def _():
    link = get_link("H200", "nvlink")
    return 2 * (8 - 1) * link.transfer_time_s(13e9 * 2) * 1e3


@m("08.3", "draws the data with rng.standard_normal, which is float64, not the float32 the task "
           "asks for, so every byte count doubles")
def _():
    data = np.random.default_rng(0).standard_normal((6, 23))
    return float(simulate_ring_all_reduce(data).link_bytes.max())


@m("08.3", "answers trace.total_bytes, the bytes of all links together, instead of the busiest link")
def _():
    data = np.random.default_rng(0).standard_normal((6, 23)).astype(np.float32)
    return float(simulate_ring_all_reduce(data).total_bytes)


@m("08.4", "off by one stage: stage 1 already shards the gradients as well as the optimizer state")
def _():
    def zero_bytes(n_params, dp, stage):
        p = n_params
        if stage == 0:
            return 16 * p
        if stage in (1, 2):
            return 2 * p + 14 * p / dp
        return 16 * p / dp
    return zero_bytes


@m("08.4", "counts 14 bytes per parameter (16-bit weight, FP32 master and two moments), forgetting "
           "the 16-bit gradient")
def _():
    def zero_bytes(n_params, dp, stage):
        p = n_params
        return {0: 14 * p, 1: 2 * p + 12 * p / dp, 2: 2 * p + 12 * p / dp, 3: 14 * p / dp}[stage]
    return zero_bytes


def _batch_08_5(acc, context):
    best = None
    for b in range(1, 2000):
        st = decode_step("Llama 3 8B", acc, b, context)
        if st.fits and st.t_step_s <= 20e-3 and st.tokens_per_s >= 2800:
            best = b
    return best


@m("08.5", "forgets to pass the slice: decode_step's default accelerator, the whole H100 SXM, and "
           "takes the largest batch that meets the three rules there")
def _():
    return _batch_08_5("H100 SXM", 2048)


@m("08.5", "leaves decode_step's context at its default of 1024 tokens instead of 2048, and takes "
           "the largest batch that passes")
def _():
    return _batch_08_5(mig_accelerator("3g.40gb", "H100 SXM"), 1024)


def _fastest_08_6(fits, tps=(1, 2, 4, 8, 16), pps=(1, 2, 4, 8), stages=(1, 2, 3), recomputes=RECOMPUTE):
    model = transformer_for_params(70e9)
    tokens = 4 * 2 ** 20
    colleague = estimate_training_step(model, ParallelPlan(256, 8, 1, 1, 32, "selective"), "H100 SXM", tokens)
    factor = 46.4e9 / colleague.memory["activations"]
    best = None
    for tp in tps:
        for pp in pps:
            dp = 256 // (tp * pp)
            seqs = tokens // (dp * model.seq_len)
            if seqs < 1:
                continue
            micro = 32 if seqs >= 32 else seqs
            for z in stages:
                for rc in recomputes:
                    est = estimate_training_step(model, ParallelPlan(256, tp, pp, z, micro, rc), "H100 SXM", tokens)
                    if fits(est, factor) and (best is None or est.step_time_s < best):
                        best = est.step_time_s
    return best


@m("08.6", "ignores the measured activations: takes the estimate's own fits, uncorrected")
def _():
    return _fastest_08_6(lambda est, f: est.fits)


@m("08.6", "scales the whole memory estimate by the measured/estimated activation ratio, not only "
           "the activations")
def _():
    return _fastest_08_6(lambda est, f: est.memory_bytes * f <= est.capacity_bytes)


def _stages_08_7(over_f, over_b, candidates=(1, 2, 3, 4, 6, 8, 12, 16, 24, 48)):
    for p in candidates:
        run = simulate_pipeline(p, 20, "1f1b", 240 / p + over_f, 480 / p + over_b)
        if run.makespan <= 2000:
            return p


@m("08.7", "leaves out the 4 ms per operation, as the simulator does by default")
def _():
    return _stages_08_7(0, 0)


@m("08.7", "forgets that p must divide 48: tries every p from 1 upward, 48/p layers or not")
def _():
    return _stages_08_7(4, 4, candidates=range(1, 49))


if __name__ == "__main__":
    for ex, mistake, f in R:
        print(ex, repr(f())[:80], "|", mistake[:60])
    print(len(R), "mistakes on", len({ex for ex, _, _ in R}), "exercises")


# Judged after the checks ran (step 3 of the round): indices are positions in R, 0-based.
RIGHT_BY_LUCK = {23, 34, 63, 80, 81, 97, 98, 110}
WRONGLY_ACCEPTED = set()
NAMED = {
    0: 'occupancy-smem-ignored',
    1: 'occupancy-threads-only',
    2: 'per-gpu-not-per-sm',
    3: 'other-accelerator',
    4: 'more-warps-always-better',
    5: 'index-not-count',
    6: 'register-subpartitions-ignored',
    7: 'registers-256k',
    8: 'l1-shared-memory-ignored',
    9: 'spills-are-free',
    10: 'one-scheduler-per-sm',
    11: 'more-warps-always-better',
    12: 'assumed-latency-not-measured',
    13: 'loads-in-flight-cost-no-registers',
    14: 'bytes-requested-not-moved',
    15: 'aos-keeps-a-particle-together',
    16: 'warp-32-not-64',
    18: 'loop-test-plus-one-dropped',
    19: 'threads-rounded-to-whole-warps',
    20: 'access-straddle-ignored',
    22: 'rows-assumed-aligned',
    24: 'sort-cost-left-out',
    25: 'uniform-cost-times-32',
    27: 'both-link-directions',
    28: 'hbm-slowest',
    29: 'fits-so-hits',
    30: 'one-way-per-line',
    31: 'same-bank-always-conflicts',
    33: 'pin-rate-in-bytes',
    35: 'biggest-cut-of-the-bottleneck',
    36: 'more-buffers-hide-any-copy',
    37: 'cache-pad-ignores-banks',
    38: 'bank-pad-ignores-cache',
    39: 'ridge-tens-of-flop-per-byte',
    40: 'roofline-sum-not-max',
    41: 'other-accelerator',
    43: 'weights-bytes-only',
    44: 'c-write-forgotten',
    45: 'fma-one-flop',
    46: 'roofline-max-not-min',
    47: 'roofline-no-peak',
    48: 'furthest-from-roof-first',
    49: 'most-called-kernel-first',
    50: 'full-tile-rows-only',
    51: 'l2-need-without-hbm-roof',
    52: 'rated-not-sustained',
    53: 'linear-between-measurements',
    54: 'bf16-more-precise',
    55: 'ratio-not-time',
    56: 'fp8-not-int4',
    57: 'percent-read-as-fraction',
    58: 'sweep-best-scale-not-smallest',
    60: 'truncate-not-round',
    61: 'top-exponent-not-reserved',
    64: 'margin-for-steady-growth-only',
    65: 'whole-matrix-error-hides-rows',
    67: 'error-only-at-stagnation',
    68: 'truncation-not-nearest',
    69: 'traffic-follows-tile-area',
    70: 'tiling-reads-once',
    71: 'no-double-buffering',
    72: 'register-limit-not-smem',
    73: 'causal-mask-ignored',
    74: 'block-size-left-at-default',
    77: 'fusion-elements-not-bytes',
    78: 'fp32-bytes',
    79: 'accumulators-in-bf16',
    82: 'output-accumulator-ignored',
    83: 'batch-makes-compute-bound',
    84: 'utilization-left-at-default',
    85: 'one-gpu-not-all',
    86: 'precision-ignored',
    87: 'batch-forgotten',
    88: 'crossover-rounded-down',
    89: 'int8-weights-ignored',
    90: 'kv-keys-only',
    92: 'six-flop-forgotten',
    93: 'chinchilla-no-square-root',
    95: 'gib-for-gb',
    99: 'largest-batch-scheme',
    100: 'network-judged-by-headline',
    101: 'both-link-directions',
    103: 'float64-for-float32',
    104: 'all-links-summed',
    106: 'adam-14-bytes',
    107: 'mig-slice-as-whole-gpu',
    109: 'estimate-trusted-over-measurement',
    111: 'pipeline-overhead-ignored',
    112: 'does not split the 48 layers',
}
PARTLY = {26, 94, 96}
NOT_NAMED = {17, 21, 32, 42, 59, 62, 66, 75, 76, 91, 102, 105, 108}


#: The entries judged partly or not named above, named after the feedback was tuned on this round
#: (fix-a and fix-b): in sample from then on. tests/test_checks_round_26.py keeps them named.
NAMED_AFTER_TUNING = {
    17: 'lesson-rho-kept',
    21: 'lanes-assumed-contiguous',
    26: 'more-bandwidth-hides-the-copy',
    32: 'stride-of-first-two-lanes',
    42: 'square-matmul-rule-for-skinny',
    59: 'one-scale-per-row',
    62: 'implicit-leading-one-dropped',
    66: 'channel-taken-as-column',
    75: 'output-not-rescaled',
    76: 'rescale-factor-inverted',
    91: 'kv-batch-forgotten',
    94: 'cache-at-1024-most-slots',
    96: 'profiled-deployment-only',
    102: 'whole-buffer-every-ring-step',
    105: 'zero-1-shards-gradients',
    108: 'mig-context-left-at-default-largest',
}
