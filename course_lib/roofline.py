"""The roofline model: attainable FLOP/s from peak compute, bandwidth and arithmetic intensity.

    P(I) = min(peak_flops, bandwidth * I)        ridge point  I* = peak_flops / bandwidth

Pure functions, SI units (FLOP/s, bytes/s, FLOP per byte). Drawing lives in
``course_lib.plots``; the explorer widget in ``course_lib.widgets``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validate import check_array, check_bool, check_int, check_number
from .hardware import bytes_per_element, get_accelerator

__all__ = [
    "ridge_point",
    "attainable_flops",
    "matmul_flops",
    "matmul_bytes",
    "matmul_intensity",
    "elementwise_intensity",
    "Kernel",
    "KernelPoint",
    "place_kernel",
    "matmul_kernel",
    "elementwise_kernel",
    "Ceiling",
    "hierarchical_ceilings",
    "binding_ceiling",
    "PROFILE_WELL_USED_FRACTION",
    "PROFILE_LATENCY_FRACTION",
    "ProfileReading",
    "read_profile",
]


def ridge_point(peak_flops, bandwidth) -> float:
    """Machine balance I* = peak_flops / bandwidth, in FLOP per byte.

    >>> ridge_point(989.5e12, 3.35e12)   # H100 SXM, dense BF16 over HBM3
    295.3731343283582
    """
    peak = check_number("peak_flops", peak_flops, min_value=0, allow_min=False)
    bw = check_number("bandwidth", bandwidth, min_value=0, allow_min=False)
    return peak / bw


def attainable_flops(intensity, peak_flops, bandwidth):
    """Roofline bound P(I) = min(peak_flops, bandwidth * I) in FLOP/s.

    ``intensity`` (FLOP/byte) may be a scalar or an array; the result has the same shape.
    """
    peak = check_number("peak_flops", peak_flops, min_value=0, allow_min=False)
    bw = check_number("bandwidth", bandwidth, min_value=0, allow_min=False)
    if np.isscalar(intensity):
        i = check_number("intensity", intensity, min_value=0)
        return min(peak, bw * i)
    arr = check_array("intensity", intensity)
    if np.any(arr < 0):
        raise ValueError("intensity must be >= 0 FLOP/byte everywhere")
    return np.minimum(peak, bw * arr)


def _dims(m, k, n):
    return (check_int("m", m, min_value=1), check_int("k", k, min_value=1),
            check_int("n", n, min_value=1))


def matmul_flops(m, k, n, batch=1) -> float:
    """FLOP of C[m,n] = A[m,k] @ B[k,n], ``batch`` times: 2*m*k*n*batch (a multiply and an add)."""
    m, k, n = _dims(m, k, n)
    batch = check_int("batch", batch, min_value=1)
    return 2.0 * m * k * n * batch


def matmul_bytes(m, k, n, bytes_per_element=2, batch=1, shared_weights=False) -> float:
    """Minimum HBM bytes: read A and B once, write C once: b*(m*k + k*n + m*n) per matmul.

    With ``shared_weights`` the k x n operand (a weight matrix) is read once for the batch.
    """
    m, k, n = _dims(m, k, n)
    b = check_number("bytes_per_element", bytes_per_element, min_value=0, allow_min=False)
    batch = check_int("batch", batch, min_value=1)
    shared_weights = check_bool("shared_weights", shared_weights)
    weights = k * n if shared_weights else k * n * batch
    return b * (batch * (m * k + m * n) + weights)


def matmul_intensity(m, k, n, bytes_per_element=2) -> float:
    """Arithmetic intensity of one matmul in FLOP per byte: 2mkn / (b (mk + kn + mn)).

    >>> matmul_intensity(8192, 8192, 8192, 2)    # square n: n/3 in 2-byte formats
    2730.6666666666665
    """
    return matmul_flops(m, k, n) / matmul_bytes(m, k, n, bytes_per_element)


def elementwise_intensity(flops_per_element, bytes_per_element=2, reads=1, writes=1) -> float:
    """Intensity of an elementwise kernel: c / (b * (reads + writes)) FLOP per byte.

    A GELU at ~8 FLOP per element in BF16, one read and one write: 8 / (2*2) = 2 FLOP/byte.
    """
    c = check_number("flops_per_element", flops_per_element, min_value=0)
    b = check_number("bytes_per_element", bytes_per_element, min_value=0, allow_min=False)
    r = check_int("reads", reads, min_value=0)
    w = check_int("writes", writes, min_value=0)
    if r + w == 0:
        raise ValueError("reads + writes must be >= 1: a kernel that moves no bytes has no intensity")
    return c / (b * (r + w))


@dataclass(frozen=True)
class Kernel:
    """A kernel as the roofline sees it: FLOP done and bytes moved to and from memory."""

    name: str
    flops: float
    bytes_moved: float

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a string, got {type(self.name).__name__} {self.name!r}")
        object.__setattr__(self, "flops", check_number("flops", self.flops, min_value=0))
        object.__setattr__(self, "bytes_moved", check_number("bytes_moved", self.bytes_moved,
                                                             min_value=0, allow_min=False))

    @property
    def intensity_flops_per_byte(self) -> float:
        return self.flops / self.bytes_moved


@dataclass(frozen=True)
class KernelPoint:
    """A kernel placed on one accelerator's roofline at one precision."""

    kernel: Kernel
    accelerator: str
    precision: str
    intensity_flops_per_byte: float
    attainable_flops: float
    peak_flops: float
    ridge_point: float
    t_compute_s: float
    t_memory_s: float

    @property
    def bound(self) -> str:
        """'memory' left of the ridge point, 'compute' at or right of it."""
        return "memory" if self.intensity_flops_per_byte < self.ridge_point else "compute"

    @property
    def fraction_of_peak(self) -> float:
        return self.attainable_flops / self.peak_flops

    @property
    def t_min_s(self) -> float:
        """Lower bound on run time: the slower of computing and moving the bytes."""
        return max(self.t_compute_s, self.t_memory_s)


