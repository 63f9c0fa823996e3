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
# with the SIMT simulator, a function to write, and two designs (a block shape that keeps its
# loads coalesced, the path length at which a sort pays). Put your answer in each exercise cell
# where it says `NotImplementedError` and run the cell. `check` prints one line when the answer is
# right; otherwise it shows your value, the form the answer should take and a first hint.
# `hint("02.3", 2)` shows the next hint.

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
# ### Exercise 02.5 (design): how narrow can a block be and still read coalesced?
#
# A kernel reads rows 0 to 63 and columns 0 to 255 of a row-major float32 matrix that has
# **1002 columns** and starts at byte address 0, one element per thread. It runs 256-thread blocks shaped `w` threads wide and
# `256 // w` rows tall, tiling those 64 x 256 elements exactly: thread `(tx, ty)` of the block in
# block row `by` and block column `bx` reads `a[by * (256 // w) + ty, bx * w + tx]`. Inside a block
# `tid = ty * w + tx`, and each warp is 32 consecutive `tid`s. For its column sums the kernel wants
# blocks as narrow (as tall) as possible, but its loads must stay close to coalesced: **averaged
# over every warp of the launch, a warp's load may move at most 1.5 times the 128 bytes it
# requests**.
#
# Decide the **smallest** width `w` (a whole number; 256 threads must make whole rows of `w`, and
# a block may not be taller than 64 rows) that meets the target. Section 6's model says which
# bytes a warp's load moves. Store it in `w`.

# %%
from course_lib.simt import coalescing

### BEGIN SOLUTION
def moved_per_requested(w):
    """Mean sectors x 32 bytes per warp over the launch, against the 128 bytes a warp requests."""
    h = 256 // w
    tid = np.arange(256)
    tx, ty = tid % w, tid // w
    sectors = [coalescing(4 * warp, 4).n_sectors
               for by in range(64 // h) for bx in range(256 // w)
               for warp in ((by * h + ty) * 1002 + bx * w + tx).reshape(-1, 32)]
    return np.mean(sectors) * 32 / 128


w = next(w for w in (4, 8, 16, 32, 64, 128, 256) if moved_per_requested(w) <= 1.5)
### END SOLUTION
check("02.5", w)

# %% [markdown]
# ### Exercise 02.6 (design): how long must a rare path be before sorting pays?
#
# A kernel handles particles one per thread, 32 to a warp. Each particle, independently of the
# others, needs a long path of `L` instructions with probability **1/64**, else a short path of 10
# (`particle_kernel(L)` is that branch for section 2's SIMT simulator; pass the kinds as
# `inputs={"kind": kinds}`). Grouping the particles by kind before the branch makes the warps
# uniform, but the grouping costs **11 instructions per thread**, the same in every thread. Count
# the grouped run as a fraction 1/64 of its warps all long and the rest all short (the one mixed
# warp at the seam is left out).
#
# Decide the **shortest** long path `L`, a whole number of instructions from 1 to 1000, for which
# the grouped run, grouping included, issues no more instructions per warp **in expectation**
# over arrival orders than the ungrouped run. The exact expectation is wanted: `sample` below is
# one recorded arrival order of 4096 particles, to test your reasoning against, and a simulated
# sample only estimates the expectation. Store the answer in `shortest`.

# %%
from course_lib.simt import If

sample = np.random.default_rng(2026).random(4096) < 1 / 64


def particle_kernel(long_path):
    """One branch on the particle's kind: ``long_path`` instructions, or 10 of them."""
    return [If(lambda v: v["kind"][v["tid"]],
               then=[Let("a", lambda v: v["tid"] + 1) for _ in range(long_path)],
               orelse=[Let("a", lambda v: v["tid"] + 2) for _ in range(10)])]


print(f"in the sample, {sample.sum()} of {sample.size} particles take the long path")
### BEGIN SOLUTION
p = 1 / 64


def warp_issues(long_path, n_long):
    """Issues of one warp of 32 with n_long particles on the long path."""
    return run_simt(particle_kernel(long_path), 32, inputs={"kind": np.arange(32) < n_long}).issued


def sort_pays(long_path):
    short, long_, mixed = (warp_issues(long_path, n) for n in (0, 32, 1))
    none_long, all_long = (1 - p) ** 32, p ** 32          # a warp is uniform only if all 32 agree
    ungrouped = none_long * short + all_long * long_ + (1 - none_long - all_long) * mixed
    grouped = 11 + p * long_ + (1 - p) * short            # 11 uniform instructions: 11 issues per warp
    return grouped <= ungrouped


lo, hi = 1, 1000                     # the saving grows with the long path: bisect
while lo < hi:
    mid = (lo + hi) // 2
    lo, hi = (lo, mid) if sort_pays(mid) else (mid + 1, hi)
shortest = lo
### END SOLUTION
check("02.6", shortest)
