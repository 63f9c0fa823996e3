"""Round 2 of the harder exercises 07.8 and 07.9: the profile 07.8 gives is a real 70B deployment
(Llama 3 70B on four H100 SXMs below the rated bandwidth), and each trap lands on a named answer."""

import pytest

from course_lib.exercises.feedback import ExerciseError
from course_lib.exercises.registry import get_exercise
from course_lib.economics import decode_step, max_batch
from course_lib.exercises.lessons import ex_07


def _feedback(exercise_id, answer) -> str:
    with pytest.raises(ExerciseError) as info:
        get_exercise(exercise_id).check(answer, None)
    return str(info.value)


def test_07_8_profile_is_llama_3_70b_on_four_h100s_below_the_rated_bandwidth():
    for batch, (t_s, per_gpu) in ex_07.DEPLOY_PROFILE.items():
        step = decode_step("Llama 3 70B", "H100 SXM", batch, 4096, "bf16", ex_07.DEPLOY_PROFILED_ON)
        assert step.bound == "memory"
        assert 0.8 < step.t_step_s / t_s < 1.0                 # sustained, below the rated bandwidth
        assert abs(per_gpu / (step.resident_bytes / ex_07.DEPLOY_PROFILED_ON) - 1) < 0.01


def test_07_8_the_target_binds_and_more_gpus_are_cheaper():
    costs = ex_07._deploy_costs()
    assert 2 not in costs and min(costs, key=costs.get) == max(costs)
    assert ex_07._cheapest_deployment() < min(ex_07._deploy_costs(latency=False).values()) * 1.2
    text = _feedback("07.8", ex_07._deployment_wrong()[ex_07.NO_FIXED_PART])
    assert "[misconception: step-time-proportional-to-batch]" in text
    text = _feedback("07.8", ex_07._deployment_wrong()[ex_07.RATED_NOT_PROFILED])
    assert "[misconception: rated-bandwidth-not-profiled]" in text
    text = _feedback("07.8", ex_07._deployment_wrong()[ex_07.FEWEST_GPUS])
    assert "[misconception: fewest-gpus-cheapest]" in text


def test_07_9_fp8_overtakes_int4_once_and_only_under_the_promise():
    want = get_exercise("07.9").answer(None)
    assert ex_07._best_scheme() == "int4 weights" != ex_07._best_scheme(latency=False)   # today's H200
    # a scan of the grid: FP8 falls behind below the answer and keeps up from it on (one switch)
    switches = [b / 100 for b in range(480, 800) if ex_07._fp8_keeps_up(b / 100) != ex_07._fp8_keeps_up((b + 1) / 100)]
    assert switches == [round(want - 0.01, 2)]
    for p in ("fp8", "int4 weights"):                     # the batches stay under the memory cap
        batch, _ = ex_07._scheme_serving(p, True, want)
        assert 0 < batch < max_batch("Llama 3 70B", ex_07._h200_with(want), 4096, p)
        step = decode_step("Llama 3 70B", ex_07._h200_with(want), batch, 4096, p)
        assert step.bound == "memory" and step.t_step_s <= 0.020
    for key, wrong in ex_07._scheme_wrong().items():
        assert f"[misconception: {key.key}]" in _feedback("07.9", wrong)
