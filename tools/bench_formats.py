"""Benchmark of lesson 05's library (not a test): encoding, quantization, accumulation, widget.

``run()`` returns name -> number or short string; tools/bench.py collects it.

    python tools/bench_formats.py
"""

from __future__ import annotations


import numpy as np

from course_lib.measure import time_best


def run() -> dict:
    import matplotlib
    matplotlib.use("Agg")
    import io

    import matplotlib.pyplot as plt

    from course_lib import formats as F
    from course_lib.plots.formats import plot_bit_layout
    from course_lib.widgets.formats import explore_number

    rng = np.random.default_rng(0)
    figures = {}

    x = rng.standard_normal(1_000_003)
    t = time_best(lambda: F.round_to_format(x, "fp8_e4m3"))
    figures["round 1M values to FP8 E4M3 (ms)"] = round(t * 1e3, 1)
    t = time_best(lambda: F.round_to_format(x, "tf32"))
    figures["round 1M values to TF32, bit emulation (ms)"] = round(t * 1e3, 1)

    w = F.outlier_matrix(rng, 1024, 1023)
    t = time_best(lambda: F.mx_quantize(w, "fp4_e2m1"))
    figures["MXFP4 quantize 1024 x 1023 (ms)"] = round(t * 1e3, 1)
    figures["MXFP4 rel. RMS error on outlier matrix"] = round(F.mx_quantize(w).rel_rms_error, 4)
    figures["INT8 per-block rel. RMS error on outlier matrix"] = round(
        F.quantize(w, "int8", "block").rel_rms_error, 5)

    t = time_best(lambda: F.accumulate(np.full(10_000, 0.01), "bf16"))
    figures["BF16 accumulate 10k terms (ms)"] = round(t * 1e3, 1)

    def widget_update():
        fig = plot_bit_layout(explore_number("0.1"))
        fig.savefig(io.BytesIO(), format="png", bbox_inches="tight", dpi=80)
        plt.close(fig)
    figures["number explorer compute+draw+PNG (ms)"] = round(time_best(widget_update) * 1e3, 1)
    return figures


if __name__ == "__main__":
    for name, value in run().items():
        print(f"{name}: {value}")
