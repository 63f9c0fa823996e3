"""`make notebooks-ipynb`: the lessons and exercises as `.ipynb`, for Colab and for downloading.

Each notebook is the jupytext source of `notebooks/NN_*.py` or `exercises/NN_*.py`, opened by one
setup cell. The setup cell installs this course, at the version the notebook was built from, when
the notebook runs outside this repository (Colab, or a download opened in some other Jupyter): that
is when `course_lib` is missing or has another version (a fresh Colab runtime has none). Inside the
repository (`make lab`), `course_lib` is already installed at this version and the cell does nothing.

The `.ipynb` are build outputs (build/ipynb/, gitignored); they are never committed.

    python tools/build_ipynb.py [--out build/ipynb] [--spec PIP_SPEC]

PIP_SPEC is what the setup cell gives to `pip install` (default: this repository on GitHub at the
commit being built, `git+https://github.com/$REPO@<commit>`). At run time the environment variable
COURSE_LIB_SPEC overrides it (a test points it at a local clone).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("notebooks", "exercises")

SETUP = '''\
# Setup: outside the course's repository (Colab, a downloaded notebook) this installs the course
# library at the version this notebook was built from; inside the repository it does nothing.
import importlib.metadata, os, subprocess, sys
COURSE_VERSION = {version!r}
COURSE_SPEC = os.environ.get("COURSE_LIB_SPEC", {spec!r})
try:
    _installed = importlib.metadata.version("course_lib")
except importlib.metadata.PackageNotFoundError:
    _installed = None
if _installed != COURSE_VERSION:  # Colab, or a Jupyter without this course
    print(f"installing course_lib {{COURSE_VERSION}} from {{COURSE_SPEC}} ...")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", COURSE_SPEC], check=True)
    importlib.invalidate_caches()'''


def course_version() -> str:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def default_spec(repo: str) -> str:
    try:
        ref = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        ref = "main"
    return f"course_lib @ git+https://github.com/{repo}@{ref}"


def build(out: Path, spec: str) -> list[Path]:
    version = course_version()
    written = []
    for folder in SOURCES:
        for src in sorted((ROOT / folder).glob("[0-9][0-9]_*.py")):
            nb = jupytext.read(src)
            cell = nbformat.v4.new_code_cell(SETUP.format(version=version, spec=spec))
            cell.metadata["tags"] = ["course-setup", "remove-cell"]
            cell.id = "course-setup"
            nb.cells.insert(0, cell)
            nb.metadata.pop("jupytext", None)
            nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
            nb.metadata["language_info"] = {"name": "python"}
            target = out / folder / (src.stem + ".ipynb")
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.validate(nb)
            nbformat.write(nb, target)
            written.append(target)
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "ipynb")
    parser.add_argument("--repo", default=os.environ.get("REPO", "OWNER/REPO"))
    parser.add_argument("--spec", default=None, help="pip requirement the setup cell installs")
    args = parser.parse_args(argv)
    written = build(args.out, args.spec or default_spec(args.repo))
    print(f"wrote {len(written)} notebooks under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
