"""Checks for lesson 06, tiling and FlashAttention (answers in solutions/06_tiling_flashattention.py).

Every expected value is computed from ``course_lib`` when a check runs; none is typed here.
"""

from __future__ import annotations

import numpy as np

from course_lib.attention import flash_attention_traffic, naive_attention_traffic, online_softmax_update
from course_lib.checks import ChoiceExercise, FunctionExercise, ValueExercise
from course_lib.hardware import get_accelerator
from course_lib.roofline import matmul_bytes
from course_lib.tiling import graph_traffic, tile_limit, tiled_matmul_traffic

__all__ = ["EXERCISES"]

_TILE_CHOICES = ("doubles", "unchanged", "halves", "quarters")


_FACTORS = {"doubles": 2.0, "unchanged": 1.0, "halves": 0.5, "quarters": 0.25}


def _closest_choice(ratio) -> str:
    return min(_FACTORS, key=lambda name: abs(np.log(ratio) - np.log(_FACTORS[name])))


def _doubling_effect() -> str:
    """What 64 -> 128 square tiles do to an 8192^3 BF16 matmul's HBM traffic, read off the formula."""
    before = tiled_matmul_traffic(8192, 8192, 8192, 64, bytes_per_element=2).bytes_moved
    after = tiled_matmul_traffic(8192, 8192, 8192, 128, bytes_per_element=2).bytes_moved
    return _closest_choice(after / before)


def _doubling_wrong() -> dict:
    minimum = matmul_bytes(8192, 8192, 8192, 2)                 # A and B read once, C written once
    return {"the minimum traffic (every byte read once, whatever the tile)":
                _closest_choice(minimum / minimum),
            "the tile's area quadruples, so the traffic quarters": _closest_choice((64 / 128) ** 2)}


def _h200_tile_wrong() -> dict:
    acc = get_accelerator("H200")
    single = tile_limit("H200", "bf16", tile_k=64, stages=1)
    return {"one stage (no double buffering)": single.smem_limit,
            "not rounded down to a multiple of 16": acc.max_shared_mem_bytes_per_block // (2 * 2 * 2 * 64),
            "4-byte (FP32) slices": tile_limit("H200", "fp32", tile_k=64, stages=2).smem_limit,
            "the register limit instead of shared memory": single.register_limit}


def _causal_saving_wrong() -> dict:
    naive = naive_attention_traffic(3000, 48).elements_moved
    causal = flash_attention_traffic(3000, 48, 200, causal=True).elements_moved
    full = flash_attention_traffic(3000, 48, 200).elements_moved
    return {"FlashAttention without the causal mask": naive / full,
            "the inverse ratio (FlashAttention over naive)": causal / naive,
            "the naive count halved by the mask too": naive / 2 / causal}


def _h200_tile() -> int:
    return tile_limit("H200", "bf16", tile_k=64, stages=2).smem_limit


def _causal_saving() -> float:
    naive = naive_attention_traffic(3000, 48).elements_moved
    return naive / flash_attention_traffic(3000, 48, 200, causal=True).elements_moved


def _odd(rng, low, high) -> int:
    return int(rng.integers(low, high)) | 1


def _online_cases(rng) -> list:
    cases = []
    for i in range(8):
        r, c, d_v = _odd(rng, 3, 40), _odd(rng, 3, 70), _odd(rng, 1, 20)
        while len({r, c, d_v}) < 3:                     # keep rows, keys and width distinct
            r, c, d_v = _odd(rng, 3, 40), _odd(rng, 3, 70), _odd(rng, 1, 20)
        spread = 300.0 if i % 3 == 2 else 3.0           # large scores: exp overflows without the max
        s_block = rng.standard_normal((r, c)) * spread
        v_block = rng.standard_normal((c, d_v))
        if i == 0:                                      # the very first block: nothing seen yet
            m_prev, l_prev, o_prev = np.full(r, -np.inf), np.zeros(r), np.zeros((r, d_v))
        else:                                           # a state left by an earlier block
            earlier = rng.standard_normal((r, _odd(rng, 3, 50))) * spread
            m_prev = earlier.max(axis=1)
            p = np.exp(earlier - m_prev[:, None])
            l_prev = p.sum(axis=1)
            o_prev = p @ rng.standard_normal((earlier.shape[1], d_v))
        cases.append(((m_prev, l_prev, o_prev, s_block, v_block), {}))
    return cases


