"""Measurement helpers: small sizes so they are quick; no speed is asserted."""

import numpy as np
import pytest

from course_lib.measure import (KernelMeasurement, MachineRoofline, gpu_status, measure_bandwidth,
                                measure_kernels, measure_matmul_flops, stream_array_bytes, time_best)
from course_lib.measure.progress import progress_bar


def test_time_best_counts_calls():
    calls = []
    t = time_best(lambda: calls.append(1), repeats=4)
    assert len(calls) >= 4 and t >= 0
    with pytest.raises(TypeError):
        time_best(3)
    with pytest.raises(ValueError, match="repeats"):
        time_best(lambda: None, repeats=0)


def test_small_measurements_are_positive_and_consistent():
    copy_bw, triad_bw, scale_bw = measure_bandwidth(1 << 20, repeats=1)
    assert min(copy_bw, triad_bw, scale_bw) > 0
    flops = measure_matmul_flops(64, repeats=1)
    assert flops > 0
    machine = MachineRoofline("test", copy_bw, triad_bw, scale_bw, flops, 64, 1 << 20)
    assert machine.bandwidth_bytes_per_s == max(copy_bw, triad_bw, scale_bw)
    kernels = measure_kernels(machine, n_stream=4096, gemv_n=33, gemm_sizes=(7, 19), repeats=1,
                              progress=False)
    assert [k.name for k in kernels] == ["axpy", "8-op chain", "GEMV 33", "GEMM 7", "GEMM 19"]
    for k in kernels:
        assert isinstance(k, KernelMeasurement)
        # The prediction never exceeds either measured roof.
        assert k.predicted_flops <= machine.peak_flops * (1 + 1e-12)
        assert k.predicted_flops <= machine.bandwidth_bytes_per_s * k.intensity_flops_per_byte * (1 + 1e-12)
        assert np.isfinite(k.measured_flops) and k.measured_flops > 0
    gemm = kernels[-1]
    assert gemm.intensity_flops_per_byte == pytest.approx(2 * 19 ** 3 / (3 * 4 * 19 ** 2))


def test_bad_inputs():
    with pytest.raises(TypeError, match="machine"):
        measure_kernels("laptop")
    with pytest.raises(ValueError, match="array_bytes"):
        measure_bandwidth(16)
    with pytest.raises(ValueError, match="total"):
        progress_bar(-1)
    with pytest.raises(TypeError, match="progress"):
        progress_bar(3, "x", enabled="yes")


def test_stream_arrays_exceed_cache():
    assert stream_array_bytes() >= 64 * 2 ** 20


def test_gpu_status_one_line():
    ok, message = gpu_status()
    assert isinstance(ok, bool) and "\n" not in message and message


def test_progress_text_mode_shows_count_and_rate(capsys):
    with progress_bar(3, "x") as bar:
        for _ in range(3):
            bar.update()
    assert bar.n == 3
    err = capsys.readouterr().err
    assert "x: 100%" in err and "3/3" in err and "step/s" in err
    with progress_bar(3, "quiet", enabled=False) as bar:
        bar.update()
    assert capsys.readouterr().err == ""


def test_gpu_measurement_is_none_without_a_gpu():
    from course_lib.measure import measure_gpu_machine
    ok, _ = gpu_status()
    if ok:
        pytest.skip("a GPU is present: this test covers the no-GPU path")
    assert measure_gpu_machine() is None
