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
# # 03 · The memory hierarchy: where data lives and what it costs to move it
#
# **Learning objectives.** After this lesson you can
#
# 1. name the levels of a GPU's memory (registers, shared memory and L1, L2, device memory, and
#    the links to other GPUs and the host) with their capacity and bandwidth, and say which of
#    those numbers are published and which are derived;
# 2. compute how long a tensor takes to cross each level, $t = Q / \beta$;
# 3. predict a cache's hit rate from the access pattern and the working-set size, and check the
#    prediction with a set-associative LRU cache simulator;
# 4. measure your own CPU's memory ladder: bandwidth and latency against working-set size;
# 5. find shared-memory bank conflicts from a stride and remove them with padding;
# 6. state when double buffering hides a copy behind compute: $t_\text{copy} \le t_\text{compute}$.
#
# Every hardware number comes from the cited catalog in `course_lib/data/accelerators.toml`.

# %%
import numpy as np
import matplotlib.pyplot as plt

from course_lib.hardware import get_accelerator
from course_lib.memory import (BANK_BYTES, N_BANKS, PATTERNS, SHARED_MEM_BYTES_PER_CLOCK_PER_SM,
                               column_read_conflict_degree, conflict_degree, copy_hidden,
                               hit_rate_sweep, make_trace, memory_hierarchy, n_sets,
                               pipeline_timeline, pipelined_time_s, simulate_cache,
                               strided_conflict_degree, transfer_table)
from course_lib.measure.memory import (cpu_cache_sizes, measure_bandwidth_ladder,
                                       measure_latency_ladder)
from course_lib.plots import use_course_style
from course_lib.plots.memory import (plot_bandwidth_ladder, plot_bank_conflicts, plot_hierarchy,
                                     plot_hit_rates, plot_latency_ladder, plot_pipeline)

use_course_style()
h100 = get_accelerator("H100 SXM")
print(f"{h100.name}: {h100.source}")

# %% [markdown]
# ## 1. The ladder
#
# Each level holds more than the one above it and delivers less per second. Moving $Q$ bytes
# across a level of bandwidth $\beta$ takes at least
#
# $$ t = \frac{Q}{\beta}. $$
#
# For one 4096 x 4096 BF16 matrix read from the H100's HBM3:

# %%
q_bytes = 4096 * 4096 * 2
print(f"t = {q_bytes / 1e6:.1f} MB / {h100.mem_bandwidth / 1e12:.2f} TB/s = {q_bytes / h100.mem_bandwidth * 1e6:.2f} us")

# %% [markdown]
# NVIDIA publishes capacities and the HBM, NVLink and PCIe rates. It does not publish the
# bandwidth of registers or shared memory, and gives L2's only in one whitepaper, so the course
# derives what it can from catalog fields and says so:
#
# * **shared memory**: 32 banks, each delivering one 4-byte word per clock (CUDA C++ Programming
#   Guide), so 128 bytes per clock per SM, times SMs, times the boost clock;
# * **registers**: each FP32 lane issues one fused multiply-add per clock and reads three 4-byte
#   operands, so (FP32 FLOP per clock per SM / 2) x 12 bytes, times SMs and clock;
# * **L2**: the A100 whitepaper gives an L2 read bandwidth of 5120 bytes per clock for the A100
#   and 2048 for the V100; times the boost clock, that is a bandwidth (the whitepaper does not
#   name the L2's clock, so the boost clock is our assumption). For Hopper, Ada and Blackwell
#   NVIDIA publishes no L2 figure, so for the H100 L2 is only bounded: below by HBM (all HBM
#   traffic passes through L2) and above by the SMs' shared memory / L1 figure.

# %%
levels = memory_hierarchy(h100)
for lv in levels:
    cap = f"{lv.capacity_bytes / 1e6:10.1f} MB" if lv.capacity_bytes else f"{'-':>13s}"
    if lv.bandwidth_bytes_per_s:
        bw = f"{lv.bandwidth_bytes_per_s / 1e12:8.3f} TB/s"
    else:
        bw = f"{lv.bandwidth_low_bytes_per_s / 1e12:.2f}-{lv.bandwidth_high_bytes_per_s / 1e12:.1f} TB/s"
    print(f"{lv.name:28s} {cap} {bw:>16s}  [{lv.kind}]")

