"""`make site`: the course website in build/site/, built offline with Sphinx + MyST-NB.

Assembles build/site-src/ from the repository (never writes into it):
  notebooks/*.ipynb, exercises/*.ipynb  the notebooks of tools/build_ipynb.py (with their setup cell,
                                        hidden on the page), each with a line of links: Colab,
                                        Binder, download
  instructors.md, index.md, conf.py     from docs/ and docs/site/
  _static/mathjax/                      MathJax from the npm package (MATHJAX_DIR, vendored at build time)
  _extra/ipynb/                         the notebooks themselves, served for download
then runs sphinx-build. Lessons are executed during the build; exercises are not (their stubs raise).

    python tools/build_site.py --mathjax build/vendor/node_modules/mathjax [--repo OWNER/REPO]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_ipynb  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

LINKS = ('<p class="course-links">'
         '<a href="https://colab.research.google.com/github/{repo}/blob/{nb_branch}/{folder}/{stem}.ipynb">Open in Colab</a> · '
         '<a href="https://mybinder.org/v2/gh/{repo}/{branch}?urlpath=lab/tree/{folder}/{stem}.py">Binder</a> · '
         '<a href="../ipynb/{folder}/{stem}.ipynb" download>Download .ipynb</a> · '
         'the explorers (widgets) are interactive there or in JupyterLab (<code>make lab</code>).</p>')


def assemble(src: Path, repo: str, branch: str, nb_branch: str, mathjax: Path) -> None:
    if src.exists():
        shutil.rmtree(src)
    (src / "_static").mkdir(parents=True)
    notebooks = build_ipynb.build(src, build_ipynb.default_spec(repo))
    shutil.copytree(src / "notebooks", src / "_extra" / "ipynb" / "notebooks")
    shutil.copytree(src / "exercises", src / "_extra" / "ipynb" / "exercises")
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        links = LINKS.format(repo=repo, branch=branch, nb_branch=nb_branch, folder=path.parent.name, stem=path.stem)
        # After the setup cell and the title cell: the title stays the page's first heading.
        nb.cells.insert(2, nbformat.v4.new_markdown_cell(links))
        nbformat.write(nb, path)
    shutil.copy(ROOT / "docs" / "instructors.md", src / "instructors.md")
    for name in ("conf.py", "index.md"):
        shutil.copy(ROOT / "docs" / "site" / name, src / name)
    if not (mathjax / "es5" / "tex-mml-chtml.js").is_file():
        raise SystemExit(f"MathJax not found under {mathjax}: run `make site` (it installs the npm package)")
    shutil.copytree(mathjax / "es5", src / "_static" / "mathjax")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=ROOT / "build" / "site-src")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "site")
    parser.add_argument("--mathjax", type=Path, default=ROOT / "build" / "vendor" / "node_modules" / "mathjax")
    parser.add_argument("--repo", default=os.environ.get("REPO", "OWNER/REPO"))
    parser.add_argument("--branch", default="main")
    parser.add_argument("--nb-branch", default="ipynb", help="branch the Pages workflow pushes the .ipynb to")
    parser.add_argument("-j", default="2")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    assemble(args.src, args.repo, args.branch, args.nb_branch, args.mathjax)
    env = dict(os.environ, COURSE_REPO=args.repo)
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-j", args.j, "-E", str(args.src), str(args.out)]
    result = subprocess.run(cmd, env=env)
    print(f"site: {args.out} in {time.perf_counter() - start:.0f} s (exit {result.returncode})")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
