"""Draw rooflines: log-log, one roof per memory level, kernels placed and labelled."""

from __future__ import annotations

import numpy as np

from . import _check_result, new_axes, place_labels, powers_as_math
from .._validate import check_number
from ..roofline import (PROFILE_LATENCY_FRACTION, PROFILE_WELL_USED_FRACTION, Ceiling, KernelPoint,
                        ProfileReading)

__all__ = ["plot_roofline", "plot_hierarchical_roofline", "plot_measured_roofline", "plot_profile_readings"]

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
    labels = []
    for p in sorted(points, key=lambda q: q.intensity_flops_per_byte):
        colour = _BOUND_COLOUR[p.bound]
        x, y = p.intensity_flops_per_byte, p.attainable_flops
        ax.plot(x, y, "o", color=colour, ms=7)
        labels.append((x, y, f"{p.kernel.name}\n({p.bound}-bound)", {"color": colour}))
    labels.append((first.ridge_point, 0, f"ridge {first.ridge_point:.0f} FLOP/B",
                   {"color": "0.35", "xycoords": ax.get_xaxis_transform()}))
    place_labels(ax, labels, fontsize=8)
    ax.set_xlabel("arithmetic intensity (FLOP / byte)")
    ax.set_ylabel("attainable FLOP/s")
    ax.set_title(powers_as_math(title) if title else f"{first.accelerator}, dense {first.precision.upper()}")
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
    ax.set_xlabel("arithmetic intensity against that level (FLOP / byte)")
    ax.set_ylabel("attainable FLOP/s")
    ax.legend(fontsize=8, loc="lower right")
    place_labels(ax, [(p.intensity_flops_per_byte, p.attainable_flops, p.kernel.name) for p in points],
                 fontsize=8)
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
    ax.plot([], [], "o", mfc="none", mec="#1f77b4", label="predicted (roofline)")
    ax.plot([], [], "o", color="#d62728", label="measured")
    ax.set_xlabel("arithmetic intensity (FLOP / byte)")
    ax.set_ylabel("FLOP/s")
    ax.legend(fontsize=8, loc="lower right")
    place_labels(ax, [(k.intensity_flops_per_byte, k.measured_flops, k.name) for k in kernels], fontsize=8)
    ax.set_title(title)
    return fig


_LIMITER_COLOUR = {"memory": "#1f77b4", "compute": "#d62728", "latency": "#7f7f7f"}


def plot_profile_readings(readings: list[ProfileReading], ax=None, title: str | None = None):
    """Profiled kernels at their achieved FLOP/s under the roofline, with the roof's 80% and 60%
    lines (Nsight Compute's speed-of-light thresholds); colour names each kernel's limiter."""
    readings = _check_result("readings", readings, "roofline.ProfileReading", "read_profile", many=True)
    first = readings[0]
    if any((r.accelerator, r.precision) != (first.accelerator, first.precision) for r in readings):
        raise ValueError("readings must share one accelerator and precision")
    fig, ax = new_axes(ax)
    ridge = first.peak_flops / first.bandwidth_bytes_per_s
    lo = min([ridge / 300] + [r.intensity_flops_per_byte / 3 for r in readings])
    hi = max([ridge * 10] + [r.intensity_flops_per_byte * 3 for r in readings])
    x = np.logspace(np.log10(lo), np.log10(hi), 256)
    roof = np.minimum(first.peak_flops, first.bandwidth_bytes_per_s * x)
    ax.loglog(x, roof, color="k", lw=2, label="roofline")
    ax.loglog(x, PROFILE_WELL_USED_FRACTION * roof, color="k", lw=0.8, ls="--",
              label=f"{PROFILE_WELL_USED_FRACTION:.0%} of the roof")
    ax.loglog(x, PROFILE_LATENCY_FRACTION * roof, color="k", lw=0.8, ls=":",
              label=f"{PROFILE_LATENCY_FRACTION:.0%} of the roof")
    for r in readings:
        colour = _LIMITER_COLOUR[r.limiter]
        ax.plot(r.intensity_flops_per_byte, r.achieved_flops, "o", color=colour, ms=7)
        ax.annotate(f"{r.name}\n{r.fraction_of_roof:.0%} of roof, {r.limiter}", (r.intensity_flops_per_byte, r.achieved_flops),
                    textcoords="offset points", xytext=(6, -14), fontsize=8, color=colour)
    ax.set_xlabel("arithmetic intensity (FLOP / byte of DRAM traffic)")
    ax.set_ylabel("achieved FLOP/s")
    ax.set_title(title or f"Profiled kernels on the {first.accelerator}, dense {first.precision.upper()}")
    ax.legend(fontsize=8, loc="lower right")
    return fig
