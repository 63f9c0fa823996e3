"""The learner's own roofline, measured with NumPy: bandwidth, matmul FLOP/s, and kernels under the roof.

    attainable(I) = min(peak_flops, I * bandwidth),   I = FLOP / byte

Every measurement goes through one timer, :func:`~course_lib.measure.timer.time_best`: an untimed
warm-up call (first-touch page faults, BLAS thread start-up, caches), then the best of at least
``repeats`` runs and at least ``min_time_s`` of timed calls (the least disturbed run). The matmul peak that defines the
flat roof is timed exactly as the kernels placed under it are. Bytes are counted as each NumPy
pass really moves them (``out=`` passes, no hidden temporaries). The whole default run takes
one to two seconds. Drawing: ``course_lib.plots.roofline``.
"""

from __future__ import annotations

import glob
import os
import platform
from dataclasses import dataclass

import numpy as np

from .._validate import check_bool, check_float_dtype, check_int, check_sequence
from ..roofline import attainable_flops
from .progress import progress_bar
from .timer import time_best

#: Largest float64 array a CPU measurement allocates (three of them at once: 3 GiB in all).
MAX_ARRAY_BYTES = 2 ** 30
#: Largest square matmul timed on the CPU: 2 * 4096^3 FLOP is about a second on a laptop.
MAX_GEMM_SIZE = 4096

__all__ = [
    "REPEATS",
    "MIN_TIME_S",
    "last_level_cache_bytes",
    "stream_array_bytes",
    "cpu_description",
    "MachineRoofline",
    "KernelMeasurement",
    "measure_bandwidth",
    "measure_matmul_flops",
    "measure_machine",
    "measure_kernels",
    "gpu_status",
    "measure_gpu_machine",
]


#: Defaults shared by every CPU measurement, so the peak and the kernels are timed alike.
REPEATS = 5
MIN_TIME_S = 0.05


def last_level_cache_bytes() -> int | None:
    """Size of this CPU's largest cache in bytes, where the OS reports it (Linux); else None."""
    for name in ("SC_LEVEL3_CACHE_SIZE", "SC_LEVEL2_CACHE_SIZE"):
        try:
            size = os.sysconf(name)
        except (ValueError, OSError, AttributeError):
            continue
        if size and size > 0:
            return int(size)
    sizes = []
    for path in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*/size"):
        try:
            text = open(path).read().strip().upper()
        except OSError:
            continue
        scale = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if digits.isdigit():
            sizes.append(int(digits) * scale)
    return max(sizes) if sizes else None


def stream_array_bytes(factor: int = 2, floor: int = 64 * 2 ** 20) -> int:
    """Bytes per array for bandwidth runs: ``factor`` x the last-level cache, at least ``floor``."""
    factor = check_int("factor", factor, min_value=1, max_value=64)
    floor = check_int("floor", floor, min_value=8 * 1024, max_value=MAX_ARRAY_BYTES)
    llc = last_level_cache_bytes() or 0
    return min(max(floor, factor * llc), MAX_ARRAY_BYTES)


def cpu_description() -> str:
    """A one-line description of this CPU: model name where Linux exposes it, and core count."""
    name = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{name}, {os.cpu_count()} logical cores"


@dataclass(frozen=True)
class MachineRoofline:
    """The learner's measured roofs: sustained bandwidth (bytes/s) and matmul FLOP/s."""

    description: str
    copy_bandwidth_bytes_per_s: float
    triad_bandwidth_bytes_per_s: float
    scale_bandwidth_bytes_per_s: float
    peak_flops: float
    gemm_size: int
    array_bytes: int

    @property
    def bandwidth_bytes_per_s(self) -> float:
        """The memory roof: the best of the three sustained streams."""
        return max(self.copy_bandwidth_bytes_per_s, self.triad_bandwidth_bytes_per_s,
                   self.scale_bandwidth_bytes_per_s)

    @property
    def ridge_point(self) -> float:
        return self.peak_flops / self.bandwidth_bytes_per_s


