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
# # 01 · Throughput against latency: why a GPU needs thousands of threads in flight
#
# **Learning objectives.** After this lesson you can
#
# 1. say why a CPU core is built to finish one instruction stream fast and a GPU to finish many
#    streams at a high total rate, and why ML workloads suit the second design;
# 2. apply Little's law, $\text{in flight} = \text{throughput} \times \text{latency}$, to an
#    accelerator's memory system, per GPU and per SM, and turn the answer into resident warps;
# 3. read the saturation knee of a latency-hiding simulation and check it against the formula;
# 4. compute a kernel's occupancy from its block size, registers and shared memory with NVIDIA's
#    allocation rules, and name the resource that limits it;
# 5. measure the fixed cost of a call on your own CPU and the work size at which throughput saturates.
#
# Hardware figures come from the cited catalog in `course_lib/data/accelerators.toml`.

# %%
import numpy as np
import matplotlib.pyplot as plt

from course_lib.hardware import get_accelerator, list_accelerators
from course_lib.latency import (ASSUMED_DRAM_LATENCY_S, LaunchError, analytic_utilisation,
                                bytes_in_flight, littles_law, occupancy, occupancy_curve,
                                simulate_latency_hiding, warps_to_saturate)
from course_lib.plots import use_course_style
from course_lib.plots.latency import plot_call_overhead, plot_latency_hiding, plot_occupancy

use_course_style()
h100 = get_accelerator("H100 SXM")
print(f"{h100.name}: {h100.source}")

# %% [markdown]
# ## 1. Two designs: latency machines and throughput machines
#
# A CPU core spends its transistors on making *one* thread fast: deep caches, branch prediction,
# out-of-order execution. A GPU spends them on many simple lanes and on keeping the state of
# thousands of threads on chip at once, so that when one group of threads waits for memory,
# another group is ready to issue. It does not make any single access faster; it overlaps them.
#
# That only works when there is a great deal of independent work. ML workloads provide it: a
# matrix multiplication or an elementwise activation applies the same operation to millions of
# elements that do not depend on one another (data parallelism). How many threads does the
# H100 SXM hold at once?

# %%
resident_threads = h100.sm_count * h100.max_threads_per_sm
print(f"{h100.sm_count} SMs x {h100.max_threads_per_sm} threads = {resident_threads:,} resident threads "
      f"({h100.sm_count * h100.max_warps_per_sm:,} warps of {h100.warp_size})")
assert resident_threads == h100.sm_count * h100.max_warps_per_sm * h100.warp_size

# %% [markdown]
# ### The gap, in numbers: a server CPU against a GPU
#
# The course's CPU list (`course_lib/data/cpus.toml`, vendor figures with sources) holds two
# server processors of the H100's time. Their peak is cores x FLOP per clock per core x clock;
# their bandwidth, memory channels x 8 bytes x transfers per second. A CPU under vector load runs
# somewhere between its base clock and a boost clock, as power allows, so the peak is a range:
# the table shows it at the base clock, and the line after it at the boost clock (the EPYC's
# all-core boost; for the Xeon Intel states only a one-core maximum turbo, an upper bound).
# Against the H100 SXM, with Little's law from section 2 at an assumed CPU DRAM latency of
# 100 ns and the GPU's assumed 600 ns:

# %%
from course_lib.latency import cpu_gpu_gap, get_cpu, list_cpus

print(f"{'':20s} {'FP32 TF/s':>10s} {'best TF/s':>10s} {'GB/s':>7s} {'threads':>8s} {'B in flight/thread':>19s}")
gaps = [cpu_gpu_gap(name, "H100 SXM") for name in list_cpus()]
for gap in gaps:
    cpu = get_cpu(gap.cpu)
    assert np.isclose(cpu.channel_bandwidth, cpu.mem_bandwidth)        # second way: the vendor's figure
    print(f"{gap.cpu:20s} {gap.cpu_fp32_flops / 1e12:10.1f} {gap.cpu_best_flops / 1e12:10.1f} "
          f"{gap.cpu_bandwidth / 1e9:7.0f} {gap.cpu_threads:8d} {gap.in_flight_per_thread_cpu:19.0f}")
