"""Spreading training over many chips: what each kind of parallelism stores, sends and waits for.

Four ways to split one training step (a model of ``P`` parameters, ``L`` layers of width ``h``,
``T`` tokens per step), with the bytes each GPU *sends* per step in 16-bit tensors (2 bytes):

    data      (d ranks)  gradients all-reduced once:        2(d-1)/d * 2P              (ZeRO-3: 3(d-1)/d * 2P)
    tensor    (t ranks)  4 all-reduces per layer (2 fwd, 2 bwd) of the layer's activations:
                                                           4 * L * 2(t-1)/t * 2 T h
    pipeline  (p stages) each stage boundary passes activations forward and gradients back:
                                                           2 * 2 T h   (per boundary)
    expert    (e ranks)  4 all-to-alls per MoE layer (dispatch and combine, fwd and bwd):
                                                           4 * L_moe * (e-1)/e * 2 T k h   (k experts per token)

(T here is the tokens the group works on.) Communication hides behind computation when the
computation it overlaps takes at least as long: FLOP / byte of the overlapped pair >= the link's
ridge point, peak / bandwidth, just as a kernel beats the HBM roof.

Sources: ZeRO memory and traffic from Rajbhandari et al., "ZeRO: Memory Optimizations Toward
Training Trillion Parameter Models" (SC 2020), sections 3 and 7 (mixed-precision Adam: 2 + 2 + K
bytes per parameter with K = 12). Tensor-parallel all-reduces from Shoeybi et al., "Megatron-LM"
(2019), section 3 (two per layer forward, two backward). Activation bytes per layer from
Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models" (2022),
section 4: s b h (34 + 5 a s / h) without parallelism, s b h (10 + 24/t + 5 a s / (h t)) with
t-way tensor parallelism, 2 s b h with full recomputation (the layer input). Pipeline bubble:
(p-1)/(m+p-1) of the step is idle, the form of Huang et al., "GPipe" (NeurIPS 2019), section 2.3;
Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using
Megatron-LM" (SC 2021), section 2.2.1, state the same idle time against the ideal compute time
instead: (p-1)/m. Tensor-parallel all-reduces are modelled as exposed (the plain Megatron
schedule); decomposing the matmul to overlap them ("collective matmul", Wang et al., ASPLOS 2023)
is not modelled.
Parameter count 12 L h^2 (+ vocabulary V h) and 6 FLOP per parameter per token from Kaplan et al.,
"Scaling Laws for Neural Language Models" (2020), section 2.1.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from ._validate import check_bool, check_choice, check_int, check_number
from .collectives import NIC_NDR_BANDWIDTH_BYTES_PER_S, collective_time_s, get_link
from .economics import ADAM_MIXED_PRECISION_BYTES as _ADAM
from .economics import training_memory
from .hardware import get_accelerator

__all__ = [
    "ADAM_BYTES_PER_PARAM",
    "RECOMPUTE",
    "TransformerShape",
    "transformer_for_params",
    "ModelStateBytes",
    "zero_model_state_bytes",
    "zero_comm_bytes_per_gpu",
    "activation_bytes_per_layer",
    "data_parallel_bytes_per_gpu",
    "tensor_parallel_bytes_per_gpu",
    "pipeline_parallel_bytes_per_gpu",
    "expert_parallel_bytes_per_gpu",
    "pipeline_bubble_fraction",
    "PipelineRun",
    "simulate_pipeline",
    "comm_hidden",
    "ParallelPlan",
    "StepEstimate",
    "estimate_training_step",
]

#: Activation-recomputation policies :func:`activation_bytes_per_layer` knows.
RECOMPUTE = ("none", "selective", "full")

#: Bytes per parameter of mixed-precision Adam (ZeRO paper, section 3.1): a 16-bit weight, a
#: 16-bit gradient, and K = 12 bytes of optimizer state (FP32 master weight, momentum, variance).
#: Grouped from lesson 07's ``economics.ADAM_MIXED_PRECISION_BYTES``, which itemises them.
ADAM_BYTES_PER_PARAM = MappingProxyType({
    "params": _ADAM["weights_16bit"],
    "grads": _ADAM["gradients_16bit"],
    "optimizer": _ADAM["master_weights_fp32"] + _ADAM["adam_first_moment_fp32"] + _ADAM["adam_second_moment_fp32"],
})


# ----------------------------------------------------------------------------------------------
# The model

@dataclass(frozen=True)
class TransformerShape:
    """A decoder-only transformer's shape. ``n_params`` = 12 L h^2 + V h (Kaplan et al. 2020)."""

    n_layers: int
    d_model: int
    n_heads: int
    seq_len: int
    vocab_size: int = 0

    def __post_init__(self):
        for name in ("n_layers", "d_model", "n_heads", "seq_len"):
            check_int(name, getattr(self, name), min_value=1)
        check_int("vocab_size", self.vocab_size, min_value=0)

    @property
    def n_params(self) -> float:
        return 12.0 * self.n_layers * self.d_model ** 2 + self.vocab_size * self.d_model

    @property
    def train_flops_per_token(self) -> float:
        """6 FLOP per parameter per token: 2 forward, 4 backward (attention scores left out)."""
        return 6.0 * self.n_params


