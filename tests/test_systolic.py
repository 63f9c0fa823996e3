"""Tests for course_lib.systolic: exact products and counted loads against the formulas."""


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib.systolic import reuse_comparison, systolic_load_counts, systolic_matmul

dims = st.integers(1, 23)
array_side = st.integers(1, 9)


@settings(max_examples=60, deadline=None)
@given(dims, dims, dims, array_side, array_side, st.integers(0, 2 ** 32 - 1))
def test_integer_product_is_exact(m, k, n, rows, cols, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-50, 50, (m, k))
    b = rng.integers(-50, 50, (k, n))
    run = systolic_matmul(a, b, rows, cols)
    np.testing.assert_array_equal(run.c, np.matmul(a, b))


@settings(max_examples=30, deadline=None)
@given(dims, dims, dims, array_side, array_side, st.integers(0, 2 ** 32 - 1))
def test_float_product_matches_numpy(m, k, n, rows, cols, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    np.testing.assert_allclose(systolic_matmul(a, b, rows, cols).c, a @ b, rtol=1e-10, atol=1e-10)


@settings(max_examples=60, deadline=None)
@given(dims, dims, dims, array_side, array_side)
def test_counted_loads_match_the_formula(m, k, n, rows, cols):
    run = systolic_matmul(np.ones((m, k)), np.ones((k, n)), rows, cols)
    want = systolic_load_counts(m, k, n, rows, cols)
    got = {"weight_loads": run.weight_loads, "input_loads": run.input_loads, "macs": run.macs,
           "output_accumulates": run.output_accumulates, "cycles": run.cycles}
    assert got == want
    assert 0 < run.utilisation <= 1


def test_non_divisible_shape_by_hand():
    # 13 x 17 @ 17 x 11 on a 4 x 5 array: ceil(17/4) = 5 k-tiles, ceil(11/5) = 3 n-tiles
    run = systolic_matmul(np.ones((13, 17), dtype=int), np.ones((17, 11), dtype=int), rows=4, cols=5)
    assert run.tiles == 15
    assert run.macs == 13 * 17 * 11
    assert run.input_loads == 13 * 17 * 3
    assert run.weight_loads == 17 * 11
    assert run.cycles_per_tile == 13 + 4 + 5 - 2
    assert np.all(run.c == 17)


def test_reuse_grows_with_the_array_and_approaches_its_width():
    run = systolic_matmul(np.ones((512, 8)), np.ones((8, 8)), 8, 8)      # one tile, long stream
    assert run.macs_per_operand_load == pytest.approx(512 * 64 / (64 + 512 * 8))
    assert run.macs_per_operand_load < 8
    cmp = reuse_comparison(4096, 4096, 4096, sizes=(8, 32, 128))
    assert np.all(np.diff(cmp["systolic"]) > 0) and np.all(np.diff(cmp["gpu_tile"]) > 0)
    # a square GPU tile of side s reuses each operand s/2 times per load on a large matmul
    np.testing.assert_allclose(cmp["gpu_tile"], np.array([8, 32, 128]) / 2)
    assert np.all(cmp["systolic"] > cmp["gpu_tile"])


def test_single_pe_is_a_scalar_machine():
    a, b = np.arange(6).reshape(2, 3), np.arange(12).reshape(3, 4)
    run = systolic_matmul(a, b, 1, 1)
    np.testing.assert_array_equal(run.c, a @ b)
    assert run.macs == run.input_loads == 2 * 3 * 4
    assert run.cycles == 3 * 4 * 2


@pytest.mark.parametrize("call, exc, name", [
    (lambda: systolic_matmul(np.ones((2, 3)), np.ones((4, 2))), ValueError, "columns"),
    (lambda: systolic_matmul(np.ones(3), np.ones((3, 2))), ValueError, "a must be 2-D"),
    (lambda: systolic_matmul(np.ones((2, 3)), np.ones((3, 0))), ValueError, "b must not be empty"),
    (lambda: systolic_matmul(np.array([[np.inf]]), np.ones((1, 1))), ValueError, "a must contain"),
    (lambda: systolic_matmul([["x"]], np.ones((1, 1))), TypeError, "a must hold"),
    (lambda: systolic_matmul(np.ones((1, 1)), None), TypeError, "b must be"),
    (lambda: systolic_matmul(np.ones((2, 2)), np.ones((2, 2)), rows=0), ValueError, "rows"),
    (lambda: systolic_matmul(np.ones((2, 2)), np.ones((2, 2)), cols=1.5), TypeError, "cols"),
    (lambda: systolic_load_counts(0, 1, 1, 1, 1), ValueError, "m"),
    (lambda: reuse_comparison(8, 8, 8, sizes=()), ValueError, "sizes"),
    (lambda: reuse_comparison(8, 8, 8, sizes=(4, -2)), ValueError, "size"),
])
def test_bad_input_names_the_argument(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


def test_tpu_mxu_sides():
    """TPU v1: 256 x 256 = 65,536 MACs (Jouppi et al. 2017); v2 to v5: 128 x 128 per MXU."""
    from course_lib.systolic import TPU_MXU_SIDE, TPU_V1_MXU_SIDE
    assert TPU_V1_MXU_SIDE ** 2 == 65536
    assert TPU_MXU_SIDE ** 2 == 16384
