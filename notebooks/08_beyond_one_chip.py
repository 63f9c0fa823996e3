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
# # 08 · Beyond one chip: interconnects, collectives, parallelism and other accelerators
#
# **Learning objectives.** After this lesson you can
#
# 1. name the links a GPU talks over (its HBM, NVLink inside a node, PCIe to the host,
#    InfiniBand between nodes) and compute how long a tensor takes on each;
# 2. cost a ring all-reduce, all-gather and reduce-scatter with the alpha-beta model, and check
#    the formula against a simulated ring that counts every byte;
# 3. say what data, tensor, pipeline and expert parallelism each send per step, which link that
#    traffic belongs on, and when it hides behind computation;
# 4. compute per-GPU memory under the ZeRO stages, activation recomputation and offloading;
# 5. explain how a systolic array reuses operands, and place TPUs on the roofline beside GPUs.
#
# Lesson 03 followed a byte from registers out to HBM. This lesson continues outward: past HBM
# the next tiers are other chips, the host and other machines: HBM to NVLink and NVLink to PCIe
# each cost close to an order of magnitude, and one InfiniBand port is about as slow as PCIe. Every hardware number comes from the cited catalog.

# %%
import numpy as np
import matplotlib.pyplot as plt

from course_lib.hardware import get_accelerator, list_accelerators
from course_lib.collectives import (NIC_NDR_BANDWIDTH_BYTES_PER_S, collective_bytes_per_rank,
                                    collective_time_s, get_link, interconnect_hierarchy,
                                    ring_all_reduce_link_bytes, simulate_ring_all_reduce,
                                    simulated_time_s)
from course_lib.parallelism import (ParallelPlan, activation_bytes_per_layer, comm_hidden,
                                    data_parallel_bytes_per_gpu, estimate_training_step,
                                    expert_parallel_bytes_per_gpu, pipeline_bubble_fraction,
                                    pipeline_parallel_bytes_per_gpu, simulate_pipeline,
                                    tensor_parallel_bytes_per_gpu, transformer_for_params,
                                    zero_model_state_bytes)
from course_lib.systolic import (TPU_MXU_SIDE, TPU_V1_MXU_SIDE, reuse_comparison, systolic_load_counts,
                                 systolic_matmul)
from course_lib.roofline import matmul_kernel, place_kernel, ridge_point
from course_lib.plots import use_course_style
from course_lib.plots.collectives import plot_link_times, plot_ring_traffic
from course_lib.plots.parallelism import plot_pipeline
from course_lib.plots.systolic import plot_reuse
from course_lib.plots.roofline import plot_roofline

use_course_style()
h100 = get_accelerator("H100 SXM")
print(f"{h100.name}: {h100.interconnect} {h100.interconnect_bandwidth / 1e9:.0f} GB/s, "
      f"{h100.host_link} {h100.host_link_bandwidth / 1e9:.0f} GB/s (both directions together)")

# %% [markdown]
# ## 1. The interconnect hierarchy
#
# Moving $S$ bytes once over a link with latency $\alpha$ and per-direction bandwidth $\beta$ takes
#
# $$ t = \alpha + \frac{S}{\beta}. $$
#
# Vendors print NVLink and PCIe as *both directions added together*; a chip sending while it
# receives gets half. Between nodes, a DGX H100 gives each GPU its own 400 Gb/s InfiniBand NDR
# port: $400 \times 10^9 / 8 = 50 \times 10^9$ bytes per second and direction. The latencies are
# NCCL's per-step constants (ring algorithm, from the cost model of NCCL 2.17; a few
# microseconds), the scale rather than an exact value.
# For the bf16 gradients of a 7-billion-parameter model on an H100 SXM:

# %%
grad_bytes = 2 * 7e9
links = interconnect_hierarchy("H100 SXM")
for link in links:
    print(f"{link.name:52s} {link.bandwidth_bytes_per_s / 1e9:7.0f} GB/s  alpha {link.latency_s * 1e6:4.1f} us"
          f"  ->  {link.transfer_time_s(grad_bytes) * 1e3:8.1f} ms")
nvlink, pcie, net = (get_link("H100 SXM", tier) for tier in ("nvlink", "pcie", "network"))
ratio_bw = nvlink.bandwidth_bytes_per_s / net.bandwidth_bytes_per_s
ratio_t = net.transfer_time_s(grad_bytes) / nvlink.transfer_time_s(grad_bytes)
print(f"\nNVLink moves the tensor {ratio_t:.2f}x faster than one InfiniBand port "
      f"(bandwidth ratio {ratio_bw:.2f}); HBM is {links[0].bandwidth_bytes_per_s / nvlink.bandwidth_bytes_per_s:.1f}x NVLink")
assert np.isclose(ratio_t, ratio_bw, rtol=1e-3)          # at 14 GB the latency is negligible

# %%
fig = plot_link_times(links, grad_bytes, title="bf16 gradients of a 7 B model, moved once from one H100")

# %% [markdown]
# The first two steps down cost close to an order of magnitude each; PCIe and one NDR port are
# close to each other. NVLink plus NVSwitch
# connect the eight GPUs of a node so that any pair talks at full NVLink speed; beyond the node,
# traffic leaves through the NIC, and RDMA lets it go from one GPU's memory to another's
# without a copy through the host CPU. The network tier is still nine times slower than NVLink.

# %% [markdown]
# ## 2. Collectives and their cost
#
# Training needs *collectives*: operations in which every rank takes part. In a **ring**, each
# of $n$ ranks sends to its right-hand neighbour, one chunk of $S/n$ bytes per step:
#
# | collective | steps | bytes each rank sends | time |
# |---|---|---|---|
# | reduce-scatter | $n-1$ | $\frac{n-1}{n} S$ | $(n-1)\alpha + \frac{n-1}{n}\frac{S}{\beta}$ |
# | all-gather | $n-1$ | $\frac{n-1}{n} S$ | $(n-1)\alpha + \frac{n-1}{n}\frac{S}{\beta}$ |
# | all-reduce = both | $2(n-1)$ | $\frac{2(n-1)}{n} S$ | $2(n-1)\alpha + \frac{2(n-1)}{n}\frac{S}{\beta}$ |
#
# The bytes per rank stay below $2S$ however many ranks join; only the latency term grows.
# All-reducing those 14 GB of gradients:

