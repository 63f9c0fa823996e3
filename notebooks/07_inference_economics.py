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
# # 07 · Inference economics: FLOP, bytes, seconds and dollars
#
# **Learning objectives.** After this lesson you can
#
# 1. estimate a training run's compute $C = 6ND$ and its time $6ND / (u\,\pi\,G)$, and read the
#    utilization a model card's GPU-hours imply;
# 2. count the memory mixed-precision Adam needs per parameter, and say what ZeRO sharding,
#    activation recomputation and offloading change;
# 3. place prefill and decode on the roofline and explain why one is compute-bound and the other is not;
# 4. compute the KV cache per token and per sequence under MHA, GQA and MQA;
# 5. bound a decode step's time, find the batch at which it turns compute-bound (if any), and
#    turn tokens per second into dollars per million tokens;
# 6. say what weight quantization and grouped-query attention buy, in numbers.
#
# Models come from `course_lib/data/models.toml` (each field with its source: the authors'
# config files and model cards), accelerators from the cited catalog. Prices are *your* input:
# the lesson uses an assumed example price and says so wherever it does.

# %%
import dataclasses

import numpy as np
import matplotlib.pyplot as plt

from course_lib.economics import (ADAM_MIXED_PRECISION_BYTES, EXAMPLE_PRICE_USD_PER_DEVICE_HOUR,
                                  activation_bytes_per_layer, cost_per_million_tokens_usd,
                                  crossover_batch, decode_kernel, decode_step, get_model,
                                  implied_utilization, kv_cache_bytes, kv_cache_bytes_per_token,
                                  list_models, max_batch, prefill_kernel, serving_curve,
                                  training_flops, training_memory, training_time_s)
from course_lib.hardware import get_accelerator
from course_lib.roofline import matmul_flops, place_kernel
from course_lib.plots import use_course_style
from course_lib.plots.economics import (plot_decode_times, plot_kv_cache, plot_serving_curve,
                                        plot_training_memory)
from course_lib.plots.roofline import plot_roofline

use_course_style()
h100 = get_accelerator("H100 SXM")
llama8 = get_model("Llama 3 8B")
print(f"{'model':12s} {'attention':9s} {'layers':>6s} {'heads':>5s} {'KV heads':>8s} {'params':>15s}")
for name in list_models():
    m = get_model(name)
    print(f"{m.name:12s} {m.attention:9s} {m.layers:6d} {m.heads:5d} {m.kv_heads:8d} {m.params:15,d}")

# %% [markdown]
# The parameter counts above are computed from each model's shape (attention projections,
# feed-forward matrices, embeddings, norm vectors). A count that agrees with the released
# checkpoint's is a check on both the formula and the stored shape; for Llama 2 7B the checkpoint
# also stores 64 rotary-embedding frequencies per layer, which are a buffer, not parameters.

# %%
for name in list_models():
    m = get_model(name)
    if m.params_counted is None:
        print(f"{m.name:12s} no published exact count stored; computed {m.params:,}")
        continue
    stored_extra = m.layers * m.rope_buffer_values_per_layer
    assert m.params + stored_extra == m.params_counted, (m.name, m.params, m.params_counted)
    print(f"{m.name:12s} computed {m.params:,} (+{stored_extra} buffer values) = released {m.params_counted:,}")

# %% [markdown]
# ## 1. Training compute: $C = 6ND$
#
# Training a dense transformer with $N$ parameters on $D$ tokens costs about
#
# $$ C \approx 6 N D \ \text{FLOP}, \qquad t \approx \frac{6ND}{u\,\pi\,G} $$
#
# on $G$ devices of dense peak $\pi$ at model-FLOP utilization $u$. For Llama 3 8B on its 15T
# tokens, on 1024 H100s at an assumed $u = 0.4$:

# %%
tokens_llama3 = llama8.training_tokens
c_llama8 = training_flops(llama8.params, tokens_llama3)
t_llama8 = training_time_s(llama8.params, tokens_llama3, accelerator=h100, n_devices=1024, utilization=0.4)
print(f"C = 6 x {llama8.params:.3e} x {tokens_llama3:.1e} = {c_llama8:.3e} FLOP; "
      f"t = {t_llama8 / 86400:.1f} days on 1024 H100 SXM at u = 0.4")

# %% [markdown]
# **Where the 6 comes from.** A linear layer $Y = XW$ with $X$ of $T \times d_{in}$ and $W$ of
# $d_{in} \times d_{out}$ costs $2Td_{in}d_{out}$ forward. Backward needs $\partial X = \partial Y
# W^T$ and $\partial W = X^T \partial Y$, two more matmuls of the same size. Counting the three
# matmuls with the roofline module's FLOP counter, per parameter per token:

# %%
T_tok, d_in, d_out = 509, 1021, 3001        # asymmetric sizes
forward = matmul_flops(T_tok, d_in, d_out)                  # X W
backward = matmul_flops(T_tok, d_out, d_in) + matmul_flops(d_in, T_tok, d_out)   # dY W^T and X^T dY
per_param_per_token = (forward + backward) / (d_in * d_out * T_tok)
print(f"forward {forward / (d_in * d_out * T_tok):.0f} + backward {backward / (d_in * d_out * T_tok):.0f} "
      f"= {per_param_per_token:.0f} FLOP per parameter per token")
