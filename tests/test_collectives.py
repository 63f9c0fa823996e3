"""Tests for course_lib.collectives: the alpha-beta formulas and the simulated ring."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib.collectives import (
    COLLECTIVES, NIC_NDR_BANDWIDTH_BYTES_PER_S, Link, collective_bytes_per_rank, collective_steps,
    collective_time_s, get_link, interconnect_hierarchy, ring_all_reduce_link_bytes, ring_chunk_sizes,
    simulate_ring_all_gather, simulate_ring_all_reduce, simulate_ring_reduce_scatter, simulated_time_s,
    transfer_time_s)
from course_lib.hardware import get_accelerator

ranks_and_length = st.tuples(st.integers(1, 9), st.integers(0, 60))


def _data(n, length, seed):
    return np.random.default_rng(seed).integers(-1000, 1000, size=(n, length))


# ---------------------------------------------------------------- simulated ring

@settings(max_examples=60, deadline=None)
@given(ranks_and_length, st.integers(0, 2 ** 32 - 1))
def test_all_reduce_sum_is_exact_for_integers(shape, seed):
    n, length = shape
    data = _data(n, length, seed)
    trace = simulate_ring_all_reduce(data)
    np.testing.assert_array_equal(trace.result, np.broadcast_to(np.sum(data, axis=0), data.shape))


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 8), st.integers(1, 40), st.integers(0, 2 ** 32 - 1))
def test_all_reduce_of_floats_is_close_to_numpy(n, length, seed):
    data = np.random.default_rng(seed).standard_normal((n, length))
    trace = simulate_ring_all_reduce(data)
    np.testing.assert_allclose(trace.result, np.broadcast_to(data.sum(axis=0), data.shape), rtol=1e-12, atol=1e-12)


def test_input_is_not_modified():
    data = _data(5, 17, 3)
    before = data.copy()
    simulate_ring_all_reduce(data)
    np.testing.assert_array_equal(data, before)


@settings(max_examples=60, deadline=None)
@given(ranks_and_length, st.sampled_from([1, 2, 4, 8]))
def test_link_bytes_match_the_chunk_count(shape, itemsize):
    n, length = shape
    dtype = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}[itemsize]
    data = np.ones((n, length), dtype=dtype)
    trace = simulate_ring_all_reduce(data)
    np.testing.assert_array_equal(trace.link_bytes, ring_all_reduce_link_bytes(length, n, itemsize))
    # every chunk crosses n-1 links in each half: 2(n-1) L elements in all
    assert trace.total_bytes == 2 * (n - 1) * length * itemsize
    assert trace.n_steps == 2 * (n - 1)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 9), st.integers(1, 12))
def test_divisible_length_gives_the_textbook_fraction(n, per_rank):
    length = n * per_rank
    trace = simulate_ring_all_reduce(np.zeros((n, length), dtype=np.float32))
    expected = collective_bytes_per_rank("all_reduce", length * 4, n)
    np.testing.assert_allclose(trace.link_bytes, expected)


def test_non_divisible_links_carry_unequal_bytes():
    # 17 elements over 5 ranks: chunks 4,4,3,3,3; link r skips chunks r and r+1
    trace = simulate_ring_all_reduce(np.zeros((5, 17), dtype=np.int64))
    sizes = np.array([4, 4, 3, 3, 3])
    expected = [8 * (34 - sizes[r] - sizes[(r + 1) % 5]) for r in range(5)]
    np.testing.assert_array_equal(trace.link_bytes, expected)
    assert trace.link_bytes.max() > trace.link_bytes.min()
    # no link carries more than 2(n-1) of the largest chunk
    assert trace.link_bytes.max() <= 2 * 4 * 4 * 8


@settings(max_examples=40, deadline=None)
@given(ranks_and_length, st.integers(0, 2 ** 32 - 1))
def test_reduce_scatter_leaves_rank_r_the_sum_of_chunk_r(shape, seed):
    n, length = shape
    data = _data(n, length, seed)
    trace = simulate_ring_reduce_scatter(data)
    bounds = np.concatenate(([0], np.cumsum(ring_chunk_sizes(length, n))))
    total = data.sum(axis=0)
    for r in range(n):
        np.testing.assert_array_equal(trace.result[r, bounds[r]:bounds[r + 1]], total[bounds[r]:bounds[r + 1]])
    assert trace.n_steps == n - 1


@settings(max_examples=40, deadline=None)
@given(ranks_and_length, st.integers(0, 2 ** 32 - 1))
def test_all_gather_gives_every_rank_every_chunk(shape, seed):
    n, length = shape
    data = _data(n, length, seed)
    bounds = np.concatenate(([0], np.cumsum(ring_chunk_sizes(length, n))))
    owned = np.zeros_like(data)
    for r in range(n):                       # rank r owns only chunk r
        owned[r, bounds[r]:bounds[r + 1]] = data[r, bounds[r]:bounds[r + 1]]
    want = owned.sum(axis=0)
    trace = simulate_ring_all_gather(owned)
    np.testing.assert_array_equal(trace.result, np.broadcast_to(want, data.shape))
    assert trace.total_bytes == (n - 1) * length * data.itemsize


def test_chunk_sizes_differ_by_at_most_one():
    sizes = ring_chunk_sizes(10, 4)
    np.testing.assert_array_equal(sizes, [3, 3, 2, 2])
    assert ring_chunk_sizes(3, 7).sum() == 3


def test_simulated_time_equals_formula_when_divisible():
    link = get_link("H100 SXM", "network")
    n, length = 6, 6 * 1000
    trace = simulate_ring_all_reduce(np.zeros((n, length), dtype=np.float32))
    assert math.isclose(simulated_time_s(trace, link),
                        collective_time_s("all_reduce", 4 * length, n, link), rel_tol=1e-12)


def test_simulated_time_is_paced_by_the_largest_chunk():
    trace = simulate_ring_all_reduce(np.zeros((4, 9), dtype=np.int64))   # chunks 3,2,2,2
    t = simulated_time_s(trace, bandwidth_bytes_per_s=8.0)
    assert t == pytest.approx(2 * 3 * 3)      # 6 steps, each waits for a 3-element chunk


# ---------------------------------------------------------------- formulas

@settings(max_examples=60, deadline=None)
@given(st.sampled_from(COLLECTIVES), st.floats(0, 1e12), st.integers(1, 4096))
def test_bytes_per_rank_below_twice_the_tensor(kind, nbytes, n):
    sent = collective_bytes_per_rank(kind, nbytes, n)
    bound = 2 * nbytes if kind == "all_reduce" else nbytes
    assert 0 <= sent <= bound * (1 + 1e-12)


def test_all_reduce_is_reduce_scatter_plus_all_gather():
    link = get_link("A100", "nvlink")
    for n in (2, 3, 8, 13):
        both = collective_time_s("reduce_scatter", 7e8, n, link) + collective_time_s("all_gather", 7e8, n, link)
        assert collective_time_s("all_reduce", 7e8, n, link) == pytest.approx(both)


def test_collective_time_by_hand():
    # 8 ranks, 1 GB, 450 GB/s, 3 us per step: 14 * 3 us + 1.75 GB / 450 GB/s
    t = collective_time_s("all_reduce", 1e9, 8, bandwidth_bytes_per_s=450e9, latency_s=3e-6)
    assert t == pytest.approx(14 * 3e-6 + 1.75e9 / 450e9)
    assert collective_time_s("all_gather", 1e9, 1, bandwidth_bytes_per_s=1.0) == 0.0
    assert collective_steps("all_to_all", 5) == 4


def test_hierarchy_reads_the_catalog_and_halves_both_direction_figures():
    h100 = get_accelerator("H100 SXM")
    links = {link.tier: link for link in interconnect_hierarchy("H100 SXM")}
    assert links["hbm"].bandwidth_bytes_per_s == h100.mem_bandwidth
    assert links["nvlink"].bandwidth_bytes_per_s == h100.interconnect_bandwidth / 2
    assert links["pcie"].bandwidth_bytes_per_s == h100.host_link_bandwidth / 2
    assert links["network"].bandwidth_bytes_per_s == 400e9 / 8
    order = [link.bandwidth_bytes_per_s for link in interconnect_hierarchy("H100 SXM")]
    assert order == sorted(order, reverse=True)


def test_chip_without_nvlink_uses_pcie_and_tpu_has_no_pcie():
    assert get_link("L4", "nvlink").tier == "pcie"
    with pytest.raises(ValueError, match="pcie"):
        get_link("TPU v5e", "pcie")


def test_transfer_time():
    assert transfer_time_s(0, 1.0, 2e-6) == 2e-6
    link = Link("x", "network", 50e9, 1e-5, "test")
    assert link.transfer_time_s(5e9) == pytest.approx(0.1 + 1e-5)
    assert NIC_NDR_BANDWIDTH_BYTES_PER_S == 50e9


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("call, exc, name", [
    (lambda: transfer_time_s(-1, 1.0), ValueError, "nbytes"),
    (lambda: transfer_time_s(1, 0.0), ValueError, "bandwidth_bytes_per_s"),
    (lambda: transfer_time_s(1, float("nan")), ValueError, "bandwidth_bytes_per_s"),
    (lambda: transfer_time_s("1", 1.0), TypeError, "nbytes"),
    (lambda: transfer_time_s(1, 1.0, -1e-6), ValueError, "latency_s"),
    (lambda: collective_steps("broadcastish", 4), ValueError, "kind"),
    (lambda: collective_steps("all_reduce", 0), ValueError, "n_ranks"),
    (lambda: collective_steps("all_reduce", 2.5), TypeError, "n_ranks"),
    (lambda: collective_bytes_per_rank("all_reduce", float("inf"), 4), ValueError, "nbytes"),
    (lambda: collective_time_s("all_reduce", 1, 4), TypeError, "bandwidth_bytes_per_s"),
    (lambda: collective_time_s("all_reduce", 1, 4, link="nvlink"), TypeError, "link"),
    (lambda: collective_time_s("all_reduce", 1, 4, bandwidth_bytes_per_s=-5), ValueError, "bandwidth_bytes_per_s"),
    (lambda: interconnect_hierarchy("H900"), ValueError, "H900"),
    (lambda: interconnect_hierarchy(3), TypeError, "accelerator"),
    (lambda: interconnect_hierarchy("H100", network_bandwidth_bytes_per_s=0), ValueError, "network_bandwidth"),
    (lambda: get_link("H100", "carrier pigeon"), ValueError, "tier"),
    (lambda: simulate_ring_all_reduce(np.zeros(5)), ValueError, "data"),
    (lambda: simulate_ring_all_reduce([["a", "b"]]), TypeError, "data"),
    (lambda: simulate_ring_all_reduce(np.array([[1.0, np.nan]])), ValueError, "data"),
    (lambda: simulate_ring_all_reduce(None), TypeError, "data"),
    (lambda: simulate_ring_all_gather(np.zeros((0, 3))), ValueError, "data"),
    (lambda: ring_chunk_sizes(-1, 3), ValueError, "length"),
    (lambda: ring_chunk_sizes(5, 0), ValueError, "n_ranks"),
    (lambda: ring_all_reduce_link_bytes(5, 2, itemsize=0), ValueError, "itemsize"),
    (lambda: simulated_time_s("trace", bandwidth_bytes_per_s=1.0), TypeError, "trace"),
])
def test_bad_input_names_the_argument(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


# --------------------------------------------------------------------------------------------
# TPU pods and all-reduce on a torus
# --------------------------------------------------------------------------------------------

from course_lib.collectives import get_tpu_pod, torus_all_reduce, tpu_pods


def test_pods_match_googles_pages_and_the_catalog():
    pods = {p.accelerator: p for p in tpu_pods()}
    assert pods["TPU v4"].chips == 4096 and pods["TPU v4"].topology == "3D mesh"
    assert pods["TPU v4"].optical_circuit_switches
    assert pods["TPU v5p"].chips == 8960 and pods["TPU v5p"].max_slice == (16, 16, 24)
    for name in ("TPU v5e", "TPU v6e"):
        pod, acc = pods[name], get_accelerator(name)
        assert pod.chips == 256 and pod.topology == "2D torus" and pod.ici_ports_per_chip == 4
        assert pod.allreduce_bytes_per_s / pod.chips == pytest.approx(acc.interconnect_bandwidth / 2)
    for pod in pods.values():
        assert math.prod(pod.max_slice) <= pod.chips and len(pod.source) > 20
    with pytest.raises(ValueError, match="no TPU pod"):
        get_tpu_pod("H100 SXM")


def test_torus_all_reduce_sends_the_ring_bound_in_fewer_steps():
    rng = np.random.default_rng(801)
    for _ in range(6):
        dims = tuple(int(d) for d in rng.integers(2, 13, size=int(rng.integers(1, 4))))
        p = math.prod(dims)
        s, beta, alpha = float(rng.uniform(1e6, 1e10)), float(rng.uniform(1e10, 2e11)), float(rng.uniform(0, 1e-5))
        t = torus_all_reduce(s, dims, beta, alpha)
        assert t.bytes_per_chip == pytest.approx(collective_bytes_per_rank("all_reduce", s, p))
        assert t.steps == 2 * sum(d - 1 for d in dims) <= 2 * (p - 1)
        assert t.time_s == pytest.approx(t.steps * alpha + t.bytes_per_chip / (2 * beta))
        both = torus_all_reduce(s, dims, beta, alpha, concurrent_dims=True)
        assert both.time_s - both.steps * alpha == pytest.approx((t.time_s - t.steps * alpha) / len(dims))
    # Second way: a one-dimensional torus is a bidirectional ring, the ring formula at 2 beta.
    ring = torus_all_reduce(3e9, (37,), 5e10, 2e-6)
    assert ring.time_s == pytest.approx(collective_time_s("all_reduce", 3e9, 37, bandwidth_bytes_per_s=1e11,
                                                          latency_s=2e-6))
    with pytest.raises(ValueError, match="dims"):
        torus_all_reduce(1e9, (), 1e10)
    with pytest.raises(TypeError, match="concurrent_dims"):
        torus_all_reduce(1e9, (4, 4), 1e10, concurrent_dims=1)