def measure_bandwidth(array_bytes: int | None = None, repeats: int = REPEATS,
                      min_time_s: float = MIN_TIME_S) -> tuple[float, float, float]:
    """Sustained (copy, triad, scale) bandwidth in bytes/s on float64 arrays of ``array_bytes``.

    copy:  dst[:] = src                 counted as 2 arrays (one read, one write)
    triad: a = b * s; a += c            counted as 5 arrays (two passes, no temporaries)
    scale: x *= s, in place             counted as 2 arrays (read and write the same lines)
    Writing to a line that is not in cache first reads it ("write-allocate"), so copy and triad
    move more bytes than we count and report less; the in-place scale does not, and is usually
    the highest. Arrays are far larger than the last-level cache: by default twice its size,
    and at least 64 MiB, so no level of cache can hold even one of them.
    """
    array_bytes = stream_array_bytes() if array_bytes is None else array_bytes
    array_bytes = check_int("array_bytes", array_bytes, min_value=8 * 1024, max_value=MAX_ARRAY_BYTES,
                            why="three arrays of this size are allocated")
    n = array_bytes // 8
    src = np.ones(n)
    dst = np.empty(n)
    c = np.full(n, 2.0)
    t_copy = time_best(lambda: np.copyto(dst, src), repeats, min_time_s)

    def triad():
        np.multiply(src, 3.0, out=dst)
        np.add(dst, c, out=dst)

    t_triad = time_best(triad, repeats, min_time_s)
    t_scale = time_best(lambda: np.multiply(c, 1.0, out=c), repeats, min_time_s)
    return 2 * n * 8 / t_copy, 5 * n * 8 / t_triad, 2 * n * 8 / t_scale


def measure_matmul_flops(n: int = 1024, dtype=np.float32, repeats: int = REPEATS,
                         min_time_s: float = MIN_TIME_S) -> float:
    """Sustained FLOP/s of an n x n x n NumPy matmul: 2 n^3 / best time (timed as the kernels are)."""
    n = check_int("n", n, min_value=1, max_value=MAX_GEMM_SIZE, why="larger takes many seconds")
    dtype = check_float_dtype("dtype", dtype)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(dtype)
    b = rng.standard_normal((n, n)).astype(dtype)
    out = np.empty((n, n), dtype=dtype)
    t = time_best(lambda: np.matmul(a, b, out=out), repeats, min_time_s)
    return 2.0 * n ** 3 / t


