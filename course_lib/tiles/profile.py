"""A tile-level profile of one Triton launch, computed from what each program instance did.

:func:`profile_launch` runs a ``@triton.jit`` kernel on Triton's CPU interpreter and watches
every ``tl.load`` and ``tl.store`` (its addresses and its mask), every ``tl.dot`` and every
floating-point elementwise operation and reduction, program by program. From that record:

* **traffic**: bytes each tensor argument was read and written (masked-off lanes move nothing),
  and the **distinct** bytes (each byte counted once however many programs read it). Their ratio
  is the reuse across programs that an on-chip cache could serve;
* **FLOP**: ``tl.dot`` FLOP, 2 M N K per call on the whole tile (masked lanes compute too, as on a
  GPU), and elementwise FLOP, one per element of each floating-point add, multiply, divide,
  exp, max... and one per element a reduction reads;
* the launch: programs, their order, what each read.

**No reuse between programs** is lesson 06's model (each program loads its tiles from HBM), so
``bytes_moved`` is what lesson 06's formulas count: for a tiled matmul
``b (mk ceil(n/tn) + kn ceil(m/tm) + mn)``. ``hbm_bytes(programs_per_wave=W)`` is the same
traffic when the W programs that run at once share what they read through L2 and nothing is
kept between waves (``W = 1``: no reuse; ``W = programs``: every byte read once). That is the
model behind grouped program order.

**Bounds.** A masked-in access outside every tensor argument raises :class:`TileAccessError`
*before* the interpreter touches memory, naming the program, the tensor, the offsets and the
source line. To make that attribution exact, the tensors are copied into one staging buffer with
a guard gap before and after each (so an overrun never lands inside a neighbour) and copied back
after the launch.

This module reaches into Triton's interpreter (the ``interpreter_builder`` object and the
``ReduceOps`` class of ``triton.runtime.interpreter``): ``tests/test_tiles_contract.py`` pins every
behaviour it relies on, so a Triton release that changes them fails there, by name.
"""

from __future__ import annotations

import inspect
import math
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from .._validate import check_int, check_number
from ..hardware import get_accelerator
from ..roofline import Kernel, KernelPoint, place_kernel
from .select import require_triton

__all__ = [
    "TileAccessError", "TensorTraffic", "TileProfile", "profile_launch", "run_checked",
    "TilePrediction", "predict_tiles", "precision_of", "read_map", "TileReads", "tile_reads",
]

#: Each tensor starts at a multiple of this many bytes in the staging buffer.
ALIGN_BYTES = 256
#: Guard gap around each staged tensor: at least this many bytes, or the tensor's own size.
MIN_GUARD_BYTES = 4096

#: Floating-point elementwise operations of the interpreter's builder, with FLOP per element.
_FLOAT_OPS = {
    "create_fadd": 1, "create_fsub": 1, "create_fmul": 1, "create_fdiv": 1, "create_precise_divf": 1,
    "create_frem": 1, "create_fma": 2, "create_exp": 1, "create_exp2": 1, "create_log": 1,
    "create_log2": 1, "create_sqrt": 1, "create_precise_sqrt": 1, "create_rsqrt": 1, "create_cos": 1,
    "create_sin": 1, "create_erf": 1, "create_minimumf": 1, "create_minnumf": 1, "create_maximumf": 1,
    "create_maxnumf": 1, "create_fabs": 1,
}


class TileAccessError(IndexError):
    """A masked-in ``tl.load``/``tl.store`` outside every tensor argument, before memory is touched."""

    def __init__(self, message, program=None, tensor=None, offsets=(), line=None):
        super().__init__(message)
        self.program, self.tensor, self.offsets, self.line = program, tensor, tuple(offsets), line

    def _render_traceback_(self):          # IPython: the message, without Triton's frames
        return [f"TileAccessError: {self}"]


@dataclass(frozen=True)
class _Staged:
    name: str
    dtype: str
    itemsize: int
    shape: tuple
    numel: int
    base: int            # address in the staging buffer
    span_bytes: int      # bytes from base to one past the last element


