"""`make test-ipynb`: the downloadable .ipynb install the course by themselves, in a bare Jupyter.

Builds build/ipynb (tools/build_ipynb.py) when it is missing, creates a fresh plain venv
(build/ipynb-venv, no system site-packages) holding only nbclient and ipykernel
(``pip install -c requirements/lock.txt nbclient ipykernel``), and executes lesson 04's and lesson
09's .ipynb there, in a scratch folder outside the repository tree's packages, with
``COURSE_LIB_SPEC`` pointing at this clone. So the course gets installed only by each notebook's
own setup cell (``PIP_CONSTRAINT`` holds it to the lock's versions). After the notebook, one more
cell checks that the kernel ran in that venv and imported course_lib from the venv's
site-packages, not from the clone. course_lib is uninstalled before each notebook, so every
notebook's setup cell must install it (its dependencies stay from the first notebook).

    python tools/check_ipynb_setup.py [--lessons 04 09] [--keep-venv]

Exits 1 if a notebook raised or the checks fail. Slow: the first notebook installs the course's
dependencies (JupyterLab, NumPy, Matplotlib, numba-cuda...) from the pip cache.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
LOCK = ROOT / "requirements" / "lock.txt"

# Runs inside the fresh venv: execute one notebook with nbclient, then check where course_lib came from.
DRIVER = r'''
import sys, nbformat
from nbclient import NotebookClient
path, out, timeout = sys.argv[1], sys.argv[2], int(sys.argv[3])
nb = nbformat.read(path, as_version=4)
nb.cells.append(nbformat.v4.new_code_cell(
    "import json, sys, course_lib\n"
    "print('CHECK ' + json.dumps({'prefix': sys.prefix, 'course_lib': course_lib.__file__}))"))
client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=False)
try:
    client.execute()
finally:
    nbformat.write(nb, out)
def stream(cell):
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")
assert "installing course_lib" in stream(nb.cells[0]), "the setup cell did not install the course"
print(next(l for l in stream(nb.cells[-1]).splitlines() if l.startswith("CHECK ")))
'''


def run(cmd, **kw):
    print("+", " ".join("<driver>" if arg == DRIVER else str(arg) for arg in cmd), flush=True)
    return subprocess.run(cmd, **kw)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lessons", nargs="+", default=["04", "09"])
    parser.add_argument("--ipynb", type=Path, default=BUILD / "ipynb")
    parser.add_argument("--venv", type=Path, default=BUILD / "ipynb-venv")
    parser.add_argument("--keep-venv", action="store_true", help="reuse the venv of an earlier run")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per cell")
    args = parser.parse_args(argv)
    t0 = time.monotonic()

    if not any((args.ipynb / "notebooks").glob("*.ipynb")):
        run([sys.executable, str(ROOT / "tools" / "build_ipynb.py"), "--out", str(args.ipynb)], check=True)

    venv = args.venv.resolve()
    py = venv / "bin" / "python"
    if not (args.keep_venv and py.exists()):
        shutil.rmtree(venv, ignore_errors=True)
        base = getattr(sys, "_base_executable", sys.executable)
        run([base, "-m", "venv", str(venv)], check=True)  # plain: no --system-site-packages
        run([str(py), "-m", "pip", "install", "--quiet", "-c", str(LOCK), "nbclient", "ipykernel"], check=True)
    t_venv = time.monotonic() - t0

    scratch = BUILD / "ipynb-run"
    shutil.rmtree(scratch, ignore_errors=True)
    (scratch / "jupyter").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PIP_REQUIRE_VIRTUALENV")
           and not k.startswith("JUPYTER")}
    env.update(COURSE_LIB_SPEC=str(ROOT), PIP_CONSTRAINT=str(LOCK), MPLBACKEND="Agg",
               PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
               # Only the venv's own python3 kernel (ipykernel's native spec), no user kernelspecs.
               JUPYTER_PATH=str(scratch / "jupyter"), JUPYTER_DATA_DIR=str(scratch / "jupyter"),
               JUPYTER_CONFIG_DIR=str(scratch / "jupyter"), JUPYTER_RUNTIME_DIR=str(scratch / "jupyter"))
    failures, timings = [], {}
    for lesson in args.lessons:
        matches = sorted((args.ipynb / "notebooks").glob(f"{lesson}_*.ipynb"))
        if not matches:
            failures.append(f"lesson {lesson}: no .ipynb in {args.ipynb / 'notebooks'}")
            continue
        nb = matches[0]
        # Each notebook's own setup cell installs the course (the dependencies stay from the first).
        run([str(py), "-m", "pip", "uninstall", "--quiet", "--yes", "course_lib"], env=env,
            capture_output=True)
        t = time.monotonic()
        proc = run([str(py), "-c", DRIVER, str(nb.resolve()), str(scratch / nb.name), str(args.timeout)],
                   cwd=scratch, env=env, capture_output=True, text=True)
        timings[nb.stem] = time.monotonic() - t
        check = next((l[6:] for l in proc.stdout.splitlines() if l.startswith("CHECK ")), None)
        if proc.returncode != 0 or check is None:
            failures.append(f"{nb.name}: failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-6000:]}")
            continue
        info = json.loads(check)
        if Path(info["prefix"]).resolve() != venv:
            failures.append(f"{nb.name}: kernel ran in {info['prefix']}, not {venv}")
        if not Path(info["course_lib"]).resolve().is_relative_to(venv):
            failures.append(f"{nb.name}: course_lib imported from {info['course_lib']}, not from the venv")
        print(f"{nb.name}: ok in {timings[nb.stem]:.0f} s (kernel {info['prefix']}, course_lib {info['course_lib']})")

    print(f"venv {t_venv:.0f} s; " + "; ".join(f"{k} {v:.0f} s" for k, v in timings.items())
          + f"; total {time.monotonic() - t0:.0f} s")
    for f in failures:
        print("FAIL", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
