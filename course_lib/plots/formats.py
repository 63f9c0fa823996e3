"""Draw numeric formats: bit layouts, gaps between neighbours, loss scaling, sums and quantization.

Each function takes results from ``course_lib.formats`` and returns the Figure.
"""

from __future__ import annotations

import math

import numpy as np

from . import _check_mapping, _check_result, new_axes, place_labels
from .._validate import check_array, check_bool, check_sequence
from ..formats import (AccumulationResult, Encoding, LayerErrors, LossScaleSweep, QuantResult,
                       ScalingRun, SpacingCurve, get_format)

__all__ = [
    "plot_bit_layout",
    "plot_spacing",
    "plot_gradient_histogram",
    "plot_loss_scale",
    "plot_accumulation",
    "plot_quantization_errors",
    "plot_tensor_rates",
    "plot_scaling_runs",
    "plot_layer_errors",
]

_FIELD_COLOUR = {"sign": "#e377c2", "exponent": "#4c9be8", "mantissa": "#7cc77c", "value": "#f2b25c"}
_FORMAT_COLOUR = {"fp32": "#000000", "tf32": "#7f7f7f", "bf16": "#d62728", "fp16": "#1f77b4",
                  "fp8_e4m3": "#2ca02c", "fp8_e5m2": "#9467bd", "fp4_e2m1": "#ff7f0e",
                  "int8": "#8c564b", "int4": "#bcbd22"}


def _fmt_value(v: float) -> str:
    if math.isnan(v) or math.isinf(v):
        return str(v)
    return f"{v:.7g}"


def plot_bit_layout(encodings: list[Encoding], ax=None, title: str | None = None):
    """One row of cells per encoding, coloured by field (sign, exponent, mantissa; integers:
    sign and value bits); a 1 bit is drawn dark, a 0 bit pale. The format, bit string, stored
    value and kind of result are written beside each row.

    Drawn as one image and one text per row (text dominates the drawing time), so the widget
    redraws quickly.
    """
    encodings = _check_result("encodings", encodings, "formats.Encoding", "encode()", many=True, min_len=0)
    from matplotlib.colors import to_rgb
    from matplotlib.patches import Patch
    if isinstance(encodings, Encoding):
        encodings = [encodings]
    if not encodings or not all(isinstance(e, Encoding) for e in encodings):
        raise TypeError("encodings must be a non-empty list of course_lib.formats.Encoding")
    rows = len(encodings)
    width = max(len(e.bit_string.replace(" ", "")) for e in encodings)
    image = np.ones((rows, width, 3))
    fig, ax = new_axes(ax, figsize=(11, 0.42 * rows + 1.0))
    if ax.figure.axes == [ax]:          # our own figure: the bit table needs no axis margins
        fig.subplots_adjust(left=0.01, right=0.99)
    for row, enc in enumerate(encodings):
        bits = enc.bit_string.replace(" ", "")
        is_int = not get_format(enc.format).is_float
        fields = (["sign"] * enc.sign_bits + ["exponent"] * enc.exponent_bits
                  + ["value" if is_int else "mantissa"] * enc.mantissa_bits)
        for i, (bit, field) in enumerate(zip(bits, fields)):
            rgb = np.array(to_rgb(_FIELD_COLOUR[field]))
            image[row, i] = rgb * 0.75 if bit == "1" else 1 - (1 - rgb) * 0.25
        err = "" if math.isnan(enc.rel_error) or math.isinf(enc.rel_error) else f", rel. error {enc.rel_error:.1e}"
        ax.text(width + 0.6, row, f"{enc.label:<10}{enc.bit_string:<35}{_fmt_value(enc.stored):>14}  "
                f"{enc.category}{err}", va="center", fontsize=8, family="monospace")
    ax.imshow(image, aspect="auto", interpolation="nearest", extent=(-0.5, width - 0.5, rows - 0.5, -0.5))
    ax.vlines(np.arange(-0.5, width), -0.5, rows - 0.5, colors="white", lw=1.5)
    ax.hlines(np.arange(-0.5, rows), -0.5, width - 0.5, colors="white", lw=3)
    handles = [Patch(color=c, label=f) for f, c in _FIELD_COLOUR.items()]
    ax.legend(handles=handles, ncol=4, fontsize=8, loc="lower left", bbox_to_anchor=(0, 1.0), frameon=False)
    ax.set_xlim(-0.6, width + 50)
    ax.set_ylim(rows - 0.5, -0.5)
    ax.axis("off")
    ax.set_title(title or f"{_fmt_value(encodings[0].value)} stored in each format (dark = 1 bit)",
                 fontsize=10, loc="right")
    return fig


