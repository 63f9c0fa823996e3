"""Walk the whole public API with one bad argument at a time (issue 14).

The walk finds every public callable by itself: every module and subpackage of ``course_lib``
(``pkgutil``), the maintainers' tools among them (``course_lib.exercises.*``, ``course_lib.setup_lab``,
run inside a scratch folder that holds a copy of the course's solutions and exercises), the names
in each ``__all__`` (or every public name defined there), the public methods of the classes a
learner builds and of the result records the library returns (an instance made by a function
that returns one, or ``RESULTS``). For each it builds a valid baseline call from defaults,
the example values in ``BY_NAME`` (by parameter name), the producer of an annotated result type,
``OVERRIDES`` (per callable, only where needed), or, as a last resort, a few generic candidates.
Then it replaces one argument at a time with each value in ``BAD`` and classifies the outcome:

* ``clear``    a ValueError/TypeError/KeyError/LookupError (or a course_lib error) whose message
               names the argument or what is accepted;
* ``legit``    a result, finite and non-negative wherever the baseline's was;
* ``obscure``  any other error (from deep inside NumPy or Python, or not naming the problem);
* ``garbage``  a result with NaN/inf or a negative number where the baseline had none, or a wrong
               type (a string or None for a number, 1 or 'False' for a flag, True for a count)
               accepted silently;
* ``hang``     still running after ``CALL_S`` seconds (workers have a memory limit too).

Calls run in forked worker processes (an alarm per call, RLIMIT_AS, a hard kill as a last
resort). The test fails on any hang or garbage, on more than 1% obscure, and on any public
callable it cannot build a baseline for: add an entry to ``BY_NAME`` or ``OVERRIDES``.

Fast mode (default) samples two bad values per argument, deterministically, so every callable
and every argument is covered; ``COURSE_API_WALK=full`` runs every bad value and prints the
statistics table (``-s`` to see it), e.g.
``COURSE_API_WALK=full python -m pytest -s -q tests/test_api_walk.py``.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import multiprocessing
import numbers
import os
import pkgutil
import resource
import shutil
import signal
import tempfile
import time
import traceback
import zlib
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from course_lib.kernels import cuda   # selects the CUDA simulator without a GPU, as lesson 09 does

MODE = os.environ.get("COURSE_API_WALK", "fast")
CALL_S = 15.0                 # alarm per call: a hang, not a slow call on a machine at load 25 (5 s was met there)
HARD_S = 60.0                 # the parent kills a worker that has not answered after this
MEMORY_BYTES = 2 << 30        # address space a worker may add beyond what it had at fork
PER_ARGUMENT_FAST = 2         # bad values per argument in fast mode
OBSCURE_LIMIT = 0.01
#: Callables slow enough to pass CALL_S on a loaded machine, with the alarm they get instead (a
#: hang is a call that does not finish, not a slow figure). plot_hierarchy places its labels by
#: drawing the figure several times: 2-7 s a call measured on a shared 2-core machine.
SLOW_CALLABLES = {"course_lib.plots.memory.plot_hierarchy": 4 * CALL_S}

# --------------------------------------------------------------------------------------------
# What is walked, and what is not (with the reason).

SKIP_MODULES = {
    "course_lib.tiles": "launches Triton's interpreter (seconds a call) on torch tensors; its bad arguments are "
                        "tested in tests/test_tiles*.py",
    "course_lib.plots.tiles": "draws course_lib.tiles results (tests/test_tiles_plots.py)",
    "course_lib.widgets.tiles": "wires course_lib.tiles (tests/test_tiles_plots.py)",
}
SKIP_CALLABLES = {
    "course_lib.kernels.sim.select_simulator": "process-wide switch made once at import",
    "course_lib.measure.timer.time_best": "times a learner's function; its numbers are tested in test_measure",
    "course_lib.kernels.measure.measure_kernel": "times a kernel on a real GPU",
    "course_lib.measure.latency.measure_call_overhead": "its fit needs an unloaded machine; its argument "
                                                        "checks are tested in test_latency",
    "course_lib.plots.use_course_style": "changes global matplotlib settings",
    "course_lib.checks.check": "takes a learner's answer and prints feedback (tests/test_checks.py)",
    "course_lib.checks.ValueExercise": "an exercise definition written by the course's authors",
    "course_lib.checks.ChoiceExercise": "an exercise definition written by the course's authors",
    "course_lib.checks.FunctionExercise": "an exercise definition written by the course's authors",
    "course_lib.checks.KernelExercise": "an exercise definition written by the course's authors",
    "course_lib.kernels.tasks.KernelTask": "a lab task written by the course's authors",
    "course_lib.kernels.tasks.CostTarget": "a lab cost target written by the course's authors",
    "course_lib.kernels.profile.Problem": "a record inside a KernelProfile",
    "course_lib.kernels.profile.LineStats": "a record inside a KernelProfile",
    "course_lib.kernels.profile.MemoryInstruction": "a record inside a KernelProfile",
    "course_lib.checks.Variant": "one learner's numbers, built by an exercise's Variants from the course's "
                                 "own options (tests/test_checks.py)",
    "course_lib.checks.Variants": "per-learner options of an exercise, written by the course's authors",
    "course_lib.exercises.mastery.gradebook_statuses": "reads an nbgrader gradebook.db file (tests/test_mastery.py "
                                             "builds one)",
    "course_lib.exercises.mastery.class_mastery": "reads an nbgrader gradebook.db file (tests/test_mastery.py)",
    "course_lib.kernels.leaderboard.leaderboard": "reads a classroom's submitted/ folder and checks each "
                                                  "learner's kernels (tests/test_kernels_leaderboard.py)",
    "course_lib.kernels.leaderboard.kernel_from_notebook": "executes a learner's kernel definition "
                                                           "(tests/test_kernels_leaderboard.py)",
    "course_lib.plots.leaderboard.plot_leaderboard": "draws a leaderboard() of a classroom folder "
                                                     "(tests/test_kernels_leaderboard.py)",
    "course_lib.kernels.leaderboard.Entry": "a record inside a Leaderboard",
    "course_lib.kernels.leaderboard.Leaderboard": "a record leaderboard() returns",
    "course_lib.kernels.tasks.Case": "a lab check case written by the course's authors",
    "course_lib.kernels.tasks.Mistake": "a lab misconception written by the course's authors",
    "course_lib.exercises.registry.check": "takes a learner's answer and prints feedback (tests/test_checks.py)",
    "course_lib.exercises.running.execute_notebook": "runs a notebook in a kernel, seconds a call "
                                                     "(tests/test_exercises.py)",
    "course_lib.exercises.running.progress": "runs every notebook of a workspace (tests/test_exercises.py)",
    "course_lib.exercises.cli.main": "dispatches to the commands walked one by one; some run notebooks "
                                     "(tests/test_exercises.py)",
    "course_lib.setup_lab.main": "writes JupyterLab settings into the running environment "
                                 "(tests/test_setup_lab.py runs it in a scratch prefix)",
    "course_lib.exercises.types.ValueExercise": "an exercise definition written by the course's authors",
    "course_lib.exercises.types.ChoiceExercise": "an exercise definition written by the course's authors",
    "course_lib.exercises.types.FunctionExercise": "an exercise definition written by the course's authors",
    "course_lib.exercises.types.KernelExercise": "an exercise definition written by the course's authors",
    "course_lib.exercises.types.TileKernelExercise": "an exercise definition written by the course's authors",
    "course_lib.exercises.decision.DecisionExercise": "an exercise definition written by the course's authors",
    "course_lib.exercises.decision.OptimumExercise": "an exercise definition written by the course's authors",
    "course_lib.exercises.variants.Variants": "per-learner options of an exercise, written by the course's authors",
    "course_lib.exercises.variants.Variant": "one learner's numbers, built by an exercise's Variants",
    "course_lib.exercises.feedback.Misconception": "a misconception written by the course's authors",
}
#: Dataclasses a learner builds (walked, although a function also returns them). Any other
#: dataclass a public function returns is a result record: built by the library, not walked.
INPUT_CLASSES = {
    "course_lib.roofline.Kernel", "course_lib.collectives.Link", "course_lib.parallelism.ParallelPlan",
    "course_lib.parallelism.TransformerShape", "course_lib.kernels.trace.Launch",
}
#: Methods not walked: they take a learner's whole answer or kernel and are tested on their own.
SKIP_METHODS = {"check", "check_answer", "cases"}

# --------------------------------------------------------------------------------------------
# Baseline values.


def _rng():
    return np.random.default_rng(0)


def _mat(rows, cols, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal((rows, cols)).astype(dtype)


#: Example values by parameter name (a callable is called for a fresh value each time).
BY_NAME = {
    "accelerator": "H100 SXM", "precision": "bf16", "fmt": "bf16", "format": "bf16",
    "model": "Llama 3 8B", "name": "k", "kind": "all_reduce", "tier": "nvlink",
    "pattern": "strided", "group": "tp", "design": "a^T b (tiled)", "schedule": "1f1b", "recompute": "none",
    "rng": _rng, "seed": 0,
    "m": 64, "k": 48, "n": 32, "batch": 2, "size": 64, "tile": 16, "tile_m": 32, "tile_n": 32,
    "tile_k": 16, "rows": 8, "cols": 12, "count": 2,
    "flops": 1e9, "bytes_moved": 1e8, "peak_flops": 1e15, "bandwidth": 3e12,
    "bandwidth_bytes_per_s": 3e12, "latency_s": 1e-6, "intensity": 10.0, "nbytes": 1e6,
    "tensor_bytes": 1e6, "n_ranks": 4, "params": 7e9, "n_params": 7e9, "tokens": 1e9,
    "device_hours": 1e5, "seq_len": 1024, "micro_batch": 2, "hidden_size": 1024, "heads": 8,
    "d_model": 1024, "n_heads": 8, "layers": 4, "n_layers": 4, "kv_heads": 2, "head_dim": 64,
    "bytes_per_element": 2, "context_tokens": 512, "prompt_tokens": 256, "dp": 8, "tp": 2,
    "pp": 2, "ep": 2, "stage": 1, "stages": 4, "micro_batches": 8, "comm_bytes": 1e9,
    "tokens_per_s": 1000.0, "price_usd_per_device_hour": 2.0, "n_gpus": 16,
    "n_tiles": 8, "t_copy_s": 1e-6, "t_compute_s": 2e-6, "capacity_bytes": 4096,
    "working_set_bytes": 8192, "n_accesses": 500, "n_warps": [1, 2, 4, 8],
    "compute_cycles": 40, "latency_cycles": 400, "threads_per_block": 256,
    "registers_per_thread": 64, "shared_mem_per_block": 16384, "stride_words": 2,
    "row_words": 32, "struct_bytes": 16, "field_offset_bytes": 4, "field_index": 1,
    "stride_elements": 2, "byte_addresses": lambda: np.arange(0, 128, 4),
    "addresses": lambda: np.arange(0, 512, 4), "working_sets_bytes": [2048, 8192],
    "length": 100, "itemsize": 4, "data": lambda: _mat(4, 10), "values": lambda: _mat(1, 256)[0],
    "x": 0.1, "value": 0.1, "codes": lambda: np.arange(8, dtype=np.uint16),
    "sign": lambda: np.array([0, 1]), "exponent": lambda: np.array([3, 4]),
    "mantissa": lambda: np.array([1, 2]), "increment": 1e-4, "accumulator": "bf16",
    "q": lambda: _mat(16, 8, 1), "v": lambda: _mat(16, 8, 3), "d": 64, "sram_elements": 32768,
    "ns": [256, 1024], "a": lambda: _mat(24, 20, 4), "b": lambda: _mat(20, 12, 5),
    "elements": 1e6, "flops_per_element": 2, "reads": 1, "writes": 1, "intensities": {"hbm": 10.0},
    "tiles": [16, 32, 64], "exercise_id": "04.2", "task": "zip", "level": 1,
    "fraction": 0.5, "t0_s": 5e-6, "rate_inf_elements_per_s": 1e9, "sizes": lambda: 2.0 ** np.arange(4, 16),
    "t_call_s": lambda: 5e-6 + 2.0 ** np.arange(4, 16) / 1e9, "efficiency": 0.5,
    "zero_stage": 1, "offload": False, "offload_optimizer": False, "n_devices": 1,
    "block": (128, 128, 32), "warp": (64, 64), "mma": "m16n8k16",
    "contexts": [512, 1024], "cache_bytes": {"bf16": [1e9, 2e9]}, "capacity": 80e9,
    "strides": [1, 2, 4], "degrees": [1, 2, 4], "rates": {"bf16": 1e15, "fp8": 2e15},
    "prefix": "/nonexistent-course-walk", "description": "", "total": 3,
    "warp_size": 32, "n_threads": 64, "n_banks": 32, "lanes": 32, "ways": 2, "line_bytes": 64,
    "link": None, "jitter": 0.0, "max_warps": 8, "tile_kib": 1, "capacity_kib": 4,
    "params_billion": 7.0, "shared_mem_kib": 16.0, "t_copy_us": 1.0, "t_compute_us": 2.0,
    "buffers": 2, "block_size": 256,
}


@cuda.jit
def _add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


def _add_args():
    a = np.arange(40, dtype=np.float32)
    return [a, a + 1, np.zeros_like(a)]


def _vector_add_trace():
    from course_lib.kernels.trace import trace_launch
    return trace_launch(_add, 2, 32, *_add_args(), names=("a", "b", "out"))


def _add_line():
    from course_lib.kernels.profile import profile_trace
    return int(profile_trace(_vector_add_trace()).instructions[0].line)


def _good_kernel():
    from kernel_solutions import GOOD
    return GOOD["zip"]


def _simt_kernel():
    from course_lib.simt import If, Let
    return [Let("x", lambda v: v["tid"] % 4), If(lambda v: v["x"] < 2, [Let("y", lambda v: 1)])]


def _ex(module, fn_name, *args, **kwargs):
    def make():
        return getattr(importlib.import_module(module), fn_name)(*args, **kwargs)
    return make


def _mlp():
    from course_lib.formats import random_mlp
    return random_mlp(np.random.default_rng(7), (8, 16, 4))


def _statuses():
    return {"04.1": "pass", "04.2": "fail", "05.1": "pass"}


def _points_axes():
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    ax.plot([1.0, 2.0, 3.0], [1.0, 4.0, 9.0], "o-")
    return ax


def _log_axes():
    ax = _points_axes()
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(10, 40)
    return ax


def _batching_runs(policy):
    from course_lib.economics import request_trace, simulate_batching
    runs = []
    for load in (0.3, 0.7):
        arr, out = request_trace(np.random.default_rng(71), 200, 50, load * 8 / 50, sigma=1.0,
                                 max_output_tokens=400)
        runs.append(simulate_batching(arr, out, 8, policy))
    return runs


#: A scratch folder for the maintainers' tools: workers run with it as their working directory
#: (a relative path a bad value makes lands there), and every path argument points into it.
_SANDBOX = {"root": None}
_REPO = Path(__file__).resolve().parents[1]


def _scratch() -> str:
    if _SANDBOX["root"] is None:
        _SANDBOX["root"] = tempfile.mkdtemp(prefix="course-api-walk-")
    return tempfile.mkdtemp(dir=_SANDBOX["root"])


def _course_copy() -> str:
    """A fresh copy of the course's solutions/ and exercises/ (what generate and friends read)."""
    root = Path(_scratch())
    for folder in ("solutions", "exercises"):
        shutil.copytree(_REPO / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__", ".*"))
    return str(root)


def _quiet(*args, **kwargs):
    pass


_TRACE = _vector_add_trace
#: Per-callable baselines, only where names, defaults and annotations are not enough.
OVERRIDES = {
    "course_lib.attention.online_softmax_update": dict(
        m_prev=lambda: np.full(4, -np.inf), l_prev=lambda: np.zeros(4), o_prev=lambda: np.zeros((4, 3)),
        s_block=lambda: _mat(4, 5), v_block=lambda: _mat(5, 3)),
    "course_lib.formats.rounding.round_float": dict(mantissa_bits=7, min_exponent=-126, max_value=3.4e38),
    "course_lib.formats.training.gradient_like": dict(n=64),
    "course_lib.formats.quantization.outlier_matrix": dict(rows=16, cols=32),
    "course_lib.formats.quantization.quantize": dict(x=lambda: _mat(8, 64)),
    "course_lib.formats.quantization.mx_quantize": dict(x=lambda: _mat(8, 64)),
    "course_lib.formats.training.loss_scale_sweep": dict(log2_scales=range(0, 8)),
    "course_lib.formats.bits.spacing_curves": dict(points=20),
    "course_lib.formats.rates.halving_steps": dict(accelerator="H100 SXM"),
    "course_lib.formats.rates.tensor_rates": dict(accelerator="H100 SXM"),
    "course_lib.formats.bits.decode_fields": dict(fmt="bf16"),
    "course_lib.attention.naive_attention": dict(k=lambda: _mat(16, 8, 2)),
    "course_lib.attention.flash_attention": dict(k=lambda: _mat(16, 8, 2), block_size=4),
    "course_lib.attention.memory_sweep": dict(ns=[256, 1024]),
    "course_lib.attention.attention_traffic_sweep": dict(ns=[64, 128], count_ns=(64,), sram_elements=4096,
                                                          rng=_rng),
    "course_lib.attention.paper_block_sizes": dict(sram_elements=32768),
    "course_lib.collectives.collective_steps": dict(kind="all_reduce"),
    "course_lib.collectives.simulated_time_s": dict(
        trace=_ex("course_lib.collectives", "simulate_ring_all_reduce", _mat(4, 10)),
        bandwidth_bytes_per_s=1e11),
    "course_lib.collectives.collective_time_s": dict(bandwidth_bytes_per_s=1e11),
    "course_lib.collectives.Link": dict(name="nvlink", tier="nvlink", bandwidth_bytes_per_s=9e11,
                                        latency_s=1e-6, source="walk"),
    "course_lib.economics.count_params": dict(model=_ex("course_lib.economics", "get_model", "Llama 3 8B")),
    "course_lib.economics.activation_bytes_per_layer": dict(heads=8),
    "course_lib.economics.serving_curve": dict(batches=[1, 8, 64]),
    "course_lib.economics.kv_cache_bytes_per_token": dict(bytes_per_element=2),
    "course_lib.kernels.profile.profile_trace": dict(trace=_TRACE),
    "course_lib.kernels.profile.uninitialized_output_read": dict(trace=_TRACE, names=("out",)),
    "course_lib.kernels.warp.warp_lane_timeline": dict(trace=_TRACE),
    "course_lib.kernels.warp.warp_access": dict(trace=_TRACE, line=_add_line),
    "course_lib.kernels.warp.warp_access_cost": dict(trace=_TRACE, line=_add_line),
    "course_lib.kernels.profile.predict_time": dict(threads_per_block=256),
    "course_lib.kernels.trace.trace_launch": {"kernel": lambda: _add, "grid": 2, "block": 32,
                                              "*args": _add_args},
    "course_lib.kernels.trace.python_function": dict(kernel=lambda: _add),
    "course_lib.kernels.trace.dim3": dict(name="grid", value=(2, 1, 1)),
    "course_lib.kernels.trace.Launch": dict(grid=(2, 1, 1), block=(32, 1, 1)),
    "course_lib.kernels.tasks.get_task": dict(name="zip"),
    "course_lib.formats.layouts.get_format": dict(name="bf16"),
    "course_lib.hardware.get_accelerator": dict(name="H100 SXM"),
    "course_lib.economics.get_model": dict(name="Llama 3 8B"),
    "course_lib.kernels.tasks.run_task": dict(kernel=_good_kernel),
    "course_lib.kernels.tasks.check_kernel": dict(kernel=_good_kernel, cases=1),
    "course_lib.kernels.tasks.predict_task": dict(
        run=lambda: importlib.import_module("course_lib.kernels.tasks").run_task("zip", _good_kernel())),
    "course_lib.latency.simulate_latency_hiding": dict(bursts=50),
    "course_lib.latency.occupancy_curve": dict(threads_per_block=256, shared_mem_per_block=16384),
    "course_lib.measure.roofline.measure_bandwidth": dict(array_bytes=1 << 16, repeats=1, min_time_s=0.0),
    "course_lib.measure.roofline.measure_matmul_flops": dict(n=32, repeats=1, min_time_s=0.0),
    "course_lib.measure.roofline.measure_machine": dict(array_bytes=1 << 16, gemm_size=32, progress=False,
                                               repeats=1, min_time_s=0.0),
    "course_lib.measure.roofline.measure_kernels": dict(
        machine=_ex("course_lib.measure", "MachineRoofline", "cpu", 1e10, 1e10, 1e10, 1e11, 64, 1 << 16),
        n_stream=1 << 12, gemv_n=64, gemm_sizes=(16, 32), repeats=1, progress=False, min_time_s=0.0),
    "course_lib.measure.roofline.measure_gpu_machine": dict(array_bytes=1 << 20, gemm_size=256, repeats=1,
                                                   progress=False),
    "course_lib.measure.roofline.stream_array_bytes": dict(floor=1 << 16),
    "course_lib.measure.latency.measure_call_overhead": dict(max_log2_size=16, budget_s=0.1, progress=False),
    "course_lib.measure.memory.measure_bandwidth_ladder": dict(
        sizes_bytes=(8192, 16384), bytes_per_call=1 << 16, repeats=1, progress=False),
    "course_lib.measure.memory.measure_latency_ladder": dict(sizes_bytes=(16384, 65536), steps=200,
                                                             rng=_rng, progress=False),
    "course_lib.measure.memory.random_cycle": dict(n=64),
    "course_lib.memory.simulate_cache": dict(capacity_bytes=1024),
    "course_lib.memory.make_trace": dict(working_set_bytes=8192, n_accesses=500),
    "course_lib.memory.hit_rate_sweep": dict(capacity_bytes=4096, n_accesses=500),
    "course_lib.parallelism.transformer_for_params": dict(n_params=7e9),
    "course_lib.parallelism.zero_model_state_bytes": dict(stage=2),
    "course_lib.parallelism.zero_comm_bytes_per_gpu": dict(stage=2),
    "course_lib.parallelism.tensor_parallel_bytes_per_gpu": dict(tokens=4096),
    "course_lib.parallelism.pipeline_parallel_bytes_per_gpu": dict(tokens=4096),
    "course_lib.parallelism.expert_parallel_bytes_per_gpu": dict(tokens=4096),
    "course_lib.parallelism.comm_hidden": dict(flops=1e12, comm_bytes=1e9, peak_flops=1e15,
                                              bandwidth_bytes_per_s=1e11),
    "course_lib.parallelism.ParallelPlan": dict(n_gpus=16, tp=2, pp=2),
    "course_lib.parallelism.TransformerShape": dict(n_layers=4, d_model=1024, n_heads=8, seq_len=1024),
    "course_lib.parallelism.estimate_training_step": dict(
        model=_ex("course_lib.parallelism", "transformer_for_params", 7e9),
        plan=_ex("course_lib.parallelism", "ParallelPlan", 16, tp=2, pp=2)),
    "course_lib.roofline.Kernel": dict(name="k", flops=1e9, bytes_moved=1e8),
    "course_lib.roofline.place_kernel": dict(kernel=_ex("course_lib.roofline", "Kernel", "k", 1e9, 1e8)),
    "course_lib.roofline.matmul_kernel": dict(name="mm"),
    "course_lib.roofline.elementwise_kernel": dict(name="ew"),
    "course_lib.simt.run_simt": dict(kernel=_simt_kernel, n_threads=64, max_trace=64),
    "course_lib.simt.Let": dict(name="x", fn=lambda: (lambda t, v: t)),
    "course_lib.simt.If": dict(cond=lambda: (lambda t, v: t < 3)),
    "course_lib.simt.While": dict(cond=lambda: (lambda t, v: False)),
    "course_lib.simt.soa_addresses": dict(n_elements=1024),
    "course_lib.systolic.systolic_matmul": dict(a=lambda: _mat(12, 10), b=lambda: _mat(10, 9), rows=4, cols=4),
    "course_lib.systolic.systolic_load_counts": dict(rows=8, cols=8),
    "course_lib.systolic.reuse_comparison": dict(sizes=(8, 16)),
    "course_lib.tiling.tiled_matmul": dict(tile=8, tile_k=8),
    "course_lib.tiling.matmul_indexing_bug": dict(tile=8, tile_k=8),
    "course_lib.tiling.matmul_precision_bug": dict(tile=8, tile_k=8),
    "course_lib.tiling.simulate_tiled_matmul": dict(tile_m=16, tile_k=16),
    "course_lib.tiling.traffic_sweep": dict(simulate=(16,), tile_k=16),
    "course_lib.tiling.weak_matmul_cases": dict(size=16),
    "course_lib.tiling.strong_matmul_cases": dict(count=2, max_dim=24, max_k=40),
    "course_lib.tiling.check_matmul_kernel": dict(
        kernel=lambda: importlib.import_module("course_lib.tiling").tiled_matmul,
        cases=_ex("course_lib.tiling", "weak_matmul_cases", 16)),
    "course_lib.tiling.smem_bytes_per_block": dict(tile_m=64, tile_n=64, tile_k=32),
    "course_lib.tiling.tile_instruction_counts": dict(tile_m=64, tile_n=64, tile_k=32),
    "course_lib.tiling.fusion_traffic": dict(rows=128, cols=256),
    "course_lib.roofline.binding_ceiling": dict(intensities={"shared memory": 50.0}),
    "course_lib.widgets.latency.explore_latency_hiding": dict(compute_cycles=40, latency_cycles=400,
                                                            schedulers=1, jitter=0.0, max_warps=8),
    "course_lib.widgets.memory.explore_cache": dict(capacity_kib=4, line_bytes=64, ways=2,
                                                   stride_elements=2, tile_kib=1),
    "course_lib.widgets.memory.explore_pipeline": dict(n_tiles=8, t_copy_us=1.0, t_compute_us=2.0, buffers=2),
    "course_lib.widgets.parallelism.explore_plan": dict(n_gpus=16, tp=2, pp=2, zero_stage=1,
                                                       recompute="selective", offload=False),
    "course_lib.widgets.simt.explore_simt": dict(pattern="odd lanes", warp_size=32, n_threads=256),
    "course_lib.widgets.simt.branch_kernel": dict(pattern="odd lanes"),
    "course_lib.widgets.tiling.explore_tiling": dict(tile=64, seq_len=1024, block_size=128),
    "course_lib.widgets.kernels.explore_kernel": dict(design="a^T b (tiled)", tile=16, size=256),
    "course_lib.kernels.design.design_bytes": dict(design="a^T b (tiled)", sizes={"m": 24, "k": 21, "n": 32}, tile=16),
    "course_lib.widgets.economics.explore_serving": dict(batch=4, context_tokens=512),
    "course_lib.widgets.roofline.explore_matmul": dict(m=256, k=256, n=256, batch=1),
    "course_lib.widgets.latency.explore_occupancy": dict(shared_mem_kib=16.0),
    "course_lib.widgets.formats.explore_number": dict(value="0.1"),
    "course_lib.attention.fp8_scores_error": dict(k=lambda: _mat(16, 8, 2), rng=_rng),
    "course_lib.collectives.get_tpu_pod": dict(accelerator="TPU v5p"),
    "course_lib.latency.get_cpu": dict(name="EPYC 9654"),
    "course_lib.sharing.get_mig_profile": dict(profile="3g.40gb"),
    "course_lib.sharing.mig_accelerator": dict(profile="3g.40gb"),
    "course_lib.sharing.fits_on_gpu": dict(profiles=["3g.40gb", "2g.20gb", "1g.10gb"]),
    "course_lib.formats.mlp.mlp_forward": dict(weights=_mlp, x=lambda: _mat(5, 8, 6, np.float64)),
    "course_lib.formats.mlp.mlp_quantization_errors": dict(weights=_mlp, x=lambda: _mat(5, 8, 6, np.float64),
                                                       fmt="fp8_e4m3"),
    "course_lib.formats.training.simulate_fp8_scaling": dict(steps=_ex("course_lib.formats", "drifting_tensor", _rng(),
                                                              20, 64)),
    "course_lib.roofline.read_profile": dict(name="gemv", duration_s=48e-6, bytes_moved=1.4e8, flops=6.7e7),
    "course_lib.exercises.mastery.concept_mastery": dict(statuses=_statuses),
    "course_lib.exercises.authoring.generate": dict(root=_course_copy, out=lambda: _quiet),
    "course_lib.exercises.authoring.normalize": dict(root=_course_copy, out=lambda: _quiet),
    "course_lib.exercises.workspace.make_workspace": dict(dest=lambda: str(Path(_scratch()) / "my_work"),
                                                          root=_course_copy, out=lambda: _quiet),
    "course_lib.exercises.nbgrader.build_nbgrader": dict(dest=_scratch, root=_course_copy,
                                                         lessons=["04_roofline"], out=lambda: _quiet),
    "course_lib.exercises.authoring.find_regions": dict(
        text=lambda: (_REPO / "solutions" / "04_roofline.py").read_text()),
    "course_lib.exercises.authoring.make_exercise_text": dict(
        text=lambda: (_REPO / "solutions" / "04_roofline.py").read_text()),
    "course_lib.exercises.authoring.lab_saved_text": dict(
        text=lambda: (_REPO / "solutions" / "04_roofline.py").read_text()),
    "course_lib.exercises.workspace.content_hash": dict(data=lambda: (_REPO / "solutions" / "04_roofline.py").read_bytes()),
    "course_lib.exercises.mastery.logged_misconceptions": dict(path=lambda: str(Path(_scratch()) / "log.jsonl")),
    "course_lib.setup_lab.overrides_path": dict(prefix=_scratch),
    "course_lib.setup_lab.write_overrides": dict(prefix=_scratch),
    "course_lib.setup_lab.page_config_path": dict(prefix=_scratch),
    "course_lib.setup_lab.write_page_config": dict(prefix=_scratch),
    "course_lib.setup_lab.server_config_path": dict(prefix=_scratch),
    "course_lib.setup_lab.write_server_config": dict(prefix=_scratch),
    "course_lib.exercises.registry.hint": dict(exercise_id="04.2", level=1),
    "course_lib.economics.BatchingRun.latency_percentile_steps": dict(q=50.0),
    "course_lib.exercises.mastery.concept_table": dict(statuses_or_rows=_statuses),
    # a folder that is not a workspace: main reports it and returns 2 (a real one runs every notebook)
    "course_lib.exercises.mastery.main": dict(argv=lambda: ["/nonexistent-course-walk"]),
    "course_lib.exercises.mastery.class_table": dict(mastery=lambda: importlib.import_module("course_lib.exercises.mastery").ClassMastery(
        concepts=tuple(_ex("course_lib.exercises.mastery", "concept_mastery", _statuses())()), students={"s1": _statuses()},
        misconceptions=())),
    "course_lib.tiling.graph_traffic": dict(
        ops=lambda: [("f", ("a", "b"), ("c",), 1.0), ("g", ("c", "a"), ("d",), 2.0),
                     ("h", ("d", "c"), ("e",), 4.0)],
        sizes=lambda: {"a": 3.0, "b": 5.0, "c": 7.0, "d": 11.0, "e": 13.0},
        kernels=lambda: [("f", "g"), ("h",)], outputs=("e",)),
    "course_lib.exercises.lessons.ex_03.pipeline_change": dict(change="third buffer"),
    "course_lib.kernels.slow.slow_launch": dict(exercise_id="09.14"),
    "course_lib.exercises.misconceptions.shared": dict(key="bits-for-bytes", lesson="04",
                                                             section="Arithmetic intensity"),
    "course_lib.plots.place_labels": dict(ax=_points_axes, labels=[(1.0, 1.0, "one"), (2.0, 4.0, "two")]),
    "course_lib.plots.readable_log_ticks": dict(ax=_log_axes),
    "course_lib.plots.text_problems": dict(fig=lambda: _points_axes().figure),
    "course_lib.exercises.mastery_plot.plot_mastery": dict(
        rows=lambda: _ex("course_lib.exercises.mastery", "concept_mastery", _statuses())()),
    "course_lib.plots.sharing.plot_slice_rooflines": dict(
        slices=lambda: [_ex("course_lib.sharing", "mig_accelerator", p)() for p in ("1g.10gb", "3g.40gb")]),
    "course_lib.plots.economics.plot_kv_waste": dict(allocations=lambda: [_ex(
        "course_lib.economics", "kv_allocation", np.array([100, 700, 1500, 30]), 2048, b)() for b in (1, 16, 64)]),
    "course_lib.plots.economics.plot_batching": dict(
        loads=[0.3, 0.7], static_runs=lambda: _batching_runs("static"),
        continuous_runs=lambda: _batching_runs("continuous")),
    # plots whose arguments carry no annotation
    "course_lib.plots.attention.plot_online_softmax": dict(trace=lambda: {
        "keys_seen": np.array([4, 8, 12]), "running_max": np.array([0.5, 1.2, 1.2]),
        "estimate": np.array([0.1, 0.3, 0.25]), "exact": 0.25}),
    "course_lib.plots.latency.plot_latency_hiding": dict(
        sweep=_ex("course_lib.latency", "simulate_latency_hiding", [1, 2, 4], bursts=50)),
    "course_lib.plots.latency.plot_occupancy": dict(
        result=_ex("course_lib.latency", "occupancy", 256, 64, 16384)),
    "course_lib.plots.latency.plot_call_overhead": dict(
        measurement=_ex("course_lib.measure.latency", "CallOverhead", np.array([64, 256, 1024]),
                        5e-6 + np.array([64, 256, 1024]) / 1e9, 5e-6, 1e9)),
    "course_lib.plots.memory.plot_bandwidth_ladder": dict(
        ladder=_ex("course_lib.measure.memory", "BandwidthLadder", np.array([8192.0, 65536.0]),
                   np.array([5e10, 3e10]))),
    "course_lib.plots.memory.plot_latency_ladder": dict(
        ladder=_ex("course_lib.measure.memory", "LatencyLadder", np.array([8192.0, 65536.0]),
                   np.array([1.0, 3.0]))),
    "course_lib.plots.memory.plot_hierarchy": dict(levels=_ex("course_lib.memory", "memory_hierarchy")),
    "course_lib.plots.memory.plot_hit_rates": dict(curves=lambda: [_ex(
        "course_lib.memory", "hit_rate_sweep", "strided", [2048, 8192], 4096, n_accesses=500)()]),
    "course_lib.plots.memory.plot_bank_conflicts": dict(strides=[1, 2, 4], degrees=[1, 2, 4]),
    "course_lib.plots.kernels.plot_warp_lanes": dict(
        timeline=lambda: _ex("course_lib.kernels.warp", "warp_lane_timeline", _TRACE())()),
    "course_lib.plots.kernels.plot_warp_access": dict(
        cost=lambda: _ex("course_lib.kernels.warp", "warp_access_cost", _TRACE(), _add_line())()),
    "course_lib.plots.kernels.plot_design_times": dict(
        points=_ex("course_lib.kernels.design", "design_sweep", 16, "H100 SXM", 256)),
    "course_lib.plots.roofline.plot_roofline": dict(points=lambda: [_ex(
        "course_lib.roofline", "place_kernel", importlib.import_module("course_lib.roofline").Kernel(
            "k", 1e9, 1e8))()]),
    "course_lib.plots.roofline.plot_hierarchical_roofline": dict(
        ceilings=_ex("course_lib.roofline", "hierarchical_ceilings"), peak_flops=9.9e14),
    "course_lib.plots.roofline.plot_measured_roofline": dict(
        machine=_ex("course_lib.measure", "MachineRoofline", "cpu", 1e10, 1e10, 1e10, 1e11, 64, 1 << 16),
        kernels=lambda: [_ex("course_lib.measure", "KernelMeasurement", "gemm", 1e9, 1e7, 0.1, 1e10)()]),
    "course_lib.plots.simt.plot_lane_timeline": dict(
        result=lambda: _ex("course_lib.simt", "run_simt", _simt_kernel(), 64)()),
    "course_lib.plots.simt.plot_efficiency_bars": dict(
        cases=lambda: {"walk": _ex("course_lib.simt", "run_simt", _simt_kernel(), 64)()}),
    "course_lib.plots.simt.plot_coalescing": dict(
        result=_ex("course_lib.simt", "coalescing", np.arange(0, 128, 4))),
    "course_lib.plots.systolic.plot_reuse": dict(
        comparison=_ex("course_lib.systolic", "reuse_comparison", 64, 64, 64, (8, 16))),
    "course_lib.plots.tiling.plot_reuse_hierarchy": dict(levels=_ex("course_lib.tiling", "tiling_hierarchy")),
    "course_lib.plots.tiling.plot_load_counts": dict(
        walk=_ex("course_lib.tiling", "simulate_tiled_matmul", 64, 48, 32, 16, tile_k=16)),
    "course_lib.plots.tiling.plot_traffic_overview": dict(
        result=lambda: (_ex("course_lib.tiling", "traffic_sweep", 64, 48, 32, [16, 32], simulate=(16,),
                            tile_k=16)(),
                        _ex("course_lib.attention", "attention_traffic_sweep", [64, 128])())),
    "course_lib.plots.formats.plot_gradient_histogram": dict(
        values=lambda: _ex("course_lib.formats", "gradient_like", _rng(), 256)()),
    "course_lib.plots.formats.plot_tensor_rates": dict(rates=lambda: {"H100 SXM": _ex(
        "course_lib.formats", "tensor_rates", "H100 SXM")()}),
    "course_lib.plots.economics.plot_training_memory": dict(
        breakdowns=lambda: {"ZeRO-0": _ex("course_lib.economics", "training_memory", 7e9)()}),
    "course_lib.plots.economics.plot_kv_cache": dict(contexts=[512, 1024],
                                                    cache_bytes={"bf16": [1e9, 2e9]}),
    "course_lib.plots.collectives.plot_ring_traffic": dict(
        trace=_ex("course_lib.collectives", "simulate_ring_all_reduce", _mat(4, 10))),
    "course_lib.plots.collectives.plot_link_times": dict(
        links=_ex("course_lib.collectives", "interconnect_hierarchy"), nbytes=1e6),
    "course_lib.plots.parallelism.plot_step_estimate": dict(est=_ex(
        "course_lib.parallelism", "estimate_training_step",
        _ex("course_lib.parallelism", "transformer_for_params", 7e9)(),
        _ex("course_lib.parallelism", "ParallelPlan", 16, tp=2, pp=2)())),
}

#: Functions whose outputs follow their inputs' sign and size: a number format rounds -5 to -5
#: and 1e30 to inf (or its saturation value), and NaN stays NaN. That is the lesson, not garbage.
FOLLOWS_INPUT = {
    "course_lib.formats.rounding.round_float", "course_lib.formats.rounding.round_to_format", "course_lib.formats.bits.to_bits",
    "course_lib.formats.bits.encode", "course_lib.formats.bits.spacing", "course_lib.formats.bits.decode_bits",
    "course_lib.formats.bits.decode_fields", "course_lib.formats.training.accumulate",
    "course_lib.formats.training.stagnation_sum", "course_lib.attention.naive_attention",
    "course_lib.attention.flash_attention", "course_lib.attention.online_softmax_update",
    "course_lib.systolic.systolic_matmul", "course_lib.tiling.tiled_matmul",
    "course_lib.tiling.matmul_indexing_bug", "course_lib.tiling.matmul_precision_bug",
    "course_lib.formats.quantization.quantize", "course_lib.formats.quantization.mx_quantize", "course_lib.formats.training.cast_stats",
    "course_lib.formats.bits.split_fields", "course_lib.widgets.formats.explore_number",
    "course_lib.formats.training.loss_scale_sweep", "course_lib.formats.calibration.fake_quantize",
}
#: Result records whose methods are walked, where no public function's baseline makes one.
RESULTS = {
    "course_lib.economics.BatchingRun": lambda: _batching_runs("static")[0],
    "course_lib.measure.latency.CallOverhead": _ex(
        "course_lib.measure.latency", "CallOverhead", np.array([64, 256, 1024]),
        5e-6 + np.array([64, 256, 1024]) / 1e9, 5e-6, 1e9),
}
#: Arguments accepted as any value (free text, an opaque object, a callable the learner supplies).
#: Arguments whose documented values include None although the walk's baseline is not None.
ACCEPTS_NONE = {("course_lib.simt.run_simt", "trace_warp"), ("course_lib.kernels.profile.predict_time",
                                                            "threads_per_block")}
FREE_ARGUMENTS = {"title", "label", "description", "source", "operation", "capacity_label",
                  "ax", "axes", "out"}

# --------------------------------------------------------------------------------------------
# Bad values. Each: (label, value or factory, applies(baseline) -> bool).


def _is_number(v):
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def _is_sequence(v):
    return isinstance(v, (list, tuple, range, np.ndarray)) and not isinstance(v, str)


BAD = [
    ("negative", -5, None),
    ("zero", 0, None),
    ("nan", math.nan, None),
    ("inf", math.inf, None),
    ("-inf", -math.inf, None),
    ("string", "12", lambda base: not isinstance(base, (bool, np.bool_))),
    ("string 'False'", "False", lambda base: isinstance(base, (bool, np.bool_))),
    ("None", None, None),
    ("empty list", [], None),
    ("empty array", lambda: np.array([]), None),
    ("1e30", 1e30, None),
    ("10**30", 10 ** 30, lambda base: isinstance(base, numbers.Integral) and not isinstance(base, bool)),
    ("unknown name", "no-such-name", lambda base: isinstance(base, str)),
    ("bool", True, lambda base: not isinstance(base, (bool, np.bool_))),
    ("1 for a flag", 1, lambda base: isinstance(base, (bool, np.bool_))),
    ("scalar for a sequence", "first", lambda base: _is_sequence(base) and len(base) > 0),
    ("array of 1e30", "huge array", lambda base: isinstance(base, np.ndarray) and base.size > 0
     and base.dtype.kind in "fiu"),
    ("array with a NaN", "nan array", lambda base: (isinstance(base, np.ndarray) and base.size > 0
                                                   and base.dtype.kind == "f")
     or (isinstance(base, (list, tuple)) and len(base) > 0 and all(_is_number(v) for v in base))),
]


def _bad_value(index, base):
    label, value, _ = BAD[index]
    if value == "first" and label.startswith("scalar"):
        first = base[0] if not isinstance(base, np.ndarray) else base.ravel()[0]
        return first.item() if isinstance(first, np.generic) else first
    if value == "huge array":
        return np.full(base.shape, 1e30)
    if value == "nan array":                  # one NaN among the baseline's numbers
        out = np.array(base, dtype=float, copy=True)
        out.flat[out.size // 2] = np.nan
        return out if isinstance(base, np.ndarray) else type(base)(out.tolist())
    return value() if callable(value) else value


def _applies(index, base):
    test = BAD[index][2]
    return test is None or bool(test(base))


# --------------------------------------------------------------------------------------------
# Discovery.


@dataclasses.dataclass
class Target:
    qualname: str
    obj: object
    kind: str                     # function, class, method
    owner: str | None = None      # for a method: the class's qualname
    reason: str | None = None     # why it is not walked


def _public_modules():
    import course_lib
    names = ["course_lib"]
    for info in pkgutil.walk_packages(course_lib.__path__, "course_lib."):
        parts = info.name.split(".")
        if any(p.startswith("_") for p in parts[1:]):
            continue
        names.append(info.name)
    return sorted(names)


def _return_names(fn):
    """The names in a function's return annotation ('list[Foo] | None' -> {'list', 'Foo', 'None'})."""
    ret = inspect.signature(fn).return_annotation
    if isinstance(ret, str):
        return {w.strip("'\" []|") for w in ret.replace("[", " ").replace(",", " ").split()}
    if isinstance(ret, type):
        return {ret.__name__}
    return set()


def _returned_class_names(modules):
    """Names in the return annotations of public functions: those classes are results."""
    names = set()
    for mod in modules:
        for obj in vars(mod).values():
            if inspect.isfunction(obj) and obj.__module__ == mod.__name__:
                names.update(_return_names(obj))
    return names


def discover():
    targets, modules = [], []
    for name in _public_modules():
        if name in SKIP_MODULES or any(name.startswith(s + ".") for s in SKIP_MODULES):
            targets.append(Target(name, None, "module", reason=SKIP_MODULES.get(name, "skipped module")))
            continue
        modules.append(importlib.import_module(name))
    returned = _returned_class_names(modules)
    for mod in modules:
        names = getattr(mod, "__all__", None)
        if names is None:
            names = [n for n in vars(mod) if not n.startswith("_")]
        for n in names:
            obj = getattr(mod, n, None)
            if not callable(obj) or getattr(obj, "__module__", None) != mod.__name__:
                continue
            qual = f"{mod.__name__}.{n}"
            if qual in SKIP_CALLABLES:
                targets.append(Target(qual, obj, "function", reason=SKIP_CALLABLES[qual]))
                continue
            if inspect.isclass(obj):
                if issubclass(obj, BaseException):
                    continue
                result = dataclasses.is_dataclass(obj) and n in returned and qual not in INPUT_CLASSES
                if result:
                    # not built with bad values (the library builds it), but its methods are walked
                    targets.append(Target(qual, obj, "class", reason="result record built by the library"))
                else:
                    targets.append(Target(qual, obj, "class"))
                for mname, member in vars(obj).items():
                    if (mname.startswith("_") or mname in SKIP_METHODS or not inspect.isfunction(member)):
                        continue
                    targets.append(Target(f"{qual}.{mname}", member, "method", owner=qual))
            elif inspect.isfunction(obj):
                targets.append(Target(qual, obj, "function"))
    return targets


# --------------------------------------------------------------------------------------------
# Baselines.

GENERIC = [64, 1, 0.5, "H100 SXM", "bf16", lambda: np.arange(1.0, 9.0), [64, 128], True]


def _fresh(v):
    """A plain function in the tables is a factory: called for a fresh value each time."""
    return v() if inspect.isfunction(v) else v


def _parameters(fn, skip_first=False):
    params = list(inspect.signature(fn).parameters.values())
    if skip_first:
        params = params[1:]
    return [p for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _annotation_factory(fn, param):
    """A producer for an annotated course_lib result type: a public function returning it."""
    ann = param.annotation
    if ann is inspect.Parameter.empty:
        return None
    name = ann if isinstance(ann, str) else getattr(ann, "__name__", "")
    name = name.replace("list[", "").replace("]", "").strip()
    many = isinstance(ann, str) and ann.startswith("list[")
    mod = importlib.import_module(fn.__module__)
    cls = getattr(mod, name, None)
    if not inspect.isclass(cls) or not cls.__module__.startswith("course_lib"):
        return None
    home = importlib.import_module(cls.__module__)
    for obj in vars(home).values():
        if inspect.isfunction(obj) and obj.__module__ == home.__name__ and not obj.__name__.startswith("_"):
            ret = inspect.signature(obj).return_annotation
            ret = ret if isinstance(ret, str) else getattr(ret, "__name__", "")
            if ret in (name, f"list[{name}]"):
                producer, gives_list = obj, ret != name
                break
    else:
        return None

    def make():
        args = baseline_kwargs(f"{home.__name__}.{producer.__name__}", producer)
        args.pop("*args", None)
        out = producer(**args)
        if many and not gives_list:
            return [out]
        return out[0] if gives_list and not many else out
    return make


class _NoExample(LookupError):
    def __init__(self, unknown):
        super().__init__(f"no example value for {unknown}: add them to BY_NAME or OVERRIDES")
        self.unknown = unknown


def baseline_kwargs(qual, fn, skip_first=False, generic=None):
    """Keyword arguments for a valid call (factories resolved), or raise LookupError.

    ``generic`` maps parameters no table knows to the index of a ``GENERIC`` candidate."""
    generic = generic or {}
    override = OVERRIDES.get(qual, {})
    if override is None:
        raise LookupError("no baseline (listed in OVERRIDES as not walkable)")
    kwargs, unknown = {}, []
    for p in _parameters(fn, skip_first):
        if p.name in override:
            kwargs[p.name] = _fresh(override[p.name])
        elif p.default is not inspect.Parameter.empty:
            kwargs[p.name] = p.default
        elif (factory := _annotation_factory(fn, p)) is not None:
            kwargs[p.name] = factory()
        elif p.name in BY_NAME:
            kwargs[p.name] = _fresh(BY_NAME[p.name])
        elif p.name in generic:
            kwargs[p.name] = _fresh(GENERIC[generic[p.name]])
        else:
            unknown.append(p.name)
    if unknown:
        raise _NoExample(unknown)
    if "*args" in override:
        kwargs["*args"] = _fresh(override["*args"])
    return kwargs


# --------------------------------------------------------------------------------------------
# Outcome classification.

class _Hang(BaseException):
    pass


def _on_alarm(signum, frame):
    raise _Hang()


def _leaves(obj, path="", depth=0, out=None):
    """{path: (all finite, all >= 0)} for every number reachable from a result."""
    out = {} if out is None else out
    if depth > 4 or len(out) > 500:
        return out
    if isinstance(obj, (bool, np.bool_, str, bytes)) or obj is None:
        return out
    if _is_number(obj):
        v = float(obj)
        out[path] = (math.isfinite(v), not v < 0)
    elif isinstance(obj, np.ndarray):
        if obj.dtype.kind in "fiu" and obj.size:
            with np.errstate(invalid="ignore"):
                out[path] = (bool(np.isfinite(obj).all()), bool((obj >= 0).all()))
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            _leaves(getattr(obj, f.name, None), f"{path}.{f.name}", depth + 1, out)
        for k, member in inspect.getmembers(type(obj)):
            if isinstance(member, property) and not k.startswith("_"):
                _leaves(getattr(obj, k), f"{path}.{k}", depth + 1, out)   # an error here is obscure
    elif isinstance(obj, Mapping):
        for k, v in list(obj.items())[:50]:
            _leaves(v, f"{path}[{k!r}]", depth + 1, out)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj[:50]):
            _leaves(v, f"{path}[{i}]", depth + 1, out)
    return out


CLEAR_TYPES = (ValueError, TypeError, KeyError, LookupError)
#: A path that is not there or not the right kind is an OSError; clear when it names the argument.
PATH_ERRORS = (FileNotFoundError, NotADirectoryError, IsADirectoryError, FileExistsError)


def _is_clear(exc, arg):
    msg = str(exc).lower()
    if isinstance(exc, PATH_ERRORS):
        return arg.lower() in msg
    if not isinstance(exc, CLEAR_TYPES) and not type(exc).__module__.startswith("course_lib"):
        return False
    words = {arg.lower(), arg.lower().replace("_", " ")}
    if any(w in msg for w in words):
        return True
    frames = traceback.extract_tb(exc.__traceback__)
    if frames and frames[-1].filename.endswith(os.path.join("course_lib", "_validate.py")):
        return True
    return any(w in msg for w in ("must be", "must have", "must contain", "one of", "known:", "accepted"))


def _wrong_type_accepted(base, bad):
    if isinstance(base, (bool, np.bool_)):
        return not isinstance(bad, (bool, np.bool_))
    if _is_number(base):
        return isinstance(bad, (str, bool, np.bool_)) or bad is None
    return False


def _non_finite(value):
    """A NaN or infinite number, or a sequence or array holding one."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return False
    return bool(arr.size) and not bool(np.all(np.isfinite(arr)))


def _close_figures():
    import sys
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


def _invoke(target_fn, kwargs, seconds=CALL_S):
    kwargs = dict(kwargs)
    args = []
    if "*args" in kwargs:      # a function with *args: what comes before it goes by position
        extra = kwargs.pop("*args")
        for p in inspect.signature(target_fn).parameters.values():
            if p.kind == p.VAR_POSITIONAL:
                break
            args.append(kwargs.pop(p.name))
        args.extend(extra)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        result = target_fn(*args, **kwargs)
        return result, _leaves(result)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _close_figures()


class Walker:
    """Runs in a worker: a callable's baseline once, then its bad calls."""

    def __init__(self, targets):
        self.targets = {t.qualname: t for t in targets}
        self.producers = {}            # result class name -> the public functions returning one
        for t in targets:
            if t.kind == "function" and t.obj is not None:
                for name in _return_names(t.obj):
                    self.producers.setdefault(name, []).append(t)
        self.baselines = {}
        self.generic = {}
        self.defaults = {}
        for t in targets:
            try:
                self.defaults[t.qualname] = {p.name: p.default for p in _parameters(t.obj)}
            except (TypeError, ValueError):
                self.defaults[t.qualname] = {}

    def _instance(self, owner):
        """An instance of ``owner``: built from its baseline (a class a learner builds), or, for a
        result record, made by ``RESULTS`` or by a public function that returns one."""
        if owner.qualname in RESULTS:
            return _fresh(RESULTS[owner.qualname])
        if owner.reason is None:
            return owner.obj(**baseline_kwargs(owner.qualname, owner.obj))
        for producer in self.producers.get(owner.obj.__name__, ()):
            if producer.reason is None and self.baseline(producer.qualname)[0] == "ok":
                kwargs = baseline_kwargs(producer.qualname, producer.obj)
                result, _ = _invoke(producer.obj, kwargs, seconds=3 * CALL_S)
                return result[0] if isinstance(result, list) else result
        raise LookupError(f"no instance of {owner.qualname}: add a factory to RESULTS")

    def _call_builder(self, t):
        """(function taking kwargs, baseline kwargs)."""
        if t.kind == "method":
            instance = self._instance(self.targets[t.owner])
            method = getattr(instance, t.obj.__name__)
            return method, baseline_kwargs(t.qualname, t.obj, skip_first=True,
                                           generic=self.generic.get(t.qualname))
        return t.obj, baseline_kwargs(t.qualname, t.obj, generic=self.generic.get(t.qualname))

    def _search(self, t, unknown):
        """Try the GENERIC candidates for parameters no table knows (an error naming one moves
        that one on); returns None when a call succeeds, else why not."""
        choice = {p: 0 for p in unknown}
        for _ in range(len(GENERIC) * len(choice) + 1):
            self.generic[t.qualname] = dict(choice)
            try:
                fn, kwargs = self._call_builder(t)
                _invoke(fn, kwargs)
                return None
            except _NoExample as exc:
                return str(exc)
            except _Hang:
                break
            except Exception as exc:   # noqa: BLE001
                named = [p for p in choice if p in str(exc) and choice[p] < len(GENERIC) - 1]
                movable = named or [p for p in choice if choice[p] < len(GENERIC) - 1]
                if not movable:
                    break
                choice[movable[0]] += 1
        self.generic.pop(t.qualname, None)
        return f"no example value for {unknown} (none of GENERIC worked): add them to BY_NAME or OVERRIDES"

    def baseline(self, qual):
        if qual not in self.baselines:
            t = self.targets[qual]
            try:
                try:
                    fn, kwargs = self._call_builder(t)
                except _NoExample as exc:
                    why = self._search(t, exc.unknown)
                    if why:
                        raise LookupError(why) from None
                    fn, kwargs = self._call_builder(t)
                _, leaves = _invoke(fn, kwargs, seconds=max(3 * CALL_S, SLOW_CALLABLES.get(qual, 0)))
                self.baselines[qual] = ("ok", leaves, {k: v for k, v in kwargs.items()})
            except _Hang:
                self.baselines[qual] = ("error", f"baseline ran over {CALL_S} s", None)
            except Exception as exc:   # noqa: BLE001
                self.baselines[qual] = ("error", f"baseline failed: {type(exc).__name__}: {exc}", None)
        return self.baselines[qual]

    def run(self, qual, arg, bad_index):
        status, leaves0, base_kwargs = self.baseline(qual)
        if status != "ok":
            return ("no baseline", leaves0)
        if arg is None:
            return ("legit", "")
        t = self.targets[qual]
        base = base_kwargs[arg]
        if not _applies(bad_index, base):
            return ("n/a", "")
        bad = _bad_value(bad_index, base)
        try:
            default = self.defaults[qual].get(arg, inspect.Parameter.empty)
            if bad is None and (default is None or (qual, arg) in ACCEPTS_NONE):
                return ("n/a", "None is the default")
            if type(bad) is type(base) and bool(np.all(np.asarray(bad, dtype=object) == np.asarray(base, dtype=object))):
                return ("n/a", "same as baseline")
        except Exception:   # noqa: BLE001
            pass
        try:
            fn, kwargs = self._call_builder(t)
        except Exception as exc:   # noqa: BLE001
            return ("no baseline", f"{type(exc).__name__}: {exc}")
        kwargs[arg] = bad
        try:
            _, leaves = _invoke(fn, kwargs, seconds=SLOW_CALLABLES.get(qual, CALL_S))
        except _Hang:
            return ("hang", f"over {CALL_S} s")
        except MemoryError:
            return ("obscure", "MemoryError")
        except Exception as exc:   # noqa: BLE001
            detail = f"{type(exc).__name__}: {str(exc)[:160]}"
            return ("clear" if _is_clear(exc, arg) else "obscure", detail)
        if arg not in FREE_ARGUMENTS and _wrong_type_accepted(base, bad):
            return ("garbage", f"accepted {bad!r} for {arg} (baseline {base!r})")
        if arg not in FREE_ARGUMENTS and t.obj.__name__.startswith("plot_") and _non_finite(bad):
            return ("garbage", f"drew {bad!r} for {arg} without a word")    # a figure hides NaN
        if qual not in FOLLOWS_INPUT:
            for path, (finite0, nonneg0) in leaves0.items():
                if path in leaves:
                    finite, nonneg = leaves[path]
                    if finite0 and not finite:
                        return ("garbage", f"result{path} not finite")
                    if nonneg0 and not nonneg:
                        return ("garbage", f"result{path} negative")
        return ("legit", "")


# --------------------------------------------------------------------------------------------
# Worker processes.

_TARGETS = None


def _worker(conn, limit, scratch):
    os.environ["MPLBACKEND"] = "Agg"
    os.chdir(scratch)             # a relative path that a bad value makes lands in the scratch folder
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):
        pass
    signal.signal(signal.SIGALRM, _on_alarm)
    import warnings
    warnings.simplefilter("ignore")
    walker = Walker(_TARGETS)
    while True:
        task = conn.recv()
        if task is None:
            return
        qual, arg, idx = task
        t0 = time.perf_counter()
        try:
            outcome = walker.run(qual, arg, idx)
        except _Hang:
            outcome = ("hang", "in the walker")
        except BaseException as exc:   # noqa: BLE001
            outcome = ("obscure", f"walker: {type(exc).__name__}: {exc}")
        conn.send((outcome, time.perf_counter() - t0))


def _vm_size():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


class Pool:
    def __init__(self, n):
        self.ctx = multiprocessing.get_context("fork")
        self.limit = _vm_size() + MEMORY_BYTES
        self.workers = [self._start() for _ in range(n)]

    def _start(self):
        parent, child = self.ctx.Pipe()
        p = self.ctx.Process(target=_worker, args=(child, self.limit, _SANDBOX["root"]), daemon=True)
        p.start()
        return [p, parent, None, 0.0]      # process, pipe, current task, sent at

    def run(self, tasks):
        """tasks: list of (qual, arg, idx); yields (task, outcome, seconds)."""
        todo = list(reversed(tasks))
        busy = 0
        while todo or busy:
            for w in self.workers:
                if w[2] is None and todo:
                    w[2] = todo.pop()
                    w[3] = time.perf_counter()
                    w[1].send(w[2])
                    busy += 1
            ready = multiprocessing.connection.wait([w[1] for w in self.workers if w[2] is not None], 0.5)
            for w in self.workers:
                if w[2] is None:
                    continue
                if w[1] in ready:
                    try:
                        outcome, secs = w[1].recv()
                    except EOFError:
                        outcome, secs = ("hang", "worker died"), time.perf_counter() - w[3]
                        self._replace(w)
                    yield w[2], outcome, secs
                    w[2] = None
                    busy -= 1
                elif time.perf_counter() - w[3] > HARD_S or not w[0].is_alive():
                    task = w[2]
                    self._replace(w)
                    yield task, ("hang", f"killed after {HARD_S} s"), HARD_S
                    w[2] = None
                    busy -= 1

    def _replace(self, w):
        w[0].kill()
        w[0].join()
        w[:] = self._start()

    def close(self):
        for w in self.workers:
            try:
                w[1].send(None)
            except OSError:
                pass
            w[0].join(2)
            if w[0].is_alive():
                w[0].kill()


def plan(targets, mode):
    """(qual, arg, bad index) for every walked callable: all in full mode, a sample otherwise."""
    tasks = []
    for t in targets:
        if t.reason:
            continue
        try:
            params = _parameters(t.obj, skip_first=(t.kind == "method"))
        except (TypeError, ValueError):
            continue
        walked = [p for p in params if p.name not in FREE_ARGUMENTS and not p.name.startswith("_")]
        if not walked:
            tasks.append((t.qualname, None, -1))     # still call it once
        for p in walked:
            indices = list(range(len(BAD)))
            if mode != "full":
                start = zlib.crc32(f"{t.qualname}.{p.name}".encode()) % len(BAD)
                step = 1 + zlib.crc32(p.name.encode()) % (len(BAD) - 1)
                indices = [(start + i * step) % len(BAD) for i in range(len(BAD))]
            tasks.extend((t.qualname, p.name, i) for i in indices)
    return tasks


def walk(mode=MODE, workers=2):
    global _TARGETS
    os.environ.setdefault("MPLBACKEND", "Agg")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401  (imported once, before the workers fork)
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        pass
    targets = discover()
    _TARGETS = targets
    tasks = plan(targets, mode)
    _scratch()                    # made before the workers fork, so they all share it
    pool = Pool(workers)
    results = []
    try:
        if mode == "full":
            results = list(pool.run(tasks))
        else:
            # per argument, keep trying the rotated bad values until PER_ARGUMENT_FAST applied
            by_arg = {}
            for task in tasks:
                by_arg.setdefault(task[:2], []).append(task)
            queues = {k: list(v) for k, v in by_arg.items()}
            done = Counter()
            while queues:
                batch = []
                for key in list(queues):
                    q = queues[key]
                    need = PER_ARGUMENT_FAST - done[key]
                    if need <= 0 or not q:
                        del queues[key]
                        continue
                    batch.extend(q[:need])
                    del q[:need]
                for task, outcome, secs in pool.run(batch):
                    results.append((task, outcome, secs))
                    if outcome[0] not in ("n/a",):
                        done[task[:2]] += 1
                    if outcome[0] == "no baseline":
                        done[task[:2]] = PER_ARGUMENT_FAST
    finally:
        pool.close()
        if _SANDBOX["root"] is not None:
            shutil.rmtree(_SANDBOX["root"], ignore_errors=True)
            _SANDBOX["root"] = None
    return targets, results


def summarize(targets, results):
    counts = Counter(o[0] for _, o, _ in results if o[0] not in ("n/a",))
    calls = sum(v for k, v in counts.items() if k != "no baseline")
    by_value = {}
    for (qual, arg, idx), (kind, _), _ in results:
        if kind in ("n/a", "no baseline"):
            continue
        label = BAD[idx][0] if idx >= 0 else "(no arguments)"
        by_value.setdefault(label, Counter())[kind] += 1
    lines = [f"{'bad value':<24}{'calls':>7}{'clear':>8}{'legit':>8}{'obscure':>9}{'garbage':>9}{'hang':>6}"]

    def row(label, c):
        n = sum(c.values()) or 1
        return (f"{label:<24}{sum(c.values()):>7}{100 * c['clear'] / n:>7.1f}%{100 * c['legit'] / n:>7.1f}%"
                f"{100 * c['obscure'] / n:>8.1f}%{100 * c['garbage'] / n:>8.1f}%{c['hang']:>6}")
    for label, c in sorted(by_value.items()):
        lines.append(row(label, c))
    total = Counter({k: v for k, v in counts.items() if k != "no baseline"})
    lines.append(row("all", total))
    lines.append("counts: " + ", ".join(f"{k} {total[k]}" for k in ("clear", "legit", "obscure", "garbage", "hang")))
    walked = {q for (q, _, _), o, _ in results if o[0] not in ("no baseline",)}
    lines.append(f"callables: {len([t for t in targets if not t.reason])} walked "
                 f"({len(walked)} with a baseline), {len([t for t in targets if t.reason])} skipped "
                 "with a reason")
    return calls, total, "\n".join(lines)


def test_api_walk():
    t0 = time.perf_counter()
    targets, results = walk()
    calls, total, table = summarize(targets, results)
    print(f"\nAPI walk ({MODE}, {time.perf_counter() - t0:.1f} s)\n{table}")
    problems = [(task, o) for task, o, _ in results if o[0] in ("hang", "garbage")]
    obscure = [(task, o) for task, o, _ in results if o[0] == "obscure"]
    no_baseline = sorted({(task[0], o[1]) for task, o, _ in results if o[0] == "no baseline"})
    if MODE == "full":
        seconds = Counter()
        for task, _, secs in results:
            seconds[task[0]] += secs
        print("slowest callables (s in all their calls): " + ", ".join(
            f"{q.removeprefix('course_lib.')} {s:.1f}" for q, s in seconds.most_common(8)))
        for task, o in sorted(problems + obscure, key=lambda x: str(x[0])):
            label = BAD[task[2]][0] if task[2] >= 0 else "-"
            print(f"{o[0]:8} {task[0]}({task[1]}={label}): {o[1]}")
    assert not no_baseline, "no baseline call for:\n" + "\n".join(f"{q}: {why}" for q, why in no_baseline)
    assert not problems, "hangs or silent garbage:\n" + "\n".join(
        f"{o[0]} {t[0]}({t[1]}={BAD[t[2]][0]}): {o[1]}" for t, o in problems)
    assert len(obscure) <= OBSCURE_LIMIT * max(calls, 1), (
        f"{len(obscure)} of {calls} calls end in an obscure error:\n"
        + "\n".join(f"{t[0]}({t[1]}={BAD[t[2]][0]}): {o[1]}" for t, o in obscure))
