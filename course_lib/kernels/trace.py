"""Run a real ``@cuda.jit`` kernel on the CPU, one CUDA thread at a time, and record what it did.

The kernel's Python source runs unchanged under numba's simulated ``cuda`` module (the same
module ``NUMBA_ENABLE_CUDASIM`` uses), so ``cuda.grid``, ``cuda.threadIdx``, ``cuda.blockIdx``,
``cuda.shared.array``, ``cuda.syncthreads`` and ``cuda.atomic`` behave as they do there. What
differs is the executor:

* **Deterministic.** numba's simulator starts one OS thread per CUDA thread and lets them race
  for the interpreter lock. Here each CUDA thread is a greenlet, and the threads of a block run
  one after another, in thread order, from one barrier to the next: a run is reproducible, and a
  kernel that forgets ``syncthreads`` reads stale shared memory every time, not sometimes.
* **Checked.** Every array index is checked against the array's shape before it is used: a
  negative index never wraps around and an index past the end never reads a neighbour. The error
  names the thread, the array, the index and the source line.
* **Traced.** Each thread records the source lines it executed (a line stands in for an
  instruction) and every global and shared-memory access: array, element, read or write or
  atomic, and how many barriers the thread had passed. ``course_lib.kernels.profile`` turns that
  record into per-warp counts; nothing here interprets it.
* **Bounded.** A launch stops with a clear error past ``max_steps`` executed lines or
  ``max_threads`` threads, so an endless loop or a huge grid cannot hang a notebook.

Shared memory starts as NaN (floats) or a recognisable garbage value (integers), as real shared
memory starts uninitialised: a kernel that reads before writing shows it in its output.
"""

from __future__ import annotations

import dis
import inspect
import itertools
import linecache
import os
import re
import sysconfig
from operator import index as _index
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._validate import check_array, check_int

__all__ = [
    "KernelFault", "OutOfBoundsError", "KernelStepLimit", "KernelCrash",
    "Launch", "Trace", "trace_launch", "python_function", "dim3",
    "READ", "WRITE", "ATOMIC", "GLOBAL", "SHARED",
    "MAX_THREADS", "MAX_STEPS", "MAX_THREAD_STEPS", "WARP_SIZE", "WarpSyncError", "WARP_OPS",
    "FULL_MASK", "UninitializedSharedRead",
]

READ, WRITE, ATOMIC = 0, 1, 2
#: Threads per warp on every NVIDIA GPU (CUDA C++ Programming Guide, "SIMT Architecture").
WARP_SIZE = 32
GLOBAL, SHARED = 0, 1
#: A launch may run at most this many CUDA threads (a few seconds of CPU at most).
MAX_THREADS = 1 << 16
#: ... and execute at most this many kernel source lines over all its threads (about 3 s) ...
MAX_STEPS = 1_000_000
#: ... and at most this many in any one thread: the lab's threads run a few hundred lines, so a
#: thread past this is in an endless loop, and is stopped in well under a second.
MAX_THREAD_STEPS = 50_000
#: cudaMalloc returns addresses aligned to at least 256 bytes (CUDA C++ Programming Guide,
#: "Device Memory Accesses"); the tracer places each global array on such a boundary.
GLOBAL_ALIGN_BYTES = 256
_INT_GARBAGE = 0x5A5A5A5A


class KernelFault(Exception):
    """A kernel did something a GPU would not allow or that the course refuses: it says what.

    In a notebook it shows as its message alone, without a traceback into the course library.
    """

    def _render_traceback_(self):
        return [f"{type(self).__name__}: {line}" if i == 0 else line
                for i, line in enumerate(str(self).splitlines())]


class OutOfBoundsError(KernelFault, IndexError):
    """A thread indexed an array outside its shape (or with a negative or non-integer index)."""


class KernelStepLimit(KernelFault):
    """A launch ran more threads or more source lines than the course allows."""


class KernelCrash(KernelFault):
    """The kernel's own code raised an exception in one thread."""


class UninitializedSharedRead(KernelCrash):
    """A store that failed (an integer overflow) after its thread read shared memory no thread of
    its block had written: the garbage, not the arithmetic, is the problem."""


class WarpSyncError(KernelFault):
    """A warp-level primitive whose lanes did not meet: a lane named by the mask never arrived
    (it exited, waits at a barrier or at another primitive), a mask without the caller, or a
    shuffle that reads a lane outside the mask (undefined on a GPU)."""


#: The warp-level primitives the executor runs, with warp-synchronous semantics (CUDA C++
#: Programming Guide, "Warp Shuffle Functions", "Warp Vote Functions", "__syncwarp"); the codes
#: are the trace's ``warp_ops[:, 2]``.
WARP_OPS = ("syncwarp", "shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync",
            "ballot_sync", "all_sync", "any_sync", "eq_sync", "activemask")
FULL_MASK = 0xFFFFFFFF
_SHUFFLES = frozenset(WARP_OPS[1:5])


def dim3(name, value) -> tuple[int, int, int]:
    """A grid or block shape as (x, y, z): an int, or a tuple of 1 to 3 positive ints."""
    if isinstance(value, (list, tuple)):
        if not 1 <= len(value) <= 3:
            raise ValueError(f"{name} must have 1 to 3 dimensions (x, y, z), got {value!r}")
        parts = [check_int(f"{name}[{i}]", v, min_value=1, max_value=1 << 31) for i, v in enumerate(value)]
    else:
        parts = [check_int(name, value, min_value=1, max_value=1 << 31)]
    return tuple(parts + [1] * (3 - len(parts)))


def python_function(kernel):
    """The Python function behind a ``@cuda.jit`` kernel (simulated or real), or a plain function."""
    for attr in ("py_func", "fn"):
        fn = getattr(kernel, attr, None)
        if inspect.isfunction(fn):
            return fn
    if inspect.isfunction(kernel):
        return kernel
    raise TypeError(f"kernel must be a function decorated with @cuda.jit, got "
                    f"{type(kernel).__name__} {kernel!r}")


