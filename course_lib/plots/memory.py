"""Draw the memory hierarchy, cache hit-rate curves, your measured ladder, bank conflicts and pipelines."""

from __future__ import annotations

import numbers

import numpy as np

from . import _check_result, new_axes, place_labels, plural, readable_log_ticks
from .._validate import check_array
from ..memory import HitRateCurve, MemoryLevel, MemoryWall, PipelineTimeline

__all__ = [
    "plot_memory_wall",
    "plot_hierarchy",
    "plot_hit_rates",
    "plot_bandwidth_ladder",
    "plot_latency_ladder",
    "plot_bank_conflicts",
    "plot_pipeline",
]


def _cache_sizes(cache_sizes) -> None:
    if cache_sizes is not None and (not isinstance(cache_sizes, dict) or not all(
            isinstance(v, numbers.Real) and not isinstance(v, bool) and v > 0 for v in cache_sizes.values())):
        raise TypeError(f"cache_sizes must be None or a dict of level: bytes, as cpu_cache_sizes() returns, "
                        f"got {cache_sizes!r:.60}")


_KIND_STYLE = {"catalog": dict(color="#1f77b4"), "derived": dict(color="#2ca02c", hatch="//"),
               "bounds": dict(color="#ff7f0e")}


def _bytes_label(b: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if b >= scale:
            return f"{b / scale:.3g} {unit}"
    return f"{b:.0f} B"


def plot_hierarchy(levels: tuple[MemoryLevel, ...], ax=None, title: str = ""):
    """Two log-scale bar panels, to scale: capacity (bytes) and bandwidth (bytes/s) of each level.

    Datasheet values are plain bars, derived ones hatched, L2's unpublished bandwidth a range bar.
    With ``ax`` given, only the bandwidth panel is drawn on it.
    """
    levels = _check_result("levels", levels, "memory.MemoryLevel", "memory_hierarchy()", many=True)
    import matplotlib.pyplot as plt
    if not levels:
        raise ValueError("levels must hold at least one MemoryLevel")
    names = [lv.name for lv in levels]
    y = np.arange(len(levels))[::-1]
    if ax is None:
        fig, (ax_cap, ax_bw) = plt.subplots(1, 2, figsize=(10, 0.55 * len(levels) + 1.6), sharey=True)
    else:
        fig, ax_bw, ax_cap = ax.figure, ax, None
    if ax_cap is not None:
        for yi, lv in zip(y, levels):
            if lv.capacity_bytes:
                ax_cap.barh(yi, lv.capacity_bytes, color="0.55")
                ax_cap.annotate(_bytes_label(lv.capacity_bytes), (lv.capacity_bytes, yi),
                                xytext=(3, -3), textcoords="offset points", fontsize=8)
            else:
                ax_cap.annotate("no fixed size", (1.2e5, yi), xytext=(3, -3), textcoords="offset points",
                                fontsize=8, color="0.4")
        ax_cap.set_xscale("log")
        ax_cap.set_xlabel("capacity (bytes, log)")
        ax_cap.set_yticks(y, names)
        ax_cap.set_xlim(left=1e5)
    for yi, lv in zip(y, levels):
        style = _KIND_STYLE.get(lv.kind, _KIND_STYLE["catalog"])
        if lv.bandwidth_bytes_per_s:
            ax_bw.barh(yi, lv.bandwidth_bytes_per_s, edgecolor="k", lw=0.4, **style)
            label = f"{lv.bandwidth_bytes_per_s / 1e12:.3g} TB/s" + (" (derived)" if lv.kind == "derived" else "")
            ax_bw.annotate(label, (lv.bandwidth_bytes_per_s, yi), xytext=(3, -3),
                           textcoords="offset points", fontsize=8)
        elif lv.bandwidth_low_bytes_per_s and lv.bandwidth_high_bytes_per_s:
            lo, hi = lv.bandwidth_low_bytes_per_s, lv.bandwidth_high_bytes_per_s
            ax_bw.barh(yi, hi - lo, left=lo, alpha=0.5, **style)
            ax_bw.annotate(f"{lo / 1e12:.3g} to {hi / 1e12:.3g} TB/s (bounds)", (hi, yi), xytext=(3, -3),
                           textcoords="offset points", fontsize=8)
    ax_bw.set_xscale("log")
    ax_bw.set_xlabel("bandwidth (bytes/s, log)")
    if ax_cap is None:
        ax_bw.set_yticks(y, names)
    ax_bw.set_xlim(left=1e10, right=max(lv.bandwidth_for_plot or 0 for lv in levels) * 30)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_hit_rates(curves: list[HitRateCurve], ax=None, title: str | None = None):
    """Hit rate against working-set size (log x), one line per access pattern; the capacity marked."""
    curves = _check_result("curves", curves, "memory.HitRateCurve", "hit_rate_sweep()", many=True)
    if not curves:
        raise ValueError("curves must hold at least one HitRateCurve")
    fig, ax = new_axes(ax)
    for c in curves:
        ax.semilogx(c.working_set_bytes, c.hit_rate, "o-", ms=3, label=c.pattern)
    cap = curves[0].capacity_bytes
    ax.axvline(cap, color="k", ls=":", lw=1)
    ax.annotate(f"capacity {_bytes_label(cap)}", (cap, 0.02), xytext=(4, 0), textcoords="offset points",
                fontsize=8)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("working set (bytes)")
    ax.set_ylabel("hit rate")
    ax.legend(fontsize=8)
    c = curves[0]
    ax.set_title(title if title is not None else
                 f"LRU cache: {_bytes_label(c.capacity_bytes)}, {c.line_bytes} B lines, {c.ways}-way")
    return fig


def _cache_marks(ax, cache_sizes):
    for name, size in (cache_sizes or {}).items():
        ax.axvline(size, color="0.5", ls="--", lw=0.8)
    # At the top of each line, on the side clear of the data.
    place_labels(ax, [(size, 1, name, {"xycoords": ax.get_xaxis_transform()})
                      for name, size in (cache_sizes or {}).items()], fontsize=8, color="0.35")


def plot_bandwidth_ladder(ladder, cache_sizes: dict | None = None, ax=None, title: str = "your CPU"):
    """Measured read bandwidth against working set (log-log), with the OS-reported cache sizes dashed."""
    ladder = _check_result("ladder", ladder, "measure.memory.BandwidthLadder", "measure_bandwidth_ladder()")
    _cache_sizes(cache_sizes)
    fig, ax = new_axes(ax)
    ax.loglog(ladder.working_set_bytes, ladder.bandwidth_bytes_per_s / 1e9, "o-", color="#1f77b4")
    _cache_marks(ax, cache_sizes)
    ax.set_xlabel("working set (bytes)")
    ax.set_ylabel("read bandwidth (GB/s)")
    ax.set_title(title)
    readable_log_ticks(ax)
    return fig


def plot_latency_ladder(ladder, cache_sizes: dict | None = None, ax=None, title: str = "your CPU"):
    """Measured time per dependent access against working set (log x)."""
    ladder = _check_result("ladder", ladder, "measure.memory.LatencyLadder", "measure_latency_ladder()")
    _cache_sizes(cache_sizes)
    fig, ax = new_axes(ax)
    ax.semilogx(ladder.working_set_bytes, ladder.ns_per_step, "o-", color="#d62728")
    _cache_marks(ax, cache_sizes)
    ax.set_xlabel("working set (bytes)")
    ax.set_ylabel("ns per dependent access")
    ax.set_title(title)
    return fig


def plot_bank_conflicts(strides, degrees, padded_degrees=None, ax=None, title: str = ""):
    """Conflict degree (passes per warp request) against stride in 4-byte words; optional padded line."""
    strides = check_array("strides", strides, ndim=1)
    degrees = check_array("degrees", degrees, ndim=1)
    if strides.size == 0 or strides.size != degrees.size:
        raise ValueError(f"strides and degrees must be non-empty and of one length, got {strides.size} and {degrees.size}")
    if padded_degrees is not None and check_array("padded_degrees", padded_degrees, ndim=1).size != strides.size:
        raise ValueError("padded_degrees must have one entry per stride")
    fig, ax = new_axes(ax)
    ax.bar(np.asarray(strides) - 0.2, degrees, width=0.4, color="#d62728", label="unpadded")
    if padded_degrees is not None:
        ax.bar(np.asarray(strides) + 0.2, padded_degrees, width=0.4, color="#2ca02c", label="padded by 1 word")
        ax.legend(fontsize=8)
    ax.set_xlabel("stride between lanes (4-byte words)")
    ax.set_ylabel("conflict degree (passes)")
    ax.set_title(title or "shared-memory bank conflicts, 32 banks x 4 B")
    return fig


def plot_pipeline(timeline: PipelineTimeline, ax=None, title: str | None = None):
    """Gantt chart: one row of copies, one of computes, each tile a bar labelled with its index."""
    timeline = _check_result("timeline", timeline, "memory.PipelineTimeline", "pipeline_timeline()")
    fig, ax = new_axes(ax, figsize=(7.5, 2.6))
    scale, unit = (1e6, "us") if timeline.total_s < 1e-3 else (1e3, "ms")
    for i in range(timeline.n_tiles):
        colour = f"C{i % 10}"
        ax.barh(1, (timeline.copy_end_s[i] - timeline.copy_start_s[i]) * scale,
                left=timeline.copy_start_s[i] * scale, color=colour, edgecolor="k", lw=0.4)
        ax.barh(0, (timeline.compute_end_s[i] - timeline.compute_start_s[i]) * scale,
                left=timeline.compute_start_s[i] * scale, color=colour, edgecolor="k", lw=0.4)
    ax.set_yticks([0, 1], ["compute", "copy"])
    ax.set_xlabel(f"time ({unit})")
    ax.set_title(title if title is not None else
                 f"{plural(timeline.buffers, 'buffer')}: total {timeline.total_s * scale:.3g} {unit}, "
                 f"compute busy {100 * timeline.compute_busy_fraction:.0f}%")
    if ax is None:                      # a figure given to us keeps its layout
        fig.tight_layout()
    return fig


def plot_memory_wall(wall: MemoryWall, ax=None):
    """Peak compute and memory bandwidth against year, each indexed to the first part (log scale)."""
    wall = _check_result("wall", wall, "memory.MemoryWall", "memory_wall()")
    fig, ax = new_axes(ax)
    ax.semilogy(wall.years, wall.compute_index, "o-", color="#d62728",
                label=f"dense {wall.precision.upper()} peak")
    ax.semilogy(wall.years, wall.bandwidth_index, "s-", color="#1f77b4", label="memory bandwidth")
    for name, year, c in zip(wall.names, wall.years, wall.compute_index):
        ax.annotate(name, (year, c), textcoords="offset points", xytext=(-10, 8), fontsize=8)
    ax.set_xlabel("year")
    ax.set_ylabel(f"relative to the {wall.names[0]}")
    ax.set_title("The memory wall: compute has outgrown bandwidth")
    ax.legend(fontsize=8, loc="upper left")
    return fig