by_name = {lv.name: lv for lv in levels}
smem_bw = by_name["shared memory / L1"].bandwidth_bytes_per_s
reg_bw = by_name["registers"].bandwidth_bytes_per_s
# Second way for shared memory: bytes per clock per SM recovered from the chip-wide figure.
assert smem_bw / (h100.sm_count * h100.boost_clock_hz) == N_BANKS * BANK_BYTES == SHARED_MEM_BYTES_PER_CLOCK_PER_SM
# Second way for registers: the datasheet FP32 rate / 2 FLOP per FMA x 12 operand bytes per FMA.
reg_from_datasheet = h100.peak("fp32") / 2 * 12
print(f"\nregister operand bandwidth from the datasheet FP32 rate: {reg_from_datasheet / 1e12:.0f} TB/s "
      f"(derived from the clock: {reg_bw / 1e12:.0f} TB/s)")
assert abs(reg_from_datasheet / reg_bw - 1) < 0.01

# %%
fig = plot_hierarchy(levels, title=f"{h100.name}: capacity and bandwidth, both on log axes")
plt.show()

# %% [markdown]
# Read the picture twice. Bandwidth falls at every step we know, by the factors printed below.
# Capacity does not simply grow on the way down: the chip's registers, all SMs together, hold
# more than its shared memory and two thirds as much as its L2.

# %%
reg_cap = by_name["registers"].capacity_bytes
smem_cap = by_name["shared memory / L1"].capacity_bytes
l2_cap = by_name["L2"].capacity_bytes


def step_ratios(ladder):
    """(upper, lower, bandwidth ratio) for each pair of neighbouring levels with a known bandwidth."""
    known = [lv for lv in ladder if lv.bandwidth_bytes_per_s]
    return [(u.name, l.name, u.bandwidth_bytes_per_s / l.bandwidth_bytes_per_s) for u, l in zip(known, known[1:])]


for upper, lower, ratio in step_ratios(levels):
    print(f"{upper:28s} -> {lower:32s} {ratio:5.1f}x slower")
print(f"\nregister files together: {reg_cap / 1e6:.1f} MB = {reg_cap / l2_cap:.2f} x the L2 "
      f"and {reg_cap / smem_cap:.2f} x all shared memory")
assert smem_cap < reg_cap < l2_cap
assert all(ratio > 1 for *_, ratio in step_ratios(levels))

# %% [markdown]
# On the H100 the step from shared memory to HBM skips L2, whose bandwidth we could only bound.
# The A100 is the part where NVIDIA publishes it, and there the steps on either side of L2 are
# much smaller than a factor of ten:

# %%
a100 = get_accelerator("A100")
a100_levels = {lv.name: lv for lv in memory_hierarchy(a100)}
l2_a100 = a100_levels["L2"]
print(f"{a100.name} L2: {a100.l2_read_bytes_per_clock} B/clock x {a100.boost_clock_hz / 1e9:.2f} GHz = "
      f"{l2_a100.bandwidth_bytes_per_s / 1e12:.2f} TB/s  [{l2_a100.kind}]")
a100_steps = step_ratios(memory_hierarchy(a100))
for upper, lower, ratio in a100_steps:
    print(f"  {upper:28s} -> {lower:32s} {ratio:5.1f}x slower")
ratio = {(u, l): r for u, l, r in a100_steps}
l2_to_hbm = ratio[("L2", "device memory (HBM2e)")]
smem_to_l2 = ratio[("shared memory / L1", "L2")]
# Second way: the two steps multiply to the shared-memory-to-HBM step.
smem_to_hbm = a100_levels["shared memory / L1"].bandwidth_bytes_per_s / a100.mem_bandwidth
assert np.isclose(smem_to_l2 * l2_to_hbm, smem_to_hbm)
assert l2_to_hbm < 5 and smem_to_l2 < 5 < smem_to_hbm

# %% [markdown]
# ### Where HBM's bandwidth comes from: bus width times data rate
#
# A memory interface moves a fixed number of bits per pin per second, on every data pin at once:
#
# $$ \beta = \frac{\text{bus width (bits)} \times \text{data rate per pin (bit/s)}}{8}. $$
#
# HBM is wide and slow per pin: each stack has a 1024-bit interface (JEDEC JESD235 for HBM2,
# JESD238 for HBM3), and the H100 SXM's five active stacks give 5120 bits. GDDR is narrow and fast per pin: the
# RTX 4090's 384 bits run at 21 Gbit/s. The catalog records the bus width of most parts and the
# per-pin rate where the vendor (or the memory clock the CUDA driver reports, times two for
# double data rate) gives it; every entry is checked against its datasheet bandwidth, within 1%
# (datasheets round to three significant figures, at most 0.5% off, and the per-pin rate is
# rounded too):

