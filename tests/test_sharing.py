"""MIG profiles as data, and a slice as a smaller accelerator."""

import pytest

from course_lib.economics import decode_step
from course_lib.hardware import get_accelerator
from course_lib.roofline import matmul_kernel, place_kernel
from course_lib.sharing import (COMPUTE_SLICES, MEMORY_SLICES, fits_on_gpu, get_mig_profile, mig_accelerator,
                                mig_gpus, mig_profiles)


def test_profiles_follow_the_mig_user_guide():
    assert set(mig_gpus()) == {"A100 SXM 80GB", "H100 SXM"}
    for gpu in mig_gpus():
        profiles = mig_profiles(gpu)
        names = [p.name for p in profiles]
        assert names == ["1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"]
        acc = get_accelerator(gpu)
        for p in profiles:
            # The name says the slices: "Ng.Mgb" with M = memory slices x capacity / 8.
            assert p.name.startswith(f"{p.compute_slices}g.")
            assert p.memory_gb == pytest.approx(p.memory_slices * acc.mem_capacity / 1e9 / MEMORY_SLICES)
            # As many instances as the slices allow, at most: 7 compute, 8 memory.
            assert p.max_instances * p.compute_slices <= COMPUTE_SLICES
            assert p.max_instances * p.memory_slices <= MEMORY_SLICES
        assert [p.max_instances for p in profiles] == [7, 4, 3, 2, 1, 1]
        # The driver's SM counts: never more than the chip has, and more slices never fewer SMs.
        sms = [p.sm_count for p in profiles]
        assert all(0 < s <= acc.sm_count for s in sms)
        assert sms == sorted(sms)
        assert "unverified" in profiles[0].sm_source.lower()


def test_sm_counts_are_the_listed_ones_not_n_over_7():
    # nvidia-smi mig -lgip (the sm_source of each GPU in mig_profiles.toml)
    assert [p.sm_count for p in mig_profiles("H100 SXM")] == [16, 26, 32, 60, 64, 132]
    assert [p.sm_count for p in mig_profiles("A100 SXM 80GB")] == [14, 14, 28, 42, 56, 98]
    h100 = get_accelerator("H100 SXM")
    seven = 7 * mig_accelerator("1g.10gb").peak("bf16")
    assert seven == pytest.approx(h100.peak("bf16") * 112 / 132)            # 839 TFLOP/s, not 990
    assert seven / 1e12 == pytest.approx(839.5, abs=1)
    # 1g.20gb against 1g.10gb on an H100: 26/16 = 1.6x the compute, 2x the bandwidth, so
    # 2/1.625 = 1.23x the bandwidth per SM, not 2x.
    small, tall = mig_accelerator("1g.10gb"), mig_accelerator("1g.20gb")
    assert tall.peak("bf16") / small.peak("bf16") == pytest.approx(1.625)
    per_sm = (tall.mem_bandwidth / tall.sm_count) / (small.mem_bandwidth / small.sm_count)
    assert per_sm == pytest.approx(16 / 13)
    # On an A100 the two 1g profiles have the same 14 SMs: there 1g.20gb is twice the bandwidth
    # with the same compute.
    a_small, a_tall = mig_accelerator("1g.10gb", "A100 SXM 80GB"), mig_accelerator("1g.20gb", "A100 SXM 80GB")
    assert a_tall.peak("bf16") == pytest.approx(a_small.peak("bf16"))
    assert a_tall.mem_bandwidth == pytest.approx(2 * a_small.mem_bandwidth)
    # A100's 7g.80gb: 98 of 108 SMs, so 0.91 of the chip's peak.
    full = mig_accelerator("7g.80gb", "A100 SXM 80GB")
    assert full.peak("bf16") / get_accelerator("A100 SXM 80GB").peak("bf16") == pytest.approx(98 / 108)


def test_a_slice_scales_peak_and_bandwidth_and_keeps_a_roofline():
    h100 = get_accelerator("H100 SXM")
    for p in mig_profiles("H100 SXM"):
        sl = mig_accelerator(p)
        assert sl.peak("bf16") == pytest.approx(h100.peak("bf16") * p.sm_count / h100.sm_count)
        assert sl.sm_count == p.sm_count
        assert sl.mem_bandwidth == pytest.approx(h100.mem_bandwidth * p.memory_slices / 8)
        # Second way: per SM, a slice computes as fast as the whole GPU does.
        assert sl.peak("bf16") / sl.sm_count == pytest.approx(h100.peak("bf16") / h100.sm_count)
        assert sl.ridge_point("bf16") == pytest.approx(
            h100.ridge_point("bf16") * (p.sm_count / h100.sm_count) / (p.memory_slices / 8))
        gemv = place_kernel(matmul_kernel("gemv", 1, 4096, 4096), sl, "bf16")
        assert gemv.bound == "memory"
    # Second way: a memory-bound decode step on a slice with half the bandwidth takes twice as long.
    full = decode_step("Llama 3 8B", h100, 7, 1999)
    half = decode_step("Llama 3 8B", mig_accelerator("4g.40gb"), 7, 1999)
    assert half.t_step_s == pytest.approx(2 * full.t_step_s)
    assert not decode_step("Llama 3 8B", mig_accelerator("1g.10gb"), 1, 100).fits       # 16 GB of weights


def test_fits_on_gpu_counts_slices_and_instances():
    assert fits_on_gpu(["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"])
    assert fits_on_gpu(["1g.10gb"] * 7) and not fits_on_gpu(["1g.10gb"] * 8)
    assert not fits_on_gpu(["4g.40gb", "4g.40gb"])
    assert not fits_on_gpu(["1g.20gb"] * 5)                  # 5 x 2 memory slices > 8
    assert not fits_on_gpu(["7g.80gb", "1g.10gb"])


def test_lookup_is_forgiving_and_errors_name_the_choices():
    assert get_mig_profile(" 3G.40GB ").name == "3g.40gb"
    with pytest.raises(ValueError, match="3g.40gb"):
        get_mig_profile("3g.4gb")
    with pytest.raises(ValueError, match="no MIG profiles"):
        mig_profiles("L4")
    with pytest.raises(ValueError, match="at least 1"):
        fits_on_gpu([])


def test_slice_rooflines_draw_one_line_per_slice():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from course_lib.plots.sharing import plot_slice_rooflines
    slices = [mig_accelerator(p) for p in mig_profiles("A100 SXM 80GB")]
    fig = plot_slice_rooflines(slices, "bf16")
    assert len(fig.axes[0].get_lines()) == 2 * len(slices)         # a roof and a ridge marker each
    plt.close(fig)
    with pytest.raises(TypeError, match="Accelerator"):
        plot_slice_rooflines(["3g.40gb"])
