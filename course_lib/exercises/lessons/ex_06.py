"""Checks for lesson 06, tiling and FlashAttention (answers in solutions/06_tiling_flashattention.py).

Every expected value is computed from ``course_lib`` when a check runs; none is typed here.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from course_lib.attention import DEFAULT_BLOCK_SIZE, flash_attention_traffic, naive_attention_traffic, online_softmax_update
from course_lib.exercises.feedback import Misconception
from course_lib.exercises.types import ChoiceExercise, FunctionExercise, ValueExercise
from course_lib.exercises.decision import OptimumExercise
from course_lib.exercises.steps import _replayed
from course_lib.exercises.misconceptions import _dtype_widths, _other_accelerators, shared, _with_generated
from course_lib.hardware import get_accelerator
from course_lib.roofline import matmul_bytes
from course_lib.tiling import graph_traffic, smem_bytes_per_block, tile_limit, tiled_matmul_traffic

__all__ = ["EXERCISES"]

_TILE_CHOICES = ("doubles", "unchanged", "halves", "quarters")

_TILED = "1. A tiled matmul and the bytes it moves"
_ATTENTION = "6. Attention, naive and tiled"

MINIMUM_TRAFFIC = Misconception(
    "tiling-reads-once", "A tiled matmul taken to read every byte once whatever the tile: each "
    "element of A is read once per column of tiles, each of B once per row.", "06", _TILED,
    "Count how many times an element of A is read with 64-wide tiles, then with 128-wide ones.")
AREA_QUARTERS = Misconception(
    "traffic-follows-tile-area", "Traffic taken to follow the tile's area: the number of re-reads "
    "follows the tile's side.", "06", _TILED,
    "How many columns of tiles does C have with each tile width? That sets the re-reads of A.")
ONE_STAGE = Misconception(
    "no-double-buffering", "One stage where the task asks for two: double buffering holds two "
    "slices of each operand at once.", "06", _TILED, "Multiply the shared memory per slice by the stages, 2.")
NOT_16 = Misconception(
    "tile-not-multiple-of-16", "The tile side not rounded down to a multiple of 16, the size the "
    "tensor-core instructions work in.", "06", _TILED, "Round the largest side that fits down to a multiple of 16.")
REGISTER_LIMIT = Misconception(
    "register-limit-not-smem", "The register file's limit where the shared-memory limit was asked.",
    "06", _TILED, "Use max_shared_mem_bytes_per_block, and only shared memory.")
NO_CAUSAL = Misconception(
    "causal-mask-ignored", "FlashAttention without the causal mask: with the mask it skips the "
    "blocks above the diagonal, about half.", "06", _ATTENTION,
    "Pass causal=True to the tiled version; the naive one moves the same either way.")
INVERSE = Misconception(
    "ratio-inverted", "FlashAttention's traffic over the naive one: the ratio asked is naive over "
    "FlashAttention, above 1.", "06", _ATTENTION, "Divide the naive count by FlashAttention's.")
NAIVE_HALVED = Misconception(
    "naive-helped-by-mask", "The naive algorithm's traffic halved by the causal mask: it still "
    "writes and reads the whole N x N matrix.", "06", _ATTENTION,
    "Naive attention moves 4 N^2 + 4 N d elements with or without a mask.")
FLASH_LINEAR = Misconception(
    "flash-attention-linear", "FlashAttention taken to make attention's traffic linear, Q, K and V "
    "read once: its memory is linear, but every block of queries reads all keys and values again, "
    "so its traffic stays quadratic.", "06", "Misconceptions",
    "Count the reads of K and V: once per block of queries, not once in all.")
NO_RESCALE = Misconception(
    "online-softmax-no-rescale", "The running sum and output kept without rescaling when the "
    "maximum moves: everything summed so far was exponentiated against the old maximum.", "06",
    _ATTENTION, "Multiply l and o by exp(m_prev - m_new) before adding the block.")
NO_MAX = Misconception(
    "softmax-without-max", "Scores exponentiated without subtracting the maximum: large scores "
    "overflow to infinity.", "06", _ATTENTION, "Exponentiate s_block - m_new[:, None].")


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
    return {MINIMUM_TRAFFIC: _closest_choice(minimum / minimum),
            AREA_QUARTERS: _closest_choice((64 / 128) ** 2),
            BIGGER_TILE_MORE_BYTES: _closest_choice(128 / 64)}


BIGGER_TILE_MORE_BYTES = Misconception(
    "bigger-tile-moves-more", "A wider tile taken to move more bytes because it holds more: each tile "
    "loads more per step, but there are fewer tiles, and each element of A and B is re-read fewer times.",
    "06", _TILED, "Count the tiles of C, and the bytes each one loads, for each tile width.")


ONE_OPERAND_STAGED = Misconception(
    "one-operand-staged", "Only A's slice counted in shared memory: each stage holds a T x tile_k "
    "slice of A and a tile_k x T slice of B.", "06", _TILED,
    "Write the bytes of one stage as b (T tile_k + tile_k T), then multiply by the stages.")
TILE_K_MISREAD = Misconception(
    "tile-k-not-the-tasks", "Slices 32 deep (the lesson's example) where the task's are 64: deeper "
    "slices take more shared memory for the same tile side.", "06", _TILED,
    "Use the task's tile_k, 64, in stages x b x 2 T tile_k.")
OTHER_BLOCK_SIZE = Misconception(
    "block-size-not-the-tasks", "Another block size than the task's 200: FlashAttention's traffic "
    "depends on it, since K and V are read once per block of queries.", "06", _ATTENTION,
    "Pass block_size=200, as the task states, for the answer; try others afterwards.")
NAIVE_WITHOUT_ND = Misconception(
    "naive-count-without-nd", "Naive attention counted as 4 N^2 elements only: it also reads Q, K and V "
    "and writes O, 4 N d more.", "06", _ATTENTION, "Use the whole count, 4 N^2 + 4 N d.")


def _h200_tile_slips() -> dict:
    """Another chip's shared memory per block, or another element width."""
    acc = get_accelerator("H200")
    return {**_other_accelerators(lambda name: tile_limit(name, "bf16", tile_k=64, stages=2).smem_limit, "H200",
                                 "06", _TILED),
            **_dtype_widths(lambda b: int(acc.max_shared_mem_bytes_per_block // (2 * b * 2 * 64)) // 16 * 16, "06",
                           _TILED)}


def _h200_tile_wrong() -> dict:
    acc = get_accelerator("H200")
    single = tile_limit("H200", "bf16", tile_k=64, stages=1)
    # Leaving out B's slice gives what one stage gives: both are named, one stage first.
    return {ONE_STAGE: single.smem_limit,
            ONE_OPERAND_STAGED: acc.max_shared_mem_bytes_per_block // (2 * 2 * 64) // 16 * 16,
            NOT_16: acc.max_shared_mem_bytes_per_block // (2 * 2 * 2 * 64),
            shared("fp32-bytes", "06", _TILED): tile_limit("H200", "fp32", tile_k=64, stages=2).smem_limit,
            REGISTER_LIMIT: single.register_limit,
            TILE_K_MISREAD: tile_limit("H200", "bf16", tile_k=32, stages=2).smem_limit,
            SQUARE_TILES_STAGED: max(t for t in range(16, 4097, 16)
                                     if 2 * 2 * t * t * 2 <= acc.max_shared_mem_bytes_per_block),
            **_h200_tile_more()}


SQUARE_TILES_STAGED = Misconception(
    "square-tiles-staged", "Whole T x T tiles of A and B staged where the kernel stages T x 64 slices: "
    "a stage holds a T x tile_k slice of A and a tile_k x T slice of B, so the shared memory grows "
    "with T, not T squared.", "06", _TILED,
    "Write one stage's bytes as b (T tile_k + tile_k T) with the task's tile_k of 64.")


def _causal_saving_wrong() -> dict:
    naive = naive_attention_traffic(3000, 48).elements_moved
    causal = flash_attention_traffic(3000, 48, 200, causal=True).elements_moved
    full = flash_attention_traffic(3000, 48, 200).elements_moved
    return {NO_CAUSAL: naive / full,
            FLASH_LINEAR: naive / (4 * 3000 * 48),
            INVERSE: causal / naive,
            NAIVE_HALVED: naive / 2 / causal,
            NAIVE_WITHOUT_ND: 4 * 3000 ** 2 / causal,
            OTHER_BLOCK_SIZE: naive / flash_attention_traffic(3000, 48, 100, causal=True).elements_moved,
            BLOCK_SIZE_DEFAULT: naive / flash_attention_traffic(3000, 48, DEFAULT_BLOCK_SIZE, causal=True).elements_moved,
            FLASH_READS_ONLY: naive / flash_attention_traffic(3000, 48, 200, causal=True).elements_read,
            NAIVE_SCORES_ONCE: (2 * 3000 ** 2 + 4 * 3000 * 48) / causal,
            NAIVE_BYTES_FLASH_ELEMENTS: naive * 2 / causal,
            FLASH_BYTES_NAIVE_ELEMENTS: naive / (causal * 2),
            SAVING_FRACTION: 1 - causal / naive,
            EXCESS_OVER_FLASH: (naive - causal) / causal,
            LESSON_HEAD_DIM: naive_attention_traffic(3000, 64).elements_moved
            / flash_attention_traffic(3000, 64, 200, causal=True).elements_moved,
            LESSON_BLOCK_SIZE: naive / flash_attention_traffic(3000, 48, 128, causal=True).elements_moved,
            **_causal_saving_more()}


LESSON_BLOCK_SIZE = Misconception(
    "lesson-block-size-not-the-tasks", "The lesson's block size, 128, where the task's is 200: K and V are "
    "read once per block of queries, so the block size sets FlashAttention's count.", "06", _ATTENTION,
    "Pass block_size=200, as the task states.")


LESSON_HEAD_DIM = Misconception(
    "lesson-head-dim-not-the-tasks", "The lesson's head dimension, 64, where the task's q, k and v have 48 "
    "columns: the d terms of both counts change with it.", "06", _ATTENTION,
    "Build q, k and v with the task's shape, (3000, 48), and count with d = 48.")


NAIVE_BYTES_FLASH_ELEMENTS = Misconception(
    "naive-bytes-over-flash-elements", "Naive attention's count turned into BF16 bytes (x 2) but "
    "FlashAttention's left in elements: a ratio of two counts needs both in the same unit.", "06", _ATTENTION,
    "Divide elements by elements (traffic.elements_moved against 4 N^2 + 4 N d), or bytes by bytes.")
FLASH_BYTES_NAIVE_ELEMENTS = Misconception(
    "flash-bytes-over-naive-elements", "FlashAttention's count turned into BF16 bytes (x 2) but naive "
    "attention's left in elements: a ratio of two counts needs both in the same unit.", "06", _ATTENTION,
    "Divide elements by elements (4 N^2 + 4 N d against traffic.elements_moved), or bytes by bytes.")
SAVING_FRACTION = Misconception(
    "attention-saving-fraction-not-ratio", "The fraction of the traffic saved, 1 - flash / naive, where the ratio "
    "naive / flash was asked.", "06", _ATTENTION, "Divide the naive count by FlashAttention's: a number above 1.")
EXCESS_OVER_FLASH = Misconception(
    "attention-excess-not-ratio", "How much more naive attention moves, (naive - flash) / flash, where the ratio "
    "naive / flash was asked: the two differ by one.", "06", _ATTENTION,
    "Divide the naive count by FlashAttention's, without subtracting.")


BLOCK_SIZE_DEFAULT = Misconception(
    "block-size-left-at-default", "flash_attention run without the task's block_size, so it used its "
    "default: the traffic depends on the block size, since K and V are read once per block of queries.",
    "06", _ATTENTION, "Pass block_size=200, as the task states.")
FLASH_READS_ONLY = Misconception(
    "flash-reads-only", "FlashAttention's reads alone in the denominator: it also writes its output O to "
    "HBM, and elements_moved counts reads and writes, as the naive count does.", "06", _ATTENTION,
    "Divide by traffic.elements_moved, the reads and the writes.")
NAIVE_SCORES_ONCE = Misconception(
    "naive-scores-crossing-once", "Naive attention's N x N matrix counted as one write and one read, 2 N^2: "
    "the scores S are written and read back, and so are the probabilities P, 4 N^2 in all.", "06", _ATTENTION,
    "List naive attention's kernels and what each one reads and writes: S, then P.")


def _h200_tile() -> int:
    return tile_limit("H200", "bf16", tile_k=64, stages=2).smem_limit


def _causal_saving() -> float:
    naive = naive_attention_traffic(3000, 48).elements_moved
    return naive / flash_attention_traffic(3000, 48, 200, causal=True).elements_moved


def _online_no_rescale(m_prev, l_prev, o_prev, s_block, v_block):
    m_new = np.maximum(m_prev, s_block.max(axis=1))
    p = np.exp(s_block - m_new[:, None])
    return m_new, l_prev + p.sum(axis=1), o_prev + p @ v_block


def _online_no_max(m_prev, l_prev, o_prev, s_block, v_block):
    with np.errstate(over="ignore", invalid="ignore"):
        m_new = np.maximum(m_prev, s_block.max(axis=1))
        p = np.exp(s_block)
        scale = np.exp(m_prev - m_new)
        return m_new, l_prev * scale + p.sum(axis=1), o_prev * scale[:, None] + p @ v_block


def _online_step(alpha="old", o_rescaled=True, l_rescaled=True, p_against="new", m_from="both",
                 output="raw", rescale_side="old"):
    """online_softmax_update with one step done another way (the known mistakes of 06.4): ``alpha``
    'old' exp(m_prev - m_new), 'flipped' exp(m_new - m_prev); ``o_rescaled``/``l_rescaled`` False:
    that running sum not rescaled; ``p_against`` 'prev': the block exponentiated against the old
    maximum; ``m_from`` 'block': the new maximum from the block alone; ``output`` 'normalised': o / l
    returned, 'paper': the output kept normalised from step to step (o_prev taken as normalised);
    ``rescale_side`` 'new': the factor applied to the block instead of the sums so far."""
    def step(m_prev, l_prev, o_prev, s_block, v_block):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            block_max = s_block.max(axis=1)
            m_new = block_max if m_from == "block" else np.maximum(m_prev, block_max)
            a = np.exp(m_prev - m_new) if alpha == "old" else np.exp(m_new - m_prev)
            p = np.exp(s_block - (m_prev if p_against == "prev" else m_new)[:, None])
            if rescale_side == "new":
                return m_new, l_prev + a * p.sum(axis=1), o_prev + a[:, None] * (p @ v_block)
            l_new = (a * l_prev if l_rescaled else l_prev) + p.sum(axis=1)
            if output == "paper":
                o_new = (a[:, None] * l_prev[:, None] * o_prev + p @ v_block) / l_new[:, None]
                return m_new, l_new, o_new
            o_new = (a[:, None] * o_prev if o_rescaled else o_prev) + p @ v_block
            if output == "normalised":
                o_new = o_new / l_new[:, None]
            return m_new, l_new, o_new
    return step


O_NOT_RESCALED = Misconception(
    "output-not-rescaled", "The running sum l rescaled by exp(m_prev - m_new) but the output o not: o "
    "too was summed against the old maximum, so it needs the same factor before the block is added.",
    "06", _ATTENTION, "Multiply o_prev by exp(m_prev - m_new)[:, None] as well as l_prev.")
L_NOT_RESCALED = Misconception(
    "sum-not-rescaled", "The output o rescaled by exp(m_prev - m_new) but the running sum l not: l was "
    "summed against the old maximum too, and the final o / l needs both on the same footing.", "06",
    _ATTENTION, "Multiply l_prev by exp(m_prev - m_new) as well as o_prev.")
NORMALISED_EACH_STEP = Misconception(
    "output-normalised-each-step", "The output divided by l at every step: the update keeps o "
    "unnormalised (a sum of exp-weighted values), and the division by l happens once, after the last "
    "block.", "06", _ATTENTION, "Return o_new = alpha o_prev + p @ v_block as it is; divide by l only at the end.")
NORMALISED_VARIANT = Misconception(
    "normalised-output-recurrence", "The recurrence that keeps o normalised (o_new = (alpha l_prev o_prev "
    "+ p v) / l_new, the FlashAttention paper's form): here o_prev is the unnormalised sum, and the "
    "step returns one too.", "06", _ATTENTION,
    "Keep o unnormalised: o_new = alpha o_prev + p @ v_block, and leave the division by l to the end.")
ALPHA_FLIPPED = Misconception(
    "rescale-factor-inverted", "The rescaling factor inverted, exp(m_new - m_prev): when the maximum "
    "grows, what was summed against the old one must shrink, so the factor is exp(m_prev - m_new) <= 1.",
    "06", _ATTENTION, "Check the factor's sign: it is at most 1 and is 0 on the first block.")
P_AGAINST_OLD_MAX = Misconception(
    "block-against-old-max", "The block exponentiated against the old maximum m_prev: the new block may "
    "hold larger scores, and every term of l and o must be exponentiated against the same, new maximum.",
    "06", _ATTENTION, "Compute m_new first, then p = exp(s_block - m_new[:, None]).")
MAX_FROM_BLOCK = Misconception(
    "max-from-block-alone", "The new maximum taken from the block alone: it is the larger of the running "
    "maximum and the block's, else an earlier, larger score is exponentiated against a smaller maximum.",
    "06", _ATTENTION, "m_new = np.maximum(m_prev, s_block.max(axis=1)).")
RESCALED_NEW_BLOCK = Misconception(
    "new-block-rescaled", "The factor exp(m_prev - m_new) applied to the new block instead of to the sums "
    "so far: the block is already exponentiated against m_new; what was summed against m_prev is what "
    "must be brought to it.", "06", _ATTENTION, "Multiply l_prev and o_prev by the factor, not the block's terms.")


def _online_wrong() -> dict:
    return {NO_RESCALE: _online_no_rescale, NO_MAX: _online_no_max,
            O_NOT_RESCALED: _online_step(o_rescaled=False),
            L_NOT_RESCALED: _online_step(l_rescaled=False),
            NORMALISED_EACH_STEP: _online_step(output="normalised"),
            NORMALISED_VARIANT: _online_step(output="paper"),
            ALPHA_FLIPPED: _online_step(alpha="flipped"),
            P_AGAINST_OLD_MAX: _online_step(p_against="prev"),
            MAX_FROM_BLOCK: _online_step(m_from="block"),
            RESCALED_NEW_BLOCK: _online_step(rescale_side="new"), **_online_more()}


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


def _softmax_graph(rows=1000, cols=3001, b=2, vec_b=2):
    sizes = {"S": b * rows * cols, "P": b * rows * cols, "O": b * rows * cols, "m": vec_b * rows, "l": vec_b * rows}
    ops = [("rowmax", ("S",), ("m",), 0), ("sub_exp", ("S", "m"), ("P",), 0),
           ("rowsum", ("P",), ("l",), 0), ("divide", ("P", "l"), ("O",), 0)]
    return ops, sizes


def _softmax_saving(row_stats=True, vec_bytes=2, reads_only=False, vec_full=False, outputs=("O",)) -> float:
    """Bytes saved by fusing the four kernels (``row_stats`` False: m and l left out, a known
    mistake that lands within 0.1 % of the answer; ``vec_full``: m and l sized as the matrix and
    ``outputs`` other than O: known mistakes)."""
    ops, sizes = _softmax_graph(vec_b=vec_bytes)
    if vec_full:
        sizes = dict(sizes, m=sizes["S"] // 2 * vec_bytes, l=sizes["S"] // 2 * vec_bytes)
    if reads_only:                       # a known mistake: the kernels' reads alone, no writes
        return sum(sizes[t] for op in ops for t in op[1]) - sizes[ops[0][1][0]]
    if not row_stats:
        sizes = dict(sizes, m=0, l=0)
    four = graph_traffic(ops, sizes, [(o[0],) for o in ops], outputs)
    one = graph_traffic(ops, sizes, [tuple(o[0] for o in ops)], outputs)
    return four.bytes_moved - one.bytes_moved


_FUSION = "4. Kernel fusion"
ELEMENTS_NOT_BYTES = Misconception(
    "fusion-elements-not-bytes", "Elements where bytes were asked: each BF16 element is 2 bytes.",
    "06", _FUSION, "Multiply every element count by the element size before adding.")
TOTAL_NOT_SAVING = Misconception(
    "unfused-total-not-saving", "The unfused kernels' whole traffic where the saving was asked: the "
    "fused kernel still reads S and writes O.", "06", _FUSION,
    "Compute the traffic of both groupings, then subtract the fused one from the unfused one.")
INTERMEDIATE_ONCE = Misconception(
    "intermediate-crosses-once", "An intermediate counted once: unfused, it is written by one kernel "
    "and read back by the next, so it crosses HBM twice.", "06", _FUSION,
    "Count P's write and its read back, and likewise for m and l.")


ROW_STATS_LEFT_OUT = Misconception(
    "row-statistics-left-out", "P counted but not the row statistics m and l: unfused, each is "
    "written by one kernel and read back by the next too, a small term but one the task names.",
    "06", _FUSION, "List every tensor that crosses HBM between two kernels, the row vectors included.")


S_REREAD_FORGOTTEN = Misconception(
    "second-read-of-s-forgotten", "The intermediates' traffic alone: unfused, S is read twice, by rowmax "
    "and by sub_exp, and fused once, so one read of S is saved too.", "06", _FUSION,
    "List each kernel's reads: which tensor do two kernels both read from HBM?")


def _softmax_saving_wrong() -> dict:
    # Leaving out the row statistics m and l lies within 0.1 % of the answer: it is named because
    # the check looks for listed wrong answers before it applies the tolerance.
    e, b = 1000 * 3001, 2
    right = _softmax_saving()
    # Forgetting that S is read twice unfused gives the value of P counted once: both are named.
    return {ROW_STATS_LEFT_OUT: _softmax_saving(row_stats=False),
            S_REREAD_FORGOTTEN: right - b * 2 * e,
            ELEMENTS_NOT_BYTES: right / b,
            TOTAL_NOT_SAVING: right + b * 2 * e,
            shared("fp32-bytes", "06", _FUSION): 2 * right,
            INTERMEDIATE_ONCE: right - b * 2 * e,
            ROW_STATS_FP32: _softmax_saving(vec_bytes=4),
            FUSION_READS_ONLY: _softmax_saving(reads_only=True),
            P_READ_ONCE: right - b * e,
            ROW_STATS_AS_MATRIX: _softmax_saving(vec_full=True),
            P_KEPT_AS_OUTPUT: _softmax_saving(outputs=("O", "P")), **_softmax_saving_more()}


ROW_STATS_AS_MATRIX = Misconception(
    "row-statistics-sized-as-matrix", "The row maxima m and row sums l sized as the whole rows x cols "
    "matrix: each is one value per row, a vector of rows elements.", "06", _FUSION,
    "m = rowmax(S) and l = rowsum(P) reduce each row to one number: size them rows x 1.")
P_KEPT_AS_OUTPUT = Misconception(
    "p-kept-as-graph-output", "P listed among the graph's outputs, as if kept for a backward pass, so "
    "the fused kernel writes it too: the task's graph returns O alone, and fusion's point is that P "
    "never leaves the chip.", "06", _FUSION,
    "Pass ('O',) as the outputs to graph_traffic for both groupings.")


ROW_STATS_FP32 = Misconception(
    "row-statistics-in-fp32", "The row maxima and sums counted at FP32's 4 bytes where the task keeps "
    "every tensor in BF16: a small term, but one the task sizes.", "06", _FUSION,
    "Count m and l at 2 bytes per element, as S, P and O.")
FUSION_READS_ONLY = Misconception(
    "fusion-reads-only", "The kernels' reads alone: unfused, each kernel also writes what it makes to "
    "HBM (m, P, l), and those writes are saved by fusing too.", "06", _FUSION,
    "List each kernel's writes as well as its reads, then compare the two groupings.")
P_READ_ONCE = Misconception(
    "p-read-once", "P counted as read once: unfused, rowsum and divide are two kernels, and each reads P "
    "from HBM.", "06", _FUSION,
    "List each kernel's reads: which tensors do two kernels both read?")


# --- 06.6 (design): the register budget at which the best tile reads the weights once ---------

SKINNY = (200, 8192, 8192)                 # 06.6: m x k by k x n in BF16
SKINNY_SMEM = 64 * 1024                    # bytes of shared memory: staged slices, tile_k 32, 2 stages
SKINNY_SIDES = range(16, 513, 16)
SKINNY_KIB_MAX = 512                       # the grid of register budgets, whole KiB


def _skinny_bytes(tm, tn) -> float:
    return tiled_matmul_traffic(*SKINNY, tm, tn).bytes_moved


@functools.lru_cache(maxsize=None)
def _skinny_table(sides_m=tuple(SKINNY_SIDES), square=False, stages=2, tile_k=32, smem=SKINNY_SMEM) -> tuple:
    """(bytes, tile_m, tile_n) of every tile whose slices fit the shared memory, fewest bytes first
    (``square``, ``stages``, ``tile_k``, ``smem`` other than the task's: known mistakes)."""
    return tuple(sorted((_skinny_bytes(tm, tn), tm, tn) for tm in sides_m for tn in SKINNY_SIDES
                        if (tm == tn or not square)
                        and smem_bytes_per_block(tm, tn, tile_k, 2, stages=stages) <= smem))


def _skinny_best_tile(register_kib, accumulator_bytes=4, sides_m=tuple(SKINNY_SIDES), **table) -> tuple | None:
    """The fewest-bytes tile whose FP32 running sums fit ``register_kib`` KiB (first of a tie:
    any tie covers all rows or none, the course's tests check); None when none fits."""
    return next((row for row in _skinny_table(sides_m, **table)
                 if row[1] * row[2] * accumulator_bytes <= register_kib * 1024), None)


def _covers(tile) -> bool:
    return tile[1] >= SKINNY[0]


def _skinny_feasible(register_kib) -> str | None:
    if not 1 <= register_kib <= SKINNY_KIB_MAX:
        return f"{register_kib} KiB is outside the task's range, 1 to {SKINNY_KIB_MAX} KiB"
    best = _skinny_best_tile(register_kib)
    if _covers(best):
        return None
    cover = next((row for row in _skinny_table() if _covers(row) and row[1] * row[2] * 4 <= register_kib * 1024),
                 None)
    if cover is None:
        return (f"with {register_kib} KiB no tile that covers all {SKINNY[0]} rows fits its FP32 running sums "
                f"in the registers; the fewest bytes, {best[0] / 1e6:.1f} MB, come from a {best[1]} x {best[2]} tile")
    return (f"with {register_kib} KiB the fewest bytes, {best[0] / 1e6:.1f} MB, come from a {best[1]} x {best[2]} "
            f"tile, which does not cover all {SKINNY[0]} rows; the best tile that does moves {cover[0] / 1e6:.1f} MB")


@functools.lru_cache(maxsize=None)
def _register_kib(accumulator_bytes=4, sides_m=tuple(SKINNY_SIDES), **table) -> int | None:
    """The smallest whole-KiB register budget whose fewest-bytes tile covers all m rows (``table``:
    another search, a known mistake; None when no budget on the grid does)."""
    return next((r for r in range(1, SKINNY_KIB_MAX + 1)
                 if (best := _skinny_best_tile(r, accumulator_bytes, sides_m, **table)) is not None
                 and _covers(best)), None)


FITS_NOT_BEST = Misconception(
    "covering-tile-fits-not-best", "The budget at which a tile covering all 200 rows first fits: it "
    "fits long before it is the best, because a narrow tile re-reads A once per column of tiles.",
    "06", _TILED, "For a tile covering all rows, count the bytes of A and of B separately; then compare "
    "with the best tile that leaves a second row of tiles, at the same budget.")
TILE_M_200 = Misconception(
    "tile-m-equals-m", "tile_m = 200: tile sides are multiples of 16, so covering 200 rows takes 208, "
    "and its running sums need more registers.", "06", _TILED,
    "Round 200 up to the grid before you size the accumulators.")
GROWTH_NOT_BUDGET = Misconception(
    "growth-not-budget", "The growth over today's 64 KiB where the whole budget was asked.", "06", _TILED,
    "Answer the register budget itself, in KiB.")
ACCUMULATORS_BF16 = Misconception(
    "accumulators-in-bf16", "2-byte running sums: the inputs are BF16, but a tensor core adds their "
    "products in FP32, 4 bytes per output element of the tile.", "06", "3. Down to the tensor core",
    "Count 4 bytes per accumulator, whatever the inputs' format.")


def _skinny_wrong() -> dict:
    right = _register_kib()
    return {k: v for k, v in {**_skinny_listed(), **_skinny_more()}.items() if v is not None and v != right}


def _skinny_listed() -> dict:
    cover = next(row for row in _skinny_table() if _covers(row) and row[2] == SKINNY_SIDES[0])
    return {FITS_NOT_BEST: math.ceil(cover[1] * cover[2] * 4 / 1024),
            TILE_M_200: _register_kib(sides_m=(SKINNY[0],) + tuple(t for t in SKINNY_SIDES if t < SKINNY[0])),
            GROWTH_NOT_BUDGET: _register_kib() - 64,
            ACCUMULATORS_BF16: _register_kib(accumulator_bytes=2),
            BUDGET_IN_KB: _register_kb(),
            SQUARE_TILES_ONLY: _register_kib(square=True),
            ONE_STAGE_SKINNY: _register_kib(stages=1),
            SLICES_64_DEEP: _register_kib(tile_k=64),
            SMEM_IN_KB: _register_kib(smem=SKINNY_SMEM // 1024 * 1000),
            SMEM_IGNORED_SKINNY: _register_kib(smem=float("inf"))}


SMEM_IGNORED_SKINNY = Misconception(
    "shared-memory-budget-ignored", "The registers alone: the tile's staged slices of A and B must also "
    "fit the 64 KiB of shared memory, which rules out the tallest and widest tiles.", "06", _TILED,
    "Keep only tiles with smem_bytes_per_block(tile_m, tile_n, 32, 2, stages=2) within 64 KiB.")


SQUARE_TILES_ONLY = Misconception(
    "skinny-square-tiles-only", "Square tiles only (tile_m = tile_n), as in section 1's sweep: with 200 rows "
    "and 8192 columns the best tile is far from square, tall enough to cover the rows and as wide as the "
    "registers allow.", "06", _TILED, "Search tile_m and tile_n separately, each a multiple of 16 from 16 to 512.")
ONE_STAGE_SKINNY = Misconception(
    "no-double-buffering-skinny", "One stage of slices in shared memory where the task stages two: "
    "double buffering holds two slices of A and of B at once, which caps the tile sides lower.", "06",
    _TILED, "Count stages x 2 bytes x (tile_m + tile_n) x 32 against the 64 KiB, with 2 stages.")
SLICES_64_DEEP = Misconception(
    "slices-64-deep-not-32", "Slices 64 deep where the task's are 32: deeper slices take more shared "
    "memory for the same tile sides, so fewer tiles fit.", "06", _TILED,
    "Use the task's tile_k, 32, in smem_bytes_per_block(tile_m, tile_n, 32, 2, stages=2).")
SMEM_IN_KB = Misconception(
    "shared-memory-in-kb", "The 64 KiB of shared memory counted as 64,000 bytes: a KiB is 1024 bytes.",
    "06", _TILED, "Write the shared memory as 64 x 1024 bytes before you compare the slices with it.")


def _register_kb() -> int:
    """Wrong: the smallest budget whose best tile covers all rows, the budget counted in kB."""
    for r in range(1, SKINNY_KIB_MAX + 1):
        fitting = [row for row in _skinny_table() if row[1] * row[2] * 4 <= r * 1000]
        if fitting and _covers(fitting[0]):
            return r
    raise RuntimeError("06.6: no budget in kB covers all rows")


BUDGET_IN_KB = Misconception(
    "register-budget-in-kb", "The budget counted in kB (1000 bytes) where the task asks for KiB (1024 bytes).",
    "06", _TILED, "Multiply the KiB by 1024 before you compare with the running sums' bytes.")


# --- 06.7 (design): query and key blocks under a shared-memory and a register budget ---------

ATTN_N, ATTN_D = 4000, 64                  # 06.7: one head, not causal
ATTN_SMEM, ATTN_REGS = 192 * 1024, 128 * 1024   # bytes per thread block: shared memory; registers for O
ATTN_STEP, ATTN_MAX = 16, 1024


def _attn_smem_bytes(bq, bk, score_tile=True, stages=2, score_bytes=4, element_bytes=2) -> int:
    """Shared memory: the Q block, ``stages`` copies of the K and V blocks (``element_bytes`` each)
    and the bq x bk score tile (``score_bytes`` each; the probabilities overwrite it)."""
    q = bq * ATTN_D * element_bytes
    kv = stages * 2 * bk * ATTN_D * element_bytes
    return q + kv + (bq * bk * score_bytes if score_tile else 0)


def _attn_fits(bq, bk, registers=True, score_tile=True, accumulator_bytes=4, regs=ATTN_REGS, stages=2,
               smem=ATTN_SMEM, output_bytes=None) -> bool:
    """Within both budgets; ``accumulator_bytes`` is the size of a score and of an output running
    sum (FP32, 4; BF16, 2, is a known mistake), ``output_bytes`` the output's alone where it differs;
    ``stages`` the copies of K and V (1: no prefetch, a known mistake)."""
    output_bytes = accumulator_bytes if output_bytes is None else output_bytes
    return (_attn_smem_bytes(bq, bk, score_tile, stages=stages, score_bytes=accumulator_bytes) <= smem
            and (not registers or bq * ATTN_D * output_bytes <= regs))


def _attn_elements(bq, bk) -> float:
    return flash_attention_traffic(ATTN_N, ATTN_D, (bq, bk)).elements_moved


_ATTN_GRID = range(ATTN_STEP, ATTN_MAX + 1, ATTN_STEP)


@functools.lru_cache(maxsize=None)
def _attn_fewest(equal=False, registers=True, score_tile=True, accumulator_bytes=4, moved=None,
                 regs=ATTN_REGS, stages=2, smem=ATTN_SMEM, output_bytes=None) -> float:
    """The fewest elements any (block_q, block_k) on the grid moves within the budgets. The count
    depends on block_q alone, so for each block_q the smallest block_k is the one to try.
    ``moved``: 'reads' counts the reads only, 'no-lse' O's writes without the log-sum-exp (known
    mistakes)."""
    pairs = [(bq, bq) for bq in _ATTN_GRID] if equal else [(bq, ATTN_STEP) for bq in _ATTN_GRID]
    best = min((bq for bq, bk in pairs if _attn_fits(bq, bk, registers, score_tile, accumulator_bytes, regs, stages,
                                                          smem, output_bytes)),
               key=lambda bq: _attn_elements(bq, ATTN_STEP))
    traffic = flash_attention_traffic(ATTN_N, ATTN_D, (best, ATTN_STEP))
    if moved == "reads":
        return traffic.elements_read
    if moved == "no-lse":
        return traffic.elements_read + ATTN_N * ATTN_D
    return traffic.elements_moved


EQUAL_BLOCKS = Misconception(
    "key-block-equals-query-block", "The key block taken to be as large as the query block: the "
    "traffic depends on the query block alone (K and V are read once per query block), while the "
    "score tile and the prefetched K and V grow with the key block, so a small key block frees shared "
    "memory for a large query block.", "06", _ATTENTION,
    "Write section 6's count for a query block and a key block of different sizes: which one appears?")
REGISTERS_IGNORED = Misconception(
    "output-accumulator-ignored", "The shared memory alone: the block_q x d FP32 output accumulator "
    "lives in registers and must fit their own budget.", "06", _ATTENTION,
    "Check block_q x d x 4 bytes against 128 KiB.")
SCORE_TILE_FORGOTTEN = Misconception(
    "score-tile-forgotten", "The score tile left out of shared memory (and the key block taken as large "
    "as the query block): the block_q x block_k scores S = Q K^T live on chip too, in FP32.", "06",
    _ATTENTION, "Count the Q, K and V blocks and the block_q x block_k score tile.")
BYTES_NOT_ELEMENTS = Misconception(
    "attention-bytes-not-elements", "Bytes where elements were asked: section 6 counts elements.",
    "06", _ATTENTION, "Leave the count in elements; do not multiply by 2 bytes.")


WRITES_LEFT_OUT = Misconception(
    "attention-writes-left-out", "The reads alone: FlashAttention also writes its output O, N x d "
    "elements, and one log-sum-exp per row, to HBM.", "06", _ATTENTION,
    "Section 6's count is reads plus writes: which tensors leave the chip at the end of each query block?")
LSE_LEFT_OUT = Misconception(
    "log-sum-exp-write-left-out", "O's writes counted but not the log-sum-exp: each query row also "
    "writes one statistic for the backward pass, N more elements.", "06", _ATTENTION,
    "Count the writes per query row: d values of O and one more.")
ACCUMULATORS_BF16_ATTN = Misconception(
    "attention-accumulators-in-bf16", "The scores and the output running sums taken as BF16, 2 "
    "bytes: the inputs are BF16, but S = Q K^T and O are accumulated in FP32, 4 bytes each.", "06",
    "3. Down to the tensor core", "Count 4 bytes per score and per output accumulator, whatever the "
    "inputs' format.")
BF16_AND_REGISTERS = Misconception(
    "bf16-accumulators-and-registers-ignored", "Two mistakes at once: the score tile taken as BF16 "
    "(it is accumulated in FP32, 4 bytes a score), and the register budget left out (the block_q x d "
    "FP32 output accumulator must fit 128 KiB).", "06", _ATTENTION,
    "Count 4 bytes per score in shared memory, then check block_q x d x 4 bytes against 128 KiB.")


REGISTERS_KB_FOR_KIB = Misconception(
    "register-kib-read-as-kb", "128 KiB of registers read as 128,000 bytes: a KiB is 1024 bytes, and the "
    "budget so read turns away a query block that fits.", "06", _ATTENTION,
    "Write the register budget as 128 x 1024 bytes before you compare block_q x d x 4 with it.")


def _attn_wrong() -> dict:
    right = _attn_fewest()
    # a mistake whose rule does not bind here gives the answer: nothing to name
    return {k: v for k, v in {**_attn_listed(right), **_attn_more()}.items() if abs(v - right) > 0.5}


def _attn_listed(right) -> dict:
    return {EQUAL_BLOCKS: _attn_fewest(equal=True),
            BF16_AND_REGISTERS: _attn_fewest(registers=False, accumulator_bytes=2),
            ACCUMULATORS_BF16_ATTN: _attn_fewest(accumulator_bytes=2),
            WRITES_LEFT_OUT: _attn_fewest(moved="reads"),
            LSE_LEFT_OUT: _attn_fewest(moved="no-lse"),
            REGISTERS_KB_FOR_KIB: _attn_fewest(regs=ATTN_REGS // 1024 * 1000),
            REGISTERS_IGNORED: _attn_fewest(registers=False),
            SCORE_TILE_FORGOTTEN: _attn_fewest(equal=True, score_tile=False),
            BYTES_NOT_ELEMENTS: 2 * right,
            FLASH_LINEAR: 3 * ATTN_N * ATTN_D + ATTN_N * (ATTN_D + 1),
            KV_NOT_PREFETCHED: _attn_fewest(stages=1),
            SMEM_KIB_AS_KB: _attn_fewest(smem=ATTN_SMEM // 1024 * 1000),
            ATTN_SMEM_IGNORED: _attn_fewest(smem=float("inf")),
            OUTPUT_IN_BF16: _attn_fewest(output_bytes=2)}


OUTPUT_IN_BF16 = Misconception(
    "output-accumulator-in-bf16", "The output's running sums counted in BF16, 2 bytes like Q, K and V, "
    "against the register budget: O is accumulated in FP32, 4 bytes each, so a query block half as "
    "tall fills the registers.", "06", "3. Down to the tensor core",
    "Check block_q x d x 4 bytes against the register budget: the inputs' format does not set the "
    "accumulator's.")


ATTN_SMEM_IGNORED = Misconception(
    "attention-shared-memory-ignored", "The register budget alone: the Q block, the prefetched K and V "
    "blocks and the score tile must also fit the 192 KiB of shared memory.", "06", _ATTENTION,
    "Check each pair's shared memory (Q, two K, two V and the FP32 score tile) against 192 KiB.")


KV_NOT_PREFETCHED = Misconception(
    "kv-blocks-not-prefetched", "One key block and one value block in shared memory where the kernel "
    "prefetches the next pair while it works on this one: two copies of each, which leave less room for "
    "the query block.", "06", _ATTENTION,
    "Count the Q block, two K blocks, two V blocks and the score tile.")
SMEM_KIB_AS_KB = Misconception(
    "shared-memory-kib-read-as-kb", "192 KiB of shared memory read as 192,000 bytes: a KiB is 1024 bytes, "
    "and the budget so read turns away a query block that fits.", "06", _ATTENTION,
    "Write the shared-memory budget as 192 x 1024 bytes.")


# --- Round 26h (fix-h2): more of the long tail, each computed with the one mistake ------------

def _h(key, text, section, hint) -> Misconception:
    return Misconception(key, text, "06", section, hint)


STATIC_48_KIB = _h(
    "static-shared-memory-48-kib", "48 KiB, the static shared-memory limit a kernel gets without opting in, "
    "where the task takes the H200's max_shared_mem_bytes_per_block: a kernel may ask for more, up to "
    "that figure.", _TILED, "Read get_accelerator('H200').max_shared_mem_bytes_per_block.")
SMEM_KIB_AS_KB_TILE = _h(
    "shared-memory-kib-as-kb", "The catalog's KiB of shared memory per block multiplied by 1000: a KiB is "
    "1024 bytes, and max_shared_mem_bytes_per_block already gives the bytes.", _TILED,
    "Use max_shared_mem_bytes_per_block, in bytes, as it is.")
TILE_ROUNDED_UP = _h(
    "tile-side-rounded-up", "The tile side rounded up to a multiple of 16: the slices of the larger tile no "
    "longer fit; round down.", _TILED, "Round the largest T that fits down to a multiple of 16.")
OUTPUT_TILE_STAGED = _h(
    "output-tile-in-shared-memory", "The T x T FP32 output tile counted in shared memory too: its running "
    "sums live in registers; shared memory holds the staged slices of A and B only.", _TILED,
    "Count stages x 2 bytes x (T x 64 + 64 x T) against the limit, nothing else.")
TILE_POWER_OF_TWO = _h(
    "tile-side-power-of-two", "The largest power of two that fits where any multiple of 16 was allowed.",
    _TILED, "Step T in multiples of 16 up to the limit, not in powers of two.")
TILE_AREA = _h(
    "tile-area-not-side", "The tile's area T x T where its side T was asked.", _TILED, "Answer T, the side.")


def _h200_tile_more() -> dict:
    acc = get_accelerator("H200")
    limit = acc.max_shared_mem_bytes_per_block
    per_t = 2 * 2 * (64 + 64)                     # stages x bytes x (T x 64 + 64 x T), per unit of T

    def largest(fits):
        return max(t for t in range(16, 8193, 16) if fits(t))
    right = _h200_tile()
    found = {STATIC_48_KIB: largest(lambda t: per_t * t <= 48 * 1024),
             SMEM_KIB_AS_KB_TILE: largest(lambda t: per_t * t <= limit / 1024 * 1000),
             TILE_ROUNDED_UP: math.ceil(limit / per_t / 16) * 16,
             OUTPUT_TILE_STAGED: largest(lambda t: per_t * t + 4 * t * t <= limit),
             TILE_POWER_OF_TWO: 2 ** int(math.log2(right)),
             TILE_AREA: right * right}
    return {k: v for k, v in found.items() if v != right}


NAIVE_OUTPUT_LEFT_OUT = _h(
    "naive-count-output-left-out", "Naive attention counted as 4 N^2 + 3 N d, Q, K and V read but O not "
    "written: the task's count is 4 N^2 + 4 N d.", _ATTENTION, "Use the task's count, 4 N^2 + 4 N d.")
SAVING_PERCENT = _h(
    "attention-saving-in-percent", "The percentage of the traffic saved, 100 (1 - flash / naive), where the "
    "ratio naive / flash was asked.", _ATTENTION, "Divide the naive count by FlashAttention's.")
SAVING_DIFFERENCE = _h(
    "attention-saving-difference", "The difference naive - flash, in elements, where their ratio was asked.",
    _ATTENTION, "Divide the naive count by FlashAttention's.")


def _causal_saving_more() -> dict:
    n, d = 3000, 48
    naive = naive_attention_traffic(n, d).elements_moved
    causal = flash_attention_traffic(n, d, 200, causal=True).elements_moved
    found = {NAIVE_OUTPUT_LEFT_OUT: (4 * n * n + 3 * n * d) / causal,
             SAVING_PERCENT: 100 * (1 - causal / naive),
             SAVING_DIFFERENCE: naive - causal}
    # the saving at a block size the learner tried afterwards, as the task invites (those the exercise
    # lists already, 100, 128 and the default, keep their own words)
    for size in (16, 32, 64, 150, 250, 256, 300, 400, 500, 600, 750, 1000, 1024, 1500):
        if size in (100, 128, DEFAULT_BLOCK_SIZE):
            continue
        found[_h(f"block-size-{size}-tried-afterwards", f"The saving at block_size={size}, a size tried after "
                 "the task's: the answer is the saving at block_size=200; the other sizes are for seeing how the "
                 "saving depends on it.", _ATTENTION, "Run flash_attention with block_size=200 for the answer.")] \
            = naive / flash_attention_traffic(n, d, size, causal=True).elements_moved
    return found


def _online_custom(max_over="row", base="e", block_normalised=False, p_max="new", order="mlo"):
    """online_softmax_update with one more step done another way (round 26h)."""
    def step(m_prev, l_prev, o_prev, s_block, v_block):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            block_max = s_block.max(axis=1) if max_over == "row" else np.full(len(m_prev), s_block.max())
            m_new = np.maximum(m_prev, block_max)
            exp = np.exp2 if base == "2" else np.exp
            a = exp(m_prev - m_new)
            p = exp(s_block - (m_new if p_max == "new" else block_max)[:, None])
            l_new = a * l_prev + p.sum(axis=1)
            weights = p / p.sum(axis=1, keepdims=True) if block_normalised else p
            o_new = a[:, None] * o_prev + weights @ v_block
            return (l_new, m_new, o_new) if order == "lmo" else (m_new, l_new, o_new)
    return step


MAX_OVER_WHOLE_BLOCK = _h(
    "block-max-over-all-rows", "s_block.max() without axis=1: one maximum for the whole block, shared by every "
    "row, where each query row keeps its own running maximum.", _ATTENTION,
    "Take the block's maximum row by row, s_block.max(axis=1).")
EXP2_NOT_EXP = _h(
    "exp2-not-exp", "np.exp2 where the softmax uses e: kernels use exp2 only on scores pre-multiplied by "
    "log2(e); here the scores are as they are.", _ATTENTION, "Use np.exp for p and for the factor.")
BLOCK_NORMALISED = _h(
    "block-softmax-before-values", "The block's probabilities normalised by their own sum before they weight "
    "v_block: o stays an unnormalised sum of exp-weighted values, divided by l only at the end.", _ATTENTION,
    "Add p @ v_block with p = exp(s_block - m_new[:, None]) as it is.")
BLOCK_OWN_MAX = _h(
    "block-against-its-own-max", "The block exponentiated against its own row maximum while l and o are "
    "rescaled to the new running maximum: every term must be against the same maximum, m_new.", _ATTENTION,
    "p = exp(s_block - m_new[:, None]).")
TUPLE_ORDER = _h(
    "online-step-returned-out-of-order", "The running sum returned first, (l, m, o): the step returns "
    "(m_new, l_new, o_new), in the order of its arguments.", _ATTENTION, "return m_new, l_new, o_new")


def _online_raw_scores(m_prev, l_prev, o_prev, s_block, v_block):
    """The block's raw scores exponentiated, exp(s_block), and added to l and o as they are (a known
    mistake: no maximum subtracted, no factor on the sums so far)."""
    with np.errstate(over="ignore", invalid="ignore"):
        m_new = np.maximum(m_prev, s_block.max(axis=1))
        p = np.exp(s_block)
        return m_new, l_prev + p.sum(axis=1), o_prev + p @ v_block


def _online_flipped_first_block_kept(m_prev, l_prev, o_prev, s_block, v_block):
    """The factor inverted, exp(m_new - m_prev), with the first block (m_prev = -inf) given a factor
    0, so that it alone comes out right (a known mistake)."""
    m_new = np.maximum(m_prev, s_block.max(axis=1))
    with np.errstate(invalid="ignore", over="ignore"):
        a = np.where(np.isfinite(m_prev), np.exp(m_new - m_prev), 0.0)
        p = np.exp(s_block - m_new[:, None])
        return m_new, a * l_prev + p.sum(axis=1), a[:, None] * o_prev + p @ v_block


RAW_SCORES = _h(
    "raw-scores-exponentiated", "The raw scores exponentiated, exp(s_block), and added to l and o with no "
    "maximum subtracted: l_prev and o_prev were summed against m_prev, so the block's terms are on another "
    "footing, and scores in the hundreds overflow to infinity.", _ATTENTION,
    "Exponentiate s_block - m_new[:, None], and bring l_prev and o_prev to m_new before adding the block.")
ALPHA_FLIPPED_FIRST_BLOCK = _h(
    "rescale-factor-inverted-past-the-first-block", "The rescaling factor inverted, exp(m_new - m_prev), "
    "with the first block set apart (factor 0 while m_prev is -inf): the first block comes out right, the "
    "later ones do not. When the maximum grows, the sums so far must shrink.", _ATTENTION,
    "Test a block after the first whose scores raise the maximum: the factor on l_prev and o_prev must be "
    "below 1 there.")


def _online_more() -> dict:
    return {RAW_SCORES: _online_raw_scores, ALPHA_FLIPPED_FIRST_BLOCK: _online_flipped_first_block_kept,
            MAX_OVER_WHOLE_BLOCK: _online_custom(max_over="block"), EXP2_NOT_EXP: _online_custom(base="2"),
            BLOCK_NORMALISED: _online_custom(block_normalised=True), BLOCK_OWN_MAX: _online_custom(p_max="block"),
            TUPLE_ORDER: _online_custom(order="lmo")}


COLS_3000 = _h(
    "score-columns-3000", "3000 columns where the task's score matrix has 3001: the sizes are the task's, "
    "1000 x 3001.", _FUSION, "Size S, P and O as 1000 x 3001 elements.")
ROW_STATS_PER_COLUMN = _h(
    "row-statistics-per-column", "The row maxima m and row sums l sized per column (3001 values): each row of "
    "S reduces to one number, so m and l have 1000.", _FUSION, "Size m and l as rows elements, 1000 each.")
ROW_STATS_AS_OUTPUTS = _h(
    "row-statistics-kept-as-outputs", "m and l listed among the graph's outputs, so the fused kernel writes "
    "them too: the task's graph returns O alone.", _FUSION,
    "Pass ('O',) as the outputs to graph_traffic for both groupings.")


def _softmax_saving_more() -> dict:
    right = _softmax_saving()
    found = {COLS_3000: _softmax_saving_with(cols=3000),
             ROW_STATS_PER_COLUMN: _softmax_saving_with(vec=3001),
             ROW_STATS_AS_OUTPUTS: _softmax_saving(outputs=("O", "m", "l"))}
    for unit, scale, name in (("kb", 1e3, "kB (1000 bytes)"), ("mb", 1e6, "MB (10^6 bytes)"),
                              ("gb", 1e9, "GB (10^9 bytes)"), ("mib", 2 ** 20, "MiB (2^20 bytes)")):
        found[_h(f"fusion-saving-in-{unit}", f"The saving in {name} where bytes were asked.", _FUSION,
                 "Answer in bytes: do not divide by a unit.")] = right / scale
    return found


def _softmax_saving_with(rows=1000, cols=3001, vec=None, b=2) -> float:
    """The saving with the graph sized another way (a known mistake's sizes)."""
    vec = rows if vec is None else vec
    sizes = {"S": b * rows * cols, "P": b * rows * cols, "O": b * rows * cols, "m": b * vec, "l": b * vec}
    ops, _ = _softmax_graph()
    four = graph_traffic(ops, sizes, [(o[0],) for o in ops], ("O",))
    one = graph_traffic(ops, sizes, [tuple(o[0] for o in ops)], ("O",))
    return four.bytes_moved - one.bytes_moved


REGISTERS_STRICT = _h(
    "register-budget-strict", "A tile's running sums required to take less than (<) the budget: the task "
    "counts a tile that needs exactly the budget (<=) as fitting.", _TILED,
    "Keep tiles with tile_m x tile_n x 4 <= budget x 1024.")
SQUARE_MATMUL_COUNT = _h(
    "square-matmul-traffic-for-skinny", "The bytes counted for section 1's 8192 x 8192 x 8192 matmul where the "
    "task's has 200 rows: with m = 200 a tile tall enough to cover them all reads the weights once.", _TILED,
    "Count each tile's bytes with tiled_matmul_traffic(200, 8192, 8192, tile_m, tile_n).")


def _skinny_more() -> dict:
    def smallest(fits_registers, bytes_of=_skinny_bytes):
        tiles = sorted((bytes_of(tm, tn), tm, tn) for tm in SKINNY_SIDES for tn in SKINNY_SIDES
                       if smem_bytes_per_block(tm, tn, 32, 2, stages=2) <= SKINNY_SMEM)
        for r in range(1, SKINNY_KIB_MAX + 1):
            best = next((t for t in tiles if fits_registers(t[1] * t[2] * 4, r * 1024)), None)
            if best is not None and _covers(best):
                return r
        return None
    right = _register_kib()
    found = {REGISTERS_STRICT: smallest(lambda need, budget: need < budget),
             SQUARE_MATMUL_COUNT: smallest(lambda need, budget: need <= budget,
                                           lambda tm, tn: tiled_matmul_traffic(8192, 8192, 8192, tm, tn).bytes_moved)}
    return {k: v for k, v in found.items() if v is not None and v != right}


CAUSAL_FOR_FULL = _h(
    "causal-mask-for-unmasked", "The count with causal=True where the task's pass is not causal: every query "
    "block reads all of K and V.", _ATTENTION, "Count with flash_attention_traffic(4000, 64, (block_q, block_k)).")
SCORES_IN_REGISTERS = _h(
    "score-tile-in-register-budget", "The score tile counted in the register budget with the output: the task "
    "puts the FP32 scores in shared memory and only the output accumulator in the 128 KiB of registers.",
    _ATTENTION, "Check block_q x d x 4 alone against the registers.")
OUTPUT_IN_SMEM = _h(
    "output-accumulator-in-shared-memory", "The FP32 output accumulator counted in shared memory as well as in "
    "the registers: it lives in registers alone.", _ATTENTION,
    "Shared memory: Q, two K, two V and the score tile; registers: block_q x d x 4.")
REGISTERS_STRICT_ATTN = _h(
    "attention-register-budget-strict", "The output required to take less than (<) the 128 KiB: a pair that "
    "needs exactly the budget fits it (<=).", _ATTENTION, "Keep block_q x 64 x 4 <= 128 x 1024.")


def _attn_more() -> dict:
    grid = _ATTN_GRID

    def fewest(smem_extra=lambda bq, bk: 0, regs=lambda bq, bk: bq * ATTN_D * 4 <= ATTN_REGS, causal=False):
        return min(flash_attention_traffic(ATTN_N, ATTN_D, (bq, bk), causal).elements_moved
                   for bq in grid for bk in grid
                   if _attn_smem_bytes(bq, bk) + smem_extra(bq, bk) <= ATTN_SMEM and regs(bq, bk))
    return {CAUSAL_FOR_FULL: fewest(causal=True),
            SCORES_IN_REGISTERS: fewest(regs=lambda bq, bk: 4 * bq * (ATTN_D + bk) <= ATTN_REGS),
            OUTPUT_IN_SMEM: fewest(smem_extra=lambda bq, bk: 4 * bq * ATTN_D),
            REGISTERS_STRICT_ATTN: fewest(regs=lambda bq, bk: bq * ATTN_D * 4 < ATTN_REGS)}


EXERCISES = [
    ChoiceExercise(
        "06.1", expected=_doubling_effect, choices=_TILE_CHOICES,
        wrong_answers=_doubling_wrong, concepts=("tiling-traffic",),
        form="one of 'doubles', 'unchanged', 'halves', 'quarters'",
        hints=("Each element of A is read once per column of output tiles, each element of B once "
               "per row of tiles.",
               "How many columns of tiles does an 8192-wide C have with 64-wide tiles, and with 128-wide?",
               "Writing C happens once either way; it is a small part of the total here.")),
    ValueExercise(
        "06.2", expected=_h200_tile, rel_tol=0.0, abs_tol=0.0,
        wrong_answers=_with_generated(_h200_tile_wrong, _h200_tile, _h200_tile_slips, _replayed(_h200_tile, "06")), concepts=("tile-sizing",),
        form="an integer: the tile side T, a multiple of 16 (exact)",
        hints=("Shared memory per block holds stages x bytes x (T x tile_k + tile_k x T).",
               "Read get_accelerator('H200').max_shared_mem_bytes_per_block; BF16 is 2 bytes.",
               "Solve for T, round down, then down again to a multiple of 16; "
               "tiling.smem_bytes_per_block checks a candidate.")),
    ValueExercise(
        "06.3", expected=_causal_saving, rel_tol=1e-6,
        wrong_answers=_with_generated(_causal_saving_wrong, _causal_saving, _replayed(_causal_saving, "06"), rel_tol=1e-6), concepts=("flash-attention",),
        form="a float: naive HBM elements divided by FlashAttention's (a ratio, no unit)",
        hints=("flash_attention(q, k, v, block_size=200, causal=True, return_traffic=True) returns "
               "(output, traffic); traffic.elements_moved is the count.",
               "Naive attention's Algorithm 0 moves 4N^2 + 4Nd elements; a causal mask does not shrink it.",
               "Use q, k, v of shape (3000, 48); the values do not matter, the count does.")),
    FunctionExercise(
        "06.4", reference=online_softmax_update, make_cases=_online_cases, rel_tol=1e-9, abs_tol=1e-12,
        wrong_implementations=_online_wrong, concepts=("online-softmax",),
        form="a function online_softmax_step(m_prev, l_prev, o_prev, s_block, v_block) returning the "
             "tuple (m_new, l_new, o_new) of NumPy arrays with the shapes of m_prev, l_prev, o_prev",
        hints=("The new maximum is the larger of the old one and the block's row maximum.",
               "Everything summed so far was exponentiated against the old maximum: multiply l and o "
               "by exp(m_prev - m_new).",
               "Exponentiate the block as exp(s_block - m_new[:, None]); without subtracting the "
               "maximum, scores in the hundreds overflow.")),
    ValueExercise(
        "06.5", expected=_softmax_saving, rel_tol=1e-9,
        wrong_answers=_with_generated(_softmax_saving_wrong, _softmax_saving, lambda: _dtype_widths(
            lambda b: _softmax_saving() / 2 * b, "06", _FUSION), _replayed(_softmax_saving, "06"), rel_tol=1e-9),
        concepts=("kernel-fusion",),
        form="a number: bytes of HBM traffic saved by fusing (exact; BF16 is 2 bytes)",
        hints=("Unfused, each kernel reads the tensors it needs from HBM and writes what it makes; fused, "
               "only S is read and O written.",
               "The intermediates are P (rows x cols) and the row vectors m and l (rows each): each is "
               "written once and read once when unfused.",
               "tiling.graph_traffic(ops, sizes, kernels, ('O',)).bytes_moved for both groupings; subtract.")),
    OptimumExercise(
        "06.6", expected=_register_kib, feasible=_skinny_feasible, goal="smallest", step=1,
        rel_tol=0.0, abs_tol=0.0, wrong_answers=_skinny_wrong, concepts=("tile-sizing", "tiling-traffic"),
        form="an integer: the smallest register budget per thread block, in whole KiB, at which the tile "
             "that moves the fewest HBM bytes covers all 200 rows (exact)",
        hints=("Count the re-reads: A once per column of tiles, B once per row of tiles. Which operand is "
               "the large one here, and what does a tile that covers all 200 rows save on it?",
               "A taller tile leaves fewer registers for its width, so A is re-read more often. At a given "
               "budget, compare the best tile that covers all rows with the best tile that does not.",
               "Sanity check: at your budget, and not at one KiB less, the fewest-bytes tile within both "
               "budgets covers all 200 rows.")),
    ValueExercise(
        "06.7", quantity=(), expected=_attn_fewest, rel_tol=0.0, abs_tol=0.5, wrong_answers=_with_generated(_attn_wrong, _attn_fewest, _replayed(_attn_fewest, "06"), abs_tol=0.5),
        concepts=("flash-attention", "tile-sizing"),
        form="a number: the fewest elements moved between HBM and the chip by any block_q and block_k "
             "(multiples of 16 from 16 to 1024) within 192 KiB of shared memory and 128 KiB of "
             "registers (exact)",
        hints=("Every query block streams all of K and V past it: which block size sets how often K and V "
               "are read, and which one only sets what sits on chip?",
               "List what one step of section 6's loop works on at once: the blocks it reads and what it "
               "computes from them; give each its own element size, count the prefetched blocks twice, "
               "and put the output accumulator in the register budget.",
               "Sanity check: a query block 16 larger than yours breaks a budget with every key block, "
               "and section 6's count for your pair matches flash_attention_traffic(4000, 64, (block_q, block_k)).")),
]
