"""Sharing one GPU: Multi-Instance GPU (MIG) slices as smaller accelerators with their own roofline.

MIG splits an A100 or H100 into up to seven isolated instances. Each profile ``Ng.Mgb`` owns
``N`` of the GPU's 7 compute slices and some of its 8 memory slices (memory, L2 and the memory
bandwidth that comes with them). NVIDIA's MIG User Guide lists the profiles as fractions; the
driver's own listing (``nvidia-smi mig -lgip``) gives the SMs each one gets, and those counts,
not N/7, set a slice's compute. Both are stored in ``data/mig_profiles.toml``. A slice's
roofline, to first order (same clocks, same SMs, a share of the memory system):

    peak      = GPU peak      x sm_count / GPU SMs
    bandwidth = GPU bandwidth x memory_slices / 8
    ridge     = peak / bandwidth

H100 SXM 1g.10gb: 989.5e12 x 16/132 = 120 TFLOP/s BF16 and 3.35e12 x 1/8 = 0.42 TB/s, a ridge
of 286 FLOP/byte, 0.97 of the whole GPU's 295 (N/7 would say 8/7 of it). Seven of them hold
112 of the 132 SMs: 839 TFLOP/s together, not 990.
"""

from __future__ import annotations

import dataclasses
import functools
import tomllib
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType

from ._validate import check_sequence, lookup_by_name, name_key
from .hardware import Accelerator, get_accelerator

__all__ = ["COMPUTE_SLICES", "MEMORY_SLICES", "MigProfile", "mig_profiles", "mig_gpus", "get_mig_profile",
           "mig_accelerator", "fits_on_gpu"]

#: A MIG-capable A100 or H100 has 7 compute slices and 8 memory slices (MIG User Guide).
COMPUTE_SLICES = 7
MEMORY_SLICES = 8


@dataclass(frozen=True)
class MigProfile:
    """One MIG profile of one GPU, as NVIDIA's MIG User Guide lists it."""

    name: str
    gpu: str
    compute_slices: int
    memory_slices: int
    memory_gb: float
    max_instances: int
    source: str
    sm_count: int = 0
    sm_source: str = ""

    @property
    def compute_fraction(self) -> float:
        """N / 7: the guide's "Fraction of SMs", a label more than a measure (see sm_fraction)."""
        return self.compute_slices / COMPUTE_SLICES

    @property
    def sm_fraction(self) -> float:
        """The share of the GPU's SMs an instance gets: sm_count / the GPU's SMs (16/132 for an
        H100's 1g.10gb, 0.121, against 1/7 = 0.143)."""
        return self.sm_count / get_accelerator(self.gpu).sm_count

    @property
    def memory_fraction(self) -> float:
        return self.memory_slices / MEMORY_SLICES


@functools.lru_cache(maxsize=1)
def _table() -> dict:
    text = resources.files("course_lib").joinpath("data/mig_profiles.toml").read_bytes()
    table = {}
    for entry in tomllib.loads(text.decode("utf-8"))["gpu"]:
        acc = get_accelerator(entry["name"])
        profiles = tuple(MigProfile(p["name"], acc.name, int(p["compute_slices"]), int(p["memory_slices"]),
                                    float(p["memory_gb"]), int(p["max_instances"]), entry["source"],
                                    int(p["sm_count"]), entry["sm_source"])
                         for p in entry["profiles"])
        for p in profiles:
            if not 0 < p.sm_count <= acc.sm_count:
                raise ValueError(f"mig_profiles.toml: {acc.name} {p.name} has {p.sm_count} SMs of {acc.sm_count}")
        table[acc.name] = profiles
    return table


def mig_gpus() -> list[str]:
    """Catalog names of the GPUs whose MIG profiles are stored."""
    return list(_table())


def mig_profiles(gpu="H100 SXM") -> tuple[MigProfile, ...]:
    """Every stored MIG profile of ``gpu``, smallest first."""
    acc = get_accelerator(gpu)
    if acc.name not in _table():
        raise ValueError(f"gpu {acc.name!r} has no MIG profiles stored; known: {', '.join(mig_gpus())}")
    return _table()[acc.name]


def get_mig_profile(profile, gpu="H100 SXM") -> MigProfile:
    """A profile by name ('3g.40gb', forgiving case and spaces), or the profile itself."""
    if isinstance(profile, MigProfile):
        return profile
    profiles = mig_profiles(gpu)
    table = {name_key(p.name): p for p in profiles}
    return lookup_by_name("MIG profile", profile, table, [p.name for p in profiles], "3g.40gb",
                          f"the MIG profiles of the {get_accelerator(gpu).name}")


def mig_accelerator(profile, gpu="H100 SXM") -> Accelerator:
    """The slice as an :class:`Accelerator`: peaks x the profile's share of the SMs, bandwidth x
    its memory fraction, capacity the profile's memory. Every other function that takes an
    accelerator accepts it.

    H100 SXM 3g.40gb: 989.5e12 x 60/132 = 450 TFLOP/s BF16, 3.35e12 x 4/8 = 1.675 TB/s, 40 GB.
    """
    acc = get_accelerator(gpu)
    p = get_mig_profile(profile, acc)
    peaks = {k: v * p.sm_fraction for k, v in acc.peak_flops.items()}
    return dataclasses.replace(
        acc, name=f"{acc.name} MIG {p.name}", aliases=(), peak_flops=MappingProxyType(peaks),
        mem_bandwidth=acc.mem_bandwidth * p.memory_fraction, mem_capacity=p.memory_gb * 1e9,
        sm_count=p.sm_count,
        l2_cache_bytes=None if acc.l2_cache_bytes is None else acc.l2_cache_bytes * p.memory_fraction,
        source=f"{acc.source}; sliced by {p.source}; SM counts: {p.sm_source}",
        notes=f"MIG {p.name}: {p.sm_count} of {acc.sm_count} SMs ({p.compute_slices}/7 compute slices), "
              f"{p.memory_slices}/8 of memory and bandwidth (a first-order model: same clocks)")


def fits_on_gpu(profiles, gpu="H100 SXM") -> bool:
    """Whether a set of instances can share one GPU by slice count: at most 7 compute slices,
    8 memory slices, and no profile more often than its ``max_instances``.

    A necessary condition; NVIDIA's placement rules (the guide's placement diagrams) exclude a
    few layouts that pass it.
    """
    if isinstance(profiles, (str, MigProfile)):
        profiles = [profiles]
    profiles = check_sequence("profiles", profiles, min_len=1, max_len=64, scalar_ok=False)
    chosen = [get_mig_profile(p, gpu) for p in profiles]
    if not chosen:
        raise ValueError("profiles must name at least one MIG profile")
    counts = {}
    for p in chosen:
        counts[p.name] = counts.get(p.name, 0) + 1
    if any(counts[p.name] > p.max_instances for p in chosen):
        return False
    return (sum(p.compute_slices for p in chosen) <= COMPUTE_SLICES
            and sum(p.memory_slices for p in chosen) <= MEMORY_SLICES)
