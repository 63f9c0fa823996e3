"""Draw tiling results: HBM traffic against tile size, reuse down the hierarchy, fusion bytes."""

from __future__ import annotations

import numpy as np

from . import _check_result, new_axes, readable_log_ticks
from ..tiling import FusionResult, TrafficSweep
from .attention import plot_attention_traffic

__all__ = ["plot_tile_traffic", "plot_reuse_hierarchy", "plot_fusion", "plot_load_counts",
           "plot_traffic_overview"]


def plot_tile_traffic(sweep: TrafficSweep, ax=None, title: str | None = None):
    """HBM bytes against square tile size: the formula as a line, the tile walk as dots."""
    sweep = _check_result("sweep", sweep, "tiling.TrafficSweep", "traffic_sweep()")
    fig, ax = new_axes(ax)
    ax.loglog(sweep.tiles, sweep.predicted_bytes / 1e6, "-", color="#1f77b4", lw=2, label="formula")
    if len(sweep.simulated_tiles):
        ax.loglog(sweep.simulated_tiles, sweep.simulated_bytes / 1e6, "o", mfc="none", mec="#d62728",
                  ms=9, mew=1.5, label="walk over the tiles")
    ax.axhline(sweep.min_bytes / 1e6, color="0.5", ls="--", lw=1, label="floor: each operand once")
    if sweep.tile_limit:
        ax.axvline(sweep.tile_limit, color="#2ca02c", ls=":", lw=1.5,
                   label=f"largest tile on chip: {sweep.tile_limit}")
    if sweep.current_tile:
        y = np.interp(sweep.current_tile, sweep.tiles, sweep.predicted_bytes) / 1e6
        ax.plot(sweep.current_tile, y, "s", color="k", ms=7, label=f"tile {sweep.current_tile}")
    ax.set_xlabel("square output tile size T")
    ax.set_ylabel("HBM traffic (MB)")
    ax.set_title(title or f"{sweep.m} x {sweep.k} x {sweep.n} matmul, {sweep.bytes_per_element:g} B/element")
    # Traffic falls as the tile grows, so the upper right is empty; a fixed place spares "best"'s
    # search over every point on each redraw (an explorer redraws this).
    ax.legend(fontsize=8, loc="upper right")
    readable_log_ticks(ax)
    return fig


def plot_load_counts(walk, ax=None):
    """How often each element of A was fetched from HBM in a tile walk (a heat map)."""
    walk = _check_result("walk", walk, "tiling.TileWalk", "simulate_tiled_matmul()")
    fig, ax = new_axes(ax, figsize=(5, 3.6))
    image = ax.imshow(walk.a_loads, aspect="auto", cmap="viridis", interpolation="nearest")
    fig.colorbar(image, ax=ax, label="loads from HBM")
    t = walk.traffic
    ax.set_title(f"A ({t.m} x {t.k}): loads per element, tile {t.tile_m} x {t.tile_n}", fontsize=9)
    ax.set_xlabel("column of A (k)")
    ax.set_ylabel("row of A (m)")
    ax.grid(False)
    return fig


def plot_reuse_hierarchy(levels, ax=None):
    """FLOP per operand element loaded at each level, a horizontal log bar chart."""
    levels = _check_result("levels", levels, "tiling.ReuseLevel", "tiling_hierarchy()", many=True)
    fig, ax = new_axes(ax, figsize=(7.5, 2.8))
    names = [lvl.level for lvl in levels][::-1]
    values = [lvl.flops_per_element for lvl in levels][::-1]
    bars = ax.barh(names, values, color=["#7f7f7f", "#ff7f0e", "#2ca02c", "#1f77b4"][:len(values)])
    ax.set_xscale("log")
    for bar, value in zip(bars, values):
        ax.annotate(f"{value:.3g}", (bar.get_width(), bar.get_y() + bar.get_height() / 2),
                    textcoords="offset points", xytext=(4, -3), fontsize=8)
    ax.set_xlabel("FLOP per operand element brought into the level")
    ax.set_title("operand reuse down the tiling hierarchy", fontsize=10)
    return fig


def plot_fusion(result: FusionResult, ax=None):
    """Bytes moved and time at bandwidth, unfused against fused."""
    result = _check_result("result", result, "tiling.FusionResult", "fusion_traffic()")
    fig, ax = new_axes(ax, figsize=(6, 3))
    labels = [f"unfused ({result.kernels_unfused} kernels)", f"fused ({result.kernels_fused} kernel)"]
    gb = [result.bytes_unfused / 1e9, result.bytes_fused / 1e9]
    bars = ax.barh(labels, gb, color=["#d62728", "#2ca02c"])
    for bar, t in zip(bars, (result.t_unfused_s, result.t_fused_s)):
        ax.annotate(f"{bar.get_width():.2f} GB, {t * 1e3:.2f} ms", (bar.get_width(), bar.get_y() + 0.35),
                    textcoords="offset points", xytext=(4, 0), fontsize=8)
    ax.set_xlim(0, max(gb) * 1.45)
    ax.set_xlabel("HBM traffic (GB)")
    ax.set_title(f"bias + activation + dropout on {result.rows} x {result.cols} "
                 f"{result.precision.upper()}, {result.accelerator}", fontsize=10)
    return fig


def plot_traffic_overview(result):
    """The explorer's figure: matmul traffic against tile size beside attention traffic against N.

    ``result`` is a pair ``(TrafficSweep from course_lib.tiling, TrafficSweep from
    course_lib.attention)``.
    """
    if not isinstance(result, tuple) or len(result) != 2:
        raise TypeError("result must be a pair (traffic_sweep(...), attention_traffic_sweep(...))")
    _check_result("result[0]", result[0], "tiling.TrafficSweep", "traffic_sweep()")
    _check_result("result[1]", result[1], "attention.TrafficSweep", "attention_traffic_sweep()")
    import matplotlib.pyplot as plt
    matmul_sweep, attention_sweep = result
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    fig.subplots_adjust(left=0.07, right=0.98, wspace=0.25)   # fixed layout: cheaper than tight_layout
    plot_tile_traffic(matmul_sweep, ax=left)
    plot_attention_traffic(attention_sweep, ax=right)
    return fig
