"""Blind round 26h of wrong answers to lessons 01-08 (issue 26's last "done when").

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

@m("01.1", "predicts 'registers' because 40 registers per thread sounds like a lot, without comparing the 40 KiB of shared memory per block with the SM's 164 KiB")
def _():
    return "registers"


@m("01.1", "predicts 'warps', thinking 128-thread blocks of 4 warps fill the SM's 64 warps first")
def _():
    return "warps"


@m("01.2", "calls littles_law() without the accelerator argument, so it keeps the default H100 SXM instead of the H200")
def _():
    from course_lib.latency import ASSUMED_DRAM_LATENCY_S, littles_law
    return littles_law(latency_s=ASSUMED_DRAM_LATENCY_S).bytes_in_flight_per_sm / 1e3


@m("01.2", "divides the bytes per SM by 1024 (KiB) instead of 1000 (kB)")
def _():
    from course_lib.latency import ASSUMED_DRAM_LATENCY_S, littles_law
    return littles_law("H200", ASSUMED_DRAM_LATENCY_S).bytes_in_flight_per_sm / 1024


@m("01.2", "answers the bytes in flight per SM in bytes, forgetting to convert to kilobytes")
def _():
    from course_lib.hardware import get_accelerator
    from course_lib.latency import ASSUMED_DRAM_LATENCY_S
    h200 = get_accelerator("H200")
    return h200.mem_bandwidth * ASSUMED_DRAM_LATENCY_S / h200.sm_count


@m("01.3", "takes np.argmax(utilisation >= 0.9), the array index, as the warp count, one less than the warps (the sweep starts at 1)")
def _():
    from course_lib.latency import simulate_latency_hiding
    sweep = simulate_latency_hiding(np.arange(1, 65), 24, 700)
    return int(np.argmax(sweep.utilisation >= 0.9))


@m("01.3", "answers the knee ceil((C + L) / C) = 31, where utilisation reaches 1, instead of the first count reaching 0.9")
def _():
    from course_lib.latency import warps_to_saturate
    return warps_to_saturate(24, 700)


@m("01.4", "does not round 32 x r up to the register allocation unit (256), dividing by the exact registers per warp")
def _():
    def warps_by_registers(registers_per_thread, accelerator):
        from course_lib.hardware import get_accelerator
        acc = get_accelerator(accelerator)
        per_warp = 32 * registers_per_thread
        per_sub = acc.registers_per_sm // acc.warp_alloc_granularity
        return int(per_sub // per_warp * acc.warp_alloc_granularity)
    return warps_by_registers


@m("01.4", "divides the whole register file by the registers per warp, ignoring the split into warp_alloc_granularity sub-partitions")
def _():
    def warps_by_registers(registers_per_thread, accelerator):
        from course_lib.hardware import get_accelerator
        acc = get_accelerator(accelerator)
        unit = acc.register_alloc_unit
        per_warp = -(-32 * registers_per_thread // unit) * unit
        return int(acc.registers_per_sm // per_warp)
    return warps_by_registers


@m("01.4", "uses register_file_bytes_per_sm (bytes) as the number of registers, four times too many")
def _():
    def warps_by_registers(registers_per_thread, accelerator):
        from course_lib.hardware import get_accelerator
        acc = get_accelerator(accelerator)
        unit = acc.register_alloc_unit
        per_warp = -(-32 * registers_per_thread // unit) * unit
        per_sub = acc.register_file_bytes_per_sm // acc.warp_alloc_granularity
        return int(per_sub // per_warp * acc.warp_alloc_granularity)
    return warps_by_registers


def _caps_015(free_bytes_fn, footprint_fn):
    from course_lib.latency import H100_L1_SHARED_BYTES_PER_SM, occupancy, register_pressure
    caps = (255, 128, 96, 80, 64, 48)
    rows = register_pressure(128, 150, caps, 12 * 1024, "H100 SXM")
    ok = []
    for r in rows:
        occ = occupancy(128, r.registers_used, 12 * 1024, "H100 SXM")
        if footprint_fn(r) <= free_bytes_fn(H100_L1_SHARED_BYTES_PER_SM, occ):
            ok.append(r)
    return max(ok, key=lambda r: (r.warps_per_sm, r.cap)).cap


@m("01.5", "compares the spill footprint with the whole 256 KiB, forgetting to subtract the resident blocks' shared memory")
def _():
    return _caps_015(lambda total, occ: total, lambda r: r.spill_footprint_per_sm)


@m("01.5", "compares spill_bytes_per_thread_per_pass (a store plus a reload, 8 bytes per spilled register) x resident threads with the free L1, instead of the 4-byte footprint")
def _():
    return _caps_015(lambda total, occ: total - occ.blocks_per_sm * occ.shared_mem_allocated_per_block,
                     lambda r: r.spill_bytes_per_thread_per_pass * r.warps_per_sm * 32)


@m("01.5", "picks the cap with the most resident warps (48) and never checks the spills against L1")
def _():
    return 48


def _budget_016(target, schedulers):
    from course_lib.latency import LaunchError, analytic_utilisation, occupancy
    best = None
    for r in range(1, 256):
        try:
            w = occupancy(128, r, 12 * 1024, "H100 SXM").warps_per_sm
        except LaunchError:
            continue
        if analytic_utilisation(w, 60, 500, schedulers) >= target:
            best = r
    return best


@m("01.6", "runs the latency-hiding model with one scheduler (the simulator's default) instead of the H100 SM's four")
def _():
    return _budget_016(0.9, 1)


@m("01.6", "requires full saturation (utilisation 1, the knee) instead of 0.9")
def _():
    return _budget_016(1.0, 4)


@m("01.6", "finds 34 warps needed, then divides the 65,536 registers by 34 x 32 threads, ignoring whole blocks and the 256-register allocation unit")
def _():
    need = math.ceil(0.9 * 4 * (60 + 500) / 60)
    return 65536 // (need * 32)


@m("01.7", "uses the lessons' ASSUMED_DRAM_LATENCY_S (600 ns) instead of the latency the k = 1 profile implies")
def _():
    from course_lib.hardware import get_accelerator
    from course_lib.latency import ASSUMED_DRAM_LATENCY_S, occupancy
    h200 = get_accelerator("H200")
    need = h200.mem_bandwidth * ASSUMED_DRAM_LATENCY_S
    for k in range(1, 200):
        w = occupancy(256, 72 + k, 0, "H200").warps_per_sm
        if w * 32 * 4 * k * h200.sm_count >= need:
            return k


@m("01.7", "keeps the k = 1 occupancy (24 warps per SM) for every k, forgetting that each load in flight takes one more register")
def _():
    from course_lib.hardware import get_accelerator
    from course_lib.latency import occupancy
    h200 = get_accelerator("H200")
    w1 = occupancy(256, 73, 0, "H200").warps_per_sm
    latency = w1 * 32 * 4 * h200.sm_count / 0.5e12
    need = h200.mem_bandwidth * latency
    return math.ceil(need / (w1 * 32 * 4 * h200.sm_count))


@m("01.7", "assumes the SM stays fully occupied (max_warps_per_sm = 64 warps) at every k instead of the warps that fit with 72 + k registers")
def _():
    from course_lib.hardware import get_accelerator
    from course_lib.latency import occupancy
    h200 = get_accelerator("H200")
    w1 = occupancy(256, 73, 0, "H200").warps_per_sm
    latency = w1 * 32 * 4 * h200.sm_count / 0.5e12
    need = h200.mem_bandwidth * latency
    return math.ceil(need / (h200.max_warps_per_sm * 32 * 4 * h200.sm_count))


# ============================================================================ lesson 02

@m("02.1", "answers 'aos', thinking a struct's fields arrive together in one line so AoS moves fewer bytes")
def _():
    return "aos"


@m("02.1", "answers 'same': both layouts read 32 x 4 = 128 requested bytes, so the learner counts requested, not moved, bytes")
def _():
    return "same"


@m("02.2", "uses NVIDIA's warp width 32 instead of the MI300X's 64-lane wavefront")
def _():
    rho, w = 0.05, 32
    return 1 - rho ** w - (1 - rho) ** w


@m("02.2", "answers the share of wavefronts that stay uniform, rho^W + (1 - rho)^W, instead of the share that diverge")
def _():
    from course_lib.hardware import get_accelerator
    rho, w = 0.05, get_accelerator("MI300X").warp_size
    return rho ** w + (1 - rho) ** w


@m("02.2", "computes the probability that exactly one lane takes the branch, W rho (1 - rho)^(W-1)")
def _():
    from course_lib.hardware import get_accelerator
    rho, w = 0.05, get_accelerator("MI300X").warp_size
    return w * rho * (1 - rho) ** (w - 1)


def _loop_023(n_threads=1000, inclusive=False):
    from course_lib.simt import Let, While, run_simt
    if inclusive:
        test = lambda v: v["i"] <= v["tid"] % 7 + 1
    else:
        test = lambda v: v["i"] < v["tid"] % 7 + 1
    kernel = [Let("i", lambda v: 0 * v["tid"]),
              While(test, [Let("a", lambda v: 2 * v["i"]), Let("a", lambda v: v["a"] + 1),
                           Let("i", lambda v: v["i"] + 1)])]
    return run_simt(kernel, n_threads).simt_efficiency


@m("02.3", "writes the loop test as i <= tid % 7 + 1 (inclusive), one iteration too many per thread")
def _():
    return _loop_023(inclusive=True)


@m("02.3", "runs the kernel over 1024 threads (a whole number of warps) instead of 1000")
def _():
    return _loop_023(n_threads=1024)


@m("02.4", "counts only the sector of each access's first byte, a // 32, so an access straddling two sectors counts once")
def _():
    def sectors_touched(addresses, bytes_per_access):
        return int(np.unique(np.asarray(addresses, dtype=np.int64) // 32).size)
    return sectors_touched


@m("02.4", "takes the last sector as (a + bytes_per_access) // 32, an exclusive end treated as inclusive")
def _():
    def sectors_touched(addresses, bytes_per_access):
        a = np.asarray(addresses, dtype=np.int64)
        first, last = a // 32, (a + bytes_per_access) // 32
        return int(len({s for f, l in zip(first, last) for s in range(f, l + 1)}))
    return sectors_touched


@m("02.4", "counts distinct 128-byte lines (the lesson's LINE_BYTES) instead of 32-byte sectors")
def _():
    def sectors_touched(addresses, bytes_per_access):
        a = np.asarray(addresses, dtype=np.int64)
        first, last = a // 128, (a + bytes_per_access - 1) // 128
        return int(len({s for f, l in zip(first, last) for s in range(f, l + 1)}))
    return sectors_touched


def _width_025(cols):
    from course_lib.simt import coalescing
    for w in (4, 8, 16, 32, 64, 128, 256):
        h = 256 // w
        ratios = []
        for by in range(64 // h):
            for bx in range(256 // w):
                for warp in range(8):
                    tid = np.arange(32 * warp, 32 * warp + 32)
                    row, col = by * h + tid // w, bx * w + tid % w
                    c = coalescing(4 * (row * cols + col))
                    ratios.append(c.n_sectors * 32 / 128)
        if np.mean(ratios) <= 1.5:
            return w


@m("02.5", "uses a row length of 1024 floats (rows aligned to 128 bytes) instead of the matrix's 1002 columns")
def _():
    return _width_025(1024)


@m("02.5", "answers 32 from the rule that a warp should read 32 consecutive floats of one row, without counting the sectors")
def _():
    return 32


@m("02.6", "leaves out the grouping's 11 instructions per thread, so sorting pays from the shortest path")
def _():
    p = 1 / 64
    p_long, p_short = 1 - (1 - p) ** 32, 1 - p ** 32
    return next(L for L in range(1, 1001) if p * L + (1 - p) * 10 <= L * p_long + 10 * p_short)


@m("02.6", "estimates the chance that a warp holds a long particle as 32 x 1/64 = 0.5 instead of 1 - (63/64)^32")
def _():
    p = 1 / 64
    p_short = 1 - p ** 32
    return next(L for L in range(1, 1001) if 11 + p * L + (1 - p) * 10 <= L * 32 * p + 10 * p_short)


# ============================================================================ lesson 03

@m("03.1", "predicts 'hidden' because the H200 has more bandwidth than the H100, without comparing MN/(M+N) = 128 with the H200's ridge")
def _():
    return "hidden"


@m("03.2", "divides by the catalog's host_link_bandwidth (both directions together) instead of half of it")
def _():
    from course_lib.hardware import get_accelerator
    return 7e9 * 2 / get_accelerator("H100 SXM").host_link_bandwidth * 1e3


@m("03.2", "divides by the H100's HBM bandwidth (mem_bandwidth) instead of its PCIe host link")
def _():
    from course_lib.hardware import get_accelerator
    return 7e9 * 2 / get_accelerator("H100 SXM").mem_bandwidth * 1e3


@m("03.2", "answers in seconds, forgetting the factor 1000 to milliseconds")
def _():
    from course_lib.hardware import get_accelerator
    return 7e9 * 2 / (get_accelerator("H100 SXM").host_link_bandwidth / 2)


@m("03.3", "reads the sweep one row too early and reports the last associativity below 90 % (4 ways)")
def _():
    from course_lib.memory import make_trace, simulate_cache
    trace = make_trace("sequential", 6 * 4096, 6 * 500, element_bytes=4096)
    fails = [w for w in (1, 2, 4, 8, 16, 32) if simulate_cache(trace, 16 * 1024, 64, w).hit_rate < 0.9]
    return max(fails)


@m("03.3", "argues that only a fully associative cache avoids conflicts and answers the largest choice, 32 ways, without running the sweep")
def _():
    return 32


@m("03.4", "counts lanes per bank without merging lanes that read the same word (no broadcast)")
def _():
    def passes(byte_addresses):
        banks = (np.asarray(byte_addresses, dtype=np.int64) // 4) % 32
        return int(np.bincount(banks, minlength=32).max())
    return passes


@m("03.4", "takes the bank as the byte address mod 32 instead of the word index (address // 4) mod 32")
def _():
    def passes(byte_addresses):
        a = np.asarray(byte_addresses, dtype=np.int64)
        words, banks = a // 4, a % 32
        return int(max(len(set(words[banks == b])) for b in np.unique(banks)))
    return passes


def _ridge_bw_035():
    from course_lib.hardware import get_accelerator
    h100, b200 = get_accelerator("H100 SXM"), get_accelerator("B200")
    return b200.peak("bf16") / h100.ridge_point("bf16")


@m("03.5", "rounds the number of stacks to the nearest integer (6.47 -> 6) instead of up")
def _():
    from course_lib.memory import bus_bandwidth_bytes_per_s
    return round(_ridge_bw_035() / bus_bandwidth_bytes_per_s(1024, 9.2e9))


@m("03.5", "takes 1024 pins x 9.2 Gbit/s as bytes per second, forgetting to divide the bits by 8")
def _():
    return math.ceil(_ridge_bw_035() / (1024 * 9.2e9))


@m("03.5", "uses the B200's FP8 peak instead of its dense BF16 peak for the bandwidth it needs")
def _():
    from course_lib.hardware import get_accelerator
    from course_lib.memory import bus_bandwidth_bytes_per_s
    need = get_accelerator("B200").peak("fp8") / get_accelerator("H100 SXM").ridge_point("bf16")
    return math.ceil(need / bus_bandwidth_bytes_per_s(1024, 9.2e9))


@m("03.6", "halves the copy for FP8 inputs but forgets the 0.3 us of dequantization added to each compute, so 'fp8 inputs' looks best")
def _():
    from course_lib.memory import pipelined_time_s
    t = {"third buffer": pipelined_time_s(12, 1.3e-6, 0.9e-6, 3),
         "faster math": pipelined_time_s(12, 1.3e-6, 0.45e-6, 2),
         "fp8 inputs": pipelined_time_s(12, 0.65e-6, 0.9e-6, 2),
         "multicast": pipelined_time_s(12, 0.75 * 1.3e-6, 0.9e-6, 2)}
    return min(t, key=t.get)


@m("03.6", "chooses 'third buffer', believing more buffers hide more of the copy although the kernel is copy-bound")
def _():
    return "third buffer"


def _pad_037(cache=True, banks=True):
    from course_lib.memory import column_read_conflict_degree, simulate_cache
    i, j = np.meshgrid(np.arange(64), np.arange(64), indexing="ij")
    for pad in range(0, 1024, 4):
        if banks and column_read_conflict_degree(1024, pad_words=pad) > 4:
            continue
        if cache:
            order = (4 * (i * (1024 + pad) + j)).T.reshape(-1)
            if simulate_cache(order, 32 * 1024, 128, 4).hit_rate < 0.9:
                continue
        return pad


@m("03.7", "checks the cache hit rate and the multiple of 4 but forgets the at-most-4-way bank-conflict rule")
def _():
    return _pad_037(banks=False)


@m("03.7", "checks only the bank rule (gcd(1024 + pad, 32) <= 4) and never runs the column walk through the cache")
def _():
    return _pad_037(cache=False)


# ============================================================================ lesson 04

@m("04.1", "predicts 'compute' because billions of FLOP sound like a lot, without comparing its intensity (about 120) with the B200's ridge (about 281)")
def _():
    return "compute"


def _gemv_042(acc_name, bpe=2):
    from course_lib.hardware import get_accelerator
    acc = get_accelerator(acc_name)
    n = 8192
    flops = 2 * 1 * n * n
    q = bpe * (n + n * n + n)
    return max(flops / acc.peak("bf16"), q / acc.mem_bandwidth) * 1e6


@m("04.2", "uses the H100 SXM's catalog figures instead of the H200's")
def _():
    return _gemv_042("H100 SXM")


@m("04.2", "counts Q in elements, forgetting the 2 bytes per BF16 element")
def _():
    return _gemv_042("H200", bpe=1)


@m("04.2", "gives only the compute time F / pi, leaving out the memory term of the max")
def _():
    from course_lib.hardware import get_accelerator
    return 2 * 8192 * 8192 / get_accelerator("H200").peak("bf16") * 1e6


@m("04.3", "takes m >= the ridge point itself (ceil(295.4) = 296), as if the intensity were m FLOP per byte")
def _():
    from course_lib.hardware import get_accelerator
    return math.ceil(get_accelerator("H100 SXM").ridge_point("bf16"))


@m("04.3", "uses the square-matmul rule n >= 3 I* from section 3 instead of the 8192 x 8192 weight matrix")
def _():
    from course_lib.hardware import get_accelerator
    return math.ceil(3 * get_accelerator("H100 SXM").ridge_point("bf16"))


@m("04.3", "leaves the write of the m x 8192 output out of the bytes when sweeping the intensity")
def _():
    from course_lib.hardware import get_accelerator
    ridge = get_accelerator("H100 SXM").ridge_point("bf16")
    return next(mm for mm in range(1, 10000)
                if 2 * mm * 8192 * 8192 / (2 * (mm * 8192 + 8192 * 8192)) >= ridge)


@m("04.4", "forgets the write of C: bytes = b (mk + kn)")
def _():
    def matmul_intensity(m, k, n, bytes_per_element=2):
        return 2 * m * k * n / (bytes_per_element * (m * k + k * n))
    return matmul_intensity


@m("04.4", "counts m k n FLOP (one per multiply-add) instead of 2 m k n")
def _():
    def matmul_intensity(m, k, n, bytes_per_element=2):
        return m * k * n / (bytes_per_element * (m * k + k * n + m * n))
    return matmul_intensity


@m("04.4", "writes C's size as m k instead of m n in the bytes")
def _():
    def matmul_intensity(m, k, n, bytes_per_element=2):
        return 2 * m * k * n / (bytes_per_element * (m * k + k * n + m * k))
    return matmul_intensity


@m("04.5", "uses np.maximum instead of np.minimum of the two roofs")
def _():
    def roofline(intensity, peak_flops, bandwidth):
        return np.maximum(peak_flops, bandwidth * np.asarray(intensity, dtype=float))
    return roofline


@m("04.5", "writes the sloped roof as bandwidth / intensity instead of bandwidth x intensity")
def _():
    def roofline(intensity, peak_flops, bandwidth):
        return np.minimum(peak_flops, bandwidth / np.asarray(intensity, dtype=float))
    return roofline


@m("04.6", "optimizes the kernel furthest below its roof (layer norm at 23 % of its roof), ignoring how much time per step that saves")
def _():
    from course_lib import roofline as rl
    prof = {"decode GEMV": (48e-6, 134_250_496, 134_217_728, 80),
            "layer norm": (22e-6, 16_777_216, 33_554_432, 64),
            "MLP GEMM": (1.65e-3, 1.2e9, 2 * 8192 ** 3, 4)}
    frac = {k: rl.read_profile(k, t, q, f, "H100 SXM", "bf16").fraction_of_roof for k, (t, q, f, c) in prof.items()}
    return min(frac, key=frac.get)


@m("04.6", "takes each kernel's best time as F / peak only (the compute roof), so the memory-bound decode GEMV seems to save the most per step")
def _():
    from course_lib.hardware import get_accelerator
    peak = get_accelerator("H100 SXM").peak("bf16")
    prof = {"decode GEMV": (48e-6, 134_250_496, 134_217_728, 80),
            "layer norm": (22e-6, 16_777_216, 33_554_432, 64),
            "MLP GEMM": (1.65e-3, 1.2e9, 2 * 8192 ** 3, 4)}
    saved = {k: (t - f / peak) * c for k, (t, q, f, c) in prof.items()}
    return max(saved, key=saved.get)


def _l2_047(ceil_tiles=True, with_hbm=True, with_peak=True):
    from course_lib.hardware import get_accelerator
    a100 = get_accelerator("A100")
    pi, bw = a100.peak("bf16"), a100.mem_bandwidth
    ms = np.arange(1, 4097, dtype=float)
    n = 8192.0
    tiles_m = np.ceil(ms / 64) if ceil_tiles else ms / 64
    q_l2 = 2 * (ms * n * (n / 64) + n * n * tiles_m + ms * n)
    q_min = 2 * (ms * n + n * n + ms * n)
    base = np.zeros_like(ms)
    if with_peak:
        base = np.maximum(base, 2 * ms * n * n / pi)
    if with_hbm:
        base = np.maximum(base, q_min / bw)
    return float(np.max(q_l2 / base)) / 1e12


@m("04.7", "counts the partly filled last row of tiles as a fraction m/64 of a row instead of a whole row (no ceiling)")
def _():
    return _l2_047(ceil_tiles=False)


@m("04.7", "compares the L2 time with the compute time F/pi only, leaving out the HBM roof of the bound to match")
def _():
    return _l2_047(with_hbm=False)


@m("04.8", "uses the catalog's peak and HBM bandwidth instead of the rates the two measurements imply")
def _():
    from course_lib.hardware import get_accelerator
    h = get_accelerator("H100 SXM")
    w = 8192
    return max(b for b in range(1, 10000)
               if max(2 * b * w * w / h.peak("bf16"), 2 * (2 * b * w + w * w) / h.mem_bandwidth) <= 60e-6)


@m("04.8", "fits a straight line (fixed cost plus cost per token) through the two measurements instead of a max of two roofs")
def _():
    (b1, t1), (b2, t2) = (32, 46.4e-6), (2048, 389.5e-6)
    slope = (t2 - t1) / (b2 - b1)
    return int((60e-6 - (t1 - slope * b1)) // slope)


# ============================================================================ lesson 05

@m("05.1", "predicts 'bf16', believing the seed text that BF16 has higher precision than FP16")
def _():
    return "bf16"


@m("05.2", "uses the H100 SXM's memory bandwidth instead of the H200's")
def _():
    from course_lib.hardware import get_accelerator
    return 70e9 * (2 - 0.5) / get_accelerator("H100 SXM").mem_bandwidth * 1e3


@m("05.2", "takes INT4 weights as one byte each (bytes_per_element('int8')), not half a byte")
def _():
    from course_lib.hardware import bytes_per_element, get_accelerator
    return 70e9 * (bytes_per_element("bf16") - bytes_per_element("int8")) / get_accelerator("H200").mem_bandwidth * 1e3


@m("05.2", "answers in seconds instead of milliseconds")
def _():
    from course_lib.hardware import get_accelerator
    return 70e9 * (2 - 0.5) / get_accelerator("H200").mem_bandwidth


@m("05.3", "answers loss_scale_sweep's best_log2_scale (fewest values lost) instead of the smallest k under 0.1 % flushed")
def _():
    from course_lib import formats as F
    g = F.gradient_like(np.random.default_rng(0), 50_000)
    return F.loss_scale_sweep(g, "fp16", range(0, 33)).best_log2_scale


@m("05.3", "uses a threshold of 1 % (0.01) instead of 0.1 % (0.001)")
def _():
    from course_lib import formats as F
    g = F.gradient_like(np.random.default_rng(0), 50_000)
    return next(k for k in range(0, 40) if F.cast_stats(g, "fp16", 2.0 ** k).flushed_fraction < 0.01)


@m("05.3", "stores the loss scale 2^k itself (2048) instead of the exponent k")
def _():
    from course_lib import formats as F
    g = F.gradient_like(np.random.default_rng(0), 50_000)
    return 2 ** next(k for k in range(0, 40) if F.cast_stats(g, "fp16", 2.0 ** k).flushed_fraction < 0.001)


@m("05.4", "gives each whole row one scale (per channel) instead of one per block of block_size elements")
def _():
    def quantize_blocks_int8(x, block_size):
        x = np.asarray(x, dtype=float)
        s = np.max(np.abs(x), axis=1, keepdims=True) / 127
        s = np.where(s > 0, s, 1.0)
        return np.round(x / s) * s
    return quantize_blocks_int8


@m("05.4", "truncates x / s toward zero with astype(int) instead of rounding to the nearest integer")
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


@m("05.4", "divides the block's absmax by 128 (INT8's -128) instead of 127")
def _():
    def quantize_blocks_int8(x, block_size):
        x = np.asarray(x, dtype=float)
        out = np.empty_like(x)
        for j in range(0, x.shape[1], block_size):
            blk = x[:, j:j + block_size]
            s = np.max(np.abs(blk), axis=1, keepdims=True) / 128
            s = np.where(s > 0, s, 1.0)
            out[:, j:j + block_size] = np.round(blk / s) * s
        return out
    return quantize_blocks_int8


@m("05.5", "does not reserve the top exponent field: largest exponent 2^E - 1 - bias instead of 2^E - 2 - bias")
def _():
    def ieee_max(exponent_bits, mantissa_bits):
        bias = 2 ** (exponent_bits - 1) - 1
        return (2 - 2.0 ** -mantissa_bits) * 2.0 ** (2 ** exponent_bits - 1 - bias)
    return ieee_max


@m("05.5", "takes the largest mantissa as 2 (all ones read as 1 + 1) instead of 2 - 2^-M")
def _():
    def ieee_max(exponent_bits, mantissa_bits):
        bias = 2 ** (exponent_bits - 1) - 1
        return 2.0 * 2.0 ** (2 ** exponent_bits - 2 - bias)
    return ieee_max


def _amax_056():
    from course_lib import formats as F
    grads = F.drifting_tensor(np.random.default_rng(2026), 30, 2000, median=2.0 ** -20, decades=0.8,
                              growth=1.25, spike_step=21, spike_factor=3.0)
    return np.max(np.abs(grads), axis=1)


@m("05.6", "rounds log2 of the largest amax jump over its 4-step history down (floor) instead of up")
def _():
    amax = _amax_056()
    worst = max(amax[t] / amax[max(0, t - 4):t].max() for t in range(1, amax.size))
    return int(math.floor(math.log2(worst)))


@m("05.6", "sizes the margin for the whole run's range of amax (first to largest), ignoring that the scale follows a 4-step history")
def _():
    amax = _amax_056()
    return int(math.ceil(math.log2(amax.max() / amax.min())))


@m("05.7", "judges the 1.5 % budget on the whole matrix's relative RMS error instead of every row's, so plain 'int8 per channel' passes")
def _():
    return "int8 per channel"


@m("05.7", "only considers the schemes the library quantizes (never builds the outliers-apart one), so picks 'int8 per block'")
def _():
    return "int8 per block"


def _round_m(x, mbits):
    if x == 0.0:
        return 0.0
    _, e = math.frexp(x)
    q = math.ldexp(1.0, e - 1 - mbits)
    return round(x / q) * q


@m("05.8", "uses section 7's stagnation formula with the mean product 0.01 (sum stops at 2^(ceil(log2 c) + M + 1)) instead of simulating the rounding")
def _():
    products = np.random.default_rng(508).uniform(0.0, 0.02, 2 ** 14)
    total = products.sum()
    c = products.mean()
    return next(mb for mb in range(7, 24) if 2.0 ** (math.ceil(math.log2(c)) + mb + 1) > total)


@m("05.8", "counts the implicit leading 1 among the M mantissa bits, so rounds with M - 1 stored bits and answers one bit too many")
def _():
    products = np.random.default_rng(508).uniform(0.0, 0.02, 2 ** 14)
    exact = math.fsum(products)
    for mb in range(7, 24):
        s = 0.0
        for p in products.tolist():
            s = _round_m(s + p, mb - 1)
        if abs(s - exact) / exact <= 0.01:
            return mb


# ============================================================================ lesson 06

@m("06.1", "predicts 'quarters', thinking the traffic scales with the tile's area")
def _():
    return "quarters"


@m("06.1", "predicts 'unchanged': the matmul reads the same matrices whatever the tiling")
def _():
    return "unchanged"


@m("06.2", "forgets the double buffering: 2 bytes x 2 slices x 64 T per stage, one stage")
def _():
    from course_lib.hardware import get_accelerator
    smem = get_accelerator("H200").max_shared_mem_bytes_per_block
    return max(t for t in range(16, 4097, 16) if 1 * 2 * (t * 64 + 64 * t) <= smem)


@m("06.2", "takes the 227 KiB per block as 227,000 bytes (kB instead of KiB)")
def _():
    return max(t for t in range(16, 4097, 16) if 2 * 2 * (t * 64 + 64 * t) <= 227_000)


@m("06.2", "counts 4 bytes per element (FP32) for the staged slices instead of BF16's 2")
def _():
    from course_lib.hardware import get_accelerator
    smem = get_accelerator("H200").max_shared_mem_bytes_per_block
    return max(t for t in range(16, 4097, 16) if 2 * 4 * (t * 64 + 64 * t) <= smem)


def _fa_063(causal=True, block=200):
    from course_lib import attention
    tr = attention.flash_attention_traffic(3000, 48, block, causal=causal)     # what the walk counts
    n = 3000
    return (4 * n * n + 4 * n * 48) / tr.elements_moved


@m("06.3", "runs flash_attention without causal=True, so the count is the non-causal one")
def _():
    return _fa_063(causal=False)


@m("06.3", "leaves block_size at flash_attention's default (128) instead of passing block_size=200")
def _():
    return _fa_063(block=128)


@m("06.4", "forgets to rescale the previous output by alpha = exp(m_prev - m_new)")
def _():
    def online_softmax_step(m_prev, l_prev, o_prev, s_block, v_block):
        m_new = np.maximum(m_prev, s_block.max(axis=-1))
        alpha = np.exp(m_prev - m_new)
        p = np.exp(s_block - m_new[:, None])
        return m_new, alpha * l_prev + p.sum(axis=-1), o_prev + p @ v_block
    return online_softmax_step


@m("06.4", "exponentiates the raw scores exp(s) without subtracting the running maximum (overflows on scores in the hundreds)")
def _():
    def online_softmax_step(m_prev, l_prev, o_prev, s_block, v_block):
        m_new = np.maximum(m_prev, s_block.max(axis=-1))
        with np.errstate(over="ignore", invalid="ignore"):
            p = np.exp(s_block)
            return m_new, l_prev + p.sum(axis=-1), o_prev + p @ v_block
    return online_softmax_step


@m("06.4", "inverts the correction factor: alpha = exp(m_new - m_prev)")
def _():
    def online_softmax_step(m_prev, l_prev, o_prev, s_block, v_block):
        m_new = np.maximum(m_prev, s_block.max(axis=-1))
        with np.errstate(invalid="ignore"):
            alpha = np.where(np.isfinite(m_prev), np.exp(m_new - m_prev), 0.0)
        p = np.exp(s_block - m_new[:, None])
        return m_new, alpha * l_prev + p.sum(axis=-1), alpha[:, None] * o_prev + p @ v_block
    return online_softmax_step


def _graph_065(bpe):
    from course_lib import tiling
    e, r = 1000 * 3001 * bpe, 1000 * bpe
    sizes = {"S": e, "m": r, "P": e, "l": r, "O": e}
    ops = [("rowmax", ("S",), ("m",), 1), ("sub_exp", ("S", "m"), ("P",), 1),
           ("rowsum", ("P",), ("l",), 1), ("divide", ("P", "l"), ("O",), 1)]
    unfused = tiling.graph_traffic(ops, sizes, [("rowmax",), ("sub_exp",), ("rowsum",), ("divide",)], ("O",))
    fused = tiling.graph_traffic(ops, sizes, [("rowmax", "sub_exp", "rowsum", "divide")], ("O",))
    return unfused, fused


@m("06.5", "gives the tensor sizes in elements, not bytes (forgets BF16's 2 bytes)")
def _():
    u, f = _graph_065(1)
    return u.bytes_moved - f.bytes_moved


@m("06.5", "sizes every tensor at 4 bytes (FP32) instead of BF16's 2")
def _():
    u, f = _graph_065(4)
    return u.bytes_moved - f.bytes_moved


@m("06.5", "answers the unfused graph's total bytes instead of the difference fusing makes")
def _():
    u, _ = _graph_065(2)
    return u.bytes_moved


def _tiles_066(acc_bytes=4, square=False):
    from course_lib import tiling
    tiles = []
    for tm in range(16, 513, 16):
        for tn in range(16, 513, 16):
            if square and tm != tn:
                continue
            if 2 * 2 * 32 * (tm + tn) > 64 * 1024:
                continue
            tiles.append((tm * tn * acc_bytes, tiling.tiled_matmul_traffic(200, 8192, 8192, tm, tn).bytes_moved, tm, tn))
    for budget in sorted({t[0] for t in tiles}):
        fit = [t for t in tiles if t[0] <= budget]
        best = min(fit, key=lambda t: t[1])
        if best[2] >= 200:
            return math.ceil(budget / 1024)


@m("06.6", "counts the running sums at 2 bytes (BF16, the inputs' format) instead of FP32's 4")
def _():
    return _tiles_066(acc_bytes=2)


@m("06.6", "answers the budget of the smallest tile that covers 200 rows (208 x 16, 13 KiB) instead of the budget at which the fewest-bytes tile covers them")
def _():
    return math.ceil(208 * 16 * 4 / 1024)


@m("06.6", "considers only square tiles, as in section 1's tile_limit")
def _():
    return _tiles_066(square=True)


def _fa_067(o_bytes=4, kib=1024):
    from course_lib import attention
    best = None
    for bq in range(16, 1025, 16):
        if bq * 64 * o_bytes > 128 * kib:
            continue
        for bk in range(16, 1025, 16):
            smem = bq * 64 * 2 + 2 * 2 * bk * 64 * 2 + bq * bk * 4
            if smem > 192 * kib:
                continue
            e = attention.flash_attention_traffic(4000, 64, (bq, bk)).elements_moved
            best = e if best is None else min(best, e)
    return best


@m("06.7", "keeps the unnormalised output in BF16 (2 bytes) in the register budget instead of FP32")
def _():
    return _fa_067(o_bytes=2)


@m("06.7", "takes 192 KiB and 128 KiB as 192,000 and 128,000 bytes")
def _():
    return _fa_067(kib=1000)


# ============================================================================ lesson 07

@m("07.1", "predicts 'compute', thinking 32 sequences on four GPUs give enough reuse of every weight")
def _():
    return "compute"


@m("07.2", "calls training_time_s without utilization=0.35, keeping its default of 0.4")
def _():
    from course_lib.economics import get_model, training_time_s
    return training_time_s(get_model("Llama 3 70B").params, 15e12, accelerator="H100 SXM", n_devices=2048) / 86400


@m("07.2", "forgets n_devices=2048, so training_time_s uses one GPU")
def _():
    from course_lib.economics import get_model, training_time_s
    return training_time_s(get_model("Llama 3 70B").params, 15e12, accelerator="H100 SXM", utilization=0.35) / 86400


@m("07.2", "divides the seconds by 3600 (hours) instead of 86,400 (days)")
def _():
    from course_lib.economics import get_model, training_time_s
    return training_time_s(get_model("Llama 3 70B").params, 15e12, accelerator="H100 SXM", n_devices=2048,
                           utilization=0.35) / 3600


@m("07.3", "leaves decode_step's precision at its default 'bf16' instead of 'fp8'")
def _():
    from course_lib.economics import cost_per_million_tokens_usd, decode_step
    st = decode_step("Mistral 7B", "H200", 64, 3000)
    return cost_per_million_tokens_usd(st.tokens_per_s, 3.10)


@m("07.3", "takes tokens per second as 1 / t_step (one sequence's rate), forgetting the batch of 64")
def _():
    from course_lib.economics import cost_per_million_tokens_usd, decode_step
    st = decode_step("Mistral 7B", "H200", 64, 3000, "fp8")
    return cost_per_million_tokens_usd(1 / st.t_step_s, 3.10)


@m("07.4", "rounds the fractional crossover batch to the nearest integer instead of up")
def _():
    from course_lib.economics import crossover_batch
    return round(crossover_batch("Llama 3 8B", "B200", 100, "int8 weights"))


@m("07.4", "calls crossover_batch without the accelerator, so it uses the default H100 SXM")
def _():
    from course_lib.economics import crossover_batch
    return math.ceil(crossover_batch("Llama 3 8B", context_tokens=100, precision="int8 weights"))


@m("07.4", "leaves the precision at 'bf16' (16-bit weights) instead of 'int8 weights'")
def _():
    from course_lib.economics import crossover_batch
    return math.ceil(crossover_batch("Llama 3 8B", "B200", 100))


@m("07.5", "forgets the factor 2 for keys and values")
def _():
    def kv_cache_total_bytes(layers, kv_heads, head_dim, bytes_per_element, context_tokens, batch):
        return layers * kv_heads * head_dim * bytes_per_element * context_tokens * batch
    return kv_cache_total_bytes


@m("07.5", "counts context_tokens + 1 tokens per sequence, as decode_step does for the new token")
def _():
    def kv_cache_total_bytes(layers, kv_heads, head_dim, bytes_per_element, context_tokens, batch):
        return 2 * layers * kv_heads * head_dim * bytes_per_element * (context_tokens + 1) * batch
    return kv_cache_total_bytes


@m("07.5", "returns the bytes of one sequence, forgetting to multiply by the batch")
def _():
    def kv_cache_total_bytes(layers, kv_heads, head_dim, bytes_per_element, context_tokens, batch):
        return 2 * layers * kv_heads * head_dim * bytes_per_element * context_tokens
    return kv_cache_total_bytes


@m("07.6", "leaves out the 6 of C = 6ND: N = sqrt(C / 20)")
def _():
    return math.sqrt(2.4e24 / 20)


@m("07.6", "answers the number of training tokens D = 20 N instead of the parameters N")
def _():
    return 20 * math.sqrt(2.4e24 / (6 * 20))


@m("07.6", "answers in billions of parameters although the exercise asks for the count")
def _():
    return math.sqrt(2.4e24 / (6 * 20)) / 1e9


def _p99_077(slots):
    from course_lib.economics import decode_step, get_model, simulate_batching
    from course_lib.hardware import get_accelerator
    rng = np.random.default_rng(707)
    arrival_s = np.cumsum(rng.exponential(1 / 60, 1500))
    out = np.minimum(1536, np.maximum(1, np.round(rng.lognormal(np.log(250) - 0.5, 1.0, 1500)))).astype(int)
    step = decode_step(get_model("Llama 3 8B"), get_accelerator("H100 SXM"), slots, 1024).t_step_s
    run = simulate_batching(np.floor(arrival_s / step), out, slots)
    return run, step


@m("07.7", "sizes the cache per slot at the 1024 tokens of the step model instead of 2048, so 298 slots seem to fit; picks 200 whose p99 is under 16 s")
def _():
    from course_lib.economics import get_model
    kv = get_model("Llama 3 8B").kv_bytes_per_token("bf16")
    cap = int(40e9 // (1024 * kv))
    for slots in (200, 160, 128):
        run, step = _p99_077(slots)
        if slots <= cap and run.latency_percentile_steps(99) * step <= 16:
            return slots


@m("07.7", "reads the 40 GB budget as 40 GiB, so 160 slots seem to fit, and takes 160")
def _():
    from course_lib.economics import get_model
    kv = get_model("Llama 3 8B").kv_bytes_per_token("bf16")
    return int(40 * 2 ** 30 // (2048 * kv))


@m("07.7", "checks the median latency (50th percentile) instead of the 99th and takes the smallest slot count that meets 16 s")
def _():
    for slots in (8, 16, 24, 32, 40, 48, 56, 64):
        run, step = _p99_077(slots)
        if run.latency_percentile_steps(50) * step <= 16:
            return slots


def _deploy_078(gpus_options=(2, 4, 8), scale_fixed_time=True, price_times_g=True):
    (b1, (t1, m1)), (b2, (t2, m2)) = sorted({8: (12.6e-3, 38.0e9), 40: (16.2e-3, 48.7e9)}.items())
    c_t, c_m = (t2 - t1) / (b2 - b1), (m2 - m1) / (b2 - b1)
    a_t, a_m = t1 - c_t * b1, m1 - c_m * b1
    best = None
    for g in gpus_options:
        f = 4 / g
        at = a_t * f if scale_fixed_time else a_t
        ct, am, cm = c_t * f, a_m * f, c_m * f
        b_time = int((20e-3 - at) // ct) if at < 20e-3 else 0
        b_mem = int((80e9 - am) // cm) if am < 80e9 else 0
        b = min(b_time, b_mem)
        if b < 1:
            continue
        tps = b / (at + ct * b)
        cost = 3.00 * (g if price_times_g else 1) / 3600 / tps * 1e6
        best = cost if best is None else min(best, cost)
    return best


@m("07.8", "keeps the profiled four H100s and only picks the batch, never trying the 2- or 8-GPU deployments")
def _():
    return _deploy_078(gpus_options=(4,))


@m("07.8", "scales only the per-sequence parts with the GPU count, keeping the 4-GPU fixed step time of 11.7 ms on every deployment")
def _():
    return _deploy_078(scale_fixed_time=False)


@m("07.8", "charges $3.00 per hour for the whole deployment instead of per GPU")
def _():
    return _deploy_078(price_times_g=False)


def _tps_079(prec, bw, target=0.02):
    import dataclasses
    from course_lib.economics import decode_step, max_batch
    from course_lib.hardware import get_accelerator
    acc = dataclasses.replace(get_accelerator("H200"), mem_bandwidth=bw)
    cap = max_batch("Llama 3 70B", acc, 4096, prec)
    best = 0.0
    for b in range(1, cap + 1):
        st = decode_step("Llama 3 70B", acc, b, 4096, prec)
        if target is None or st.t_step_s <= target:
            best = max(best, st.tokens_per_s)
        elif target is not None:
            break
    return best


@m("07.9", "ignores the 20 ms promise and compares each scheme at its largest batch that fits in memory")
def _():
    for c in range(480, 3000):
        bw = c * 1e10
        if _tps_079("fp8", bw, None) >= _tps_079("int4 weights", bw, None):
            return c / 100


@m("07.9", "answers the bandwidth in bytes per second instead of TB/s")
def _():
    lo, hi = 480, 1400
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _tps_079("fp8", mid * 1e10) >= _tps_079("int4 weights", mid * 1e10):
            hi = mid
        else:
            lo = mid
    return hi * 1e10


# ============================================================================ lesson 08

@m("08.1", "predicts 'less', reading the ratio 3h/(t-1) = 3511 FLOP/B against NVLink's ridge instead of InfiniBand's")
def _():
    return "less"


@m("08.2", "uses the catalog's 900 GB/s NVLink figure (both directions) instead of the 450 GB/s per direction")
def _():
    from course_lib.collectives import collective_time_s, get_link
    nv = get_link("H200", "nvlink")
    return collective_time_s("all_reduce", 13e9 * 2, 8, bandwidth_bytes_per_s=900e9, latency_s=nv.latency_s) * 1e3


@m("08.2", "takes the 'network' tier (one InfiniBand port) instead of NVLink inside the node")
def _():
    from course_lib.collectives import collective_time_s, get_link
    return collective_time_s("all_reduce", 13e9 * 2, 8, get_link("H200", "network")) * 1e3


@m("08.2", "counts the gradients at 4 bytes (FP32) instead of the stated 2")
def _():
    from course_lib.collectives import collective_time_s, get_link
    return collective_time_s("all_reduce", 13e9 * 4, 8, get_link("H200", "nvlink")) * 1e3


@m("08.3", "draws the values with rng.standard_normal without casting to float32, so every value is 8 bytes")
def _():
    from course_lib.collectives import simulate_ring_all_reduce
    data = np.random.default_rng(1).standard_normal((6, 23))
    return float(simulate_ring_all_reduce(data).link_bytes.max())


@m("08.3", "answers the textbook 2(n-1)/n x S with S = 23 x 4 bytes instead of the simulated busiest link")
def _():
    return 2 * 5 / 6 * 23 * 4


@m("08.3", "answers the bytes summed over all links (total_bytes) instead of the busiest single link")
def _():
    from course_lib.collectives import simulate_ring_all_reduce
    data = np.random.default_rng(1).standard_normal((6, 23)).astype(np.float32)
    return float(simulate_ring_all_reduce(data).total_bytes)


@m("08.4", "shards the gradients already at stage 1 and the weights at stage 2, one stage early")
def _():
    def zero_bytes(n_params, dp, stage):
        w = 2 * n_params / (dp if stage >= 2 else 1)
        g = 2 * n_params / (dp if stage >= 1 else 1)
        o = 12 * n_params / (dp if stage >= 1 else 1)
        return w + g + o
    return zero_bytes


@m("08.4", "counts 14 bytes per parameter (16-bit weights, FP32 master and two moments) and forgets the 16-bit gradients")
def _():
    def zero_bytes(n_params, dp, stage):
        w = 2 * n_params / (dp if stage >= 3 else 1)
        o = 12 * n_params / (dp if stage >= 1 else 1)
        return w + o
    return zero_bytes


@m("08.4", "takes the optimizer state as 8 bytes (two FP32 moments) and forgets the FP32 master weights")
def _():
    def zero_bytes(n_params, dp, stage):
        w = 2 * n_params / (dp if stage >= 3 else 1)
        g = 2 * n_params / (dp if stage >= 2 else 1)
        o = 8 * n_params / (dp if stage >= 1 else 1)
        return w + g + o
    return zero_bytes


@m("08.5", "uses the whole H100 SXM instead of the 3g.40gb slice and takes the smallest batch that reaches 2800 tokens/s there")
def _():
    from course_lib.economics import decode_step
    return next(b for b in range(1, 1000) if decode_step("Llama 3 8B", "H100 SXM", b, 2048).tokens_per_s >= 2800)


@m("08.5", "takes the largest batch that fits in the slice's 40 GB and forgets the 20 ms per-token limit")
def _():
    from course_lib.economics import decode_step
    from course_lib.sharing import mig_accelerator
    sl = mig_accelerator("3g.40gb", "H100 SXM")
    return max(b for b in range(1, 400) if decode_step("Llama 3 8B", sl, b, 2048).fits)


def _plans_086(scale="activations", always_32=False):
    import itertools
    from course_lib.parallelism import ParallelPlan, estimate_training_step, transformer_for_params
    model = transformer_for_params(70e9)
    tokens = 4 * 2 ** 20
    col = estimate_training_step(model, ParallelPlan(256, 8, 1, 1, 32, "selective"), "H100 SXM", tokens)
    factor = 46.4e9 / col.memory["activations"]
    best = None
    for tp, pp, z, rc in itertools.product((1, 2, 4, 8, 16), (1, 2, 4, 8), (1, 2, 3), ("none", "selective", "full")):
        dp = 256 // (tp * pp)
        seqs = tokens / (dp * model.seq_len)
        if seqs < 1:
            continue
        mb = 32 if seqs >= 32 else int(seqs)
        if always_32 and seqs < 32:
            continue
        e = estimate_training_step(model, ParallelPlan(256, tp, pp, z, mb, rc), "H100 SXM", tokens)
        if scale == "none":
            mem = e.memory_bytes
        elif scale == "all":
            mem = e.memory_bytes * factor
        else:
            mem = e.memory_bytes + (factor - 1) * e.memory["activations"]
        if mem <= e.capacity_bytes and (best is None or e.step_time_s < best):
            best = e.step_time_s
    return best


@m("08.6", "trusts the estimate's own memory (.fits) without scaling its activations by the measured 46.4 / estimated ratio")
def _():
    return _plans_086("none")


@m("08.6", "keeps 32 micro-batches for every plan, so plans whose replicas hold fewer than 32 sequences are dropped as impossible")
def _():
    return _plans_086("activations", always_32=True)


@m("08.7", "leaves out the 4 ms per forward and per backward, as section 3's simulator does")
def _():
    for p in (1, 2, 3, 4, 6, 8, 12, 16, 24, 48):
        if (20 + p - 1) * (240 / p + 480 / p) <= 2000:
            return p


@m("08.7", "counts the step as 20 x (t_f + t_b) without the pipeline's fill and drain (the bubble)")
def _():
    for p in (1, 2, 3, 4, 6, 8, 12, 16, 24, 48):
        if 20 * (240 / p + 4 + 480 / p + 4) <= 2000:
            return p


# Judged after the checks ran: indices are positions in R, 0-based.
RIGHT_BY_LUCK = set()
WRONGLY_ACCEPTED = set()
NAMED = {
    0: 'occupancy-smem-ignored',
    1: 'occupancy-threads-only',
    2: 'other-accelerator',
    3: 'kib-for-kb',
    4: 'bytes-not-kb',
    5: 'index-not-count',
    6: 'more-warps-always-better',
    7: 'register-alloc-unit-ignored',
    8: 'register-subpartitions-ignored',
    9: 'registers-256k',
    10: 'l1-shared-memory-ignored',
    11: 'spill-traffic-as-footprint',
    12: 'spills-are-free',
    13: 'one-scheduler-per-sm',
    14: 'more-warps-always-better',
    15: 'register-budget-plain-division',
    16: 'assumed-latency-not-measured',
    17: 'loads-in-flight-cost-no-registers',
    18: 'max-warps-not-resident',
    19: 'aos-keeps-a-particle-together',
    20: 'bytes-requested-not-moved',
    21: 'warp-32-not-64',
    22: 'uniform-not-divergent',
    23: 'exactly-one-lane-branches',
    24: 'loop-test-inclusive',
    25: 'threads-rounded-to-whole-warps',
    26: 'access-straddle-ignored',
    27: 'access-end-byte-past-the-end',
    28: 'lines-not-sectors',
    29: 'rows-assumed-aligned',
    30: 'warp-must-read-one-row',
    31: 'sort-cost-left-out',
    32: 'warp-probability-added',
    33: 'more-bandwidth-hides-the-copy',
    34: 'both-link-directions',
    35: 'hbm-slowest',
    36: 'seconds-for-unit',
    38: 'most-ways-to-be-safe',
    39: 'same-bank-always-conflicts',
    40: 'bank-from-bytes',
    41: 'stacks-rounded-down',
    42: 'pin-rate-in-bytes',
    43: 'peak-fp8-for-bf16',
    44: 'fp8-dequantization-forgotten',
    45: 'more-buffers-hide-any-copy',
    46: 'cache-pad-ignores-banks',
    47: 'bank-pad-ignores-cache',
    48: 'ridge-tens-of-flop-per-byte',
    49: 'other-accelerator',
    51: 'roofline-compute-term-only',
    52: 'weights-bytes-only',
    53: 'square-matmul-rule-for-skinny',
    54: 'c-write-forgotten',
    55: 'c-write-forgotten',
    56: 'fma-one-flop',
    58: 'roofline-max-not-min',
    59: 'bandwidth-divided-by-intensity',
    60: 'furthest-from-roof-first',
    61: 'headroom-against-flop-peak',
    62: 'full-tile-rows-only',
    63: 'l2-need-without-hbm-roof',
    64: 'rated-not-sustained',
    65: 'linear-between-measurements',
    66: 'bf16-more-precise',
    67: 'other-accelerator',
    68: 'fp8-not-int4',
    69: 'seconds-for-unit',
    70: 'sweep-best-scale-not-smallest',
    71: 'target-one-percent',
    72: 'scale-not-exponent',
    73: 'one-scale-per-row',
    74: 'truncate-not-round',
    75: 'int8-scale-128-not-127',
    76: 'top-exponent-not-reserved',
    77: 'significand-taken-as-two',
    80: 'whole-matrix-error-hides-rows',
    81: 'outliers-apart-not-built',
    82: 'error-only-at-stagnation',
    83: 'implicit-bit-counted',
    84: 'traffic-follows-tile-area',
    85: 'tiling-reads-once',
    86: 'no-double-buffering',
    87: 'shared-memory-kib-as-kb',
    88: 'fp32-bytes',
    89: 'causal-mask-ignored',
    90: 'lesson-block-size-not-the-tasks',
    91: 'output-not-rescaled',
    94: 'fusion-elements-not-bytes',
    95: 'fp32-bytes',
    96: 'unfused-total-not-saving',
    97: 'accumulators-in-bf16',
    98: 'covering-tile-fits-not-best',
    99: 'skinny-square-tiles-only',
    100: 'output-accumulator-in-bf16',
    101: 'register-kib-read-as-kb',
    102: 'batch-makes-compute-bound',
    103: 'utilization-left-at-default',
    104: 'one-gpu-not-all',
    105: 'hours-for-days',
    106: 'precision-ignored',
    107: 'batch-forgotten',
    108: 'crossover-rounded-down',
    109: 'other-accelerator-h100-sxm',
    110: 'int8-weights-ignored',
    111: 'kv-keys-only',
    112: 'kv-token-being-generated-counted',
    113: 'kv-batch-forgotten',
    114: 'six-flop-forgotten',
    115: 'tokens-for-parameters',
    116: 'unit slip',
    118: 'gib-for-gb',
    120: 'profiled-deployment-only',
    121: 'fixed-part-not-scaled',
    122: 'one-device-price',
    123: 'largest-batch-scheme',
    124: 'bandwidth-in-bytes-per-s',
    125: 'nvlink-across-nodes',
    126: 'both-link-directions',
    127: 'network-tier-for-nvlink',
    128: 'fp32-bytes',
    129: 'float64-for-float32',
    130: 'chunks-assumed-even',
    131: 'all-links-summed',
    132: 'zero-stages-one-ahead',
    133: 'adam-14-bytes',
    134: 'fp32-master-copy-forgotten',
    135: 'throughput-floor-on-whole-gpu',
    136: 'largest-batch-that-fits',
    137: 'estimate-trusted-over-measurement',
    138: 'micro-batches-fixed-at-32',
    139: 'pipeline-overhead-ignored',
    140: 'pipeline-bubble-ignored',
}
PARTLY = {50, 78, 117, 119}
NOT_NAMED = {37, 57, 79, 92, 93}


#: The entries judged partly or not named above, named after the feedback was tuned on this round
#: (fix-26h): in sample from then on. tests/test_checks_round_26.py keeps them named.
NAMED_AFTER_TUNING = {
    37: 'last-choice-below-target',
    50: 'gemv-bytes-counted-as-elements',
    57: 'c-sized-m-by-k',
    78: 'margin-log2-rounded-down',
    79: 'margin-for-the-whole-runs-range',
    92: 'raw-scores-exponentiated',
    93: 'rescale-factor-inverted-past-the-first-block',
    119: 'median-latency-coarse-search',
}
