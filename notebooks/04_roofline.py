# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 04 · The roofline: is this kernel limited by arithmetic or by memory?
#
# **Learning objectives.** After this lesson you can
#
# 1. compute a kernel's *arithmetic intensity* (FLOP per byte moved) and an accelerator's
#    *machine balance* (its ridge point);
# 2. bound a kernel's speed with the roofline $P(I) = \min(\pi, \beta I)$ and say whether it is
#    memory-bound or compute-bound;
# 3. explain why a batch-1 decode step reaches a fraction of a percent of a GPU's peak while a
#    training matmul reaches the roof;
# 4. read a *hierarchical* roofline, one roof per memory level;
# 5. measure your own machine's roofline and compare NumPy kernels with their predictions.
#
# Every number below is computed from the cited catalog in `course_lib/data/accelerators.toml`
# (dense tensor-core rates, never the "with sparsity" ones), and the important ones are checked
# a second way.

# %%
import numpy as np
import matplotlib.pyplot as plt

from course_lib.hardware import get_accelerator, list_accelerators, bytes_per_element
from course_lib.roofline import (attainable_flops, elementwise_kernel, hierarchical_ceilings,
                                 matmul_intensity, matmul_kernel, place_kernel, ridge_point)
from course_lib.plots import use_course_style
from course_lib.plots.roofline import plot_hierarchical_roofline, plot_measured_roofline, plot_roofline

use_course_style()
h100 = get_accelerator("H100 SXM")
print(f"{h100.name}: {h100.source}")

# %% [markdown]
# ## 1. Arithmetic intensity and machine balance
#
# A kernel performs $F$ floating-point operations and moves $Q$ bytes between the chip and its
# memory. Its **arithmetic intensity** is
#
# $$ I = \frac{F}{Q} \quad [\text{FLOP/byte}]. $$
#
# An accelerator with peak rate $\pi$ (FLOP/s) and memory bandwidth $\beta$ (bytes/s) can only
# keep its arithmetic units busy if every byte brings at least $\pi / \beta$ operations with it.
# That ratio is the **machine balance**, or **ridge point**:
#
# $$ I^{*} = \frac{\pi}{\beta}. $$
#
# For the H100 SXM in dense BF16 over its HBM3:

# %%
ridge_h100 = ridge_point(h100.peak("bf16"), h100.mem_bandwidth)
print(f"I* = {h100.peak('bf16') / 1e12:.1f} TFLOP/s / {h100.mem_bandwidth / 1e12:.2f} TB/s "
      f"= {ridge_h100:.0f} FLOP per byte")

# %% [markdown]
# Each byte read from HBM must feed that many operations before the tensor cores stop waiting.
# The ridge points of the whole catalog, at each chip's fastest 16-bit format:

# %%
rows = []
for name in list_accelerators():
    acc = get_accelerator(name)
    prec = "bf16" if "bf16" in acc.peak_flops else "fp16"
    rows.append((acc.name, prec, acc.peak(prec) / 1e12, acc.mem_bandwidth / 1e12, acc.ridge_point(prec)))
print(f"{'accelerator':15s} {'prec':5s} {'peak TFLOP/s':>13s} {'HBM TB/s':>9s} {'ridge FLOP/B':>13s}")
for row in rows:
    print(f"{row[0]:15s} {row[1]:5s} {row[2]:13.1f} {row[3]:9.3f} {row[4]:13.0f}")
ridges = np.array([r[4] for r in rows])
print(f"\nsmallest ridge {ridges.min():.0f}, largest {ridges.max():.0f} FLOP/byte")

# %% [markdown]
# ## 2. The roofline bound
#
# A kernel can go no faster than its arithmetic allows, nor faster than its bytes can arrive:
#
# $$ P(I) = \min\left(\pi,\; \beta\, I\right). $$
#
# Left of the ridge the sloped roof binds (memory-bound); right of it the flat roof binds
# (compute-bound). The same bound read as time: a kernel needs at least
# $t = \max(F/\pi,\; Q/\beta)$ seconds. The two readings must agree, and we check that they do
# on a kernel on each side of the ridge, and that the ridge is exactly where the roofs meet.