# %%
from course_lib.hardware import list_accelerators
from course_lib.memory import BUS_BANDWIDTH_TOLERANCE, bus_bandwidth_bytes_per_s, bus_check

h100_bus = bus_bandwidth_bytes_per_s(h100.mem_bus_width_bits, h100.mem_data_rate_bits_per_s_per_pin)
print(f"H100 SXM: {h100.mem_bus_width_bits} bits x {h100.mem_data_rate_bits_per_s_per_pin / 1e9:.3f} Gbit/s / 8 "
      f"= {h100_bus / 1e12:.3f} TB/s (datasheet {h100.mem_bandwidth / 1e12:.2f} TB/s)\n")
print(f"{'accelerator':15s} {'memory':7s} {'bus bits':>8s} {'Gbit/s/pin':>11s} {'bus x rate':>11s} "
      f"{'datasheet':>10s} {'diff':>7s}  implied Gbit/s/pin")
checks = [bus_check(name) for name in list_accelerators()]
for c in checks:
    rate = f"{c.data_rate_bits_per_s_per_pin / 1e9:11.3f}" if c.data_rate_bits_per_s_per_pin else f"{'-':>11s}"
    bus_bw = f"{c.bus_bandwidth_bytes_per_s / 1e12:8.3f} TB/s" if c.bus_bandwidth_bytes_per_s else f"{'-':>13s}"
    diff = f"{c.rel_difference:+7.2%}" if c.rel_difference is not None else f"{'-':>7s}"
    implied = f"{c.implied_rate_bits_per_s_per_pin / 1e9:.2f}" if c.implied_rate_bits_per_s_per_pin else "no bus width published"
    print(f"{c.accelerator:15s} {c.mem_type:7s} {c.bus_width_bits or '-':>8} {rate} {bus_bw} "
          f"{c.bandwidth_bytes_per_s / 1e12:6.2f} TB/s {diff}  {implied}")
checked = [c for c in checks if c.agrees is not None]
assert checked and all(c.agrees for c in checked), [(c.accelerator, c.rel_difference) for c in checked]
print(f"\n{len(checked)} entries checked, all within {BUS_BANDWIDTH_TOLERANCE:.0%}; largest difference "
      f"{max(abs(c.rel_difference) for c in checked):.2%}")
# Second way for the H100: five 1024-bit stacks, each at the same per-pin rate.
assert np.isclose(5 * bus_bandwidth_bytes_per_s(1024, h100.mem_data_rate_bits_per_s_per_pin), h100_bus)
bus_by_name = {c.accelerator: c for c in checks}
v100_bus, h200_bus = bus_by_name["V100 SXM2"], bus_by_name["H200"]
rate_gain = h200_bus.implied_rate_bits_per_s_per_pin / v100_bus.implied_rate_bits_per_s_per_pin
width_gain = h200_bus.bus_width_bits / v100_bus.bus_width_bits
print(f"V100 (HBM2) -> H200 (HBM3e): per-pin rate {rate_gain:.1f}x, bus width {width_gain:.1f}x")
assert rate_gain > 2 * width_gain

# %% [markdown]
# Where no per-pin rate is published, the last column is the rate the datasheet implies: the
# H200's HBM3e about 6.25 Gbit/s, the L4's GDDR6 12.5. From the V100 to the H200, HBM's rate per
# pin grew far more than the width of the bus (the last line above).
#
# ### The memory wall
#
# Compute has grown faster than bandwidth. NVIDIA's data-centre GPUs, one per generation, dense
# FP16 peak and memory bandwidth, each relative to the V100:

# %%
from course_lib.memory import memory_wall
from course_lib.plots.memory import plot_memory_wall

wall = memory_wall()
print(f"{'part':15s} {'year':>5s} {'peak x':>7s} {'bandwidth x':>12s} {'ridge FLOP/B':>13s}")
for name, year, c, b, r in zip(wall.names, wall.years, wall.compute_index, wall.bandwidth_index, wall.ridge_points):
    print(f"{name:15s} {year:5d} {c:7.1f} {b:12.1f} {r:13.0f}")
g_c, g_b = wall.growth_per_year("compute"), wall.growth_per_year("bandwidth")
print(f"fitted growth per year: compute {g_c:.2f}x, bandwidth {g_b:.2f}x; over "
      f"{wall.years[-1] - wall.years[0]} years the ridge point rose {wall.ridge_points[-1] / wall.ridge_points[0]:.1f}x")
