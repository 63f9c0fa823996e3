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
# # 05 · Numeric formats: what fewer bits buy and what they cost
#
# **Learning objectives.** After this lesson you can
#
# 1. read the sign, exponent and mantissa fields of any value in FP32, TF32, BF16, FP16, FP8 (E4M3
#    and E5M2), FP4 (E2M1) and in INT8 and INT4, and decode them by formula;
# 2. derive a format's range and precision from its field widths, and say what happens beyond
#    them: overflow to infinity, to NaN or to the largest value, and underflow through subnormals;
# 3. explain why BF16 trains without loss scaling while FP16 needs it, and why long sums are
#    accumulated in FP32;
# 4. quantize a tensor with per-tensor, per-channel and per-block scales (including the MX block
#    format with its power-of-two E8M0 scale) and compare their errors on data with outliers;
# 5. read from the catalog what each halving of the bits buys on real tensor cores, and where
#    the rule does not hold.
#
# Every range and precision figure is computed from the formats themselves through `ml_dtypes`;
# every hardware figure comes from the cited catalog (dense rates). The important ones are checked
# a second way.

# %%
import math

import ml_dtypes
import numpy as np
import matplotlib.pyplot as plt

from course_lib import formats as F
from course_lib.hardware import bytes_per_element, get_accelerator, list_accelerators
from course_lib.plots import use_course_style
from course_lib.plots.formats import (plot_accumulation, plot_bit_layout, plot_gradient_histogram,
                                      plot_loss_scale, plot_quantization_errors, plot_spacing,
                                      plot_tensor_rates)

use_course_style()
h100 = get_accelerator("H100 SXM")
rng = np.random.default_rng(2024)
print(f"{h100.name}: {h100.source}")

# %% [markdown]
# ## 1. Anatomy of a floating-point number
#
# A binary float with a sign bit $s$, an exponent field $e$ of $E$ bits and a mantissa field $m$ of
# $M$ bits stands for
#
# $$ x = (-1)^s \; 2^{\,e - \text{bias}} \left(1 + \frac{m}{2^M}\right) \quad (e \ge 1), \qquad
#    x = (-1)^s \; 2^{\,1 - \text{bias}}\, \frac{m}{2^M} \quad (e = 0,\ \text{subnormal}). $$
#
# The exponent sets the **range** (how large and how small), the mantissa the **precision** (how
# finely one binade $[2^k, 2^{k+1})$ is divided: into $2^M$ steps). The format a tensor is stored
# in also sets the **bytes** every pass over it moves: reading $N$ values of $b$ bytes at
# bandwidth $\beta$ takes $t = N b / \beta$. One billion parameters read once on the H100:

# %%
n_params = 1e9
for precision in ("fp32", "bf16", "fp8", "fp4"):
    t_read_ms = n_params * bytes_per_element(precision) / h100.mem_bandwidth * 1e3
    print(f"{precision:5s} {bytes_per_element(precision):4.1f} B/element: {t_read_ms:6.3f} ms per read")

# %% [markdown]
# The field widths, ranges and gaps of every format of this lesson, read from `ml_dtypes.finfo`
# (TF32, which `ml_dtypes` lacks, is FP32 with a 10-bit mantissa). `bits` counts the bits that
# carry information, `stored` the bits one element occupies in memory; `eps` is the gap just
# above 1; `digits` is $(M+1)\log_{10}2$ for floats and $\log_{10}(\text{max})$ for integers; `decades` is $\log_{10}(\text{max}/\text{min subnormal})$.

# %%
print(F.format_table_text())

# %% [markdown]
# A second way: the textbook range formulas from the field widths alone. For IEEE-like formats the
# top exponent field is reserved for infinity and NaN, so the largest value is
# $(2 - 2^{-M})\,2^{\,2^E - 2 - \text{bias}}$ and the smallest normal $2^{1-\text{bias}}$.
# FP8 E4M3 gives up infinity and keeps only one NaN pattern per sign, so its top binade is usable
# except its last mantissa code; FP4 E2M1 has no special values at all.

# %%
def largest_value(f):
    bias = 2 ** (f.exponent_bits - 1) - 1
    if f.has_inf:                                       # IEEE-like: top exponent reserved
        return (2 - 2.0 ** -f.mantissa_bits) * 2.0 ** (2 ** f.exponent_bits - 2 - bias)
    if f.has_nan:                                       # E4M3: only S.1111.111 is NaN
        return (2 - 2 * 2.0 ** -f.mantissa_bits) * 2.0 ** (2 ** f.exponent_bits - 1 - bias)
    return (2 - 2.0 ** -f.mantissa_bits) * 2.0 ** (2 ** f.exponent_bits - 1 - bias)


for f in F.format_table(F.FLOAT_FORMATS):
    assert largest_value(f) == f.max_value, f.name
    assert 2.0 ** (1 - f.bias) == f.min_normal and 2.0 ** -f.mantissa_bits == f.epsilon, f.name
bf16, fp16, fp32 = F.get_format("bf16"), F.get_format("fp16"), F.get_format("fp32")
print(f"FP16 max {fp16.max_value:g}, BF16 max {bf16.max_value:.4g}, FP32 max {fp32.max_value:.4g}: "
      "formula and ml_dtypes agree for every float format")

# %% [markdown]
# ## 2. Bit layouts
#
# The same number in every format. Each row shows the fields (sign, exponent, mantissa; an integer
# has a sign bit and value bits in two's complement), the value actually stored and the relative
# error. Pick a number that is not a sum of a few powers of two, such as one tenth:

# %%
encodings = [F.encode(0.1, name) for name in F.FORMAT_NAMES]
fig = plot_bit_layout(encodings)
plt.show()

# %% [markdown]
# Decode BF16's fields by the formula and compare with what `ml_dtypes` stores:

