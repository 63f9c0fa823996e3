"""Checks for lesson 07, inference economics (answers in solutions/07_inference_economics.py).

Every expected value is computed from ``course_lib`` when a check runs; none is typed here.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import re

import numpy as np

from course_lib.exercises.feedback import Misconception
from course_lib.exercises.types import ChoiceExercise, FunctionExercise, ValueExercise
from course_lib.exercises.variants import Variants
from course_lib.economics import (EXAMPLE_PRICE_USD_PER_DEVICE_HOUR, compute_optimal, cost_per_million_tokens_usd,
                                  crossover_batch, decode_step, get_model, kv_cache_bytes_per_token, max_batch, simulate_batching,
                                  training_time_s, weight_bytes)
from course_lib.exercises.decision import DecisionExercise
from course_lib.exercises.steps import _replayed
from course_lib.exercises.misconceptions import _other_accelerators, _peak_precisions, shared, _with_generated
from course_lib.hardware import get_accelerator

__all__ = ["EXERCISES"]

#: The price the task states for exercise 07.3: an assumption given to the learner, not a fact.
TASK_PRICE_USD_PER_DEVICE_HOUR = 3.10

_TRAINING = "1. Training compute: $C = 6ND$"
_KV = "4. The KV cache: per token, per sequence"
_DECODE = "5. The decode step: bytes or FLOP, whichever is slower"
_COST = "6. Latency against throughput, and dollars per million tokens"

#: Exercise 07.2's training runs (model, tokens, accelerator, GPUs): the first is the course's default.
_TRAINING_VARIANTS = Variants(
    options=({"model": "Llama 3 70B", "tokens": 15e12, "accelerator": "H100 SXM", "gpus": 2048},
             {"model": "Llama 3 8B", "tokens": 15e12, "accelerator": "H100 SXM", "gpus": 512},
             {"model": "Mistral 7B", "tokens": 8e12, "accelerator": "A100 SXM 80GB", "gpus": 1024},
             {"model": "Llama 3 70B", "tokens": 15e12, "accelerator": "B200", "gpus": 1024},
             {"model": "Llama 2 7B", "tokens": 2e12, "accelerator": "H200", "gpus": 256},
             {"model": "Falcon 7B", "tokens": 1.5e12, "accelerator": "A100 SXM 80GB", "gpus": 384}),
    statement="{model}, {tokens:.3g} tokens, {gpus} {accelerator} GPUs in dense BF16, utilization 0.35, in days")

FLOP_PER_BYTE_ONE = Misconception(
    "bandwidth-ignored", "FLOP per byte compared with 1, as if bandwidth did not matter: a step is "
    "compute-bound only above the chip's ridge point, hundreds of FLOP per byte.", "07", _DECODE,
    "Compare the step's FLOP per byte with the H200's ridge point, not with 1.")
BATCH_COMPUTE_BOUND = Misconception(
    "batch-makes-compute-bound", "Batching taken to make decode compute-bound: every sequence "
    "brings its own KV cache, so with long contexts the bytes grow with the batch too.", "07",
    "Misconceptions", "Count the KV-cache bytes of all 32 sequences against the weights.")
FORWARD_ONLY = Misconception(
    "forward-only-flop", "2 N D, the forward pass only: training also runs the backward pass, "
    "twice the forward, so C = 6 N D.", "07", _TRAINING, "Training costs 6 FLOP per parameter per token.")
NO_UTILIZATION = Misconception(
    "peak-sustained", "The spec-sheet peak taken as sustained: a training run reaches a fraction "
    "of it, the model-FLOP utilization.", "07", _TRAINING, "Multiply the peak by u = 0.35.")
ONE_GPU = Misconception(
    "one-gpu-not-all", "One GPU where the whole cluster trains: the time divides by the number of "
    "GPUs.", "07", _TRAINING, "Divide by G, the number of GPUs.")
PER_TOKEN = Misconception(
    "per-token-not-per-million", "Dollars per token where dollars per million tokens were asked.",
    "07", _COST, "Multiply the cost of one token by 1e6.")
ONE_SEQUENCE = Misconception(
    "batch-forgotten", "One sequence's tokens per second where the batch's were asked: a decode "
    "step produces one token for each of the 64 sequences.", "07", _COST,
    "tokens_per_s already counts the whole batch; do not divide by it again.")
BF16_NOT_FP8 = Misconception(
    "precision-ignored", "BF16 where the task serves FP8: one byte per value halves the bytes each "
    "step reads.", "07", _COST, "Pass precision='fp8' to decode_step.")
HOURLY_PER_SECOND = Misconception(
    "hourly-price-per-second", "The hourly price charged per second: an hour has 3600 seconds.",
    "07", _COST, "Divide the hourly price by 3600 to get dollars per second.")
CROSSOVER_DOWN = Misconception(
    "crossover-rounded-down", "The crossover batch rounded down: the batch below the crossover is "
    "still memory-bound.", "07", _DECODE, "Round the crossover up to the next whole batch.")
CROSSOVER_FRACTION = Misconception(
    "crossover-not-rounded", "The fractional crossover: a batch size is a whole number.", "07", _DECODE,
    "Round the crossover to a whole batch, upward.")
BF16_WEIGHTS = Misconception(
    "int8-weights-ignored", "16-bit weights where the task stores int8 ones: the weights are read "
    "at one byte each, which moves the crossover.", "07", _DECODE, "Pass precision='int8 weights'.")
KV_ONE_TENSOR = Misconception(
    "kv-keys-only", "Only keys (or only values) counted: each layer stores a key and a value per KV "
    "head for every token.", "07", _KV, "One token's cache has a factor 2: K and V.")
KV_ONE_LAYER = Misconception(
    "kv-layers-forgotten", "One layer's cache where every layer keeps its own.", "07", _KV,
    "Multiply by the number of layers.")


def _bound_70b_on_four_h200() -> str:
    """Llama 3 70B split over 4 H200s, batch 32, 2048-token contexts, BF16."""
    return decode_step("Llama 3 70B", "H200", 32, 2048, "bf16", n_devices=4).bound


def _training_days(model, tokens, accelerator, gpus) -> float:
    """Days to train ``model`` on ``tokens`` with ``gpus`` of ``accelerator`` at utilization 0.35
    (the course's default: Llama 3 70B, 15e12 tokens, 2048 H100 SXM)."""
    params = get_model(model).params
    return training_time_s(params, tokens, accelerator=accelerator, n_devices=gpus, utilization=0.35) / 86400


def _usd_per_million_mistral() -> float:
    step = decode_step("Mistral 7B", "H200", 64, 3000, "fp8")
    return cost_per_million_tokens_usd(step.tokens_per_s, TASK_PRICE_USD_PER_DEVICE_HOUR)


def _first_compute_bound_batch() -> int:
    """Llama 3 8B on the B200, int8 weights, 100-token contexts: found by a sweep."""
    for b in range(1, 100_000):
        if decode_step("Llama 3 8B", "B200", b, 100, "int8 weights").bound == "compute":
            return b
    raise RuntimeError("no batch below 100000 is compute-bound")


def _bound_70b_wrong() -> dict:
    step = decode_step("Llama 3 70B", "H200", 32, 2048, "bf16", n_devices=4)
    return {FLOP_PER_BYTE_ONE: "compute" if step.flops / (step.weight_bytes + step.kv_bytes) >= 1 else "memory",
            BATCH_COMPUTE_BOUND: "compute",
            FLOP_COUNT_ALONE: "compute" if step.bound == "memory" else "memory"}


FLOP_COUNT_ALONE = Misconception(
    "flop-count-alone", "The amount of work judged on its own, as if many FLOP made a step compute-bound: "
    "what decides is the FLOP per byte moved, weights and every sequence's cache, against the ridge.",
    "07", _DECODE, "Divide the step's FLOP by its bytes before you decide, then compare with the ridge point.")


def _training_days_wrong(model, tokens, accelerator, gpus) -> dict:
    params = get_model(model).params

    def days(**kw):
        args = dict(accelerator=accelerator, n_devices=gpus, utilization=0.35)
        args.update(kw)
        return training_time_s(params, tokens, **args) / 86400
    return {shared("hours-for-days", "07", _TRAINING): days() * 24,
            shared("seconds-for-unit", "07", _TRAINING): days() * 86400,
            shared("sparse-peak", "07", _TRAINING): days() / 2,
            FORWARD_ONLY: days() / 3,
            NO_UTILIZATION: days(utilization=1.0),
            ONE_GPU: days(n_devices=1),
            UTILIZATION_DEFAULT: days(utilization=inspect.signature(training_time_s).parameters["utilization"].default),
            **_params_from_name(model, tokens, accelerator, gpus),
            **_training_days_more(model, tokens, accelerator, gpus)}


UTILIZATION_DEFAULT = Misconception(
    "utilization-left-at-default", "training_time_s called without the task's utilization, so it used its "
    "default: the fraction of the peak a run sustains is the task's, 0.35 here.", "07", _TRAINING,
    "Pass utilization= with the task's figure.")
PARAMS_FROM_NAME = Misconception(
    "params-from-model-name", "The parameter count read off the model's name: the name rounds it; "
    "get_model(...).params is the count.", "07", _TRAINING,
    "Take N from get_model(...).params, not from the digits in the name.")


def _params_from_name(model, tokens, accelerator, gpus) -> dict:
    """N read off the name ("70B" as 70e9), where the name carries a size in billions."""
    size = re.search(r"(\d+(?:\.\d+)?)B\b", model)
    if size is None:
        return {}
    return {PARAMS_FROM_NAME: training_time_s(float(size.group(1)) * 1e9, tokens, accelerator=accelerator,
                                              n_devices=gpus, utilization=0.35) / 86400}


def _usd_per_million_wrong() -> dict:
    step = decode_step("Mistral 7B", "H200", 64, 3000, "fp8")
    price = TASK_PRICE_USD_PER_DEVICE_HOUR
    right = cost_per_million_tokens_usd(step.tokens_per_s, price)
    return {PER_TOKEN: right / 1e6,
            ONE_SEQUENCE: cost_per_million_tokens_usd(step.tokens_per_s / step.batch, price),
            BF16_NOT_FP8: cost_per_million_tokens_usd(
                decode_step("Mistral 7B", "H200", 64, 3000, "bf16").tokens_per_s, price),
            HOURLY_PER_SECOND: right * 3600,
            LESSON_PRICE: cost_per_million_tokens_usd(step.tokens_per_s, EXAMPLE_PRICE_USD_PER_DEVICE_HOUR),
            **_usd_per_million_more()}


LESSON_PRICE = Misconception(
    "lesson-example-price", "The lesson's example price per GPU-hour where the task states its own: the "
    "cost per token is proportional to the price.", "07", _COST,
    "Use the price the task gives, in dollars per device-hour.")


#: The schemes of section 7, for the slips that pass one where the task names another.
_SCHEMES = ("bf16", "fp8", "int8 weights", "int4 weights")


def _scheme_slips(compute, used: str, listed=("bf16",)) -> dict:
    """``compute(scheme)`` for every other scheme of section 7 where the task names ``used`` (but
    those the exercise already lists with their own words)."""
    out = {}
    for scheme in _SCHEMES:
        if scheme == used or scheme in listed:
            continue
        out[Misconception(
            f"scheme-{scheme.replace(' ', '-')}-for-{used.replace(' ', '-')}",
            f"precision={scheme!r} where the task stores {used!r}: each scheme reads a different number "
            f"of bytes per weight and per cached value.", "07", _QUANTIZE,
            f"Pass precision={used!r}, the scheme the task names.")] = compute(scheme)
    return out


CONTEXT_LEFT_AT_DEFAULT = Misconception(
    "context-left-at-default", "decode_step (or crossover_batch) called without the task's context, so "
    "it used its default of 1024 tokens: every sequence's KV cache depends on the context.", "07",
    _DECODE, "Pass the context the task gives as context_tokens.")
BATCH_LEFT_AT_DEFAULT = Misconception(
    "batch-left-at-default", "decode_step called without the task's batch, so it used its default of "
    "one sequence: the weights are read once per step for the whole batch.", "07", _DECODE,
    "Pass the task's batch to decode_step.")


def _usd_per_million_slips() -> dict:
    """Another scheme, another chip, or decode_step's defaults left in place of the task's numbers."""
    price = TASK_PRICE_USD_PER_DEVICE_HOUR

    def usd(accelerator="H200", batch=64, context=3000, scheme="fp8"):
        return cost_per_million_tokens_usd(decode_step("Mistral 7B", accelerator, batch, context, scheme).tokens_per_s,
                                           price)
    return {CONTEXT_LEFT_AT_DEFAULT: usd(context=1024), BATCH_LEFT_AT_DEFAULT: usd(batch=1),
            **_scheme_slips(lambda scheme: usd(scheme=scheme), "fp8"),
            **_other_accelerators(lambda name: usd(accelerator=name), "H200", "07", _COST)}


def _first_batch_slips() -> dict:
    """Another scheme, another chip, or crossover_batch's default context."""
    def first(accelerator="B200", context=100, scheme="int8 weights"):
        b_star = crossover_batch("Llama 3 8B", accelerator, context, scheme)
        return math.ceil(b_star) if math.isfinite(b_star) else None    # never compute-bound: no answer
    return {CONTEXT_LEFT_AT_DEFAULT: first(context=1024),
            **_scheme_slips(lambda scheme: first(scheme=scheme), "int8 weights"),
            **_other_accelerators(lambda name: first(accelerator=name), "B200", "07", _DECODE)}


def _training_days_slips(model, tokens, accelerator, gpus) -> dict:
    """Another chip's peak, or another precision's peak, for the learner's run."""
    params = get_model(model).params

    def days(peak):
        return 6 * params * tokens / (0.35 * peak * gpus) / 86400
    return {**_other_accelerators(lambda name: _training_days(model, tokens, name, gpus), accelerator, "07", _TRAINING),
            **_peak_precisions(lambda p: days(get_accelerator(accelerator).peak(p)), "07", _TRAINING,
                              precisions=("fp8", "fp32", "tf32"))}


def _first_batch_wrong() -> dict:
    b_star = crossover_batch("Llama 3 8B", "B200", 100, "int8 weights")
    return {CROSSOVER_DOWN: math.floor(b_star),
            CROSSOVER_FRACTION: b_star,
            BF16_WEIGHTS: math.ceil(crossover_batch("Llama 3 8B", "B200", 100, "bf16")), **_first_batch_more()}


def _kv_reference(layers, kv_heads, head_dim, bytes_per_element, context_tokens, batch):
    return batch * context_tokens * kv_cache_bytes_per_token(layers, kv_heads, head_dim, bytes_per_element)


def _kv_wrong() -> dict:
    def quadratic(layers, kv_heads, head_dim, b, context, batch):
        return batch * context ** 2 * kv_cache_bytes_per_token(layers, kv_heads, head_dim, b)

    def keys_only(layers, kv_heads, head_dim, b, context, batch):
        return _kv_reference(layers, kv_heads, head_dim, b, context, batch) / 2

    def one_layer(layers, kv_heads, head_dim, b, context, batch):
        return _kv_reference(1, kv_heads, head_dim, b, context, batch)
    def total(factor=2, tokens=lambda t: t, per_batch=True, kv_heads_in=True, bytes_in=True, scale=1.0):
        def kv_total(layers, kv_heads, head_dim, b, context, batch):
            value = factor * layers * (kv_heads if kv_heads_in else 1) * head_dim * (b if bytes_in else 1)
            return value * tokens(context) * (batch if per_batch else 1) * scale
        return kv_total
    return {shared("kv-cache-superlinear", "07", "Misconceptions"): quadratic, KV_ONE_TENSOR: keys_only,
            KV_ONE_LAYER: one_layer,
            KV_TOKEN_BEING_GENERATED: total(tokens=lambda t: t + 1),
            KV_BATCH_FORGOTTEN: total(per_batch=False),
            KV_HEADS_FORGOTTEN: total(kv_heads_in=False),
            KV_ELEMENTS_NOT_BYTES: total(bytes_in=False),
            KV_TWO_COUNTED_TWICE: total(factor=4),
            KV_BYTES_FIXED_AT_TWO: lambda layers, kv_heads, head_dim, b, context, batch: _kv_reference(
                layers, kv_heads, head_dim, 2, context, batch),
            KV_GB_NOT_BYTES: total(scale=1e-9),
            KV_GIB_NOT_BYTES: total(scale=2.0 ** -30), **_kv_more()}


KV_TOKEN_BEING_GENERATED = Misconception(
    "kv-token-being-generated-counted", "context_tokens + 1 tokens per sequence, the decode step's count "
    "with the token being generated: the cache asked holds the context's tokens, context_tokens of them.",
    "07", _KV, "Multiply one token's cache by context_tokens, not context_tokens + 1.")
KV_BATCH_FORGOTTEN = Misconception(
    "kv-batch-forgotten", "One sequence's cache where the batch's was asked: every sequence of the "
    "batch keeps its own cache.", "07", _KV, "Multiply one sequence's cache by batch.")
KV_HEADS_FORGOTTEN = Misconception(
    "kv-heads-forgotten", "One KV head per layer: each layer stores a key and a value for each of its "
    "kv_heads heads (grouped-query attention shares them among the query heads, it does not remove them).",
    "07", _KV, "One token's cache is 2 x layers x kv_heads x head_dim x bytes_per_element.")
KV_ELEMENTS_NOT_BYTES = Misconception(
    "kv-elements-not-bytes", "Elements where bytes were asked: each cached value takes bytes_per_element "
    "bytes.", "07", _KV, "Multiply the count of cached values by bytes_per_element.")
KV_TWO_COUNTED_TWICE = Misconception(
    "kv-factor-two-twice", "The factor 2 counted twice (K and V, and again for 16-bit values, or for keys "
    "and values per head): bytes_per_element already holds the element size, and K and V make one factor 2.",
    "07", _KV, "One token's cache is 2 x layers x kv_heads x head_dim x bytes_per_element: one 2.")
KV_BYTES_FIXED_AT_TWO = Misconception(
    "kv-bytes-per-element-fixed", "2 bytes per value (BF16) written in where the function takes "
    "bytes_per_element: a cache in FP8 or INT4 takes 1 or half a byte per value.", "07", _KV,
    "Use the bytes_per_element argument, whatever it is.")
KV_GB_NOT_BYTES = Misconception(
    "kv-gb-not-bytes", "GB where bytes were asked: the function returns bytes.", "07", _KV,
    "Return the byte count itself, without dividing by 1e9.")
KV_GIB_NOT_BYTES = Misconception(
    "kv-gib-not-bytes", "GiB where bytes were asked: the function returns bytes.", "07", _KV,
    "Return the byte count itself, without dividing by 2^30.")


def _kv_cases(rng) -> list:
    cases = [((80, 8, 128, 2, 8191, 3), {})]                         # a Llama 3 70B-like case
    for _ in range(10):
        layers = int(rng.integers(1, 97)) | 1
        kv_heads = int(rng.integers(1, 17))
        head_dim = int(rng.integers(17, 257)) | 1
        b = float(rng.choice([0.5, 1.0, 2.0, 4.0]))
        context = int(rng.integers(1, 40_000)) | 1
        batch = int(rng.integers(1, 100)) | 1
        cases.append(((layers, kv_heads, head_dim, b, context, batch), {}))
    return cases


#: 07.6: the budget the task states.
TASK_BUDGET_FLOPS = 2.4e24


TOKENS_FOR_PARAMS = Misconception(
    "tokens-for-parameters", "The tokens D where the parameters N were asked: the compute-optimal "
    "run trains on many more tokens than the model has parameters.", "07", _TRAINING,
    "Solve for N first; D follows from it.")
RATIO_INVERTED = Misconception(
    "chinchilla-ratio-inverted", "Twenty parameters per token where the rule is twenty tokens per "
    "parameter.", "07", _TRAINING, "Write the rule as D = 20 N, then substitute it into C = 6 N D.")
SIX_FORGOTTEN = Misconception(
    "six-flop-forgotten", "The 6 of C = 6 N D left out: each parameter costs 2 FLOP per token forward "
    "and 4 backward.", "07", _TRAINING, "Substitute D = 20 N into C = 6 N D and keep the 6.")
NO_SQUARE_ROOT = Misconception(
    "chinchilla-no-square-root", "C divided by 6 x 20 with no square root: with D = 20 N the compute "
    "grows as N squared.", "07", _TRAINING, "C = 120 N^2: solving for N takes a square root.")


def _chinchilla_params() -> float:
    return compute_optimal(TASK_BUDGET_FLOPS, 20).params


TOKENS_PER_PARAM_DROPPED = Misconception(
    "tokens-per-param-dropped", "C = 6 N^2 solved, as if D = N: the compute-optimal rule gives 20 "
    "tokens for every parameter, D = 20 N.", "07", _TRAINING,
    "Substitute D = 20 N into C = 6 N D before you take the square root.")
BUDGET_TEN_TIMES_LESS = Misconception(
    "budget-exponent-one-less", "The budget read with one power of ten fewer (2.4e23 for 2.4e24): the "
    "formula is right, the budget is not; the parameters follow its square root.", "07", _TRAINING,
    "Write the task's budget again, counting its power of ten.")
BUDGET_TEN_TIMES_MORE = Misconception(
    "budget-exponent-one-more", "The budget read with one power of ten more (2.4e25 for 2.4e24): the "
    "formula is right, the budget is not; the parameters follow its square root.", "07", _TRAINING,
    "Write the task's budget again, counting its power of ten.")


def _chinchilla_wrong() -> dict:
    c = TASK_BUDGET_FLOPS
    right = compute_optimal(c, 20)
    return {TOKENS_FOR_PARAMS: right.tokens,
            FORWARD_ONLY: math.sqrt(c / (2 * 20)),
            SIX_FORGOTTEN: math.sqrt(c / 20),
            NO_SQUARE_ROOT: c / (6 * 20),
            TOKENS_PER_PARAM_DROPPED: math.sqrt(c / 6),
            RATIO_INVERTED: math.sqrt(c * 20 / 6),
            BUDGET_TEN_TIMES_LESS: compute_optimal(c / 10, 20).params,
            BUDGET_TEN_TIMES_MORE: compute_optimal(c * 10, 20).params,
            TOKENS_IN_BILLIONS: right.tokens / 1e9, **_chinchilla_more()}


TOKENS_IN_BILLIONS = Misconception(
    "tokens-in-billions-not-parameters", "The training tokens D, in billions, where the parameters N were "
    "asked: D = 20 N is the other half of the compute-optimal pair.", "07", _TRAINING,
    "Solve for N, and store the count itself.")


#: 07.7: the service the task describes (its trace is rebuilt here from the same seed).
TASK_KV_BUDGET_BYTES = 40e9
TASK_P99_TARGET_S = 16.0
TASK_MAX_TOKENS = 2048


@functools.cache
def _serving_trace():
    rng = np.random.default_rng(707)
    arrival_s = np.cumsum(rng.exponential(1 / 60, 1500))
    out = np.minimum(1536, np.maximum(1, np.round(rng.lognormal(np.log(250) - 0.5, 1.0, 1500)))).astype(int)
    return arrival_s, out


def _kv_per_slot() -> float:
    return TASK_MAX_TOKENS * get_model("Llama 3 8B").kv_bytes_per_token("bf16")


@functools.cache
def _p99_s(slots: int) -> float:
    arrival_s, out = _serving_trace()
    step_s = decode_step("Llama 3 8B", "H100 SXM", slots, 1024).t_step_s
    return simulate_batching(np.floor(arrival_s / step_s), out, slots).latency_percentile_steps(99) * step_s


def _judge_slots(slots) -> str | None:
    if slots < 1:
        return "at least one slot is needed"
    need = slots * _kv_per_slot()
    if need > TASK_KV_BUDGET_BYTES:
        return (f"{slots} slots at {TASK_MAX_TOKENS} tokens need {need / 1e9:.1f} GB of KV cache, over the "
                f"{TASK_KV_BUDGET_BYTES / 1e9:.0f} GB budget")
    p99 = _p99_s(int(slots))
    if p99 > TASK_P99_TARGET_S:
        return f"with {slots} slots the simulated p99 latency is {p99:.1f} s, over the {TASK_P99_TARGET_S:.0f} s target"
    return None


@functools.cache
def _valid_slots() -> tuple:
    top = int(TASK_KV_BUDGET_BYTES // _kv_per_slot())
    return tuple(b for b in range(1, top + 1) if _judge_slots(b) is None)


def _a_valid_slot_count() -> int:
    """One valid answer, from the middle of the valid range (so half and twice it are not valid)."""
    valid = _valid_slots()
    lo, hi = valid[0], valid[-1]
    middle = [b for b in valid if b / 2 < lo and 2 * b > hi and b % 125]
    return middle[len(middle) // 2]


LESSON_SLOTS = Misconception(
    "lesson-slot-count-reused", "The lesson's slot count reused for another service: at this arrival "
    "rate too few slots let the queue grow, and the p99 latency with it.", "07", _COST,
    "Simulate the p99 latency at your slot count; if requests wait in the queue, try more slots.")
FREE_MEMORY_FOR_KV = Misconception(
    "free-memory-not-kv-budget", "All the memory the weights leave free given to the KV cache: the "
    "task gives the cache a budget of its own.", "07", _KV,
    "Divide the task's cache budget, not the free memory, by one slot's cache at the longest request.")
GIB_FOR_GB = Misconception(
    "gib-for-gb", "GiB (2^30 bytes) where GB (10^9 bytes) was given.", "07", _KV,
    "A budget in GB is that many times 1e9 bytes.")


def _p99_s_with(slots: int, step_batch=None, percentile=99) -> float:
    """_p99_s with the step timed at ``step_batch`` sequences (None: at ``slots``), or another
    percentile: known mistakes."""
    arrival_s, out = _serving_trace()
    step_s = decode_step("Llama 3 8B", "H100 SXM", slots if step_batch is None else step_batch, 1024).t_step_s
    return simulate_batching(np.floor(arrival_s / step_s), out, slots).latency_percentile_steps(percentile) * step_s


@functools.cache
def _slots_model_wrong() -> dict:
    """The slot counts of a learner who searches with one step of the model changed, where the judge
    rejects them."""
    kv_1024 = inspect.signature(decode_step).parameters["context_tokens"].default \
        * get_model("Llama 3 8B").kv_bytes_per_token("bf16")
    cap_1024 = int(TASK_KV_BUDGET_BYTES // kv_1024)
    meets = lambda b: _p99_s(b) <= TASK_P99_TARGET_S            # noqa: E731
    most_1024 = next((b for b in range(cap_1024, 0, -1) if meets(b)), None)
    most_1024_by_4 = next((b for b in range(cap_1024, 0, -4) if meets(b)), None)
    batch_one = next((b for b in range(1, 400) if _p99_s_with(b, step_batch=1) <= TASK_P99_TARGET_S), None)
    median = next((b for b in range(1, 400) if _p99_s_with(b, percentile=50) <= TASK_P99_TARGET_S), None)
    wrong = {CACHE_1024_MOST_SLOTS: most_1024, STEP_AT_BATCH_ONE: batch_one, MEDIAN_NOT_P99: median,
             P99_IN_STEPS: _slots_by_p99_steps()}
    if most_1024_by_4 != most_1024:       # the same mistake, searched in coarser steps: named if it differs
        wrong[CACHE_1024_COARSE] = most_1024_by_4
    # the median held to the target over slot counts in multiples of 8: named if it differs, after the
    # step timed at batch 1, which may give the same count
    median_by_8 = next((b for b in range(8, 400, 8) if _p99_s_with(b, percentile=50) <= TASK_P99_TARGET_S), None)
    if median_by_8 != median:
        wrong[MEDIAN_COARSE] = median_by_8
    return {k: v for k, v in wrong.items() if v is not None and _judge_slots(v) is not None}


def _slots_by_p99_steps() -> int:
    """A learner who holds the p99 in steps to the target in seconds over doubling slot counts, and,
    with none passing, takes the count with the fewest p99 steps (a known mistake)."""
    arrival_s, out = _serving_trace()
    doublings = [2 ** k for k in range(int(np.log2(len(out))) + 1)]

    def p99_steps(slots):
        step_s = decode_step("Llama 3 8B", "H100 SXM", slots, 1024).t_step_s
        return simulate_batching(np.floor(arrival_s / step_s), out, slots).latency_percentile_steps(99)
    steps = {b: p99_steps(b) for b in doublings}
    return next((b for b in doublings if steps[b] <= TASK_P99_TARGET_S), min(doublings, key=steps.get))


P99_IN_STEPS = Misconception(
    "p99-steps-taken-for-seconds", "latency_percentile_steps(99), a count of decode steps, compared with "
    "the 16 s target as if it were seconds: no slot count passes so, and the one with the fewest steps "
    "is not a valid one.", "07", _COST,
    "Multiply the p99 in steps by the step time at that slot count (decode_step(...).t_step_s) before "
    "comparing with 16 s.")


CACHE_1024_MOST_SLOTS = Misconception(
    "cache-at-1024-most-slots", "Each slot's cache sized at the 1024-token context the step-time model "
    "uses, then the most slots that meet 16 s: the cache must hold the longest request, 2048 tokens, and "
    "that caps the slots lower.", "07", _KV,
    "Size one slot's cache at 2048 tokens, divide the 40 GB by it, and search only below that cap.")
CACHE_1024_COARSE = Misconception(
    "cache-at-1024-coarse-search", "Each slot's cache sized at the 1024-token context of the step-time "
    "model (and the slots searched down from that cap in coarse steps): a slot must hold the longest "
    "request, 2048 tokens, which caps the slots lower.", "07", _KV,
    "Size one slot's cache at 2048 tokens, divide the 40 GB by it, and search only below that cap.")
STEP_AT_BATCH_ONE = Misconception(
    "step-timed-at-batch-one", "Every step timed at batch 1, whatever the slots: a step with more slots "
    "reads more KV cache and takes longer, so each slot count needs its own step time.", "07", _COST,
    "Call decode_step with the slot count as the batch for each count you simulate.")
MEDIAN_NOT_P99 = Misconception(
    "median-latency-not-p99", "The median (p50) latency held to 16 s where the target is on the 99th "
    "percentile: the slowest requests wait far longer than the typical one.", "07", _COST,
    "Read latency_percentile_steps(99), then multiply by the step time.")
MEDIAN_COARSE = Misconception(
    "median-latency-coarse-search", "The median (p50) latency held to 16 s, over slot counts in multiples of "
    "8, where the target is on the 99th percentile: the slowest requests wait far longer than the typical "
    "one.", "07", _COST, "Read latency_percentile_steps(99), then multiply by the step time.")


def _slots_wrong() -> dict:
    full = get_accelerator("H100 SXM").mem_capacity - weight_bytes("Llama 3 8B", "bf16")
    return {**_slots_model_wrong(), LESSON_SLOTS: 32,
            FREE_MEMORY_FOR_KV: int(full // _kv_per_slot()),
            GIB_FOR_GB: int(40 * 2 ** 30 // _kv_per_slot()),
            CACHE_AT_DEFAULT_CONTEXT: int(TASK_KV_BUDGET_BYTES // (
                inspect.signature(decode_step).parameters["context_tokens"].default
                * get_model("Llama 3 8B").kv_bytes_per_token("bf16")))}


CACHE_AT_DEFAULT_CONTEXT = Misconception(
    "cache-sized-at-default-context", "Each slot's cache sized at decode_step's default context of 1024 "
    "tokens: a slot must hold the longest request the service allows, 2048 tokens.", "07", _KV,
    "Size one slot's cache at the task's 2048 tokens before you divide the 40 GB budget.")


# --- 07.8 (diagnose, then design): the cheapest deployment from a profile --------------------

DEPLOY_PRICE, DEPLOY_TARGET_S, DEPLOY_ACCELERATOR = 3.0, 0.020, "H100 SXM"
DEPLOY_DEVICES, DEPLOY_PROFILED_ON = (2, 4, 8), 4
# The task's profile of a 70B model (Llama 3 70B's weights and 4096-token cache in BF16) on four
# H100 SXMs: batch -> (seconds per step, bytes per GPU). About 89 % of the rated bandwidth; the
# course's tests check it against decode_step.
DEPLOY_PROFILE = {8: (12.6e-3, 38.0e9), 40: (16.2e-3, 48.7e9)}


def _deploy_rates() -> tuple:
    """(fixed s, s per sequence, fixed bytes, bytes per sequence), per GPU on the profiled GPUs."""
    (b1, (t1, m1)), (b2, (t2, m2)) = sorted(DEPLOY_PROFILE.items())
    t_seq, m_seq = (t2 - t1) / (b2 - b1), (m2 - m1) / (b2 - b1)
    return t1 - b1 * t_seq, t_seq, m1 - b1 * m_seq, m_seq


@functools.lru_cache(maxsize=None)
def _deploy_costs(latency=True, price_devices=True, fixed_part=True, fixed_scaled=True, memory=True,
                  inverted=False, devices=DEPLOY_DEVICES, priced_as=None) -> dict:
    """{n_devices: $ per million tokens of the largest batch that fits (and meets the target)}
    (the flags other than their defaults: known mistakes)."""
    t_fixed, t_seq, m_fixed, m_seq = _deploy_rates()
    if not fixed_part:                               # time taken proportional to the batch
        t_seq, t_fixed = t_seq + t_fixed / max(DEPLOY_PROFILE), 0.0
    capacity = get_accelerator(DEPLOY_ACCELERATOR).mem_capacity
    costs = {}
    for n in devices:
        scale = DEPLOY_PROFILED_ON / n                 # the same bytes over n GPUs
        if inverted:                                   # a known mistake: more GPUs taken as slower
            scale = 1 / scale
        batch = math.floor((capacity / scale - m_fixed) / m_seq) if memory else 10 ** 9
        if latency:
            batch = min(batch, math.floor((DEPLOY_TARGET_S / scale - t_fixed) / t_seq) if fixed_scaled
                        else math.floor((DEPLOY_TARGET_S - t_fixed) / (scale * t_seq)))
        if batch >= 1:
            step_s = scale * (t_fixed + batch * t_seq) if fixed_scaled else t_fixed + scale * batch * t_seq
            paid = (priced_as or n) if price_devices else 1
            costs[n] = cost_per_million_tokens_usd(batch / step_s, DEPLOY_PRICE, paid)
    if not costs:
        raise RuntimeError("07.8: no deployment meets the constraints")
    return costs


def _cheapest_deployment() -> float:
    return min(_deploy_costs().values())


FEWEST_GPUS = Misconception(
    "fewest-gpus-cheapest", "The fewest GPUs that meet the target taken to be the cheapest: more GPUs "
    "read the weights faster, so within 20 ms a step serves many more sequences, and each token can "
    "cost less even though every GPU is paid.", "07", _COST,
    "Find the best batch for each number of GPUs, 2, 4 and 8, and compare their dollars per million tokens.")
LATENCY_IGNORED = Misconception(
    "latency-target-ignored", "The largest batch that fits memory, whatever its step time: a larger "
    "batch is cheaper per token but each step is slower, and the 20 ms target caps it first.", "07", _COST,
    "At the largest batch that fits, how long does a step take? Compare it with 20 ms.")
ONE_DEVICE_PRICE = Misconception(
    "one-device-price", "The price of one GPU charged for a deployment of several: every GPU of it "
    "is paid by the hour.", "07", _COST, "A deployment of n GPUs costs n x $3.00 per hour.")
NO_FIXED_PART = Misconception(
    "step-time-proportional-to-batch", "A step's time taken to be proportional to the batch: most of "
    "it is the weights, read once per step whatever the batch; only the cache grows with it.", "07",
    _DECODE, "From the two profiled batches, find the time one more sequence adds, and what is left at "
    "batch 0.")


RATED_NOT_PROFILED = Misconception(
    "rated-bandwidth-not-profiled", "The catalog's rated bandwidth (Llama 3 70B through decode_step) "
    "where a profile was given: the deployment's kernels sustain less, so each step takes longer and "
    "fewer sequences meet 20 ms.", "07", _DECODE,
    "Take the fixed part and the part per sequence from the two profiled batches, not from the catalog.")


@functools.lru_cache(maxsize=None)
def _rated_cost() -> float:
    """The cheapest deployment with decode_step's rated rates for Llama 3 70B (the model the profile
    stands for): what a learner who ignores the profile finds."""
    costs = []
    for n in DEPLOY_DEVICES:
        best = None
        for b in range(1, 4096):
            step = decode_step("Llama 3 70B", DEPLOY_ACCELERATOR, b, 4096, "bf16", n)
            if not step.fits or step.t_step_s > DEPLOY_TARGET_S:
                break                                   # both grow with the batch
            best = cost_per_million_tokens_usd(step.tokens_per_s, DEPLOY_PRICE, n)
        if best is not None:
            costs.append(best)
    return min(costs)


def _min_cost(**mistake) -> float | None:
    try:
        return min(_deploy_costs(**mistake).values())
    except RuntimeError:                 # no deployment meets the constraints under that mistake
        return None


def _deployment_wrong() -> dict:
    costs = _deploy_costs()
    right = _cheapest_deployment()
    # the profiled deployment alone before the fewest GPUs: when 2 GPUs cannot meet the target, both
    # give the 4-GPU price, and keeping the profiled 4 is the likelier path to it
    wrong = {PROFILED_GPUS_ONLY: _min_cost(devices=(DEPLOY_PROFILED_ON,)),
             FEWEST_GPUS: costs[min(costs)],
             LATENCY_IGNORED: _min_cost(latency=False),
             ONE_DEVICE_PRICE: _min_cost(price_devices=False),
             NO_FIXED_PART: _min_cost(fixed_part=False),
             RATED_NOT_PROFILED: _rated_cost(),
             FIXED_PART_NOT_SCALED: _min_cost(fixed_scaled=False),
             MEMORY_IGNORED_DEPLOY: _min_cost(memory=False),
             MOST_GPUS: _min_cost(devices=(max(DEPLOY_DEVICES),)),
             SCALE_INVERTED: _min_cost(inverted=True),
             PRICED_AS_PROFILED: _min_cost(priced_as=DEPLOY_PROFILED_ON),
             LESSON_PRICE: min(_deploy_costs().values()) * EXAMPLE_PRICE_USD_PER_DEVICE_HOUR / DEPLOY_PRICE,
             OTHER_EXERCISE_PRICE: min(_deploy_costs().values()) * TASK_PRICE_USD_PER_DEVICE_HOUR / DEPLOY_PRICE,
             THROUGHPUT_PER_GPU: min(n * usd for n, usd in costs.items()),
             PER_TOKEN: right / 1e6}
    # a mistake whose rule does not bind with this profile gives the answer: nothing to name
    return {k: v for k, v in wrong.items() if v is not None and abs(v - right) > 1e-9 * right}


OTHER_EXERCISE_PRICE = Misconception(
    "price-of-exercise-07-3", "07.3's price, $3.10 per GPU-hour, where this task rents its GPUs at $3.00: the "
    "cost per token is proportional to the price.", "07", _COST, "Use this task's price, $3.00 per GPU per hour.")
THROUGHPUT_PER_GPU = Misconception(
    "throughput-per-gpu-priced-for-all", "Each GPU's share of the tokens priced with all n GPUs: "
    "cost_per_million_tokens_usd takes the deployment's whole throughput, batch / step time, and its n GPUs; "
    "dividing the tokens by n as well counts the GPUs twice.", "07", _COST,
    "Pass the whole deployment's tokens per second and n_devices=n.")


PRICED_AS_PROFILED = Misconception(
    "priced-as-four-gpus", "Every deployment priced as the profile's four GPUs: a deployment of n GPUs "
    "pays for n of them, so 8 GPUs cost twice as much per hour and 2 GPUs half.", "07", _COST,
    "Pass each deployment's own GPU count as n_devices to cost_per_million_tokens_usd.")
FIXED_PART_NOT_SCALED = Misconception(
    "fixed-part-not-scaled", "The fixed part of the step (the read of the weights) kept at the 4-GPU "
    "profile's value on 2 and 8 GPUs, only the part per sequence scaled: on n GPUs each one reads 1/n of "
    "the weights, so the fixed part scales by 4 / n too.", "07", _DECODE,
    "Scale the whole step, t_fixed + batch x t_seq, by 4 / n, and the memory likewise.")
PROFILED_GPUS_ONLY = Misconception(
    "profiled-deployment-only", "The 4-GPU deployment of the profile diagnosed and priced alone: the task "
    "asks for the cheapest of 2, 4 and 8 GPUs, and each has its own best batch and price.", "07", _COST,
    "Repeat the search for 2 and for 8 GPUs, with time and memory per GPU scaled by 4 / n.")
MEMORY_IGNORED_DEPLOY = Misconception(
    "deployment-memory-ignored", "The largest batch within 20 ms whether or not its cache fits: on few "
    "GPUs the weights leave little memory for the cache, and 80 GB per GPU caps the batch first.", "07",
    _KV, "At your batch, compute the memory per GPU from the profile's two points, scaled by 4 / n, "
    "against 80 GB.")
MOST_GPUS = Misconception(
    "most-gpus-cheapest-deployment", "The most GPUs taken to be the cheapest: each step is faster, but every GPU is "
    "paid, and past a point the batch is capped by the 20 ms target, not the memory.", "07", _COST,
    "Find the best batch for each number of GPUs, 2, 4 and 8, and compare their dollars per million tokens.")
SCALE_INVERTED = Misconception(
    "gpu-scaling-inverted", "The profile scaled by n / 4 where it is 4 / n: on more GPUs each one holds "
    "and reads a smaller share of the same bytes, so its step and its memory shrink.", "07", _DECODE,
    "On n GPUs the bytes per GPU are the 4-GPU profile's times 4 / n.")


# --- 07.9 (what-if): how much faster must the HBM be for FP8 to overtake INT4 weights ----------

_QUANTIZE = "7. What quantization and GQA buy"
SCHEME_CHOICES = ("int8 weights", "int4 weights", "fp8")
SCHEME_MODEL, SCHEME_ACCELERATOR, SCHEME_CONTEXT, SCHEME_TARGET_S = "Llama 3 70B", "H200", 4096, 0.020
SCHEME_GRID_TBS = 0.01               # 07.9: bandwidths are multiples of 0.01 TB/s ...
SCHEME_SEARCH_TBS = (4.80, 10.00)    # ... searched from the H200's own 4.80 TB/s up to 10 TB/s


def _h200_with(bandwidth_tbs=None):
    """The H200 of the catalog, with its HBM bandwidth replaced by ``bandwidth_tbs`` TB/s (None: as is)."""
    acc = get_accelerator(SCHEME_ACCELERATOR)
    return acc if bandwidth_tbs is None else dataclasses.replace(acc, mem_bandwidth=bandwidth_tbs * 1e12)


@functools.lru_cache(maxsize=None)
def _scheme_serving(precision: str, latency: bool = True, bandwidth_tbs=None, context=SCHEME_CONTEXT,
                    memory: bool = True) -> tuple:
    """(batch, tokens per second) of the largest batch that fits (and, with ``latency``, meets
    the step target) for one scheme on the H200 with ``bandwidth_tbs``; (0, 0.0) when none does
    (``memory`` False: the batch not capped by memory, a known mistake)."""
    acc = _h200_with(bandwidth_tbs)
    cap = max_batch(SCHEME_MODEL, acc, context, precision) if memory else 4096
    best = (0, 0.0)
    for b in range(1, cap + 1):          # step time grows with the batch: stop at the first miss
        step = decode_step(SCHEME_MODEL, acc, b, context, precision)
        if latency and step.t_step_s > SCHEME_TARGET_S:
            break
        best = (b, step.tokens_per_s)
    return best


def _best_scheme(latency: bool = True, bandwidth_tbs=None) -> str:
    rates = {p: _scheme_serving(p, latency, bandwidth_tbs)[1] for p in SCHEME_CHOICES}
    return max(rates, key=rates.get)


def _fp8_keeps_up(bandwidth_tbs, latency=True, context=SCHEME_CONTEXT, int4_today=False, memory=True,
                  strictly=False) -> bool:
    """FP8 level with or ahead of INT4 weights at ``bandwidth_tbs`` (``int4_today``: INT4 kept at the
    H200's own bandwidth; ``memory`` False: batches not capped by memory; ``strictly``: FP8 ahead,
    not level: known mistakes)."""
    fp8 = _scheme_serving("fp8", latency, bandwidth_tbs, context, memory)[1]
    int4 = _scheme_serving("int4 weights", latency, None if int4_today else bandwidth_tbs, context, memory)[1]
    return fp8 > int4 if strictly else fp8 >= int4


def _grid(tbs) -> float:
    return round(round(tbs / SCHEME_GRID_TBS) * SCHEME_GRID_TBS, 2)


@functools.lru_cache(maxsize=None)
def _fp8_overtakes_tbs(latency: bool = True, context=SCHEME_CONTEXT, **mistake) -> float:
    """Smallest bandwidth on the 0.01 TB/s grid at which FP8 serves at least as many tokens per
    second as INT4 weights (bisection; the tests check by a scan that the switch happens once).
    ``mistake``: _fp8_keeps_up's known mistakes (nan when FP8 then never catches up)."""
    keeps_up = functools.partial(_fp8_keeps_up, latency=latency, context=context, **mistake)
    lo, hi = (round(x / SCHEME_GRID_TBS) for x in SCHEME_SEARCH_TBS)
    if keeps_up(_grid(lo * SCHEME_GRID_TBS)):
        return _grid(lo * SCHEME_GRID_TBS)
    if not keeps_up(_grid(hi * SCHEME_GRID_TBS)):
        if mistake:
            return float("nan")
        raise RuntimeError("07.9: FP8 must overtake INT4 weights below 10 TB/s")
    while hi - lo > 1:                   # fp8 behind at lo, level or ahead at hi
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if keeps_up(_grid(mid * SCHEME_GRID_TBS)) else (mid, hi)
    return _grid(hi * SCHEME_GRID_TBS)


@functools.lru_cache(maxsize=None)
def _fp8_overtakes_coarse(step_tbs=0.1) -> float:
    """The first bandwidth on a coarser grid, from the H200's own up in steps of ``step_tbs``, at
    which FP8 keeps up: the answer of a sweep on the wrong grid (a known mistake)."""
    start = get_accelerator(SCHEME_ACCELERATOR).mem_bandwidth / 1e12
    for k in range(0, 200):
        tbs = round(start + k * step_tbs, 2)
        if tbs > SCHEME_SEARCH_TBS[1]:
            break
        if _fp8_keeps_up(tbs):
            return tbs
    return float("nan")


def _fractional_batch_tbs() -> float:
    """The crossover if batches could be fractional: each scheme fills the 20 ms step exactly, so
    both serve (bandwidth x 20 ms - weights) / cache per sequence; solved for the bandwidth."""
    one = {p: decode_step(SCHEME_MODEL, SCHEME_ACCELERATOR, 1, SCHEME_CONTEXT, p) for p in ("fp8", "int4 weights")}
    w8, k8 = one["fp8"].weight_bytes, one["fp8"].kv_bytes
    w4, k4 = one["int4 weights"].weight_bytes, one["int4 weights"].kv_bytes
    step_bytes = (w8 * k4 - w4 * k8) / (k4 - k8)            # (X - w4) / k4 = (X - w8) / k8
    return _grid(math.ceil(step_bytes / SCHEME_TARGET_S / 1e12 / SCHEME_GRID_TBS - 1e-9) * SCHEME_GRID_TBS)


SCHEME_LATENCY_IGNORED = Misconception(
    "largest-batch-scheme", "The batch taken as the largest that fits: FP8 halves the cache and fits "
    "the most sequences, so it already wins at the H200's own bandwidth. Here the 20 ms promise caps "
    "the batch first, and every step reads all the weights whatever the batch.", "07", _COST,
    "For each scheme the batch is the largest whose step meets 20 ms and that fits; find it at the "
    "H200's own bandwidth first and see which scheme wins there.")
FRACTIONAL_BATCH = Misconception(
    "fractional-batch", "The crossover solved with fractional batches (each scheme fills the 20 ms "
    "step exactly): a batch is a whole number of sequences, and the rounding down moves the crossover.",
    "07", _DECODE, "Round each scheme's batch down to a whole number at your bandwidth, and compare "
    "tokens per second (batch / step time) again.")


BATCH_LINEAR_IN_BANDWIDTH = Misconception(
    "batch-linear-in-bandwidth", "Each scheme's batch taken to grow in proportion to the bandwidth: "
    "every step first reads all the weights, a fixed cost, and only the bandwidth left after them buys "
    "sequences of cache, so the scheme with the smaller weights gains less from it.", "07", _DECODE,
    "Write one 20 ms step's bytes as weights + batch x cache per sequence, and solve for the batch at "
    "a new bandwidth.")


@functools.lru_cache(maxsize=None)
def _linear_batch_tbs() -> float:
    """The crossover if each scheme's batch at the H200's own bandwidth grew in proportion to the
    bandwidth (up to what fits): the fixed read of the weights left out."""
    base_tbs = get_accelerator(SCHEME_ACCELERATOR).mem_bandwidth / 1e12
    base = {p: _scheme_serving(p)[0] for p in ("fp8", "int4 weights")}
    lo, hi = (round(x / SCHEME_GRID_TBS) for x in SCHEME_SEARCH_TBS)
    for step in range(lo, hi + 1):
        acc = _h200_with(_grid(step * SCHEME_GRID_TBS))
        rate = {}
        for p, b0 in base.items():
            batch = min(max_batch(SCHEME_MODEL, acc, SCHEME_CONTEXT, p), math.floor(b0 * acc.mem_bandwidth / 1e12 / base_tbs))
            rate[p] = decode_step(SCHEME_MODEL, acc, batch, SCHEME_CONTEXT, p).tokens_per_s
        if rate["fp8"] >= rate["int4 weights"]:
            return _grid(step * SCHEME_GRID_TBS)
    return float("nan")


SCHEME_CONTEXT_DEFAULT = Misconception(
    "scheme-context-left-at-default", "decode_step called without the task's 4096-token context, so it "
    "used its default: every sequence's cache is sized by its context, and with a shorter one the cache "
    "weighs less against the weights.", "07", _DECODE,
    "Pass the task's context as context_tokens to decode_step and max_batch, at every bandwidth you try.")
INCREASE_FOR_BANDWIDTH = Misconception(
    "increase-for-bandwidth", "The increase over the H200's own bandwidth where the bandwidth itself was "
    "asked: the task wants the HBM bandwidth at which FP8 catches up, in TB/s.", "07", _DECODE,
    "Answer the bandwidth you would set with dataclasses.replace, not how much it adds.")


def _scheme_wrong() -> dict:
    right = _fp8_overtakes_tbs()
    # the default context first: it lands on the H200's own bandwidth, where ignoring the 20 ms
    # target lands too, and the task states its context.
    wrong = {SCHEME_CONTEXT_DEFAULT: _fp8_overtakes_tbs(context=inspect.signature(decode_step)
                                                        .parameters["context_tokens"].default),
             SCHEME_LATENCY_IGNORED: _fp8_overtakes_tbs(latency=False),
             INCREASE_FOR_BANDWIDTH: _grid(right - get_accelerator(SCHEME_ACCELERATOR).mem_bandwidth / 1e12),
             FRACTIONAL_BATCH: _fractional_batch_tbs(),
             BATCH_LINEAR_IN_BANDWIDTH: _linear_batch_tbs(),
             INT4_AT_TODAYS_BANDWIDTH: _fp8_overtakes_tbs(int4_today=True),
             COARSE_BANDWIDTH_GRID: _fp8_overtakes_coarse(),
             SCHEME_MEMORY_IGNORED: _fp8_overtakes_tbs(memory=False),
             FP8_STRICTLY_AHEAD: _fp8_overtakes_tbs(strictly=True), **_scheme_more()}
    return {k: v for k, v in wrong.items() if math.isfinite(v) and abs(v - right) > SCHEME_GRID_TBS / 2}


FP8_STRICTLY_AHEAD = Misconception(
    "fp8-strictly-ahead", "FP8 required to serve more tokens per second than INT4 weights, where the task "
    "asks for at least as many: at the smallest such bandwidth the two may be level.", "07", _DECODE,
    "Compare with >=, FP8's tokens per second against INT4's, at each bandwidth.")
INT4_AT_TODAYS_BANDWIDTH = Misconception(
    "int4-kept-at-todays-bandwidth", "FP8 on the faster HBM compared with INT4 weights on today's H200: "
    "the faster memory serves both schemes, and INT4's steps speed up too.", "07", _DECODE,
    "At each bandwidth you try, build one accelerator and serve both schemes on it.")
COARSE_BANDWIDTH_GRID = Misconception(
    "bandwidth-grid-too-coarse", "The bandwidth swept in steps of 0.1 TB/s where the task's grid is 0.01: "
    "the first coarse step that wins overshoots the smallest bandwidth that does.", "07", _DECODE,
    "Sweep (or bisect) on multiples of 0.01 TB/s, and check that 0.01 TB/s less loses.")
SCHEME_MEMORY_IGNORED = Misconception(
    "scheme-memory-ignored", "Each scheme's batch taken as the largest that meets 20 ms whether or not it "
    "fits: the weights and every sequence's cache must fit in the H200's 141 GB too.", "07", _DECODE,
    "Cap each scheme's batch with max_batch at the same context and bandwidth as well as by the 20 ms.")


# --- Round 26h (fix-h2): more of the long tail, each computed with the one mistake ------------

def _h(key, text, section, hint) -> Misconception:
    return Misconception(key, text, "07", section, hint)


TOKENS_BILLIONS_FOR_TRILLIONS = _h(
    "tokens-billions-for-trillions", "The training tokens read in billions where the task gives trillions "
    "(10^12): the time follows the tokens, a thousand times off.", _TRAINING,
    "Write the tokens with their power of ten: a trillion is 1e12.")
YEARS_FOR_DAYS = _h("years-for-days", "The time in years where days were asked.", _TRAINING,
                    "Convert seconds to days in one step: a day has 86,400 seconds.")
WEEKS_FOR_DAYS = _h("weeks-for-days", "The time in weeks where days were asked.", _TRAINING,
                    "Convert seconds to days in one step: a day has 86,400 seconds.")
MINUTES_FOR_DAYS = _h("minutes-for-days", "The time in minutes where days were asked.", _TRAINING,
                      "Convert seconds to days in one step: a day has 86,400 seconds.")
UTILIZATION_MULTIPLIED = _h(
    "utilization-multiplied-into-time", "The utilization multiplied into the time where it divides it: a run "
    "that sustains a fraction u of the peak takes 1 / u times as long as one at the peak.", _TRAINING,
    "t = 6 N D / (u x peak x G): u is in the denominator, with the peak.")
UTILIZATION_PERCENT = _h(
    "utilization-as-percent", "The utilization written as a percentage (35) where the formula takes a "
    "fraction (0.35).", _TRAINING, "Write u as a fraction of the peak, between 0 and 1.")
EIGHT_ND = _h(
    "eight-flop-with-recomputation", "8 N D, the count with full activation recomputation (a second forward "
    "pass), where the task's formula is 6 N D.", _TRAINING, "Use the task's C = 6 N D.")


def _training_days_more(model, tokens, accelerator, gpus) -> dict:
    params = get_model(model).params
    peak = get_accelerator(accelerator).peak("bf16")

    def days(flop_per=6, n_tokens=tokens, u=0.35, into=False):
        return flop_per * params * n_tokens * (u if into else 1 / u) / (peak * gpus) / 86400
    right = days()
    return {TOKENS_BILLIONS_FOR_TRILLIONS: days(n_tokens=tokens / 1e3), YEARS_FOR_DAYS: right / 365,
            WEEKS_FOR_DAYS: right / 7, MINUTES_FOR_DAYS: right * 24 * 60,
            UTILIZATION_MULTIPLIED: days(into=True), UTILIZATION_PERCENT: days(u=35.0),
            EIGHT_ND: days(flop_per=8)}


BATCH_COUNTED_TWICE = _h(
    "batch-counted-twice", "tokens_per_s multiplied by the batch again: decode_step's tokens_per_s is "
    "already the whole batch's, batch / step time.", _COST, "Use step.tokens_per_s as it is.")
PER_THOUSAND = _h("per-thousand-tokens", "Dollars per thousand tokens where dollars per million were asked: a unit slip, "
                  "the formula is right.",
                  _COST, "Multiply the cost per token by 1e6.")
CENTS_FOR_DOLLARS = _h("cents-for-dollars", "Cents where dollars were asked.", _COST,
                       "Keep the price in dollars per hour, 3.10, from start to finish.")
STEP_IN_MS = _h(
    "step-time-in-ms-as-seconds", "The step time in milliseconds used as seconds: the price per second times "
    "the step's seconds is what one step costs.", _COST, "Use step.t_step_s, in seconds.")
MILLION_AS_BINARY = _h(
    "million-as-two-to-the-twenty", "A million taken as 2^20 tokens: a million is 10^6.", _COST,
    "Multiply the cost per token by 1e6.")


def _usd_per_million_more() -> dict:
    step = decode_step("Mistral 7B", "H200", 64, 3000, "fp8")
    price = TASK_PRICE_USD_PER_DEVICE_HOUR
    right = cost_per_million_tokens_usd(step.tokens_per_s, price)
    return {BATCH_COUNTED_TWICE: cost_per_million_tokens_usd(step.tokens_per_s * step.batch, price),
            PER_THOUSAND: right / 1e3, CENTS_FOR_DOLLARS: right * 100,
            STEP_IN_MS: price / 3600 * (step.t_step_s * 1e3) / step.batch * 1e6,
            MILLION_AS_BINARY: right / 1e6 * 2 ** 20}


ONE_PAST_FIRST = _h(
    "one-batch-past-the-first", "One batch past the first compute-bound one: ceil of the crossover is already "
    "the first whole batch past it; adding 1 (or floor + 1 at a whole crossover) overshoots.", _DECODE,
    "Check your batch and the one before it with decode_step(...).bound.")
CACHE_LEFT_OUT_CROSSOVER = _h(
    "kv-cache-left-out-of-crossover", "The crossover worked out from the weights alone, as if the sequences "
    "held no cache: every sequence also reads its 100 tokens of KV cache each step, which adds bytes and "
    "pushes the crossover up.", _DECODE, "Pass the context, 100 tokens, to crossover_batch or decode_step.")


def _first_batch_more() -> dict:
    right = _first_compute_bound_batch()
    bare = crossover_batch("Llama 3 8B", "B200", 0, "int8 weights")
    found = {ONE_PAST_FIRST: right + 1,
             CACHE_LEFT_OUT_CROSSOVER: math.ceil(bare) if math.isfinite(bare) else None}
    return {k: v for k, v in found.items() if v is not None and v != right}


KV_BITS = _h("kv-bits-not-bytes", "Bits where bytes were asked: bytes_per_element is already in bytes.", _KV,
             "Do not multiply by 8: the function returns bytes.")
KV_ONE_TOKEN_SHORT = _h(
    "kv-one-token-short", "context_tokens - 1 tokens per sequence: every token of the context is cached, "
    "context_tokens of them.", _KV, "Multiply one token's cache by context_tokens.")
KV_MB = _h("kv-mb-not-bytes", "MB (10^6 bytes) where bytes were asked: the function returns bytes.", _KV,
           "Return the bytes themselves, without dividing.")
KV_MIB = _h("kv-mib-not-bytes", "MiB (2^20 bytes) where bytes were asked: the function returns bytes.", _KV,
            "Return the bytes themselves, without dividing.")
KV_KIB = _h("kv-kib-not-bytes", "KiB (1024 bytes) where bytes were asked: the function returns bytes.", _KV,
            "Return the bytes themselves, without dividing.")
KV_BYTES_TRUNCATED = _h(
    "kv-bytes-per-element-truncated", "bytes_per_element made an integer (int()), so an INT4 cache of half a "
    "byte per value counts 0: the element size may be a fraction.", _KV,
    "Use bytes_per_element as a float, as given.")
KV_BYTES_ROUNDED_UP = _h(
    "kv-bytes-per-element-rounded-up", "bytes_per_element rounded up to a whole byte, so an INT4 cache counts "
    "1 byte per value: two 4-bit values share a byte.", _KV, "Use bytes_per_element as given, 0.5 for INT4.")


def _kv_more() -> dict:
    def total(tokens=lambda t: t, scale=1.0, width=lambda b: b):
        def kv_total(layers, kv_heads, head_dim, b, context, batch):
            return 2 * layers * kv_heads * head_dim * width(b) * tokens(context) * batch * scale
        return kv_total
    return {KV_BITS: total(scale=8), KV_ONE_TOKEN_SHORT: total(tokens=lambda t: t - 1),
            KV_MB: total(scale=1e-6), KV_MIB: total(scale=2.0 ** -20), KV_KIB: total(scale=2.0 ** -10),
            KV_BYTES_TRUNCATED: total(width=int), KV_BYTES_ROUNDED_UP: total(width=math.ceil)}


RATIO_OUTSIDE_ROOT = _h(
    "tokens-per-param-outside-the-root", "sqrt(C / 6) divided by 20: the 20 of D = 20 N sits under the square "
    "root with the 6, since C = 6 x 20 x N^2.", _TRAINING, "Solve C = 120 N^2: N = sqrt(C / 120).")
PARAMS_IN_MILLIONS = _h("parameters-in-millions", "Millions of parameters where the count itself was asked.",
                        _TRAINING, "Store N itself, not N / 1e6.")


def _chinchilla_more() -> dict:
    c = TASK_BUDGET_FLOPS
    right = compute_optimal(c, 20).params
    return {RATIO_OUTSIDE_ROOT: math.sqrt(c / 6) / 20, EIGHT_ND: math.sqrt(c / (8 * 20)),
            PARAMS_IN_MILLIONS: right / 1e6}


TBS_AS_GBS = _h("bandwidth-in-gb-per-s", "GB/s where TB/s were asked.", _DECODE,
                "Answer in TB/s: the H200's own bandwidth is 4.8 of them.")
TBS_AS_BYTES = _h("bandwidth-in-bytes-per-s", "Bytes per second (mem_bandwidth's unit) where TB/s were asked.",
                  _DECODE, "Divide mem_bandwidth by 1e12 for TB/s.")


def _scheme_more() -> dict:
    right = _fp8_overtakes_tbs()
    return {TBS_AS_GBS: right * 1e3, TBS_AS_BYTES: right * 1e12}


EXERCISES = [
    ChoiceExercise(
        "07.1", expected=_bound_70b_on_four_h200, choices=("memory", "compute"),
        wrong_answers=_bound_70b_wrong, concepts=("decode-bound",),
        form='a string, "memory" or "compute"',
        hints=("A decode step moves all weights plus every sequence's KV cache, and does about 2 FLOP "
               "per weight per sequence plus a few FLOP per cached byte.",
               "Compare the step's FLOP per byte with the H200's ridge point; splitting over four "
               "devices divides FLOP and bytes alike.",
               "decode_step('Llama 3 70B', 'H200', 32, 2048, 'bf16', n_devices=4).bound")),
    ValueExercise(
        "07.2", expected=_training_days, rel_tol=1e-3,
        wrong_answers=_with_generated(_training_days_wrong, _training_days, _training_days_slips, _replayed(_training_days, "07"), rel_tol=1e-3),
        variants=_TRAINING_VARIANTS, concepts=("training-compute",),
        form="a float: days (not seconds, not hours) to train {model} on {gpus} {accelerator} GPUs",
        hints=("t = 6 N D / (u * peak * G) gives seconds.",
               "N is get_model('{model}').params; the peak is the {accelerator}'s dense BF16 rate.",
               "Divide seconds by 86400 to get days.")),
    ValueExercise(
        "07.3", quantity=("unit", "time"), expected=_usd_per_million_mistral, rel_tol=1e-3,
        wrong_answers=_with_generated(_usd_per_million_wrong, _usd_per_million_mistral, _usd_per_million_slips, _replayed(_usd_per_million_mistral, "07"),
                                     rel_tol=1e-3),
        concepts=("serving-cost",),
        form="a float: US dollars per million generated tokens",
        hints=("First find tokens per second: batch / (time of one decode step).",
               "decode_step('Mistral 7B', 'H200', 64, 3000, 'fp8') has tokens_per_s.",
               "Dollars per million tokens = price per hour / 3600 / (tokens per second) * 1e6.")),
    ValueExercise(
        "07.4", expected=_first_compute_bound_batch, rel_tol=0.0, abs_tol=0.0,
        wrong_answers=_with_generated(_first_batch_wrong, _first_compute_bound_batch, _first_batch_slips),
        concepts=("decode-bound",),
        form="an integer: the smallest whole batch size that is compute-bound (exact; round the "
             "crossover up)",
        hints=("A step is compute-bound when its FLOP time reaches its memory time; both grow with the batch.",
               "Sweep b = 1, 2, 3, ... with decode_step(...).bound, or solve crossover_batch and round up.",
               "With int8 weights the matmuls still run at the 16-bit rate: the weights are cheaper to "
               "read, the FLOP are not.")),
    FunctionExercise(
        "07.5", reference=_kv_reference, make_cases=_kv_cases, rel_tol=1e-12,
        wrong_implementations=_kv_wrong, concepts=("kv-cache",),
        form="a function kv_cache_total_bytes(layers, kv_heads, head_dim, bytes_per_element, "
             "context_tokens, batch) returning bytes (a number)",
        hints=("Each layer stores a key and a value vector per KV head for every token.",
               "One token's cache is 2 x layers x kv_heads x head_dim x bytes_per_element.",
               "Multiply by the tokens of one sequence and by the number of sequences: it is linear "
               "in both, and query heads do not appear.")),
    ValueExercise(
        "07.6", expected=_chinchilla_params, rel_tol=1e-3,
        wrong_answers=_with_generated(_chinchilla_wrong, _chinchilla_params, _replayed(_chinchilla_params, "07"), rel_tol=1e-3), concepts=("training-compute",),
        form="a float: the number of parameters N (not billions)",
        hints=("Two equations: C = 6 N D, and D = 20 N.",
               "Substitute D: C = 6 x 20 x N^2, then solve for N.",
               "N = sqrt(C / 120); check it by computing 6 N (20 N).")),
    DecisionExercise(
        "07.7", expected=_a_valid_slot_count, judge=_judge_slots, abs_tol=0.0, rel_tol=0.0,
        wrong_answers=_slots_wrong, concepts=("kv-cache", "serving-cost"),
        form="an integer: a number of slots that meets both the 40 GB cache budget and the 16 s p99 target",
        hints=("Two constraints pull opposite ways: the cache caps the slots from above; queueing at few "
               "slots, and slower steps at many, push the p99 latency up.",
               "The cap: 40e9 / (2048 x the KV bytes per token). Then simulate each slot count below it "
               "(arrival steps = floor(arrival_s / step_s), with step_s from decode_step at that batch).",
               "Keep every count whose p99 (steps x step_s) is at most 16 s; any of them is a valid answer.")),
    ValueExercise(
        "07.8", quantity=("unit", "time"), expected=_cheapest_deployment, rel_tol=5e-4, wrong_answers=_with_generated(_deployment_wrong, _cheapest_deployment, _replayed(_cheapest_deployment, "07"), rel_tol=5e-4),
        concepts=("serving-cost", "decode-bound", "kv-cache"),
        form="a float: dollars per million generated tokens of the cheapest deployment (2, 4 or 8 GPUs, "
             "any whole batch) whose weights and cache fit and whose decode step takes at most 20 ms",
        hints=("The profile is two points on two straight lines, the step time and the memory per GPU "
               "against the batch. What does the part left at batch 0 stand for, and what does the slope?",
               "On n GPUs the same bytes are shared by n: time and memory per GPU scale by 4 / n. For each "
               "GPU count, find the largest batch that meets both the 20 ms target and the memory, then "
               "price it with all of that deployment's GPUs.",
               "Sanity check: one sequence more than your batch must break a constraint; note which one. "
               "If it is always the memory, you have not applied the 20 ms target.")),
    ValueExercise(
        "07.9", quantity="data", expected=_fp8_overtakes_tbs, rel_tol=0.0, abs_tol=SCHEME_GRID_TBS / 2,
        wrong_answers=_scheme_wrong, concepts=("decode-bound", "kv-cache"),
        form="a float: the HBM bandwidth in TB/s, a multiple of 0.01, the smallest at which 'fp8' serves "
             "at least as many tokens per second as 'int4 weights' (batch fits, step at most 20 ms)",
        hints=("Each scheme shrinks different bytes: INT4 the weights only, FP8 the weights and the cache. "
               "At the H200's own bandwidth, what limits each scheme's batch, the memory or the promise?",
               "A 20 ms step may move bandwidth x 20 ms bytes: all the weights, then whole sequences of "
               "cache. The catalog's H200 is a dataclass: dataclasses.replace gives one with another "
               "mem_bandwidth, and decode_step accepts it.",
               "Sanity check: at your bandwidth FP8 is level or ahead, 0.01 TB/s less and INT4 is ahead; "
               "both batches are whole numbers and still fit in the 141 GB.")),
]
