"""The kernel profile in Nsight Compute's names (issue 23): every name with its source, the per-op
counts that sum to the totals, and the real report of data/nsight_metrics.toml read against a
trace of the same kernel."""

from __future__ import annotations

import math

import numpy as np
import pytest

from course_lib.kernels import cuda
from course_lib.kernels.profile import KernelProfile, nsight_metrics, nsight_report, profile_trace
from course_lib.kernels.trace import trace_launch

PSEUDO = {"theoretical_occupancy", "achieved_occupancy"}     # not trace counts: passed in, or GPU only


@cuda.jit
def _forum_transpose(a, c):
    s = cuda.shared.array((32, 32), np.float64)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    s[tx, ty] = a[cuda.blockIdx.y * 32 + ty, cuda.blockIdx.x * 32 + tx]
    cuda.syncthreads()
    c[cuda.blockIdx.x * 32 + ty, cuda.blockIdx.y * 32 + tx] = s[ty, tx]


@cuda.jit
def _strided_copy(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[2 * i]


@pytest.fixture(scope="module")
def forum():
    a = np.arange(32 * 32, dtype=np.float64).reshape(32, 32)
    c = np.zeros_like(a)
    prof = profile_trace(trace_launch(_forum_transpose, (1, 1), (32, 32), a, c))
    assert np.array_equal(c, a.T)
    return prof


def test_every_name_has_a_count_a_status_and_a_source():
    metrics = nsight_metrics()
    assert len({m.count for m in metrics}) == len(metrics) >= 15
    for m in metrics:
        assert m.status in ("verified", "unverified"), m
        assert m.count in PSEUDO or hasattr(KernelProfile, m.count), m.count
        if m.status == "verified":
            assert "NVIDIA" in m.source and m.source.count("https://") == 1, m
        else:
            assert "not in the NVIDIA section files" in m.source, m
    verified = {m.metric for m in metrics if m.status == "verified"}
    assert "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum" in verified
    assert "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum" not in verified      # only in scripts and a report


def test_the_table_has_a_row_per_name_and_marks_the_unverified(forum):
    rows = forum.nsight(occupancy=0.5).splitlines()[1:]
    assert len(rows) == len(nsight_metrics())
    for row, m in zip(rows, nsight_metrics()):
        assert row.startswith(m.count) and m.metric in row
        assert (m.metric + " ?" in row) == (m.status == "unverified")
    assert "50%" in rows[[m.count for m in nsight_metrics()].index("theoretical_occupancy")]


def test_per_op_counts_sum_to_the_totals_and_bytes_per_sector_is_efficiency_times_32(forum):
    assert forum.shared_load_requests + forum.shared_store_requests == forum.shared_requests
    assert forum.shared_load_wavefronts + forum.shared_store_wavefronts == forum.shared_wavefronts
    assert (forum.shared_load_bank_conflicts + forum.shared_store_bank_conflicts
            == forum.shared_bank_conflicts)
    assert forum.global_load_bytes_per_sector == forum.global_store_bytes_per_sector == 32.0
    assert forum.lanes_per_instruction == 32 * forum.simt_efficiency
    a, out = np.arange(200, dtype=np.float32), np.zeros(100, np.float32)
    strided = profile_trace(trace_launch(_strided_copy, 1, 128, a, out))
    assert strided.global_load_bytes_per_sector == pytest.approx(16.0, rel=0.05)  # every other float used
    assert strided.global_store_bytes_per_sector == pytest.approx(32.0, rel=0.05)


def test_the_forum_report_matches_the_trace_of_its_kernel(forum):
    report = nsight_report()
    rep, blocks = report["metrics"], (4096 // 32) ** 2
    assert "forums.developer.nvidia.com" in report["source"] and report["element_bytes"] == 8
    for count, metric in (("global_load_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
                          ("global_store_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
                          ("global_load_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
                          ("global_store_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")):
        assert getattr(forum, count) * blocks == rep[metric], count
    assert forum.shared_load_wavefronts * blocks == pytest.approx(
        rep["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"], rel=1e-3)
    assert forum.shared_store_wavefronts * blocks == pytest.approx(
        rep["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"], rel=0.02)
    # ncu's conflicts: wavefronts beyond the ceil(256 B / 128 B) = 2 every 8-byte request needs.
    needed = rep["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] * math.ceil(32 * 8 / 128)
    for op in ("ld", "st"):
        assert (rep[f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"]
                == rep[f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"] - needed)