# %%
e = F.encode(0.1, "bf16")
by_formula = (-1) ** e.sign * 2.0 ** (e.exponent - bf16.bias) * (1 + e.mantissa / 2 ** bf16.mantissa_bits)
by_ml_dtypes = float(np.float32(0.1).astype(ml_dtypes.bfloat16))
print(f"BF16 fields: sign {e.sign}, exponent {e.exponent} (2^{e.exponent - bf16.bias}), "
      f"mantissa {e.mantissa}/2^{bf16.mantissa_bits}  ->  {by_formula!r}")
assert by_formula == by_ml_dtypes == e.stored

# %% [markdown]
# **TF32** is not a storage format. The tensor cores read FP32 values and use only the top 10
# mantissa bits, as many as FP16 has (libraries first round to them with PTX
# `cvt.rna.tf32.f32`: to nearest, ties away from zero); the exponent keeps FP32's 8 bits. We
# emulate rounding to nearest with ties to even, which differs only on exact ties. Within FP16's normal range, TF32 and FP16 must therefore round
# any value identically, a check that uses `ml_dtypes`' FP16 as the second way:

# %%
tf32 = F.get_format("tf32")
print(f"TF32: {tf32.bits} bits of information (1 + {tf32.exponent_bits} + {tf32.mantissa_bits}), "
      f"{tf32.storage_bits} bits in memory, {bytes_per_element('tf32'):.0f} bytes per element")
x = rng.uniform(fp16.min_normal, fp16.max_value / 2, 10_000) * rng.choice([-1, 1], 10_000)
assert np.array_equal(F.round_to_format(x, "tf32"), x.astype(np.float32).astype(np.float16).astype(float))
print(f"TF32 keeps FP32's range: 1e30 stays {F.round_to_format(1e30, 'tf32'):.6g} (FP16: "
      f"{F.round_to_format(1e30, 'fp16')})")

# %% [markdown]
# ## 3. Rounding and the gap between neighbours
#
# Between $2^k$ and $2^{k+1}$ a float has $2^M$ equally spaced values, so the gap there is
# $2^{k-M}$: it grows with the magnitude, while the **relative** gap stays near $2^{-M}$. Rounding
# to nearest makes an error of at most half a gap. Integers have a gap of 1 everywhere.

# %%
for value in (1.0, 300.0):
    row = ", ".join(f"{name} {F.spacing(value, name):g}" for name in ("fp32", "bf16", "fp16", "fp8_e4m3"))
    print(f"gap at {value:g}: {row}")
# Second way: the next bit pattern up, decoded, minus the value.
for name in ("bf16", "fp16", "fp8_e4m3"):
    code = F.to_bits(300.0, name)
    assert F.decode_bits(code + 1, name) - F.round_to_format(300.0, name) == F.spacing(300.0, name)

# %%
fig = plot_spacing(F.spacing_curves(F.FLOAT_FORMATS, points=300))
plt.show()

# %% [markdown]
# Each flat stretch is a format's normal range, at a relative gap set by its mantissa alone; the
# rise on the left is the subnormal range, where the gap stops shrinking and the relative error
# grows until values round to zero. BF16 and FP32 share their range; BF16 and FP16 share their
# size but not their precision:

# %%
print(f"relative gap at 1: BF16 {bf16.epsilon:g}, FP16 {fp16.epsilon:g}: "
      f"BF16 steps are {bf16.epsilon / fp16.epsilon:.0f}x coarser")
assert bf16.epsilon / fp16.epsilon == 2 ** (fp16.mantissa_bits - bf16.mantissa_bits)

# %% [markdown]
# ## 4. Overflow: infinity, NaN or the largest value
#
# What a value beyond the range becomes depends on the format and on who converts it. In a
# library cast (the `ml_dtypes` cast used here, like NumPy's) IEEE-like formats round to
# infinity; FP8 E4M3 has no infinity, so the cast gives NaN; FP4 E2M1 has neither and
# saturates. NVIDIA's GPU conversion to FP8 does neither: PTX requires the `.satfinite` modifier
# on a conversion to an FP8 type, which clips to the largest finite value, so on the GPU a
# too-large value becomes $\pm 448$ (E4M3) or $\pm 57344$ (E5M2), never infinity or NaN. For the
# FP8 rows the `saturating` column (`saturate=True`) is what the GPU gives; for FP16 and BF16 the
# modifier is optional, and without it the GPU gives infinity as the library does.

# %%
too_big = 1e6
print(f"{'format':9s} {'library cast':>12s} {'saturating':>12s}  kind")
for name in F.FORMAT_NAMES:
    plain, sat = F.encode(too_big, name), F.encode(too_big, name, saturate=True)
    print(f"{plain.label:9s} {plain.stored:12.6g} {sat.stored:12.6g}  {plain.category}")
assert math.isnan(F.round_to_format(too_big, "fp8_e4m3")) and math.isinf(F.round_to_format(too_big, "fp16"))
assert F.round_to_format(too_big, "fp8_e4m3", saturate=True) == F.get_format("fp8_e4m3").max_value

# %% [markdown]
# Integers have no special values, and what a plain cast makes of a value beyond the range is
# the library's choice, not a rule of the format. `ml_dtypes` up to 0.6 kept the low four bits
# of the integer (100 became 4: it wrapped around); 0.7 returns 0 and warns of an invalid cast.
# C leaves an out-of-range float-to-integer conversion undefined. What holds in every version
# is the quantizer's way: clip to the range first, then cast. The cell prints what your version
# does and asserts only the part that cannot change:

# %%
import warnings

beyond = np.array([100.0, -9.0])
with warnings.catch_warnings():
    warnings.simplefilter("ignore")                      # ml_dtypes >= 0.7 warns of the invalid cast
    plain = beyond.astype(ml_dtypes.int4).astype(int)
