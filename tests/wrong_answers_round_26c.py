"""Blind round 26c of wrong answers, written as a learner would, before any check was run.

Each entry is (exercise id, the mistake, a zero-argument function returning the learner's value).
Written from the lessons (notebooks/01-08), the exercise files (exercises/01-08), START.md and the
library's public functions only: no answer key, no checks' misconception lists, no earlier rounds.
Default learner identity (no COURSE_LEARNER_ID, NBGRADER_STUDENT_ID or JUPYTERHUB_USER): the
variants printed the course's numbers, e.g. 01.2 "the H200: kilobytes in flight per SM at
ASSUMED_DRAM_LATENCY_S", 03.2 "7 billion BF16 parameters copied from the host to an H100 SXM, one
direction, in ms", 04.2 "a 1 x 8192 by 8192 x 8192 BF16 GEMV on the H200, in microseconds", 07.2
"Llama 3 70B, 1.5e+13 tokens, 2048 H100 SXM GPUs in dense BF16, utilization 0.35, in days".
"""

import math

import numpy as np

R = []


def m(ex, mistake):
    def wrap(f):
        R.append((ex, mistake, f))
        return f
    return wrap


def _acc(name):
    from course_lib.hardware import get_accelerator
    return get_accelerator(name)


# ---------------------------------------------------------------- lesson 01

@m("01.2", "used the lesson's H100 SXM example (littles_law's default) instead of the H200")
def _():
    from course_lib.latency import ASSUMED_DRAM_LATENCY_S, littles_law
    return littles_law(_acc("H100 SXM"), ASSUMED_DRAM_LATENCY_S).bytes_in_flight_per_sm / 1e3


@m("01.2", "divided by 1024 (KiB) although the task defines 1 kB = 1000 bytes")
def _():
    from course_lib.latency import ASSUMED_DRAM_LATENCY_S, littles_law
    return littles_law(_acc("H200"), ASSUMED_DRAM_LATENCY_S).bytes_in_flight_per_sm / 1024


@m("01.2", "answered the whole chip's bytes in flight (forgot to divide by the SMs), in kB")
def _():
    from course_lib.latency import ASSUMED_DRAM_LATENCY_S, littles_law
    return littles_law(_acc("H200"), ASSUMED_DRAM_LATENCY_S).bytes_in_flight / 1e3


@m("01.3", "took the knee ceil((C+L)/C), where utilisation reaches 1, instead of 0.9")
def _():
    return math.ceil((24 + 700) / 24)


@m("01.3", "used N*C/L >= 0.9 (latency alone as the period, not C+L)")
def _():
    return math.ceil(0.9 * 700 / 24)


@m("01.6", "used one scheduler (the simulator's default) instead of the H100 SM's four")
def _():
    from course_lib.latency import occupancy, simulate_latency_hiding
    best = None
    for r in range(1, 256):
        try:
            w = occupancy(128, r, 12 * 1024, "H100 SXM").warps_per_sm
        except Exception:
            continue
        if simulate_latency_hiding(np.array([w]), 60, 500).utilisation[0] >= 0.9:
            best = r
    return best


@m("01.6", "needed warps ceil(0.9*4*560/60)=34 then registers = 65536 // (34*32), ignoring whole blocks "
           "and the allocation unit")
def _():
    w = math.ceil(0.9 * 4 * 560 / 60)
    return 65536 // (w * 32)


@m("01.7", "forgot that every load in flight holds a register: kept the occupancy of 72 registers for every k")
def _():
    from course_lib.latency import occupancy
    h200 = _acc("H200")
    w1 = occupancy(256, 72, 0, "H200").warps_per_sm
    lat = w1 * 32 * 4 * h200.sm_count / 0.5e12
    need = h200.mem_bandwidth * lat
    for k in range(1, 200):
        if w1 * 32 * 4 * k * h200.sm_count >= need:
            return k


@m("01.7", "used ASSUMED_DRAM_LATENCY_S instead of the latency the 0.5 TB/s profile implies")
def _():
    from course_lib.latency import ASSUMED_DRAM_LATENCY_S, occupancy
    h200 = _acc("H200")
    need = h200.mem_bandwidth * ASSUMED_DRAM_LATENCY_S
    for k in range(1, 200):
        w = occupancy(256, 72 + k, 0, "H200").warps_per_sm
        if w * 32 * 4 * k * h200.sm_count >= need:
            return k


def _pressure_rows():
    from course_lib.latency import register_pressure
    return register_pressure(128, 150, [255, 128, 96, 80, 64, 48], shared_mem_per_block=12 * 1024,
                             accelerator="H100 SXM")