assert per_param_per_token == 6

# %% [markdown]
# **What model cards imply.** Meta's model cards give tokens and GPU-hours; inverting $t$ gives
# the utilization $u = 6ND / (\pi \cdot \text{GPU-hours} \cdot 3600)$ they imply. (The Llama 3 card
# says "15T+" tokens, so its figures are lower bounds on $u$; a card's GPU-hours are an accounting
# total, and the spread between the rows is itself a reason to plan with a range of $u$.)

# %%
for name in ["Llama 2 7B", "Llama 3 8B", "Llama 3 70B"]:
    m = get_model(name)
    u = implied_utilization(m.params, m.training_tokens, m.training_device_hours,
                            accelerator=m.training_device)
    # Second way: put u back into the time formula and get the card's GPU-hours again.
    hours_back = training_time_s(m.params, m.training_tokens, accelerator=m.training_device,
                                 utilization=u) / 3600
    assert np.isclose(hours_back, m.training_device_hours)
    assert 0 < u < 1
    print(f"{m.name:12s} {m.training_tokens:.1e} tokens, {m.training_device_hours:,.0f} "
          f"{m.training_device} hours -> u = {u:.2f}")

# %% [markdown]
# ### How big a model for a budget? Chinchilla's tokens per parameter
#
# $C = 6ND$ says what a run costs, not how to split a budget between parameters and tokens.
# Hoffmann et al. (2022, "Training Compute-Optimal Large Language Models") trained over 400
# models and found loss minimised at a fixed budget when $N$ and $D$ grow about equally, each
# close to $C^{0.5}$. Their Chinchilla, 70B parameters on 1.4T tokens, is about 20 tokens per
# parameter. With $D = rN$:
#
# $$ C = 6N \cdot rN \quad\Rightarrow\quad N = \sqrt{\frac{C}{6r}}, \qquad D = rN. $$
#
# The paper trained Chinchilla on the budget of Gopher, $5.76 \times 10^{23}$ FLOP. What the
# rule $r = 20$ gives for that budget is our own calculation, a check that the rule of thumb lands
# near the paper's model, not a figure from its tables:

# %%
from course_lib.economics import CHINCHILLA_TOKENS_PER_PARAM, compute_optimal

gopher_budget = 5.76e23                    # FLOP, Hoffmann et al. 2022 (Gopher's and Chinchilla's budget)
opt = compute_optimal(gopher_budget)
print(f"our r = {CHINCHILLA_TOKENS_PER_PARAM:.0f} rule (not a row of the paper's tables): N = "
      f"sqrt({gopher_budget:.2e} / {6 * opt.tokens_per_param:.0f}) = {opt.params / 1e9:.1f}B parameters, "
      f"D = {opt.tokens / 1e12:.2f}T tokens")
assert np.isclose(opt.check_flops, gopher_budget)                      # second way: back through 6ND
chinchilla_c = training_flops(70e9, 1.4e12)
print(f"the paper's point, 70B on 1.4T: 6ND = {chinchilla_c:.2e} FLOP, {1.4e12 / 70e9:.0f} tokens per parameter "
      f"({chinchilla_c / gopher_budget - 1:+.1%} from the stated budget)")
assert abs(opt.params / 70e9 - 1) < 0.02 and abs(opt.tokens / 1.4e12 - 1) < 0.02
print("\nthe r = 20 rule at other budgets (the course's calculation, not the paper's fits):")
print(f"{'budget FLOP':>12s} {'N (params)':>11s} {'D (tokens)':>11s}")
for c in (1e21, 1e22, 1e23, 1e24, 1e25):
    o = compute_optimal(c)
    print(f"{c:12.0e} {o.params / 1e9:10.2f}B {o.tokens / 1e12:10.3f}T")
llama_ratio = llama8.training_tokens / llama8.params
print(f"\nLlama 3 8B: {llama_ratio:.0f} tokens per parameter, {llama_ratio / CHINCHILLA_TOKENS_PER_PARAM:.0f}x "
      f"Chinchilla's ratio; its budget would buy a compute-optimal model of "
      f"{compute_optimal(c_llama8).params / 1e9:.0f}B parameters")

# %% [markdown]
# Ten times the budget buys $\sqrt{10} \approx 3.2$ times the parameters and as many times the
# tokens. Chinchilla's rule minimises *training* compute for a given loss. Llama 3 8B was trained
# far past it (the printed ratio): a smaller model trained longer costs more to train but less to
# serve, and serving, the rest of this lesson, is paid on every token generated.

# %% [markdown]
# ## 2. Training memory: 16 bytes per parameter, and how to spend less
#
# Mixed-precision Adam (Rajbhandari et al. 2020, ZeRO, sec. 3.1) keeps, per parameter, 16-bit
# weights and 16-bit gradients, plus an fp32 master copy and the two fp32 Adam moments:

# %%
for part, nbytes in ADAM_MIXED_PRECISION_BYTES.items():
    print(f"  {part:26s} {nbytes} bytes")
