"""Benchmark of the kernel lab (lesson 09). Not a test: measured, printed, never asserted.

(a) The trace profiler's overhead. One launch on a task's own data (the sizes ``check_kernel``
    draws first) runs twice: plainly on numba-cuda's CUDA simulator, ``kernel[grid, block](*args)``
    under ``NUMBA_ENABLE_CUDASIM=1`` (one OS thread per CUDA thread), and on the course's traced
    executor followed by the profiler, ``profile_trace(trace_launch(...))``. The figure of merit
    is traced / plain; the goal is at most 3x. Both outputs must be identical. Also: the course's
    executor with its line tracer off, so traced / untraced is what the recording itself costs.
(b) ``check_kernel``'s time for every task with its good kernel from tests/kernel_solutions.py,
    over all its cases, as a learner runs it (goal: under 2 s each). The design puzzles (09.16-09.24)
    are timed best of two, with each case's time and traced lines, so a slow check shows which
    case costs it; the machine's load average is printed before and after (a shared machine's
    figures are rough).
(c) Lesson 09's execution time (its cells in a fresh kernel, as bench.py times every lesson): taken
    from bench.py's own lesson timing when ``make bench`` has just run it, else measured here
    (``bench.py --only kernels``).

Without a GPU, ``course_lib.kernels`` selects numba's simulator in this process. With one, the
plain launch would run on the device, so (a) runs in a subprocess forced onto the simulator.

    python tools/bench_kernels.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
for _p in (ROOT, ROOT / "tests"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

OVERHEAD_TASKS = ("block_sum", "matmul_tiled")
TARGET_OVERHEAD_RATIO = 3.0
TARGET_CHECK_S = 2.0
#: The design puzzles (issue 23): each check under 2 s on two cores.
TARGET_PUZZLE_CHECK_S = 2.0
REPEATS = 3


def _task_case(task):
    """Sizes, inputs and launch of ``task``'s first check case (check_kernel's default seed)."""
    seed = sum(map(ord, task.name)) * 7919
    rng = np.random.default_rng(seed)
    sizes = task.make_sizes(rng)
    data = task.make_data(rng, sizes)
    return sizes, data, task.launch(sizes)


def overhead() -> dict:
    """(a), in this process: needs numba's simulator to be the selected ``cuda``."""
    from course_lib.kernels import simulator_selected
    from course_lib.kernels.profile import profile_trace
    from course_lib.kernels.tasks import TASKS
    from course_lib.kernels.trace import trace_launch
    from course_lib.measure import time_best
    from kernel_solutions import GOOD

    if not simulator_selected():
        raise RuntimeError("numba's CUDA simulator is not selected in this process")
    figures = {}
    for name in OVERHEAD_TASKS:
        task, kernel = TASKS[name], GOOD[name]
        sizes, data, (grid, block) = _task_case(task)
        args = lambda: [data[p].copy() if isinstance(data[p], np.ndarray) else data[p] for p in task.params]
        plain_args, traced_args = args(), args()

        def plain():
            kernel[grid, block](*plain_args)

        def traced():
            return profile_trace(trace_launch(kernel, grid, block, *traced_args, names=task.params),
                                 flops=task.flops(sizes))

        def untraced():
            trace_launch(kernel, grid, block, *args(), names=task.params, _untraced=True)

        t_plain = time_best(plain, repeats=REPEATS)
        t_traced = time_best(traced, repeats=REPEATS)
        t_untraced = time_best(untraced, repeats=REPEATS)
        trace = trace_launch(kernel, grid, block, *args(), names=task.params)
        t_profile = time_best(lambda: profile_trace(trace), repeats=REPEATS)
        n_threads = int(np.prod(grid)) * int(np.prod(block))
        key = f"{name}_{'_'.join(f'{k}{v}' for k, v in sizes.items())}"
        figures[f"{key}_threads"] = n_threads
        figures[f"{key}_kernel_lines"] = int(trace.line_no.size)
        figures[f"{key}_plain_cudasim_s"] = round(t_plain, 4)
        figures[f"{key}_traced_profiled_s"] = round(t_traced, 4)
        figures[f"{key}_of_which_profile_s"] = round(t_profile, 4)
        figures[f"{key}_traced_over_plain"] = round(t_traced / t_plain, 2)
        # The same executor without its line tracer: what recording each line and access costs.
        figures[f"{key}_executor_untraced_s"] = round(t_untraced, 4)
        figures[f"{key}_traced_over_untraced_executor"] = round(t_traced / t_untraced, 2)
        figures[f"{key}_outputs_identical"] = all(
            np.array_equal(a, b) for a, b, p in zip(plain_args, traced_args, task.params)
            if p in task.outputs)
    return figures


