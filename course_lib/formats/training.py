"""Ranges in training: what a cast to a narrow format loses, loss scaling, narrow accumulators, FP8 scaling.

    cast:          flushed to 0 if |x| <= min_subnormal / 2 (ties to even),  overflowed if |x| > max
    loss scaling:  store g * 2^k: every value moves up k binades, out of the underflow region
    accumulation:  s_i = round_acc(s_{i-1} + x_i): the sum stops growing once x_i <= gap(s) / 2
    FP8 scaling:   store x_t * s_t,  s_t = max_fmt / amax (current) or / max(amax history) (delayed)

Sources: Micikevicius et al., "Mixed Precision Training" (ICLR 2018) for loss scaling;
Micikevicius et al., "FP8 Formats for Deep Learning" (arXiv:2209.05433, 2022) and NVIDIA's
Transformer Engine documentation for per-tensor FP8 scaling.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validate import check_array, check_choice, check_count, check_int, check_number, check_sequence
from .layouts import NumberFormat, get_format
from .rounding import round_to_format

__all__ = ["CastStats", "cast_stats", "gradient_like", "LossScaleSweep", "loss_scale_sweep",
           "AccumulationResult", "accumulate", "stagnation_sum", "ScalingRun", "drifting_tensor",
           "simulate_fp8_scaling"]


@dataclass(frozen=True)
class CastStats:
    """What storing an array in one format did to it (fractions of the nonzero inputs)."""

    format: str
    scale: float
    flushed_fraction: float
    subnormal_fraction: float
    overflow_fraction: float
    median_rel_error: float


def cast_stats(values, fmt, scale=1.0) -> CastStats:
    """Store ``values * scale`` in ``fmt``; count flushes to zero, subnormals and overflows.

    ``scale`` is a loss scale: multiplying gradients by 2^k before the cast shifts them up k
    binades, out of the underflow region (and, if too large, into overflow).

    ``median_rel_error`` is the median of |stored - x| / |x| over the values stored as finite,
    nonzero numbers; when every value flushed or overflowed it is 1.0 (each value lost).
    """
    f = get_format(fmt)
    arr = check_array("values", values)
    s = check_number("scale", scale, min_value=0, allow_min=False)
    x = arr[arr != 0] * s
    if x.size == 0:
        raise ValueError("values must contain at least one nonzero number")
    stored = np.asarray(round_to_format(x, f), dtype=np.float64)
    finite = np.isfinite(stored)
    over = ~finite | (np.abs(stored) >= f.max_value) & (np.abs(x) > f.max_value)
    flushed = stored == 0
    sub = finite & (stored != 0) & (np.abs(stored) < f.min_normal)
    ok = finite & ~flushed & ~over
    rel = np.abs(stored[ok] - x[ok]) / np.abs(x[ok])
    return CastStats(format=f.name, scale=s, flushed_fraction=float(flushed.mean()),
                     subnormal_fraction=float(sub.mean()), overflow_fraction=float(over.mean()),
                     median_rel_error=float(np.median(rel)) if rel.size else 1.0)


def gradient_like(rng, n, median=2.0 ** -20, decades=1.5):
    """``n`` gradient-like values: random signs, log-normal magnitudes.

        |g| = median * 10^(decades * z),  z ~ N(0, 1)

    Activation gradients in mixed-precision training are small and spread over many powers of ten
    (Micikevicius et al., "Mixed Precision Training", ICLR 2018, fig. 3); ``decades`` is the
    standard deviation of log10|g|.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    n = check_count("n", n)
    med = check_number("median", median, min_value=0, allow_min=False)
    dec = check_number("decades", decades, min_value=0, max_value=30)
    mags = med * 10.0 ** (dec * rng.standard_normal(n))
    return mags * rng.choice((-1.0, 1.0), size=n)