print(f"{gaps[0].gpu:20s} {gaps[0].gpu_fp32_flops / 1e12:10.1f} {gaps[0].gpu_best_flops / 1e12:10.1f} "
      f"{gaps[0].gpu_bandwidth / 1e9:7.0f} {gaps[0].gpu_threads:8d} {gaps[0].in_flight_per_thread_gpu:19.1f}")
for gap in gaps:
    cpu = get_cpu(gap.cpu)
    print(f"{gap.cpu}: FP32 {gap.cpu_fp32_flops / 1e12:.1f} TFLOP/s at {cpu.base_clock_hz / 1e9:.2f} GHz base, "
          f"{gap.cpu_fp32_flops_boost / 1e12:.1f} at {cpu.boost_clock_hz / 1e9:.2f} GHz ({cpu.boost_clock_kind})")
for gap in gaps:
    print(f"H100 SXM / {gap.cpu}: FP32 {gap.fp32_ratio_boost:.0f}x to {gap.fp32_ratio:.0f}x, fastest path "
          f"{gap.best_ratio:.0f}x, bandwidth {gap.bandwidth_ratio:.0f}x, resident threads {gap.thread_ratio:,.0f}x")
epyc, xeon = gaps
assert np.isclose(epyc.cpu_fp32_flops_boost, 96 * 32 * 3.55e9)          # 10.9 TFLOP/s at 3.55 GHz
assert round(epyc.fp32_ratio_boost) == 6 and round(epyc.fp32_ratio) == 9
assert all(5 < g.bandwidth_ratio < 15 and 4 < g.fp32_ratio_boost < g.fp32_ratio < 15 for g in gaps)
assert epyc.best_ratio > 100 > xeon.best_ratio          # AMX gives the Xeon a matrix unit
assert epyc.in_flight_per_thread_cpu > 20 * epyc.in_flight_per_thread_gpu

# %% [markdown]
# On vector FP32 and on bandwidth, the GPU leads a whole server socket by about one order of
# magnitude, not three: six to nine times on FP32 against the EPYC, depending on the clock it
# holds, and about seven on bandwidth; the larger gap is its tensor cores. The EPYC has no
# matrix unit (its AVX-512 BF16 dot products compute two products per FP32 lane, so at most
# twice its FP32 rate, not counted here); the Xeon's AMX narrows the gap to the last line's
# factor, computed at its base clock (a higher clock narrows it further).
# The designs differ most in the last column. Both memory systems obey Little's law, but a CPU
# thread must keep hundreds of bytes in flight, several cache lines, which one core manages by
# running ahead out of order (instruction-level parallelism) and by its prefetchers; a GPU
# thread needs only a few bytes, one load, because tens of thousands of threads share the work.
#
# Your own CPU, measured: the best of a few float32 matmuls (well under a second):

# %%
from course_lib.measure import measure_matmul_flops

mine = measure_matmul_flops(384, repeats=5, min_time_s=0.15)
print(f"this machine: {mine / 1e9:.1f} GFLOP/s in a 384^3 float32 matmul; the H100 SXM's catalog peak is "
      f"{h100.peak('fp32') / mine:,.0f}x that in FP32 and {h100.peak('bf16') / mine:,.0f}x in dense BF16")

# %% [markdown]
# ## 2. Little's law: how much must be in flight
#
# A pipeline that completes $T$ operations per second, each taking $L$ seconds from start to
# finish, holds on average
#
# $$ N = T \times L $$
#
# operations in flight (J. D. C. Little, *Operations Research* 9(3), 1961). For a memory system,
# $T$ is the bandwidth in bytes/s and $L$ the load latency: to run at full bandwidth, this many
# bytes must have been requested and not yet returned. NVIDIA does not publish its HBM load
# latency; microbenchmark studies measure several hundred nanoseconds, and this lesson
# **assumes** a round figure, kept in one place (`ASSUMED_DRAM_LATENCY_S`), and shows how the
# answer moves with it. For the H100 SXM:

