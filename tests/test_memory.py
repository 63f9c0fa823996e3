"""Tests of course_lib.memory and course_lib.measure.memory.

The cache simulator is checked against a plain OrderedDict LRU on random traces; bank-conflict
degrees against a brute-force count; the pipeline recurrence against its closed form; the
hierarchy against the catalog arithmetic written out independently here.
"""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib.hardware import get_accelerator, list_accelerators
from course_lib.measure.memory import (BandwidthLadder, LatencyLadder, measure_bandwidth_ladder,
                                       measure_latency_ladder, random_cycle)
from course_lib.memory import (PATTERNS, bank_of, column_read_conflict_degree, conflict_degree,
                               copy_hidden, hit_rate_sweep, make_trace, memory_hierarchy, n_sets,
                               pipeline_timeline, pipelined_time_s, simulate_cache,
                               strided_conflict_degree, transfer_table, transfer_time_s)


# ---------------------------------------------------------------- reference implementations

def lru_reference(addresses, capacity_bytes, line_bytes, ways):
    """One OrderedDict per set, most recent at the end; evict from the front."""
    sets = capacity_bytes // (line_bytes * ways)
    cache = [OrderedDict() for _ in range(sets)]
    hits = []
    for a in addresses:
        line = int(a) // line_bytes
        s = cache[line % sets]
        if line in s:
            s.move_to_end(line)
            hits.append(True)
        else:
            hits.append(False)
            s[line] = None
            if len(s) > ways:
                s.popitem(last=False)
    return np.array(hits, dtype=bool)


def brute_conflicts(addresses):
    """Passes = max over banks of the number of distinct 4-byte words, counted with a dict."""
    per_bank = {}
    for a in addresses:
        word = int(a) // 4
        per_bank.setdefault(word % 32, set()).add(word)
    return max(len(v) for v in per_bank.values())


cache_shapes = st.tuples(st.sampled_from([4, 8, 16, 64]), st.integers(1, 6), st.integers(1, 7))


# ---------------------------------------------------------------- the cache simulator

@settings(max_examples=150, deadline=None)
@given(shape=cache_shapes, n=st.integers(0, 500), span_factor=st.floats(0.2, 6.0), seed=st.integers(0, 2**32 - 1))
def test_simulator_matches_ordereddict_lru(shape, n, span_factor, seed):
    line, ways, sets = shape
    capacity = line * ways * sets
    rng = np.random.default_rng(seed)
    addr = rng.integers(0, max(1, int(capacity * span_factor)), size=n)
    result = simulate_cache(addr, capacity, line, ways)
    np.testing.assert_array_equal(result.hit, lru_reference(addr, capacity, line, ways))
    assert result.hits + result.misses == n


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), pattern=st.sampled_from(PATTERNS))
def test_simulator_matches_reference_on_patterns(seed, pattern):
    rng = np.random.default_rng(seed)
    ws = int(rng.integers(100, 6000))
    trace = make_trace(pattern, ws, 700, element_bytes=4, stride_elements=int(rng.integers(1, 40)),
                       tile_bytes=int(rng.integers(4, 900)), reuse=int(rng.integers(1, 5)), rng=rng)
    np.testing.assert_array_equal(simulate_cache(trace, 1536, 32, 3).hit, lru_reference(trace, 1536, 32, 3))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), ways=st.integers(1, 5), extra_ways=st.integers(0, 4),
       sets=st.integers(1, 6), set_factor=st.integers(1, 4))
def test_more_ways_or_refined_sets_never_lose_a_hit(seed, ways, extra_ways, sets, set_factor):
    """LRU inclusion: every access that hits in the small cache hits in one with more ways and a
    multiple of its sets (each new set sees a sub-trace of an old one), so the hit rate is monotone."""
    rng = np.random.default_rng(seed)
    line = 16
    addr = rng.integers(0, line * ways * sets * 5, size=400)
    small = simulate_cache(addr, line * ways * sets, line, ways)
    big_w, big_s = ways + extra_ways, sets * set_factor
    big = simulate_cache(addr, line * big_w * big_s, line, big_w)
    assert np.all(big.hit[small.hit])
    assert big.hit_rate >= small.hit_rate


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), lines=st.integers(1, 64))
def test_fully_associative_hit_rate_monotone_in_capacity(seed, lines):
    rng = np.random.default_rng(seed)
    addr = rng.integers(0, 64 * 8 * 3, size=300)
    rates = [simulate_cache(addr, 8 * c, 8, c).hit_rate for c in (lines, lines + 1, 2 * lines + 3)]
    assert rates[0] <= rates[1] <= rates[2]


