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
# # 02 · Exercises: SIMT, divergence and coalescing
#
# Six exercises on lesson 02: a prediction, a computation on a real accelerator, an exploration
# with the SIMT simulator, a function to write, a profile to diagnose and a reorder to decide on.
# Put your answer in each exercise cell where it says `NotImplementedError` and run the cell.
# `check` prints one line when the answer is right; otherwise it shows your value, the form the
# answer should take and a first hint. `hint("02.3", 2)` shows the next hint.

# %%
import numpy as np

from course_lib.checks import check, hint
from course_lib.hardware import get_accelerator
from course_lib.simt import Let, While, run_simt

# %% [markdown]
# ### Exercise 02.1 (predict): which layout moves fewer bytes?
#
# Particles are 16-byte structures; a warp of 32 threads reads one 4-byte field of 32 consecutive
# particles. Stored as an array of structures (AoS) or as a structure of arrays (SoA), which moves
# fewer bytes from memory? **Decide first**, then check with `course_lib.simt.coalescing`.
# Answer `"aos"`, `"soa"` or `"same"`.

# %%
### BEGIN SOLUTION
prediction = "soa"
### END SOLUTION
check("02.1", prediction)

# %% [markdown]
# ### Exercise 02.2 (compute): how often does an MI300X wavefront diverge?
#
# Each thread takes a branch independently with probability 0.05. Using the MI300X's wavefront
# width from the catalog (`get_accelerator("MI300X").warp_size`), what fraction of wavefronts
# diverge (have lanes on both sides)? Answer with the **expected** fraction, the probability
# computed from 0.05 and the width (a float between 0 and 1, checked to a relative 1e-6), not an
# estimate from simulated wavefronts: a simulation is a good way to check your formula.

# %%
### BEGIN SOLUTION
width = get_accelerator("MI300X").warp_size
share_diverged = 1 - 0.05 ** width - 0.95 ** width
### END SOLUTION
check("02.2", share_diverged)

# %% [markdown]
# ### Exercise 02.3 (explore): the efficiency of an uneven loop
#
# Thread `t` runs `(t % 7) + 1` iterations of a loop whose body has three instructions. Build the
# kernel (an initial `Let("i", ...)` setting `i` to 0, then a `While` whose test is
# `i < tid % 7 + 1` and whose body is `a = 2 i`, `a = a + 1`, `i = i + 1`), run it over 1000
# threads in warps of 32 and report its SIMT efficiency (a float). Before running it, guess
# whether it is above or below one half.

# %%
### BEGIN SOLUTION
kernel = [Let("i", lambda v: 0),
          While(lambda v: v["i"] < v["tid"] % 7 + 1,
                [Let("a", lambda v: v["i"] * 2), Let("a", lambda v: v["a"] + 1),
                 Let("i", lambda v: v["i"] + 1)])]
efficiency = run_simt(kernel, 1000).simt_efficiency
### END SOLUTION
check("02.3", efficiency)

# %% [markdown]
# ### Exercise 02.4 (code): count the sectors
#
# Write `sectors_touched(addresses, bytes_per_access)`: given one warp's byte addresses (a NumPy
# array, any order, any number of lanes) and the size of each access in bytes, return how many
# distinct 32-byte sectors the load touches, as an int. An access may straddle two sectors.

# %%
def sectors_touched(addresses, bytes_per_access):
    """Distinct 32-byte sectors covered by [a, a + bytes_per_access) for every address a."""
    ### BEGIN SOLUTION
    a = np.asarray(addresses, dtype=np.int64)
    first = a // 32
    last = (a + bytes_per_access - 1) // 32
    sectors = set()
    for f, l in zip(first, last):
        sectors.update(range(int(f), int(l) + 1))
    return len(sectors)
    ### END SOLUTION


check("02.4", sectors_touched)

# %% [markdown]
# ### Exercise 02.5 (diagnose): a column read that crawls
#
# A kernel reads a row-major float32 matrix `a` with 1000 columns, one element per thread:
# `row = tid % 32; col = tid // 32; x = a[row * 1000 + col]`. The profiler says its load moves far
# more sectors than it needs. `column_read_addresses("as is")` (from
# `course_lib.exercise_checks.ex_02`) returns one warp's byte addresses and the bytes per access, as
# a profiler would record them; `coalescing(addresses, size)` counts the sectors. **Diagnose first**:
# how far apart are neighbouring lanes? Then choose the one change that makes the load coalesced:
#
# - `"swap"`: map `row = tid // 32; col = tid % 32` instead;
# - `"pad"`: pad every row to 1024 columns;
# - `"half"`: store the matrix as float16;
# - `"blocks"`: launch 256-thread blocks instead of 128.
#
# `column_read_addresses(rewrite)` gives the addresses after each change, so you can check your
# diagnosis with the simulator.

# %%
from course_lib.exercise_checks.ex_02 import column_read_addresses
from course_lib.simt import coalescing

addresses, size = column_read_addresses("as is")
print(f"as is: lanes {addresses[1] - addresses[0]} bytes apart, "
      f"{coalescing(addresses, size).n_sectors} sectors for {32 * size} bytes requested")
### BEGIN SOLUTION
sectors = {r: coalescing(*column_read_addresses(r)).n_sectors for r in ("swap", "pad", "half", "blocks")}
fix = min(sectors, key=sectors.get)
### END SOLUTION
check("02.5", fix)

# %% [markdown]
# ### Exercise 02.6 (decide): is a rare branch worth a sort?
#
# 4096 particles arrive in the order `particle_kinds()` gives: about 1 in 130 needs a long path of
# 60 instructions, the rest a short path of 10 (`particle_kernel()` is that branch, for `run_simt`,
# with the kinds passed as `inputs={"kind": kinds}`). Grouping the particles by kind first (a sort
# of their indices) makes the warps uniform, but the sort costs instructions of its own, the same
# in every thread. **Predict first**: does a sort that costs 20 instructions per thread pay?
# Then measure with the simulator and answer the **break-even cost**: the per-thread cost of the
# sort at which both orders issue the same number of instructions per warp.

# %%
from course_lib.exercise_checks.ex_02 import particle_kernel, particle_kinds

kinds = particle_kinds()
print(f"{kinds.sum()} of {kinds.size} particles take the long path")
### BEGIN SOLUTION
as_is = run_simt(particle_kernel(), kinds.size, inputs={"kind": kinds})
grouped = run_simt(particle_kernel(), kinds.size, inputs={"kind": np.sort(kinds)})
break_even = as_is.issued / as_is.n_warps - grouped.issued / grouped.n_warps
### END SOLUTION
print(f"the sort pays while it costs under {break_even:.1f} instructions per thread")
check("02.6", break_even)