@dataclass(frozen=True)
class LossScaleSweep:
    """Fractions flushed to zero and overflowed against the log2 of the loss scale."""

    format: str
    log2_scales: np.ndarray
    flushed_fraction: np.ndarray
    overflow_fraction: np.ndarray

    @property
    def best_log2_scale(self) -> int:
        """The smallest log2 scale with the fewest values lost (flushed + overflowed)."""
        lost = self.flushed_fraction + self.overflow_fraction
        return int(self.log2_scales[int(np.argmin(lost))])


def loss_scale_sweep(values, fmt, log2_scales=range(0, 33)) -> LossScaleSweep:
    """:func:`cast_stats` of ``values * 2^k`` in ``fmt`` for every k in ``log2_scales``."""
    f = get_format(fmt)
    ks = check_sequence("log2_scales", log2_scales, min_len=0, max_len=10_000)
    if not ks:
        raise TypeError("log2_scales must be a non-empty sequence of integers")
    ks = np.asarray([check_int("log2_scales[i]", k, min_value=-1000, max_value=1000) for k in ks],
                    dtype=np.int64)
    stats = [cast_stats(values, f, 2.0 ** int(k)) for k in ks]
    return LossScaleSweep(format=f.name, log2_scales=ks,
                          flushed_fraction=np.array([s.flushed_fraction for s in stats]),
                          overflow_fraction=np.array([s.overflow_fraction for s in stats]))


@dataclass(frozen=True)
class AccumulationResult:
    """A running sum kept in one format, against the exact sum (math.fsum in float64)."""

    accumulator: str
    partial_sums: np.ndarray
    exact_partial_sums: np.ndarray

    @property
    def total(self) -> float:
        return float(self.partial_sums[-1])

    @property
    def exact_total(self) -> float:
        return float(self.exact_partial_sums[-1])

    @property
    def rel_error(self) -> float:
        """|total - exact| / |exact|."""
        return abs(self.total - self.exact_total) / abs(self.exact_total)


def _scalar_rounder(f: NumberFormat):
    """One Python float -> its value in ``f``, rounded once (the formula of :func:`round_float`).

    Pure-Python arithmetic: the loop of :func:`accumulate` calls it once per element. Python's
    ``round`` breaks ties to even; scaling by powers of two is exact.
    """
    m, emin, top, overflow = f.mantissa_bits, f.min_exponent, f.max_value, f.overflow

    def rnd(v: float) -> float:
        if v == 0 or not math.isfinite(v):
            return v
        e = max(math.frexp(v)[1] - 1, emin)
        q = math.ldexp(1.0, e - m)
        r = round(v / q) * q
        if abs(r) > top:
            if overflow == "saturate":
                return math.copysign(top, r)
            return math.copysign(math.inf, r) if overflow == "inf" else math.nan
        return r

    return rnd


def accumulate(values, accumulator="fp32") -> AccumulationResult:
    """Add ``values`` one at a time, rounding the running sum to ``accumulator`` after each add.

        s_0 = 0,   s_i = round_acc(s_{i-1} + x_i)

    Each add is done in float64 and rounded once, like a hardware adder; for FP32-representable
    values (products of FP16/BF16/FP8 inputs are) the float64 add is exact whenever the sum and
    the value are within 29 binades, so the sum is rounded exactly once. This is what a dot
    product does when its accumulator is narrow; tensor cores accumulate FP16/BF16 products in FP32.
    """
    f = get_format(accumulator)
    if not f.is_float:
        raise ValueError(f"accumulator must be a floating-point format, got {f.name}")
    x = check_array("values", values, ndim=1)
    if x.size == 0:
        raise ValueError("values must hold at least one number")
    rnd = _scalar_rounder(f)
    partial = np.empty_like(x)
    s = 0.0
    for i, v in enumerate(x.tolist()):
        s = rnd(s + v)
        partial[i] = s
    exact = np.cumsum(x)  # float64: exact enough to judge formats of at most 24 mantissa bits
    exact[-1] = math.fsum(x)
    return AccumulationResult(accumulator=f.name, partial_sums=partial, exact_partial_sums=exact)