bytes_per_param = sum(ADAM_MIXED_PRECISION_BYTES.values())
print(f"  total                      {bytes_per_param} bytes per parameter")
assert bytes_per_param == training_memory(1e9).device_bytes_per_param == 16

# %% [markdown]
# Sharding with ZeRO across $G$ data-parallel devices splits the optimizer state (stage 1), then the
# gradients (stage 2), then the weights (stage 3). The paper's figure 1 gives the per-device bytes
# for a 7.5B model on 64 devices; our function reproduces each bar:

# %%
zero_paper_gb = {0: 120, 1: 31.4, 2: 16.6, 3: 1.9}     # Rajbhandari et al. 2020, fig. 1
for stage, paper in zero_paper_gb.items():
    ours = training_memory(7.5e9, n_devices=64, zero_stage=stage).device_bytes / 1e9
    print(f"stage {stage}: {ours:7.2f} GB (paper: {paper})")
    assert abs(ours - paper) < 0.05 + 0.005 * paper

# %%
llama70 = get_model("Llama 3 70B")
configs = {"plain DP": dict(zero_stage=0), "ZeRO-1": dict(zero_stage=1), "ZeRO-2": dict(zero_stage=2),
           "ZeRO-3": dict(zero_stage=3), "ZeRO-3 +\noffload": dict(zero_stage=3, offload_optimizer=True)}
breakdowns = {k: training_memory(llama70.params, n_devices=64, **v) for k, v in configs.items()}
for k, v in breakdowns.items():
    print(f"{k.replace(chr(10), ' '):18s} {v.device_bytes / 1e9:8.1f} GB per device, "
          f"{v.host_bytes / 1e9:6.1f} GB on the host")
fig = plot_training_memory(breakdowns, capacity_bytes=h100.mem_capacity,
                           title="Llama 3 70B model state per device, 64 devices")
plt.show()

# %% [markdown]
# Offloading is not free. In ZeRO-Offload (Ren et al. 2021) the optimizer state stays in host
# memory and the CPU runs the Adam update, so every step the 16-bit gradients cross the host link
# down and the updated 16-bit weights cross it back up. For Llama 3 8B unsharded, at the H100's
# PCIe 5.0 x16 rate in one direction:

# %%
offloaded = training_memory(llama8.params, offload_optimizer=True).host_bytes
one_way = h100.host_link_bandwidth / 2
moved = 2 * llama8.params                     # 16-bit gradients down, 16-bit weights up
print(f"{moved / 1e9:.0f} GB of gradients down and {moved / 1e9:.0f} GB of weights up at "
      f"{one_way / 1e9:.0f} GB/s: {moved / one_way:.2f} s each way per step; the "
      f"{offloaded / 1e9:.0f} GB of optimizer state never moves")

# %% [markdown]
# **Activations** are the other big term. Korthikanti et al. 2022 count, per layer of a GPT-style
# transformer in 16-bit, $sbh(34 + 5as/h)$ bytes ($s$ sequence, $b$ micro-batch, $h$ hidden, $a$
# heads). Recomputing the attention scores ("selective") keeps $34sbh$; recomputing the whole layer
# ("full" checkpointing) keeps only its input, $2sbh$, at the price of one more forward pass: $8ND$
# instead of $6ND$. (Llama's SwiGLU block differs in detail from the GPT layer this formula counts;
# the orders of magnitude carry over.)

# %%
s, b = 8192, 1
for mode in ["none", "selective", "full"]:
    per_layer = activation_bytes_per_layer(s, b, llama8.hidden_size, llama8.heads, recompute=mode)
    print(f"{mode:9s}: {per_layer / 1e9:7.3f} GB per layer, {per_layer * llama8.layers / 1e9:8.1f} GB "
          f"for {llama8.layers} layers (Llama 3 8B shape, s = {s})")
extra_compute = 8 / 6 - 1
print(f"full recomputation: {extra_compute:.0%} more training FLOP")

# %% [markdown]
# ## 3. Prefill and decode on the roofline
#
# **Prefill** runs the whole prompt of $P$ tokens through the model at once: every weight read is
# used $P$ times. **Decode** generates one token per sequence per step: every weight is read once
# per step and used once per sequence in the batch, and each sequence's whole KV cache is read too.

# %%
kernels = [prefill_kernel(llama8, 16), prefill_kernel(llama8, 2048),
           decode_kernel(llama8, 1, 1024), decode_kernel(llama8, 64, 1024)]
points = [place_kernel(k, h100, "bf16") for k in kernels]
for p in points:
    print(f"{p.kernel.name:20s} {p.intensity_flops_per_byte:8.1f} FLOP/B -> {p.bound}-bound, "
          f"at least {p.t_min_s * 1e3:.2f} ms")
short_prefill, long_prefill, decode1, decode64 = points
assert long_prefill.bound == "compute" and decode1.bound == decode64.bound == "memory"
# Second way for batch-1 decode: 2 FLOP per 2-byte weight, so close to 1 FLOP per byte.
assert 0.9 < decode1.intensity_flops_per_byte < 1.1
fig = plot_roofline(points, title="Llama 3 8B on H100 SXM, BF16")
plt.show()

