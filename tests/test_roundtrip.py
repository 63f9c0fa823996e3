"""Lessons, exercises and solutions are committed exactly as JupyterLab saves them.

JupyterLab saves a ``.py`` notebook through jupytext's contents manager: autosave of a lesson a
learner only ran must leave every byte as committed (``git status`` clean, no conflict on the
next ``git pull``). Each file is loaded and saved back by the real contents manager, with the
kernelspec JupyterLab writes (the environment's ``python3`` kernel), and must come back the same.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from course_lib import exercises as ex

REPO = Path(__file__).resolve().parents[1]
FILES = [p for folder in ex.COURSE_FOLDERS for p in sorted((REPO / folder).glob("[0-9][0-9]_*.py"))]


def _lab_kernelspec() -> dict:
    """The spec JupyterLab writes into a notebook it saves: the running kernel's."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    return {"display_name": spec.display_name, "language": spec.language, "name": "python3"}


def _save_through_contents_manager(folder: Path, names: list[str], kernelspec: dict) -> None:
    """Load each file as a notebook and save it back, as JupyterLab's autosave does."""
    from jupytext.async_contentsmanager import AsyncTextFileContentsManager

    async def run():
        cm = AsyncTextFileContentsManager(root_dir=str(folder))
        for name in names:
            model = await cm.get(name)
            nb = model["content"]
            nb.metadata["kernelspec"] = dict(kernelspec)
            nb.metadata["language_info"] = {"name": "python", "file_extension": ".py",
                                            "mimetype": "text/x-python", "version": "3"}
            await cm.save({"type": "notebook", "format": "json", "content": nb}, name)

    asyncio.run(run())


def test_the_lab_kernel_is_the_one_the_headers_name():
    assert _lab_kernelspec() == ex.LAB_KERNELSPEC


def test_every_course_file_is_saved_back_unchanged(tmp_path):
    assert len(FILES) >= 3 * 9
    names = []
    for path in FILES:
        name = f"{path.parent.name}__{path.name}"
        shutil.copyfile(path, tmp_path / name)
        names.append(name)
    _save_through_contents_manager(tmp_path, names, _lab_kernelspec())
    changed = [name.replace("__", "/") for name in names
               if (tmp_path / name).read_bytes() != (REPO / name.replace("__", "/")).read_bytes()]
    assert not changed, (f"JupyterLab would rewrite {changed} on save: run "
                         f"`python -m course_lib.exercises normalize`")


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_lab_saved_text_agrees_and_the_header_is_the_course_header(path):
    text = path.read_text(encoding="utf-8")
    assert text.startswith(ex.LAB_HEADER + "\n")
    assert ex.lab_saved_text(text) == text


def test_normalize_changes_only_the_header(tmp_path, capsys):
    body = "# %% [markdown]\n# A lesson.\n\n# %%\nx = 3  # kept as is\n"
    (tmp_path / "notebooks").mkdir()
    old = "# ---\n# jupyter:\n#   kernelspec:\n#     display_name: Python 3\n#     language: python\n" \
          "#     name: python3\n# ---\n\n"
    (tmp_path / "notebooks" / "01_a.py").write_text(old + body)
    (tmp_path / "notebooks" / "02_b.py").write_text(body)                # no header at all
    assert ex.normalize(tmp_path, check=True, out=print) == ["notebooks/01_a.py", "notebooks/02_b.py"]
    assert (tmp_path / "notebooks" / "01_a.py").read_text() == old + body  # --check writes nothing
    ex.normalize(tmp_path, out=print)
    for name in ("01_a.py", "02_b.py"):
        assert (tmp_path / "notebooks" / name).read_text() == ex.LAB_HEADER + "\n" + body
    assert ex.normalize(tmp_path, check=True, out=print) == []
    assert ex.main(["--root", str(tmp_path), "normalize", "--check"]) == 0
    capsys.readouterr()
