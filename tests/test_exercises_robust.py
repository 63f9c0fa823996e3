"""progress and workspace when things go wrong: endless loops, dead kernels, bad bytes, saves.

``progress`` must check every notebook of a folder, name each one it could not finish, print the
summary, and stop a runaway notebook after ``timeout`` seconds. ``workspace`` writes files as a
plain write would (the umask respected), names the learner's file when it cannot write, and
treats a JupyterLab save without edits as "not changed".
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import tempfile
from pathlib import Path

import pytest

from course_lib import exercises as ex
from course_lib.exercises import files

CHECK = "# %%\ndef check(ex_id, value):\n    assert value == 2, f'expected 2, got {value}'\n\n"
FOLDER = {
    # Passes 01.1; 01.2 uses a name no cell defines (left over from a deleted cell).
    "01_pass.py": CHECK + "# %%\nanswer = 2\ncheck('01.1', answer)\n\n# %%\ncheck('01.2', leftover)\n",
    # A loop that never ends; it sleeps, so its seconds do not take a core from the other tests.
    "02_loop.py": CHECK + "# %%\nimport time\nwhile True:\n    time.sleep(0.01)\ncheck('02.1', 2)\n\n"
                          "# %%\ncheck('02.2', 2)\n",
    "03_crash.py": CHECK + "# %%\nimport os\nos._exit(3)\ncheck('03.1', 2)\n",
    "04_syntax.py": CHECK + "# %%\nanswer = = 2\ncheck('04.1', answer)\n",
}


def quiet(*args, **kwargs):
    pass


def test_progress_reports_every_notebook_of_a_folder_with_a_loop_a_crash_and_bad_bytes(tmp_path):
    for name, text in FOLDER.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "05_latin1.py").write_bytes(b"# %%\nx = 'caf\xe9'\n")
    messages = []
    statuses = {(s.notebook, s.exercise_id): s for s in ex.progress(tmp_path, out=messages.append, timeout=2)}
    text = "\n".join(messages)
    assert statuses["01_pass.py", "01.1"].status == "pass"
    assert statuses["01_pass.py", "01.2"].status == "fail"
    assert "fresh kernel" in statuses["01_pass.py", "01.2"].detail      # why it passed in the notebook
    assert statuses["02_loop.py", "02.1"].status == "timed out"
    assert statuses["02_loop.py", "02.2"].status == "not run"
    assert "timed out: 02_loop.py, cell 2" in text and "2 s" in text
    assert statuses["03_crash.py", "03.1"].status == "crashed"
    assert "crashed: 03_crash.py" in text
    assert statuses["04_syntax.py", "04.1"].status == "fail"
    assert statuses["04_syntax.py", "04.1"].detail.startswith("SyntaxError")
    assert statuses["05_latin1.py", ""].status == "unreadable"
    assert "unreadable: 05_latin1.py" in text and "UTF-8" in text and "line 2" in text
    assert "5 notebooks: 2 ran to the end, 1 timed out, 1 crashed, 1 unreadable" in text
    assert messages[-1] == "6 exercises: 1 pass, 2 fail, 0 not attempted, 1 not run, 1 timed out, 1 crashed"


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf"), "10", True])
def test_progress_refuses_a_timeout_that_is_not_a_positive_number(tmp_path, timeout, capsys):
    (tmp_path / "01_a.py").write_text("# %%\nx = 1\n")
    with pytest.raises((ValueError, TypeError), match="timeout"):
        ex.progress(tmp_path, out=quiet, timeout=timeout)
    if timeout == 0:
        assert ex.main(["progress", str(tmp_path), "--timeout", "0"]) == 2
        assert "timeout" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# workspace
# --------------------------------------------------------------------------------------------

SOLUTION = ex.LAB_HEADER + """
# %% [markdown]
# **Exercise 98.1.** Two.

