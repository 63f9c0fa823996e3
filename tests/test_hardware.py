"""The catalog: every entry complete, in the right units, and internally consistent."""

import dataclasses
import math
import tomllib
from importlib import resources

import pytest

from course_lib.hardware import (PRECISIONS, Accelerator, bytes_per_element, get_accelerator,
                                 list_accelerators)

REQUIRED = ["V100 SXM2", "A100 SXM 80GB", "H100 SXM", "H100 PCIe", "H200", "B200", "L4",
            "RTX 4090", "MI300X", "TPU v5e"]
ALL = list_accelerators()


def raw_entries():
    text = resources.files("course_lib").joinpath("data/accelerators.toml").read_bytes()
    return tomllib.loads(text.decode())["accelerator"]


def test_required_accelerators_present():
    assert len(ALL) >= 10
    for name in REQUIRED:
        assert name in ALL


@pytest.mark.parametrize("name", ALL)
def test_entry_units_and_plausibility(name):
    acc = get_accelerator(name)
    assert isinstance(acc, Accelerator)
    assert acc.source and len(acc.source) > 20
    assert acc.sm_count >= 1
    assert set(acc.peak_flops) <= set(PRECISIONS) and acc.peak_flops
    for prec, flops in acc.peak_flops.items():
        assert 1e11 < flops < 5e16, (prec, flops)       # FLOP/s, not TFLOP/s
    assert 1e11 < acc.mem_bandwidth < 5e13                # bytes/s
    assert 4e9 < acc.mem_capacity < 1e12                  # bytes
    # A plausible ridge point for the fastest 16-bit format: tens to low thousands FLOP/byte.
    prec = "bf16" if "bf16" in acc.peak_flops else "fp16"
    assert 20 < acc.ridge_point(prec) < 2000
    # Narrower formats are never slower than wider ones on the same chip.
    order = [p for p in ("fp32", "tf32", "bf16", "fp8", "fp4") if p in acc.peak_flops]
    rates = [acc.peak_flops[p] for p in order]
    assert rates == sorted(rates)
    if acc.kind == "gpu":
        assert acc.l2_cache_bytes and acc.l2_cache_bytes > 1e6
        assert acc.register_file_bytes_per_sm >= 64 * 1024
        assert acc.shared_mem_bytes_per_sm >= 48 * 1024
        assert acc.tdp_w and 50 <= acc.tdp_w <= 1500
        assert acc.host_link_bandwidth and acc.host_link_bandwidth >= 16e9


@pytest.mark.parametrize("name", [n for n in ALL if get_accelerator(n).boost_clock_hz
                                  and get_accelerator(n).fp32_flops_per_clock_per_sm])
def test_fp32_rate_matches_units_times_clock(name):
    """Second way: FP32 peak = SMs x FLOP per clock per SM x boost clock (within 1%)."""
    acc = get_accelerator(name)
    derived = acc.sm_count * acc.fp32_flops_per_clock_per_sm * acc.boost_clock_hz
    assert derived == pytest.approx(acc.peak("fp32"), rel=0.01)


@pytest.mark.parametrize("name", [n for n in ALL if get_accelerator(n).vendor == "NVIDIA"])
def test_nvidia_per_sm_limits_consistent(name):
    acc = get_accelerator(name)
    assert acc.max_warps_per_sm * acc.warp_size == acc.max_threads_per_sm
    assert acc.registers_per_sm == 65536
    assert acc.max_shared_mem_bytes_per_block <= acc.shared_mem_bytes_per_sm


def test_dense_not_sparse_where_datasheets_print_sparse():
    """The H100 SXM datasheet prints 1,979 TFLOP/s BF16 'with sparsity'; dense is half."""
    h100 = get_accelerator("H100 SXM")
    assert h100.peak("bf16") == pytest.approx(1979e12 / 2, rel=1e-3)
    # Dense BF16 on Hopper is 2x TF32 and half FP8, the tensor-core width rule.
    assert h100.peak("fp8") == pytest.approx(2 * h100.peak("bf16"))
    assert h100.peak("bf16") == pytest.approx(2 * h100.peak("tf32"), rel=1e-3)  # datasheet rounding


