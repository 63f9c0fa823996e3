"""The serving explorer: model, accelerator, precision, batch size and context length."""

from __future__ import annotations

from ._base import FigureExplorer, pick, powers_of_two

__all__ = ["serving_explorer", "explore_serving"]


def explore_serving(model: str, accelerator: str, precision: str, batch: int, context_tokens: int,
                    n_devices: int = 1, price_usd_per_device_hour: float | None = None):
    """Compute step of the explorer: the serving curve with the chosen batch highlighted.

    A context of 0 tokens is refused: with no KV cache the batch is bounded by nothing but the
    weights, and the curve says nothing about serving.
    """
    from .._validate import check_int, check_number
    batch = check_int("batch", batch, min_value=1, max_value=2 ** 20)
    if price_usd_per_device_hour is not None:
        check_number("price_usd_per_device_hour", price_usd_per_device_hour, min_value=0)
    from ..economics import EXAMPLE_PRICE_USD_PER_DEVICE_HOUR, serving_curve
    check_int("context_tokens", context_tokens, min_value=1)
    batches = sorted({2 ** k for k in range(0, 11)} | {int(batch)})
    curve = serving_curve(model, accelerator, context_tokens, precision, batches, n_devices, highlight=batch)
    price = EXAMPLE_PRICE_USD_PER_DEVICE_HOUR if price_usd_per_device_hour is None else price_usd_per_device_hour
    return curve, price


def _describe(result) -> str:
    from ..economics import (PRECISION_SCHEMES, cost_per_million_tokens_usd, decode_step, get_model,
                             kv_cache_bytes)
    curve, price = result
    b = curve.highlight
    step = decode_step(curve.model, curve.accelerator, b, curve.context_tokens, curve.precision, curve.n_devices)
    kv_prec = PRECISION_SCHEMES[curve.precision][1]
    kv_gb = kv_cache_bytes(curve.model, curve.context_tokens, b, kv_prec) / 1e9
    usd = cost_per_million_tokens_usd(step.tokens_per_s, price, curve.n_devices)
    fit = ("fits" if step.fits else "<span style='color:#b00'>does NOT fit</span>")
    window = get_model(curve.model).context_length_tokens
    beyond = (f" (past {curve.model}'s {window:,}-token window)" if curve.context_tokens > window else "")
    cross = "never (cache bytes dominate)" if curve.crossover_batch == float("inf") else f"{curve.crossover_batch:,.0f}"
    return (f"batch {b}: step &ge; <b>{1e3 * step.t_step_s:,.2f} ms</b> ({step.bound}-bound), "
            f"<b>{step.tokens_per_s:,.0f} tokens/s</b>, KV cache {kv_gb:,.1f} GB{beyond}, weights+cache {fit} "
            f"(max batch {curve.max_batch:,}); compute-bound from batch {cross}; "
            f"<b>${usd:,.3f} per million tokens</b> at an assumed ${price:.2f}/device-hour")


#: Context lengths on the slider: powers of two, 128 tokens to 32k.
CONTEXTS = tuple(powers_of_two(128, 32768))


def serving_explorer(model: str = "Llama 3 8B", accelerator: str = "H100 SXM", precision: str = "bf16",
                     batch: int = 16, context_tokens: int = 1024) -> FigureExplorer:
    """A widget: move model, accelerator, precision, batch and context; see latency vs throughput.

    Names are spelled as the library accepts them ('llama-3-8b', 'h100 sxm', 'BF16'). Batch and
    context move in powers of two (a batch or context given here is added to the slider). A
    context past the model's own window is computed, and the text says so.
    """
    import ipywidgets as widgets
    from .._validate import check_choice, check_int
    from ..economics import PRECISION_SCHEMES, get_model, list_models
    from ..hardware import get_accelerator, list_accelerators
    from ..plots.economics import plot_serving_curve

    model = pick("model", model, list_models(), lambda m: get_model(m).name)
    # Accelerators with a BF16 path (the 16-bit compute of every scheme here).
    accs = [a for a in list_accelerators() if "bf16" in get_accelerator(a).peak_flops]
    accelerator = pick("accelerator", accelerator, accs, lambda a: get_accelerator(a).name)
    precision = check_choice("precision", precision, PRECISION_SCHEMES)
    batch = check_int("batch", batch, min_value=1, max_value=1024)
    context_tokens = check_int("context_tokens", context_tokens, min_value=1, max_value=max(CONTEXTS))
    controls = {
        "model": widgets.Dropdown(options=list_models(), value=model, description="model"),
        "accelerator": widgets.Dropdown(options=accs, value=accelerator, description="accelerator"),
        "precision": widgets.Dropdown(options=list(PRECISION_SCHEMES), value=precision,
                                      description="precision"),
        "batch": widgets.SelectionSlider(options=powers_of_two(1, 1024, [batch]), value=batch,
                                         description="batch", continuous_update=True),
        "context_tokens": widgets.SelectionSlider(options=sorted(set(CONTEXTS) | {context_tokens}),
                                                  value=context_tokens, description="context",
                                                  continuous_update=True),
        "n_devices": widgets.SelectionSlider(options=[1, 2, 4, 8], value=1, description="devices",
                                             continuous_update=True),
    }

    def draw(result, ax=None):
        return plot_serving_curve(result[0], ax=ax)

    return FigureExplorer(controls, explore_serving, draw,
                          describe=_describe, title="Serving explorer: latency against throughput")
