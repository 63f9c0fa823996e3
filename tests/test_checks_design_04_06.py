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


def test_06_6_the_best_tile_covers_every_row_only_once_the_registers_allow_a_wide_enough_one():
    want = get_exercise("06.6").answer(None)
    assert ex_06._skinny_feasible(want) is None and ex_06._skinny_feasible(want - 1)
    assert not ex_06._covers(ex_06._skinny_best_tile(64))              # today's budget: two rows of tiles
    text = _feedback("06.6", ex_06._skinny_wrong()[ex_06.FITS_NOT_BEST])
    assert "[misconception: covering-tile-fits-not-best]" in text and "does not cover all 200 rows" in text
    assert "not the smallest" in _feedback("06.6", want + 13)       # a larger budget that also works


def test_06_7_a_small_key_block_frees_room_for_the_query_block_the_registers_allow():
    want = get_exercise("06.7").answer(None)
    best_q = max(bq for bq in ex_06._ATTN_GRID if any(ex_06._attn_fits(bq, bk) for bk in ex_06._ATTN_GRID))
    assert best_q * ex_06.ATTN_D * 4 == ex_06.ATTN_REGS                 # the registers bind the query block
    assert not ex_06._attn_fits(best_q, best_q)                          # equal blocks do not fit there
    assert want == min(ex_06._attn_elements(bq, bk) for bq in ex_06._ATTN_GRID for bk in ex_06._ATTN_GRID
                       if ex_06._attn_fits(bq, bk))
    text = _feedback("06.7", ex_06._attn_wrong()[ex_06.EQUAL_BLOCKS])
    assert "[misconception: key-block-equals-query-block]" in text
