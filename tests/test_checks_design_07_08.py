"""Round 2 of the harder exercises 07.8 and 07.9: the profile 07.8 gives is a real 70B deployment
(Llama 3 70B on four H100 SXMs below the rated bandwidth), and each trap lands on a named answer."""

import pytest

from course_lib.checks import ExerciseError, get_exercise
from course_lib.economics import decode_step
from course_lib.exercise_checks import ex_07


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


def test_07_9_memory_alone_picks_another_scheme():
    assert ex_07._best_scheme() == "int4 weights" != ex_07._best_scheme(latency=False)
    assert "[misconception: largest-batch-scheme]" in _feedback("07.9", ex_07._best_scheme(latency=False))


def test_08_6_the_colleague_plan_runs_out_of_memory_once_activations_are_scaled():
    from course_lib.exercise_checks import ex_08
    colleague = next(est for plan, est in ex_08._layouts() if ex_08._is_colleague(plan))
    assert colleague.fits and not ex_08._really_fits(colleague)
    want = get_exercise("08.6").answer(None)
    assert want > ex_08._layout_wrong()[ex_08.ESTIMATE_TRUSTED]
    text = _feedback("08.6", ex_08._layout_wrong()[ex_08.ESTIMATE_TRUSTED])
    assert "[misconception: estimate-trusted-over-measurement]" in text
