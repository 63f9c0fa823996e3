"""Training and inference economics: FLOP, bytes, seconds and dollars for real models.

Training
    C = 6 N D                                   FLOP to train N parameters on D tokens
    t = 6 N D / (u * peak * G)                  seconds on G devices at utilization u
    16 bytes per parameter for mixed-precision Adam: 2 (16-bit weights) + 2 (16-bit gradients)
    + 12 (fp32 master weights, first and second moments); ZeRO stages shard parts of it.

Inference (one decode step of a batch of B sequences, each with T tokens of context)
    KV cache per token   = 2 * layers * kv_heads * head_dim * bytes_per_element
    bytes moved          = weights + B * (KV cache per sequence)
    FLOP                 = B * (2 * matmul parameters + 4 * layers * heads * head_dim * T)
    step time (bound)    = max(FLOP / peak, bytes / bandwidth)

Pure functions and frozen dataclasses in SI units (FLOP, bytes, seconds, FLOP/s, bytes/s).
The models live in ``data/models.toml`` with their sources; accelerators come from
``course_lib.hardware``. Drawing is in ``course_lib.plots.economics``.
"""

from __future__ import annotations

import functools
import heapq
import math
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from types import MappingProxyType
from typing import Mapping

import numpy as np

from ._validate import check_array, check_bool, check_choice, check_int, check_number, lookup_by_name, name_key
from .hardware import bytes_per_element, get_accelerator
from .roofline import Kernel

__all__ = [
    "ModelConfig",
    "get_model",
    "list_models",
    "count_params",
    "TRAINING_FLOPS_PER_PARAM_PER_TOKEN",
    "training_flops",
    "training_time_s",
    "implied_utilization",
    "ADAM_MIXED_PRECISION_BYTES",
    "TrainingMemory",
    "training_memory",
    "activation_bytes_per_layer",
    "kv_cache_bytes_per_token",
    "kv_cache_bytes",
    "weight_bytes",
    "DecodeStep",
    "decode_step",
    "decode_kernel",
    "prefill_kernel",
    "crossover_batch",
    "max_batch",
    "ServingCurve",
    "serving_curve",
    "cost_per_million_tokens_usd",
    "EXAMPLE_PRICE_USD_PER_DEVICE_HOUR",
    "PRECISION_SCHEMES",
    "CHINCHILLA_TOKENS_PER_PARAM",
    "ComputeOptimal",
    "compute_optimal",
    "KVAllocation",
    "kv_allocation",
    "BatchingRun",
    "simulate_batching",
    "request_trace",
]

#: FLOP per parameter per training token: 2 forward (a multiply and an add per weight) and
#: 4 backward (gradients with respect to activations and to weights). Kaplan et al. 2020, sec. 2.1.
TRAINING_FLOPS_PER_PARAM_PER_TOKEN = 6

#: Bytes per parameter of mixed-precision Adam, from Rajbhandari et al. 2020 (ZeRO), sec. 3.1:
#: "2Psi + 2Psi + K Psi = 16 Psi bytes" with K = 12 for the fp32 copy, momentum and variance.
ADAM_MIXED_PRECISION_BYTES = MappingProxyType({
    "weights_16bit": 2, "gradients_16bit": 2,
    "master_weights_fp32": 4, "adam_first_moment_fp32": 4, "adam_second_moment_fp32": 4,
})

#: An ASSUMED rental price used only as the example default: not a quoted market price.
#: Replace it with what you pay; every cost in the lesson scales linearly with it.
EXAMPLE_PRICE_USD_PER_DEVICE_HOUR = 2.50

#: Precision schemes for serving: (weights, KV cache, matrix-multiply compute).
#: Weight-only integer formats (W8A16, W4A16) store small weights and compute in 16 bits.
PRECISION_SCHEMES = MappingProxyType({
    "bf16": ("bf16", "bf16", "bf16"),
    "fp8": ("fp8", "fp8", "fp8"),
    "int8 weights": ("int8", "bf16", "bf16"),
    "int4 weights": ("int4", "bf16", "bf16"),
})


