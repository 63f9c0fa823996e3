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
# # 04 · Exercises: the roofline
#
# Eight exercises on lesson 04: a prediction, a computation on a real accelerator, an exploration,
# two functions to write, a decision from a profile, and two designs (how fast L2 must be for a tile
# to cost nothing, and a batch from two measurements). Put your answer in each exercise cell where
# it says `NotImplementedError` and run the cell. `check` prints one line when the answer is right;
# otherwise it shows your value, the form the answer should take and a first hint. `hint("04.2", 2)`
# shows the next hint.
#
# Numbers come from the catalog: `get_accelerator(name).peak("bf16")` is the dense BF16 rate in
# FLOP/s and `.mem_bandwidth` the memory bandwidth in bytes/s. The lesson's roofline module is
# imported as `rl` (`rl.matmul_intensity`, `rl.place_kernel`), so the functions you write in 04.4
# and 04.5 do not replace it: the cells run in any order.

# %%
import numpy as np

from course_lib import roofline as rl
from course_lib.checks import check, hint, variant
from course_lib.hardware import get_accelerator

# %% [markdown]
# ### Exercise 04.1 (predict): is a big attention-score product memory- or compute-bound?
#
# The attention scores $S = QK^T$ for 4096 queries and 4096 keys with head dimension 128 are a
# matmul with $m = n = 4096$ and $k = 128$: billions of FLOP, which sounds like a lot of
# arithmetic. Run it in BF16 on a B200. **Before computing anything**, decide: is it memory-bound
# or compute-bound? Set `prediction` to `"memory"` or `"compute"`, run the cell, and only then
# work out why.

# %%
### BEGIN SOLUTION
prediction = "memory"
### END SOLUTION
check("04.1", prediction)

# %% [markdown]
# ### Exercise 04.2 (compute): how long must one decode step's GEMV take on an H200?
#
# At batch size 1, one token's activations ($1 \times 8192$) multiply an $8192 \times 8192$ BF16
# weight matrix. Using the H200's catalog figures, compute the roofline's lower bound on its run
# time, $t = \max(F/\pi,\; Q/\beta)$, with $F = 2mkn$ FLOP and $Q$ the bytes of reading both
# operands once and writing the result once. Store it in `t_gemv_us`, **in microseconds**.
# Your accelerator and width may differ: the cell prints `variant("04.2")`, your own numbers
# (the ones above unless a learner id is set); compute from it.

# %%
v = variant("04.2")
print(v)
### BEGIN SOLUTION
acc = get_accelerator(v.accelerator)
m, k, n = 1, v.hidden, v.hidden
flops = 2 * m * k * n
bytes_moved = 2 * (m * k + k * n + m * n)
t_gemv_us = max(flops / acc.peak("bf16"), bytes_moved / acc.mem_bandwidth) * 1e6
### END SOLUTION
check("04.2", t_gemv_us)

# %% [markdown]
# ### Exercise 04.3 (explore): the smallest batch that reaches the H100's ridge
#
# Batching $m$ tokens through the same $8192 \times 8192$ BF16 weight matrix reuses every weight
# $m$ times. Find the smallest whole number of tokens `m_min` for which this matmul is
# compute-bound on the H100 SXM (intensity at or above the dense BF16 ridge point). Explore:
# sweep $m$ with `rl.matmul_intensity`, or move the `m` slider of the lesson's roofline
# explorer and watch the point cross the ridge; then confirm the exact value with a sweep.

# %%
### BEGIN SOLUTION
h100 = get_accelerator("H100 SXM")
ridge = h100.ridge_point("bf16")
m_values = np.arange(1, 8193)
intensities = np.array([rl.matmul_intensity(m, 8192, 8192, 2) for m in m_values])
m_min = int(m_values[np.argmax(intensities >= ridge)])
### END SOLUTION
check("04.3", m_min)

# %% [markdown]
# ### Exercise 04.4 (code): write the arithmetic intensity of a matmul
#
# Write `matmul_intensity(m, k, n, bytes_per_element)`: the FLOP per byte of
# $C_{m\times n} = A_{m\times k} B_{k\times n}$ when $A$ and $B$ are read once and $C$ is written
# once. It is checked on random shapes with $m$, $k$ and $n$ all different and odd, so a formula
# that mixes up $m$ and $n$, or forgets the write of $C$, does not pass.

# %%
def matmul_intensity(m, k, n, bytes_per_element=2):
    """Arithmetic intensity of C[m, n] = A[m, k] @ B[k, n] in FLOP per byte (minimum traffic)."""
    ### BEGIN SOLUTION
    flops = 2 * m * k * n
    bytes_moved = bytes_per_element * (m * k + k * n + m * n)
    return flops / bytes_moved
    ### END SOLUTION


check("04.4", matmul_intensity)

# %% [markdown]
# ### Exercise 04.5 (code): write the roofline for an array of intensities
#
# Write `roofline(intensity, peak_flops, bandwidth)`: the attainable FLOP/s for every entry of a
# NumPy array `intensity` (FLOP/byte), given a peak in FLOP/s and a bandwidth in bytes/s. Return
# an array of the same shape. It is checked on random arrays of odd lengths whose intensities
# lie on both sides of the ridge, for several accelerators of the catalog.

# %%
def roofline(intensity, peak_flops, bandwidth):
    """Attainable FLOP/s, elementwise: the lower of the peak and bandwidth x intensity."""
    ### BEGIN SOLUTION
    return np.minimum(peak_flops, bandwidth * np.asarray(intensity, dtype=float))
    ### END SOLUTION