clipped = np.clip(beyond, -8, 7).astype(ml_dtypes.int4).astype(int)
print(f"ml_dtypes {ml_dtypes.__version__}: plain cast to INT4: 100 -> {plain[0]}, -9 -> {plain[1]} "
      f"(library-defined); clip, then cast: {clipped[0]}, {clipped[1]}")
assert list(clipped) == [7, -8]
# Second way: the course's quantizer rounds and clips to the same values.
assert list(clipped) == [F.round_to_format(100.0, "int4"), F.round_to_format(-9.0, "int4")]

# %% [markdown]
# ## 5. Underflow and subnormals
#
# Below the smallest normal number the exponent field is zero and the leading 1 is gone: the
# subnormals fill the gap to zero with evenly spaced values, at the cost of precision. Below half
# the smallest subnormal a value rounds to zero: it is **flushed**.

# %%
for name in ("fp32", "bf16", "fp16", "fp8_e5m2", "fp8_e4m3"):
    f = F.get_format(name)
    print(f"{f.label:9s} smallest normal {f.min_normal:10.4g}  smallest subnormal {f.min_subnormal:10.4g}")
probe = fp16.min_normal / 3
enc = F.encode(probe, "fp16")
print(f"{probe:.4g} in FP16: {enc.category}, stored {enc.stored:.6g}, relative error {enc.rel_error:.2e}")
assert enc.category == "subnormal" and enc.rel_error > fp16.epsilon / 2

# %% [markdown]
# ## 6. Why BF16 trains without loss scaling and FP16 does not
#
# Gradients of activations are small and spread over many powers of ten (Micikevicius et al.,
# *Mixed Precision Training*, 2018, fig. 3). We draw gradient-like values with log-normal
# magnitudes and store them in each format:

# %%
grads = F.gradient_like(rng, 100_000)
fig = plot_gradient_histogram(grads, names=("fp16", "bf16"))
plt.show()
for name in ("fp32", "bf16", "fp16", "fp8_e5m2", "fp8_e4m3"):
    s = F.cast_stats(grads, name)
    print(f"{F.get_format(name).label:9s} flushed to zero {s.flushed_fraction:7.2%}   "
          f"subnormal {s.subnormal_fraction:7.2%}   median rel. error {s.median_rel_error:.1e}")
fp16_stats, bf16_stats = F.cast_stats(grads, "fp16"), F.cast_stats(grads, "bf16")
# Second way: a value is flushed exactly when it is at most half the smallest subnormal.
assert fp16_stats.flushed_fraction == np.mean(np.abs(grads) <= fp16.min_subnormal / 2)
assert bf16_stats.flushed_fraction == 0 and fp16_stats.flushed_fraction > 0.1

# %% [markdown]
# BF16 keeps FP32's exponent, so these gradients sit in its normal range and none is lost; its
# error is the coarser rounding of every value. FP16 flushes a large share to zero and stores
# most of the rest as subnormals. **Loss scaling** multiplies the loss, hence every gradient, by
# $2^k$ before the backward pass and divides it out before the weight update: it shifts the
# gradients up $k$ binades. Too small a scale leaves them in underflow, too large a scale pushes
# the largest ones past FP16's maximum.

# %%
sweep = F.loss_scale_sweep(grads, "fp16", range(0, 33))
best = F.cast_stats(grads, "fp16", 2.0 ** sweep.best_log2_scale)
print(f"best loss scale 2^{sweep.best_log2_scale}: flushed {best.flushed_fraction:.3%}, "
      f"overflowed {best.overflow_fraction:.3%} (unscaled: {fp16_stats.flushed_fraction:.2%} flushed)")
fig = plot_loss_scale(sweep)
plt.show()
assert best.flushed_fraction + best.overflow_fraction < fp16_stats.flushed_fraction / 100

# %% [markdown]
# Training frameworks search for the scale dynamically (they lower it when an overflow appears and
# raise it again after a run of clean steps). With BF16 there is nothing to search for.
#
# ## 7. Accumulating a long sum in low precision
#
# A dot product adds many products into one running sum. If the sum is kept in a narrow format,
# each addition rounds to the sum's gap; once the gap exceeds twice the increment, adding it
# changes nothing. For a constant increment $c$ the sum stops at
#
# $$ S^* = 2^{e}, \qquad e = \lceil \log_2 c \rceil + M + 1. $$

# %%
c, n_terms = 0.01, 10_000
sums = [F.accumulate(np.full(n_terms, c), acc) for acc in ("fp32", "fp16", "bf16")]
for r in sums:
    stall = F.stagnation_sum(c, r.accumulator)
    print(f"{F.get_format(r.accumulator).label} accumulator: sum of {n_terms} x {c} = {r.total:.6g} "
          f"(exact {r.exact_total:.6g}); formula says it stops at {stall:g}")
    if stall < n_terms * c:
        assert r.total == stall                       # the simulation stops where the formula says
fig = plot_accumulation(sums)
plt.show()

# %% [markdown]
# The same effect inside a matrix multiplication: a dot product of two BF16 vectors of length
# 4096, with the products summed in BF16 and in FP32. This is why BF16 tensor-core instructions
# always accumulate in FP32, and why training uses the FP32-accumulator form of the FP16 ones
# (an FP16 accumulator exists, at up to twice the rate on GeForce parts). FP8 on Hopper is the
# exception: its tensor cores accumulate FP8 products with only about 14 bits of precision, not
# FP32's 24, so DeepSeek-V3 copies the partial sums out to FP32 every 128 elements of the dot
# product (DeepSeek-V3 technical report, section 3.3.2, "Increasing accumulation precision").