# ----------------------------------------------------------------------------------------------
# Models as data
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ModelConfig:
    """A decoder-only transformer's shape, read from ``data/models.toml`` with its source."""

    name: str
    layers: int
    hidden_size: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn_size: int
    ffn_matrices: int
    vocab_size: int
    tied_embeddings: bool
    norm_vectors_per_layer: int
    final_norm_vectors: int
    context_length_tokens: int
    source: str
    sliding_window_tokens: int | None = None
    params_counted: int | None = None
    params_counted_source: str = ""
    rope_buffer_values_per_layer: int = 0
    training_tokens: float | None = None
    training_device: str | None = None
    training_device_hours: float | None = None
    notes: str = ""
    aliases: tuple = ()
    raw: Mapping = field(default_factory=dict, repr=False, compare=False)

    @property
    def attention(self) -> str:
        """'MHA' (one KV head per query head), 'GQA' (groups share one) or 'MQA' (one KV head)."""
        if self.kv_heads == self.heads:
            return "MHA"
        return "MQA" if self.kv_heads == 1 else "GQA"

    @property
    def params(self) -> int:
        """Parameter count computed from the architecture (see :func:`count_params`)."""
        return count_params(self)

    @property
    def matmul_params(self) -> int:
        """Parameters a token multiplies by: every weight except the input embedding lookup.

        With untied embeddings the output projection (vocab x hidden) is counted here and the
        input table is not; with tied ones the single table is used as the output projection.
        Norm vectors are left out (they cost O(hidden) FLOP, not O(hidden^2)).
        """
        return self.layers * self._layer_matrix_params() + self.vocab_size * self.hidden_size

    def _layer_matrix_params(self) -> int:
        d, q, kv = self.hidden_size, self.heads * self.head_dim, self.kv_heads * self.head_dim
        return d * q + 2 * d * kv + q * d + self.ffn_matrices * d * self.ffn_size

    def kv_bytes_per_token(self, precision: str = "bf16") -> float:
        """KV cache bytes one token adds: 2 * layers * kv_heads * head_dim * bytes_per_element."""
        return kv_cache_bytes_per_token(self.layers, self.kv_heads, self.head_dim,
                                        bytes_per_element(precision))

    def cached_tokens(self, context_tokens: int) -> int:
        """Tokens the KV cache holds for a context: all of them, or the sliding window."""
        t = check_int("context_tokens", context_tokens, min_value=0)
        return t if self.sliding_window_tokens is None else min(t, self.sliding_window_tokens)


def count_params(model: ModelConfig) -> int:
    """Parameters of a decoder-only transformer, from its shape.

        per layer  = d*(H*hd) + 2*d*(KV*hd) + (H*hd)*d + m*d*f + n_norm*d
        total      = layers * per layer + V*d * (1 if tied else 2) + n_final*d

    (q, k, v and output projections; m feed-forward matrices of d x f; norm vectors.)
    Llama 3 8B: 32 * 218,112,000 + 2 * 525,336,576 + 4,096 = 8,030,261,248.
    """
    if not isinstance(model, ModelConfig):
        raise TypeError(f"model must be a ModelConfig, got {type(model).__name__}")
    d = model.hidden_size
    per_layer = model._layer_matrix_params() + model.norm_vectors_per_layer * d
    embeddings = model.vocab_size * d * (1 if model.tied_embeddings else 2)
    return model.layers * per_layer + embeddings + model.final_norm_vectors * d


def _build_model(entry: dict) -> ModelConfig:
    ints = ("layers", "hidden_size", "heads", "kv_heads", "head_dim", "ffn_size", "ffn_matrices",
            "vocab_size", "norm_vectors_per_layer", "final_norm_vectors", "context_length_tokens")
    model = ModelConfig(
        name=entry["name"],
        **{k: int(entry[k]) for k in ints},
        tied_embeddings=bool(entry["tied_embeddings"]),
        source=entry["source"],
        sliding_window_tokens=entry.get("sliding_window_tokens"),
        params_counted=entry.get("params_counted"),
        params_counted_source=entry.get("params_counted_source", ""),
        rope_buffer_values_per_layer=int(entry.get("rope_buffer_values_per_layer", 0)),
        training_tokens=entry.get("training_tokens"),
        training_device=entry.get("training_device"),
        training_device_hours=entry.get("training_device_hours"),
        notes=entry.get("notes", ""),
        aliases=tuple(entry.get("aliases", ())),
        raw=MappingProxyType(dict(entry)),
    )
    if model.heads % model.kv_heads:
        raise ValueError(f"{model.name}: heads ({model.heads}) must be a multiple of kv_heads")
    return model


