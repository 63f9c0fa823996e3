"""Round of wrong answers for issue 26, written down before any was tried: each entry is an
exercise, the mistake a learner makes, and the wrong value computed as that learner would.

Not a test module itself: tests/test_checks_round_26.py runs it. NAMED (filled in after the
round was run) maps each entry whose feedback named the actual mistake to the words that name
it; RIGHT_BY_LUCK lists the mistakes that happen to give the right answer here (nothing to name).
"""
import math
import numpy as np
from course_lib import formats as F
from course_lib.hardware import get_accelerator
from course_lib.latency import ASSUMED_DRAM_LATENCY_S, littles_law, simulate_latency_hiding
from course_lib.collectives import collective_time_s, get_link, ring_all_reduce_link_bytes
from course_lib.roofline import matmul_intensity, matmul_kernel, place_kernel, ridge_point
from course_lib.attention import flash_attention_traffic
from course_lib.economics import decode_step, get_model, compute_optimal, crossover_batch, cost_per_million_tokens_usd
from course_lib.simt import run_simt

R = []
def m(ex, mistake):
    def deco(f):
        R.append((ex, mistake, f))
        return f
    return deco

# ---- 01 ----


@m("01.2", "latency read as nanoseconds: multiplied by 1e9 again")
def _():
    a = get_accelerator("H200")
    return a.mem_bandwidth * ASSUMED_DRAM_LATENCY_S * 1e9 / a.sm_count / 1e3


@m("01.2", "the lesson's H100 SXM used instead of the H200")
def _(): return littles_law("H100 SXM").bytes_in_flight_per_sm / 1e3


@m("01.2", "answer in MB (divided by 1e6) instead of kB")
def _(): return littles_law("H200").bytes_in_flight_per_sm / 1e6


@m("01.3", "strict > 0.9 instead of >= (first warps above 0.9)")
def _():
    s = simulate_latency_hiding(np.arange(1, 65), 24, 700)
    return int(s.n_warps[np.argmax(s.utilisation > 0.9)])


@m("01.3", "formula N >= 0.9 (C + L) / C solved without the 0.9 (N = (C + L) / C, rounded up)")
def _(): return math.ceil((24 + 700) / 24)


@m("01.5", "the largest cap below the kernel's 150 registers (no spill check at all)")
def _(): return 128


@m("01.6", "answered the warps needed for 0.9 instead of the registers")
def _():
    s = simulate_latency_hiding(np.arange(1, 65), 60, 500, schedulers=4)
    return int(s.n_warps[np.argmax(s.utilisation >= 0.9)])


@m("01.7", "8-byte loads assumed (double) instead of 4-byte floats")
def _():
    from course_lib.exercises.lessons import ex_01 as E   # the learner's own model of k; only the load width differs
    need = E._stream_need()
    return next(k for k in range(1, 150) if E._stream_warps(72 + k) * 32 * 8 * k >= need)
# ---- 02 ----


@m("02.2", "diverging taken as 'at least one lane branches': 1 - (1 - rho)^W")
def _():
    w = get_accelerator("MI300X").warp_size
    return 1 - (1 - 0.05) ** w


@m("02.2", "answered a percent (96.2) instead of a fraction")
def _():
    w = get_accelerator("MI300X").warp_size
    return 100 * (1 - 0.05 ** w - 0.95 ** w)


@m("02.3", "1024 threads (whole warps) instead of 1000")
def _():
    from course_lib.exercises.lessons.ex_02 import loop_kernel
    return run_simt(loop_kernel(), 1024).simt_efficiency


@m("02.3", "loop test i <= n (one iteration too many)")
def _():
    from course_lib.simt import Let, While
    k = [Let("i", lambda v: 0), While(lambda v: v["i"] <= v["tid"] % 7 + 1,
         [Let("a", lambda v: v["i"] * 2), Let("a", lambda v: v["a"] + 1), Let("i", lambda v: v["i"] + 1)])]
    return run_simt(k, 1000).simt_efficiency
# ---- 03 ----


@m("03.2", "NVLink used instead of PCIe")
def _(): return 7e9 * 2 / get_link("H100 SXM", "nvlink").bandwidth_bytes_per_s * 1e3


@m("03.2", "PCIe bandwidth taken as GiB/s (x 2^30 instead of 1e9)")
def _(): return 7e9 * 2 / (get_link("H100 SXM", "pcie").bandwidth_bytes_per_s / 1e9 * 2 ** 30) * 1e3


@m("03.2", "answer in microseconds instead of ms")
def _(): return 7e9 * 2 / (get_link("H100 SXM", "pcie").bandwidth_bytes_per_s / 2) * 1e6


