"""Benchmark of lesson 08's simulators (not a test): ring, pipeline, systolic array, widget.

``run()`` returns name -> number or short string; tools/bench.py collects it.

    python tools/bench_beyond.py
"""

from __future__ import annotations


import numpy as np

from course_lib.measure import time_best


def run() -> dict:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from course_lib.collectives import simulate_ring_all_reduce
    from course_lib.parallelism import simulate_pipeline
    from course_lib.plots.parallelism import plot_step_estimate
    from course_lib.systolic import systolic_matmul
    from course_lib.widgets.parallelism import explore_plan

    rng = np.random.default_rng(0)
    figures = {}

    data = rng.standard_normal((16, 1_000_003)).astype(np.float32)
    t = time_best(lambda: simulate_ring_all_reduce(data))
    figures["ring all-reduce sim, 16 ranks x 1M float32 (ms)"] = round(t * 1e3, 1)
    figures["ring all-reduce sim throughput (GB reduced/s)"] = round(data.nbytes / t / 1e9, 2)

    t = time_best(lambda: simulate_pipeline(16, 64, "1f1b"))
    figures["pipeline sim, 16 stages x 64 micro-batches (ops/s)"] = round(2 * 16 * 64 / t)

    a, b = rng.standard_normal((200, 300)), rng.standard_normal((300, 250))
    t = time_best(lambda: systolic_matmul(a, b, 32, 32), repeats=2)
    figures["systolic sim 200x300x250 on 32x32 (ms)"] = round(t * 1e3, 1)
    figures["systolic sim throughput (simulated MACs/s)"] = round(200 * 300 * 250 / t)

    def widget_update():
        plt.close(plot_step_estimate(explore_plan("H100 SXM", 70.0, 1024, 8, 4, 1, "selective", False)))
    figures["parallelism widget compute+draw (ms)"] = round(time_best(widget_update) * 1e3, 1)
    return figures


if __name__ == "__main__":
    for name, value in run().items():
        print(f"{name}: {value}")
