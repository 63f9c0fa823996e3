"""The number explorer and the format plots: wiring and drawing only."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from course_lib import formats as F  # noqa: E402
from course_lib.plots import formats as P  # noqa: E402
from course_lib.widgets.formats import explore_number, number_explorer  # noqa: E402


def test_explorer_updates_on_control_change():
    ex = number_explorer("0.1")
    before_image = ex.image.value
    assert [e.format for e in ex.result] == list(F.FORMAT_NAMES)
    ex.controls["value"].value = "1e6"
    e4m3 = next(e for e in ex.result if e.format == "fp8_e4m3")
    assert math.isnan(e4m3.stored) and ex.image.value != before_image
    ex.controls["saturate"].value = True
    e4m3 = next(e for e in ex.result if e.format == "fp8_e4m3")
    assert e4m3.stored == F.get_format("fp8_e4m3").max_value
    assert "FP8 E4M3" in ex.text.value


def test_bad_text_is_shown_as_one_line_and_keeps_the_last_result():
    ex = number_explorer("2.5")
    last = ex.result
    ex.controls["value"].value = "twelve"
    assert "value must be a number" in ex.text.value and ex.result is last


def test_compute_step_parses_text_and_skips_formats_without_nan():
    parsed, direct = explore_number(" 1_000 "), explore_number(1000.0)
    assert [e.bits for e in parsed] == [e.bits for e in direct]
    names = [e.format for e in explore_number("nan")]
    assert "fp4_e2m1" not in names and "int8" not in names and "bf16" in names
    with pytest.raises(ValueError, match="value"):
        explore_number("0x")
    with pytest.raises(ValueError, match="value"):
        number_explorer("abc")


def test_every_plot_returns_a_figure():
    rng = np.random.default_rng(0)
    g = F.gradient_like(rng, 2000)
    w = F.outlier_matrix(rng, 8, 70)
    figs = [
        P.plot_bit_layout(explore_number(-3.75)),
        P.plot_bit_layout(F.encode(7.0, "int4")),
        P.plot_spacing(F.spacing_curves(("bf16", "fp8_e4m3"), points=50), relative=False),
        P.plot_gradient_histogram(g),
        P.plot_loss_scale(F.loss_scale_sweep(g, "fp16", range(0, 8))),
        P.plot_accumulation(F.accumulate(np.full(50, 0.3), "fp8_e4m3")),
        P.plot_quantization_errors([F.quantize(w, "int8", "tensor"), F.mx_quantize(w)]),
        P.plot_tensor_rates({"H100": F.tensor_rates("H100")}),
    ]
    for fig in figs:
        assert isinstance(fig, matplotlib.figure.Figure)
        plt.close(fig)


def test_plots_refuse_empty_or_wrong_input():
    for call in (lambda: P.plot_bit_layout([]), lambda: P.plot_bit_layout([1.0])):
        with pytest.raises(TypeError, match="encodings"):
            call()
    for call, word in ((lambda: P.plot_spacing([]), "curves"), (lambda: P.plot_loss_scale([]), "sweeps"),
                       (lambda: P.plot_accumulation([]), "results"),
                       (lambda: P.plot_quantization_errors([]), "results"),
                       (lambda: P.plot_tensor_rates({}), "rates"),
                       (lambda: P.plot_gradient_histogram([0.0]), "values")):
        with pytest.raises(ValueError, match=word):
            call()


def test_spacing_curves_stay_within_each_range():
    for c in F.spacing_curves(points=40):
        f = F.get_format(c.format)
        assert c.magnitudes.min() >= f.min_subnormal and c.magnitudes.max() <= f.max_value
        normal = c.magnitudes >= f.min_normal
        # a magnitude just under 2^k rounds up to 2^k, where the gap doubles: hence (1 + eps)
        assert np.all(c.relative_gaps[normal] <= f.epsilon * (1 + f.epsilon))
        assert np.all(c.relative_gaps[normal] > f.epsilon / 2)
    with pytest.raises(ValueError, match="points"):
        F.spacing_curves(points=1)


def test_new_plots_return_figures_and_refuse_empty_input():
    """Plots added for issue 11: FP8 scaling runs, layer errors, profiles, the memory wall."""
    from course_lib.memory import memory_wall
    from course_lib.plots.memory import plot_memory_wall
    from course_lib.plots.roofline import plot_profile_readings
    from course_lib.roofline import read_profile
    rng = np.random.default_rng(4)
    x = F.drifting_tensor(rng, 7, 51, growth=1.3, spike_step=4)
    runs = [F.simulate_fp8_scaling(x, "fp8_e4m3", r) for r in ("current", "delayed")]
    ws = F.random_mlp(rng, [9, 11, 7])
    errs = [F.mlp_quantization_errors(ws, rng.standard_normal((5, 9)), "int8")]
    readings = [read_profile("a", 1e-4, 1e8, 1e9), read_profile("b", 1e-3, 1e8, 1e12)]
    figs = [P.plot_scaling_runs(runs), P.plot_layer_errors(errs), plot_profile_readings(readings),
            plot_memory_wall(memory_wall())]
    for fig in figs:
        assert isinstance(fig, matplotlib.figure.Figure)
        plt.close(fig)
    for call, word in ((lambda: P.plot_scaling_runs([]), "runs"), (lambda: P.plot_layer_errors([]), "results"),
                       (lambda: plot_profile_readings([]), "readings")):
        with pytest.raises(ValueError, match=word):
            call()
    with pytest.raises(ValueError, match="share"):
        plot_profile_readings([readings[0], read_profile("c", 1e-3, 1e8, 1e9, "A100")])