def plot_spacing(curves: list[SpacingCurve], ax=None, relative: bool = True):
    """Gap between neighbours against magnitude, log-log, one line per format.

    With ``relative`` the gap is divided by the magnitude: flat at 2^-M over the normal range,
    rising in the subnormal range on the left.
    """
    curves = _check_result("curves", curves, "formats.SpacingCurve", "spacing_curves()", many=True)
    relative = check_bool("relative", relative)
    if not curves:
        raise ValueError("curves must hold at least one SpacingCurve")
    fig, ax = new_axes(ax)
    for c in curves:
        f = get_format(c.format)
        y = c.relative_gaps if relative else c.gaps
        ax.loglog(c.magnitudes, y, color=_FORMAT_COLOUR.get(c.format), lw=1.6, label=f.label)
        ax.plot(f.min_normal, (f.epsilon if relative else f.min_normal * f.epsilon), "|",
                color=_FORMAT_COLOUR.get(c.format), ms=12)
    ax.set_xlabel("magnitude |x|")
    ax.set_ylabel("gap / |x|" if relative else "gap to the next value")
    ax.set_title("Gap between neighbours (tick: smallest normal number)")
    if relative:       # between the 16-bit plateaus and FP32's: the one band no curve crosses
        ax.legend(fontsize=8, ncol=2, loc="lower right", bbox_to_anchor=(1, 0.13))
    else:
        ax.legend(fontsize=8, ncol=2, loc="best")
    return fig


def plot_gradient_histogram(values, names=("fp16", "bf16"), ax=None):
    """Histogram of log2|g| with each format's smallest subnormal and normal marked."""
    values = check_array("values", values, ndim=1)
    names = check_sequence("names", names, max_len=16)
    g = np.abs(np.asarray(values, dtype=float))
    g = g[g > 0]
    if g.size == 0:
        raise ValueError("values must contain nonzero numbers")
    fig, ax = new_axes(ax)
    ax.hist(np.log2(g), bins=80, color="0.75")
    for name in names:
        f = get_format(name)
        colour = _FORMAT_COLOUR.get(f.name)
        ax.axvline(math.log2(f.min_subnormal), color=colour, ls="--", lw=1.3,
                   label=f"{f.label} smallest subnormal $2^{{{math.log2(f.min_subnormal):.0f}}}$")
        ax.axvline(math.log2(f.min_normal), color=colour, ls=":", lw=1.3,
                   label=f"{f.label} smallest normal $2^{{{math.log2(f.min_normal):.0f}}}$")
    ax.set_xlabel("log2 |gradient|")
    ax.set_ylabel("count")
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title("Gradient-like values against the bottom of each format's range")
    return fig


def plot_loss_scale(sweeps: list[LossScaleSweep], ax=None):
    """Fraction of values flushed to zero (solid) and overflowed (dashed) against log2(scale)."""
    sweeps = _check_result("sweeps", sweeps, "formats.LossScaleSweep", "loss_scale_sweep()", many=True)
    if isinstance(sweeps, LossScaleSweep):
        sweeps = [sweeps]
    if not sweeps:
        raise ValueError("sweeps must hold at least one LossScaleSweep")
    fig, ax = new_axes(ax)
    for s in sweeps:
        colour = _FORMAT_COLOUR.get(s.format)
        label = get_format(s.format).label
        ax.plot(s.log2_scales, s.flushed_fraction, "-", color=colour, label=f"{label}: flushed to 0")
        ax.plot(s.log2_scales, s.overflow_fraction, "--", color=colour, label=f"{label}: overflowed")
        ax.axvline(s.best_log2_scale, color=colour, lw=0.8, alpha=0.5)
    ax.set_xlabel("log2(loss scale)")
    ax.set_ylabel("fraction of values lost")
    ax.set_title("Loss scaling shifts gradients out of underflow, until they overflow")
    ax.legend(fontsize=8)
    return fig


def plot_accumulation(results: list[AccumulationResult], ax=None):
    """Running sums kept in each accumulator format against the exact running sum."""
    results = _check_result("results", results, "formats.AccumulationResult", "accumulate()", many=True)
    if isinstance(results, AccumulationResult):
        results = [results]
    if not results:
        raise ValueError("results must hold at least one AccumulationResult")
    fig, ax = new_axes(ax)
    steps = np.arange(1, results[0].partial_sums.size + 1)
    ax.plot(steps, results[0].exact_partial_sums, color="k", lw=3, alpha=0.3, label="exact")
    for r in results:
        ax.plot(np.arange(1, r.partial_sums.size + 1), r.partial_sums, color=_FORMAT_COLOUR.get(r.accumulator),
                lw=1.4, label=f"{get_format(r.accumulator).label} accumulator: {r.total:.5g}")
    ax.set_xlabel("terms added")
    ax.set_ylabel("running sum")
    ax.set_title("A long sum kept in a narrow accumulator stops growing")
    ax.legend(fontsize=8)
    return fig


