"""The tile kernels as PyTorch operations: gradcheck in float64, PyTorch's own ops, a module.

gradcheck runs in fast mode (random projections of the Jacobian): each of its forwards is an
interpreted launch, and the full Jacobian of even a tiny attention would take tens of launches.
"""

from __future__ import annotations

import pytest

tiles = pytest.importorskip("course_lib.tiles")     # first: it selects the interpreter before triton loads
torch = pytest.importorskip("torch")

from course_lib.tiles import tl, triton  # noqa: E402
from course_lib.tiles.kernels import flash_attention_kernel  # noqa: E402
from course_lib.tiles.profile import TileAccessError  # noqa: E402
from course_lib.tiles.torch_ops import TileAttentionModule, tile_attention, tile_softmax  # noqa: E402


@triton.jit
def _softmax_no_max(x_ptr, y_ptr, n_cols, row_stride, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_COLS)
    mask = cols < n_cols
    e = tl.exp(tl.load(x_ptr + row * row_stride + cols, mask=mask, other=-float("inf")))
    tl.store(y_ptr + row * row_stride + cols, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def _softmax_unmasked(x_ptr, y_ptr, n_cols, row_stride, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_COLS)
    x = tl.load(x_ptr + row * row_stride + cols)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * row_stride + cols, e / tl.sum(e, axis=0))


def test_softmax_matches_torch_and_passes_gradcheck():
    torch.manual_seed(0)
    x = torch.randn(4, 3, 7) * 20
    assert torch.allclose(tile_softmax(x), torch.softmax(x, -1), atol=1e-6)
    xd = torch.randn(2, 5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(tile_softmax, (xd,), fast_mode=True)
    g = torch.randn(2, 5, dtype=torch.float64)
    mine = torch.autograd.grad(tile_softmax(xd), xd, g)[0]
    ref = torch.autograd.grad(torch.softmax(xd, -1), xd, g)[0]
    assert torch.allclose(mine, ref, atol=1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_learners_softmax_replaces_the_kernel_and_its_bugs_show():
    x = torch.randn(3, 9) * 40 + 100                 # exp(x) overflows float32 without the max
    assert torch.isnan(tile_softmax(x, _softmax_no_max)).any()
    with pytest.raises(TileAccessError, match="x_ptr"):
        tile_softmax(x, _softmax_unmasked)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_matches_sdpa_and_passes_gradcheck(causal):
    torch.manual_seed(1)
    q, k, v = (torch.randn(2, 6, 4, dtype=torch.float64, requires_grad=True) for _ in range(3))
    out = tile_attention(q, k, v, causal)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    assert torch.allclose(out, ref, atol=1e-12)
    assert torch.autograd.gradcheck(lambda a, b, c: tile_attention(a, b, c, causal), (q, k, v), fast_mode=True)
    g = torch.randn_like(out)
    mine = torch.autograd.grad(out, (q, k, v), g)
    theirs = torch.autograd.grad(ref, (q, k, v), g)
    for a, b in zip(mine, theirs):
        assert torch.allclose(a, b, atol=1e-10)


def test_module_with_the_tile_kernel_equals_the_reference_module():
    torch.manual_seed(2)
    ref, mine = TileAttentionModule(2, 8), TileAttentionModule(2, 8, attention=flash_attention_kernel)
    x = torch.randn(2, 11, 16, requires_grad=True)
    y_ref, y_mine = ref(x), mine(x)
    assert torch.allclose(y_ref, y_mine, atol=1e-5)
    g_ref = torch.autograd.grad(y_ref.square().sum(), x)[0]
    g_mine = torch.autograd.grad(y_mine.square().sum(), x)[0]
    assert torch.allclose(g_ref, g_mine, atol=1e-4)


def test_bad_inputs_are_named():
    with pytest.raises(TypeError, match="x must be a torch tensor"):
        tile_softmax([1.0, 2.0])
    with pytest.raises(ValueError, match="one shape"):
        tile_attention(torch.randn(5, 4), torch.randn(6, 4), torch.randn(6, 4))