assert g_c > g_b and wall.compute_index[-1] > 2 * wall.bandwidth_index[-1]
# Second way: the ridge point's rise is the ratio of the two indices.
assert np.isclose(wall.ridge_points[-1] / wall.ridge_points[0], wall.compute_index[-1] / wall.bandwidth_index[-1])
assert (round(wall.compute_index[-1]), round(wall.bandwidth_index[-1]),
        round(wall.ridge_points[-1] / wall.ridge_points[0])) == (18, 9, 2)              # key points
fig = plot_memory_wall(wall)
plt.show()

# %% [markdown]
# Each generation needs more FLOP per byte to keep its arithmetic busy, so kernels that were
# compute-bound on the V100 (intensity between its ridge and the B200's) are memory-bound on
# the B200. Bandwidth did not keep up because it is set by pins and their rate (above): more
# stacks need more silicon interposer and package edge, and faster pins more power per bit.
# This is why the rest of the course keeps returning to bytes: reuse from caches and shared
# memory, fusion (lesson 06) and narrower formats (lesson 05).

# %% [markdown]
# ### Moving one tensor across each level
#
# The key and value cache of one layer for a batch of 8 sequences of 4096 tokens, 8 KV heads of
# dimension 128, in BF16: $2 \times 8 \times 4096 \times 8 \times 128 \times 2$ bytes.

# %%
kv_bytes = 2 * 8 * 4096 * 8 * 128 * 2
print(f"tensor: {kv_bytes / 1e6:.1f} MB")
rows = transfer_table(kv_bytes, h100)
for r in rows:
    t = (f"{r.t_s * 1e6:9.2f} us" if r.t_s is not None
         else f"{r.t_low_s * 1e6:.2f}-{r.t_high_s * 1e6:.1f} us")
    fits = {True: "fits", False: "does not fit", None: ""}[r.fits]
    print(f"{r.level.name:32s} {t:>16s}  {fits}")
t = {r.level.name: r.t_s for r in rows}
t_hbm, t_pcie = t["device memory (HBM3)"], t["host memory (PCIe 5.0 x16)"]
print(f"\nfrom the host it takes {t_pcie / t_hbm:.0f}x longer than from HBM")
assert np.isclose(t_pcie / t_hbm, h100.mem_bandwidth / (h100.host_link_bandwidth / 2))

# %% [markdown]
# ## 2. Caches: a set-associative LRU simulator
#
# A cache keeps whole **lines** (here 128 bytes). Line $\ell$ = address // line size may live only
# in set $\ell \bmod S$, which has $W$ slots (**ways**); capacity $= S \cdot W \cdot$ line size.
# When a set is full, the least recently used line leaves. `simulate_cache` runs any address trace
# through such a cache and reports each access as hit or miss.
#
# Four patterns over a working set of size $D$ with a cache of size $C$:
#
# * **sequential** (4-byte elements, 128-byte lines): while $D \le C$ only the first touch of each
#   line misses; beyond $C$, LRU evicts every line before its reuse, and only the other 31
#   elements of each line hit: hit rate $1 - 4/128$;
# * **strided** by 33 elements (132 bytes): every access opens a new line, so nothing hits
#   beyond $C$;
# * **random**: in steady state a random line is present with probability about $C/D$;
# * **tiled**: sweeping an 8 KiB tile eight times before moving on keeps the hit rate high
#   whatever $D$ is, which is what tiling a matmul does.

# %%
cap, line, ways = 32 * 1024, 128, 4
print(f"{cap // 1024} KiB, {line} B lines, {ways}-way: {n_sets(cap, line, ways)} sets")
sizes = np.unique(np.geomspace(cap / 16, cap * 32, 16).astype(np.int64))
rng = np.random.default_rng(0)
curves = [hit_rate_sweep(p, sizes, cap, line, ways, n_accesses=20000, rng=rng) for p in PATTERNS]
fig = plot_hit_rates(curves)
plt.show()

# %% [markdown]
# Each prediction above, checked against the simulator:

# %%
seq, strided, rand, tiled = curves
big = sizes >= 4 * cap
print(f"sequential beyond C: simulated {seq.hit_rate[big].mean():.4f}, predicted {1 - 4 / line:.4f}")
assert np.allclose(seq.hit_rate[big], 1 - 4 / line, atol=2e-3)

