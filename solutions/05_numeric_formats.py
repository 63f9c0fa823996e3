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
# # 05 · Exercises: numeric formats
#
# Eight exercises on lesson 05: a prediction, a computation on a real accelerator, an exploration
# with the loss-scale simulator, two functions to write, a decision about FP8 scaling, a storage
# scheme to choose under a memory and an error budget, and the accumulator width a long sum needs.
# Put your answer in each exercise cell where it says `NotImplementedError` and run the cell.
# `check` prints one line when the answer is right; otherwise it shows your value, the form the
# answer should take and a first hint. `hint("05.2", 2)` shows the next hint.
#
# `F` is `course_lib.formats`: `F.encode(x, "bf16")` stores a number and reports its error,
# `F.cast_stats(values, "fp16", scale)` counts what a cast flushes to zero, and
# `get_accelerator(name).mem_bandwidth` is a chip's memory bandwidth in bytes/s.

# %%
import math

import numpy as np

from course_lib import formats as F
from course_lib.checks import check, hint
from course_lib.hardware import bytes_per_element, get_accelerator

# %% [markdown]
# ### Exercise 05.1 (predict): which 16-bit format stores one third more accurately?
#
# FP16 and BF16 both take 16 bits. One seed text of this course claims that BF16 "balances lower
# memory use with higher precision than FP16". **Before computing anything**, decide which of the
# two stores $1/3$ with the smaller relative error. Set `prediction` to `"fp16"` or `"bf16"`, run
# the cell, and then check your reasoning with `F.encode`.

# %%
### BEGIN SOLUTION
prediction = "fp16"
### END SOLUTION
check("05.1", prediction)

# %% [markdown]
# ### Exercise 05.2 (compute): what INT4 weights save on an H200
#
# Decoding one token reads every weight of a model once. A model of $70 \times 10^9$ parameters
# runs on an H200, its weights stored either in BF16 or, quantized weight-only, in INT4 (half a
# byte each; they are widened to BF16 on the chip). Using the catalog's memory bandwidth and
# $t = N b / \beta$, compute by how many milliseconds one full read of the weights is shorter in
# INT4 than in BF16: the difference $t_\text{BF16} - t_\text{INT4}$, not either time and not
# their ratio. Store it in `saving_ms`, **in milliseconds**.

# %%
### BEGIN SOLUTION
h200 = get_accelerator("H200")
n_weights = 70e9
t_bf16_s = n_weights * bytes_per_element("bf16") / h200.mem_bandwidth
t_int4_s = n_weights * bytes_per_element("int4") / h200.mem_bandwidth
saving_ms = (t_bf16_s - t_int4_s) * 1e3
### END SOLUTION
check("05.2", saving_ms)

# %% [markdown]
# ### Exercise 05.3 (explore): the smallest loss scale that rescues FP16 gradients
#
# Draw the sample `F.gradient_like(np.random.default_rng(0), 50_000)` (exactly this seed and size).
# Find the smallest whole number $k \ge 0$ for which fewer than 0.1% of the values are flushed to
# zero when stored in FP16 after multiplying them by the loss scale $2^k$. Explore with
# `F.cast_stats` or `F.loss_scale_sweep`; store the answer in `k_min`.

# %%
### BEGIN SOLUTION
grads = F.gradient_like(np.random.default_rng(0), 50_000)
k_min = next(k for k in range(64) if F.cast_stats(grads, "fp16", 2.0 ** k).flushed_fraction < 1e-3)
### END SOLUTION
check("05.3", k_min)

# %% [markdown]
# ### Exercise 05.4 (code): a per-block INT8 quantizer
#
# Write `quantize_blocks_int8(x, block_size)` for a 2-D array `x`: split each row into blocks of
# `block_size` consecutive elements (the last block of a row may be shorter), give each block the
# scale $s = \max|x_{\text{block}}| / 127$, round $x/s$ to the nearest integer and return the
# **dequantized** array $q\,s$, of the same shape as `x`. It is checked on random matrices whose
# row length no block size divides, with an outlier in each.

