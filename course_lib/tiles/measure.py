"""Time lesson 10's kernels compiled on a real NVIDIA GPU, when one is present (optional).

Nothing in the course needs this. The lesson's process runs Triton's interpreter (see
``course_lib.tiles.select``), so the compiled kernels run in a process of their own:
:func:`measure_on_gpu` starts ``python -m course_lib.tiles.measure`` with ``TRITON_INTERPRET=0``,
which builds CUDA tensors at large sizes, times each kernel with ``triton.testing.do_bench``
(median of its repeats, in ms) and prints one JSON line per kernel with its FLOP and the bytes
its formula moves. Without a GPU, :func:`gpu_status` says why in one line.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from dataclasses import dataclass

__all__ = ["gpu_status", "GpuTiming", "measure_on_gpu", "catalog_match"]


def gpu_status() -> tuple[bool, str]:
    """(True, device name) when PyTorch can use a CUDA GPU; else (False, one-line reason)."""
    try:
        import torch
    except ImportError:
        return False, "PyTorch is not installed"
    if os.environ.get("COURSE_FORCE_SIMULATOR") == "1":
        return False, "COURSE_FORCE_SIMULATOR=1: the GPU section is skipped"
    if not torch.cuda.is_available():
        return False, "no CUDA GPU that PyTorch can use: the kernels ran on Triton's CPU interpreter only"
    return True, torch.cuda.get_device_name(0)


def catalog_match(device: str) -> str:
    """The catalog GPU whose name's words all appear in the device's name, else its model number's."""
    from ..hardware import list_accelerators
    gpus = list_accelerators(kind="gpu")
    low = device.lower()
    return next((g for g in gpus if all(w.lower() in low for w in g.split())),
                next((g for g in gpus if g.split()[0].lower() in low), "H100 SXM"))


@dataclass(frozen=True)
class GpuTiming:
    """One compiled kernel's measured time at a large size, with its FLOP and formula bytes."""

    name: str
    seconds: float
    flops: float
    bytes_moved: float
    precision: str


def measure_on_gpu(timeout_s: float = 300.0) -> list[GpuTiming]:
    """Run the compiled timings in a subprocess (TRITON_INTERPRET=0); a clear error without a GPU."""
    ok, why = gpu_status()
    if not ok:
        raise RuntimeError(f"cannot time on a GPU: {why}")
    env = dict(os.environ, TRITON_INTERPRET="0")
    done = subprocess.run([sys.executable, "-m", "course_lib.tiles.measure"], env=env, capture_output=True,
                          text=True, timeout=timeout_s)
    if done.returncode != 0:
        raise RuntimeError(f"the GPU timing process failed:\n{done.stderr[-2000:]}")
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return [GpuTiming(**r) for r in rows]


def _main() -> int:            # runs in the subprocess, compiled
    import torch
    import triton

    from . import interpreter_selected
    from . import kernels as K
    from ..attention import flash_attention_traffic
    from ..tiling import tiled_matmul_traffic
    if interpreter_selected():
        raise SystemExit("run with TRITON_INTERPRET=0")
    dev = "cuda"

    def bench(fn):
        return triton.testing.do_bench(fn) / 1e3

    out = []
    rows, cols = 8192, 4096
    x = torch.randn(rows, cols, device=dev)
    y = torch.empty_like(x)
    t = bench(lambda: K.softmax_kernel[(rows,)](x, y, cols, cols, BLOCK_COLS=cols))
    out.append(dict(name=f"softmax {rows} x {cols} fp32", seconds=t, flops=5.0 * rows * cols,
                    bytes_moved=K.softmax_bytes(rows, cols, 4), precision="fp32"))
    m = k = n = 4096
    a = torch.randn(m, k, device=dev, dtype=torch.float16)
    b = torch.randn(k, n, device=dev, dtype=torch.float16)
    c = torch.empty(m, n, device=dev, dtype=torch.float32)
    grid = (triton.cdiv(m, 128) * triton.cdiv(n, 128),)
    t = bench(lambda: K.matmul_kernel[grid](a, b, c, m, n, k, BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, GROUP_M=8))
    f = tiled_matmul_traffic(m, k, n, 128, 128, bytes_per_element=2)
    out.append(dict(name="matmul 4096^3 fp16, 128 x 128 tiles", seconds=t, flops=f.flops,
                    bytes_moved=f.a_bytes + f.b_bytes + 2 * f.c_bytes, precision="fp16"))
    heads, seq, d = 16, 4096, 64
    q, kk, v = (torch.randn(heads, seq, d, device=dev, dtype=torch.float16) for _ in range(3))
    o = torch.empty_like(q)
    lse = torch.empty(heads, seq, device=dev, dtype=torch.float32)
    t = bench(lambda: K.flash_attention_kernel[(triton.cdiv(seq, 64), heads)](
        q, kk, v, o, lse, seq, d, 1 / math.sqrt(d), BLOCK_M=64, BLOCK_N=64, BLOCK_D=d, CAUSAL=True))
    fa = flash_attention_traffic(seq, d, block_size=64, causal=True)
    out.append(dict(name=f"flash attention causal, {heads} heads x {seq} x {d} fp16", seconds=t,
                    flops=heads * 2.0 * seq * seq * d, bytes_moved=heads * fa.bytes_moved(2), precision="fp16"))
    for row in out:
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(_main())
