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
# # 07 · Exercises: inference economics
#
# Nine exercises on lesson 07: a prediction, computations on real accelerators and models, an
# exploration, a function to write, a compute-optimal model, and three decisions (serving slots, the
# cheapest deployment, the HBM bandwidth at which FP8 overtakes INT4). Put your answer in each
# exercise cell where it says `NotImplementedError` and run the cell. `check` prints one line when
# the answer is right; otherwise it shows your value, the form the answer should take and a first
# hint. `hint("07.2", 2)` shows the next hint.
#
# Models: `get_model(name)` (its `.params`, `.layers`, `.kv_heads`, `.head_dim`); accelerators:
# `get_accelerator(name)`. The lesson's functions are in `course_lib.economics`.

# %%
import math

from course_lib.checks import check, hint, variant
from course_lib.economics import (cost_per_million_tokens_usd, crossover_batch, decode_step,
                                  get_model, training_time_s)
from course_lib.hardware import get_accelerator

# %% [markdown]
# ### Exercise 07.1 (predict): Llama 3 70B on four H200s
#
# Llama 3 70B is split evenly over four H200s and serves 32 sequences at once, each with 2048
# tokens of context, in BF16. **Before computing anything**, decide: is a decode step
# memory-bound or compute-bound? Set `prediction` to `"memory"` or `"compute"`, run the cell, and
# then check your reasoning with `decode_step`.

# %%
raise NotImplementedError("exercise 07.1: Llama 3 70B on four H200s")
check("07.1", prediction)

# %% [markdown]
# ### Exercise 07.2 (compute): how long to train a 70B model?
#
# Take Llama 3 70B's parameter count from `get_model("Llama 3 70B").params`, 15 trillion tokens,
# 2048 H100 SXM GPUs in dense BF16 and a model-FLOP utilization of 0.35. Compute the training
# time $t = 6ND / (u \pi G)$ and store it in `days`, **in days**. Your model, tokens and
# cluster may differ: the cell prints `variant("07.2")`, your own numbers (the ones above unless
# a learner id is set); compute from it.

# %%
v = variant("07.2")
print(v)
raise NotImplementedError("exercise 07.2: how long to train a 70B model?")
check("07.2", days)

# %% [markdown]
# ### Exercise 07.3 (compute): what does a million tokens cost?
#
# Mistral 7B serves 64 sequences with 3000 tokens of context each on one H200, with FP8 weights
# and FP8 cache (`precision="fp8"`). Suppose (an assumption for this exercise, not a quoted price)
# the H200 costs **3.10 US dollars per hour**. Using the decode-step bound, compute the cost of
# generating one million tokens and store it in `usd_per_million`, in dollars.

# %%
raise NotImplementedError("exercise 07.3: what does a million tokens cost?")
check("07.3", usd_per_million)

# %% [markdown]
# ### Exercise 07.4 (explore): when does decode turn compute-bound?
#
# Llama 3 8B on a B200 with int8 weights (`precision="int8 weights"`: the weights are stored in
# 8 bits, the matrix multiplications run in BF16), each sequence holding 100 tokens of context.
# Find the **smallest whole batch size** at which a decode step is compute-bound, by sweeping the
# batch with `decode_step(...).bound` or from `crossover_batch`, and store it in `first_batch`
# (an integer). `crossover_batch` returns the fractional batch where the two times meet: the first
# whole batch past it is that number **rounded up**.
# Then try the widget in the lesson at 4000 tokens of context: what happens to this batch?

# %%
raise NotImplementedError("exercise 07.4: when does decode turn compute-bound?")
check("07.4", first_batch)

# %% [markdown]
# ### Exercise 07.5 (write code): a KV-cache calculator
#
# Write `kv_cache_total_bytes(layers, kv_heads, head_dim, bytes_per_element, context_tokens, batch)`
# returning the bytes of KV cache held by `batch` sequences of `context_tokens` tokens each. Every
# layer keeps one key vector and one value vector of `head_dim` elements per KV head per token.
# The check runs your function on random, odd-sized configurations.

# %%
def kv_cache_total_bytes(layers, kv_heads, head_dim, bytes_per_element, context_tokens, batch):
    """Bytes of KV cache held by ``batch`` sequences of ``context_tokens`` tokens each."""
    raise NotImplementedError("exercise 07.5: a KV-cache calculator")


check("07.5", kv_cache_total_bytes)

# %% [markdown]
# ### Exercise 07.6 (compute): a compute-optimal model for a budget
#
# A lab can spend $2.4 \times 10^{24}$ FLOP on one training run and follows Chinchilla's rule
# of 20 training tokens per parameter (Hoffmann et al. 2022), with $C = 6ND$. How many
# parameters should the model have? Store the number of parameters (not billions) in
# `n_optimal`.