small_ws = 8 * 1024
trace = make_trace("sequential", small_ws, 40000)
fits = simulate_cache(trace, cap, line, ways)
print(f"sequential, 8 KiB: {fits.misses} misses = {small_ws // line} lines touched once")
assert fits.misses == small_ws // line

assert np.all(strided.hit_rate[big] == 0)

cap_fa = 4096                               # a small fully associative cache: 32 lines, 32 ways
d = 8 * cap_fa
fa = simulate_cache(make_trace("random", d, 30000, element_bytes=line, rng=rng), cap_fa, line, cap_fa // line)
print(f"random, fully associative, D = 8C: simulated {fa.hit_rate:.3f}, predicted C/D = {cap_fa / d:.3f}")
assert abs(fa.hit_rate - cap_fa / d) < 0.01
print(f"tiled at D = 32C: {tiled.hit_rate[-1]:.3f}; sequential {seq.hit_rate[-1]:.3f}")
assert tiled.hit_rate[-1] > seq.hit_rate[-1]

# %% [markdown]
# Size is not the only thing that matters. A stride of exactly $S \times$ line bytes sends every
# access to the same set: five lines then fight over four ways and every access misses, in a
# cache with room for far more lines (printed below).

# %%
sets = n_sets(cap, line, ways)
conflict_trace = np.tile(np.arange(5) * sets * line, 200)
r = simulate_cache(conflict_trace, cap, line, ways)
print(f"5 lines, stride {sets * line} B: hit rate {r.hit_rate:.2f} although they fill "
      f"{5 * line / cap:.1%} of a cache with room for {cap // line} lines")
assert r.hits == 0

# %% [markdown]
# ## 3. Your own memory ladder
#
# Two measurements on this machine. **Bandwidth**: read a working set of $D$ bytes many times in
# one NumPy call and divide bytes by time. **Latency**: follow a random cycle of pointers,
# `i = nxt[i]`; no load can start before the previous one returns, so the time per step is the
# latency of wherever the working set lives (plus a constant cost of the Python loop). The dashed
# lines are the cache sizes your operating system reports.

# %%
caches = cpu_cache_sizes()
print("caches reported:", {k: f"{v // 1024} KiB" for k, v in caches.items()} or "none")
bw_ladder = measure_bandwidth_ladder()
lat_ladder = measure_latency_ladder(rng=np.random.default_rng(1))
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
plot_bandwidth_ladder(bw_ladder, caches, ax=ax1, title="read bandwidth")
plot_latency_ladder(lat_ladder, caches, ax=ax2, title="pointer chase")
plt.show()

# %%
bw_small = bw_ladder.bandwidth_bytes_per_s[bw_ladder.working_set_bytes <= 256 * 1024].max()
bw_big = bw_ladder.bandwidth_bytes_per_s[-1]
lat_small, lat_big = lat_ladder.ns_per_step[0], lat_ladder.ns_per_step[-1]
print(f"in cache: {bw_small / 1e9:.0f} GB/s; at {bw_ladder.working_set_bytes[-1] >> 20} MiB: {bw_big / 1e9:.0f} GB/s")
print(f"pointer chase: {lat_small:.0f} ns per step in cache, {lat_big:.0f} ns at "
      f"{lat_ladder.working_set_bytes[-1] >> 20} MiB; extra latency {lat_big - lat_small:.0f} ns")
line_time_stream = 64 / bw_big * 1e9          # assuming 64-byte lines, as on x86
walk = lat_big - lat_small                     # per line, without the Python loop's own cost
print(f"streaming delivers a 64-byte line every {line_time_stream:.2f} ns; the dependent walk one every "
      f"{walk:.0f} ns: {walk / line_time_stream:.0f}x apart")
assert bw_small > bw_big and lat_big > lat_small

# %% [markdown]
# Bandwidth and latency are different quantities. A stream keeps many loads in flight, so a line
# arrives every few nanoseconds although each one took far longer to come back; a pointer chase
# has exactly one in flight. GPUs are built on the first kind of access, with thousands of
# threads each keeping loads in flight (lesson 01).
#
# ## 4. Shared memory bank conflicts
#
# Shared memory is split into 32 banks, each 4 bytes wide: word $w$ lives in bank $w \bmod 32$.
# A warp's load is served in one pass when its 32 lanes touch 32 different banks, or read the
# very same word (a broadcast). Otherwise it takes as many passes as the largest number of
# *distinct* words any one bank must deliver, the **conflict degree**. When lane $t$ reads word
# $t \cdot s$, the degree is $\gcd(s, 32)$.

# %%
strides = np.arange(1, 34)
formula = [strided_conflict_degree(s) for s in strides]
counted = [conflict_degree(np.arange(32) * s * BANK_BYTES) for s in strides]
assert formula == counted == [int(np.gcd(s, 32)) for s in strides]
print("conflict-free strides:", [int(s) for s, d in zip(strides, formula) if d == 1][:8], "... (the odd ones)")
print("stride 32 (a column of a 32-wide float tile):", strided_conflict_degree(32), "passes")

# %% [markdown]
# A 32 x 32 tile of floats stored row by row puts a whole column in one bank, so reading a
# column is a 32-way conflict. One word of padding per row (33 words) shifts each row by one bank:

# %%
padded = [strided_conflict_degree(s + 1) for s in strides]
print(f"column of a 32-wide tile: {column_read_conflict_degree(32)} passes; padded to 33: "
      f"{column_read_conflict_degree(32, pad_words=1)}")
lanes = np.arange(32)
assert conflict_degree(lanes * 33 * BANK_BYTES) == 1 and conflict_degree(lanes * 32 * BANK_BYTES) == 32
fig = plot_bank_conflicts(strides, formula, padded)
plt.show()

# %% [markdown]
# ## 5. Copying while computing: asynchronous copies, TMA and double buffering
#
# A kernel that loads a tile, computes on it and loads the next serialises the two. Since Ampere,
# `cp.async` copies from global to shared memory without passing through registers, and Hopper's
# tensor memory accelerator (TMA) moves a whole multidimensional tile with one instruction; both
# let the SM compute while the copy runs. With two buffers, tile $i+1$ arrives while tile $i$ is
# computed. For $n$ tiles:
#
# $$ T_{1\,\text{buffer}} = n\,(t_\text{copy} + t_\text{compute}), \qquad
#    T_{2\,\text{buffers}} = t_\text{copy} + t_\text{compute} + (n-1)\max(t_\text{copy}, t_\text{compute}). $$
#
# The copy hides completely when $t_\text{copy} \le t_\text{compute}$. For a $M \times N$ output
# tile stepping through $K$ in BF16, one step copies $2K(M+N)$ bytes and computes $2MNK$ FLOP. Give
# one SM its share of HBM and of peak: the condition becomes $MN/(M+N) \ge I^*$, the ridge point
# of lesson 04.

# %%
bw_per_sm = h100.mem_bandwidth / h100.sm_count
flops_per_sm = h100.peak("bf16") / h100.sm_count
ridge = h100.ridge_point("bf16")
for m, n_ in [(128, 128), (256, 128), (256, 256)]:
    k = 64
    t_copy = 2 * k * (m + n_) / bw_per_sm
    t_comp = 2 * m * n_ * k / flops_per_sm
    hidden = copy_hidden(t_copy, t_comp)
    print(f"tile {m}x{n_}, k={k}: t_copy {t_copy * 1e6:.3f} us, t_compute {t_comp * 1e6:.3f} us -> "
          f"{'hidden' if hidden else 'exposed'}  (MN/(M+N) = {m * n_ / (m + n_):.0f} vs ridge {ridge:.0f})")
    assert hidden == (m * n_ / (m + n_) >= ridge)

# Which square tile would hide its copy, and could one SM hold it? Its FP32 accumulators alone:
m_min = 2 * ridge                       # square tile with MN/(M+N) = M/2 = I*
acc_bytes = 4 * m_min ** 2
print(f"a square tile needs M >= {m_min:.0f}: {acc_bytes / 1024:.0f} KiB of FP32 accumulators "
      f"against a {h100.register_file_bytes_per_sm // 1024} KiB register file")
assert acc_bytes > h100.register_file_bytes_per_sm

# %% [markdown]
# So no output tile that fits on one SM hides its copies if every tile comes from HBM. Real
# matmuls get away with 128- or 256-wide tiles because neighbouring thread blocks read the same
# rows and columns, and most of their loads hit in L2. The timeline of eight tiles of the
# 128 x 128 case:

# %%
t_copy = 2 * 64 * 256 / bw_per_sm
t_comp = 2 * 128 * 128 * 64 / flops_per_sm
one = pipeline_timeline(8, t_copy, t_comp, buffers=1)
two = pipeline_timeline(8, t_copy, t_comp, buffers=2)
fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(7.5, 4), sharex=True)
plot_pipeline(one, ax=ax1)
plot_pipeline(two, ax=ax2)
ax1.set_xlabel("")                     # one time axis, shared, labelled once at the bottom
plt.show()
print(f"one buffer {one.total_s * 1e6:.2f} us, two {two.total_s * 1e6:.2f} us: {one.total_s / two.total_s:.2f}x faster")
assert np.isclose(two.total_s, pipelined_time_s(8, t_copy, t_comp, 2))
assert np.isclose(two.total_s, t_comp + 8 * t_copy)        # copy-bound: the copies set the pace

