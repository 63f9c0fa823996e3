"""Figures a reader can read: labels never collide or leave the axes, log axes carry values,
ties are reported as ties, counts take the right number. Rendered with Agg, no display."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from course_lib.economics import decode_kernel, get_model, prefill_kernel  # noqa: E402
from course_lib.latency import occupancy, occupancy_curve, simulate_latency_hiding  # noqa: E402
from course_lib.plots import plural, powers_as_math, readable_log_ticks, text_problems  # noqa: E402
from course_lib.plots.latency import plot_latency_hiding, plot_occupancy  # noqa: E402
from course_lib.plots.roofline import plot_roofline  # noqa: E402
from course_lib.roofline import elementwise_kernel, matmul_kernel, place_kernel  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _texts_inside_axes(fig):
    """Every text of every axes lies inside that axes (after text_problems has drawn the figure)."""
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        box = ax.get_window_extent(renderer)
        for t in ax.texts:
            tb = t.get_window_extent(renderer)
            assert box.x0 - 1 <= tb.x0 and tb.x1 <= box.x1 + 1 and box.y0 - 1 <= tb.y0 \
                and tb.y1 <= box.y1 + 1, f"{t.get_text()!r} leaves its axes"


def test_lesson_04_roofline_labels_do_not_collide():
    kernels = [matmul_kernel("decode GEMV (m=1)", 1, 8192, 8192, "bf16"),
               matmul_kernel("small batch (m=16)", 16, 8192, 8192, "bf16"),
               matmul_kernel("training GEMM (m=8192)", 8192, 8192, 8192, "bf16"),
               matmul_kernel("skinny GEMM (k=64)", 4096, 64, 4096, "bf16"),
               elementwise_kernel("GELU 2^28 elements", 2 ** 28, 8, "bf16")]
    fig = plot_roofline([place_kernel(k, "H100 SXM", "bf16") for k in kernels])
    assert text_problems(fig) == []
    _texts_inside_axes(fig)
    assert any("$2^{28}$" in t.get_text() for t in fig.axes[0].texts)     # a power, drawn as one


def test_lesson_07_roofline_labels_do_not_collide():
    llama8 = get_model("Llama 3 8B")
    kernels = [prefill_kernel(llama8, 16), prefill_kernel(llama8, 2048),
               decode_kernel(llama8, 1, 1024), decode_kernel(llama8, 64, 1024)]
    fig = plot_roofline([place_kernel(k, "H100 SXM", "bf16") for k in kernels])
    assert text_problems(fig) == []
    _texts_inside_axes(fig)


def test_random_roofline_in_a_narrow_shared_panel():
    # Random asymmetric shapes on a narrow panel of a shared-y row, as lesson 08 draws them.
    rng = np.random.default_rng(8)
    fig, axes = plt.subplots(1, 2, figsize=(7, 3.4), sharey=True)
    for ax, chip in zip(axes, ["H100 SXM", "TPU v5p"]):
        m, k, n = (int(v) for v in rng.integers(1, 20_000, size=3))
        kernels = [matmul_kernel(f"GEMM {m}x{k}x{n}", m, k, n), matmul_kernel("GEMV", 1, k, n)]
        plot_roofline([place_kernel(kern, chip, "bf16") for kern in kernels], ax=ax, title=chip)
    assert text_problems(fig) == []
    _texts_inside_axes(fig)


def test_knee_label_clear_of_legend_and_plural():
    sweep = simulate_latency_hiding(np.arange(1, 33), 40, 560)
    fig = plot_latency_hiding(sweep)
    assert text_problems(fig) == []
    assert "1 scheduler" in fig.axes[0].get_title() and "(s)" not in fig.axes[0].get_title()


def test_occupancy_tie_is_reported_as_a_tie():
    # 32 registers on an H100: the register file and the warp limit both allow 8 blocks.
    tie = occupancy(256, 32, 0, "H100 SXM")
    assert tie.limiters == ("warps", "registers") and tie.limiter == "warps and registers"
    # A V100 reserves no shared memory per block: with none asked for, none limits.
    v100 = occupancy(64, 32, 0, "V100")
    assert "shared memory" not in v100.block_limits and "shared memory" not in v100.limiter
    assert v100.limiters == ("warps", "registers", "blocks")
    assert v100.limiter == "warps, registers and blocks"
    single = occupancy(256, 128, 0, "H100 SXM")
    assert single.limiter == "registers" and single.limiters == ("registers",)


def test_occupancy_bars_are_not_capped():
    r = occupancy(256, 128, 0, "H100 SXM")          # limits 8, 2, 32 and 228 blocks
    fig = plot_occupancy(r, occupancy_curve(256, 0, "H100 SXM", registers=np.arange(8, 256, 8)))
    ax = fig.axes[0]
    widths = {t.get_text(): p.get_width() for t, p in zip(ax.get_yticklabels(), ax.patches)}
    assert widths == {k: float(v) for k, v in r.block_limits.items()}
    assert ax.get_xscale() == "log" and ax.get_xlim()[1] > max(r.block_limits.values())
    assert ax.get_title().startswith("2 blocks x 8 warps")
    one = occupancy(1024, 64, 0, "H100 SXM")         # one block of 32 warps
    assert plot_occupancy(one).axes[0].get_title().startswith("1 block x 32 warps")


def test_log_axis_spanning_under_a_decade_gets_values():
    fig, ax = plt.subplots()
    ax.loglog([1e4, 1e7], [33, 97])
    readable_log_ticks(ax)
    fig.draw_without_rendering()
    lo, hi = ax.get_ylim()
    labelled = [t for t in ax.yaxis.get_majorticklocs() if lo <= t <= hi]
    assert len(labelled) >= 3
    texts = [t.get_text() for t in ax.get_yticklabels() if lo <= t.get_position()[1] <= hi]
    assert all(float(t.replace(",", "")) > 0 for t in texts)          # plain values, no 10^x


def test_words_and_powers():
    assert plural(1, "warp") == "1 warp" and plural(2, "block") == "2 blocks"
    assert powers_as_math("4096^3 matmul, 2^-24") == "$4096^{3}$ matmul, $2^{-24}$"
    assert powers_as_math("$x^2$") == "$x^2$"


def test_result_plots_name_what_they_take():
    """A plot given a number instead of its result records says which function makes them."""
    from course_lib.plots.formats import plot_scaling_runs
    from course_lib.exercises.mastery_plot import plot_mastery
    with pytest.raises(TypeError, match="rows.*concept_mastery"):
        plot_mastery(3)
    with pytest.raises(TypeError, match="runs.*simulate_fp8_scaling"):
        plot_scaling_runs(2.5)
    fig, ax = plt.subplots()
    with pytest.raises(TypeError, match="avoid_lines must be True or False"):
        from course_lib.plots import place_labels
        place_labels(ax, [(1.0, 2.0, "a")], avoid_lines=float("nan"))
    plt.close(fig)
