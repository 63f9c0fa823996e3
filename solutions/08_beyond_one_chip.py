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
# # 08 · Exercises: beyond one chip
#
# Seven exercises on lesson 08: a prediction, a computation on a real accelerator, an exploration
# with the ring simulator, a function to write, and three designs (a batch for a MIG slice, a
# parallel layout that beats a colleague's, a pipeline's micro-batches). Put your answer in each exercise cell where it says
# `NotImplementedError` and run the cell. `check` prints one line when the answer is right;
# otherwise it shows your value, the form the answer should take and a first hint.
# `hint("08.2", 2)` shows the next hint.
#
# Links come from the catalog: `get_link("H100 SXM", "nvlink")` has `.bandwidth_bytes_per_s`
# (per direction) and `.latency_s`; tier `"network"` is one 400 Gb/s InfiniBand port per GPU.

# %%
import numpy as np

from course_lib.checks import check, hint
from course_lib.collectives import collective_time_s, get_link, simulate_ring_all_reduce
from course_lib.hardware import get_accelerator

# %% [markdown]
# ### Exercise 08.1 (predict): tensor parallelism across nodes
#
# Eight H100 SXM GPUs split every matmul of a transformer of width $h = 8192$ (8-way tensor
# parallelism) on 4096 tokens, running their matmuls at half of the dense BF16 peak. Suppose the
# eight sit in *different nodes*, so their all-reduces go over InfiniBand (tier `"network"`).
# Tensor-parallel all-reduces sit between the matmuls: nothing overlaps them, so their time adds
# to the layer's. **Before computing**, decide: do one layer's all-reduces take `"less"` time
# than its matmuls, or `"more"`? Set `prediction`, run the cell, then check your reasoning with
# the ratio $3h/(t-1)$ from the lesson.

# %%
### BEGIN SOLUTION
prediction = "more"
### END SOLUTION
check("08.1", prediction)

# %% [markdown]
# ### Exercise 08.2 (compute): an all-reduce on eight H200s
#
# Data-parallel training of a 13-billion-parameter model on one node of eight H200s all-reduces
# the BF16 gradients (2 bytes each) over NVLink every step. With the alpha-beta model of a ring
# and the H200's catalog link, how long does it take? Store it in `t_allreduce_ms`, **in
# milliseconds**.

# %%
### BEGIN SOLUTION
link = get_link("H200", "nvlink")
grad_bytes = 2 * 13e9
n = 8
t_allreduce_ms = (2 * (n - 1) * link.latency_s
                  + 2 * (n - 1) / n * grad_bytes / link.bandwidth_bytes_per_s) * 1e3
### END SOLUTION
check("08.2", t_allreduce_ms)

# %% [markdown]
# ### Exercise 08.3 (explore): the busiest link of an uneven ring
#
# Run `simulate_ring_all_reduce` on 6 ranks, each holding 23 float32 values (any values: use
# a random generator). 23 does not divide by 6, so the chunks are not equal. Check that every
# rank ends with the sum, then find the largest number of bytes any single link carries over
# the whole all-reduce and store it in `busiest_bytes`. Is it above or below the textbook
# $2(n-1)/n \cdot S$?

# %%
### BEGIN SOLUTION
rng = np.random.default_rng(0)
values = rng.standard_normal((6, 23)).astype(np.float32)
trace = simulate_ring_all_reduce(values)
assert np.allclose(trace.result, values.sum(axis=0), atol=1e-5)
busiest_bytes = trace.link_bytes.max()
### END SOLUTION
check("08.3", busiest_bytes)

# %% [markdown]
# ### Exercise 08.4 (code): ZeRO memory per GPU
#
# Write `zero_bytes(n_params, dp, stage)`: the bytes of model state (weights, gradients and
# optimizer state of mixed-precision Adam) each of `dp` data-parallel GPUs holds under ZeRO
# stage 0, 1, 2 or 3. It is checked on random parameter counts with `dp` values such as 7, 48
# and 100, so a formula that divides the wrong term does not pass.

# %%
def zero_bytes(n_params, dp, stage):
    """Model-state bytes per GPU (weights, gradients, Adam state) under ZeRO stage 0 to 3."""
    ### BEGIN SOLUTION
    weights, grads, optimizer = 2 * n_params, 2 * n_params, 12 * n_params
    if stage >= 1:
        optimizer /= dp
    if stage >= 2:
        grads /= dp
    if stage >= 3:
        weights /= dp
    return weights + grads + optimizer
    ### END SOLUTION


check("08.4", zero_bytes)

# %% [markdown]
# ### Exercise 08.5 (decide): a batch for a MIG slice
#
# Your team gets one **3g.40gb** MIG instance of an H100 SXM to serve Llama 3 8B in BF16, every
# sequence with 2048 tokens of context. The service must (1) fit: weights plus every sequence's KV
# cache in the slice's 40 GB; (2) keep the time per generated token (one decode step) at or under
# **20 ms**; (3) deliver at least **2800 tokens/s** in total. Choose a batch size that meets all
# three and store it in `batch`. Several answers are valid.
#
# `mig_accelerator("3g.40gb", "H100 SXM")` is the slice as an accelerator, which `decode_step`
# accepts; its `.fits`, `.t_step_s` and `.tokens_per_s` are what the constraints are about.

# %%
from course_lib.economics import decode_step
from course_lib.sharing import mig_accelerator

# %%
### BEGIN SOLUTION
slice_3g = mig_accelerator("3g.40gb", "H100 SXM")
ok = []
for b in range(1, 200):
    step = decode_step("Llama 3 8B", slice_3g, b, 2048)
    if step.fits and step.t_step_s <= 0.020 and step.tokens_per_s >= 2800:
        ok.append(b)