# %%
for n, link in [(8, nvlink), (64, net), (1024, net)]:
    t = collective_time_s("all_reduce", grad_bytes, n, link)
    sent = collective_bytes_per_rank("all_reduce", grad_bytes, n)
    print(f"n = {n:5d} over {link.tier:7s}: each rank sends {sent / 1e9:5.2f} GB, {t * 1e3:7.1f} ms")
t8 = collective_time_s("all_reduce", grad_bytes, 8, nvlink)
assert np.isclose(t8, 14 * nvlink.latency_s + 2 * 7 / 8 * grad_bytes / nvlink.bandwidth_bytes_per_s)

# %% [markdown]
# Latency dominates small messages. The two terms are equal when $S = n\,\alpha\,\beta$; below
# that size a ring is latency-bound (which is why libraries switch to trees for small tensors):

# %%
n = 64
s_cross = n * net.latency_s * net.bandwidth_bytes_per_s
alpha_part = 2 * (n - 1) * net.latency_s
beta_part = collective_bytes_per_rank("all_reduce", s_cross, n) / net.bandwidth_bytes_per_s
print(f"64 ranks over InfiniBand: latency and bandwidth terms are equal at {s_cross / 1e6:.1f} MB")
assert np.isclose(alpha_part, beta_part)

# %% [markdown]
# ### A ring all-reduce, simulated
#
# `simulate_ring_all_reduce` runs the algorithm on real arrays. In the reduce-scatter half, at
# step $s$ rank $r$ sends chunk $(r-1-s) \bmod n$ to rank $r+1$, which adds it to its own copy;
# after $n-1$ steps rank $r$ holds the full sum of chunk $r$. The all-gather half passes the
# finished chunks around the ring. We take 5 ranks and 17 elements, so the chunks cannot be
# equal, check the sum against NumPy, and compare the bytes on every link with a count of
# which chunks cross it (link $r$ carries every chunk but $r$, then every chunk but $r+1$).

# %%
rng = np.random.default_rng(8)
data = rng.integers(-1000, 1000, size=(5, 17))
trace = simulate_ring_all_reduce(data)
assert np.array_equal(trace.result, np.broadcast_to(np.sum(data, axis=0), data.shape))
predicted = ring_all_reduce_link_bytes(17, 5, data.itemsize)
assert np.array_equal(trace.link_bytes, predicted)
assert trace.total_bytes == 2 * (5 - 1) * data.nbytes / 5
print(f"chunks {trace.chunk_sizes.tolist()}, {trace.n_steps} steps, bytes per link {trace.link_bytes.astype(int).tolist()}")
print(f"formula 2(n-1)/n * S = {collective_bytes_per_rank('all_reduce', data.nbytes / 5, 5):.1f} bytes per link on average")

# %%
even = simulate_ring_all_reduce(rng.standard_normal((8, 8 * 1000)).astype(np.float32))
assert np.allclose(even.link_bytes, collective_bytes_per_rank("all_reduce", 4 * 8000, 8))
assert np.isclose(simulated_time_s(even, nvlink), collective_time_s("all_reduce", 4 * 8000, 8, nvlink))
fig = plot_ring_traffic(trace, predicted, title="5 ranks, 17 int64 values: simulated bytes per link")

# %% [markdown]
# ### Pods and tori: collectives without a switch
#
# A TPU pod joins its chips directly, each to its nearest neighbours, through the inter-chip
# interconnect (ICI): no switch between them. TPU v5p chips form a **3D torus** (each chip has
# a neighbour on both sides in x, y and z, and the edges wrap around); v5e and v6e a 2D torus.
# Google's table calls TPU v4's network a 3D mesh: a v4 pod is 64 cubes of $4 \times 4 \times 4$
# chips whose faces are joined through optical circuit switches (Jouppi et al., ISCA 2023), and
# a slice gets the wraparound links of a torus only for some shapes (each dimension a multiple
# of 4, shaped $2A = B = C$ or $2A = 2B = C$, such as $4 \times 4 \times 8$); other slices are
# meshes. The pods as Google's Cloud TPU pages give them:

# %%
from course_lib.collectives import get_tpu_pod, torus_all_reduce, tpu_pods

print(f"{'pod':8s} {'chips':>6s} {'topology':9s} {'largest slice':>14s} {'all-reduce per chip':>20s} {'ICI per chip':>13s}")
for pod in tpu_pods():
    acc = get_accelerator(pod.accelerator)
    ar = "" if pod.allreduce_bytes_per_s is None else f"{pod.allreduce_bytes_per_s / pod.chips / 1e9:.0f} GB/s"
    ici = "" if acc.interconnect_bandwidth is None else f"{acc.interconnect_bandwidth / 1e9:.0f} GB/s"
    print(f"{acc.name:8s} {pod.chips:6d} {pod.topology:9s} {'x'.join(map(str, pod.max_slice)):>14s} {ar:>20s} {ici:>13s}")
for name in ("TPU v5e", "TPU v6e"):
    pod, acc = get_tpu_pod(name), get_accelerator(name)
    # Google's per-pod all-reduce figure is the chips times half their bidirectional ICI bandwidth.
    assert np.isclose(pod.allreduce_bytes_per_s / pod.chips, acc.interconnect_bandwidth / 2)
assert get_tpu_pod("TPU v5p").chips == 8960 and get_tpu_pod("TPU v4").chips == 4096

