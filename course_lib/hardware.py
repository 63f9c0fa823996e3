"""The accelerator catalog: cited hardware numbers, stored once in ``data/accelerators.toml``.

>>> h100 = get_accelerator("h100-sxm")
>>> h100.peak_flops["bf16"] / h100.mem_bandwidth      # ridge point, FLOP per byte
295.3731343283582

All rates are dense (no 2:4 sparsity) and in SI base units here: FLOP/s, bytes/s, bytes.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from types import MappingProxyType
from typing import Mapping

from ._validate import lookup_by_name, name_key

__all__ = [
    "Accelerator",
    "PRECISIONS",
    "BYTES_PER_ELEMENT",
    "get_accelerator",
    "list_accelerators",
    "bytes_per_element",
    "SHARED_MEM_BYTES_PER_CLOCK_PER_SM",
]

#: Shared memory serves 32 banks x 4 bytes per clock per SM (CUDA C++ Programming Guide).
SHARED_MEM_BYTES_PER_CLOCK_PER_SM = 128

#: Precision names the catalog understands, in the order the course shows them.
PRECISIONS = ("fp64", "fp64_tensor", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4", "fp4")

#: Storage size of one element of each precision (tf32 is stored in a 32-bit container).
BYTES_PER_ELEMENT = MappingProxyType({
    "fp64": 8.0, "fp64_tensor": 8.0, "fp32": 4.0, "tf32": 4.0, "fp16": 2.0, "bf16": 2.0,
    "fp8": 1.0, "int8": 1.0, "int4": 0.5, "fp4": 0.5,
})

_TERA = 1e12
_GIGA = 1e9
_KIB = 1024
_MIB = 1024 ** 2     # vendors' "MB" of cache are binary: the A100 whitepaper lists its 40 MB L2 as 40960 KB


@dataclass(frozen=True)
class Accelerator:
    """One accelerator's specifications in SI units (FLOP/s, bytes/s, bytes, watts).

    Missing vendor figures are ``None``; ``peak_flops`` holds only the precisions the chip runs.
    """

    name: str
    vendor: str
    architecture: str
    kind: str
    year: int
    compute_unit: str
    sm_count: int
    peak_flops: Mapping[str, float]
    mem_type: str
    mem_capacity: float
    mem_bandwidth: float
    source: str
    notes: str = ""
    aliases: tuple = ()
    compute_capability: str | None = None
    boost_clock_hz: float | None = None
    fp32_flops_per_clock_per_sm: int | None = None
    fp16_tensor_flops_per_clock_per_sm: int | None = None
    l2_read_bytes_per_clock: int | None = None
    fp8_formats: tuple = ()
    mem_bus_width_bits: int | None = None
    mem_data_rate_bits_per_s_per_pin: float | None = None
    l2_cache_bytes: float | None = None
    register_file_bytes_per_sm: int | None = None
    shared_mem_bytes_per_sm: int | None = None
    max_shared_mem_bytes_per_block: int | None = None
    shared_mem_reserved_bytes_per_block: int | None = None
    max_threads_per_sm: int | None = None
    max_warps_per_sm: int | None = None
    max_blocks_per_sm: int | None = None
    max_threads_per_block: int | None = None
    max_registers_per_thread: int | None = None
    register_alloc_unit: int | None = None
    warp_alloc_granularity: int | None = None
    shared_mem_alloc_unit_bytes: int | None = None
    warp_size: int = 32
    interconnect: str | None = None
    interconnect_bandwidth: float | None = None
    host_link: str | None = None
    host_link_bandwidth: float | None = None
    tdp_w: float | None = None
    raw: Mapping = field(default_factory=dict, repr=False, compare=False)

    def peak(self, precision: str) -> float:
        """Dense peak FLOP/s at ``precision``; a clear error if the chip has no such path."""
        key = _normalise_precision(precision)
        if key not in self.peak_flops:
            raise ValueError(
                f"precision {precision!r} is not listed for {self.name}; "
                f"it has {sorted(self.peak_flops)}")
        return self.peak_flops[key]

    def ridge_point(self, precision: str) -> float:
        """Machine balance in FLOP per byte of HBM traffic: peak / bandwidth."""
        return self.peak(precision) / self.mem_bandwidth

    @property
    def shared_mem_bandwidth(self) -> float | None:
        """Derived, not published: 128 B/clock/SM x SMs x boost clock (NVIDIA parts with a clock)."""
        if self.vendor != "NVIDIA" or not self.boost_clock_hz or not self.shared_mem_bytes_per_sm:
            return None
        return SHARED_MEM_BYTES_PER_CLOCK_PER_SM * self.sm_count * self.boost_clock_hz

    @property
    def l2_bandwidth(self) -> float | None:
        """L2 read bandwidth in bytes/s: published bytes per clock x boost clock, where both exist.

        A100 SXM: 5120 B/clock x 1.41 GHz = 7.22 TB/s. The whitepaper does not say which clock
        the L2 runs at; the boost clock is the course's assumption. None where NVIDIA publishes
        no per-clock figure (every part but the V100 and A100 here).
        """
        if not self.l2_read_bytes_per_clock or not self.boost_clock_hz:
            return None
        return self.l2_read_bytes_per_clock * self.boost_clock_hz

    @property
    def tensor_clock_hz(self) -> float | None:
        """The clock the vendor's dense FP16 tensor peak implies: peak / (SMs x FLOP/clock/SM).

        H100 SXM: 989.5e12 / (132 x 4096) = 1.830 GHz, below its 1.98 GHz boost clock.
        """
        if not self.fp16_tensor_flops_per_clock_per_sm or "fp16" not in self.peak_flops:
            return None
        return self.peak_flops["fp16"] / (self.sm_count * self.fp16_tensor_flops_per_clock_per_sm)

    @property
    def registers_per_sm(self) -> int | None:
        """Number of 32-bit registers per SM (register file bytes / 4)."""
        if self.register_file_bytes_per_sm is None:
            return None
        return self.register_file_bytes_per_sm // 4


def _normalise_precision(precision) -> str:
    if not isinstance(precision, str):
        raise TypeError(f"precision must be a string such as 'bf16', got {type(precision).__name__}")
    key = precision.strip().lower().replace("-", "").replace(" ", "")
    aliases = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "half": "fp16",
               "float64": "fp64", "double": "fp64", "single": "fp32"}
    key = aliases.get(key, key)
    if key not in PRECISIONS:
        raise ValueError(f"precision must be one of {list(PRECISIONS)}, got {precision!r}")
    return key


def bytes_per_element(precision: str) -> float:
    """Bytes one element of ``precision`` occupies in memory (fp4 and int4: 0.5)."""
    return BYTES_PER_ELEMENT[_normalise_precision(precision)]


def _opt(entry, key, scale=1.0, kind=float):
    value = entry.get(key)
    return None if value is None else kind(value * scale)


def _build(entry: dict) -> Accelerator:
    return Accelerator(
        name=entry["name"],
        vendor=entry["vendor"],
        architecture=entry["architecture"],
        kind=entry["kind"],
        year=int(entry["year"]),
        compute_unit=entry["compute_unit"],
        sm_count=int(entry["sm_count"]),
        peak_flops=MappingProxyType({k: float(v) * _TERA for k, v in entry["peak_tflops"].items()}),
        mem_type=entry["mem_type"],
        mem_capacity=float(entry["mem_capacity_gb"]) * _GIGA,
        mem_bandwidth=float(entry["mem_bandwidth_gb_per_s"]) * _GIGA,
        source=entry["source"],
        notes=entry.get("notes", ""),
        aliases=tuple(entry.get("aliases", ())),
        compute_capability=entry.get("compute_capability"),
        boost_clock_hz=_opt(entry, "boost_clock_mhz", 1e6),
        fp32_flops_per_clock_per_sm=_opt(entry, "fp32_flops_per_clock_per_sm", kind=int),
        fp16_tensor_flops_per_clock_per_sm=_opt(entry, "fp16_tensor_flops_per_clock_per_sm", kind=int),
        l2_read_bytes_per_clock=_opt(entry, "l2_read_bytes_per_clock", kind=int),
        fp8_formats=tuple(entry.get("fp8_formats", ())),
        mem_bus_width_bits=_opt(entry, "mem_bus_width_bits", kind=int),
        mem_data_rate_bits_per_s_per_pin=_opt(entry, "mem_data_rate_gbit_per_s_per_pin", _GIGA),
        l2_cache_bytes=_opt(entry, "l2_cache_mib", _MIB),
        register_file_bytes_per_sm=_opt(entry, "register_file_kib_per_sm", _KIB, int),
        shared_mem_bytes_per_sm=_opt(entry, "shared_mem_kib_per_sm", _KIB, int),
        max_shared_mem_bytes_per_block=_opt(entry, "max_shared_mem_kib_per_block", _KIB, int),
        shared_mem_reserved_bytes_per_block=_opt(entry, "shared_mem_reserved_kib_per_block", _KIB, int),
        max_threads_per_sm=_opt(entry, "max_threads_per_sm", kind=int),
        max_warps_per_sm=_opt(entry, "max_warps_per_sm", kind=int),
        max_blocks_per_sm=_opt(entry, "max_blocks_per_sm", kind=int),
        max_threads_per_block=_opt(entry, "max_threads_per_block", kind=int),
        max_registers_per_thread=_opt(entry, "max_registers_per_thread", kind=int),
        register_alloc_unit=_opt(entry, "register_alloc_unit", kind=int),
        warp_alloc_granularity=_opt(entry, "warp_alloc_granularity", kind=int),
        shared_mem_alloc_unit_bytes=_opt(entry, "shared_mem_alloc_unit_bytes", kind=int),
        warp_size=int(entry.get("warp_size", 32)),
        interconnect=entry.get("interconnect"),
        interconnect_bandwidth=_opt(entry, "interconnect_gb_per_s", _GIGA),
        host_link=entry.get("host_link"),
        host_link_bandwidth=_opt(entry, "host_link_gb_per_s", _GIGA),
        tdp_w=_opt(entry, "tdp_w"),
        raw=MappingProxyType(dict(entry)),
    )


@functools.lru_cache(maxsize=1)
def _catalog() -> dict:
    text = resources.files("course_lib").joinpath("data/accelerators.toml").read_bytes()
    entries = tomllib.loads(text.decode("utf-8"))["accelerator"]
    table = {}
    for entry in entries:
        acc = _build(entry)
        for label in (acc.name, *acc.aliases):
            table[name_key(label)] = acc
    return table


def list_accelerators(kind: str | None = None) -> list[str]:
    """Names of every accelerator in the catalog, in catalog order; ``kind`` filters 'gpu', 'tpu'
    or 'other' (accelerators that are neither: AWS Trainium, Intel Gaudi)."""
    if kind is not None and (not isinstance(kind, str) or kind not in ("gpu", "tpu", "other")):
        raise ValueError(f"kind must be None, 'gpu', 'tpu' or 'other', got {kind!r}")
    seen = []
    for acc in _catalog().values():
        if acc.name not in seen and (kind is None or acc.kind == kind):
            seen.append(acc.name)
    return seen


def get_accelerator(name) -> Accelerator:
    """Look up an accelerator by name, forgiving case, spaces and hyphens ("h100-sxm").

    Passing an :class:`Accelerator` returns it unchanged, so functions can accept either.
    An unknown name raises ValueError listing the closest names.
    """
    if isinstance(name, Accelerator):
        return name
    return lookup_by_name("accelerator", name, _catalog(), list_accelerators(), "H100 SXM", "the catalog")
