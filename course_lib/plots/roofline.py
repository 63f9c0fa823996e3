"""Draw rooflines: log-log, one roof per memory level, kernels placed and labelled."""

from __future__ import annotations

import numpy as np

from . import _check_result, new_axes
from .._validate import check_number
from ..roofline import Ceiling, KernelPoint

__all__ = ["plot_roofline", "plot_hierarchical_roofline", "plot_measured_roofline"]

_BOUND_COLOUR = {"memory": "#1f77b4", "compute": "#d62728"}


def _intensity_axis(points, ridge):
    lo = min([0.05, ridge / 100] + [p.intensity_flops_per_byte / 3 for p in points])
    hi = max([ridge * 30] + [p.intensity_flops_per_byte * 3 for p in points])
    return np.logspace(np.log10(lo), np.log10(hi), 256)


def plot_roofline(points: list[KernelPoint], ax=None, title: str | None = None):
    """Draw the HBM roofline of the points' accelerator with each kernel on it.

    All points must share one accelerator and precision. Returns the Figure.
    """
    points = _check_result("points", points, "roofline.KernelPoint", "place_kernel()", many=True)
    if not points:
        raise ValueError("points must hold at least one KernelPoint")
    first = points[0]
    if any((p.accelerator, p.precision) != (first.accelerator, first.precision) for p in points):
        raise ValueError("points must share one accelerator and precision")
    fig, ax = new_axes(ax)
    x = _intensity_axis(points, first.ridge_point)
    bw = first.peak_flops / first.ridge_point
    ax.loglog(x, np.minimum(first.peak_flops, bw * x), color="k", lw=2)
    ax.axvline(first.ridge_point, color="0.6", ls=":", lw=1)
    ax.annotate(f"ridge {first.ridge_point:.0f} FLOP/B", (first.ridge_point, first.peak_flops),
                textcoords="offset points", xytext=(4, -14), fontsize=8, color="0.35")
    placed = []                       # label anchors so far, to step a close neighbour's label down
    for p in sorted(points, key=lambda q: q.intensity_flops_per_byte):
        colour = _BOUND_COLOUR[p.bound]
        x, y = p.intensity_flops_per_byte, p.attainable_flops
        ax.plot(x, y, "o", color=colour, ms=7)
        crowded = sum(abs(np.log10(x / px)) < 0.6 and abs(np.log10(y / py)) < 0.6 for px, py in placed)
        ax.annotate(f"{p.kernel.name}\n({p.bound}-bound)", (x, y), textcoords="offset points",
                    xytext=(6, -4 - 24 * crowded), fontsize=8, color=colour)
        placed.append((x, y))
    ax.set_xlabel("arithmetic intensity (FLOP / byte)")
    ax.set_ylabel("attainable FLOP/s")
    ax.set_title(title or f"{first.accelerator}, dense {first.precision.upper()}")
    return fig


def plot_hierarchical_roofline(ceilings: list[Ceiling], peak_flops: float, points=(), ax=None,
                               title: str = ""):
    """One sloped roof per memory level under one flat compute roof; optional kernel points."""
    ceilings = _check_result("ceilings", ceilings, "roofline.Ceiling", "hierarchical_ceilings()", many=True)
    check_number("peak_flops", peak_flops, min_value=0, allow_min=False)
    points = _check_result("points", points, "roofline.KernelPoint", "place_kernel()", many=True, min_len=0)
    if not ceilings:
        raise ValueError("ceilings must hold at least one Ceiling")
    fig, ax = new_axes(ax)
    ridges = [c.ridge_point for c in ceilings]
    x = np.logspace(np.log10(min(ridges) / 100), np.log10(max(ridges) * 10), 256)
    colours = ["#2ca02c", "#9467bd", "#1f77b4", "#ff7f0e", "#8c564b", "#7f7f7f"]
    for c, colour in zip(ceilings, colours):
        ax.loglog(x, np.minimum(peak_flops, c.bandwidth_bytes_per_s * x), color=colour, lw=1.8,
                  label=f"{c.level}: {c.bandwidth_bytes_per_s / 1e12:.3g} TB/s")
    for p in points:
        ax.plot(p.intensity_flops_per_byte, p.attainable_flops, "o", color="k")
        ax.annotate(p.kernel.name, (p.intensity_flops_per_byte, p.attainable_flops),
                    textcoords="offset points", xytext=(5, -3), fontsize=8)
    ax.set_xlabel("arithmetic intensity against that level (FLOP / byte)")
    ax.set_ylabel("attainable FLOP/s")
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(title)
    return fig


def plot_measured_roofline(machine, kernels, ax=None, title: str = "your machine"):
    """The learner's own roofline: measured roofs, and each kernel's predicted vs measured point.

    ``machine`` has ``peak_flops`` and ``bandwidth_bytes_per_s``; each kernel result has
    ``name``, ``intensity_flops_per_byte``, ``measured_flops`` and ``predicted_flops``.
    """
    machine = _check_result("machine", machine, "measure.MachineRoofline", "measure_machine()")
    kernels = _check_result("kernels", kernels, "measure.KernelMeasurement", "measure_kernels()", many=True, min_len=0)
    fig, ax = new_axes(ax)
    ridge = machine.peak_flops / machine.bandwidth_bytes_per_s
    xs = [k.intensity_flops_per_byte for k in kernels] + [ridge]
    x = np.logspace(np.log10(min(xs) / 4), np.log10(max(xs) * 4), 256)
    ax.loglog(x, np.minimum(machine.peak_flops, machine.bandwidth_bytes_per_s * x), "k-", lw=2,
              label="measured roofs")
    for k in kernels:
        ax.plot(k.intensity_flops_per_byte, k.predicted_flops, "o", mfc="none", mec="#1f77b4", ms=9)
        ax.plot(k.intensity_flops_per_byte, k.measured_flops, "o", color="#d62728", ms=5)
        ax.plot([k.intensity_flops_per_byte] * 2, [k.predicted_flops, k.measured_flops], color="0.6", lw=0.8)
        ax.annotate(k.name, (k.intensity_flops_per_byte, k.measured_flops), textcoords="offset points",
                    xytext=(5, -10), fontsize=8)
    ax.plot([], [], "o", mfc="none", mec="#1f77b4", label="predicted (roofline)")
    ax.plot([], [], "o", color="#d62728", label="measured")
    ax.set_xlabel("arithmetic intensity (FLOP / byte)")
    ax.set_ylabel("FLOP/s")
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(title)
    return fig
