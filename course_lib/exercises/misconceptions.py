"""Misconceptions and unit slips that several exercises share, placed in a lesson by each use.

    from course_lib.exercises.misconceptions import shared
    shared("bits-for-bytes", "03", "1. The ladder")     # a Misconception pointing at that section

The key, the sentence and the hint are defined once here; each exercise says which section of
its own lesson corrects it (a learner is sent back to what they have read, not ahead). Hints
name what to look at, never the answer.
"""

from __future__ import annotations

import re

from course_lib._validate import check_callable, check_number
from course_lib.exercises.feedback import Misconception, _add_generated

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


# --------------------------------------------------------------------------------------------
# Generators: one mistake recomputed over every value a learner may slip to. The lessons' modules
# (lessons/ex_NN.py) use them inside their wrong answers; they are the package's own tools, not
# part of the course's API, as feedback's helpers are for types.
# --------------------------------------------------------------------------------------------

def _checked(compute, lesson, section) -> None:
    check_callable("compute", compute, "lambda name: ...")
    for name, value in (("lesson", lesson), ("section", section)):
        if not isinstance(value, str) or not value.strip():
            raise TypeError(f"{name} must be a non-empty string (a lesson such as '04', a section heading), "
                            f"got {value!r}")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")


def _try(compute, *args):
    try:
        return compute(*args)
    except Exception:  # noqa: BLE001 - a figure the catalog lacks gives no likely answer
        return None


#: The chips a learner likely reads by mistake: those the lessons' worked examples and exercises
#: use most (a chip far from the task's, an L4 for an H100, is not a likely slip, and each chip
#: listed is one more value a stray answer may land on).
LIKELY_CONFUSED = ("H100 SXM", "H200", "H100 PCIe", "A100 SXM 80GB", "B200", "MI300X")


def _other_accelerators(compute, accelerator: str, lesson: str, section: str, names=None) -> dict:
    """``compute(name)`` for every catalog accelerator but ``accelerator``: the answer of a learner
    who read another chip's row of the catalog (the lesson's worked example, the chip of the
    exercise before, the other H100): by default :data:`LIKELY_CONFUSED`, the lessons' usual
    example first. {Misconception: value}; chips that give one value share it; figures a chip lacks are
    skipped."""
    from course_lib.hardware import get_accelerator
    _checked(compute, lesson, section)
    own = get_accelerator(accelerator).name
    by_value = {}                           # chips that give one value are named together
    # the lessons' usual example first (the likeliest row to misread), then the other GPUs
    names = names or [other_accelerator(own)] + [n for n in LIKELY_CONFUSED if n != other_accelerator(own)]
    for name in names:
        if name == own:
            continue
        value = _try(compute, name)
        if value is None:
            continue
        same = next((v for v in by_value if _same(v, value)), value)
        by_value.setdefault(same, []).append(name)
    out = {}
    for value, chips in by_value.items():       # one key, one meaning: the key names the chips
        which = " or the ".join(f"{c}'s" for c in chips[:3]) + (" (or another chip's)" if len(chips) > 3 else "")
        key = "-".join(_slug(c) for c in chips[:3]) + ("-or-another" if len(chips) > 3 else "")
        out[Misconception(
            f"other-accelerator-{key}",
            f"Another row of the catalog, the {which} figures, where the task names its own chip: each "
            f"chip has its own bandwidth, peak, SM count and links.", lesson, section,
            "Take every figure from get_accelerator(...) of the chip the task names.")] = value
    return out


def _same(a, b) -> bool:
    try:
        return abs(float(a) - float(b)) <= 1e-9 * max(abs(float(a)), abs(float(b)))
    except (TypeError, ValueError):
        return a == b


#: Peaks a learner may read for a dense BF16 computation, each with what it is.
_PEAK_SLIPS = {
    "fp8": "the FP8 tensor peak (twice BF16's, for FP8 operands only)",
    "int8": "the INT8 tensor peak (for 8-bit integer operands only)",
    "fp32": "the FP32 peak of the ordinary cores (no tensor cores)",
    "tf32": "the TF32 tensor peak (for FP32 operands on tensor cores)",
    "fp4": "the FP4 tensor peak (for 4-bit operands only)",
}


