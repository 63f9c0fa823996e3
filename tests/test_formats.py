"""Tests of course_lib.formats: bit fields, rounding, ranges, loss scaling, accumulation, quantization.

The independent second ways used here: ml_dtypes' own bit patterns and casts (against the field
formula and the rounding formula), the textbook range formulas (against ml_dtypes.finfo), a plain
float32 loop (against accumulate) and simulation (against stagnation_sum).
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib import formats as F
from course_lib.hardware import get_accelerator, list_accelerators

FLOATS_WITH_DTYPE = ("fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "fp4_e2m1")
SMALL_FLOATS = ("bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "fp4_e2m1")
DTYPES = {"fp32": np.float32, "bf16": ml_dtypes.bfloat16, "fp16": np.float16,
          "fp8_e4m3": ml_dtypes.float8_e4m3fn, "fp8_e5m2": ml_dtypes.float8_e5m2,
          "fp4_e2m1": ml_dtypes.float4_e2m1fn, "int8": np.int8, "int4": ml_dtypes.int4}
SETTINGS = settings(max_examples=60, deadline=None)

finite_f32 = st.floats(width=32, allow_nan=False, allow_infinity=False)


def same(a, b):
    """Equal as floats, NaN equal to NaN, and -0 equal to +0."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


# --------------------------------------------------------------------------- the table

def _textbook(f):
    """Range from the field widths alone: IEEE-like, E4M3 (NaN at all ones) or FP4 (no specials)."""
    bias = 2 ** (f.exponent_bits - 1) - 1
    if f.name == "tf32" or f.has_inf:
        emax, top_mantissa = 2 ** f.exponent_bits - 2 - bias, 2 - 2.0 ** -f.mantissa_bits
    elif f.has_nan:
        emax, top_mantissa = 2 ** f.exponent_bits - 1 - bias, 2 - 2 * 2.0 ** -f.mantissa_bits
    else:
        emax, top_mantissa = 2 ** f.exponent_bits - 1 - bias, 2 - 2.0 ** -f.mantissa_bits
    return dict(bias=bias, max_value=top_mantissa * 2.0 ** emax, min_normal=2.0 ** (1 - bias),
                min_subnormal=2.0 ** (1 - bias - f.mantissa_bits), epsilon=2.0 ** -f.mantissa_bits)


@pytest.mark.parametrize("name", F.FLOAT_FORMATS)
def test_range_from_ml_dtypes_matches_textbook_formula(name):
    f = F.get_format(name)
    assert f.sign_bits + f.exponent_bits + f.mantissa_bits == f.bits
    for key, value in _textbook(f).items():
        assert getattr(f, key) == value, key


def test_layouts_and_containers():
    # bits of information vs bits in memory: only TF32 differs (19 in a 32-bit container)
    assert [F.get_format(n).bits for n in F.FORMAT_NAMES] == [32, 19, 16, 16, 8, 8, 4, 8, 4]
    assert [F.get_format(n).storage_bits for n in F.FORMAT_NAMES] == [32, 32, 16, 16, 8, 8, 4, 8, 4]
    bf16, fp32, fp16 = F.get_format("bf16"), F.get_format("fp32"), F.get_format("fp16")
    assert bf16.mantissa_bits == 7 and bf16.exponent_bits == fp32.exponent_bits
    assert F.get_format("tf32").mantissa_bits == fp16.mantissa_bits
    assert F.get_format("tf32").exponent_bits == fp32.exponent_bits


def test_overflow_behaviour_per_format():
    over = {n: F.get_format(n).overflow for n in F.FORMAT_NAMES}
    assert over["fp8_e4m3"] == "nan" and not F.get_format("fp8_e4m3").has_inf
    assert over["fp4_e2m1"] == "saturate" and not F.get_format("fp4_e2m1").has_nan
    for n in ("fp32", "tf32", "bf16", "fp16", "fp8_e5m2"):
        assert over[n] == "inf"


