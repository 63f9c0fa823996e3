"""The tile-order explorer: block sizes and GROUP_M against a matmul's HBM traffic and time."""

from __future__ import annotations

from ._base import FigureExplorer, fixed_figure, pick, powers_of_two

__all__ = ["tile_order_explorer", "explore_tile_order"]


def _precision(accelerator: str) -> str:
    from ..hardware import get_accelerator
    return "bf16" if "bf16" in get_accelerator(accelerator).peak_flops else "fp16"


def explore_tile_order(accelerator: str, size: int, block_m: int, block_n: int, group_m: int):
    """Compute step: a size^3 16-bit matmul in waves of one program per SM of ``accelerator``,
    against GROUP_M; the roofline time with and without the waves' reuse. Formulas only."""
    from ..hardware import get_accelerator
    from ..tiles.order import group_sweep
    from ..tiles.profile import predict_tiles
    acc = get_accelerator(accelerator)
    sweep = group_sweep(size, size, size, block_m, block_n, group_m, programs_per_wave=acc.sm_count)
    c = sweep.current
    prec = _precision(accelerator)
    t_no = predict_tiles(c.flops, c.bytes_no_reuse, accelerator, prec)
    t_waves = predict_tiles(c.flops, c.bytes_waves, accelerator, prec)
    return accelerator, sweep, t_no, t_waves


def _describe(result) -> str:
    from ..tiling import tiled_matmul_traffic
    accelerator, sweep, t_no, t_waves = result
    c = sweep.current
    lesson06 = tiled_matmul_traffic(c.m, c.k, c.n, c.block_m, c.block_n, bytes_per_element=2).bytes_moved
    return (f"lesson 06: b (mk&lceil;n/BN&rceil; + kn&lceil;m/BM&rceil; + mn) = <b>{lesson06 / 1e9:.3g} GB</b>: "
            f"{t_no.t_s * 1e3:.3g} ms, {t_no.bound}-bound on the {accelerator}.<br>"
            f"{c.programs:,} programs in {c.waves} waves of {c.programs_per_wave} (one per SM), "
            f"GROUP_M = {c.group_m}: <b>{c.bytes_waves / 1e9:.3g} GB</b> from HBM, "
            f"{t_waves.t_s * 1e3:.3g} ms, {t_waves.bound}-bound (floor {c.min_bytes / 1e9:.3g} GB)")


def _draw(result, ax=None):
    from ..plots.tiles import plot_group_sweep, plot_grouped_order
    accelerator, sweep, _, _ = result
    if ax is None:
        _, ax = fixed_figure((11, 4.4), 2, width_ratios=(1, 1.3), left=0.05, right=0.98, bottom=0.14,
                             top=0.9, wspace=0.22)
    left, right = ax
    plot_grouped_order(sweep.current, ax=left, title=f"first wave (blue) on the {accelerator}")
    plot_group_sweep(sweep, ax=right)
    return left.figure


def tile_order_explorer(accelerator: str = "H100 SXM") -> FigureExplorer:
    """A widget: accelerator (its SM count sets the wave), matmul size, block sizes and GROUP_M."""
    import ipywidgets as widgets
    from ..hardware import get_accelerator, list_accelerators

    gpus = [name for name in list_accelerators(kind="gpu") if get_accelerator(name).vendor == "NVIDIA"]
    if get_accelerator(accelerator).name not in gpus:
        raise ValueError(f"accelerator must be one of {gpus}, got {accelerator!r}")
    controls = {
        "accelerator": widgets.Dropdown(options=gpus, value=pick("accelerator", accelerator, gpus,
                                                                 lambda a: get_accelerator(a).name),
                                        description="accelerator"),
        "size": widgets.SelectionSlider(options=powers_of_two(512, 16384), value=4096, description="m = k = n",
                                        continuous_update=True),
        "block_m": widgets.SelectionSlider(options=powers_of_two(16, 256), value=128, description="BLOCK_M",
                                           continuous_update=True),
        "block_n": widgets.SelectionSlider(options=powers_of_two(16, 256), value=128, description="BLOCK_N",
                                           continuous_update=True),
        "group_m": widgets.SelectionSlider(options=powers_of_two(1, 64), value=8, description="GROUP_M",
                                           continuous_update=True),
    }
    return FigureExplorer(controls, explore_tile_order, _draw, describe=_describe, height_px=460,
                          title="Tile-order explorer: block sizes and GROUP_M against HBM traffic")