@functools.lru_cache(maxsize=1)
def _models() -> dict:
    text = resources.files("course_lib").joinpath("data/models.toml").read_bytes()
    table = {}
    for entry in tomllib.loads(text.decode("utf-8"))["model"]:
        model = _build_model(entry)
        for label in (model.name, *model.aliases):
            table[name_key(label)] = model
    return table


def list_models() -> list[str]:
    """Names of the models in ``data/models.toml``, in file order."""
    seen = []
    for model in _models().values():
        if model.name not in seen:
            seen.append(model.name)
    return seen


def get_model(name) -> ModelConfig:
    """Look up a model by name ("Llama 3 8B", "llama3-8b"); a ModelConfig passes through."""
    if isinstance(name, ModelConfig):
        return name
    return lookup_by_name("model", name, _models(), list_models(), "Llama 3 8B", "models.toml")


# ----------------------------------------------------------------------------------------------
# Training
# ----------------------------------------------------------------------------------------------

def training_flops(params, tokens) -> float:
    """Training compute C = 6 * N * D in FLOP.

    >>> training_flops(8e9, 15e12)      # an 8B model on 15T tokens
    7.2e+23
    """
    n = check_number("params", params, min_value=0, allow_min=False)
    d = check_number("tokens", tokens, min_value=0, allow_min=False)
    return TRAINING_FLOPS_PER_PARAM_PER_TOKEN * n * d


def _peak(accelerator, precision) -> float:
    return get_accelerator(accelerator).peak(precision)


def training_time_s(params, tokens, *, accelerator="H100 SXM", n_devices=1, utilization=0.4,
                    precision="bf16") -> float:
    """Wall-clock seconds to train: t = 6 N D / (u * peak * G).

    ``utilization`` u is the model FLOP utilization, the fraction of the dense peak achieved,
    in (0, 1]; ``n_devices`` is G.
    """
    c = training_flops(params, tokens)
    g = check_int("n_devices", n_devices, min_value=1)
    u = check_number("utilization", utilization, min_value=0, max_value=1, allow_min=False)
    return c / (u * _peak(accelerator, precision) * g)


def implied_utilization(params, tokens, device_hours, *, accelerator="H100 SXM",
                        precision="bf16") -> float:
    """The utilization a reported device-hour total implies: u = 6 N D / (peak * hours * 3600)."""
    hours = check_number("device_hours", device_hours, min_value=0, allow_min=False)
    return training_flops(params, tokens) / (_peak(accelerator, precision) * hours * 3600.0)


@dataclass(frozen=True)
class TrainingMemory:
    """Bytes of model state per device (weights, gradients, optimizer) and parked on the host."""

    params: float
    n_devices: int
    zero_stage: int
    offload_optimizer: bool
    weights_bytes: float
    gradients_bytes: float
    optimizer_bytes: float
    host_bytes: float

    @property
    def device_bytes(self) -> float:
        return self.weights_bytes + self.gradients_bytes + self.optimizer_bytes

    @property
    def device_bytes_per_param(self) -> float:
        return self.device_bytes / self.params


def training_memory(params, *, n_devices=1, zero_stage=0, offload_optimizer=False) -> TrainingMemory:
    """Model-state bytes per device for mixed-precision Adam, optionally ZeRO-sharded.

        stage 0 (plain data parallel):  2N + 2N + 12N                 = 16N
        stage 1 (shard optimizer):      2N + 2N + 12N/G
        stage 2 (+ shard gradients):    2N + (2N + 12N)/G
        stage 3 (+ shard weights):      (2N + 2N + 12N)/G

    Rajbhandari et al. 2020, sec. 5 and fig. 1 (7.5B parameters, G = 64: 120, 31.4, 16.6, 1.9 GB).
    ``offload_optimizer`` parks the 12-byte optimizer state (its shard) in host memory instead,
    as ZeRO-Offload does. Activations are not included: see :func:`activation_bytes_per_layer`.
    """
    n = check_number("params", params, min_value=0, allow_min=False)
    g = check_int("n_devices", n_devices, min_value=1)
    stage = check_int("zero_stage", zero_stage, min_value=0, max_value=3)
    offload = check_bool("offload_optimizer", offload_optimizer)
    b = ADAM_MIXED_PRECISION_BYTES
    optim_per_param = b["master_weights_fp32"] + b["adam_first_moment_fp32"] + b["adam_second_moment_fp32"]
    weights = b["weights_16bit"] * n / (g if stage >= 3 else 1)
    grads = b["gradients_16bit"] * n / (g if stage >= 2 else 1)
    optim = optim_per_param * n / (g if stage >= 1 else 1)
    host = 0.0
    if offload:
        host, optim = optim, 0.0
    return TrainingMemory(n, g, stage, offload, weights, grads, optim, host)


