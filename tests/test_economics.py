"""Tests of course_lib.economics: training and serving arithmetic, checked a second way."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from course_lib import economics as ec
from course_lib.hardware import get_accelerator
from course_lib.roofline import place_kernel

MODELS = ec.list_models()
SETTINGS = settings(max_examples=40, deadline=None)


# ---------------------------------------------------------------------------- models as data

def test_catalog_has_mha_gqa_and_mqa_with_sources():
    kinds = {ec.get_model(n).attention for n in MODELS}
    assert kinds == {"MHA", "GQA", "MQA"}
    for n in MODELS:
        m = ec.get_model(n)
        assert m.source.strip(), n
        assert m.heads % m.kv_heads == 0


@pytest.mark.parametrize("name", MODELS)
def test_param_count_matches_released_checkpoint(name):
    m = ec.get_model(name)
    if m.params_counted is None:
        pytest.skip("no exact count stored")
    assert m.params + m.layers * m.rope_buffer_values_per_layer == m.params_counted


def test_param_count_by_summing_numpy_tensors():
    """Build every weight tensor of a tiny odd-shaped config and count elements directly."""
    m = dataclasses.replace(ec.get_model("Llama 3 8B"), layers=3, hidden_size=40, heads=5, kv_heads=1,
                            head_dim=8, ffn_size=67, vocab_size=101)
    d, q, kv = m.hidden_size, m.heads * m.head_dim, m.kv_heads * m.head_dim
    per_layer = [np.zeros((d, q)), np.zeros((d, kv)), np.zeros((d, kv)), np.zeros((q, d)),
                 np.zeros((d, m.ffn_size)), np.zeros((d, m.ffn_size)), np.zeros((m.ffn_size, d)),
                 np.zeros(d), np.zeros(d)]
    tensors = per_layer * m.layers + [np.zeros((m.vocab_size, d)), np.zeros((m.vocab_size, d)), np.zeros(d)]
    assert sum(t.size for t in tensors) == ec.count_params(m)


def test_get_model_forgiving_and_errors():
    assert ec.get_model("llama3-8b") is ec.get_model("Llama 3 8B")
    m = ec.get_model("Mistral 7B")
    assert ec.get_model(m) is m
    with pytest.raises(ValueError, match="model"):
        ec.get_model("Llama 9 900B")
    with pytest.raises(TypeError, match="model"):
        ec.get_model(8)
    with pytest.raises(TypeError, match="model"):
        ec.count_params("Llama 3 8B")


# ---------------------------------------------------------------------------- training

@given(n=st.floats(1e3, 1e13), d=st.floats(1e3, 1e14))
@SETTINGS
def test_training_flops_is_6nd_and_linear(n, d):
    assert math.isclose(ec.training_flops(n, d), 6 * n * d, rel_tol=1e-12)
    assert math.isclose(ec.training_flops(2 * n, d), 2 * ec.training_flops(n, d), rel_tol=1e-12)


@given(u=st.floats(0.05, 1.0), g=st.integers(1, 4096))
@SETTINGS
def test_training_time_and_implied_utilization_are_inverses(u, g):
    n, d = 7.3e9, 1.7e12
    t = ec.training_time_s(n, d, accelerator="A100", n_devices=g, utilization=u)
    device_hours = t * g / 3600
    assert math.isclose(ec.implied_utilization(n, d, device_hours, accelerator="A100"), u, rel_tol=1e-9)
    # More devices, proportionally less time.
    t2 = ec.training_time_s(n, d, accelerator="A100", n_devices=2 * g, utilization=u)
    assert math.isclose(t / t2, 2.0, rel_tol=1e-12)


def test_training_memory_is_16_bytes_and_reproduces_zero_figure_1():
    assert ec.training_memory(3.3e9).device_bytes_per_param == 16
    paper = {0: 120.0, 1: 31.4, 2: 16.6, 3: 1.9}          # Rajbhandari et al. 2020, fig. 1
    for stage, gb in paper.items():
        got = ec.training_memory(7.5e9, n_devices=64, zero_stage=stage).device_bytes / 1e9
        assert abs(got - gb) <= 0.05 + 0.005 * gb


@given(n=st.floats(1e6, 1e12), g=st.integers(1, 1024), stage=st.integers(0, 3), off=st.booleans())
@SETTINGS
def test_training_memory_conserves_bytes_and_shrinks_with_stage(n, g, stage, off):
    mem = ec.training_memory(n, n_devices=g, zero_stage=stage, offload_optimizer=off)
    # Summed over devices (replicated parts counted once) plus host: never less than 16N / G per device.
    assert mem.device_bytes + mem.host_bytes >= 16 * n / g * (1 - 1e-12)
    if stage < 3:
        nxt = ec.training_memory(n, n_devices=g, zero_stage=stage + 1, offload_optimizer=off)
        assert nxt.device_bytes <= mem.device_bytes * (1 + 1e-12)
    if off:
        assert mem.optimizer_bytes == 0 and mem.host_bytes > 0


def test_activation_recompute_ordering_and_formula():
    s, b, h, a = 3001, 3, 1280, 20
    none = ec.activation_bytes_per_layer(s, b, h, a)
    sel = ec.activation_bytes_per_layer(s, b, h, a, recompute="selective")
    full = ec.activation_bytes_per_layer(s, b, h, a, recompute="full")
    assert full < sel < none
    # Second way: the attention-score term alone is 5 a s^2 b bytes.
    assert math.isclose(none - sel, 5 * a * s * s * b, rel_tol=1e-12)
    assert math.isclose(full, 2 * s * b * h)


# ---------------------------------------------------------------------------- KV cache

def test_kv_bytes_per_token_by_summing_numpy_arrays():
    rng = np.random.default_rng(11)
    for _ in range(5):
        layers, kvh, hd, tokens = (int(rng.integers(1, 9)), int(rng.integers(1, 7)),
                                   int(rng.integers(3, 41)), int(rng.integers(1, 53)))
        dtype = rng.choice([np.float16, np.float32, np.int8])
        arrays = [np.zeros((tokens, kvh, hd), dtype=dtype) for _ in range(2 * layers)]
        assert sum(a.nbytes for a in arrays) == tokens * ec.kv_cache_bytes_per_token(
            layers, kvh, hd, np.dtype(dtype).itemsize)


@given(name=st.sampled_from(MODELS), t=st.integers(0, 3000), k=st.integers(1, 5), b=st.integers(1, 9))
@SETTINGS
def test_kv_cache_linear_in_context_and_batch(name, t, k, b):
    m = ec.get_model(name)
    one = ec.kv_cache_bytes(m, t, 1)
    assert ec.kv_cache_bytes(m, t, b) == b * one
    if m.sliding_window_tokens is None or k * t <= m.sliding_window_tokens:
        assert ec.kv_cache_bytes(m, k * t) == k * one


def test_gqa_divides_cache_by_group_size():
    m = ec.get_model("Llama 3 8B")
    mha = dataclasses.replace(m, kv_heads=m.heads)
    mqa = dataclasses.replace(m, kv_heads=1)
    assert mha.kv_bytes_per_token() == (m.heads // m.kv_heads) * m.kv_bytes_per_token()
    assert mha.kv_bytes_per_token() == m.heads * mqa.kv_bytes_per_token()
    assert mha.attention == "MHA" and m.attention == "GQA" and mqa.attention == "MQA"


def test_sliding_window_caps_cache():
    m = ec.get_model("Mistral 7B")
    w = m.sliding_window_tokens
    assert ec.kv_cache_bytes(m, 3 * w + 17) == ec.kv_cache_bytes(m, w)


# ---------------------------------------------------------------------------- decode

@given(name=st.sampled_from(MODELS), b=st.integers(1, 2000), t=st.integers(0, 30000),
       db=st.integers(0, 500), dt=st.integers(0, 5000),
       prec=st.sampled_from(list(ec.PRECISION_SCHEMES)))
@SETTINGS
def test_decode_time_monotone_in_batch_and_context(name, b, t, db, dt, prec):
    base = ec.decode_step(name, "H100 SXM", b, t, prec)
    assert ec.decode_step(name, "H100 SXM", b + db, t, prec).t_step_s >= base.t_step_s
    assert ec.decode_step(name, "H100 SXM", b, t + dt, prec).t_step_s >= base.t_step_s
    assert base.t_step_s == max(base.t_compute_s, base.t_memory_s)


@pytest.mark.parametrize("name", ["Llama 3 8B", "Llama 2 7B", "Falcon 7B"])
@pytest.mark.parametrize("context", [0, 61, 200])
def test_crossover_formula_matches_sweep(name, context):
    b_star = ec.crossover_batch(name, "H100 SXM", context)
    step = lambda b: ec.decode_step(name, "H100 SXM", b, context)  # noqa: E731
    if math.isinf(b_star):
        assert all(step(b).bound == "memory" for b in (1, 10, 1000, 100_000))
        return
    first = next(b for b in range(1, 200_000) if step(b).bound == "compute")
    assert first == math.ceil(b_star)


def test_crossover_at_zero_context_is_ridge_times_half_bytes():
    """With no cache the weights are all the bytes: B* = ridge * bytes_per_weight / 2, nearly."""
    h100 = get_accelerator("H100 SXM")
    for prec, bytes_w in [("bf16", 2), ("int4 weights", 0.5)]:
        b_star = ec.crossover_batch("Llama 3 8B", h100, 0, prec)
        assert abs(b_star / (h100.ridge_point("bf16") * bytes_w / 2) - 1) < 0.01


def test_long_context_decode_never_compute_bound():
    assert math.isinf(ec.crossover_batch("Llama 3 8B", "H100 SXM", 4096))


def test_batch1_decode_is_weight_read_time():
    step = ec.decode_step("Llama 3 70B", "H200", 1, 17)
    m = ec.get_model("Llama 3 70B")
    weights_read = (m.params - m.vocab_size * m.hidden_size) * 2
    assert abs(step.t_step_s / (weights_read / get_accelerator("H200").mem_bandwidth) - 1) < 0.01


def test_max_batch_is_the_last_that_fits():
    for name, ctx in [("Llama 3 8B", 4096), ("Llama 2 7B", 1531), ("Falcon 7B", 2047)]:
        bmax = ec.max_batch(name, "H100 SXM", ctx)
        assert ec.decode_step(name, "H100 SXM", bmax, ctx).fits
        assert not ec.decode_step(name, "H100 SXM", bmax + 1, ctx).fits
    assert ec.max_batch("Llama 3 70B", "H100 SXM", 1024) == 0          # 141 GB of weights, 80 GB HBM
    assert ec.max_batch("Llama 3 70B", "H100 SXM", 1024, n_devices=4) > 0


def test_prefill_and_decode_on_the_roofline():
    long = place_kernel(ec.prefill_kernel("Llama 3 8B", 4001), "H100 SXM", "bf16")
    short = place_kernel(ec.prefill_kernel("Llama 3 8B", 3), "H100 SXM", "bf16")
    dec = place_kernel(ec.decode_kernel("Llama 3 8B", 1, 999), "H100 SXM", "bf16")
    assert long.bound == "compute" and short.bound == "memory" and dec.bound == "memory"
    # Prefill FLOP: P tokens of matmuls plus causal attention over sum(range(P)) pairs.
    m = ec.get_model("Llama 3 8B")
    p = 37
    want = p * 2 * m.matmul_params + 4 * m.layers * m.heads * m.head_dim * sum(range(p))
    assert math.isclose(ec.prefill_kernel(m, p).flops, want, rel_tol=1e-12)


def test_serving_curve_and_cost():
    curve = ec.serving_curve("Mistral 7B", "H200", 777, "fp8", batches=[1, 3, 17, 250])
    assert np.all(np.diff(curve.tokens_per_s) > 0) and np.all(np.diff(curve.t_step_s) >= 0)
    assert np.allclose(curve.tokens_per_s, curve.batch / curve.t_step_s)
    # 3600 tokens/s for one hour is 12.96 M tokens; at $2 per hour that is 2 / 12.96 per M tokens.
    assert math.isclose(ec.cost_per_million_tokens_usd(3600.0, 2.0), 2.0 / 12.96, rel_tol=1e-12)
    assert math.isclose(ec.cost_per_million_tokens_usd(3600.0, 2.0, n_devices=3),
                        3 * ec.cost_per_million_tokens_usd(3600.0, 2.0), rel_tol=1e-12)


# ---------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("call, exc, name", [
    (lambda: ec.training_flops(-1, 10), ValueError, "params"),
    (lambda: ec.training_flops(1e9, 0), ValueError, "tokens"),
    (lambda: ec.training_flops(float("nan"), 10), ValueError, "params"),
    (lambda: ec.training_flops("8B", 10), TypeError, "params"),
    (lambda: ec.training_time_s(1e9, 1e9, utilization=0), ValueError, "utilization"),
    (lambda: ec.training_time_s(1e9, 1e9, utilization=1.5), ValueError, "utilization"),
    (lambda: ec.training_time_s(1e9, 1e9, n_devices=0), ValueError, "n_devices"),
    (lambda: ec.training_time_s(1e9, 1e9, accelerator="H900"), ValueError, "accelerator"),
    (lambda: ec.training_time_s(1e9, 1e9, accelerator="A100", precision="fp8"), ValueError, "precision"),
    (lambda: ec.implied_utilization(1e9, 1e9, float("inf")), ValueError, "device_hours"),
    (lambda: ec.training_memory(1e9, zero_stage=4), ValueError, "zero_stage"),
    (lambda: ec.training_memory(1e9, offload_optimizer="yes"), TypeError, "offload_optimizer"),
    (lambda: ec.training_memory(0), ValueError, "params"),
    (lambda: ec.activation_bytes_per_layer(0, 1, 8, 2), ValueError, "seq_len"),
    (lambda: ec.activation_bytes_per_layer(8, 1, 8, 2, recompute="half"), ValueError, "recompute"),
    (lambda: ec.kv_cache_bytes_per_token(0, 8, 128, 2), ValueError, "layers"),
    (lambda: ec.kv_cache_bytes_per_token(32, -1, 128, 2), ValueError, "kv_heads"),
    (lambda: ec.kv_cache_bytes_per_token(32, 8, 12.5, 2), TypeError, "head_dim"),
    (lambda: ec.kv_cache_bytes_per_token(32, 8, 128, 0), ValueError, "bytes_per_element"),
    (lambda: ec.kv_cache_bytes_per_token(32, 8, 128, float("nan")), ValueError, "bytes_per_element"),
    (lambda: ec.kv_cache_bytes("Llama 3 8B", -5), ValueError, "context_tokens"),
    (lambda: ec.kv_cache_bytes("Llama 3 8B", 10, batch=0), ValueError, "batch"),
    (lambda: ec.decode_step("Llama 3 8B", "H100 SXM", 0, 10), ValueError, "batch"),
    (lambda: ec.decode_step("Llama 3 8B", "H100 SXM", 1, 10, "int3"), ValueError, "precision"),
    (lambda: ec.decode_step("Llama 3 8B", "A100", 1, 10, "fp8"), ValueError, "precision"),
    (lambda: ec.decode_step("Llama 3 8B", "H100 SXM", 1, 10, n_devices=0), ValueError, "n_devices"),
    (lambda: ec.prefill_kernel("Llama 3 8B", 0), ValueError, "prompt_tokens"),
    (lambda: ec.serving_curve("Llama 3 8B", batches=[4, 0]), ValueError, "batches"),
    (lambda: ec.serving_curve("Llama 3 8B", batches=[]), ValueError, "batches"),
    (lambda: ec.cost_per_million_tokens_usd(0, 2.0), ValueError, "tokens_per_s"),
    (lambda: ec.cost_per_million_tokens_usd(100, -1), ValueError, "price"),
    (lambda: ec.cost_per_million_tokens_usd(100, True), TypeError, "price"),
])
def test_bad_input_names_the_argument(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


# ---------------------------------------------------------------------------- plots and widget

def test_plots_return_figures():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from course_lib.plots import economics as pe
    curve = ec.serving_curve("Llama 3 8B", "H100 SXM", 128, highlight=4)
    figs = [pe.plot_serving_curve(curve), pe.plot_decode_times(curve),
            pe.plot_kv_cache([0, 10, 20], {"a": [0, 1e9, 2e9]}, capacity_bytes=8e10),
            pe.plot_training_memory({"x": ec.training_memory(1e9)})]
    assert all(isinstance(f, matplotlib.figure.Figure) for f in figs)
    for f in figs:
        plt.close(f)
    with pytest.raises(TypeError, match="curve"):
        pe.plot_serving_curve("curve")
    with pytest.raises(ValueError, match="shape"):
        pe.plot_kv_cache([0, 1], {"a": [1, 2, 3]})


def test_widget_compute_and_describe():
    from course_lib.widgets.economics import _describe, explore_serving
    result = explore_serving("Llama 3 70B", "H100 SXM", "int4 weights", 37, 3000, 2)
    curve, price = result
    assert 37 in curve.batch and curve.highlight == 37
    text = _describe(result)
    assert "per million tokens" in text and "assumed" in text
    with pytest.raises(ValueError):
        explore_serving("Llama 3 8B", "A100", "fp8", 4, 100)


# --------------------------------------------------------------------------------------------
# Scaling laws, paged KV cache, static against continuous batching
# --------------------------------------------------------------------------------------------

from course_lib.economics import (CHINCHILLA_TOKENS_PER_PARAM, compute_optimal, kv_allocation,
                                  request_trace, simulate_batching)


def test_compute_optimal_spends_the_budget_at_the_ratio():
    rng = np.random.default_rng(1101)
    for c, r in zip(10 ** rng.uniform(19, 26, 7), rng.uniform(3, 60, 7)):
        opt = compute_optimal(c, r)
        assert opt.tokens / opt.params == pytest.approx(r)
        assert 6 * opt.params * opt.tokens == pytest.approx(c)      # second way: C = 6ND
    # Hoffmann et al. 2022: Gopher's budget at 20 tokens per parameter is Chinchilla, 70B on 1.4T.
    opt = compute_optimal(5.76e23)
    assert CHINCHILLA_TOKENS_PER_PARAM == 20
    assert opt.params == pytest.approx(70e9, rel=0.02) and opt.tokens == pytest.approx(1.4e12, rel=0.02)
    # Ten times the budget: sqrt(10) times the parameters.
    assert compute_optimal(5.76e24).params / opt.params == pytest.approx(10 ** 0.5)


@pytest.mark.parametrize("bad", [0, -1e20, float("nan"), "1e23"])
def test_compute_optimal_rejects_bad_budgets(bad):
    with pytest.raises((TypeError, ValueError), match="compute_flops"):
        compute_optimal(bad)


def test_kv_allocation_counts_against_a_per_request_loop():
    rng = np.random.default_rng(1102)
    lengths = rng.integers(1, 3001, 257)
    for block in (1, 7, 16, 100, 3000):
        a = kv_allocation(lengths, 3001, block)
        loop = sum(math.ceil(int(n) / block) * block for n in lengths)        # second way
        assert a.paged_tokens == loop and a.used_tokens == lengths.sum()
        assert a.contiguous_tokens == 257 * 3001
        assert 0 <= a.paged_waste <= a.contiguous_waste < 1
    assert kv_allocation(lengths, 3001, 1).paged_waste == 0
    worked = kv_allocation([100, 17, 250], 2048, 16)                    # the docstring's example
    assert (worked.used_tokens, worked.contiguous_tokens, worked.paged_tokens) == (367, 6144, 400)


@pytest.mark.parametrize("kwargs, match", [
    (dict(lengths=[10, 5000], max_tokens=4096), "max_tokens"),
    (dict(lengths=[10.5], max_tokens=64), "whole"),
    (dict(lengths=[], max_tokens=64), "at least one"),
    (dict(lengths=[3], max_tokens=64, block_tokens=0), "block_tokens"),
    (dict(lengths=[3], max_tokens=64, block_tokens=65), "block_tokens"),
])
def test_kv_allocation_rejects_bad_arguments(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        kv_allocation(**kwargs)


def _trace(seed, n, load, slots, mean=37):
    return request_trace(np.random.default_rng(seed), n, mean, load * slots / mean, sigma=0.9,
                         max_output_tokens=400)


def test_request_trace_is_reproducible_and_in_range():
    a1, o1 = _trace(5, 301, 0.4, 13)
    a2, o2 = _trace(5, 301, 0.4, 13)
    assert np.array_equal(a1, a2) and np.array_equal(o1, o2)
    assert np.all(np.diff(a1) >= 0) and o1.min() >= 1 and o1.max() <= 400
    with pytest.raises(TypeError, match="rng"):
        request_trace(5, 10, 10, 0.1)


def test_continuous_batching_against_a_step_by_step_simulation():
    """Second way: walk the decode steps one at a time with an explicit queue and slot table."""
    arr, out = _trace(1103, 97, 0.8, 5)
    run = simulate_batching(arr, out, 5, "continuous")
    finish = np.full(arr.size, -1)
    remaining = np.zeros(5, dtype=int)
    owner = np.full(5, -1)
    nxt, step = 0, 0
    while (finish < 0).any():
        for s in range(5):                           # free slots take waiting requests, in order
            if remaining[s] == 0 and nxt < arr.size and arr[nxt] <= step:
                owner[s], remaining[s] = nxt, out[nxt]
                nxt += 1
        active = remaining > 0
        remaining[active] -= 1                       # one token each this step
        step += 1
        for s in np.flatnonzero(active & (remaining == 0)):
            finish[owner[s]] = step
    assert np.array_equal(run.finish_steps, finish)


def test_static_batching_saturated_matches_the_batch_maxima():
    rng = np.random.default_rng(1104)
    out = rng.integers(1, 300, 7 * 11)
    run = simulate_batching(np.zeros(out.size), out, 7, "static")
    assert run.total_steps == out.reshape(11, 7).max(axis=1).sum()
    # Each request returns when its batch ends, never before its own tokens are out.
    assert np.all(run.finish_steps - run.start_steps >= out)
    assert run.held_slot_steps >= run.busy_slot_steps == out.sum()


def test_batching_bounds_and_ordering():
    for seed, load in ((1105, 0.2), (1106, 0.6), (1107, 1.5)):
        arr, out = _trace(seed, 400, load, 9)
        c = simulate_batching(arr, out, 9, "continuous")
        s = simulate_batching(arr, out, 9, "static")
        for r in (c, s):
            assert r.tokens_per_step <= 9 and r.total_steps >= out.sum() / 9
            assert np.all(r.start_steps >= arr) and np.all(r.finish_steps - r.start_steps >= out)
        # Continuous batching never finishes the whole trace later than static batching.
        assert c.total_steps <= s.total_steps
        assert c.latency_percentile_steps(50) <= s.latency_percentile_steps(50)
    with pytest.raises(ValueError, match="policy"):
        simulate_batching(arr, out, 9, "dynamic")
    with pytest.raises(ValueError, match="arrival order"):
        simulate_batching(arr[::-1], out, 9)
    with pytest.raises(ValueError, match="one length"):
        simulate_batching(arr, out[:-1], 9)


def test_new_economics_plots_draw_and_refuse_wrong_inputs():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from course_lib.plots.economics import plot_batching, plot_kv_waste
    lengths = np.random.default_rng(1108).integers(1, 900, 131)
    fig = plot_kv_waste([kv_allocation(lengths, 1000, b) for b in (1, 8, 64)])
    assert len(fig.axes[0].get_lines()) == 2
    plt.close(fig)
    arr, out = _trace(1109, 120, 0.5, 6)
    runs = [simulate_batching(arr, out, 6, p) for p in ("static", "continuous")]
    fig = plot_batching([0.5], runs[:1], runs[1:], step_s=0.01)
    assert len(fig.axes) == 2
    plt.close(fig)
    with pytest.raises(TypeError, match="KVAllocation"):
        plot_kv_waste([1, 2])
    with pytest.raises(ValueError, match="one BatchingRun per load"):
        plot_batching([0.5, 0.6], runs[:1], runs[1:])
    with pytest.raises(TypeError, match="BatchingRun"):
        plot_batching([0.5], [1], runs[1:])
