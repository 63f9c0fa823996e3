"""Tests for course_lib.parallelism: ZeRO memory, traffic formulas, pipeline schedules, step model."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib.collectives import collective_bytes_per_rank
from course_lib.hardware import get_accelerator
from course_lib.parallelism import (
    ADAM_BYTES_PER_PARAM, ParallelPlan, TransformerShape, activation_bytes_per_layer, comm_hidden,
    data_parallel_bytes_per_gpu, estimate_training_step, expert_parallel_bytes_per_gpu,
    pipeline_bubble_fraction, pipeline_parallel_bytes_per_gpu, simulate_pipeline,
    tensor_parallel_bytes_per_gpu, transformer_for_params, zero_comm_bytes_per_gpu,
    zero_model_state_bytes)


# ---------------------------------------------------------------- ZeRO

def test_zero_reproduces_the_papers_worked_example():
    # Rajbhandari et al. 2020, figure 1 / section 3: 7.5 B parameters, 64 GPUs
    paper_gb = [120, 31.4, 16.6, 1.9]
    ours = [zero_model_state_bytes(7.5e9, 64, s).total / 1e9 for s in range(4)]
    np.testing.assert_allclose(ours, paper_gb, rtol=0.02)


@settings(max_examples=60, deadline=None)
@given(st.floats(1e6, 1e12), st.integers(1, 4096))
def test_zero_stages_never_use_more_memory(n_params, dp):
    totals = [zero_model_state_bytes(n_params, dp, s).total for s in range(4)]
    assert all(a >= b * (1 - 1e-12) for a, b in zip(totals, totals[1:]))
    assert totals[0] == pytest.approx(sum(ADAM_BYTES_PER_PARAM.values()) * n_params)
    assert totals[3] == pytest.approx(totals[0] / dp)


def test_one_rank_gains_nothing_from_zero():
    base = zero_model_state_bytes(3e9, 1, 0).total
    assert all(zero_model_state_bytes(3e9, 1, s).total == base for s in range(4))


def test_offload_removes_only_the_optimizer_state():
    on_gpu = zero_model_state_bytes(1e9, 8, 2, offload=True)
    plain = zero_model_state_bytes(1e9, 8, 2)
    assert on_gpu.optimizer == 0 and on_gpu.params == plain.params and on_gpu.grads == plain.grads


def test_zero3_sends_one_and_a_half_times_data_parallel():
    for dp in (2, 7, 64):
        assert zero_comm_bytes_per_gpu(5e9, dp, 3) == pytest.approx(1.5 * zero_comm_bytes_per_gpu(5e9, dp, 0))
        assert zero_comm_bytes_per_gpu(5e9, dp, 1) == zero_comm_bytes_per_gpu(5e9, dp, 2) \
            == data_parallel_bytes_per_gpu(5e9, dp)
    # the data-parallel all-reduce is a ring all-reduce of the 16-bit gradients
    assert data_parallel_bytes_per_gpu(5e9, 12) == pytest.approx(collective_bytes_per_rank("all_reduce", 2 * 5e9, 12))


# ---------------------------------------------------------------- activations and traffic

def test_activation_formula_special_cases():
    s, b, h, a = 2048, 3, 1024, 16
    assert activation_bytes_per_layer(s, b, h, a) == pytest.approx(s * b * h * (34 + 5 * a * s / h))
    assert activation_bytes_per_layer(s, b, h, a, recompute="full") == 2 * s * b * h
    assert activation_bytes_per_layer(s, b, h, a, tp=8, recompute="selective") == pytest.approx(s * b * h * 13)


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 8192), st.integers(1, 16), st.integers(1, 64), st.integers(1, 64), st.integers(1, 8))
def test_recompute_policies_are_ordered_and_tp_helps(s, b, h64, a, t):
    h = 64 * h64
    none, sel, full = (activation_bytes_per_layer(s, b, h, a, t, r) for r in ("none", "selective", "full"))
    assert none >= sel >= full
    assert activation_bytes_per_layer(s, b, h, a, 1) >= activation_bytes_per_layer(s, b, h, a, t)


def test_tensor_parallel_traffic_by_hand():
    # 4 all-reduces per layer, each sending 2(t-1)/t of tokens * h * 2 bytes
    got = tensor_parallel_bytes_per_gpu(n_layers=3, tokens=1000, d_model=512, tp=4)
    assert got == pytest.approx(3 * 4 * collective_bytes_per_rank("all_reduce", 1000 * 512 * 2, 4))
    assert tensor_parallel_bytes_per_gpu(3, 1000, 512, 4, recompute="full") == pytest.approx(got * 1.5)
    assert tensor_parallel_bytes_per_gpu(3, 1000, 512, 1) == 0


def test_pipeline_and_expert_traffic():
    assert pipeline_parallel_bytes_per_gpu(1000, 512, 1) == 0
    assert pipeline_parallel_bytes_per_gpu(1000, 512, 4) == 2 * 2 * 1000 * 512
    got = expert_parallel_bytes_per_gpu(1000, 512, ep=8, top_k=2, n_moe_layers=3)
    assert got == pytest.approx(4 * 3 * (7 / 8) * 2 * 1000 * 2 * 512)
    assert expert_parallel_bytes_per_gpu(1000, 512, ep=1) == 0


def test_comm_hidden_is_the_link_ridge_point():
    peak, bw = 1e15, 50e9                        # ridge 20000 FLOP/B
    assert comm_hidden(20000 * 1e6, 1e6, peak, bw)
    assert not comm_hidden(19999 * 1e6, 1e6, peak, bw)
    assert comm_hidden(10000 * 1e6, 1e6, peak, bw, efficiency=0.5)


# ---------------------------------------------------------------- pipeline

@settings(max_examples=40, deadline=None)
@given(st.integers(1, 9), st.integers(1, 17), st.sampled_from(["gpipe", "1f1b"]),
       st.floats(0.1, 3.0), st.floats(1.0, 3.0))
def test_simulated_bubble_matches_formula(p, m, schedule, tf, ratio):
    run = simulate_pipeline(p, m, schedule, t_forward=tf, t_backward=ratio * tf)
    assert run.bubble_fraction == pytest.approx(pipeline_bubble_fraction(p, m), abs=1e-9)
    assert run.makespan == pytest.approx((m + p - 1) * tf * (1 + ratio))


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 8), st.integers(1, 12), st.sampled_from(["gpipe", "1f1b"]))
def test_schedule_respects_dependencies(p, m, schedule):
    run = simulate_pipeline(p, m, schedule)
    end = {(int(i), int(j), bool(f)): e for i, j, f, e in zip(run.stage, run.micro, run.is_forward, run.end)}
    start = {(int(i), int(j), bool(f)): s for i, j, f, s in zip(run.stage, run.micro, run.is_forward, run.start)}
    assert len(end) == 2 * p * m
    for (i, j, f), s in start.items():
        if f and i > 0:
            assert s >= end[(i - 1, j, True)] - 1e-12
        if not f:
            assert s >= end[(i, j, True)] - 1e-12
            if i < p - 1:
                assert s >= end[(i + 1, j, False)] - 1e-12
    for i in range(p):                           # a stage runs one thing at a time
        mine = np.argsort(run.start[run.stage == i])
        s, e = run.start[run.stage == i][mine], run.end[run.stage == i][mine]
        assert np.all(s[1:] >= e[:-1] - 1e-12)


def test_1f1b_holds_fewer_micro_batches_than_gpipe():
    gpipe, ofob = simulate_pipeline(4, 12, "gpipe"), simulate_pipeline(4, 12, "1f1b")
    np.testing.assert_array_equal(gpipe.peak_in_flight, [12] * 4)
    np.testing.assert_array_equal(ofob.peak_in_flight, [4, 3, 2, 1])


# ---------------------------------------------------------------- model and step estimate

def test_transformer_for_params_hits_the_size():
    for n in (1e9, 7e9, 70e9, 175e9):
        model = transformer_for_params(n)
        assert model.n_params == pytest.approx(n, rel=0.1)
        assert model.d_model % 128 == 0
    assert TransformerShape(96, 12288, 96, 2048).n_params == pytest.approx(174e9, rel=0.01)


def test_step_estimate_adds_up():
    model = transformer_for_params(13e9)
    est = estimate_training_step(model, ParallelPlan(64, tp=4, pp=2, zero_stage=1, micro_batches=8),
                                 "H100 SXM", tokens_per_step=2 ** 21)
    assert est.step_time_s == pytest.approx(sum(est.times.values()))
    flops = 6 * model.n_params * 2 ** 21 / 64
    assert est.times["compute"] == pytest.approx(flops / (0.5 * get_accelerator("H100 SXM").peak("bf16")))
    assert est.times["pipeline bubble"] == pytest.approx(est.times["compute"] * 1 / 8)
    assert est.comm_tier["tensor"] == "nvlink" and est.comm_tier["data"] == "network"


def test_tensor_parallelism_across_nodes_is_slower():
    model = transformer_for_params(30e9)
    inside = estimate_training_step(model, ParallelPlan(256, tp=8, pp=2, micro_batches=8))
    across = estimate_training_step(model, ParallelPlan(256, tp=16, pp=1, micro_batches=8))
    assert across.comm_tier["tensor"] == "network" and inside.comm_tier["tensor"] == "nvlink"
    assert across.times["tensor comm"] > 3 * inside.times["tensor comm"]


def test_more_zero_never_increases_memory_and_full_recompute_costs_time():
    model = transformer_for_params(20e9)
    mems = [estimate_training_step(model, ParallelPlan(128, tp=4, zero_stage=s)).memory_bytes for s in range(4)]
    assert all(a >= b for a, b in zip(mems, mems[1:]))
    sel = estimate_training_step(model, ParallelPlan(128, tp=4, recompute="selective"))
    full = estimate_training_step(model, ParallelPlan(128, tp=4, recompute="full"))
    assert full.memory["activations"] < sel.memory["activations"]
    assert full.times["compute"] == pytest.approx(sel.times["compute"] * 4 / 3)


def test_plan_tiers():
    plan = ParallelPlan(64, tp=2, pp=4)
    assert (plan.dp, plan.tier("tp"), plan.tier("pp"), plan.tier("dp")) == (8, "nvlink", "nvlink", "network")
    assert ParallelPlan(8, tp=8).tier("dp") == "nvlink"


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("call, exc, name", [
    (lambda: zero_model_state_bytes(-1, 4, 1), ValueError, "n_params"),
    (lambda: zero_model_state_bytes(0, 4, 1), ValueError, "n_params"),
    (lambda: zero_model_state_bytes(1e9, 0, 1), ValueError, "dp"),
    (lambda: zero_model_state_bytes(1e9, 4, 4), ValueError, "stage"),
    (lambda: zero_model_state_bytes(1e9, 4, 1, offload="yes"), TypeError, "offload"),
    (lambda: zero_comm_bytes_per_gpu(1e9, 4, 1, bytes_per_value=0), ValueError, "bytes_per_value"),
    (lambda: activation_bytes_per_layer(0, 1, 64, 1), ValueError, "seq_len"),
    (lambda: activation_bytes_per_layer(8, float("nan"), 64, 1), ValueError, "micro_batch"),
    (lambda: activation_bytes_per_layer(8, 1, 64, 1, recompute="some"), ValueError, "recompute"),
    (lambda: tensor_parallel_bytes_per_gpu(2, 10, 64, 0), ValueError, "tp"),
    (lambda: pipeline_parallel_bytes_per_gpu(-5, 64, 2), ValueError, "tokens"),
    (lambda: expert_parallel_bytes_per_gpu(10, 64, 4, top_k=0), ValueError, "top_k"),
    (lambda: comm_hidden(1, 1, 1e15, 1e9, efficiency=1.5), ValueError, "efficiency"),
    (lambda: pipeline_bubble_fraction(0, 4), ValueError, "stages"),
    (lambda: pipeline_bubble_fraction(4, 2.5), TypeError, "micro_batches"),
    (lambda: simulate_pipeline(4, 4, "zigzag"), ValueError, "schedule"),
    (lambda: simulate_pipeline(4, 4, t_backward=0), ValueError, "t_backward"),
    (lambda: transformer_for_params(10), ValueError, "n_params"),
    (lambda: TransformerShape(0, 64, 1, 8), ValueError, "n_layers"),
    (lambda: ParallelPlan(12, tp=8), ValueError, "n_gpus"),
    (lambda: ParallelPlan(8, zero_stage=5), ValueError, "zero_stage"),
    (lambda: ParallelPlan(8, recompute="half"), ValueError, "recompute"),
    (lambda: ParallelPlan(8).tier("xp"), ValueError, "group"),
    (lambda: estimate_training_step("70B", ParallelPlan(8)), TypeError, "model"),
    (lambda: estimate_training_step(transformer_for_params(1e9), ParallelPlan(8), "Z80"), ValueError, "Z80"),
    (lambda: estimate_training_step(transformer_for_params(1e9), ParallelPlan(8), efficiency=0), ValueError, "efficiency"),
    (lambda: estimate_training_step(transformer_for_params(1e9), ParallelPlan(8), tokens_per_step=100), ValueError, "tokens_per_step"),
    (lambda: estimate_training_step(transformer_for_params(1e9), ParallelPlan(8), "TPU v5e", precision="fp8"), ValueError, "precision"),
])
def test_bad_input_names_the_argument(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


def test_agrees_with_lesson_07_economics():
    from course_lib import economics
    for policy in ("none", "selective", "full"):
        assert activation_bytes_per_layer(1000, 3, 768, 12, 1, policy) == pytest.approx(
            economics.activation_bytes_per_layer(1000, 3, 768, 12, recompute=policy))
    assert zero_model_state_bytes(3e9, 24, 2).total == pytest.approx(
        economics.training_memory(3e9, n_devices=24, zero_stage=2).device_bytes)
