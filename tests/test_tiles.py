"""Tests of the tile-kernel lab (course_lib.tiles): the profile's counts, bounds, and the worked kernels.

1. Counts by hand: a masked elementwise kernel, a single tl.dot, a reduction, two programs
   reading one block (distinct bytes), a fully masked load (nothing moves).
2. Bounds: an unmasked load past the end, a store before the start and a load through a wrong
   stride each raise TileAccessError naming the program, the tensor, the offsets and the line,
   before memory is touched; a correct kernel's output lands in the caller's tensors.
3. Lesson 06's formulas at the traced sizes: the tiled matmul's bytes (edge tiles included),
   FlashAttention's elements (causal and not); outputs equal PyTorch and lesson 06's NumPy code.
4. The wave model of L2 (grouped order), read maps, the roofline prediction, bad arguments.

Sizes are odd and no block divides them, so a count that ignores masks cannot pass by luck.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

tiles = pytest.importorskip("course_lib.tiles")     # first: it selects the interpreter before triton loads
torch = pytest.importorskip("torch")

from course_lib.attention import flash_attention as np_flash_attention  # noqa: E402
from course_lib.attention import flash_attention_traffic  # noqa: E402
from course_lib.hardware import get_accelerator  # noqa: E402
from course_lib.roofline import Kernel, place_kernel  # noqa: E402
from course_lib.tiles import interpreter_selected, tl, triton  # noqa: E402
from course_lib.tiles import kernels as K  # noqa: E402
from course_lib.tiles.order import grouped_matmul_traffic, tile_order  # noqa: E402
from course_lib.tiles.profile import (TileAccessError, precision_of, predict_tiles, profile_launch,  # noqa: E402
                                      read_map)
from course_lib.tiling import tiled_matmul_traffic  # noqa: E402


@triton.jit
def _copy_unmasked(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


@triton.jit
def _store_before_start(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs - 3, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def _one_dot(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b))


@triton.jit
def _row_sums(x_ptr, s_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(s_ptr + row, tl.sum(x, axis=0))


@triton.jit
def _same_block(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)                       # every program reads the same first block
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + tl.program_id(0) * BLOCK + offs, x)


@triton.jit
def _masked_off(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs + n, mask=offs + n < n, other=1.0)      # no lane is in
    tl.store(y_ptr + offs, x, mask=offs < n)


def test_the_interpreter_is_selected():
    import os
    assert interpreter_selected() or os.environ.get("TRITON_INTERPRET") == "0"
    assert K.kernel_source(K.scale_shift_kernel).startswith("@triton.jit\ndef scale_shift_kernel(")


# --------------------------------------------------------------------------- 1. counts by hand

def test_masked_elementwise_counts_by_hand():
    n, block = 1000, 256                             # 4 programs, the last one 232 lanes in
    x = torch.randn(n)
    y, prof = K.scale_shift(x, 3.0, -1.0, block=block)
    assert torch.allclose(y, 3 * x - 1)
    assert prof.grid == (4, 1, 1) and prof.programs == 4
    assert (prof.loads, prof.stores) == (4, 4)
    assert prof.load_lanes == 4 * 256 and prof.load_lanes_active == n
    assert prof.tensor("x_ptr").bytes_read == 4 * n and prof.tensor("out_ptr").bytes_written == 4 * n
    assert prof.bytes_moved == 8 * n == prof.distinct_bytes
    # x * a and + b on every lane of every tile: masked lanes compute too (as on a GPU)
    assert prof.elementwise_flops == 2 * 4 * 256 and prof.dot_flops == 0


def test_one_dot_is_2mnk_flop():
    bm, bn, bk = 16, 32, 16
    a, b = torch.randn(bm, bk), torch.randn(bk, bn)
    c = torch.empty(bm, bn)
    prof = profile_launch(_one_dot, (1,), a, b, c, bm, bn, bk)
    assert torch.allclose(c, a @ b, atol=1e-5)
    assert prof.dots == 1 and prof.dot_flops == 2 * bm * bn * bk
    assert prof.dot_dtypes == ("fp32",) and precision_of(prof) == "tf32"
    assert prof.bytes_read == 4 * (bm * bk + bk * bn) and prof.bytes_written == 4 * bm * bn


def test_reduction_counts_each_element_it_reads():
    rows, cols = 5, 37
    x = torch.randn(rows, cols)
    s = torch.empty(rows)
    prof = profile_launch(_row_sums, (rows,), x, s, cols, BLOCK=64)
    assert torch.allclose(s, x.sum(1), atol=1e-5)
    assert prof.elementwise_flops == rows * 64                 # one per element of each 64-lane tile
    assert prof.tensor("x_ptr").bytes_read == 4 * rows * cols  # masked lanes are not read
    assert prof.tensor("s_ptr").bytes_written == 4 * rows


def test_distinct_bytes_count_reuse_across_programs():
    x = torch.randn(64)
    y = torch.empty(5 * 64)
    prof = profile_launch(_same_block, (5,), x, y, BLOCK=64)
    t = prof.tensor("x_ptr")
    assert t.bytes_read == 5 * 64 * 4 and t.distinct_bytes_read == 64 * 4 and t.read_reuse == 5
    assert prof.hbm_bytes(1) == prof.bytes_moved
    assert prof.hbm_bytes(5) == 64 * 4 + 5 * 64 * 4           # one read of x, every write
    assert prof.hbm_bytes(2) == 3 * 64 * 4 + 5 * 64 * 4       # waves {0,1} {2,3} {4}


def test_a_fully_masked_load_moves_nothing():
    x = torch.randn(10)
    y = torch.empty(10)
    prof = profile_launch(_masked_off, (1,), x, y, 10, BLOCK=16)
    assert prof.tensor("x_ptr").bytes_read == 0 and prof.load_lanes == 16 and prof.load_lanes_active == 0
    assert torch.all(y == 1.0)


# --------------------------------------------------------------------------- 2. bounds

def test_unmasked_load_past_the_end_names_program_tensor_offsets_and_line():
    x = torch.randn(100)
    y = torch.full((128,), 7.0)
    with pytest.raises(TileAccessError) as info:
        profile_launch(_copy_unmasked, (2,), x, y, BLOCK=64)
    err = info.value
    assert err.program == (1, 0, 0) and err.tensor == "x_ptr"
    assert err.offsets[0] == 100 and "x_ptr" in str(err) and "program (1, 0, 0)" in str(err)
    assert "mask" in str(err) and err.line is not None and f"line {err.line}" in str(err)
    assert torch.all(y == 7.0)               # the failed launch wrote nothing back


def test_store_before_the_start_is_caught():
    x = torch.randn(50)
    y = torch.zeros(50)
    with pytest.raises(TileAccessError) as info:
        profile_launch(_store_before_start, (1,), x, y, 50, BLOCK=64)
    assert info.value.tensor == "y_ptr" and info.value.offsets[0] == -3 and "tl.store" in str(info.value)


def test_wrong_row_stride_is_caught_not_silent():
    x = torch.randn(6, 10)                     # 60 elements; rows of 16 run past the end
    s = torch.empty(6)
    with pytest.raises(TileAccessError, match="x_ptr"):
        profile_launch(_row_sums, (6,), x, s, 16, BLOCK=16)


def test_profile_rejects_bad_arguments():
    x = torch.randn(8)
    with pytest.raises(TypeError, match="@triton.jit"):
        profile_launch(lambda x: x, (1,), x)
    with pytest.raises(ValueError, match="grid"):
        profile_launch(_copy_unmasked, (0,), x, x, BLOCK=8)
    with pytest.raises(TypeError, match="_copy_unmasked"):
        profile_launch(_copy_unmasked, (1,), x, x, x, BLOCK=8)
    with pytest.raises(ValueError, match="power of two"):
        K.scale_shift(x, block=100)
    with pytest.raises(ValueError, match="inner dimensions"):
        K.matmul(torch.randn(4, 5), torch.randn(6, 4))


# --------------------------------------------------------------------------- 3. lesson 06's formulas

@pytest.mark.parametrize("m,k,n,bm,bn,bk", [(70, 45, 50, 32, 32, 16), (33, 80, 17, 16, 16, 32)])
def test_matmul_bytes_equal_lesson_06_formula(m, k, n, bm, bn, bk):
    torch.manual_seed(m)
    a, b = torch.randn(m, k), torch.randn(k, n)
    c, prof = K.matmul(a, b, bm, bn, bk)
    assert torch.allclose(c, a @ b, atol=1e-4)
    f = tiled_matmul_traffic(m, k, n, bm, bn, bytes_per_element=4)
    assert prof.tensor("a_ptr").bytes_read == f.a_bytes
    assert prof.tensor("b_ptr").bytes_read == f.b_bytes
    assert prof.tensor("c_ptr").bytes_written == f.c_bytes
    assert prof.bytes_moved == f.bytes_moved and prof.distinct_bytes == f.min_bytes
    steps = math.ceil(k / bk)
    assert prof.dot_flops == 2 * bm * bn * bk * steps * prof.programs      # whole tiles


def test_grouped_order_reads_less_per_wave_and_the_same_in_total():
    torch.manual_seed(1)
    m, k, n = 120, 40, 110                                 # 4 x 4 tiles of 32
    a, b = torch.randn(m, k), torch.randn(k, n)
    _, flat = K.matmul(a, b, 32, 32, 32, group_m=1)
    _, grouped = K.matmul(a, b, 32, 32, 32, group_m=2)
    assert flat.bytes_moved == grouped.bytes_moved         # lesson 06's count ignores the order
    # By hand, waves of 4 programs: row-major runs one row of C tiles per wave, so it reads that
    # row panel of A and all of B: 4 k (m + 4 n). Grouped (2 rows) runs 2 x 2 squares, so each
    # wave reads 2 row panels and 2 column panels: A and B twice each over 4 waves, 4 k (2m + 2n).
    c_bytes = 4 * m * n
    assert flat.hbm_bytes(4) == 4 * k * (m + 4 * n) + c_bytes
    assert grouped.hbm_bytes(4) == 4 * k * (2 * m + 2 * n) + c_bytes
    assert flat.hbm_bytes(16) == grouped.hbm_bytes(16) == flat.distinct_bytes
    tiles = tile_order(m, n, 32, 32, 2)
    assert tiles.shape == (16, 2) and len({tuple(t) for t in tiles}) == 16
    assert [tuple(t) for t in tiles[:5]] == [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)]
    # the launch-free model equals the traced launch, wave by wave
    for g, prof in ((1, flat), (2, grouped)):
        for w in (1, 3, 4, 16):
            model = grouped_matmul_traffic(m, k, n, 32, 32, g, w, bytes_per_element=4)
            assert model.bytes_waves == prof.hbm_bytes(w), (g, w)
            assert model.bytes_no_reuse == prof.bytes_moved


@pytest.mark.parametrize("causal", [False, True])
def test_flash_attention_matches_torch_numpy_and_lesson_06_traffic(causal):
    torch.manual_seed(3)
    n, d = 45, 20
    q, k, v = (torch.randn(n, d) for _ in range(3))
    o, lse, prof = K.flash_attention(q, k, v, causal=causal, block_m=16, block_n=16)
    ref = torch.nn.functional.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=causal)[0]
    assert torch.allclose(o, ref, atol=1e-5)
    np_ref = np_flash_attention(q.numpy(), k.numpy(), v.numpy(), block_size=16, causal=causal)
    assert np.allclose(o.numpy(), np_ref, atol=1e-5)
    s = (q @ k.T) / math.sqrt(d)
    if causal:
        s = s.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), -math.inf)
    assert torch.allclose(lse, torch.logsumexp(s, -1), atol=1e-5)
    f = flash_attention_traffic(n, d, block_size=16, causal=causal)
    elements = lambda t: (t.bytes_read + t.bytes_written) // t.itemsize   # noqa: E731
    assert sum(elements(t) for t in prof.tensors) == f.elements_moved
    reads = sum(t.bytes_read // t.itemsize for t in prof.tensors)
    assert reads == f.elements_read


def test_flash_attention_large_scores_and_heads():
    torch.manual_seed(4)
    q, k, v = (torch.randn(3, 20, 8) * 30 for _ in range(3))       # scores in the thousands
    o, _, prof = K.flash_attention(q, k, v, causal=True)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert torch.isfinite(o).all() and torch.allclose(o, ref, atol=1e-4)
    assert prof.grid == (2, 3, 1)


def test_softmax_fused_and_unfused_traffic():
    torch.manual_seed(5)
    x = torch.randn(13, 70) * 50
    y, prof = K.softmax(x)
    y4, profs = K.softmax_unfused(x)
    ref = torch.softmax(x, -1)
    assert torch.allclose(y, ref, atol=1e-6) and torch.allclose(y4, ref, atol=1e-6)
    assert prof.bytes_moved == K.softmax_bytes(13, 70)
    assert sum(p.bytes_moved for p in profs) == K.softmax_unfused_bytes(13, 70)


def test_rmsnorm_and_int8_matmul():
    torch.manual_seed(6)
    x, w = torch.randn(9, 50), torch.rand(50) + 0.5
    y, prof = K.rmsnorm(x, w)
    assert torch.allclose(y, x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w, atol=1e-5)
    assert prof.bytes_moved == K.rmsnorm_bytes(9, 50)
    x, wt = torch.randn(21, 40), torch.randn(40, 35)
    codes, scales = K.quantize_weights(wt)
    assert codes.dtype == torch.int8 and codes.abs().max() == 127
    y, prof = K.int8_matmul(x, codes, scales)
    assert torch.allclose(y, x @ (codes.float() * scales), atol=1e-4)
    assert (y - x @ wt).abs().max() < 0.05 * (x @ wt).abs().max()
    assert prof.tensor("w_ptr").bytes_read == 40 * 35 * math.ceil(21 / 16)       # one byte per weight


# --------------------------------------------------------------------------- 4. maps and predictions

def test_read_map_shows_each_programs_tiles():
    a, b = torch.randn(40, 20), torch.randn(20, 40)
    _, prof = K.matmul(a, b, 16, 16, 32)
    full = read_map(prof, "a_ptr")
    assert full.shape == (40, 20) and np.all(full == 3)        # every row of A read by 3 column tiles
    first = read_map(prof, "a_ptr", programs=[0])
    assert first[:16].sum() == 16 * 20 and first[16:].sum() == 0
    with pytest.raises(ValueError, match="programs"):
        read_map(prof, "a_ptr", programs=[99])
    with pytest.raises(ValueError, match="no tensor"):
        read_map(prof, "nope")


def test_prediction_is_lesson_04_roofline():
    acc = get_accelerator("H100 SXM")
    p = predict_tiles(1e12, 1e9, "H100 SXM", "bf16")
    ref = place_kernel(Kernel("k", 1e12, 1e9), acc, "bf16")
    assert p.t_s == ref.t_min_s == max(1e12 / acc.peak("bf16"), 1e9 / acc.mem_bandwidth)
    assert p.bound == ref.bound
    with pytest.raises(ValueError, match="bytes_moved"):
        predict_tiles(1.0, 0.0)
    with pytest.raises(ValueError):
        predict_tiles(1.0, 1.0, "no such chip")