# %% [markdown]
# On a torus a collective runs as rings along each dimension in turn: reduce-scatter along $x$
# (each chip sends both ways round its ring, so two links carry data), then along $y$ on the
# $1/d_x$ of the data left, then $z$, and the all-gathers back. The bytes each chip sends add
# up to the ring bound, $2S(1 - 1/p)$, but the latency term counts $2\sum_i (d_i - 1)$ steps
# instead of $2(p-1)$. Take the largest v5p slice, $16 \times 16 \times 24$ = 6144 chips, and the
# 14 GB of gradients from section 1. Google gives 1200 GB/s of bidirectional ICI per v5p chip;
# we *assume* it is spread over six links (the 3D torus's six neighbours), 100 GB/s per link and
# direction, and an ICI step latency of 1 microsecond, since Google publishes neither. Beside it,
# 6144 H100s in one flat ring over their NDR ports, the model of section 2:

# %%
v5p = get_accelerator("TPU v5p")
slice_dims = get_tpu_pod(v5p).max_slice
link_v5p = v5p.interconnect_bandwidth / 2 / 6        # ASSUMED: six links, both directions in the catalog figure
alpha_ici = 1e-6                                     # ASSUMED ICI step latency (not published)
p_chips = int(np.prod(slice_dims))
one_dim = torus_all_reduce(grad_bytes, slice_dims, link_v5p, alpha_ici)
all_dims = torus_all_reduce(grad_bytes, slice_dims, link_v5p, alpha_ici, concurrent_dims=True)
ring_h100 = collective_time_s("all_reduce", grad_bytes, p_chips, net)
print(f"{p_chips} chips: torus steps {one_dim.steps} (2 x sum(d - 1)) against {2 * (p_chips - 1)} "
      f"for a flat ring")
print(f"each chip sends {one_dim.bytes_per_chip / 1e9:.2f} GB on either network (the bound 2S(1 - 1/p))")
print(f"v5p torus, one dimension at a time: {one_dim.time_s * 1e3:.0f} ms; all three at once: "
      f"{all_dims.time_s * 1e3:.0f} ms; H100 flat ring over NDR: {ring_h100 * 1e3:.0f} ms")
assert np.isclose(one_dim.bytes_per_chip, collective_bytes_per_rank("all_reduce", grad_bytes, p_chips))
assert 100 <= one_dim.steps < 110 and 12000 < 2 * (p_chips - 1) < 13000           # the prose below
# Second way: a 1-dimensional torus is a bidirectional ring; its time is the ring formula with
# twice the bandwidth.
ring_check = torus_all_reduce(grad_bytes, (p_chips,), link_v5p, alpha_ici)
assert np.isclose(ring_check.time_s, collective_time_s("all_reduce", grad_bytes, p_chips,
                                                        bandwidth_bytes_per_s=2 * link_v5p, latency_s=alpha_ici))

# %% [markdown]
# The bytes per chip are the same on both networks; what the torus changes is the latency term
# (a hundred steps instead of twelve thousand) and which bandwidth counts: a chip's links to its
# neighbours rather than one NIC port. Running the dimensions at once uses all six links and
# divides the bandwidth term by three. A switched fabric is the more flexible one: any chip
# reaches any other in a fixed number of hops, so an all-to-all (expert parallelism) is bounded
# by the NICs, whereas on a torus it must cross the bisection, which Google gives per pod (the
# table's sources). In practice NCCL does not run one flat ring either: it builds rings and trees
# that use NVLink inside each node, which this flat-ring model leaves out.

# %% [markdown]
# ## 3. Four ways to split a training step
#
# Take a 70-billion-parameter transformer, 4 Mi tokens per step, on 1024 H100s grouped as
# tensor 8 × pipeline 4 × data 32 (tensor groups fill a node). Per GPU and step, in bf16:
#
# - **data parallelism** ($d$ replicas): all-reduce the gradients, $\frac{2(d-1)}{d} \cdot 2P$;
# - **tensor parallelism** ($t$ ranks split each matmul): four all-reduces of the layer's
#   activations per layer, $4L \cdot \frac{2(t-1)}{t} \cdot 2Th$;
# - **pipeline parallelism** ($p$ stages): activations forward and gradients back at each stage
#   boundary, $2 \cdot 2Th$;
# - **expert parallelism** ($e$ ranks hold different experts): four all-to-alls per MoE layer,
#   $4L \cdot \frac{e-1}{e} \cdot 2Tkh$ for $k$ experts per token.

# %%
model = transformer_for_params(70e9)
plan = ParallelPlan(1024, tp=8, pp=4, zero_stage=1, micro_batches=32)
tokens = 4 * 2 ** 20
params_per_gpu = model.n_params / (plan.tp * plan.pp)
layers_per_stage = model.n_layers // plan.pp + (model.n_layers % plan.pp > 0)
traffic = {
    "data": data_parallel_bytes_per_gpu(params_per_gpu, plan.dp),
    "tensor": tensor_parallel_bytes_per_gpu(layers_per_stage, tokens / plan.dp, model.d_model, plan.tp),
    "pipeline": pipeline_parallel_bytes_per_gpu(tokens / plan.dp, model.d_model, plan.pp),
}
print(f"model: {model.n_layers} layers, width {model.d_model}, {model.n_params / 1e9:.1f} B parameters; dp = {plan.dp}")
for kind, nbytes in traffic.items():
    group = {"data": "dp", "tensor": "tp", "pipeline": "pp"}[kind]
    print(f"{kind:9s} {nbytes / 1e9:7.2f} GB per GPU per step, on {plan.tier(group)}")
est = estimate_training_step(model, plan, "H100 SXM", tokens)
assert np.isclose(est.comm_bytes["tensor"], traffic["tensor"]) and np.isclose(est.comm_bytes["data"], traffic["data"])