def stagnation_sum(increment, accumulator) -> float:
    """The running sum at which adding ``increment`` (> 0) stops changing it, by formula.

    In the binade [2^e, 2^(e+1)) the gap is g = 2^(e - M); S + c rounds back to S = 2^e once
    c <= g / 2 (an exact tie goes to the even neighbour, 2^e itself). Below that binade every add
    moves the sum up, so it climbs to exactly 2^e and stays there:

        S* = 2^e,   e = ceil(log2 c) + M + 1

    unless c is at most half the smallest subnormal, when the very first add rounds to zero (S* = 0).

    >>> stagnation_sum(1.0, "fp16")     # 2048 + 1 is a tie between 2048 and 2050: stays 2048
    2048.0
    """
    f = get_format(accumulator)
    if not f.is_float:
        raise ValueError(f"accumulator must be a floating-point format, got {f.name}")
    c = check_number("increment", increment, min_value=0, allow_min=False)
    if c <= f.min_subnormal / 2:
        return 0.0
    frac, p = math.frexp(c)            # c = frac * 2^p, frac in [0.5, 1)
    ceil_log2 = p - 1 if frac == 0.5 else p
    return math.ldexp(1.0, ceil_log2 + f.mantissa_bits + 1)


@dataclass(frozen=True)
class ScalingRun:
    """Per-tensor FP8 scaling applied to one tensor over a run of training steps.

    Each step ``t`` stores ``x_t * s_t`` in the format, clipping at its largest value (as
    Transformer Engine's casts do), then divides by ``s_t``. Counts are per step.
    """

    format: str
    rule: str
    history_len: int
    margin: int
    amax: np.ndarray
    scales: np.ndarray
    overflow_counts: np.ndarray
    underflow_counts: np.ndarray
    nonzero_counts: np.ndarray
    rel_rms_errors: np.ndarray

    @property
    def overflow_fraction(self) -> float:
        """Clipped values over all steps, as a fraction of the nonzero values."""
        return float(self.overflow_counts.sum() / self.nonzero_counts.sum())

    @property
    def underflow_fraction(self) -> float:
        """Nonzero values stored as zero over all steps, as a fraction of the nonzero values."""
        return float(self.underflow_counts.sum() / self.nonzero_counts.sum())

    @property
    def overflow_steps(self) -> np.ndarray:
        """Indices of the steps at which at least one value was clipped."""
        return np.flatnonzero(self.overflow_counts)


