"""Tests of course_lib.simt: the SIMT simulator against hand counts and plain Python, and the
coalescing calculator against a byte-by-byte brute force."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from course_lib.simt import (If, Let, While, aos_addresses, coalescing, run_simt, soa_addresses,
                             strided_addresses)


def _if_else_kernel(p, q, test):
    return [Let("y", lambda v: v["tid"] * 1.0),
            If(test, then=[Let("y", lambda v: v["y"] + 1) for _ in range(p)],
               orelse=[Let("y", lambda v: v["y"] * 2) for _ in range(q)])]


@pytest.mark.parametrize("p, q", [(1, 1), (5, 2), (3, 7)])
def test_if_else_divergence_counts_by_hand(p, q):
    r = run_simt(_if_else_kernel(p, q, lambda v: v["tid"] % 2 == 1), 32 * 5)
    # Every warp: load + branch + both paths; 32 lanes on the first two, 16 on each path.
    assert np.all(r.issued_per_warp == 2 + p + q)
    assert np.all(r.active_slots_per_warp == 64 + 16 * (p + q))
    assert r.simt_efficiency == pytest.approx((64 + 16 * (p + q)) / (32 * (2 + p + q)))


def test_uniform_branch_runs_one_path_per_warp():
    p, q = 6, 2
    r = run_simt(_if_else_kernel(p, q, lambda v: (v["tid"] // 32) % 2 == 1), 32 * 7)
    expected = np.where(np.arange(7) % 2 == 1, 2 + p, 2 + q)
    assert np.array_equal(r.issued_per_warp, expected)
    assert r.simt_efficiency == 1.0


def test_values_match_plain_python():
    rng = np.random.default_rng(3)
    data = rng.integers(-50, 50, size=1234)
    kernel = [Let("x", lambda v: v["data"][v["tid"]]),
              If(lambda v: v["x"] > 7, then=[Let("y", lambda v: v["x"] * 3)],
                 orelse=[Let("y", lambda v: v["x"] - 11),
                         If(lambda v: v["y"] % 2 == 0, then=[Let("y", lambda v: v["y"] // 2)])])]
    r = run_simt(kernel, data.size, {"data": data}, warp_size=32)
    expected = []
    for x in data:
        if x > 7:
            expected.append(x * 3)
        else:
            y = x - 11
            expected.append(y // 2 if y % 2 == 0 else y)
    assert np.array_equal(r.variables["y"], np.array(expected))


@settings(max_examples=25, deadline=None)
@given(n_threads=st.integers(1, 500), warp_size=st.sampled_from([8, 32, 64]),
       body=st.integers(1, 4), seed=st.integers(0, 2 ** 31))
def test_data_dependent_loop_costs_the_longest_lane(n_threads, warp_size, body, seed):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 13, size=n_threads)
    kernel = [Let("i", lambda v: 0),
              While(lambda v: v["i"] < v["n"][v["tid"]],
                    [Let("s", lambda v: v["i"] * 2)] * (body - 1) + [Let("i", lambda v: v["i"] + 1)])]
    r = run_simt(kernel, n_threads, {"n": counts}, warp_size=warp_size)
    n_warps = -(-n_threads // warp_size)
    for w in range(n_warps):
        lanes = counts[w * warp_size:(w + 1) * warp_size]
        longest = lanes.max()
        # init + (longest + 1) loop tests + longest bodies
        assert r.issued_per_warp[w] == 1 + (longest + 1) + longest * body
        # useful slots: init + each lane's (count + 1) tests + count bodies
        assert r.active_slots_per_warp[w] == lanes.size + (lanes + 1).sum() + body * lanes.sum()
    assert np.array_equal(r.variables["i"], counts)


def test_interleaved_schedule_issues_the_same():
    rng = np.random.default_rng(11)
    data = rng.normal(size=333)
    kernel = [Let("x", lambda v: v["d"][v["tid"]]),
              If(lambda v: v["x"] > 0.3,
                 then=[Let("y", lambda v: v["x"] + 1), Let("y", lambda v: v["y"] ** 2)],
                 orelse=[Let("y", lambda v: -v["x"]), Let("y", lambda v: v["y"] * 3),
                         Let("y", lambda v: v["y"] - 0.5)])]
    stack = run_simt(kernel, 333, {"d": data})
    inter = run_simt(kernel, 333, {"d": data}, schedule="interleaved")
    assert np.array_equal(stack.issued_per_warp, inter.issued_per_warp)
    assert np.array_equal(stack.active_slots_per_warp, inter.active_slots_per_warp)
    assert np.allclose(stack.variables["y"], inter.variables["y"])
    assert not np.array_equal(stack.trace, inter.trace)        # same work, different order


def test_wave64_diverges_where_warp32_does_not():
    k = _if_else_kernel(4, 4, lambda v: (v["tid"] // 32) % 2 == 1)
    assert run_simt(k, 640, warp_size=32).simt_efficiency == 1.0
    assert run_simt(k, 640, warp_size=64).simt_efficiency < 1.0


def test_partial_last_warp_and_trace():
    r = run_simt(_if_else_kernel(2, 3, lambda v: v["tid"] % 3 == 0), 37, trace_warp=1)
    assert r.n_warps == 2
    assert r.trace.shape == (r.issued_per_warp[1], 32)
    assert r.trace[:, 5:].sum() == 0                      # lanes 5..31 of warp 1 do not exist
    assert r.trace.sum() == r.active_slots_per_warp[1]


@pytest.mark.parametrize("call, exc, name", [
    (lambda: run_simt("x = 1", 32), TypeError, "kernel"),
    (lambda: run_simt([], 0), ValueError, "n_threads"),
    (lambda: run_simt([], 32, warp_size=0), ValueError, "warp_size"),
    (lambda: run_simt([], 32, schedule="random"), ValueError, "schedule"),
    (lambda: run_simt([], 64, trace_warp=2), ValueError, "trace_warp"),
    (lambda: run_simt([], 64, inputs=[1, 2]), TypeError, "inputs"),
    (lambda: run_simt([], 64, inputs={"tid": 3}), ValueError, "tid"),
    (lambda: run_simt([Let("y", lambda v: np.zeros(3))], 64), ValueError, "one value per thread"),
    (lambda: run_simt(["y"], 64), TypeError, "Let, If or While"),
    (lambda: Let("2y", lambda v: 1), TypeError, "identifier"),
    (lambda: Let("y", 3), TypeError, "callable"),
    (lambda: If(True), TypeError, "callable"),
    (lambda: run_simt([While(lambda v: v["tid"] >= 0, [], max_iterations=5)], 8), RuntimeError,
     "max_iterations"),
])
def test_simt_rejects_bad_input(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


# ----------------------------------------------------------------- coalescing

def _brute(addresses, size):
    byte_set = {a + k for a in addresses for k in range(size)}
    sectors = {b // 32 for b in byte_set}
    lines = {b // 128 for b in byte_set}
    return len(byte_set), len(sectors), len(lines)


@settings(max_examples=60, deadline=None)
@given(addrs=st.lists(st.integers(0, 5000), min_size=1, max_size=64),
       size=st.sampled_from([1, 2, 4, 8, 16]))
def test_coalescing_matches_byte_brute_force(addrs, size):
    c = coalescing(np.array(addrs), size)
    wanted, sectors, lines = _brute(addrs, size)
    assert (c.bytes_requested, c.n_sectors, c.n_lines) == (wanted, sectors, lines)
    assert 0 < c.efficiency <= 1


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2 ** 31), stride=st.integers(0, 40))
def test_lane_order_does_not_matter(seed, stride):
    a = strided_addresses(stride, 4)
    c1 = coalescing(a)
    c2 = coalescing(np.random.default_rng(seed).permutation(a))
    assert c1.n_sectors == c2.n_sectors and c1.bytes_requested == c2.bytes_requested


@pytest.mark.parametrize("stride", [1, 2, 3, 5, 7, 8, 9, 33])
def test_strided_float_loads(stride):
    c = coalescing(strided_addresses(stride, 4))
    # 32 floats every `stride` floats: 4*stride sectors until each lane has its own (stride >= 8).
    assert c.n_sectors == min(32, 4 * stride)
    assert c.efficiency == pytest.approx(128 / (32 * c.n_sectors))


def test_misaligned_aos_soa():
    shifted = coalescing(strided_addresses(1, 4, offset_bytes=4))
    assert (shifted.n_sectors, shifted.n_lines) == (5, 2)
    aos = coalescing(aos_addresses(struct_bytes=12, field_offset_bytes=8))
    soa = coalescing(soa_addresses(field_index=2, field_bytes=4, n_elements=1000))
    assert aos.n_sectors == 12 and soa.n_sectors == 4           # 384 B span vs 128 B
    assert soa.efficiency == 1.0 and aos.efficiency == pytest.approx(128 / 384)
    broadcast = coalescing(np.full(32, 96))
    assert broadcast.n_sectors == 1 and broadcast.efficiency == pytest.approx(4 / 32)


def test_active_mask_drops_lanes():
    a = strided_addresses(1, 4)
    mask = np.arange(32) < 9
    assert coalescing(a, 4, active=mask).n_sectors == 2


@pytest.mark.parametrize("call, exc, name", [
    (lambda: coalescing([]), ValueError, "addresses"),
    (lambda: coalescing([-4, 0]), ValueError, "addresses"),
    (lambda: coalescing([1.5]), ValueError, "addresses"),
    (lambda: coalescing([np.nan]), ValueError, "addresses"),
    (lambda: coalescing([0], bytes_per_access=0), ValueError, "bytes_per_access"),
    (lambda: coalescing([0, 4], active=[True]), ValueError, "active"),
    (lambda: coalescing([0, 4], active=np.array([False, False])), ValueError, "active"),
    (lambda: strided_addresses(-1), ValueError, "stride_elements"),
    (lambda: strided_addresses(1, element_bytes=0), ValueError, "element_bytes"),
    (lambda: strided_addresses(1, warp_size=2.5), TypeError, "warp_size"),
    (lambda: aos_addresses(8, 8), ValueError, "field_offset_bytes"),
    (lambda: soa_addresses(-1), ValueError, "field_index"),
])
def test_coalescing_rejects_bad_input(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


# ------------------------------------------- a lane-by-lane reference for nested loops

def _reference(kernel, n_threads, inputs, warp_size):
    """Plain-Python SIMT: each warp walks the kernel with a list of active lanes."""
    n_warps = -(-n_threads // warp_size)
    issued, slots = np.zeros(n_warps, int), np.zeros(n_warps, int)
    env = [dict(tid=t, lane=t % warp_size, warp=t // warp_size) for t in range(n_threads)]

    class One(dict):                       # one thread's view: scalars, shared inputs fall through
        def __missing__(self, k):
            return inputs[k]

    def run(stmts, w, lanes):
        for s in stmts:
            if not lanes:
                return
            issued[w] += 1
            slots[w] += len(lanes)
            if isinstance(s, Let):
                for t in lanes:
                    env[t][s.name] = s.fn(One(env[t]))
            elif isinstance(s, If):
                yes = [t for t in lanes if s.cond(One(env[t]))]
                run(s.then, w, yes)
                run(s.orelse, w, [t for t in lanes if t not in yes])
            else:
                live = [t for t in lanes if s.cond(One(env[t]))]
                while live:
                    run(s.body, w, live)
                    issued[w] += 1
                    slots[w] += len(live)
                    live = [t for t in live if s.cond(One(env[t]))]

    for w in range(n_warps):
        run(kernel, w, list(range(w * warp_size, min((w + 1) * warp_size, n_threads))))
    return issued, slots, env


@settings(max_examples=15, deadline=None)
@given(n_threads=st.integers(1, 700), warp_size=st.sampled_from([4, 32]), seed=st.integers(0, 2 ** 31))
def test_nested_loops_and_branches_match_lane_by_lane_reference(n_threads, warp_size, seed):
    # Loops that most threads leave early (so the simulator moves to smaller groups), a loop
    # inside a branch and a branch inside a loop.
    start = np.random.default_rng(seed).integers(1, 60, size=n_threads)
    kernel = [Let("x", lambda v: v["start"][v["tid"]]), Let("steps", lambda v: 0),
              While(lambda v: v["x"] != 1,
                    [If(lambda v: v["x"] % 2 == 0, then=[Let("x", lambda v: v["x"] // 2)],
                        orelse=[Let("x", lambda v: 3 * v["x"] + 1)]),
                     Let("steps", lambda v: v["steps"] + 1)]),
              If(lambda v: v["steps"] > 10,
                 then=[Let("k", lambda v: 0),
                       While(lambda v: v["k"] < v["steps"] % 7, [Let("k", lambda v: v["k"] + 1)])],
                 orelse=[Let("k", lambda v: -1)])]
    r = run_simt(kernel, n_threads, {"start": start}, warp_size=warp_size, trace_warp=0)
    issued, slots, env = _reference(kernel, n_threads, {"start": start}, warp_size)
    assert np.array_equal(r.issued_per_warp, issued)
    assert np.array_equal(r.active_slots_per_warp, slots)
    for name in ("x", "steps", "k"):
        assert np.array_equal(r.variables[name], [e[name] for e in env])
    assert r.trace.shape == (issued[0], warp_size) and r.trace.sum() == slots[0]
