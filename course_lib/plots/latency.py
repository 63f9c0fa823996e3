"""Draw latency hiding, occupancy and the per-call overhead measurement."""

from __future__ import annotations

import numpy as np

from . import _check_result, new_axes, place_labels, plural

__all__ = ["plot_latency_hiding", "plot_occupancy", "plot_call_overhead"]


def plot_latency_hiding(sweep, ax=None, title: str | None = None):
    """Simulated issue utilisation against resident warps, over the analytic Little's-law curve."""
    sweep = _check_result("sweep", sweep, "latency.LatencySweep", "simulate_latency_hiding()")
    fig, ax = new_axes(ax)
    n = sweep.n_warps
    ax.plot(n, sweep.analytic, color="k", lw=1.5, label="Little's law: min(1, N C / (S (C+L)))")
    ax.plot(n, sweep.utilisation, "o", color="#d62728", ms=4, label="simulated")
    ax.axvline(sweep.knee_warps, color="0.6", ls=":", lw=1)
    ax.set_ylim(0, 1.08)
    # At the foot of the knee line, on whichever side is clear of the legend and the data.
    place_labels(ax, [(sweep.knee_warps, 0, f"knee: {plural(sweep.knee_warps, 'warp')}",
                       {"xycoords": ax.get_xaxis_transform()})], fontsize=8, color="0.35")
    ax.set_xlabel("resident warps N")
    ax.set_ylabel("fraction of issue slots used")
    ax.set_title(title or (f"C = {sweep.compute_cycles:g} compute cycles, L = {sweep.latency_cycles:g} "
                           f"latency cycles, {plural(sweep.schedulers, 'scheduler')}"))
    ax.legend(fontsize=8, loc="lower right")
    return fig


def plot_occupancy(result, curve=None, ax=None):
    """Blocks per SM each resource allows (bars), the binding one highlighted; with ``curve``
    ``(registers, occupancy)`` a second panel draws the register staircase. ``ax``: one axes
    (bars only) or a pair (bars, staircase); a figure given this way keeps its layout."""
    result = _check_result("result", result, "latency.Occupancy", "occupancy()")
    if curve is not None and not (isinstance(curve, tuple) and len(curve) == 2):
        raise TypeError("curve must be None or the (registers, occupancy) pair occupancy_curve() returns")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullLocator
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
    # Every resource, in one order; shared memory shows as "none allocated" when a block has none.
    names = ["warps", "registers", "shared memory", "blocks"]
    values = [result.block_limits.get(k) for k in names]
    shown = [v for v in values if v is not None]
    colours = ["#d62728" if k in result.limiters else "#9ecae1" for k in names]
    # A log2 axis: 2, 8, 32 and 228 blocks all readable, none cut off at the SM's block limit.
    ax_bars.barh(names, [v if v is not None else 0 for v in values], color=colours)
    ax_bars.set_xscale("log", base=2)
    hi = 2 ** np.ceil(np.log2(max(shown) * 1.9))
    ax_bars.set_xlim(0.5, hi)
    for i, v in enumerate(values):
        text = f"{v}" if v is not None else "none allocated: no limit"
        ax_bars.annotate(text, (v if v is not None else 0.5, i), textcoords="offset points",
                         xytext=(3, 0), va="center", fontsize=8, color="0.2" if v is not None else "0.45")
    ticks = [2 ** k for k in range(0, int(np.log2(hi)) + 1)]
    ax_bars.set_xticks(ticks, [str(t) for t in ticks])
    ax_bars.xaxis.set_minor_locator(NullLocator())
    ax_bars.set_xlabel("blocks per SM this resource allows (log scale)")
    ax_bars.set_title(f"{plural(result.blocks_per_sm, 'block')} x {plural(result.warps_per_block, 'warp')} = "
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
        ax_curve.set_title(f"{plural(result.threads_per_block, 'thread')} per block, "
                           f"{result.shared_mem_per_block:,} B shared", fontsize=10)
    if own_figure:
        fig.tight_layout()
    return fig


def plot_call_overhead(measurement, ax=None):
    """Achieved rate n / t(n) against elements per call, with Hockney's fit and n_half marked."""
    measurement = _check_result("measurement", measurement, "measure.latency.CallOverhead", "measure_call_overhead()")
    fig, ax = new_axes(ax)
    n = measurement.sizes
    ax.loglog(n, measurement.rate_elements_per_s, "o", color="#d62728", ms=4, label="measured")
    fine = np.logspace(np.log10(n[0]), np.log10(n[-1]), 200)
    ax.loglog(fine, fine / measurement.model_t_s(fine), color="k", lw=1.2,
              label=f"t0 + n/r: t0 = {measurement.t0_s * 1e9:.0f} ns, "
                    f"r = {measurement.rate_inf_elements_per_s / 1e9:.2f} G elem/s")
    ax.axhline(measurement.rate_inf_elements_per_s, color="0.6", ls=":", lw=1)
    ax.axvline(measurement.n_half, color="#1f77b4", ls="--", lw=1)
    place_labels(ax, [(measurement.n_half, 0, f"n_half = {measurement.n_half:,.0f}",
                       {"xycoords": ax.get_xaxis_transform()})], fontsize=8, color="#1f77b4")
    ax.set_xlabel("elements per call")
    ax.set_ylabel("elements per second")
    ax.set_title(measurement.operation)
    ax.legend(fontsize=8, loc="upper left")          # above the rising curve: always clear
    return fig
