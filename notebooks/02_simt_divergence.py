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
# # 02 · SIMT: warps, divergence and coalesced memory access
#
# **Learning objectives.** After this lesson you can
#
# 1. describe how a warp of 32 threads issues one instruction for all its active lanes, and
#    compute a kernel's *SIMT efficiency* from issued instructions and active lanes;
# 2. predict the cost of an if/else that splits a warp, and of a loop whose trip count depends on
#    the data;
# 3. remove divergence by a branchless select or by grouping work by branch, and say when each helps;
# 4. compare NVIDIA's 32-lane warps with AMD's 64-lane wavefronts, and explain why Volta's
#    independent thread scheduling does not remove the cost of divergence;
# 5. count the 32-byte sectors a warp's load touches, and compute memory efficiency for strided,
#    misaligned, array-of-structures and structure-of-arrays layouts.
#
# Everything runs in a vectorised NumPy simulator (`course_lib.simt`): every thread of every warp
# executes at once, with an active mask per warp.

# %%
import numpy as np
import matplotlib.pyplot as plt

from course_lib.hardware import get_accelerator
from course_lib.simt import (If, Let, SECTOR_BYTES, While, aos_addresses, coalescing,
                             run_simt, soa_addresses, strided_addresses)
from course_lib.plots import use_course_style
from course_lib.plots.simt import plot_coalescing, plot_efficiency_bars, plot_lane_timeline

use_course_style()
h100 = get_accelerator("H100 SXM")
mi300x = get_accelerator("MI300X")
WARP = h100.warp_size
print(f"{h100.name}: warps of {h100.warp_size} threads; {mi300x.name}: wavefronts of {mi300x.warp_size}")

# %% [markdown]
# ## 1. One instruction, many lanes
#
# A warp's threads share one instruction stream: each cycle the scheduler issues one instruction,
# and every *active* lane executes it on its own data. A lane whose thread is on the other side of
# a branch is masked off and idles. Over a whole kernel,
#
# $$ \text{SIMT efficiency} = \frac{\text{active lane-slots}}{\text{issued instructions} \times \text{warp size}}. $$
#
# A kernel here is a list of statements: `Let` (one instruction), `If` (a test, then each path
# with its lanes masked) and `While` (a test per iteration, the body while any lane needs it).
# Odd lanes take a 5-instruction path, even lanes a 2-instruction path:

# %%
P, Q = 5, 2
def if_else_kernel(test, p=P, q=Q):
    return [Let("y", lambda v: v["tid"] * 1.0, label="load"),
            If(test, then=[Let("y", lambda v: v["y"] * 1.5 + 1, label="long") for _ in range(p)],
               orelse=[Let("y", lambda v: v["y"] - 1, label="short") for _ in range(q)])]