# %%
peak, bw = h100.peak("bf16"), h100.mem_bandwidth
for flops, bytes_moved in [(1e12, 1e10), (1e12, 1e9)]:      # intensity 100 and 1000 FLOP/B
    p = attainable_flops(flops / bytes_moved, peak, bw)
    t_roofline = flops / p
    t_direct = max(flops / peak, bytes_moved / bw)
    assert np.isclose(t_roofline, t_direct), (t_roofline, t_direct)
    print(f"I = {flops / bytes_moved:6.0f} FLOP/B: at most {p / 1e12:6.1f} TFLOP/s, "
          f"at least {t_direct * 1e3:.3f} ms")
# The roofs meet at the ridge: just left of it the slope binds, at it the peak does.
assert attainable_flops(ridge_h100 * (1 - 1e-9), peak, bw) < peak
assert np.isclose(attainable_flops(ridge_h100, peak, bw), peak)

# %% [markdown]
# ## 3. Worked examples on real accelerators
#
# A matrix multiplication $C_{m\times n} = A_{m\times k} B_{k\times n}$ performs $2mkn$ FLOP (one
# multiply and one add per term) and, at best, reads $A$ and $B$ once and writes $C$ once:
#
# $$ I_{\text{matmul}} = \frac{2mkn}{b\,(mk + kn + mn)} $$
#
# with $b$ bytes per element. For square matrices in a 2-byte format this is $n/3$: a square
# matmul is compute-bound on the H100 once $n/3 \ge I^*$, that is $n \ge 3 I^*$.

# %%
n_cross = 3 * ridge_h100
sizes = np.arange(16, 4097)
bounds = [matmul_intensity(s, s, s, 2) >= ridge_h100 for s in sizes]
first_compute_bound = int(sizes[np.argmax(bounds)])
print(f"formula: n >= 3 I* = {n_cross:.0f};  sweep: first compute-bound n = {first_compute_bound}")
assert first_compute_bound == int(np.ceil(n_cross))
assert np.isclose(matmul_intensity(4096, 4096, 4096, 2), 4096 / 3)

# %% [markdown]
# The five kernels that matter most in a transformer, in BF16 on the H100. The decode GEMV is one
# token's activations times an 8192 x 8192 weight matrix; the small batch is 16 tokens; the
# training GEMM is 8192 tokens; the skinny GEMM is an attention-score product with head
# dimension 64; GELU is an elementwise activation at about 8 FLOP per element over $2^{28}$
# elements, read once and written once.

# %%
kernels = [
    matmul_kernel("decode GEMV (m=1)", 1, 8192, 8192, "bf16"),
    matmul_kernel("small batch (m=16)", 16, 8192, 8192, "bf16"),
    matmul_kernel("training GEMM (m=8192)", 8192, 8192, 8192, "bf16"),
    matmul_kernel("skinny GEMM (k=64)", 4096, 64, 4096, "bf16"),
    elementwise_kernel("GELU 2^28 elements", 2 ** 28, 8, "bf16"),
]
points = [place_kernel(kern, "H100 SXM", "bf16") for kern in kernels]
print(f"{'kernel':25s} {'FLOP/B':>8s} {'TFLOP/s':>8s} {'% peak':>7s} {'bound':>8s} {'time us':>9s}")
for p in points:
    print(f"{p.kernel.name:25s} {p.intensity_flops_per_byte:8.1f} {p.attainable_flops / 1e12:8.1f} "
          f"{100 * p.fraction_of_peak:7.2f} {p.bound:>8s} {p.t_min_s * 1e6:9.1f}")

gemv, small, train, skinny, gelu = points
assert gemv.bound == small.bound == skinny.bound == gelu.bound == "memory"
assert train.bound == "compute"
# Second way for the GEMV: every 2-byte weight is used for exactly one multiply-add (2 FLOP),
# so its intensity tends to 2 FLOP / 2 bytes = 1 FLOP per byte.
assert abs(gemv.intensity_flops_per_byte - 1.0) < 0.01

# %%
fig = plot_roofline(points)
plt.show()

# %% [markdown]
# The decode GEMV reaches well under one percent of peak (the table's `% peak` column): every
# weight crosses the memory bus to be used once. Batching many sequences reuses each weight read, which is why serving
# systems batch, and why lesson 07 finds decode cost governed by bandwidth. The same kernels on
# every GPU in the catalog (16-bit format each chip runs fastest):