# %% [markdown]
# ### What TMA does
#
# Without TMA, a tile copy is work for every thread: with `cp.async`, each thread computes the
# addresses of its pieces and copies 16 bytes per instruction (a warp issues 32 threads' copies
# at once, so count per thread or per warp, but say which). Hopper's **Tensor Memory
# Accelerator** takes the whole tile from one instruction (`cp.async.bulk.tensor`), issued by
# one thread: a *tensor map* made once on the host describes the array in global memory (base,
# sizes, strides, element type, the box to copy, at most 256 elements along each dimension), the
# unit generates every address itself, handles the tile's edges, and signals an `mbarrier` in
# shared memory when the bytes have landed (H100 whitepaper, "Tensor Memory Accelerator";
# CUDA C++ Programming Guide, "Asynchronous Data Copies using TMA"). The other threads never
# touch the copy, so the warps that compute keep their registers and issue slots for math;
# FlashAttention-3 dedicates one producer warp to TMA and leaves the rest to the tensor cores.
# For one 128 x 64 BF16 tile, copied by a block of 128 threads:

# %%
from course_lib.memory import multicast_l2_reads, tile_copy_work

work = tile_copy_work(128, 64, bytes_per_element=2, threads=128)
print(f"{work.tile_bytes // 1024} KiB tile: {work.copy_instructions} per-thread cp.async copies "
      f"({work.instructions_per_thread:.0f} per thread, each with its own address), issued as "
      f"{work.copy_warp_instructions} warp instructions, against {work.tma_instructions} TMA instruction "
      f"from one thread")
