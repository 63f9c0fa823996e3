"""Explorer for lesson 02: stride, branch pattern and warp size against SIMT and memory efficiency."""

from __future__ import annotations

from ..plots import plural
from ._base import FigureExplorer, fixed_figure

__all__ = ["BRANCH_PATTERNS", "branch_kernel", "explore_simt", "simt_explorer"]

#: Which threads take the long path of the branch in the explorer's kernel.
BRANCH_PATTERNS = {
    "none (all same)": lambda tid: tid < 0,
    "odd lanes": lambda tid: tid % 2 == 1,
    "every 8th lane": lambda tid: tid % 8 == 0,
    "blocks of 32 threads": lambda tid: (tid // 32) % 2 == 1,
    "blocks of 64 threads": lambda tid: (tid // 64) % 2 == 1,
}


def branch_kernel(pattern: str, long_path: int = 6, short_path: int = 2):
    """A kernel whose threads take a long or a short path according to ``pattern``."""
    from .._validate import check_choice, check_int
    pattern = check_choice("pattern", pattern, BRANCH_PATTERNS)
    long_path = check_int("long_path", long_path, min_value=0, max_value=1000)
    short_path = check_int("short_path", short_path, min_value=0, max_value=1000)
    from ..simt import If, Let
    if pattern not in BRANCH_PATTERNS:
        raise ValueError(f"pattern must be one of {list(BRANCH_PATTERNS)}, got {pattern!r}")
    test = BRANCH_PATTERNS[pattern]
    longp = [Let("y", lambda v: v["y"] * 1.5 + 1, label="long") for _ in range(long_path)]
    shortp = [Let("y", lambda v: v["y"] - 1, label="short") for _ in range(short_path)]
    return [Let("y", lambda v: v["tid"] * 1.0, label="load"),
            If(lambda v: test(v["tid"]), then=longp, orelse=shortp)]


def explore_simt(stride_elements: int, pattern: str, warp_size: int, n_threads: int = 4096):
    """Compute step: a SIMT run of the branch kernel and the coalescing of one strided load."""
    from .._validate import check_choice
    pattern = check_choice("pattern", pattern, BRANCH_PATTERNS)
    from ..simt import coalescing, run_simt, strided_addresses
    run = run_simt(branch_kernel(pattern), n_threads, warp_size=warp_size, trace_warp=1)
    mem = coalescing(strided_addresses(stride_elements, 4, warp_size=warp_size))
    return run, mem


def _describe(pair) -> str:
    run, mem = pair
    return (f"SIMT efficiency <b>{100 * run.simt_efficiency:.1f}%</b> "
            f"({run.issued / run.n_warps:.2f} instructions per warp of {run.warp_size}); "
            f"load: <b>{plural(mem.n_sectors, 'sector')}</b>, {plural(mem.n_lines, 'line')}, "
            f"memory efficiency <b>{100 * mem.efficiency:.1f}%</b>")


def _draw(pair, ax=None):
    from ..plots.simt import plot_coalescing, plot_lane_timeline
    run, mem = pair
    if ax is None:
        _, ax = fixed_figure((11, 3.6), 2, left=0.056, right=0.986, bottom=0.2, top=0.9, wspace=0.13)
    a, b = ax
    plot_lane_timeline(run, ax=a)
    plot_coalescing(mem, ax=b, title=f"one {run.warp_size}-lane load, "
                                     f"{100 * mem.efficiency:.0f}% of moved bytes used")
    return a.figure


def simt_explorer() -> FigureExplorer:
    """A widget: stride of a float32 load, which lanes branch, and warp size (32 or AMD's 64)."""
    import ipywidgets as widgets
    controls = {
        "stride_elements": widgets.IntSlider(value=1, min=0, max=33, description="stride (floats)",
                                             continuous_update=True),
        "pattern": widgets.Dropdown(options=list(BRANCH_PATTERNS), value="odd lanes",
                                    description="branch"),
        "warp_size": widgets.Dropdown(options=[32, 64], value=32, description="warp size"),
    }
    return FigureExplorer(controls, explore_simt, _draw, describe=_describe,
                          title="Divergence and coalescing")