# %%
print(f"{'accelerator':15s} " + " ".join(f"{p.kernel.name.split(' (')[0][:13]:>14s}" for p in points))
for name in list_accelerators(kind="gpu"):
    acc = get_accelerator(name)
    prec = "bf16" if "bf16" in acc.peak_flops else "fp16"
    placed = [place_kernel(p.kernel, acc, prec) for p in points]
    print(f"{acc.name:15s} " + " ".join(f"{100 * q.fraction_of_peak:12.2f}% " for q in placed))

# %% [markdown]
# ## 4. Tensor cores against the ordinary FP32 units
#
# Tensor cores run matrix multiply-accumulates on small tiles in one instruction; the ordinary
# FP32 lanes run one fused multiply-add per lane per clock. The FP32 rate is just
# lanes x 2 x clock x SMs, which gives us an independent check on the catalog's figure.

# %%
fp32_from_clock = h100.sm_count * h100.fp32_flops_per_clock_per_sm * h100.boost_clock_hz
print(f"FP32 from the datasheet: {h100.peak('fp32') / 1e12:.1f} TFLOP/s; "
      f"from {h100.sm_count} SMs x {h100.fp32_flops_per_clock_per_sm} FLOP/clock x "
      f"{h100.boost_clock_hz / 1e9:.2f} GHz: {fp32_from_clock / 1e12:.1f} TFLOP/s")
assert abs(fp32_from_clock / h100.peak("fp32") - 1) < 0.01

ratio_bf16 = h100.peak("bf16") / h100.peak("fp32")
ratio_tf32 = h100.peak("tf32") / h100.peak("fp32")
print(f"dense BF16 tensor cores: {ratio_bf16:.1f}x the FP32 lanes; TF32: {ratio_tf32:.1f}x")
print(f"a matmul kept in plain FP32 uses {100 / ratio_bf16:.1f}% of the chip's dense BF16 rate "
      f"and leaves {100 * (1 - 1 / ratio_bf16):.1f}% idle")

# %% [markdown]
# ## 5. Why sustained throughput falls below the rated peak, and what sparsity doubles
#
# Peak rates are *units x FLOP per clock x boost clock*. The boost clock is the most the chip
# runs at, and it runs there only within its power and thermal budget (the catalog's TDP). A
# dense BF16 matmul that draws the full budget makes the chip lower its clock, and the roof
# comes down in proportion. The clock drop below is an assumption for illustration, not a
# measured figure.

# %%
clock_drop = 0.15                       # assumed: clock 15% under boost when power-limited
sustained_peak = h100.peak("bf16") * (1 - clock_drop)
print(f"{h100.tdp_w:.0f} W budget: at a {clock_drop:.0%} lower clock, the BF16 roof is "
      f"{sustained_peak / 1e12:.0f} TFLOP/s and the ridge moves to "
      f"{ridge_point(sustained_peak, h100.mem_bandwidth):.0f} FLOP/B")

# %% [markdown]
# **Structured 2:4 sparsity.** When two of every four weights are zero in a fixed pattern, sparse
# tensor cores skip them and the datasheets print twice the dense rate. It helps only models
# pruned to that pattern, and does nothing for memory-bound kernels. Storing the sparse figure
# would double every ridge point and make memory-bound kernels look further from the roof than
# they are; the catalog stores dense rates and we derive the sparse one when it is wanted.

# %%
sparse_bf16 = 2 * h100.peak("bf16")
print(f"datasheet 'with sparsity' BF16: {sparse_bf16 / 1e12:.0f} TFLOP/s; ridge would read "
      f"{ridge_point(sparse_bf16, h100.mem_bandwidth):.0f} instead of {ridge_h100:.0f} FLOP/B")

# %% [markdown]
# ## 6. The hierarchical roofline
#
# HBM is not the only roof. Every level of the memory hierarchy has its own bandwidth, hence its
# own sloped roof, and a kernel has its own intensity against each level (the bytes it moves
# *through that level*). Whichever roof is lowest at its intensity binds. On-chip bandwidths are
# not datasheet figures: `hierarchical_ceilings` derives shared memory's from the architecture and
# says how in `source`; NVIDIA publishes no L2 bandwidth at all, so L2 gets no roof here (lesson
# 03 bounds it between HBM and shared memory).