# %% [markdown]
# Tensor parallelism sends the most, and it sends in the middle of every layer, where in the
# plain schedule nothing else can run: it belongs on NVLink. Pipeline traffic is the smallest; the data-parallel
# all-reduce comes next, and it can run while the backward pass computes earlier layers' gradients.
#
# **When does communication hide?** Overlapped traffic costs nothing when it finishes before
# the computation beside it: $Q/\beta \le F/(u\,\pi)$, that is
#
# $$ \frac{F}{Q} \ge \frac{u\,\pi}{\beta}: $$
#
# the roofline test again, with the link's bandwidth in place of HBM's. For data parallelism it
# decides whether the traffic hides. In the plain Megatron schedule tensor parallelism's
# all-reduces sit between the layer's matmuls and nothing hides them (our step model treats
# them so). They can overlap too: splitting each matmul into chunks and sending one chunk's
# result while computing the next ("collective matmul", Wang et al., ASPLOS 2023; Megatron-LM
# and Transformer Engine offer it as tensor-parallel communication overlap) puts them beside the
# matmuls, and then the same ratio decides whether they hide. Either way, when the link's ratio
# is met, communication takes less time than the matmuls. Tensor parallelism does
# $24Th^2/t$ FLOP per layer forward against $2 \cdot \frac{2(t-1)}{t} \cdot 2Th$ bytes, a ratio of
# $3h/(t-1)$ whatever the batch. For data parallelism, a GPU holding $P_g$ parameters sends
# $\frac{2(d-1)}{d} \cdot 2P_g$ bytes while its backward pass does $4P_g$ FLOP for each of the $T_r$
# tokens of its replica, so the all-reduce hides once $T_r \ge \frac{d-1}{d} \frac{u\pi}{\beta}$.

# %%
u = 0.5
peak = h100.peak("bf16")
tp_ratio = 3 * model.d_model / (plan.tp - 1)
for link in (nvlink, net):
    print(f"{link.tier:8s} ridge u*peak/beta = {u * ridge_point(peak, link.bandwidth_bytes_per_s):7.0f} FLOP/B;"
          f" tensor parallel offers {tp_ratio:.0f} FLOP/B")
tokens_layer = 8192
flops_tp = 24 * tokens_layer * model.d_model ** 2 / plan.tp
bytes_tp = tensor_parallel_bytes_per_gpu(1, tokens_layer, model.d_model, plan.tp) / 2     # the forward half
assert np.isclose(flops_tp / bytes_tp, tp_ratio)
assert comm_hidden(flops_tp, bytes_tp, peak, nvlink.bandwidth_bytes_per_s, u)
assert not comm_hidden(flops_tp, bytes_tp, peak, net.bandwidth_bytes_per_s, u)

tokens_min = (plan.dp - 1) / plan.dp * u * peak / net.bandwidth_bytes_per_s
tokens_replica = tokens / plan.dp
print(f"data parallel over InfiniBand hides once a replica processes >= {tokens_min:,.0f} tokens per step; "
      f"here each processes {tokens_replica:,.0f}")
bwd_flops = 4 * params_per_gpu * tokens_replica
assert comm_hidden(bwd_flops, traffic["data"], peak, net.bandwidth_bytes_per_s, u)
assert not comm_hidden(4 * params_per_gpu * 0.99 * tokens_min, traffic["data"], peak, net.bandwidth_bytes_per_s, u)

# %% [markdown]
# **Expert parallelism.** A mixture-of-experts layer sends each token's vector to its $k$
# experts and back. For a model of width 4096, 32 MoE layers, top-2 routing over 8 expert
# ranks and 16 Ki tokens per GPU, compare the all-to-all traffic with tensor parallelism of the
# same width over 8 ranks. With top-2 routing the two send the same bytes, $k\frac{e-1}{e} = \frac{2(t-1)}{t}$ (with $e = t$),
# so expert parallelism wants NVLink as much as tensor parallelism does:

# %%
ep_bytes = expert_parallel_bytes_per_gpu(16384, 4096, ep=8, top_k=2, n_moe_layers=32)
tp_bytes = tensor_parallel_bytes_per_gpu(32, 16384, 4096, tp=8)
print(f"expert all-to-all {ep_bytes / 1e9:.1f} GB vs tensor all-reduce {tp_bytes / 1e9:.1f} GB per GPU per step")
assert np.isclose(ep_bytes / tp_bytes, 2 * (7 / 8) / (2 * 7 / 8))    # k (e-1)/e against 2(t-1)/t: equal for k = 2

# %% [markdown]
# ### The pipeline bubble
#
# A pipeline of $p$ stages fed $m$ micro-batches idles while it fills and drains. If a
# forward takes $t_f$ and a backward $t_b$, the step takes $(m+p-1)(t_f+t_b)$ of which each stage
# works $m(t_f+t_b)$, so the idle fraction is
#
# $$ \text{bubble} = \frac{p-1}{m+p-1}. $$
#
# That is GPipe's form (Huang et al., 2019), a fraction of the whole step. Narayanan et al.
# (2021) divide the same idle time by the ideal compute time $m(t_f+t_b)$ instead and write
# $(p-1)/m$; the two are $f$ and $f/(1-f)$ of one bubble, and `estimate_training_step` uses
# the second.
#
# `simulate_pipeline` runs the schedule operation by operation (each waits for its input and
# for its stage) and measures the idle time. GPipe runs all forwards then all backwards; 1F1B
# alternates once the pipe is full. Same bubble, but 1F1B keeps far fewer micro-batches'
# activations alive:

# %%
f_step = pipeline_bubble_fraction(4, 8)
print(f"p = 4, m = 8: idle {f_step:.4f} of the step (GPipe's form) = {f_step / (1 - f_step):.4f} "
      f"of the ideal compute time (Narayanan's (p-1)/m = {3 / 8:.4f})")
assert np.isclose(f_step / (1 - f_step), (4 - 1) / 8)
for schedule in ("gpipe", "1f1b"):
    run = simulate_pipeline(4, 8, schedule)
    assert np.isclose(run.bubble_fraction, pipeline_bubble_fraction(4, 8))
    print(f"{schedule:6s}: bubble {run.bubble_fraction:.4f} (formula {pipeline_bubble_fraction(4, 8):.4f}), "
          f"micro-batches held per stage {run.peak_in_flight.tolist()}")
fig = plot_pipeline(run)