def transformer_for_params(n_params, seq_len=4096, layers_per_width=1 / 128, head_dim=128) -> TransformerShape:
    """A plausible shape for ``n_params`` parameters: L = h / 128 (GPT-3 175B: 96 layers, h = 12288).

    Solves 12 L h^2 = n_params with L = h * layers_per_width, rounds h to a multiple of
    ``head_dim``. The vocabulary is left out (it does not change the picture).
    """
    n = check_number("n_params", n_params, min_value=1e6)
    ratio = check_number("layers_per_width", layers_per_width, min_value=0, allow_min=False)
    seq_len = check_int("seq_len", seq_len, min_value=1)
    head_dim = check_int("head_dim", head_dim, min_value=1)
    h = (n / (12 * ratio)) ** (1 / 3)
    h = max(head_dim, head_dim * round(h / head_dim))
    layers = max(1, round(n / (12 * h * h)))
    return TransformerShape(layers, h, h // head_dim, seq_len)


# ----------------------------------------------------------------------------------------------
# Memory

@dataclass(frozen=True)
class ModelStateBytes:
    """Per-GPU bytes of model state: weights, gradients and optimizer state."""

    params: float
    grads: float
    optimizer: float

    @property
    def total(self) -> float:
        return self.params + self.grads + self.optimizer


def zero_model_state_bytes(n_params, dp, stage, *, offload=False) -> ModelStateBytes:
    """Model-state bytes per GPU under ZeRO stage 0-3 over ``dp`` data-parallel ranks.

        stage 0 (plain data parallel): 2P + 2P + 12P           = 16 P
        stage 1 (optimizer sharded):   2P + 2P + 12P/d
        stage 2 (+ gradients):         2P + 2P/d + 12P/d
        stage 3 (+ parameters):        2P/d + 2P/d + 12P/d     = 16 P / d

    ZeRO's example (section 3): P = 7.5e9, d = 64 gives 120, 31.4, 16.6 and 1.9 GB.
    ``offload`` moves the optimizer state to host memory (ZeRO-Offload): 0 on the GPU.
    The arithmetic is lesson 07's ``economics.training_memory``; this names it for a
    parallel plan (dp ranks, possibly a shard of a model already split by tp x pp).
    """
    p = check_number("n_params", n_params, min_value=0, allow_min=False)
    d = check_int("dp", dp, min_value=1)
    stage = check_int("stage", stage, min_value=0, max_value=3)
    offload = check_bool("offload", offload)
    mem = training_memory(p, n_devices=d, zero_stage=stage, offload_optimizer=offload)
    return ModelStateBytes(mem.weights_bytes, mem.gradients_bytes, mem.optimizer_bytes)


def zero_comm_bytes_per_gpu(n_params, dp, stage, bytes_per_value=2) -> float:
    """Bytes each GPU sends per step for its data-parallel traffic under ZeRO.

    Stages 0-2: one all-reduce of the gradients (a reduce-scatter plus an all-gather),
    2(d-1)/d * bP. Stage 3 also all-gathers the weights a second time for the backward pass:
    3(d-1)/d * bP, 1.5x (ZeRO paper, section 7).
    """
    p = check_number("n_params", n_params, min_value=0)
    d = check_int("dp", dp, min_value=1)
    stage = check_int("stage", stage, min_value=0, max_value=3)
    b = check_number("bytes_per_value", bytes_per_value, min_value=0, allow_min=False)
    passes = 3 if stage == 3 else 2
    return passes * (d - 1) / d * b * p


def activation_bytes_per_layer(seq_len, micro_batch, d_model, n_heads, tp=1, recompute="none") -> float:
    """Bytes of activations one transformer layer keeps for its backward pass (16-bit values).

        recompute="none":       s b h (10 + 24/t + 5 a s / (h t))   (t = 1: s b h (34 + 5 a s / h))
        recompute="selective":  s b h (10 + 24/t)                   (attention scores recomputed)
        recompute="full":       2 s b h                             (only the layer's input is kept)

    (Korthikanti et al. 2022, eq. 2 and sections 4.1-4.2; dropout masks included, no sequence
    parallelism.) Lesson 07's ``economics.activation_bytes_per_layer`` is the t = 1 case with
    whole micro-batches; this one adds tensor parallelism and accepts a fractional micro-batch. "selective" drops the s^2 attention terms, which is also what a FlashAttention
    kernel achieves; its recomputation costs a few percent of the FLOP and is not counted here.
    """
    s = check_int("seq_len", seq_len, min_value=1)
    b = check_number("micro_batch", micro_batch, min_value=0, allow_min=False)
    h = check_int("d_model", d_model, min_value=1)
    a = check_int("n_heads", n_heads, min_value=1)
    t = check_int("tp", tp, min_value=1)
    recompute = check_choice("recompute", recompute, RECOMPUTE)
    if recompute == "full":
        return 2.0 * s * b * h
    if recompute == "selective":
        return s * b * h * (10 + 24 / t)
    return s * b * h * (10 + 24 / t + 5 * a * s / (h * t))


# ----------------------------------------------------------------------------------------------
# Communication per step

def data_parallel_bytes_per_gpu(n_params, dp, bytes_per_value=2) -> float:
    """Gradient all-reduce, bytes each GPU sends: 2(d-1)/d * b P (ZeRO stages 0-2)."""
    return zero_comm_bytes_per_gpu(n_params, dp, 0, bytes_per_value)


def tensor_parallel_bytes_per_gpu(n_layers, tokens, d_model, tp, bytes_per_value=2, recompute="none") -> float:
    """Megatron tensor parallelism, bytes each GPU sends per step.

    Each layer all-reduces its (tokens x h) output twice forward and twice backward:
        4 * L * 2(t-1)/t * b * tokens * h
    Full recomputation repeats the forward, adding two more all-reduces per layer (6 in all).
    """
    layers = check_int("n_layers", n_layers, min_value=1)
    tokens = check_number("tokens", tokens, min_value=0)
    h = check_int("d_model", d_model, min_value=1)
    t = check_int("tp", tp, min_value=1)
    b = check_number("bytes_per_value", bytes_per_value, min_value=0, allow_min=False)
    recompute = check_choice("recompute", recompute, RECOMPUTE)
    per_layer = 6 if recompute == "full" else 4
    return per_layer * layers * 2 * (t - 1) / t * b * tokens * h


def pipeline_parallel_bytes_per_gpu(tokens, d_model, pp, bytes_per_value=2) -> float:
    """Pipeline parallelism, bytes a middle stage sends per step: activations forward to the next
    stage and gradients back to the previous one, b * tokens * h each (0 when pp = 1)."""
    tokens = check_number("tokens", tokens, min_value=0)
    h = check_int("d_model", d_model, min_value=1)
    p = check_int("pp", pp, min_value=1)
    b = check_number("bytes_per_value", bytes_per_value, min_value=0, allow_min=False)
    return 0.0 if p == 1 else 2 * b * tokens * h


def expert_parallel_bytes_per_gpu(tokens, d_model, ep, top_k=2, n_moe_layers=1, bytes_per_value=2) -> float:
    """Expert parallelism, bytes each GPU sends per step in its all-to-alls.

    Each MoE layer sends every token's h-vector to its ``top_k`` experts and back (dispatch,
    combine), forward and backward: 4 * L_moe * (e-1)/e * b * tokens * k * h, where tokens are
    those this GPU routes and (e-1)/e of them land on other GPUs when routing is uniform.
    """
    tokens = check_number("tokens", tokens, min_value=0)
    h = check_int("d_model", d_model, min_value=1)
    e = check_int("ep", ep, min_value=1)
    k = check_int("top_k", top_k, min_value=1)
    layers = check_int("n_moe_layers", n_moe_layers, min_value=0)
    b = check_number("bytes_per_value", bytes_per_value, min_value=0, allow_min=False)
    return 4 * layers * (e - 1) / e * b * tokens * k * h


def comm_hidden(flops, comm_bytes, peak_flops, bandwidth_bytes_per_s, efficiency=1.0) -> bool:
    """True when sending ``comm_bytes`` takes no longer than the ``flops`` it overlaps with:

        comm_bytes / beta <= flops / (efficiency * peak)   <=>   flops / comm_bytes >= efficiency * peak / beta
    """
    f = check_number("flops", flops, min_value=0)
    q = check_number("comm_bytes", comm_bytes, min_value=0)
    peak = check_number("peak_flops", peak_flops, min_value=0, allow_min=False)
    bw = check_number("bandwidth_bytes_per_s", bandwidth_bytes_per_s, min_value=0, allow_min=False)
    u = check_number("efficiency", efficiency, min_value=0, max_value=1, allow_min=False)
    return q / bw <= f / (u * peak)


# ----------------------------------------------------------------------------------------------
# Pipeline schedules

def pipeline_bubble_fraction(stages, micro_batches) -> float:
    """Idle fraction of a synchronous pipeline step: (p-1) / (m+p-1) (GPipe's form, of the step).

    Holds for GPipe and 1F1B alike when backward costs a fixed multiple of forward:
    4 stages and 8 micro-batches idle 3/11 = 27 % of the time. Narayanan et al. (2021) divide the
    same idle time by the ideal compute time instead: (p-1)/m = f / (1 - f) = 3/8 here.
    """
    p = check_int("stages", stages, min_value=1)
    m = check_int("micro_batches", micro_batches, min_value=1)
    return (p - 1) / (m + p - 1)


@dataclass(frozen=True)
class PipelineRun:
    """A simulated pipeline step: one row per operation, and what it adds up to.

    ``stage``, ``micro``, ``is_forward``, ``start``, ``end`` are arrays of equal length;
    ``peak_in_flight[i]`` is the most micro-batches whose activations stage i held at once.
    """

    schedule: str
    stages: int
    micro_batches: int
    stage: np.ndarray
    micro: np.ndarray
    is_forward: np.ndarray
    start: np.ndarray
    end: np.ndarray
    peak_in_flight: np.ndarray

    @property
    def makespan(self) -> float:
        return float(self.end.max())

    @property
    def busy_fraction(self) -> float:
        busy = float(np.sum(self.end - self.start))
        return busy / (self.stages * self.makespan)

    @property
    def bubble_fraction(self) -> float:
        return 1.0 - self.busy_fraction


def _stage_order(schedule, p, m, i):
    """Operations stage i runs, in order: ('F', j) or ('B', j)."""
    if schedule == "gpipe":
        return [("F", j) for j in range(m)] + [("B", j) for j in range(m)]
    warmup = min(p - 1 - i, m)               # 1F1B (PipeDream-Flush): fill, steady, drain
    order = [("F", j) for j in range(warmup)]
    f, b = warmup, 0
    while f < m:
        order += [("F", f), ("B", b)]
        f, b = f + 1, b + 1
    order += [("B", j) for j in range(b, m)]
    return order


def simulate_pipeline(stages, micro_batches, schedule="1f1b", t_forward=1.0, t_backward=2.0) -> PipelineRun:
    """Run a pipeline step as a list schedule and time every operation.

    Stage i runs its operations in the schedule's order; the forward of micro-batch j on stage i
    waits for stage i-1's forward of j, the backward waits for stage i+1's backward of j (the
    last stage's backward for its own forward). Each operation starts when the stage is free and
    its input has arrived. Communication takes no time here.
    """
    p = check_int("stages", stages, min_value=1)
    m = check_int("micro_batches", micro_batches, min_value=1)
    if p * m > 20_000:
        raise ValueError(f"stages x micro_batches must be <= 20000 (each of the 2 x stages x "
                         f"micro_batches steps is simulated in Python; more takes seconds), "
                         f"got {p} x {m} = {p * m}")
    schedule = check_choice("schedule", schedule, ("gpipe", "1f1b"))
    tf = check_number("t_forward", t_forward, min_value=0, allow_min=False)
    tb = check_number("t_backward", t_backward, min_value=0, allow_min=False)
    orders = [_stage_order(schedule, p, m, i) for i in range(p)]
    f_end = np.full((p, m), np.nan)
    b_end = np.full((p, m), np.nan)
    cursor = [0] * p
    free = [0.0] * p
    rows = []
    remaining = 2 * p * m
    while remaining:
        progressed = False
        for i in range(p):
            while cursor[i] < len(orders[i]):
                kind, j = orders[i][cursor[i]]
                if kind == "F":
                    ready = 0.0 if i == 0 else f_end[i - 1, j]
                else:
                    ready = f_end[i, j] if i == p - 1 else b_end[i + 1, j]
                if np.isnan(ready):
                    break
                start = max(free[i], ready)
                end = start + (tf if kind == "F" else tb)
                (f_end if kind == "F" else b_end)[i, j] = end
                free[i] = end
                rows.append((i, j, kind == "F", start, end))
                cursor[i] += 1
                remaining -= 1
                progressed = True
        if not progressed:                       # cannot happen for these two schedules
            raise RuntimeError("pipeline schedule deadlocked")
    stage, micro, fwd, start, end = (np.array(c) for c in zip(*rows))
    peak = np.zeros(p, dtype=int)
    for i in range(p):
        order = orders[i]
        held = np.cumsum([1 if kind == "F" else -1 for kind, _ in order])
        peak[i] = held.max()
    return PipelineRun(schedule, p, m, stage, micro, fwd.astype(bool), start, end, peak)


# ----------------------------------------------------------------------------------------------
# A whole training step

@dataclass(frozen=True)
class ParallelPlan:
    """How ``n_gpus`` split the work: tp x pp x dp = n_gpus, tensor groups innermost.

    Tensor-parallel ranks are neighbours (same node while tp <= gpus_per_node), then pipeline
    stages, then data-parallel replicas. ``micro_batches`` per step per pipeline.
    """

    n_gpus: int
    tp: int = 1
    pp: int = 1
    zero_stage: int = 1
    micro_batches: int = 8
    recompute: str = "selective"
    offload: bool = False
    gpus_per_node: int = 8

    def __post_init__(self):
        n = check_int("n_gpus", self.n_gpus, min_value=1)
        tp = check_int("tp", self.tp, min_value=1)
        pp = check_int("pp", self.pp, min_value=1)
        check_int("zero_stage", self.zero_stage, min_value=0, max_value=3)
        check_int("micro_batches", self.micro_batches, min_value=1)
        object.__setattr__(self, "recompute", check_choice("recompute", self.recompute, RECOMPUTE))
        check_bool("offload", self.offload)
        check_int("gpus_per_node", self.gpus_per_node, min_value=1)
        if n % (tp * pp):
            raise ValueError(f"n_gpus ({n}) must be a multiple of tp * pp ({tp} * {pp} = {tp * pp})")

    @property
    def dp(self) -> int:
        return self.n_gpus // (self.tp * self.pp)

    def tier(self, group: str) -> str:
        """'nvlink' if the group's ranks share a node, else 'network'."""
        group = check_choice("group", group, ("tp", "pp", "dp"))
        span = {"tp": self.tp, "pp": self.tp * self.pp, "dp": self.n_gpus}[group]
        size = {"tp": self.tp, "pp": self.pp, "dp": self.dp}[group]
        if size == 1:
            return "nvlink"
        return "nvlink" if span <= self.gpus_per_node else "network"


@dataclass(frozen=True)
class StepEstimate:
    """Per-GPU memory (bytes) and the time of one training step (seconds), split by cause."""

    accelerator: str
    model: TransformerShape
    plan: ParallelPlan
    tokens_per_step: float
    memory: MappingProxyType
    capacity_bytes: float
    comm_bytes: MappingProxyType
    comm_tier: MappingProxyType
    times: MappingProxyType
    hidden_dp_s: float

    @property
    def memory_bytes(self) -> float:
        return float(sum(self.memory.values()))

    @property
    def fits(self) -> bool:
        return self.memory_bytes <= self.capacity_bytes

    @property
    def step_time_s(self) -> float:
        return float(sum(self.times.values()))

    @property
    def tokens_per_s(self) -> float:
        return self.tokens_per_step / self.step_time_s


def estimate_training_step(model, plan, accelerator="H100 SXM", tokens_per_step=4 * 2 ** 20,
                           efficiency=0.5, precision="bf16",
                           network_bandwidth_bytes_per_s=NIC_NDR_BANDWIDTH_BYTES_PER_S) -> StepEstimate:
    """Per-GPU memory and step time of ``model`` trained under ``plan`` on ``accelerator``.

    compute   = 6 P T / n_gpus / (efficiency * peak)        (x 4/3 with full recomputation)
    bubble    = compute * (p-1)/m  (Narayanan's form; so compute + bubble = compute (m+p-1)/m)
    tensor    = 4 (or 6) all-reduces per layer and micro-batch, exposed (on the critical path;
                collective-matmul overlap is not modelled)
    pipeline  = 2 m point-to-point sends of a micro-batch's activations, exposed
    data      = ZeRO traffic, hidden behind the backward pass (the whole step for stage 3);
                only the excess is exposed
    offload   = the updated 16-bit weights coming back over PCIe, exposed

    Memory: model state under ZeRO over dp after dividing the parameters by tp * pp, plus the
    activations of min(m, p) micro-batches in flight on the first stage (1F1B). When pp does not
    divide the layers, the fullest stage (ceil(L/p) layers) is the one reported.
    """
    if not isinstance(model, TransformerShape):
        raise TypeError(f"model must be a TransformerShape, got {type(model).__name__}")
    if not isinstance(plan, ParallelPlan):
        raise TypeError(f"plan must be a ParallelPlan, got {type(plan).__name__}")
    acc = get_accelerator(accelerator)
    tokens = check_number("tokens_per_step", tokens_per_step, min_value=1)
    u = check_number("efficiency", efficiency, min_value=0, max_value=1, allow_min=False)
    peak = acc.peak(precision)
    tp, pp, dp, m = plan.tp, plan.pp, plan.dp, plan.micro_batches
    if pp > model.n_layers:
        raise ValueError(f"pp ({pp}) must be at most the model's {model.n_layers} layers")
    seqs_per_micro = tokens / (dp * m * model.seq_len)
    if seqs_per_micro < 1:
        raise ValueError(f"tokens_per_step ({tokens:.3g}) gives each of the {dp} replicas' {m} "
                         f"micro-batches less than one sequence of {model.seq_len} tokens")
    layers_per_stage = -(-model.n_layers // pp)     # the fullest stage sets the pace
    params_per_gpu = model.n_params / (tp * pp)

    # memory
    state = zero_model_state_bytes(params_per_gpu, dp, plan.zero_stage, offload=plan.offload)
    act_layer = activation_bytes_per_layer(model.seq_len, seqs_per_micro, model.d_model, model.n_heads,
                                           tp, plan.recompute)
    in_flight = min(m, pp)
    activations = layers_per_stage * in_flight * act_layer
    if plan.recompute == "full":      # one layer's full activations while it is recomputed
        activations += activation_bytes_per_layer(model.seq_len, seqs_per_micro, model.d_model,
                                                  model.n_heads, tp, "none")
    memory = {"weights": state.params, "gradients": state.grads, "optimizer": state.optimizer,
              "activations": activations}

    # links
    def link(group):
        tier = plan.tier(group)
        return get_link(acc, tier, network_bandwidth_bytes_per_s)

    # compute
    flops = model.train_flops_per_token * tokens / plan.n_gpus
    if plan.recompute == "full":
        flops *= 4 / 3                     # one more forward: 8 instead of 6 FLOP per parameter
    t_compute = flops / (u * peak)
    t_bubble = t_compute * (pp - 1) / m

    tokens_per_micro = seqs_per_micro * model.seq_len
    micro_bytes = 2.0 * tokens_per_micro * model.d_model
    calls_per_layer = 6 if plan.recompute == "full" else 4
    t_tp = 0.0
    if tp > 1:
        t_tp = calls_per_layer * layers_per_stage * m * collective_time_s("all_reduce", micro_bytes, tp, link("tp"))
    t_pp = 0.0
    if pp > 1:
        t_pp = 2 * m * link("pp").transfer_time_s(micro_bytes)
    t_dp = 0.0
    if dp > 1:
        dp_link = link("dp")
        t_dp = (zero_comm_bytes_per_gpu(params_per_gpu, dp, plan.zero_stage) / dp_link.bandwidth_bytes_per_s
                + _dp_steps(plan.zero_stage, dp) * dp_link.latency_s)
    overlap = t_compute if plan.zero_stage == 3 else t_compute * 2 / 3
    exposed_dp = max(0.0, t_dp - overlap)
    t_offload = 0.0
    if plan.offload:
        pcie = get_link(acc, "pcie")
        t_offload = pcie.transfer_time_s(2.0 * params_per_gpu / dp)

    comm_bytes = {
        "tensor": tensor_parallel_bytes_per_gpu(layers_per_stage, tokens / dp, model.d_model, tp,
                                                recompute=plan.recompute) if tp > 1 else 0.0,
        "pipeline": pipeline_parallel_bytes_per_gpu(tokens / dp, model.d_model, pp),
        "data": zero_comm_bytes_per_gpu(params_per_gpu, dp, plan.zero_stage),
        "offload": 2 * 2.0 * params_per_gpu / dp if plan.offload else 0.0,
    }
    comm_tier = {"tensor": plan.tier("tp"), "pipeline": plan.tier("pp"), "data": plan.tier("dp"),
                 "offload": "pcie"}
    times = {"compute": t_compute, "pipeline bubble": t_bubble, "tensor comm": t_tp,
             "pipeline comm": t_pp, "data comm (exposed)": exposed_dp, "offload": t_offload}
    return StepEstimate(acc.name, model, plan, tokens, MappingProxyType(memory), acc.mem_capacity,
                        MappingProxyType(comm_bytes), MappingProxyType(comm_tier), MappingProxyType(times),
                        hidden_dp_s=min(t_dp, overlap))


def _dp_steps(zero_stage, dp) -> int:
    """Ring steps of the data-parallel traffic: 2(d-1) for an all-reduce, 3(d-1) with ZeRO-3."""
    return (3 if zero_stage == 3 else 2) * (dp - 1)
