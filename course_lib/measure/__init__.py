"""Measure the learner's own machine: its roofline, the cost of a call and its memory ladder.

    t = min over runs of t_run (after a warm-up),   rate = work / t

    timer      time_best, the one timer every measurement goes through
    progress   a tqdm bar for the longer measurements
    roofline   sustained bandwidth and matmul FLOP/s, and kernels placed under those roofs
    latency    t(n) = t0 + n / r_inf: a call's fixed cost against its throughput (lesson 01)
    memory     read bandwidth and pointer-chase latency against working-set size (lesson 03)

``from course_lib.measure import X`` gives the roofline measurements and ``time_best`` (lesson
04); the others are ``course_lib.measure.latency`` and ``course_lib.measure.memory``. Each module
imports only those above it in this list. Drawing: ``course_lib.plots.roofline``, ``.latency``
and ``.memory``.
"""

from __future__ import annotations

from .roofline import (MIN_TIME_S, REPEATS, KernelMeasurement, MachineRoofline, cpu_description, gpu_status,
                       last_level_cache_bytes, measure_bandwidth, measure_gpu_machine, measure_kernels,
                       measure_machine, measure_matmul_flops, stream_array_bytes)
from .timer import time_best

__all__ = [
    "REPEATS",
    "MIN_TIME_S",
    "time_best",
    "last_level_cache_bytes",
    "stream_array_bytes",
    "cpu_description",
    "MachineRoofline",
    "KernelMeasurement",
    "measure_bandwidth",
    "measure_matmul_flops",
    "measure_machine",
    "measure_kernels",
    "gpu_status",
    "measure_gpu_machine",
]