def activation_bytes_per_layer(seq_len, micro_batch, hidden_size, heads, *, recompute="none") -> float:
    """Activation bytes one transformer layer keeps for the backward pass (16-bit, no parallelism).

        none:       s*b*h*(34 + 5*a*s/h)     everything, including the a*s*s attention scores
        selective:  34*s*b*h                 attention scores recomputed, the rest kept
        full:       2*s*b*h                  only the layer's input; the layer is recomputed

    Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
    sec. 4 and table 2 (GPT-style layer with a 4h MLP and dropout). Full recomputation costs one
    extra forward pass: 8ND instead of 6ND training FLOP.
    """
    s = check_int("seq_len", seq_len, min_value=1)
    b = check_int("micro_batch", micro_batch, min_value=1)
    h = check_int("hidden_size", hidden_size, min_value=1)
    a = check_int("heads", heads, min_value=1)
    mode = check_choice("recompute", recompute, ("none", "selective", "full"))
    sbh = float(s) * b * h
    if mode == "none":
        return sbh * (34 + 5 * a * s / h)
    return 34 * sbh if mode == "selective" else 2 * sbh


# ----------------------------------------------------------------------------------------------
# Inference: KV cache, decode steps, prefill
# ----------------------------------------------------------------------------------------------

def kv_cache_bytes_per_token(layers, kv_heads, head_dim, bytes_per_element) -> float:
    """KV cache bytes per token: 2 (a key and a value) * layers * kv_heads * head_dim * bytes.

    >>> kv_cache_bytes_per_token(32, 8, 128, 2)      # Llama 3 8B in BF16: 128 KiB
    131072.0
    """
    n_layers = check_int("layers", layers, min_value=1)
    n_kv = check_int("kv_heads", kv_heads, min_value=1)
    hd = check_int("head_dim", head_dim, min_value=1)
    b = check_number("bytes_per_element", bytes_per_element, min_value=0, allow_min=False)
    return 2.0 * n_layers * n_kv * hd * b


def kv_cache_bytes(model, context_tokens, batch=1, precision="bf16") -> float:
    """KV cache of ``batch`` sequences of ``context_tokens`` each; linear in both.

    A sliding-window model (Mistral 7B) caches at most its window of tokens per sequence.
    """
    m = get_model(model)
    b = check_int("batch", batch, min_value=1)
    return b * m.cached_tokens(context_tokens) * m.kv_bytes_per_token(precision)


def weight_bytes(model, precision="bf16") -> float:
    """Bytes to store every parameter at ``precision`` (int4 and fp4: half a byte each)."""
    return get_model(model).params * bytes_per_element(precision)


def _weight_bytes_read(m: ModelConfig, precision: str) -> float:
    # A decode step reads every weight once, except the untied input embedding table, of which
    # only the batch's rows are touched (negligible).
    unread = 0 if m.tied_embeddings else m.vocab_size * m.hidden_size
    return (m.params - unread) * bytes_per_element(precision)


def _scheme(precision: str):
    key = check_choice("precision", precision, tuple(PRECISION_SCHEMES))
    return PRECISION_SCHEMES[key]


@dataclass(frozen=True)
class DecodeStep:
    """One decode step: every sequence of the batch produces one token.

    Traffic counts the weights once per step (shared by the batch) and each sequence's KV cache
    (read, plus the new token's key and value written); activations are left out.
    ``resident_bytes`` is what must sit in memory: all weights plus every sequence's cache.
    """

    model: str
    accelerator: str
    precision: str
    batch: int
    context_tokens: int
    n_devices: int
    flops: float
    weight_bytes: float
    kv_bytes: float
    peak_flops: float
    bandwidth_bytes_per_s: float
    capacity_bytes: float
    resident_bytes: float

    @property
    def bytes_moved(self) -> float:
        return self.weight_bytes + self.kv_bytes

    @property
    def t_compute_s(self) -> float:
        return self.flops / self.peak_flops

    @property
    def t_memory_s(self) -> float:
        return self.bytes_moved / self.bandwidth_bytes_per_s

    @property
    def t_step_s(self) -> float:
        """Lower bound on the step time: the slower of computing and moving the bytes."""
        return max(self.t_compute_s, self.t_memory_s)

    @property
    def bound(self) -> str:
        return "compute" if self.t_compute_s >= self.t_memory_s else "memory"

    @property
    def intensity_flops_per_byte(self) -> float:
        return self.flops / self.bytes_moved

    @property
    def tokens_per_s(self) -> float:
        return self.batch / self.t_step_s

    @property
    def fits(self) -> bool:
        """Whether weights plus the whole KV cache fit in the devices' memory."""
        return self.resident_bytes <= self.capacity_bytes


