# ruff: noqa: F403, F405
from _harness import *

W = BLOCK + 2 * RADIUS


# right halo guarded with j <= n (off by one): reads x[n] when n is 0, 1 or 2 past a multiple of BLOCK
@cuda.jit
def conv_right_guard_le(x, w, y):
    tile = cuda.shared.array(W, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = x.size
    b0 = cuda.blockIdx.x * BLOCK
    tile[t + RADIUS] = x[i] if i < n else 0.0
    if t < RADIUS:
        tile[t] = x[b0 - RADIUS + t] if b0 - RADIUS + t >= 0 else 0.0
        j = b0 + BLOCK + t
        tile[BLOCK + RADIUS + t] = x[j] if j <= n else 0.0
    cuda.syncthreads()
    if i < n:
        acc = 0.0
        for q in range(TAPS):
            acc += w[q] * tile[t + q]
        y[i] = acc


attempt("right halo guard j <= n", "09.24", conv_right_guard_le)
bad = []
for s in range(40):
    try:
        r = run_task("conv1d", conv_right_guard_le, seed=s)
        ok = r.correct and r.profile.safe
    except Exception:  # noqa: BLE001
        ok = False
    if not ok:
        bad.append(s)
print("seeds whose first case catches it:", bad)
