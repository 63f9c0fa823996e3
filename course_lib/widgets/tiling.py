"""The tiling explorer: tile size moves the matmul's traffic, sequence length and block size attention's."""

from __future__ import annotations

from ._base import FigureExplorer

__all__ = ["tiling_explorer", "explore_tiling"]

_MATMUL = (4096, 4096, 4096)
_HEAD_DIM = 64


def explore_tiling(accelerator: str, tile: int, seq_len: int, block_size: int):
    """Compute step: a BF16 4096^3 matmul's traffic against tile size, and attention's against N.

    Formulas only (no simulation), so one update costs a few milliseconds.
    """
    from .._validate import check_int
    tile = check_int("tile", tile, min_value=1)
    seq_len = check_int("seq_len", seq_len, min_value=1)
    import numpy as np
    from ..attention import attention_traffic_sweep
    from ..tiling import tile_limit, traffic_sweep

    limit = tile_limit(accelerator, "bf16").largest
    tiles = np.unique(np.geomspace(8, 2048, 40).astype(int))
    matmul = traffic_sweep(*_MATMUL, tiles=tiles, bytes_per_element=2, limit=limit, current_tile=tile)
    ns = np.unique(np.geomspace(256, 131072, 28).astype(int))
    attention = attention_traffic_sweep(ns, d=_HEAD_DIM, block_size=block_size, current_n=seq_len)
    return matmul, attention


def _describe(result) -> str:
    from ..attention import flash_attention_traffic, naive_attention_traffic
    from ..tiling import tiled_matmul_traffic
    matmul, attention = result
    t = tiled_matmul_traffic(*_MATMUL, matmul.current_tile, bytes_per_element=2)
    n, b = attention.current_n, attention.block_size
    naive = naive_attention_traffic(n, _HEAD_DIM).bytes_moved(2)
    flash = flash_attention_traffic(n, _HEAD_DIM, b).bytes_moved(2)
    fits = "fits" if matmul.current_tile <= matmul.tile_limit else "does <b>not</b> fit"
    return (f"matmul tile {matmul.current_tile}: {t.bytes_moved / 1e9:.2f} GB, intensity "
            f"<b>{t.intensity_flops_per_byte:.0f}</b> FLOP/B; the tile {fits} on chip "
            f"(largest {matmul.tile_limit}).<br>attention N = {n:,}, block {b[0]}: naive "
            f"{naive / 1e9:.3g} GB, flash {flash / 1e9:.3g} GB per head: naive / flash = <b>{naive / flash:.1f}</b>")


def tiling_explorer(accelerator: str = "H100 SXM") -> FigureExplorer:
    """A widget: accelerator, matmul tile size, sequence length and attention block size."""
    import ipywidgets as widgets
    from ..hardware import get_accelerator, list_accelerators
    from ..plots.tiling import plot_traffic_overview

    acc = get_accelerator(accelerator)
    gpus = [name for name in list_accelerators(kind="gpu") if get_accelerator(name).vendor == "NVIDIA"]
    if acc.name not in gpus:
        raise ValueError(f"accelerator must be one of {gpus}, got {accelerator!r}")
    powers = [2 ** i for i in range(8, 18)]
    controls = {
        "accelerator": widgets.Dropdown(options=gpus, value=acc.name, description="accelerator"),
        "tile": widgets.IntSlider(value=128, min=8, max=1024, step=8, description="matmul tile",
                                  continuous_update=False),
        "seq_len": widgets.SelectionSlider(options=powers, value=16384, description="sequence N",
                                           continuous_update=False),
        "block_size": widgets.SelectionSlider(options=[16, 32, 64, 128, 256, 512, 1024], value=128,
                                              description="attn block", continuous_update=False),
    }
    return FigureExplorer(controls, explore_tiling, plot_traffic_overview, describe=_describe,
                          title="Tiling explorer: traffic against tile, sequence length and block")
