"""Benchmark figures for lesson 07 (not a test): widget update time and headline numbers.

``run()`` returns name -> number or short string; tools/bench.py collects it.
"""

from __future__ import annotations

import time


def run() -> dict:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from course_lib.economics import crossover_batch, decode_step, get_model, serving_curve
    from course_lib.plots.economics import plot_serving_curve
    from course_lib.widgets.economics import explore_serving

    figures = {}
    start = time.perf_counter()
    for _ in range(5):
        result = explore_serving("Llama 3 70B", "H100 SXM", "bf16", 37, 4096, 4)
        plt.close(plot_serving_curve(result[0]))
    figures["serving widget compute+draw (ms)"] = round((time.perf_counter() - start) / 5 * 1e3, 1)
    start = time.perf_counter()
    serving_curve("Llama 3 8B", "H100 SXM", 2048, batches=range(1, 1025))
    figures["serving_curve, 1024 batch sizes (ms)"] = round((time.perf_counter() - start) * 1e3, 1)
    step = decode_step("Llama 3 8B", "H100 SXM", 1, 1024)
    figures["Llama 3 8B H100 batch-1 decode bound (ms/token)"] = round(step.t_step_s * 1e3, 3)
    figures["Llama 3 8B H100 crossover batch, context 0"] = round(crossover_batch("Llama 3 8B", "H100 SXM", 0), 1)
    figures["Llama 3 8B KV cache per token (KiB)"] = get_model("Llama 3 8B").kv_bytes_per_token() / 1024
    return figures


if __name__ == "__main__":
    for name, value in run().items():
        print(f"{name}: {value}")
