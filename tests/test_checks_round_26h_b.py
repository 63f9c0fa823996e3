"""Round 26h, lessons 05-08 (fix-h2): new mistakes a first-time learner makes that no check named
before, each computed here as the learner would make it, with the library and the one mistake, and
the misconception (or wrong implementation) that now names it.

Each entry is (exercise, mistake, function returning the learner's value, expected key). The check
must reject the value and show the key among the mistakes it names (at most three are shown).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from course_lib import attention, tiling
from course_lib import formats as F
from course_lib.collectives import collective_time_s, get_link, simulate_ring_all_reduce
from course_lib.economics import compute_optimal, cost_per_million_tokens_usd, crossover_batch, decode_step, get_model
from course_lib.exercises.feedback import ExerciseError
from course_lib.exercises.registry import get_exercise
from course_lib.hardware import bytes_per_element, get_accelerator


pytestmark = pytest.mark.usefixtures("anonymous_learner")


# --- 05 -----------------------------------------------------------------------------------------

def _saving_ms(n=70e9, wide="bf16", narrow="int4", rate=None, unit=1e3):
    rate = rate or get_accelerator("H200").mem_bandwidth
    return n * (bytes_per_element(wide) - bytes_per_element(narrow)) / rate * unit


def _read_ms(precision):
    return 70e9 * bytes_per_element(precision) / get_accelerator("H200").mem_bandwidth * 1e3


def _grads():
    return F.gradient_like(np.random.default_rng(0), 50_000)


def _first_k(scale, ks=range(64)):
    g = _grads()
    return next(k for k in ks if F.cast_stats(g, "fp16", scale(k)).flushed_fraction < 1e-3)


def _first_k_as_scale():
    """The learner's loop k = 1, 2, ... with cast_stats(grads, 'fp16', k), found by bisection (the
    flushed fraction falls as the scale grows) to keep the test short."""
    g = _grads()
    lo, hi = 1, 1 << 16
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if F.cast_stats(g, "fp16", float(mid)).flushed_fraction < 1e-3 else (mid + 1, hi)
    return lo


def _block_quantizer(amax_axis=1, top=127.0, rounding=np.rint, clip=(-127, 127), codes_div=False, asym=False,
                     by_count=False):
    def quantize_blocks_int8(x, block_size):
        x = np.asarray(x, dtype=float)
        out = np.empty_like(x)
        cols = x.shape[1]
        if by_count:
            bounds = [(int(p[0]), int(p[-1]) + 1) for p in np.array_split(np.arange(cols), block_size) if p.size]
        else:
            bounds = [(a, min(a + block_size, cols)) for a in range(0, cols, block_size)]
        for a, b in bounds:
            block = x[:, a:b]
            if asym:
                lo, hi = block.min(axis=1, keepdims=True), block.max(axis=1, keepdims=True)
                s = np.where(hi > lo, (hi - lo) / 255, 1.0)
                zero = np.rint(-128 - lo / s)
                out[:, a:b] = (np.clip(np.rint(block / s + zero), -128, 127) - zero) * s
                continue
            amax = np.max(np.abs(block), axis=amax_axis, keepdims=amax_axis is not None)
            s = np.where(amax > 0, amax / top, 1.0)
            codes = rounding(block / s)
            if clip is not None:
                codes = np.clip(codes, *clip)
            out[:, a:b] = codes / s if codes_div else codes * s
        return out
    return quantize_blocks_int8


def _emax(e):
    return 2 ** e - 2 - (2 ** (e - 1) - 1)


def _margin_by_hand():
    grads = F.drifting_tensor(np.random.default_rng(2026), 30, 2000, median=2.0 ** -20, decades=0.8,
                              growth=1.25, spike_step=21, spike_factor=3.0)
    amax = np.abs(grads).max(axis=1)
    return math.log2(max(amax[t] / amax[max(0, t - 4):t].max() for t in range(1, amax.size)))


def _one_sum_error(m):
    products = np.random.default_rng(508).uniform(0.0, 0.02, 2 ** 14)
    exact = math.fsum(products)
    emin = F.get_format("bf16").min_exponent
    s = 0.0
    for x in products.tolist():
        v = s + x
        gap = math.ldexp(1.0, max(math.frexp(v)[1] - 1, emin) - m)
        s = round(v / gap) * gap
    return abs(s - exact) / exact, exact


def _fewest_bits(ok):
    return next(m for m in range(7, 24) if ok(*_one_sum_error(m)))


R05 = [
    ("05.2", "70B read as 70 x 2^30 weights", lambda: _saving_ms(70 * 2 ** 30), "params-binary-billions"),
    ("05.2", "Llama 3 70B's catalog parameter count for the task's 70e9",
     lambda: _saving_ms(get_model("Llama 3 70B").params), "catalog-model-params-for-task-count"),
    ("05.2", "70 billion typed 7e9", lambda: _saving_ms(7e9), "params-power-of-ten-fewer"),
    ("05.2", "70 billion typed 700e9", lambda: _saving_ms(700e9), "params-power-of-ten-more"),
    ("05.2", "the two read times added", lambda: _read_ms("bf16") + _read_ms("int4"), "read-times-added"),
    ("05.2", "INT4 minus BF16: a negative saving", lambda: _read_ms("int4") - _read_ms("bf16"), "saving-sign-flipped"),
    ("05.2", "microseconds", lambda: _saving_ms(unit=1e6), "microseconds-for-milliseconds"),
    ("05.2", "t_int4 / t_bf16", lambda: _read_ms("int4") / _read_ms("bf16"), "int4-over-bf16-ratio"),
    ("05.2", "1 - t_int4 / t_bf16", lambda: 1 - _read_ms("int4") / _read_ms("bf16"), "fraction-of-read-saved"),
    ("05.2", "mem_capacity for mem_bandwidth", lambda: _saving_ms(rate=get_accelerator("H200").mem_capacity),
     "capacity-for-bandwidth"),
    ("05.3", "a while loop that adds 1 after the test passes", lambda: _first_k(lambda k: 2.0 ** k) + 1,
     "first-passing-k-plus-one"),
    ("05.3", "k passed as the scale", _first_k_as_scale, "scale-k-not-two-to-the-k"),
    ("05.3", "powers of ten as scales", lambda: _first_k(lambda k: 10.0 ** k, range(20)), "loss-scale-powers-of-ten"),
    ("05.3", "the flushed fraction stored instead of k",
     lambda: F.cast_stats(_grads(), "fp16", 2.0 ** _first_k(lambda k: 2.0 ** k)).flushed_fraction,
     "flushed-fraction-not-k"),
    ("05.4", "np.max(np.abs(block)) without axis", lambda: _block_quantizer(amax_axis=None), "block-scale-over-all-rows"),
    ("05.4", "scale max / 255", lambda: _block_quantizer(top=255.0, clip=None), "int8-scale-255-levels"),
    ("05.4", "scale max / 127.5", lambda: _block_quantizer(top=127.5, clip=(-128, 127)), "int8-scale-255-over-two"),
    ("05.4", "np.ceil", lambda: _block_quantizer(rounding=np.ceil), "int8-ceil-not-round"),
    ("05.4", "one scale per column (F.quantize channel, axis=1)",
     lambda: lambda x, bs: F.quantize(np.asarray(x, float), "int8", "channel", axis=1).dequantized, "scale-per-column"),
    ("05.4", "np.array_split(row, block_size)", lambda: _block_quantizer(by_count=True), "block-size-as-number-of-blocks"),
    ("05.4", "codes / scale", lambda: _block_quantizer(codes_div=True), "codes-divided-by-scale"),
    ("05.4", "asymmetric min-max with a zero point", lambda: _block_quantizer(asym=True), "asymmetric-min-max-scale"),
    ("05.4", "F.quantize block without block_size",
     lambda: lambda x, bs: F.quantize(np.asarray(x, float), "int8", "block").dequantized,
     "quantize-block-size-left-at-default"),
    ("05.5", "no bias subtracted", lambda: lambda e, m: (2 - 2.0 ** -m) * 2.0 ** (2 ** e - 2), "exponent-bias-forgotten"),
    ("05.5", "all-ones mantissa reserved too", lambda: lambda e, m: (2 - 2.0 ** (1 - m)) * 2.0 ** _emax(e),
     "all-ones-mantissa-reserved-too"),
    ("05.5", "one exponent bit kept for the sign", lambda: lambda e, m: (2 - 2.0 ** -m) * 2.0 ** _emax(e - 1),
     "exponent-bit-for-sign"),
    ("05.6", "the factor 2^m stored", lambda: 2 ** max(0, math.ceil(_margin_by_hand())), "margin-as-headroom-factor"),
    ("05.6", "log2 of the worst ratio, unrounded", _margin_by_hand, "margin-log2-not-rounded-up"),
    ("05.7", "the outliers-apart scheme never built: the cheapest library scheme", lambda: "int8 per block",
     "outliers-apart-not-built"),
    ("05.8", "1 % read as 0.1", lambda: _fewest_bits(lambda err, exact: err <= 0.1), "sum-tolerance-read-as-ten-percent"),
    ("05.8", "1 % read as 0.001", lambda: _fewest_bits(lambda err, exact: err <= 0.001),
     "sum-tolerance-read-as-tenth-percent"),
    ("05.8", "the absolute error held to 0.01", lambda: _fewest_bits(lambda err, exact: err * exact <= 0.01),
     "sum-absolute-error-not-relative"),
    ("05.8", "FP16's 10 bits plus the doublings", lambda: 10 + round(math.log2(2 ** 14 / 128)), "fp16-mantissa-for-bf16"),
    ("05.8", "doublings from one product", lambda: 7 + 14, "doublings-counted-from-one-product"),
    ("05.8", "BF16 as it is", lambda: F.get_format("bf16").mantissa_bits, "bf16-enough-without-chunks"),
]


# --- 06 -----------------------------------------------------------------------------------------

_SMEM = get_accelerator("H200").max_shared_mem_bytes_per_block


def _largest_tile(fits):
    return max(t for t in range(16, 8193, 16) if fits(t))


def _naive(n=3000, d=48):
    return 4 * n * n + 4 * n * d


def _flash(block=200, n=3000, d=48):
    return attention.flash_attention_traffic(n, d, block, causal=True).elements_moved


def _online(max_over="row", base="e", block_normalised=False, p_max="new", order="mlo"):
    def online_softmax_step(m_prev, l_prev, o_prev, s_block, v_block):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            block_max = s_block.max(axis=1) if max_over == "row" else np.full(len(m_prev), s_block.max())
            m_new = np.maximum(m_prev, block_max)
            exp = np.exp2 if base == "2" else np.exp
            a = exp(m_prev - m_new)
            p = exp(s_block - (m_new if p_max == "new" else block_max)[:, None])
            l_new = a * l_prev + p.sum(axis=1)
            w = p / p.sum(axis=1, keepdims=True) if block_normalised else p
            o_new = a[:, None] * o_prev + w @ v_block
            return (l_new, m_new, o_new) if order == "lmo" else (m_new, l_new, o_new)
    return online_softmax_step


def _fusion(rows=1000, cols=3001, vec=None, outputs=("O",), unit=1):
    b, vec = 2, rows if vec is None else vec
    sizes = {"S": b * rows * cols, "P": b * rows * cols, "O": b * rows * cols, "m": b * vec, "l": b * vec}
    ops = [("rowmax", ("S",), ("m",), 0), ("sub_exp", ("S", "m"), ("P",), 0),
           ("rowsum", ("P",), ("l",), 0), ("divide", ("P", "l"), ("O",), 0)]
    four = tiling.graph_traffic(ops, sizes, [(o[0],) for o in ops], outputs)
    one = tiling.graph_traffic(ops, sizes, [tuple(o[0] for o in ops)], outputs)
    return (four.bytes_moved - one.bytes_moved) / unit


def _register_kib(m=200, strict=False):
    sides = range(16, 513, 16)
    tiles = sorted((tiling.tiled_matmul_traffic(m, 8192, 8192, tm, tn).bytes_moved, tm, tn)
                   for tm in sides for tn in sides if tiling.smem_bytes_per_block(tm, tn, 32, 2, stages=2) <= 64 * 1024)
    for kib in range(1, 513):
        fit = [t for t in tiles if (t[1] * t[2] * 4 < kib * 1024 if strict else t[1] * t[2] * 4 <= kib * 1024)]
        if fit and fit[0][1] >= 200:
            return kib
    raise AssertionError("no budget")


def _attention_pairs(smem_extra=lambda bq, bk: 0, regs=lambda bq, bk: 4 * bq * 64 <= 128 * 1024, causal=False):
    grid = range(16, 1025, 16)
    return min(attention.flash_attention_traffic(4000, 64, (bq, bk), causal).elements_moved
               for bq in grid for bk in grid
               if 2 * bq * 64 + 2 * 2 * (2 * bk * 64) + 4 * bq * bk + smem_extra(bq, bk) <= 192 * 1024 and regs(bq, bk))


R06 = [
    ("06.2", "the 48 KiB static limit", lambda: _largest_tile(lambda t: 512 * t <= 48 * 1024), "static-shared-memory-48-kib"),
    ("06.2", "227 KiB read as 227,000 bytes", lambda: _largest_tile(lambda t: 512 * t <= 227 * 1000),
     "shared-memory-kib-as-kb"),
    ("06.2", "rounded up to a multiple of 16", lambda: math.ceil(_SMEM / 512 / 16) * 16, "tile-side-rounded-up"),
    ("06.2", "the FP32 output tile staged too", lambda: _largest_tile(lambda t: 512 * t + 4 * t * t <= _SMEM),
     "output-tile-in-shared-memory"),
    ("06.2", "the largest power of two", lambda: 2 ** int(math.log2(_SMEM // 512)), "tile-side-power-of-two"),
    ("06.2", "the area T x T", lambda: (_SMEM // 512 // 16 * 16) ** 2, "tile-area-not-side"),
    ("06.3", "naive count without O's write", lambda: (4 * 3000 ** 2 + 3 * 3000 * 48) / _flash(),
     "naive-count-output-left-out"),
    ("06.3", "percent saved", lambda: 100 * (1 - _flash() / _naive()), "attention-saving-in-percent"),
    ("06.3", "naive minus flash", lambda: _naive() - _flash(), "attention-saving-difference"),
    ("06.3", "the last block size tried, 256", lambda: _naive() / _flash(256), "block-size-256-tried-afterwards"),
    ("06.3", "the last block size tried, 64", lambda: _naive() / _flash(64), "block-size-64-tried-afterwards"),
    ("06.3", "the last block size tried, 1000", lambda: _naive() / _flash(1000), "block-size-1000-tried-afterwards"),
    ("06.4", "s_block.max() without axis", lambda: _online(max_over="block"), "block-max-over-all-rows"),
    ("06.4", "np.exp2", lambda: _online(base="2"), "exp2-not-exp"),
    ("06.4", "block probabilities normalised before @ v", lambda: _online(block_normalised=True),
     "block-softmax-before-values"),
    ("06.4", "the block against its own maximum", lambda: _online(p_max="block"), "block-against-its-own-max"),
    ("06.4", "(l, m, o) returned", lambda: _online(order="lmo"), "online-step-returned-out-of-order"),
    ("06.5", "3000 columns", lambda: _fusion(cols=3000), "score-columns-3000"),
    ("06.5", "m and l sized per column", lambda: _fusion(vec=3001), "row-statistics-per-column"),
    ("06.5", "m and l kept as outputs", lambda: _fusion(outputs=("O", "m", "l")), "row-statistics-kept-as-outputs"),
    ("06.5", "MB", lambda: _fusion(unit=1e6), "fusion-saving-in-mb"),
    ("06.5", "kB", lambda: _fusion(unit=1e3), "fusion-saving-in-kb"),
    ("06.5", "MiB", lambda: _fusion(unit=2 ** 20), "fusion-saving-in-mib"),
    ("06.5", "GB", lambda: _fusion(unit=1e9), "fusion-saving-in-gb"),
    ("06.6", "registers compared with <", lambda: _register_kib(strict=True), "register-budget-strict"),
    ("06.6", "bytes of section 1's 8192-cube matmul", lambda: _register_kib(m=8192), "square-matmul-traffic-for-skinny"),
    ("06.7", "causal=True", lambda: _attention_pairs(causal=True), "causal-mask-for-unmasked"),
    ("06.7", "the scores in the register budget", lambda: _attention_pairs(regs=lambda bq, bk: 4 * bq * (64 + bk) <= 128 * 1024),
     "score-tile-in-register-budget"),
    ("06.7", "the output accumulator in shared memory too", lambda: _attention_pairs(smem_extra=lambda bq, bk: 4 * bq * 64),
     "output-accumulator-in-shared-memory"),
    ("06.7", "registers compared with <", lambda: _attention_pairs(regs=lambda bq, bk: 4 * bq * 64 < 128 * 1024),
     "attention-register-budget-strict"),
]


# --- 07 -----------------------------------------------------------------------------------------

def _days(flop=6, tokens=15e12, u=0.35, into=False):
    n, peak = get_model("Llama 3 70B").params, get_accelerator("H100 SXM").peak("bf16")
    return flop * n * tokens * (u if into else 1 / u) / (peak * 2048) / 86400


_STEP = decode_step("Mistral 7B", "H200", 64, 3000, "fp8")
_USD = cost_per_million_tokens_usd(_STEP.tokens_per_s, 3.10)


def _kv(tokens=lambda t: t, scale=1.0, width=lambda b: b):
    def kv_cache_total_bytes(layers, kv_heads, head_dim, bytes_per_element, context_tokens, batch):
        return 2 * layers * kv_heads * head_dim * width(bytes_per_element) * tokens(context_tokens) * batch * scale
    return kv_cache_total_bytes


def _cheapest_deployment(price=3.0, per_gpu=False):
    profile = {8: (12.6e-3, 38.0e9), 40: (16.2e-3, 48.7e9)}
    (b1, (t1, m1)), (b2, (t2, m2)) = sorted(profile.items())
    t_seq, m_seq = (t2 - t1) / (b2 - b1), (m2 - m1) / (b2 - b1)
    t_fixed, m_fixed = t1 - b1 * t_seq, m1 - b1 * m_seq
    capacity, costs = get_accelerator("H100 SXM").mem_capacity, []
    for n in (2, 4, 8):
        scale = 4 / n
        batch = min(math.floor((0.020 / scale - t_fixed) / t_seq), math.floor((capacity / scale - m_fixed) / m_seq))
        if batch >= 1:
            tokens_per_s = batch / (scale * (t_fixed + batch * t_seq))
            costs.append(cost_per_million_tokens_usd(tokens_per_s / n if per_gpu else tokens_per_s, price, n))
    return min(costs)


R07 = [
    ("07.2", "15e12 read as 15 billion", lambda: _days(tokens=15e9), "tokens-billions-for-trillions"),
    ("07.2", "years", lambda: _days() / 365, "years-for-days"),
    ("07.2", "weeks", lambda: _days() / 7, "weeks-for-days"),
    ("07.2", "minutes", lambda: _days() * 1440, "minutes-for-days"),
    ("07.2", "u multiplied into the time", lambda: _days(into=True), "utilization-multiplied-into-time"),
    ("07.2", "u = 35", lambda: _days(u=35), "utilization-as-percent"),
    ("07.2", "8 N D", lambda: _days(flop=8), "eight-flop-with-recomputation"),
    ("07.3", "tokens_per_s times the batch again", lambda: cost_per_million_tokens_usd(_STEP.tokens_per_s * 64, 3.10),
     "batch-counted-twice"),
    ("07.3", "per thousand tokens", lambda: _USD / 1e3, "per-thousand-tokens"),
    ("07.3", "cents", lambda: _USD * 100, "cents-for-dollars"),
    ("07.3", "the step in ms used as seconds", lambda: 3.10 / 3600 * _STEP.t_step_s * 1e3 / 64 * 1e6,
     "step-time-in-ms-as-seconds"),
    ("07.3", "a million as 2^20", lambda: _USD / 1e6 * 2 ** 20, "million-as-two-to-the-twenty"),
    ("07.4", "ceil + 1", lambda: math.ceil(crossover_batch("Llama 3 8B", "B200", 100, "int8 weights")) + 1,
     "one-batch-past-the-first"),
    ("07.4", "the cache left out (context 0)", lambda: math.ceil(crossover_batch("Llama 3 8B", "B200", 0, "int8 weights")),
     "kv-cache-left-out-of-crossover"),
    ("07.5", "bits", lambda: _kv(scale=8), "kv-bits-not-bytes"),
    ("07.5", "context - 1 tokens", lambda: _kv(tokens=lambda t: t - 1), "kv-one-token-short"),
    ("07.5", "MB", lambda: _kv(scale=1e-6), "kv-mb-not-bytes"),
    ("07.5", "MiB", lambda: _kv(scale=2.0 ** -20), "kv-mib-not-bytes"),
    ("07.5", "KiB", lambda: _kv(scale=2.0 ** -10), "kv-kib-not-bytes"),
    ("07.5", "int(bytes_per_element)", lambda: _kv(width=int), "kv-bytes-per-element-truncated"),
    ("07.5", "ceil(bytes_per_element)", lambda: _kv(width=math.ceil), "kv-bytes-per-element-rounded-up"),
    ("07.6", "sqrt(C / 6) / 20", lambda: math.sqrt(2.4e24 / 6) / 20, "tokens-per-param-outside-the-root"),
    ("07.6", "8 N D", lambda: math.sqrt(2.4e24 / 160), "eight-flop-with-recomputation"),
    ("07.6", "millions", lambda: compute_optimal(2.4e24).params / 1e6, "parameters-in-millions"),
    ("07.8", "07.3's price, $3.10", lambda: _cheapest_deployment(price=3.10), "price-of-exercise-07-3"),
    ("07.8", "each GPU's tokens priced with all n", lambda: _cheapest_deployment(per_gpu=True),
     "throughput-per-gpu-priced-for-all"),
    ("07.8", "dollars per token", lambda: _cheapest_deployment() / 1e6, "per-token-not-per-million"),
    ("07.9", "GB/s", lambda: get_exercise("07.9").answer(None) * 1e3, "bandwidth-in-gb-per-s"),
    ("07.9", "bytes per second", lambda: get_exercise("07.9").answer(None) * 1e12, "bandwidth-in-bytes-per-s"),
]


# --- 08 -----------------------------------------------------------------------------------------

def _ring_ms(nbytes=2 * 13e9, link=None, unit=1e3):
    return collective_time_s("all_reduce", nbytes, 8, link or get_link("H200", "nvlink")) * unit


def _busiest():
    values = np.random.default_rng(0).standard_normal((6, 23)).astype(np.float32)
    return float(simulate_ring_all_reduce(values).link_bytes.max())


def _zero(weights=2, grads=2, optimizer=12, scale=1.0):
    def zero_bytes(n_params, dp, stage):
        w, g, o = weights * n_params, grads * n_params, optimizer * n_params
        if stage >= 1:
            o /= dp
        if stage >= 2:
            g /= dp
        if stage >= 3:
            w /= dp
        return (w + g + o) * scale
    return zero_bytes


def _fewest_p(step_ms):
    return next(p for p in range(1, 49) if 48 % p == 0 and step_ms(p) <= 2000)


def _host_link():
    import dataclasses
    return dataclasses.replace(get_link("H200", "nvlink"), bandwidth_bytes_per_s=get_accelerator("H200").host_link_bandwidth)


R08 = [
    ("08.2", "13B as 13 x 2^30", lambda: _ring_ms(2 * 13 * 2 ** 30), "gradient-params-binary-billions"),
    ("08.2", "microseconds", lambda: _ring_ms(unit=1e6), "microseconds-for-milliseconds"),
    ("08.2", "the network tier", lambda: _ring_ms(link=get_link("H200", "network")), "network-tier-for-nvlink"),
    ("08.2", "the host link's bandwidth", lambda: _ring_ms(link=_host_link()), "host-link-for-nvlink"),
    ("08.3", "one rank's buffer", lambda: 23 * 4, "buffer-size-not-link-bytes"),
    ("08.3", "(n - 1) / n S", lambda: 5 / 6 * 92, "reduce-scatter-fraction-only"),
    ("08.3", "busiest / textbook", lambda: _busiest() / (2 * 5 / 6 * 92), "busiest-over-textbook-ratio"),
    ("08.3", "busiest - textbook", lambda: _busiest() - 2 * 5 / 6 * 92, "busiest-minus-textbook"),
    ("08.4", "an FP32 gradient copy in the optimizer state", lambda: _zero(optimizer=16), "zero-fp32-gradient-copy-counted"),
    ("08.4", "FP32 working weights", lambda: _zero(weights=4), "zero-fp32-weights"),
    ("08.4", "GiB", lambda: _zero(scale=2.0 ** -30), "zero-gib-not-bytes"),
    ("08.6", "milliseconds", lambda: get_exercise("08.6").answer(None) * 1e3, "step-time-in-ms"),
    ("08.7", "forwards only", lambda: _fewest_p(lambda p: (20 + p - 1) * (240 / p + 4)), "pipeline-backward-left-out"),
    ("08.7", "4 ms per layer", lambda: _fewest_p(lambda p: (20 + p - 1) * (720 / p + 8 * 48 / p)),
     "pipeline-overhead-per-layer"),
    ("08.7", "micro-batches divided among the stages", lambda: _fewest_p(lambda p: (20 / p + p - 1) * (720 / p + 8)),
     "micro-batches-split-over-stages"),
    ("08.7", "the backward as long as the forward", lambda: _fewest_p(lambda p: (20 + p - 1) * (480 / p + 8)),
     "pipeline-backward-as-long-as-forward"),
]

ROUND = R05 + R06 + R07 + R08


def _named(text: str) -> list[str]:
    return re.findall(r"\[misconception: ([a-z0-9-]+)\]", text)


@pytest.mark.parametrize("exercise_id, mistake, compute, key", ROUND,
                         ids=[f"{e}-{k}" for e, _, _, k in ROUND])
def test_each_new_mistake_is_rejected_and_named(exercise_id, mistake, compute, key):
    with pytest.raises(ExerciseError) as info:
        get_exercise(exercise_id).check(compute(), None)
    assert key in _named(str(info.value)), (exercise_id, mistake, str(info.value))


def test_the_round_covers_lessons_05_to_08_and_names_each_mistake_once():
    assert {e[:2] for e, _, _, _ in ROUND} == {"05", "06", "07", "08"}
    assert len({(e, k) for e, _, _, k in ROUND}) == len(ROUND) >= 100
