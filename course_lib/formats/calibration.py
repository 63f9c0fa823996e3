"""Post-training calibration: the clipping threshold read from samples, and fake quantization with it.

    s = amax / q_max,   x_hat = round_fmt(clip(x / s, -q_max, q_max)) * s

with ``amax`` the largest |x|, a percentile of |x| (percentile calibration: Wu et al., "Integer
Quantization for Deep Learning Inference: Principles and Empirical Evaluation", arXiv:2004.09602,
2020), or the threshold of least squared error (Nagel et al., "A White Paper on Neural Network
Quantization", arXiv:2106.08295, 2021, sec. 3.1).
"""

from __future__ import annotations

import numpy as np

from .._validate import check_array, check_choice, check_int, check_number
from .layouts import get_format
from .quantization import _qmax
from .rounding import round_to_format

__all__ = ["calibrate_amax", "fake_quantize", "rel_rms_error"]


def calibrate_amax(samples, method="max", percentile=99.99, fmt="int8", candidates=100) -> float:
    """The clipping threshold post-training quantization reads from calibration data.

        max:         amax = max |x|
        percentile:  amax = the ``percentile``-th percentile of |x|
        mse:         amax = the threshold, among ``candidates`` evenly spaced fractions of max |x|,
                     whose :func:`fake_quantize` to ``fmt`` has the least squared error on the samples

    (Wu et al., arXiv:2004.09602, 2020, compare max, entropy and percentile calibration; Nagel et
    al., arXiv:2106.08295, 2021, sec. 3.1, min-max and MSE range setting.) The maximum is a
    statistic of the sample and grows with it (about ln n for Laplace data); a percentile
    settles. The quantizer's scale is then
    ``amax / q_max`` and anything beyond ``amax`` is clipped: a lower threshold trades clipping
    error on the few largest values for finer steps on all the others.
    """
    x = check_array("samples", samples)
    if x.size == 0:
        raise ValueError("samples must hold at least one value")
    method = check_choice("method", method, ("max", "percentile", "mse"))
    p = check_number("percentile", percentile, min_value=0, max_value=100, allow_min=False)
    n = check_int("candidates", candidates, min_value=1, max_value=1000)
    mags = np.abs(x).ravel()
    top = float(mags.max())
    if top <= 0:
        raise ValueError("samples must contain a nonzero value")
    if method == "max":
        return top
    if method == "percentile":
        return float(np.percentile(mags, p))
    f = get_format(fmt)
    if mags.size * n > 50_000_000:
        raise ValueError(f"samples.size * candidates must be at most 5e7, got {mags.size * n}")
    thresholds = top * np.arange(1, n + 1) / n
    errors = [np.sum((fake_quantize(x, a, f.name) - x) ** 2) for a in thresholds]
    return float(thresholds[int(np.argmin(errors))])


def fake_quantize(x, amax, fmt="int8") -> np.ndarray:
    """Quantize with a fixed clipping threshold and return the dequantized values.

        s = amax / q_max,   x_hat = round_fmt(clip(x / s, -q_max, q_max)) * s

    ``q_max`` is 127 for INT8, 448 for FP8 E4M3. This is the operation quantization-aware
    training inserts in the forward pass ("fake" because the result is stored wide again).
    """
    f = get_format(fmt)
    if f.name == "tf32":
        raise ValueError("fmt tf32 is a compute format, not a storage format to quantize to")
    arr = check_array("x", x)
    a = check_number("amax", amax, min_value=0, allow_min=False)
    s = a / _qmax(f)
    q = np.clip(arr / s, -_qmax(f), _qmax(f))
    return np.asarray(round_to_format(q, f, saturate=True), dtype=np.float64) * s


def rel_rms_error(approx, reference) -> float:
    """sqrt(sum (approx - reference)^2 / sum reference^2)."""
    a = check_array("approx", approx)
    r = check_array("reference", reference)
    if a.shape != r.shape:
        raise ValueError(f"approx and reference must have the same shape, got {a.shape} and {r.shape}")
    den = np.sum(r ** 2)
    if den == 0:
        raise ValueError("reference must contain a nonzero value")
    return float(np.sqrt(np.sum((a - r) ** 2) / den))