# %%
k = 4096
a = F.round_to_format(rng.uniform(0, 1, k), "bf16")
b = F.round_to_format(rng.uniform(0, 1, k), "bf16")
products = a * b                                      # exact in float64 (and in FP32)
dot_bf16, dot_fp32 = F.accumulate(products, "bf16"), F.accumulate(products, "fp32")
print(f"dot product of length {k}: BF16 accumulator error {dot_bf16.rel_error:.2%}, "
      f"FP32 accumulator error {dot_fp32.rel_error:.1e}")
assert dot_bf16.rel_error > 100 * dot_fp32.rel_error

# %% [markdown]
# ## 8. Quantization: one scale per tensor, per channel or per block
#
# A narrow format holds only a small set of values, so a tensor is stored as codes times a scale:
#
# $$ s = \frac{\max |x_{\text{group}}|}{q_{\max}}, \qquad q = \operatorname{round}(x / s), \qquad
#    \hat x = q\, s, $$
#
# with $q_{\max}$ the format's largest value (INT8: 127; FP8 E4M3: 448; FP4 E2M1: 6). A *group*
# that shares one scale can be the whole tensor, one row (an output channel of a weight matrix)
# or a block of consecutive elements. The **MX** formats (OCP Microscaling spec v1.0) use blocks
# of 32 with a power-of-two scale stored in 8 bits (E8M0):
# $s = 2^{\lfloor \log_2 \max|x| \rfloor - e_{\max}}$, where $e_{\max}$ is the exponent of the
# element format's largest value. That scale can leave a block's largest value just above the
# element's maximum, and the spec clips it.
#
# Our test data is a weight-like matrix with outliers: a few rows with a large range and a few
# isolated large entries, as in large language models. Its width is not a multiple of the block.

# %%
weights = F.outlier_matrix(rng, 96, 1000)
results = []
for name in ("int8", "fp8_e4m3", "int4", "fp4_e2m1"):
    for granularity in ("tensor", "channel", "block"):
        results.append(F.quantize(weights, name, granularity, axis=0, block_size=F.MX_BLOCK_SIZE))
    if F.get_format(name).is_float:
        results.append(F.mx_quantize(weights, name))
print(f"{'format':9s} {'scales':22s} {'rel. RMS error':>15s} {'SQNR dB':>8s} {'bits/element':>13s} {'clipped':>8s}")
for q in results:
    kind = "MX (E8M0, block 32)" if q.scale_rule == "mx" else f"per {q.granularity}"
    print(f"{F.get_format(q.format).label:9s} {kind:22s} {q.rel_rms_error:15.4f} {q.sqnr_db:8.1f} "
          f"{q.bits_per_element:13.3f} {q.clipped_fraction:8.2%}")
fig = plot_quantization_errors(results)
plt.show()

# %%
err = {(q.format, q.granularity, q.scale_rule): q.rel_rms_error for q in results}
int8_gain = err[("int8", "tensor", "absmax")] / err[("int8", "block", "absmax")]
fp8_gain = err[("fp8_e4m3", "tensor", "absmax")] / err[("fp8_e4m3", "block", "absmax")]
print(f"going from one scale to per-block scales cuts the INT8 error {int8_gain:.1f}x, "
      f"the FP8 E4M3 error only {fp8_gain:.2f}x")
assert err[("int8", "block", "absmax")] < err[("int8", "channel", "absmax")] < err[("int8", "tensor", "absmax")]
assert int8_gain > 3 * fp8_gain
# Second way for the error bound: with absmax scales nothing is clipped and every element is
# within half a step (scale x gap at its code) of its original.
for q in results:
    if q.scale_rule == "absmax":
        assert np.all(np.abs(q.error) <= q.element_scales * F.spacing(q.codes, q.format) / 2 * (1 + 1e-12))

# %% [markdown]
# An integer format has a *uniform* grid: one outlier stretches the scale and every small value
# loses resolution, so finer scale groups help a lot. A float format has a *relative* grid, and
# a stretched scale only pushes the smallest values towards its subnormals; finer groups help it
# much less. MX pays for its 8-bit power-of-two scale with a little clipping and a coarser scale
# than absmax; the table shows both effects and its lower bits per element.

# %% [markdown]
# ## 8b. FP8 training: two formats and a scale per tensor
#
# FP8 training (Micikevicius et al., "FP8 Formats for Deep Learning", arXiv:2209.05433, 2022)
# stores the inputs of the matrix multiplications in 8 bits, and uses both encodings: **E4M3**,
# with one more mantissa bit, for weights and activations in the forward pass, and **E5M2**, with
# the wider range, for gradients in the backward pass. NVIDIA's Transformer Engine calls this
# recipe `Format.HYBRID`. Neither format has FP32's range, so every tensor gets its own FP32
# scale $s$ and is stored as $x \cdot s$; the matmul's result is divided by the scales again:
#
# $$ s = \frac{\text{max}_\text{fmt}}{\text{amax}} \cdot 2^{-\text{margin}}, \qquad
#    \text{amax} = \max |x|. $$
#
# Only the matmuls run in FP8. The matmul accumulates in higher precision and writes BF16 or FP32;
# layer norms, softmax, residual additions, the loss, the master weights and the optimizer
# state stay in BF16 or FP32 (Transformer Engine documentation, "Using FP8 with Transformer
# Engine"; on Hopper the accumulation itself needs care, section 7). First, why two formats: a
# gradient-like tensor spread over many powers of two, scaled so its largest value just fits,
# stored in each encoding:

# %%
from course_lib.plots.formats import plot_layer_errors, plot_scaling_runs