def test_h200_is_h100_compute_with_more_memory():
    h100, h200 = get_accelerator("H100 SXM"), get_accelerator("H200")
    assert dict(h100.peak_flops) == dict(h200.peak_flops)
    assert h200.mem_bandwidth > h100.mem_bandwidth and h200.mem_capacity > h100.mem_capacity


def test_every_raw_entry_has_units_in_key_names():
    for entry in raw_entries():
        for key in entry:
            if key.startswith(("mem_bandwidth", "mem_capacity", "l2", "interconnect_gb", "host_link_gb")):
                assert any(u in key for u in ("_gb", "_mib", "_kib", "_bits", "_bytes_per_clock")), key
            if "per_clock" in key:
                assert key.endswith(("_bytes_per_clock", "_flops_per_clock_per_sm")), key


@pytest.mark.parametrize("spelling", ["H100 SXM", "h100 sxm", "h100-sxm", "H100_SXM", " H100SXM ", "H100"])
def test_lookup_is_forgiving(spelling):
    assert get_accelerator(spelling).name == "H100 SXM"


def test_unknown_name_suggests_close_matches():
    with pytest.raises(ValueError, match="H100 SXM"):
        get_accelerator("H10 SXM")
    with pytest.raises(ValueError, match="not in the catalog"):
        get_accelerator("quantum toaster")


@pytest.mark.parametrize("bad", [None, 3, 1.5, ["H100"]])
def test_wrong_type_name(bad):
    with pytest.raises(TypeError, match="accelerator"):
        get_accelerator(bad)


def test_frozen():
    acc = get_accelerator("L4")
    with pytest.raises(dataclasses.FrozenInstanceError):
        acc.sm_count = 1
    with pytest.raises(TypeError):
        acc.peak_flops["fp32"] = 0.0


def test_precision_errors():
    l4 = get_accelerator("L4")
    with pytest.raises(ValueError, match="not listed for L4"):
        l4.peak("fp64")
    with pytest.raises(ValueError, match="precision must be one of"):
        l4.peak("fp7")
    with pytest.raises(TypeError):
        l4.peak(16)
    assert bytes_per_element("BF16") == 2 and bytes_per_element("fp4") == 0.5
    assert bytes_per_element("float32") == 4


def test_list_filter():
    tpus = list_accelerators(kind="tpu")
    assert tpus and all(get_accelerator(t).kind == "tpu" for t in tpus)
    with pytest.raises(ValueError):
        list_accelerators(kind="fpga")
    assert math.isfinite(sum(get_accelerator(n).mem_bandwidth for n in ALL))


def test_cache_sizes_are_binary_megabytes():
    """NVIDIA's "50 MB" L2 is 50 MiB (the CUDA driver reports 52,428,800 bytes on an H100)."""
    assert get_accelerator("H100 SXM").l2_cache_bytes == 50 * 2 ** 20


def test_l2_read_bandwidth_where_nvidia_publishes_it():
    """A100 whitepaper: 'The A100 L2 read bandwidth is 5120 Bytes/clk, compared to V100 L2
    cache read bandwidth of 2048 Bytes/clk'. Times the boost clock: 7.22 and 3.13 TB/s."""
    a100, v100 = get_accelerator("A100"), get_accelerator("V100")
    assert a100.l2_read_bytes_per_clock == 5120 and v100.l2_read_bytes_per_clock == 2048
    assert a100.l2_bandwidth == pytest.approx(5120 * 1.41e9)
    assert v100.l2_bandwidth == pytest.approx(2048 * 1.53e9)
    # L2 sits between HBM and the SMs' shared memory: faster than one, slower than the other.
    for acc in (a100, v100):
        assert acc.mem_bandwidth < acc.l2_bandwidth < acc.shared_mem_bandwidth
        assert "Bytes/clk" in acc.source and "A100 Tensor Core GPU Architecture whitepaper" in acc.source
    # No other part has a published per-clock figure: it stays missing, never guessed.
    for name in ALL:
        acc = get_accelerator(name)
        if acc.name not in (a100.name, v100.name):
            assert acc.l2_read_bytes_per_clock is None and acc.l2_bandwidth is None, name


