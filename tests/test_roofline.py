"""Roofline maths: properties (hypothesis), second-way checks and bad input."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib.hardware import get_accelerator, list_accelerators
from course_lib.roofline import (Kernel, attainable_flops, binding_ceiling, elementwise_intensity,
                                 elementwise_kernel, hierarchical_ceilings, matmul_bytes, matmul_flops,
                                 matmul_intensity, matmul_kernel, place_kernel, ridge_point)

pos = st.floats(min_value=1e6, max_value=1e18, allow_nan=False, allow_infinity=False)
intens = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)
dims = st.integers(min_value=1, max_value=50_000)


@given(peak=pos, bw=pos, i1=intens, i2=intens)
def test_monotone_in_intensity(peak, bw, i1, i2):
    lo, hi = sorted((i1, i2))
    assert attainable_flops(lo, peak, bw) <= attainable_flops(hi, peak, bw)


@given(peak=pos, bw=pos, i=intens)
def test_never_above_either_roof(peak, bw, i):
    p = attainable_flops(i, peak, bw)
    assert p <= peak * (1 + 1e-12) and p <= bw * i * (1 + 1e-12)
    assert p == pytest.approx(min(peak, bw * i))


@given(peak=pos, bw=pos)
def test_continuous_at_ridge(peak, bw):
    r = ridge_point(peak, bw)
    eps = 1e-9
    left, right = attainable_flops(r * (1 - eps), peak, bw), attainable_flops(r * (1 + eps), peak, bw)
    assert left == pytest.approx(peak, rel=1e-8) and right == pytest.approx(peak, rel=1e-8)
    assert attainable_flops(r, peak, bw) == pytest.approx(peak)


@given(m=dims, k=dims, n=dims, b=st.sampled_from([0.5, 1, 2, 4]))
@settings(max_examples=60)
def test_matmul_intensity_second_way(m, k, n, b):
    """Against an explicit count: FLOP from a loop-free einsum shape count, bytes per operand."""
    flops = 2 * m * k * n
    bytes_ = b * m * k + b * k * n + b * m * n
    assert matmul_intensity(m, k, n, b) == pytest.approx(flops / bytes_)
    assert matmul_flops(m, k, n) == flops and matmul_bytes(m, k, n, b) == pytest.approx(bytes_)


def test_matmul_flops_counts_real_products():
    """FLOP formula against NumPy: an m x k x n product done as m*n dot products of length k."""
    rng = np.random.default_rng(7)
    m, k, n = 5, 13, 3                                    # asymmetric, odd sizes
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    multiplies = sum(len(a[i]) for i in range(m) for _ in range(n))
    assert matmul_flops(m, k, n) == 2 * multiplies
    assert np.allclose(a @ b, np.einsum("ik,kn->in", a, b))


def test_square_is_n_over_3_in_two_byte_formats():
    for n in (17, 1000, 4099):
        assert matmul_intensity(n, n, n, 2) == pytest.approx(n / 3)


def test_batched_and_shared_weight_bytes():
    assert matmul_bytes(4, 6, 5, 2, batch=3) == pytest.approx(3 * matmul_bytes(4, 6, 5, 2))
    shared = matmul_bytes(4, 6, 5, 2, batch=3, shared_weights=True)
    assert shared == pytest.approx(2 * (3 * (4 * 6 + 4 * 5) + 6 * 5))


def test_elementwise():
    assert elementwise_intensity(8, 2) == 2.0
    assert elementwise_intensity(1, 4, reads=2, writes=1) == pytest.approx(1 / 12)
    k = elementwise_kernel("gelu", 1000, 8, "bf16")
    assert k.bytes_moved == 4000 and k.flops == 8000


def test_place_kernel_agrees_with_time_bound():
    rng = np.random.default_rng(3)
    for _ in range(20):
        m, k, n = (int(x) for x in rng.integers(1, 20000, size=3))
        p = place_kernel(matmul_kernel("x", m, k, n, "bf16"), "H100 SXM", "bf16")
        assert p.kernel.flops / p.attainable_flops == pytest.approx(p.t_min_s)
        assert p.bound == ("memory" if p.t_memory_s > p.t_compute_s else "compute")


def test_hierarchical_ceilings_ordered_and_binding():
    ceilings = hierarchical_ceilings("H100 SXM", "bf16")
    bws = [c.bandwidth_bytes_per_s for c in ceilings]
    assert bws == sorted(bws, reverse=True)              # nearer levels are faster
    level, p = binding_ceiling({"HBM (HBM3)": 10.0, "shared memory": 12.0}, "H100 SXM")
    assert level == "HBM (HBM3)" and p == pytest.approx(10.0 * 3.35e12)
    # Shared memory binds when reuse from it is low: intensity against it 1/64 of HBM's.
    level, _ = binding_ceiling({"HBM (HBM3)": 640.0, "shared memory": 10.0}, "H100 SXM")
    assert level == "shared memory"
    assert not any(c.level == "L2" for c in ceilings)      # no published Hopper L2 bandwidth, no roof
    a100 = hierarchical_ceilings("A100", "bf16")            # the A100 whitepaper gives 5120 B/clock
    l2 = next(c for c in a100 if c.level == "L2")
    assert l2.bandwidth_bytes_per_s == pytest.approx(5120 * 1.41e9)
    assert [c.level for c in a100][:3] == ["shared memory", "L2", "HBM (HBM2e)"]
    assert l2.ridge_point == pytest.approx(312e12 / (5120 * 1.41e9))
    with pytest.raises(ValueError, match="unknown"):
        binding_ceiling({"L9": 1.0})
    assert hierarchical_ceilings("TPU v5e")[0].level.startswith("HBM")


@pytest.mark.parametrize("args", [(0, 1), (-1, 1), (1, 0), (math.nan, 1), (1, math.inf)])
def test_ridge_bad_input(args):
    with pytest.raises(ValueError):
        ridge_point(*args)


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="intensity"):
        attainable_flops(-1.0, 1e12, 1e9)
    with pytest.raises(ValueError, match="intensity"):
        attainable_flops(np.array([1.0, np.nan]), 1e12, 1e9)
    with pytest.raises(TypeError, match="peak_flops"):
        attainable_flops(1.0, "fast", 1e9)
    with pytest.raises(ValueError, match="m must be"):
        matmul_intensity(0, 4, 4)
    with pytest.raises(TypeError, match="k must be an integer"):
        matmul_intensity(4, 2.5, 4)
    with pytest.raises(ValueError, match="bytes_per_element"):
        matmul_intensity(4, 4, 4, 0)
    with pytest.raises(ValueError, match="reads"):
        elementwise_intensity(1, 2, reads=0, writes=0)
    with pytest.raises(TypeError, match="kernel"):
        place_kernel("gemm")
    with pytest.raises(ValueError, match="bytes_moved"):
        place_kernel(Kernel("empty", 1.0, 0.0))
    with pytest.raises(ValueError, match="precision"):
        place_kernel(matmul_kernel("x", 2, 2, 2), "TPU v5e", "fp8")


def test_array_intensity():
    out = attainable_flops(np.array([0.0, 1.0, 1e6]), 100.0, 10.0)
    assert out.tolist() == [0.0, 10.0, 100.0]


# ------------------------------------------------------------------ reading a profile

def test_read_profile_fractions_agree_with_the_roofline_two_ways():
    from course_lib.roofline import read_profile
    rng = np.random.default_rng(77)
    names = list_accelerators()
    for _ in range(40):
        acc = get_accelerator(names[int(rng.integers(len(names)))])
        prec = "bf16" if "bf16" in acc.peak_flops else "fp16"
        q = 10 ** rng.uniform(5, 10)
        f = q * 10 ** rng.uniform(-2, 4)
        t_min = max(f / acc.peak(prec), q / acc.mem_bandwidth)
        t = t_min * 10 ** rng.uniform(0, 1.5)
        r = read_profile("k", t, q, f, acc.name, prec)
        roof = min(acc.peak(prec), acc.mem_bandwidth * f / q)
        assert np.isclose(r.fraction_of_roof, (f / t) / roof)
        assert np.isclose(r.fraction_of_roof, max(r.compute_fraction, r.memory_fraction))
        assert np.isclose(r.fraction_of_roof, t_min / t)          # third way: bound time over time
        assert r.fraction_of_roof <= 1 + 1e-9
        want = "latency" if max(r.compute_fraction, r.memory_fraction) < 0.6 else \
            ("memory" if r.memory_fraction >= r.compute_fraction else "compute")
        assert r.limiter == want
        assert r.roof == ("memory" if f / q < acc.ridge_point(prec) else "compute")


def test_read_profile_verdicts_and_errors():
    from course_lib.roofline import read_profile
    h100 = get_accelerator("H100 SXM")
    fast = read_profile("stream", 1e9 / (0.9 * h100.mem_bandwidth), 1e9, 1e9)
    assert fast.limiter == "memory" and "near the hardware's limit" in fast.verdict
    slow = read_profile("small", 1e9 / (0.3 * h100.mem_bandwidth), 1e9, 1e9)
    assert slow.limiter == "latency" and "neither roof" in slow.verdict
    over = read_profile("cached", 1e9 / (2 * h100.mem_bandwidth), 1e9, 1e9)
    assert over.fraction_of_roof > 1 and "above" in over.verdict
    with pytest.raises(ValueError, match="duration_s"):
        read_profile("k", 0.0, 1e6, 1e6)
    with pytest.raises(ValueError, match="bytes_moved"):
        read_profile("k", 1e-3, -1.0, 1e6)
    with pytest.raises(TypeError, match="name"):
        read_profile(None, 1e-3, 1e6, 1e6)
