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
# # 09 · The kernel lab: write GPU kernels, check them, profile them
#
# **Learning objectives.** After this lesson you can
#
# 1. say which thread of a CUDA launch handles which element of an array, and which warp and lane
#    that thread is, for 1D and 2D grids (x is the column, the fast index);
# 2. write guarded elementwise, 2D, reduction, transpose, matmul and softmax kernels in CUDA
#    Python and check them against NumPy on sizes no block size divides;
# 3. read a kernel's profile: global loads and the 32-byte sectors they move (coalescing, lesson
#    02), shared-memory passes (bank conflicts, lesson 03), SIMT efficiency and races;
# 4. explain why a missing `cuda.syncthreads()` is a bug even when the output is right;
# 5. count the global loads of a naive and a tiled matmul, match them to lesson 06's formula,
#    and predict a kernel's time and occupancy on a real accelerator;
# 6. reduce within a warp with shuffles, privatise a block's partial result in shared memory,
#    scan, stage a halo and tile in registers (sections 12 and 13), and read the same counts in
#    Nsight Compute's names (section 14).
#
# The kernels are real CUDA Python, written with numba-cuda's `@cuda.jit`. On a machine without
# an NVIDIA GPU, `cuda` is numba's CPU simulator; either way the course runs each kernel on its
# own traced executor (`course_lib.kernels`): one CUDA thread at a time, the threads of a block
# in order from one barrier to the next, every array index checked and every memory access
# recorded. A run is deterministic, so every count below is the same on every run. The same
# kernel runs unchanged on a GPU (section 11). The executor also runs the warp-level primitives
# (`cuda.syncwarp`, the `shfl_*_sync` family, `ballot_sync`, `all_sync`, `any_sync`,
# `activemask`), with the lanes named by a mask meeting at the call; a `cuda.*` function it does
# not run says so in one line.

# %%
import math

import numpy as np
import matplotlib.pyplot as plt

from course_lib.hardware import get_accelerator, list_accelerators
from course_lib.kernels import cuda, gpu_present, simulator_selected
from course_lib.kernels.demos import COPY_STEPS, DEMOS
from course_lib.kernels.profile import ASSUMED_REGISTERS, predict_time, profile_trace
from course_lib.kernels.tasks import (BLOCK, BLOCK_2D, TILE, TILE_T, KernelCheckError, check_kernel,
                                      predict_task, run_task)
from course_lib.kernels.trace import WRITE, OutOfBoundsError, WarpSyncError, trace_launch
from course_lib.kernels.warp import warp_access_cost, warp_lane_timeline
from course_lib.memory import column_read_conflict_degree
from course_lib.simt import coalescing
from course_lib.tiling import tiled_matmul_traffic
from course_lib.plots import use_course_style
from course_lib.plots.kernels import plot_warp_access, plot_warp_lanes

use_course_style()
h100 = get_accelerator("H100 SXM")
SEED = 1680                  # any seed works: it draws the data of the examples below
print(f"{'an NVIDIA GPU is present' if gpu_present() else 'no NVIDIA GPU here'}; numba's cuda is "
      f"{'its CPU simulator' if simulator_selected() else 'the real device'}")
print(f"{h100.name}: warps of {h100.warp_size} threads, at most {h100.max_threads_per_block} threads "
      f"per block. The tasks' blocks: BLOCK = {BLOCK}, BLOCK_2D = {BLOCK_2D}, TILE_T = {TILE_T}, "
      f"TILE = {TILE}")

# %% [markdown]
# ## 1. Grid, block, warp, lane
#
# A launch `kernel[grid, block](args)` starts `grid` blocks of `block` threads each, all running
# the same function. A **block** (at most 1024 threads, printed above) runs on one SM; its
# threads share the block's shared memory and can wait for each other at `cuda.syncthreads()`.
# Blocks cannot wait for each other. The hardware issues instructions per **warp**: 32
# consecutive threads of one block, numbered with x fastest (lesson 02). A thread's place in its
# warp is its **lane**.
#
# Each thread finds its element from its coordinates. In one dimension `cuda.grid(1)` is
#
# $$ i = \text{blockIdx.x} \times \text{blockDim.x} + \text{threadIdx.x}, \qquad
#    \text{warp} = \lfloor t / 32 \rfloor, \quad \text{lane} = t \bmod 32, $$
#
# where $t$ is the thread's number within its block. A launch covers $n$ elements with
# $\lceil n / \text{blockDim.x} \rceil$ blocks, so the last block usually runs past the end: every
# kernel needs a **guard**, `if i < n`.
#
# `trace_launch(kernel, grid, block, *args)` is the course's `kernel[grid, block](*args)`: it runs
# the launch on the traced executor, updates the NumPy arrays in place and returns the trace.
# Here 150 elements in blocks of 64 threads, each thread writing down who it is:

# %%
@cuda.jit
def who_am_i(block_of, thread_of, warp_of, lane_of):
    i = cuda.grid(1)                       # blockIdx.x * blockDim.x + threadIdx.x
    if i < block_of.size:                  # the guard: the last block runs past the end
        block_of[i] = cuda.blockIdx.x
        thread_of[i] = cuda.threadIdx.x
        warp_of[i] = cuda.threadIdx.x // 32
        lane_of[i] = cuda.threadIdx.x % 32


