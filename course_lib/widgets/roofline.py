"""The roofline explorer: pick an accelerator and precision, move a matmul's shape."""

from __future__ import annotations

from ._base import FigureExplorer

__all__ = ["roofline_explorer", "explore_matmul"]


def explore_matmul(accelerator: str, precision: str, m: int, k: int, n: int, batch: int):
    """Compute step of the explorer: the matmul and two reference kernels on the roofline."""
    from ..roofline import elementwise_kernel, matmul_kernel, place_kernel
    kernels = [
        matmul_kernel(f"your matmul ({batch}x {m}x{k}x{n})", m, k, n, precision, batch),
        elementwise_kernel("GELU, 2^24 elements", 2 ** 24, 8, precision),
    ]
    return [place_kernel(kern, accelerator, precision) for kern in kernels]


def _describe(points) -> str:
    p = points[0]
    return (f"intensity <b>{p.intensity_flops_per_byte:,.1f}</b> FLOP/B vs ridge {p.ridge_point:,.0f}: "
            f"<b>{p.bound}-bound</b>, at most {p.attainable_flops / 1e12:,.1f} TFLOP/s "
            f"({100 * p.fraction_of_peak:.1f}% of peak); time &ge; {p.t_min_s * 1e6:,.1f} &micro;s")


def roofline_explorer(accelerator: str = "H100 SXM", precision: str = "bf16") -> FigureExplorer:
    """A widget: accelerator, precision and the matmul's m, k, n and batch size move its point."""
    import ipywidgets as widgets
    from ..hardware import get_accelerator, list_accelerators
    from ..plots.roofline import plot_roofline

    acc = get_accelerator(accelerator)
    precisions = sorted(acc.peak_flops)
    if precision not in precisions:
        raise ValueError(f"precision must be one of {precisions} for {acc.name}, got {precision!r}")
    controls = {
        "accelerator": widgets.Dropdown(options=list_accelerators(), value=acc.name, description="accelerator"),
        "precision": widgets.Dropdown(options=precisions, value=precision, description="precision"),
        "m": widgets.IntSlider(value=1, min=1, max=16384, description="m (tokens)", continuous_update=False),
        "k": widgets.IntSlider(value=8192, min=1, max=16384, description="k", continuous_update=False),
        "n": widgets.IntSlider(value=8192, min=1, max=16384, description="n", continuous_update=False),
        "batch": widgets.IntSlider(value=1, min=1, max=256, description="batch", continuous_update=False),
    }

    def on_accelerator(change):
        options = sorted(get_accelerator(change["new"]).peak_flops)
        current = controls["precision"].value
        controls["precision"].options = options
        controls["precision"].value = current if current in options else options[0]

    controls["accelerator"].observe(on_accelerator, names="value")
    return FigureExplorer(controls, explore_matmul, lambda pts: plot_roofline(pts),
                          describe=_describe, title="Roofline explorer")