# %% [markdown]
# ## 4. Memory per GPU: ZeRO, recomputation, offloading
#
# Mixed-precision Adam keeps, per parameter, a 16-bit weight (2 bytes), a 16-bit gradient (2)
# and 12 bytes of optimizer state (FP32 master weight, momentum, variance): 16 bytes. ZeRO
# (Rajbhandari et al. 2020) shards them over the $d$ data-parallel ranks: stage 1 the optimizer
# state, stage 2 also the gradients, stage 3 also the weights:
#
# $$ M_0 = 16P,\quad M_1 = 4P + \tfrac{12P}{d},\quad M_2 = 2P + \tfrac{14P}{d},\quad M_3 = \tfrac{16P}{d}. $$
#
# The paper's own example, 7.5 B parameters on 64 GPUs, quotes 120, 31.4, 16.6 and 1.9 GB:

# %%
paper_gb = [120, 31.4, 16.6, 1.9]
for stage, quoted in enumerate(paper_gb):
    ours = zero_model_state_bytes(7.5e9, 64, stage).total / 1e9
    print(f"stage {stage}: {ours:6.2f} GB (paper {quoted})")
    assert np.isclose(ours, quoted, rtol=0.02)
full_70b = zero_model_state_bytes(70e9, 1, 0).total
print(f"70 B parameters without sharding: {full_70b / 1e9:.0f} GB = {full_70b / h100.mem_capacity:.0f} H100s of HBM")

# %% [markdown]
# ZeRO-3 pays for its memory with traffic: it all-gathers the weights again for the backward
# pass, $3\frac{d-1}{d}\cdot 2P$ instead of $2\frac{d-1}{d}\cdot 2P$, half as much again.
#
# **Activations** are the other half of memory. Per layer, with sequence $s$, micro-batch $b$,
# width $h$, $a$ heads and $t$-way tensor parallelism, 16-bit activations take
# $sbh\,(10 + 24/t + 5as/(ht))$ bytes (Korthikanti et al. 2022). Recomputing attention
# ("selective") drops the $s^2$ term; recomputing the whole layer ("full") keeps only its input,
# $2sbh$, for one extra forward pass (8 FLOP per parameter per token instead of 6):

# %%
s, b, h, a = model.seq_len, 1, model.d_model, model.n_heads
for policy in ("none", "selective", "full"):
    per_layer = activation_bytes_per_layer(s, b, h, a, tp=8, recompute=policy)
    print(f"{policy:9s}: {per_layer / 1e9:6.3f} GB per layer, {per_layer * model.n_layers / 1e9:7.1f} GB for all {model.n_layers}")
assert np.isclose(activation_bytes_per_layer(s, b, h, a, 1), s * b * h * (34 + 5 * a * s / h))

# %% [markdown]
# **Offloading** parks the optimizer state in host memory (ZeRO-Offload): the GPU sends its
# gradients down and receives updated weights back over PCIe each step. For this plan's share
# of the weights:

# %%
shard = params_per_gpu / plan.dp
t_pcie = pcie.transfer_time_s(2 * shard)
freed = zero_model_state_bytes(params_per_gpu, plan.dp, 1).optimizer
print(f"offloading frees {freed / 1e9:.2f} GB per GPU and costs {t_pcie * 1e3:.1f} ms each way over {h100.host_link}")
assert zero_model_state_bytes(params_per_gpu, plan.dp, 1, offload=True).optimizer == 0

# %% [markdown]
# ## 5. Other accelerators
#
# A TPU's matrix unit is a **systolic array**: a grid of multiply-accumulate cells. In the
# weight-stationary form a tile of $B$ is loaded once and stays; rows of $A$ stream in from the
# left, skewed one cycle per row, partial sums flow down, and finished dot products leave the
# bottom. Each $A$ value entering the array is used by every column; each weight by every row of
# $A$. `systolic_matmul` simulates it cycle by cycle. On shapes the array does not divide:

# %%
a_int = rng.integers(-20, 20, size=(37, 29))
b_int = rng.integers(-20, 20, size=(29, 23))
sim = systolic_matmul(a_int, b_int, rows=8, cols=8)
assert np.array_equal(sim.c, np.matmul(a_int, b_int))
counts = systolic_load_counts(37, 29, 23, 8, 8)
assert (sim.macs, sim.weight_loads, sim.input_loads, sim.cycles) == \
       (counts["macs"], counts["weight_loads"], counts["input_loads"], counts["cycles"])
print(f"{sim.tiles} tiles of 8x8, {sim.cycles} cycles, {sim.macs:,} MACs from {sim.operand_loads:,} operand loads "
      f"({sim.macs_per_operand_load:.1f} MACs per load), PE utilisation {sim.utilisation:.0%}")

# %% [markdown]
# A GPU gets the same reuse from a shared-memory tile (lesson 06): an $s \times s$ output tile
# reads each $A$ value once per column of tiles and each $B$ value once per row of tiles, about
# $s/2$ MACs per load. The weight-stationary array keeps its weights for the whole stream of
# rows, so it approaches $s$. The array does in wiring what the GPU does with shared memory and
# registers; both attack the same bytes. Real arrays are large: the first TPU had one
# $256 \times 256$ array (Jouppi et al., ISCA 2017); TPU v2 to v5 have several $128 \times 128$ MXUs
# per chip.

# %%
cmp = reuse_comparison(4096, 4096, 4096)
assert np.allclose(cmp["gpu_tile"], cmp["sizes"] / 2, rtol=1e-9)
fig = plot_reuse(cmp, title="4096^3 matmul: operand reuse")
for side, chips in ((TPU_V1_MXU_SIDE, "TPU v1"), (TPU_MXU_SIDE, "TPU v2 to v5, per MXU")):
    reuse = cmp["systolic"][list(cmp["sizes"]).index(side)]
    print(f"{chips}: {side} x {side} = {side * side:,} MACs, {reuse:.0f} MACs per operand load on this matmul")

# %% [markdown]
# On the roofline a TPU is one more machine with a peak and a bandwidth. The same training
# matmul and batch-1 decode matrix-vector product on two GPUs and two TPUs:

