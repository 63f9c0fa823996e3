"""Checks for lesson 08, beyond one chip (answers in solutions/08_beyond_one_chip.py).

Every expected value is computed from ``course_lib`` when a check runs; none is typed here.
"""

from __future__ import annotations

import functools
import inspect
import math
from dataclasses import fields, replace

import numpy as np

from course_lib.exercises.feedback import Misconception
from course_lib.exercises.types import ChoiceExercise, FunctionExercise, ValueExercise
from course_lib.economics import decode_step
from course_lib.exercises.decision import DecisionExercise, OptimumExercise
from course_lib.exercises.steps import _replayed
from course_lib.exercises.misconceptions import _dtype_widths, _other_accelerators, shared, _with_generated
from course_lib.sharing import mig_accelerator
from course_lib.collectives import collective_time_s, get_link, ring_all_reduce_link_bytes, simulate_ring_all_reduce
from course_lib.hardware import get_accelerator
from course_lib.parallelism import comm_hidden, tensor_parallel_bytes_per_gpu, zero_model_state_bytes

__all__ = ["EXERCISES"]


_LINKS = "1. The interconnect hierarchy"
_COLLECTIVES = "2. Collectives and their cost"
_ZERO = "4. Memory per GPU: ZeRO, recomputation, offloading"

NVLINK_ACROSS_NODES = Misconception(
    "nvlink-across-nodes", "NVLink's bandwidth across nodes: NVLink joins the GPUs of one node; "
    "between nodes the traffic crosses the network, far slower.", "08", _LINKS,
    "Eight GPUs on different nodes talk over get_link('H100 SXM', 'network').")
REDUCE_SCATTER_ONLY = Misconception(
    "reduce-scatter-only", "Only the reduce-scatter half of the ring: an all-reduce is a "
    "reduce-scatter followed by an all-gather.", "08", _COLLECTIVES,
    "A ring all-reduce sends 2 (n - 1) / n of the buffer, in 2 (n - 1) steps.")
WHOLE_BUFFER = Misconception(
    "whole-buffer-once", "S / beta, the whole buffer sent once, with no latency term: the ring "
    "sends 2 (n - 1) / n of it and pays alpha at every step.", "08", _COLLECTIVES,
    "Use 2 (n - 1) alpha + 2 (n - 1) / n * S / beta.")
TEXTBOOK_EVEN = Misconception(
    "chunks-assumed-even", "The textbook 2 (n - 1) / n S, as if n divided the buffer: uneven "
    "chunks load some links more than others.", "08", _COLLECTIVES,
    "Simulate the ring and take the busiest link.")
LEAST_LOADED = Misconception(
    "least-loaded-link", "The least-loaded link where the busiest was asked.", "08", _COLLECTIVES,
    "Take the maximum over the links, not the minimum.")
ELEMENTS = Misconception(
    "elements-not-bytes", "Elements where bytes were asked: each float32 is 4 bytes.", "08",
    _COLLECTIVES, "Multiply the element count by 4.")
ALL_LINKS = Misconception(
    "all-links-summed", "All links together where one link was asked.", "08", _COLLECTIVES,
    "Look at the links one by one and take the busiest.")
FLOAT64 = Misconception(
    "float64-for-float32", "8-byte (float64) values where the task's are float32: NumPy's default "
    "dtype is float64, but the buffer holds 4-byte floats.", "08", _COLLECTIVES,
    "Take the element size from the task: a float32 is 4 bytes.")
ZERO_STAGE_SHIFTED_DOWN = Misconception(
    "zero-stage-shifted-down", "ZeRO's stages shifted down by one, as if stage 1 sharded nothing: "
    "stage 1 already shards the optimizer state, stage 2 the gradients too, stage 3 the weights too.",
    "08", _ZERO, "Stage 0 shards nothing; stage s divides the first s kinds of state by dp.")
ZERO_STAGE_SHIFTED = Misconception(
    "zero-stage-shifted", "ZeRO's stages shifted by one: stage 1 shards the optimizer state, stage "
    "2 also the gradients, stage 3 also the weights.", "08", _ZERO,
    "Stage 0 shards nothing; each stage adds one kind of state to what is divided by dp.")


def _tp_verdict(tier) -> str:
    """8-way tensor parallelism, width 8192, 4096 tokens, H100 SXM at half of peak, over ``tier``:
    do one layer's forward all-reduces take less time than its forward matmuls, or more?"""
    h, t, tokens = 8192, 8, 4096
    flops = 24 * tokens * h * h / t                                     # one layer's forward matmuls
    comm = tensor_parallel_bytes_per_gpu(1, tokens, h, t) / 2           # its two forward all-reduces
    link = get_link("H100 SXM", tier)
    peak = get_accelerator("H100 SXM").peak("bf16")
    shorter = comm_hidden(flops, comm, peak, link.bandwidth_bytes_per_s, 0.5)
    return "less" if shorter else "more"


def _tp_across_nodes() -> str:
    return _tp_verdict("network")


def _tp_wrong() -> dict:
    right = _tp_verdict("network")
    wrong = {NVLINK_ACROSS_NODES: _tp_verdict("nvlink")}
    if right == "more":                  # the verdict of one who never divides bytes by the link's rate
        wrong[NETWORK_BY_HEADLINE] = "less"
    return wrong


NETWORK_BY_HEADLINE = Misconception(
    "network-judged-by-headline", "The network judged by its headline rate in bits: "
    f"{8 * get_link('H100 SXM', 'network').bandwidth_bytes_per_s / 1e9:.0f} Gb/s is "
    f"{get_link('H100 SXM', 'network').bandwidth_bytes_per_s / 1e9:.0f} GB/s, and only the all-reduces' "
    "time at that rate, set against the matmuls' time at the peak, decides.",
    "08", _LINKS, "Time both: the all-reduces' bytes over get_link('H100 SXM', 'network') against the "
    "matmuls' FLOP at the peak.")


RING_FRACTION_FORGOTTEN = Misconception(
    "ring-fraction-forgotten", "2 S / beta, the buffer sent twice, with no (n - 1) / n and no latency: "
    "each of the 2 (n - 1) steps sends one chunk of S / n, and pays alpha.", "08", _COLLECTIVES,
    "Use 2 (n - 1) alpha + 2 (n - 1) / n * S / beta.")
LATENCY_LEFT_OUT = Misconception(
    "ring-latency-left-out", "The bandwidth term alone: the alpha-beta model also pays the link's "
    "latency alpha at each of the ring's 2 (n - 1) steps, a small term but one the model names.", "08",
    _COLLECTIVES, "Add 2 (n - 1) alpha, with alpha the link's latency_s.")
BF16_FOR_FLOAT32 = Misconception(
    "bf16-for-float32", "2-byte values where the task's are float32, 4 bytes each.", "08", _COLLECTIVES,
    "Take the element size from the task: a float32 is 4 bytes.")
TEXTBOOK_ROUNDED = Misconception(
    "chunks-assumed-even-rounded", "The textbook 2 (n - 1) / n S rounded to whole bytes: it assumes even "
    "chunks; with 23 values on 6 ranks the chunks are uneven and the busiest link carries more.", "08",
    _COLLECTIVES, "Simulate the ring and take the busiest link.")


