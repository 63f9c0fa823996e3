"""Lesson 10's puzzles: every solution passes its check, and broken kernels fail with the message
that names their problem (an unmasked load, a missing max subtraction or rescale, a wrong axis or
offset, a cost target missed). The kernels are in tests/tile_solutions.py; the solutions notebook
holds the same correct ones."""

from __future__ import annotations

import ast
import time
import warnings
from pathlib import Path

import pytest

pytest.importorskip("course_lib.tiles")              # first: it selects the interpreter before triton loads

from course_lib.checks import check  # noqa: E402
from course_lib.exercises.lessons.ex_10 import EXERCISES  # noqa: E402
from course_lib.tiles.tasks import TASKS, TileCheckError, check_tile_kernel  # noqa: E402
from tile_solutions import BROKEN, GOOD  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BY_TASK = {ex.task: ex.id for ex in EXERCISES}


def test_every_task_has_an_exercise_a_solution_and_two_broken_kernels():
    assert len(EXERCISES) >= 10 and set(BY_TASK) == set(TASKS) == set(GOOD)
    for name in TASKS:
        assert sum(1 for t, _, _ in BROKEN if t == name) >= 2, name


@pytest.mark.parametrize("task", sorted(GOOD))
def test_the_solution_passes(task):
    # check(...) itself runs in solutions/10_tile_kernels.py under nbval; here another learner's sizes
    start = time.perf_counter()
    runs = check_tile_kernel(TASKS[task], GOOD[task], seed="another learner")
    assert len(runs) == 3 and runs[1].adversarial and not runs[2].adversarial
    assert time.perf_counter() - start < 60                      # 3 s goal on an idle machine: tools/bench.py


@pytest.mark.parametrize("task,kernel,words", BROKEN, ids=[f"{t}-{k.fn.__name__}" for t, k, _ in BROKEN])
def test_a_broken_kernel_fails_with_its_problem_named(task, kernel, words):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)          # the overflow a missing max causes
        with pytest.raises(AssertionError) as info:
            check(BY_TASK[task], kernel)
    message = str(info.value)
    for word in words:
        assert word in message, f"{word!r} not in:\n{message}"
    assert f"exercise {BY_TASK[task]}" in message and "hint" in message


def test_sizes_differ_per_learner():
    task = TASKS["row_sum"]
    a = check_tile_kernel(task, GOOD["row_sum"], seed="alice")[0].sizes
    b = check_tile_kernel(task, GOOD["row_sum"], seed="bob")[0].sizes
    assert a != b


def test_a_stub_raises_not_implemented_and_a_non_kernel_is_refused():
    from course_lib.tiles import tl, triton

    @triton.jit
    def leaky_relu_kernel(x_ptr, out_ptr, n, slope, BLOCK: tl.constexpr):
        raise NotImplementedError("exercise 10.1: a masked map")

    with pytest.raises(NotImplementedError, match="10.1"):
        check("10.1", leaky_relu_kernel)
    with pytest.raises(TypeError, match="@triton.jit"):
        check("10.1", lambda x: x)
    with pytest.raises(TileCheckError):
        check_tile_kernel(TASKS["leaky_relu"], GOOD["outer_add"])


def test_the_solutions_notebook_holds_the_tested_kernels():
    """The kernels in solutions/10_tile_kernels.py are the GOOD ones, line for line."""
    import inspect
    tree = ast.parse((ROOT / "solutions" / "10_tile_kernels.py").read_text().replace("### BEGIN SOLUTION", "")
                     .replace("### END SOLUTION", ""))
    found = {n.name: ast.dump(n.body[-1]) for n in tree.body if isinstance(n, ast.FunctionDef)}
    for task, kernel in GOOD.items():
        name = kernel.fn.__name__
        mine = ast.parse(inspect.getsource(kernel.fn)).body[0]
        assert name in found, name
        assert found[name] == ast.dump(mine.body[-1]), name


def test_the_lesson_prints_no_puzzle_answer():
    lesson = (ROOT / "notebooks" / "10_tile_kernels.py").read_text()
    for kernel in GOOD.values():
        assert kernel.fn.__name__ not in lesson