@m("03.5", "ridge kept with the B200's bandwidth instead of the H100's ridge: B200 bandwidth / stack bandwidth")
def _(): return math.ceil(get_accelerator("B200").mem_bandwidth / (1024 * 9.2e9 / 8))


@m("03.5", "rounded to the nearest whole stack instead of up")
def _():
    h = get_accelerator("H100 SXM")
    need = get_accelerator("B200").peak("bf16") / h.ridge_point("bf16")
    return round(need / (1024 * 9.2e9 / 8))
# ---- 04 ----


@m("04.2", "answer in nanoseconds")
def _(): return place_kernel(matmul_kernel("g", 1, 8192, 8192, "bf16"), "H200", "bf16").t_min_s * 1e9


@m("04.2", "H100 SXM's figures used instead of the H200's")
def _(): return place_kernel(matmul_kernel("g", 1, 8192, 8192, "bf16"), "H100 SXM", "bf16").t_min_s * 1e6


@m("04.2", "weights' bytes only (activations and output left out)")
def _(): return 2 * 8192 * 8192 / get_accelerator("H200").mem_bandwidth * 1e6


@m("04.3", "FP32 ridge used instead of the BF16 one")
def _():
    h = get_accelerator("H100 SXM")
    r = ridge_point(h.peak("fp32"), h.mem_bandwidth)
    return next(mm for mm in range(1, 9000) if matmul_intensity(mm, 8192, 8192, 2) >= r)


@m("04.3", "intensity computed with 4-byte elements")
def _():
    h = get_accelerator("H100 SXM")
    r = ridge_point(h.peak("bf16"), h.mem_bandwidth)
    return next(mm for mm in range(1, 9000) if matmul_intensity(mm, 8192, 8192, 4) >= r)


@m("04.7", "answer in GB/s instead of TB/s")
def _():
    from course_lib.exercises.lessons import ex_04 as E
    return E._l2_for_free_tiles() * 1e3
# ---- 05 ----


@m("05.2", "INT4 taken as 4 bytes per weight (bits read as bytes)")
def _():
    b = get_accelerator("H200").mem_bandwidth
    return (70e9 * 2 - 70e9 * 4) / b * 1e3


@m("05.2", "H100 SXM's bandwidth instead of the H200's")
def _():
    b = get_accelerator("H100 SXM").mem_bandwidth
    return (70e9 * 2 - 70e9 * 0.5) / b * 1e3


@m("05.3", "flushed fraction compared with 0.1 (the percent read as a fraction)")
def _():
    g = F.gradient_like(np.random.default_rng(0), 50_000)
    return next(k for k in range(64) if F.cast_stats(g, "fp16", 2.0 ** k).flushed_fraction < 0.1)


@m("05.3", "cast to BF16 instead of FP16")
def _():
    g = F.gradient_like(np.random.default_rng(0), 50_000)
    return next(k for k in range(64) if F.cast_stats(g, "bf16", 2.0 ** k).flushed_fraction < 1e-3)


@m("05.6", "history of 1 step instead of 4")
def _():
    from course_lib.exercises.lessons import ex_05 as E
    return next(mm for mm in range(20) if int(F.simulate_fp8_scaling(E._drift_steps(), "fp8_e5m2", "delayed",
                history_len=1, margin=mm).overflow_counts.sum()) == 0)


@m("05.8", "precision bits counted (implicit 1 included)")
def _():
    from course_lib.exercises.lessons import ex_05 as E
    return E._fewest_bits() + 1


@m("05.8", "one more bit per doubling of the length: 7 + log2(16384 / 128)")
def _(): return 7 + int(math.log2(16384 / 128))
# ---- 06 ----


