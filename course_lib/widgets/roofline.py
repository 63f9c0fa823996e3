"""The roofline explorer: pick an accelerator and precision, move a matmul's shape."""

from __future__ import annotations

from ._base import FigureExplorer, pick, powers_of_two

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
    """A widget: accelerator, precision and the matmul's m, k, n and batch size move its point.

    Names are spelled as the library accepts them ('h100-sxm', 'BF16'); the sizes move in powers
    of two, so each step of a slider doubles the dimension.
    """
    import ipywidgets as widgets
    from ..hardware import _normalise_precision, get_accelerator, list_accelerators
    from ..plots.roofline import plot_roofline

    acc = get_accelerator(accelerator)
    precisions = sorted(acc.peak_flops)
    precision = _normalise_precision(precision)
    if precision not in precisions:
        raise ValueError(f"precision must be one of {precisions} for {acc.name}, got {precision!r}")
    sizes = powers_of_two(1, 16384)

    def size(value, label):
        return widgets.SelectionSlider(options=sizes, value=value, description=label, continuous_update=True)

    controls = {
        "accelerator": widgets.Dropdown(options=list_accelerators(),
                                        value=pick("accelerator", acc.name, list_accelerators()),
                                        description="accelerator"),
        "precision": widgets.Dropdown(options=precisions, value=precision, description="precision"),
        "m": size(1, "m (tokens)"),
        "k": size(8192, "k"),
        "n": size(8192, "n"),
        "batch": widgets.SelectionSlider(options=powers_of_two(1, 256), value=1, description="batch",
                                         continuous_update=True),
    }

    def on_accelerator(change):
        options = sorted(get_accelerator(change["new"]).peak_flops)
        current = controls["precision"].value
        controls["precision"].options = options
        controls["precision"].value = current if current in options else options[0]

    controls["accelerator"].observe(on_accelerator, names="value")
    def draw(points, ax=None):
        return plot_roofline(points, ax=ax)

    return FigureExplorer(controls, explore_matmul, draw,
                          describe=_describe, title="Roofline explorer")
