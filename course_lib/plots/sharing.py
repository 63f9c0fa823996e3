"""Draw MIG slices of one GPU as rooflines: each slice a smaller machine with its own ridge."""

from __future__ import annotations

import numpy as np

from . import _check_result, new_axes

__all__ = ["plot_slice_rooflines"]


def plot_slice_rooflines(slices, precision: str = "bf16", ax=None, title: str = ""):
    """One roofline per accelerator in ``slices`` (e.g. ``mig_accelerator`` of each profile),
    min(peak, bandwidth x I), with each ridge point marked."""
    accs = _check_result("slices", slices, "hardware.Accelerator", "mig_accelerator or get_accelerator",
                         many=True)
    fig, ax = new_axes(ax)
    ridges = [a.ridge_point(precision) for a in accs]
    x = np.geomspace(min(ridges) / 30, max(ridges) * 30, 200)
    for a, ridge in zip(accs, ridges):
        peak = a.peak(precision)
        line, = ax.loglog(x, np.minimum(peak, a.mem_bandwidth * x), lw=1.8,
                          label=f"{a.name.split('MIG ')[-1]}: ridge {ridge:.0f}")
        ax.plot(ridge, peak, "o", color=line.get_color(), ms=5)
    ax.set_xlabel("arithmetic intensity (FLOP / byte)")
    ax.set_ylabel(f"attainable FLOP/s (dense {precision.upper()})")
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(title or "MIG slices: each a smaller roofline")
    return fig