def _per_token_flops(m: ModelConfig, context_tokens: int) -> float:
    # 2 FLOP per matmul weight, plus attention: q.k and p.v over the cached tokens, 2 FLOP each.
    return 2.0 * m.matmul_params + 4.0 * m.layers * m.heads * m.head_dim * m.cached_tokens(context_tokens)


def decode_step(model, accelerator="H100 SXM", batch=1, context_tokens=1024, precision="bf16",
                n_devices=1) -> DecodeStep:
    """Time bound of one decode step at ``batch`` sequences, each with ``context_tokens`` cached.

        flops = B * (2 * matmul_params + 4 * layers * heads * head_dim * T)
        bytes = weights + B * (T + 1) * kv_bytes_per_token
        t     = max(flops / (G * peak), bytes / (G * bandwidth))

    ``precision`` is a key of :data:`PRECISION_SCHEMES`. ``n_devices`` G splits weights and
    cache evenly (ideal tensor parallelism: communication is ignored).
    """
    m = get_model(model)
    acc = get_accelerator(accelerator)
    b = check_int("batch", batch, min_value=1)
    t = check_int("context_tokens", context_tokens, min_value=0)
    g = check_int("n_devices", n_devices, min_value=1)
    w_prec, kv_prec, c_prec = _scheme(precision)
    w_resident = weight_bytes(m, w_prec)
    kv_tok = m.kv_bytes_per_token(kv_prec)
    cached = m.cached_tokens(t)
    kv_moved = b * (cached + 1) * kv_tok
    return DecodeStep(
        model=m.name, accelerator=acc.name, precision=precision, batch=b, context_tokens=t,
        n_devices=g, flops=b * _per_token_flops(m, t), weight_bytes=_weight_bytes_read(m, w_prec),
        kv_bytes=kv_moved,
        peak_flops=g * acc.peak(c_prec), bandwidth_bytes_per_s=g * acc.mem_bandwidth,
        capacity_bytes=g * acc.mem_capacity, resident_bytes=w_resident + b * (cached + 1) * kv_tok,
    )


def decode_kernel(model, batch=1, context_tokens=1024, precision="bf16") -> Kernel:
    """A decode step as a :class:`course_lib.roofline.Kernel` (FLOP and bytes), to place on a roofline."""
    step = decode_step(model, "H100 SXM", batch, context_tokens, precision)
    return Kernel(f"decode, batch {step.batch}", step.flops, step.bytes_moved)


def prefill_kernel(model, prompt_tokens, precision="bf16") -> Kernel:
    """Prefill of one prompt as a roofline Kernel.

        flops = P * 2 * matmul_params + 4 * layers * heads * head_dim * sum_{i<P} i   (causal)
        bytes = weights + P * kv_bytes_per_token                                  (cache written)

    Every weight read is reused by all P prompt tokens, so intensity grows about linearly in P.
    """
    m = get_model(model)
    p = check_int("prompt_tokens", prompt_tokens, min_value=1)
    w_prec, kv_prec, _ = _scheme(precision)
    attended = p * (p - 1) / 2 if m.sliding_window_tokens is None else sum(
        min(i, m.sliding_window_tokens) for i in range(p))
    flops = p * 2.0 * m.matmul_params + 4.0 * m.layers * m.heads * m.head_dim * attended
    bytes_moved = _weight_bytes_read(m, w_prec) + p * m.kv_bytes_per_token(kv_prec)
    return Kernel(f"prefill, {p} tokens", flops, bytes_moved)


def crossover_batch(model, accelerator="H100 SXM", context_tokens=1024, precision="bf16",
                    n_devices=1) -> float:
    """Batch size B* at which a decode step turns compute-bound (may be fractional or infinite).

    Setting B*f/P = (W + B*k)/BW, with f the FLOP per sequence, k its cache bytes, W the weights:

        B* = (W / BW) / (f / P - k / BW)

    When f/k is below the ridge point P/BW (long contexts: each cached byte is used for only a
    few FLOP), the denominator is <= 0 and decode stays memory-bound at every batch: returns inf.
    """
    one = decode_step(model, accelerator, 1, context_tokens, precision, n_devices)
    t_weights = one.weight_bytes / one.bandwidth_bytes_per_s
    margin = one.flops / one.peak_flops - one.kv_bytes / one.bandwidth_bytes_per_s
    return math.inf if margin <= 0 else t_weights / margin


