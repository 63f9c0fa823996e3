"""Draw the economics of serving and training: latency against throughput, decode time against
batch, KV cache against context, and training memory per device."""

from __future__ import annotations

import numpy as np

from . import _check_mapping, _check_result, new_axes, place_labels, readable_log_ticks
from .._validate import check_array, check_number
from ..economics import ServingCurve, TrainingMemory

__all__ = ["plot_serving_curve", "plot_decode_times", "plot_kv_cache", "plot_training_memory",
           "plot_kv_waste", "plot_batching"]


def _capacity(capacity_bytes) -> None:
    if capacity_bytes is not None:
        check_number("capacity_bytes", capacity_bytes, min_value=0, allow_min=False)


_BOUND_COLOUR = {"memory": "#1f77b4", "compute": "#d62728"}


def plot_serving_curve(curve: ServingCurve, ax=None, title: str | None = None):
    """Throughput (tokens/s) against per-token latency (ms), one point per batch size.

    Blue points are memory-bound, red compute-bound; hollow grey points do not fit in memory.
    """
    curve = _check_result("curve", curve, "economics.ServingCurve", "serving_curve()")
    fig, ax = new_axes(ax)
    lat, thr = curve.ms_per_token, curve.tokens_per_s
    ax.plot(lat, thr, color="0.7", lw=1, zorder=1)
    for b, x, y, tc, tm, fits in zip(curve.batch, lat, thr, curve.t_compute_s, curve.t_memory_s, curve.fits):
        colour = _BOUND_COLOUR["compute" if tc >= tm else "memory"]
        style = dict(color=colour) if fits else dict(mfc="none", mec="0.6")
        ms = 9 if curve.highlight == b else 6
        ax.plot(x, y, "o", ms=ms, zorder=2, **style)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("time per decode step = latency per token (ms)")
    ax.set_ylabel("throughput (tokens / s)")
    ax.plot([], [], "o", color=_BOUND_COLOUR["memory"], label="memory-bound")
    ax.plot([], [], "o", color=_BOUND_COLOUR["compute"], label="compute-bound")
    ax.plot([], [], "o", mfc="none", mec="0.6", label="does not fit in memory")
    ax.legend(fontsize=8, loc="lower right")
    ax.autoscale_view()
    readable_log_ticks(ax)
    place_labels(ax, [(x, y, f"B={b}") for b, x, y in zip(curve.batch, lat, thr)], fontsize=7, color="0.3")
    devices = f" x{curve.n_devices}" if curve.n_devices > 1 else ""
    ax.set_title(title or f"{curve.model} on {curve.accelerator}{devices}, {curve.precision}, "
                          f"context {curve.context_tokens}")
    return fig


def plot_decode_times(curve: ServingCurve, ax=None, title: str | None = None):
    """Memory time and compute time of a decode step against batch size; the step takes the larger."""
    curve = _check_result("curve", curve, "economics.ServingCurve", "serving_curve()")
    fig, ax = new_axes(ax)
    b = curve.batch
    ax.loglog(b, 1e3 * curve.t_memory_s, "-", color=_BOUND_COLOUR["memory"], label="memory time")
    ax.loglog(b, 1e3 * curve.t_compute_s, "-", color=_BOUND_COLOUR["compute"], label="compute time")
    ax.loglog(b, 1e3 * curve.t_step_s, "k--", lw=1, label="step time (max)")
    labels = []
    if np.isfinite(curve.crossover_batch):
        ax.axvline(curve.crossover_batch, color="0.5", ls=":", lw=1)
        labels.append((curve.crossover_batch, 0, f"crossover B*={curve.crossover_batch:.0f}"))
    if 0 < curve.max_batch < b.max():
        ax.axvspan(curve.max_batch, b.max(), color="0.9", zorder=0)
        labels.append((curve.max_batch, 1, "cache does not fit \u2192"))
    ax.set_xlabel("batch size (sequences)")
    ax.set_ylabel("time per decode step (ms)")
    ax.legend(fontsize=8, loc="upper left")
    ax.autoscale_view()
    readable_log_ticks(ax)
    place_labels(ax, [(x, y, text, {"xycoords": ax.get_xaxis_transform()}) for x, y, text in labels],
                 fontsize=8, color="0.35")
    ax.set_title(title or f"{curve.model}, {curve.accelerator}, context {curve.context_tokens}")
    return fig


def plot_kv_cache(contexts, cache_bytes: dict, capacity_bytes: float | None = None, ax=None, title: str = ""):
    """KV cache bytes per sequence against context length, one line per label in ``cache_bytes``."""
    cache_bytes = _check_mapping("cache_bytes", cache_bytes, "label: bytes at each context")
    _capacity(capacity_bytes)
    x = check_array("contexts", contexts, ndim=1)
    if not cache_bytes:
        raise ValueError("cache_bytes must map at least one label to an array of bytes")
    fig, ax = new_axes(ax)
    for label, y in cache_bytes.items():
        y = check_array(f"cache_bytes[{label!r}]", y)
        if y.shape != x.shape:
            raise ValueError(f"cache_bytes[{label!r}] must have the shape of contexts {x.shape}")
        ax.plot(x, y / 1e9, lw=1.8, label=label)
    ax.set_xlabel("context length (tokens)")
    ax.set_ylabel("KV cache per sequence (GB)")
    if capacity_bytes:
        ax.axhline(capacity_bytes / 1e9, color="0.4", ls=":", lw=1)
        # The legend sits just under the device-memory line, which keeps its label at the right.
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(0, 0.88))
        ax.annotate("device memory", (1, capacity_bytes / 1e9), xycoords=ax.get_yaxis_transform(),
                    textcoords="offset points", xytext=(-2, 3), ha="right", fontsize=8, color="0.35")
    else:
        ax.legend(fontsize=8, loc="upper left")
    ax.set_title(title)
    return fig


