"""The tiling explorer: tile size moves the matmul's traffic, sequence length and block size attention's."""

from __future__ import annotations

from ._base import FigureExplorer, fixed_figure, pick, powers_of_two

__all__ = ["tiling_explorer", "explore_tiling", "matmul_precision"]

_MATMUL = (4096, 4096, 4096)
_HEAD_DIM = 64


def matmul_precision(accelerator: str) -> str:
    """The 16-bit tensor-core format the explorer's matmul uses: BF16, or FP16 where the chip has
    no BF16 (the V100). Both are 2 bytes, so traffic is the same; the peak is the chip's own."""
    from ..hardware import get_accelerator
    peaks = get_accelerator(accelerator).peak_flops
    return "bf16" if "bf16" in peaks else "fp16"


def explore_tiling(accelerator: str, tile: int, seq_len: int, block_size: int):
    """Compute step: a 4096^3 16-bit matmul's traffic against tile size (with the largest tile
    that fits ``accelerator``), and one attention head's traffic against N.

    Formulas only (no simulation), so one update costs a few milliseconds.
    """
    from .._validate import check_int
    tile = check_int("tile", tile, min_value=1)
    seq_len = check_int("seq_len", seq_len, min_value=1)
    import numpy as np
    from ..attention import attention_traffic_sweep
    from ..tiling import tile_limit, traffic_sweep

    limit = tile_limit(accelerator, matmul_precision(accelerator)).largest
    tiles = np.unique(np.geomspace(8, 2048, 40).astype(int))
    matmul = traffic_sweep(*_MATMUL, tiles=tiles, bytes_per_element=2, limit=limit, current_tile=tile)
    ns = np.unique(np.geomspace(256, 131072, 28).astype(int))
    attention = attention_traffic_sweep(ns, d=_HEAD_DIM, block_size=block_size, current_n=seq_len)
    return accelerator, matmul, attention


def _matmul_time(accelerator: str, traffic):
    """The matmul's time bound on ``accelerator`` at this tile: max(FLOP / peak, bytes / bandwidth)."""
    from ..hardware import get_accelerator
    acc = get_accelerator(accelerator)
    t_compute = traffic.flops / acc.peak(matmul_precision(accelerator))
    t_memory = traffic.bytes_moved / acc.mem_bandwidth
    return max(t_compute, t_memory), ("compute" if t_compute >= t_memory else "memory")


def _describe(result) -> str:
    from ..attention import flash_attention_traffic, naive_attention_traffic
    accelerator, matmul, attention = result
    t = _tiled(matmul)
    seconds, bound = _matmul_time(accelerator, t)
    n, b = attention.current_n, attention.block_size
    naive = naive_attention_traffic(n, _HEAD_DIM).bytes_moved(2)
    flash = flash_attention_traffic(n, _HEAD_DIM, b).bytes_moved(2)
    fits = "fits" if matmul.current_tile <= matmul.tile_limit else "does <b>not</b> fit"
    return (f"matmul tile {matmul.current_tile}: {t.bytes_moved / 1e9:.2f} GB, intensity "
            f"<b>{t.intensity_flops_per_byte:.0f}</b> FLOP/B; on the {accelerator} "
            f"({matmul_precision(accelerator).upper()}) at least <b>{seconds * 1e3:.2f} ms</b>, "
            f"{bound}-bound; the tile {fits} on chip (largest {matmul.tile_limit}).<br>"
            f"attention N = {n:,}, block {b[0]}: naive {naive / 1e9:.3g} GB, flash {flash / 1e9:.3g} GB "
            f"per head: naive / flash = <b>{naive / flash:.1f}</b>")


def _draw(result, ax=None):
    from ..plots.attention import plot_attention_traffic
    from ..plots.tiling import plot_tile_traffic
    accelerator, matmul, attention = result
    if ax is None:
        _, ax = fixed_figure((11, 4.2), 2, left=0.07, right=0.98, bottom=0.13, top=0.91, wspace=0.25)
    left, right = ax
    seconds, bound = _matmul_time(accelerator, _tiled(matmul))
    plot_tile_traffic(matmul, ax=left, title=f"4096³ {matmul_precision(accelerator).upper()} matmul on the "
                                             f"{accelerator}: {seconds * 1e3:.2f} ms, {bound}-bound")
    plot_attention_traffic(attention, ax=right)
    return left.figure


def _tiled(matmul):
    from ..tiling import tiled_matmul_traffic
    return tiled_matmul_traffic(*_MATMUL, matmul.current_tile, bytes_per_element=2)


def tiling_explorer(accelerator: str = "H100 SXM") -> FigureExplorer:
    """A widget: accelerator (its on-chip tile limit, peak and bandwidth), matmul tile size,
    sequence length and attention block size."""
    import ipywidgets as widgets
    from ..hardware import get_accelerator, list_accelerators

    gpus = [name for name in list_accelerators(kind="gpu") if get_accelerator(name).vendor == "NVIDIA"]
    if get_accelerator(accelerator).name not in gpus:
        raise ValueError(f"accelerator must be one of {gpus}, got {accelerator!r}")
    controls = {
        "accelerator": widgets.Dropdown(options=gpus, value=pick("accelerator", accelerator, gpus,
                                                                 lambda a: get_accelerator(a).name),
                                        description="accelerator"),
        "tile": widgets.SelectionSlider(options=powers_of_two(8, 1024), value=128, description="matmul tile",
                                        continuous_update=True),
        "seq_len": widgets.SelectionSlider(options=powers_of_two(256, 131072), value=16384,
                                           description="sequence N", continuous_update=True),
        "block_size": widgets.SelectionSlider(options=powers_of_two(16, 1024), value=128,
                                              description="attn block", continuous_update=True),
    }
    return FigureExplorer(controls, explore_tiling, _draw, describe=_describe,
                          title="Tiling explorer: traffic against tile, sequence length and block")
