"""Draw pipeline schedules and the memory and time of a parallel training step."""

from __future__ import annotations

from . import _check_result, new_axes
from ..parallelism import PipelineRun, StepEstimate

__all__ = ["plot_pipeline", "plot_step_estimate"]

_MEMORY_COLOUR = {"weights": "#1f77b4", "gradients": "#ff7f0e", "optimizer": "#2ca02c",
                  "activations": "#9467bd"}
_TIME_COLOUR = {"compute": "#2ca02c", "pipeline bubble": "#bbbbbb", "tensor comm": "#1f77b4",
                "pipeline comm": "#17becf", "data comm (exposed)": "#d62728", "offload": "#ff7f0e"}


def plot_pipeline(run: PipelineRun, ax=None, title: str = ""):
    """Gantt chart: one row per stage, forward passes light, backward dark, micro-batch numbered."""
    run = _check_result("run", run, "parallelism.PipelineRun", "simulate_pipeline()")
    if not isinstance(run, PipelineRun):
        raise TypeError(f"run must be a PipelineRun, got {type(run).__name__}")
    fig, ax = new_axes(ax, figsize=(7.5, 0.5 * run.stages + 1.4))
    for i, j, fwd, s, e in zip(run.stage, run.micro, run.is_forward, run.start, run.end):
        ax.barh(i, e - s, left=s, color="#9ecae1" if fwd else "#3182bd", edgecolor="white", height=0.8)
        if run.micro_batches <= 16:
            ax.text((s + e) / 2, i, str(j), ha="center", va="center", fontsize=7,
                    color="black" if fwd else "white")
    ax.set_yticks(range(run.stages), [f"stage {i}" for i in range(run.stages)], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("time (units of one forward pass)")
    ax.set_title(title or f"{run.schedule.upper()}: p = {run.stages}, m = {run.micro_batches}, "
                          f"idle {100 * run.bubble_fraction:.1f} %")
    return fig


def plot_step_estimate(est: StepEstimate, axes=None):
    """Two panels: per-GPU memory against the chip's capacity, and the step time by cause."""
    est = _check_result("est", est, "parallelism.StepEstimate", "estimate_training_step()")
    if not isinstance(est, StepEstimate):
        raise TypeError(f"est must be a StepEstimate, got {type(est).__name__}")
    own_figure = axes is None
    if axes is None:
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), gridspec_kw={"width_ratios": [1, 2.2]})
    else:
        fig = axes[0].figure
    ax_m, ax_t = axes
    bottom = 0.0
    for key, value in est.memory.items():
        ax_m.bar(0, value / 1e9, bottom=bottom, color=_MEMORY_COLOUR.get(key, "0.5"), label=key, width=0.6)
        bottom += value / 1e9
    ax_m.axhline(est.capacity_bytes / 1e9, color="k", ls="--", lw=1)
    ax_m.annotate(f"{est.accelerator}: {est.capacity_bytes / 1e9:.0f} GB", (0, est.capacity_bytes / 1e9),
                  textcoords="offset points", xytext=(-40, 4), fontsize=8)
    ax_m.set_xticks([])
    ax_m.set_ylabel("GB per GPU")
    # Head room above the taller of the stack and the capacity line keeps the legend off both.
    ax_m.set_ylim(0, max(bottom, est.capacity_bytes / 1e9) * 1.7)
    ax_m.legend(fontsize=7, loc="upper left", ncol=2)
    ax_m.set_title("fits" if est.fits else "does not fit", color="k" if est.fits else "#b00")
    left = 0.0
    for key, value in est.times.items():
        if value > 0:
            ax_t.barh(0, value, left=left, color=_TIME_COLOUR.get(key, "0.5"), label=key, height=0.5)
            left += value
    if est.hidden_dp_s > 0:
        ax_t.barh(-0.6, est.hidden_dp_s, color="none", edgecolor="#d62728", hatch="//", height=0.3,
                  label="data comm hidden under backward")
    ax_t.set_yticks([])
    ax_t.set_ylim(-1.2, 1.6)
    ax_t.set_xlabel("seconds per step")
    ax_t.legend(fontsize=7, loc="upper left", ncol=3)
    p = est.plan
    ax_t.set_title(f"tp {p.tp} x pp {p.pp} x dp {p.dp}: {est.step_time_s:.2f} s, "
                   f"{est.tokens_per_s / 1e6:.2f} M tokens/s")
    if own_figure:                      # a figure given to us keeps its layout
        fig.tight_layout()
    return fig