batch = ok[len(ok) // 2]
### END SOLUTION
check("08.5", batch)


# %% [markdown]
# ### Exercise 08.6 (diagnose, then design): beat a whole node of tensor parallelism
#
# A colleague trains a 70B model (`transformer_for_params(70e9)`) on 256 H100 SXMs (80 GB each)
# with 4 x 2^20 tokens per step, and chose a whole node of tensor parallelism: tp 8, pp 1, ZeRO
# stage 1, selective recomputation, 32 micro-batches per replica. The cell below prints section
# 3's estimate of that plan: where the step's time goes, and the memory each GPU needs. On the
# cluster the plan ran out of memory: the profiler measured the activations peaking at
# `measured_activations` bytes per GPU. The estimate's activation count leaves out temporary
# buffers that grow in proportion to it; the other terms of its memory are right. Take the same
# proportion to hold for every plan.
#
# Find the fastest plan that really fits and answer its estimated step time in seconds (a float).
# Keep the 256 GPUs, the tokens per step and the colleague's rule for micro-batches (32 per
# replica, or one per sequence when a replica has fewer than 32 sequences; a replica needs at
# least one sequence). Tensor parallelism may be 1, 2, 4, 8 or 16, pipeline parallelism 1, 2, 4
# or 8, the ZeRO stage 1, 2 or 3, and recomputation `"none"`, `"selective"` or `"full"`
# (section 4; no offloading); the GPUs left over form the data-parallel replicas.

# %%
from course_lib.parallelism import ParallelPlan, estimate_training_step, transformer_for_params

model = transformer_for_params(70e9)
measured_activations = 46.4e9                # bytes per GPU, the profiler's peak on the colleague's plan
colleague = estimate_training_step(model, ParallelPlan(256, 8, 1, 1, 32, "selective"), "H100 SXM", 4 * 2 ** 20)
print(f"step {colleague.step_time_s:.2f} s: " + ", ".join(f"{k} {v:.2f} s" for k, v in colleague.times.items() if v))
print(f"memory per GPU {colleague.memory_bytes / 1e9:.1f} GB of {colleague.capacity_bytes / 1e9:.0f}: "
      + ", ".join(f"{k} {v / 1e9:.1f} GB" for k, v in colleague.memory.items()))

# %%
### BEGIN SOLUTION
factor = measured_activations / colleague.memory["activations"]     # the estimate undercounts by this


def measured_bytes(est):
    return est.memory_bytes + (factor - 1) * est.memory["activations"]


best = None
for tp in (1, 2, 4, 8, 16):
    for pp in (1, 2, 4, 8):
        dp = 256 // (tp * pp)
        sequences = 4 * 2 ** 20 // (dp * model.seq_len)
        if sequences < 1:
            continue
        for zero_stage in (1, 2, 3):
            for recompute in ("none", "selective", "full"):
                plan = ParallelPlan(256, tp, pp, zero_stage, min(32, sequences), recompute)
                est = estimate_training_step(model, plan, "H100 SXM", 4 * 2 ** 20)
                if measured_bytes(est) <= est.capacity_bytes and (best is None or est.step_time_s < best.step_time_s):
                    best = est
step_s = best.step_time_s
print(f"tp {best.plan.tp}, pp {best.plan.pp}, ZeRO-{best.plan.zero_stage}, {best.plan.recompute} "
      f"recomputation: {measured_bytes(best) / 1e9:.0f} GB per GPU, {step_s:.2f} s per step")
### END SOLUTION
check("08.6", step_s)

# %% [markdown]
# ### Exercise 08.7 (what-if): how many pipeline stages for a step target?
#
# A model of **48 equal layers** trains with the 1F1B schedule of section 3 and **20
# micro-batches** per step, whatever the number of stages. On one GPU, one micro-batch's forward
# through all 48 layers takes **240 ms** and its backward **480 ms**. Split into `p` stages of
# 48/p layers each (`p` divides 48), a stage's forward of a micro-batch takes its share of the
# 240 ms and its backward its share of the 480 ms, **plus 4 ms for every forward and every
# backward** to launch and to pass the result to the neighbouring stage. Section 3's simulator
# leaves that time out; count it for every `p`, 1 included.
#
# Answer the **fewest** stages `p` for which a step, from the first forward to the last
# backward, takes **at most (<=) 2 s** (an integer; nothing else in the step takes time).

# %%
### BEGIN SOLUTION
from course_lib.parallelism import pipeline_bubble_fraction, simulate_pipeline

m, overhead_ms = 20, 4.0


def step_ms(p):
    slot = 240 / p + 480 / p + 2 * overhead_ms          # one stage's forward and backward
    return m * slot / (1 - pipeline_bubble_fraction(p, m))   # = (m + p - 1) slots


stages = next(p for p in range(1, 49) if 48 % p == 0 and step_ms(p) <= 2000)
# A second way: the simulator, given the stage times.
run = simulate_pipeline(stages, m, "1f1b", t_forward=240 / stages + overhead_ms,
                        t_backward=480 / stages + overhead_ms)
assert np.isclose(run.makespan, step_ms(stages))
print(f"p = {stages}: {step_ms(stages):.0f} ms per step")
### END SOLUTION
check("08.7", stages)

# %% [markdown]
# Where next: in the lesson's parallelism explorer, find the smallest number of H100s that
# trains a 175 B model with 4 Mi tokens per step without running out of memory, first with
# ZeRO stage 1, then with stage 3.
