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
# # 03 · Exercises: the memory hierarchy
#
# Seven exercises on lesson 03: a prediction, a computation on a real accelerator, an exploration
# with the cache simulator, a function to write, a memory system to size, a pipeline to diagnose
# and a padding that must serve a cache and the shared-memory banks at once. Put your answer in
# each exercise cell where it says `NotImplementedError` and run the cell. `check` prints one line
# when the answer is right; otherwise it shows your value, the form the answer should take and a
# first hint. `hint("03.2", 2)` shows the next hint.
#
# Catalog figures: `get_accelerator(name).mem_bandwidth` (bytes/s), `.peak("bf16")` (FLOP/s),
# `.sm_count`, `.host_link_bandwidth` (bytes/s, both directions together).

# %%
import numpy as np

from course_lib.checks import check, hint, variant
from course_lib.hardware import get_accelerator
from course_lib.memory import make_trace, simulate_cache

#: The associativities exercise 03.3 chooses from.
WAYS_CHOICES = (1, 2, 4, 8, 16, 32)

# %% [markdown]
# ### Exercise 03.1 (predict): does double buffering hide the copy on an H200?
#
# A matmul kernel computes a 256 x 256 output tile in BF16, stepping through $k$ 64 at a time;
# each step copies the two input slices from HBM while the previous step computes. Give one SM
# its share of the H200's HBM bandwidth and of its dense BF16 peak. The H200 has more
# bandwidth than the H100 and the same compute. **Before computing**, decide whether the copy is
# `"hidden"` behind the compute or `"exposed"`, and set `prediction`. Then check it with
# $t_\text{copy} \le t_\text{compute}$.

# %%
raise NotImplementedError("exercise 03.1: does double buffering hide the copy on an H200?")
check("03.1", prediction)

# %% [markdown]
# ### Exercise 03.2 (compute): loading a 7B model's weights from the host
#
# Seven billion parameters in BF16 are copied from host memory to an H100 SXM over its PCIe link,
# in one direction. How long does the copy take at the link's full rate? Store it in
# `t_load_ms`, **in milliseconds**. Your model and accelerator may differ: the cell prints
# `variant("03.2")`, your own numbers (the ones above unless a learner id is set); compute from it.

# %%
v = variant("03.2")
print(v)
raise NotImplementedError("exercise 03.2: loading a 7B model's weights from the host")
check("03.2", t_load_ms)

# %% [markdown]
# ### Exercise 03.3 (explore): how many ways does this trace need?
#
# The trace below visits six addresses 4 KiB apart, round-robin, 500 times: only 384 bytes of data
# (`make_trace` sweeps six 4096-byte "elements" in order). Run it through a 16 KiB LRU cache with
# 64-byte lines, keeping the capacity fixed and changing only the associativity among
# `WAYS_CHOICES` (1, 2, 4, 8, 16 or 32 ways). Find the fewest ways for which the hit rate reaches
# 90%, and store it in `fewest_ways` (an int). Explain to yourself why fewer ways fail although the
# data is 2% of the cache.

# %%
trace = make_trace("sequential", 6 * 4096, 6 * 500, element_bytes=4096)   # 0, 4096, ..., 20480, 0, ...
raise NotImplementedError("exercise 03.3: how many ways does this trace need?")
check("03.3", fewest_ways)

# %% [markdown]
# ### Exercise 03.4 (write a function): the conflict degree of one warp's shared-memory load
#
# Write `passes(byte_addresses)`: given the 32 byte addresses one warp reads (4-byte words),
# return how many passes shared memory needs, with 32 banks of 4 bytes. Lanes that read the same
# word are served together (a broadcast). Return an `int`.

# %%
def passes(byte_addresses):
    """Passes shared memory needs: the most distinct 4-byte words any one of the 32 banks holds."""
    raise NotImplementedError("exercise 03.4: the conflict degree of one warp's shared-memory load")


check("03.4", passes)


# %% [markdown]
# ### Exercise 03.5 (design): how many HBM stacks keep the ridge point?
#
# A designer wants a chip with the B200's dense BF16 peak whose ridge point stays where the H100
# SXM's is, so kernels that are compute-bound on the H100 stay compute-bound. Memory comes in
# HBM3e stacks of 1024 data pins; assume 9.2 Gbit/s per pin. Decide the smallest whole number of
# stacks that gives at least the bandwidth this needs, and store it in `stacks`. (Lesson 03,
# "Where HBM's bandwidth comes from".)

# %%
from course_lib.memory import bus_bandwidth_bytes_per_s

raise NotImplementedError("exercise 03.5: how many HBM stacks keep the ridge point?")
check("03.5", stacks)
# %% [markdown]
# ### Exercise 03.6 (diagnose): which change pays in a double-buffered kernel?
#
# A matmul kernel copies each tile's slices of A and B (the two are the same size) while it
# computes the tile before, with two buffers. The profile of one block over its 12 tiles is
# printed below, in µs. Four changes are on the table:
#
# - `"third buffer"`: three buffers instead of two;
# - `"faster math"`: a compute twice as fast;
# - `"fp8 inputs"`: A and B stored in FP8 halve the bytes each copy reads, but each tile must then
#   dequantize them to BF16 for the same math, which adds 0.3 µs to its compute;
# - `"multicast"`: blocks run in clusters of two that need the same A slices; one TMA multicast
#   load reads each A slice once for both blocks, so each block's copy reads half of A's bytes
#   (and all of B's).
#
# A copy's time is proportional to the bytes it reads; each change alters only what it says.
# **Diagnose first** from the profile: how
# long is each tile's copy and compute, and which unit waits for the other? Then choose the change
# that shortens the run most (section 5's pipeline model). Store it in `change`.

# %%
from course_lib.memory import pipeline_timeline

profile = pipeline_timeline(12, 1.3e-6, 0.9e-6, 2)
print("tile  copy start  copy end  compute start  compute end   (µs)")
for i in range(4):
    print(f"{i:4d}  {profile.copy_start_s[i] * 1e6:10.2f}  {profile.copy_end_s[i] * 1e6:8.2f}  "
          f"{profile.compute_start_s[i] * 1e6:13.2f}  {profile.compute_end_s[i] * 1e6:11.2f}")
print(f"...  the run ends at {profile.total_s * 1e6:.2f} µs")
raise NotImplementedError("exercise 03.6: which change pays in a double-buffered kernel?")
check("03.6", change)

# %% [markdown]
# ### Exercise 03.7 (design): one padding for the cache and the banks
#
# A kernel walks the first 64 columns of a row-major float32 matrix of 64 rows and 1024 columns,
# column by column: for `j` in 0 to 63, for `i` in 0 to 63, it reads `a[i, j]`. Each row may be
# padded by `pad` unused floats, so `a[i, j]` sits at byte address `4 * (i * (1024 + pad) + j)`.
# The walk runs through a 32 KiB, 4-way LRU cache with 128-byte lines (section 2), and its hit
# rate must reach **0.9**. Two more rules bind the same `pad`:
#
# - another kernel reads the rows with 16-byte (float4) loads, so every row must start on a
#   16-byte boundary: `pad` is a multiple of 4;
# - a third kernel stages the first 32 rows in shared memory with the same padded row length
#   (`1024 + pad` words per row), and a warp reads one column of them, lane `t` from row `t`:
#   that read may meet **at most a 4-way** bank conflict (section 4).
#
# Choose the **smallest** `pad` (a multiple of 4, 0 or more) that meets all three. Store it in `pad`.

# %%
raise NotImplementedError("exercise 03.7: one padding for the cache and the banks")
check("03.7", pad)