odd_lanes = run_simt(if_else_kernel(lambda v: v["tid"] % 2 == 1), 32 * 64)
by_hand = (2 * WARP + (WARP // 2) * (P + Q)) / (WARP * (2 + P + Q))
print(f"issued per warp {odd_lanes.issued_per_warp[0]} (= 2 + {P} + {Q}); SIMT efficiency "
      f"{odd_lanes.simt_efficiency:.3f}; by hand {by_hand:.3f}")
assert np.all(odd_lanes.issued_per_warp == 2 + P + Q)
assert np.isclose(odd_lanes.simt_efficiency, by_hand)

# %%
fig = plot_lane_timeline(odd_lanes, title="odd lanes take the long path: both paths run, half the lanes idle")
plt.show()

# %% [markdown]
# ## 2. How bad can divergence get?
#
# With paths of lengths $p$ and $q$ and half the lanes on each, the branch costs $p + q$ cycles
# instead of $\max(p, q)$, and efficiency tends to one half. But the split need not be even. If a
# single lane takes a path of length $p$ and the other 31 a path of length $q$, the warp still pays
# $p + q$, while the useful work is $p + 31 q$ lane-slots:
#
# $$ E = \frac{p + 31 q}{32 (p + q)} \;\to\; \frac{1}{32} \quad (p \gg q). $$

# %%
one_lane = {}
for p in (2, 8, 32, 128):
    r = run_simt(if_else_kernel(lambda v: v["lane"] == 0, p=p, q=1), 32 * 8)
    branch_eff = (p + 31 * 1) / (32 * (p + 1))
    one_lane[p] = r
    # Second way: the whole kernel's efficiency from the formula plus the two full-warp instructions.
    whole = (2 * 32 + p + 31) / (32 * (2 + p + 1))
    assert np.isclose(r.simt_efficiency, whole)
    print(f"one lane on a {p:3d}-instruction path: branch efficiency {branch_eff:.3f}, "
          f"kernel {r.simt_efficiency:.3f}")
assert one_lane[128].simt_efficiency < 0.06

# %% [markdown]
# ### Data-dependent loops
#
# A loop whose trip count depends on the data keeps the warp going until its *longest* lane is
# done. Each thread here runs the Collatz iteration from its own starting value: the number of steps
# varies wildly from lane to lane.

# %%
rng = np.random.default_rng(7)
n_threads = 10_000                           # not a multiple of 32: the last warp is partial
start = rng.integers(1, 1000, size=n_threads)
collatz = [Let("x", lambda v: v["start"][v["tid"]]), Let("steps", lambda v: 0),
           While(lambda v: v["x"] != 1,
                 [If(lambda v: v["x"] % 2 == 0, then=[Let("x", lambda v: v["x"] // 2)],
                     orelse=[Let("x", lambda v: 3 * v["x"] + 1)]),
                  Let("steps", lambda v: v["steps"] + 1)])]
loop = run_simt(collatz, n_threads, {"start": start})

def collatz_steps(x):
    s = 0
    while x != 1:
        x = x // 2 if x % 2 == 0 else 3 * x + 1
        s += 1
    return s

reference = np.array([collatz_steps(int(x)) for x in start])
assert np.array_equal(loop.variables["steps"], reference)
# Second way: each warp runs as many iterations as its longest lane.
padded = np.full(loop.n_warps * WARP, -1)
padded[:n_threads] = reference
longest = padded.reshape(loop.n_warps, WARP).max(axis=1)
lane_mean = reference.mean()
print(f"mean steps per thread {lane_mean:.1f}, mean of each warp's longest lane {longest.mean():.1f}: "
      f"the loop runs at {lane_mean / longest.mean():.2f} of full speed; SIMT efficiency "
      f"{loop.simt_efficiency:.2f}")
assert np.all(loop.issued_per_warp >= 2 + longest * 4)

# %% [markdown]
# ## 3. Rewrites that avoid divergence
#
# **Branchless select.** When two paths differ only in a value, compute the value with a select and
# run one shared path: `k = where(c, 1.5, 0.5); y = k * x + 1` instead of two multiplications under an
# if/else. A select still evaluates both of its inputs, so it only wins when the paths share work.
#
# **Grouping by branch.** Reorder the work (sort or partition the indices by branch) so that every
# warp is uniform: each warp then runs one path only.

# %%
x_in = rng.normal(size=4096)
c_in = rng.random(4096) < 0.5
branchy = [Let("x", lambda v: v["xs"][v["tid"]]),
           If(lambda v: v["cs"][v["tid"]],
              then=[Let("y", lambda v: v["x"] * 1.5), Let("y", lambda v: v["y"] + 1)],
              orelse=[Let("y", lambda v: v["x"] * 0.5), Let("y", lambda v: v["y"] + 1)])]
select = [Let("x", lambda v: v["xs"][v["tid"]]),
          Let("k", lambda v: np.where(v["cs"][v["tid"]], 1.5, 0.5)),
          Let("y", lambda v: v["k"] * v["x"]), Let("y", lambda v: v["y"] + 1)]
order = np.argsort(~c_in, kind="stable")       # true-branch threads first
cases = {
    "if/else, random branch": run_simt(branchy, 4096, {"xs": x_in, "cs": c_in}),
    "branchless select": run_simt(select, 4096, {"xs": x_in, "cs": c_in}),
    "grouped by branch": run_simt(branchy, 4096, {"xs": x_in[order], "cs": c_in[order]}),
}
for name, r in cases.items():
    print(f"{name:24s} {r.issued / r.n_warps:5.2f} instructions per warp, efficiency {r.simt_efficiency:.3f}")
expected = np.where(c_in, 1.5 * x_in + 1, 0.5 * x_in + 1)
assert np.allclose(cases["branchless select"].variables["y"], expected)
assert np.allclose(cases["grouped by branch"].variables["y"], expected[order])
assert cases["branchless select"].simt_efficiency == 1.0
# Grouped: every warp but (at most) the one straddling the boundary runs a single path of 2.
n_straddle = int(np.sum(c_in) % WARP != 0)
assert cases["grouped by branch"].issued == 128 * 4 + 2 * n_straddle

# %%
fig = plot_efficiency_bars(cases)
plt.show()

# %% [markdown]
# ## 4. 32-lane warps against 64-lane wavefronts
#
# AMD's CDNA GPUs (the MI300X in the catalog) execute 64-lane wavefronts. A wider group amortises
# instruction issue over more lanes but diverges more easily. If each thread independently takes
# a rare branch with probability $\rho$, a group of $W$ lanes is uniform with probability
# $\rho^W + (1-\rho)^W$, so the share of groups that diverge is
#
# $$ D(W) = 1 - \rho^W - (1-\rho)^W. $$

# %%
rho = 0.02
rare = rng.random(64 * 2000) < rho
rare_kernel = if_else_kernel(lambda v: v["flag"][v["tid"]])
for width in (WARP, mi300x.warp_size):
    r = run_simt(rare_kernel, rare.size, {"flag": rare}, warp_size=width, trace_warp=None)
    diverged = np.mean(r.issued_per_warp == 2 + P + Q)
    formula = 1 - rho ** width - (1 - rho) ** width
    print(f"width {width}: {100 * diverged:.1f}% of groups diverge (formula {100 * formula:.1f}%), "
          f"efficiency {r.simt_efficiency:.3f}")
    assert abs(diverged - formula) < 0.05

blocks_of_32 = if_else_kernel(lambda v: (v["tid"] // 32) % 2 == 1)
w32 = run_simt(blocks_of_32, 4096, warp_size=32)
w64 = run_simt(blocks_of_32, 4096, warp_size=64)
print(f"branch on blocks of 32 threads: warp 32 efficiency {w32.simt_efficiency:.2f}, "
      f"wave 64 {w64.simt_efficiency:.2f}")
assert w32.simt_efficiency == 1.0 and w64.simt_efficiency < 1.0

# %% [markdown]
# A branch that alternates every 32 threads, uniform on each NVIDIA warp, diverges on every
# 64-lane wavefront.
#
# ## 5. Independent thread scheduling does not remove the cost
#
# Since Volta, each thread has its own program counter, so the scheduler may interleave the two
# sides of a branch instead of finishing one first (it is what makes intra-warp locks safe). But in
# any cycle it still issues one instruction for the lanes that share a program counter: the two
# paths are still executed one instruction at a time each. The simulator's `"interleaved"` schedule
# alternates the paths; the issued instructions and the results do not change, only the order.

# %%
stack = run_simt(if_else_kernel(lambda v: v["tid"] % 3 == 0), 1000)
inter = run_simt(if_else_kernel(lambda v: v["tid"] % 3 == 0), 1000, schedule="interleaved")
print(f"stack: {stack.issued} instructions, interleaved: {inter.issued}; "
      f"efficiency {stack.simt_efficiency:.3f} vs {inter.simt_efficiency:.3f}")
assert stack.issued == inter.issued and np.array_equal(stack.variables["y"], inter.variables["y"])
assert not np.array_equal(stack.trace, inter.trace)
fig, axes = plt.subplots(1, 2, figsize=(11, 3.2))
plot_lane_timeline(stack, ax=axes[0], title="reconvergence stack: one path, then the other")
plot_lane_timeline(inter, ax=axes[1], title="interleaved (Volta+): same instructions, new order")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 6. Coalescing: which bytes a warp's load really moves
#
# Global memory is read in 32-byte **sectors** (CUDA C++ Best Practices Guide, "Coalesced Access
# to Global Memory", compute capability 6.0 and later), four to a 128-byte cache line (Nsight
# Compute Profiling Guide, memory terminology). A warp's load moves every sector that any
# active lane touches, so
#
# $$ \text{memory efficiency} = \frac{\text{bytes requested}}{\text{bytes moved}} = \frac{\text{distinct bytes asked for}}{32 \times \text{sectors touched}}. $$
#
# 32 lanes reading consecutive 4-byte floats from an aligned base touch $32 \times 4 / 32 = 4$
# sectors, one line: 100 %. With a stride of $s$ floats they touch $\min(32, 4s)$ sectors.

# %%
print(f"{'stride':>6s} {'sectors':>8s} {'lines':>6s} {'efficiency':>11s}")
for s in (1, 2, 4, 8, 16, 32):
    c = coalescing(strided_addresses(s, 4))
    print(f"{s:6d} {c.n_sectors:8d} {c.n_lines:6d} {100 * c.efficiency:10.1f}%")
    assert c.n_sectors == min(32, 4 * s)
    assert np.isclose(c.efficiency, (32 * 4) / (SECTOR_BYTES * min(32, 4 * s)))

# %% [markdown]
# Misalignment, and two layouts of the same data. A particle with position x, y, z stored as an
# **array of structures** (12 bytes per particle) makes a warp reading only `z` skip over the other
# fields; a **structure of arrays** keeps every `z` together.

# %%
aligned = coalescing(strided_addresses(1, 4))
shifted = coalescing(strided_addresses(1, 4, offset_bytes=4))
aos = coalescing(aos_addresses(struct_bytes=12, field_offset_bytes=8))
soa = coalescing(soa_addresses(field_index=2, field_bytes=4, n_elements=1 << 20))
permuted = coalescing(rng.permutation(strided_addresses(1, 4)))
for name, c in [("aligned", aligned), ("shifted by 4 B", shifted), ("AoS, field z", aos),
                ("SoA, array z", soa), ("aligned, lanes shuffled", permuted)]:
    print(f"{name:24s} {c.n_sectors:3d} sectors {c.n_lines:2d} lines  {100 * c.efficiency:5.1f}%")
assert (shifted.n_sectors, shifted.n_lines) == (5, 2)
assert aos.n_sectors == 32 * 12 // SECTOR_BYTES and soa.n_sectors == 4
assert permuted.n_sectors == aligned.n_sectors
fig, axes = plt.subplots(1, 2, figsize=(11, 3.4))
plot_coalescing(shifted, ax=axes[0], title="aligned floats shifted by 4 bytes: 5 sectors")
plot_coalescing(aos, ax=axes[1], title="AoS, one 4-byte field of 12-byte structs")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 7. Explore
#
# Change the load's stride, which lanes take the long branch, and the warp size. Which branch
# pattern is free on a 32-wide warp but costs on a 64-wide wavefront? Which strides keep every
# moved byte useful?

# %%
from course_lib.widgets.simt import simt_explorer

simt_widget = simt_explorer()
simt_widget

# %% [markdown]
# ## Misconceptions
#
# - **"In a simple if/else the worst case is half the throughput."** (One of our seed texts says
#   so.) That is the even split with paths of equal length. One lane on a long path costs the whole
#   warp that path: with a 128-instruction path section 2 measured
#   an efficiency under 6 %, tending to 1/32.
# - **"Threads in a warp must access consecutive addresses to coalesce."** (Also in a seed.) What
#   counts is the set of sectors touched, not the order: shuffling the lanes of an aligned load
#   still moves 4 sectors (section 6).
# - **"Since Volta, threads in a warp run independently, so divergence is free."** Independent
#   thread scheduling changes the order, not the count, of issued instructions (section 5).
# - **"Branchless code is always faster."** A select evaluates both inputs. It wins when the paths
#   share most of their work, as in section 3; for two long, different paths it issues as much as
#   the divergent branch:

# %%
long_a = [Let("a", lambda v: v["tid"] * 2.0)] * 6
long_b = [Let("b", lambda v: v["tid"] * 3.0)] * 6
branch_version = run_simt([If(lambda v: v["tid"] % 2 == 0, then=long_a, orelse=long_b)], 1024)
select_version = run_simt(long_a + long_b + [Let("y", lambda v: np.where(v["tid"] % 2 == 0, v["a"], v["b"]))], 1024)
print(f"two 6-instruction paths: branch {branch_version.issued_per_warp[0]} instructions per warp, "
      f"select {select_version.issued_per_warp[0]}")
assert select_version.issued_per_warp[0] >= branch_version.issued_per_warp[0]

# %% [markdown]
# ## Exercises
#
# `my_work/02_simt_divergence.py` (answers in `solutions/02_simt_divergence.py`): predict which
# layout moves fewer bytes, compute a loop's efficiency, explore the warp width, write the
# sector counter yourself; then two designs: the narrowest block whose loads of a ragged matrix
# stay coalesced (02.5), and the shortest rare path for which sorting by branch pays, in
# expectation over arrival orders (02.6).
# `my_work/` is your own copy of the exercises: `make lab` makes it, `make workspace` refreshes
# it without touching your answers, and `make progress` lists which exercises pass.
#
# ## Key points
#
# - A warp issues one instruction for all its active lanes; SIMT efficiency = active lane-slots /
#   (issued x warp size).
# - A divergent branch costs the sum of its paths; a data-dependent loop costs its longest lane. One
#   lane can cost a warp 32 times its share.
# - Select when paths share work; group work by branch when they do not.
# - Wider groups (AMD's 64-lane wavefronts) diverge more often: $1 - \rho^W - (1-\rho)^W$.
# - Independent thread scheduling (Volta+) reorders divergent paths but does not merge them.
# - Memory moves in 32-byte sectors: efficiency = bytes requested / bytes moved; stride, misalignment
#   and array-of-structures layouts waste bandwidth, structure-of-arrays does not.
