"""The kernel lab's class leaderboard over a local classroom folder in nbgrader's layout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from course_lib.kernels.leaderboard import kernel_from_notebook, leaderboard

ROOT = Path(__file__).resolve().parent.parent

GOOD_WARP_SUM = '''
@cuda.jit
def warp_sum_kernel(a, out):
    i = cuda.grid(1)
    v = a[i] if i < a.size else 0.0
    d = 16
    while d > 0:
        v += cuda.shfl_down_sync(FULL_MASK, v, d)
        d //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)
'''
GUARDED_WARP_SUM = GOOD_WARP_SUM.replace("    v = a[i] if i < a.size else 0.0\n", "    if i >= a.size:\n        return\n    v = a[i]\n")
GOOD_MATMUL = '''
@cuda.jit
def matmul_kernel(a, b, out):
    j, i = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        acc = 0.0
        for p in range(a.shape[1]):
            acc += a[i, p] * b[p, j]
        out[i, j] = acc
'''
# Correct, within the 2 m k n loads, but walks k with the lanes of a warp on rows of b 4 k bytes apart.
SLOW_MATMUL = '''
@cuda.jit
def matmul_kernel(a, b, out):
    j, i = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        acc = 0.0
        for q in range(a.shape[1]):
            p = (q + j) % a.shape[1]
            acc += a[i, p] * b[p, j]
        out[i, j] = acc
'''
HEADER = "import math\nimport numpy as np\nfrom course_lib.kernels import cuda\nFULL_MASK = 0xFFFFFFFF\n"


def _write(root, student, body, ipynb=False):
    folder = root / student / "09_kernel_lab"
    folder.mkdir(parents=True)
    if ipynb:
        cells = [{"cell_type": "code", "source": HEADER, "metadata": {}, "outputs": [], "execution_count": None},
                 {"cell_type": "markdown", "source": "# my kernels", "metadata": {}},
                 {"cell_type": "code", "source": body, "metadata": {}, "outputs": [], "execution_count": None}]
        (folder / "09_kernel_lab.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                                                "nbformat_minor": 5}))
    else:
        (folder / "09_kernel_lab.py").write_text("# %%\n" + HEADER + "\n# %%\n" + body)


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    root = tmp_path_factory.mktemp("classroom") / "submitted"
    _write(root, "ada", GOOD_WARP_SUM + GOOD_MATMUL)
    _write(root, "grace", GOOD_WARP_SUM + SLOW_MATMUL, ipynb=True)
    _write(root, "alan", GUARDED_WARP_SUM)                      # a lane exits before the shuffles
    _write(root, "edsger", "def warp_sum_kernel(a, out:\n    pass\n")   # does not parse
    (root / "barbara").mkdir()                                  # submitted nothing for this assignment
    return root


def test_passing_kernels_are_ranked_by_predicted_time_and_the_others_say_why(classroom):
    board = leaderboard(classroom, ("warp_sum", "matmul"), "H100 SXM")
    ws = {e.student: e for e in board.of("warp_sum")}
    assert {s for s, e in ws.items() if e.ranked} == {"ada", "grace"}
    assert "warp sync" in ws["alan"].reason and "does not parse" in ws["edsger"].reason
    assert "barbara" not in ws
    mm = board.of("matmul")
    assert [e.student for e in mm if e.ranked] == ["ada", "grace"]       # the strided walk is slower
    assert mm[0].t_s < mm[1].t_s and mm[0].rank == 1 and mm[1].rank == 2
    assert {e.student for e in mm if not e.ranked} == {"alan", "edsger"}
    assert all("no function matmul_kernel" in e.reason or "parse" in e.reason for e in mm if not e.ranked)
    text = board.table()
    assert "1. ada" in text and "not ranked" in text and "H100 SXM" in text


def test_only_the_kernel_definition_runs(tmp_path):
    book = tmp_path / "nb.py"
    book.write_text(HEADER + "raise SystemExit('the rest of the notebook ran')\n" + GOOD_WARP_SUM)
    kernel = kernel_from_notebook(book, "warp_sum_kernel")
    assert callable(kernel) or hasattr(kernel, "py_func")


def test_the_command_prints_the_table_and_saves_the_plot(classroom, tmp_path):
    png = tmp_path / "board.png"
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "leaderboard.py"), str(classroom),
                          "--puzzles", "warp_sum", "--plot", str(png)], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "1. ada" in out.stdout or "1. grace" in out.stdout
    assert png.stat().st_size > 1000


def test_bad_arguments_are_refused(classroom):
    with pytest.raises(ValueError, match="submitted must be a folder"):
        leaderboard(classroom / "nowhere")
    with pytest.raises(ValueError, match="puzzle"):
        leaderboard(classroom, ("no_such_puzzle",))
