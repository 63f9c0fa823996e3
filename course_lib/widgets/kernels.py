"""Explorer for lesson 09: a kernel design, its tile and the accelerator against occupancy,
traffic and predicted time (formulas checked against traces in the lesson)."""

from __future__ import annotations

from ..plots import plural
from ._base import FigureExplorer, pick

__all__ = ["explore_kernel", "kernel_explorer"]


def explore_kernel(design: str, tile: int, accelerator: str, size: int):
    """Compute step: the chosen design and every design at the same tile, size and accelerator."""
    from ..kernels.design import design_sweep, kernel_design
    return kernel_design(design, tile, accelerator, size), design_sweep(tile, accelerator, size)


def _describe(pair) -> str:
    p, _ = pair
    pr = p.prediction
    occ = ("cannot launch" if pr.occupancy is None and pr.occupancy_limiter.startswith("cannot")
           else "n/a" if pr.occupancy is None else f"{100 * pr.occupancy:.0f}% (limited by {pr.occupancy_limiter})")
    return (f"{p.design}, {p.tile} x {p.tile} = {plural(p.threads_per_block, 'thread')} per block, "
            f"{p.shared_mem_per_block:,} B shared: occupancy <b>{occ}</b>; "
            f"traffic <b>{p.bytes_moved / 1e6:,.1f} MB</b>, {pr.intensity_flops_per_byte:.3g} FLOP/B; "
            f"predicted <b>{pr.t_s * 1e6:,.3g} us</b> ({pr.bound}-bound)")


def _draw(pair, ax=None):
    from ..plots.kernels import plot_design_times
    p, points = pair
    return plot_design_times(points, selected=p.design, ax=ax,
                             title=f"{p.size} x {p.size} float32 on the {p.prediction.accelerator}, "
                                   f"{p.tile} x {p.tile} blocks")


def kernel_explorer(accelerator: str = "H100 SXM") -> FigureExplorer:
    """A widget: design, tile (block of tile x tile threads), accelerator and matrix size."""
    import ipywidgets as widgets
    from ..hardware import get_accelerator, list_accelerators
    from ..kernels.design import DESIGNS, TILES
    nvidia = [n for n in list_accelerators() if get_accelerator(n).max_warps_per_sm is not None]
    acc = pick("accelerator", accelerator, nvidia, lambda a: get_accelerator(a).name)
    controls = {
        "design": widgets.Dropdown(options=list(DESIGNS), value="symmetrize (shared tile)", description="kernel"),
        "tile": widgets.Dropdown(options=list(TILES), value=16, description="tile (threads per side)"),
        "accelerator": widgets.Dropdown(options=nvidia, value=acc, description="accelerator"),
        "size": widgets.SelectionSlider(options=[2 ** k for k in range(8, 15)], value=4096,
                                        description="N (matrix side)", continuous_update=True),
    }
    return FigureExplorer(controls, explore_kernel, _draw, describe=_describe, height_px=330,
                          title="A kernel's design against occupancy, traffic and time")
