"""Predicted against measured on a real NVIDIA GPU: copy, transposes and the tiled matmul.

    python tools/gpu_validate.py [--accelerator "H200"] [--size 8192] [--repeats 50]

Each kernel is first checked on the simulator (``check_kernel``, small random sizes), then
timed on the device with CUDA events (``measure_kernel``) at ``--size`` and compared with the
course's prediction at that size (``predict_task``: the traced traffic per byte scaled to the
size, over the catalog's bandwidth and FP32 peak). Prints one row per kernel and the ratio
measured / predicted; writes build/gpu_validate.json. Without a GPU it says so in one line and
exits 0. Nothing in the tests needs it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from course_lib.kernels.measure import gpu_status, measure_kernel  # noqa: E402
from course_lib.kernels.tasks import check_kernel, get_task, predict_task  # noqa: E402

KERNELS = ("copy", "transpose", "transpose_padded", "matmul", "matmul_tiled")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accelerator", default="H200", help="catalog name to predict for")
    parser.add_argument("--size", type=int, default=8192, help="matrix side (matmuls use size / 2)")
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args(argv)
    ok, why = gpu_status()
    if not ok:
        print(f"no GPU to validate on: {why}")
        return 0
    from kernel_solutions import GOOD
    rows = []
    print(f"device: {why}; predictions for the catalog's {args.accelerator}")
    print(f"{'kernel':18s} {'size':>12s} {'predicted us':>13s} {'measured us':>12s} {'measured/pred':>14s}")
    for name in KERNELS:
        task = get_task(name)
        run = check_kernel(task, GOOD[name], cases=1)[0]
        n = args.size if "matmul" not in name else args.size // 2
        sizes = {"m": n, "k": n, "n": n} if "matmul" in name else {"rows": n, "cols": n}
        pred = predict_task(run, args.accelerator, sizes=sizes)
        rng = np.random.default_rng(0)
        data = task.make_data(rng, run.sizes | sizes)
        grid, block = task.launch(run.sizes | sizes)
        t = measure_kernel(GOOD[name], grid, block, [data[p] for p in task.params], repeats=args.repeats)
        rows.append({"kernel": name, "sizes": sizes, "predicted_s": pred.t_s, "measured_s": t,
                     "ratio": t / pred.t_s})
        print(f"{name:18s} {n:>12d} {pred.t_s * 1e6:13.1f} {t * 1e6:12.1f} {t / pred.t_s:14.2f}")
    out = ROOT / "build" / "gpu_validate.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"device": why, "accelerator": args.accelerator, "rows": rows}, indent=2))
    print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