def matmul_kernel(name, m, k, n, precision="bf16", batch=1) -> Kernel:
    """A :class:`Kernel` for a (batched) matmul at ``precision``, minimum traffic."""
    b = bytes_per_element(precision)
    return Kernel(str(name), matmul_flops(m, k, n, batch), matmul_bytes(m, k, n, b, batch))


def elementwise_kernel(name, elements, flops_per_element, precision="bf16", reads=1, writes=1) -> Kernel:
    """A :class:`Kernel` for an elementwise pass over ``elements`` values."""
    e = check_int("elements", elements, min_value=1)
    b = bytes_per_element(precision)
    intensity = elementwise_intensity(flops_per_element, b, reads, writes)
    bytes_moved = e * b * (reads + writes)
    return Kernel(str(name), intensity * bytes_moved, bytes_moved)


def place_kernel(kernel: Kernel, accelerator="H100 SXM", precision="bf16") -> KernelPoint:
    """Where ``kernel`` sits on ``accelerator``'s HBM roofline at ``precision``."""
    if not isinstance(kernel, Kernel):
        raise TypeError(f"kernel must be a course_lib.roofline.Kernel, got {type(kernel).__name__}")
    check_number("kernel.flops", kernel.flops, min_value=0)
    check_number("kernel.bytes_moved", kernel.bytes_moved, min_value=0, allow_min=False)
    acc = get_accelerator(accelerator)
    peak = acc.peak(precision)
    bw = acc.mem_bandwidth
    intensity = kernel.intensity_flops_per_byte
    return KernelPoint(
        kernel=kernel, accelerator=acc.name, precision=precision.lower(),
        intensity_flops_per_byte=intensity,
        attainable_flops=attainable_flops(intensity, peak, bw),
        peak_flops=peak, ridge_point=ridge_point(peak, bw),
        t_compute_s=kernel.flops / peak, t_memory_s=kernel.bytes_moved / bw,
    )


