"""The serving explorer: model, accelerator, precision, batch size and context length."""

from __future__ import annotations

from ._base import FigureExplorer

__all__ = ["serving_explorer", "explore_serving"]


def explore_serving(model: str, accelerator: str, precision: str, batch: int, context_tokens: int,
                    n_devices: int = 1, price_usd_per_device_hour: float | None = None):
    """Compute step of the explorer: the serving curve with the chosen batch highlighted."""
    from .._validate import check_int, check_number
    batch = check_int("batch", batch, min_value=1, max_value=2 ** 20)
    if price_usd_per_device_hour is not None:
        check_number("price_usd_per_device_hour", price_usd_per_device_hour, min_value=0)
    from ..economics import EXAMPLE_PRICE_USD_PER_DEVICE_HOUR, serving_curve
    batches = sorted({2 ** k for k in range(0, 11)} | {int(batch)})
    curve = serving_curve(model, accelerator, context_tokens, precision, batches, n_devices, highlight=batch)
    price = EXAMPLE_PRICE_USD_PER_DEVICE_HOUR if price_usd_per_device_hour is None else price_usd_per_device_hour
    return curve, price


def _describe(result) -> str:
    from ..economics import PRECISION_SCHEMES, cost_per_million_tokens_usd, decode_step, kv_cache_bytes
    curve, price = result
    b = curve.highlight
    step = decode_step(curve.model, curve.accelerator, b, curve.context_tokens, curve.precision, curve.n_devices)
    kv_prec = PRECISION_SCHEMES[curve.precision][1]
    kv_gb = kv_cache_bytes(curve.model, curve.context_tokens, b, kv_prec) / 1e9
    usd = cost_per_million_tokens_usd(step.tokens_per_s, price, curve.n_devices)
    fit = ("fits" if step.fits else "<span style='color:#b00'>does NOT fit</span>")
    cross = "never (cache bytes dominate)" if curve.crossover_batch == float("inf") else f"{curve.crossover_batch:,.0f}"
    return (f"batch {b}: step &ge; <b>{1e3 * step.t_step_s:,.2f} ms</b> ({step.bound}-bound), "
            f"<b>{step.tokens_per_s:,.0f} tokens/s</b>, KV cache {kv_gb:,.1f} GB, weights+cache {fit} "
            f"(max batch {curve.max_batch:,}); compute-bound from batch {cross}; "
            f"<b>${usd:,.3f} per million tokens</b> at an assumed ${price:.2f}/device-hour")


def serving_explorer(model: str = "Llama 3 8B", accelerator: str = "H100 SXM", precision: str = "bf16",
                     batch: int = 16, context_tokens: int = 1024) -> FigureExplorer:
    """A widget: move model, accelerator, precision, batch and context; see latency vs throughput."""
    from .._validate import check_int
    batch = check_int("batch", batch, min_value=1, max_value=2 ** 20)
    context_tokens = check_int("context_tokens", context_tokens, min_value=1, max_value=2 ** 24)
    import ipywidgets as widgets
    from ..economics import PRECISION_SCHEMES, get_model, list_models
    from ..hardware import get_accelerator, list_accelerators
    from ..plots.economics import plot_serving_curve

    get_model(model)
    get_accelerator(accelerator)
    # Accelerators with a BF16 path (the 16-bit compute of every scheme here).
    accs = [a for a in list_accelerators() if "bf16" in get_accelerator(a).peak_flops]
    controls = {
        "model": widgets.Dropdown(options=list_models(), value=get_model(model).name, description="model"),
        "accelerator": widgets.Dropdown(options=accs, value=get_accelerator(accelerator).name,
                                        description="accelerator"),
        "precision": widgets.Dropdown(options=list(PRECISION_SCHEMES), value=precision, description="precision"),
        "batch": widgets.IntSlider(value=batch, min=1, max=1024, description="batch", continuous_update=False),
        "context_tokens": widgets.IntSlider(value=context_tokens, min=0, max=32768, step=256,
                                            description="context", continuous_update=False),
        "n_devices": widgets.IntSlider(value=1, min=1, max=8, description="devices", continuous_update=False),
    }
    return FigureExplorer(controls, explore_serving, lambda r: plot_serving_curve(r[0]),
                          describe=_describe, title="Serving explorer: latency against throughput")