assert work.copy_instructions == 128 * 64 * 2 // 16
assert work.copy_instructions == work.threads * work.instructions_per_thread
assert work.copy_warp_instructions == work.copy_instructions // 32      # 32 lanes per warp instruction
for cluster in (2, 4):
    without, with_ = multicast_l2_reads(work.tile_bytes, cluster)
    print(f"a cluster of {cluster} blocks that all need this tile: {without / 1024:.0f} KiB read from L2 "
          f"without multicast, {with_ / 1024:.0f} KiB with TMA multicast")

# %% [markdown]
# The last line is the other half of TMA: **multicast**. Thread blocks of a *cluster* (Hopper
# groups up to 8 blocks portably, on neighbouring SMs) that need the same tile, such as the
# blocks computing one row of output tiles of a matmul, all need the same tile of $A$; one TMA
# load with multicast reads it from L2 once and writes it into every block's shared memory, so
# L2 traffic for that operand drops by the cluster size.

# %% [markdown]
# ## 6. Explore
#
# The cache explorer redraws the four hit-rate curves for any cache; try 1 way against 16, a
# stride of 32 against 33, and a tile larger than the cache. The pipeline explorer moves the
# copy and compute times across each other.

# %%
from course_lib.widgets.memory import cache_explorer

cache_explorer()

# %%
from course_lib.widgets.memory import pipeline_explorer

pipeline_explorer()

# %% [markdown]
# ## Optional: a real GPU
#
# With PyTorch and a CUDA GPU, this cell times a device-to-device copy and compares it with the
# catalog; elsewhere it prints one line.

# %%
from course_lib.measure import gpu_status

has_gpu, message = gpu_status()
if not has_gpu:
    print(message)