def _h200_all_reduce_ms() -> float:
    """Ring all-reduce of 13 B bf16 gradients over 8 H200s on NVLink, alpha-beta, in ms."""
    return collective_time_s("all_reduce", 2 * 13e9, 8, get_link("H200", "nvlink")) * 1e3


RING_N_NOT_N_MINUS_ONE = Misconception(
    "ring-steps-n-not-n-minus-1", "n steps (and a fraction 2 n / n = 2) where a ring of n ranks takes "
    "n - 1 steps in each half: a rank never sends its own chunk to itself.", "08", _COLLECTIVES,
    "Count the ring's steps for n = 2 by hand, then for n = 8.")

WHOLE_BUFFER_EACH_STEP = Misconception(
    "whole-buffer-every-ring-step", "The whole buffer S sent at every one of the ring's 2 (n - 1) steps: "
    "each step sends one chunk, S / n, so the ring as a whole sends 2 (n - 1) / n of S per link.", "08",
    _COLLECTIVES, "Each of the 2 (n - 1) steps costs alpha + (S / n) / beta.")
ONE_HALF_FULL_BUFFER = Misconception(
    "whole-buffer-every-step-one-half", "The whole buffer S sent at each of n - 1 steps, one half of the "
    "ring only: each step sends a chunk of S / n, and an all-reduce has two halves, reduce-scatter and "
    "all-gather, 2 (n - 1) steps.", "08", _COLLECTIVES, "Each of the 2 (n - 1) steps costs alpha + (S / n) / beta.")


def _all_reduce_slips() -> dict:
    """Another chip's link, another element width, or n ring steps where there are n - 1."""
    link = get_link("H200", "nvlink")
    nbytes, n = 2 * 13e9, 8

    def ms(links=link, grad_bytes=nbytes):
        return collective_time_s("all_reduce", grad_bytes, n, links) * 1e3
    return {RING_N_NOT_N_MINUS_ONE: (2 * n * link.latency_s + 2 * nbytes / link.bandwidth_bytes_per_s) * 1e3,
            ONE_HALF_FULL_BUFFER: (n - 1) * (link.latency_s + nbytes / link.bandwidth_bytes_per_s) * 1e3,
            **_dtype_widths(lambda b: ms(grad_bytes=13e9 * b), "08", _COLLECTIVES),
            **_other_accelerators(lambda name: ms(get_link(name, "nvlink")), "H200", "08", _LINKS)}


def _all_reduce_wrong() -> dict:
    link = get_link("H200", "nvlink")
    nbytes = 2 * 13e9
    both_ways = replace(link, bandwidth_bytes_per_s=2 * link.bandwidth_bytes_per_s)
    n = 8
    # The whole buffer at each of the 2 (n - 1) steps is n times the bytes of a chunk: with n = 8 it
    # gives what bits for bytes gives, and is named first (the likelier slip with a byte-rated link).
    return {WHOLE_BUFFER_EACH_STEP: 2 * (n - 1) * (link.latency_s + nbytes / link.bandwidth_bytes_per_s) * 1e3,
            shared("both-link-directions", "08", "Misconceptions"):
                collective_time_s("all_reduce", nbytes, 8, both_ways) * 1e3,
            REDUCE_SCATTER_ONLY: collective_time_s("reduce_scatter", nbytes, 8, link) * 1e3,
            WHOLE_BUFFER: nbytes / link.bandwidth_bytes_per_s * 1e3,
            RING_FRACTION_FORGOTTEN: 2 * nbytes / link.bandwidth_bytes_per_s * 1e3,
            # 0.05 % low, inside the tolerance: named because listed answers are looked for first
            LATENCY_LEFT_OUT: collective_time_s("all_reduce", nbytes, 8, replace(link, latency_s=0.0)) * 1e3,
            shared("fp32-bytes", "08", _COLLECTIVES): collective_time_s("all_reduce", 2 * nbytes, 8, link) * 1e3,
            shared("seconds-for-unit", "08", _COLLECTIVES): collective_time_s("all_reduce", nbytes, 8, link),
            shared("bits-for-bytes", "08", "Misconceptions"):
                collective_time_s("all_reduce", 8 * nbytes, 8, link) * 1e3,
            LINK_HALVED: collective_time_s("all_reduce", nbytes, 8, replace(
                link, bandwidth_bytes_per_s=link.bandwidth_bytes_per_s / 2)) * 1e3,
            **_all_reduce_more()}


LINK_HALVED = Misconception(
    "nvlink-bandwidth-halved-per-direction", "The catalog link's bandwidth halved, as if it counted both "
    "directions together: get_link gives NVLink's bandwidth per direction already, and each ring step "
    "sends one way on each link (only the host link's figure counts both).", "08", _COLLECTIVES,
    "Use get_link('H200', 'nvlink').bandwidth_bytes_per_s as it is.")


def _busiest_link_bytes() -> float:
    """Largest bytes over one link of a ring all-reduce of 23 float32 values on 6 ranks."""
    return float(ring_all_reduce_link_bytes(23, 6, 4).max())


