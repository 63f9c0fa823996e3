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
# # 01 · Exercises: throughput and latency
#
# Seven exercises on lesson 01: a prediction, a computation on a real accelerator, an exploration
# with the latency-hiding simulator, a function to write, and three designs (a register cap under
# spills, a register budget that still hides latency, the loads in flight a kernel needs). Put your
# answer in each exercise cell where it says `NotImplementedError` and run the cell. `check` prints
# one line when the answer is right; otherwise it shows your value, the form the answer should take
# and a first hint. `hint("01.2", 2)` shows the next hint.

# %%
import math

import numpy as np

from course_lib.checks import check, hint, variant
from course_lib.hardware import get_accelerator
from course_lib.latency import ASSUMED_DRAM_LATENCY_S, occupancy, simulate_latency_hiding

# %% [markdown]
# ### Exercise 01.1 (predict): what limits this kernel on an A100?
#
# A kernel runs 128-thread blocks, uses 40 registers per thread and 40 KiB of shared memory per
# block, on an A100. **Before computing anything**, decide which resource limits the blocks per
# SM: `"warps"`, `"registers"`, `"shared memory"` or `"blocks"`. Then confirm with
# `occupancy(128, 40, 40 * 1024, "A100")`.

# %%
raise NotImplementedError("exercise 01.1: what limits this kernel on an A100?")
check("01.1", prediction)

# %% [markdown]
# ### Exercise 01.2 (compute): bytes in flight per SM on an H200
#
# With the lessons' assumed DRAM latency `ASSUMED_DRAM_LATENCY_S`, how many bytes must each of the
# H200's SMs keep in flight to run its memory at full bandwidth? Answer in kilobytes
# (1 kB = 1000 bytes) per SM, as a float. Your accelerator may differ: the cell prints
# `variant("01.2")`, your own numbers (the H200 unless a learner id is set); compute from it.

# %%
v = variant("01.2")
print(v)
raise NotImplementedError("exercise 01.2: bytes in flight per SM on an H200")
check("01.2", kb_per_sm)

# %% [markdown]
# ### Exercise 01.3 (explore): how many warps for 90 %?
#
# Warps compute for 24 cycles, then wait 700 cycles for memory, on one scheduler. Sweep the
# simulator over 1 to 64 warps (`simulate_latency_hiding(np.arange(1, 65), 24, 700)`) and find the
# smallest number of warps whose utilisation reaches 0.9. Answer with an integer.

# %%
raise NotImplementedError("exercise 01.3: how many warps for 90 %?")
check("01.3", n_90)

# %% [markdown]
# ### Exercise 01.4 (code): the register rule
#
# Write `warps_by_registers(registers_per_thread, accelerator)`: how many warps per SM the register
# file allows, by NVIDIA's rules. `accelerator` is a catalog name, a string such as `"H100 SXM"`
# or `"A100 SXM 80GB"`; `acc = get_accelerator(accelerator)` gives its figures. A warp's registers
# are `32 * r` rounded up to the catalog's `register_alloc_unit`; the register file
# (`acc.registers_per_sm` registers) is split evenly into `acc.warp_alloc_granularity`
# sub-partitions, and each warp's registers come from one of them. Return an int. It is checked
# on random register counts and several NVIDIA GPUs of the catalog.

# %%
def warps_by_registers(registers_per_thread, accelerator):
    """Warps per SM that fit in the register file: whole warps per sub-partition x sub-partitions."""
    raise NotImplementedError("exercise 01.4: the register rule")


check("01.4", warps_by_registers)


# %% [markdown]
# ### Exercise 01.5 (decide): how many registers may the compiler use?
#
# A kernel's code needs 150 registers per thread; it runs 128-thread blocks with 12 KiB of shared
# memory each on an H100 SXM. You may cap the registers at one of `caps` below; the compiler
# spills the rest to local memory. You want as many resident warps as possible, **but** the
# spilled registers of all resident threads must fit in the L1 cache that the resident blocks'
# shared memory leaves free (L1 and shared memory share 256 KiB per SM,
# `H100_L1_SHARED_BYTES_PER_SM`), so the reloads stay on chip. Decide the cap and store it in
# `cap`. The lesson's `register_pressure` and `occupancy` do the counting (section 4).

# %%
from course_lib.latency import H100_L1_SHARED_BYTES_PER_SM, register_pressure

caps = (255, 128, 96, 80, 64, 48)
raise NotImplementedError("exercise 01.5: how many registers may the compiler use?")
check("01.5", cap)
# %% [markdown]
# ### Exercise 01.6 (design): how many registers can a kernel afford?
#
# A profile of a kernel on the H100 SXM shows each warp computing for 60 cycles, then waiting
# 500 cycles for a load, again and again. The kernel runs 128-thread blocks with 12 KiB of shared
# memory per block. Its author wants to give each thread as many registers as possible (fewer
# spills, more unrolling), but the SM's issue utilisation (section 3: the fraction of its issue
# slots kept busy) must stay at least **0.9**.
#
# Decide the register budget: the **largest** number of registers per thread, a whole number
# from 1 to 255, for which the warps that fit on the SM reach a utilisation of 0.9. Section 3's
# latency-hiding simulator (on the SM as the H100 has it, without jitter) gives the utilisation
# of a number of resident warps; section 4's occupancy model says how many warps a register
# count lets in. Store it in `budget`.

# %%
raise NotImplementedError("exercise 01.6: how many registers can a kernel afford?")
print(f"{occupancy(128, budget, 12 * 1024).warps_per_sm} warps resident with {budget} registers per thread")
check("01.6", budget)

# %% [markdown]
# ### Exercise 01.7 (diagnose, then design): loads in flight, when each one holds a register
#
# A streaming kernel on the H200 reads 4-byte floats. It runs 256-thread blocks, uses no shared
# memory and needs 72 registers per thread for its own work. Each thread issues `k` independent
# loads before it waits for the first; every load in flight holds its destination register until
# the data arrives. A profile of the kernel with `k = 1` measures **0.5 TB/s** of DRAM traffic over
# the whole chip (1 TB = 10^12 bytes); nothing but the loads in flight limits it.
#
# Assume the memory latency stays what that profile shows. What is the **smallest** whole `k` for
# which the kernel keeps enough bytes in flight to reach the H200's full memory bandwidth (its
# catalog `mem_bandwidth`)? Sections 2 and 4 apply. Store it in `k`.

# %%
from course_lib.latency import littles_law

raise NotImplementedError("exercise 01.7: loads in flight, when each one holds a register")
print(f"k = {k}: {occupancy(256, 72 + k, 0, 'H200').warps_per_sm} warps per SM resident")
check("01.7", k)