rng_fp8 = np.random.default_rng(11)
grad_steps = F.drifting_tensor(rng_fp8, 1, 50_000, median=2.0 ** -24, decades=1.0)
fit = {name: F.simulate_fp8_scaling(grad_steps, name, "current") for name in ("fp8_e4m3", "fp8_e5m2")}
for name, run in fit.items():
    print(f"{F.get_format(name).label}: {run.underflow_fraction:.2%} of the gradient values flushed to zero, "
          f"relative RMS error {run.rel_rms_errors[0]:.3f}")
assert fit["fp8_e5m2"].underflow_fraction < fit["fp8_e4m3"].underflow_fraction
# Second way: a value survives when it is at least half the smallest subnormal after scaling.
e4m3 = F.get_format("fp8_e4m3")
tiny = e4m3.min_subnormal / 2 / fit["fp8_e4m3"].scales[0]
assert abs(np.mean(np.abs(grad_steps) < tiny) - fit["fp8_e4m3"].underflow_fraction) < 1e-3

# %% [markdown]
# The E4M3 error is smaller on the values it keeps; the values it loses are why gradients use
# E5M2. Finding amax costs a pass over the tensor before the cast. **Delayed scaling** avoids it:
# the scale of step $t$ comes from the largest amax recorded over the previous $H$ steps (Transformer
# Engine's `DelayedScaling`, `amax_history_len` $H$ = 1024 by default, `amax_compute_algo="max"`),
# and the amax of the tensor just cast joins the history. The price: when a tensor grows beyond
# its history, the values above the old amax are clipped. We simulate an activation tensor that
# grows 4% per step and jumps 16x at one step, in E4M3, with a history of 16 steps:

# %%
act_steps = F.drifting_tensor(rng_fp8, 60, 4096, median=1.0, decades=0.5, growth=1.04,
                              spike_step=40, spike_factor=16.0)
runs = [F.simulate_fp8_scaling(act_steps, "fp8_e4m3", "current"),
        F.simulate_fp8_scaling(act_steps, "fp8_e4m3", "delayed", history_len=16),
        F.simulate_fp8_scaling(act_steps, "fp8_e4m3", "delayed", history_len=16, margin=1)]
print(f"{'scaling':26s} {'values clipped':>15s} {'steps with clipping':>20s} {'worst step error':>17s}")
for run in runs:
    label = run.rule + (f", margin {run.margin}" if run.margin else "")
    print(f"{label:26s} {int(run.overflow_counts.sum()):15d} {run.overflow_steps.size:20d} "
          f"{run.rel_rms_errors.max():17.3f}")
current, delayed, delayed_margin = runs
spike_share = delayed.overflow_counts[40] / delayed.overflow_counts.sum()
after = slice(41, 41 + delayed.history_len)
after_ratio = np.median(delayed.rel_rms_errors[after]) / np.median(current.rel_rms_errors[after])
print(f"the jump at step 40 gives {spike_share:.0%} of delayed scaling's clipped values; in the "
      f"{delayed.history_len} steps after it the history still holds the jump's amax, and the median error "
      f"is {after_ratio:.2f}x that of current scaling")
assert spike_share > 0.5 and after_ratio < 1.5
assert current.overflow_counts.sum() == 0
assert delayed.overflow_counts.sum() > delayed_margin.overflow_counts.sum() > 0
# Second way: delayed scaling clips exactly at the steps whose amax exceeds 2^margin times the
# largest amax of the history window.
for run in (delayed, delayed_margin):
    grows = [t for t in range(1, run.amax.size)
             if run.amax[t] > 2 ** run.margin * run.amax[max(0, t - run.history_len):t].max() * (1 + 1e-12)]
    assert list(run.overflow_steps) == grows, (run.overflow_steps, grows)
fig = plot_scaling_runs(runs)
plt.show()

# %% [markdown]
# The plot shows the bargain. Current scaling never clips but reads every tensor twice. Delayed
# scaling clips a few of the largest values whenever the tensor grows faster than its history,
# and most of them at the jump; a margin of one binade of headroom clips at fewer steps and fewer
# values (the table), at the price of one binade less range for the smallest values. After
# the jump the history keeps the scale 16x too small for $H$ steps, and the error barely moves
# (the line above): E4M3's grid is relative, so a small scale only moves the smallest values
# towards the subnormals. Short spikes are why recipes keep a long history and why newer ones
# scale each block of a tensor (MXFP8, section 8) instead of trusting one scale per tensor.
#
# ## 8c. Post-training quantization: choosing the scale from data
#
# To serve a model trained in 16 bits in INT8 or FP8, **post-training quantization** (PTQ) runs a
# few hundred calibration inputs through it, records each activation tensor's values, and picks
# a clipping threshold $a$ per tensor; the scale is $a / q_{\max}$. The simplest threshold is
# the maximum seen. A lower one clips a few values and gives every other value finer steps: a
# high percentile of $|x|$ (percentile calibration, which Wu et al. compare with the maximum and
# with an entropy criterion: "Integer Quantization for Deep Learning Inference: Principles and
# Empirical Evaluation", arXiv:2004.09602, 2020), or the threshold with the least squared error
# on the calibration data (Nagel et al., "A White Paper on Neural Network Quantization",
# arXiv:2106.08295, 2021, sec. 3.1). We calibrate on 4096 Laplace-distributed activations
# (heavier tails than a Gaussian) and measure the error on 100,000 new ones:

# %%
calib = rng_fp8.laplace(size=4096)
held_out = rng_fp8.laplace(size=100_000)
methods = {"max": ("max", 100.0), "99.9th percentile": ("percentile", 99.9),
           "99th percentile": ("percentile", 99.0), "least squared error": ("mse", 100.0)}
ptq = {}
print(f"{'format':9s} " + " ".join(f"{m:>20s}" for m in methods))
for name in ("int8", "fp8_e4m3", "int4"):
    row = {}
    for label, (method, pct) in methods.items():
        amax = F.calibrate_amax(calib, method, pct, fmt=name)
        row[label] = F.rel_rms_error(F.fake_quantize(held_out, amax, name), held_out)
    ptq[name] = row
    print(f"{F.get_format(name).label:9s} " + " ".join(f"{row[m]:20.4f}" for m in methods))