n_demo, block_demo = 150, 64
grid_demo = -(-n_demo // block_demo)
ids = [np.full(n_demo, -1, np.int32) for _ in range(4)]
who = trace_launch(who_am_i, grid_demo, block_demo, *ids)
block_of, thread_of, warp_of, lane_of = ids
print(f"{grid_demo} blocks x {block_demo} threads = {grid_demo * block_demo} threads for {n_demo} "
      f"elements: {grid_demo * block_demo - n_demo} threads fail the guard and do nothing")
print(f"{'element':>7s} {'blockIdx.x':>10s} {'threadIdx.x':>11s} {'warp in block':>13s} {'lane':>5s}")
for i in (0, 31, 32, 63, 64, 127, 128, n_demo - 1):
    print(f"{i:7d} {block_of[i]:10d} {thread_of[i]:11d} {warp_of[i]:13d} {lane_of[i]:5d}")
elements = np.arange(n_demo)
assert np.array_equal(block_of * block_demo + thread_of, elements)
assert np.array_equal(warp_of, elements % block_demo // 32) and np.array_equal(lane_of, elements % 32)
# Second way: the executor's own record of which thread wrote each element.
writes = (who.acc_kind == WRITE) & (who.acc_array == 0)
assert np.array_equal(who.acc_tid[writes][np.argsort(who.acc_index[writes])], elements)

# %% [markdown]
# In two dimensions `c, r = cuda.grid(2)` gives the thread's x and y. **x is the column**, the
# fast index of a row-major array, so the 32 lanes of a warp take neighbouring columns of one row
# when the block is at least 32 wide. With a block 16 wide and 4 tall, a warp is two half-rows.
# Each element of a 6 x 40 matrix below shows the number of the warp, counted over the whole
# launch, that handles it (warp 10 prints as `a`):

# %%
@cuda.jit
def whose_warp(warp_of):
    c, r = cuda.grid(2)                    # x is the column, y the row
    if r < warp_of.shape[0] and c < warp_of.shape[1]:
        t = cuda.threadIdx.y * cuda.blockDim.x + cuda.threadIdx.x      # x fastest in the block
        b = cuda.blockIdx.y * cuda.gridDim.x + cuda.blockIdx.x
        warp_of[r, c] = b * (cuda.blockDim.x * cuda.blockDim.y // 32) + t // 32


shape_2d, block_2d = (6, 40), (16, 4)
grid_2d = (-(-shape_2d[1] // block_2d[0]), -(-shape_2d[0] // block_2d[1]))   # (column blocks, row blocks)
warps_2d = np.full(shape_2d, -1, np.int32)
who2 = trace_launch(whose_warp, grid_2d, block_2d, warps_2d)
digits = "0123456789abcdefghijklmnopqrstuvwxyz"
n_warps_2d = grid_2d[0] * grid_2d[1] * block_2d[0] * block_2d[1] // 32
print(f"grid {grid_2d} x block {block_2d}: {n_warps_2d} warps")
for row in warps_2d:
    print("  " + "".join(digits[w] for w in row))
idle_warps = sorted(set(range(n_warps_2d)) - set(warps_2d.reshape(-1).tolist()))
print(f"warps with no element: {idle_warps}")
assert idle_warps == list(range(n_warps_2d // 2 + 1, n_warps_2d, 2))      # second warps, bottom blocks
# Second way: the same numbering from the formula, in NumPy ...
r, c = np.indices(shape_2d)
block_linear = (r // block_2d[1]) * grid_2d[0] + c // block_2d[0]
t_in_block = (r % block_2d[1]) * block_2d[0] + c % block_2d[0]
assert np.array_equal(warps_2d, block_linear * (block_2d[0] * block_2d[1] // 32) + t_in_block // 32)
# ... and from the executor, whose warps are 32 consecutive thread numbers of a block.
writes = who2.acc_kind == WRITE
assert np.array_equal(warps_2d.reshape(-1)[who2.acc_index[writes]], who2.acc_tid[writes] // 32)

# %% [markdown]
# The bottom blocks overhang the matrix: their second warps have no element and do
# nothing after the guard. The elementwise tasks below use blocks of `BLOCK_2D` = (32, 8): 32
# wide, so each warp is 32 consecutive columns of one row.
#
# ## 2. A map, and what the guard is for
#
# `run_task(task, kernel, seed=...)` makes a task's data, launches the kernel on the traced
# executor and profiles it. It returns a `TaskRun`: `.sizes`, `.data` (the arrays after the
# launch), `.expected` (NumPy's answer), `.correct` and `.profile`. The puzzles' tasks draw random
# sizes that no block divides; the lesson's own examples (`DEMOS`, neighbours of the puzzles, whose
# kernels the exercises ask you to design) have sizes of the same kind, most of them chosen so that
# every row is a whole number of 32-byte sectors (section 10 needs that). The first: a leaky ReLU,
# `out[i] = a[i]` where `a[i] > 0` and `0.1 * a[i]` elsewhere, one thread per element.

# %%
@cuda.jit
def leaky_relu(a, out):
    i = cuda.grid(1)
    if i < out.size:                       # the guard: the last block runs past the end
        v = a[i]                           # one load, kept in a register for both uses
        out[i] = v if v > 0 else 0.1 * v


relu_run = run_task(DEMOS["leaky_relu"], leaky_relu, seed=SEED)
prof = relu_run.profile
n = relu_run.sizes["n"]
print(prof.summary())
a_relu = relu_run.data["a"]
assert relu_run.correct and np.allclose(relu_run.data["out"], np.where(a_relu > 0, a_relu, 0.1 * a_relu))
assert prof.global_loads == prof.global_stores == n and n % BLOCK
# Second way for the traffic: each array is n contiguous floats from an aligned base.
assert prof.bytes_moved == 2 * 32 * math.ceil(4 * n / 32)
# Only the warp that holds element n splits at the guard; warps wholly past the end do not diverge.
assert prof.divergent_warps == (1 if n % 32 else 0)

# %% [markdown]
# Read the summary from the top: the launch; SIMT efficiency and the warps that diverged (lesson
# 02); global loads and stores, the bytes the lanes asked for and the sectors that moved; FLOP
# and intensity (lesson 04); and whether the trace showed any unsafe access. One warp diverged:
# the one that straddles the end of the array, whose lanes split at the guard. The choice between
# `v` and `0.1 * v` is one line, a select, and splits no warp.
#
# Without the guard, the first thread past the end reads `a[n]`. On a GPU that reads whatever
# lies there, or crashes; the course's executor stops and says where:

# %%
@cuda.jit
def leaky_relu_no_guard(a, out):
    i = cuda.grid(1)
    v = a[i]
    out[i] = v if v > 0 else 0.1 * v


try:
    run_task(DEMOS["leaky_relu"], leaky_relu_no_guard, seed=SEED)
except OutOfBoundsError as exc:
    message = str(exc)
print(message)
assert f"a[{n}]" in message

# %% [markdown]
# ## 3. Two dimensions, and which way the warp runs
#
# Attention's causal mask keeps the scores on and below the diagonal and sets the others to
# $-\infty$, so that a softmax gives them weight 0: `out[r, c] = a[r, c]` where $c \le r$, else
# `-inf`, on a `rows x cols` matrix, one thread per element, x on columns, in blocks of
# `BLOCK_2D`. Every thread reads its element, so the traffic depends only on the mapping. The
# profile's `table()` has one row per memory instruction (a source line stands in for an
# instruction): its warp-level requests, the 32-byte sectors per request and the share of moved
# bytes the lanes asked for. (This task keeps odd sizes: a row does not start on a sector boundary.)

# %%
@cuda.jit
def causal_mask(a, out):
    c, r = cuda.grid(2)                    # x on columns: a warp reads 32 neighbours in a row
    if r < a.shape[0] and c < a.shape[1]:
        v = a[r, c]
        out[r, c] = v if c <= r else -math.inf


mask_run = run_task(DEMOS["causal_mask"], causal_mask, seed=SEED)
rows, cols = mask_run.sizes["rows"], mask_run.sizes["cols"]
assert mask_run.correct and np.isneginf(mask_run.data["out"][0, 1:]).all()
print(mask_run.profile.summary())
print(mask_run.profile.table())

# %% [markdown]
# Now swap the roles: x on rows. The launch must swap too, or the threads would not cover the
# matrix. The result is the same; the memory traffic is not. The 32 lanes of a warp now read one
# element from each of 32 rows, `cols` floats apart.

# %%
@cuda.jit
def causal_mask_x_on_rows(a, out):
    r, c = cuda.grid(2)                    # x on rows: a warp reads down a column
    if r < a.shape[0] and c < a.shape[1]:
        v = a[r, c]
        out[r, c] = v if c <= r else -math.inf


a_2d = mask_run.data["a"]
out_2d = np.zeros_like(a_2d)
grid_rows = (-(-rows // BLOCK_2D[0]), -(-cols // BLOCK_2D[1]))
rows_prof = profile_trace(trace_launch(causal_mask_x_on_rows, grid_rows, BLOCK_2D, a_2d, out_2d))
assert np.array_equal(out_2d, mask_run.expected["out"])
print(rows_prof.table())

# %% [markdown]
# Check the profile against lesson 02's coalescing calculator. For every warp of the launch,
# NumPy computes the elements its lanes touch from the same mapping, keeps the lanes that pass
# the guard, and hands their byte addresses to `course_lib.simt.coalescing`. The sum of its
# sectors must equal the profile's count for the load of `a`.

# %%
def sectors_of_mapping(grid, block, cols, element):
    """Sectors touched by all warps of a 2D launch: ``element(x, y) -> (r, c, active)`` says
    which element of a row-major float32 matrix ``cols`` wide each thread reads."""
    by, bx, ty, tx = (v.reshape(-1) for v in np.indices((grid[1], grid[0], block[1], block[0])))
    r, c, active = element(bx * block[0] + tx, by * block[1] + ty)    # x, y as cuda.grid(2)
    total = 0
    for w in range(r.size // 32):                                     # 32 consecutive threads
        lanes = slice(32 * w, 32 * w + 32)
        if active[lanes].any():
            addresses = 4 * (r[lanes] * cols + c[lanes])
            total += coalescing(addresses[active[lanes]]).n_sectors
    return total


def load_of(profile, array="a"):
    return next(i for i in profile.instructions if i.array == array and i.op == "load")


x_on_cols = sectors_of_mapping(mask_run.profile.launch.grid, BLOCK_2D, cols,
                               lambda x, y: (y, x, (y < rows) & (x < cols)))
x_on_rows = sectors_of_mapping(grid_rows, BLOCK_2D, cols, lambda x, y: (x, y, (x < rows) & (y < cols)))
cols_load, rows_load = load_of(mask_run.profile), load_of(rows_prof)
print(f"x on columns: {cols_load.sectors} sectors ({cols_load.sectors_per_request:.2f} per request), "
      f"coalescing() says {x_on_cols}")
print(f"x on rows:    {rows_load.sectors} sectors ({rows_load.sectors_per_request:.2f} per request), "
      f"coalescing() says {x_on_rows}: {rows_load.sectors / cols_load.sectors:.1f}x the traffic")
assert cols_load.sectors == x_on_cols and rows_load.sectors == x_on_rows

# %% [markdown]
# The cost of one warp's load, computed from the trace (`warp_access_cost`) and then drawn: which
# bytes each lane asked for, and
# which sectors had to move. Warp 1 of block 0 is thread row 1: with x on columns it reads row 1
# of `a`, which does not start on a sector boundary because `cols` is odd; with x on rows it reads
# column 1.

# %%
assert (4 * cols) % 32 != 0
cols_cost = warp_access_cost(mask_run.profile.trace, cols_load.line, warp=1)
rows_cost = warp_access_cost(rows_prof.trace, rows_load.line, warp=1)
fig, axes = plt.subplots(1, 2, figsize=(11, 3.4))
plot_warp_access(cols_cost, ax=axes[0])
plot_warp_access(rows_cost, ax=axes[1])
axes[0].set_xlabel("byte address (x on columns)")
axes[1].set_xlabel("byte address (x on rows)")
fig.tight_layout()
plt.show()

# %% [markdown]
# With x on columns a warp's request touches a few neighbouring sectors: four when the row
# segment starts on a sector boundary, one more when it does not. With x on rows each lane needs
# its own sector, of which it uses 4 bytes.
#
# ## 4. A block reduction in shared memory, and the race
#
# `block_argmax` writes, for each block, the index of the largest of the `BLOCK` elements it
# covers (a greedy decoder does this over a vocabulary). Each thread loads one element and its
# index into two shared arrays; then half the threads compare the upper half with the lower half
# and keep the larger value with its index, then a quarter, and so on: $\log_2 \text{BLOCK}$
# steps. Between steps every thread must wait, `cuda.syncthreads()`, until the step before is
# finished.

# %%
@cuda.jit
def block_argmax(a, out):
    vals = cuda.shared.array(BLOCK, np.float32)
    idx = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    vals[t] = a[i] if i < a.size else -math.inf      # past the end: max's identity
    idx[t] = i
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if t < stride:
            take = vals[t + stride] > vals[t]
            vals[t] = vals[t + stride] if take else vals[t]
            idx[t] = idx[t + stride] if take else idx[t]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = idx[0]


argmax_run = run_task(DEMOS["block_argmax"], block_argmax, seed=SEED)
argmax_prof = argmax_run.profile
n_max = argmax_run.sizes["n"]
print(argmax_prof.summary())
assert argmax_run.correct and argmax_prof.safe
assert argmax_prof.global_loads == n_max and argmax_prof.global_stores == -(-n_max // BLOCK)
assert argmax_prof.barriers == 1 + int(math.log2(BLOCK))

# %% [markdown]
# Warp 0 over time: the tree halves the active threads at each step, and once fewer than 32
# threads remain, warp 0 runs on with most of its lanes idle (lesson 02's picture, from a real
# kernel). `warp_lane_timeline(trace, warp=w)` gives any warp's: the other warps of a block skip
# the comparisons all together once the stride falls below their first thread, so they issue
# fewer instructions and never diverge.

# %%
timeline = warp_lane_timeline(argmax_prof.trace, warp=0)
print(f"warp 0 issued {timeline.issued} instructions with {timeline.active_slots} active lane-slots "
      f"({timeline.simt_efficiency:.0%} of {32 * timeline.issued})")
assert timeline.issued == argmax_prof.issued_per_warp[0] and timeline.active_slots == argmax_prof.slots_per_warp[0]
# Any warp has its timeline. Warps 1 to 3 of a block take the tree's branch all together (all
# their lanes in, or all out), so they never diverge.
for w in (1, 3, argmax_prof.n_warps - 1):
    other = warp_lane_timeline(argmax_prof.trace, warp=w)
    print(f"warp {w:2d}: {other.issued} instructions, {other.simt_efficiency:.0%} of lane-slots active")
    assert other.issued == argmax_prof.issued_per_warp[w] and other.active_slots == argmax_prof.slots_per_warp[w]
    assert other.issued < timeline.issued and other.simt_efficiency == 1.0
fig = plot_warp_lanes(timeline)
plt.show()

# %% [markdown]
# Remove the barriers and the executor runs thread 0 to the end before thread 1 starts: thread 0
# compares `vals[64]` before thread 64 has stored it, then `vals[32]`, ... and `vals[1]` before
# thread 1 has. Shared memory starts uninitialised (NaN here), and a comparison with NaN is
# false, so thread 0 keeps its own element whatever the others hold. The profile names one pair of
# accesses that nothing ordered, on the lowest element of the block that has one:

# %%
@cuda.jit
def block_argmax_no_sync(a, out):
    vals = cuda.shared.array(BLOCK, np.float32)
    idx = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    vals[t] = a[i] if i < a.size else -math.inf
    idx[t] = i
    stride = BLOCK // 2
    while stride > 0:
        if t < stride:
            take = vals[t + stride] > vals[t]
            vals[t] = vals[t + stride] if take else vals[t]
            idx[t] = idx[t + stride] if take else idx[t]
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = idx[0]


no_sync = run_task(DEMOS["block_argmax"], block_argmax_no_sync, seed=SEED)
block_starts = np.arange(0, n_max, BLOCK)
print(f"correct: {no_sync.correct}; blocks whose answer is their first element: "
      f"{int((no_sync.data['out'] == block_starts).sum())} of {no_sync.data['out'].size}")
for problem in no_sync.profile.problems[:3]:
    print(f"{problem.kind}: {problem.message}")
assert not no_sync.correct and no_sync.profile.problems[0].kind == "race"
assert np.array_equal(no_sync.data["out"], block_starts)
race_text = no_sync.profile.problems[0].message
assert "thread 1 of block 0 wrote vals[1]" in race_text and "thread 0 of block 0 read vals[1]" in race_text

# %% [markdown]
# A wrong answer is the lucky case. The next kernel runs the tree the other way round: thread
# $t$ compares `vals[t - stride]` with `vals[t]`, so every thread reads only what threads *before*
# it wrote, and the answer ends in the last element. Running the threads in order, as the
# executor does, gives the right answer without a single barrier. On a GPU, warps run in no
# promised order, so the answer would depend on timing. A check looks at the trace, not only the
# output, and refuses it:

# %%
@cuda.jit
def block_argmax_upward(a, out):
    vals = cuda.shared.array(BLOCK, np.float32)
    idx = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    vals[t] = a[i] if i < a.size else -math.inf
    idx[t] = i
    stride = 1
    while stride < BLOCK:
        if t % (2 * stride) == 2 * stride - 1:
            take = vals[t - stride] > vals[t]
            vals[t] = vals[t - stride] if take else vals[t]
            idx[t] = idx[t - stride] if take else idx[t]
        stride *= 2
    if t == BLOCK - 1:
        out[cuda.blockIdx.x] = idx[t]


upward = run_task(DEMOS["block_argmax"], block_argmax_upward, seed=SEED)
print(f"correct: {upward.correct}; problems: {len(upward.profile.problems)}")
assert upward.correct and upward.profile.problems[0].kind == "race"
try:
    check_kernel(DEMOS["block_argmax"], block_argmax_upward)
except KernelCheckError as exc:
    check_message = str(exc)
print(check_message)
assert "race" in check_message

# %% [markdown]
# ## 5. A coalesced copy and a strided one
#
# A launch need not have one thread per element. Here each thread copies about `COPY_STEPS`
# elements, and there are two ways to deal them out. A **grid-stride loop** gives thread $g$ the
# elements $g, g + G, g + 2G, \dots$, with $G$ = `cuda.gridsize(1)` the threads of the grid: at
# every step the 32 lanes of a warp take 32 neighbours. A **chunk** per thread gives thread $g$
# the elements $gC$ to $gC + C - 1$, $C = \lceil n / G \rceil$: at every step neighbouring lanes
# are $C$ elements apart. Same result, same loads and stores:

# %%
@cuda.jit
def copy_grid_stride(a, out):
    i = cuda.grid(1)
    while i < a.size:
        out[i] = a[i]
        i += cuda.gridsize(1)                        # the whole grid moves on together


@cuda.jit
def copy_chunked(a, out):
    chunk = -(-a.size // cuda.gridsize(1))
    start = cuda.grid(1) * chunk
    for i in range(start, min(start + chunk, a.size)):
        out[i] = a[i]                                # neighbouring lanes are chunk elements apart


copy_run = run_task(DEMOS["copy_1d"], copy_grid_stride, seed=SEED)
strided_run = run_task(DEMOS["copy_1d"], copy_chunked, seed=SEED)
assert copy_run.correct and strided_run.correct
n_copy, threads = copy_run.sizes["n"], copy_run.profile.launch.n_threads
chunk = -(-n_copy // threads)
assert chunk == COPY_STEPS
print(f"{n_copy} elements, {threads} threads: {-(-n_copy // threads)} steps of the grid, or chunks of {chunk}")
for name, run in [("grid-stride", copy_run), ("chunked", strided_run)]:
    p = run.profile
    print(f"{name:11s}: {p.global_loads} loads, {p.global_sectors:5d} sectors = {p.bytes_moved:7,d} B moved "
          f"for {p.global_bytes_requested:,} B requested (coalescing {p.coalescing_efficiency:.0%})")
ratio_strided = strided_run.profile.bytes_moved / copy_run.profile.bytes_moved
print(f"the chunked copy moves {ratio_strided:.1f}x the bytes")
assert copy_run.profile.global_loads == strided_run.profile.global_loads == n_copy


# Second way: lesson 02's calculator on every warp's load at every step of each kernel's loop.
def copy_load_sectors(element, steps):
    """Sectors of all warps' loads: ``element(g, step)`` is the element thread g reads at a step."""
    g, total = np.arange(threads), 0
    for step in range(steps):
        index = element(g, step)
        for w in range(threads // 32):
            lanes = index[32 * w:32 * w + 32]
            lanes = lanes[lanes < n_copy]
            total += coalescing(4 * lanes).n_sectors if lanes.size else 0
    return total


assert load_of(copy_run.profile).sectors == copy_load_sectors(lambda g, s: g + s * threads, chunk)
assert load_of(strided_run.profile).sectors == copy_load_sectors(lambda g, s: g * chunk + s, chunk)

# %% [markdown]
# ## 6. A transpose through shared memory, and padding
#
# The symmetric part of a square matrix, $(A + A^T)/2$ (a covariance or a Hessian made exactly
# symmetric), reads every element twice: `a[r, c]` and its mirror `a[c, r]`. With x on columns a
# warp reads a row segment of `a` for the first, coalesced, and for the second 32 elements in 32
# different rows, one sector per lane. The fix stages the mirror in shared memory. Block (x, y)
# owns the output tile at rows $32y \ldots 32y + 31$ and columns $32x \ldots 32x + 31$: it first
# reads the tile at rows $32x \ldots$, columns $32y \ldots$ of `a`, row by row (coalesced), waits,
# and then each thread takes its mirror element from shared memory, where lane `tx` reads
# `tile[tx, ty]`: a column of the tile. Lesson 03 computed what that costs: with rows of 32 words,
# a column sits in one bank. The matrix is 40 x 40: 2 x 2 tiles, the last row and column of them
# partial.

# %%
@cuda.jit
def symmetrize_naive(a, out):
    c, r = cuda.grid(2)
    n = a.shape[0]
    if r < n and c < n:
        mirror = a[c, r]                             # 32 lanes in 32 rows of a
        out[r, c] = 0.5 * (a[r, c] + mirror)


@cuda.jit
def symmetrize_tile(a, out):
    tile = cuda.shared.array((TILE_T, TILE_T), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    n = a.shape[0]
    r_in = cuda.blockIdx.x * TILE_T + ty             # the mirror tile: block (x, y) reads tile (y, x)
    c_in = cuda.blockIdx.y * TILE_T + tx
    if r_in < n and c_in < n:
        tile[ty, tx] = a[r_in, c_in]                 # a warp reads a row of a: coalesced
    cuda.syncthreads()
    r = cuda.blockIdx.y * TILE_T + ty
    c = cuda.blockIdx.x * TILE_T + tx
    if r < n and c < n:
        out[r, c] = 0.5 * (a[r, c] + tile[tx, ty])   # a[c, r], from a column of the tile


@cuda.jit
def symmetrize_padded(a, out):
    tile = cuda.shared.array((TILE_T, TILE_T + 1), np.float32)     # one word of padding per row
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    n = a.shape[0]
    r_in = cuda.blockIdx.x * TILE_T + ty
    c_in = cuda.blockIdx.y * TILE_T + tx
    if r_in < n and c_in < n:
        tile[ty, tx] = a[r_in, c_in]
    cuda.syncthreads()
    r = cuda.blockIdx.y * TILE_T + ty
    c = cuda.blockIdx.x * TILE_T + tx
    if r < n and c < n:
        out[r, c] = 0.5 * (a[r, c] + tile[tx, ty])


naive_t = run_task(DEMOS["symmetrize"], symmetrize_naive, seed=SEED)
tiled_t = run_task(DEMOS["symmetrize"], symmetrize_tile, seed=SEED)
padded_t = run_task(DEMOS["symmetrize"], symmetrize_padded, seed=SEED)
print(f"a is {tiled_t.sizes['n']} x {tiled_t.sizes['n']}")
assert naive_t.correct and tiled_t.correct and padded_t.correct
near, mirror = sorted((i for i in naive_t.profile.instructions if i.op == "load"), key=lambda i: i.sectors_per_request)
print(f"naive: reads a[r, c] at {near.sectors_per_request:.2f} and a[c, r] at {mirror.sectors_per_request:.2f} "
      f"sectors per request, {naive_t.profile.bytes_moved:,} B moved; shared tile: {tiled_t.profile.bytes_moved:,} B\n")
print(tiled_t.profile.table())
print()
print(padded_t.profile.table())

# %%
assert mirror.sectors_per_request > 4 * near.sectors_per_request
assert tiled_t.profile.bytes_moved == padded_t.profile.bytes_moved < naive_t.profile.bytes_moved
worst_tile, worst_padded = tiled_t.profile.bank_conflict_degree, padded_t.profile.bank_conflict_degree
print(f"worst conflict degree: {worst_tile}-way with {TILE_T} words per row, "
      f"{worst_padded}-way with {TILE_T + 1}; lesson 03's formula: "
      f"{column_read_conflict_degree(32, 0)} and {column_read_conflict_degree(32, 1)}")
print(f"shared-memory passes: {tiled_t.profile.shared_wavefronts:,} against "
      f"{padded_t.profile.shared_wavefronts:,} for the same {tiled_t.profile.shared_requests:,} requests")
assert worst_tile == column_read_conflict_degree(32, 0) and worst_padded == column_read_conflict_degree(32, 1)
assert padded_t.profile.shared_wavefronts == padded_t.profile.shared_requests

# %% [markdown]
# The banks of warp 0's read of the tile, in both kernels. The conflicted read averages fewer
# than 32 passes in the table because the right-hand tiles have only `n` - 32 columns, so only
# that many lanes of each of their warps read.

# %%
def shared_load_line(profile):
    return next(i.line for i in profile.instructions if i.space == "shared" and i.op == "load")


read_line, read_line_padded = shared_load_line(tiled_t.profile), shared_load_line(padded_t.profile)
tiled_cost = warp_access_cost(tiled_t.profile.trace, read_line, warp=0)
padded_cost = warp_access_cost(padded_t.profile.trace, read_line_padded, warp=0)
fig, axes = plt.subplots(1, 2, figsize=(11, 3.4))
plot_warp_access(tiled_cost, ax=axes[0])
plot_warp_access(padded_cost, ax=axes[1])
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 7. Matmul: naive, then tiled in shared memory
#
# The weight gradient of a linear layer $Y = XW$ is $X^T \, \partial Y$: a product $A^T B$ whose
# two operands are both stored with the summed index first. The kernels below compute a batch of
# them, `out[z] = a[z].T @ b[z]`, with `a[z]` of shape $k \times m$, `b[z]` of shape
# $k \times n$, and the batch element `z = cuda.blockIdx.z` (a grid of three dimensions). The
# naive kernel gives each thread one element: $k$ multiply-adds, reading a column of `a[z]` and a
# column of `b[z]`, $2k$ global loads per thread and $2\,\text{batch}\cdot mkn$ in all. The tiled
# kernel steps along $k$ one `TILE` at a time and stages `TILE x TILE` tiles of both in shared
# memory, each read along its rows (coalesced); `sa[q, ty]` is then element $(i, p)$ of $A^T$, and
# each element loaded from global memory is used by `TILE` threads. Lesson 06 counted what a
# tiled matmul reads, per product: $A$ once per column of output tiles and $B$ once per row of them,
#
# $$ \text{loads} = mk \left\lceil \frac{n}{T} \right\rceil + kn \left\lceil \frac{m}{T} \right\rceil, $$
#
# exact also for the partial tiles at the edges, where a guarded load reads only what exists.

# %%
@cuda.jit
def bmm_tn_naive(a, b, out):
    j, i = cuda.grid(2)
    z = cuda.blockIdx.z
    if i < out.shape[1] and j < out.shape[2]:
        acc = 0.0
        for p in range(a.shape[1]):
            acc += a[z, p, i] * b[z, p, j]
        out[z, i, j] = acc


@cuda.jit
def bmm_tn_tiled(a, b, out):
    sa = cuda.shared.array((TILE, TILE), np.float32)
    sb = cuda.shared.array((TILE, TILE), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    z = cuda.blockIdx.z
    i0, j0 = cuda.blockIdx.y * TILE, cuda.blockIdx.x * TILE
    k, m = a.shape[1], a.shape[2]
    n = b.shape[2]
    acc = 0.0
    for p0 in range(0, k, TILE):
        p = p0 + ty                                  # rows p0..p0+TILE-1 of a[z] and b[z]
        sa[ty, tx] = a[z, p, i0 + tx] if p < k and i0 + tx < m else 0.0
        sb[ty, tx] = b[z, p, j0 + tx] if p < k and j0 + tx < n else 0.0
        cuda.syncthreads()
        for q in range(TILE):
            acc += sa[q, ty] * sb[q, tx]             # sa[q, ty] is a^T's element (i0 + ty, p0 + q)
        cuda.syncthreads()
    if i0 + ty < m and j0 + tx < n:
        out[z, i0 + ty, j0 + tx] = acc


mm_naive = run_task(DEMOS["bmm_tn"], bmm_tn_naive, seed=SEED)
mm_tiled = run_task(DEMOS["bmm_tn_tiled"], bmm_tn_tiled, seed=SEED)
assert mm_naive.correct and mm_tiled.correct and mm_naive.sizes == mm_tiled.sizes
batch, m, k, n = (mm_naive.sizes[d] for d in ("batch", "m", "k", "n"))
lesson06 = tiled_matmul_traffic(m, k, n, TILE, TILE, bytes_per_element=1)
print(f"batch {batch} of m, k, n = {m}, {k}, {n}; TILE = {TILE}")
print(f"naive: {mm_naive.profile.global_loads:,} global loads; 2 batch mkn = {2 * batch * m * k * n:,}")
print(f"tiled: {mm_tiled.profile.global_loads:,} global loads; lesson 06: "
      f"{batch} x ({lesson06.a_bytes:,.0f} + {lesson06.b_bytes:,.0f}) = "
      f"{batch * (lesson06.a_bytes + lesson06.b_bytes):,.0f}")
print(f"the tiles cut global loads {mm_naive.profile.global_loads / mm_tiled.profile.global_loads:.1f}x; "
      f"each tiled thread passes {mm_tiled.profile.barriers} barriers")
assert mm_naive.profile.global_loads == 2 * batch * m * k * n
assert m % TILE and k % TILE                     # m and k end in a partial tile
assert mm_naive.profile.global_loads / mm_tiled.profile.global_loads < TILE
assert mm_tiled.profile.global_loads == batch * (lesson06.a_bytes + lesson06.b_bytes)
assert mm_tiled.profile.safe and mm_tiled.profile.bank_conflict_degree == 1

# %% [markdown]
# The loads fall by less than `TILE` times because these matrices are one tile wide and $m$
# and $k$ end in a partial tile. When `TILE` divides every side the ratio is exactly
# $2mkn / (mk \cdot n/T + kn \cdot m/T) = T$, as the formula gives at the task's large size:

# %%
big = mm_tiled.task.large
big_mm = tiled_matmul_traffic(big["m"], big["k"], big["n"], TILE, TILE, bytes_per_element=1)
cut = 2 * big["m"] * big["k"] * big["n"] / (big_mm.a_bytes + big_mm.b_bytes)
print(f"m, k, n = {big['m']}, {big['k']}, {big['n']}: 2mkn / lesson 06's loads = {cut:.1f}")
assert cut == TILE

# %% [markdown]
# The shared-memory reads cost no conflicts: in `sa[q, ty]` the 16 lanes that share a row of
# threads read the same word (a broadcast), and in `sb[q, tx]` they read neighbouring words.
#
# ## 8. A row softmax
#
# A softmax needs two numbers for its slice before it can write anything: the maximum $m$ and the
# sum of $e^{x - m}$. Subtracting the maximum keeps every exponential at most $e^0 = 1$, so
# nothing overflows whatever the inputs: $e^{89}$ is already past float32's largest value. The
# kernel below computes those two numbers for each *column* of a matrix and writes the column's
# log-sum-exp, $m + \ln \sum_r e^{x_r - m}$ (the normaliser of a softmax, and of a cross-entropy
# loss). One thread per column walks down it twice, and the 32 lanes of a warp read 32
# neighbouring columns of one row at each step: coalesced, with no shared memory.

# %%
@cuda.jit
def logsumexp_columns(x, out):
    c = cuda.grid(1)                                 # one thread per column
    if c < x.shape[1]:
        m = -math.inf                                # the identity of max, never 0
        for r in range(x.shape[0]):                  # pass 1: the column's maximum
            m = max(m, x[r, c])
        total = 0.0
        for r in range(x.shape[0]):                  # pass 2: every term at most exp(0) = 1
            total += math.exp(x[r, c] - m)
        out[c] = m + math.log(total)


rng_lse = np.random.default_rng(SEED)
rows_sm, cols_sm = 61, 40
x_lse = (4 * rng_lse.standard_normal((rows_sm, cols_sm))).astype(np.float32)
x_lse[:, 1] += 800                                   # a column far above zero: exp(800) overflows float64
lse_out = np.zeros(cols_sm, np.float32)
lse_prof = profile_trace(trace_launch(logsumexp_columns, -(-cols_sm // 32), 32, x_lse, lse_out))
x64 = x_lse.astype(np.float64)
want_lse = x64.max(axis=0) + np.log(np.exp(x64 - x64.max(axis=0)).sum(axis=0))
print(lse_prof.summary())
print(f"column 1 (values near 800): log-sum-exp {lse_out[1]:.3f}, NumPy {want_lse[1]:.3f}")
assert np.allclose(lse_out, want_lse, rtol=1e-5) and lse_prof.safe
assert lse_prof.global_loads == 2 * rows_sm * cols_sm and lse_prof.global_stores == cols_sm

# %% [markdown]
# Each element is read twice, and one value per column is written. The row softmax of exercise
# 09.12 gives each row a block of `BLOCK` threads instead: each thread strides along the row, and
# the block combines its threads' values in shared memory as section 4 did, once with `max` and
# once with `+`; between the two, every thread must have read the maximum before anyone reuses
# the shared array. A third pass writes $e^{x - m} / \text{sum}$ for every element. Its check
# runs it on rows like column 1 above, where a kernel that skips the maximum overflows. The online
# softmax of lesson 06 keeps a running maximum and rescales the running sum whenever the maximum
# grows, which merges the first two passes: writing that as a kernel, with its shared-memory
# combine, is another puzzle (09.13).
#
# ## 9. From a profile to a predicted time
#
# A CUDA Python kernel runs on the FP32 lanes, not the tensor cores, so lesson 04's roofline
# bound uses the FP32 peak $\pi_{32}$:
#
# $$ t \ge \max\left(\frac{F}{\pi_{32}},\; \frac{Q}{\beta}\right), \qquad Q = 32 \times \text{sectors}. $$
#
# $Q$ counts every sector a global instruction touches, with no reuse by the L1 or L2 caches. That
# is exact for kernels whose sectors are each touched once (the leaky ReLU, the grid-stride copy),
# and an upper bound where several instructions touch the same sector: the shared-tile kernels of
# section 6 read each element of `a` twice (once directly, once in another block's mirror tile),
# the naive $A^T B$ re-reads its inputs, and the chunked copy and the naive symmetrize use 4 bytes
# of a sector whose other bytes other instructions use. On a GPU the caches catch much of that. And a source line stands in for an instruction: the counts are of lines, not
# of the machine instructions a compiler emits; the ratios are what carry over.
#
# `predict_task(run, accelerator)` evaluates the bound at the traced size, and
# `predict_task(run, accelerator, sizes="large")` at a realistic one. For the large size it takes
# the task's traffic formula and scales it by how far the traced kernel was from that formula
# (traced bytes over formula bytes at the traced size): a kernel that moved twice the formula's
# bytes when traced is assumed to move twice at scale. Beside the time: the occupancy of the
# launch's block (lesson 01's calculator; the compiler decides the registers per thread, so a
# typical figure is assumed, printed below).

# %%
runs = {"leaky ReLU": relu_run, "copy (grid-stride)": copy_run, "copy (chunked)": strided_run,
        "symmetrize (naive)": naive_t, "symmetrize (tile)": tiled_t, "symmetrize (padded)": padded_t,
        "a^T b (naive)": mm_naive, "a^T b (tiled)": mm_tiled}
print(f"occupancy assumes {ASSUMED_REGISTERS} registers per thread")
print(f"{'kernel':19s} {'traced':>9s} {'large size':>31s} {'time us':>9s} {'bound':>7s} {'FLOP/B':>7s} "
      f"{'occupancy':>10s}")
predicted = {}
for name, run in runs.items():
    small, large = predict_task(run, "H100 SXM"), predict_task(run, "H100 SXM", sizes="large")
    predicted[name] = (small, large)
    at = ", ".join(f"{dim}={size}" for dim, size in (run.sizes | run.task.large).items())
    print(f"{name:19s} {small.t_s * 1e9:7.1f}ns {at:>31s} {large.t_s * 1e6:9.1f} {large.bound:>7s} "
          f"{large.intensity_flops_per_byte:7.3f} {large.occupancy:6.0%} ({large.occupancy_limiter})")

# %% [markdown]
# At the traced sizes every kernel would take nanoseconds, far below the fixed cost of launching
# any kernel (lesson 01): only the large sizes say something about the design. Every kernel is
# memory-bound, even the tiled $A^T B$ with its `TILE`-wide tiles: its intensity stays below the
# H100's FP32 ridge. Check the table a second way: the bound from the catalog directly, and the
# ratio that scaled each kernel's formula. The lesson's tasks take their formulas from
# `course_lib.kernels.design`, the model of section 10's explorer, with the tile each kernel is
# written for, and their traced sizes have rows a whole number of sectors; so the ratio is exactly
# 1 for every kernel its formula describes, and the waste of the other two is their design's.

# %%
from course_lib.kernels.design import design_bytes

ridge_fp32 = h100.peak("fp32") / h100.mem_bandwidth
for name, (small, large) in predicted.items():
    run = runs[name]
    peak, bw = h100.peak("fp32"), h100.mem_bandwidth
    assert np.isclose(small.t_s, max(run.profile.flops / peak, run.profile.bytes_moved / bw))
    assert np.isclose(large.t_s, max(large.flops / peak, large.bytes_moved / bw))
    assert large.bound == "memory" and large.intensity_flops_per_byte < ridge_fp32
assert predicted["symmetrize (tile)"][1].t_s == predicted["symmetrize (padded)"][1].t_s
ratios = {name: run.profile.bytes_moved / run.task.model_bytes(run.sizes) for name, run in runs.items()}
print(f"FP32 ridge of the {h100.name}: {ridge_fp32:.1f} FLOP/B. Traced bytes / formula bytes: " +
      ", ".join(f"{name} {ratio:.3g}" for name, ratio in ratios.items()))
assert all(ratios[name] == 1 for name in runs if name not in ("copy (chunked)", "symmetrize (naive)"))
assert ratios["copy (chunked)"] == 32 / 4        # every lane its own sector, 4 of its 32 bytes used
mirror_waste = design_bytes("symmetrize (naive)", naive_t.sizes, TILE_T) / naive_t.task.model_bytes(naive_t.sizes)
assert ratios["symmetrize (naive)"] == mirror_waste == (8 + TILE_T) / 12

# %% [markdown]
# So the prediction at scale keeps a kernel's waste only where the waste belongs to the design:
# the chunked copy's lanes are about `COPY_STEPS` elements apart at any size, and the naive
# symmetrize reads its mirror one sector per lane at any size. A trace whose waste comes from its
# size (rows of an odd length that straddle sector boundaries, as the causal mask's of section 3)
# would carry that waste to a large size whose rows are whole sectors; the lesson's examples avoid
# it by their sizes, the puzzles' random odd sizes do not. For the naive $A^T B$, whose re-reads
# the caches would catch, the time is an upper bound.
#
# The tiled $A^T B$ on every NVIDIA GPU in the catalog, at its large size: memory-bound on every
# one, so its predicted time goes with the bandwidth.

# %%
tiled_by_gpu = {}
for name in list_accelerators(kind="gpu"):
    acc = get_accelerator(name)
    if acc.max_warps_per_sm is None:
        continue
    p = predict_task(mm_tiled, name, sizes="large")
    tiled_by_gpu[acc.name] = p
    print(f"{acc.name:15s} {acc.mem_bandwidth / 1e12:5.2f} TB/s {p.t_s * 1e3:8.2f} ms  {p.bound}-bound, "
          f"occupancy {p.occupancy:.0%}")
assert all(p.bound == "memory" for p in tiled_by_gpu.values())
h200 = tiled_by_gpu["H200"]
assert np.isclose(tiled_by_gpu["H100 SXM"].t_s / h200.t_s, h200.bandwidth_bytes_per_s / h100.mem_bandwidth)

# %% [markdown]
# **Occupancy against block size.** A copy does the same work with any block shape, and the
# roofline does not care. Occupancy does: an SM holds at most $B_\text{max}$ blocks and
# $W_\text{max}$ warps, so small blocks run into the block limit first, and a block whose warps do
# not divide $W_\text{max}$ leaves room unused. With the assumed registers and no shared memory,
# neither registers nor shared memory bind, and the occupancy is
#
# $$ \frac{w \cdot \min\left(B_\text{max},\ \lfloor W_\text{max} / w \rfloor\right)}{W_\text{max}},
#    \qquad w = \text{threads per block} / 32. $$

# %%
print(f"{h100.name}: B_max = {h100.max_blocks_per_sm} blocks, W_max = {h100.max_warps_per_sm} warps per SM")
occupancy_of = {}
for tpb in (32, 64, 128, 256, 512, 768, 1024):
    p = predict_time(0, 1, "H100 SXM", threads_per_block=tpb)
    w = tpb // 32
    by_hand = w * min(h100.max_blocks_per_sm, h100.max_warps_per_sm // w) / h100.max_warps_per_sm
    occupancy_of[tpb] = p.occupancy
    print(f"{tpb:5d} threads per block: occupancy {p.occupancy:5.0%} (limited by {p.occupancy_limiter})")
    assert np.isclose(p.occupancy, by_hand)
assert occupancy_of[32] == 0.5 and occupancy_of[768] < 1 == occupancy_of[64] == occupancy_of[1024]

# %% [markdown]
# ## 10. Explore, and the explorer's formulas checked
#
# The explorer below evaluates each design by formula at any size, instantly: N x N matrices (a
# batch of one N x N x N product for $A^T B$) in blocks of tile x tile threads. Its formula is
# `design_bytes`, the one the tasks of section 9 use, so two checks make the explorer and section
# 9 one prediction: at the traced sizes the formula equals the trace to the byte (for the tile each
# kernel was written for), and at the large sizes the explorer's time is `predict_task`'s for the
# same kernel on the same accelerator.

# %%
from course_lib.kernels.design import kernel_design

designs = {"copy (grid-stride)": (copy_run, TILE), "symmetrize (naive)": (naive_t, TILE_T),
           "symmetrize (shared tile)": (tiled_t, TILE_T), "symmetrize (padded tile)": (padded_t, TILE_T),
           "a^T b (naive)": (mm_naive, TILE), "a^T b (tiled)": (mm_tiled, TILE)}
for design, (run, tile) in designs.items():
    large = run.task.large
    side = math.isqrt(large["n"]) if design.startswith("copy") else large["n"]    # the copy's n is N^2
    by_trace = predict_task(run, "H100 SXM", sizes="large")
    by_explorer = kernel_design(design, tile, "H100 SXM", side)
    print(f"{design:25s} traced {run.profile.bytes_moved:7,d} B, formula "
          f"{design_bytes(design, run.sizes, tile):7,.0f} B; N = {side}: section 9 {by_trace.t_s * 1e6:8.1f} us, "
          f"explorer {by_explorer.prediction.t_s * 1e6:8.1f} us")
    assert run.profile.bytes_moved == design_bytes(design, run.sizes, tile)
    assert np.isclose(by_trace.t_s, by_explorer.prediction.t_s, rtol=1e-12)
    assert run.profile.shared_bytes_per_block == by_explorer.shared_mem_per_block

# %% [markdown]
# One kernel, one prediction. Choose a design, a tile (blocks of tile x tile threads), an
# accelerator and the matrix side. Watch the tiled $A^T B$'s traffic fall as its tile grows, and
# see whether its occupancy moves on each accelerator. The padded tile costs a little more shared
# memory than the plain one, for no change in predicted time: the roofline sees DRAM, not banks.

# %%
from course_lib.widgets.kernels import kernel_explorer

explorer = kernel_explorer("H100 SXM")
explorer

# %% [markdown]
# ## 11. On a real GPU (optional)
#
# With an NVIDIA GPU and numba's CUDA, this cell times the grid-stride copy and the tiled $A^T B$ above at
# their large sizes, with CUDA events, and sets each beside its prediction for the catalog GPU of
# the same name. Without one, it says so in one line.

# %%
from course_lib.kernels.measure import gpu_status, measure_kernel

has_gpu, device = gpu_status()
print(device if not has_gpu else f"timing on {device}")
if has_gpu:
    # The catalog GPU whose name's words all appear in the device's name, else its model number.
    gpus = list_accelerators(kind="gpu")
    catalog = next((g for g in gpus if all(w.lower() in device.lower() for w in g.split())),
                   next((g for g in gpus if g.split()[0].lower() in device.lower()), "H100 SXM"))
    for kernel, run in [(copy_grid_stride, copy_run), (bmm_tn_tiled, mm_tiled)]:
        sizes = run.sizes | run.task.large
        data = run.task.make_data(np.random.default_rng(SEED), sizes)
        grid, block = run.task.launch(sizes)
        seconds = measure_kernel(kernel, grid, block, [data[p] for p in run.task.params], repeats=20)
        pred = predict_task(run, catalog, sizes="large")
        print(f"{run.task.name:13s} {seconds * 1e6:10.1f} us measured, {pred.t_s * 1e6:10.1f} us predicted "
              f"for the {catalog} ({seconds / pred.t_s:.2f}x)")

# %% [markdown]
# ## 12. Warp-level primitives: a reduction without shared memory
#
# The 32 lanes of a warp can pass registers to each other directly. `cuda.shfl_xor_sync(mask, v,
# k)` returns, to lane $l$, the `v` of lane $l \oplus k$; `shfl_down_sync(mask, v, d)` the `v` of
# lane $l + d$ (a lane past 31 gets its own value back), `shfl_up_sync` of lane $l - d$, and
# `shfl_sync(mask, v, src)` of lane `src`. `ballot_sync(mask, p)` gives every lane the bits of
# the lanes whose predicate is true; `all_sync` and `any_sync` reduce a predicate;
# `cuda.syncwarp(mask)` orders shared-memory accesses inside the warp. The `mask` names the
# lanes that take part, and every one of them must reach the same primitive with the same mask
# (CUDA C++ Programming Guide, "Warp Shuffle Functions"). Five butterfly steps with $k = 16, 8,
# 4, 2, 1$ give every lane the warp's maximum, with no shared memory and no barrier:

# %%
FULL_MASK = 0xFFFFFFFF


@cuda.jit
def warp_max(a, out):
    i = cuda.grid(1)
    v = a[i] if i < a.size else -math.inf          # a lane with no element holds max's identity
    k = 16
    while k > 0:
        v = max(v, cuda.shfl_xor_sync(FULL_MASK, v, k))
        k //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


a_wm = np.random.default_rng(SEED).standard_normal(3 * 32 - 7).astype(np.float32)
out_wm = np.zeros(3, np.float32)
wm_prof = profile_trace(trace_launch(warp_max, 1, 96, a_wm, out_wm))
print(wm_prof.summary())
assert np.array_equal(out_wm, [a_wm[w * 32:(w + 1) * 32].max() for w in range(3)])
assert wm_prof.shared_accesses == 0 and wm_prof.warp_shuffles == 3 * 5 and wm_prof.safe

# %% [markdown]
# The profile counts the shuffles as warp instructions (5 per warp), apart from memory: a
# shuffle moves registers, not bytes. The mask is a promise. Guard the shuffle with the element
# test and the lanes past the end never reach it; the executor stops and names them:

# %%
@cuda.jit
def warp_max_guarded(a, out):
    i = cuda.grid(1)
    if i < a.size:
        v = a[i]
        k = 16
        while k > 0:
            v = max(v, cuda.shfl_xor_sync(FULL_MASK, v, k))
            k //= 2
        if cuda.laneid == 0:
            out[i // 32] = v


try:
    trace_launch(warp_max_guarded, 1, 96, a_wm, out_wm)
except WarpSyncError as exc:
    warp_message = str(exc)
print(warp_message)
assert "never arrive" in warp_message

# %% [markdown]
# Two uses follow. A warp per row of a matrix: lane $l$ reads columns $l, l + 32, \dots$ of its
# row (neighbouring addresses, coalesced even when each thread's row would be one sector per
# lane), then the warp combines its lanes' values by shuffles. And `ballot_sync` turns a
# predicate into a mask, from which `cuda.popc` counts the lanes:

# %%
@cuda.jit
def count_positive_per_warp(a, out):
    i = cuda.grid(1)
    bits = cuda.ballot_sync(FULL_MASK, i < a.size and a[i] > 0)
    if cuda.laneid == 0:
        out[i // 32] = cuda.popc(bits & 0xFFFFFFFF)


out_pos = np.zeros(3, np.float32)
trace_launch(count_positive_per_warp, 1, 96, a_wm, out_pos)
print("positive elements per warp:", out_pos.astype(int).tolist())
assert out_pos.tolist() == [int((a_wm[w * 32:(w + 1) * 32] > 0).sum()) for w in range(3)]

# %% [markdown]
# ## 13. More patterns: privatise, scan, stage a halo, tile in registers
#
# Four techniques the design puzzles (09.16 to 09.24) need, each shown here on a neighbouring
# problem.
#
# **Privatise, then merge.** Many threads adding into one global counter wait on each other at
# L2. A block can count into shared memory first, with *shared* atomics (the SM's own memory),
# and add its total once. Here, the count of negative values:

# %%
@cuda.jit
def count_negative(a, out):
    c = cuda.shared.array(1, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if t == 0:
        c[0] = 0
    cuda.syncthreads()
    if i < a.size and a[i] < 0:
        cuda.atomic.add(c, 0, 1)                   # shared atomic
    cuda.syncthreads()
    if t == 0:
        cuda.atomic.add(out, 0, c[0])              # one global atomic per block


a_neg = np.random.default_rng(SEED + 1).standard_normal(3 * BLOCK - 3).astype(np.float32)
out_neg = np.zeros(1, np.int32)
neg_prof = profile_trace(trace_launch(count_negative, 3, BLOCK, a_neg, out_neg))
print(neg_prof.summary())
assert out_neg[0] == (a_neg < 0).sum() and neg_prof.safe
assert neg_prof.global_atomics == 3 and neg_prof.shared_atomics == (a_neg < 0).sum()

# %% [markdown]
# **Scan.** A reduction keeps one sum; a scan keeps every prefix. In the Hillis-Steele pattern
# the distance doubles, 1, 2, 4, ..., and at each step thread $t$ combines its value with thread
# $t - d$'s. Each step must read before anyone overwrites what it reads: with one shared array, a
# barrier between the read and the write and another after. With two (read one, write the other,
# then swap their roles) one barrier per step is enough. Here the running maximum of each block's
# elements, with two buffers:

# %%
@cuda.jit
def running_max_block(a, out):
    s = cuda.shared.array((2, BLOCK), np.float32)   # two buffers: read one, write the other
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[0, t] = a[i] if i < a.size else -math.inf
    cuda.syncthreads()
    src = 0
    d = 1
    while d < BLOCK:
        v = s[src, t]
        if t >= d:
            v = max(v, s[src, t - d])
        s[1 - src, t] = v
        cuda.syncthreads()                          # all writes done before the roles swap
        src = 1 - src
        d *= 2
    if i < a.size:
        out[i] = s[src, t]


out_rm = np.zeros(a_neg.size, np.float32)
rm_prof = profile_trace(trace_launch(running_max_block, 3, BLOCK, a_neg, out_rm))
want_rm = np.concatenate([np.maximum.accumulate(a_neg[b:b + BLOCK]) for b in range(0, a_neg.size, BLOCK)])
assert np.array_equal(out_rm, want_rm) and rm_prof.safe and rm_prof.barriers == 1 + int(math.log2(BLOCK))
print(f"{int(math.log2(BLOCK))} steps, {rm_prof.barriers} barriers per thread, "
      f"{rm_prof.global_loads} loads for {a_neg.size} elements")

# %% [markdown]
# A scan over the whole array needs what came before each block. One block can walk the array
# tile by tile and carry the running total in a register (09.18); across many blocks, a second
# launch scans the blocks' totals, or each block waits for its predecessor's (a "chained" scan),
# which the course's executor, running blocks one after another, does not model.
#
# **Stage a halo.** A stencil reads neighbours: output $i$ of a 3-point average needs $x_{i-1}$,
# $x_i$ and $x_{i+1}$. A block loads its `BLOCK` elements and one more on each side (the halo)
# into shared memory once, and every thread reads its three from there:

# %%
@cuda.jit
def average3(x, y):
    tile = cuda.shared.array(BLOCK + 2, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = x.size
    tile[t + 1] = x[i] if i < n else 0.0
    if t == 0:
        tile[0] = x[i - 1] if i >= 1 else 0.0
        j = cuda.blockIdx.x * BLOCK + BLOCK
        tile[BLOCK + 1] = x[j] if j < n else 0.0
    cuda.syncthreads()
    if i < n:
        y[i] = (tile[t] + tile[t + 1] + tile[t + 2]) / 3.0


y_avg = np.zeros(a_neg.size, np.float32)
avg_prof = profile_trace(trace_launch(average3, 3, BLOCK, a_neg, y_avg))
padded = np.concatenate([[0.0], a_neg, [0.0]])
assert np.allclose(y_avg, (padded[:-2] + padded[1:-1] + padded[2:]) / 3, atol=1e-6) and avg_prof.safe
print(f"global loads {avg_prof.global_loads} for {a_neg.size} outputs (each element once, plus "
      f"{avg_prof.global_loads - a_neg.size} halo loads); reading x directly would be {3 * a_neg.size}")

# %% [markdown]
# **Tile in registers.** In the tiled matmul of section 7 every multiply-add reads two words of
# shared memory. A thread that computes several outputs can hold a value in a register and use
# it for each of them. An outer product, `out[r, c] = a[r] * b[c]`, with two columns per thread
# reads `a[r]` once for two outputs:

# %%
@cuda.jit
def outer_two_per_thread(a, b, out):
    c2, r = cuda.grid(2)
    c = 2 * c2
    if r < out.shape[0] and c < out.shape[1]:
        ar = a[r]                                  # one load, two uses
        out[r, c] = ar * b[c]
        if c + 1 < out.shape[1]:
            out[r, c + 1] = ar * b[c + 1]


a_o, b_o = a_neg[:19], a_neg[19:19 + 45]
out_o = np.zeros((19, 45), np.float32)
o_prof = profile_trace(trace_launch(outer_two_per_thread, (1, 3), BLOCK_2D, a_o, b_o, out_o))
assert np.allclose(out_o, np.outer(a_o, b_o)) and o_prof.safe
loads_a = sum(i.accesses for i in o_prof.instructions if i.array == "a")
print(f"loads of a: {loads_a} for {out_o.size} outputs (one thread per element: {out_o.size})")
assert loads_a == 19 * -(-45 // 2)

# %% [markdown]
# Register tiling trades shared-memory reads for registers per thread (lesson 01's occupancy
# calculator says when that costs warps). The same accounting applies to a micro-tile of a
# matmul: $\mu \times \mu$ outputs per thread read $2\mu$ words per step for $\mu^2$
# multiply-adds.
#
# **Divergence in sparse rows.** Rows of a sparse matrix differ in length. With one thread per
# row, the lanes of a warp wait for its longest row; with a warp per row, the lanes share the
# long rows. The profile's SIMT efficiency shows it, here for the row sums of a CSR matrix with a
# few long rows among short ones:

# %%
@cuda.jit
def csr_row_sums_thread(indptr, data, y):
    r = cuda.grid(1)
    if r < y.size:
        acc = 0.0
        for j in range(indptr[r], indptr[r + 1]):
            acc += data[j]
        y[r] = acc


@cuda.jit
def csr_row_sums_warp(indptr, data, y):
    r = cuda.grid(1) // 32
    acc = 0.0
    if r < y.size:
        for j in range(indptr[r] + cuda.laneid, indptr[r + 1], 32):
            acc += data[j]
    k = 16
    while k > 0:
        acc += cuda.shfl_xor_sync(FULL_MASK, acc, k)
        k //= 2
    if cuda.laneid == 0 and r < y.size:
        y[r] = acc


rng_csr = np.random.default_rng(SEED + 2)
lengths = rng_csr.geometric(0.2, 32) - 1
lengths[[3, 17]] = 90                              # two long rows
indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
data = rng_csr.standard_normal(int(indptr[-1])).astype(np.float32)
sums = {}
for name, kernel, grid, block in (("a thread per row", csr_row_sums_thread, 1, 32),
                                  ("a warp per row", csr_row_sums_warp, 8, BLOCK)):
    y_csr = np.zeros(32, np.float32)
    prof = profile_trace(trace_launch(kernel, grid, block, indptr, data, y_csr))
    assert np.allclose(y_csr, np.add.reduceat(np.append(data, 0), indptr[:-1]) * (lengths > 0), atol=1e-4)
    sums[name] = prof
    print(f"{name:16s}: SIMT efficiency {prof.simt_efficiency:.0%}, the busiest warp issues "
          f"{prof.issued_per_warp.max()} instructions")
assert sums["a warp per row"].simt_efficiency > sums["a thread per row"].simt_efficiency

# %% [markdown]
# ## 14. The same counts in Nsight Compute's names
#
# On a GPU, NVIDIA's Nsight Compute (`ncu`) measures what the trace counts here. `profile.nsight()`
# puts each count beside the `ncu` metric it corresponds to: requests and sectors of the global
# loads and stores and the bytes used per sector, the shared-memory instructions, wavefronts and
# bank conflicts, the lanes active per instruction (the SIMT efficiency times 32), the branch
# efficiency, the theoretical occupancy (lesson 01's calculator, passed in below) and the achieved
# one, which only a GPU measures. The names and their sources are data
# (`course_lib/data/nsight_metrics.toml`): most were found in the section and rule files NVIDIA
# ships with `ncu`; those marked `?` (global requests and sectors, DRAM bytes) only in public `ncu`
# scripts and in a real report, so they are unverified. On a GPU, `ncu --query-metrics` lists the
# names that exist. The unpadded and the padded shared tiles of section 6 (the symmetric part):

# %%
from course_lib.kernels.profile import nsight_metrics, nsight_report

for name, run in (("symmetrize (tile)", tiled_t), ("symmetrize (padded)", padded_t)):
    occ = predict_task(run, "H100 SXM").occupancy
    print(f"{name}:\n{run.profile.nsight(occ)}\n")
unverified = [m.metric for m in nsight_metrics() if m.status != "verified"]
print(f"{len(nsight_metrics()) - len(unverified)} of {len(nsight_metrics())} names found in NVIDIA's files; "
      f"unverified: {', '.join(unverified)}")
conflicts = {name: run.profile.shared_bank_conflicts for name, run in (("tile", tiled_t), ("padded", padded_t))}
assert conflicts["padded"] == 0 < conflicts["tile"]
assert tiled_t.profile.shared_bank_conflicts == (tiled_t.profile.shared_load_bank_conflicts
                                                 + tiled_t.profile.shared_store_bank_conflicts)
assert len(nsight_metrics()) == len(tiled_t.profile.nsight().splitlines()) - 1
assert all(m.source.count("https://") == 1 or m.status != "verified" for m in nsight_metrics())

# %% [markdown]
# ### A real report beside the trace
#
# No GPU ran for this lesson, so the report read here is not of this course's kernels: it is a
# user's `ncu` run of a transpose through shared memory from a CUDA training series, quoted in a
# question on NVIDIA's developer forum (the source is in the data file). Its kernel, on doubles,
# stores the tile column-wise and reads it row-wise:
# `smemArray[threadIdx.x][threadIdx.y] = a[INDX(tileX + threadIdx.x, tileY + threadIdx.y, m)]`,
# a barrier, then `c[INDX(tileY + threadIdx.x, tileX + threadIdx.y, m)] = smemArray[threadIdx.y][threadIdx.x]`.
# What the post does not quote, we infer from the report: `INDX(row, col, m) = col * m + row`
# (column-major: only then do both global accesses take eight sectors per request, as
# reported), blocks of 32 x 32 threads (the 32-way store conflicts) and $m = 4096$ (524,288
# load requests of 32 lanes are $4096^2$ elements, one per thread). Written for the tracer, one
# block on a 32 x 32 matrix does what each of the real run's $(4096/32)^2 = 16{,}384$ blocks
# does, so the trace's counts times 16,384 should be the report's:
#
# $$\text{conflicts}_\text{ncu} = \text{wavefronts} - \text{requests} \times \left\lceil \frac{32 \times 8\ \text{B}}{128\ \text{B}} \right\rceil, \qquad \text{conflicts}_\text{trace} = \text{wavefronts} - \text{requests}$$

# %%
@cuda.jit
def forum_transpose(a, c):
    s = cuda.shared.array((32, 32), np.float64)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    tile_x, tile_y = cuda.blockIdx.x * 32, cuda.blockIdx.y * 32
    s[tx, ty] = a[tile_y + ty, tile_x + tx]          # a[INDX(tileX + tx, tileY + ty, m)], row-major
    cuda.syncthreads()
    c[tile_x + ty, tile_y + tx] = s[ty, tx]


report = nsight_report()
rep = report["metrics"]
a64 = np.random.default_rng(SEED).standard_normal((32, 32))
c64 = np.zeros_like(a64)
forum = profile_trace(trace_launch(forum_transpose, (1, 1), (32, 32), a64, c64))
assert np.array_equal(c64, a64.T) and forum.safe
blocks = (4096 // 32) ** 2
pairs = [("global_load_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
         ("global_load_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
         ("global_store_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
         ("shared_load_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
         ("shared_store_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")]
print(f"{report['kernel']}, {rep['l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum']:,} load requests\n")
print(f"{'count':26s} {'trace x ' + format(blocks, ','):>16s} {'ncu report':>14s}   ratio   metric")
for count, metric in pairs:
    ours = getattr(forum, count) * blocks
    print(f"{count:26s} {ours:16,} {rep[metric]:14,}  {rep[metric] / ours:6.4f}   {metric}")
requests = rep["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]    # one shared store and load each
ideal = requests * math.ceil(32 * report["element_bytes"] / 128)        # 2 passes per 256-byte request
for op in ("ld", "st"):
    waves = rep[f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"]
    print(f"shared {op}: ncu's conflicts {rep[f'l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum']:,} "
          f"= {waves:,} wavefronts - {ideal:,} needed ({waves / requests:.2f} per request)")
    assert rep[f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"] == waves - ideal
for count, metric in pairs[:3]:
    assert getattr(forum, count) * blocks == rep[metric]
assert abs(rep[pairs[3][1]] / (forum.shared_load_wavefronts * blocks) - 1) < 1e-3
assert abs(rep[pairs[4][1]] / (forum.shared_store_wavefronts * blocks) - 1) < 0.02
assert forum.shared_store_wavefronts == 32 * forum.shared_store_requests           # 32-way: one bank pair

# %% [markdown]
# The global requests and sectors agree exactly: eight sectors per request, since a warp's 32
# doubles are 256 contiguous bytes, read and written. The shared loads agree to 0.01 % (two
# passes per request: 256 bytes through 128 bytes of banks per pass), the column-wise stores to
# 2 %: 32 passes per request in the trace, where every lane's double falls on the same pair of
# banks, and 32.5 in the report (the real stores need a few passes more than the bank model
# says; the trace cannot say why). The bank conflicts differ in definition, not in count: `ncu`
# subtracts the passes a request needs anyway, two for 8-byte elements, where
# `profile.shared_bank_conflicts` subtracts one (the relation column says so). In `ncu`'s terms
# the trace's loads have no conflict; the report has 88 among a million passes.
#
# The trace's sectors are counted per request, as the L1's tag stage sees them, hits and misses
# alike, so they should match `ncu`'s `l1tex__t_sectors...` wherever the compiler emits one load
# per source access (a vectorised load would merge several), as they do above. The bytes read
# from DRAM (`dram__bytes_read.sum`, unverified) are lower wherever the caches serve re-reads,
# the naive $A^T B$'s above all: section 9's time is an upper bound for such kernels.

# %% [markdown]
# ## Misconceptions
#
# - **"A kernel that gives the right answer is correct."** The upward reduction of section 4 gave
#   every index right and still races: on a GPU its answer depends on which warp runs first. The
#   check reads the trace, so it finds the race whatever the output says.
# - **"Threads in a warp run in lockstep, so they need no `syncthreads`."** Since Volta each
#   thread has its own program counter (lesson 02), and the CUDA programming model promises no
#   lockstep: code that shares data between lanes needs a barrier, here `cuda.syncthreads()`. A
#   single warp that passes values to its neighbour through shared memory races without one:

# %%
@cuda.jit
def rotate_in_warp(a, out):
    s = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    # no barrier here
    out[t] = s[(t + 1) % 32]


a_warp, out_warp = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
one_warp = profile_trace(trace_launch(rotate_in_warp, 1, 32, a_warp, out_warp))
print(f"one block of {one_warp.launch.n_threads} threads, {one_warp.n_warps} warp: "
      f"{one_warp.problems[0].kind}: {one_warp.problems[0].message}")
assert one_warp.n_warps == 1 and one_warp.problems[0].kind == "race"

# %% [markdown]
# - **"More threads per block is always faster."** The time bound does not depend on the block,
#   and occupancy does not grow with it: section 9 printed half occupancy for blocks of one warp,
#   full for 64 threads and for 1024, and less than full for 768 in between.
# - **"The naive matmul reads $2mkn$ values from DRAM."** It *issues* $2mkn$ loads per product (section 7).
#   The lanes of a warp share sectors, and on a GPU the L1 and L2 caches serve most re-reads, so
#   DRAM traffic lies between the compulsory bytes (each matrix once) and the trace's count:

# %%
batch, m, k, n = (mm_naive.sizes[d] for d in ("batch", "m", "k", "n"))
compulsory = 4 * batch * (m * k + k * n + m * n)
traced_bytes = mm_naive.profile.bytes_moved
loads_bytes = 4 * (mm_naive.profile.global_loads + mm_naive.profile.global_stores)
print(f"compulsory {compulsory:,} B <= sectors traced {traced_bytes:,} B <= 4 B per load {loads_bytes:,} B")
assert compulsory <= traced_bytes <= loads_bytes

# %% [markdown]
# - **"The padded tile is faster because it moves fewer bytes."** It moves exactly the same
#   global bytes (section 6). Padding changes only which bank each word of the tile lives in, and
#   what falls is the number of passes through the banks. The roofline prediction of section 9
#   sees DRAM bytes only, so it gives the two the same time; on a GPU the conflicts cost shared-
#   memory cycles that it does not model.
#
# ## Exercises
#
# `my_work/09_kernel_lab.py`, your own copy of the exercises (`make lab` makes it; answers in
# `solutions/09_kernel_lab.py`): one puzzle per kernel task, from the map to the online softmax,
# each a neighbour of a kernel printed here (the map of the leaky ReLU, the 2D map of the causal
# mask, the block sum of the block argmax, the copy of both copies, the transposes of the
# symmetric part, the matmuls of $A^T B$): the lesson prints none of their answers, with a vector add, an outer product and a dot product with one global atomic
# per block on the way. `check("09.1", map_kernel)` and its siblings run your kernel on random
# sizes that no block size divides (drawn from your identity: yours are not your neighbour's), on
# fewer elements than one block and on the puzzle's adversarial data (rows far from zero whose
# exponentials overflow, rows shorter than a warp with masked -inf entries, sizes of one): no
# fault, no race, no read of an output before it is written, every element right, and the
# puzzle's cost target met. A failure says which kind it is and names the misconception it most
# likely comes from, with the section to read again. Then two diagnoses of a correct but slow row
# sum: predict its time on narrower rows than the traced ones, where a warp's lanes share sectors
# (09.14), and choose the change that mends the version staged through shared memory (09.15).
# Last, nine design puzzles whose kernels this lesson does not print, each taught by a
# neighbouring example of sections 12 and 13: a privatised histogram (09.16), a block scan and a
# scan of the whole array (09.17, 09.18), a warp-shuffle sum with no shared memory (09.19), a
# register-tiled matmul (09.20), an INT8 GEMV with scales (09.21), a fused RMSNorm (09.22), a CSR
# sparse matrix-vector product (09.23) and a convolution with a halo (09.24). `make leaderboard`
# ranks a class's passing kernels by the time their own traces predict.
#
# ## Key points
#
# - `cuda.grid(1)` is blockIdx x blockDim + threadIdx; in 2D, x is the column. A warp is 32
#   consecutive threads of a block, x fastest. Always guard: the last block runs past the end.
# - Put x on the fast index, so a warp's 32 lanes read neighbouring words: a few sectors per
#   request instead of one per lane.
# - Every shared-memory exchange between threads needs `cuda.syncthreads()`, inside a warp too. A
#   race is a bug even when the output is right; the trace finds it.
# - A shared tile makes a transposed access coalesced on both sides (section 6's mirror read, a
#   transpose); one word of padding per row removes its 32-way bank conflict (lesson 03's
#   $\gcd(s, 32)$).
# - Tiling a matmul cuts global loads from $2mkn$ to lesson 06's
#   $mk\lceil n/T\rceil + kn\lceil m/T\rceil$.
# - The lanes of a warp exchange registers with `shfl_*_sync`; every lane its mask names must
#   reach the call. A block's partial results go in shared memory first (shared atomics stay in
#   the SM), then one global atomic or store per block.
# - Predicted time = $\max(F/\pi_{32}, Q/\beta)$ with $Q$ the sectors moved: exact when each
#   sector is touched once, an upper bound when the caches would help. Occupancy is a separate
#   check, and a bigger block does not mean a higher one.
