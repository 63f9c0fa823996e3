"""One traffic model for lesson 09's worked kernels: the explorer's formula is the demos' tasks'
formula (design.design_bytes), so section 9's prediction and the explorer's cannot drift apart.
The lesson asserts each formula equal to its kernel's trace at the traced sizes."""

import re

import numpy as np
import pytest

from course_lib.kernels.demos import DEMOS
from course_lib.kernels.design import DESIGNS, TILES, design_bytes, kernel_design
from course_lib.kernels.tasks import TASKS, TILE, TILE_T
from course_lib.tiling import tiled_matmul_traffic


def _sizes(design, n):
    if design.startswith("copy"):
        return {"n": n * n}
    return {"n": n} if design.startswith("symmetrize") else {"m": n, "k": n, "n": n}


@pytest.mark.parametrize("design", DESIGNS)
@pytest.mark.parametrize("tile", TILES)
def test_explorer_uses_the_tasks_formula(design, tile):
    for n in (256, 4096):
        assert kernel_design(design, tile, "H100 SXM", n).bytes_moved == design_bytes(design, _sizes(design, n), tile)


def test_formulas_by_hand():
    assert design_bytes("copy (grid-stride)", {"n": 1000}, 16) == 8000
    assert design_bytes("symmetrize (naive)", {"n": 40}, 32) == 40 * 40 ** 2
    assert design_bytes("symmetrize (padded tile)", {"n": 40}, 32) == 12 * 40 ** 2
    # a^T b naive, T = 16: per warp and step 1 sector of a (two neighbouring floats) + 2 of b = 3 B per thread
    assert design_bytes("a^T b (naive)", {"batch": 2, "m": 8, "k": 21, "n": 16}, 16) == 2 * (3 * 8 * 21 * 16 + 4 * 8 * 16)
    t = tiled_matmul_traffic(24, 21, 40, 16, 16, bytes_per_element=4)
    assert design_bytes("a^T b (tiled)", {"m": 24, "k": 21, "n": 40}, 16) == t.bytes_moved


def test_demo_tasks_model_is_the_designs():
    s = DEMOS["bmm_tn_tiled"].make_sizes(np.random.default_rng(0))
    assert DEMOS["bmm_tn_tiled"].model_bytes(s) == design_bytes("a^T b (tiled)", s, TILE)
    assert DEMOS["bmm_tn"].model_bytes(s) == design_bytes("a^T b (naive)", s, TILE)
    assert DEMOS["symmetrize"].model_bytes({"n": 40}) == design_bytes("symmetrize (shared tile)", {"n": 40}, TILE_T)
    assert not set(DEMOS) & set(TASKS)          # the lesson's examples are no puzzle


@pytest.mark.parametrize("sizes, word", [({"m": 8, "n": 4}, "sizes"), ([8, 8, 8], "sizes"),
                                         ({"m": 8, "k": -1, "n": 4}, "sizes['k']")])
def test_bad_sizes_are_named(sizes, word):
    with pytest.raises((TypeError, ValueError), match=re.escape(word)):
        design_bytes("a^T b (tiled)", sizes, 16)