@pytest.mark.parametrize("name", [n for n in ALL if get_accelerator(n).fp16_tensor_flops_per_clock_per_sm])
def test_tensor_clock_implied_by_dense_peak(name):
    """dense FP16 peak = SMs x tensor FLOP/clock/SM x tensor clock; the clock is at most the boost
    clock: equal on V100 and A100, about 1830 MHz on H100 SXM and 1620 MHz on H100 PCIe."""
    acc = get_accelerator(name)
    clock = acc.tensor_clock_hz
    assert clock is not None and clock <= acc.boost_clock_hz * 1.001
    assert acc.sm_count * acc.fp16_tensor_flops_per_clock_per_sm * clock == pytest.approx(acc.peak("fp16"))
    expected_mhz = {"V100 SXM2": 1530, "A100 SXM 80GB": 1410, "H100 SXM": 1830, "H100 PCIe": 1620,
                    "H200": 1830}[acc.name]
    assert clock / 1e6 == pytest.approx(expected_mhz, rel=0.005)


def test_fp8_formats_name_the_encoding():
    """NVIDIA FP8 is OCP E4M3/E5M2; the MI300X (gfx942) runs the FNUZ variants instead."""
    for name in ALL:
        acc = get_accelerator(name)
        if acc.fp8_formats:
            assert "fp8" in acc.peak_flops, name
            assert set(acc.fp8_formats) <= {"E4M3", "E5M2", "E4M3FNUZ", "E5M2FNUZ"}, name
    assert get_accelerator("MI300X").fp8_formats == ("E4M3FNUZ", "E5M2FNUZ")
    assert get_accelerator("H100 SXM").fp8_formats == ("E4M3", "E5M2")


@pytest.mark.parametrize("name", [n for n in ALL if get_accelerator(n).mem_data_rate_bits_per_s_per_pin])
def test_bandwidth_is_bus_width_times_data_rate(name):
    """Second way for the datasheet bandwidth: bus width x per-pin data rate / 8, within 1%
    (datasheets round bandwidth to three significant figures; the per-pin rate is rounded too)."""
    acc = get_accelerator(name)
    assert acc.mem_bus_width_bits, "a per-pin data rate needs the bus width beside it"
    assert 1e9 <= acc.mem_data_rate_bits_per_s_per_pin <= 5e10          # bit/s per pin, not Gbit/s
    derived = acc.mem_bus_width_bits * acc.mem_data_rate_bits_per_s_per_pin / 8
    assert derived == pytest.approx(acc.mem_bandwidth, rel=0.01)
    assert "data rate" in acc.source


def test_cdna3_fp32_rate_is_64_lanes_packed():
    """MI300X and MI325X: 256 FP32 FLOP per clock per CU is 64 lanes (19,456 stream processors /
    304 CUs, AMD's MI300X datasheet) x 2 (FMA) x 2 (packed FP32), not 128 dual-issued lanes."""
    lanes_per_cu = 19_456 // 304
    assert lanes_per_cu * 304 == 19_456 and lanes_per_cu == 64
    for name in ("MI300X", "MI325X"):
        acc = get_accelerator(name)
        assert acc.sm_count == 304
        assert acc.fp32_flops_per_clock_per_sm == lanes_per_cu * 2 * 2
        # Second way: the datasheet's 163.4 TFLOP/s FP32 vector peak at 2100 MHz.
        assert acc.sm_count * lanes_per_cu * 2 * 2 * acc.boost_clock_hz == pytest.approx(acc.peak("fp32"), rel=1e-3)