def _overhead_in_simulator() -> dict:
    """(a) in this process when the simulator is selected, else in a subprocess forced onto it."""
    from course_lib.kernels import simulator_selected
    if simulator_selected():
        return overhead()
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", COURSE_FORCE_SIMULATOR="1")
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--overhead-json"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return {"overhead": f"simulator subprocess failed: {tail[:160]}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def check_times() -> dict:
    """(b): seconds of ``check_kernel(task, good_kernel)`` (default cases) per task, run once."""
    from course_lib.kernels.tasks import TASKS, check_kernel
    from course_lib.measure import time_best
    from kernel_solutions import GOOD

    from course_lib.kernels.puzzles import PUZZLES

    figures = {f"check_{name}_s": round(time_best(lambda: check_kernel(name, GOOD[name]),
                                                  repeats=2 if name in PUZZLES else 1), 3)
               for name in TASKS}
    figures["puzzle_checks_over_2s"] = [p for p in PUZZLES if figures[f"check_{p}_s"] > TARGET_PUZZLE_CHECK_S]
    worst = max((k for k in figures if k.startswith("check_")), key=figures.get)
    figures["check_slowest"] = f"{worst.removeprefix('check_').removesuffix('_s')} {figures[worst]:.2f} s"
    figures["check_over_target"] = sum(v > TARGET_CHECK_S for k, v in figures.items()
                                       if k.startswith("check_") and isinstance(v, float))
    return figures


def puzzle_cases() -> dict:
    """(b) in detail for the design puzzles: each case's seconds (run_task: trace, profile, checks'
    inputs) and the kernel lines the trace recorded, at check_kernel's default seed."""
    from course_lib.kernels.puzzles import PUZZLES
    from course_lib.kernels.tasks import get_task, run_task
    from course_lib.measure import time_best
    from kernel_solutions import GOOD

    figures = {}
    for name in PUZZLES:
        task, base = get_task(name), sum(map(ord, name)) * 7919
        for c, case in enumerate(task.cases):
            box = {}
            t = time_best(lambda: box.update(run=run_task(name, GOOD[name], seed=base + c, case=c)), repeats=1)
            run = box["run"]
            sizes = ",".join(f"{k}{v}" for k, v in run.sizes.items())
            figures[f"case_{name}_{c}_{sizes}_s"] = round(t, 3)
            figures[f"case_{name}_{c}_lines"] = int(run.profile.trace.line_no.size)
    return figures


def lesson_09_seconds() -> float:
    """(c): lesson 09's cells executed in a fresh kernel, the execution alone (as bench.py times)."""
    import time

    import jupytext
    from nbclient import NotebookClient

    path = ROOT / "notebooks" / "09_kernel_lab.py"
    nb = jupytext.read(path)
    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    with client.setup_kernel():
        start = time.perf_counter()
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
        return time.perf_counter() - start


def run() -> dict:
    figures = {"target_traced_over_plain_max": TARGET_OVERHEAD_RATIO, "target_check_s_max": TARGET_CHECK_S,
               "target_puzzle_check_s_max": TARGET_PUZZLE_CHECK_S,
               "cores": os.cpu_count(), "load_avg_1min_before": round(os.getloadavg()[0], 2)}
    figures.update(_overhead_in_simulator())
    figures.update(check_times())
    figures.update(puzzle_cases())
    timed = os.environ.get("COURSE_BENCH_LESSON_09_S")     # bench.py sets it after timing every lesson
    if timed:
        figures["lesson_09_s (bench.py's lesson timing)"] = round(float(timed), 1)
    else:
        figures["lesson_09_s"] = round(lesson_09_seconds(), 1)
    figures["load_avg_1min_after"] = round(os.getloadavg()[0], 2)
    return figures


if __name__ == "__main__":
    if "--overhead-json" in sys.argv:
        print(json.dumps(overhead()))
    else:
        for key, value in run().items():
            print(f"{key:50s} {value}")