# %%
ceilings = hierarchical_ceilings("H100 SXM", "bf16")
for c in ceilings:
    print(f"{c.level:32s} {c.bandwidth_bytes_per_s / 1e12:8.3f} TB/s  ridge {c.ridge_point:8.1f} FLOP/B  ({c.source})")
smem = ceilings[0]
assert np.isclose(smem.bandwidth_bytes_per_s, 128 * h100.sm_count * h100.boost_clock_hz)
fig = plot_hierarchical_roofline(ceilings, h100.peak("bf16"), points=[train, gemv],
                                 title="H100 SXM, dense BF16: one roof per level")
plt.show()

# %% [markdown]
# A tiled matmul that reuses each tile from shared memory 64 times has a shared-memory intensity
# only $1/64$ of its HBM intensity, and may be bound by shared memory, not by HBM. Lesson 06
# builds such tiles; lesson 08 adds the links between chips, whose roofs are lower still.
#
# ## 7. Your own machine's roofline, measured
#
# The same model describes your laptop. We measure two roofs with NumPy, sustained memory
# bandwidth (copy, triad and an in-place scale on arrays twice the size of your largest cache)
# and sustained matmul FLOP/s, then time kernels of very different intensity and place each at
# its predicted and measured height. It takes about a second.

# %%
from course_lib.measure import gpu_status, measure_kernels, measure_machine

machine = measure_machine()
print(f"{machine.description}")
print(f"copy {machine.copy_bandwidth_bytes_per_s / 1e9:.1f} GB/s, triad "
      f"{machine.triad_bandwidth_bytes_per_s / 1e9:.1f} GB/s, in-place scale "
      f"{machine.scale_bandwidth_bytes_per_s / 1e9:.1f} GB/s; {machine.gemm_size}^3 float32 matmul "
      f"{machine.peak_flops / 1e9:.1f} GFLOP/s: ridge {machine.ridge_point:.1f} FLOP/B")
measured = measure_kernels(machine)
print(f"{'kernel':12s} {'FLOP/B':>7s} {'predicted GFLOP/s':>18s} {'measured':>9s} {'ratio':>6s}")
for k in measured:
    print(f"{k.name:12s} {k.intensity_flops_per_byte:7.2f} {k.predicted_flops / 1e9:18.2f} "
          f"{k.measured_flops / 1e9:9.2f} {k.fraction_of_prediction:6.2f}")

# %%
fig = plot_measured_roofline(machine, measured, title=f"your machine: {machine.description}")
plt.show()
# Second way for the byte and FLOP accounting: the measured GEMM's intensity is the matmul formula
# of section 3 at 4 bytes per float32 element.
gemm_big = max((k for k in measured if k.name.startswith("GEMM")), key=lambda k: k.flops)
size = int(gemm_big.name.split()[1])
assert np.isclose(gemm_big.intensity_flops_per_byte, matmul_intensity(size, size, size, 4))
# Timings depend on what else your machine is doing, so they are compared, not asserted.
axpy = next(k for k in measured if k.name == "axpy")
verdict = "as the roofline predicts" if gemm_big.measured_flops > axpy.measured_flops else \
    "NOT as predicted: is something else busy on this machine?"
print(f"{gemm_big.name} ran {gemm_big.measured_flops / axpy.measured_flops:.0f}x the FLOP/s of axpy, {verdict}")

# %% [markdown]
# Read the plot: the streaming kernels and the GEMV sit near the sloped roof (a ratio near 1); copy
# and triad read lower than the in-place scale because writing a line that is not in cache first
# reads it (write-allocate), bytes we did not count. The large GEMM sits near the flat roof it defined; the
# smallest GEMM falls far below both, because at a few microseconds per call the fixed cost of a
# NumPy call dominates (lesson 01 measures that overhead).
#
# **On a GPU.** Where PyTorch sees a GPU, the same two roofs are measured on it (a 1 GiB
# device copy and an 8192^3 BF16 matmul) and set beside the catalog's datasheet figures. Without
# one, this cell says so in one line.

