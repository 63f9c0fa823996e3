"""Draw latency hiding, occupancy and the per-call overhead measurement."""

from __future__ import annotations

import numpy as np

from . import new_axes

__all__ = ["plot_latency_hiding", "plot_occupancy", "plot_call_overhead"]


def plot_latency_hiding(sweep, ax=None, title: str | None = None):
    """Simulated issue utilisation against resident warps, over the analytic Little's-law curve."""
    fig, ax = new_axes(ax)
    n = sweep.n_warps
    ax.plot(n, sweep.analytic, color="k", lw=1.5, label="Little's law: min(1, N C / (S (C+L)))")
    ax.plot(n, sweep.utilisation, "o", color="#d62728", ms=4, label="simulated")
    ax.axvline(sweep.knee_warps, color="0.6", ls=":", lw=1)
    ax.annotate(f"knee: {sweep.knee_warps} warps", (sweep.knee_warps, 0.05),
                textcoords="offset points", xytext=(4, 0), fontsize=8, color="0.35")
    ax.set_ylim(0, 1.08)
    ax.set_xlabel("resident warps N")
    ax.set_ylabel("fraction of issue slots used")
    ax.set_title(title or (f"C = {sweep.compute_cycles:g} compute cycles, L = {sweep.latency_cycles:g} "
                           f"latency cycles, {sweep.schedulers} scheduler(s)"))
    ax.legend(fontsize=8, loc="lower right")
    return fig


def plot_occupancy(result, curve=None, ax=None):
    """Blocks per SM each resource allows (bars), the binding one highlighted; with ``curve``
    ``(registers, occupancy)`` a second panel draws the register staircase. ``ax``: one axes
    (bars only) or a pair (bars, staircase); a figure given this way keeps its layout."""
    import matplotlib.pyplot as plt
    own_figure = ax is None
    if ax is None:
        if curve is None:
            fig, ax_bars = plt.subplots(figsize=(7.5, 3.6))
        else:
            fig, (ax_bars, ax_curve) = plt.subplots(1, 2, figsize=(10, 3.8))
    elif isinstance(ax, (tuple, list)):
        ax_bars, ax_curve = ax
        fig = ax_bars.figure
    else:
        fig, ax_bars = ax.figure, ax
        ax_curve = None
    names = list(result.block_limits)
    cap = max(result.block_limits.get("blocks", 32), result.blocks_per_sm)   # the SM's block limit
    values = [min(v, cap) for v in result.block_limits.values()]
    colours = ["#d62728" if k in result.limiters else "#9ecae1" for k in names]
    ax_bars.barh(names, values, color=colours)
    for i, v in enumerate(result.block_limits.values()):
        ax_bars.annotate(f"{v}", (min(v, cap), i), textcoords="offset points", xytext=(3, -3), fontsize=8)
    ax_bars.set_xlim(0, cap * 1.15)
    ax_bars.set_xlabel("blocks per SM this resource allows")
    ax_bars.set_title(f"{result.blocks_per_sm} blocks x {result.warps_per_block} warps = "
                      f"{result.warps_per_sm}/{result.max_warps_per_sm} warps "
                      f"({100 * result.occupancy:.0f}%)", fontsize=10)
    ax_bars.invert_yaxis()
    if curve is not None and ax_curve is not None:
        regs, occ = curve
        ax_curve.step(regs, occ, where="post", color="k", lw=1.2)
        ax_curve.plot(result.registers_per_thread, result.occupancy, "o", color="#d62728")
        ax_curve.set_xlabel("registers per thread")
        ax_curve.set_ylabel("occupancy")
        ax_curve.set_ylim(0, 1.05)
        ax_curve.set_title(f"{result.threads_per_block} threads/block, "
                           f"{result.shared_mem_per_block} B shared", fontsize=10)
    if own_figure:
        fig.tight_layout()
    return fig


def plot_call_overhead(measurement, ax=None):
    """Achieved rate n / t(n) against elements per call, with Hockney's fit and n_half marked."""
    fig, ax = new_axes(ax)
    n = measurement.sizes
    ax.loglog(n, measurement.rate_elements_per_s, "o", color="#d62728", ms=4, label="measured")
    fine = np.logspace(np.log10(n[0]), np.log10(n[-1]), 200)
    ax.loglog(fine, fine / measurement.model_t_s(fine), color="k", lw=1.2,
              label=f"t0 + n/r: t0 = {measurement.t0_s * 1e9:.0f} ns, "
                    f"r = {measurement.rate_inf_elements_per_s / 1e9:.2f} G elem/s")
    ax.axhline(measurement.rate_inf_elements_per_s, color="0.6", ls=":", lw=1)
    ax.axvline(measurement.n_half, color="#1f77b4", ls="--", lw=1)
    ax.annotate(f"n_half = {measurement.n_half:,.0f}", (measurement.n_half, measurement.rate_elements_per_s.min()),
                textcoords="offset points", xytext=(4, 4), fontsize=8, color="#1f77b4")
    ax.set_xlabel("elements per call")
    ax.set_ylabel("elements per second")
    ax.set_title(measurement.operation)
    ax.legend(fontsize=8, loc="lower right")
    return fig
