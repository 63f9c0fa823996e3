"""`make bench`: the course's speed figures on this machine. Measured, printed, never asserted.

Prints: the time of the whole test suite, each lesson's execution time (target <= 5 s), the time
of `import course_lib` and of its compute modules (target <= 0.5 s), each explorer widget's update latency
(compute + redraw to PNG, median of repeats; target <= 50 ms), then whatever each
tools/bench_<topic>.py reports from its run(). With --site, also the time of tools/build_site.py (what
`make site` runs; into build/bench-site, so build/site is left alone). Results also go to
build/bench.json.

    python tools/bench.py [--no-suite] [--only NAME] [--site] [--explorer-images DIR]

``--only widgets`` times the explorers alone (about 20 s), ``--only suite`` the test suite alone.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {"lesson_s": 5.0, "import_s": 0.5, "widget_update_ms": 50.0}


def bench_suite() -> float:
    """make test's pytest, timed; a failing suite is an error, not a time."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}   # as make test runs it
    env["PYTHONPYCACHEPREFIX"] = str(ROOT / "build" / "pycache")
    pytest = [sys.executable, "-m", "pytest", "-p", "pytest_start", "-q", "--nbval-lax", "tests", "notebooks",
              "solutions"]
    # Warm: a collection first fills the bytecode cache, as any earlier make test would have.
    subprocess.run(pytest + ["--collect-only"], cwd=ROOT, env=env, check=False, capture_output=True)
    start = time.perf_counter()
    proc = subprocess.run(pytest + ["-n", "3", "--dist", "loadfile"],       # the Makefile's WORKERS
                          cwd=ROOT, env=env, check=False, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"bench: the test suite failed (exit {proc.returncode}), so its time means nothing:\n"
                         + proc.stdout[-3000:])
    return elapsed


def bench_site() -> dict:
    """Time tools/build_site.py (every lesson executed, Sphinx) as `make site` runs it, into build/bench-site."""
    out = ROOT / "build" / "bench-site"
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "build_site.py"), "--src", str(out / "src"),
                           "--out", str(out / "html")], cwd=ROOT, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode:
        return {"error": f"build_site.py exited {proc.returncode}: {proc.stderr[-500:]}", "seconds": seconds}
    return {"seconds": seconds}


def bench_lessons() -> dict:
    """Execute each lesson in a fresh kernel (nbclient) and time the execution alone."""
    import jupytext
    from nbclient import NotebookClient

    times = {}
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py")):
        nb = jupytext.read(path)
        client = NotebookClient(nb, timeout=120, kernel_name="python3",
                                resources={"metadata": {"path": str(path.parent)}})
        with client.setup_kernel():
            start = time.perf_counter()
            for index, cell in enumerate(nb.cells):
                client.execute_cell(cell, index)
            times[path.stem] = time.perf_counter() - start
    return times


def bench_import() -> dict:
    code = ("import time; t = time.perf_counter(); import {mod}; "
            "print(time.perf_counter() - t)")
    out = {}
    for mod in ("course_lib", "course_lib.hardware, course_lib.roofline"):
        samples = []
        for _ in range(5):
            res = subprocess.run([sys.executable, "-c", code.format(mod=mod)], cwd=ROOT,
                                 capture_output=True, text=True, check=True)
            samples.append(float(res.stdout.strip()))
        out[mod] = statistics.median(samples)
    return out


EXPLORERS = [("roofline", "roofline_explorer"), ("latency", "latency_hiding_explorer"),
             ("latency", "occupancy_explorer"), ("simt", "simt_explorer"), ("memory", "cache_explorer"),
             ("memory", "pipeline_explorer"), ("formats", "number_explorer"), ("tiling", "tiling_explorer"),
             ("economics", "serving_explorer"), ("parallelism", "parallelism_explorer"),
             ("kernels", "kernel_explorer")]


def _next_value(control, i):
    """A different valid value for ``control`` on step ``i``."""
    import ipywidgets as widgets
    if isinstance(control, (widgets.Dropdown, widgets.SelectionSlider, widgets.ToggleButtons)):
        options = list(control.options)
        option = options[(options.index(next(o for o in options if (o[1] if isinstance(o, tuple) else o)
                                              == control.value)) + 1) % len(options)]
        return option[1] if isinstance(option, tuple) else option
    if isinstance(control, widgets.Text):
        return ["1.5", "3.14159", "-0.001", "65504", "1e30", "0.1"][i % 6]
    if isinstance(control, widgets.Checkbox):
        return not control.value
    span = control.max - control.min
    value = control.min + span * ((i % 4) + 1) / 5
    return type(control.value)(value)


