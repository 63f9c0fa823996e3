# ruff: noqa: F403, F405, F821, F841
from _harness import *


# a typo: an undefined name in the kernel
@cuda.jit
def typo(a, out):
    i = cuda.grid(1)
    v = a[i] if i < a.size else 0.0
    cuda.atomic.add(out, 0, vv)


# a primitive the executor may not support
@cuda.jit
def unsupported(a, out):
    i = cuda.grid(1)
    v = a[i] if i < a.size else 0.0
    m = cuda.match_any_sync(FULL_MASK, 1)
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v + m * 0)


# the kernel called wrongly: not decorated
def not_jitted(a, out):
    pass


attempt("typo", "09.19", typo)
attempt("unsupported primitive", "09.19", unsupported)
attempt("not jitted", "09.19", not_jitted)

