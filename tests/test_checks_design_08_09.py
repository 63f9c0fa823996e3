"""Round 3 of the harder exercises 08.7 and 09.14: each is a what-if the library cannot answer by
one call (a stage time with an overhead the pipeline simulator leaves out; rows narrower than the
traced ones), its answer agrees with a second way, and each trap lands on a named answer."""

import numpy as np
import pytest

from course_lib.exercises.feedback import ExerciseError
from course_lib.exercises.registry import get_exercise
from course_lib.exercises.lessons import ex_08
from course_lib.parallelism import pipeline_bubble_fraction


def _feedback(exercise_id, answer) -> str:
    with pytest.raises(ExerciseError) as info:
        get_exercise(exercise_id).check(answer, None)
    return str(info.value)


def test_08_7_simulated_step_matches_the_bubble_formula_with_the_overhead():
    m = ex_08.PIPE_MICRO
    for p in ex_08._stage_counts():
        slot = (ex_08.PIPE_FORWARD_MS + ex_08.PIPE_BACKWARD_MS) / p + 2 * ex_08.PIPE_OVERHEAD_MS
        assert np.isclose(ex_08._pipeline_step_ms(p), m * slot / (1 - pipeline_bubble_fraction(p, m)))


def test_08_7_the_overhead_binds_and_each_trap_is_named():
    want = get_exercise("08.7").answer(None)
    counts = ex_08._stage_counts()
    assert ex_08._pipeline_feasible(want) is None
    smaller = counts[counts.index(want) - 1]
    assert "over the 2000 ms target" in ex_08._pipeline_feasible(smaller)
    assert ex_08._pipeline_step_ms(smaller, 0.0) <= ex_08.PIPE_TARGET_MS      # without the overhead it would pass
    wrong = ex_08._stages_wrong()
    assert want not in wrong.values()
    text = _feedback("08.7", wrong[ex_08.OVERHEAD_IGNORED])
    assert "[misconception: pipeline-overhead-ignored]" in text and str(want) not in text.split("]")[-1]
    assert "does not split the 48 layers" in _feedback("08.7", 10)


def test_09_14_narrow_rows_move_a_sector_per_four_lanes_not_a_rescaled_trace():
    from course_lib.exercises.lessons import ex_09
    from course_lib.kernels.profile import predict_time
    from course_lib.simt import coalescing

    cols = ex_09.LARGE_COLS
    lanes = np.arange(32)
    per_warp = sum(coalescing(lanes * cols * 4 + 4 * c).n_sectors for c in range(cols)) + 4
    assert per_warp == cols * 24 + 4                     # 32 lanes x 24 bytes = 24 whole sectors
    q = ex_09.LARGE_ROWS // 32 * per_warp * 32
    assert np.isclose(ex_09._narrow_profile().bytes_moved * ex_09.LARGE_ROWS / 128, q)
    want = get_exercise("09.14").answer(None)
    assert np.isclose(want, predict_time(ex_09.LARGE_ROWS * cols, q, "H100 SXM").t_s * 1e6)
    wrong = ex_09._row_sums_wrong()
    assert wrong[ex_09.LINEAR_RESCALE] > want * 1.2       # the rescaled trace overestimates
    assert "[misconception: traced-bytes-rescaled]" in _feedback("09.14", wrong[ex_09.LINEAR_RESCALE])