# %%
def quantize_blocks_int8(x, block_size):
    """Absmax INT8 per block of ``block_size`` along each row; returns codes x scales."""
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    out = np.empty_like(x)
    for start in range(0, x.shape[1], block_size):
        block = x[:, start:start + block_size]
        amax = np.max(np.abs(block), axis=1, keepdims=True)
        scale = np.where(amax > 0, amax / 127, 1.0)
        out[:, start:start + block_size] = np.clip(np.rint(block / scale), -127, 127) * scale
    return out
    ### END SOLUTION


check("05.4", quantize_blocks_int8)

# %% [markdown]
# ### Exercise 05.5 (code): the largest value of an IEEE-like format
#
# Write `ieee_max(exponent_bits, mantissa_bits)`: the largest finite value of a binary float with
# $E$ exponent bits and $M$ mantissa bits whose top exponent field is reserved for infinity and
# NaN, as in FP32, BF16, FP16 and FP8 E5M2. The bias is $2^{E-1} - 1$. It is checked on those
# four formats and on random widths.

# %%
def ieee_max(exponent_bits, mantissa_bits):
    """Largest finite value of an IEEE-like binary float with E exponent and M mantissa bits."""
    ### BEGIN SOLUTION
    bias = 2 ** (exponent_bits - 1) - 1
    largest_field = 2 ** exponent_bits - 2
    return (2 - 2.0 ** -mantissa_bits) * 2.0 ** (largest_field - bias)
    ### END SOLUTION


check("05.5", ieee_max)

# %% [markdown]
# ### Exercise 05.6 (decide): how much headroom does delayed scaling need?
#
# You train in FP8 with delayed scaling and look after one gradient tensor, stored in E5M2 with
# a scale from the largest amax of the previous **4** steps. Its recorded values over 30 steps
# are `grads` below: it grows about 25% per step and jumped 3x once. Clipped gradients bias the
# update, so you want none clipped; a larger margin costs range at the small end. Decide the
# **smallest** integer margin $m$ (the scale is $\text{max}_\text{E5M2} / \text{amax} / 2^m$)
# for which no value is clipped over the whole run, and store it in `margin`. The lesson's
# `F.simulate_fp8_scaling` runs the recipe; you may also reason from the amax values alone.

# %%
grads = F.drifting_tensor(np.random.default_rng(2026), 30, 2000, median=2.0 ** -20, decades=0.8,
                          growth=1.25, spike_step=21, spike_factor=3.0)
### BEGIN SOLUTION
margin = 0
while F.simulate_fp8_scaling(grads, "fp8_e5m2", "delayed", history_len=4,
                             margin=margin).overflow_counts.sum() > 0:
    margin += 1
# Second way, from the amax values alone: the largest ratio of a step's amax to its history's.
amax = np.abs(grads).max(axis=1)
worst = max(amax[t] / amax[max(0, t - 4):t].max() for t in range(1, amax.size))
assert margin == max(0, int(np.ceil(np.log2(worst))))
### END SOLUTION
check("05.6", margin)

# %% [markdown]
# When every check passes, compare with the lesson: 05.1 is the misconception of its last section,
# 05.3 is the left edge of its loss-scaling plot, and 05.5 gives FP16's largest value, the one its
# range table reads from `ml_dtypes`.

# %% [markdown]
# ### Exercise 05.7 (design): a weight format within a memory budget and an error budget per row
#
# An inference server stores the weight matrix `w` below (256 rows of 1000, with a few outlier
# rows and entries, like section 8's). It must fit **9.5 bits per element**, the scales included,
# and because each row is one output channel, **every row** of the dequantized matrix must be
# within **1.5 %** relative RMS error of the same row of `w`:
# $\sqrt{\operatorname{mean}_j((\hat w_{ij} - w_{ij})^2) / \operatorname{mean}_j(w_{ij}^2)}$ for each
# row $i$. The candidates are the schemes of section 8, with the absmax scale rule except for the
# two MX ones:
#
# - `"int8 per tensor"`, `"int8 per channel"`, `"int8 per block"`;
# - `"fp8_e4m3 per tensor"`, `"fp8_e4m3 per channel"`, `"mxfp8"` (FP8 E4M3 elements, MX blocks);
# - `"int4 per block"`, `"mxfp4"` (FP4 E2M1 elements, MX blocks);
# - `"int8 per channel, outliers apart"`: every entry whose magnitude is more than 8 times the RMS
#   of its row of `w` is stored apart, exactly, at 64 bits (a 32-bit value and a 32-bit position)
#   and set to zero in the matrix that is quantized INT8 per channel; dequantizing puts it back.
#   The library has no function for this one: build it.
#
# A channel is one row; a block is 32 consecutive elements of a row. An absmax scale is stored in
# 32 bits, an MX scale in 8; bits per element count the scales and the entries kept apart, spread
# over all the elements. Choose the scheme with the **fewest bits per element** that meets both
# budgets and store its name in `scheme`.

