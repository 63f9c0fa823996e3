"""Draw SIMT runs (lanes x time), divergence comparisons and one warp's memory sectors."""

from __future__ import annotations

import numpy as np

from . import _check_mapping, _check_result, new_axes, plural
from ..simt import LINE_BYTES, SECTOR_BYTES

__all__ = ["plot_lane_timeline", "plot_efficiency_bars", "plot_coalescing"]


def plot_lane_timeline(result, ax=None, title: str | None = None):
    """Which lanes of the traced warp were active at each issued instruction (dark = active)."""
    result = _check_result("result", result, "simt.SimtResult", "run_simt()")
    fig, ax = new_axes(ax, figsize=(7.5, 3.4))
    trace = result.trace
    if trace.size == 0:
        raise ValueError("result has no trace: run it with trace_warp set")
    ax.imshow(trace.T, aspect="auto", cmap="Greys", vmin=0, vmax=1.6, interpolation="nearest",
              origin="lower")
    ax.set_xlabel("issued instruction (time)")
    ax.set_ylabel("lane")
    busy = trace.sum() / trace.size
    ax.set_title(title or f"warp {result.traced_warp}: {trace.shape[0]} instructions, "
                          f"{100 * busy:.0f}% of lane-slots active", fontsize=10)
    if trace.shape[0] <= 40:
        ax.set_xticks(range(trace.shape[0]))
        ax.set_xticklabels(result.trace_labels, rotation=90, fontsize=7)
    ax.grid(False)
    return fig


def plot_efficiency_bars(cases: dict, ax=None, title: str = "SIMT efficiency and issued instructions"):
    """One bar per named SimtResult: SIMT efficiency, annotated with instructions per warp."""
    cases = _check_mapping("cases", cases, "label: SimtResult from run_simt()")
    fig, ax = new_axes(ax)
    names = list(cases)
    eff = [cases[n].simt_efficiency for n in names]
    ax.barh(names, eff, color="#6baed6")
    for i, n in enumerate(names):
        r = cases[n]
        ax.annotate(f"{100 * eff[i]:.0f}%, {r.issued / r.n_warps:.1f} instr/warp", (eff[i], i),
                    textcoords="offset points", xytext=(3, -3), fontsize=8)
    ax.set_xlim(0, 1.35)
    ax.set_xlabel("SIMT efficiency (active lane-slots / issued lane-slots)")
    ax.invert_yaxis()
    ax.set_title(title, fontsize=10)
    return fig


def plot_coalescing(result, ax=None, title: str | None = None):
    """Each lane's bytes on an address axis, with the 32-byte sectors it touched shaded."""
    result = _check_result("result", result, "simt.Coalescing", "coalescing()")
    fig, ax = new_axes(ax, figsize=(7.5, 3.4))
    addr = result.addresses
    lo = (result.sectors.min() * SECTOR_BYTES) // LINE_BYTES * LINE_BYTES
    hi = -(-((result.sectors.max() + 1) * SECTOR_BYTES) // LINE_BYTES) * LINE_BYTES
    lanes = np.arange(addr.size)
    if hi - lo > _SPREAD_BYTES:
        return _plot_spread_sectors(result, fig, ax, title)
    # One collection each for sectors and line boundaries: an artist per sector is slow to redraw.
    ax.broken_barh([(s * SECTOR_BYTES, SECTOR_BYTES) for s in result.sectors], (-0.5, addr.size),
                   color="#fdae6b", alpha=0.45, lw=0)
    ax.vlines(np.arange(lo, hi + 1, LINE_BYTES), -0.5, addr.size - 0.5, color="k", lw=0.8)
    ax.set_ylim(-0.5, addr.size - 0.5)
    ax.hlines(lanes, addr, addr + result.bytes_per_access, color="#08519c", lw=3)
    ax.set_xlim(lo, hi)
    ax.set_xlabel("byte address\nblack: 128-byte line edges, orange: 32-byte sectors moved")
    ax.set_ylabel("lane")
    ax.set_title(title or f"{plural(result.n_sectors, 'sector')}, {plural(result.n_lines, 'line')}, "
                          f"{result.bytes_requested} B wanted / {result.bytes_moved} B moved = "
                          f"{100 * result.efficiency:.0f}%", fontsize=10)
    return fig


#: A request whose sectors span more than this many bytes (16 lines) is drawn with the gaps
#: between its sectors cut out: on a true address axis a strided warp's 4-byte marks would be
#: specks on a few thousand bytes.
_SPREAD_BYTES = 16 * LINE_BYTES


def _plot_spread_sectors(result, fig, ax, title):
    """The sectors a spread-out request touched, side by side, each lane's bytes inside its own."""
    sectors = np.unique(result.sectors)
    slot = {int(s): k for k, s in enumerate(sectors)}
    addr = result.addresses
    x = np.array([slot[int(a) // SECTOR_BYTES] * SECTOR_BYTES + int(a) % SECTOR_BYTES for a in addr])
    lanes = np.arange(addr.size)
    ax.broken_barh([(k * SECTOR_BYTES, SECTOR_BYTES) for k in range(sectors.size)], (-0.5, addr.size),
                   color="#fdae6b", alpha=0.45, lw=0)
    ax.vlines(np.arange(sectors.size + 1) * SECTOR_BYTES, -0.5, addr.size - 0.5, color="0.4", lw=0.6,
              linestyles="dotted")
    ax.hlines(lanes, x, x + result.bytes_per_access, color="#08519c", lw=3)
    ax.set_xlim(0, sectors.size * SECTOR_BYTES)
    ax.set_ylim(-0.5, addr.size - 0.5)
    every = max(1, -(-sectors.size // 8))
    ticks = np.arange(0, sectors.size, every)
    ax.set_xticks(ticks * SECTOR_BYTES + SECTOR_BYTES / 2)
    ax.set_xticklabels([str(int(sectors[k]) * SECTOR_BYTES) for k in ticks], fontsize=7)
    ax.set_xlabel(f"the {sectors.size} sectors moved, side by side (the gaps between them cut out);\n"
                  f"tick: a sector's first byte address")
    ax.set_ylabel("lane")
    ax.set_title(title or f"{plural(result.n_sectors, 'sector')}, {result.bytes_requested} B wanted / "
                          f"{result.bytes_moved} B moved = {100 * result.efficiency:.0f}%", fontsize=10)
    return fig