def measure_machine(array_bytes: int | None = None, gemm_size: int = 1024, progress: bool = True,
                    repeats: int = REPEATS, min_time_s: float = MIN_TIME_S) -> MachineRoofline:
    """Measure this machine's two roofs (about a second with the defaults).

    Memory roof: the best of copy, triad and in-place scale (:func:`measure_bandwidth`). Flat
    roof: the best FLOP/s of a ``gemm_size``^3 and a (``gemm_size``/2)^3 float32 matmul.
    """
    gemm_size = check_int("gemm_size", gemm_size, min_value=2, max_value=MAX_GEMM_SIZE,
                          why="larger takes many seconds")
    with progress_bar(2, "measuring roofs", enabled=progress) as bar:
        array_bytes = stream_array_bytes() if array_bytes is None else array_bytes
        copy_bw, triad_bw, scale_bw = measure_bandwidth(array_bytes, repeats, min_time_s)
        bar.update()
        # The flat roof is the best rate of two square matmuls (gemm_size and half of it): on a
        # shared machine one size can be caught by a disturbance the other escapes.
        peak = max(measure_matmul_flops(size, repeats=repeats, min_time_s=min_time_s)
                   for size in (max(gemm_size // 2, 1), gemm_size))
        bar.update()
    return MachineRoofline(cpu_description(), copy_bw, triad_bw, scale_bw, peak, gemm_size, array_bytes)


@dataclass(frozen=True)
class KernelMeasurement:
    """One NumPy kernel: its FLOP and bytes, the best time, and the roofline's prediction."""

    name: str
    flops: float
    bytes_moved: float
    seconds: float
    predicted_flops: float

    @property
    def intensity_flops_per_byte(self) -> float:
        return self.flops / self.bytes_moved

    @property
    def measured_flops(self) -> float:
        return self.flops / self.seconds

    @property
    def fraction_of_prediction(self) -> float:
        return self.measured_flops / self.predicted_flops


def _kernels(n_stream: int, gemv_n: int, gemm_sizes, rng):
    """(name, flops, bytes, fn) for each kernel; bytes count what each NumPy pass moves."""
    f32 = np.float32
    x = rng.standard_normal(n_stream).astype(f32)
    y = rng.standard_normal(n_stream).astype(f32)
    tmp = np.empty_like(x)
    e = 4  # bytes per float32

    def axpy():              # y = 2x + y as two passes: tmp = 2x; y += tmp
        np.multiply(x, 2.0, out=tmp)
        np.add(y, tmp, out=y)

    def chain():             # eight in-place elementwise passes, 1 FLOP each
        np.copyto(tmp, x)
        for _ in range(4):
            np.multiply(tmp, 1.0001, out=tmp)
            np.add(tmp, 0.5, out=tmp)

    kernels = [
        ("axpy", 2.0 * n_stream, 5.0 * e * n_stream, axpy),
        ("8-op chain", 8.0 * n_stream, (2 + 8 * 2) * e * n_stream, chain),
    ]
    a = rng.standard_normal((gemv_n, gemv_n)).astype(f32)
    v = rng.standard_normal(gemv_n).astype(f32)
    w = np.empty(gemv_n, dtype=f32)
    kernels.append((f"GEMV {gemv_n}", 2.0 * gemv_n ** 2, e * (gemv_n ** 2 + 2 * gemv_n),
                    lambda: np.matmul(a, v, out=w)))
    for size in gemm_sizes:
        p = rng.standard_normal((size, size)).astype(f32)
        q = rng.standard_normal((size, size)).astype(f32)
        r = np.empty((size, size), dtype=f32)
        kernels.append((f"GEMM {size}", 2.0 * size ** 3, 3.0 * e * size ** 2,
                        (lambda p=p, q=q, r=r: np.matmul(p, q, out=r))))
    return kernels


def measure_kernels(machine: MachineRoofline, n_stream: int | None = None, gemv_n: int | None = None,
                    gemm_sizes=(32, 128, 512), repeats: int = REPEATS, rng=None,
                    progress: bool = True, min_time_s: float = MIN_TIME_S) -> list[KernelMeasurement]:
    """Time NumPy kernels (axpy, an 8-op chain, GEMV, GEMMs) and predict each from ``machine``.

    Each kernel is timed by :func:`time_best` with the same warm-up, repeats and minimum time as
    the roofs in :func:`measure_machine`."""
    if not isinstance(machine, MachineRoofline):
        raise TypeError("machine must be the MachineRoofline that measure_machine() returns")
    n_stream = stream_array_bytes() // 4 if n_stream is None else n_stream
    n_stream = check_int("n_stream", n_stream, min_value=1024, max_value=MAX_ARRAY_BYTES // 4,
                         why="three float32 arrays of n_stream elements are allocated")
    if gemv_n is None:       # a float32 matrix as large as one streaming array: far beyond cache
        gemv_n = int(np.sqrt(stream_array_bytes() / 4))
    gemv_n = check_int("gemv_n", gemv_n, min_value=2, max_value=16384,
                       why="the float32 matrix is gemv_n^2 elements")
    gemm_sizes = [check_int("gemm_sizes[i]", s, min_value=2, max_value=MAX_GEMM_SIZE,
                            why="larger takes many seconds")
                  for s in check_sequence("gemm_sizes", gemm_sizes, min_len=0, max_len=16)]
    rng = np.random.default_rng(0) if rng is None else rng
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator or None, got {type(rng).__name__}")
    kernels = _kernels(n_stream, gemv_n, gemm_sizes, rng)
    results = []
    with progress_bar(len(kernels), "timing kernels", enabled=progress) as bar:
        for name, flops, bytes_moved, fn in kernels:
            seconds = time_best(fn, repeats, min_time_s)
            predicted = attainable_flops(flops / bytes_moved, machine.peak_flops, machine.bandwidth_bytes_per_s)
            results.append(KernelMeasurement(name, flops, bytes_moved, seconds, predicted))
            bar.update()
    return results


def gpu_status() -> tuple[bool, str]:
    """(True, device name) when PyTorch or CuPy sees a GPU; else (False, one-line reason)."""
    try:
        import torch  # noqa: F401
        if torch.cuda.is_available():
            return True, f"PyTorch sees {torch.cuda.get_device_name(0)}"
    except ImportError:
        pass
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0:
            return True, "CuPy sees a GPU"
    except Exception:  # cupy missing or no driver: either way, no GPU to measure
        pass
    return False, "No GPU with PyTorch or CuPy here: the GPU cells are skipped; everything else runs on the CPU."


def measure_gpu_machine(array_bytes: int = 2 ** 30, gemm_size: int = 8192, repeats: int = 5,
                        progress: bool = True) -> MachineRoofline | None:
    """The GPU's two roofs with PyTorch, when PyTorch sees a GPU; ``None`` otherwise.

    Bandwidth: device-to-device copy of ``array_bytes`` (counted as one read and one write)
    and an in-place scale; compute: a ``gemm_size``^3 BF16 matmul, 2 n^3 FLOP, timed with CUDA
    events after a warm-up. Compare the result with the catalog's datasheet figures.
    """
    array_bytes = check_int("array_bytes", array_bytes, min_value=2 ** 20, max_value=2 ** 34,
                            why="two arrays of this size are allocated on the GPU")
    gemm_size = check_int("gemm_size", gemm_size, min_value=256, max_value=32768,
                          why="larger takes many seconds")
    repeats = check_int("repeats", repeats, min_value=1, max_value=1000)
    progress = check_bool("progress", progress)
    ok, _ = gpu_status()
    if not ok:
        return None
    try:
        import torch
    except ImportError:      # a CuPy-only machine: the course measures GPUs through PyTorch
        return None
    array_bytes = check_int("array_bytes", array_bytes, min_value=2 ** 20)
    gemm_size = check_int("gemm_size", gemm_size, min_value=256)
    device = torch.device("cuda")

    def cuda_time(fn) -> float:
        fn()                                   # warm-up: allocation, kernel selection
        torch.cuda.synchronize()
        best = float("inf")
        for _ in range(repeats):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            best = min(best, start.elapsed_time(end) / 1e3)
        return best

    with progress_bar(3, "measuring GPU", enabled=progress) as bar:
        n = array_bytes // 4
        src = torch.ones(n, dtype=torch.float32, device=device)
        dst = torch.empty_like(src)
        copy_bw = 2 * n * 4 / cuda_time(lambda: dst.copy_(src))
        bar.update()
        scale_bw = 2 * n * 4 / cuda_time(lambda: src.mul_(1.0))
        bar.update()
        a = torch.randn(gemm_size, gemm_size, dtype=torch.bfloat16, device=device)
        b = torch.randn(gemm_size, gemm_size, dtype=torch.bfloat16, device=device)
        flops = 2.0 * gemm_size ** 3 / cuda_time(lambda: a @ b)
        bar.update()
        name = torch.cuda.get_device_name(0)
        src = dst = a = b = None          # drop the GPU arrays before emptying the cache
        torch.cuda.empty_cache()
    return MachineRoofline(f"{name} (PyTorch, BF16 matmul)", copy_bw, copy_bw, scale_bw, flops,
                           gemm_size, array_bytes)
