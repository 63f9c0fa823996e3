"""Misconceptions and unit slips that several exercises share, placed in a lesson by each use.

    from course_lib.exercises.misconceptions import shared
    shared("bits-for-bytes", "03", "1. The ladder")     # a Misconception pointing at that section

The key, the sentence and the hint are defined once here; each exercise says which section of
its own lesson corrects it (a learner is sent back to what they have read, not ahead). Hints
name what to look at, never the answer.
"""

from __future__ import annotations

from course_lib.exercises.feedback import Misconception

__all__ = ["SHARED", "shared", "other_accelerator"]

#: key: (one sentence naming the misconception, a hint that follows the mistake)
SHARED = {
    "bits-for-bytes": (
        "Bits where bytes were asked: network and link rates are often quoted in bits, and a byte "
        "is 8 of them.",
        "Keep every quantity in bytes from start to finish: a BF16 value is 2 bytes, a float32 4; "
        "nothing in this task is counted in bits."),
    "hours-for-days": (
        "Hours where days were asked.",
        "Convert seconds to days in one step: a day has 86,400 seconds."),
    "seconds-for-unit": (
        "Seconds where a smaller or larger unit was asked: the formula is right, the unit is not.",
        "The library returns seconds; convert to the unit the exercise names (ms: x 1e3, us: x 1e6, "
        "days: / 86,400)."),
    "kib-for-kb": (
        "KiB (1024 bytes) where kB (1000 bytes) was asked.",
        "The exercise asks for decimal kilobytes: divide bytes by 1000, not 1024."),
    "both-link-directions": (
        "Both link directions added where one transfer uses one: the headline link figure counts "
        "sending and receiving together.",
        "A copy, or one ring step, moves data one way: use the per-direction bandwidth, not the "
        "headline figure."),
    "sparse-peak": (
        "The sparse (2:4) tensor peak used for dense math: spec sheets print the sparse figure, "
        "which counts the multiplies by zero that 2:4 sparsity skips.",
        "Use the catalog's dense peak, get_accelerator(...).peak('bf16'): the course never stores "
        "the sparse one."),
    "c-write-forgotten": (
        "Forgetting the write of C: a matmul moves A and B in and C out, and C is often the "
        "largest of the three.",
        "Count the bytes of all three matrices: m k + k n + m n elements, each of the element size."),
    "fp32-bytes": (
        "4-byte (FP32) elements where the task's data is 16-bit.",
        "Take the element size from the task's precision: bytes_per_element('bf16') is 2."),
    "sms-144": (
        "144 SMs for an H100 or H200: that is the full GH100 die; the products enable 132.",
        "Read sm_count from the catalog, get_accelerator(...).sm_count, not from a die diagram."),
    "registers-256k": (
        "'256k registers' per SM: the register file is 256 KB, which is 64K 32-bit registers.",
        "Count registers, not bytes: acc.registers_per_sm is the number of 32-bit registers."),
    "adam-14-bytes": (
        "14 bytes per parameter for mixed-precision Adam: weight, FP32 master copy and two FP32 "
        "moments add to 14; the 16-bit gradient makes it 16.",
        "List every per-parameter buffer of a training step, including the gradient, and add them."),
    "kv-cache-superlinear": (
        "A KV cache that grows faster than linearly (exponentially, or quadratically) with "
        "context: each token adds one fixed-size slice.",
        "Write one token's cache first, then multiply by tokens and sequences: nothing is squared."),
    "other-accelerator": (
        "Another accelerator's figures (the lesson's worked example, often the H100 SXM) where the "
        "exercise names its own: each chip has its own bandwidth, peak, SM count and links.",
        "Take every figure from get_accelerator(...) of the accelerator the exercise names."),
    "bf16-more-precise": (
        "BF16 'more precise' than FP16: BF16 has the wider range, but only 7 mantissa bits "
        "against FP16's 10, so its steps are coarser.",
        "Precision comes from the mantissa bits; range from the exponent bits. Compare the mantissas."),
}


def other_accelerator(accelerator: str) -> str:
    """The accelerator a learner likely used by mistake for ``accelerator``: the lessons' usual
    example, the H100 SXM, or the H200 where the H100 SXM was asked."""
    return "H200" if accelerator == "H100 SXM" else "H100 SXM"


def shared(key: str, lesson: str, section: str) -> Misconception:
    """The shared misconception ``key``, pointing at ``section`` of ``lesson``."""
    if not isinstance(key, str) or key not in SHARED:
        raise KeyError(f"key must be one of the shared misconceptions {sorted(SHARED)}, got {key!r}")
    text, hint = SHARED[key]
    return Misconception(key, text, lesson, section, hint)
