"""Tiled matmul traffic (formula against a walk), the tensor-core hierarchy, fusion, kernel tests."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib.hardware import get_accelerator
from course_lib.tiling import (
    MMA_SHAPES,
    check_matmul_kernel,
    fusion_traffic,
    matmul_indexing_bug,
    matmul_precision_bug,
    simulate_tiled_matmul,
    smem_bytes_per_block,
    strong_matmul_cases,
    tile_instruction_counts,
    tile_limit,
    tiled_matmul,
    tiled_matmul_traffic,
    tiling_hierarchy,
    traffic_sweep,
    weak_matmul_cases,
)


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 90), k=st.integers(1, 90), n=st.integers(1, 90),
       tm=st.integers(1, 100), tn=st.integers(1, 100), tk=st.integers(1, 100), b=st.sampled_from([0.5, 1, 2, 4]))
def test_walk_agrees_with_formula_including_edge_tiles(m, k, n, tm, tn, tk, b):
    walk = simulate_tiled_matmul(m, k, n, tm, tn, tile_k=tk, bytes_per_element=b)
    formula = tiled_matmul_traffic(m, k, n, tm, tn, bytes_per_element=b)
    assert walk.traffic.a_bytes == formula.a_bytes
    assert walk.traffic.b_bytes == formula.b_bytes
    assert walk.traffic.c_bytes == formula.c_bytes
    # every element of A is loaded once per column of tiles, every C element stored exactly once
    assert np.all(walk.a_loads == math.ceil(n / tn))
    assert np.all(walk.b_loads == math.ceil(m / tm))
    assert np.all(walk.c_stores == 1)
    assert walk.tiles == math.ceil(m / tm) * math.ceil(n / tn)


@settings(max_examples=30, deadline=None)
@given(m=st.integers(1, 5000), k=st.integers(1, 5000), n=st.integers(1, 5000), t=st.integers(1, 600))
def test_traffic_never_below_the_floor_and_doubling_never_hurts(m, k, n, t):
    small = tiled_matmul_traffic(m, k, n, t)
    big = tiled_matmul_traffic(m, k, n, 2 * t)
    assert small.bytes_moved >= small.min_bytes
    assert big.bytes_moved <= small.bytes_moved
    assert small.flops == 2.0 * m * k * n


def test_large_square_matmul_intensity_is_tile_over_b():
    # for m = n = k >> T, bytes ~ 2 b m k n / T, so intensity ~ T / b FLOP per byte
    t = 128
    traffic = tiled_matmul_traffic(16384, 16384, 16384, t, bytes_per_element=2)
    assert traffic.intensity_flops_per_byte == pytest.approx(t / 2, rel=0.01)
    one_tile = tiled_matmul_traffic(300, 200, 250, 1000)
    assert one_tile.excess_factor == 1.0


def test_sweep_carries_formula_and_walk():
    sweep = traffic_sweep(170, 90, 130, tiles=[8, 16, 48, 200], simulate=[16, 48])
    assert np.all(np.diff(sweep.predicted_bytes) <= 0)
    for t, sim in zip(sweep.simulated_tiles, sweep.simulated_bytes):
        assert sim == tiled_matmul_traffic(170, 90, 130, int(t)).bytes_moved
    assert sweep.predicted_bytes[-1] == sweep.min_bytes


def test_smem_bytes_and_tile_limit_from_catalog():
    assert smem_bytes_per_block(128, 128, 32, 2, stages=2) == 32 * 1024
    h100 = get_accelerator("H100 SXM")
    lim = tile_limit("H100 SXM", "bf16", tile_k=32, stages=2)
    # the largest tile fits, the next multiple does not
    assert smem_bytes_per_block(lim.smem_limit, lim.smem_limit, 32, 2, 2) <= h100.max_shared_mem_bytes_per_block
    nxt = lim.smem_limit + lim.multiple
    assert smem_bytes_per_block(nxt, nxt, 32, 2, 2) > h100.max_shared_mem_bytes_per_block
    assert lim.register_limit ** 2 * 4 < h100.register_file_bytes_per_sm
    # 256 x 256 FP32 accumulators are exactly the 65,536-register file: no room for operands.
    assert 256 ** 2 * 4 == h100.register_file_bytes_per_sm and lim.register_limit == 240
    assert lim.largest == min(lim.smem_limit, lim.register_limit)
    assert lim.binding == "registers"
    # FP32 operands take twice the bytes: the shared-memory bound halves (to the multiple)
    assert tile_limit("H100 SXM", "fp32").smem_limit <= lim.smem_limit // 2 + lim.multiple


def test_mma_counts_for_one_instruction_and_a_ragged_tile():
    one = tile_instruction_counts(16, 8, 16)
    assert one.mma_instructions == 1
    assert one.fma_instructions == 16 * 8 * 16 // 32          # 2048 FMAs, 32 per warp instruction
    assert one.mma_flops_per_operand == pytest.approx(4096 / (16 * 16 + 16 * 8))
    assert one.fma_flops_per_operand == 1.0
    ragged = tile_instruction_counts(17, 9, 17)              # every dimension spills into a second MMA
    assert ragged.mma_instructions == 2 * 2 * 2
    assert MMA_SHAPES["m16n8k16"] == (16, 8, 16)


def test_hierarchy_reuse_is_2mn_over_m_plus_n_and_falls_level_by_level():
    levels = tiling_hierarchy(block=(128, 256, 32), warp=(64, 64))
    assert levels[0].flops_per_element == pytest.approx(2 * 128 * 256 / (128 + 256))
    assert levels[1].units_per_parent == 2 * 4
    assert levels[2].units_per_parent == (64 // 16) * (64 // 8) * (32 // 16)
    reuse = [lvl.flops_per_element for lvl in levels]
    assert reuse == sorted(reuse, reverse=True)
    assert reuse[-1] == 1.0


def test_fusion_bytes_and_time():
    r, c = 3001, 1027
    res = fusion_traffic(r, c, "bf16", "H100 SXM", save_mask=False)
    e = r * c
    assert res.bytes_unfused == 2 * (6 * e + c)
    assert res.bytes_fused == 2 * (2 * e + c)
    assert res.t_fused_s == pytest.approx(res.bytes_fused / get_accelerator("H100 SXM").mem_bandwidth)
    with_mask = fusion_traffic(r, c, "bf16", save_mask=True)
    assert with_mask.bytes_fused - res.bytes_fused == e
    assert 2.5 < with_mask.speedup < res.speedup < 3.0


def test_correct_kernel_passes_both_tests_and_bugs_pass_only_the_weak_one():
    rng = np.random.default_rng(2024)
    strong = strong_matmul_cases(rng, count=4)
    weak = weak_matmul_cases()
    for kernel in (tiled_matmul, matmul_indexing_bug, matmul_precision_bug):
        assert check_matmul_kernel(kernel, weak).passed, kernel.__name__
    assert check_matmul_kernel(tiled_matmul, strong).passed
    assert not check_matmul_kernel(matmul_indexing_bug, strong).passed
    assert not check_matmul_kernel(matmul_precision_bug, strong).passed


def test_strong_cases_are_asymmetric_and_ragged():
    cases = strong_matmul_cases(np.random.default_rng(1), count=6)
    shapes = [(a.shape[0], a.shape[1], b.shape[1]) for a, b in cases]
    assert all(len(set(s)) == 3 and all(x % 8 for x in s) for s in shapes)
    assert any(m < n for m, _, n in shapes) and any(m > n for m, _, n in shapes)


def test_tiled_matmul_matches_numpy_in_float64():
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((37, 53)), rng.standard_normal((53, 29))
    np.testing.assert_allclose(tiled_matmul(a, b, tile=8, tile_k=5), a @ b, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("call, exc, word", [
    (lambda: tiled_matmul_traffic(0, 4, 4, 2), ValueError, "m"),
    (lambda: tiled_matmul_traffic(4, 4, 4, -1), ValueError, "tile_m"),
    (lambda: tiled_matmul_traffic(4, 4, 4, 2.5), TypeError, "tile_m"),
    (lambda: tiled_matmul_traffic(4, 4, 4, 2, bytes_per_element=float("nan")), ValueError, "bytes_per_element"),
    (lambda: simulate_tiled_matmul(4, 4, 4, 2, tile_k=0), ValueError, "tile_k"),
    (lambda: simulate_tiled_matmul(100_000, 100_000, 100_000, 1), ValueError, "walk would visit"),
    (lambda: smem_bytes_per_block(8, 8, 8, stages=0), ValueError, "stages"),
    (lambda: tile_limit("H900"), ValueError, "H900"),
    (lambda: tile_limit("TPU v5e"), ValueError, "catalog has no"),
    (lambda: tile_limit("H100 SXM", "fp12"), ValueError, "precision"),
    (lambda: tile_instruction_counts(16, 8, 16, mma="m99"), ValueError, "mma"),
    (lambda: tile_instruction_counts(16, 8, 16, mma=[16, 8]), TypeError, "mma"),
    (lambda: tiling_hierarchy(block=(128, 128, 32), warp=(48, 64)), ValueError, "divide"),
    (lambda: tiling_hierarchy(block=(128, 128)), TypeError, "block"),
    (lambda: fusion_traffic(0, 10), ValueError, "rows"),
    (lambda: fusion_traffic(10, 10, save_mask=1), TypeError, "save_mask"),
    (lambda: tiled_matmul(np.ones((3, 4)), np.ones((5, 2))), ValueError, "columns"),
    (lambda: tiled_matmul(np.ones((3, 4)), np.full((4, 2), np.nan)), ValueError, "b must contain only finite"),
    (lambda: tiled_matmul(np.ones((3, 4)), np.ones((4, 2)), tile=0), ValueError, "tile"),
    (lambda: check_matmul_kernel("not a kernel", weak_matmul_cases()), TypeError, "kernel"),
    (lambda: check_matmul_kernel(tiled_matmul, []), ValueError, "cases"),
    (lambda: strong_matmul_cases(42), TypeError, "rng"),
    (lambda: traffic_sweep(10, 10, 10, tiles=[]), ValueError, "tiles"),
])
def test_bad_input_is_named(call, exc, word):
    with pytest.raises(exc, match=word):
        call()


# --------------------------------------------------------------------------------------------
# Fusing compilers: the graph traffic counter
# --------------------------------------------------------------------------------------------

from course_lib.tiling import graph_traffic, layernorm_gelu_residual_graph


def test_layernorm_chain_traffic_matches_hand_counts():
    rng = np.random.default_rng(601)
    for rows, cols in rng.integers(3, 700, size=(4, 2)):
        rows, cols = int(rows), int(cols) | 1
        for prec, b in (("bf16", 2), ("fp32", 4)):
            ops, sizes, outputs, plans = layernorm_gelu_residual_graph(rows, cols, prec)
            e = rows * cols
            got = {n: graph_traffic(ops, sizes, k, outputs) for n, k in plans.items()}
            assert got["one fused kernel"].bytes_moved == b * (4 * e + 2 * cols)
            assert got["library LayerNorm"].bytes_moved == b * (7 * e + 2 * cols)
            # One kernel per primitive, op by op: add 3E; mean E + R; subtract 2E + R; square 2E;
            # variance E + R; rsqrt 2R; scale 2E + R; affine 2E + 2C; gelu 2E.
            assert got["one kernel per primitive"].bytes_moved == b * (15 * e + 6 * rows + 2 * cols)
            flops = {g.flops for g in got.values()}
            assert len(flops) == 1                      # grouping changes bytes, never FLOP


def test_graph_traffic_one_kernel_per_op_is_every_tensor_touched():
    """Second way: with one op per kernel, bytes = sum over ops of its inputs and outputs."""
    sizes = {"a": 3.0, "b": 5.0, "c": 7.0, "d": 11.0, "e": 13.0}
    ops = [("f", ("a", "b"), ("c",), 1.0), ("g", ("c", "a"), ("d",), 2.0), ("h", ("d", "c"), ("e",), 4.0)]
    per_op = graph_traffic(ops, sizes, [("f",), ("g",), ("h",)], ("e",))
    assert per_op.bytes_moved == sum(sizes[t] for _, ins, outs, _ in ops for t in ins + outs)
    fused = graph_traffic(ops, sizes, [("f", "g", "h")], ("e",))
    assert fused.bytes_moved == sizes["a"] + sizes["b"] + sizes["e"]
    # c is read by g and h: kept for h by a two-kernel split, it is written once and read once.
    split = graph_traffic(ops, sizes, [("f", "g"), ("h",)], ("e",))
    assert split.bytes_moved == (3 + 5 + 7 + 11) + (11 + 7 + 13)
    assert per_op.flops == fused.flops == 7.0


@pytest.mark.parametrize("kernels, outputs, match", [
    ([("f",), ("g",)], ("e",), "partition"),
    ([("f", "g", "h"), ("h",)], ("e",), "partition"),
    ([("f", "g", "h")], ("zz",), "not produced"),
])
def test_graph_traffic_rejects_bad_groupings(kernels, outputs, match):
    sizes = {"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0, "e": 1.0}
    ops = [("f", ("a", "b"), ("c",), 1.0), ("g", ("c", "a"), ("d",), 2.0), ("h", ("d", "c"), ("e",), 4.0)]
    with pytest.raises(ValueError, match=match):
        graph_traffic(ops, sizes, kernels, outputs)
    with pytest.raises(ValueError, match="sizes"):
        graph_traffic(ops, {"a": 1.0}, [("f", "g", "h")], ("e",))