@m("01.5", "compared the spills with the whole 256 KiB, forgetting the resident blocks' shared memory")
def _():
    from course_lib.latency import H100_L1_SHARED_BYTES_PER_SM
    ok = [r for r in _pressure_rows() if r.spill_footprint_per_sm <= H100_L1_SHARED_BYTES_PER_SM]
    return max(ok, key=lambda r: (r.warps_per_sm, r.cap)).cap


@m("01.5", "took the cap with the most resident warps and forgot the L1 rule")
def _():
    return max(_pressure_rows(), key=lambda r: (r.warps_per_sm, -r.cap)).cap


# ---------------------------------------------------------------- lesson 02

@m("02.2", "used NVIDIA's warp of 32 lanes instead of the MI300X's wavefront of 64")
def _():
    return 1 - 0.95 ** 32 - 0.05 ** 32


@m("02.2", "answered the share of uniform wavefronts (forgot the 1 - ...)")
def _():
    w = _acc("MI300X").warp_size
    return 0.95 ** w + 0.05 ** w


def _loop_kernel():
    from course_lib.simt import Let, While
    return [Let("i", lambda v: 0),
            While(lambda v: v["i"] < v["tid"] % 7 + 1,
                  [Let("a", lambda v: 2 * v["i"]), Let("a", lambda v: v["a"] + 1),
                   Let("i", lambda v: v["i"] + 1)])]


@m("02.3", "ran 1024 threads (32 whole warps) instead of 1000")
def _():
    from course_lib.simt import run_simt
    return run_simt(_loop_kernel(), 1024).simt_efficiency


@m("02.3", "by hand: mean trip count / longest trip count, 4/7, ignoring the tests and the initial Let")
def _():
    return 4 / 7


@m("02.3", "ran it in wavefronts of 64 (warp_size=64)")
def _():
    from course_lib.simt import run_simt
    return run_simt(_loop_kernel(), 1000, warp_size=64).simt_efficiency