def test_table_text_lists_every_format():
    text = F.format_table_text()
    for f in F.format_table():
        assert f.label in text
    assert len(text.splitlines()) == len(F.FORMAT_NAMES) + 2


def test_get_format_aliases_and_errors():
    assert F.get_format("BFloat16") is F.get_format("bf16")
    assert F.get_format("e4m3").name == "fp8_e4m3"
    assert F.get_format(F.get_format("fp4")).name == "fp4_e2m1"
    with pytest.raises(ValueError, match="format"):
        F.get_format("fp7")
    with pytest.raises(TypeError, match="format"):
        F.get_format(16)


# --------------------------------------------------------------------------- bit fields

@pytest.mark.parametrize("name", ["bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "fp4_e2m1", "int8", "int4"])
def test_decode_every_bit_pattern_matches_ml_dtypes(name):
    f = F.get_format(name)
    codes = np.arange(2 ** f.bits, dtype=np.uint64)
    container = np.uint8 if f.storage_bits <= 8 else np.uint16
    with np.errstate(invalid="ignore"):
        reference = codes.astype(container).view(DTYPES[name]).astype(np.float64)
    assert same(F.decode_bits(codes, name), reference)


@SETTINGS
@given(st.integers(min_value=0, max_value=2 ** 32 - 1))
def test_decode_fp32_bits_matches_numpy(code):
    reference = np.array([code], dtype=np.uint32).view(np.float32).astype(np.float64)
    assert same(F.decode_bits(code, "fp32"), reference[0])


@SETTINGS
@given(st.integers(min_value=0, max_value=2 ** 19 - 1))
def test_decode_tf32_bits_is_top_of_fp32(code):
    reference = np.array([code << 13], dtype=np.uint32).view(np.float32).astype(np.float64)
    assert same(F.decode_bits(code, "tf32"), reference[0])


@SETTINGS
@given(finite_f32, st.sampled_from(F.FORMAT_NAMES), st.booleans())
def test_encode_decode_round_trip_equals_stored_value(x, name, saturate):
    stored = F.round_to_format(x, name, saturate=saturate)
    assert same(F.decode_bits(F.to_bits(x, name, saturate=saturate), name), stored)
    enc = F.encode(x, name, saturate=saturate)
    assert same(F.decode_fields(enc.sign, enc.exponent, enc.mantissa, name), enc.stored)
    assert enc.bit_string.replace(" ", "") == format(enc.bits, f"0{F.get_format(name).bits}b")


@SETTINGS
@given(finite_f32, st.sampled_from(FLOATS_WITH_DTYPE))
def test_round_to_format_is_ml_dtypes_cast(x, name):
    with np.errstate(over="ignore"):
        reference = np.float32(x).astype(DTYPES[name]).astype(np.float64)
    assert same(F.round_to_format(x, name), reference)


@SETTINGS
@given(finite_f32, st.sampled_from(F.FLOAT_FORMATS))
def test_round_to_format_agrees_with_rounding_formula(x, name):
    f = F.get_format(name)
    formula = F.round_float(x, f.mantissa_bits, f.min_exponent, f.max_value, overflow=f.overflow)
    assert same(F.round_to_format(x, name), formula)


@SETTINGS
@given(finite_f32, st.sampled_from(F.FLOAT_FORMATS))
def test_rounding_error_is_at_most_half_the_gap(x, name):
    f = F.get_format(name)
    r = F.round_to_format(x, name)
    if abs(x) > f.max_value:
        return
    assert abs(r - x) <= F.spacing(x, name) / 2


@pytest.mark.parametrize("name", SMALL_FLOATS)
def test_spacing_formula_equals_distance_to_next_value(name):
    values = F.representable_values(name)
    pos = values[values >= 0]
    gaps = np.diff(pos)
    assert np.array_equal(F.spacing(pos[:-1], name), gaps)


def test_representable_value_counts_follow_from_special_codes():
    for name in SMALL_FLOATS:
        f = F.get_format(name)
        codes = np.arange(2 ** f.bits, dtype=np.uint64)
        _, e, m = F.split_fields(codes, name)
        top = e == 2 ** f.exponent_bits - 1
        if f.has_inf:
            special = int(top.sum())                         # infinities and NaNs
        elif f.has_nan:
            special = int((top & (m == 2 ** f.mantissa_bits - 1)).sum())
        else:
            special = 0
        # every finite code is a distinct value except +0 and -0
        assert F.representable_values(name).size == 2 ** f.bits - special - 1
    assert F.representable_values("int4").size == 16
    with pytest.raises(ValueError, match="fmt"):
        F.representable_values("fp32")


def test_tf32_rounds_ties_to_even():
    one = 1.0
    ulp = 2.0 ** -10
    assert F.round_to_format(one + ulp / 2, "tf32") == one                 # tie, even is 1.0
    assert F.round_to_format(one + 3 * ulp / 2, "tf32") == one + 2 * ulp   # tie, even is 1+2ulp
    assert F.round_to_format(one + ulp / 2 + 2.0 ** -20, "tf32") == one + ulp


def test_encode_categories():
    big = 1e6
    assert F.encode(big, "fp16").category == "inf"
    assert F.encode(big, "fp8_e4m3").category == "nan"
    assert F.encode(big, "fp8_e4m3", saturate=True).stored == F.get_format("fp8_e4m3").max_value
    assert F.encode(big, "fp4_e2m1").category == "saturated"
    assert F.encode(big, "int8").category == "clipped"
    tiny = F.get_format("fp16").min_subnormal
    assert F.encode(tiny / 4, "fp16").category == "flushed to zero"
    assert F.encode(tiny * 3, "fp16").category == "subnormal"
    assert F.encode(tiny / 4, "bf16").category == "normal"
    assert F.encode(0.0, "fp8_e5m2").category == "zero"
    assert F.encode(-3.3, "int4").stored == -3.0
    e = F.encode(-2.5, "bf16")
    assert (e.sign, e.rel_error) == (1, 0.0)


def test_nan_in_formats_without_nan_is_refused():
    for name in ("fp4_e2m1", "int8", "int4"):
        with pytest.raises(ValueError, match="NaN"):
            F.round_to_format(math.nan, name)
    assert math.isnan(F.round_to_format(math.nan, "fp8_e4m3"))


# --------------------------------------------------------------------------- training ranges

def test_gradient_like_statistics(rng=None):
    rng = np.random.default_rng(12345)
    g = F.gradient_like(rng, 40_001, median=3e-6, decades=0.7)
    assert abs(np.log10(np.median(np.abs(g))) - np.log10(3e-6)) < 0.03
    assert abs(np.std(np.log10(np.abs(g))) - 0.7) < 0.02
    assert 0.45 < np.mean(g > 0) < 0.55
    again = F.gradient_like(np.random.default_rng(12345), 40_001, median=3e-6, decades=0.7)
    assert np.array_equal(g, again)


@SETTINGS
@given(st.integers(min_value=0, max_value=2 ** 31), st.sampled_from(["fp16", "bf16", "fp8_e5m2"]))
def test_cast_stats_flush_fraction_is_the_fraction_below_half_the_smallest_value(seed, name):
    rng = np.random.default_rng(seed)
    g = F.gradient_like(rng, 3001, median=2.0 ** -22, decades=1.3)
    f = F.get_format(name)
    # ml_dtypes converts float64 through float32 (double rounding): a value a hair above half the
    # smallest subnormal can round to exactly half in float32 and then, ties to even, to zero.
    # NumPy's float16 rounds float64 directly. Compare on the values each conversion rounds.
    x = g if name == "fp16" else g.astype(np.float32)
    expected = np.mean(np.abs(x) <= f.min_subnormal / 2)
    stats = F.cast_stats(g, name)
    assert stats.flushed_fraction == pytest.approx(expected, abs=1e-12)
    assert stats.overflow_fraction == 0


def test_bf16_keeps_what_fp16_flushes_and_loss_scaling_rescues_fp16():
    g = F.gradient_like(np.random.default_rng(7), 20_000)
    assert F.cast_stats(g, "bf16").flushed_fraction == 0
    fp16 = F.cast_stats(g, "fp16")
    assert fp16.flushed_fraction > 0.05
    sweep = F.loss_scale_sweep(g, "fp16", range(0, 40))
    k = sweep.best_log2_scale
    best = F.cast_stats(g, "fp16", 2.0 ** k)
    assert best.flushed_fraction + best.overflow_fraction < fp16.flushed_fraction / 10
    assert sweep.overflow_fraction[-1] > 0.5         # far too large a scale overflows
    assert np.all(np.diff(sweep.flushed_fraction) <= 0)


# --------------------------------------------------------------------------- accumulation

@SETTINGS
@given(st.lists(st.integers(-10 ** 7, 10 ** 7), min_size=1, max_size=300))
def test_fp32_accumulation_equals_a_float32_loop(ints):
    values = np.array(ints, dtype=np.float64) / 1024      # FP32 values whose float64 sums are exact
    s = np.float32(0)
    expected = []
    for v in values:
        s = np.float32(np.float64(s) + v)      # exact add of the two, one rounding to FP32
        expected.append(float(s))
    result = F.accumulate(values, "fp32")
    assert np.array_equal(result.partial_sums, np.array(expected))


@SETTINGS
@given(st.floats(2.0 ** -5, 4.0, width=32), st.sampled_from(["bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "fp4_e2m1"]))
def test_stagnation_formula_matches_simulation(increment, name):
    stop = F.stagnation_sum(increment, name)
    f = F.get_format(name)
    if stop > f.max_value or stop / increment > 5000:
        return
    n = int(2 * stop / increment) + 8
    result = F.accumulate(np.full(n, increment), name)
    assert result.total == stop
    assert result.partial_sums[-2] == stop


def test_long_sum_in_bf16_loses_what_fp32_keeps():
    values = np.random.default_rng(3).uniform(0.5, 1.5, 4097) * 0.01
    assert F.accumulate(values, "bf16").rel_error > 0.5
    assert F.accumulate(values, "fp32").rel_error < 1e-5


# --------------------------------------------------------------------------- quantization

shapes = st.tuples(st.integers(1, 9), st.integers(1, 77))


@SETTINGS
@given(st.integers(0, 2 ** 31), shapes, st.sampled_from(["int8", "int4", "fp8_e4m3", "fp8_e5m2", "fp4_e2m1"]),
       st.sampled_from(["tensor", "channel", "block"]), st.integers(1, 40))
def test_absmax_quantization_error_is_at_most_half_a_step(seed, shape, name, granularity, block):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * rng.uniform(0.01, 100)
    x.flat[rng.integers(x.size)] *= 30                       # an outlier
    q = F.quantize(x, name, granularity, axis=0, block_size=block)
    f = F.get_format(name)
    step = F.spacing(q.codes, name)                          # gap at each stored code
    assert np.all(np.abs(q.error) <= q.element_scales * step / 2 * (1 + 1e-12))
    assert q.clipped_fraction == 0
    assert np.all(np.abs(q.codes) <= f.max_value)
    assert same(F.round_to_format(q.codes, name), q.codes)   # codes are values of the format
    n_groups = {"tensor": 1, "channel": shape[0], "block": shape[0] * -(-shape[1] // block)}[granularity]
    assert q.scales.size == n_groups


def test_per_channel_scale_is_row_maximum_over_qmax():
    x = np.random.default_rng(11).standard_normal((5, 13))
    q = F.quantize(x, "int8", "channel", axis=0)
    assert np.allclose(q.scales, np.max(np.abs(x), axis=1) / 127)
    q1 = F.quantize(x, "int8", "channel", axis=1)
    assert np.allclose(q1.scales, np.max(np.abs(x), axis=0) / 127)


@SETTINGS
@given(st.integers(0, 2 ** 31), st.integers(1, 5), st.integers(1, 100), st.sampled_from(["fp4_e2m1", "fp8_e4m3"]))
def test_mx_scales_are_e8m0_powers_of_two_that_put_the_block_max_in_the_top_binade(seed, rows, cols, name):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, cols)) * 10.0 ** rng.uniform(-3, 3)
    q = F.mx_quantize(x, name)
    e8m0 = q.scales.astype(ml_dtypes.float8_e8m0fnu).astype(np.float64)
    assert np.array_equal(e8m0, q.scales)
    f = F.get_format(name)
    blocks = -(-cols // F.MX_BLOCK_SIZE)
    padded = np.zeros((rows, blocks * F.MX_BLOCK_SIZE))
    padded[:, :cols] = np.abs(x)
    amax = padded.reshape(-1, F.MX_BLOCK_SIZE).max(axis=1)
    top = amax / q.scales
    assert np.all((top >= 2.0 ** f.max_exponent) & (top < 2.0 ** (f.max_exponent + 1)))
    assert q.bits_per_element == pytest.approx(f.storage_bits + 8 * rows * blocks / x.size)


def test_mx_clips_a_block_maximum_above_the_element_maximum():
    x = np.zeros(32)
    x[0], x[1] = 7.0, 1.0                   # 7 = 1.75 * 2^2: scale 1, and 7 > 6 clips to 6
    q = F.mx_quantize(x)
    assert q.scales[0] == 1.0 and q.dequantized[0] == 6.0 and q.clipped_fraction == 1 / 32


def test_finer_scales_help_integers_on_outlier_data():
    w = F.outlier_matrix(np.random.default_rng(5), 48, 333)
    errs = {g: F.quantize(w, "int8", g).rel_rms_error for g in ("tensor", "channel", "block")}
    assert errs["tensor"] > 2 * errs["channel"] > 2 * errs["block"] / 2
    assert errs["block"] < errs["channel"] < errs["tensor"]


def test_outlier_matrix_shape_and_outliers():
    w = F.outlier_matrix(np.random.default_rng(1), 20, 31, outlier_rows=3, outlier_entries=5, outlier_scale=40)
    assert w.shape == (20, 31)
    row_std = w.std(axis=1)
    assert np.sum(row_std > 10) >= 3
    assert np.max(np.abs(w)) >= 40


# --------------------------------------------------------------------------- hardware side

def test_halving_bytes_always_halve_and_rates_come_from_catalog():
    for name in list_accelerators():
        acc = get_accelerator(name)
        for s in F.halving_steps(name):
            assert s.bytes_ratio == 2.0
            assert s.rate_ratio == acc.peak_flops[s.narrow] / acc.peak_flops[s.wide]


def test_halving_holds_on_a100_and_fails_for_int8_on_rtx_4090():
    # A100 datasheet: TF32 156, BF16 312, INT8 624, INT4 1248 dense TFLOP/s or TOPS
    assert all(s.doubles_rate for s in F.halving_steps("A100"))
    rtx = {(s.wide, s.narrow): s for s in F.halving_steps("RTX 4090")}
    assert not rtx[("fp16", "int8")].doubles_rate       # GeForce halves FP32-accumulate rates
    tf32 = [s for s in F.halving_steps("H100") if s.wide == "tf32"][0]
    assert tf32.bits_ratio == pytest.approx(19 / 16)    # 19 bits of information, 32 in memory


# --------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("call, exc, word", [
    (lambda: F.round_float([1.0], -1, -126, 1.0), ValueError, "mantissa_bits"),
    (lambda: F.round_float([1.0], 7, -126, 0.0), ValueError, "max_value"),
    (lambda: F.round_float([1.0], 7, -126, 1.0, overflow="wrap"), ValueError, "overflow"),
    (lambda: F.round_float("a", 7, -126, 1.0), TypeError, "x"),
    (lambda: F.round_to_format([1.0], "fp5"), ValueError, "format"),
    (lambda: F.round_to_format([1.0], "bf16", saturate="yes"), TypeError, "saturate"),
    (lambda: F.to_bits([1.0], None), TypeError, "format"),
    (lambda: F.decode_bits([256], "fp8_e4m3"), ValueError, "codes"),
    (lambda: F.decode_bits([1.5], "fp8_e4m3"), TypeError, "codes"),
    (lambda: F.decode_fields(2, 0, 0, "bf16"), ValueError, "sign"),
    (lambda: F.decode_fields(0, 16, 0, "fp8_e4m3"), ValueError, "exponent"),
    (lambda: F.decode_fields(0, 1, 8, "fp8_e4m3"), ValueError, "mantissa"),
    (lambda: F.spacing([math.inf], "bf16"), ValueError, "x"),
    (lambda: F.encode("1.0", "bf16"), TypeError, "value"),
    (lambda: F.encode(True, "bf16"), TypeError, "value"),
    (lambda: F.cast_stats([0.0, 0.0], "fp16"), ValueError, "values"),
    (lambda: F.cast_stats([1.0], "fp16", scale=-2), ValueError, "scale"),
    (lambda: F.cast_stats([math.nan], "fp16"), ValueError, "values"),
    (lambda: F.gradient_like(1, 10), TypeError, "rng"),
    (lambda: F.gradient_like(np.random.default_rng(), 0), ValueError, "n"),
    (lambda: F.gradient_like(np.random.default_rng(), 5, median=0), ValueError, "median"),
    (lambda: F.gradient_like(np.random.default_rng(), 5, decades=-1), ValueError, "decades"),
    (lambda: F.loss_scale_sweep([1.0], "fp16", []), TypeError, "log2_scales"),
    (lambda: F.loss_scale_sweep([1.0], "fp16", [0.5]), TypeError, "log2_scales"),
    (lambda: F.accumulate([1.0], "int8"), ValueError, "accumulator"),
    (lambda: F.accumulate([], "bf16"), ValueError, "values"),
    (lambda: F.accumulate([[1.0]], "bf16"), ValueError, "values"),
    (lambda: F.stagnation_sum(0.0, "bf16"), ValueError, "increment"),
    (lambda: F.stagnation_sum(1.0, "int4"), ValueError, "accumulator"),
    (lambda: F.outlier_matrix(None, 3, 3), TypeError, "rng"),
    (lambda: F.outlier_matrix(np.random.default_rng(), 0, 3), ValueError, "rows"),
    (lambda: F.outlier_matrix(np.random.default_rng(), 3, 3, outlier_rows=4), ValueError, "outlier_rows"),
    (lambda: F.outlier_matrix(np.random.default_rng(), 3, 3, outlier_scale=math.inf), ValueError, "outlier_scale"),
    (lambda: F.quantize([], "int8"), ValueError, "x"),
    (lambda: F.quantize([1.0, math.nan], "int8"), ValueError, "x"),
    (lambda: F.quantize([1.0], "int8", granularity="row"), ValueError, "granularity"),
    (lambda: F.quantize([1.0], "int8", block_size=0), ValueError, "block_size"),
    (lambda: F.quantize([[1.0]], "int8", "channel", axis=2), ValueError, "axis"),
    (lambda: F.quantize([1.0], "int8", scale_rule="mx"), ValueError, "scale_rule"),
    (lambda: F.quantize([1.0], "tf32"), ValueError, "tf32"),
    (lambda: F.quantize([1.0], "int8", scale_rule="max"), ValueError, "scale_rule"),
    (lambda: F.halving_steps("Z100"), ValueError, "accelerator"),
    (lambda: F.halving_steps("A100", pairs=[("tf32",)]), TypeError, "pairs"),
    (lambda: F.halving_steps("A100", pairs=[("tf32", "fp6")]), ValueError, "pairs"),
    (lambda: F.halving_steps("A100", pairs="tf32"), TypeError, "pairs"),
])
def test_bad_input_names_the_argument(call, exc, word):
    with pytest.raises(exc, match=word):
        call()


# ------------------------------------------------------------------ FP8 recipe, calibration, layers

def test_drifting_tensor_grows_and_spikes_as_asked():
    rng = np.random.default_rng(31)
    x = F.drifting_tensor(rng, 13, 2001, median=0.3, decades=0.2, growth=1.5, spike_step=7, spike_factor=9.0)
    assert x.shape == (13, 2001)
    med = np.median(np.abs(x), axis=1)
    expected = 0.3 * 1.5 ** np.arange(13)
    expected[7] *= 9.0
    assert np.allclose(med / expected, 1, rtol=0.08)
    with pytest.raises(ValueError, match="spike_step"):
        F.drifting_tensor(rng, 5, 10, spike_step=5)
    with pytest.raises(TypeError, match="rng"):
        F.drifting_tensor(3, 5, 10)
    with pytest.raises(ValueError, match="float64's range"):        # 1.5 ** 2000 overflows
        F.drifting_tensor(rng, 2001, 3, growth=1.5)


@pytest.mark.parametrize("fmt", ["fp8_e4m3", "fp8_e5m2"])
def test_current_scaling_never_clips_and_puts_amax_at_the_top(fmt):
    rng = np.random.default_rng(5)
    x = F.drifting_tensor(rng, 9, 777, median=3e-4, decades=0.7, growth=1.3)
    run = F.simulate_fp8_scaling(x, fmt, "current")
    top = F.get_format(fmt).max_value
    assert run.overflow_counts.sum() == 0
    assert np.allclose(run.amax * run.scales, top)


def test_delayed_scaling_matches_a_loop_over_steps():
    """Second way: a plain per-step loop with the history window written out."""
    rng = np.random.default_rng(17)
    x = F.drifting_tensor(rng, 23, 301, median=1.0, decades=0.4, growth=1.2, spike_step=15)
    h, margin = 5, 1
    run = F.simulate_fp8_scaling(x, "fp8_e4m3", "delayed", history_len=h, margin=margin)
    top = F.get_format("fp8_e4m3").max_value
    for t in range(x.shape[0]):
        amax_ref = np.abs(x[t]).max() if t == 0 else max(np.abs(x[u]).max() for u in range(max(0, t - h), t))
        s = top / amax_ref / 2 ** margin
        assert np.isclose(run.scales[t], s)
        clipped = int(np.sum(np.abs(x[t]) * s > top * (1 + 1e-12)))
        assert run.overflow_counts[t] == clipped
        stored = np.clip(x[t] * s, -top, top).astype(ml_dtypes.float8_e4m3fn).astype(np.float64)
        assert run.underflow_counts[t] == int(np.sum((stored == 0) & (x[t] != 0)))
    assert run.overflow_steps.size > 0 and 0 not in run.overflow_steps


def test_no_scaling_flushes_small_gradients_and_e5m2_keeps_more():
    rng = np.random.default_rng(8)
    g = F.drifting_tensor(rng, 1, 5003, median=2.0 ** -22, decades=1.0)
    none = F.simulate_fp8_scaling(g, "fp8_e5m2", "none")
    e5 = F.simulate_fp8_scaling(g, "fp8_e5m2", "current")
    e4 = F.simulate_fp8_scaling(g, "fp8_e4m3", "current")
    assert none.underflow_fraction > 0.5 > e4.underflow_fraction >= e5.underflow_fraction
    with pytest.raises(ValueError, match="floating-point"):
        F.simulate_fp8_scaling(g, "int8")
    with pytest.raises(ValueError, match="rule"):
        F.simulate_fp8_scaling(g, "fp8_e4m3", "sometimes")
    with pytest.raises(ValueError, match="dimension"):
        F.simulate_fp8_scaling(g[0], "fp8_e4m3")


def test_calibration_methods():
    rng = np.random.default_rng(23)
    x = rng.laplace(size=3001) * 0.7
    assert F.calibrate_amax(x) == np.abs(x).max()
    assert np.isclose(F.calibrate_amax(x, "percentile", 97.5), np.quantile(np.abs(x), 0.975))
    best = F.calibrate_amax(x, "mse", fmt="int4", candidates=50)
    # Second way: the chosen threshold's squared error is the least of the 50 candidates.
    grid = np.abs(x).max() * np.arange(1, 51) / 50
    errs = [np.sum((F.fake_quantize(x, a, "int4") - x) ** 2) for a in grid]
    assert np.isclose(best, grid[int(np.argmin(errs))])
    assert best < np.abs(x).max()
    with pytest.raises(ValueError, match="method"):
        F.calibrate_amax(x, "median")
    with pytest.raises(ValueError, match="nonzero"):
        F.calibrate_amax(np.zeros(4))


@pytest.mark.parametrize("fmt", ["int8", "int4", "fp8_e4m3"])
def test_fake_quantize_clips_at_amax_and_errs_at_most_half_a_step_inside(fmt):
    rng = np.random.default_rng(41)
    x = rng.standard_normal(1999) * 2.3
    amax = 1.7
    y = F.fake_quantize(x, amax, fmt)
    assert np.all(np.abs(y) <= amax * (1 + 1e-12))
    inside = np.abs(x) <= amax
    s = amax / (F.get_format(fmt).max_value if F.get_format(fmt).is_float else -F.get_format(fmt).min_value - 1)
    gap = F.spacing(y[inside] / s, fmt) * s
    assert np.all(np.abs(y[inside] - x[inside]) <= gap / 2 * (1 + 1e-9))
    with pytest.raises(ValueError, match="amax"):
        F.fake_quantize(x, 0.0, fmt)


def test_rel_rms_error():
    assert F.rel_rms_error([1.0, 2.0], [1.0, 2.0]) == 0
    assert np.isclose(F.rel_rms_error([2.0, 0.0], [1.0, 1.0]), 1.0)
    with pytest.raises(ValueError, match="shape"):
        F.rel_rms_error([1.0], [1.0, 2.0])


def test_mlp_errors_first_layer_by_hand_and_growth_with_depth():
    rng = np.random.default_rng(12)
    weights = F.random_mlp(rng, [37, 53, 41, 29, 31, 23])
    assert [w.shape for w in weights] == [(37, 53), (53, 41), (41, 29), (29, 31), (31, 23)]
    x = rng.standard_normal((19, 37))
    ref = F.mlp_forward(weights, x)
    h = x
    for i, w in enumerate(weights):             # second way: the reference written out
        h = h @ w
        assert np.allclose(ref[i], h)
        h = np.maximum(h, 0)
    r = F.mlp_quantization_errors(weights, x, "int8")
    q1 = F.quantize(x, "int8").dequantized @ F.quantize(weights[0], "int8", "channel", axis=1).dequantized
    assert np.isclose(r.rel_errors[0], np.linalg.norm(q1 - ref[0]) / np.linalg.norm(ref[0]))
    assert r.rel_errors[-1] > r.rel_errors[0] and r.growth > 1
    assert F.mlp_quantization_errors(weights, x, "bf16").rel_errors[-1] < r.rel_errors[-1]
    with pytest.raises(ValueError, match="rows"):
        F.mlp_forward([weights[0], weights[2]], x)
    with pytest.raises(ValueError, match="widths"):
        F.random_mlp(rng, [5])


def test_cast_stats_of_all_overflow_and_decode_fields_of_nothing():
    # Finite values that all overflow FP16: no stored value to measure, each value lost (1.0), not NaN.
    stats = F.cast_stats(np.full(8, 1e30), "fp16")
    assert stats.overflow_fraction == 1.0 and stats.median_rel_error == 1.0
    with pytest.raises(ValueError, match="sign"):
        F.decode_fields(np.array([]), 127, 0, "bf16")
