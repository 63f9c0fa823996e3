"""Lesson 10's drawings and explorer: they draw what they are given, refuse anything else by name,
and the launch-free traffic model behind them checks its arguments."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

tiles = pytest.importorskip("course_lib.tiles")     # first: it selects the interpreter before triton loads
torch = pytest.importorskip("torch")

from course_lib.plots import text_problems  # noqa: E402
from course_lib.plots.tiles import plot_group_sweep, plot_grouped_order, plot_tile_reads  # noqa: E402
from course_lib.tiles import kernels as K  # noqa: E402
from course_lib.tiles.order import group_sweep, grouped_matmul_traffic, tile_order  # noqa: E402
from course_lib.tiles.profile import tile_reads  # noqa: E402
from course_lib.widgets.tiles import explore_tile_order, tile_order_explorer  # noqa: E402


def test_the_three_drawings_draw_what_they_are_given():
    a, b = torch.randn(70, 20), torch.randn(20, 70)
    _, prof = K.matmul(a, b, 32, 32, 32, group_m=2)
    reads = tile_reads(prof, ("a_ptr", "b_ptr"), range(4))
    assert reads.bytes_read["a_ptr"] >= reads.distinct_bytes["a_ptr"] > 0
    for fig in (plot_tile_reads(reads), plot_grouped_order(grouped_matmul_traffic(300, 64, 200, 32, 32, 2, 8)),
                plot_group_sweep(group_sweep(1024, 1024, 1024, 128, 128, 4, 132))):
        assert fig.axes and not text_problems(fig)


def test_drawings_refuse_other_results_by_name():
    with pytest.raises(TypeError, match="reads"):
        plot_tile_reads("not a result")
    with pytest.raises(TypeError, match="traffic"):
        plot_grouped_order(3)
    with pytest.raises(TypeError, match="sweep"):
        plot_group_sweep(None)


def test_the_model_checks_its_arguments_and_the_explorer_its_accelerator():
    with pytest.raises(ValueError, match="block_m"):
        grouped_matmul_traffic(100, 100, 100, 0, 32)
    with pytest.raises(ValueError, match="programs_per_wave"):
        grouped_matmul_traffic(100, 100, 100, 32, 32, 1, 0)
    assert tile_order(64, 64, 32, 32).tolist() == [[0, 0], [0, 1], [1, 0], [1, 1]]
    with pytest.raises(ValueError, match="accelerator"):
        tile_order_explorer("MI300X")
    accelerator, sweep, t_no, t_waves = explore_tile_order("H100 SXM", 4096, 128, 128, 8)
    assert t_waves.t_s <= t_no.t_s and sweep.current.bytes_waves < sweep.current.bytes_no_reuse