# %%
### BEGIN SOLUTION
answer = 2
### END SOLUTION
check("98.1", answer)
"""


@pytest.fixture
def course(tmp_path):
    root = tmp_path / "repo"
    (root / "solutions").mkdir(parents=True)
    (root / "solutions" / "98_two.py").write_text(SOLUTION, encoding="utf-8")
    ex.generate(root, out=quiet)
    return root


def _lab_save(folder: Path, name: str, kernelspec: dict) -> None:
    """Open and save ``name`` unedited through jupytext's contents manager, as JupyterLab does."""
    from jupytext.async_contentsmanager import AsyncTextFileContentsManager

    async def run():
        cm = AsyncTextFileContentsManager(root_dir=str(folder))
        nb = (await cm.get(name))["content"]
        nb.metadata["kernelspec"] = kernelspec
        await cm.save({"type": "notebook", "format": "json", "content": nb}, name)

    asyncio.run(run())


def test_a_save_without_edits_leaves_the_file_refreshable(course, tmp_path):
    dest = tmp_path / "my_work"
    ex.make_workspace(dest, course, out=quiet)
    before = (dest / "98_two.py").read_bytes()
    # Another kernel's name in the header: the bytes change, the cells do not.
    _lab_save(dest, "98_two.py", {"display_name": "Python 3.11 (course)", "language": "python", "name": "course"})
    assert (dest / "98_two.py").read_bytes() != before
    assert ex.content_hash((dest / "98_two.py").read_bytes()) == ex.content_hash(before)
    path = course / "solutions" / "98_two.py"
    path.write_text(path.read_text() + "\n# %% [markdown]\n# A new closing note.\n")
    ex.generate(course, out=quiet)
    entries = {e.name: e for e in ex.make_workspace(dest, course, out=quiet)}
    assert entries["98_two.py"].action == "updated"
    assert (dest / "98_two.py").read_bytes() == (course / "exercises" / "98_two.py").read_bytes()
    # An edit to a cell still counts as the learner's.
    text = (dest / "98_two.py").read_text().replace("raise NotImplementedError(", "answer = 2  # (")
    (dest / "98_two.py").write_text(text)
    path.write_text(path.read_text() + "\n# %%\nprint('more')\n")
    ex.generate(course, out=quiet)
    assert ex.make_workspace(dest, course, out=quiet)[0].action == "skipped"
    assert (dest / "98_two.py").read_text() == text


def test_a_manifest_of_raw_byte_hashes_still_lets_untouched_files_refresh(course, tmp_path):
    dest = tmp_path / "my_work"
    ex.make_workspace(dest, course, out=quiet)
    raw = files._sha256((dest / "98_two.py").read_bytes())
    (dest / ex.MANIFEST_NAME).write_text(json.dumps({"files": {"98_two.py": raw}}))
    path = course / "solutions" / "98_two.py"
    path.write_text(path.read_text() + "\n# %% [markdown]\n# Later.\n")
    ex.generate(course, out=quiet)
    assert ex.make_workspace(dest, course, out=quiet)[0].action == "updated"


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_workspace_files_respect_the_umask(course, tmp_path, umask):
    old = os.umask(umask)
    try:
        ex.make_workspace(tmp_path / "w", course, out=quiet)
    finally:
        os.umask(old)
    for path in (tmp_path / "w" / "98_two.py", tmp_path / "w" / ex.MANIFEST_NAME):
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask


def test_an_unwritable_folder_names_the_learners_file(course, tmp_path, monkeypatch, capsys):
    dest = tmp_path / "w"
    dest.mkdir()

    def refuse(*args, dir=None, prefix="", suffix="", **kwargs):
        raise PermissionError(13, "Permission denied", os.path.join(dir, prefix + "x1y2z3" + suffix))

    monkeypatch.setattr(tempfile, "mkstemp", refuse)  # works as root too, where chmod does not
    with pytest.raises(PermissionError) as info:
        ex.make_workspace(dest, course, out=quiet)
    assert str(dest / "98_two.py") in str(info.value) and "x1y2z3" not in str(info.value)
    assert ex.main(["--root", str(course), "workspace", str(dest)]) == 2
    err = capsys.readouterr().err
    assert "98_two.py" in err and ".tmp" not in err


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes to read-only folders")
def test_a_read_only_folder_names_the_learners_file(course, tmp_path):
    dest = tmp_path / "w"
    dest.mkdir()
    dest.chmod(0o555)
    try:
        with pytest.raises(PermissionError, match="98_two.py"):
            ex.make_workspace(dest, course, out=quiet)
    finally:
        dest.chmod(0o755)