def plot_training_memory(breakdowns: dict, capacity_bytes: float | None = None, ax=None, title: str = ""):
    """Stacked bars of weights, gradients and optimizer state per device, one bar per label."""
    breakdowns = _check_mapping("breakdowns", breakdowns, "label: TrainingMemory")
    _capacity(capacity_bytes)
    if not breakdowns or not all(isinstance(v, TrainingMemory) for v in breakdowns.values()):
        raise TypeError("breakdowns must map labels to TrainingMemory results")
    fig, ax = new_axes(ax)
    labels = list(breakdowns)
    x = np.arange(len(labels))
    bottom = np.zeros(len(labels))
    parts = [("weights (16-bit)", "weights_bytes", "#1f77b4"), ("gradients (16-bit)", "gradients_bytes", "#ff7f0e"),
             ("optimizer (fp32 master, m, v)", "optimizer_bytes", "#2ca02c")]
    for name, attr, colour in parts:
        h = np.array([getattr(breakdowns[k], attr) for k in labels]) / 1e9
        ax.bar(x, h, bottom=bottom, color=colour, label=name)
        bottom += h
    if capacity_bytes:
        ax.axhline(capacity_bytes / 1e9, color="0.3", ls=":", lw=1, label="device memory")
    ax.set_xticks(x, labels, fontsize=8)
    ax.set_ylabel("model state per device (GB)")
    ax.legend(fontsize=8)
    ax.set_title(title)
    return fig


def plot_kv_waste(allocations, ax=None, title: str = ""):
    """Wasted fraction of reserved KV-cache slots against the paged block size, with the
    contiguous (reserve the maximum length) scheme as a horizontal line.

    ``allocations`` is a sequence of :class:`KVAllocation` for the same requests, one per block size.
    """
    allocs = _check_result("allocations", allocations, "economics.KVAllocation", "kv_allocation", many=True)
    fig, ax = new_axes(ax)
    blocks = np.array([a.block_tokens for a in allocs])
    ax.semilogx(blocks, [100 * a.paged_waste for a in allocs], "o-", base=2, label="paged: last block part-filled")
    ax.axhline(100 * allocs[0].contiguous_waste, color="#d62728", ls="--",
               label=f"contiguous: {allocs[0].max_tokens} tokens reserved per request")
    ax.set_ylim(0, 100)
    ax.set_xlabel("block size (tokens per block)")
    ax.set_ylabel("reserved KV slots holding no token (%)")
    ax.legend(fontsize=8, loc="center right")
    ax.set_title(title or f"{allocs[0].lengths.size} requests: KV-cache waste")
    return fig


def plot_batching(loads, static_runs, continuous_runs, step_s: float = 1.0, ax=None, title: str = ""):
    """Throughput and p99 latency of static and continuous batching against offered load.

    Two panels when ``ax`` is None: tokens per step against load, and p99 latency (in seconds
    at ``step_s`` per decode step) against load, log scale.
    """
    import matplotlib.pyplot as plt
    x = check_array("loads", loads, ndim=1)
    if x.size == 0 or np.any(x <= 0):
        raise ValueError(f"loads must hold at least one load, each > 0, got {loads!r:.60}")
    runs_s = _check_result("static_runs", static_runs, "economics.BatchingRun", "simulate_batching", many=True)
    runs_c = _check_result("continuous_runs", continuous_runs, "economics.BatchingRun", "simulate_batching",
                           many=True)
    if not len(runs_s) == len(runs_c) == x.size:
        raise ValueError(f"static_runs and continuous_runs must hold one BatchingRun per load ({x.size}), "
                         f"got {len(runs_s)} and {len(runs_c)}")
    step_s = check_number("step_s", step_s, min_value=0, allow_min=False)
    if ax is None:
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
        fig.subplots_adjust(left=0.07, right=0.98, bottom=0.15, top=0.88, wspace=0.25)
    else:
        fig, ax1, ax2 = ax.figure, ax, None
    for runs, label, colour in ((runs_s, "static", "#d62728"), (runs_c, "continuous", "#1f77b4")):
        ax1.plot(x, [r.tokens_per_step for r in runs], "o-", color=colour, label=label)
        if ax2 is not None:
            ax2.semilogy(x, [r.latency_percentile_steps(99) * step_s for r in runs], "o-", color=colour, label=label)
    ax1.axhline(runs_c[0].slots, color="0.5", ls=":", lw=1)
    ax1.set_xlabel("offered load (fraction of the slots' token rate)")
    ax1.set_ylabel("throughput (tokens per decode step)")
    ax1.legend(fontsize=8)
    ax1.set_title(title or f"{runs_c[0].slots} slots")
    if ax2 is not None:
        ax2.set_xlabel("offered load (fraction of the slots' token rate)")
        ax2.set_ylabel("p99 latency (s)" if step_s != 1.0 else "p99 latency (decode steps)")
        ax2.legend(fontsize=8)
        ax2.set_title("tail latency")
    return fig
