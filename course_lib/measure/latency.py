"""Fixed cost against throughput on the learner's own CPU: many small NumPy calls vs one large one.

Every call of a NumPy function pays a fixed overhead (argument parsing, dispatch, allocation
checks) before it streams its data. Timing calls of growing size n fits Hockney's model

    t(n) = t0 + n / r_inf          achieved rate r(n) = n / t(n) = r_inf / (1 + n_half / n)

where t0 is the per-call overhead, r_inf the asymptotic rate (elements per second) and
n_half = t0 * r_inf the size at which half of r_inf is reached (R. W. Hockney, "The Science of
Computer Benchmarking", SIAM 1996). A GPU kernel launch is the same story with t0 of several
microseconds, which is why small kernels cannot use a GPU well.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .._validate import check_array, check_bool, check_int, check_number
from .progress import progress_bar
from .timer import time_best

__all__ = ["CallOverhead", "fit_overhead_model", "robust_overhead_model", "measure_call_overhead",
           "size_for_fraction", "BatchedCalls", "measure_batched_calls"]


@dataclass(frozen=True)
class CallOverhead:
    """Measured time per call against elements per call, and the fitted Hockney model."""

    sizes: np.ndarray               # elements per call
    t_call_s: np.ndarray            # best time of one call, seconds
    t0_s: float                     # fitted fixed overhead per call
    rate_inf_elements_per_s: float  # fitted asymptotic rate
    operation: str = "np.add(a, b, out=c), float32"

    @property
    def rate_elements_per_s(self) -> np.ndarray:
        """Achieved rate n / t(n)."""
        return self.sizes / self.t_call_s

    @property
    def n_half(self) -> float:
        """Size reaching half the asymptotic rate: t0 * r_inf."""
        return self.t0_s * self.rate_inf_elements_per_s

    def model_t_s(self, n):
        """The fitted model's time for ``n`` elements per call (a number or an array of them):
        t(n) = t0 + n / r_inf, in seconds."""
        arr = check_array("n", n)
        if np.any(arr < 0):
            raise ValueError("n must be >= 0 elements per call")
        out = self.t0_s + arr / self.rate_inf_elements_per_s
        return out if arr.ndim else float(out)


def fit_overhead_model(sizes, t_call_s) -> tuple[float, float]:
    """Fit t(n) = t0 + n / r_inf by least squares weighted by 1/t (relative error).

    Returns ``(t0_s, rate_inf_elements_per_s)``; t0 is clipped at zero.
    """
    n = check_array("sizes", sizes, ndim=1)
    t = check_array("t_call_s", t_call_s, ndim=1)
    if n.shape != t.shape or n.size < 2:
        raise ValueError("sizes and t_call_s must be 1-D arrays of the same length >= 2")
    if np.any(n <= 0) or np.any(t <= 0):
        raise ValueError("sizes and t_call_s must be > 0")
    w = 1.0 / t
    design = np.stack([np.ones_like(n), n], axis=1) * w[:, None]
    (t0, inv_rate), *_ = np.linalg.lstsq(design, t * w, rcond=None)
    if inv_rate <= 0:
        raise ValueError("t_call_s: the timings do not grow with size; cannot fit a rate")
    return max(float(t0), 0.0), float(1.0 / inv_rate)


def size_for_fraction(fraction, t0_s, rate_inf_elements_per_s) -> float:
    """Elements per call needed to reach ``fraction`` of r_inf: n = f/(1-f) * t0 * r_inf.

    (From r(n) = r_inf / (1 + n_half / n) = f * r_inf.) f = 0.5 gives n_half; f = 0.9 gives 9 n_half.
    """
    f = check_number("fraction", fraction, min_value=0, max_value=1, allow_min=False, allow_max=False)
    t0 = check_number("t0_s", t0_s, min_value=0)
    r = check_number("rate_inf_elements_per_s", rate_inf_elements_per_s, min_value=0, allow_min=False)
    return f / (1 - f) * t0 * r


def measure_call_overhead(max_log2_size=20, budget_s=0.4, progress=True) -> CallOverhead:
    """Time ``np.add(a, b, out=c)`` on float32 arrays of 1, 2, 4, ... 2**max_log2_size elements.

    Each size is repeated within an equal share of ``budget_s`` and the best time is kept (the
    least disturbed run). The arrays are allocated once, so only the call itself is timed.
    """
    top = check_int("max_log2_size", max_log2_size, min_value=4, max_value=24)
    budget = check_number("budget_s", budget_s, min_value=0, max_value=5, allow_min=False)
    show = check_bool("progress", progress)
    sizes = 2 ** np.arange(top + 1)
    a = np.ones(sizes[-1], dtype=np.float32)
    b = np.full(sizes[-1], 2.0, dtype=np.float32)
    c = np.empty_like(a)
    share = budget / sizes.size
    best = np.empty(sizes.size)
    with progress_bar(int(sizes.size), "call overhead", enabled=show) as bar:
        for i, n in enumerate(sizes):
            x, y, z = a[:n], b[:n], c[:n]
            np.add(x, y, out=z)                      # warm-up
            inner = max(1, int(2e4 // n))            # batch tiny calls so the timer's cost vanishes
            t_best, spent, runs = np.inf, 0.0, 0
            while runs < 3 or spent < share:
                start = time.perf_counter()
                for _ in range(inner):
                    np.add(x, y, out=z)
                elapsed = time.perf_counter() - start
                t_best = min(t_best, elapsed / inner)
                spent += elapsed
                runs += 1
                if runs >= 200:
                    break
            best[i] = t_best
            bar.update()
    t0, rate = robust_overhead_model(sizes.astype(float), best)
    return CallOverhead(sizes.astype(float), best, t0, rate)


def robust_overhead_model(sizes, t_call_s) -> tuple[float, float]:
    """Estimate t0 and r_inf from the two ends of a sweep, robust to a few disturbed timings.

        t0    = median of t(n) over the five smallest sizes      (there n / r_inf is negligible)
        r_inf = median of n / (t(n) - t0) over the four largest sizes

    A busy machine disturbs single timings; medians of each regime keep one outlier from
    moving the estimate, where a least-squares fit (``fit_overhead_model``) would follow it.
    """
    n = check_array("sizes", sizes, ndim=1)
    t = check_array("t_call_s", t_call_s, ndim=1)
    if n.shape != t.shape or n.size < 9:
        raise ValueError("sizes and t_call_s must be 1-D arrays of the same length >= 9")
    if np.any(n <= 0) or np.any(t <= 0):
        raise ValueError("sizes and t_call_s must be > 0")
    order = np.argsort(n)
    n, t = n[order], t[order]
    t0 = float(np.median(t[:5]))
    streaming = t[-4:] - t0
    if np.any(streaming <= 0):
        raise ValueError("t_call_s: the largest sizes take no longer than the smallest: cannot fit a rate")
    return t0, float(np.median(n[-4:] / streaming))


@dataclass(frozen=True)
class BatchedCalls:
    """The same additions as ``n_calls`` small calls in a Python loop and as one call."""

    n_calls: int
    size: int
    t_loop_s: float        # best time of the whole loop of n_calls calls
    t_one_s: float         # best time of one call on all n_calls x size elements

    @property
    def overhead_per_call_s(self) -> float:
        """(t_loop - t_one) / n_calls: what each extra call cost beyond the work itself."""
        return max(self.t_loop_s - self.t_one_s, 0.0) / self.n_calls

    @property
    def speedup(self) -> float:
        return self.t_loop_s / self.t_one_s


def _best_time(fn, budget_s) -> float:
    """Best of at least 5 timed runs after one warm-up, more while ``budget_s`` lasts (500 at most)."""
    return time_best(fn, repeats=5, min_time_s=budget_s, warmup=1, max_runs=500)


def measure_batched_calls(n_calls=200, size=64, budget_s=0.2) -> BatchedCalls:
    """Time ``n_calls`` calls of ``np.add`` on rows of ``size`` float32 values against one call on
    the whole (n_calls x size) array: the CPU analogue of launching kernels one by one against
    one CUDA graph launch. Each is timed as the best of at least five runs within its half of
    ``budget_s``: the best run is the least disturbed one on a busy machine.
    """
    n = check_int("n_calls", n_calls, min_value=2, max_value=100_000)
    m = check_int("size", size, min_value=1, max_value=1_000_000)
    budget = check_number("budget_s", budget_s, min_value=0, max_value=5, allow_min=False)
    if n * m > 50_000_000:
        raise ValueError(f"n_calls * size must be at most 5e7 elements, got {n * m}")
    a = np.ones((n, m), dtype=np.float32)
    b = np.full((n, m), 2.0, dtype=np.float32)
    c = np.empty_like(a)
    rows = [(a[i], b[i], c[i]) for i in range(n)]

    def loop():
        for x, y, z in rows:
            np.add(x, y, out=z)

    def one():
        np.add(a, b, out=c)

    return BatchedCalls(n_calls=n, size=m, t_loop_s=_best_time(loop, budget / 2),
                        t_one_s=_best_time(one, budget / 2))