@dataclass(frozen=True)
class Launch:
    """A launch configuration: grid and block as (x, y, z)."""

    grid: tuple
    block: tuple

    def __post_init__(self):
        object.__setattr__(self, "grid", dim3("grid", self.grid))
        object.__setattr__(self, "block", dim3("block", self.block))

    @property
    def threads_per_block(self) -> int:
        return int(np.prod(self.block))

    @property
    def n_blocks(self) -> int:
        return int(np.prod(self.grid))

    @property
    def n_threads(self) -> int:
        return self.threads_per_block * self.n_blocks

    @property
    def warps_per_block(self) -> int:
        """A block's threads in warps of WARP_SIZE, the last one possibly partial."""
        return -(-self.threads_per_block // WARP_SIZE)

    @property
    def n_warps(self) -> int:
        return self.n_blocks * self.warps_per_block


@dataclass(frozen=True)
class ArrayInfo:
    """One array the kernel touched: its name, space, shape, element size and base address."""

    name: str
    space: int            # GLOBAL or SHARED
    shape: tuple
    itemsize: int
    base_bytes: int       # global: a 256-byte aligned address; shared: offset in the block's shared memory
    layout: tuple | None = None   # (element strides, offset) of a non-contiguous view; None: C order

    def element_offsets(self, flat) -> np.ndarray:
        """Element offset in memory of each logical (C-order) flat index: the same for C order."""
        flat = np.asarray(flat, np.int64)
        if self.layout is None:
            return flat
        strides, offset = self.layout
        coords = np.unravel_index(flat, self.shape)
        return offset + sum(c.astype(np.int64) * s for c, s in zip(coords, strides))

    @property
    def space_name(self) -> str:
        return "global" if self.space == GLOBAL else "shared"


@dataclass(frozen=True)
class Trace:
    """Everything one launch did, as flat arrays (one row per access, one per executed line).

    Threads are numbered ``tid = block_linear * threads_per_block + thread_linear`` with x
    fastest, so a warp is 32 consecutive tids of one block (lanes in ``threadIdx.x`` order, as
    on the GPU). Accesses: ``acc_tid``, ``acc_array`` (index into ``arrays``), ``acc_index``
    (flat element), ``acc_kind`` (READ/WRITE/ATOMIC), ``acc_epoch`` (barriers the thread had
    passed) and ``acc_event`` (which executed line of its thread made the access). Lines:
    ``line_tid`` and ``line_no`` in execution order per thread; ``line_start[t]`` is where thread
    t's lines begin. ``barriers[t]`` counts the syncthreads thread t passed.
    """

    kernel_name: str
    launch: Launch
    arrays: tuple
    acc_tid: np.ndarray
    acc_array: np.ndarray
    acc_index: np.ndarray
    acc_kind: np.ndarray
    acc_epoch: np.ndarray
    acc_event: np.ndarray
    line_no: np.ndarray
    line_start: np.ndarray
    barriers: np.ndarray
    source_lines: dict = field(repr=False, default_factory=dict)   # line number -> source text
    #: the barrier call site of each syncthreads each thread passed, in thread order then
    #: program order (``barriers[t]`` entries per thread); a site is an index into ``barrier_sites``
    barrier_site: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, np.int64))
    barrier_sites: tuple = field(repr=False, default=())          # (line, source text) per site
    #: one row per warp-level primitive a warp executed: (warp, line, op code in WARP_OPS, lanes)
    warp_ops: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 4), np.int64))
    #: per access row: full-warp synchronisations (syncwarp or a *_sync primitive over every lane
    #: of the warp) its thread had passed before it; ``None`` when there were none
    acc_warp_epoch: np.ndarray | None = field(repr=False, default=None)

    @property
    def n_threads(self) -> int:
        return self.launch.n_threads

    def thread_coords(self, tid: int) -> tuple[tuple, tuple]:
        """(blockIdx, threadIdx) of thread ``tid``, each as (x, y, z)."""
        tid = check_int("tid", tid, min_value=0, max_value=self.n_threads - 1)
        b, t = divmod(tid, self.launch.threads_per_block)
        return _unravel(b, self.launch.grid), _unravel(t, self.launch.block)

    def describe_thread(self, tid: int) -> str:
        b, t = self.thread_coords(tid)
        return f"thread {_fmt(t, self.launch.block)} of block {_fmt(b, self.launch.grid)}"

    def line_text(self, line: int) -> str:
        """The source of a kernel line, without its comment."""
        line = check_int("line", line, min_value=0)
        return re.sub(r"\s+#.*$", "", self.source_lines.get(line, "")).strip()

    def block_of(self, tids) -> np.ndarray:
        """The linear block of each thread id in ``tids`` (0 <= tid < n_threads)."""
        arr = check_array("tids", tids)
        if np.any(arr != np.round(arr)) or np.any(arr < 0) or np.any(arr >= self.n_threads):
            raise ValueError(f"tids must be whole thread ids in [0, {self.n_threads - 1}]")
        return arr.astype(np.int64) // self.launch.threads_per_block


