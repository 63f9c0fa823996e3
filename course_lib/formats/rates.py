"""What the hardware gains from a narrower format: bits, bytes and tensor-core rate, from the catalog.

    bits(wide) / bits(narrow),   bytes(wide) / bytes(narrow),   peak(narrow) / peak(wide)

Each halving of the bytes per element halves the traffic; on most accelerators it also doubles
the dense tensor rate. Rates are read from ``course_lib/data/accelerators.toml``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..hardware import bytes_per_element, get_accelerator
from .layouts import get_format

__all__ = ["HalvingStep", "HALVING_PAIRS", "halving_steps", "tensor_rates"]


@dataclass(frozen=True)
class HalvingStep:
    """From a wider to a narrower tensor-core format on one accelerator, from the catalog.

    ``bits_ratio`` compares the bits that carry information (TF32: 19), ``bytes_ratio`` the bytes
    each element occupies in memory (TF32: 4, an FP32 container).
    """

    accelerator: str
    wide: str
    narrow: str
    bits_ratio: float
    bytes_ratio: float
    rate_ratio: float

    @property
    def doubles_rate(self) -> bool:
        """True when peak(narrow) / peak(wide) is 2 within the catalog's rounding (1%)."""
        return math.isclose(self.rate_ratio, 2.0, rel_tol=0.01)


#: Tensor-core precision pairs where the bytes per element halve (TF32 sits in a 32-bit container).
HALVING_PAIRS = (("tf32", "bf16"), ("bf16", "fp8"), ("fp8", "fp4"), ("fp16", "int8"), ("int8", "int4"))

#: The element format standing for each catalog precision key ('fp8' covers E4M3 and E5M2).
_CATALOG_FORMAT = {"tf32": "tf32", "fp16": "fp16", "bf16": "bf16", "fp8": "fp8_e4m3",
                   "fp4": "fp4_e2m1", "int8": "int8", "int4": "int4", "fp32": "fp32"}


def halving_steps(accelerator, pairs=HALVING_PAIRS) -> list[HalvingStep]:
    """For each (wide, narrow) pair the accelerator runs, three ratios from the catalog and the
    formats: bits(wide)/bits(narrow), bytes(wide)/bytes(narrow) and the dense tensor rate
    peak(narrow)/peak(wide). Pairs the chip lacks are skipped.

    >>> [round(s.rate_ratio, 3) for s in halving_steps("A100")]      # tf32->bf16, fp16->int8, int8->int4
    [2.0, 2.0, 2.0]
    """
    acc = get_accelerator(accelerator)
    if isinstance(pairs, (str, bytes)) or not hasattr(pairs, "__iter__"):
        raise TypeError("pairs must be a sequence of (wide, narrow) precision tuples")
    steps = []
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise TypeError(f"pairs must hold (wide, narrow) tuples, got {pair!r}")
        for p in pair:
            if p not in _CATALOG_FORMAT:
                raise ValueError(f"pairs: precision must be one of {sorted(_CATALOG_FORMAT)}, got {p!r}")
        wide, narrow = pair
        if wide not in acc.peak_flops or narrow not in acc.peak_flops:
            continue
        steps.append(HalvingStep(
            accelerator=acc.name, wide=wide, narrow=narrow,
            bits_ratio=get_format(_CATALOG_FORMAT[wide]).bits / get_format(_CATALOG_FORMAT[narrow]).bits,
            bytes_ratio=bytes_per_element(wide) / bytes_per_element(narrow),
            rate_ratio=acc.peak(narrow) / acc.peak(wide)))
    return steps


def tensor_rates(accelerator) -> list[tuple[str, float, float]]:
    """``(precision, bytes_per_element, peak FLOP/s)`` for each tensor-core precision the
    accelerator lists (TF32 and narrower), widest first, from the catalog."""
    acc = get_accelerator(accelerator)
    order = ("tf32", "fp16", "bf16", "fp8", "int8", "fp4", "int4")
    return [(p, bytes_per_element(p), acc.peak(p)) for p in order if p in acc.peak_flops]
