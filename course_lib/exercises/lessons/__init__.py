"""Exercise checks, one module per lesson: ``ex_NN.py`` defines ``EXERCISES``.

``course_lib.exercises.registry`` discovers every ``ex_*.py`` here on first use; nothing is imported
or computed before a learner calls ``check`` or ``hint``. Shared misconceptions live in
``misconceptions.py``.

``CONCEPTS`` is the fixed list of concepts each lesson teaches, ``{lesson: {key: description}}``.
Every exercise names the ones it exercises (``concepts=("intensity",)``); the registry refuses a
key its lesson does not list, and ``course_lib.exercises.mastery`` reports per concept.
"""

__all__ = ["CONCEPTS"]

CONCEPTS = {
    "01": {"littles-law": "Little's law: bytes in flight = bandwidth x latency",
           "latency-hiding": "enough warps in flight hide memory latency",
           "occupancy": "what limits the warps resident on an SM"},
    "02": {"divergence": "lanes of a warp on different paths",
           "simt-efficiency": "useful lane-instructions over issued ones",
           "coalescing": "which sectors a warp's access moves"},
    "03": {"memory-ladder": "bandwidth of each level, down to the host link",
           "caches": "sets, ways and conflict misses",
           "bank-conflicts": "shared-memory banks and broadcasts",
           "async-copy": "hiding copies behind compute"},
    "04": {"intensity": "FLOP per byte moved",
           "roofline-bound": "time = max(FLOP / peak, bytes / bandwidth)",
           "ridge-point": "the machine's balance, peak / bandwidth"},
    "05": {"format-anatomy": "sign, exponent and mantissa bits",
           "precision-range": "precision against range",
           "bytes-per-element": "what fewer bytes per value buy",
           "loss-scaling": "keeping gradients above underflow",
           "quantization": "integer formats with scales",
           "fp8-scaling": "FP8's per-tensor scale and the margin delayed scaling needs"},
    "06": {"tiling-traffic": "how tiles cut memory traffic",
           "tile-sizing": "what limits a tile's size",
           "flash-attention": "attention's traffic, naive and tiled",
           "online-softmax": "a softmax computed block by block",
           "kernel-fusion": "the HBM traffic fusing kernels saves"},
    "07": {"training-compute": "C = 6 N D and training time",
           "decode-bound": "what bounds a decode step",
           "serving-cost": "throughput and dollars per token",
           "kv-cache": "the KV cache's size"},
    "08": {"comm-vs-compute": "when communication hides behind compute",
           "collectives": "ring all-reduce and its cost",
           "training-memory": "model-state bytes and ZeRO",
           "gpu-sharing": "serving on a MIG slice: a share of the compute, memory and bandwidth"},
    "09": {"guards": "indexing threads and guarding the edges",
           "coalescing": "mapping lanes to neighbouring addresses",
           "shared-memory": "staging data in shared memory, without bank conflicts",
           "synchronization": "barriers and races",
           "reductions": "tree reductions and atomics",
           "data-reuse": "registers and tiles that cut global traffic"},
}