@dataclass(frozen=True)
class Ceiling:
    """One bandwidth roof of a hierarchical roofline."""

    level: str
    bandwidth_bytes_per_s: float
    ridge_point: float
    source: str


def hierarchical_ceilings(accelerator="H100 SXM", precision="bf16") -> list[Ceiling]:
    """One bandwidth roof per level whose bandwidth is known: shared memory, L2, HBM, links.

    Shared memory's bandwidth is not a datasheet figure; it is derived from the architecture:
    128 bytes per clock per SM (32 banks x 4 bytes, CUDA C++ Programming Guide) x SMs x boost
    clock, and labelled 'derived' in ``source``. L2 gets a roof where NVIDIA publishes its read
    bandwidth per clock (A100: 5120 B/clock, V100: 2048, A100 whitepaper), times the boost
    clock: 7.22 TB/s on the A100. Hopper, Ada and Blackwell have no published figure, so their
    L2 gets no roof (lesson 03 bounds it between HBM and shared memory instead of guessing).
    """
    acc = get_accelerator(accelerator)
    peak = acc.peak(precision)
    levels = []
    if acc.shared_mem_bandwidth:
        levels.append(("shared memory", acc.shared_mem_bandwidth, "derived: 128 B/clock/SM x SMs x boost clock"))
    if acc.l2_bandwidth:
        levels.append(("L2", acc.l2_bandwidth,
                       f"derived: published {acc.l2_read_bytes_per_clock} B/clock x boost clock"))
    levels.append((f"HBM ({acc.mem_type})", acc.mem_bandwidth, "catalog"))
    if acc.interconnect_bandwidth:
        levels.append((f"{acc.interconnect} (per direction)", acc.interconnect_bandwidth / 2, "catalog"))
    if acc.host_link_bandwidth:
        levels.append((f"{acc.host_link} (per direction)", acc.host_link_bandwidth / 2, "catalog"))
    return [Ceiling(level, bw, peak / bw, src) for level, bw, src in levels]


def binding_ceiling(intensities: dict, accelerator="H100 SXM", precision="bf16"):
    """Given a kernel's intensity against each level (``{level: FLOP/byte}``), the roof that binds.

    Returns ``(level, attainable_flops)``: the minimum over levels of min(peak, bw_level * I_level).
    """
    if not isinstance(intensities, dict) or not intensities:
        raise TypeError("intensities must be a non-empty dict {level name: FLOP per byte}")
    ceilings = {c.level: c for c in hierarchical_ceilings(accelerator, precision)}
    peak = get_accelerator(accelerator).peak(precision)
    best = None
    for level, intensity in intensities.items():
        if level not in ceilings:
            raise ValueError(f"level {level!r} unknown; choose from {list(ceilings)}")
        p = attainable_flops(intensity, peak, ceilings[level].bandwidth_bytes_per_s)
        if best is None or p < best[1]:
            best = (level, p)
    return best


# --------------------------------------------------------------------------- reading a profile

#: Nsight Compute's "GPU Speed Of Light Throughput" rule (the SOLBottleneck rule shipped with the
#: tool) says a kernel "is utilizing greater than 80.0% of the available compute or memory
#: performance of the device" above this fraction of peak ...
PROFILE_WELL_USED_FRACTION = 0.8
#: ... and that "achieved compute throughput and/or memory bandwidth below 60.0% of peak typically
#: indicate latency issues" below this one.
PROFILE_LATENCY_FRACTION = 0.6