# %%
from course_lib.measure import measure_gpu_machine

has_gpu, message = gpu_status()
print(message)
gpu = measure_gpu_machine() if has_gpu else None
if gpu is not None:
    print(f"{gpu.description}: copy {gpu.copy_bandwidth_bytes_per_s / 1e12:.2f} TB/s, "
          f"BF16 matmul {gpu.peak_flops / 1e12:.0f} TFLOP/s; ridge {gpu.ridge_point:.0f} FLOP/B")
    for name in list_accelerators("gpu"):
        if name.split()[0].lower() in gpu.description.lower():
            acc = get_accelerator(name)
            print(f"  catalog {acc.name}: {acc.mem_bandwidth / 1e12:.2f} TB/s, "
                  f"{acc.peak('bf16') / 1e12:.0f} TFLOP/s dense BF16 "
                  f"(measured {gpu.bandwidth_bytes_per_s / acc.mem_bandwidth:.0%} and "
                  f"{gpu.peak_flops / acc.peak('bf16'):.0%} of them)")
            break

# %% [markdown]
# ## 8. Explore
#
# Choose an accelerator and a precision, then move the matmul's shape. $m$ is the number of tokens
# in the batch, $k \times n$ the weight matrix. Watch the point cross the ridge as $m$ grows, and
# watch the ridge move when you change precision or chip.

# %%
from course_lib.widgets.roofline import roofline_explorer

explorer = roofline_explorer("H100 SXM", "bf16")
explorer

# %% [markdown]
# ## Misconceptions
#
# - **"Ridge points are tens of FLOP per byte."** (One of our seed texts says so.) For dense
#   16-bit tensor-core math they are in the hundreds on every current GPU in the catalog; the
#   smallest above is the one printed in section 1.
# - **"Tensor cores give five to ten times the FP32 rate."** On the H100 SXM the dense BF16 rate
#   is well above ten times the FP32 rate (section 4 prints the ratio); the gap grew with each
#   generation (compare the V100's FP16 to FP32 ratio in the catalog).
# - **"A faster GPU speeds up every kernel."** A memory-bound kernel only speeds up with bandwidth.
#   From H100 SXM to H200 the BF16 peak is unchanged and the bandwidth grows:

# %%
h200 = get_accelerator("H200")
gain_gemv = place_kernel(gemv.kernel, h200, "bf16").t_min_s / gemv.t_min_s
gain_train = place_kernel(train.kernel, h200, "bf16").t_min_s / train.t_min_s
print(f"H100 SXM -> H200: decode GEMV takes {gain_gemv:.2f}x the time, training GEMM {gain_train:.2f}x")
assert np.isclose(1 / gain_gemv, h200.mem_bandwidth / h100.mem_bandwidth, rtol=1e-3)
assert np.isclose(gain_train, 1.0)

# %% [markdown]
# - **"Lower precision only helps the arithmetic."** Halving the bytes per element doubles the
#   intensity of every kernel: a memory-bound kernel gets faster even if the math does not.
# - **"The spec-sheet peak is what my kernel will get."** Only kernels right of the ridge can reach
#   it, and then only at the sustained clock (section 5).
# - **"Intensity against HBM tells the whole story."** The binding roof may be L2, shared memory or
#   a link (section 6).
#
# ## Exercises
#
# `exercises/04_roofline.py` (answers in `solutions/04_roofline.py`): predict before you compute,
# compute on a real accelerator, explore with the widget, and write the roofline yourself.
#
# ## Key points
#
# - Intensity $I = F/Q$ belongs to the kernel; ridge $I^* = \pi/\beta$ belongs to the machine.
# - $P(I) = \min(\pi, \beta I)$: left of the ridge you are paying for bytes, right of it for FLOP.
# - Square matmuls in 16-bit formats have $I = n/3$; decode GEMVs have $I \approx 1$, so decode is
#   memory-bound on every GPU and batching is the lever.
# - Dense tensor-core rates are an order of magnitude above the FP32 lanes; sparse figures are twice
#   dense and apply only to 2:4-pruned weights.
# - Every memory level has its own roof; measure your own machine's roofs before trusting a model.
