"""Explorers for lesson 01: the latency-hiding simulator and the occupancy calculator."""

from __future__ import annotations

import numpy as np

from ._base import FigureExplorer

__all__ = ["explore_latency_hiding", "latency_hiding_explorer", "explore_occupancy",
           "occupancy_explorer"]


def explore_latency_hiding(compute_cycles: int, latency_cycles: int, schedulers: int, jitter: float,
                           max_warps: int, seed: int = 0):
    """Compute step: one simulated sweep over 1..max_warps resident warps."""
    from .._validate import check_int
    max_warps = check_int("max_warps", max_warps, min_value=1, max_value=1024)
    seed = check_int("seed", seed, min_value=0)
    from ..latency import simulate_latency_hiding
    rng = np.random.default_rng(seed)
    return simulate_latency_hiding(np.arange(1, max_warps + 1), compute_cycles, latency_cycles,
                                   schedulers, jitter, bursts=max(1500, 8 * max_warps), rng=rng)


def _describe_hiding(sweep) -> str:
    return (f"knee at <b>{sweep.knee_warps}</b> warps = S (C + L) / C rounded up; "
            f"largest gap simulated vs analytic: {sweep.max_abs_error:.3f}")


def latency_hiding_explorer() -> FigureExplorer:
    """A widget: compute burst, memory latency, schedulers, jitter and the range of warps."""
    import ipywidgets as widgets
    from ..plots.latency import plot_latency_hiding
    controls = {
        "compute_cycles": widgets.IntSlider(value=40, min=4, max=400, step=4, description="C (cycles)",
                                            continuous_update=False),
        "latency_cycles": widgets.IntSlider(value=560, min=0, max=2000, step=20, description="L (cycles)",
                                            continuous_update=False),
        "schedulers": widgets.IntSlider(value=1, min=1, max=4, description="schedulers",
                                        continuous_update=False),
        "jitter": widgets.FloatSlider(value=0.0, min=0.0, max=0.9, step=0.05, description="jitter",
                                      continuous_update=False),
        "max_warps": widgets.IntSlider(value=32, min=2, max=64, description="max warps",
                                       continuous_update=False),
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
    return (f"{r.accelerator}: <b>{r.blocks_per_sm}</b> blocks, <b>{r.warps_per_sm}</b> warps per SM, "
            f"occupancy <b>{100 * r.occupancy:.1f}%</b>, limited by <b>{r.limiter}</b> "
            f"({r.registers_per_warp} registers per warp, "
            f"{r.shared_mem_allocated_per_block} B shared memory allocated per block)")


def occupancy_explorer(accelerator: str = "H100 SXM") -> FigureExplorer:
    """A widget: accelerator, threads per block, registers per thread and shared memory per block."""
    import ipywidgets as widgets
    from ..hardware import get_accelerator, list_accelerators
    from ..plots.latency import plot_occupancy
    acc = get_accelerator(accelerator)
    nvidia = [n for n in list_accelerators("gpu") if get_accelerator(n).register_alloc_unit]
    controls = {
        "accelerator": widgets.Dropdown(options=nvidia, value=acc.name, description="accelerator"),
        "threads_per_block": widgets.IntSlider(value=256, min=32, max=1024, step=32,
                                               description="threads/block", continuous_update=False),
        "registers_per_thread": widgets.IntSlider(value=128, min=8, max=255, description="regs/thread",
                                                  continuous_update=False),
        "shared_mem_kib": widgets.FloatSlider(value=0.0, min=0.0, max=227.0, step=1.0,
                                              description="shared KiB", continuous_update=False),
    }
    return FigureExplorer(controls, explore_occupancy, lambda pair: plot_occupancy(pair[0], pair[1]),
                          describe=_describe_occupancy, title="Occupancy calculator")