def _busiest_link_wrong() -> dict:
    links = ring_all_reduce_link_bytes(23, 6, 4)
    n, size = 6, 23 * 4
    return {TEXTBOOK_EVEN: 2 * (n - 1) / n * size,
            TEXTBOOK_ROUNDED: float(math.ceil(2 * (n - 1) / n * size)),
            LEAST_LOADED: float(links.min()),
            ELEMENTS: float(links.max()) / 4,
            shared("bits-for-bytes", "08", "Misconceptions"): 8 * float(links.max()),
            FLOAT64: float(ring_all_reduce_link_bytes(23, 6, 8).max()),
            BF16_FOR_FLOAT32: float(ring_all_reduce_link_bytes(23, 6, 2).max()),
            ALL_LINKS: float(links.sum()),
            ONE_STEP: float(simulate_ring_all_reduce(np.zeros((n, 23), dtype=np.float32)).step_bytes.max()),
            # (the largest chunk at every step gives what one more value, 24, gives: the replay names that)
            **{k: v for k, v in {
                SMALLEST_CHUNK_EVERY_STEP: float(2 * (n - 1) * (23 // n) * 4),
                ONE_HALF_OF_THE_RING: float(ring_all_reduce_link_bytes(23, 6, 4).max()) / 2,
            }.items() if v != float(links.max())}, **_busiest_link_more()}


SMALLEST_CHUNK_EVERY_STEP = Misconception(
    "chunk-rounded-down", "23 / 6 rounded down, 3 values a chunk at every step: the values left over go "
    "into larger chunks, and the busiest link carries those.", "08", _COLLECTIVES,
    "Simulate the ring and read .link_bytes: which chunks does the busiest link carry?")
ONE_HALF_OF_THE_RING = Misconception(
    "one-half-of-the-all-reduce", "Half of the busiest link's bytes, one half of the all-reduce (the "
    "reduce-scatter or the all-gather): an all-reduce is both, and a link carries chunks in each.", "08",
    _COLLECTIVES, "Read .link_bytes after the whole all-reduce, both halves.")


ONE_STEP = Misconception(
    "one-step-not-whole-all-reduce", "The largest entry of step_bytes, one step on one link, where the "
    "whole all-reduce's bytes over the busiest link were asked: a ring all-reduce takes 2 (n - 1) steps, "
    "and a link carries a chunk in each.", "08", _COLLECTIVES,
    "Read .link_bytes, each link's bytes summed over every step, and take its largest entry.")


def _zero_bytes(n_params, dp, stage):
    return zero_model_state_bytes(n_params, dp, stage).total


def _zero_wrong() -> dict:
    def fourteen(n_params, dp, stage):              # no 16-bit gradient: 2 + 12 bytes
        state = zero_model_state_bytes(n_params, dp, stage)
        return state.params + state.optimizer

    def shifted(n_params, dp, stage):
        return zero_model_state_bytes(n_params, dp, min(stage + 1, 3)).total

    def shifted_down(n_params, dp, stage):
        return zero_model_state_bytes(n_params, dp, max(stage - 1, 0)).total
    def state(weights=2, grads=2, optimizer=12, sharded=lambda stage: ("optimizer", "grads", "weights")[:stage],
              scale=1.0):
        """Bytes per GPU with each kind's bytes per parameter and the kinds each stage shards."""
        def zero_bytes(n_params, dp, stage):
            kinds = {"weights": weights, "grads": grads, "optimizer": optimizer}
            split = sharded(stage)
            return scale * n_params * sum(b / dp if k in split else b for k, b in kinds.items())
        return zero_bytes
    return {shared("adam-14-bytes", "08", "Misconceptions"): fourteen, ZERO_STAGE_SHIFTED: shifted,
            ZERO_STAGE_SHIFTED_DOWN: shifted_down,
            STAGE_ONE_SHARDS_GRADIENTS: state(sharded=lambda stage: {0: (), 1: ("optimizer", "grads"),
                                                                     2: ("optimizer", "grads")}.get(
                stage, ("optimizer", "grads", "weights"))),
            FP32_GRADIENTS: state(grads=4),
            MASTER_COPY_FORGOTTEN: state(optimizer=8),
            EVERY_STAGE_SHARDS_ALL: state(sharded=lambda stage: ("optimizer", "grads", "weights") if stage else ()),
            DP_IGNORED: state(sharded=lambda stage: ()),
            ZERO_ORDER_REVERSED: state(sharded=lambda stage: ("weights", "grads", "optimizer")[:stage]),
            ZERO_GB_NOT_BYTES: state(scale=1e-9),
            ZERO_STAGES_ONE_AHEAD: state(sharded=lambda stage: ("optimizer", "grads", "weights")[:stage + 1]
                                         if stage else ()),
            FP32_WEIGHTS_AND_GRADIENTS: state(weights=4, grads=4), **_zero_more()}


ZERO_STAGES_ONE_AHEAD = Misconception(
    "zero-stages-one-ahead", "Each ZeRO stage from 1 on taken to shard one kind more than it does (stage 1 "
    "the optimizer state and the gradients, stage 2 the weights too): stage 1 shards the optimizer state "
    "only, stage 2 adds the gradients, stage 3 the weights.", "08", _ZERO,
    "Stage k divides the first k of (optimizer state, gradients, weights) by dp.")
FP32_WEIGHTS_AND_GRADIENTS = Misconception(
    "zero-fp32-weights-and-gradients", "Weights and gradients stored in FP32, 4 bytes each: in mixed "
    "precision both are 16-bit, 2 bytes; the FP32 copies (master weights and Adam's two moments) are the "
    "optimizer's 12 bytes.", "08", _ZERO, "Per parameter: 2 (weights) + 2 (gradients) + 12 (optimizer).")


STAGE_ONE_SHARDS_GRADIENTS = Misconception(
    "zero-1-shards-gradients", "ZeRO stage 1 taken to shard the gradients with the optimizer state, so "
    "stages 1 and 2 alike: stage 1 shards the optimizer state only; stage 2 adds the gradients.", "08",
    _ZERO, "Stage 1 divides only the 12 bytes of optimizer state by dp; the gradients are divided from "
    "stage 2 on.")
FP32_GRADIENTS = Misconception(
    "zero-fp32-gradients", "4-byte (FP32) gradients: in mixed precision the gradients are 16-bit, 2 bytes; the "
    "FP32 copies are the master weights and the two moments, 12 bytes.", "08", _ZERO,
    "Per parameter: 2 (weights) + 2 (gradients) + 12 (optimizer), 16 bytes.")
MASTER_COPY_FORGOTTEN = Misconception(
    "fp32-master-copy-forgotten", "Adam's state counted as its two FP32 moments, 8 bytes: mixed precision "
    "also keeps an FP32 master copy of the weights, 4 more, 12 in the optimizer state.", "08", _ZERO,
    "The optimizer state is 4 + 4 + 4 bytes per parameter: master weight, first and second moment.")
EVERY_STAGE_SHARDS_ALL = Misconception(
    "every-stage-shards-everything", "Every ZeRO stage taken to divide all the model state by dp: stage 1 "
    "divides the optimizer state only, stage 2 also the gradients, and only stage 3 the weights too.",
    "08", _ZERO, "Stage s divides the first s kinds of state by dp: optimizer, gradients, weights.")
DP_IGNORED = Misconception(
    "zero-nothing-sharded", "Nothing divided by dp at any stage: ZeRO's point is that the replicas share "
    "out the state; stage 1 already divides the optimizer state by dp.", "08", _ZERO,
    "Stage s divides the first s kinds of state by dp: optimizer, gradients, weights.")
ZERO_ORDER_REVERSED = Misconception(
    "zero-stages-reversed", "ZeRO's stages taken in the reverse order, the weights sharded first: stage 1 "
    "shards the optimizer state (the largest, 12 bytes), stage 2 adds the gradients, stage 3 the weights.",
    "08", _ZERO, "Stage 1 divides the 12 bytes of optimizer state by dp; the weights are divided only at stage 3.")
ZERO_GB_NOT_BYTES = Misconception(
    "zero-gb-not-bytes", "GB where bytes were asked: the function returns bytes per GPU.", "08", _ZERO,
    "Return the byte count itself, without dividing by 1e9.")


def _zero_cases(rng) -> list:
    cases = [((7.5e9, 64, 0), {}), ((7.5e9, 64, 3), {}), ((1.3e9, 1, 2), {})]
    for _ in range(12):
        n_params = float(rng.uniform(1e8, 3e11))
        dp = int(rng.choice([3, 5, 7, 12, 48, 96, 100, 1000]))
        cases.append(((n_params, dp, int(rng.integers(0, 4))), {}))
    return cases


#: 08.5: the service the task describes.
TASK_MIG_PROFILE, TASK_CONTEXT, TASK_MAX_STEP_S, TASK_MIN_TOKENS_PER_S = "3g.40gb", 2048, 0.020, 2800.0


def _judge_mig_batch(batch, profile=TASK_MIG_PROFILE, context=TASK_CONTEXT) -> str | None:
    if batch < 1:
        return "the batch must hold at least one sequence"
    acc = mig_accelerator(profile, "H100 SXM") if profile else get_accelerator("H100 SXM")
    step = decode_step("Llama 3 8B", acc, int(batch), context)
    if not step.fits:
        return (f"batch {batch} needs {step.resident_bytes / 1e9:.1f} GB (weights + KV cache), more than the "
                f"slice's {acc.mem_capacity / 1e9:.0f} GB")
    if step.t_step_s > TASK_MAX_STEP_S:
        return f"a decode step takes {step.t_step_s * 1e3:.1f} ms at batch {batch}, over the 20 ms target"
    if step.tokens_per_s < TASK_MIN_TOKENS_PER_S:
        return f"batch {batch} gives {step.tokens_per_s:.0f} tokens/s, under the 2800 required"
    return None


def _valid_mig_batches(profile=TASK_MIG_PROFILE) -> list:
    return [b for b in range(1, 400) if _judge_mig_batch(b, profile) is None]


def _a_valid_mig_batch() -> int:
    """One valid answer from the middle of the range (half and twice it are not valid)."""
    valid = _valid_mig_batches()
    lo, hi = valid[0], valid[-1]
    middle = [b for b in valid if b / 2 < lo and 2 * b > hi and b % 125]
    return middle[len(middle) // 2]


_OTHER = "5. Other accelerators"
SLICE_AS_WHOLE = Misconception(
    "mig-slice-as-whole-gpu", "The whole H100's figures used for a MIG slice: a 3g.40gb slice has 60 of "
    "the 132 SMs and half the memory and bandwidth, so each decode step takes longer.", "08", _OTHER,
    "Build the slice with mig_accelerator('3g.40gb') and run decode_step on it, not on the H100.")
FLOOR_ON_WHOLE = Misconception(
    "throughput-floor-on-whole-gpu", "The throughput floor worked out on the whole H100: on the slice "
    "each step is slower, so it takes more sequences per step to reach the same tokens per second.",
    "08", _OTHER, "Compute tokens_per_s on the slice, batch / t_step_s there, against the floor.")
CAPACITY_ONLY = Misconception(
    "largest-batch-that-fits", "The largest batch that fits in memory: a larger batch also makes each "
    "step slower, and the latency target caps the batch first.", "08", _OTHER,
    "Check t_step_s at your batch against the step-time target.")


def _mig_batch_wrong() -> dict:
    return dict(_mig_batch_wrong_cached())


@functools.lru_cache(maxsize=None)     # sweeps of decode_step: once per session (callers get a copy)
def _mig_batch_wrong_cached() -> dict:
    whole = _valid_mig_batches(None)
    fits = [b for b in range(1, 400) if decode_step("Llama 3 8B", mig_accelerator(TASK_MIG_PROFILE), b,
                                                    TASK_CONTEXT).fits]
    # 2800 tokens/s read as one sequence's rate: the fastest per sequence is the smallest batch
    default = inspect.signature(decode_step).parameters["context_tokens"].default
    at_default = [b for b in range(1, 400) if _judge_mig_batch(b, context=default) is None]
    wrong = {SLICE_AS_WHOLE: whole[-1], CAPACITY_ONLY: fits[-1], FLOOR_ON_WHOLE: whole[0],
             RATE_PER_SEQUENCE: fits[0]}
    if at_default:
        wrong.update({MIG_CONTEXT_DEFAULT_FEWEST: at_default[0], MIG_CONTEXT_DEFAULT_MOST: at_default[-1]})
    slice_ = mig_accelerator(TASK_MIG_PROFILE, "H100 SXM")
    fast_enough = [b for b in range(1, 400) if (step := decode_step("Llama 3 8B", slice_, b, TASK_CONTEXT))
                   .t_step_s <= TASK_MAX_STEP_S and step.tokens_per_s >= TASK_MIN_TOKENS_PER_S]
    if fast_enough:
        wrong[MIG_MEMORY_IGNORED] = fast_enough[-1]
    return {k: v for k, v in wrong.items() if _judge_mig_batch(v) is not None}


MIG_MEMORY_IGNORED = Misconception(
    "mig-slice-memory-ignored", "The largest batch within 20 ms and above the throughput floor, whether or "
    "not it fits: the slice has 40 GB, and the weights and every sequence's cache must fit in it.", "08",
    _OTHER, "Check step.fits at your batch as well as the step time and the tokens per second.")
MIG_CONTEXT_DEFAULT_FEWEST = Misconception(
    "mig-context-left-at-default", "decode_step called without the task's 2048-token context, so it used "
    "its default of 1024: each sequence's cache is half as large, the steps faster, and the smallest batch "
    "that reaches 2800 tokens/s smaller than on the task's service.", "08", _OTHER,
    "Pass context_tokens=2048 to decode_step at every batch you try.")
MIG_CONTEXT_DEFAULT_MOST = Misconception(
    "mig-context-left-at-default-largest", "decode_step called without the task's 2048-token context, so it "
    "used its default of 1024: each sequence's cache is half as large, and batches that break the 20 ms "
    "target (or the memory) at 2048 tokens seem to meet it.", "08", _OTHER,
    "Pass context_tokens=2048 to decode_step at every batch you try.")


RATE_PER_SEQUENCE = Misconception(
    "throughput-read-per-sequence", "The 2800 tokens/s read as one sequence's rate, so the batch taken "
    "as small as it goes: the target is the slice's throughput, batch / step time, summed over every "
    "sequence of the batch.", "08", _OTHER,
    "Compute tokens per second as batch / step time and find the batches that reach 2800.")


# --- 08.6 (design): the fastest parallel layout that fits -------------------------------------

_SPLIT = "3. Four ways to split a training step"
LAYOUT_PARAMS, LAYOUT_GPUS, LAYOUT_TOKENS = 70e9, 256, 4 * 2 ** 20
LAYOUT_TP, LAYOUT_PP, LAYOUT_ZERO = (1, 2, 4, 8, 16), (1, 2, 4, 8), (1, 2, 3)


@functools.lru_cache(maxsize=None)      # every plan's estimate; read-only result
def _layouts():
    """Every 08.6 plan with at least one sequence per replica, and its StepEstimate."""
    from course_lib.parallelism import RECOMPUTE, ParallelPlan, estimate_training_step, transformer_for_params
    model = transformer_for_params(LAYOUT_PARAMS)
    rows = []
    for tp in LAYOUT_TP:
        for pp in LAYOUT_PP:
            dp = LAYOUT_GPUS // (tp * pp)
            sequences = int(LAYOUT_TOKENS // (dp * model.seq_len))
            if sequences < 1:
                continue
            for zero in LAYOUT_ZERO:
                for recompute in RECOMPUTE:
                    plan = ParallelPlan(LAYOUT_GPUS, tp, pp, zero, min(32, sequences), recompute)
                    rows.append((plan, estimate_training_step(model, plan, "H100 SXM", LAYOUT_TOKENS)))
    return tuple(rows)


# The colleague's plan, and the activation peak the task says the profiler measured on it (GB per
# GPU): more than the estimate's count, which leaves out temporary buffers.
LAYOUT_COLLEAGUE = dict(tp=8, pp=1, zero_stage=1, recompute="selective")
LAYOUT_MEASURED_ACTIVATIONS = 46.4e9


def _is_colleague(plan) -> bool:
    return all(getattr(plan, k) == v for k, v in LAYOUT_COLLEAGUE.items())


def _activation_factor() -> float:
    """Measured activations over the estimate's, on the colleague's plan."""
    estimate = next(est for plan, est in _layouts() if _is_colleague(plan))
    return LAYOUT_MEASURED_ACTIVATIONS / estimate.memory["activations"]


def _measured_bytes(est, factor=None) -> float:
    """Memory per GPU with the activations scaled as measured on the colleague's plan."""
    factor = _activation_factor() if factor is None else factor
    return est.memory_bytes + (factor - 1.0) * est.memory["activations"]


def _really_fits(est) -> bool:
    return _measured_bytes(est) <= est.capacity_bytes


def _fastest_layout(keep=lambda plan, est: _really_fits(est)) -> float:
    return min(est.step_time_s for plan, est in _layouts() if keep(plan, est))


MEMORY_IGNORED = Misconception(
    "fastest-plan-ignoring-memory", "The fastest plan whatever memory it needs: with little "
    "parallelism every GPU holds too many weights, optimizer states and activations to fit in 80 GB.",
    "08", _ZERO, "Compare each plan's memory per GPU with the H100's 80 GB before its time.")
ESTIMATE_TRUSTED = Misconception(
    "estimate-trusted-over-measurement", "The estimate's memory trusted where the profile contradicts "
    "it: the colleague's plan ran out of memory because its activations took more than the estimate "
    "counts, and every plan's activations grow in the same proportion.", "08", _ZERO,
    "Divide the measured activation peak by the estimate's activations for the colleague's plan, and "
    "apply that factor to the activations of every plan you consider.")
ZERO3_SLOW = Misconception(
    "zero3-always-slower", "ZeRO stage 3 ruled out as too slow: its gathers of the weights hide "
    "behind the compute here, and the memory it frees lets a plan with less tensor parallelism fit.",
    "08", _ZERO, "Include zero_stage=3 and read the data-parallel term of est.times.")
TP_ONE_NODE = Misconception(
    "tensor-parallel-whole-node", "Tensor parallelism across the whole node (tp = 8) taken to be the "
    "rule: every all-reduce it adds sits on the critical path, so the smallest tp that fits is faster.",
    "08", _SPLIT, "Compare est.times['tensor comm'] at tp = 2, 4 and 8.")
NO_TP_FULL_RECOMPUTE = Misconception(
    "no-tensor-parallelism-at-any-cost", "Tensor parallelism dropped altogether (tp = 1), with full "
    "recomputation to make it fit: recomputing every layer's forward adds a third to the compute, "
    "far more than the all-reduces of a small tp cost.", "08", _ZERO,
    "Compare the compute term of a plan with full recomputation with the tensor-communication term "
    "of a plan with tp = 2.")


COLLEAGUE_ESTIMATE = Misconception(
    "colleague-plan-estimate", "The colleague's own plan's estimated step: that plan does not fit once "
    "its activations are corrected, and the task asks for the fastest plan that does.", "08", _ZERO,
    "Correct the colleague's memory with the measured activations first: does the plan still fit?")
ZERO_STAGE_FIXED = Misconception(
    "zero-stage-kept-fixed", "The colleague's ZeRO stage kept while the other knobs change: the stage "
    "is a knob too, and a higher one frees memory per GPU that lets a faster plan fit.", "08", _ZERO,
    "Search zero_stage over 1, 2 and 3 with the other knobs, not only the colleague's stage.")


def _layout_listed() -> dict:
    fixed = LAYOUT_COLLEAGUE["zero_stage"]
    colleague = next(est.step_time_s for plan, est in _layouts() if _is_colleague(plan))
    return {COLLEAGUE_ESTIMATE: colleague,
            ZERO_STAGE_FIXED: _fastest_layout(lambda plan, est: _really_fits(est) and plan.zero_stage == fixed),
            NO_TP_FULL_RECOMPUTE: _fastest_layout(lambda plan, est: _really_fits(est) and plan.tp == 1),
            MEMORY_IGNORED: _fastest_layout(lambda plan, est: True),
            ESTIMATE_TRUSTED: _fastest_layout(lambda plan, est: est.fits),
            ZERO3_SLOW: _fastest_layout(lambda plan, est: _really_fits(est) and plan.zero_stage < 3),
            TP_ONE_NODE: _fastest_layout(lambda plan, est: _really_fits(est) and plan.tp == 8),
            WHOLE_MEMORY_SCALED: _fastest_layout(lambda plan, est: est.memory_bytes * _activation_factor()
                                                 <= est.capacity_bytes),
            PP_KEPT: _fastest_layout(lambda plan, est: _really_fits(est)
                                     and plan.pp == LAYOUT_COLLEAGUE["pp"]),
            RECOMPUTE_KEPT: _fastest_layout(lambda plan, est: _really_fits(est)
                                            and plan.recompute == LAYOUT_COLLEAGUE["recompute"]),
            FACTOR_INVERTED: _fastest_layout(lambda plan, est: _measured_bytes(est, 1 / _activation_factor())
                                             <= est.capacity_bytes),
            CAPACITY_IN_GIB: _fastest_layout(lambda plan, est: _measured_bytes(est)
                                             <= est.capacity_bytes / 1e9 * 2 ** 30)}


FACTOR_INVERTED = Misconception(
    "activation-factor-inverted", "The activation factor inverted, the estimate over the measurement: the "
    "profiler measured more than the estimate counts, so every plan's activations grow by measured / "
    "estimated, not shrink.", "08", _ZERO,
    "Divide the measured 46.4 GB by the estimate's activations of the colleague's plan: a factor above 1.")
CAPACITY_IN_GIB = Misconception(
    "gpu-capacity-in-gib", "The H100's 80 GB taken as 80 GiB (80 x 2^30 bytes): the catalog's capacity is "
    "80e9 bytes, and a plan that needs a few GB more than that does not fit.", "08", _ZERO,
    "Compare each plan's corrected memory with est.capacity_bytes, as the estimate gives it.")


def _layout_wrong() -> dict:
    return dict(_layout_wrong_cached())


@functools.lru_cache(maxsize=None)     # searches over every plan: once per session (callers get a copy)
def _layout_wrong_cached() -> dict:
    right = _fastest_layout()
    # a value two mistakes share is named in this order: the micro-batch rule before ZeRO-3 ruled out
    from course_lib.parallelism import ParallelPlan
    default = next(f.default for f in fields(ParallelPlan) if f.name == "micro_batches")
    wrong = {MICRO_BATCHES_FIXED: _fastest_fixed_micro_batches(), **_layout_listed(),
             MICRO_BATCHES_DEFAULT: _fastest_fixed_micro_batches(default), STEP_IN_MS: right * 1e3}
    return {k: v for k, v in wrong.items() if v is not None and abs(v - right) > 1e-9 * right}


@functools.lru_cache(maxsize=None)
def _fastest_fixed_micro_batches(micro=32) -> float | None:
    """The fastest plan that really fits with ``micro`` micro-batches per replica in every plan (those
    the estimator refuses, under one sequence per micro-batch, left out): a known mistake."""
    from course_lib.parallelism import estimate_training_step, transformer_for_params
    model = transformer_for_params(LAYOUT_PARAMS)
    times = []
    for plan, est in _layouts():
        if plan.micro_batches != micro:
            try:
                est = estimate_training_step(model, replace(plan, micro_batches=micro), "H100 SXM", LAYOUT_TOKENS)
            except ValueError:
                continue
        if _really_fits(est):
            times.append(est.step_time_s)
    return min(times, default=None)


MICRO_BATCHES_FIXED = Misconception(
    "micro-batches-fixed-at-32", "32 micro-batches per replica in every plan where the colleague's rule "
    "takes min(32, sequences per replica): with many replicas a replica has fewer than 32 sequences, and "
    "those plans were left out (or split into empty micro-batches).", "08", _SPLIT,
    "Give each plan min(32, sequences per replica) micro-batches, as the colleague's plan does.")
MICRO_BATCHES_DEFAULT = Misconception(
    "micro-batches-left-at-default", "ParallelPlan built without the task's micro-batches, so every plan "
    "used the default: the colleague's rule gives each replica min(32, its sequences) micro-batches, and "
    "fewer micro-batches leave a longer pipeline bubble and larger activations per micro-batch.", "08",
    _SPLIT, "Pass micro_batches=min(32, sequences per replica) to every ParallelPlan you build.")
WHOLE_MEMORY_SCALED = Misconception(
    "whole-memory-scaled-by-activation-factor", "The whole memory estimate scaled by the measured/estimated "
    "activation ratio: only the activations were under-counted; the weights, gradients and optimizer "
    "state are as estimated.", "08", _ZERO,
    "Scale est.memory['activations'] alone, then add the other terms of est.memory as they are.")
PP_KEPT = Misconception(
    "pipeline-kept-at-colleagues", "The colleague's pipeline depth kept while the other knobs change: "
    "pipeline stages split the weights and activations too, a knob like the others.", "08", _SPLIT,
    "Search pp over 1, 2, 4 and 8 with the other knobs.")
RECOMPUTE_KEPT = Misconception(
    "recompute-kept-at-colleagues", "The colleague's recomputation kept while the other knobs change: "
    "full recomputation frees activation memory, none saves compute; it is a knob like the others.", "08",
    _ZERO, "Search recompute over 'none', 'selective' and 'full' with the other knobs.")


# --- 08.7 (what-if): pipeline stages for a step target, with a per-operation overhead ----------
# The simulator's stages take a fixed time and pass results for free; here a stage's time is its
# share of the model's plus a fixed overhead per operation, which the learner must build.

PIPE_LAYERS, PIPE_MICRO = 48, 20
PIPE_FORWARD_MS, PIPE_BACKWARD_MS, PIPE_OVERHEAD_MS, PIPE_TARGET_MS = 240.0, 480.0, 4.0, 2000.0


@functools.lru_cache(maxsize=None)
def _pipeline_step_ms(p: int, overhead_ms: float = PIPE_OVERHEAD_MS) -> float:
    """Milliseconds of a 1F1B step of PIPE_MICRO micro-batches on p balanced stages, each
    operation taking its share of the model's time plus ``overhead_ms``."""
    from course_lib.parallelism import simulate_pipeline
    run = simulate_pipeline(p, PIPE_MICRO, "1f1b", t_forward=PIPE_FORWARD_MS / p + overhead_ms,
                            t_backward=PIPE_BACKWARD_MS / p + overhead_ms)
    return float(run.makespan)


def _stage_counts() -> list:
    return [p for p in range(1, PIPE_LAYERS + 1) if PIPE_LAYERS % p == 0]


def _pipeline_feasible(p) -> str | None:
    """None when p stages bring the step to at most the target, else why not."""
    if p < 1 or p > PIPE_LAYERS or PIPE_LAYERS % p:
        return f"p = {p} does not split the {PIPE_LAYERS} layers into equal stages"
    step = _pipeline_step_ms(p)
    if step > PIPE_TARGET_MS:
        return f"with p = {p} a step takes {step:.0f} ms, over the {PIPE_TARGET_MS:.0f} ms target"
    return None


def _fewest(step_ms) -> int:
    return next(p for p in _stage_counts() if step_ms(p) <= PIPE_TARGET_MS)


@functools.lru_cache(maxsize=None)
def _fewest_stages() -> int:
    return _fewest(_pipeline_step_ms)


OVERHEAD_IGNORED = Misconception(
    "pipeline-overhead-ignored", "The stages' share of the model's time alone: every forward and "
    "every backward also pays the fixed overhead, and a step has m + p - 1 of each on the "
    "critical path, so the overhead grows with p while the shares shrink.", "08", _SPLIT,
    "Add the overhead to each forward and each backward before you time the step.")
BUBBLE_IGNORED = Misconception(
    "pipeline-bubble-ignored", "A step taken as m micro-batches times one stage's time: the pipe "
    "must fill and drain, p - 1 stage slots that grow with p.", "08", _SPLIT,
    "Section 3's bubble: a balanced pipeline's step is m + p - 1 slots of one stage's forward and "
    "backward, not m.")

OVERHEAD_ONCE_PER_SLOT = Misconception(
    "pipeline-overhead-once-per-slot", "The overhead counted once for a forward and its backward: each "
    "of the two pays it, so one slot of the pipe pays it twice.", "08", _SPLIT,
    "Add the overhead to the forward's time and again to the backward's.")


FASTEST_NOT_FEWEST = Misconception(
    "fastest-pipeline-not-fewest-stages", "The stage count with the shortest step where the fewest stages "
    "that meet 2 s were asked: past the target, more stages only add GPUs to the pipeline.", "08", _SPLIT,
    "Walk p up through the divisors of 48 and stop at the first whose step is at most 2 s.")
BUBBLE_P_SLOTS = Misconception(
    "pipeline-bubble-p-slots", "The pipe's fill and drain counted as p slots, m + p in all: a balanced "
    "pipeline of p stages takes m + p - 1 slots, the last micro-batch entering p - 1 slots after the first.",
    "08", _SPLIT, "Count the slots for p = 1 (no bubble: m slots), then for p = 2.")
OVERHEAD_ONCE_PER_STEP = Misconception(
    "pipeline-overhead-once-per-step", "The fixed overhead added once to the step (a forward's and a "
    "backward's): every operation pays it, and the critical path runs m + p - 1 forwards and as many "
    "backwards.", "08", _SPLIT, "Add the overhead to each forward and each backward before you time the step.")


def _stages_wrong() -> dict:
    slots = lambda p, o: PIPE_MICRO * (PIPE_FORWARD_MS + PIPE_BACKWARD_MS + 2 * o * p) / p    # noqa: E731
    wrong = {OVERHEAD_IGNORED: _fewest(lambda p: _pipeline_step_ms(p, 0.0)),
             BUBBLE_IGNORED: _fewest(lambda p: slots(p, PIPE_OVERHEAD_MS))}
    if _fewest_stages() in wrong.values() or len(set(wrong.values())) < len(wrong):
        raise RuntimeError("08.7: each trap must land on its own wrong answer")
    return {**wrong, **_stages_more()}


# --- Round 26h (fix-h2): more of the long tail, each computed with the one mistake ------------

def _h(key, text, section, hint) -> Misconception:
    return Misconception(key, text, "08", section, hint)


GRAD_PARAMS_BINARY = _h(
    "gradient-params-binary-billions", "13 billion read as 13 x 2^30 (a binary giga): parameter counts are decimal, "
    "13 x 10^9.", _COLLECTIVES, "Write the gradient's bytes as 2 x 13e9.")
ALL_REDUCE_MICROSECONDS = _h(
    "microseconds-for-milliseconds", "Microseconds where milliseconds were asked: the formula is right, the "
    "unit is not.", _COLLECTIVES, "Seconds to milliseconds is x 1e3, not x 1e6.")
NETWORK_FOR_NVLINK = _h(
    "network-tier-for-nvlink", "The network tier's link (one InfiniBand port) where the eight H200s of one "
    "node all-reduce over NVLink.", _LINKS, "Use get_link('H200', 'nvlink').")
HOST_LINK_FOR_NVLINK = _h(
    "host-link-for-nvlink", "The host link's bandwidth (PCIe, CPU to GPU) where the GPUs talk to each other "
    "over NVLink.", _LINKS, "Use get_link('H200', 'nvlink').bandwidth_bytes_per_s.")


def _all_reduce_more() -> dict:
    link = get_link("H200", "nvlink")
    host = replace(link, bandwidth_bytes_per_s=get_accelerator("H200").host_link_bandwidth)
    return {GRAD_PARAMS_BINARY: collective_time_s("all_reduce", 2 * 13 * 2 ** 30, 8, link) * 1e3,
            ALL_REDUCE_MICROSECONDS: collective_time_s("all_reduce", 2 * 13e9, 8, link) * 1e6,
            NETWORK_FOR_NVLINK: collective_time_s("all_reduce", 2 * 13e9, 8, get_link("H200", "network")) * 1e3,
            HOST_LINK_FOR_NVLINK: collective_time_s("all_reduce", 2 * 13e9, 8, host) * 1e3}


BUFFER_NOT_LINK = _h(
    "buffer-size-not-link-bytes", "One rank's buffer, 23 float32 values, where the bytes the busiest link "
    "carries over the whole all-reduce were asked: the ring sends almost twice the buffer over each link.",
    _COLLECTIVES, "Simulate the ring and read the largest entry of .link_bytes.")
REDUCE_SCATTER_TEXTBOOK = _h(
    "reduce-scatter-fraction-only", "(n - 1) / n S, the textbook share of one half of the all-reduce: the "
    "reduce-scatter is followed by an all-gather, and each link carries chunks in both.", _COLLECTIVES,
    "Read .link_bytes after the whole all-reduce.")
RATIO_TO_TEXTBOOK = _h(
    "busiest-over-textbook-ratio", "The busiest link's bytes divided by the textbook 2 (n - 1) / n S, the "
    "comparison the task asks about afterwards, where the bytes themselves were asked.", _COLLECTIVES,
    "Store the busiest link's bytes; compare with the textbook figure after.")
EXCESS_OVER_TEXTBOOK = _h(
    "busiest-minus-textbook", "How many bytes the busiest link carries beyond the textbook 2 (n - 1) / n S, "
    "where the busiest link's bytes themselves were asked.", _COLLECTIVES,
    "Store the busiest link's bytes; compare with the textbook figure after.")


def _busiest_link_more() -> dict:
    busiest, n, size = _busiest_link_bytes(), 6, 23 * 4
    return {BUFFER_NOT_LINK: float(size), REDUCE_SCATTER_TEXTBOOK: (n - 1) / n * size,
            RATIO_TO_TEXTBOOK: busiest / (2 * (n - 1) / n * size),
            EXCESS_OVER_TEXTBOOK: busiest - 2 * (n - 1) / n * size}


FP32_GRADIENT_COPY = _h(
    "zero-fp32-gradient-copy-counted", "An FP32 copy of the gradients counted in the optimizer state (16 bytes "
    "per parameter with the master weights and the moments): mixed-precision Adam keeps 12, the FP32 "
    "weights and two FP32 moments.", _ZERO, "Optimizer state: 4 + 4 + 4 bytes per parameter.")
FP32_WEIGHTS_ONLY = _h(
    "zero-fp32-weights", "4-byte (FP32) working weights: in mixed precision the weights a GPU computes with "
    "are 16-bit, 2 bytes; the FP32 copy is part of the optimizer state.", _ZERO,
    "Weights 2 bytes, gradients 2 bytes, optimizer state 12 bytes per parameter.")
ZERO_GIB = _h("zero-gib-not-bytes", "GiB where bytes were asked: the function returns bytes per GPU.", _ZERO,
              "Return the bytes themselves, without dividing.")


def _zero_more() -> dict:
    def state(weights=2, grads=2, optimizer=12, scale=1.0):
        def zero_bytes(n_params, dp, stage):
            kinds = {"optimizer": optimizer, "grads": grads, "weights": weights}
            split = ("optimizer", "grads", "weights")[:stage]
            return scale * n_params * sum(b / dp if k in split else b for k, b in kinds.items())
        return zero_bytes
    return {FP32_GRADIENT_COPY: state(optimizer=16), FP32_WEIGHTS_ONLY: state(weights=4),
            ZERO_GIB: state(scale=2.0 ** -30)}


STEP_IN_MS = _h("step-time-in-ms", "Milliseconds where the step time in seconds was asked.", _SPLIT,
                "est.step_time_s is in seconds: answer it as it is.")


BACKWARD_LEFT_OUT = _h(
    "pipeline-backward-left-out", "The forwards alone timed: each micro-batch also runs its backward through "
    "every stage, twice as long as its forward, with its own overhead.", _SPLIT,
    "One slot of a stage is its forward and its backward, each with the 4 ms.")
OVERHEAD_PER_LAYER = _h(
    "pipeline-overhead-per-layer", "The 4 ms paid for every layer of a stage: it is paid once per forward and "
    "once per backward of a stage, however many layers the stage holds.", _SPLIT,
    "Add 4 ms to each stage's forward and to each backward, not per layer.")
MICRO_BATCHES_SPLIT = _h(
    "micro-batches-split-over-stages", "The 20 micro-batches divided among the stages: every micro-batch "
    "passes through every stage, so each stage runs all 20.", _SPLIT,
    "Each stage runs m = 20 forwards and 20 backwards; the step is m + p - 1 slots.")
BACKWARD_AS_FORWARD = _h(
    "pipeline-backward-as-long-as-forward", "The backward taken to last as long as the forward: it takes "
    "twice as long, 480 ms over the 48 layers.", _SPLIT, "Give each stage's backward its share of the 480 ms.")


def _stages_more() -> dict:
    m, fwd, bwd, over, layers = PIPE_MICRO, PIPE_FORWARD_MS, PIPE_BACKWARD_MS, PIPE_OVERHEAD_MS, PIPE_LAYERS
    found = {BACKWARD_LEFT_OUT: _fewest(lambda p: (m + p - 1) * (fwd / p + over)),
             OVERHEAD_PER_LAYER: _fewest(lambda p: (m + p - 1) * ((fwd + bwd) / p + 2 * over * layers / p)),
             MICRO_BATCHES_SPLIT: _fewest(lambda p: (m / p + p - 1) * ((fwd + bwd) / p + 2 * over)),
             BACKWARD_AS_FORWARD: _fewest(lambda p: (m + p - 1) * (2 * fwd / p + 2 * over))}
    return {k: v for k, v in found.items() if v != _fewest_stages()}


EXERCISES = [
    ChoiceExercise(
        "08.1", expected=_tp_across_nodes, choices=("less", "more"),
        wrong_answers=_tp_wrong, concepts=("comm-vs-compute",),
        form="a string: 'less' or 'more' (the all-reduces' time against the matmuls')",
        hints=("Compare the layer's FLOP per byte of tensor-parallel traffic with the link's ridge point.",
               "For tensor parallelism the ratio is 3h/(t-1) FLOP per byte, whatever the batch.",
               "The link's ridge is efficiency x peak / bandwidth, with the network's 50 GB/s per direction.")),
    ValueExercise(
        "08.2", quantity=("time", "data"), expected=_h200_all_reduce_ms, rel_tol=1e-3,
        wrong_answers=_with_generated(_all_reduce_wrong, _h200_all_reduce_ms, _all_reduce_slips, _replayed(_h200_all_reduce_ms, "08"), rel_tol=1e-3),
        concepts=("collectives",),
        form="a float: milliseconds",
        hints=("A ring all-reduce takes 2(n-1) alpha + 2(n-1)/n * S / beta.",
               "S is the gradient size in bytes (2 per bf16 value); get_link('H200', 'nvlink') gives "
               "alpha and the per-direction beta.",
               "collective_time_s returns seconds: multiply by 1e3.")),
    ValueExercise(
        "08.3", expected=_busiest_link_bytes, rel_tol=0.0, abs_tol=0.0,
        wrong_answers=_with_generated(_busiest_link_wrong, _busiest_link_bytes, _replayed(_busiest_link_bytes, "08")), concepts=("collectives",),
        form="a number: bytes (exact)",
        hints=("Run simulate_ring_all_reduce on a (6, 23) float32 array and look at .link_bytes.",
               "23 does not divide by 6, so the chunks differ and the links do not all carry the same.",
               "Take the maximum over the links; each float32 is 4 bytes.")),
    FunctionExercise(
        "08.4", reference=_zero_bytes, make_cases=_zero_cases, rel_tol=1e-9,
        wrong_implementations=_zero_wrong, concepts=("training-memory",),
        form="a function zero_bytes(n_params, dp, stage) returning a float: model-state bytes per GPU",
        hints=("Mixed-precision Adam keeps 2 + 2 + 12 bytes per parameter: weights, gradients, optimizer.",
               "Stage 1 divides the optimizer state by dp, stage 2 also the gradients, stage 3 also the weights.",
               "Stage 0 is plain data parallelism: nothing is divided.")),
    DecisionExercise(
        "08.5", expected=_a_valid_mig_batch, judge=_judge_mig_batch, rel_tol=0.0, abs_tol=0.0,
        wrong_answers=_mig_batch_wrong, concepts=("gpu-sharing",),
        form="an integer: a batch size that fits the 3g.40gb slice, keeps a decode step at or under 20 ms "
             "and gives at least 2800 tokens/s",
        hints=("A 3g.40gb slice has 60 of the H100's 132 SMs and 4/8 of its memory and bandwidth: decode "
               "there is about twice as slow per step as on the whole GPU.",
               "The 20 ms target and the 40 GB cap the batch from above; the 2800 tokens/s floor bounds it "
               "from below (throughput = batch / step time).",
               "Sweep decode_step('Llama 3 8B', mig_accelerator('3g.40gb'), b, 2048) over b and keep the b "
               "where fits, t_step_s <= 0.020 and tokens_per_s >= 2800; any of them is valid.")),
    ValueExercise(
        "08.6", quantity="time", expected=_fastest_layout, rel_tol=1e-3, wrong_answers=_layout_wrong,
        concepts=("training-memory", "comm-vs-compute"),
        form="a float: seconds, the shortest step_time_s of the plans that fit in 80 GB per GPU once "
             "their activations are scaled as measured",
        hints=("Read the colleague's estimate and the profile: why did the plan run out of memory, and "
               "which term of its step would less tensor parallelism shrink?",
               "Turn the measurement into a factor on the estimate's activations, and correct every "
               "plan's memory with it before you ask whether the plan fits. Then look for the section 4 "
               "knobs that cut memory per GPU without adding to the critical path.",
               "Sanity check: your plan fits in 80 GB with its corrected activations and beats the "
               "colleague's estimated step; with the estimate's memory alone, a faster plan would have "
               "seemed to fit.")),
    OptimumExercise(
        "08.7", expected=_fewest_stages, feasible=lambda p: _pipeline_feasible(p), goal="smallest",
        rel_tol=0.0, abs_tol=0.0,
        wrong_answers=_with_generated(_stages_wrong, _fewest_stages, lambda: {
            OVERHEAD_ONCE_PER_SLOT: _fewest(lambda p: _pipeline_step_ms(p, PIPE_OVERHEAD_MS / 2)),
            BUBBLE_P_SLOTS: _fewest(lambda p: (PIPE_MICRO + p) * (
                (PIPE_FORWARD_MS + PIPE_BACKWARD_MS) / p + 2 * PIPE_OVERHEAD_MS)),
            OVERHEAD_ONCE_PER_STEP: _fewest(lambda p: _pipeline_step_ms(p, 0.0) + 2 * PIPE_OVERHEAD_MS),
            FASTEST_NOT_FEWEST: min(_stage_counts(), key=_pipeline_step_ms)},
            _replayed(_fewest_stages, "08", integer=True)),
        concepts=("comm-vs-compute", "training-memory"),
        form="an integer: the fewest pipeline stages p (p divides the 48 layers) for which a 1F1B "
             "step of 20 micro-batches takes at most 2 s",
        hints=("Three things move with p: each stage's share of the model shrinks, the pipe's fill "
               "and drain grow, and the fixed overhead is paid on every operation, however short.",
               "Write one stage's forward and backward time as a function of p, then time a balanced "
               "pipeline of p stages and m micro-batches with section 3's bubble (or give its "
               "simulator your stage times).",
               "Sanity check: the step time falls ever more slowly as p grows; at your p the step is "
               "at most 2 s and at the next smaller divisor of 48 it is over.")),
]
