"""Draw the interconnect hierarchy and what a simulated ring put on each link."""

from __future__ import annotations

import numpy as np

from . import _check_result, new_axes, plural
from .._validate import check_array, check_number
from ..collectives import Link, RingTrace

__all__ = ["plot_link_times", "plot_ring_traffic"]

_TIER_COLOUR = {"hbm": "#2ca02c", "nvlink": "#1f77b4", "pcie": "#ff7f0e", "network": "#d62728"}


def plot_link_times(links: list[Link], nbytes: float, ax=None, title: str | None = None):
    """Horizontal bars: seconds to move ``nbytes`` once over each link (alpha + S/beta), log scale."""
    links = _check_result("links", links, "collectives.Link", "interconnect_hierarchy()", many=True)
    check_number("nbytes", nbytes, min_value=0, allow_min=False)
    if not links:
        raise ValueError("links must hold at least one Link")
    fig, ax = new_axes(ax)
    times = [link.transfer_time_s(nbytes) for link in links]
    y = np.arange(len(links))[::-1]
    ax.barh(y, times, color=[_TIER_COLOUR.get(link.tier, "0.5") for link in links])
    for yi, t, link in zip(y, times, links):
        ax.annotate(f"{t * 1e3:,.2f} ms  ({link.bandwidth_bytes_per_s / 1e9:,.0f} GB/s per direction)",
                    (t, yi), textcoords="offset points", xytext=(4, -3), fontsize=8)
    ax.set_yticks(y, [link.name for link in links], fontsize=8)
    ax.set_xscale("log")
    ax.set_xlim(min(times) / 2, max(times) * 30)
    ax.set_xlabel("time to move the tensor once (s, log scale)")
    ax.set_title(title or f"moving {nbytes / 1e9:.3g} GB")
    return fig


def plot_ring_traffic(trace: RingTrace, predicted_bytes=None, ax=None, title: str = ""):
    """Bars: bytes the simulation sent over each link r -> r+1; dots: the formula's prediction."""
    trace = _check_result("trace", trace, "collectives.RingTrace", "simulate_ring_all_reduce()")
    if not isinstance(trace, RingTrace):
        raise TypeError(f"trace must be a RingTrace, got {type(trace).__name__}")
    n = len(trace.link_bytes)
    predicted = None
    if predicted_bytes is not None:
        predicted = check_array("predicted_bytes", predicted_bytes).ravel()
        if predicted.size not in (1, n):
            raise ValueError(f"predicted_bytes must hold one value or one per link ({n}), got {predicted.size}")
    fig, ax = new_axes(ax)
    x = np.arange(n)
    ax.bar(x, trace.link_bytes, color="#1f77b4", label="simulated")
    if predicted is not None:
        ax.plot(x, np.broadcast_to(predicted, (n,)), "o", color="#d62728", label="formula")
    ax.set_xticks(x, [f"{r}->{(r + 1) % n}" for r in x], fontsize=8)
    ax.set_xlabel("link")
    ax.set_ylabel("bytes sent")
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(title or f"ring all-reduce over {plural(n, 'rank')}, {plural(trace.n_steps, 'step')}")
    return fig
