"""The harder exercises of lessons 04-06 (04.7, 04.8, 05.7, 05.8, 06.6, 06.7): the decision each
sets is real (the first idea is wrong), and the feedback on the likely wrong answers is specific."""

import re

import pytest

from course_lib.checks import ExerciseError, get_exercise
from course_lib.exercise_checks import ex_04, ex_05, ex_06


def _feedback(exercise_id, answer) -> str:
    with pytest.raises(ExerciseError) as info:
        get_exercise(exercise_id).check(answer, None)
    return str(info.value)


def test_04_7_the_tiles_cost_nothing_until_l2_overtakes_hbm_and_the_square_shortcut_overshoots():
    tokens = get_exercise("04.7").answer(None)
    assert 64 < tokens < 4096                                   # past one row of tiles, before the end
    assert ex_04._prefill_bound(tokens)[0].startswith("HBM")
    assert ex_04._prefill_bound(tokens + 1)[0] == "L2"
    text = _feedback("04.7", tokens + 1)
    assert "[misconception: first-costly-not-last-free]" in text and "L2 roof holds the 64 x 64 tiles" in text
    text = _feedback("04.7", 4096)
    assert "[misconception: faster-level-never-binds]" in text
    square = ex_04._free_tokens_wrong()[ex_04.SQUARE_TILE_INTENSITY]
    assert square > tokens and "[misconception: tile-intensity-square]" in _feedback("04.7", square)
    text = _feedback("04.7", tokens - 7)                        # smaller, also free of cost
    assert "not the largest" in text and str(tokens) not in text.split("\n", 1)[1]


def test_04_8_one_past_the_answer_is_told_its_time_and_the_rates_are_measured_ones():
    want = get_exercise("04.8").answer(None)
    text = _feedback("04.8", want + 1)
    assert re.search(rf"b = {want + 1} takes 60\.\d\d us .* over the 60 us target", text)
    flops, bandwidth = ex_04._sustained()
    from course_lib.hardware import get_accelerator
    h100 = get_accelerator("H100 SXM")
    assert 0.5 < flops / h100.peak("bf16") < 1 and 0.5 < bandwidth / h100.mem_bandwidth < 1
    assert "[misconception: rated-not-sustained]" in _feedback("04.8", ex_04._batch_wrong()[ex_04.RATED_NOT_MEASURED])


def test_05_7_only_one_scheme_meets_both_budgets_and_the_whole_matrix_error_hides_a_bad_row():
    stats = ex_05._scheme_stats()
    both = [n for n, (b, row, _) in stats.items() if b <= ex_05.STORE_BITS and row <= ex_05.STORE_ERROR]
    assert sorted(both) == sorted([ex_05.APART_SCHEME, "int8 per block"])
    assert get_exercise("05.7").answer(None) == ex_05.APART_SCHEME   # cheaper than finer scales everywhere
    assert "[misconception: finer-scales-for-a-few-outliers]" in _feedback("05.7", "int8 per block")
    trap = ex_05._cheapest_scheme_wrong()[ex_05.WHOLE_MATRIX_ERROR]
    bits, row, whole = stats[trap]
    assert bits < stats[both[0]][0] and whole <= ex_05.STORE_ERROR < row   # cheaper, passes on the whole only
    assert "[misconception: whole-matrix-error-hides-rows]" in _feedback("05.7", trap)
    fewest = min(stats, key=lambda n: stats[n][0])
    assert stats[fewest][1] > ex_05.STORE_ERROR                      # the small one is too coarse


def test_05_8_the_stagnation_prediction_overshoots_the_measured_chunk():
    want = get_exercise("05.8").answer(None)
    predicted = ex_05._longest_chunk_wrong()[ex_05.STAGNATION_ONLY]
    assert predicted > want and ex_05._chunked_error(predicted) > ex_05.SUM_TOLERANCE
    assert ex_05._chunked_error(want) <= ex_05.SUM_TOLERANCE < ex_05._chunked_error(2 * want)


def test_06_6_the_best_tile_is_neither_square_nor_covering_every_row():
    best = min((ex_06._skinny_bytes(tm, tn), tm, tn) for tm in ex_06.SKINNY_SIDES for tn in ex_06.SKINNY_SIDES
               if ex_06._skinny_fits(tm, tn))
    _, tm, tn = best
    assert tm != tn and tm < ex_06.SKINNY[0]
    assert best[0] == get_exercise("06.6").answer(None)


def test_06_7_the_largest_block_that_fits_moves_least_and_the_score_tile_is_named():
    want = get_exercise("06.7").answer(None)
    assert ex_06._attn_feasible(want) is None and ex_06._attn_feasible(want + 16)
    text = _feedback("06.7", ex_06._attn_wrong()[ex_06.SCORE_TILE_FORGOTTEN])
    assert "[misconception: score-tile-forgotten]" in text and "over the 192 KiB budget" in text
