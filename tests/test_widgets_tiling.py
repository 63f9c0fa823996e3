"""The tiling explorer and the lesson-06 plots: wiring only; moving a control changes result and image."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from course_lib import attention, tiling  # noqa: E402
from course_lib.plots.attention import (plot_attention_memory, plot_attention_traffic,  # noqa: E402
                                        plot_online_softmax)
from course_lib.plots.tiling import (plot_fusion, plot_load_counts, plot_reuse_hierarchy,  # noqa: E402
                                     plot_tile_traffic)
from course_lib.widgets.tiling import explore_tiling, tiling_explorer  # noqa: E402


def test_explorer_updates_on_each_control():
    ex = tiling_explorer("H100 SXM")
    image, (acc, matmul, attn) = ex.image.value, ex.result
    assert acc == "H100 SXM"
    assert matmul.current_tile == 128 and attn.current_n == 16384
    ex.controls["tile"].value = 512
    assert ex.result[1].current_tile == 512 and ex.image.value != image
    assert "not</b> fit" in ex.text.value                 # 512 exceeds the H100's largest tile
    ex.controls["block_size"].value = 1024
    assert ex.result[2].block_size == (1024, 1024)
    ex.controls["seq_len"].value = 1024
    assert ex.result[2].current_n == 1024
    ex.controls["accelerator"].value = "L4"
    assert ex.result[1].tile_limit == tiling.tile_limit("L4", "bf16").largest and "on the L4" in ex.text.value


def test_compute_step_is_pure_and_rejects_unknown_gpus():
    a = explore_tiling("A100 SXM 80GB", 64, 4096, 128)
    b = explore_tiling("A100 SXM 80GB", 64, 4096, 128)
    assert np.array_equal(a[1].predicted_bytes, b[1].predicted_bytes)
    assert np.array_equal(a[2].flash_elements, b[2].flash_elements)
    with pytest.raises(ValueError, match="accelerator must be one of"):
        tiling_explorer("TPU v5e")


def test_plots_return_figures():
    sweep = tiling.traffic_sweep(90, 70, 50, tiles=[8, 16, 32, 64], simulate=[16], limit=32, current_tile=16)
    walk = tiling.simulate_tiled_matmul(40, 30, 20, 16)
    figures = [
        plot_tile_traffic(sweep), plot_load_counts(walk), plot_reuse_hierarchy(tiling.tiling_hierarchy()),
        plot_fusion(tiling.fusion_traffic(100, 30)),
        plot_attention_traffic(attention.attention_traffic_sweep([64, 128], d=8, block_size=16, count_ns=[64],
                                                                 rng=np.random.default_rng(0), current_n=64)),
        plot_attention_memory(attention.memory_sweep([64, 128], d=8, capacity_bytes=1e6)),
        plot_online_softmax({"keys_seen": [3, 6], "running_max": [1.0, 2.0], "estimate": [0.1, 0.2],
                             "exact": 0.2}),
    ]
    for fig in figures:
        assert isinstance(fig, matplotlib.figure.Figure)
        plt.close(fig)