def _unravel(linear: int, shape: tuple) -> tuple:
    x = linear % shape[0]
    y = (linear // shape[0]) % shape[1]
    z = linear // (shape[0] * shape[1])
    return (x, y, z)


def _fmt(coords: tuple, shape: tuple | None = None) -> str:
    """Coordinates as CUDA names them: one number for a 1D grid or block, (x, y) for 2D, (x, y, z)
    for 3D. With ``shape`` (the launch's grid or block) its dimensions decide, so thread (31, 0)
    of a 2D block reads (31, 0), not 31."""
    if shape is not None:
        dims = 3 if shape[2] > 1 else (2 if shape[1] > 1 else 1)
    else:
        dims = 1 if coords[1:] == (0, 0) else (2 if coords[2] == 0 else 3)
    return "(" + ", ".join(str(c) for c in coords[:dims]) + ")" if dims > 1 else str(coords[0])


# --------------------------------------------------------------------------------------------
# The executor
# --------------------------------------------------------------------------------------------

class _Thread:
    """One CUDA thread's coordinates and its record (plain lists: appends are cheapest)."""

    __slots__ = ("tid", "blockIdx", "threadIdx", "thread_id", "lines", "acc", "epoch", "greenlet", "extra",
                 "bar_sites", "call", "resume", "wsync")

    def __init__(self, tid, block_idx, thread_idx, thread_linear):
        self.tid = tid
        self.blockIdx = block_idx
        self.threadIdx = thread_idx
        self.thread_id = thread_linear
        self.lines = []
        self.acc = []          # (array id, flat index, kind, epoch, event)
        self.epoch = 0
        self.greenlet = None
        self.extra = 0         # lines of device functions and bytecodes of tight loops
        self.bar_sites = []    # barrier call site of each syncthreads passed
        self.call = None       # the warp primitive this thread waits at
        self.resume = None     # what that primitive returns to it
        self.wsync = []        # len(acc) at each full-warp synchronisation


class _Run:
    """State of the launch in progress (one at a time: the simulator's module swap is global)."""

    def __init__(self, kernel_code, max_steps):
        self.code = kernel_code
        self.current: _Thread | None = None
        self.steps = 0
        self.max_steps = max_steps
        self.arrays: list[ArrayInfo] = []
        self.aborting = False
        self.runner = None
        self.sites = {}        # (code, line) of a syncthreads call -> site id
        self.site_info = []    # site id -> (line, source text)
        self.warp_ops = []     # (warp, line, op code, lanes) per executed warp primitive
        self.threads_per_block = 1
        self.launch = None
        self.block_threads = ()   # the threads of the block running now


_LOCK = threading.Lock()
_RUN: _Run | None = None


def _unwritten_shared_read(run: _Run) -> str | None:
    """'s[5]' for the first shared element the running thread read (or updated atomically) that
    no thread of its block has written so far; None when every one it read had been written.
    Called only when a store fails, to tell garbage from a real overflow."""
    shared = {i for i, a in enumerate(run.arrays) if a.space == SHARED}
    me = run.current
    mine = me.acc[:-1]                       # the last row is the store that failed
    written = {(a, f) for t in run.block_threads for a, f, k, *_ in (mine if t is me else t.acc)
               if k == WRITE and a in shared}
    for a, f, k, *_ in mine:
        if k != WRITE and a in shared and (a, f) not in written:
            info = run.arrays[a]
            return f"{info.name}[{', '.join(str(int(v)) for v in np.unravel_index(f, info.shape))}]"
    return None


def _where(thread: _Thread) -> str:
    t = (thread.threadIdx.x, thread.threadIdx.y, thread.threadIdx.z)
    b = (thread.blockIdx.x, thread.blockIdx.y, thread.blockIdx.z)
    launch = _RUN.launch if _RUN is not None and _RUN.launch is not None else None
    return (f"thread {_fmt(t, launch.block if launch else None)} of block "
            f"{_fmt(b, launch.grid if launch else None)}")


def _line_note(thread: _Thread) -> str:
    if not thread.lines or _RUN is None:
        return ""
    text = linecache.getline(_RUN.code.co_filename, thread.lines[-1]).strip()
    return f" at line {thread.lines[-1]} ({text})" if text else f" at line {thread.lines[-1]}"


class TracedArray:
    """A global or shared array as a kernel sees it: element access checked and recorded."""

    __slots__ = ("_data", "_view", "_aid", "_name", "shape", "ndim", "size", "dtype", "_strides", "_pyint")

    def __init__(self, data: np.ndarray, aid: int, name: str):
        self._data = data
        # Elements are read and written through a flat view (the caller's array when contiguous).
        self._view = data.reshape(-1) if data.flags.c_contiguous else None
        self._aid = aid
        self._name = name
        self.shape = data.shape
        self.ndim = data.ndim
        self.size = data.size
        self.dtype = data.dtype
        strides, acc = [], 1
        for dim in reversed(data.shape):
            strides.append(acc)
            acc *= dim
        self._strides = tuple(reversed(strides))
        # numba computes with integers narrower than 64 bits as int64 (int8 * int8 does not wrap),
        # where NumPy's scalars would wrap: such elements are read as Python ints.
        self._pyint = data.dtype.kind in "iu" and data.dtype.itemsize < 8

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"<{self._name}: traced array {self.shape} {self.dtype}>"

    def _bad(self, idx, why):
        run = _RUN
        who = _where(run.current) + _line_note(run.current) if run and run.current else "a thread"
        raise OutOfBoundsError(f"{who} indexed {self._name}[{_idx_text(idx)}]: {why}")

    def _flat(self, idx) -> int:
        """Flat element of ``idx`` after checking every coordinate (the hot path of the tracer)."""
        shape = self.shape
        # Fast paths: plain ints in bounds on a 1D or 2D array (nearly every access a kernel makes);
        # anything else, and every error, takes the general path below.
        if type(idx) is int:
            if len(shape) == 1 and 0 <= idx < shape[0]:
                return idx
        elif type(idx) is tuple and len(idx) == 2 and len(shape) == 2:
            i, j = idx
            if type(i) is int and type(j) is int and 0 <= i < shape[0] and 0 <= j < shape[1]:
                return i * self._strides[0] + j
        if type(idx) is tuple:
            if len(idx) != len(shape):
                self._bad(idx, f"{self._name} has {self.ndim} dimension(s) {shape}; index it with "
                               f"{self.ndim} integer(s), one element at a time")
            flat = 0
            for axis, i in enumerate(idx):
                try:
                    i = _index(i)
                except TypeError:
                    self._bad(idx, f"index {axis} is {type(i).__name__} {i!r}, not an integer "
                                   f"(use // for integer division)")
                if i < 0 or i >= shape[axis]:
                    self._oob(idx, axis, i)
                flat += i * self._strides[axis]
            return flat
        if len(shape) != 1:
            self._bad(idx, f"{self._name} has {self.ndim} dimensions {shape}; index it with "
                           f"{self.ndim} integers, one element at a time")
        try:
            i = _index(idx)
        except TypeError:
            self._bad(idx, f"the index is {type(idx).__name__} {idx!r}, not an integer "
                           f"(use // for integer division)")
        if i < 0 or i >= shape[0]:
            self._oob(idx, 0, i)
        return i

    def _oob(self, idx, axis, i):
        self._bad(idx, f"index {int(i)} is out of bounds for axis {axis} of size {self.shape[axis]}"
                       + (" (negative indices do not wrap on a GPU)" if i < 0 else ""))

    def _get(self, flat):
        return self._view[flat] if self._view is not None else self._data[np.unravel_index(flat, self.shape)]

    def _put(self, flat, value):
        try:
            if self._view is not None:
                self._view[flat] = value
            else:
                self._data[np.unravel_index(flat, self.shape)] = value
        except (TypeError, ValueError, OverflowError) as exc:
            run = _RUN
            who = _where(run.current) + _line_note(run.current) if run and run.current else "a thread"
            garbage = _unwritten_shared_read(run) if run and run.current else None
            if garbage is not None:
                raise UninitializedSharedRead(
                    f"uninitialized shared memory: {who} read {garbage}, which no thread of its block "
                    f"had written (integer shared memory starts as garbage, here {_INT_GARBAGE:#x}), then "
                    f"stored {value!r} into {self._name} ({self.dtype}): {exc}") from None
            raise KernelCrash(f"{who} stored {value!r} into {self._name} ({self.dtype}): {exc}") from None

    def __getitem__(self, idx):
        flat = self._flat(idx)
        th = _RUN.current
        if th is not None:
            th.acc.append((self._aid, flat, READ, th.epoch, len(th.lines) - 1))
        view = self._view                  # _get, inlined: this runs for every element a kernel reads
        value = view[flat] if view is not None else self._get(flat)
        return int(value) if self._pyint else value

    def __setitem__(self, idx, value):
        flat = self._flat(idx)
        th = _RUN.current
        if th is not None:
            th.acc.append((self._aid, flat, WRITE, th.epoch, len(th.lines) - 1))
        self._put(flat, value)

    def _atomic(self, idx, op):
        flat = self._flat(idx)
        th = _RUN.current
        if th is not None:
            th.acc.append((self._aid, flat, ATOMIC, th.epoch, len(th.lines) - 1))
        old = self._get(flat)
        self._put(flat, op(old))
        return old


def _idx_text(idx) -> str:
    if type(idx) is not tuple:
        idx = (idx,)
    return ", ".join(repr(int(i)) if isinstance(i, (int, np.integer)) and not isinstance(i, bool)
                     else repr(i) for i in idx)


class _Atomic:
    """``cuda.atomic`` on traced arrays: one indivisible read-modify-write, recorded as ATOMIC."""

    @staticmethod
    def _arr(array, op):
        if not isinstance(array, TracedArray):
            raise KernelCrash(f"cuda.atomic.{op} needs a global or shared array, got {type(array).__name__}")
        return array

    def add(self, array, index, val):
        return self._arr(array, "add")._atomic(index, lambda old: old + val)

    def sub(self, array, index, val):
        return self._arr(array, "sub")._atomic(index, lambda old: old - val)

    def max(self, array, index, val):
        return self._arr(array, "max")._atomic(index, lambda old: max(old, val))

    def min(self, array, index, val):
        return self._arr(array, "min")._atomic(index, lambda old: min(old, val))

    def exch(self, array, index, val):
        return self._arr(array, "exch")._atomic(index, lambda old: val)

    def cas(self, array, index, old_value, val):
        return self._arr(array, "cas")._atomic(index, lambda old: val if old == old_value else old)


class _Shared:
    """``cuda.shared.array``: one allocation per call site per block, NaN-filled, traced."""

    def __init__(self, run: _Run):
        self._run = run
        self._allocations = {}
        self._offset = 0            # each block lays out its shared memory from offset 0

    def array(self, shape, dtype, alignment=None):
        caller = sys._getframe(1)
        key = (caller.f_code, caller.f_lineno)
        found = self._allocations.get(key)
        if found is not None:              # every thread of the block after the first
            return found
        from numba.cuda.np import numpy_support
        from numba.cuda import types
        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        dims = shape if isinstance(shape, (tuple, list)) else (shape,)
        shape_t = tuple(check_int("cuda.shared.array shape", d, min_value=1, max_value=1 << 16) for d in dims)
        data = np.empty(shape_t, dtype=np.dtype(dtype))
        data.fill(np.nan if data.dtype.kind in "fc" else _INT_GARBAGE % (1 << (8 * data.itemsize - 1)))
        run = self._run
        name = _shared_name(caller, shape_t)
        align = max(data.itemsize, 4)
        base = -(-self._offset // align) * align
        self._offset = base + data.nbytes
        aid = _register(run, ArrayInfo(name, SHARED, data.shape, data.itemsize, base))
        arr = TracedArray(data, aid, name)
        self._allocations[key] = arr
        return arr


def _shared_name(frame, shape) -> str:
    """The variable name on the allocating line (``tile = cuda.shared.array(...)`` -> 'tile')."""
    try:
        # linecache directly: inspect.getframeinfo searches every module for the frame's (tens of ms)
        line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
        left = line.split("=")[0].strip()
        if left.isidentifier():
            return left
    except (TypeError, IndexError, OSError):
        pass
    return f"shared{list(shape)}"


def _register(run: _Run, info: ArrayInfo) -> int:
    # One id per (name, space, shape, base): each block's copy of a shared array reuses its id.
    for i, existing in enumerate(run.arrays):
        if existing == info:
            return i
    run.arrays.append(info)
    return len(run.arrays) - 1


def _fake_module(grid, block, run: _Run, shared: _Shared):
    from numba.cuda.simulator.kernelapi import FakeCUDAModule

    class _Module(FakeCUDAModule):
        @property
        def threadIdx(self):
            return run.current.threadIdx

        @property
        def blockIdx(self):
            return run.current.blockIdx

        @property
        def laneid(self):
            return run.current.thread_id % WARP_SIZE

        @property
        def shared(self):
            return shared

        @property
        def atomic(self):
            return _ATOMIC

        def syncthreads(self):
            thread = run.current
            caller = sys._getframe(1)
            key = (caller.f_code, caller.f_lineno)
            site = run.sites.get(key)
            if site is None:
                site = run.sites[key] = len(run.site_info)
                run.site_info.append((caller.f_lineno, linecache.getline(caller.f_code.co_filename,
                                                                         caller.f_lineno).strip()))
            thread.bar_sites.append(site)
            thread.epoch += 1
            run.runner.switch("barrier")

        # --- warp-level primitives: the lanes named by the mask meet at the call
        def syncwarp(self, mask=FULL_MASK):
            return _warp_call(run, "syncwarp", mask)

        def shfl_sync(self, mask, value, src_lane):
            return _warp_call(run, "shfl_sync", mask, value, src_lane)

        def shfl_up_sync(self, mask, value, delta):
            return _warp_call(run, "shfl_up_sync", mask, value, delta)

        def shfl_down_sync(self, mask, value, delta):
            return _warp_call(run, "shfl_down_sync", mask, value, delta)

        def shfl_xor_sync(self, mask, value, lane_mask):
            return _warp_call(run, "shfl_xor_sync", mask, value, lane_mask)

        def ballot_sync(self, mask, predicate):
            return _warp_call(run, "ballot_sync", mask, predicate)

        def all_sync(self, mask, predicate):
            return _warp_call(run, "all_sync", mask, predicate)

        def any_sync(self, mask, predicate):
            return _warp_call(run, "any_sync", mask, predicate)

        def eq_sync(self, mask, predicate):
            return _warp_call(run, "eq_sync", mask, predicate)

        def activemask(self):
            return _warp_call(run, "activemask", None)

        def lanemask_lt(self):
            return (1 << (run.current.thread_id % WARP_SIZE)) - 1

        def __getattr__(self, name):
            if name.startswith("_"):
                raise AttributeError(name)
            raise KernelCrash(f"cuda.{name} is not supported by the course's tracer (it runs the "
                              f"thread, block and warp primitives of lesson 09: {_SUPPORTED})")

        def syncthreads_count(self, val):
            raise KernelCrash("cuda.syncthreads_count is not supported by the course tracer; "
                              "use cuda.syncthreads and a shared counter")

        syncthreads_and = syncthreads_or = syncthreads_count

    return _Module(grid, block, 0)


_SUPPORTED = ("grid, gridsize, threadIdx, blockIdx, blockDim, gridDim, laneid, shared.array, "
              "local.array, syncthreads, atomic.*, " + ", ".join(WARP_OPS) + ", lanemask_lt, popc")


class _WarpCall:
    """One lane's arrival at a warp primitive: what it asks, and where."""

    __slots__ = ("op", "mask", "value", "arg", "line", "acc_pos")

    def __init__(self, op, mask, value, arg, line, acc_pos):
        self.op, self.mask, self.value, self.arg, self.line, self.acc_pos = op, mask, value, arg, line, acc_pos


def _warp_call(run, op, mask, value=None, arg=None):
    """Park the current lane at ``op`` until every lane of its mask has arrived (the block's
    scheduler resolves the group and resumes each lane with its result)."""
    thread = run.current
    caller = sys._getframe(2)
    line = caller.f_lineno
    if op != "activemask":
        try:
            mask = _index(mask)
        except TypeError:
            raise KernelCrash(f"{_where(thread)} at line {line}: cuda.{op}'s mask must be an integer "
                              f"(such as 0xFFFFFFFF, every lane), got {type(mask).__name__} {mask!r}") from None
        mask &= FULL_MASK
        if op in _SHUFFLES:
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise KernelCrash(f"{_where(thread)} at line {line}: cuda.{op} moves one 32- or 64-bit "
                                  f"int or float, got {type(value).__name__} {value!r:.40}")
            try:
                arg = _index(arg)
            except TypeError:
                raise KernelCrash(f"{_where(thread)} at line {line}: cuda.{op}'s lane argument must be "
                                  f"an integer, got {type(arg).__name__} {arg!r}") from None
    thread.call = _WarpCall(op, mask, value, arg, line, len(thread.acc))
    run.runner.switch("warp")
    result, thread.resume = thread.resume, None
    return result


def _lanes(mask) -> list:
    return [lane for lane in range(WARP_SIZE) if mask >> lane & 1]


def _lane_list(lanes) -> str:
    lanes = list(lanes)
    return ", ".join(str(x) for x in lanes[:8]) + (f" and {len(lanes) - 8} more" if len(lanes) > 8 else "")


def _resolve_warps(run, block_threads, waiting, at_barrier):
    """Resume every group of lanes whose mask has fully arrived at one primitive. Returns the
    resumed threads (in thread order); raises :class:`WarpSyncError` when nothing can move and
    a lane waits for one that will never come."""
    by_warp = {}
    for th in waiting:
        by_warp.setdefault(th.thread_id // WARP_SIZE, {})[th.thread_id % WARP_SIZE] = th
    resumed = []
    for w, lanes in by_warp.items():
        for lane, th in sorted(lanes.items()):
            call = th.call
            if call is None:
                continue
            if call.op == "activemask":
                # The lanes that reached this activemask together are the converged, active ones.
                group = {l: t for l, t in lanes.items() if t.call is not None and t.call.op == "activemask"
                         and t.call.line == call.line}
                _finish(run, w, call, group, {l: sum(1 << x for x in group) for l in group})
                resumed.extend(group.values())
                continue
            if not call.mask >> lane & 1:
                raise WarpSyncError(f"{_where(th)} called cuda.{call.op} at line {call.line} with mask "
                                    f"{call.mask:#010x}, which does not include its own lane {lane}: "
                                    f"every calling lane must be in the mask")
            need = _lanes(call.mask)
            if all(l in lanes and lanes[l].call is not None and lanes[l].call.op == call.op
                   and lanes[l].call.mask == call.mask for l in need):
                group = {l: lanes[l] for l in need}
                _finish(run, w, call, group, _warp_results(call.op, group))
                resumed.extend(group.values())
    if resumed:
        return sorted(resumed, key=lambda t: t.tid)
    # Nothing can move: name the lanes the first waiting lane waits for.
    th = min(waiting, key=lambda t: t.tid)
    call, lane = th.call, th.thread_id % WARP_SIZE
    warp_first = th.thread_id - lane
    by_lane = {t.thread_id - warp_first: t for t in block_threads if 0 <= t.thread_id - warp_first < WARP_SIZE}
    barrier_ids = {id(t) for t in at_barrier}
    missing = []
    for l in _lanes(call.mask):
        other = by_lane.get(l)
        if other is None:
            missing.append((l, "not in the block: its last warp is partial"))
        elif other.greenlet.dead:
            missing.append((l, "exited"))
        elif id(other) in barrier_ids:
            missing.append((l, f"waiting at cuda.syncthreads, line {other.lines[-1] if other.lines else '?'}"))
        elif other.call is not None and (other.call.op != call.op or other.call.mask != call.mask):
            missing.append((l, f"waiting at cuda.{other.call.op}, line {other.call.line}, mask "
                               f"{other.call.mask if other.call.mask is not None else 0:#010x}"))
    groups = {}
    for l, why in missing:
        groups.setdefault(why, []).append(l)
    detail = "; ".join(f"lane{'s' if len(ls) > 1 else ''} {_lane_list(ls)} ({why})" for why, ls in groups.items())
    raise WarpSyncError(f"{_where(th)} waits at cuda.{call.op} (line {call.line}, mask {call.mask:#010x}) "
                        f"for lanes that never arrive: {detail or 'the lanes of its mask'}. Every lane named "
                        f"by the mask must reach the same primitive with the same mask")


def _warp_results(op, group) -> dict:
    if op == "syncwarp":
        return {l: None for l in group}
    if op in _SHUFFLES:
        out = {}
        for lane, th in group.items():
            b = th.call.arg & (WARP_SIZE - 1)       # PTX shfl.sync: the lane operand's low 5 bits
            if op == "shfl_sync":
                src = b
            elif op == "shfl_up_sync":
                src = lane - b if lane - b >= 0 else lane              # below lane 0: its own value
            elif op == "shfl_down_sync":
                src = lane + b if lane + b < WARP_SIZE else lane       # past lane 31: its own value
            else:
                src = lane ^ b
            if src not in group:
                raise WarpSyncError(f"{_where(th)} at line {th.call.line}: cuda.{op} reads lane {src}, "
                                    f"which is not in the mask {th.call.mask:#010x}: on a GPU the value "
                                    f"is undefined")
            out[lane] = group[src].call.value
        return out
    preds = {l: bool(t.call.value) for l, t in group.items()}
    if op == "ballot_sync":
        bits = sum(1 << l for l, p in preds.items() if p)
        bits = bits - (1 << 32) if bits >= 1 << 31 else bits     # numba returns a signed 32-bit int
        return {l: bits for l in group}
    if op == "all_sync":
        v = all(preds.values())
    elif op == "any_sync":
        v = any(preds.values())
    else:
        v = len(set(preds.values())) == 1
    return {l: v for l in group}


def _finish(run, warp_in_block, call, group, results):
    """Hand each lane of a met group its result; record one warp instruction for the profile."""
    first = min(group.values(), key=lambda t: t.tid)
    tpb = run.threads_per_block
    block = first.tid // tpb
    lanes_in_warp = min(WARP_SIZE, tpb - warp_in_block * WARP_SIZE)
    run.warp_ops.append((block * (-(-tpb // WARP_SIZE)) + warp_in_block, call.line,
                         WARP_OPS.index(call.op), len(group)))
    whole = len(group) == lanes_in_warp and call.op != "activemask"
    for lane, th in group.items():
        th.resume = results[lane]
        th.call = None
        if whole:                       # a full-warp meeting orders the lanes' memory accesses
            th.wsync.append(len(th.acc))


_ATOMIC = _Atomic()


_TIGHT_LOOPS: dict = {}
_USER_CODE: dict = {}
_LIBRARY_DIRS = tuple({str(Path(p).resolve()) for p in
                       (sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"],
                        sysconfig.get_paths()["platlib"], Path(__file__).resolve().parent.parent)})


def _has_tight_loop(code) -> bool:
    """True when a loop jumps back to its own line (``while True: pass``): CPython emits no line
    event for it, so such frames are traced per bytecode instead (slower, and only for them)."""
    found = _TIGHT_LOOPS.get(code)
    if found is None:
        lines = {ins.offset: (ins.positions.lineno if ins.positions else None)
                 for ins in dis.get_instructions(code)}
        found = any(ins.opname.startswith("JUMP_BACKWARD") and lines.get(ins.argval) == lines[ins.offset]
                    for ins in dis.get_instructions(code))
        _TIGHT_LOOPS[code] = found
    return found


def _is_user(code) -> bool:
    """Code of the learner (a device function, a helper), not of Python, NumPy, numba or the course."""
    found = _USER_CODE.get(code)
    if found is None:
        name = code.co_filename
        found = not (name.startswith("<frozen") or
                     (os.path.isabs(name) and str(Path(name).resolve()).startswith(_LIBRARY_DIRS)))
        _USER_CODE[code] = found
    return found


def _tracer(frame, event, arg):
    run = _RUN
    if run is None or run.current is None:
        return None
    code = frame.f_code
    if code is run.code:
        if _has_tight_loop(code):
            frame.f_trace_opcodes = True
        return _line_tracer
    if _is_user(code):                    # device functions: counted against the limits, not recorded
        if _has_tight_loop(code):
            frame.f_trace_opcodes = True
        return _step_tracer
    return None


def _count(run, thread, lineno):
    run.steps += 1
    if len(thread.lines) + thread.extra > MAX_THREAD_STEPS:
        raise KernelStepLimit(
            f"{_where(thread)} ran more than {MAX_THREAD_STEPS:,} lines, the last one line {lineno}: "
            f"an endless loop? Check that loop's exit condition.")
    if run.steps > run.max_steps:
        raise KernelStepLimit(
            f"the launch ran more than {run.max_steps:,} kernel lines (stopped in {_where(thread)}): "
            f"an endless loop, or a launch too big for the simulator: launch on smaller data.")


def _line_tracer(frame, event, arg):
    # Called for every line every thread runs: _count's two limits are tested inline here, and
    # _count is called only to raise (a call per line was a third of the tracer's cost).
    run = _RUN
    if run is None or run.aborting:
        return None
    thread = run.current
    if thread is None:
        return None
    if event == "line":
        lines = thread.lines
        lines.append(frame.f_lineno)
        run.steps += 1
        if run.steps > run.max_steps or len(lines) + thread.extra > MAX_THREAD_STEPS:
            run.steps -= 1
            _count(run, thread, frame.f_lineno)
    elif event == "opcode":
        thread.extra += 1
        _count(run, thread, frame.f_lineno)
    return _line_tracer


def _step_tracer(frame, event, arg):
    run = _RUN
    if run is None or run.aborting:
        return None
    thread = run.current
    if thread is None:
        return None
    if event == "line" or event == "opcode":
        thread.extra += 1
        run.steps += 1
        if run.steps > run.max_steps or len(thread.lines) + thread.extra > MAX_THREAD_STEPS:
            run.steps -= 1
            _count(run, thread, frame.f_lineno)
    return _step_tracer


def trace_launch(kernel, grid, block, *args, names=None, max_steps=MAX_STEPS,
                 max_threads=MAX_THREADS, _untraced=False) -> Trace:
    """Run ``kernel[grid, block](*args)`` on the traced executor; NumPy array arguments are
    updated in place, as numba's simulator does. Returns the :class:`Trace`.

    ``names`` (optional) names the array arguments in messages; by default the kernel's
    parameter names are used. (``_untraced=True`` runs the same executor without the line
    tracer, for ``make bench`` to measure what tracing costs: no step limits, no line record.) Raises :class:`OutOfBoundsError`, :class:`KernelCrash` (naming
    the thread whose code raised) or :class:`KernelStepLimit`.
    """
    from greenlet import greenlet, getcurrent
    from numba.cuda.simulator.kernelapi import Dim3, swapped_cuda_module

    global _RUN
    fn = python_function(kernel)
    launch = Launch(dim3("grid", grid), dim3("block", block))
    check_int("max_steps", max_steps, min_value=1, max_value=50 * MAX_STEPS)
    check_int("max_threads", max_threads, min_value=1, max_value=1 << 20)
    if launch.threads_per_block > 1024:
        raise ValueError(f"block = {block} has {launch.threads_per_block} threads; CUDA allows at "
                         f"most 1024 threads per block")
    if launch.n_threads > max_threads:
        raise KernelStepLimit(f"grid {grid} x block {block} is {launch.n_threads:,} threads; the "
                              f"simulator runs at most {max_threads:,} (about 20 us each): launch "
                              f"on smaller data")
    params = list(inspect.signature(fn).parameters)
    if len(args) != len(params):
        raise TypeError(f"{fn.__name__} takes {len(params)} argument(s) ({', '.join(params)}), "
                        f"got {len(args)}")
    if names is not None and (not isinstance(names, (list, tuple)) or len(names) != len(params)
                              or not all(isinstance(n, str) for n in names)):
        raise TypeError(f"names must be None or {len(params)} strings, one per argument of "
                        f"{fn.__name__}, got {names!r}")
    arg_names = list(names) if names is not None else params

    if not _LOCK.acquire(blocking=False):
        raise RuntimeError("another kernel launch is being traced; launches run one at a time")
    run = _Run(fn.__code__, max_steps)
    try:
        _RUN = run
        kernel_args, base = [], 0
        for name, a in zip(arg_names, args):
            a = _host_array(name, a)
            if isinstance(a, np.ndarray) and a.ndim > 0:
                aid = _register(run, ArrayInfo(name, GLOBAL, a.shape, a.itemsize, base, _layout(a)))
                base += -(-max(a.nbytes, 1) // GLOBAL_ALIGN_BYTES) * GLOBAL_ALIGN_BYTES
                kernel_args.append(TracedArray(a, aid, name))
            else:
                kernel_args.append(a)
        threads = _execute(fn, launch, kernel_args, run, greenlet, getcurrent, Dim3, swapped_cuda_module,
                           None if _untraced else _tracer)
    finally:
        run.aborting = True
        _RUN = None
        _LOCK.release()
    return _collect(fn, launch, run, threads)


def _host_array(name, a):
    """The NumPy array behind an argument: a simulated device array (``cuda.to_device``) is traced
    through the host array it wraps; a real device array is refused (the tracer runs on the CPU)."""
    inner = getattr(a, "_ary", None)
    if isinstance(inner, np.ndarray) and hasattr(a, "copy_to_host"):
        return inner
    if hasattr(a, "copy_to_host") or hasattr(a, "__cuda_array_interface__"):
        raise TypeError(f"argument {name!r} is an array on the GPU; the tracer runs on the CPU: pass "
                        f"the NumPy array ({name}.copy_to_host())")
    return a


def _layout(a: np.ndarray):
    """Element strides of ``a`` in memory and the offset of its lowest element, when ``a`` is not
    C-contiguous (a transposed or sliced view); None for the usual C-contiguous array."""
    if a.flags.c_contiguous:
        return None
    if any(s % a.itemsize for s in a.strides):
        raise ValueError("array arguments must have strides that are whole elements; pass "
                         "np.ascontiguousarray(...)")
    strides = tuple(s // a.itemsize for s in a.strides)
    low = sum((d - 1) * s for d, s in zip(a.shape, strides) if s < 0)
    return strides, -low


def _execute(fn, launch, kernel_args, run, greenlet, getcurrent, Dim3, swapped_cuda_module, tracer):
    gx, gy, gz = launch.grid
    bx, by, bz = launch.block
    tpb = launch.threads_per_block
    threads = []
    old_trace = sys.gettrace()
    run.runner = getcurrent()
    run.threads_per_block = tpb
    run.launch = launch
    sys.settrace(tracer)
    try:
        for b_lin, (bzi, byi, bxi) in enumerate(itertools.product(range(gz), range(gy), range(gx))):
            block_idx = Dim3(bxi, byi, bzi)
            shared = _Shared(run)
            module = _fake_module(launch.grid, launch.block, run, shared)
            block_threads = []
            for t_lin, (tzi, tyi, txi) in enumerate(itertools.product(range(bz), range(by), range(bx))):
                th = _Thread(b_lin * tpb + t_lin, block_idx, Dim3(txi, tyi, tzi), t_lin)
                th.greenlet = greenlet(lambda: fn(*kernel_args), parent=run.runner)
                block_threads.append(th)
            threads.extend(block_threads)
            run.block_threads = block_threads
            with swapped_cuda_module(fn, module), _device_function_context(module):
                # Each runnable thread runs, in thread order, until it reaches a barrier, a warp
                # primitive or its end. Warp groups whose lanes have all arrived resume first;
                # when none is left, the barrier opens for the whole block.
                runnable, at_barrier, at_warp = block_threads, [], []
                while runnable:
                    for th in runnable:
                        run.current = th
                        try:
                            tag = th.greenlet.switch()
                        except (KernelFault, NotImplementedError):
                            raise                  # an untouched exercise stub reads as one
                        except Exception as exc:
                            raise KernelCrash(f"{_where(th)}{_line_note(th)} raised "
                                              f"{type(exc).__name__}: {exc}") from exc
                        finally:
                            run.current = None
                        if th.greenlet.dead:
                            continue
                        (at_warp if tag == "warp" else at_barrier).append(th)
                    if at_warp:
                        runnable = _resolve_warps(run, block_threads, at_warp, at_barrier)
                        met = {id(t) for t in runnable}
                        at_warp = [t for t in at_warp if id(t) not in met]
                    else:
                        runnable, at_barrier = at_barrier, []
    finally:
        sys.settrace(old_trace)
    return threads


@contextmanager
def _device_function_context(module):
    """Let ``@cuda.jit(device=True)`` helpers called by the kernel see the same simulated ``cuda``."""
    from numba.cuda.simulator import kernel as simulated
    saved = simulated._kernel_context
    simulated._kernel_context = module
    try:
        yield
    finally:
        simulated._kernel_context = saved


def _collect(fn, launch, run, threads) -> Trace:
    n_acc = sum(len(t.acc) for t in threads)
    acc = np.empty((n_acc, 6), dtype=np.int64)
    pos = 0
    for t in threads:
        if t.acc:
            block = np.asarray(t.acc, dtype=np.int64)
            acc[pos:pos + len(block), 0] = t.tid
            acc[pos:pos + len(block), 1:] = block
            pos += len(block)
    counts = np.array([len(t.lines) for t in threads], dtype=np.int64)
    line_start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    line_no = np.fromiter(itertools.chain.from_iterable(t.lines for t in threads),
                          dtype=np.int64, count=int(line_start[-1]))
    try:
        src, first = inspect.getsourcelines(fn)
        source = {first + i: s.rstrip("\n") for i, s in enumerate(src)}
    except (OSError, TypeError):
        source = {}
    bar_site = np.fromiter(itertools.chain.from_iterable(t.bar_sites for t in threads), dtype=np.int64)
    warp_ops = np.array(run.warp_ops, dtype=np.int64).reshape(-1, 4)
    warp_epoch = None
    if any(t.wsync for t in threads):
        # Per access row: the full-warp meetings its thread had passed before it.
        warp_epoch = np.zeros(n_acc, np.int64)
        pos = 0
        for t in threads:
            n = len(t.acc)
            if t.wsync and n:
                rows = np.arange(n)
                syncs = np.asarray(t.wsync, np.int64)
                warp_epoch[pos:pos + n] = np.searchsorted(syncs, rows, side="right")
            pos += n
    return Trace(fn.__name__, launch, tuple(run.arrays),
                 acc[:, 0], acc[:, 1], acc[:, 2], acc[:, 3], acc[:, 4], acc[:, 5],
                 line_no, line_start, np.array([t.epoch for t in threads], dtype=np.int64), source,
                 bar_site, tuple(run.site_info), warp_ops, warp_epoch)