def _peak_precisions(compute, lesson: str, section: str, used: str = "bf16", precisions=None) -> dict:
    """``compute(precision)`` for every other precision whose peak a learner may read by mistake
    (FP8, INT8, FP32, TF32, FP4, or those of ``precisions``) where the task computes in ``used``:
    {Misconception: value}."""
    _checked(compute, lesson, section)
    out = {}
    for precision, what in _PEAK_SLIPS.items():
        if precision == used or (precisions is not None and precision not in precisions):
            continue
        value = _try(compute, precision)
        if value is None:
            continue
        out[Misconception(
            f"peak-{precision}-for-{used}", f"{what[0].upper() + what[1:]} where the task computes in "
            f"{used.upper()}: each precision has its own row in the catalog.", lesson, section,
            f"Read the peak of the precision the task computes in: peak({used!r}).")] = value
    return out


#: Element widths in bytes a learner may slip to, with the formats that have them.
_WIDTH_SLIPS = ((4, "fp32", "4-byte (FP32) elements"), (1, "fp8", "1-byte (FP8 or INT8) elements"),
                (8, "fp64", "8-byte (FP64, NumPy's default float) elements"),
                (0.5, "int4", "half-byte (INT4) elements"), (2, "bf16", "2-byte (BF16 or FP16) elements"))


def _dtype_widths(compute, lesson: str, section: str, used: float = 2) -> dict:
    """``compute(bytes_per_element)`` for every other common element width (FP32, FP8, FP64,
    INT4, BF16) where the task's data is ``used`` bytes wide: {Misconception: value}."""
    _checked(compute, lesson, section)
    check_number("used", used, min_value=0.5, max_value=8)
    task = {4: "32-bit", 2: "16-bit", 1: "8-bit", 8: "64-bit", 0.5: "4-bit"}.get(used, f"{used}-byte")
    out = {}
    for width, name, what in _WIDTH_SLIPS:
        if width == used:
            continue
        value = _try(compute, width)
        if value is None:
            continue
        if name == "fp32" and used == 2:
            out[shared("fp32-bytes", lesson, section)] = value
            continue
        out[Misconception(f"{name}-width-for-{_slug(task)}", f"{what} where the task's data is {task}.", lesson,
                          section, f"Take the element size from the task's format: {task} is {used} byte"
                          f"{'' if used == 1 else 's'} per element.")] = value
    return out


def _extend(listed: dict, answer, *generated: dict, rel_tol: float = 0.0, abs_tol: float = 0.0) -> dict:
    """``listed`` followed by the generated wrong answers that name a new mistake (see
    :func:`course_lib.exercises.feedback._add_generated`): never the answer, never a fourth
    candidate for one value."""
    out = dict(listed)
    for more in generated:
        alone = getattr(more, "_alone", False)
        out = _add_generated(out, dict(more), answer, rel_tol, abs_tol, alone)
    return out


class _Generated(dict):
    """A generator's wrong answers for one set of numbers, remembering whether they stand alone
    (see :func:`course_lib.exercises.feedback._add_generated`)."""

    def __init__(self, generator, params):
        super().__init__(generator(**params))
        self._alone = getattr(generator, "_alone", False)


def _with_generated(listed, expected, *generators, rel_tol: float = 0.0, abs_tol: float = 0.0):
    """An exercise's ``wrong_answers``: ``listed(**params)`` followed by what each generator
    (``generator(**params) -> {Misconception: value}``) adds, merged by :func:`_extend` against
    ``expected(**params)`` with the exercise's tolerance. The listed ones stay first."""
    check_callable("listed", listed, "a function returning {Misconception: value}")
    check_callable("expected", expected, "the exercise's expected")
    for generator in generators:
        check_callable("generators", generator, "lambda **params: {Misconception: value}")
    rel_tol = check_number("rel_tol", rel_tol, min_value=0)
    abs_tol = check_number("abs_tol", abs_tol, min_value=0)
    def wrong_answers(**params):
        return _extend(listed(**params), expected(**params), *(_Generated(g, params) for g in generators),
                      rel_tol=rel_tol, abs_tol=abs_tol)
    wrong_answers.__doc__ = listed.__doc__
    wrong_answers._listed, wrong_answers._generators = listed, generators
    return wrong_answers