@m("06.2", "max shared memory per SM used instead of per block")
def _():
    a = get_accelerator("H200")
    t = int(a.shared_mem_bytes_per_sm // (2 * 2 * 2 * 64))
    return t - t % 16


@m("06.2", "only the A slice counted (B forgotten)")
def _():
    a = get_accelerator("H200")
    t = int(a.max_shared_mem_bytes_per_block // (2 * 2 * 64))
    return t - t % 16


@m("06.3", "naive count 4 N^2 only (the 4 N d term left out)")
def _(): return 4 * 3000 ** 2 / flash_attention_traffic(3000, 48, 200, causal=True).elements_moved


@m("06.5", "S's second read left out: unfused S is read twice (rowmax and sub_exp), fused once")
def _():
    e, r = 1000 * 3001, 1000
    return 2 * (2 * e + 2 * r + 2 * r)            # P write + read, m and l write + read; S re-read forgotten


@m("06.5", "saving counted in elements, not bytes")
def _():
    from course_lib.exercises.lessons import ex_06 as E
    return E._softmax_saving() / 2


@m("06.7", "K and V prefetch not doubled (one stage)")
def _():
    best = None
    for bq in range(16, 1025, 16):
        smem = bq * 64 * 2 + 2 * 16 * 64 * 2 + bq * 16 * 4
        if smem <= 192 * 1024 and bq * 64 * 4 <= 128 * 1024:
            v = flash_attention_traffic(4000, 64, (bq, 16)).elements_moved
            best = v if best is None else min(best, v)
    return best
# ---- 07 ----


@m("07.2", "utilization left out (u = 1)")
def _():
    n = get_model("Llama 3 70B").params
    return 6 * n * 15e12 / (get_accelerator("H100 SXM").peak("bf16") * 2048) / 86400


@m("07.2", "answer in weeks")
def _():
    n = get_model("Llama 3 70B").params
    return 6 * n * 15e12 / (0.35 * get_accelerator("H100 SXM").peak("bf16") * 2048) / 86400 / 7


@m("07.3", "cost per thousand tokens instead of per million")
def _():
    s = decode_step("Mistral 7B", "H200", 64, 3000, "fp8")
    return cost_per_million_tokens_usd(s.tokens_per_s, 3.10) / 1e3


@m("07.4", "crossover batch not rounded up but rounded to nearest")
def _(): return round(crossover_batch("Llama 3 8B", "B200", 100, "int8 weights"))


@m("07.6", "70 tokens per parameter... no: tokens per parameter 20 but C = 6 N D with D = 20 and N = C / 120")
def _(): return 2.4e24 / 120


@m("07.6", "budget read as 2.4e23 (one zero dropped)")
def _(): return compute_optimal(2.4e23).params
# ---- 08 ----


@m("08.2", "ring with n steps: 2 S / beta (the (n - 1) / n left out)")
def _():
    link = get_link("H200", "nvlink")
    return 2 * 13e9 * 2 / link.bandwidth_bytes_per_s * 1e3


@m("08.2", "answer in seconds")
def _(): return collective_time_s("all_reduce", 13e9 * 2, 8, get_link("H200", "nvlink"))


@m("08.3", "float64 values (NumPy's default) counted")
def _(): return float(ring_all_reduce_link_bytes(23, 6, 8).max())


@m("08.3", "the textbook 2 (n - 1) / n S rounded up to whole bytes")
def _(): return math.ceil(2 * 5 / 6 * 23 * 4)


@m("08.6", "the colleague's plan's own estimated step time (no search)")
def _():
    from course_lib.exercises.lessons import ex_08 as E
    return next(est.step_time_s for plan, est in E._layouts() if E._is_colleague(plan))


@m("08.7", "overhead added once per stage step, not per forward and per backward")
def _():
    from course_lib.parallelism import simulate_pipeline
    for p in (1, 2, 3, 4, 6, 8, 12, 16, 24, 48):
        run = simulate_pipeline(p, 20, "1f1b", t_forward=240 / p + 2, t_backward=480 / p + 2)
        if run.makespan <= 2000:
            return p


#: Entry index -> the words of the feedback that name the actual mistake (after the round was run).
NAMED = {
    0: "unit slip", 1: "other-accelerator", 2: "unit slip", 4: "more-warps-always-better",
    5: "largest-cap-below-need", 6: "warps-not-registers", 7: "load-width-not-4-bytes",
    9: "a percent where a fraction", 10: "threads-rounded-to-whole-warps", 11: "loop-test-inclusive",
    12: "nvlink-not-host-link", 13: "GiB (2^30 bytes) where GB", 16: "stacks-rounded-down",
    17: "unit slip", 18: "other-accelerator", 19: "weights-bytes-only", 20: "fp32-ridge-for-bf16",
    21: "fp32-bytes", 22: "unit slip", 23: "int4-four-bytes", 24: "other-accelerator",
    25: "percent-read-as-fraction", 26: "bf16-cast-not-fp16", 28: "implicit-bit-counted",
    31: "one-operand-staged", 32: "naive-count-without-nd", 33: "second-read-of-s-forgotten",
    34: "fusion-elements-not-bytes", 36: "peak-sustained", 37: "weeks where days", 38: "unit slip",
    39: "crossover-rounded-down", 40: "chinchilla-no-square-root", 41: "budget-exponent-one-less",
    42: "ring-fraction-forgotten", 43: "seconds-for-unit", 44: "float64-for-float32",
    45: "chunks-assumed-even-rounded", 46: "colleague-plan-estimate",
}
#: Mistakes that give the right answer on these numbers: the check rightly accepts them.
RIGHT_BY_LUCK = (3, 8, 15, 27, 29, 30, 35)
