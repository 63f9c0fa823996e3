"""Run inside the course image (``make image-test``): one lesson, one kernel-lab check, no network.

    docker run --rm --network none -v deploy/z2jh/smoke:/smoke:ro IMAGE python /smoke/in_container.py

Prints one JSON line: who runs it, the network interfaces it sees, the lesson's time and cell
count, and that lesson 09's first puzzle passes with the right kernel and fails with a wrong one.
Exits non-zero when any of it is not so.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

LESSON = "01_throughput_latency"
COURSE = Path("/opt/gpu-ml-course")


def interfaces() -> list[str]:
    lines = Path("/proc/net/dev").read_text().splitlines()[2:]
    return sorted(line.split(":")[0].strip() for line in lines)


def run_lesson() -> dict:
    import jupytext
    from nbclient import NotebookClient

    work = Path.home() / "smoke"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    src = work / f"{LESSON}.py"
    shutil.copy(COURSE / "notebooks" / f"{LESSON}.py", src)
    nb = jupytext.read(src)
    start = time.perf_counter()
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(work)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    return {"lesson": LESSON, "cells": sum(c.cell_type == "code" for c in nb.cells),
            "seconds": round(time.perf_counter() - start, 1), "errors": len(errors)}


def kernel_check() -> dict:
    # A kernel's source must be in a file (the tracer reads it), as it is in a notebook cell.
    mod = Path.home() / "smoke" / "puzzle_09_1.py"
    mod.write_text(
        "from course_lib.kernels import cuda\n\n"
        "@cuda.jit\n"
        "def map_kernel(a, out):\n"
        "    i = cuda.grid(1)\n"
        "    if i < out.size:\n"
        "        out[i] = 10 * a[i] + 1\n\n"
        "@cuda.jit\n"
        "def map_kernel_no_guard(a, out):\n"
        "    i = cuda.grid(1)\n"
        "    out[i] = 10 * a[i] + 1\n")
    sys.path.insert(0, str(mod.parent))
    import puzzle_09_1

    from course_lib.checks import check

    start = time.perf_counter()
    check("09.1", puzzle_09_1.map_kernel)
    passed_s = round(time.perf_counter() - start, 1)
    try:
        check("09.1", puzzle_09_1.map_kernel_no_guard)
        wrong = "passed"
    except AssertionError as err:
        wrong = f"failed: {str(err).splitlines()[0][:120]}"
    return {"check": "09.1", "right_kernel": "passed", "seconds": passed_s, "kernel_without_bounds_guard": wrong}


def main() -> int:
    out = {"uid": os.getuid(), "user": os.environ.get("USER") or Path.home().name, "python": sys.version.split()[0],
           "interfaces": interfaces()}
    out["lesson"] = run_lesson()
    out["kernel_lab"] = kernel_check()
    print(json.dumps(out))
    ok = (out["uid"] == 1000 and out["interfaces"] == ["lo"] and out["lesson"]["errors"] == 0
          and out["kernel_lab"]["kernel_without_bounds_guard"].startswith("failed"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