def drifting_tensor(rng, n_steps, n, median=1.0, decades=0.5, growth=1.05, spike_step=None,
                    spike_factor=16.0):
    """A tensor seen at ``n_steps`` training steps whose scale drifts: shape (n_steps, n).

        x[t] = growth^t * median * 10^(decades * z) * sign,   z ~ N(0, 1)

    and, at ``spike_step`` (if given), every value multiplied by ``spike_factor``: the one-step
    jump a loss spike or a new batch of unusual data gives an activation or gradient tensor.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    steps = check_int("n_steps", n_steps, min_value=1, max_value=100_000)
    size = check_int("n", n, min_value=1, max_value=10_000_000)
    if steps * size > 20_000_000:
        raise ValueError(f"n_steps * n must be at most 2e7 values, got {steps * size}")
    med = check_number("median", median, min_value=0, allow_min=False)
    dec = check_number("decades", decades, min_value=0, max_value=10)
    g = check_number("growth", growth, min_value=0, allow_min=False)
    spike = check_number("spike_factor", spike_factor, min_value=0, allow_min=False)
    if spike_step is not None:
        k = check_int("spike_step", spike_step, min_value=0, max_value=steps - 1)
    # log10 of the largest magnitude: median x growth^(n_steps - 1) x spike x 10^(6 decades)
    top = (math.log10(med) + (steps - 1) * math.log10(g) + 6 * dec
           + (math.log10(spike) if spike_step is not None else 0.0))
    if top > 300:
        raise ValueError(f"median * growth ** (n_steps - 1) * spike_factor * 10 ** (6 * decades) must stay "
                         f"below 1e300 (float64's range), got 1e{top:.0f} (median={med:g}, growth={g:g}, "
                         f"n_steps={steps}, decades={dec:g})")
    drift = med * g ** np.arange(steps, dtype=float)
    if spike_step is not None:
        drift[k] *= spike
    mags = 10.0 ** (dec * rng.standard_normal((steps, size)))
    return drift[:, None] * mags * rng.choice((-1.0, 1.0), size=(steps, size))


def simulate_fp8_scaling(steps, fmt="fp8_e4m3", rule="delayed", history_len=16, margin=0) -> ScalingRun:
    """Per-tensor scaling of a tensor over training steps, as NVIDIA's Transformer Engine does it.

        current:  s_t = (max_fmt / amax_t) / 2^margin                 (needs amax_t first: two reads)
        delayed:  s_t = (max_fmt / max(amax_{t-H}, ..., amax_{t-1})) / 2^margin     (one read)
        none:     s_t = 1

    with ``H = history_len`` (Transformer Engine's ``DelayedScaling``: ``amax_history_len``,
    default 1024, ``amax_compute_algo='max'``, ``margin`` default 0; the recipe keeps an FP32
    scale per tensor). The first step has no history; it is scaled with its own amax here (a
    warm-up; Transformer Engine starts from a scale of 1). Delayed scaling clips values at a
    step whose amax exceeds the history's largest by more than 2^margin.

    ``steps`` is a 2-D array (n_steps, elements). Sources: Micikevicius et al., "FP8 Formats for
    Deep Learning" (arXiv:2209.05433, 2022), sec. 3-4 (per-tensor scaling; E4M3 for weights and
    activations, E5M2 for gradients); Transformer Engine documentation, common API
    ``DelayedScaling`` and ``Format.HYBRID``.
    """
    f = get_format(fmt)
    if not f.is_float:
        raise ValueError(f"fmt must be a floating-point format, got {f.name}")
    x = check_array("steps", steps, ndim=2)
    if x.size == 0:
        raise ValueError("steps must hold at least one value")
    if x.size > 50_000_000 or x.shape[0] > 100_000:
        raise ValueError(f"steps must hold at most 1e5 steps and 5e7 values, got shape {x.shape}")
    rule = check_choice("rule", rule, ("delayed", "current", "none"))
    h = check_int("history_len", history_len, min_value=1, max_value=100_000)
    m = check_int("margin", margin, min_value=0, max_value=64)
    amax = np.max(np.abs(x), axis=1)
    if rule == "none":
        ref = np.full_like(amax, f.max_value)
    elif rule == "current":
        ref = amax.copy()
    else:
        ref = np.empty_like(amax)
        ref[0] = amax[0]
        for t in range(1, amax.size):
            ref[t] = amax[max(0, t - h):t].max()
    ref = np.where(ref > 0, ref, 1.0)
    scales = f.max_value / ref / 2.0 ** m
    scaled = x * scales[:, None]
    stored = np.asarray(round_to_format(np.clip(scaled, -f.max_value, f.max_value), f, saturate=True),
                        dtype=np.float64)
    nonzero = x != 0
    over = np.abs(scaled) > f.max_value * (1 + 1e-12)       # x * (max / amax) may land an ulp above
    under = nonzero & (stored == 0)
    err = stored / scales[:, None] - x
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.sqrt(np.sum(err ** 2, axis=1) / np.sum(x ** 2, axis=1))
    return ScalingRun(format=f.name, rule=rule, history_len=h, margin=m, amax=amax, scales=scales,
                      overflow_counts=over.sum(axis=1), underflow_counts=under.sum(axis=1),
                      nonzero_counts=nonzero.sum(axis=1), rel_rms_errors=rel)