def bench_widgets(repeats: int = 9, images: Path | None = None) -> dict:
    """Median milliseconds of one update (compute + draw + PNG) of each lesson's explorers.

    Each explorer is built once; update i moves control i mod (number of controls) to another
    valid value, so every control is timed. ``images``: save each explorer's initial PNG there.
    """
    import importlib

    import matplotlib
    matplotlib.use("Agg")
    out = {}
    for module, factory in EXPLORERS:
        explorer = getattr(importlib.import_module(f"course_lib.widgets.{module}"), factory)()
        if images is not None:
            images.mkdir(parents=True, exist_ok=True)
            (images / f"{factory}.png").write_bytes(explorer.image.value)
        controls = list(explorer.controls.values())
        samples, cpu = [], []
        for i in range(repeats):
            explorer.last_update_s = None
            controls[i % len(controls)].value = _next_value(controls[i % len(controls)], i)
            if explorer.last_update_s is not None:      # None: the move was refused (shown as text)
                samples.append(explorer.last_update_s)
                cpu.append(explorer.last_update_cpu_s)
        out[factory] = 1e3 * statistics.median(samples) if samples else float("nan")
        out[f"{factory} (cpu)"] = 1e3 * statistics.median(cpu) if cpu else float("nan")
    return out


def print_widgets(times: dict) -> None:
    """Wall time is what a learner waits; CPU time (this process) is what the update costs, and
    reads the same on a machine busy with other work, where wall time does not."""
    for name, ms in times.items():
        if name.endswith(" (cpu)"):
            continue
        flag = "" if ms <= TARGETS["widget_update_ms"] else "   OVER TARGET"
        print(f"widget {name:32s} {ms:7.1f} ms  (cpu {times[name + ' (cpu)']:5.1f} ms)   (median update; "
              f"target <= {TARGETS['widget_update_ms']:.0f} ms){flag}")


def bench_topics(only: str | None) -> dict:
    figures = {}
    for path in sorted((ROOT / "tools").glob("bench_*.py")):
        name = path.stem.removeprefix("bench_")
        if only and only != name:
            continue
        spec = importlib.util.spec_from_file_location(f"bench_{name}", path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
            if not hasattr(module, "run"):      # bench_browser.py: its own target, make bench-browser
                continue
            figures[name] = module.run()
        except Exception as exc:  # one broken benchmark must not hide the others
            figures[name] = {"error": f"{type(exc).__name__}: {exc}"}
    return figures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-suite", action="store_true", help="skip timing the whole test suite")
    parser.add_argument("--only", help="run only tools/bench_<ONLY>.py, or with 'widgets' only the "
                                       "explorer updates, with 'suite' only the test suite")
    parser.add_argument("--explorer-images", type=Path, metavar="DIR",
                        help="save each explorer's initial figure as DIR/<explorer>.png")
    parser.add_argument("--site", action="store_true", help="also time tools/build_site.py (make site)")
    args = parser.parse_args(argv)
    report = {}
    if args.site:
        report["site_build"] = bench_site()
        line = f"site build (tools/build_site.py):  {report['site_build']['seconds']:.1f} s"
        print(line + (f"   FAILED: {report['site_build']['error']}" if "error" in report["site_build"] else ""))
    if args.only == "widgets":
        report["widget_update_ms"] = bench_widgets(images=args.explorer_images)
        print_widgets(report["widget_update_ms"])
    elif args.only == "suite":
        report["suite_s"] = bench_suite()
        print(f"test suite (make test's pytest):  {report['suite_s']:.1f} s")
    elif not args.only:
        if not args.no_suite:
            report["suite_s"] = bench_suite()
            print(f"test suite (make test's pytest):  {report['suite_s']:.1f} s")
        report["import_s"] = bench_import()
        for mod, t in report["import_s"].items():
            print(f"import {mod:40s} {t * 1e3:7.1f} ms   (target <= {TARGETS['import_s'] * 1e3:.0f} ms)")
        report["widget_update_ms"] = bench_widgets(images=args.explorer_images)
        print_widgets(report["widget_update_ms"])
        report["lesson_s"] = bench_lessons()
        if "09_kernel_lab" in report["lesson_s"]:        # tools/bench_kernels.py reports it, not twice
            os.environ["COURSE_BENCH_LESSON_09_S"] = str(report["lesson_s"]["09_kernel_lab"])
        for name, t in report["lesson_s"].items():
            flag = "" if t <= TARGETS["lesson_s"] else "   OVER TARGET"
            print(f"lesson {name:32s} {t:7.2f} s    (target <= {TARGETS['lesson_s']:.0f} s){flag}")
    report["topics"] = {} if args.only in ("widgets", "suite") else bench_topics(args.only)
    for name, figures in report["topics"].items():
        print(f"\n[{name}]")
        for key, value in figures.items():
            print(f"  {key:50s} {value:.4g}" if isinstance(value, float) else f"  {key:50s} {value}")
    out = ROOT / "build" / "bench.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(report, indent=2, default=str))
    print(f"\nwritten to {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
