"""Draw operand reuse: a systolic array beside a GPU shared-memory tile."""

from __future__ import annotations

from . import _check_mapping, new_axes, powers_as_math, readable_log_ticks

__all__ = ["plot_reuse"]


def plot_reuse(comparison: dict, ax=None, title: str = ""):
    """MACs per operand load against array side / tile side (``systolic.reuse_comparison``)."""
    comparison = _check_mapping("comparison", comparison, "entries as reuse_comparison() returns")
    for key in ("sizes", "systolic", "gpu_tile"):
        if key not in comparison:
            raise ValueError(f"comparison must have the key {key!r} (from reuse_comparison)")
    fig, ax = new_axes(ax)
    s = comparison["sizes"]
    ax.loglog(s, comparison["systolic"], "o-", color="#d62728", label="weight-stationary array, s x s PEs")
    ax.loglog(s, comparison["gpu_tile"], "s-", color="#1f77b4", label="GPU block tile, s x s outputs")
    ax.set_xticks(s, [str(int(v)) for v in s])
    ax.set_xlabel("array side / tile side s")
    ax.set_ylabel("multiply-accumulates per operand load")
    ax.legend(fontsize=8)
    readable_log_ticks(ax, "y")
    ax.set_title(powers_as_math(title))
    return fig