def test_sequential_sweep_hit_rates_follow_line_arithmetic():
    # Fits: only the first touch of each line misses. Too big for LRU: every line misses once per
    # sweep, so the hit rate falls to 1 - element/line (spatial locality only).
    cap, line = 4096, 64
    fits = simulate_cache(make_trace("sequential", 3000, 9000), cap, line, 4)
    lines_touched = math.ceil(3000 / line)
    assert fits.misses == lines_touched
    thrash = simulate_cache(make_trace("sequential", 3 * cap + 320, 30000), cap, line, 4)
    assert thrash.hit_rate == pytest.approx(1 - 4 / line, abs=2e-3)


def test_random_pattern_hit_rate_near_capacity_ratio():
    rng = np.random.default_rng(7)
    cap, ws = 8192, 8192 * 5
    r = simulate_cache(make_trace("random", ws, 60000, rng=rng), cap, 64, cap // 64)
    assert r.hit_rate == pytest.approx(cap / ws, abs=0.03)


def test_tiled_reuse_survives_beyond_capacity():
    # One element per line isolates reuse in time: a sweep over 10x the capacity never hits, while
    # a tile of half the capacity swept 8 times misses only on its first sweep: 1 - 1/8.
    cap, line = 8192, 64
    seq = simulate_cache(make_trace("sequential", 10 * cap, 40960, element_bytes=line), cap, line, 4)
    tiled = simulate_cache(make_trace("tiled", 10 * cap, 40960, element_bytes=line, tile_bytes=cap // 2,
                                      reuse=8), cap, line, 4)
    assert seq.hits == 0
    assert tiled.hit_rate == pytest.approx(1 - 1 / 8)


def test_conflict_misses_for_power_of_two_stride():
    # Stride = sets x line bytes maps every access to one set: with 5 lines cycling through a
    # 4-way set, LRU misses every time although the cache could hold 256 lines.
    cap, line, ways = 32 * 1024, 128, 4
    sets = n_sets(cap, line, ways)
    addr = np.tile(np.arange(5) * sets * line, 50)
    assert simulate_cache(addr, cap, line, ways).hits == 0
    assert simulate_cache(addr + np.tile(np.arange(5) * line, 50), cap, line, ways).hits == 245


def test_make_trace_patterns():
    rng = np.random.default_rng(3)
    seq = make_trace("sequential", 40, 25, element_bytes=4)
    np.testing.assert_array_equal(seq, (np.arange(25) % 10) * 4)
    strided = make_trace("strided", 44, 11, element_bytes=4, stride_elements=3)
    assert sorted(strided // 4) == list(range(11))
    tiled = make_trace("tiled", 48, 12, element_bytes=4, tile_bytes=12, reuse=2)
    np.testing.assert_array_equal(tiled // 4, [0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5])
    rnd = make_trace("random", 400, 1000, rng=rng)
    assert rnd.min() >= 0 and rnd.max() < 400 and np.all(rnd % 4 == 0)


def test_hit_rate_sweep_shapes():
    curve = hit_rate_sweep("sequential", [1000, 5000, 40000], 4096, 64, 4, n_accesses=5000)
    assert curve.hit_rate.shape == (3,)
    assert curve.hit_rate[0] > curve.hit_rate[-1]


def test_n_sets():
    assert n_sets(32 * 1024, 128, 4) == 64
    assert n_sets(3 * 64 * 5, 64, 5) == 3


@pytest.mark.parametrize("kwargs, exc, word", [
    (dict(capacity_bytes=1000, line_bytes=128, ways=4), ValueError, "capacity_bytes"),
    (dict(capacity_bytes=0, line_bytes=128, ways=4), ValueError, "capacity_bytes"),
    (dict(capacity_bytes=4096, line_bytes=-1, ways=4), ValueError, "line_bytes"),
    (dict(capacity_bytes=4096, line_bytes=128, ways=0), ValueError, "ways"),
    (dict(capacity_bytes=4096.5, line_bytes=128, ways=4), TypeError, "capacity_bytes"),
    (dict(capacity_bytes="4k", line_bytes=128, ways=4), TypeError, "capacity_bytes"),
])
def test_simulate_cache_rejects_bad_geometry(kwargs, exc, word):
    with pytest.raises(exc, match=word):
        simulate_cache([0, 64], **kwargs)


@pytest.mark.parametrize("addresses, exc", [
    ([-4, 8], ValueError), ([[0, 4]], ValueError), ([0.5, 4.0], TypeError), ("0x10", TypeError),
    ([True, False], TypeError), (5, TypeError), ([np.nan], TypeError),
])
def test_simulate_cache_rejects_bad_addresses(addresses, exc):
    with pytest.raises(exc, match="addresses"):
        simulate_cache(addresses, 4096, 64, 4)


def test_make_trace_rejects_bad_input():
    with pytest.raises(ValueError, match="pattern"):
        make_trace("zigzag", 100, 10)
    with pytest.raises(TypeError, match="rng"):
        make_trace("random", 100, 10)
    with pytest.raises(ValueError, match="working_set_bytes"):
        make_trace("sequential", 2, 10, element_bytes=4)
    with pytest.raises(ValueError, match="n_accesses"):
        make_trace("sequential", 100, -1)
    with pytest.raises(ValueError, match="stride_elements"):
        make_trace("strided", 100, 10, stride_elements=0)
    with pytest.raises(TypeError, match="working_set_bytes"):
        make_trace("sequential", float("nan"), 10)
    with pytest.raises(ValueError, match="working_sets_bytes"):
        hit_rate_sweep("sequential", [], 4096)
    with pytest.raises(ValueError, match="working_sets_bytes"):
        hit_rate_sweep("sequential", [np.inf], 4096)


# ---------------------------------------------------------------- bank conflicts

@settings(max_examples=200, deadline=None)
@given(addresses=st.lists(st.integers(0, 4 * 4096), min_size=1, max_size=32))
def test_conflict_degree_matches_brute_force(addresses):
    assert conflict_degree(addresses) == brute_conflicts(addresses)


@settings(max_examples=100, deadline=None)
@given(stride=st.integers(0, 200), lanes=st.integers(1, 32))
def test_strided_formula_matches_brute_force(stride, lanes):
    addresses = [4 * t * stride for t in range(lanes)]
    assert strided_conflict_degree(stride, lanes) == brute_conflicts(addresses)


def test_known_strides_and_padding():
    assert [strided_conflict_degree(s) for s in (1, 2, 3, 4, 8, 16, 32, 33, 64)] == \
        [1, 2, 1, 4, 8, 16, 32, 1, 32]
    assert column_read_conflict_degree(32) == 32
    assert column_read_conflict_degree(32, pad_words=1) == 1
    assert column_read_conflict_degree(48, pad_words=0) == math.gcd(48, 32)


def test_conflict_degree_batches_rows_and_broadcast():
    rows = np.array([np.arange(32) * 4, np.arange(32) * 8, np.zeros(32, dtype=int)])
    np.testing.assert_array_equal(conflict_degree(rows), [1, 2, 1])
    assert bank_of([0, 4, 128, 132]).tolist() == [0, 1, 0, 1]


def test_bank_functions_reject_bad_input():
    with pytest.raises(ValueError, match="byte_addresses"):
        conflict_degree([-4, 0])
    with pytest.raises(TypeError, match="byte_addresses"):
        conflict_degree([1.5, 2.0])
    with pytest.raises(ValueError, match="lanes"):
        conflict_degree([])
    with pytest.raises(ValueError, match="stride_words"):
        strided_conflict_degree(-1)
    with pytest.raises(TypeError, match="stride_words"):
        strided_conflict_degree(2.5)
    with pytest.raises(ValueError, match="pad_words"):
        column_read_conflict_degree(32, pad_words=-1)
    with pytest.raises(ValueError, match="n_banks"):
        bank_of([0], n_banks=0)


# ---------------------------------------------------------------- double buffering

@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 30), tc=st.floats(0, 10), tk=st.floats(0, 10), buffers=st.integers(1, 4))
def test_timeline_matches_closed_form(n, tc, tk, buffers):
    tl = pipeline_timeline(n, tc, tk, buffers)
    assert tl.total_s == pytest.approx(pipelined_time_s(n, tc, tk, buffers), rel=1e-9, abs=1e-12)
    # Causality: compute never starts before its copy ends; copies and computes never overlap.
    assert np.all(tl.compute_start_s >= tl.copy_end_s - 1e-12)
    assert np.all(tl.copy_start_s[1:] >= tl.copy_end_s[:-1] - 1e-12)
    assert np.all(tl.compute_start_s[1:] >= tl.compute_end_s[:-1] - 1e-12)


@settings(max_examples=100, deadline=None)
@given(n=st.integers(2, 30), tc=st.floats(0.01, 10), tk=st.floats(0.01, 10))
def test_copy_hidden_iff_compute_stays_busy(n, tc, tk):
    tl = pipeline_timeline(n, tc, tk, 2)
    # Hidden: after the first copy the compute unit never idles.
    busy_after_first = tl.total_s - tc == pytest.approx(n * tk, rel=1e-9)
    assert copy_hidden(tc, tk) == busy_after_first or math.isclose(tc, tk, rel_tol=1e-9)
    assert pipeline_timeline(n, tc, tk, 1).total_s == pytest.approx(n * (tc + tk))


def test_pipeline_rejects_bad_input():
    with pytest.raises(ValueError, match="n_tiles"):
        pipeline_timeline(0, 1, 1)
    with pytest.raises(ValueError, match="t_copy_s"):
        pipeline_timeline(3, -1, 1)
    with pytest.raises(ValueError, match="t_compute_s"):
        pipelined_time_s(3, 1, float("inf"))
    with pytest.raises(ValueError, match="buffers"):
        pipeline_timeline(3, 1, 1, buffers=0)
    with pytest.raises(TypeError, match="t_copy_s"):
        copy_hidden("1", 2)


# ---------------------------------------------------------------- the hierarchy

def test_h100_levels_from_catalog_arithmetic():
    acc = get_accelerator("H100 SXM")
    levels = {lv.name: lv for lv in memory_hierarchy(acc)}
    regs = levels["registers"]
    assert regs.capacity_bytes == 256 * 1024 * acc.sm_count
    # 128 FP32 lanes each reading three 4-byte operands per clock.
    assert regs.bandwidth_bytes_per_s == pytest.approx(128 * 3 * 4 * 132 * 1.98e9)
    smem = levels["shared memory / L1"]
    assert smem.bandwidth_bytes_per_s == pytest.approx(32 * 4 * 132 * 1.98e9)
    assert smem.kind == "derived" and "derived" in smem.source
    l2 = levels["L2"]
    assert l2.bandwidth_bytes_per_s is None and l2.kind == "bounds"
    assert l2.bandwidth_low_bytes_per_s == acc.mem_bandwidth
    hbm = levels["device memory (HBM3)"]
    assert hbm.bandwidth_bytes_per_s == acc.mem_bandwidth and hbm.kind == "catalog"
    host = levels["host memory (PCIe 5.0 x16)"]
    assert host.bandwidth_bytes_per_s == pytest.approx(acc.host_link_bandwidth / 2)


def test_a100_l2_from_the_published_bytes_per_clock():
    """A100 whitepaper: 5120 B/clock of L2 read bandwidth; x 1.41 GHz = 7.22 TB/s, 3.5x its HBM."""
    acc = get_accelerator("A100")
    levels = {lv.name: lv for lv in memory_hierarchy(acc)}
    l2 = levels["L2"]
    assert l2.kind == "derived" and "5120 B/clock" in l2.source
    assert l2.bandwidth_bytes_per_s == pytest.approx(5120 * 1.41e9)
    assert l2.bandwidth_low_bytes_per_s is None and l2.bandwidth_high_bytes_per_s is None
    hbm = levels["device memory (HBM2e)"]
    assert l2.bandwidth_bytes_per_s / hbm.bandwidth_bytes_per_s == pytest.approx(3.54, abs=0.01)
    assert hbm.bandwidth_bytes_per_s < l2.bandwidth_bytes_per_s < levels["shared memory / L1"].bandwidth_bytes_per_s


@pytest.mark.parametrize("name", list_accelerators())
def test_every_catalog_entry_gives_a_sane_ladder(name):
    levels = memory_hierarchy(name)
    bws = [lv.bandwidth_bytes_per_s for lv in levels if lv.bandwidth_bytes_per_s]
    assert bws, name
    assert all(b > 0 for b in bws)
    for lv in levels:
        if lv.bandwidth_low_bytes_per_s is not None:
            assert lv.bandwidth_low_bytes_per_s < lv.bandwidth_high_bytes_per_s


def test_transfer_table_times_and_fit():
    tensor = 2 * 8192 * 8192 * 3          # three BF16 8192^2 matrices, 403 MB
    rows = transfer_table(tensor, "H100 SXM")
    by = {r.level.name: r for r in rows}
    assert by["device memory (HBM3)"].t_s == pytest.approx(tensor / 3.35e12)
    assert by["device memory (HBM3)"].fits is True
    assert by["L2"].fits is False and by["L2"].t_low_s < by["L2"].t_high_s
    assert by["peer accelerator (NVLink 4)"].fits is None
    assert transfer_time_s(10, 5) == 2


def test_hierarchy_rejects_bad_input():
    with pytest.raises(ValueError, match="accelerator"):
        memory_hierarchy("H900")
    with pytest.raises(TypeError, match="accelerator"):
        memory_hierarchy(3)
    with pytest.raises(ValueError, match="tensor_bytes"):
        transfer_table(-1)
    with pytest.raises(ValueError, match="bandwidth_bytes_per_s"):
        transfer_time_s(1, 0)
    with pytest.raises(ValueError, match="tensor_bytes"):
        transfer_time_s(float("nan"), 1)


# ---------------------------------------------------------------- measurements (shape, not speed)

def test_random_cycle_is_one_cycle():
    rng = np.random.default_rng(5)
    nxt = random_cycle(803, rng, spacing=8)
    seen, i = set(), 0
    for _ in range(len(range(0, 803, 8))):
        seen.add(i)
        i = int(nxt[i])
    assert i == 0 and seen == set(range(0, 803, 8))


def test_measurements_return_positive_ladders():
    bw = measure_bandwidth_ladder([4096, 65536, 12288], bytes_per_call=1 << 18, repeats=1, progress=False)
    assert isinstance(bw, BandwidthLadder)
    assert bw.working_set_bytes.tolist() == [4096, 12288, 65536]
    assert np.all(bw.bandwidth_bytes_per_s > 0)
    lat = measure_latency_ladder([4096, 1 << 16], steps=200, rng=np.random.default_rng(0), progress=False)
    assert isinstance(lat, LatencyLadder) and np.all(lat.ns_per_step > 0)
    assert lat.latency_ns.min() == 0


def test_measurements_reject_bad_input():
    with pytest.raises(ValueError, match="sizes_bytes"):
        measure_bandwidth_ladder([2], progress=False)
    with pytest.raises(ValueError, match="sizes_bytes"):
        measure_bandwidth_ladder([], progress=False)
    with pytest.raises(ValueError, match="repeats"):
        measure_bandwidth_ladder([4096], repeats=0, progress=False)
    with pytest.raises(TypeError, match="rng"):
        measure_latency_ladder([4096], steps=10)
    with pytest.raises(ValueError, match="steps"):
        measure_latency_ladder([4096], steps=0, rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng"):
        random_cycle(10, 3)


# ------------------------------------------------------------------ bus width x data rate, memory wall, TMA

def test_bus_bandwidth_formula_and_checks():
    from course_lib.hardware import list_accelerators
    from course_lib.memory import BUS_BANDWIDTH_TOLERANCE, bus_bandwidth_bytes_per_s, bus_check
    rng = np.random.default_rng(3)
    for _ in range(20):
        w = int(rng.integers(1, 20000))
        r = float(rng.uniform(1e9, 3e10))
        assert np.isclose(bus_bandwidth_bytes_per_s(w, r), w / 8 * r)
        # Second way: split the bus into 1024-bit stacks (and a remainder) and add them up.
        parts = [1024] * (w // 1024) + ([w % 1024] if w % 1024 else [])
        assert np.isclose(sum(bus_bandwidth_bytes_per_s(p, r) for p in parts), bus_bandwidth_bytes_per_s(w, r))
    n_checked = 0
    for name in list_accelerators():
        c = bus_check(name)
        if c.bus_width_bits:
            assert np.isclose(c.implied_rate_bits_per_s_per_pin * c.bus_width_bits / 8, c.bandwidth_bytes_per_s)
        if c.agrees is not None:
            n_checked += 1
            assert c.agrees and abs(c.rel_difference) <= BUS_BANDWIDTH_TOLERANCE
    assert n_checked >= 5
    with pytest.raises(ValueError, match="bus_width_bits"):
        bus_bandwidth_bytes_per_s(0, 1e9)
    with pytest.raises(TypeError, match="data_rate"):
        bus_bandwidth_bytes_per_s(1024, "fast")


def test_memory_wall_indices_ridges_and_growth():
    from course_lib.memory import memory_wall
    wall = memory_wall(["H100 SXM", "V100 SXM2", "B200", "A100"])        # any order: sorted by year
    assert wall.names[0] == "V100 SXM2" and list(wall.years) == sorted(wall.years)
    assert wall.compute_index[0] == 1 == wall.bandwidth_index[0]
    assert np.allclose(wall.ridge_points / wall.ridge_points[0], wall.compute_index / wall.bandwidth_index)
    # Second way for the fitted growth: with two parts the fit is the endpoint growth rate.
    two = memory_wall(["V100", "B200"])
    years = two.years[1] - two.years[0]
    assert np.isclose(two.growth_per_year("compute"), two.compute_index[1] ** (1 / years))
    assert np.isclose(two.growth_per_year("bandwidth"), two.bandwidth_index[1] ** (1 / years))
    assert wall.growth_per_year() > wall.growth_per_year("bandwidth")
    with pytest.raises(ValueError, match="at least two"):
        memory_wall(["H100"])
    with pytest.raises(ValueError, match="more than one year"):
        memory_wall(["H100 SXM", "H100 PCIe"]).growth_per_year()


def test_tile_copy_work_and_multicast():
    from course_lib.memory import multicast_l2_reads, tile_copy_work
    rng = np.random.default_rng(9)
    for _ in range(20):
        r, c = int(rng.integers(1, 700)), int(rng.integers(1, 700))
        b = float(rng.choice([1, 2, 4]))
        t = int(rng.integers(32, 1025))
        w = tile_copy_work(r, c, b, t)
        assert w.tile_bytes == r * c * b
        assert w.copy_instructions == math.ceil(r * c * b / 16)
        # Second way: count the boxes by walking the tile in 256-element steps.
        assert w.tma_boxes == len(range(0, r, 256)) * len(range(0, c, 256)) == w.tma_instructions
        assert np.isclose(w.instructions_per_thread * t, w.copy_instructions)
        # a warp instruction issues the copies of up to 32 threads at once
        assert w.copy_warp_instructions >= math.ceil(w.copy_instructions / 32)
        assert w.copy_warp_instructions * min(t, 32) >= w.copy_instructions
    assert tile_copy_work(128, 64, 2, 128).copy_warp_instructions == 32     # 1024 copies / 32 lanes
    assert multicast_l2_reads(1000.0, 4) == (4000.0, 1000.0)
    with pytest.raises(ValueError, match="cluster_size"):
        multicast_l2_reads(1000.0, 17)
    with pytest.raises(ValueError, match="threads"):
        tile_copy_work(64, 64, 2, 2048)
