"""Explorers for lesson 01: the latency-hiding simulator and the occupancy calculator."""

from __future__ import annotations

import numpy as np

from ..plots import plural
from ._base import FigureExplorer, fixed_figure, pick

__all__ = ["explore_latency_hiding", "latency_hiding_explorer", "explore_occupancy",
           "occupancy_explorer"]


def explore_latency_hiding(compute_cycles: int, latency_cycles: int, schedulers: int, jitter: float,
                           max_warps: int, seed: int = 0):
    """Compute step: one simulated sweep over 1..max_warps resident warps.

    600 bursts (at least 8 rounds of every warp): the gap to Little's law with jitter is the
    jitter's own effect (about 0.1 at +-50%), the same as with 1,500 bursts at 2.5 times the cost.
    """
    from .._validate import check_int
    max_warps = check_int("max_warps", max_warps, min_value=1, max_value=1024)
    seed = check_int("seed", seed, min_value=0)
    from ..latency import simulate_latency_hiding
    rng = np.random.default_rng(seed)
    return simulate_latency_hiding(np.arange(1, max_warps + 1), compute_cycles, latency_cycles,
                                   schedulers, jitter, bursts=max(600, 8 * max_warps), rng=rng)


def _describe_hiding(sweep) -> str:
    return (f"knee at <b>{plural(sweep.knee_warps, 'warp')}</b> = S (C + L) / C rounded up; "
            f"largest gap simulated vs analytic: {sweep.max_abs_error:.3f}")


def latency_hiding_explorer() -> FigureExplorer:
    """A widget: compute burst, memory latency, schedulers, jitter and the range of warps."""
    import ipywidgets as widgets
    from ..plots.latency import plot_latency_hiding
    controls = {
        "compute_cycles": widgets.IntSlider(value=40, min=4, max=400, step=4, description="C (cycles)",
                                            continuous_update=True),
        "latency_cycles": widgets.IntSlider(value=560, min=0, max=2000, step=20, description="L (cycles)",
                                            continuous_update=True),
        "schedulers": widgets.IntSlider(value=1, min=1, max=4, description="schedulers",
                                        continuous_update=True),
        "jitter": widgets.FloatSlider(value=0.0, min=0.0, max=0.9, step=0.05, description="jitter",
                                      continuous_update=True),
        "max_warps": widgets.IntSlider(value=32, min=2, max=64, description="max warps",
                                       continuous_update=True),
    }
    return FigureExplorer(controls, explore_latency_hiding, plot_latency_hiding,
                          describe=_describe_hiding, title="Latency hiding on one SM")


def explore_occupancy(accelerator: str, threads_per_block: int, registers_per_thread: int,
                      shared_mem_kib: float):
    """Compute step: the occupancy result and its register staircase."""
    from .._validate import check_number
    shared_mem_kib = check_number("shared_mem_kib", shared_mem_kib, min_value=0, max_value=1024)
    from ..latency import occupancy, occupancy_curve
    smem = int(round(shared_mem_kib * 1024))
    result = occupancy(threads_per_block, registers_per_thread, smem, accelerator)
    return result, occupancy_curve(threads_per_block, smem, accelerator,
                                   registers=np.arange(8, 256, 8))


def _describe_occupancy(pair) -> str:
    r, _ = pair
    return (f"{r.accelerator}: <b>{plural(r.blocks_per_sm, 'block')}</b>, "
            f"<b>{plural(r.warps_per_sm, 'warp')}</b> per SM, "
            f"occupancy <b>{100 * r.occupancy:.1f}%</b>, limited by <b>{' and '.join(r.limiters)}</b>"
            f"{' (a tie)' if len(r.limiters) > 1 else ''} "
            f"({plural(r.registers_per_warp, 'register')} per warp, "
            f"{r.shared_mem_allocated_per_block} B shared memory allocated per block)")


def occupancy_explorer(accelerator: str = "H100 SXM") -> FigureExplorer:
    """A widget: accelerator, threads per block, registers per thread and shared memory per block."""
    import ipywidgets as widgets
    from ..hardware import get_accelerator, list_accelerators
    acc = get_accelerator(accelerator)
    nvidia = [n for n in list_accelerators("gpu") if get_accelerator(n).register_alloc_unit]
    controls = {
        "accelerator": widgets.Dropdown(options=nvidia, value=pick("accelerator", acc.name, nvidia),
                                        description="accelerator"),
        "threads_per_block": widgets.IntSlider(value=256, min=32, max=1024, step=32,
                                               description="threads/block", continuous_update=True),
        "registers_per_thread": widgets.IntSlider(value=128, min=8, max=255, description="regs/thread",
                                                  continuous_update=True),
        "shared_mem_kib": widgets.FloatSlider(value=0.0, min=0.0, step=1.0,
                                              max=acc.max_shared_mem_bytes_per_block / 1024,
                                              description="shared KiB", continuous_update=True),
    }

    def on_accelerator(change):
        """The shared-memory slider ends at the new chip's per-block maximum (227 KiB on an H100,
        99 KiB on an L4): a value past it could not launch."""
        controls["shared_mem_kib"].max = get_accelerator(change["new"]).max_shared_mem_bytes_per_block / 1024

    controls["accelerator"].observe(on_accelerator, names="value")
    return FigureExplorer(controls, explore_occupancy, _draw_occupancy,
                          describe=_describe_occupancy, title="Occupancy calculator")


def _draw_occupancy(pair, ax=None):
    from ..plots.latency import plot_occupancy
    if ax is None:
        _, ax = fixed_figure((10, 3.8), 2, left=0.135, right=0.985, bottom=0.155, top=0.91, wspace=0.17)
    return plot_occupancy(pair[0], pair[1], ax=tuple(ax))