@dataclass(frozen=True)
class TensorTraffic:
    """Bytes one tensor argument moved: read and written, and distinct bytes of each."""

    name: str
    dtype: str
    itemsize: int
    shape: tuple
    bytes_read: int
    bytes_written: int
    distinct_bytes_read: int
    distinct_bytes_written: int

    @property
    def read_reuse(self) -> float:
        """Bytes read / distinct bytes read: how many programs read each byte on average."""
        return self.bytes_read / self.distinct_bytes_read if self.distinct_bytes_read else 0.0


@dataclass(frozen=True)
class TileProfile:
    """What one launch did, program by program. Built by :func:`profile_launch`.

    ``program_order`` maps each program's launch position (x fastest, then y, then z, as a GPU
    hands out blocks) to its ``(x, y, z)`` program id.
    """

    kernel_name: str
    grid: tuple
    tensors: tuple                      # TensorTraffic per tensor argument, in argument order
    loads: int                          # tl.load executions, over all programs
    stores: int
    load_lanes: int                     # elements the loads asked for, masked-off ones included
    load_lanes_active: int              # masked-in elements
    store_lanes: int
    store_lanes_active: int
    dot_flops: float
    elementwise_flops: float
    dots: int
    dot_dtypes: tuple                   # distinct input dtypes of tl.dot, e.g. ('fp16',)
    seconds: float                      # wall time of the interpreted launch
    _reads: dict = field(repr=False, compare=False)    # tensor name -> (program position, element offset)
    _writes: dict = field(repr=False, compare=False)

    # --- the launch
    @property
    def programs(self) -> int:
        return int(np.prod(self.grid))

    @property
    def flops(self) -> float:
        return self.dot_flops + self.elementwise_flops

    # --- traffic
    @property
    def bytes_read(self) -> int:
        return sum(t.bytes_read for t in self.tensors)

    @property
    def bytes_written(self) -> int:
        return sum(t.bytes_written for t in self.tensors)

    @property
    def bytes_moved(self) -> int:
        """Bytes loaded plus bytes stored, no reuse between programs (lesson 06's count)."""
        return self.bytes_read + self.bytes_written

    @property
    def distinct_bytes(self) -> int:
        """Each byte read or written counted once: the floor any cache could reach."""
        return sum(t.distinct_bytes_read + t.distinct_bytes_written for t in self.tensors)

    @property
    def intensity_flops_per_byte(self) -> float:
        return self.flops / self.bytes_moved if self.bytes_moved else math.inf

    def tensor(self, name) -> TensorTraffic:
        for t in self.tensors:
            if t.name == name:
                return t
        raise ValueError(f"no tensor argument named {name!r}; the launch had {[t.name for t in self.tensors]}")

    def hbm_bytes(self, programs_per_wave=1) -> int:
        """HBM bytes when each wave of ``programs_per_wave`` consecutive programs shares its reads.

        Within a wave, a byte several programs read comes from HBM once (L2 serves the rest);
        nothing is kept from one wave to the next. Writes always go to HBM once each.
        ``programs_per_wave=1`` is :attr:`bytes_moved`.
        """
        w = check_int("programs_per_wave", programs_per_wave, min_value=1)
        total = self.bytes_written
        for t in self.tensors:
            pos, off = self._reads[t.name]
            if pos.size:
                key = (pos // w).astype(np.int64) * (int(off.max()) + 1) + off
                total += np.unique(key).size * t.itemsize
        return int(total)

    def summary(self) -> str:
        lines = [f"{self.kernel_name}: grid {self.grid} = {self.programs} programs; "
                 f"{self.loads} loads, {self.stores} stores, {self.dots} dots",
                 f"  FLOP {self.flops:,.0f} (tl.dot {self.dot_flops:,.0f}, elementwise {self.elementwise_flops:,.0f}); "
                 f"bytes moved {self.bytes_moved:,} (distinct {self.distinct_bytes:,}); "
                 f"intensity {self.intensity_flops_per_byte:.2f} FLOP/B"]
        for t in self.tensors:
            if t.bytes_read or t.bytes_written:
                lines.append(f"  {t.name:>8} {t.dtype:>8} {str(t.shape):>14}: read {t.bytes_read:>10,} B "
                             f"(distinct {t.distinct_bytes_read:,}), written {t.bytes_written:,} B")
        return "\n".join(lines)

    def __str__(self):
        return self.summary()


_TORCH_NAMES = {"float64": "fp64", "float32": "fp32", "float16": "fp16", "bfloat16": "bf16",
                "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5", "int64": "int64", "int32": "int32",
                "int16": "int16", "int8": "int8", "uint8": "uint8", "bool": "bool"}


def _dtype_name(t) -> str:
    name = str(t.dtype).replace("torch.", "")
    if name not in _TORCH_NAMES:
        raise TypeError(f"tensor dtype {name} is not supported by the profiler; use one of {sorted(_TORCH_NAMES)}")
    return _TORCH_NAMES[name]


# --------------------------------------------------------------------------------------------
# Staging: every tensor argument in one buffer, with guard gaps
# --------------------------------------------------------------------------------------------

def _stage(names, values):
    """Copy the tensor arguments into one byte buffer; return (new values, staged infos, buffer)."""
    import torch
    tensors = [(i, n, v) for i, (n, v) in enumerate(zip(names, values)) if isinstance(v, torch.Tensor)]
    for _, n, v in tensors:
        if v.device.type != "cpu":
            raise ValueError(f"tensor {n!r} is on {v.device}: the profiler runs on the CPU interpreter; "
                             f"pass CPU tensors (x.cpu())")
    layout, cursor = [], 0
    for _, n, v in tensors:
        span = (sum((s - 1) * st for s, st in zip(v.shape, v.stride())) + 1) * v.element_size() if v.numel() else 0
        guard = max(MIN_GUARD_BYTES, span)
        cursor = -(-(cursor + guard) // ALIGN_BYTES) * ALIGN_BYTES
        layout.append((cursor, span))
        cursor += span
    total = cursor + max([MIN_GUARD_BYTES] + [s for _, s in layout]) + ALIGN_BYTES
    buf = torch.zeros(total + ALIGN_BYTES, dtype=torch.uint8)
    shift = (-buf.data_ptr()) % ALIGN_BYTES
    new_values, staged, pairs = list(values), [], []
    for (i, n, v), (start, span) in zip(tensors, layout):
        nbytes_elem = v.element_size()
        offset = shift + start
        view = torch.empty(0, dtype=v.dtype)
        view.set_(buf.untyped_storage(), offset // nbytes_elem, v.shape, v.stride())
        if offset % nbytes_elem:
            raise AssertionError("staging misaligned")          # pragma: no cover - ALIGN_BYTES divides
        view.copy_(v)
        new_values[i] = view
        staged.append(_Staged(n, _dtype_name(v), nbytes_elem, tuple(v.shape), v.numel(), view.data_ptr(), span))
        pairs.append((v, view))
    return new_values, staged, buf, pairs


# --------------------------------------------------------------------------------------------
# The recorder: wraps the interpreter's builder for the length of one launch
# --------------------------------------------------------------------------------------------

class _Recorder:
    def __init__(self, staged, grid, kernel_fn):
        self.staged = staged
        self.bases = np.array([s.base for s in staged], dtype=np.uint64)
        self.ends = np.array([s.base + s.span_bytes for s in staged], dtype=np.uint64)
        self.order = np.argsort(self.bases, kind="stable")
        self.sorted_bases = self.bases[self.order]
        self.grid = grid
        self.position = 0
        self.program = (0, 0, 0)
        self.loads = self.stores = 0
        self.load_lanes = self.load_active = self.store_lanes = self.store_active = 0
        self.dot_flops = 0.0
        self.elem_flops = 0.0
        self.dots = 0
        self.dot_dtypes = set()
        self.read_addr, self.read_pos = [], []
        self.write_addr, self.write_pos = [], []
        code = getattr(kernel_fn, "__code__", None)
        self.kernel_file = code.co_filename if code else None
        self.kernel_name = getattr(kernel_fn, "__name__", "kernel")

    # --- where we are
    def set_program(self, x, y, z):
        gx, gy, _ = self.grid
        self.program = (x, y, z)
        self.position = x + gx * (y + gy * z)

    def _line(self):
        frame = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename == self.kernel_file and frame.f_code.co_name == self.kernel_name:
                return frame.f_lineno
            frame = frame.f_back
        return None

    # --- memory
    def _owner(self, addr):
        """Index (into staged) of the tensor whose span holds each address, or -1."""
        k = np.searchsorted(self.sorted_bases, addr, side="right").astype(np.int64) - 1
        idx = np.where(k >= 0, self.order[np.maximum(k, 0)], -1)
        inside = (idx >= 0) & (addr < self.ends[np.maximum(idx, 0)])
        return np.where(inside, idx, -1)

    def _nearest(self, addr):
        """The tensor an out-of-bounds address most likely belongs to, and its signed element offset."""
        a = int(addr)
        best = min(range(len(self.staged)), key=lambda i: min(abs(a - int(self.bases[i])), abs(a - int(self.ends[i]))))
        s = self.staged[best]
        return s, (a - s.base) // s.itemsize

    def access(self, ptrs, mask, kind):
        addr = np.asarray(ptrs.data)
        itemsize = max(1, ptrs.get_element_ty().primitive_bitwidth // 8)
        m = np.broadcast_to(np.asarray(mask.data, dtype=bool), addr.shape)
        active = addr[m] if not m.all() else addr.reshape(-1)
        lanes, n_active = addr.size, active.size
        if kind == "load":
            self.loads += 1
            self.load_lanes += lanes
            self.load_active += n_active
        else:
            self.stores += 1
            self.store_lanes += lanes
            self.store_active += n_active
        if n_active == 0:
            return
        active = active.astype(np.uint64, copy=False)
        lo, hi = active.min(), active.max()
        owner = self._owner(np.array([lo, hi], dtype=np.uint64))
        if not (owner[0] >= 0 and owner[0] == owner[1] and int(hi) + itemsize <= int(self.ends[owner[0]])):
            self._check_each(active, itemsize, kind)
        (self.read_addr if kind == "load" else self.write_addr).append(active)
        (self.read_pos if kind == "load" else self.write_pos).append((self.position, n_active))

    def _check_each(self, active, itemsize, kind):
        owner = self._owner(active)
        ends_ok = owner >= 0
        ends_ok[ends_ok] = active[ends_ok] + np.uint64(itemsize) <= self.ends[owner[ends_ok]]
        bad = active[~ends_ok]
        if bad.size == 0:
            return
        s, _ = self._nearest(bad[0])
        offs = [(int(b) - s.base) // s.itemsize for b in bad[:6]]
        line = self._line()
        verb = "tl.load from" if kind == "load" else "tl.store to"
        where = f" at line {line}" if line else ""
        raise TileAccessError(
            f"program {self.program} ({self.kernel_name}{where}): {verb} {s.name!r} at element offsets "
            f"{offs}{' ...' if bad.size > 6 else ''} ({bad.size} lanes), outside the tensor's {s.numel} elements "
            f"(valid offsets 0..{s.numel - 1}). A lane past the end needs a mask: tl.load(ptr, mask=offsets < n).",
            program=self.program, tensor=s.name, offsets=offs, line=line)

    # --- results
    def per_tensor(self, addrs, pos):
        out = {s.name: (np.zeros(0, np.int64), np.zeros(0, np.int64)) for s in self.staged}
        if not addrs:
            return out
        a = np.concatenate(addrs)
        p = np.repeat(np.array([q for q, _ in pos], dtype=np.int64), [n for _, n in pos])
        owner = self._owner(a)
        for i, s in enumerate(self.staged):
            sel = owner == i
            out[s.name] = (p[sel], ((a[sel] - np.uint64(s.base)) // np.uint64(s.itemsize)).astype(np.int64))
        return out


def _install(rec, builder, reduce_cls):
    """Wrap the builder's methods (instance attributes shadow the class's) and ReduceOps.apply."""
    saved = []

    def put(obj, name, value):
        saved.append((obj, name, obj.__dict__.get(name, _MISSING)))
        setattr(obj, name, value)

    cls = type(builder)
    masked_load, masked_store = cls.create_masked_load, cls.create_masked_store
    set_grid_idx, dot = cls.set_grid_idx, cls.create_dot

    def create_masked_load(ptrs, mask, other, *rest, **kw):      # tensor descriptors pass keywords
        rec.access(ptrs, mask, "load")
        return masked_load(builder, ptrs, mask, other, *rest, **kw)

    def create_masked_store(ptrs, value, mask, *rest, **kw):
        rec.access(ptrs, mask, "store")
        return masked_store(builder, ptrs, value, mask, *rest, **kw)

    def create_set_grid_idx(x, y, z):
        rec.set_program(x, y, z)
        return set_grid_idx(builder, x, y, z)

    def create_dot(a, b, d, *rest):
        m, k = a.data.shape[-2:]
        n = b.data.shape[-1]
        batch = int(np.prod(a.data.shape[:-2])) if a.data.ndim > 2 else 1
        rec.dots += 1
        rec.dot_flops += 2.0 * batch * m * n * k
        rec.dot_dtypes.add(str(a.dtype.scalar if hasattr(a.dtype, "scalar") else a.dtype))
        return dot(builder, a, b, d, *rest)

    put(builder, "create_masked_load", create_masked_load)
    put(builder, "create_masked_store", create_masked_store)
    put(builder, "set_grid_idx", create_set_grid_idx)
    put(builder, "create_dot", create_dot)
    for name, per in _FLOAT_OPS.items():
        original = getattr(cls, name, None)
        if original is None:
            continue

        def counted(*args, _orig=original, _per=per):
            out = _orig(builder, *args)
            if out.data.dtype.kind == "f":
                rec.elem_flops += _per * out.data.size
            return out
        put(builder, name, counted)

    apply = reduce_cls.apply

    def counted_apply(self, input):
        if isinstance(input, tuple):        # apply(x) calls apply((x,)): count the inner call only
            data = input[0].handle.data
            if data.dtype.kind == "f":
                rec.elem_flops += data.size
        return apply(self, input)
    put(reduce_cls, "apply", counted_apply)
    return saved


_MISSING = object()


def _uninstall(saved):
    for obj, name, old in reversed(saved):
        if old is _MISSING:
            try:
                delattr(obj, name)
            except AttributeError:      # pragma: no cover
                pass
        else:
            setattr(obj, name, old)


def _interpreted(kernel):
    """An interpreted function for ``kernel`` (a @triton.jit kernel, interpreted or compiled)."""
    from triton.runtime.interpreter import InterpretedFunction
    if isinstance(kernel, InterpretedFunction):
        return kernel
    fn = getattr(kernel, "fn", None)
    if fn is None or not callable(fn):
        raise TypeError(f"kernel must be a @triton.jit function, got {type(kernel).__name__}")
    return InterpretedFunction(fn)


def _grid3(grid, args_by_name):
    if callable(grid):
        grid = grid(args_by_name)
    if isinstance(grid, int):
        grid = (grid,)
    if not isinstance(grid, (tuple, list)) or not 1 <= len(grid) <= 3:
        raise ValueError(f"grid must be an int or a tuple of 1 to 3 ints, got {grid!r}")
    g = tuple(check_int(f"grid[{i}]", v, min_value=1, max_value=1 << 20) for i, v in enumerate(grid))
    return g + (1,) * (3 - len(g))


def profile_launch(kernel, grid, *args, **kwargs) -> TileProfile:
    """Run ``kernel[grid](*args, **kwargs)`` on Triton's interpreter and profile what it did.

    Tensor arguments must be CPU torch tensors; their results are written back as a normal
    launch would. Raises :class:`TileAccessError` for a masked-in access outside every tensor.
    Example: a masked add of two 1000-element float32 vectors in blocks of 256 runs 4 programs,
    reads 8000 bytes and writes 4000, and does 1000 FLOP.
    """
    require_triton()
    from .select import interpreter_selected
    if not interpreter_selected():
        raise RuntimeError("the profiler runs kernels on Triton's interpreter, and this process compiles them "
                           "(TRITON_INTERPRET=0): unset it and restart to profile")
    from triton.runtime import interpreter as _interp
    fn = _interpreted(kernel)
    py_fn = fn.fn
    names = list(inspect.signature(py_fn).parameters)
    try:
        bound = inspect.signature(py_fn).bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"{py_fn.__name__}{inspect.signature(py_fn)}: {exc}") from None
    values = [bound.arguments.get(n, inspect.Parameter.empty) for n in names]
    present = [(n, v) for n, v in zip(names, values) if v is not inspect.Parameter.empty]
    p_names, p_values = [n for n, _ in present], [v for _, v in present]
    staged_values, staged, buf, pairs = _stage(p_names, p_values)
    grid3 = _grid3(grid, dict(zip(p_names, staged_values)))
    rec = _Recorder(staged, grid3, py_fn)
    saved = _install(rec, _interp.interpreter_builder, _interp.ReduceOps)
    t0 = time.perf_counter()
    try:
        # A GPU's arithmetic raises no floating-point warnings: 0/0 in a masked-off row (stored
        # nowhere) or exp overflowing to inf is silent there, and NumPy must not warn here either.
        # Whatever reaches an output is judged by the checks (a NaN or inf there is a numerics failure).
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            fn[grid3](**dict(zip(p_names, staged_values)))
    except _interp.InterpreterError as exc:
        cause = exc.__cause__
        if isinstance(cause, TileAccessError):
            raise cause.with_traceback(None) from None
        raise
    finally:
        _uninstall(saved)
    seconds = time.perf_counter() - t0
    reads = rec.per_tensor(rec.read_addr, rec.read_pos)
    writes = rec.per_tensor(rec.write_addr, rec.write_pos)
    for (original, view), s in zip(pairs, staged):
        if writes[s.name][1].size:          # only what the kernel stored to: inputs stay untouched
            original.copy_(view)
    del buf
    tensors = []
    for s in staged:
        r_off, w_off = reads[s.name][1], writes[s.name][1]
        tensors.append(TensorTraffic(
            s.name, s.dtype, s.itemsize, s.shape, int(r_off.size * s.itemsize), int(w_off.size * s.itemsize),
            int(np.unique(r_off).size * s.itemsize), int(np.unique(w_off).size * s.itemsize)))
    return TileProfile(
        kernel_name=py_fn.__name__, grid=grid3, tensors=tuple(tensors), loads=rec.loads, stores=rec.stores,
        load_lanes=rec.load_lanes, load_lanes_active=rec.load_active, store_lanes=rec.store_lanes,
        store_lanes_active=rec.store_active, dot_flops=rec.dot_flops, elementwise_flops=rec.elem_flops,
        dots=rec.dots, dot_dtypes=tuple(sorted(_short(d) for d in rec.dot_dtypes)), seconds=seconds,
        _reads=reads, _writes=writes)


def run_checked(kernel, grid, *args, **kwargs) -> None:
    """Launch on the interpreter with the profiler's bounds check (the profile is discarded)."""
    profile_launch(kernel, grid, *args, **kwargs)


def _short(dtype_name: str) -> str:
    return {"fp16": "fp16", "bf16": "bf16", "fp32": "fp32", "fp64": "fp64", "fp8e4nv": "fp8", "fp8e5": "fp8",
            "int8": "int8"}.get(dtype_name, dtype_name)


# --------------------------------------------------------------------------------------------
# Where the reads fell (for the tile pictures)
# --------------------------------------------------------------------------------------------

def read_map(profile: TileProfile, tensor: str, programs=None) -> np.ndarray:
    """For a 2D tensor argument: how many of ``programs`` (launch positions; all by default) read
    each element. Shape = the tensor's shape. A zero is an element none of them read."""
    t = profile.tensor(tensor)
    if len(t.shape) != 2:
        raise ValueError(f"read_map draws 2D tensors; {tensor!r} has shape {t.shape}")
    pos, off = profile._reads[tensor]
    if programs is not None:
        wanted = np.asarray(list(programs), dtype=np.int64)
        if wanted.size and (wanted.min() < 0 or wanted.max() >= profile.programs):
            raise ValueError(f"programs must lie in 0..{profile.programs - 1}")
        sel = np.isin(pos, wanted)
        pos, off = pos[sel], off[sel]
    rows, cols = t.shape
    key = np.unique(pos * (rows * cols) + off)        # one count per (program, element)
    counts = np.bincount(key % (rows * cols), minlength=rows * cols)
    return counts.reshape(rows, cols)


@dataclass(frozen=True)
class TileReads:
    """Read maps of several 2D tensors for one set of programs (for ``plot_tile_reads``)."""

    kernel_name: str
    programs: tuple                  # launch positions
    maps: dict                       # tensor name -> counts array (its shape)
    bytes_read: dict                 # by those programs, tensor name -> bytes (no reuse)
    distinct_bytes: dict             # tensor name -> distinct bytes those programs read

    def describe_programs(self) -> str:
        p = self.programs
        if len(p) > 2 and p == tuple(range(p[0], p[-1] + 1)):
            return f"{p[0]}..{p[-1]}"
        return ", ".join(str(x) for x in p)


def tile_reads(profile: TileProfile, tensors, programs) -> TileReads:
    """The read maps of ``tensors`` (names of 2D arguments) by ``programs`` (launch positions)."""
    if isinstance(tensors, str):
        tensors = (tensors,)
    programs = tuple(int(p) for p in programs)
    if not programs:
        raise ValueError("programs must name at least one launch position")
    maps, read, distinct = {}, {}, {}
    for name in tensors:
        t = profile.tensor(name)
        counts = read_map(profile, name, programs)
        maps[name] = counts
        read[name] = int(counts.sum()) * t.itemsize
        distinct[name] = int(np.count_nonzero(counts)) * t.itemsize
    return TileReads(profile.kernel_name, programs, maps, read, distinct)


# --------------------------------------------------------------------------------------------
# The roofline time on a catalog accelerator
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TilePrediction:
    """Lesson 04's roofline time for a tile kernel's FLOP and bytes on one accelerator."""

    point: KernelPoint
    precision: str

    @property
    def accelerator(self) -> str:
        return self.point.accelerator

    @property
    def t_s(self) -> float:
        """max(FLOP / peak, bytes / bandwidth)."""
        return self.point.t_min_s

    @property
    def bound(self) -> str:
        return self.point.bound

    @property
    def intensity_flops_per_byte(self) -> float:
        return self.point.intensity_flops_per_byte

    @property
    def t_compute_s(self) -> float:
        return self.point.t_compute_s

    @property
    def t_memory_s(self) -> float:
        return self.point.t_memory_s


def precision_of(profile: TileProfile) -> str:
    """The peak a launch runs at: its tl.dot inputs' type (fp32 inputs use TF32, Triton's default
    for tl.dot), or FP32 on the vector units for a kernel without tl.dot."""
    if not profile.dot_dtypes:
        return "fp32"
    lowest = profile.dot_dtypes[0]
    return {"fp32": "tf32", "fp64": "fp64_tensor"}.get(lowest, lowest)


def predict_tiles(flops, bytes_moved, accelerator="H100 SXM", precision="fp32") -> TilePrediction:
    """Roofline time t = max(F / peak, Q / bandwidth) on ``accelerator`` at ``precision``.

    Occupancy-free: it assumes the launch keeps the chip busy. Example: 1 GB moved by an
    elementwise kernel on an H100 SXM (3.35 TB/s) takes at least 0.30 ms.
    """
    flops = check_number("flops", flops, min_value=0, max_value=1e30)
    bytes_moved = check_number("bytes_moved", bytes_moved, min_value=0, max_value=1e30, allow_min=False)
    acc = get_accelerator(accelerator)
    point = place_kernel(Kernel("tile kernel", flops, bytes_moved), acc, precision)
    return TilePrediction(point, precision)