def plot_quantization_errors(results: list[QuantResult], ax=None):
    """Relative RMS error of each (format, granularity) as grouped bars, log scale."""
    results = _check_result("results", results, "formats.QuantResult", "quantize()", many=True)
    if not results:
        raise ValueError("results must hold at least one QuantResult")
    fig, ax = new_axes(ax)
    formats = list(dict.fromkeys(r.format for r in results))
    kinds = list(dict.fromkeys(_kind(r) for r in results))
    width = 0.8 / len(kinds)
    colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"]
    for j, kind in enumerate(kinds):
        xs, ys = [], []
        for i, fmt in enumerate(formats):
            match = [r for r in results if r.format == fmt and _kind(r) == kind]
            if match:
                xs.append(i + (j - (len(kinds) - 1) / 2) * width)
                ys.append(match[0].rel_rms_error)
        ax.bar(xs, ys, width=width, color=colours[j % len(colours)], label=kind)
    ax.set_xticks(range(len(formats)), [get_format(f).label for f in formats])
    ax.set_yscale("log")
    ax.set_ylabel("relative RMS error")
    ax.set_title("Quantization error on data with outliers")
    ax.legend(fontsize=8)
    return fig


def _kind(r: QuantResult) -> str:
    if r.scale_rule == "mx":
        return f"MX (E8M0 scale per {r.block_size})"
    return f"per {r.granularity}" + (f" ({r.block_size})" if r.block_size else "")


def plot_tensor_rates(rates: dict, ax=None):
    """Dense tensor peak against bytes per element, one line per accelerator, log2 axes.

    ``rates`` maps an accelerator name to ``course_lib.formats.tensor_rates(name)``.
    """
    rates = _check_mapping("rates", rates, "accelerator: tensor_rates(accelerator)")
    if not isinstance(rates, dict) or not rates:
        raise ValueError("rates must be a non-empty dict {accelerator: tensor_rates(...)}")
    from matplotlib.ticker import FuncFormatter, NullFormatter
    fig, ax = new_axes(ax)
    labels = []
    for name, rows in rates.items():
        # one point per storage size: the fastest precision of that size
        best = {}
        for precision, nbytes, peak in rows:
            if nbytes not in best or peak > best[nbytes][1]:
                best[nbytes] = (precision, peak)
        xs = sorted(best, reverse=True)
        line, = ax.plot(xs, [best[x][1] / 1e12 for x in xs], "o-", label=name)
        labels += [(x, best[x][1] / 1e12, best[x][0], {"color": line.get_color()}) for x in xs]
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.invert_xaxis()
    plain = FuncFormatter(lambda v, _pos: f"{v:,.6g}")      # 4, 2, 1, 0.5 bytes; 128 ... 8,192 TFLOP/s
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(plain)
        axis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("bytes per element (log2 scale)")
    ax.set_ylabel("dense tensor peak, TFLOP/s or TOPS (log2 scale)")
    ax.set_title("Halving the bytes per element doubles the tensor rate, mostly")
    ax.legend(fontsize=8, loc="upper left")
    place_labels(ax, labels, fontsize=7)
    return fig


def plot_scaling_runs(runs: list[ScalingRun], ax=None):
    """Per step: the tensor's amax (line) and, for each run, the amax its scale allows (steps);
    crosses mark steps where a run clipped values."""
    runs = _check_result("runs", runs, "formats.ScalingRun", "simulate_fp8_scaling", many=True)
    fig, ax = new_axes(ax)
    steps = np.arange(runs[0].amax.size)
    ax.semilogy(steps, runs[0].amax, color="k", lw=2, label="amax of the tensor")
    colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"]
    fmax = get_format(runs[0].format).max_value
    for i, r in enumerate(runs):
        c = colours[i % len(colours)]
        label = r.rule + (f", history {r.history_len}" if r.rule == "delayed" else "") + \
            (f", margin {r.margin}" if r.margin else "")
        allowed = fmax / r.scales
        ax.step(steps, allowed, where="mid", color=c, lw=1.2, label=f"largest value kept: {label}")
        hit = r.overflow_steps
        ax.plot(hit, r.amax[hit], "x", color=c, ms=7)
    ax.set_xlabel("training step")
    ax.set_ylabel("magnitude")
    ax.set_title(f"Per-tensor {get_format(runs[0].format).label} scaling of a drifting tensor (x: clipped)")
    ax.legend(fontsize=8, loc="upper left")
    return fig


def plot_layer_errors(results: list[LayerErrors], ax=None):
    """Relative error of each layer's output against depth, one line per format, log scale."""
    results = _check_result("results", results, "formats.LayerErrors", "mlp_quantization_errors", many=True)
    fig, ax = new_axes(ax)
    for r in results:
        layers = np.arange(1, r.rel_errors.size + 1)
        ax.semilogy(layers, r.rel_errors, "o-", color=_FORMAT_COLOUR.get(r.format),
                    label=get_format(r.format).label)
    ax.set_xlabel("layer")
    ax.set_ylabel("relative RMS error of its output")
    ax.set_title("Quantization error compounds through layers")
    ax.legend(fontsize=8)
    return fig