# %%
chips = ["H100 SXM", "B200", "TPU v5e", "TPU v5p"]
kernels = [matmul_kernel("training GEMM", 8192, 8192, 8192), matmul_kernel("decode GEMV", 1, 8192, 8192)]
fig, axes = plt.subplots(1, 4, figsize=(14, 3.4), sharey=True)
for chip, ax in zip(chips, axes):
    points = [place_kernel(k, chip, "bf16") for k in kernels]
    plot_roofline(points, ax=ax, title=f"{chip}: ridge {points[0].ridge_point:.0f}")
    assert [p.bound for p in points] == ["compute", "memory"]
for ax in axes[1:]:
    ax.set_ylabel("")                  # the shared axis is labelled once, on the left
fig.subplots_adjust(wspace=0.08)
v5p = get_accelerator("TPU v5p")
print(f"TPU v5p ridge {v5p.ridge_point('bf16'):.0f} FLOP/B vs H100 SXM {h100.ridge_point('bf16'):.0f}: "
      f"the same two kernels fall on the same sides")

# %% [markdown]
# ### The wider landscape
#
# GPUs and TPUs are not the only choices. The catalog holds the accelerators whose vendors publish
# dense rates, memory and bandwidth: AMD's MI325X and MI355X, Google's TPU v6e (Trillium), AWS's
# Trainium2 and Intel's Gaudi 3, each with its source. On the roofline each is two numbers, and
# each ridge point is computed the same way (dense BF16 over HBM bandwidth, or FP16 where a chip
# has no BF16 figure):

# %%
landscape = []
for kind in ("gpu", "tpu", "other"):
    for name in list_accelerators(kind):
        acc = get_accelerator(name)
        prec = "bf16" if "bf16" in acc.peak_flops else "fp16"
        fp8 = acc.peak_flops.get("fp8")
        landscape.append((acc, prec, fp8))
print(f"{'accelerator':14s} {'vendor':7s} {'kind':5s} {'16-bit TF/s':>11s} {'FP8 TF/s':>9s} {'HBM GB':>7s} "
      f"{'TB/s':>5s} {'ridge':>6s}")
for acc, prec, fp8 in landscape:
    print(f"{acc.name:14s} {acc.vendor:7s} {acc.kind:5s} {acc.peak(prec) / 1e12:11.0f} "
          f"{'' if fp8 is None else f'{fp8 / 1e12:.0f}':>9s} {acc.mem_capacity / 1e9:7.0f} "
          f"{acc.mem_bandwidth / 1e12:5.2f} {acc.ridge_point(prec):6.0f}")
ridges = {acc.name: acc.ridge_point(prec) for acc, prec, _ in landscape}
decode = matmul_kernel("decode GEMV", 1, 8192, 8192)
assert all(place_kernel(decode, acc, prec).bound == "memory" for acc, prec, _ in landscape)
assert all(100 < r < 600 for r in ridges.values()) and max(ridges.values()) / min(ridges.values()) < 4.5
lo, hi = min(ridges, key=ridges.get), max(ridges, key=ridges.get)
print(f"\nridge points from {ridges[lo]:.0f} ({lo}) to {ridges[hi]:.0f} ({hi}) FLOP/B; the decode GEMV "
      f"is memory-bound on every one")
mi325, mi300 = get_accelerator("MI325X"), get_accelerator("MI300X")
assert mi325.peak("bf16") == mi300.peak("bf16") and mi325.ridge_point("bf16") < mi300.ridge_point("bf16")

# %% [markdown]
# The ridges span the range printed above, a factor of about four: every vendor sells a few
# hundred FLOP per byte of HBM, so the same kernels are memory-bound everywhere. The MI325X is the MI300X's
# compute with more and faster memory: a lower ridge point, the H200's move against the H100.
#
# Why, then, do NVIDIA GPUs carry most of the work? Largely **software**. A training or serving
# stack needs kernels for every operation in every precision (cuBLAS, cuDNN, CUTLASS,
# FlashAttention), collectives (NCCL), compilers (Triton, Inductor, XLA), profilers and years of
# tuned implementations in PyTorch, vLLM and their peers. A chip whose stack lacks a fused kernel
# runs the unfused version, and lesson 06 counted what that costs: a multiple of the bytes, at
# any peak rate. The rates above are the ceiling; how close a real model gets depends on the
# kernels and compilers that exist for that chip (AMD's ROCm and HIP, Google's XLA and Pallas,
# AWS's Neuron SDK and NKI, Intel's Gaudi software and its graph compiler). That is the reason
# lesson 04 insists on measuring: a peak is a promise the software has to keep.

# %% [markdown]
# ### Less than one chip: sharing a GPU with MIG
#
# The opposite problem: a job too small for a whole GPU. **Multi-Instance GPU** (MIG, A100 and
# later) partitions one GPU into up to seven isolated instances, each with its own SMs, its own
# share of L2 and memory, and its own memory bandwidth, so one tenant cannot slow another. A
# profile `Ng.Mgb` takes $N$ of 7 compute slices and some of 8 memory slices; NVIDIA's MIG User
# Guide lists them as fractions, and the driver's listing (`nvidia-smi mig -lgip`) gives the SMs
# each profile gets (both in `course_lib/data/mig_profiles.toml`). The SM counts are not $N/7$ of
# the chip: an H100 SXM's 1g.10gb has 16 of its 132 SMs, its 7g.80gb all 132. To first order a
# slice is a smaller accelerator with its own roofline, at the same clocks:
#
# $$P_{\text{slice}} = P_{\text{GPU}} \cdot \frac{\text{SMs}_{\text{slice}}}{\text{SMs}_{\text{GPU}}}, \qquad
#   B_{\text{slice}} = B_{\text{GPU}} \cdot \frac{\text{memory slices}}{8}$$

# %%
from course_lib.sharing import fits_on_gpu, mig_accelerator, mig_profiles

print(f"989.5e12 x 16 / 132 = {989.5e12 * 16 / 132 / 1e12:.0f} TFLOP/s BF16 for a 1g.10gb")
print(f"{'H100 SXM profile':16s} {'SMs':>4s} {'compute':>8s} {'memory':>7s} {'max':>4s} {'BF16 TF/s':>10s} "
      f"{'TB/s':>6s} {'ridge':>6s}")