best = {name: min(row, key=row.get) for name, row in ptq.items()}
print("best threshold per format:", best)
int4_gain = ptq["int4"]["max"] / ptq["int4"]["least squared error"]
print(f"INT4: the least-squared-error threshold cuts the error {int4_gain:.2f}x against the maximum")
assert ptq["int8"]["max"] < ptq["int8"]["99th percentile"]          # INT8: clipping costs more than it buys
assert ptq["fp8_e4m3"]["max"] < ptq["fp8_e4m3"]["99th percentile"]  # FP8: relative grid, keep the range
assert int4_gain > 1.3                                               # INT4: clipping pays
# Second way: fake_quantize with the maximum as threshold is quantize()'s per-tensor absmax rule.
q = F.quantize(calib, "int8", "tensor")
assert np.allclose(F.fake_quantize(calib, F.calibrate_amax(calib), "int8"), q.dequantized)

# %% [markdown]
# On this set, INT8 loses more to clipping at the 99th percentile than it gains, and FP8's
# relative grid does not care about a wide range; with INT4's 15 levels, giving up the largest
# values buys finer steps for all the others. But the maximum is a statistic of the sample, not
# of the distribution: the more samples, the larger it gets. For a Laplace distribution $|x|$ is
# exponential, and the expected maximum of $n$ samples is the harmonic number
# $H_n \approx \ln n + 0.577$, up by $\ln 2 = 0.69$ per doubling, while the 99.99th percentile
# settles at $\ln 10^4 = 9.2$. So the same INT8 comparison depends on how much data calibrates
# it. The first $n$ values of one long stream of activations, for growing $n$:

# %%
stream = np.random.default_rng(1).laplace(size=2 ** 20)    # its own generator: a fresh stream
sweep_rows = []
print(f"{'samples':>9s} {'max':>6s} {'H_n':>6s} {'99.99th pct':>12s} {'INT8 error, max':>16s} {'99.99th':>8s} {'max / pct':>10s}")
for log2_n in (8, 12, 16, 20):
    c = stream[: 2 ** log2_n]
    a_max, a_pct = F.calibrate_amax(c, "max"), F.calibrate_amax(c, "percentile", 99.99)
    e_max = F.rel_rms_error(F.fake_quantize(held_out, a_max, "int8"), held_out)
    e_pct = F.rel_rms_error(F.fake_quantize(held_out, a_pct, "int8"), held_out)
    h_n = float(np.sum(1.0 / np.arange(1, 2 ** log2_n + 1)))
    sweep_rows.append((2 ** log2_n, a_max, h_n, a_pct, e_max, e_pct))
    print(f"{2 ** log2_n:9,d} {a_max:6.2f} {h_n:6.2f} {a_pct:12.2f} {e_max:16.4f} {e_pct:8.4f} {e_max / e_pct:10.2f}")
maxima = [r[1] for r in sweep_rows]
assert maxima == sorted(maxima) and maxima[-1] > maxima[0] + 3     # the sample maximum grows with the set
# Second way: each maximum lies near its expectation H_n (an exponential's maximum has a thin
# lower tail and a long upper one: P(max > H_n + 7) is about e^-7), the percentile near its
# limit ln(10^4).
assert all(h_n - 3 < a_max < h_n + 7 for _, a_max, h_n, *_ in sweep_rows)
assert abs(sweep_rows[-1][3] - np.log(1e4)) < 0.3
n_big, _, _, _, e_max_big, e_pct_big = sweep_rows[-1]
print(f"{n_big:,} samples: the 99.99th percentile beats the maximum for INT8 by {e_max_big / e_pct_big - 1:.0%}")
assert e_pct_big < e_max_big / 1.1                                   # with many samples clipping pays at 8 bits

# %% [markdown]
# With a few hundred samples the maximum is itself a clipped threshold (both thresholds clip the
# held-out tail, and come out alike); up to tens of thousands the maximum does about as well as
# the percentile or a little better; with a million it sits far out in the tail, and every
# value pays for the few it covers with coarser steps, so the percentile wins even at 8 bits. The
# winner depends on the calibration set's size as well as on the format: a percentile or a
# least-squared-error threshold settles as the set grows, the maximum does not, which is one
# reason calibration tools offer those methods besides the maximum. PTQ changes no weight.
# **Quantization-aware
# training** (QAT) goes further: it inserts `fake_quantize` into the forward pass during
# (a short phase of) training, so the loss sees the quantized model, and passes gradients
# through the rounding as if it were the identity (the straight-through estimator, Bengio et al.
# 2013; Jacob et al., CVPR 2018). The weights then learn to sit where rounding hurts least,
# which recovers accuracy at 4 bits and below where PTQ loses it, at the cost of training compute
# and the training data (Nagel et al. 2021, sec. 4).
#
# ## 8d. How quantization error compounds through layers
#
# Each layer quantizes its input and its weights, and the error it adds rides along into the
# next layer, which adds its own. In an 8-layer ReLU network with He-initialised weights (which
# keep the activations' size steady from layer to layer), quantizing every layer's inputs per
# tensor and weights per output channel, the matmuls accumulating in full precision:

# %%
mlp = F.random_mlp(rng_fp8, [128] * 9)
x_in = rng_fp8.standard_normal((32, 128))
layer_errors = [F.mlp_quantization_errors(mlp, x_in, name) for name in ("int8", "fp8_e4m3", "fp8_e5m2")]
print(f"{'format':9s} {'layer 1':>8s} {'layer 8':>8s} {'growth':>7s}  (sqrt(8) = {np.sqrt(8):.2f})")
for r in layer_errors:
    print(f"{F.get_format(r.format).label:9s} {r.rel_errors[0]:8.4f} {r.rel_errors[-1]:8.4f} {r.growth:7.2f}")
