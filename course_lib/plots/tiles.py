"""Draw tile-kernel results: which elements a set of programs read, and the grouped-order picture."""

from __future__ import annotations

import numpy as np

from . import _check_result, new_axes

__all__ = ["plot_tile_reads", "plot_grouped_order", "plot_group_sweep"]


def plot_tile_reads(reads, axes=None, title: str | None = None):
    """One heat map per 2D tensor: how many of the chosen programs read each element.

    ``reads`` is a :class:`course_lib.tiles.profile.TileReads` (``tile_reads(profile, ...)``).
    """
    import matplotlib.pyplot as plt
    reads = _check_result("reads", reads, "tiles.profile.TileReads", "tile_reads()")
    n = len(reads.maps)
    if axes is None:
        fig, axes = plt.subplots(1, n, figsize=(3.9 * n, 3.6), squeeze=False)
        axes = list(axes[0])
        fig.subplots_adjust(left=0.08, right=0.96, bottom=0.14, top=0.82, wspace=0.35)
    else:
        axes = list(np.atleast_1d(axes))
        if len(axes) != n:
            raise ValueError(f"axes must hold {n} Axes (one per tensor), got {len(axes)}")
    top = max(1, max(int(m.max()) for m in reads.maps.values()))
    for ax, (name, counts) in zip(axes, reads.maps.items()):
        image = ax.imshow(counts, cmap="viridis", vmin=0, vmax=top, aspect="auto", interpolation="nearest")
        ax.set_title(f"{name} {counts.shape[0]} x {counts.shape[1]}: {reads.distinct_bytes[name]:,} B "
                     f"distinct,\n{reads.bytes_read[name]:,} B read", fontsize=9)
        ax.set_xlabel("column")
        ax.set_ylabel("row")
        ax.grid(False)
    fig = axes[0].figure
    fig.colorbar(image, ax=axes, label="programs that read it", shrink=0.9)
    fig.suptitle(title or f"{reads.kernel_name}: what programs {reads.describe_programs()} read", fontsize=10)
    return fig


def plot_grouped_order(traffic, ax=None, title: str | None = None):
    """The tiles of C in launch order: each tile numbered by its program's position, the first
    wave shaded, and the A rows and B columns that wave reads marked on the margins.

    ``traffic`` is a :class:`course_lib.tiles.order.GroupedTraffic`.
    """
    from matplotlib.patches import Rectangle
    traffic = _check_result("traffic", traffic, "tiles.order.GroupedTraffic", "grouped_matmul_traffic()")
    fig, ax = new_axes(ax, figsize=(5.2, 4.6))
    order = traffic.order
    n_m, n_n = int(order[:, 0].max()) + 1, int(order[:, 1].max()) + 1
    w = traffic.programs_per_wave
    first = order[:w]
    grid = np.full((n_m, n_n), -1)
    grid[order[:, 0], order[:, 1]] = np.arange(order.shape[0])
    ax.imshow(np.where(grid < w, 1.0, 0.15), cmap="Blues", vmin=0, vmax=1.3, aspect="equal",
              extent=(0, n_n, n_m, 0), interpolation="nearest")
    if n_m * n_n <= 256:
        for (r, c), pos in np.ndenumerate(grid):
            ax.text(c + 0.5, r + 0.5, str(pos), ha="center", va="center", fontsize=7,
                    color="white" if pos < w else "0.3")
    rows, cols = np.unique(first[:, 0]), np.unique(first[:, 1])
    for r in rows:
        ax.add_patch(Rectangle((-0.6, r), 0.45, 1, color="#d62728", clip_on=False))
    for c in cols:
        ax.add_patch(Rectangle((c, -0.6), 1, 0.45, color="#2ca02c", clip_on=False))
    ax.set_xlim(-0.7, n_n)
    ax.set_ylim(n_m, -0.7)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_xlabel(f"tile column of C ({n_n}); green: B columns wave 1 reads ({len(cols)})", fontsize=8)
    ax.set_ylabel(f"tile row of C ({n_m}); red: A rows wave 1 reads ({len(rows)})", fontsize=8)
    ax.grid(False)
    ax.set_title(title or (f"GROUP_M = {traffic.group_m}, waves of {w}: "
                           f"{traffic.bytes_waves / 1e6:,.3g} MB (no reuse {traffic.bytes_no_reuse / 1e6:,.3g} MB)"),
                 fontsize=9)
    return fig


def plot_group_sweep(sweep, ax=None, title: str | None = None):
    """HBM bytes against GROUP_M: waves sharing reads (line), lesson 06's no-reuse count and the
    floor (each operand once) as horizontal lines, the current GROUP_M marked."""
    sweep = _check_result("sweep", sweep, "tiles.order.GroupSweep", "group_sweep()")
    fig, ax = new_axes(ax)
    ax.semilogx(sweep.groups, sweep.bytes_waves / 1e9, "o-", color="#1f77b4", lw=2, base=2,
                label="waves share reads through L2")
    ax.axhline(sweep.bytes_no_reuse / 1e9, color="#d62728", ls="--", lw=1.5, label="lesson 06: no reuse")
    ax.axhline(sweep.min_bytes / 1e9, color="0.5", ls=":", lw=1.5, label="floor: each operand once")
    c = sweep.current
    ax.plot(c.group_m, c.bytes_waves / 1e9, "s", color="k", ms=8, label=f"GROUP_M = {c.group_m}")
    ax.set_xticks(sweep.groups)
    ax.set_xticklabels([str(g) for g in sweep.groups])
    ax.minorticks_off()
    ax.set_xlabel("GROUP_M (tile rows walked together)")
    ax.set_ylabel("HBM traffic (GB)")
    ax.set_ylim(0, sweep.bytes_no_reuse / 1e9 * 1.12)
    ax.set_title(title or f"{c.m} x {c.k} x {c.n}, tiles {c.block_m} x {c.block_n}, waves of {c.programs_per_wave}",
                 fontsize=9)
    ax.legend(fontsize=8, loc="center right")
    return fig
