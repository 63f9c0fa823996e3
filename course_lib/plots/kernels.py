"""Draw what a real kernel's warps did: lanes over time, and the sectors or banks one access touched.

Each function takes a result from ``course_lib.kernels.warp`` or ``.design`` and returns the Figure."""

from __future__ import annotations

import numpy as np

from . import _check_result, new_axes, plural
from .simt import plot_coalescing

__all__ = ["plot_warp_lanes", "plot_warp_access", "plot_design_times"]


def plot_warp_lanes(timeline, ax=None, title: str | None = None):
    """Lesson 02's picture for a real kernel: which lanes of one warp ran each issued line
    (a :class:`~course_lib.kernels.warp.LaneTimeline` from ``warp_lane_timeline``)."""
    timeline = _check_result("timeline", timeline, "kernels.warp.LaneTimeline", "warp_lane_timeline()")
    lines, mask = timeline.lines, timeline.mask
    fig, ax = new_axes(ax, figsize=(7.5, 3.4))
    ax.imshow(mask.T, aspect="auto", cmap="Greys", vmin=0, vmax=1.6, interpolation="nearest", origin="lower")
    ax.set_xlabel("issued instruction (one kernel source line each), labelled by line number")
    ax.set_ylabel("lane")
    steps = timeline.issued
    every = max(1, -(-steps // 40))
    ax.set_xticks(range(0, steps, every))
    ax.set_xticklabels([str(int(x)) for x in lines[::every]], fontsize=7, rotation=90)
    ax.set_yticks([0, 8, 16, 24, 31])
    ax.set_title(title or f"{timeline.kernel_name}, warp {timeline.warp}: {steps} instructions issued, "
                          f"{100 * timeline.simt_efficiency:.0f}% of lane-slots active", fontsize=10)
    ax.grid(False)
    return fig


def plot_warp_access(cost, ax=None, title: str | None = None):
    """Global access: each lane's bytes and the 32-byte sectors moved (lesson 02's picture).
    Shared access: each lane's bank, with the most-loaded bank marked (lesson 03's rule).
    ``cost`` is a :class:`~course_lib.kernels.warp.AccessCost` from ``warp_access_cost``."""
    cost = _check_result("cost", cost, "kernels.warp.AccessCost", "warp_access_cost()")
    acc = cost.access
    if acc.space == "global":
        result = cost.coalescing
        return plot_coalescing(result, ax=ax, title=title or (
            f"line {acc.line}, {acc.array} {acc.op}: {plural(result.n_sectors, 'sector')}, "
            f"{100 * result.efficiency:.0f}% of moved bytes used"))
    fig, ax = new_axes(ax, figsize=(7.5, 3.4))
    n_banks = cost.bank_words.size
    degree = cost.conflict_degree
    if degree > 1:                          # shade the banks that serialise the request
        worst = np.nonzero(cost.bank_words == degree)[0]
        ax.bar(worst, 32, bottom=-0.5, width=0.9, color="#fdae6b", alpha=0.5, lw=0,
               label=f"bank serving {degree} different words")
    ax.scatter(cost.banks, cost.lanes, s=14, color="#08519c", zorder=3, label="lane's word")
    ax.set_xlim(-0.7, n_banks - 0.3)
    ax.set_ylim(-0.5, 38)                   # headroom above lane 31: the legend covers no lane
    ax.set_xticks(range(0, n_banks, 4))
    ax.set_yticks([0, 8, 16, 24, 31])
    ax.set_xlabel("shared-memory bank (4-byte word mod 32)")
    ax.set_ylabel("lane")
    ax.legend(loc="upper right", ncol=2, fontsize=8, framealpha=0.9)
    ax.set_title(title or f"line {acc.line}, {acc.array} {acc.op}: {degree}-way conflict "
                          f"({degree} pass{'es' if degree > 1 else ''} through the banks)", fontsize=10)
    return fig


def _duration(seconds: float) -> str:
    """A time in the unit that keeps it short: 160 us, 82.1 ms, 1.3 s."""
    for unit, scale in (("us", 1e-6), ("ms", 1e-3)):
        if seconds < 1000 * scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds:.3g} s"


def plot_design_times(points, selected: str | None = None, ax=None, title: str | None = None):
    """Predicted time of each kernel design (log scale), the selected one highlighted."""
    points = _check_result("points", points, "kernels.design.DesignPoint", "design_sweep()", many=True)
    if selected is not None and not isinstance(selected, str):
        raise TypeError(f"selected must be a design name or None, got {type(selected).__name__}")
    fig, ax = new_axes(ax, figsize=(7.5, 3.6))
    if len(fig.axes) == 1:
        fig.subplots_adjust(left=0.25, right=0.97)      # room for the design names
    names = [p.design for p in points]
    times = np.array([p.prediction.t_s for p in points])
    colors = ["#e6550d" if n == selected else "#6baed6" for n in names]
    y = np.arange(len(points))
    ax.barh(y, times * 1e6, color=colors)
    ax.set_yticks(y)
    ax.set_yticklabels(names, fontsize=9)
    ax.invert_yaxis()
    ax.set_xscale("log")
    lo, hi = times.min() * 1e6, times.max() * 1e6
    ax.set_xlim(lo / 2, hi * 40)                        # room for the labels right of the bars
    for i, p in enumerate(points):
        occ = "n/a" if p.prediction.occupancy is None else f"{100 * p.prediction.occupancy:.0f}%"
        ax.annotate(f"{_duration(times[i])}, {p.prediction.bound}, occ. {occ}", (times[i] * 1e6, i),
                    textcoords="offset points", xytext=(3, -3), fontsize=8)
    ax.set_xlabel("predicted time (us, log scale): max(FLOP / FP32 peak, bytes / bandwidth)")
    ax.set_title(title or "kernel designs on one accelerator", fontsize=10)
    return fig
