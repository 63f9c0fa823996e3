"""Draw attention results: HBM traffic and extra memory against sequence length."""

from __future__ import annotations

import numpy as np

from . import _check_mapping, _check_result, new_axes
from ..attention import MemorySweep, TrafficSweep

__all__ = ["plot_attention_traffic", "plot_attention_memory", "plot_online_softmax"]


def plot_attention_traffic(sweep: TrafficSweep, ax=None, title: str | None = None):
    """HBM bytes of one head's forward pass against N: naive, FlashAttention, the paper's Algorithm 1."""
    sweep = _check_result("sweep", sweep, "attention.TrafficSweep", "attention_traffic_sweep()")
    fig, ax = new_axes(ax)
    b = sweep.bytes_per_element
    ax.loglog(sweep.n, sweep.naive_elements * b / 1e6, "-", color="#d62728", lw=2, label="naive: 4N² + 4Nd")
    bq, bk = sweep.block_size
    ax.loglog(sweep.n, sweep.flash_elements * b / 1e6, "-", color="#1f77b4", lw=2,
              label=f"flash, block {bq} x {bk} (formula)")
    ax.loglog(sweep.n, sweep.paper_elements * b / 1e6, "--", color="#9467bd", lw=1.5,
              label=f"paper's Algorithm 1, M = {sweep.sram_elements:,} elements")
    if len(sweep.counted_n):
        ax.loglog(sweep.counted_n, sweep.counted_elements * b / 1e6, "o", mfc="none", mec="k", ms=8,
                  label="flash, counted by running it")
    if sweep.current_n:
        i = int(np.argmin(np.abs(sweep.n - sweep.current_n)))
        ax.axvline(sweep.n[i], color="0.6", ls=":", lw=1)
    ax.set_xlabel("sequence length N")
    ax.set_ylabel(f"HBM traffic per head (MB at {b:g} B/element)")
    ax.set_title(title or f"attention forward, d = {sweep.d}")
    # Traffic grows with N, so the upper left is empty; a fixed place spares "best"'s search
    # over every point on each redraw (an explorer redraws this).
    ax.legend(fontsize=8, loc="upper left")
    return fig


def plot_attention_memory(sweep: MemorySweep, ax=None, title: str | None = None):
    """Extra memory against N (log-log): the N x N scores against FlashAttention's blocks."""
    sweep = _check_result("sweep", sweep, "attention.MemorySweep", "memory_sweep()")
    fig, ax = new_axes(ax)
    ax.loglog(sweep.n, sweep.naive_bytes, "-", color="#d62728", lw=2, label="naive: N² scores")
    ax.loglog(sweep.n, sweep.flash_bytes, "-", color="#1f77b4", lw=2,
              label=f"flash: blocks {sweep.block_size[0]} x {sweep.block_size[1]} + N statistics")
    if sweep.capacity_bytes:
        ax.axhline(sweep.capacity_bytes, color="0.4", ls="--", lw=1, label=sweep.capacity_label or "capacity")
    if sweep.measured_n is not None and len(sweep.measured_n):
        ax.loglog(sweep.measured_n, sweep.measured_naive_bytes, "o", mfc="none", mec="#d62728", ms=8,
                  label="naive, measured (tracemalloc, float64)")
        ax.loglog(sweep.measured_n, sweep.measured_flash_bytes, "o", mfc="none", mec="#1f77b4", ms=8,
                  label="flash, measured (tracemalloc, float64)")
    ax.set_xlabel("sequence length N")
    ax.set_ylabel("extra memory (bytes)")
    ax.set_title(title or f"memory beyond Q, K, V, O: one head, d = {sweep.d}, {sweep.bytes_per_element:g} B/element")
    ax.legend(fontsize=8)
    return fig


def plot_online_softmax(trace, ax=None):
    """The running maximum and the running estimate of one output entry as key blocks arrive.

    ``trace`` is a dict with arrays ``keys_seen``, ``running_max``, ``estimate`` and the
    float ``exact``.
    """
    trace = _check_mapping("trace", trace, "arrays keys_seen, running_max, estimate and the float exact")
    fig, ax = new_axes(ax, figsize=(7, 3.2))
    ax.step(trace["keys_seen"], trace["estimate"], where="post", color="#1f77b4", lw=2,
            label="o / l after each key block")
    ax.axhline(trace["exact"], color="k", ls="--", lw=1, label="exact softmax(s) v")
    ax2 = ax.twinx()
    ax2.step(trace["keys_seen"], trace["running_max"], where="post", color="#ff7f0e", lw=1.2)
    ax2.set_ylabel("running max m", color="#ff7f0e")
    ax.set_xlabel("keys seen")
    ax.set_ylabel("output entry")
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title("online softmax: one query row, blocks of keys", fontsize=10)
    return fig