# %%
raise NotImplementedError("exercise 07.6: a compute-optimal model for a budget")
check("07.6", n_optimal)

# %% [markdown]
# ### Exercise 07.7 (decide): how many slots for a latency target?
#
# You serve Llama 3 8B in BF16 on one H100 SXM with continuous batching. Requests arrive at 60 per
# second (the trace below, fixed by its seed); each may grow to 2048 tokens, and the server
# admits a request only if the cache could hold *every* slot at 2048 tokens: the KV cache may use
# at most 40 GB (the rest of the memory holds the weights and the activations). Each decode step
# takes `decode_step(llama, h100, slots, 1024).t_step_s` seconds, so more slots mean slower
# steps but less queueing. The service must keep the 99th-percentile latency (arrival to last
# token) at or under 16 seconds.
#
# Choose a number of slots that meets both constraints and store it in `slots`. Several answers
# are valid. To simulate a choice: convert arrival times to steps with
# `np.floor(arrival_s / step_s)`, run `simulate_batching(arrival_steps, output_tokens, slots)`
# and read `latency_percentile_steps(99)`, in steps.

# %%
import numpy as np

from course_lib.economics import simulate_batching

rng = np.random.default_rng(707)
arrival_s = np.cumsum(rng.exponential(1 / 60, 1500))                   # 60 requests per second
output_tokens = np.minimum(1536, np.maximum(1, np.round(rng.lognormal(np.log(250) - 0.5, 1.0, 1500)))).astype(int)
llama, h100 = get_model("Llama 3 8B"), get_accelerator("H100 SXM")

# %%
raise NotImplementedError("exercise 07.7: how many slots for a latency target?")
check("07.7", slots)

# %% [markdown]
# ### Exercise 07.8 (diagnose, then design): the cheapest deployment under a latency target
#
# Your team serves its own 70B-class model in BF16 on **four H100 SXMs** with ideal tensor
# parallelism (each GPU holds an equal share of the weights and of the cache, reads its share at
# its own bandwidth and does its share of the FLOP; communication is free). Every sequence holds
# 4096 tokens of context. A profile of two batches, `profile` below, gives the decode step's time
# and the memory each GPU uses. The kernels do not reach the catalog's bandwidth, so take the
# rates from the profile, not from the catalog; assume a step stays memory-bound, so that its time
# and its memory are each a fixed part plus a part per sequence, at every batch.
#
# Each decode step must take at most **20 ms**. You rent the GPUs at $3.00 per GPU per hour (an
# assumption for this exercise, not a quoted price) and pay for every GPU of a deployment. You may
# redeploy on 2, 4 or 8 H100 SXMs (80 GB each, same parallelism) with any whole batch whose weights and cache
# fit in the GPUs' memory (section 5). Answer the lowest cost, in dollars per million generated
# tokens (section 6), of any deployment that keeps the 20 ms promise (a float).

# %%
profile = {8: (12.6e-3, 38.0e9), 40: (16.2e-3, 48.7e9)}    # batch: (seconds per step, bytes per GPU), on 4 GPUs
raise NotImplementedError("exercise 07.8: the cheapest deployment under a latency target")
check("07.8", best_usd)

# %% [markdown]
# ### Exercise 07.9 (what-if): how much faster must the HBM be for FP8 to win?
#
# Llama 3 70B does not fit on one H200 in BF16, so you quantize it with one of section 7's schemes:
# `"int4 weights"` stores the weights in 4 bits and keeps the KV cache in BF16; `"fp8"` stores the
# weights and the cache in 8 bits. Every sequence holds 4096 tokens of context. The service promises
# each user a new token at most **20 ms** after the last one, so every decode step must take at most
# 20 ms, and you may run any whole batch of sequences whose weights and cache fit in the memory.
#
# On today's H200, INT4 weights serve more tokens per second than FP8. A later part is planned with
# the H200's compute and its 141 GB of memory but faster HBM. What is the **smallest** HBM
# bandwidth, a multiple of 0.01 TB/s, at which FP8 with its best batch serves **at least as many**
# tokens per second as INT4 weights with theirs, under the same promise? Use section 5's
# decode-step model. Store it in `tbs`, in TB/s (a float).

# %%
raise NotImplementedError("exercise 07.9: how much faster must the HBM be for FP8 to win?")
check("07.9", tbs)

# %% [markdown]
# ## Going further
#
# - Why does the answer to 07.4 disappear at long contexts? Compare the FLOP per cached byte of
#   one sequence with the B200's ridge point.
# - Re-run 07.3 with `"bf16"` and with `"int4 weights"`: which part of the bytes does each shrink?
