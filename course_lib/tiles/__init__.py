"""The tile-kernel lab: write Triton kernels, check them, cost them on a laptop, call them from PyTorch.

    from course_lib.tiles import triton, tl     # Triton, on its CPU interpreter

Importing this package selects Triton's interpreter (``TRITON_INTERPRET=1``) unless the user set
the variable (``course_lib.tiles.select``); that is the one global effect, and it must happen
before triton is imported, so it happens here. The parts:

* ``profile``    runs a launch on the interpreter and counts what each program did: bytes read
                 and written per tensor (and distinct bytes), tl.dot and elementwise FLOP; an
                 access outside every tensor is an error naming the program and the offsets;
                 the roofline time on a catalog accelerator;
* ``kernels``    the worked kernels of lesson 10, each with its launcher and traffic formula;
* ``torch_ops``  the fused softmax and FlashAttention forward as PyTorch autograd functions;
* ``order``      program order and L2: the wave model of grouped order, from the tile arithmetic;
* ``measure``    times the kernels compiled on a real GPU (triton.testing.do_bench), when one is present.
"""

from __future__ import annotations

from .select import cuda_usable, interpreter_selected, require_triton, select_interpreter

select_interpreter()
triton = require_triton()
import triton.language as tl  # noqa: E402  (must follow select_interpreter)

__all__ = ["triton", "tl", "cuda_usable", "interpreter_selected"]