check("04.5", roofline)

# %% [markdown]
# ### Exercise 04.6 (decide): which kernel do you optimize first?
#
# A profiler recorded one training step on an H100 SXM in BF16. For each kernel: its duration
# per call, the DRAM bytes and the FLOP of one call, and how many times the step calls it
# (illustrative numbers of the kind Nsight Compute reports). You have time to bring **one**
# kernel to its roof. Decide which one saves the most time per step and store its name in
# `optimize_first`. `rl.read_profile(name, duration_s, bytes_moved, flops, "H100 SXM", "bf16")`
# places a kernel against the roofline (lesson section 7b).

# %%
step_profile = {                     # name: (seconds per call, DRAM bytes, FLOP, calls per step)
    "decode GEMV": (48e-6, 134_250_496, 134_217_728, 80),
    "layer norm": (22e-6, 16_777_216, 33_554_432, 64),
    "MLP GEMM": (1.65e-3, 1.2e9, 2 * 8192 ** 3, 4),
}
### BEGIN SOLUTION
saved = {}
for name, (t, q, f, calls) in step_profile.items():
    reading = rl.read_profile(name, t, q, f, "H100 SXM", "bf16")
    saved[name] = calls * t * (1 - reading.fraction_of_roof)      # time above the roof, per step
optimize_first = max(saved, key=saved.get)
### END SOLUTION
check("04.6", optimize_first)

# %% [markdown]
# When every check passes, compare your answers with what the lesson found: the attention-score
# product of 04.1 and the decode GEMV of 04.2 sit left of the ridge for the same reason, each
# element crosses the memory bus to take part in too few operations.

# %% [markdown]
# ### Exercise 04.7 (what-if): how fast must L2 be for a fixed tile to cost nothing?
#
# A prefill of $m$ prompt tokens multiplies an $m \times 8192$ activation matrix by an
# $8192 \times 8192$ weight matrix in BF16 on the A100. The kernel cuts the output into $64 \times 64$
# tiles (its shared memory allows no larger), and the last row of tiles is only partly filled when
# 64 does not divide $m$. As in section 6, each tile's re-reads of $A$ and $B$ are served by L2, and
# HBM sees each matrix once. On the A100 the L2 roof holds these tiles back at many prefills.
#
# A later part is planned with the A100's dense BF16 peak and HBM, and a faster L2. What is the
# **smallest** L2 bandwidth for which the tiles cost nothing at **every** prefill $m$ from 1 to 4096
# tokens, that is, for which the matmul's bound on section 6's hierarchical roofline (the L2 and the
# HBM roofs, and the peak) with these tiles equals the bound it would reach if L2, like HBM, saw each
# matrix only once? Store it in `l2_tbs`, in TB/s ($10^{12}$ bytes/s), within 0.1 %.

# %%
a100 = get_accelerator("A100")
### BEGIN SOLUTION
from course_lib.tiling import tiled_matmul_traffic


def untiled(m):                      # HBM sees each matrix once: its roof, or the peak
    return min(a100.peak("bf16"), a100.mem_bandwidth * rl.matmul_intensity(m, 8192, 8192, 2))


def l2_needed(m):                    # the L2 roof at the tiles' intensity must reach the untiled bound
    return untiled(m) / tiled_matmul_traffic(m, 8192, 8192, 64, bytes_per_element=2).intensity_flops_per_byte


worst = max(range(1, 4097), key=l2_needed)   # a partly filled row of tiles, just past the HBM ridge
l2_tbs = l2_needed(worst) / 1e12
print(f"worst prefill m = {worst}: L2 needs {l2_tbs:.2f} TB/s (the A100 has {a100.l2_bandwidth / 1e12:.2f})")
### END SOLUTION
check("04.7", l2_tbs)

# %% [markdown]
# ### Exercise 04.8 (diagnose, then design): the largest batch under a latency target
#
# A serving layer multiplies a batch of `b` token vectors by one $8192 \times 8192$ BF16 weight
# matrix on an H100 SXM: a $b \times 8192$ by $8192 \times 8192$ matmul. Each step must take at
# most **60 µs**, and a larger batch serves more tokens per step. The kernel was timed at two
# batches, `measured_s` below, and it does not reach the catalog's rates. Assume its time follows
# section 2's roofline bound with the rates this kernel sustains in place of the rated ones (the
# same two rates at every batch), and section 1's FLOP and bytes (each matrix moved once). Choose
# the **largest** whole `b` that meets the target and store it in `b_max`. **Predict first**: at
# that batch, is the limit the weights' bytes or the FLOP?

# %%
measured_s = {32: 46.4e-6, 2048: 389.5e-6}          # batch b: measured seconds per step
### BEGIN SOLUTION
small = rl.matmul_kernel("layer", 32, 8192, 8192)
big = rl.matmul_kernel("layer", 2048, 8192, 8192)
bandwidth = small.bytes_moved / measured_s[32]       # far left of the ridge: bytes limit it
flops_per_s = big.flops / measured_s[2048]           # far right: FLOP limit it
# each measurement really is limited by the rate taken from it
assert small.flops / flops_per_s < measured_s[32] and big.bytes_moved / bandwidth < measured_s[2048]


def step_s(b):
    k = rl.matmul_kernel("layer", b, 8192, 8192)
    return max(k.flops / flops_per_s, k.bytes_moved / bandwidth)


b_max = max(b for b in range(1, 2049) if step_s(b) <= 60e-6)
### END SOLUTION
check("04.8", b_max)