# %%
w = F.outlier_matrix(np.random.default_rng(507), 256, 1000)
### BEGIN SOLUTION
schemes = {"int8 per tensor": ("int8", "tensor", "absmax"), "int8 per channel": ("int8", "channel", "absmax"),
           "int8 per block": ("int8", "block", "absmax"), "fp8_e4m3 per tensor": ("fp8_e4m3", "tensor", "absmax"),
           "fp8_e4m3 per channel": ("fp8_e4m3", "channel", "absmax"), "mxfp8": ("fp8_e4m3", "block", "mx"),
           "int4 per block": ("int4", "block", "absmax"), "mxfp4": ("fp4_e2m1", "block", "mx")}
row_ms = (w ** 2).mean(axis=1)
candidates = {}
for name, (fmt, granularity, rule) in schemes.items():
    q = F.quantize(w, fmt, granularity, axis=0, block_size=32, scale_rule=rule)
    candidates[name] = (q.bits_per_element, q.dequantized)
apart = np.abs(w) > 8 * np.sqrt(row_ms)[:, None]        # the few entries that stretch a row's scale
q = F.quantize(np.where(apart, 0.0, w), "int8", "channel", axis=0)
candidates["int8 per channel, outliers apart"] = (q.bits_per_element + apart.sum() * 64 / w.size,
                                                  np.where(apart, w, q.dequantized))
fits = {}
for name, (bits, w_hat) in candidates.items():
    # q.rel_rms_error would be the whole matrix's, which the two outlier rows dominate: use each row's
    worst_row = np.sqrt(((w_hat - w) ** 2).mean(axis=1) / row_ms).max()
    if bits <= 9.5 and worst_row <= 0.015:
        fits[name] = bits
scheme = min(fits, key=fits.get)
### END SOLUTION
check("05.7", scheme)

# %% [markdown]
# ### Exercise 05.8 (what-if): how many mantissa bits to drop the chunks?
#
# A dot product adds the 16,384 products below, each between 0 and 0.02. A kernel splits them into
# chunks, sums each chunk in BF16 (the running sum rounded to BF16 after every add, as in section 7)
# and adds the chunk sums into an FP32 total. Measured on these products: with chunks of **128** the
# total is within 1 % of the exact sum; with chunks of 256 it is not.
#
# A hardware team offers an accumulator with BF16's 8 exponent bits and $M$ mantissa bits, any whole
# $M$ from 7 to 23, rounding to nearest (ties to even) after every add. What is the **fewest**
# mantissa bits $M$ for which the kernel can drop the chunks, adding all 16,384 products in one
# running sum, and still be within **1 %** of the exact sum (relative error at most 0.01)? Store it
# in `mantissa_bits` (an integer).

# %%
products = np.random.default_rng(508).uniform(0.0, 0.02, 2 ** 14)
### BEGIN SOLUTION
exact = math.fsum(products)
bf16 = F.get_format("bf16")


def one_sum_error(m):
    s = 0.0
    for x in products.tolist():      # section 3: round to the gap 2^(e - m) of the sum's binade
        v = s + x
        gap = math.ldexp(1.0, max(math.frexp(v)[1] - 1, bf16.min_exponent) - m)
        s = round(v / gap) * gap     # Python's round: nearest, ties to even
    return abs(s - exact) / exact


assert one_sum_error(7) == F.accumulate(products, "bf16").rel_error     # the rounding is BF16's at m = 7


# section 7: one more bit halves every gap, so a sum may be twice as long for the same error;
# 7 bits keep 128 products within 1 %, and 16,384 = 128 x 2^7: predict 14, then measure
for m in (13, 14):
    print(m, f"{one_sum_error(m):.2%}")
mantissa_bits = next(m for m in range(7, 24) if one_sum_error(m) <= 0.01)
### END SOLUTION
check("05.8", mantissa_bits)
