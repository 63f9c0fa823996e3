"""Which Triton runs: its CPU interpreter, unless the user asked for the compiler.

Triton reads ``TRITON_INTERPRET`` when a kernel is *defined* (``@triton.jit`` returns an
interpreted function when it is set), and triton.language's own functions (``tl.sum``,
``tl.max``...) are defined once, when triton is imported. So the mode is fixed for the whole
process at import, and this module decides before that: it sets the variable to ``1`` unless the
user set it (``TRITON_INTERPRET=0`` asks for compiled kernels). ``course_lib.tiles`` imports triton
only afterwards. A learner writes ``from course_lib.tiles import triton, tl`` and never needs to know.

The interpreter is chosen on a GPU machine too, unlike lesson 09's numba simulator: the profile
and every check need it, and a process cannot hold both kinds of ``tl.sum``. Timing on a real
GPU (``course_lib.tiles.measure``) therefore runs the same kernels compiled in a process of
their own, started with ``TRITON_INTERPRET=0``.

The interpreter runs each program instance of a launch one after another, in NumPy, on the CPU,
on **torch tensors** (NumPy arrays fail inside it). The course's profiler
(``course_lib.tiles.profile``) always runs a kernel on the interpreter, so a kernel can be
checked and costed on a laptop and timed, unchanged, on a GPU.
"""

from __future__ import annotations

import os
import sys

__all__ = ["cuda_usable", "select_interpreter", "interpreter_selected", "require_triton"]

TRITON_MISSING = ("lesson 10 needs the packages torch and triton (PyPI ships triton for Linux only); "
                  "`make install` installs both, or run the lesson in Colab, whose runtime has them")


def cuda_usable() -> bool:
    """True when PyTorch sees a CUDA device (so Triton can compile for it)."""
    if os.environ.get("COURSE_FORCE_SIMULATOR") == "1":
        return False
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def select_interpreter() -> bool:
    """Choose the interpreter unless TRITON_INTERPRET is set; True when it is (to be) used.

    Must run before any ``@triton.jit`` kernel is defined; afterwards it only reports the choice.
    """
    if "TRITON_INTERPRET" not in os.environ:
        if "triton.language" in sys.modules:
            # triton.language's own jit functions (tl.sum, tl.max, ...) were built compiled: a kernel
            # interpreted now would fail inside them with "Cannot call @triton.jit'd outside ...".
            raise RuntimeError(
                "triton was imported before course_lib.tiles, without TRITON_INTERPRET=1: restart the "
                "kernel and import course_lib.tiles first (it "
                "selects Triton's CPU interpreter), or set TRITON_INTERPRET=1 before importing triton")
        os.environ["TRITON_INTERPRET"] = "1"
    return interpreter_selected()


def interpreter_selected() -> bool:
    """True when ``@triton.jit`` makes interpreted kernels (``TRITON_INTERPRET`` is set and true)."""
    if "triton" in sys.modules:
        from triton import knobs
        return bool(knobs.runtime.interpret)
    return os.environ.get("TRITON_INTERPRET", "0").strip().lower() in ("1", "true", "on", "yes")


def require_triton():
    """Import triton, or a clear ImportError saying how to get it."""
    try:
        import torch  # noqa: F401
        import triton
    except ImportError as exc:
        raise ImportError(f"{TRITON_MISSING} ({exc})") from exc
    return triton