# Second way for layer 1: quantize the input and the weights directly and multiply.
q_in = F.quantize(x_in, "int8", "tensor").dequantized
q_w = F.quantize(mlp[0], "int8", "channel", axis=1).dequantized
assert np.isclose(F.rel_rms_error(q_in @ q_w, x_in @ mlp[0]), layer_errors[0].rel_errors[0])
# A model: independent errors of equal size add in quadrature, so L layers give sqrt(L) times one.
assert all(0.75 * np.sqrt(8) < r.growth < 1.25 * np.sqrt(8) for r in layer_errors)
fig = plot_layer_errors(layer_errors)
plt.show()

# %% [markdown]
# The error grows with depth, close to $\sqrt{L}$ times one layer's: each layer adds an error
# of about the same relative size, independent of the one it inherits, and the two add like
# the sides of a right triangle. Nothing here amplifies the error; in a real network a layer
# whose outputs are sensitive to its inputs can (which is one reason PTQ keeps sensitive layers,
# often the first and the last, in higher precision), and a layer with an outlier-stretched scale
# adds more than its share (section 8).

# %% [markdown]
# ## 9. The hardware side: what halving the bits buys
#
# The course catalog gives each accelerator's dense tensor rate per precision. For each step to a
# format of half the bytes we compute the ratio of the rates, of the bytes and of the bits that
# carry information:

# %%
print(f"{'accelerator':14s} {'step':14s} {'rate x':>7s} {'bytes /':>8s} {'info bits /':>12s}")
steps = {name: F.halving_steps(name) for name in list_accelerators()}
for name, rows in steps.items():
    for s in rows:
        flag = "" if s.doubles_rate else "   <- not 2x"
        print(f"{name:14s} {s.wide + '->' + s.narrow:14s} {s.rate_ratio:7.3f} {s.bytes_ratio:8.1f} "
              f"{s.bits_ratio:12.3f}{flag}")
all_steps = [s for rows in steps.values() for s in rows]
assert all(s.bytes_ratio == 2 for s in all_steps)
data_center = [name for name in list_accelerators(kind="gpu") if name != "RTX 4090"]
for name in data_center:
    assert all(s.doubles_rate for s in steps[name]), name
print(f"every step doubles the rate (within 1%) on: {', '.join(n for n in data_center if steps[n])}")

# %% [markdown]
# Where the rule does not hold, the catalog says why:

# %%
rtx = get_accelerator("RTX 4090")
a100 = get_accelerator("A100")
int8_step = [s for s in steps[rtx.name] if (s.wide, s.narrow) == ("fp16", "int8")][0]
print(f"RTX 4090 FP16 -> INT8: {int8_step.rate_ratio:.2f}x, because {rtx.notes.split(';')[0].lower()}")
print(f"TF32 tensor rate over the FP32 lanes: RTX 4090 {rtx.peak('tf32') / rtx.peak('fp32'):.1f}x, "
      f"A100 {a100.peak('tf32') / a100.peak('fp32'):.1f}x, H100 {h100.peak('tf32') / h100.peak('fp32'):.1f}x")
print(f"FP32 -> TF32 moves the same bytes (ratio {bytes_per_element('fp32') / bytes_per_element('tf32'):.0f}): "
      "TF32 is stored as FP32")
v5p = get_accelerator("TPU v5p")
print(f"TPU v5p BF16 -> FP8: {v5p.peak('fp8') / v5p.peak('bf16'):.2f}x: {v5p.notes.split('. ')[1]}")
assert not int8_step.doubles_rate and math.isclose(int8_step.rate_ratio, 4, rel_tol=0.01)
assert rtx.peak("tf32") == rtx.peak("fp32") and bytes_per_element("tf32") == bytes_per_element("fp32")

# %% [markdown]
# "FP8" in the catalog is a rate, not one encoding. NVIDIA's tensor cores take the OCP formats
# E4M3 and E5M2 of this lesson; the MI300X's take the FNUZ variants (no infinity, one NaN where
# $-0$ would be, the exponent bias one higher; ROCm's HIP documentation, "FP8 numbers"). The
# catalog records which, and `ml_dtypes` has both:

# %%
fp8_dtype = {"E4M3": ml_dtypes.float8_e4m3fn, "E5M2": ml_dtypes.float8_e5m2,
             "E4M3FNUZ": ml_dtypes.float8_e4m3fnuz, "E5M2FNUZ": ml_dtypes.float8_e5m2fnuz}
for name in ("H100 SXM", "MI300X"):
    acc = get_accelerator(name)
    tops = ", ".join(f"{f} max {float(ml_dtypes.finfo(fp8_dtype[f]).max):g}" for f in acc.fp8_formats)
    print(f"{acc.name:9s} FP8 {acc.peak('fp8') / 1e12:7.1f} TFLOP/s dense: {tops}")
e4m3_max = float(ml_dtypes.finfo(ml_dtypes.float8_e4m3fnuz).max)
assert e4m3_max == 240 and F.get_format("fp8_e4m3").max_value == 448
# A scale chosen for OCP E4M3's 448 overflows the FNUZ variant: 300 fits one and not the other.
assert np.isnan(np.float32(300).astype(ml_dtypes.float8_e4m3fnuz)) and float(np.float32(300).astype(ml_dtypes.float8_e4m3fn)) == 288

# %%
fig = plot_tensor_rates({name: F.tensor_rates(name) for name in ("A100", "H100 SXM", "B200", "RTX 4090")})
plt.show()

