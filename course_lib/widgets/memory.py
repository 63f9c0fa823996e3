"""Explorers for lesson 03: a cache's hit rate against working set, and a double-buffered pipeline."""

from __future__ import annotations

from ._base import FigureExplorer, fixed_figure

__all__ = ["explore_cache", "cache_explorer", "explore_pipeline", "pipeline_explorer"]


def explore_cache(capacity_kib: int, line_bytes: int, ways: int, stride_elements: int, tile_kib: int):
    """Compute step: hit-rate curves of the four patterns for one cache (6,000 accesses each, seeded)."""
    from .._validate import check_int
    capacity_kib = check_int("capacity_kib", capacity_kib, min_value=1, max_value=2 ** 20)
    tile_kib = check_int("tile_kib", tile_kib, min_value=1, max_value=2 ** 20)
    import numpy as np
    from ..memory import PATTERNS, hit_rate_sweep
    capacity = capacity_kib * 1024
    sizes = np.unique(np.geomspace(capacity / 16, capacity * 16, 11).astype(np.int64))
    curves = []
    for pattern in PATTERNS:
        curves.append(hit_rate_sweep(pattern, sizes, capacity, line_bytes, ways, n_accesses=6000,
                                     rng=np.random.default_rng(0), stride_elements=stride_elements,
                                     tile_bytes=tile_kib * 1024))
    return curves


def _describe_cache(curves) -> str:
    parts = [f"{c.pattern}: {100 * c.hit_rate[-1]:.0f}%" for c in curves]
    return "hit rate at 16x the capacity: " + ", ".join(parts)


def cache_explorer() -> FigureExplorer:
    """A widget: cache size, line size, associativity, stride and tile size move the hit-rate curves."""
    import ipywidgets as widgets
    from ..plots.memory import plot_hit_rates
    controls = {
        "capacity_kib": widgets.Dropdown(options=[16, 32, 64, 128, 256], value=32, description="KiB"),
        "line_bytes": widgets.Dropdown(options=[32, 64, 128], value=128, description="line B"),
        "ways": widgets.Dropdown(options=[1, 2, 4, 8, 16], value=4, description="ways"),
        "stride_elements": widgets.IntSlider(value=33, min=1, max=128, description="stride",
                                             continuous_update=True),
        "tile_kib": widgets.Dropdown(options=[4, 8, 16, 32, 64], value=8, description="tile KiB"),
    }
    return FigureExplorer(controls, explore_cache, plot_hit_rates, describe=_describe_cache,
                          title="Cache explorer (LRU, set-associative)")


def explore_pipeline(n_tiles: int, t_copy_us: float, t_compute_us: float, buffers: int):
    """Compute step: the pipeline's event times for these tile counts and durations (microseconds in)."""
    from .._validate import check_number
    t_copy_us = check_number("t_copy_us", t_copy_us, min_value=0)
    t_compute_us = check_number("t_compute_us", t_compute_us, min_value=0)
    from ..memory import pipeline_timeline
    return pipeline_timeline(n_tiles, t_copy_us * 1e-6, t_compute_us * 1e-6, buffers)


def _describe_pipeline(tl) -> str:
    hidden = tl.t_copy_s <= tl.t_compute_s
    return (f"t_copy {'&le;' if hidden else '&gt;'} t_compute: the copy is "
            f"<b>{'hidden' if hidden and tl.buffers > 1 else 'exposed'}</b>; total "
            f"{tl.total_s * 1e6:.2f} &micro;s, compute busy {100 * tl.compute_busy_fraction:.0f}%")


def pipeline_explorer() -> FigureExplorer:
    """A widget: number of tiles, copy and compute time per tile, and buffers (1 = no overlap)."""
    import ipywidgets as widgets
    controls = {
        "n_tiles": widgets.IntSlider(value=8, min=1, max=24, description="tiles", continuous_update=True),
        "t_copy_us": widgets.FloatSlider(value=1.3, min=0.1, max=4.0, step=0.1, description="copy us",
                                         continuous_update=True),
        "t_compute_us": widgets.FloatSlider(value=1.0, min=0.1, max=4.0, step=0.1, description="compute us",
                                            continuous_update=True),
        "buffers": widgets.IntSlider(value=2, min=1, max=4, description="buffers", continuous_update=True),
    }
    return FigureExplorer(controls, explore_pipeline, _draw_pipeline, describe=_describe_pipeline,
                          title="Double buffering")


def _draw_pipeline(timeline, ax=None):
    from ..plots.memory import plot_pipeline
    if ax is None:
        _, ax = fixed_figure((7.5, 2.6), left=0.11, right=0.97, bottom=0.2, top=0.87)
    return plot_pipeline(timeline, ax=ax)
