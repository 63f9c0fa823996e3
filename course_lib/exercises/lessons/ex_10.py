"""Checks for lesson 10, tile kernels (answers in solutions/10_tile_kernels.py).

Each exercise is a ``@triton.jit`` kernel for a task of ``course_lib.tiles.tasks``, which holds
the signature, the launch, the data, the PyTorch reference, the cost target and the mistakes a
wrong output is compared with; nothing is typed here. This module imports no part of the tile
lab (nor torch or triton): that happens when a check runs.
"""

from __future__ import annotations

from course_lib.exercises.types import TileKernelExercise

__all__ = ["EXERCISES"]


def _form(signature: str, what: str) -> str:
    return f"a @triton.jit kernel {signature} that {what}"


EXERCISES = [
    TileKernelExercise(
        "10.1", task="leaky_relu", concepts=("tile-masks",),
        form=_form("leaky_relu_kernel(x_ptr, out_ptr, n, slope, BLOCK)", "writes out = x where x > 0, else slope * x"),
        hints=("The last program's tile runs past the end of the vector: which of its lanes may touch memory?",
               "offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK); mask = offs < n, given to both the load "
               "and the store.",
               "tl.where(x > 0, x, x * slope) chooses per lane.")),
    TileKernelExercise(
        "10.2", task="outer_add", concepts=("tile-masks",),
        form=_form("outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M, BLOCK_N)",
                   "writes out[i, j] = x[i] + y[j] for an M x N row-major out"),
        hints=("A 2D grid: program (pid_m, pid_n) owns rows pid_m * BLOCK_M + tl.arange(0, BLOCK_M) and "
               "columns likewise.",
               "Load x[rows] and y[cols] as vectors, once each; rows[:, None] and cols[None, :] broadcast "
               "them to a tile.",
               "out[i, j] is at i * N + j; the store's mask needs both rows < M and cols < N.")),
    TileKernelExercise(
        "10.3", task="row_sum", concepts=("tile-reductions", "tile-masks"),
        form=_form("row_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK_COLS)",
                   "writes out[r] = sum of row r, rows longer than one block"),
        hints=("One program per row, and the row does not fit one tile: walk it in steps of BLOCK_COLS.",
               "for start in range(0, n_cols, BLOCK_COLS): load the columns start + tl.arange(0, BLOCK_COLS) "
               "with a mask and other=0.0, and accumulate.",
               "Accumulate a BLOCK_COLS vector (acc += tile) and tl.sum it once at the end, or add tl.sum of "
               "each tile to a running total; store one value at out_ptr + row.")),
    TileKernelExercise(
        "10.4", task="layernorm", concepts=("fused-kernels", "tile-reductions"),
        form=_form("layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK_COLS)",
                   "writes y = (x - mean) / sqrt(var + eps) * w + b over each row"),
        hints=("Lesson 10's RMSNorm is the neighbour: one program per row, the row in one tile, the mean by "
               "tl.sum divided by n_cols.",
               "The variance is the mean of (x - mean)^2 over the real columns only: the padded lanes must not "
               "enter it.",
               "xc = tl.where(mask, x - mean, 0.0); var = tl.sum(xc * xc, axis=0) / n_cols.")),
    TileKernelExercise(
        "10.5", task="softmax_long", concepts=("online-softmax", "fused-kernels"),
        form=_form("softmax_long_kernel(x_ptr, y_ptr, n_cols, BLOCK_COLS)",
                   "writes the softmax of each row, rows longer than one block, reading x at most twice"),
        hints=("Lesson 06's online softmax: a running max m and a running sum of exp(x - m), block by block.",
               "When a block raises the max from m to m_new, the sum so far was taken against m: multiply it "
               "by exp(m - m_new) before adding the block's sum.",
               "A second loop over the row writes exp(x - m) / total. Masked lanes load -inf.")),
    TileKernelExercise(
        "10.6", task="matmul_bias_relu", concepts=("fused-kernels",),
        form=_form("matmul_bias_relu_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K)",
                   "writes C = relu(A B + bias[None, :])"),
        hints=("Lesson 10's blocked matmul, with an epilogue: what happens to the accumulator before the store?",
               "Load the bias for this program's columns once, after the K loop.",
               "c = tl.maximum(acc + bias[None, :], 0.0), stored once with the 2D mask.")),
    TileKernelExercise(
        "10.7", task="grouped_matmul", concepts=("program-order",),
        form=_form("grouped_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_N)",
                   "computes C = A B on a 1D grid, programs in groups of GROUP_N tile columns walked row by row"),
        hints=("Program pid first finds its group of GROUP_N tile columns, then its place inside the group: "
               "inside a group the tile row changes slowest.",
               "Section 5's kernel does this for groups of rows; swap the roles of rows and columns: "
               "per_group = GROUP_N * n_m, and the group starts at column (pid // per_group) * GROUP_N.",
               "The last group may have fewer than GROUP_N columns: cols_in_group = min(n_n - first_n, GROUP_N); "
               "inside the group, pid_n = first_n + (pid % per_group) % cols_in_group.")),
    TileKernelExercise(
        "10.8", task="window_attention", concepts=("online-softmax", "tile-masks"),
        form=_form("window_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, D, scale, WINDOW, BLOCK_M, BLOCK_N, "
                   "BLOCK_D)", "writes sliding-window causal attention, query i over keys i - WINDOW < j <= i"),
        hints=("Lesson 10's FlashAttention kernel, causal: what changes is where the key loop starts and "
               "the mask inside each key block.",
               "The first key block any query of the block needs starts at max(0, start_m - WINDOW + 1), "
               "rounded down to BLOCK_N; keep (j <= i) & (j > i - WINDOW).",
               "A row can see no key in its first block: m_new is -inf and exp(-inf - (-inf)) is NaN. Use a "
               "safe max, tl.where(m_new == -inf, 0.0, m_new), in both exponentials.")),
    TileKernelExercise(
        "10.9", task="int4_matmul", concepts=("low-precision",),
        form=_form("int4_matmul_kernel(x_ptr, w_ptr, s_ptr, y_ptr, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K)",
                   "writes y = x @ (codes * scales[None, :]) from INT4 codes packed two per byte"),
        hints=("Byte (k, j) of w holds the codes of columns 2j (low nibble) and 2j + 1 (high nibble), each "
               "stored as code + 8 in 0..15.",
               "Load the (BLOCK_K, BLOCK_N // 2) byte tile once, widen it to int32, and take (w & 15) - 8 and "
               "(w >> 4) - 8: two float tiles, two tl.dot accumulators.",
               "Each accumulator's column's scale factors out of its sum: multiply after the loop, and store "
               "the even and the odd columns at 2j and 2j + 1.")),
    TileKernelExercise(
        "10.10", task="cross_entropy", concepts=("fused-kernels", "tile-reductions"),
        form=_form("cross_entropy_kernel(x_ptr, t_ptr, loss_ptr, n_cols, BLOCK_COLS)",
                   "writes loss[r] = logsumexp(x[r]) - x[r, t[r]]"),
        hints=("One program per row, the row in one tile, loaded once: the log-sum-exp and the target's "
               "logit both come from it.",
               "logsumexp = m + log(sum(exp(x - m))) with m the row's max; masked lanes must add nothing.",
               "The target's logit: tl.sum(tl.where(cols == target, x, 0.0), axis=0), with target = "
               "tl.load(t_ptr + row).")),
]