else:
    import torch

    src = torch.empty(2 ** 28, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    dst.copy_(src)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        dst.copy_(src)
    end.record()
    torch.cuda.synchronize()
    seconds = start.elapsed_time(end) / 1e3 / 10
    print(f"{torch.cuda.get_device_name()}: copy reads and writes {2 * src.numel() / seconds / 1e12:.2f} TB/s")

# %% [markdown]
# ## Misconceptions
#
# **"Registers are a few tens of kilobytes per SM."** (one of the seed texts says so.) Every SM
# in the catalog's NVIDIA parts has a 256 KB register file; on the H100 the register files hold more
# than all of its shared memory together:

# %%
print(f"H100: {h100.register_file_bytes_per_sm // 1024} KiB of registers per SM, {reg_cap / 1e6:.1f} MB on the chip, "
      f"against {smem_cap / 1e6:.1f} MB of shared memory")
assert h100.register_file_bytes_per_sm == 256 * 1024

# %% [markdown]
# **"HBM is the slowest level."** (another seed.) Host memory reached over PCIe is slower still:

# %%
host = by_name["host memory (PCIe 5.0 x16)"]
print(f"HBM {h100.mem_bandwidth / 1e12:.2f} TB/s vs host over PCIe {host.bandwidth_bytes_per_s / 1e9:.0f} GB/s "
      f"per direction: {h100.mem_bandwidth / host.bandwidth_bytes_per_s:.0f}x slower")
assert host.bandwidth_bytes_per_s < h100.mem_bandwidth

# %% [markdown]
# **"If the data fits in the cache, it hits."** Placement matters: the five lines above missed
# every time in a cache far larger than they are (section 2 printed the fraction they fill).
# **"Two lanes in one bank always conflict."** Lanes that read the same word are served by one
# broadcast:

# %%
same_word = np.zeros(32, dtype=np.int64)
two_words = np.r_[np.zeros(16, dtype=np.int64), np.full(16, 32 * BANK_BYTES)]
print(f"32 lanes, one word: {conflict_degree(same_word)} pass; two words in bank 0: {conflict_degree(two_words)} passes")
assert conflict_degree(same_word) == 1 and conflict_degree(two_words) == 2

# %% [markdown]
# **"Asynchronous copies make memory traffic free."** Only while $t_\text{copy} \le
# t_\text{compute}$. Past that point the pipeline runs at the copy's pace, and a faster tensor
# core changes nothing:

# %%
slow = pipelined_time_s(8, 2.0, 1.0)
faster_math = pipelined_time_s(8, 2.0, 0.5)
print(f"copy 2, compute 1 -> {slow}; compute halved -> {faster_math}: {slow / faster_math:.2f}x")
assert faster_math / slow > 0.9

# %% [markdown]
# ## Exercises
#
# `my_work/03_memory_hierarchy.py` (answers in `solutions/03_memory_hierarchy.py`): predict a
# hit rate, time a tensor's trip down a real accelerator's ladder, explore the cache simulator,
# write the bank-conflict rule yourself, and size a chip's HBM to keep its ridge point (03.5); then
# diagnose which change pays in a double-buffered kernel from its timeline (03.6), and choose the
# row padding that stops a column walk thrashing a cache while keeping shared-memory bank
# conflicts at most 4-way (03.7).
# `my_work/` is your own copy of the exercises: `make lab` makes it, `make workspace` refreshes
# it without touching your answers, and `make progress` lists which exercises pass.
#
# ## Key points
#
# * Device-memory bandwidth is bus width x data rate per pin / 8 (section 1; every catalog entry
#   with both agrees with its datasheet within 1%); HBM is wide, GDDR fast per pin.
# * Compute has grown faster than bandwidth: from the V100 to the B200 the dense FP16 peak rose
#   18x and the bandwidth 9x, so the ridge point doubled (the memory wall, section 1).
# * TMA copies a whole tile from one instruction issued by one thread, generating the addresses
#   itself, and can multicast it to every block of a cluster (section 5).
# * Bandwidth falls at each step down the hierarchy, but not by a fixed factor: on the A100 the
#   steps either side of L2 are each well under ten (L2 to HBM about 3.5x, section 1), while
#   the links below HBM cost more; $t = Q / \beta$ says what a tensor costs at each level.
# * NVIDIA publishes few on-chip bandwidths. Shared memory is 128 B per clock per SM (section 1
#   derives the chip-wide figure); L2 reads are 5120 B per clock on the A100 and 2048 on the V100
#   (A100 whitepaper); for Hopper and later L2 can only be bounded from the catalog.
# * Hit rate depends on the pattern, not only the size: sequential sweeps live on spatial
#   locality, tiles on reuse in time, and strides can collide in one set.
# * Latency and bandwidth differ by the number of requests in flight; your CPU showed both.
# * Bank conflicts: degree $\gcd(s, 32)$ for stride $s$ words; pad a 32-wide tile to 33.
# * Double buffering hides the copy exactly when $t_\text{copy} \le t_\text{compute}$, which for
#   a matmul tile is the ridge point again.