# %%
latency_s = ASSUMED_DRAM_LATENCY_S
in_flight = bytes_in_flight(h100.mem_bandwidth, latency_s)
print(f"{h100.mem_bandwidth / 1e12:.2f} TB/s x {latency_s * 1e9:.0f} ns = {in_flight / 1e6:.2f} MB in flight "
      f"(assumed latency)")

# %% [markdown]
# That total is spread over the SMs. Each SM must keep its share outstanding; one warp loading
# one 4-byte float per thread has $32 \times 4 = 128$ bytes in flight, so the warps needed per SM are
#
# $$ W = \frac{T L / \text{SMs}}{32 \times b \times k} $$
#
# for $b$ bytes per load and $k$ independent loads per thread before it must wait.

# %%
law = littles_law(h100, latency_s, bytes_per_thread=4, loads_in_flight_per_thread=1)
print(f"per SM: {law.bytes_in_flight_per_sm / 1e3:.1f} kB in flight = "
      f"{law.warps_needed_per_sm:.0f} warps of 128 B; the SM holds at most {law.max_warps_per_sm}")
assert np.isclose(law.bytes_in_flight_per_sm * h100.sm_count, in_flight)
assert law.warps_needed_per_sm > h100.max_warps_per_sm

wide = littles_law(h100, latency_s, bytes_per_thread=16, loads_in_flight_per_thread=2)
print(f"with 16-byte loads, two in flight per thread: {wide.warps_needed_per_sm:.1f} warps per SM")
assert np.isclose(wide.warps_needed_per_sm * 8, law.warps_needed_per_sm)

# %% [markdown]
# Even a fully occupied SM cannot cover the latency with one 4-byte load per thread: kernels that
# stream memory fast issue wide (16-byte) loads and several independent loads per thread, so each
# warp carries more bytes in flight. The same calculation across the catalog, where the numbers
# exist:

# %%
print(f"{'accelerator':15s} {'TB/s':>6s} {'MB in flight':>13s} {'kB per SM':>10s} {'warps/SM (4 B)':>15s} {'max':>4s}")
for name in list_accelerators("gpu"):
    acc = get_accelerator(name)
    if acc.max_warps_per_sm is None:
        continue
    row = littles_law(acc, latency_s)
    print(f"{acc.name:15s} {acc.mem_bandwidth / 1e12:6.2f} {row.bytes_in_flight / 1e6:13.2f} "
          f"{row.bytes_in_flight_per_sm / 1e3:10.1f} {row.warps_needed_per_sm:15.0f} {acc.max_warps_per_sm:4d}")
for lat in (400e-9, 800e-9):
    print(f"at {lat * 1e9:.0f} ns the H100 SXM needs {littles_law(h100, lat).warps_needed_per_sm:.0f} warps per SM")

# %% [markdown]
# ## 3. A latency-hiding simulator
#
# Model one warp scheduler. Each warp issues $C$ cycles of instructions, then waits $L$ cycles for
# memory, again and again. A free scheduler picks the warp that has been ready longest. One warp
# keeps the scheduler busy $C$ out of every $C+L$ cycles; $N$ warps at most $N$ times that:
#
# $$ U(N) = \min\left(1, \frac{N C}{C + L}\right), \qquad N_{\text{knee}} = \left\lceil \frac{C+L}{C} \right\rceil. $$
#
# This is Little's law again: $N$ warps in flight, each cycle taking $C + L$, for a throughput of
# one burst per $C$ cycles. Take 40 cycles of compute and 560 cycles of latency; the simulator
# (vectorised over every $N$ at once) should land exactly on the formula.

