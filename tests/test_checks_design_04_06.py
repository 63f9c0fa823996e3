"""The harder exercises of lessons 04-06 (04.7, 04.8, 05.7, 05.8, 06.6, 06.7): the decision each
sets is real (the first idea is wrong), and the feedback on the likely wrong answers is specific."""

import math
import re

import numpy as np
import pytest

from course_lib.exercises.feedback import ExerciseError
from course_lib.exercises.registry import get_exercise
from course_lib import formats as F
from course_lib.exercises.lessons import ex_04, ex_05, ex_06
from course_lib.roofline import binding_ceiling, matmul_intensity


def _feedback(exercise_id, answer) -> str:
    with pytest.raises(ExerciseError) as info:
        get_exercise(exercise_id).check(answer, None)
    return str(info.value)


def test_04_7_the_l2_need_peaks_at_a_partly_filled_row_of_tiles_and_the_library_agrees():
    want = get_exercise("04.7").answer(None)
    assert ex_04._a100_with_l2(want).l2_bandwidth / 1e12 == pytest.approx(want)
    roof = ex_04._hbm_level()

    def free(acc, m):
        tiled = binding_ceiling({"L2": ex_04._l2_intensity(m), roof: matmul_intensity(m, 8192, 8192, 2)}, acc, "bf16")
        return tiled[1] >= ex_04._untiled_bound(m) * (1 - 1e-9)

    worst = max(range(1, 4097), key=ex_04._l2_needed_tbs)
    assert worst % 64 == 1 and ex_04._l2_needed_tbs(worst) > ex_04._l2_needed_tbs(4096) * 1.1
    enough, short = ex_04._a100_with_l2(want * (1 + 1e-6)), ex_04._a100_with_l2(want * (1 - 1e-4))
    rng = np.random.default_rng(47)
    for m in {worst, 1, 64, 4096, *rng.integers(1, 4097, 40).tolist()}:     # the library's roofline agrees
        assert free(enough, int(m))
    assert not free(short, worst) and not free("A100", worst)
    for key, wrong in ex_04._l2_for_free_tiles_wrong().items():
        assert f"[misconception: {key.key}]" in _feedback("04.7", wrong)


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


def test_05_8_one_more_bit_doubles_the_length_and_the_rounding_is_the_catalogs():
    want = get_exercise("05.8").answer(None)
    v = ex_05._products()
    for fmt in ("bf16", "tf32"):                          # the check's rounding is the library's
        assert ex_05._one_sum_error(F.get_format(fmt).mantissa_bits) == F.accumulate(v, fmt).rel_error
    bf16 = F.get_format("bf16")
    s = 0.0
    for x in v[:3000].tolist():                           # and section 3's round_float agrees at M = want
        s = float(F.round_float(s + x, want, bf16.min_exponent, bf16.max_value))
    t = 0.0
    for x in v[:3000].tolist():
        q = math.ldexp(1.0, max(math.frexp(t + x)[1] - 1, bf16.min_exponent) - want)
        t = round((t + x) / q) * q
    assert s == t
    # the prompt's measurement, and the scaling it allows: 2^7 times longer needs 7 more bits
    assert ex_05._longest_chunk() == 128 and want == 7 + 7
    assert ex_05._one_sum_error(want - 1) > ex_05.SUM_TOLERANCE >= ex_05._one_sum_error(want)
    for key, wrong in ex_05._fewest_bits_wrong().items():
        assert f"[misconception: {key.key}]" in _feedback("05.8", wrong)


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
