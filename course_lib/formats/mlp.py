"""Quantization error through the layers of a ReLU MLP: each layer's error joins the next one's.

    y_l = relu(y_{l-1} W_l),   e_l = ||y_l^fmt - y_l^ref|| / ||y_l^ref||

Each layer quantizes its input per tensor and its weights per output column (:func:`quantize`)
before a float64 matmul, the tensor-core pattern of narrow inputs and a wide accumulator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validate import check_array, check_int
from .calibration import rel_rms_error
from .layouts import get_format
from .quantization import quantize

__all__ = ["random_mlp", "LayerErrors", "mlp_forward", "mlp_quantization_errors"]


def random_mlp(rng, widths):
    """Weights of a ReLU MLP with He-initialised layers: widths (d0, d1, ..., dL) -> L matrices.

        W_l ~ N(0, 2 / d_{l-1}),  shape (d_{l-1}, d_l)

    He et al. (2015): this variance keeps activations' scale steady through ReLU layers.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    if isinstance(widths, (str, bytes)) or not hasattr(widths, "__len__") or len(widths) < 2:
        raise ValueError(f"widths must list at least two layer widths, got {widths!r}")
    ws = [check_int(f"widths[{i}]", w, min_value=1, max_value=8192) for i, w in enumerate(widths)]
    return [rng.standard_normal((a, b)) * math.sqrt(2.0 / a) for a, b in zip(ws[:-1], ws[1:])]


@dataclass(frozen=True)
class LayerErrors:
    """Relative RMS error of each layer's output against the float64 reference network."""

    format: str
    rel_errors: np.ndarray

    @property
    def growth(self) -> float:
        """Last layer's error over the first layer's."""
        return float(self.rel_errors[-1] / self.rel_errors[0])


def mlp_forward(weights, x, fmt=None) -> list:
    """Outputs of every layer of ``relu(... relu(x W_1) ... ) W_L`` (no ReLU after the last).

    With ``fmt`` each layer's input is quantized per tensor and each weight matrix per output
    column (absmax scales, :func:`quantize`) before a float64 matmul: the tensor-core pattern of
    narrow inputs and a wide accumulator. ``fmt=None`` is the float64 reference.
    """
    if not isinstance(weights, (list, tuple)) or not weights:
        raise ValueError("weights must be a non-empty list of 2-D arrays")
    ws = [check_array(f"weights[{i}]", w, ndim=2) for i, w in enumerate(weights)]
    h = check_array("x", x, ndim=2)
    for i, w in enumerate(ws):
        width = h.shape[1] if i == 0 else ws[i - 1].shape[1]
        if w.shape[0] != width:
            raise ValueError(f"weights[{i}] has {w.shape[0]} rows but its input has width {width}")
    if sum(w.size for w in ws) > 50_000_000 or h.shape[0] > 100_000:
        raise ValueError("weights may hold at most 5e7 values and x at most 1e5 rows")
    outs = []
    for i, w in enumerate(ws):
        if fmt is not None:
            h = quantize(h, fmt, "tensor").dequantized
            w = quantize(w, fmt, "channel", axis=1).dequantized
        h = h @ w
        outs.append(h)
        if i < len(ws) - 1:
            h = np.maximum(h, 0.0)
    return outs


def mlp_quantization_errors(weights, x, fmt) -> LayerErrors:
    """Error of each layer's output when every layer quantizes its inputs and weights to ``fmt``.

        e_l = ||y_l^fmt - y_l^ref|| / ||y_l^ref||

    The error a layer adds is carried into the next one and joins its own: the errors compound.
    """
    f = get_format(fmt)
    ref = mlp_forward(weights, x)
    got = mlp_forward(weights, x, f.name)
    return LayerErrors(format=f.name, rel_errors=np.array([rel_rms_error(g, r) for g, r in zip(got, ref)]))