def max_batch(model, accelerator="H100 SXM", context_tokens=1024, precision="bf16", n_devices=1) -> int:
    """Largest batch whose weights and KV cache fit in the devices' memory (0 if weights alone do not)."""
    one = decode_step(model, accelerator, 1, context_tokens, precision, n_devices)
    per_seq = one.kv_bytes
    free = one.capacity_bytes - (one.resident_bytes - per_seq)
    return max(0, int(free // per_seq))


@dataclass(frozen=True)
class ServingCurve:
    """Decode steps over a range of batch sizes: the latency-throughput trade-off."""

    model: str
    accelerator: str
    precision: str
    context_tokens: int
    n_devices: int
    batch: np.ndarray
    t_step_s: np.ndarray
    t_compute_s: np.ndarray
    t_memory_s: np.ndarray
    tokens_per_s: np.ndarray
    fits: np.ndarray
    crossover_batch: float
    max_batch: int
    highlight: int | None = None

    @property
    def ms_per_token(self) -> np.ndarray:
        """Latency a user sees between two tokens, in milliseconds."""
        return 1e3 * self.t_step_s


def serving_curve(model, accelerator="H100 SXM", context_tokens=1024, precision="bf16",
                  batches=None, n_devices=1, highlight=None) -> ServingCurve:
    """Step time, throughput and fit for each batch size in ``batches`` (default 1..1024, doubling)."""
    if batches is None:
        batches = 2 ** np.arange(0, 11)
    values = [check_int("batches", b, min_value=1)
              for b in np.atleast_1d(batches).tolist()]
    if not values:
        raise ValueError("batches must hold at least one batch size")
    steps = [decode_step(model, accelerator, b, context_tokens, precision, n_devices) for b in values]
    first = steps[0]
    return ServingCurve(
        model=first.model, accelerator=first.accelerator, precision=first.precision,
        context_tokens=first.context_tokens, n_devices=first.n_devices,
        batch=np.array(values), t_step_s=np.array([s.t_step_s for s in steps]),
        t_compute_s=np.array([s.t_compute_s for s in steps]),
        t_memory_s=np.array([s.t_memory_s for s in steps]),
        tokens_per_s=np.array([s.tokens_per_s for s in steps]),
        fits=np.array([s.fits for s in steps]),
        crossover_batch=crossover_batch(model, accelerator, context_tokens, precision, n_devices),
        max_batch=max_batch(model, accelerator, context_tokens, precision, n_devices),
        highlight=None if highlight is None else check_int("highlight", highlight, min_value=1),
    )


def cost_per_million_tokens_usd(tokens_per_s, price_usd_per_device_hour, n_devices=1) -> float:
    """Dollars per million generated tokens: price * G / 3600 / (tokens per second) * 1e6.

    The price is yours to supply (an input, not a fact this course can state).
    """
    rate = check_number("tokens_per_s", tokens_per_s, min_value=0, allow_min=False)
    price = check_number("price_usd_per_device_hour", price_usd_per_device_hour, min_value=0)
    g = check_int("n_devices", n_devices, min_value=1)
    return price * g / 3600.0 / rate * 1e6


# ----------------------------------------------------------------------------------------------
# Scaling laws: how to split a compute budget between parameters and tokens
# ----------------------------------------------------------------------------------------------

#: Tokens per parameter at the compute-optimal point, Hoffmann et al. 2022 ("Chinchilla"): their
#: three approaches put N and D each proportional to about C^0.5, and their 70B model trained on
#: 1.4T tokens (20 per parameter) used Gopher's budget. A rule of thumb read off their fits, not a law.
CHINCHILLA_TOKENS_PER_PARAM = 20.0


@dataclass(frozen=True)
class ComputeOptimal:
    """The compute-optimal model size and token count for a FLOP budget."""

    compute_flops: float
    tokens_per_param: float
    params: float
    tokens: float

    @property
    def check_flops(self) -> float:
        """6 N D from the answer: equals ``compute_flops`` (a second way through C = 6ND)."""
        return TRAINING_FLOPS_PER_PARAM_PER_TOKEN * self.params * self.tokens


def compute_optimal(compute_flops, tokens_per_param=CHINCHILLA_TOKENS_PER_PARAM) -> ComputeOptimal:
    """N and D that spend ``compute_flops`` with D = r N tokens (r = tokens per parameter).

        C = 6 N D and D = r N   =>   N = sqrt(C / (6 r)),  D = r N

    Gopher's budget, 5.76e23 FLOP, at r = 20: N = sqrt(5.76e23 / 120) = 69.3e9 parameters and
    D = 1.39e12 tokens. That is this rule's arithmetic, not a figure from Hoffmann et al.'s tables;
    the paper's Chinchilla, trained on that budget, is 70B parameters on 1.4T tokens.
    """
    c = check_number("compute_flops", compute_flops, min_value=0, allow_min=False)
    r = check_number("tokens_per_param", tokens_per_param, min_value=0, allow_min=False)
    n = math.sqrt(c / (TRAINING_FLOPS_PER_PARAM_PER_TOKEN * r))
    return ComputeOptimal(c, r, n, r * n)


# ----------------------------------------------------------------------------------------------
# Paged KV cache: what reserving memory per request wastes
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class KVAllocation:
    """KV-cache slots (in tokens) for a set of requests under two allocation schemes.

    ``used_tokens``: tokens the requests actually hold. ``contiguous_tokens``: each request
    reserves ``max_tokens`` up front (a contiguous buffer for the longest sequence allowed).
    ``paged_tokens``: each request holds ceil(length / block) blocks of ``block_tokens``.
    """

    lengths: np.ndarray
    max_tokens: int
    block_tokens: int
    used_tokens: int
    contiguous_tokens: int
    paged_tokens: int

    @property
    def contiguous_waste(self) -> float:
        """Fraction of the reserved slots that hold no token."""
        return 1.0 - self.used_tokens / self.contiguous_tokens

    @property
    def paged_waste(self) -> float:
        return 1.0 - self.used_tokens / self.paged_tokens


def kv_allocation(lengths, max_tokens, block_tokens=16) -> KVAllocation:
    """Reserved KV slots for requests of ``lengths`` tokens: contiguous at ``max_tokens`` each,
    or paged in blocks of ``block_tokens``.

        contiguous = n * max_tokens
        paged      = sum(ceil(L / block) * block)      (only the last block is part-filled)

    Lengths [100, 17, 250], max 2048, block 16: used 367, contiguous 6144 (94% waste),
    paged 112 + 32 + 256 = 400 (8% waste).
    """
    lens = check_array("lengths", lengths, ndim=1)
    if lens.size == 0:
        raise ValueError("lengths must hold at least one request length")
    if np.any(lens != np.round(lens)) or np.any(lens < 1):
        raise ValueError("lengths must be whole numbers of tokens, each >= 1")
    mx = check_int("max_tokens", max_tokens, min_value=1)
    blk = check_int("block_tokens", block_tokens, min_value=1, max_value=mx)
    if lens.max() > mx:
        raise ValueError(f"lengths must be <= max_tokens = {mx}, got a request of {lens.max():.6g} tokens")
    lens = lens.astype(np.int64)
    paged = int((-(-lens // blk) * blk).sum())
    return KVAllocation(lens, mx, blk, int(lens.sum()), int(lens.size) * mx, paged)


# ----------------------------------------------------------------------------------------------
# Static against continuous batching: a discrete-time simulation of decode steps
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BatchingRun:
    """One simulated serving run; times are in decode steps (one token per sequence per step).

    ``latency_steps`` runs from a request's arrival to its last token.
    """

    policy: str
    slots: int
    arrival_steps: np.ndarray
    output_tokens: np.ndarray
    start_steps: np.ndarray
    finish_steps: np.ndarray
    busy_slot_steps: int            # slot-steps spent producing tokens
    held_slot_steps: int            # slot-steps a request held its slot (static: until the batch ends)

    @property
    def latency_steps(self) -> np.ndarray:
        return self.finish_steps - self.arrival_steps

    @property
    def total_steps(self) -> int:
        return int(self.finish_steps.max())

    @property
    def tokens(self) -> int:
        return int(self.output_tokens.sum())

    @property
    def tokens_per_step(self) -> float:
        """Throughput over the run: every generated token / the step the last one came out."""
        return self.tokens / self.total_steps

    def latency_percentile_steps(self, q) -> float:
        return float(np.percentile(self.latency_steps, check_number("q", q, min_value=0, max_value=100)))


def request_trace(rng, n_requests, mean_output_tokens, arrivals_per_step, sigma=1.0, max_output_tokens=None):
    """Random requests: Poisson arrivals and log-normal output lengths (whole tokens, >= 1).

    Gaps between arrivals are exponential with mean 1 / ``arrivals_per_step``, rounded down to
    whole steps; lengths are log-normal with mean ``mean_output_tokens`` and shape ``sigma``,
    capped at ``max_output_tokens``. Returns (arrival_steps, output_tokens), both int arrays.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy Generator (np.random.default_rng(seed)), got {type(rng).__name__}")
    n = check_int("n_requests", n_requests, min_value=1, max_value=1_000_000)
    mean = check_number("mean_output_tokens", mean_output_tokens, min_value=1, max_value=1e9)
    rate = check_number("arrivals_per_step", arrivals_per_step, min_value=1e-6)
    s = check_number("sigma", sigma, min_value=0, max_value=3)
    cap = None if max_output_tokens is None else check_int("max_output_tokens", max_output_tokens, min_value=1)
    arrivals = np.floor(np.cumsum(rng.exponential(1.0 / rate, n))).astype(np.int64)
    lengths = rng.lognormal(np.log(mean) - s * s / 2, s, n)
    lengths = np.maximum(1, np.round(lengths)).astype(np.int64)
    if cap is not None:
        lengths = np.minimum(lengths, cap)
    return arrivals, lengths


def simulate_batching(arrival_steps, output_tokens, slots, policy="continuous") -> BatchingRun:
    """Serve requests with ``slots`` sequences per decode step, first come first served.

    ``static``: when the engine is free it takes up to ``slots`` waiting requests (or waits for
    the next arrival) and runs them until the longest is done; every request of the batch returns
    at the end, and a finished sequence's slot idles (request-level scheduling, as Orca, Yu et al.
    2022, section 2, describes it). ``continuous``: at every step a free slot takes the next
    waiting request (iteration-level scheduling, Orca), so request i starts at
    max(arrival_i, the first slot free) and finishes output_tokens_i steps later.

    Bound for a second way: at most ``slots`` tokens per step, so the run takes at least
    sum(output_tokens) / slots steps. Cost: O(n log slots) for continuous, O(n) for static.
    """
    arr = check_array("arrival_steps", arrival_steps, ndim=1)
    out = check_array("output_tokens", output_tokens, ndim=1)
    if arr.shape != out.shape or arr.size == 0:
        raise ValueError(f"arrival_steps and output_tokens must be non-empty and of one length, got "
                         f"{arr.size} and {out.size}")
    if np.any(arr != np.round(arr)) or np.any(arr < 0) or np.any(np.diff(arr) < 0):
        raise ValueError("arrival_steps must be whole, non-negative and in arrival order")
    if np.any(out != np.round(out)) or np.any(out < 1):
        raise ValueError("output_tokens must be whole numbers >= 1")
    if arr[-1] > 1e12 or out.max() > 1e9:
        raise ValueError(f"arrival_steps must be <= 1e12 and output_tokens <= 1e9 (more would overflow the "
                         f"step counts), got {arr[-1]:.3g} and {out.max():.3g}")
    b = check_int("slots", slots, min_value=1, max_value=100_000)
    pol = check_choice("policy", policy, ("continuous", "static"))
    arr, out = arr.astype(np.int64), out.astype(np.int64)
    n = arr.size
    start = np.empty(n, dtype=np.int64)
    finish = np.empty(n, dtype=np.int64)
    if pol == "continuous":
        free = [0] * b                       # the step at which each slot is next free
        for i in range(n):
            s = max(int(arr[i]), heapq.heappop(free))
            start[i] = s
            finish[i] = s + out[i]
            heapq.heappush(free, int(finish[i]))
        held = int(out.sum())
    else:
        t, i, held = 0, 0, 0
        while i < n:
            t = max(t, int(arr[i]))
            j = i + int(np.searchsorted(arr[i:i + b], t, side="right"))   # arrived by t, at most b
            duration = int(out[i:j].max())
            start[i:j] = t
            finish[i:j] = t + duration
            held += duration * (j - i)
            t += duration
            i = j
    return BatchingRun(pol, b, arr, out, start, finish, int(out.sum()), held)
