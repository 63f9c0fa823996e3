"""Render every static figure the lessons draw to PNG, for looking at them.

    python tools/render_figures.py                 # all lessons -> build/figures/NN_k.png
    python tools/render_figures.py 04 07 --out DIR --dpi 180 --suffix _before

Each lesson's code cells run in order in one namespace, as in the notebook, with matplotlib's
Agg backend; after each cell every open figure is saved as ``NN_k.png`` (k counts the lesson's
figures from 1) the way the notebook's inline backend saves it (``bbox_inches="tight"``) and
closed. ``--dpi`` defaults to the lessons' own figure dpi times two, as a 2x ("retina") screen
shows them. Explorer cells (``course_lib.widgets``) are skipped: their images are the widgets'.
Prints each file with the figure's size in inches, any text collision that
``course_lib.plots.text_problems`` finds (two texts overlapping, a text under the legend or outside
the figure), and the time each lesson took.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import linecache
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _code_cells(path: Path) -> list[str]:
    import jupytext
    nb = jupytext.read(path)
    return [c.source for c in nb.cells if c.cell_type == "code"]


def render_lesson(path: Path, out: Path, dpi: float | None, suffix: str = "") -> list[Path]:
    """Run one lesson's code cells and save each figure they leave open; return the files."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from course_lib.plots import text_problems
    number = path.name[:2]
    namespace = {"__name__": "__main__", "__file__": str(path)}
    written: list[Path] = []
    show = plt.show
    plt.show = lambda *a, **k: None          # the inline backend's show only displays; we save below
    cwd = os.getcwd()
    os.chdir(path.parent)
    try:
        for i, source in enumerate(_code_cells(path)):
            if "course_lib.widgets" in source:
                continue
            code = "\n".join(line for line in source.splitlines()
                             if not line.lstrip().startswith(("%", "!")))
            name = f"<{path.stem} cell {i}>"          # so inspect finds the source, as in a kernel
            linecache.cache[name] = (len(code), None, code.splitlines(True), name)
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(code, name, "exec"), namespace)
            for num in plt.get_fignums():
                fig = plt.figure(num)
                target = out / f"{number}_{len(written) + 1}{suffix}.png"
                fig.savefig(target, dpi=dpi or 2 * fig.dpi, bbox_inches="tight", facecolor="white")
                w, h = fig.get_size_inches()
                print(f"  {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}"
                      f"  ({w:.1f} x {h:.1f} in)")
                for problem in text_problems(fig):
                    print(f"    check: {problem}")
                written.append(target)
            plt.close("all")
    finally:
        os.chdir(cwd)
        plt.show = show
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("lessons", nargs="*", help="lesson numbers (01..09); default all")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "figures")
    parser.add_argument("--dpi", type=float, default=None, help="default: twice each figure's dpi")
    parser.add_argument("--suffix", default="", help="appended to each file name, e.g. _before")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT))
    paths = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
    if args.lessons:
        wanted = {n.zfill(2) for n in args.lessons}
        paths = [p for p in paths if p.name[:2] in wanted]
    for path in paths:
        t0 = time.perf_counter()
        print(path.name)
        files = render_lesson(path, args.out, args.dpi, args.suffix)
        print(f"  {len(files)} figure(s) in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