# %% [markdown]
# A 16-token prompt is still memory-bound: prefill is compute-bound only once the prompt is longer
# than the ridge point (in tokens, for 16-bit weights). Decode at batch 64 reuses each weight read
# 64 times, which is still far below the ridge point; the KV cache, read for only a few FLOP per
# byte, pulls it further left (the printed intensity is below 64).
#
# ## 4. The KV cache: per token, per sequence
#
# Each layer stores one key and one value vector per KV head for every token in the context:
#
# $$ \text{KV bytes per token} = 2 \cdot L \cdot n_{kv} \cdot d_{head} \cdot b $$
#
# MHA has $n_{kv} = n_{heads}$; GQA shares each KV head among a group of query heads; MQA keeps one.

# %%
print(f"Llama 3 8B, BF16: 2 x {llama8.layers} x {llama8.kv_heads} x {llama8.head_dim} x 2 = "
      f"{kv_cache_bytes_per_token(llama8.layers, llama8.kv_heads, llama8.head_dim, 2) / 1024:.0f} KiB per token")
ctx = 8192
print(f"\n{'model':12s} {'attention':9s} {'KiB/token':>10s} {'GB per 8192-token sequence':>28s}")
for name in list_models():
    m = get_model(name)
    print(f"{m.name:12s} {m.attention:9s} {m.kv_bytes_per_token('bf16') / 1024:10.0f} "
          f"{kv_cache_bytes(m, ctx) / 1e9:28.3f}")

# %% [markdown]
# Second way: build a small cache as NumPy arrays, one key and one value tensor per layer of
# shape (tokens, KV heads, head dim), and add up their sizes.

# %%
rng = np.random.default_rng(7)
layers_s, kv_heads_s, head_dim_s, tokens_s = 3, 2, 24, 37
cache = [(rng.standard_normal((tokens_s, kv_heads_s, head_dim_s)).astype(np.float16),
          rng.standard_normal((tokens_s, kv_heads_s, head_dim_s)).astype(np.float16))
         for _ in range(layers_s)]
counted = sum(k.nbytes + v.nbytes for k, v in cache)
formula = tokens_s * kv_cache_bytes_per_token(layers_s, kv_heads_s, head_dim_s, np.dtype(np.float16).itemsize)
print(f"summed nbytes {counted} = formula {formula:.0f}")
assert counted == formula

# %% [markdown]
# The cache grows **linearly** with context: doubling the tokens doubles the bytes. (Mistral 7B's
# sliding window caps its cache at the window, 4096 tokens, after which it stops growing.)

# %%
contexts = np.arange(0, 32769, 1024)
curves = {f"{get_model(n).name} ({get_model(n).attention})": [kv_cache_bytes(n, int(t)) for t in contexts]
          for n in list_models()}
for label, y in curves.items():
    if "Mistral" not in label:
        assert np.allclose(np.diff(y), y[1] - y[0])     # equal steps: a straight line
assert kv_cache_bytes(llama8, 2 * 5000) == 2 * kv_cache_bytes(llama8, 5000)
fig = plot_kv_cache(contexts, curves, capacity_bytes=h100.mem_capacity,
                    title="KV cache per sequence, BF16 (H100 SXM memory for scale)")
plt.show()

# %% [markdown]
# ### Paged KV cache: what reserving memory per request wastes
#
# A server does not know how long a request will grow. Systems before vLLM reserved one
# contiguous buffer per request for the longest sequence allowed; most of it is never written.
# vLLM (Kwon et al., SOSP 2023, "Efficient Memory Management for Large Language Model Serving
# with PagedAttention") stores the cache in fixed-size **blocks** of tokens, allocated as the
# sequence grows and found through a block table, as an operating system pages memory. Only a
# request's last block is part-filled. The authors measured that only 20.4% to 38.2% of the KV
# memory in the systems they compared held token states (60 to 80% waste), and report vLLM's
# waste under 4%.
#
# We simulate it: 2000 requests with log-normal prompt and output lengths, at most 2048 tokens,
# against the contiguous scheme that reserves 2048 tokens each, and against blocks of 1 to 256
# tokens:

# %%
from course_lib.economics import kv_allocation, request_trace, weight_bytes
from course_lib.plots.economics import plot_kv_waste

