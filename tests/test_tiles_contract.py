"""What course_lib.tiles.profile relies on inside Triton's interpreter, pinned one behaviour a test.

The profiler wraps methods of ``triton.runtime.interpreter.interpreter_builder`` and
``ReduceOps.apply`` for the length of one launch. A Triton release that renames or reroutes any
of them fails here, by name, instead of silently counting zero bytes.
"""

from __future__ import annotations

import pytest

tiles = pytest.importorskip("course_lib.tiles")     # first: it selects the interpreter before triton loads
torch = pytest.importorskip("torch")

from course_lib.tiles import tl, triton  # noqa: E402
from course_lib.tiles.profile import _FLOAT_OPS, profile_launch  # noqa: E402


def _interp():
    from triton.runtime import interpreter
    return interpreter


@triton.jit
def _plain_and_descriptor(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    rows = tl.arange(0, 2)
    a = tl.load(x_ptr + rows[:, None] * BLOCK + offs[None, :])              # no mask: create_load
    desc = tl.make_tensor_descriptor(x_ptr, shape=[2, n], strides=[BLOCK, 1], block_shape=[2, BLOCK])
    b = desc.load([0, 0])                                                   # a tensor descriptor: bounds as a mask
    tl.store(y_ptr + rows[:, None] * BLOCK + offs[None, :], a + b)          # no mask: create_store


def test_the_builder_has_the_methods_the_profiler_wraps():
    interp = _interp()
    builder = interp.interpreter_builder
    for name in ("create_masked_load", "create_masked_store", "create_dot", "set_grid_idx"):
        assert callable(getattr(type(builder), name, None)), name
    assert interp.interpreter_semantic.builder is builder
    assert callable(getattr(interp.ReduceOps, "apply", None))
    for name in ("create_fadd", "create_fmul", "create_fsub", "create_fdiv", "create_exp", "create_maxnumf"):
        assert name in _FLOAT_OPS and callable(getattr(type(builder), name, None)), name
    assert issubclass(interp.InterpreterError, Exception)


def test_unmasked_and_descriptor_accesses_pass_through_the_masked_methods():
    x = torch.arange(32, dtype=torch.float32)
    y = torch.empty(32)
    prof = profile_launch(_plain_and_descriptor, (1,), x, y, 12, BLOCK=16)
    want = x.clone()
    want[:12], want[16:28] = 2 * x[:12], 2 * x[16:28]
    assert torch.equal(y, want)
    assert prof.loads == 2 and prof.stores == 1
    assert prof.tensor("x_ptr").bytes_read == 4 * (32 + 24)          # the descriptor's bound is a mask
    assert prof.elementwise_flops == 32


def test_every_program_sets_its_grid_index_and_exceptions_keep_their_cause():
    seen = []
    builder = _interp().interpreter_builder
    original = type(builder).set_grid_idx

    @triton.jit
    def _noop(x_ptr):
        tl.store(x_ptr + tl.program_id(0) + 3 * tl.program_id(1), 1.0)

    def spy(x, y, z):
        seen.append((x, y, z))
        return original(builder, x, y, z)
    builder.set_grid_idx = spy
    try:
        _noop[(3, 2)](torch.zeros(6))
    finally:
        del builder.set_grid_idx
    assert sorted(seen) == [(x, y, 0) for x in range(3) for y in range(2)]

    @triton.jit
    def _raises(x_ptr, BLOCK: tl.constexpr):
        tl.static_assert(BLOCK > 100, "too small")
        tl.store(x_ptr, 1.0)
    with pytest.raises(_interp().InterpreterError) as info:
        _raises[(1,)](torch.zeros(1), 8)
    assert info.value.__cause__ is not None


def test_cpu_tensors_reach_the_kernel_at_their_own_address():
    """The interpreter's host copy of a CPU tensor shares its storage (no copy), so the addresses
    a kernel computes are those of the tensors the profiler staged."""
    t = torch.randn(10)
    assert t.untyped_storage().cpu().data_ptr() == t.untyped_storage().data_ptr()