for prof in mig_profiles("H100 SXM"):
    sl = mig_accelerator(prof, "H100 SXM")
    print(f"{prof.name:16s} {prof.sm_count:4d} {prof.compute_slices:6d}/7 {prof.memory_slices:5d}/8 "
          f"{prof.max_instances:4d} {sl.peak('bf16') / 1e12:10.0f} {sl.mem_bandwidth / 1e12:6.2f} "
          f"{sl.ridge_point('bf16'):6.0f}")
one_g = mig_accelerator("1g.10gb")
assert np.isclose(one_g.peak("bf16"), 989.5e12 * 16 / 132)
# Second way: the ridge from the two fractions, (16/132) / (1/8) of the whole GPU's.
assert np.isclose(one_g.ridge_point("bf16"), h100.ridge_point("bf16") * (16 / 132) / (1 / 8))
seven = [mig_accelerator("1g.10gb")] * 7
seven_peak = sum(s.peak("bf16") for s in seven)
print(f"seven 1g.10gb instances: {7 * 16} of 132 SMs, {seven_peak / 1e12:.0f} TFLOP/s and "
      f"{sum(s.mem_bandwidth for s in seven) / 1e12:.2f} TB/s together: {1 - seven_peak / h100.peak('bf16'):.0%} "
      f"of the compute and the eighth memory slice stay unused")
assert np.isclose(seven_peak, h100.peak("bf16") * 112 / 132)
print(f"3g.40gb + 2g.20gb + 1g.10gb x 2 fit one H100: {fits_on_gpu(['3g.40gb', '2g.20gb', '1g.10gb', '1g.10gb'])}; "
      f"4g.40gb x 2: {fits_on_gpu(['4g.40gb', '4g.40gb'])}")
from course_lib.plots.sharing import plot_slice_rooflines

fig = plot_slice_rooflines([mig_accelerator(p) for p in mig_profiles("H100 SXM")],
                           title="H100 SXM MIG profiles, dense BF16: one roofline each")
plt.show()

# %% [markdown]
# A slice's ridge point depends on its shape. On an H100, 1g.20gb has twice the memory slices of
# 1g.10gb and 26 SMs against 16: 1.6 times the compute and about 1.2 times the bandwidth per SM,
# so a memory-bound decode runs twice as fast on it and a compute-bound one 1.6 times. (On an
# A100 both 1g profiles have 14 SMs.) Decode for a small model on a slice, Llama 3 8B in BF16
# with 2048-token contexts:

# %%
from course_lib.economics import decode_step as _decode_step

small, tall = mig_accelerator("1g.10gb"), mig_accelerator("1g.20gb")
per_sm = (tall.mem_bandwidth / tall.sm_count) / (small.mem_bandwidth / small.sm_count)
print(f"1g.20gb / 1g.10gb: compute {tall.peak('bf16') / small.peak('bf16'):.2f}x, bandwidth "
      f"{tall.mem_bandwidth / small.mem_bandwidth:.1f}x, bandwidth per SM {per_sm:.2f}x")
assert np.isclose(per_sm, 2 / (26 / 16))
for prof in ("2g.20gb", "3g.40gb", "7g.80gb"):
    sl = mig_accelerator(prof)
    st = _decode_step("Llama 3 8B", sl, 16, 2048)
    print(f"{prof}: batch 16 -> {st.t_step_s * 1e3:5.1f} ms per token, {st.tokens_per_s:6.0f} tokens/s, "
          f"fits: {st.fits}")
full, three = _decode_step("Llama 3 8B", h100, 16, 2048), _decode_step("Llama 3 8B", mig_accelerator("3g.40gb"), 16, 2048)
assert np.isclose(three.t_step_s / full.t_step_s, 2.0)          # half the memory slices, half the bandwidth

# %% [markdown]
# MIG suits many small, memory-bound services (inference for small models, notebooks, CI): each
# gets a guaranteed share of bandwidth and memory. Time-slicing (several processes taking turns
# on the whole GPU) and MPS are the other ways to share. MPS runs kernels from several processes
# at once; since Volta each client has its own GPU address space, and the share of SMs a client
# may use can be capped (NVIDIA's MPS documentation, "Volta MPS"), but the clients still share
# the L2 and the memory bandwidth. Neither time-slicing nor MPS partitions memory bandwidth, so
# one tenant's traffic slows the others.

# %% [markdown]
# ## 6. Optional: your own host link
#
# With PyTorch and a CUDA GPU this cell times a pinned host-to-device copy, the PCIe tier
# above. Without them it prints one line and moves on.

# %%
from course_lib.measure import gpu_status

has_gpu, message = gpu_status()
if not has_gpu:
    print(message)
else:
    import torch

    host = torch.empty(2 ** 28, dtype=torch.uint8, pin_memory=True)
    dev = torch.empty_like(host, device="cuda")
    dev.copy_(host, non_blocking=True)
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        dev.copy_(host, non_blocking=True)
    stop.record()
    torch.cuda.synchronize()
    measured = 5 * host.numel() / (start.elapsed_time(stop) / 1e3)
    print(f"{torch.cuda.get_device_name()}: host to device {measured / 1e9:.1f} GB/s")

# %% [markdown]
# ## 7. Explore
#
# Choose a chip, a model size and a number of GPUs, then split them between tensor, pipeline and
# data parallelism. The left panel is per-GPU memory against the chip's HBM; the right is the
# step time by cause. Try tensor parallelism of 16 (it leaves the node), ZeRO stage 3 with few
# GPUs, and full recomputation when memory runs out.

# %%
from course_lib.widgets.parallelism import parallelism_explorer

explorer = parallelism_explorer("H100 SXM", 70.0)
explorer

# %% [markdown]
# ## Misconceptions
#
# - **"NVLink gives a GPU its full headline bandwidth in each direction."** The headline figure
#   adds both directions together: one GPU sending while it receives gets half of it each way
#   (section 1 halves it), and the B200's NVLink 5 doubles the H100's:

