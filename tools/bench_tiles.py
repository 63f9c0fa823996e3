"""Benchmark of the tile-kernel lab (lesson 10). Not a test: measured, printed, never asserted.

(a) The profiler's overhead: lesson 10's blocked matmul, FlashAttention forward and fused softmax,
    each launched plainly on Triton's interpreter (``kernel[grid](...)``) and under
    ``profile_launch`` (staging, the bounds check, the recording, the per-tensor counts), median of
    ``REPEATS``; the goal is profiled / plain <= 3. Both outputs must be identical.
(b) ``check`` time of every puzzle with its solution from tests/tile_solutions.py, as a learner runs
    it (three cases; goal: under 3 s each on 2 cores).
(c) Lesson 10's execution time in a fresh kernel (nbclient), goal under 20 s; bench.py's per-lesson
    table times it too.

    python tools/bench_tiles.py      (or: python tools/bench.py --only tiles)
"""

from __future__ import annotations

import math
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for _p in (ROOT, ROOT / "tests"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

TARGET_OVERHEAD_RATIO = 3.0
TARGET_CHECK_S = 3.0
TARGET_LESSON_S = 20.0
REPEATS = 3


def _median(fn, repeats=REPEATS) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def overhead() -> dict:
    import torch

    from course_lib.tiles import kernels as K
    from course_lib.tiles import triton
    from course_lib.tiles.profile import profile_launch

    torch.manual_seed(0)
    a, b = torch.randn(150, 96), torch.randn(96, 130)
    q, k, v = (torch.randn(1, 80, 32) for _ in range(3))
    x = torch.randn(64, 300)
    cases = {
        "matmul 150x96x130, 32^3 tiles": (K.matmul_kernel, (triton.cdiv(150, 32) * triton.cdiv(130, 32),),
                                          lambda: (a, b, torch.empty(150, 130), 150, 130, 96),
                                          dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=2)),
        "flash attention 80x32, causal": (K.flash_attention_kernel, (5, 1),
                                          lambda: (q, k, v, torch.empty_like(q), torch.empty(1, 80), 80, 32,
                                                   1 / math.sqrt(32)),
                                          dict(BLOCK_M=16, BLOCK_N=16, BLOCK_D=32, CAUSAL=True)),
        "softmax 64x300": (K.softmax_kernel, (64,), lambda: (x, torch.empty_like(x), 300, 300),
                           dict(BLOCK_COLS=512)),
    }
    out = {}
    for name, (kernel, grid, make, constexprs) in cases.items():
        args_plain, args_prof = make(), make()
        kernel[grid](*args_plain, **constexprs)                       # warm: the AST rewrite, once
        plain = _median(lambda: kernel[grid](*args_plain, **constexprs))
        profiled = _median(lambda: profile_launch(kernel, grid, *args_prof, **constexprs))
        outputs_equal = all(torch.equal(p, r) for p, r in zip(args_plain, args_prof) if isinstance(p, torch.Tensor))
        out[f"overhead {name}: plain s"] = round(plain, 3)
        out[f"overhead {name}: profiled s"] = round(profiled, 3)
        out[f"overhead {name}: profiled / plain"] = round(profiled / plain, 2)
        out[f"overhead {name}: outputs identical"] = outputs_equal
    return out


def check_times() -> dict:
    from course_lib.checks import check
    from course_lib.exercises.lessons.ex_10 import EXERCISES
    from tile_solutions import GOOD
    out = {}
    for ex in EXERCISES:
        kernel = GOOD[ex.task]
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check(ex.id, kernel)
        out[f"check {ex.id} {ex.task} s"] = round(time.perf_counter() - start, 2)
    return out


def lesson_time() -> dict:
    import jupytext
    from nbclient import NotebookClient
    path = ROOT / "notebooks" / "10_tile_kernels.py"
    nb = jupytext.read(path)
    client = NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    with client.setup_kernel():
        start = time.perf_counter()
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
        seconds = time.perf_counter() - start
    return {"lesson 10 run s": round(seconds, 1)}


def run() -> dict:
    figures = {"target profiled / plain max": TARGET_OVERHEAD_RATIO, "target check s max": TARGET_CHECK_S,
               "target lesson 10 s max": TARGET_LESSON_S}
    figures.update(overhead())
    figures.update(check_times())
    figures.update(lesson_time())
    return figures


if __name__ == "__main__":
    for key, value in run().items():
        print(f"{key:55s} {value}")
