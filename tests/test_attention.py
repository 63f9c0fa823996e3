"""FlashAttention in NumPy: exact against the naive reference, traffic counted, bad input refused."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib.attention import (
    attention_memory_bytes,
    attention_traffic_sweep,
    flash_attention,
    flash_attention_traffic,
    memory_sweep,
    naive_attention,
    naive_attention_traffic,
    online_softmax_update,
    paper_block_sizes,
    paper_flash_hbm_elements,
)


def _softmax_reference(q, k, v, causal=False):
    """An independent reference: one query row at a time in float64, plain Python loops over rows."""
    n_q, d = q.shape
    out = np.empty((n_q, v.shape[1]))
    for i in range(n_q):
        scores = [float(np.dot(q[i], k[j])) / math.sqrt(d) for j in range(k.shape[0])
                  if not causal or j <= i]
        top = max(scores)
        weights = np.array([math.exp(s - top) for s in scores])
        out[i] = weights @ v[:len(scores)] / weights.sum()
    return out


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 70), d=st.integers(1, 12), block=st.integers(1, 80), causal=st.booleans(),
       seed=st.integers(0, 2**32 - 1))
def test_flash_equals_naive_for_every_block_size(n, d, block, causal, seed):
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((3, n, d)) * 3.0
    np.testing.assert_allclose(flash_attention(q, k, v, block_size=block, causal=causal),
                               naive_attention(q, k, v, causal=causal), rtol=1e-10, atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(n_q=st.integers(1, 40), n_k=st.integers(1, 40), d=st.integers(1, 9), d_v=st.integers(1, 7),
       bq=st.integers(1, 50), bk=st.integers(1, 50), seed=st.integers(0, 2**32 - 1))
def test_rectangular_blocks_and_lengths_match_an_independent_loop(n_q, n_k, d, d_v, bq, bk, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_q, d))
    k = rng.standard_normal((n_k, d))
    v = rng.standard_normal((n_k, d_v))
    np.testing.assert_allclose(flash_attention(q, k, v, block_size=(bq, bk)), _softmax_reference(q, k, v),
                               rtol=1e-10, atol=1e-12)


def test_causal_matches_independent_loop_on_ragged_blocks():
    rng = np.random.default_rng(7)
    q, k, v = rng.standard_normal((3, 53, 6))
    np.testing.assert_allclose(flash_attention(q, k, v, block_size=(8, 11), causal=True),
                               _softmax_reference(q, k, v, causal=True), rtol=1e-10, atol=1e-12)
    # the first query sees only the first key
    np.testing.assert_allclose(flash_attention(q, k, v, block_size=5, causal=True)[0], v[0], rtol=1e-12)


def test_batch_and_head_dimensions_broadcast():
    rng = np.random.default_rng(3)
    q = rng.standard_normal((2, 3, 29, 8))
    k = rng.standard_normal((1, 3, 41, 8))
    v = rng.standard_normal((2, 1, 41, 5))
    out = flash_attention(q, k, v, block_size=6)
    assert out.shape == (2, 3, 29, 5)
    np.testing.assert_allclose(out[1, 2], _softmax_reference(q[1, 2], k[0, 2], v[1, 0]), rtol=1e-10)


def test_large_scores_do_not_overflow_and_float32_stays_float32():
    rng = np.random.default_rng(11)
    q, k, v = rng.standard_normal((3, 40, 4)) * 60.0          # scores in the thousands: exp overflows
    out = flash_attention(q, k, v, block_size=7)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, _softmax_reference(q, k, v), rtol=1e-9, atol=1e-12)
    out32 = flash_attention(*(x.astype(np.float32) for x in (q, k, v)), block_size=7)
    assert out32.dtype == np.float32


@settings(max_examples=30, deadline=None)
@given(r=st.integers(1, 6), c1=st.integers(1, 9), c2=st.integers(1, 9), d_v=st.integers(1, 5),
       seed=st.integers(0, 2**32 - 1))
def test_online_update_over_two_blocks_equals_one_softmax(r, c1, c2, d_v, seed):
    rng = np.random.default_rng(seed)
    s = rng.standard_normal((r, c1 + c2)) * 4
    v = rng.standard_normal((c1 + c2, d_v))
    m, l, o = np.full(r, -np.inf), np.zeros(r), np.zeros((r, d_v))
    m, l, o = online_softmax_update(m, l, o, s[:, :c1], v[:c1])
    m, l, o = online_softmax_update(m, l, o, s[:, c1:], v[c1:])
    p = np.exp(s - s.max(axis=1, keepdims=True))
    np.testing.assert_allclose(o / l[:, None], (p / p.sum(axis=1, keepdims=True)) @ v, rtol=1e-10)
    np.testing.assert_allclose(m, s.max(axis=1))
    np.testing.assert_allclose(l, np.exp(s - m[:, None]).sum(axis=1), rtol=1e-12)


def test_online_update_keeps_fully_masked_rows_at_zero():
    m, l, o = online_softmax_update(np.full(2, -np.inf), np.zeros(2), np.zeros((2, 3)),
                                    np.full((2, 4), -np.inf), np.ones((4, 3)))
    assert np.all(np.isneginf(m)) and np.all(l == 0) and np.all(o == 0)


@pytest.mark.parametrize("n,d,block,causal", [(37, 5, 8, False), (37, 5, 8, True), (100, 16, (7, 13), True),
                                              (5, 3, 100, False), (64, 4, 16, True)])
def test_counted_traffic_equals_formula(n, d, block, causal):
    rng = np.random.default_rng(n)
    q, k, v = rng.standard_normal((3, n, d))
    _, counted = flash_attention(q, k, v, block_size=block, causal=causal, return_traffic=True)
    predicted = flash_attention_traffic(n, d, block, causal)
    assert counted.elements_read == predicted.elements_read
    assert counted.elements_written == predicted.elements_written


def test_traffic_counts_scale_with_heads():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((3, 4, 30, 6))
    _, counted = flash_attention(q, k, v, block_size=7, return_traffic=True)
    assert counted.elements_moved == 4 * flash_attention_traffic(30, 6, 7).elements_moved


def test_causal_reads_about_half_the_keys():
    full = flash_attention_traffic(4096, 64, 128).elements_read
    causal = flash_attention_traffic(4096, 64, 128, causal=True).elements_read
    # query block i (of 32) reads (i+1)/32 of the keys: (33/64) of the key traffic
    key_full = full - 4096 * 64
    assert causal - 4096 * 64 == pytest.approx(key_full * 33 / 64)


def test_naive_traffic_is_4n2_plus_4nd():
    for n, d in [(1000, 64), (17, 3)]:
        assert naive_attention_traffic(n, d).elements_moved == 4 * n * n + 4 * n * d


def test_paper_io_scales_as_n2_d2_over_m():
    d = 64
    # Theta(N^2 d^2 / M): doubling N quadruples, doubling M halves (for N >> block size)
    a = paper_flash_hbm_elements(32768, d, 100_000)
    assert paper_flash_hbm_elements(65536, d, 100_000) / a == pytest.approx(4.0, rel=0.01)
    assert paper_flash_hbm_elements(32768, d, 200_000) / a == pytest.approx(0.5, rel=0.02)
    ratio = a / (32768**2 * d**2 / 100_000)
    assert 11 < ratio < 13                                   # 3 N d T_c with T_c = N 4d / M: constant 12
    b_r, b_c = paper_block_sizes(d, 100_000)
    assert b_c == math.ceil(100_000 / (4 * d)) and b_r == min(b_c, d)


def test_flash_saving_tends_to_a_constant_two_block_over_d():
    # naive 4N^2 + 4Nd against flash ~ 2 N^2 d / block_q: the ratio rises towards 2 block_q / d = 16,
    # a constant factor: both stay quadratic in N
    sweep = attention_traffic_sweep([1024, 8192, 65536], d=64, block_size=512)
    ratio = sweep.naive_elements / sweep.flash_elements
    assert np.all(np.diff(ratio) > 0)
    assert 15 < ratio[-1] < 16


def test_sweep_counts_agree_with_formula():
    rng = np.random.default_rng(5)
    sweep = attention_traffic_sweep([50, 90], d=8, block_size=(16, 24), count_ns=[50, 90], rng=rng)
    np.testing.assert_array_equal(sweep.counted_elements, sweep.flash_elements)


def test_memory_32k_fp16_scores_are_2_gib():
    naive, flash = attention_memory_bytes(32 * 1024, 64, bytes_per_element=2)
    assert naive == 2 * 2**30
    assert flash < 4e6
    sweep = memory_sweep([1024, 2048, 4096], d=64)
    np.testing.assert_allclose(sweep.naive_bytes[1:] / sweep.naive_bytes[:-1], 4.0)


# --------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("kwargs, exc, word", [
    ({"block_size": 0}, ValueError, "block_size"),
    ({"block_size": -3}, ValueError, "block_size"),
    ({"block_size": 2.5}, TypeError, "block_size"),
    ({"block_size": (4, 0)}, ValueError, "block_size"),
    ({"block_size": (4, 4, 4)}, ValueError, "block_size"),
    ({"causal": "yes"}, TypeError, "causal"),
    ({"scale": -1.0}, ValueError, "scale"),
    ({"scale": float("nan")}, ValueError, "scale"),
])
def test_bad_arguments_are_named(kwargs, exc, word):
    q = np.ones((6, 4))
    with pytest.raises(exc, match=word):
        flash_attention(q, q, q, **kwargs)


def test_bad_arrays_are_named():
    good = np.ones((6, 4))
    bad_nan = good.copy()
    bad_nan[2, 1] = np.nan
    with pytest.raises(ValueError, match="k must contain only finite"):
        flash_attention(good, bad_nan, good)
    with pytest.raises(ValueError, match="head dimension"):
        flash_attention(good, np.ones((6, 5)), good)
    with pytest.raises(ValueError, match="same sequence length"):
        flash_attention(good, good, np.ones((7, 4)))
    with pytest.raises(ValueError, match="q must have shape"):
        flash_attention(np.ones(4), good, good)
    with pytest.raises(ValueError, match="v must not be empty"):
        flash_attention(good, good, np.ones((6, 0)))
    with pytest.raises(TypeError, match="q must"):
        flash_attention([["a", "b"]], good, good)
    with pytest.raises(ValueError, match="causal masking"):
        flash_attention(good, np.ones((8, 4)), np.ones((8, 4)), causal=True)
    with pytest.raises(ValueError, match="do not broadcast"):
        flash_attention(np.ones((2, 6, 4)), np.ones((3, 6, 4)), np.ones((3, 6, 4)))
    with pytest.raises(ValueError, match="v must contain only finite"):
        naive_attention(good, good, np.full((6, 4), np.inf))


def test_online_update_rejects_mismatched_shapes():
    m, l, o = np.zeros(3), np.ones(3), np.zeros((3, 2))
    with pytest.raises(ValueError, match="m_prev and l_prev"):
        online_softmax_update(np.zeros(4), l, o, np.ones((3, 5)), np.ones((5, 2)))
    with pytest.raises(ValueError, match="v_block must have one row"):
        online_softmax_update(m, l, o, np.ones((3, 5)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="o_prev must have shape"):
        online_softmax_update(m, l, np.zeros((3, 7)), np.ones((3, 5)), np.ones((5, 2)))
    with pytest.raises(ValueError, match="at least 2-D"):
        online_softmax_update(m, l, o, np.ones(3), np.ones((5, 2)))


def test_bad_sizes_in_traffic_and_memory_functions():
    with pytest.raises(ValueError, match="n must be"):
        naive_attention_traffic(0, 4)
    with pytest.raises(ValueError, match="d must be"):
        flash_attention_traffic(10, -1)
    with pytest.raises(ValueError, match="sram_elements"):
        paper_flash_hbm_elements(100, 64, 10)
    with pytest.raises(ValueError, match="bytes_per_element"):
        attention_memory_bytes(100, 64, bytes_per_element=0)
    with pytest.raises(TypeError, match="rng"):
        attention_traffic_sweep([10], d=4, count_ns=[10], rng=None)
    with pytest.raises(ValueError, match="ns must hold"):
        memory_sweep([])


# --------------------------------------------------------------------------------------------
# FlashAttention-3: exponentials, ping-pong warpgroups, FP8 scores
# --------------------------------------------------------------------------------------------

from course_lib.hardware import get_accelerator
from course_lib.attention import (H100_SFU_FLOPS_FA3, exp_to_matmul_time, fp8_scores_error,
                                  warpgroup_schedule)


def test_exp_to_matmul_time_is_the_papers_half_on_the_h100():
    h100 = get_accelerator("H100 SXM")
    assert exp_to_matmul_time(128, h100.peak("fp16")) == pytest.approx(0.5, abs=0.01)
    # Doubling the head dimension doubles the matmul work per exponential.
    assert exp_to_matmul_time(64, 1e15, 3e12) == pytest.approx(2 * exp_to_matmul_time(128, 1e15, 3e12))
    assert H100_SFU_FLOPS_FA3 == 3.9e12
    with pytest.raises(ValueError, match="head_dim"):
        exp_to_matmul_time(0, 1e15)


def test_warpgroup_schedule_against_closed_forms():
    rng = np.random.default_rng(602)
    for g, s, n in zip(rng.uniform(0.3, 2, 5), rng.uniform(0, 1, 5), rng.integers(1, 40, 5)):
        one = warpgroup_schedule(g, s, int(n), 1)
        assert one.makespan_s == pytest.approx(n * (g + s))
        two = warpgroup_schedule(g, min(s, g), int(n), 2)
        assert two.makespan_s == pytest.approx(2 * n * g + min(s, g))
        # Tensor cores never run two GEMMs at once: sorted starts are at least g apart.
        starts = np.sort(two.gemm_start_s.ravel())
        assert np.all(np.diff(starts) >= g - 1e-12)
        assert 0 < one.tensor_busy_fraction <= two.tensor_busy_fraction <= 1 + 1e-12
    # With softmax longer than the GEMM, two groups leave the tensor cores idle part of the time.
    assert warpgroup_schedule(1.0, 3.0, 10, 2).tensor_busy_fraction < 0.6


def test_fp8_scores_error_rotation_helps_only_with_outlier_channels():
    rng = np.random.default_rng(603)
    q, k = rng.standard_normal((2, 193, 64))
    plain = fp8_scores_error(q, k, "tensor")
    rotated = fp8_scores_error(q, k, "tensor", rotate=True, rng=np.random.default_rng(1))
    assert 0.005 < plain < 0.1 and rotated == pytest.approx(plain, rel=0.3)
    q[:, 3] *= 25
    k[:, 3] *= 25
    assert fp8_scores_error(q, k, "block", 37, rotate=True, rng=np.random.default_rng(1)) < \
        0.5 * fp8_scores_error(q, k, "block", 37)
    with pytest.raises(ValueError, match="power-of-two"):
        fp8_scores_error(q[:, :63], k[:, :63], rotate=True, rng=rng)
    with pytest.raises(TypeError, match="rng"):
        fp8_scores_error(q, k, rotate=True)
    with pytest.raises(ValueError, match="scaling"):
        fp8_scores_error(q, k, "row")


def test_fp8_scores_error_refuses_scores_without_a_relative_error():
    rng = np.random.default_rng(604)
    q, k = rng.standard_normal((2, 37, 16))
    with pytest.raises(ValueError, match="not all zero"):
        fp8_scores_error(np.zeros_like(q), k)
    with pytest.raises(ValueError, match="at least one row"):
        fp8_scores_error(q[:0], k)