# %% [markdown]
# **On a GPU.** Where PyTorch or CuPy sees a GPU, its casts can be compared with the ones above;
# here we only report whether one is present.

# %%
from course_lib.measure import gpu_status

print(gpu_status()[1])

# %% [markdown]
# ## 10. Explore
#
# Type a number: its bits, the value each format keeps and the error. Try one tenth, 65504 and
# 65520 (around FP16's largest value), 448 and 464 (FP8 E4M3's), $10^{-8}$ (below FP16's range),
# a large integer, or `inf`. Tick *saturate* to clip instead of overflowing.

# %%
from course_lib.widgets.formats import number_explorer

explorer = number_explorer("0.1")
explorer

# %% [markdown]
# ## Misconceptions
#
# - **"BF16 uses 16 bits for the mantissa."** (A seed text says so.) BF16 has 16 bits in all:
#   1 sign, 8 exponent and 7 explicit mantissa bits (the table of section 1).
# - **"BF16 has higher precision than FP16."** (Same seed.) The reverse: BF16 trades mantissa for
#   range, and its steps are coarser than FP16's (section 3 prints by how much). It has FP16's
#   size and FP32's range.
# - **"TF32 is a 19-bit format, so it saves memory."** It has 19 bits of information but lives in
#   a 32-bit FP32 container: the bytes moved do not change, only the tensor-core rate does.
# - **"INT8 tensor cores accumulate in FP32."** (A seed text says so.) Integer MMA instructions
#   accumulate in 32-bit integers (PTX ISA: `mma` with `.s8` operands takes `.s32` accumulators),
#   which is exact: integer addition never rounds, and the worst-case product of two INT8 values
#   fits so many times into an INT32 that overflow needs a very long dot product:

# %%
int8 = F.get_format("int8")
worst_product = int(int8.min_value) ** 2
terms_before_overflow = (2 ** 31 - 1) // worst_product
print(f"INT32 accumulator: {terms_before_overflow:,} worst-case INT8 products before overflow, "
      "and no rounding at all")
assert terms_before_overflow * worst_product <= 2 ** 31 - 1 < (terms_before_overflow + 1) * worst_product

# %% [markdown]
# - **"Each halving of the bits doubles the tensor-core rate."** On the data-center GPUs in the
#   catalog it does, step by step; the TPU v5p runs FP8 at its BF16 rate, and on the RTX 4090 INT8 runs at four times its FP32-accumulate
#   FP16 rate, and its TF32 tensor rate equals its FP32 rate (section 9).
# - **"FP8 overflows to infinity."** E4M3 has no infinity: a library cast of a large value gives
#   NaN, and NVIDIA's conversion instructions saturate to the largest finite value instead
#   (section 4). Either way the value is lost, which is why FP8 pipelines scale tensors first.
# - **"FP8 is one format."** Besides E4M3 and E5M2 there are the FNUZ variants the MI300X runs,
#   whose E4M3 tops out at 240, not 448 (section 9).
# - **"Casting to a narrow integer clips."** A plain cast does what its library chose: `ml_dtypes`
#   wrapped around until 0.6 and gives 0 since 0.7 (section 4). Quantizers clip on purpose, first.
# - **"Lower precision means uniformly larger error."** For floats the error is relative and the
#   risk is range; for integers the error is absolute and the risk is the scale (section 8).
#
# ## Exercises
#
# `my_work/05_numeric_formats.py` (answers in `solutions/05_numeric_formats.py`): predict which
# format loses the most gradients, compute a format's range, explore accumulation, write a
# per-block quantizer, and decide how much headroom delayed FP8 scaling needs (05.6); then choose
# a quantization scheme, one of which you build yourself, within a bits budget and an error
# budget for every row (05.7), and the fewest mantissa bits an accumulator needs to sum 16,384
# products in one running sum within 1 %, from a BF16 measurement (05.8).
# `my_work/` is your own copy of the exercises: `make lab` makes it, `make workspace` refreshes
# it without touching your answers, and `make progress` lists which exercises pass.
#
# ## Key points
#
# - A float is sign, exponent and mantissa: the exponent buys range, the mantissa precision; the
#   relative gap is about $2^{-M}$ across the normal range.
# - Beyond the range, in a library cast: infinity (FP32, BF16, FP16, E5M2), NaN (E4M3) or
#   saturation (FP4); NVIDIA's FP8 conversions saturate. Below it, subnormals and then zero.
# - BF16 has FP32's range, so gradients do not underflow and no loss scaling is needed; FP16 has
#   more precision but needs a loss scale.
# - Keep long sums in FP32, as BF16 and FP16 tensor-core instructions do, or INT32 for integers;
#   Hopper's FP8 tensor cores keep fewer bits, so FP8 training promotes partial sums to FP32.
# - Quantization is codes times scales; finer scale groups fight outliers, and integer formats need
#   them most. MX formats use blocks of 32 with a power-of-two scale.
# - FP8 training stores matmul inputs in E4M3 (forward) and E5M2 (gradients) with an FP32 scale
#   per tensor; everything else stays in BF16/FP32. Delayed scaling reads the scale from an amax
#   history and clips when a tensor outgrows it; a margin buys headroom (section 8b).
# - Post-training quantization picks each scale from calibration data. Which threshold wins
#   depends on the format and on the calibration set's size: a sample's maximum grows with it
#   (about $\ln n$ for Laplace activations), so with many samples a clipped threshold pays even
#   at INT8, and at 4 bits it pays already on a small set (section 8c); quantization-aware training learns around the
#   rounding instead (section 8c).
# - Independent quantization errors compound through layers, about $\sqrt{L}$ times one layer's
#   after $L$ layers in a well-scaled network (section 8d).
# - Halving the bytes halves the traffic everywhere and, on current data-center GPUs, doubles the
#   peak rate (not the TPU v5p's FP8).