@dataclass(frozen=True)
class ProfileReading:
    """A kernel's recorded duration, bytes and FLOP, read against one accelerator's roofline.

    ``compute_fraction`` and ``memory_fraction`` are the two numbers a profiler's "speed of light"
    section reports (achieved FLOP/s over peak, achieved bytes/s over peak bandwidth);
    ``fraction_of_roof`` is achieved FLOP/s over the roofline at the kernel's intensity, which
    equals the larger of the two.
    """

    name: str
    accelerator: str
    precision: str
    duration_s: float
    bytes_moved: float
    flops: float
    peak_flops: float
    bandwidth_bytes_per_s: float

    @property
    def achieved_flops(self) -> float:
        return self.flops / self.duration_s

    @property
    def achieved_bandwidth_bytes_per_s(self) -> float:
        return self.bytes_moved / self.duration_s

    @property
    def intensity_flops_per_byte(self) -> float:
        return self.flops / self.bytes_moved

    @property
    def compute_fraction(self) -> float:
        return self.achieved_flops / self.peak_flops

    @property
    def memory_fraction(self) -> float:
        return self.achieved_bandwidth_bytes_per_s / self.bandwidth_bytes_per_s

    @property
    def roof_flops(self) -> float:
        """The roofline at this kernel's intensity: min(peak, bandwidth x intensity)."""
        return float(attainable_flops(self.intensity_flops_per_byte, self.peak_flops, self.bandwidth_bytes_per_s))

    @property
    def roof(self) -> str:
        """Which roof applies at this intensity: 'memory' left of the ridge, 'compute' right of it."""
        return "memory" if self.intensity_flops_per_byte < self.peak_flops / self.bandwidth_bytes_per_s else "compute"

    @property
    def fraction_of_roof(self) -> float:
        return self.achieved_flops / self.roof_flops

    @property
    def limiter(self) -> str:
        """'memory' or 'compute' (the busier unit, at >= 60% of its peak), else 'latency'."""
        if max(self.compute_fraction, self.memory_fraction) < PROFILE_LATENCY_FRACTION:
            return "latency"
        return "memory" if self.memory_fraction >= self.compute_fraction else "compute"

    @property
    def verdict(self) -> str:
        """One line: how far from its roof the kernel ran and what that suggests."""
        f = self.fraction_of_roof
        if f > 1 + 1e-9:
            return (f"above its {self.roof} roof ({f:.0%}): check the bytes and FLOP counted "
                    f"(did caches serve part of the traffic?)")
        if self.limiter == "latency":
            return (f"{f:.0%} of its {self.roof} roof: neither roof is near; look for too few "
                    f"warps or blocks, stalls, or launch overhead")
        if max(self.compute_fraction, self.memory_fraction) > PROFILE_WELL_USED_FRACTION:
            return f"{f:.0%} of its {self.roof} roof: near the hardware's limit; only less {self.limiter} work helps"
        return f"{f:.0%} of its {self.roof} roof: {self.limiter}-limited, with some room left"


def read_profile(name, duration_s, bytes_moved, flops, accelerator="H100 SXM", precision="bf16") -> ProfileReading:
    """Place a profiled kernel against the roofline and name what limits it.

        achieved FLOP/s = flops / duration_s,   achieved bytes/s = bytes_moved / duration_s
        compute fraction = achieved FLOP/s / peak,   memory fraction = achieved bytes/s / bandwidth
        fraction of roof = achieved FLOP/s / min(peak, bandwidth x flops / bytes_moved)
                         = max(compute fraction, memory fraction)

    ``bytes_moved`` is DRAM (HBM) traffic, as a profiler's ``dram__bytes`` counts it; ``flops``
    the arithmetic done. The limiter follows Nsight Compute's speed-of-light rule: below 60% of
    peak on both, latency; otherwise whichever fraction is larger.

    >>> r = read_profile("decode GEMV", 48e-6, 134e6, 134e6, "H100 SXM", "bf16")
    >>> r.limiter, round(r.memory_fraction, 2)
    ('memory', 0.83)
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty string, got {name!r}")
    t = check_number("duration_s", duration_s, min_value=0, allow_min=False)
    q = check_number("bytes_moved", bytes_moved, min_value=0, allow_min=False)
    f = check_number("flops", flops, min_value=0, allow_min=False)
    acc = get_accelerator(accelerator)
    peak = acc.peak(precision)
    return ProfileReading(name=name, accelerator=acc.name, precision=precision.lower(), duration_s=t,
                          bytes_moved=q, flops=f, peak_flops=peak, bandwidth_bytes_per_s=acc.mem_bandwidth)