# %%
C, L = 40, 560
n = np.arange(1, 33)
sweep = simulate_latency_hiding(n, C, L)
knee = warps_to_saturate(C, L)
print(f"knee: ceil((C + L) / C) = {knee} warps; "
      f"largest gap between simulation and formula {sweep.max_abs_error:.2e}")
assert sweep.max_abs_error < 1e-9
assert sweep.utilisation[n == knee - 1][0] < 1 and np.isclose(sweep.utilisation[n == knee][0], 1.0)

# %% [markdown]
# Real bursts and latencies vary. With every burst and latency drawn within ±50 % of its mean,
# the simulated curve bends below the formula near the knee (warps bunch up and the scheduler
# idles although enough warps exist on average) and agrees far from it.

# %%
rng = np.random.default_rng(2024)
jittered = simulate_latency_hiding(n, C, L, jitter=0.5, rng=rng)
far = (n <= knee // 2) | (n >= 2 * knee)
gap = np.abs(jittered.utilisation - jittered.analytic)
print(f"with jitter: largest gap {gap.max():.3f} at N = {n[gap.argmax()]}, "
      f"largest gap away from the knee {gap[far].max():.3f}")
assert gap[far].max() < 0.03
fig, ax = plt.subplots(figsize=(7.5, 4.2))
plot_latency_hiding(sweep, ax=ax)
ax.plot(n, jittered.utilisation, "s", mfc="none", color="#1f77b4", ms=5, label="simulated, ±50% jitter")
ax.legend(fontsize=8, loc="lower right")
plt.show()

# %% [markdown]
# An H100 SM has four schedulers (one per sub-partition, per the H100 whitepaper); with
# $S$ schedulers the knee moves to $S(C+L)/C$ warps per SM. At these $C$ and $L$ that is just
# under the most an SM holds, so only an almost fully occupied SM hides this latency. (On the
# hardware each scheduler owns a fixed set of warps; the simulator pools them, which gives the
# same knee when $N$ is a multiple of $S$.)

# %%
four = simulate_latency_hiding(np.array([16, 32, 64]), C, L, schedulers=4, bursts=2000)
print("4 schedulers: utilisation at 16, 32, 64 warps =", np.round(four.utilisation, 3),
      f"; knee at {warps_to_saturate(C, L, 4)} warps; an SM holds {h100.max_warps_per_sm}")
assert np.allclose(four.utilisation, analytic_utilisation(np.array([16, 32, 64]), C, L, 4))
assert warps_to_saturate(C, L, 4) <= h100.max_warps_per_sm < 2 * warps_to_saturate(C, L, 4)

# %% [markdown]
# ## 4. Occupancy: how many warps actually fit
#
# Warps are resident only while their registers and shared memory are allocated. NVIDIA's
# occupancy calculator (the rules in `cuda_occupancy.h` of the CUDA toolkit) computes, for a
# block of $t$ threads using $r$ registers per thread and $s$ bytes of shared memory:
#
# - warps per block $w = \lceil t / 32 \rceil$;
# - registers per warp $\lceil 32 r / 256 \rceil \times 256$, allocated from each of the SM's four
#   sub-partitions separately, so warps by registers $= 4 \lfloor (R_{SM}/4) / \text{regs per warp} \rfloor$;
# - shared memory per block $\lceil (s + \text{reserved}) / 128 \rceil \times 128$, with 1 KiB reserved
#   per block from compute capability 8.0 on;
# - blocks per SM = the smallest of the limits set by blocks, warps, registers and shared memory
#   (a block that allocates no shared memory is not limited by it). The resource that sets it is the
#   *limiter*; when two allow the same number of blocks, both bind, and `occupancy()` names both.
#
# Occupancy is resident warps divided by the maximum (64 on the H100). A kernel with 256-thread
# blocks and 128 registers per thread:

# %%
occ = occupancy(256, 128, 0, "H100 SXM")
print(f"{occ.registers_per_warp} registers per warp; limits {occ.block_limits}")
print(f"-> {occ.blocks_per_sm} blocks, {occ.warps_per_sm} warps per SM, occupancy {occ.occupancy:.2f}, "
      f"limited by {occ.limiter}")
# Second way: the register file divided by what one block needs.
regs_per_block = 256 * 128
assert occ.blocks_per_sm == h100.registers_per_sm // regs_per_block
assert occ.warps_per_sm == occ.blocks_per_sm * 256 // 32

# %% [markdown]
# Halving the registers doubles the resident warps; halving them again ties the register file
# with the warp limit; shared memory can bind instead, and the per-block reservation counts; a
# configuration that does not fit at all is refused:

# %%
half = occupancy(256, 64, 0, "H100 SXM")
smem = occupancy(128, 32, 48 * 1024, "H100 SXM")
tie = occupancy(256, 32, 0, "H100 SXM")
print(f"64 registers: {half.warps_per_sm} warps ({half.occupancy:.2f})")
print(f"32 registers: {tie.warps_per_sm} warps, limited by {tie.limiter}")
print(f"48 KiB shared per 128-thread block: {smem.shared_mem_allocated_per_block} B allocated, "
      f"{smem.blocks_per_sm} blocks, limited by {smem.limiter}")
assert half.warps_per_sm == 2 * occ.warps_per_sm
assert tie.limiters == ("warps", "registers") and tie.warps_per_sm == h100.max_warps_per_sm
assert smem.blocks_per_sm == h100.shared_mem_bytes_per_sm // (48 * 1024 + h100.shared_mem_reserved_bytes_per_block)
try:
    occupancy(1024, 128, 0, "H100 SXM")
except LaunchError as exc:
    print(f"1024 threads x 128 registers: {exc}")

fig = plot_occupancy(occ, occupancy_curve(256, 0, "H100 SXM"))
plt.show()

# %% [markdown]
# Put the two halves together: the 16 warps this kernel keeps resident give, with four schedulers
# and the cycles of section 3, a utilisation of

# %%
u = analytic_utilisation(occ.warps_per_sm, C, L, 4)
print(f"U(16 warps, 4 schedulers) = {u:.3f}; with 64 registers per thread: "
      f"{analytic_utilisation(half.warps_per_sm, C, L, 4):.3f}")
assert np.isclose(u, 16 * C / (4 * (C + L)))

# %% [markdown]
# Occupancy is a means, not the goal: a kernel with more independent instructions per warp (a
# larger $C$, or several loads in flight per thread) needs fewer warps. Many of the fastest matmul
# kernels run at low occupancy on purpose, spending registers on tiles that raise their intensity.

# %% [markdown]
# ### Register pressure and spills
#
# Registers are the scarcest thing a kernel holds. A kernel whose code needs more registers per
# thread than the compiler is allowed to use (a cap set with `-maxrregcount` or
# `__launch_bounds__`) **spills** the rest to *local memory*: per-thread storage in device memory,
# cached in L1 and L2, as slow as a global access when it misses (CUDA C++ Programming Guide,
# "Local Memory"). Capping raises occupancy with the same allocation rules as above, and costs a
# store and a reload of every spilled register each time the code needs it. A kernel that needs
# 168 registers per thread in 256-thread blocks on the H100:

# %%
from course_lib.latency import H100_L1_SHARED_BYTES_PER_SM, register_pressure

caps = register_pressure(256, 168, [255, 128, 96, 64], accelerator="H100 SXM")
print(f"{'cap':>4s} {'spilled':>8s} {'warps/SM':>9s} {'occupancy':>10s} {'U (sec. 3)':>11s} "
      f"{'spill B/thread/pass':>20s} {'spilled KiB/SM':>15s}")
for row in caps:
    u_row = analytic_utilisation(row.warps_per_sm, C, L, 4)
    print(f"{row.cap:4d} {row.spilled_per_thread:8d} {row.warps_per_sm:9d} {row.occupancy:10.3f} {u_row:11.3f} "
          f"{row.spill_bytes_per_thread_per_pass:20d} {row.spill_footprint_per_sm / 1024:15.0f}")
none, c128, c96, c64 = caps
# Second way for the warps: the occupancy calculator at the registers actually used.
assert all(r.warps_per_sm == occupancy(256, r.registers_used, 0, "H100 SXM").warps_per_sm for r in caps)
assert c96.warps_per_sm == c128.warps_per_sm       # whole blocks only: 96 registers buy nothing over 128
assert c64.spill_footprint_per_sm > H100_L1_SHARED_BYTES_PER_SM > c128.spill_footprint_per_sm
print(f"the H100 SM has {H100_L1_SHARED_BYTES_PER_SM // 1024} KiB of L1 and shared memory together")

# %% [markdown]
# Each step down buys warps and pays in traffic. At 128 registers the occupancy doubles and
# the 40 spilled registers of the resident threads take less than the SM's L1, so most reloads
# can hit on chip; at 96 the extra spills buy no warps at all, because resident warps come in
# whole blocks; at 64 the occupancy doubles again, but the spills no longer fit in L1 and stream
# from L2 or HBM, several hundred bytes per thread per pass, likely more than the kernel's own
# loads. Nsight Compute reports spills as local-memory traffic (`local_load`/`local_store`
# bytes); `nvcc -Xptxas -v` prints them at compile time.

# %% [markdown]
# ## 5. Fixed cost against throughput, measured on your CPU
#
# Every call has a fixed cost before it streams any data. Timing `np.add` on arrays of 1 to
# $2^{20}$ floats fits Hockney's model
#
# $$ t(n) = t_0 + \frac{n}{r_\infty}, \qquad r(n) = \frac{n}{t(n)} = \frac{r_\infty}{1 + n_{1/2}/n}, \qquad n_{1/2} = t_0\, r_\infty, $$
#
# so half the asymptotic rate needs $n_{1/2}$ elements per call, and 90 % needs $9\,n_{1/2}$.
# It takes well under a second.

# %%
from course_lib.measure.latency import measure_call_overhead, size_for_fraction

calls = measure_call_overhead(max_log2_size=20, budget_s=0.4)
print(f"fixed cost t0 = {calls.t0_s * 1e9:.0f} ns per call; asymptotic rate "
      f"{calls.rate_inf_elements_per_s / 1e9:.2f} G elements/s; n_1/2 = {calls.n_half:,.0f} elements; "
      f"90% needs {size_for_fraction(0.9, calls.t0_s, calls.rate_inf_elements_per_s):,.0f}")
one_element = calls.t_call_s[0]
big = calls.t_call_s[-1]
many_small = calls.sizes[-1] * one_element
print(f"{int(calls.sizes[-1]):,} additions as one call: {big * 1e6:.0f} us; as {int(calls.sizes[-1]):,} "
      f"one-element calls: {many_small * 1e3:.0f} ms ({many_small / big:.0f}x slower)")
assert many_small > 10 * big
# Second way: the fitted model t(n) = t0 + n / r against both ends of the measurement. Timings
# move with whatever else the machine is doing, so the agreement is printed, not asserted.
print(f"model / measured: one-element calls {calls.sizes[-1] * calls.model_t_s(1) / many_small:.2f}, "
      f"one large call {calls.model_t_s(calls.sizes[-1]) / big:.2f}")

# %%
fig = plot_call_overhead(calls)
plt.show()

# %% [markdown]
# A GPU kernel launch is the same story with a larger $t_0$ and a far larger
# $r_\infty$, so its $n_{1/2}$ is larger still: small operations leave a GPU idle, which is why
# frameworks fuse kernels and capture whole graphs of launches.

# %% [markdown]
# ### Launch overhead and what CUDA graphs remove
#
# Each kernel launch costs the CPU time to prepare and submit it, and the GPU time to start it.
# When kernels are short, the GPU waits for the next launch and each kernel costs its run time
# plus an exposed overhead. NVIDIA's CUDA Graphs article (A. Gray, "Getting Started with CUDA
# Graphs", NVIDIA Technical Blog, 2019; a V100) measured 20 kernels of about 2.9 us: 3.8 us per
# kernel launched one by one in a stream, 3.4 us per kernel launched as one graph, which is
# captured once and submitted with a single call, so the CPU's per-kernel work disappears and
# the GPU steps from node to node. Take a decode step of 600 such kernels (a 32-layer model
# runs many small kernels per layer at batch 1):

# %%
from course_lib.latency import (BLOG_GRAPH_PER_KERNEL_S, BLOG_KERNEL_S, BLOG_STREAM_PER_KERNEL_S,
                                launch_time_s)

n_kernels = 600
stream_overhead = BLOG_STREAM_PER_KERNEL_S - BLOG_KERNEL_S
graph_overhead = BLOG_GRAPH_PER_KERNEL_S - BLOG_KERNEL_S
t_stream = launch_time_s(n_kernels, BLOG_KERNEL_S, stream_overhead)
t_graph = launch_time_s(n_kernels, BLOG_KERNEL_S, graph_overhead)
busy = n_kernels * BLOG_KERNEL_S
print(f"overhead per kernel: {stream_overhead * 1e6:.1f} us in a stream, {graph_overhead * 1e6:.1f} us in a graph")
print(f"{n_kernels} kernels: {t_stream * 1e3:.2f} ms launched one by one ({busy / t_stream:.0%} busy), "
      f"{t_graph * 1e3:.2f} ms as a graph ({busy / t_graph:.0%} busy): {(t_stream - t_graph) * 1e6:.0f} us saved per step")
assert np.isclose(t_stream, n_kernels * BLOG_STREAM_PER_KERNEL_S)
assert np.isclose(t_stream - t_graph, n_kernels * (BLOG_STREAM_PER_KERNEL_S - BLOG_GRAPH_PER_KERNEL_S))

# %% [markdown]
# A graph removes the per-kernel launch work, not the kernels: the step is still 600 kernels,
# and fusing them (lesson 06) is what removes their run time and their memory traffic. The CPU
# analogue is your own Python loop: the same additions as 200 calls on 64-element rows and as
# one call on the whole array (timed as the best of several runs, which keeps a busy machine's
# interruptions out):

# %%
from course_lib.measure.latency import measure_batched_calls

batched = measure_batched_calls(200, 64, budget_s=0.2)
print(f"200 calls: {batched.t_loop_s * 1e6:.0f} us; one call: {batched.t_one_s * 1e6:.1f} us "
      f"({batched.speedup:.0f}x faster); each extra call cost {batched.overhead_per_call_s * 1e9:.0f} ns, "
      f"{batched.overhead_per_call_s / stream_overhead:.2f}x the GPU's exposed launch overhead above")
verdict = "as expected" if batched.speedup > 5 else "less than expected: is something else busy?"
print(f"one call over 200: {verdict}")

# %% [markdown]
# **On a GPU.** Where PyTorch or CuPy sees a GPU, the same sweep can be timed there; here we only
# report whether one is present.

# %%
from course_lib.measure import gpu_status

print(gpu_status()[1])

# %% [markdown]
# ## 6. Explore
#
# The first widget is the simulator: change the compute burst, the latency, the number of
# schedulers and the jitter, and watch the knee move to $S(C+L)/C$. The second is the occupancy
# calculator: find a block size and register count that keep 48 warps resident, then add shared
# memory until it, not the registers, becomes the limiter.

# %%
from course_lib.widgets.latency import latency_hiding_explorer

hiding = latency_hiding_explorer()
hiding

# %%
from course_lib.widgets.latency import occupancy_explorer

occupancy_widget = occupancy_explorer("H100 SXM")
occupancy_widget

# %% [markdown]
# ## Misconceptions
#
# - **"An H100 SM has 256k registers, so 128 registers per thread in 256-thread blocks leaves room
#   for 8 blocks, 64 warps."** (One of our seed texts says so.) The register file is 256 KiB, that
#   is 65,536 32-bit registers; one such block needs 32,768 of them, so two blocks fit, 16 warps
#   (section 4). With 64 registers per thread the same rule gives 32 warps.

# %%
print(f"H100 registers per SM: {h100.registers_per_sm:,} (= {h100.register_file_bytes_per_sm // 1024} KiB / 4 B)")
assert h100.registers_per_sm == 65536 and occ.blocks_per_sm == 2 and half.warps_per_sm == 32

# %% [markdown]
# - **"Higher occupancy is always faster."** Utilisation saturates at the knee; beyond it, more
#   warps add nothing (section 3), and registers taken away to raise occupancy can cost more.
# - **"The GPU makes each memory access faster."** Its load latency is hundreds of nanoseconds, longer
#   than a CPU's DRAM access; it hides latency by overlap, and needs megabytes in flight to do so
#   (section 2).
# - **"A fast chip runs any workload fast."** Below $n_{1/2}$ elements per call, fixed cost
#   dominates: a one-element add reaches only this fraction of the asymptotic rate on your CPU:

# %%
print(f"{calls.rate_elements_per_s[0] / calls.rate_inf_elements_per_s:.2e} of r_inf at one element per call")
assert calls.rate_elements_per_s[0] < 0.01 * calls.rate_inf_elements_per_s

# %% [markdown]
# ## Exercises
#
# `my_work/01_throughput_latency.py` (answers in `solutions/01_throughput_latency.py`): predict a
# limiter, compute bytes in flight for a real accelerator, explore the simulator, write the
# occupancy rule for registers yourself, and decide how many registers a spilling kernel may use
# (01.5); then two designs: the largest register budget whose resident warps still hide a
# profiled load latency (01.6), and the loads in flight per thread a streaming kernel needs for
# full bandwidth, at the latency its profile shows, when each load holds a register (01.7).
# `my_work/` is your own copy of the exercises: `make lab` makes it, `make workspace` refreshes
# it without touching your answers, and `make progress` lists which exercises pass.
#
# ## Key points
#
# - Little's law, $N = T \times L$: full bandwidth needs bandwidth x latency bytes in flight
#   (section 2, at the assumed latency); with one 4-byte load per thread that is more warps than
#   an SM can hold, so fast kernels issue wide loads and several per thread.
# - A scheduler with $N$ warps alternating $C$ cycles of work and $L$ of waiting is busy
#   $\min(1, NC/(C+L))$ of the time: the knee sits at $(C+L)/C$ warps per scheduler.
# - Occupancy is set by the scarcest of blocks, warps, registers (allocated per warp in units of 256)
#   and shared memory (plus 1 KiB reserved per block); `occupancy()` names the limiter, and every
#   one that binds on a tie.
# - Wide loads and several loads in flight per thread hide latency with fewer warps.
# - Every call has a fixed cost: below $n_{1/2} = t_0 r_\infty$ elements, overhead dominates.
# - A GPU leads a server CPU socket by about five to nine times in FP32 (the CPU's clock decides
#   where) and seven to eleven in bandwidth, and by far more in
#   tensor-core math; a CPU hides memory latency with out-of-order execution, hundreds of bytes in
#   flight per thread, a GPU with thousands of threads and a few bytes each (section 1).
# - Capping registers raises occupancy in whole blocks and spills the rest to local memory; the
#   spills are cheap only while they fit in L1 (section 4).
# - Short kernels pay their launch overhead each; a CUDA graph submits them all at once and leaves
#   only a smaller per-kernel cost, as batching calls does for a Python loop (section 5).