def _softmax_graph(rows=1000, cols=3001, b=2):
    sizes = {"S": b * rows * cols, "P": b * rows * cols, "O": b * rows * cols, "m": b * rows, "l": b * rows}
    ops = [("rowmax", ("S",), ("m",), 0), ("sub_exp", ("S", "m"), ("P",), 0),
           ("rowsum", ("P",), ("l",), 0), ("divide", ("P", "l"), ("O",), 0)]
    return ops, sizes


def _softmax_saving() -> float:
    ops, sizes = _softmax_graph()
    four = graph_traffic(ops, sizes, [(o[0],) for o in ops], ("O",))
    one = graph_traffic(ops, sizes, [tuple(o[0] for o in ops)], ("O",))
    return four.bytes_moved - one.bytes_moved


def _softmax_saving_wrong() -> dict:
    e, r, b = 1000 * 3001, 1000, 2
    right = _softmax_saving()
    return {"the row statistics m and l left out (4E elements only)": b * 4 * e,
            "elements instead of bytes": right / b,
            "the unfused total instead of the saving": right + b * 2 * e,
            "FP32 (4 bytes) instead of BF16": 2 * right,
            "P counted once (written but never read back)": right - b * 2 * e}


EXERCISES = [
    ChoiceExercise(
        "06.1", expected=_doubling_effect, choices=_TILE_CHOICES,
        wrong_answers=_doubling_wrong,
        form="one of 'doubles', 'unchanged', 'halves', 'quarters'",
        hints=("Each element of A is read once per column of output tiles, each element of B once "
               "per row of tiles.",
               "How many columns of tiles does an 8192-wide C have with 64-wide tiles, and with 128-wide?",
               "Writing C happens once either way; it is a small part of the total here.")),
    ValueExercise(
        "06.2", expected=_h200_tile, rel_tol=0.0, abs_tol=0.0,
        wrong_answers=_h200_tile_wrong,
        form="an integer: the tile side T, a multiple of 16 (exact)",
        hints=("Shared memory per block holds stages x bytes x (T x tile_k + tile_k x T).",
               "Read get_accelerator('H200').max_shared_mem_bytes_per_block; BF16 is 2 bytes.",
               "Solve for T, round down, then down again to a multiple of 16; "
               "tiling.smem_bytes_per_block checks a candidate.")),
    ValueExercise(
        "06.3", expected=_causal_saving, rel_tol=1e-6,
        wrong_answers=_causal_saving_wrong,
        form="a float: naive HBM elements divided by FlashAttention's (a ratio, no unit)",
        hints=("flash_attention(q, k, v, block_size=200, causal=True, return_traffic=True) returns "
               "(output, traffic); traffic.elements_moved is the count.",
               "Naive attention's Algorithm 0 moves 4N^2 + 4Nd elements; a causal mask does not shrink it.",
               "Use q, k, v of shape (3000, 48); the values do not matter, the count does.")),
    FunctionExercise(
        "06.4", reference=online_softmax_update, make_cases=_online_cases, rel_tol=1e-9, abs_tol=1e-12,
        form="a function online_softmax_step(m_prev, l_prev, o_prev, s_block, v_block) returning the "
             "tuple (m_new, l_new, o_new) of NumPy arrays with the shapes of m_prev, l_prev, o_prev",
        hints=("The new maximum is the larger of the old one and the block's row maximum.",
               "Everything summed so far was exponentiated against the old maximum: multiply l and o "
               "by exp(m_prev - m_new).",
               "Exponentiate the block as exp(s_block - m_new[:, None]); without subtracting the "
               "maximum, scores in the hundreds overflow.")),
    ValueExercise(
        "06.5", expected=_softmax_saving, rel_tol=1e-9,
        wrong_answers=_softmax_saving_wrong,
        form="a number: bytes of HBM traffic saved by fusing (exact; BF16 is 2 bytes)",
        hints=("Unfused, each kernel reads the tensors it needs from HBM and writes what it makes; fused, "
               "only S is read and O written.",
               "The intermediates are P (rows x cols) and the row vectors m and l (rows each): each is "
               "written once and read once when unfused.",
               "tiling.graph_traffic(ops, sizes, kernels, ('O',)).bytes_moved for both groupings; subtract.")),
]