# %%
b200 = get_accelerator("B200")
print(f"{h100.interconnect}: {h100.interconnect_bandwidth / 1e9:.0f} GB/s; {b200.interconnect}: "
      f"{b200.interconnect_bandwidth / 1e12:.1f} TB/s (both directions)")
assert b200.interconnect_bandwidth >= 1e12
assert b200.interconnect_bandwidth == 2 * h100.interconnect_bandwidth

# %% [markdown]
# - **"InfiniBand delivers hundreds of gigabits, so it is close to NVLink."** The seed's figure
#   is right but in *bits*: an NDR port's gigabits are an eighth as many gigabytes, a ninth of
#   what H100 NVLink carries per direction:

# %%
print(f"NDR port {NIC_NDR_BANDWIDTH_BYTES_PER_S * 8 / 1e9:.0f} Gb/s = {NIC_NDR_BANDWIDTH_BYTES_PER_S / 1e9:.0f} GB/s; "
      f"H100 NVLink {nvlink.bandwidth_bytes_per_s * 8 / 1e9:,.0f} Gb/s per direction")
assert nvlink.bandwidth_bytes_per_s / NIC_NDR_BANDWIDTH_BYTES_PER_S == 9

# %% [markdown]
# - **"Mixed-precision Adam stores a 16-bit weight, an FP32 master copy and two FP32 moments:
#   16 bytes per parameter."** (A seed text.) Those four add to 14; the 16-bit gradient brings
#   it to 16.

# %%
listed = 2 + 4 + 4 + 4
assert listed == 14 and zero_model_state_bytes(1, 1, 0).total == listed + 2
print(f"weight + master + two moments = {listed} bytes; with the gradient {zero_model_state_bytes(1, 1, 0).total:.0f}")

# %% [markdown]
# - **"An all-reduce over more GPUs sends more per GPU."** Each rank sends $2(n-1)/n$ of the
#   tensor, never twice it; from 64 to 1024 ranks the bytes per rank grow by under 2 %, and
#   only the latency term, $2(n-1)\alpha$, keeps growing.

# %%
grow = collective_bytes_per_rank("all_reduce", 1.0, 1024) / collective_bytes_per_rank("all_reduce", 1.0, 64)
print(f"bytes per rank, 1024 vs 64 ranks: x{grow:.4f}")
assert grow < 1.02

# %% [markdown]
# - **"More pipeline stages always help."** With the micro-batches fixed, the bubble grows with
#   $p$: at $m = 8$, going from 4 to 16 stages more than doubles the idle fraction.

# %%
print(f"m = 8: p = 4 idles {pipeline_bubble_fraction(4, 8):.0%}, p = 16 idles {pipeline_bubble_fraction(16, 8):.0%}")
assert pipeline_bubble_fraction(16, 8) > 2 * pipeline_bubble_fraction(4, 8)

# %% [markdown]
# - **"Data-parallel all-reduces are infrequent, so the network always keeps up."** (Implied by
#   a seed text.) They hide only when each GPU's backward pass is long enough: below
#   $\frac{d-1}{d} \frac{u\pi}{\beta}$ tokens per replica they do not (section 3 computes the bound).
# - **"A TPU is faster because it is a systolic array."** The array is an arrangement for reuse;
#   speed on a kernel still comes from peak and bandwidth, and the decode GEMV is memory-bound
#   on every chip in section 5.
#
# ## Exercises
#
# `my_work/08_beyond_one_chip.py` (answers in `solutions/08_beyond_one_chip.py`): predict
# which link tensor parallelism needs, cost an all-reduce on real hardware, count what a ring
# sends, write the ZeRO memory formula yourself, and choose a batch for a MIG slice (08.5); then
# find the fastest parallel layout of a 70B model on 256 GPUs once a measured activation peak
# corrects the estimate's memory (08.6), and the fewest pipeline stages that meet a step target
# once every operation pays a fixed overhead the simulator leaves out (08.7).
# `my_work/` is your own copy of the exercises: `make lab` makes it, `make workspace` refreshes
# it without touching your answers, and `make progress` lists which exercises pass.
#
# ## Key points
#
# - Past HBM come NVLink (inside a node), PCIe (to the host) and the network (between nodes),
#   NVLink and PCIe each close to ten times slower than the tier above, the network about as slow
#   as PCIe: $t = \alpha + S/\beta$ with per-direction bandwidth.
# - A ring all-reduce sends $2(n-1)/n$ of the tensor per rank, as reduce-scatter plus
#   all-gather; the simulation counts exactly that, chunk by chunk.
# - Tensor parallelism is chatty and, unless its matmuls are split to overlap the all-reduces, on
#   the critical path: keep it on NVLink. Data-parallel traffic overlaps the backward pass and
#   tolerates the network when the batch is large enough.
# - The pipeline bubble is $(p-1)/(m+p-1)$ of the step (GPipe's form), $(p-1)/m$ of the ideal
#   compute time (Narayanan et al.'s); 1F1B keeps it but holds fewer activations.
# - Sixteen bytes per parameter is model state alone; ZeRO divides it by $d$ in stages,
#   recomputation trades FLOP for activation memory, offloading trades PCIe time for HBM.
# - A systolic array reuses operands in wiring as a GPU tile does in shared memory; on the
#   roofline a TPU is judged by the same two numbers.
# - A TPU pod joins chips without switches, as a torus (v5p; v4 only for some slice shapes, a mesh
#   otherwise): on a torus an all-reduce sends the same $2S(1-1/p)$ per chip as a ring, in
#   $2\sum(d_i-1)$ steps instead of $2(p-1)$; all-to-all traffic is limited by the bisection.
# - Every accelerator in the catalog (AMD, Google, AWS, Intel) sells a few hundred FLOP per byte of
#   HBM; which one gets close to its peak depends as much on its kernels, compilers and libraries.
# - MIG splits an A100 or H100 into up to seven isolated slices: peak x the slice's share of the
#   SMs (the driver's count, not N/7), bandwidth x the memory fraction, each with its own roofline
#   and ridge point.
