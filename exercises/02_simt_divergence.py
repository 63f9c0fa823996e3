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
# Four exercises on lesson 02: a prediction, a computation on a real accelerator, an exploration
# with the SIMT simulator, and a function to write. Put your answer in each exercise cell where it
# says `NotImplementedError` and run the cell. `check` prints one line when the answer is right;
# otherwise it shows your value, the form the answer should take and a first hint.
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
raise NotImplementedError("exercise 02.1: which layout moves fewer bytes?")
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
raise NotImplementedError("exercise 02.2: how often does an MI300X wavefront diverge?")
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
raise NotImplementedError("exercise 02.3: the efficiency of an uneven loop")
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
    raise NotImplementedError("exercise 02.4: count the sectors")


check("02.4", sectors_touched)