max_len = 2048
req_rng = np.random.default_rng(70)
_, prompt_len = request_trace(req_rng, 2000, 300, 1.0, sigma=1.0, max_output_tokens=max_len // 2)
_, output_len = request_trace(req_rng, 2000, 200, 1.0, sigma=1.0, max_output_tokens=max_len // 2)
lengths = prompt_len + output_len
blocks = 2 ** np.arange(0, 9)
allocs = [kv_allocation(lengths, max_len, int(blk)) for blk in blocks]
a16 = allocs[list(blocks).index(16)]
print(f"mean request {lengths.mean():.0f} tokens, longest {lengths.max()}; contiguous waste "
      f"{a16.contiguous_waste:.1%}; paged waste with 16-token blocks {a16.paged_waste:.1%}")
for a in allocs:
    # Second way: a request of L tokens leaves (-L mod B) slots of its last block empty.
    assert a.paged_tokens - a.used_tokens == int(np.sum(-lengths % a.block_tokens))
# Third way, for small blocks: the empty part of the last block averages about (B - 1) / 2 slots.
expected_empty = (16 - 1) / 2 * lengths.size
print(f"empty slots with 16-token blocks: {a16.paged_tokens - a16.used_tokens} counted, "
      f"about {expected_empty:.0f} from (B - 1)/2 per request")
assert abs((a16.paged_tokens - a16.used_tokens) / expected_empty - 1) < 0.1
assert 0.6 < a16.contiguous_waste < 0.8 and a16.paged_waste < 0.04       # the prose below: vLLM's ranges
kv_budget = h100.mem_capacity - weight_bytes(llama8, "bf16")
kv_tok = llama8.kv_bytes_per_token("bf16")
fit_contiguous = int(kv_budget // (max_len * kv_tok))
fit_paged = int(np.searchsorted(np.cumsum(-(-lengths // 16) * 16) * kv_tok, kv_budget, side="right"))
print(f"Llama 3 8B on an H100 SXM ({kv_budget / 1e9:.0f} GB left for the cache): {fit_contiguous} requests fit "
      f"contiguously, {fit_paged} paged ({fit_paged / fit_contiguous:.1f}x the batch)")
fig = plot_kv_waste(allocs, title="2000 requests, at most 2048 tokens: KV-cache slots left empty")
plt.show()

# %% [markdown]
# Reserving the maximum wastes most of the memory whenever the typical request is much shorter
# than the longest allowed, as here; vLLM's measured 60 to 80% sits in the same range. Paging
# leaves only the last block's empty slots, about $(B-1)/2$ tokens per request: small blocks
# waste almost nothing, very large ones approach the contiguous scheme. (vLLM uses 16-token
# blocks by default; smaller blocks mean more block-table lookups per attention step.) The
# freed memory is batch: more sequences share each weight read (section 5). A real allocator
# also suffers *external* fragmentation, free memory split into holes too small for a new
# buffer; fixed-size blocks remove that too, which this count of slots does not show.

# %% [markdown]
# ## 5. The decode step: bytes or FLOP, whichever is slower
#
# At batch $B$, each sequence holding $T$ tokens of context, one step moves the weights $W$ once
# and every sequence's cache, and computes $B$ tokens:
#
# $$ t_{\text{step}} \ge \max\left(\frac{B\,(2N_{mm} + 4 L\, n_{h} d_{head} T)}{\pi},\;
#    \frac{W + B\,(T+1)\,k}{\beta}\right) $$
#
# with $N_{mm}$ the parameters a token multiplies by and $k$ the KV bytes per token.

# %%
step = decode_step(llama8, h100, batch=1, context_tokens=1024)
print(f"Llama 3 8B, H100 SXM, batch 1, 1024 tokens: compute {step.t_compute_s * 1e3:.3f} ms, "
      f"memory {step.t_memory_s * 1e3:.3f} ms -> {step.t_step_s * 1e3:.2f} ms per token, "
      f"{step.tokens_per_s:.0f} tokens/s")
# Second way: at batch 1 the step is essentially "read every weight once".
t_weights_only = step.weight_bytes / h100.mem_bandwidth
assert step.bound == "memory" and abs(step.t_step_s / t_weights_only - 1) < 0.02

# %% [markdown]
# **When does decode turn compute-bound?** Setting the two times equal gives
#
# $$ B^* = \frac{W/\beta}{f/\pi - k_{seq}/\beta}, $$
#
# with $f$ the FLOP and $k_{seq}$ the cache bytes of one sequence. With a short context the
# weights dominate the bytes and $B^*$ is near the ridge point (for 16-bit weights, about one
# token per FLOP-per-byte of ridge). We check the formula against a plain sweep over batch sizes.

# %%
for T in [0, 128]:
    b_star = crossover_batch(llama8, h100, T)
    sweep = next(b for b in range(1, 100_000) if decode_step(llama8, h100, b, T).bound == "compute")
    print(f"context {T:4d}: formula B* = {b_star:.1f}, sweep: first compute-bound batch {sweep}")
    assert sweep == int(np.ceil(b_star))
print(f"ridge point {h100.ridge_point('bf16'):.0f} FLOP/B; B* at zero context "
      f"{crossover_batch(llama8, h100, 0):.0f}")

# %% [markdown]
# With a longer context the cache bytes grow with the batch as fast as the FLOP do. Each cached
# byte feeds only a few FLOP, so when $f/k_{seq}$ falls below the ridge point the denominator turns
# negative: **decode stays memory-bound at every batch size**.

# %%
T = 1024
print(f"context {T}: B* = {crossover_batch(llama8, h100, T)}, "
      f"FLOP per cache byte f/k = {step.flops / step.kv_bytes:.0f} < ridge {h100.ridge_point('bf16'):.0f}")
cap = max_batch(llama8, h100, T)
assert np.isinf(crossover_batch(llama8, h100, T))
assert all(decode_step(llama8, h100, b, T).bound == "memory" for b in range(1, 4 * cap, 7))
print(f"checked every 7th batch up to {4 * cap}: all memory-bound (the cache fits up to batch {cap})")
t_never = next(t for t in range(0, 5000) if np.isinf(crossover_batch(llama8, h100, t)))
print(f"from {t_never} tokens of context on, no batch size makes Llama 3 8B decode compute-bound here")
assert np.isfinite(crossover_batch(llama8, h100, t_never - 1))
curve_short = serving_curve(llama8, h100, 128, batches=2 ** np.arange(0, 13))
fig = plot_decode_times(curve_short, title="Llama 3 8B, H100 SXM, BF16, context 128")
plt.show()

# %% [markdown]
# ## 6. Latency against throughput, and dollars per million tokens
#
# Batching raises throughput ($B / t_{\text{step}}$) while each user waits longer per token
# ($t_{\text{step}}$). Cost per token is the device's price divided by its throughput:
#
# $$ \text{USD per } 10^6 \text{ tokens} = \frac{\text{price per device-hour} \times G}{3600 \times
#    \text{tokens/s}} \times 10^6 $$
#
# The price below is an **assumption** for the example, not a market quote: put in your own.

# %%
price = EXAMPLE_PRICE_USD_PER_DEVICE_HOUR          # ASSUMED example price (USD per GPU-hour)
curve = serving_curve(llama8, h100, 2048, highlight=64)
print(f"assumed price ${price:.2f} per H100-hour; Llama 3 8B, BF16, 2048-token contexts")
print(f"{'batch':>6s} {'ms/token':>9s} {'tokens/s':>9s} {'USD per M tokens':>17s} {'fits':>5s}")
for bsz, ms, tps, fits in zip(curve.batch, curve.ms_per_token, curve.tokens_per_s, curve.fits):
    print(f"{bsz:6d} {ms:9.2f} {tps:9.0f} {cost_per_million_tokens_usd(tps, price):17.3f} {str(fits):>5s}")
cost1 = cost_per_million_tokens_usd(curve.tokens_per_s[0], price)
cost64 = cost_per_million_tokens_usd(curve.tokens_per_s[list(curve.batch).index(64)], price)
# Second way: dollars = price x hours, hours = tokens / rate / 3600.
assert np.isclose(cost1, price * (1e6 / curve.tokens_per_s[0]) / 3600)
print(f"batch 64 costs {cost1 / cost64:.0f}x less per token than batch 1")
fig = plot_serving_curve(curve)
plt.show()

# %% [markdown]
# ### Static against continuous batching
#
# Requests do not arrive together or end together. **Static** (request-level) batching takes up
# to $B$ waiting requests, runs them until the *longest* is done, and only then admits new ones:
# a finished sequence's slot idles, and its answer waits for the batch (Yu et al., OSDI 2022,
# "Orca", section 2). **Continuous** (iteration-level) batching, introduced by Orca and used by
# vLLM, refills a slot at the next decode step after its sequence ends.
#
# A discrete-time simulation: requests arrive at random (Poisson), their output lengths are
# log-normal with a mean of 200 tokens, and 32 slots serve them. The offered load is the arrival
# rate times the mean length, as a fraction of the 32 tokens per step the slots can produce. Each
# decode step takes the time section 5's model gives Llama 3 8B on an H100 at batch 32 and
# 1024 tokens of context (an upper bound for partly filled batches).

# %%
from course_lib.economics import simulate_batching
from course_lib.plots.economics import plot_batching

slots, mean_out = 32, 200
step_s = decode_step(llama8, h100, slots, 1024).t_step_s
loads = np.array([0.1, 0.2, 0.3, 0.5, 0.7, 0.9])
runs = {"static": [], "continuous": []}
for load in loads:
    arr, out = request_trace(np.random.default_rng(71), 3000, mean_out, load * slots / mean_out,
                             sigma=1.0, max_output_tokens=2000)
    for policy in runs:
        runs[policy].append(simulate_batching(arr, out, slots, policy))
print(f"one decode step: {step_s * 1e3:.1f} ms; {slots} slots produce at most {slots / step_s:,.0f} tokens/s")
print(f"{'load':>5s} {'policy':>11s} {'tokens/step':>12s} {'tokens/s':>9s} {'p50 s':>8s} {'p99 s':>8s}")
for i, load in enumerate(loads):
    for policy in runs:
        r = runs[policy][i]
        print(f"{load:5.1f} {policy:>11s} {r.tokens_per_step:12.2f} {r.tokens_per_step / step_s:9,.0f} "
              f"{r.latency_percentile_steps(50) * step_s:8.1f} {r.latency_percentile_steps(99) * step_s:8.1f}")
for r in runs["static"] + runs["continuous"]:
    assert r.tokens_per_step <= slots                                  # bound: B tokens per step
    assert r.total_steps >= r.tokens / slots
# Second way for static batching's ceiling: with a queue that never empties, each batch of B
# takes as long as its longest request, so throughput -> B * mean(L) / mean(batch maximum).
arr_sat, out_sat = request_trace(np.random.default_rng(72), 3200, mean_out, 1e3, sigma=1.0, max_output_tokens=2000)
saturated = simulate_batching(np.zeros_like(arr_sat), out_sat, slots, "static")
closed_form = out_sat.sum() / out_sat.reshape(-1, slots).max(axis=1).sum()
print(f"static batching, queue always full: {saturated.tokens_per_step:.2f} tokens/step simulated, "
      f"{closed_form:.2f} from the batch maxima")
assert np.isclose(saturated.tokens_per_step, closed_form)
def offered(run):                                     # tokens asked for per step, from the trace
    return run.tokens / (run.arrival_steps[-1] + 1)

kept_up = {p: [r.tokens_per_step >= 0.9 * offered(r) for r in runs[p]] for p in runs}
print(f"throughput within 10% of the offered tokens per step: continuous at {sum(kept_up['continuous'])} "
      f"of {len(loads)} loads, static at {sum(kept_up['static'])}; static batching tops out near "
      f"{closed_form:.1f} tokens/step ({closed_form / slots:.0%} of the slots)")
low = 0
p99_ratio = runs["static"][low].latency_percentile_steps(99) / runs["continuous"][low].latency_percentile_steps(99)
p50_ratio = runs["static"][low].latency_percentile_steps(50) / runs["continuous"][low].latency_percentile_steps(50)
print(f"even at load {loads[low]:.1f}, static batching's p50 latency is {p50_ratio:.1f}x and its p99 "
      f"{p99_ratio:.1f}x continuous batching's")
assert all(kept_up['continuous']) and not all(kept_up['static'])
assert closed_form < 0.5 * slots and p50_ratio > 1 and p99_ratio > 1
fig = plot_batching(loads, runs["static"], runs["continuous"], step_s=step_s,
                    title=f"Llama 3 8B on H100 SXM, {slots} slots, log-normal outputs (mean {mean_out})")
plt.show()

# %% [markdown]
# With output lengths this uneven, the longest of 32 requests is several times the mean, so a
# static batch spends most of its slot-steps idle: its throughput stops at the ceiling printed
# above however long the queue grows, and past that load its latency grows without bound (the
# right panel). Continuous batching fills every slot that frees, so its throughput follows the
# offered load up to the slots' limit and its latency stays near the requests' own length. That
# is why every current serving engine (vLLM, TensorRT-LLM, TGI, SGLang) schedules per
# iteration, and why paged memory, which lets a joining request take whatever blocks are free,
# goes with it.

# %% [markdown]
# ## 7. What quantization and GQA buy
#
# **Quantization** shrinks the bytes. Weight-only int8 or int4 (the matmuls still run in 16 bits)
# cuts the weight traffic; FP8 cuts weights and cache and doubles the tensor-core rate.

# %%
print("Llama 3 8B on H100 SXM, 4096-token contexts")
print(f"{'precision':13s} {'weights read GB':>15s} {'ms/token B=1':>13s} {'tok/s B=64':>11s} {'max batch':>10s}")
results = {}
for prec in ["bf16", "int8 weights", "int4 weights", "fp8"]:
    one, many = decode_step(llama8, h100, 1, 4096, prec), decode_step(llama8, h100, 64, 4096, prec)
    results[prec] = (one, many)
    print(f"{prec:13s} {one.weight_bytes / 1e9:15.2f} {one.t_step_s * 1e3:13.2f} {many.tokens_per_s:11.0f} "
          f"{max_batch(llama8, h100, 4096, prec):10d}")
speedup_b1 = results["bf16"][0].t_step_s / results["int4 weights"][0].t_step_s
speedup_b64 = results["bf16"][1].t_step_s / results["int4 weights"][1].t_step_s
print(f"int4 weights: {speedup_b1:.2f}x faster at batch 1, only {speedup_b64:.2f}x at batch 64 "
      f"(the 16-bit cache dominates the bytes there)")
assert speedup_b64 < speedup_b1 < 4

# %% [markdown]
# **GQA** shrinks the cache. Llama 2 7B (MHA) and Llama 3 8B (GQA, 4 query heads per KV head)
# have nearly the same size; a hypothetical Llama 3 8B with MHA (same shape, `kv_heads = heads`,
# labelled as such) isolates the effect, and Falcon 7B shows MQA.

# %%
llama8_mha = dataclasses.replace(llama8, name="Llama 3 8B as MHA (hypothetical)", kv_heads=llama8.heads)
print(f"{'model':34s} {'KiB/token':>9s} {'max batch @4096':>16s} {'tok/s @B=32':>12s}")
for m in [get_model("Llama 2 7B"), llama8_mha, llama8, get_model("Falcon 7B")]:
    print(f"{m.name:34s} {m.kv_bytes_per_token() / 1024:9.0f} {max_batch(m, h100, 4096):16d} "
          f"{decode_step(m, h100, 32, 4096).tokens_per_s:12.0f}")
assert llama8_mha.kv_bytes_per_token() == (llama8.heads // llama8.kv_heads) * llama8.kv_bytes_per_token()
assert max_batch(llama8, h100, 4096) > 3 * max_batch(llama8_mha, h100, 4096)

# %% [markdown]
# **Optional: a real GPU.** Where PyTorch or CuPy sees a GPU, lesson 04's helper reports it; the
# figures above are bounds, and a real server adds kernel launch, attention and scheduling costs.

# %%
from course_lib.measure import gpu_status

print(gpu_status()[1])

# %% [markdown]
# ## 8. Explore
#
# Pick a model, an accelerator, a precision scheme, a batch size and a context length; the plot
# shows the whole latency-throughput curve with your batch enlarged, and the line above it gives
# the step time, the bound, whether weights and cache fit, and the cost at the assumed price.
# Try Llama 3 70B on one H100 (it does not fit) and on four; try 32k-token contexts.

# %%
from course_lib.widgets.economics import serving_explorer

explorer = serving_explorer("Llama 3 8B", "H100 SXM", "bf16", batch=16, context_tokens=1024)
explorer

# %% [markdown]
# ## Misconceptions
#
# - **"The KV cache grows exponentially with context length."** (One of our seed texts says so.)
#   It grows linearly, one fixed-size slice per token (section 4 asserts equal steps). What grows
#   quadratically is attention *compute* over a prompt, and naive attention's score matrix.
# - **"16 bytes per parameter: a half-precision weight, an fp32 master weight and two fp32
#   moments."** (Another seed.) Those add up to 2 + 4 + 4 + 4 = 14; the missing 2 bytes are the
#   16-bit gradients:

# %%
seed_parts = ["weights_16bit", "master_weights_fp32", "adam_first_moment_fp32", "adam_second_moment_fp32"]
seed_sum = sum(ADAM_MIXED_PRECISION_BYTES[p] for p in seed_parts)
print(f"seed's list sums to {seed_sum} bytes; with gradients {bytes_per_param}")
assert seed_sum == 14 and bytes_per_param - seed_sum == ADAM_MIXED_PRECISION_BYTES["gradients_16bit"]

# %% [markdown]
# - **"Prefill is compute-bound."** Only for prompts longer than about the ridge point: the
#   16-token prefill in section 3 is memory-bound.
# - **"Decode is slow because a single token does not use all the warps."** Decode is slow because
#   every step streams all the weights and the cache from memory: at batch 1 the memory time is
#   many times the compute time:

# %%
print(f"batch 1: memory {step.t_memory_s * 1e3:.2f} ms vs compute {step.t_compute_s * 1e3:.3f} ms "
      f"({step.t_memory_s / step.t_compute_s:.0f}x)")
assert step.t_memory_s > 100 * step.t_compute_s

# %% [markdown]
# - **"Batch enough and decode becomes compute-bound."** Only with short contexts; at 1024 tokens of
#   Llama 3 8B's 16-bit cache it never does, nor beyond the few hundred tokens section 5 prints.
# - **"4-bit weights make generation 4x faster."** At most about 4x at batch 1; at large batch the
#   cache bytes, which weight quantization does not touch, take over (section 7).
# - **"Serving cost follows peak FLOP/s."** The H200 has the H100's compute and more bandwidth:

# %%
h200 = get_accelerator("H200")
gain = decode_step(llama8, h200, 16, 2048).tokens_per_s / decode_step(llama8, h100, 16, 2048).tokens_per_s
print(f"same peak ({h200.peak('bf16') == h100.peak('bf16')}), bandwidth x{h200.mem_bandwidth / h100.mem_bandwidth:.2f}: "
      f"decode throughput x{gain:.2f}")
assert np.isclose(gain, h200.mem_bandwidth / h100.mem_bandwidth, rtol=1e-6)

# %% [markdown]
# ## Exercises
#
# `my_work/07_inference_economics.py` (answers in `solutions/07_inference_economics.py`):
# predict whether decode is memory- or compute-bound, compute a training time and a cost per
# million tokens, find a crossover batch, write a KV-cache calculator, size a compute-optimal
# model (07.6), and choose a number of serving slots that meets a memory budget and a latency
# target (07.7); then, from a profile of two batches, design the cheapest deployment of a 70B
# model under a latency target (07.8),
# and how much faster the HBM must be for FP8 to serve as many tokens as INT4 weights under a
# latency target (07.9).
# `my_work/` is your own copy of the exercises: `make lab` makes it, `make workspace` refreshes
# it without touching your answers, and `make progress` lists which exercises pass.
#
# ## Key points
#
# - Training: $C = 6ND$; $t = 6ND/(u\pi G)$; mixed-precision Adam needs 16 bytes per parameter
#   (2 weights + 2 gradients + 12 optimizer), which ZeRO divides across devices stage by stage.
# - Prefill reuses each weight across the prompt and is compute-bound for long prompts; decode reads
#   all weights and the whole cache every step and is memory-bound.
# - KV cache per token $= 2 L n_{kv} d_{head} b$: linear in context and batch; GQA and MQA divide it
#   by the group size.
# - Decode turns compute-bound near the ridge point in batch only when the weights dominate the
#   bytes; for Llama 3 8B on an H100 it never does beyond a few hundred tokens of context.
# - Cost per token = price / throughput: batching, fewer bytes (quantization, GQA) and more bandwidth
#   lower it; peak FLOP/s alone does not.
# - A budget $C$ buys a compute-optimal $N = \sqrt{C/(6r)}$ with $r \approx 20$ tokens per parameter
#   (Chinchilla); models meant to be served are often trained far past it.
# - Reserving a maximum-length cache per request wastes most of it; paged blocks waste only part of
#   each request's last block, and the memory freed becomes batch.
# - Continuous (iteration-level) batching keeps slots full when output lengths vary; static batching
#   idles on the longest request, caps throughput well below the slots and lets the tail latency run away.
