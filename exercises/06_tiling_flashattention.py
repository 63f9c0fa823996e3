# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: -jupytext.text_representation
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 06 · Exercises: tiling and FlashAttention
#
# Seven exercises on lesson 06: a prediction, a computation on a real accelerator, an exploration
# with the FlashAttention simulator, a function to write, the traffic fusion saves, and two designs
# under on-chip budgets (the registers a skinny matmul's best tile needs, attention's two blocks).
# Put your answer in each exercise cell where it says `NotImplementedError` and run the cell.
# `check` prints one line when the answer is right; otherwise it shows your value, the form the
# answer should take and a first hint.
# `hint("06.2", 2)` shows the next hint.

# %%
import numpy as np

from course_lib import attention, tiling
from course_lib.checks import check, hint
from course_lib.hardware import get_accelerator

# %% [markdown]
# ### Exercise 06.1 (predict): what does a tile twice as wide do to the traffic?
#
# An $8192 \times 8192 \times 8192$ BF16 matmul runs with square $64 \times 64$ output tiles.
# You switch to $128 \times 128$ tiles. **Before computing anything**, decide what happens to the
# bytes it moves to and from HBM: `"doubles"`, `"unchanged"`, `"halves"` or `"quarters"`. Set
# `prediction`, run the cell, then confirm with `tiling.tiled_matmul_traffic`.

# %%
raise NotImplementedError("exercise 06.1: what does a tile twice as wide do to the traffic?")
check("06.1", prediction)

# %% [markdown]
# ### Exercise 06.2 (compute): the largest tile an H200 block can stage
#
# A kernel double-buffers (2 stages) $T \times 64$ slices of $A$ and $64 \times T$ slices of $B$ in
# shared memory, in BF16. Using the H200's catalog entry (`max_shared_mem_bytes_per_block`),
# find the largest square tile side $T$, **a multiple of 16**, whose slices fit. Store it in
# `tile_side` as an integer.

# %%
raise NotImplementedError("exercise 06.2: the largest tile an H200 block can stage")
check("06.2", tile_side)

# %% [markdown]
# ### Exercise 06.3 (explore): what FlashAttention saves on a causal sequence
#
# Run `attention.flash_attention` with `return_traffic=True` on random `q`, `k`, `v` of shape
# $(3000, 48)$ with `block_size=200` and `causal=True`. It returns the output and the elements it
# moved between "HBM" and the chip. Divide naive attention's HBM elements ($4N^2 + 4Nd$) by that
# count and store the ratio in `saving` (a float, no unit). Then try other block sizes: how does
# the saving depend on the block size, and why?

# %%
raise NotImplementedError("exercise 06.3: what FlashAttention saves on a causal sequence")
check("06.3", saving)

# %% [markdown]
# ### Exercise 06.4 (write): one step of the online softmax
#
# Write `online_softmax_step(m_prev, l_prev, o_prev, s_block, v_block)`. For each of $r$ query
# rows it receives the running maximum `m_prev` (shape $(r,)$), the running sum of exponentials
# `l_prev` $(r,)$, the unnormalised output `o_prev` $(r, d_v)$, a block of scores `s_block`
# $(r, c)$ and the matching values `v_block` $(c, d_v)$. Return the tuple `(m_new, l_new, o_new)`
# after folding the block in (the lesson's section 6 gives the update). At the start
# `m_prev` is $-\infty$ and `l_prev`, `o_prev` are zero. The check uses shapes that no block
# size divides, and some scores in the hundreds.

# %%
def online_softmax_step(m_prev, l_prev, o_prev, s_block, v_block):
    """Fold one block of scores into the running (maximum, sum of exponentials, output)."""
    raise NotImplementedError("exercise 06.4: one step of the online softmax")


check("06.4", online_softmax_step)


# %% [markdown]
# ### Exercise 06.5 (compute): what fusing a softmax saves
#
# A row softmax over a score matrix of 1000 rows and 3001 columns in BF16, written as four
# kernels: `rowmax` (reads S, writes the row maxima m), `sub_exp` (reads S and m, writes
# P = exp(S - m)), `rowsum` (reads P, writes the row sums l) and `divide` (reads P and l, writes
# O = P / l). A fusing compiler makes one kernel of it that reads S and writes O. Build the graph
# for `tiling.graph_traffic` (each op is `(name, inputs, outputs, flops)`; any FLOP count will
# do here) and compute how many **bytes** of HBM traffic fusing saves. Store it in `saved_bytes`.

# %%
raise NotImplementedError("exercise 06.5: what fusing a softmax saves")
check("06.5", saved_bytes)
# %% [markdown]
# ### Exercise 06.6 (design): when does the best tile read the weights once?
#
# A serving kernel multiplies 200 tokens by a weight matrix: a $200 \times 8192$ by
# $8192 \times 8192$ matmul in BF16, output-stationary as in section 1, with an output tile of
# `tile_m` rows by `tile_n` columns, each a multiple of 16 from 16 to 512. A thread block walks
# $k$ in steps of 32 and double-buffers what each step needs from $A$ and $B$ in at most
# **64 KiB** of shared memory; it keeps its output tile's running sums in registers, in FP32, and
# the register budget per thread block holds those sums only. A tile fits a budget when it needs
# at most (<=) that many bytes: here, unlike section 1's register limit, nothing else shares the
# budget. A tile tall enough to cover all 200 tokens reads the weights only once.
#
# A new GPU would give each thread block more registers (shared memory stays 64 KiB). What is the
# **smallest** register budget per thread block, in whole KiB (1 KiB = 1024 bytes), at which the
# tile that moves the fewest HBM bytes by section 1's count (an edge tile loads only the rows and
# columns that exist), among the tiles that fit both budgets, covers all 200 rows? No two tiles
# tie for the fewest bytes there. Store it in `register_kib` (an integer).

# %%
raise NotImplementedError("exercise 06.6: when does the best tile read the weights once?")
check("06.6", register_kib)

# %% [markdown]
# ### Exercise 06.7 (design): attention blocks under two on-chip budgets
#
# A FlashAttention forward pass runs one head with $N = 4000$ tokens and $d = 64$, not causal, in
# the loop order of section 6, with a query block of `block_q` rows and a key block of `block_k`
# rows (section 6's `flash_attention` takes the pair as `block_size`), each a multiple of 16 from
# 16 to 1024. One thread block has two budgets:
#
# - **192 KiB of shared memory**. In it, the kernel keeps everything one step of section 6's loop
#   works on, and it prefetches: the next key and value blocks load while the current ones are
#   used. $Q$, $K$ and $V$ are BF16; the scores and their softmax are FP32 (the probabilities
#   overwrite the scores in place).
# - **128 KiB of registers** for the unnormalised output, kept in FP32 (the row statistics are
#   few: leave them out of both budgets).
#
# A pair fits a budget when it needs at most (<=) that many bytes. What is the fewest elements
# moved between HBM and the chip (section 6's count) by any pair that fits both budgets? Store it
# in `elements` (a number).

# %%
raise NotImplementedError("exercise 06.7: attention blocks under two on-chip budgets")
check("06.7", elements)