def _block_ratio(w, cols):
    from course_lib.simt import coalescing
    h = 256 // w
    moved, req = 0, 0
    for by in range(64 // h):
        for bx in range(256 // w):
            tid = np.arange(256)
            ty, tx = tid // w, tid % w
            addr = 4 * ((by * h + ty) * cols + bx * w + tx)
            for wp in range(8):
                c = coalescing(addr[wp * 32:(wp + 1) * 32])
                moved += c.bytes_moved
                req += c.bytes_requested
    return moved / req


@m("02.5", "treated the matrix as 1024 columns wide (every row 128-byte aligned) instead of 1002")
def _():
    for w in (4, 8, 16, 32, 64, 128, 256):
        if 256 // w <= 64 and _block_ratio(w, 1024) <= 1.5:
            return w


@m("02.5", "checked only the launch's first block (block 0, 0, which starts at byte 0), not every warp")
def _():
    from course_lib.simt import coalescing
    for w in (4, 8, 16, 32, 64, 128, 256):
        if 256 // w > 64:
            continue
        tid = np.arange(256)
        addr = 4 * ((tid // w) * 1002 + tid % w)
        cs = [coalescing(addr[wp * 32:(wp + 1) * 32]) for wp in range(8)]
        if sum(c.bytes_moved for c in cs) / sum(c.bytes_requested for c in cs) <= 1.5:
            return w


def _ungrouped(L):
    p = 1 / 64
    p_mixed = 1 - (1 - p) ** 32 - p ** 32
    p_long = p ** 32
    p_short = (1 - p) ** 32
    return 1 + p_mixed * (L + 10) + p_long * L + p_short * 10


@m("02.6", "left the 11 grouping instructions out of the grouped run's cost")
def _():
    for L in range(1, 1001):
        grouped = 1 + (1 / 64) * L + (63 / 64) * 10
        if grouped <= _ungrouped(L):
            return L


@m("02.6", "treated every ungrouped warp as mixed (cost L + 10), not only the probability of a mixed warp")
def _():
    for L in range(1, 1001):
        grouped = 11 + 1 + (1 / 64) * L + (63 / 64) * 10
        if grouped <= 1 + L + 10:
            return L


# ---------------------------------------------------------------- lesson 03

@m("03.2", "used host_link_bandwidth as it is (both directions together) for a one-way copy")
def _():
    return 7e9 * 2 / _acc("H100 SXM").host_link_bandwidth * 1e3


@m("03.2", "counted the parameters in FP32 (4 bytes) instead of BF16")
def _():
    return 7e9 * 4 / (_acc("H100 SXM").host_link_bandwidth / 2) * 1e3


@m("03.2", "answered in seconds, not milliseconds")
def _():
    return 7e9 * 2 / (_acc("H100 SXM").host_link_bandwidth / 2)


def _trace():
    from course_lib.memory import make_trace
    return make_trace("sequential", 6 * 4096, 6 * 500, element_bytes=4096)


@m("03.3", "left line_bytes at simulate_cache's default (128) instead of the 64-byte lines asked")
def _():
    from course_lib.memory import simulate_cache
    for ways in (1, 2, 4, 8, 16, 32):
        if simulate_cache(_trace(), 16 * 1024, 128, ways).hit_rate >= 0.9:
            return ways


@m("03.3", "reasoned without simulating: six addresses share a set, so 6 ways (not one of the choices)")
def _():
    return 6


@m("03.5", "multiplied pins by the per-pin rate without dividing by 8 (bits taken as bytes)")
def _():
    b200, h100 = _acc("B200"), _acc("H100 SXM")
    need = b200.peak("bf16") / (h100.peak("bf16") / h100.mem_bandwidth)
    return math.ceil(need / (1024 * 9.2e9))


@m("03.5", "rounded the number of stacks to the nearest whole number instead of up")
def _():
    from course_lib.memory import bus_bandwidth_bytes_per_s
    b200, h100 = _acc("B200"), _acc("H100 SXM")
    need = b200.peak("bf16") / (h100.peak("bf16") / h100.mem_bandwidth)
    return round(need / bus_bandwidth_bytes_per_s(1024, 9.2e9))


def _walk_hit_rate(pad):
    from course_lib.memory import simulate_cache
    i, j = np.meshgrid(np.arange(64), np.arange(64), indexing="ij")
    addr = (4 * (i * (1024 + pad) + j)).T.ravel()          # j outer, i inner
    return simulate_cache(addr, 32 * 1024, 128, 4).hit_rate


def _bank_degree(pad):
    words = np.arange(32) * (1024 + pad)
    banks = words % 32
    return max(len(set(words[banks == b])) for b in np.unique(banks))


@m("03.7", "left the bank-conflict rule out: smallest multiple of 4 meeting the cache's 0.9 only")
def _():
    for pad in range(0, 4096, 4):
        if _walk_hit_rate(pad) >= 0.9:
            return pad


@m("03.7", "forgot the float4 rule: searched every pad 0, 1, 2, ... not only multiples of 4")
def _():
    for pad in range(0, 4096):
        if _walk_hit_rate(pad) >= 0.9 and _bank_degree(pad) <= 4:
            return pad


# ---------------------------------------------------------------- lesson 04

def _gemv_us(acc, bpe=2):
    a = _acc(acc)
    F = 2 * 8192 * 8192
    Q = bpe * (8192 + 8192 * 8192 + 8192)
    return max(F / a.peak("bf16"), Q / a.mem_bandwidth)


@m("04.2", "used the H100 SXM (the lesson's worked example) instead of the H200")
def _():
    return _gemv_us("H100 SXM") * 1e6


@m("04.2", "counted 4 bytes per element (FP32) instead of BF16's 2")
def _():
    return _gemv_us("H200", 4) * 1e6


@m("04.2", "converted to milliseconds (x1e3) instead of microseconds")
def _():
    return _gemv_us("H200") * 1e3


def _h100_ridge():
    h = _acc("H100 SXM")
    return h.peak("bf16") / h.mem_bandwidth


@m("04.3", "took the intensity of a batch of m as m FLOP/byte (weights only), so m = ceil(ridge)")
def _():
    return math.ceil(_h100_ridge())


@m("04.3", "called rl.matmul_intensity with bytes_per_element=4 (FP32) instead of BF16")
def _():
    from course_lib import roofline as rl
    r = _h100_ridge()
    for mm in range(1, 100000):
        if rl.matmul_intensity(mm, 8192, 8192, 4) >= r:
            return mm


def _fq(b):
    F = 2 * b * 8192 * 8192
    Q = 2 * (b * 8192 + 8192 * 8192 + b * 8192)
    return F, Q


@m("04.8", "used the catalog's H100 rates instead of the rates the two measurements give")
def _():
    h = _acc("H100 SXM")
    best = None
    for b in range(1, 20000):
        F, Q = _fq(b)
        if max(F / h.peak("bf16"), Q / h.mem_bandwidth) <= 60e-6:
            best = b
    return best


@m("04.8", "fitted a straight line t = a + c*b through the two measurements and solved t = 60 us")
def _():
    (b1, t1), (b2, t2) = (32, 46.4e-6), (2048, 389.5e-6)
    c = (t2 - t1) / (b2 - b1)
    a = t1 - c * b1
    return math.floor((60e-6 - a) / c)


@m("04.7", "checked only the worst-looking prefill m = 4096 instead of every m from 1 to 4096")
def _():
    from course_lib import tiling
    a = _acc("A100")
    peak, hbm = a.peak("bf16"), a.mem_bandwidth
    mm = 4096
    F = 2 * mm * 8192 * 8192
    once = 2 * (mm * 8192 + 8192 * 8192 + mm * 8192)
    tiled = tiling.tiled_matmul_traffic(mm, 8192, 8192, 64, 64).bytes_moved
    t_once = max(F / peak, once / hbm)
    return tiled / t_once / 1e12


@m("04.7", "asked only that L2 not be slower than the HBM term (tiled/L2 <= once/HBM at every m), "
           "leaving the peak out of the bound it must match")
def _():
    from course_lib import tiling
    a = _acc("A100")
    need = 0
    for mm in range(1, 4097):
        once = 2 * (mm * 8192 + 8192 * 8192 + mm * 8192)
        tiled = tiling.tiled_matmul_traffic(mm, 8192, 8192, 64, 64).bytes_moved
        need = max(need, tiled / (once / a.mem_bandwidth))
    return need / 1e12


# ---------------------------------------------------------------- lesson 05

@m("05.2", "stored INT4 in one byte per weight (NumPy has no 4-bit type) instead of half a byte")
def _():
    return 70e9 * (2 - 1) / _acc("H200").mem_bandwidth * 1e3


@m("05.2", "used bits per weight (16 and 4) in t = N b / beta instead of bytes")
def _():
    return 70e9 * (16 - 4) / _acc("H200").mem_bandwidth * 1e3


@m("05.2", "answered the INT4 read time itself, not the difference")
def _():
    return 70e9 * 0.5 / _acc("H200").mem_bandwidth * 1e3


def _grads05():
    from course_lib import formats as F
    return F.gradient_like(np.random.default_rng(0), 50_000)


@m("05.3", "counted subnormals as lost too (flushed + subnormal fraction under 0.1%)")
def _():
    from course_lib import formats as F
    g = _grads05()
    for k in range(0, 40):
        s = F.cast_stats(g, "fp16", 2.0 ** k)
        if s.flushed_fraction + s.subnormal_fraction < 0.001:
            return k


@m("05.3", "read 0.1% as 0.01 (1%) in the threshold")
def _():
    from course_lib import formats as F
    g = _grads05()
    for k in range(0, 40):
        if F.cast_stats(g, "fp16", 2.0 ** k).flushed_fraction < 0.01:
            return k


@m("05.3", "took the sweep's best_log2_scale (least flushed + overflowed) instead of the smallest k under 0.1%")
def _():
    from course_lib import formats as F
    return F.loss_scale_sweep(_grads05(), "fp16", range(0, 33)).best_log2_scale


def _grads056():
    from course_lib import formats as F
    return F.drifting_tensor(np.random.default_rng(2026), 30, 2000, median=2.0 ** -20, decades=0.8,
                             growth=1.25, spike_step=21, spike_factor=3.0)


@m("05.6", "left history_len at simulate_fp8_scaling's default (16) instead of the 4 steps asked")
def _():
    from course_lib import formats as F
    g = _grads056()
    for mg in range(0, 20):
        if F.simulate_fp8_scaling(g, "fp8_e5m2", "delayed", margin=mg).overflow_counts.sum() == 0:
            return mg


@m("05.6", "thought the scale comes from the oldest amax of the 4-step window, so the headroom must cover "
           "4 steps of 25% growth and the 3x jump: ceil(log2(3 x 1.25^4))")
def _():
    return math.ceil(math.log2(3.0 * 1.25 ** 4))


@m("05.6", "copied the lesson's first call with rule 'current' (scale from this step's own amax)")
def _():
    from course_lib import formats as F
    g = _grads056()
    for mg in range(0, 20):
        if F.simulate_fp8_scaling(g, "fp8_e5m2", "current", margin=mg).overflow_counts.sum() == 0:
            return mg


def _products():
    return np.random.default_rng(508).uniform(0.0, 0.02, 2 ** 14)


@m("05.8", "used section 7's stagnation formula with the mean product: smallest M with 2^(ceil(log2 c)+M+1) "
           "above the exact sum")
def _():
    p = _products()
    c, total = p.mean(), p.sum()
    for M in range(7, 24):
        if 2.0 ** (math.ceil(math.log2(c)) + M + 1) >= total:
            return M


@m("05.8", "used section 7's stagnation formula with the largest product (0.02) as the increment")
def _():
    total = _products().sum()
    for M in range(7, 24):
        if 2.0 ** (math.ceil(math.log2(0.02)) + M + 1) >= total:
            return M


@m("05.8", "wrote my own M-bit rounding with np.floor (truncation toward zero) instead of round to nearest")
def _():
    p = _products()
    exact = p.sum()
    for M in range(7, 24):
        s = 0.0
        for x in p:
            s = s + x
            e = math.floor(math.log2(s))
            q = 2.0 ** (e - M)
            s = q * math.floor(s / q)
        if abs(s - exact) / exact <= 0.01:
            return M


# ---------------------------------------------------------------- lesson 06

@m("06.2", "forgot the double buffering: one stage of A and B slices")
def _():
    lim = _acc("H200").max_shared_mem_bytes_per_block
    return max(t for t in range(16, 4096, 16) if (t * 64 + 64 * t) * 2 <= lim)


@m("06.2", "counted 4 bytes per element (FP32) instead of BF16")
def _():
    lim = _acc("H200").max_shared_mem_bytes_per_block
    return max(t for t in range(16, 4096, 16) if 2 * (t * 64 + 64 * t) * 4 <= lim)


def _qkv063():
    rng = np.random.default_rng(0)
    return rng.standard_normal((3, 3000, 48))


@m("06.3", "ran flash_attention without causal=True")
def _():
    from course_lib import attention
    q, k, v = _qkv063()
    _, t = attention.flash_attention(q, k, v, block_size=200, return_traffic=True)
    n, d = 3000, 48
    return (4 * n * n + 4 * n * d) / (t.elements_read + t.elements_written)


@m("06.3", "divided the other way: flash's elements over naive's")
def _():
    from course_lib import attention
    q, k, v = _qkv063()
    _, t = attention.flash_attention(q, k, v, block_size=200, causal=True, return_traffic=True)
    n, d = 3000, 48
    return (t.elements_read + t.elements_written) / (4 * n * n + 4 * n * d)


@m("06.3", "counted only flash's elements read, not the ones written")
def _():
    from course_lib import attention
    q, k, v = _qkv063()
    _, t = attention.flash_attention(q, k, v, block_size=200, causal=True, return_traffic=True)
    n, d = 3000, 48
    return (4 * n * n + 4 * n * d) / t.elements_read


def _softmax_graph(bpe_matrix=2, bpe_vec=2):
    from course_lib import tiling
    S = 1000 * 3001
    sizes = {"S": S * bpe_matrix, "m": 1000 * bpe_vec, "P": S * bpe_matrix, "l": 1000 * bpe_vec,
             "O": S * bpe_matrix}
    ops = [("rowmax", ["S"], ["m"], 1), ("sub_exp", ["S", "m"], ["P"], 1), ("rowsum", ["P"], ["l"], 1),
           ("divide", ["P", "l"], ["O"], 1)]
    unfused = tiling.graph_traffic(ops, sizes, [["rowmax"], ["sub_exp"], ["rowsum"], ["divide"]], ["O"])
    fused = tiling.graph_traffic(ops, sizes, [["rowmax", "sub_exp", "rowsum", "divide"]], ["O"])
    return unfused, fused


def _total(g):
    for name in ("total_bytes", "bytes_moved", "bytes"):
        if hasattr(g, name):
            return getattr(g, name)
    raise AttributeError("GraphTraffic total")


@m("06.5", "gave tensor sizes in elements (forgot BF16's 2 bytes), so the saving is in elements")
def _():
    u, f = _softmax_graph(1, 1)
    return _total(u) - _total(f)


@m("06.5", "counted the row maxima and sums in FP32 (4 bytes) while the task keeps everything in BF16")
def _():
    u, f = _softmax_graph(2, 4)
    return _total(u) - _total(f)


@m("06.5", "counted by hand the reads only: the four kernels read S, S+m, P, P+l; fused reads S")
def _():
    S, v = 1000 * 3001 * 2, 1000 * 2
    return (S + (S + v) + S + (S + v)) - S


def _elements067(bq):
    n, d = 4000, 64
    return n * d + 2 * n * d * math.ceil(n / bq) + n * (d + 1)


def _smem067(bq, bk):
    return bq * 64 * 2 + 2 * 2 * bk * 64 * 2 + bq * bk * 4


@m("06.7", "read 128 KiB of registers as 128,000 bytes (kB for KiB)")
def _():
    best = None
    for bq in range(16, 1025, 16):
        if bq * 64 * 4 > 128_000:
            continue
        if any(_smem067(bq, bk) <= 192 * 1024 for bk in range(16, 1025, 16)):
            e = _elements067(bq)
            best = e if best is None else min(best, e)
    return best


@m("06.7", "left the register budget out: only the shared-memory budget bounds the pair")
def _():
    best = None
    for bq in range(16, 1025, 16):
        if any(_smem067(bq, bk) <= 192 * 1024 for bk in range(16, 1025, 16)):
            e = _elements067(bq)
            best = e if best is None else min(best, e)
    return best


# ---------------------------------------------------------------- lesson 07

def _llama70():
    from course_lib.economics import get_model
    return get_model("Llama 3 70B")


@m("07.2", "left utilization at training_time_s's default (0.4) instead of 0.35")
def _():
    from course_lib.economics import training_time_s
    return training_time_s(_llama70().params, 15e12, accelerator="H100 SXM", n_devices=2048) / 86400


@m("07.2", "converted seconds to hours (/3600), not days")
def _():
    from course_lib.economics import training_time_s
    return training_time_s(_llama70().params, 15e12, accelerator="H100 SXM", n_devices=2048,
                           utilization=0.35) / 3600


@m("07.2", "used 2ND (the forward pass only) instead of 6ND")
def _():
    h = _acc("H100 SXM")
    return 2 * _llama70().params * 15e12 / (0.35 * h.peak("bf16") * 2048) / 86400


def _mistral_step(precision="fp8"):
    from course_lib.economics import decode_step, get_model
    return decode_step(get_model("Mistral 7B"), "H200", 64, 3000, precision)


@m("07.3", "left precision at decode_step's default (BF16) instead of fp8")
def _():
    from course_lib.economics import cost_per_million_tokens_usd
    return cost_per_million_tokens_usd(_mistral_step("bf16").tokens_per_s, 3.10)


@m("07.3", "used one sequence's tokens per second (1 / t_step) instead of the batch's 64")
def _():
    from course_lib.economics import cost_per_million_tokens_usd
    return cost_per_million_tokens_usd(1 / _mistral_step().t_step_s, 3.10)


def _llama8():
    from course_lib.economics import get_model
    return get_model("Llama 3 8B")


@m("07.4", "left precision at the default (BF16) instead of int8 weights")
def _():
    from course_lib.economics import crossover_batch
    return math.ceil(crossover_batch(_llama8(), "B200", 100))


@m("07.4", "truncated the crossover batch with int() instead of rounding up")
def _():
    from course_lib.economics import crossover_batch
    return int(crossover_batch(_llama8(), "B200", 100, "int8 weights"))


@m("07.6", "solved C = 6 N^2 (D = N), dropping the 20 tokens per parameter")
def _():
    return math.sqrt(2.4e24 / 6)


@m("07.6", "divided C by 6 x 20 and forgot the square root (N = C / 120)")
def _():
    return 2.4e24 / 120


# ---------------------------------------------------------------- lesson 08

@m("08.2", "used the H200's interconnect_bandwidth (900 GB/s, both directions) instead of the link's per direction")
def _():
    from course_lib.collectives import collective_time_s, get_link
    link = get_link("H200", "nvlink")
    return collective_time_s("all_reduce", 13e9 * 2, 8, bandwidth_bytes_per_s=_acc("H200").interconnect_bandwidth,
                             latency_s=link.latency_s) * 1e3


@m("08.2", "took the time as S / B (one pass of the gradients over the link), without the ring's 2(n-1)/n "
           "or the latency")
def _():
    from course_lib.collectives import get_link
    return 13e9 * 2 / get_link("H200", "nvlink").bandwidth_bytes_per_s * 1e3


@m("08.2", "counted FP32 gradients (4 bytes) instead of BF16's 2")
def _():
    from course_lib.collectives import collective_time_s, get_link
    return collective_time_s("all_reduce", 13e9 * 4, 8, get_link("H200", "nvlink")) * 1e3


def _ring083():
    from course_lib.collectives import simulate_ring_all_reduce
    data = np.random.default_rng(1).standard_normal((6, 23)).astype(np.float32)
    return simulate_ring_all_reduce(data)


@m("08.3", "answered the textbook 2(n-1)/n x S with S = 23 x 4 bytes")
def _():
    return 2 * 5 / 6 * 23 * 4


@m("08.3", "summed link_bytes over all the links (the ring's total traffic)")
def _():
    return float(_ring083().link_bytes.sum())


@m("08.3", "took the largest entry of step_bytes (one step on one link), not the whole all-reduce")
def _():
    return float(_ring083().step_bytes.max())


def _llama8_steps(acc):
    from course_lib.economics import decode_step
    return [decode_step(_llama8(), acc, b, 2048) for b in range(1, 400)]


@m("08.5", "used the whole H100 SXM instead of the 3g.40gb slice; took the largest batch that fits and meets 20 ms")
def _():
    ok = [s for s in _llama8_steps("H100 SXM") if s.fits and s.t_step_s <= 20e-3 and s.tokens_per_s >= 2800]
    return max(s.batch for s in ok)


@m("08.5", "forgot the cache in the fit (weights alone in 40 GB): the largest batch meeting 20 ms on the slice")
def _():
    from course_lib.sharing import mig_accelerator
    sl = mig_accelerator("3g.40gb", "H100 SXM")
    ok = [s for s in _llama8_steps(sl) if s.weight_bytes <= sl.mem_capacity and s.t_step_s <= 20e-3
          and s.tokens_per_s >= 2800]
    return max(s.batch for s in ok)


def _step087(p, overhead_fwd=4.0, overhead_bwd=4.0, fill=True):
    mb = 20
    tf, tb = 240 / p + overhead_fwd, 480 / p + overhead_bwd
    return ((mb + p - 1) if fill else mb) * (tf + tb)


@m("08.7", "left out the 4 ms per forward and backward (section 3's simulator alone)")
def _():
    return min(p for p in (1, 2, 3, 4, 6, 8, 12, 16, 24, 48) if _step087(p, 0, 0) <= 2000)


@m("08.7", "left out the pipeline's fill and drain: step = micro-batches x (forward + backward)")
def _():
    return min(p for p in (1, 2, 3, 4, 6, 8, 12, 16, 24, 48) if _step087(p, fill=False) <= 2000)


def _deploy078(scale_time=True, price_gpus=True):
    (b1, (t1, m1)), (b2, (t2, m2)) = sorted({8: (12.6e-3, 38.0e9), 40: (16.2e-3, 48.7e9)}.items())
    tb, mb = (t2 - t1) / (b2 - b1), (m2 - m1) / (b2 - b1)
    t0, m0 = t1 - tb * b1, m1 - mb * b1
    best = None
    for g in (2, 4, 8):
        f = 4 / g
        for b in range(1, 5000):
            t = (t0 + tb * b) * (f if scale_time else 1)
            if t > 20e-3 or (m0 + mb * b) * f > 80e9:
                break
            usd_per_s = 3.00 * (g if price_gpus else 1) / 3600
            cost = usd_per_s / (b / t) * 1e6
            best = cost if best is None else min(best, cost)
    return best


@m("07.8", "kept the 4-GPU step time for 2 and 8 GPUs (only the memory per GPU scaled with the GPUs)")
def _():
    return _deploy078(scale_time=False)


@m("07.8", "priced one GPU per deployment (3.00 $/h) instead of every GPU of it")
def _():
    return _deploy078(price_gpus=False)


def _fastest086(fits):
    from course_lib.parallelism import ParallelPlan, estimate_training_step, transformer_for_params
    model = transformer_for_params(70e9)
    seqs = 4 * 2 ** 20 // model.seq_len
    best = None
    for tp in (1, 2, 4, 8, 16):
        for pp in (1, 2, 4, 8):
            dp = 256 // (tp * pp)
            if seqs // dp < 1:
                continue
            mb = 32 if seqs // dp >= 32 else seqs // dp
            for z in (1, 2, 3):
                for rec in ("none", "selective", "full"):
                    try:
                        e = estimate_training_step(model, ParallelPlan(256, tp, pp, z, mb, rec), "H100 SXM",
                                                   4 * 2 ** 20)
                    except Exception:
                        continue
                    if fits(e) and (best is None or e.step_time_s < best):
                        best = e.step_time_s
    return best


_RATIO086 = None


def _ratio086():
    from course_lib.parallelism import ParallelPlan, estimate_training_step, transformer_for_params
    c = estimate_training_step(transformer_for_params(70e9), ParallelPlan(256, 8, 1, 1, 32, "selective"),
                               "H100 SXM", 4 * 2 ** 20)
    return 46.4e9 / c.memory["activations"]


@m("08.6", "trusted the estimate's own fit (e.fits), without scaling the activations by the measured proportion")
def _():
    return _fastest086(lambda e: e.fits)


@m("08.6", "scaled all of the memory per GPU by the measured proportion, not only the activations")
def _():
    r = _ratio086()
    return _fastest086(lambda e: e.memory_bytes * r <= e.capacity_bytes)


def _tps079(bw, precision, context=4096, check_fit=True):
    import dataclasses
    from course_lib.economics import decode_step
    acc = dataclasses.replace(_acc("H200"), mem_bandwidth=bw)
    best = 0.0
    for b in range(1, 20000):
        s = decode_step(_llama70(), acc, b, context, precision)
        if (check_fit and not s.fits) or s.t_step_s > 20e-3:
            break
        best = max(best, s.tokens_per_s)
    return best


def _search079(**kw):
    lo, hi = 480, 20000                       # in units of 0.01 TB/s; fp8 must win somewhere
    if _tps079(hi * 1e10, "fp8", **kw) < _tps079(hi * 1e10, "int4 weights", **kw):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if _tps079(mid * 1e10, "fp8", **kw) >= _tps079(mid * 1e10, "int4 weights", **kw):
            hi = mid
        else:
            lo = mid + 1
    return lo / 100


@m("07.9", "left context_tokens at decode_step's default (1024) instead of 4096")
def _():
    return _search079(context=1024)


@m("07.9", "read the title's 'how much faster' as the increase: answered the new bandwidth minus the H200's 4.8 TB/s")
def _():
    return round(_search079() - _acc("H200").mem_bandwidth / 1e12, 2)


# ---------------------------------------------------------------- step 2: verdicts (after the checks ran)
# Index into R -> the misconception id (or phrase) whose feedback named the actual mistake.
NAMED = {
    0: "other-accelerator", 1: "kib-for-kb", 2: "per-gpu-not-per-sm", 3: "more-warps-always-better",
    5: "one-scheduler-per-sm", 6: "register-budget-plain-division", 7: "loads-in-flight-cost-no-registers",
    8: "assumed-latency-not-measured", 9: "l1-shared-memory-ignored", 10: "spills-are-free",
    11: "warp-32-not-64", 12: "uniform-not-divergent", 13: "threads-rounded-to-whole-warps",
    14: "mean-over-max-iterations", 16: "rows-assumed-aligned", 19: "every-warp-diverges",
    20: "both-link-directions", 21: "fp32-bytes", 22: "seconds-for-unit", 24: "one-way-per-line",
    25: "pin-rate-in-bytes", 26: "stacks-rounded-down", 27: "cache-pad-ignores-banks",
    28: "'5 is not a multiple of 4'", 29: "other-accelerator", 30: "fp32-bytes",
    31: "milliseconds-for-microseconds", 32: "weights-bytes-only", 33: "fp32-bytes", 34: "rated-not-sustained",
    35: "linear-between-measurements", 36: "full-tile-rows-only", 37: "l2-need-without-peak",
    38: "fp8-not-int4", 39: "bits-for-bytes", 40: "read-time-not-saving", 42: "target-one-percent",
    47: "error-only-at-stagnation", 50: "no-double-buffering", 51: "fp32-bytes", 52: "causal-mask-ignored",
    53: "ratio-inverted", 55: "fusion-elements-not-bytes", 59: "output-accumulator-ignored",
    61: "hours-for-days", 62: "forward-only-flop", 63: "precision-ignored", 64: "batch-forgotten",
    65: "int8-weights-ignored", 66: "crossover-rounded-down", 68: "chinchilla-no-square-root",
    69: "both-link-directions", 70: "whole-buffer-once", 71: "fp32-bytes", 72: "chunks-assumed-even",
    73: "all-links-summed", 75: "mig-slice-as-whole-gpu", 77: "pipeline-overhead-ignored",
    78: "pipeline-bubble-ignored", 79: "fewest-gpus-cheapest", 80: "one-device-price",
    81: "estimate-trusted-over-measurement",
    # named since round 26c/26d were tuned (tests/test_checks_round_26.py)
    4: "latency-as-period",
    18: "sort-cost-left-out",
    41: "subnormals-counted-lost",
    43: "sweep-best-scale-not-smallest",
    48: "stagnation-largest-product",
    49: "truncation-not-nearest",
    54: "flash-reads-only",
    56: "row-statistics-in-fp32",
    57: "fusion-reads-only",
    58: "register-kib-read-as-kb",
    60: "utilization-left-at-default",
    67: "tokens-per-param-dropped",
    74: "one-step-not-whole-all-reduce",
    83: "scheme-context-left-at-default",
    84: "increase-for-bandwidth",
    45: "scale-from-oldest-amax",
    46: "current-rule-for-delayed",
}
# Feedback points at the right idea or symptom, not at the mistake made.
PARTLY = {}
# Rejected, but the feedback does not name the mistake (generic hint or another misconception).
NOT_NAMED = set()
# The mistake gives the right answer (checked by hand after the run: each equals the correct value).
RIGHT_BY_LUCK = {15, 17, 23, 44, 76, 82}
WRONGLY_ACCEPTED = set()
assert not (set(NAMED) & set(PARTLY)) and not (set(NAMED) | set(PARTLY)) & NOT_NAMED
assert set(NAMED) | set(PARTLY) | NOT_NAMED | RIGHT_BY_LUCK | WRONGLY_ACCEPTED == set(range(len(R)))
