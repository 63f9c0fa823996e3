"""The parallelism explorer: model size, GPU count and the parallelism mix give memory and step time."""

from __future__ import annotations

from ._base import FigureExplorer, fixed_figure, pick

__all__ = ["parallelism_explorer", "explore_plan"]

_ACCELERATORS = ("H100 SXM", "H200", "B200", "A100 SXM 80GB", "MI300X")


def explore_plan(accelerator: str, params_billion: float, n_gpus: int, tp: int, pp: int,
                 zero_stage: int, recompute: str, offload: bool, micro_batches: int = 32,
                 tokens_per_step: float = 4 * 2 ** 20):
    """Compute step of the explorer: a model shaped for the size, the plan, the estimate.

    Micro-batches are capped at the sequences each data-parallel replica gets per step.
    """
    from .._validate import check_int, check_number
    params_billion = check_number("params_billion", params_billion, min_value=0, allow_min=False, max_value=1e5)
    micro_batches = check_int("micro_batches", micro_batches, min_value=1, max_value=100_000)
    tokens_per_step = check_number("tokens_per_step", tokens_per_step, min_value=1, max_value=1e12)
    from ..parallelism import ParallelPlan, estimate_training_step, transformer_for_params
    model = transformer_for_params(params_billion * 1e9)
    plan = ParallelPlan(n_gpus, tp=tp, pp=pp, zero_stage=zero_stage, micro_batches=1,
                        recompute=recompute, offload=offload)
    sequences = int(tokens_per_step // (plan.dp * model.seq_len))    # per replica
    if sequences < 1:
        raise ValueError(f"{plan.dp} data-parallel replicas leave less than one {model.seq_len}-token "
                         f"sequence each: use fewer GPUs or more tensor/pipeline parallelism")
    plan = ParallelPlan(n_gpus, tp=tp, pp=pp, zero_stage=zero_stage,
                        micro_batches=min(micro_batches, sequences), recompute=recompute, offload=offload)
    return estimate_training_step(model, plan, accelerator, tokens_per_step)


def _describe(est) -> str:
    mem = est.memory_bytes / 1e9
    m = est.model
    tiers = ", ".join(f"{k} on {v}" for k, v in est.comm_tier.items() if est.comm_bytes[k] > 0) or "none"
    verdict = "fits" if est.fits else "<span style='color:#b00'>does not fit</span>"
    return (f"{m.n_params / 1e9:,.1f} B parameters ({m.n_layers} layers, width {m.d_model}); "
            f"<b>{mem:,.1f} GB per GPU</b> of {est.capacity_bytes / 1e9:.0f} "
            f"({verdict}); "
            f"step <b>{est.step_time_s:,.2f} s</b>; traffic: {tiers}")


def _draw(est, ax=None):
    from ..plots.parallelism import plot_step_estimate
    if ax is None:
        _, ax = fixed_figure((9, 3.4), 2, width_ratios=[1, 2.2], left=0.08, right=0.96, bottom=0.17,
                             top=0.89, wspace=0.06)
    return plot_step_estimate(est, axes=tuple(ax))


def parallelism_explorer(accelerator: str = "H100 SXM", params_billion: float = 70.0) -> FigureExplorer:
    """A widget: pick a chip, a model size, a GPU count and tp x pp, a ZeRO stage, recomputation.

    ``accelerator`` is spelled as the library accepts it ('h100', 'H100-SXM').
    """
    import ipywidgets as widgets
    from .._validate import check_number
    from ..hardware import get_accelerator

    accelerator = pick("accelerator", accelerator, _ACCELERATORS, lambda a: get_accelerator(a).name)
    params_billion = check_number("params_billion", params_billion, min_value=1.0, max_value=10 ** 3.3)

    powers = [2 ** i for i in range(0, 14)]
    controls = {
        "accelerator": widgets.Dropdown(options=_ACCELERATORS, value=accelerator, description="GPU"),
        "params_billion": widgets.FloatLogSlider(value=params_billion, base=10, min=0, max=3.3, step=0.05,
                                                 description="params (B)", continuous_update=True),
        "n_gpus": widgets.Dropdown(options=powers[3:], value=1024, description="GPUs"),
        "tp": widgets.Dropdown(options=powers[:5], value=8, description="tensor"),
        "pp": widgets.Dropdown(options=powers[:7], value=4, description="pipeline"),
        "zero_stage": widgets.Dropdown(options=[0, 1, 2, 3], value=1, description="ZeRO stage"),
        "recompute": widgets.Dropdown(options=["none", "selective", "full"], value="selective",
                                      description="recompute"),
        "offload": widgets.Checkbox(value=False, description="offload optimizer"),
        "micro_batches": widgets.Dropdown(options=powers[:9], value=32, description="micro-batches"),
    }
    return FigureExplorer(controls, explore_plan, _draw, describe=_describe,
                          height_px=330, title="Parallelism explorer (4 M tokens per step)")
