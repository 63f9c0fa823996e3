"""Tests of course_lib.exercises: generation from solutions/, the learner's workspace, progress.

The committed exercises/ must equal a fresh generation from solutions/ (the drift test), and
every exercise notebook must fail exactly at its stub cells, with NotImplementedError, and
nowhere else. The workspace must never overwrite a file the learner changed.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from course_lib import exercises as ex
from course_lib.exercises import running
from course_lib.exercises import (BEGIN, END, SolutionFormatError, execute_notebook, find_regions,
                                  generate, main, make_exercise_text, make_workspace, progress)

REPO = Path(__file__).resolve().parent.parent
SOLUTIONS = sorted(p for p in (REPO / "solutions").glob("*.py") if ex.LESSON_PATTERN.match(p.name))
EXERCISES = sorted(p for p in (REPO / "exercises").glob("*.py") if ex.LESSON_PATTERN.match(p.name))
STUB = re.compile(r'raise NotImplementedError\("exercise (\d{2}\.\d+[a-z]?): ')

HEADER = "# ---\n# jupyter:\n#   kernelspec:\n#     name: python3\n# ---\n"

SAMPLE = HEADER + f"""
# %% [markdown]
# ### Exercise 97.1 (compute): the ridge point of a made-up chip
#
# Divide the peak by the bandwidth.

# %%
x = 3
{BEGIN}
answer = x * 7
{END}
check("97.1", answer)

# %% [markdown]
# **Exercise 97.2.** Write a function that doubles its argument. It must work on arrays.

# %%
def double(value):
    \"\"\"Twice value.\"\"\"
    if value is None:
        return None
    {BEGIN}
    return 2 * value
    {END}


check('97.2', double)
"""


def quiet(*args, **kwargs):
    pass


# --------------------------------------------------------------------------------------------
# Generation
# --------------------------------------------------------------------------------------------

def test_regions_are_found_with_their_ids_indentation_and_task():
    regions = find_regions(SAMPLE, "sample")
    assert [r.exercise_id for r in regions] == ["97.1", "97.2"]
    assert [r.indent for r in regions] == ["", "    "]
    assert regions[0].task == "the ridge point of a made-up chip"
    assert regions[1].task == "Write a function that doubles its argument"


def test_generated_text_replaces_only_the_regions():
    out = make_exercise_text(SAMPLE, "sample")
    assert BEGIN not in out and END not in out
    assert 'raise NotImplementedError("exercise 97.1: the ridge point of a made-up chip")\ncheck("97.1"' in out
    assert '    raise NotImplementedError("exercise 97.2: ' in out
    # Outside the regions, line for line the same.
    kept = [line for line in SAMPLE.split("\n")]
    for region in reversed(find_regions(SAMPLE)):
        kept[region.begin:region.end + 1] = ["<stub>"]
    assert [("<stub>" if STUB.search(line) else line) for line in out.split("\n")] == kept


def test_generated_stubs_raise_not_implemented_naming_the_exercise():
    namespace = {"check": lambda *a: None}
    code = make_exercise_text(SAMPLE).split("# %% [markdown]\n# **Exercise 97.2")[0]
    with pytest.raises(NotImplementedError, match="exercise 97.1"):
        exec(code, namespace)
    func_cell = make_exercise_text(SAMPLE).split("# %%\ndef double")[1].split("\n\n\ncheck")[0]
    exec("def double" + func_cell, namespace)
    assert namespace["double"](None) is None           # code before the region still runs
    with pytest.raises(NotImplementedError, match="exercise 97.2"):
        namespace["double"](3)


@pytest.mark.parametrize("broken, message", [
    (f"# %%\n{BEGIN}\nx = 1\ncheck('97.1', x)\n", "never closed"),
    (f"# %%\n{BEGIN}\n{BEGIN}\n{END}\ncheck('97.1', 1)\n", "inside another region"),
    (f"# %%\nx = 1\n{END}\ncheck('97.1', x)\n", "without"),
    (f"# %%\n{BEGIN}\nx = 1\n{END}\nprint(x)\n", "no check"),
    (f"# %%\n{BEGIN}\nx = 1\n{END}\ncheck('97.1', x)\ncheck('97.2', x)\n", "one exercise per cell"),
    (f"# %%\ndef f():\n    {BEGIN}\n    pass\n{END}\ncheck('97.1', f)\n", "indented differently"),
    (f"# %% [markdown]\n# {BEGIN}\n", "markdown"),
    (f"# %%\n{BEGIN}\nx = 1\n{END}\ncheck('97.1', x)\n# %%\n{BEGIN}\ny = 1\n{END}\ncheck('97.1', y)\n",
     "two cells"),
])
def test_malformed_solutions_are_refused_with_the_line(broken, message):
    with pytest.raises(SolutionFormatError, match=message) as info:
        find_regions(HEADER + broken, "solutions/97_x.py")
    assert "solutions/97_x.py:" in str(info.value)


def test_committed_exercises_match_a_fresh_generation():
    """The drift test: exercises/ is generated from solutions/ and never edited by hand."""
    assert SOLUTIONS, "no solution files found"
    drifted = generate(REPO, check=True, out=quiet)
    assert drifted == [], (f"exercises/ has drifted from solutions/ in {drifted}: "
                           f"run `make exercises` and commit the result")


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.name)
def test_each_solution_region_becomes_one_stub_naming_its_exercise(solution):
    text = solution.read_text(encoding="utf-8")
    regions = find_regions(text, solution.name)
    assert len({r.exercise_id for r in regions}) >= 3, f"{solution.name}: write at least three exercises"
    generated = (REPO / "exercises" / solution.name).read_text(encoding="utf-8")
    stub_ids = STUB.findall(generated)
    assert stub_ids == [r.exercise_id for r in regions]
    assert BEGIN not in generated and END not in generated


def _root_with(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "repo"
    (root / "solutions").mkdir(parents=True)
    for name, text in files.items():
        (root / "solutions" / name).write_text(text, encoding="utf-8")
    return root


def test_generate_check_names_drifted_stale_and_missing_files(tmp_path, capsys):
    root = _root_with(tmp_path, {"97_sample.py": SAMPLE, "96_other.py": SAMPLE.replace("97.", "96.")})
    assert main(["--root", str(root), "generate"]) == 0
    assert main(["--root", str(root), "generate", "--check"]) == 0
    (root / "exercises" / "97_sample.py").write_text("edited by hand\n")
    (root / "exercises" / "95_gone.py").write_text("no solution\n")
    (root / "exercises" / "96_other.py").unlink()
    capsys.readouterr()
    assert main(["--root", str(root), "generate", "--check"]) == 1
    err = capsys.readouterr().err
    for name in ("97_sample.py", "95_gone.py", "96_other.py"):
        assert f"exercises/{name}" in err
    assert main(["--root", str(root), "generate"]) == 0
    assert not (root / "exercises" / "95_gone.py").exists()
    assert generate(root, check=True, out=quiet) == []


def test_generate_reports_a_malformed_solution(tmp_path, capsys):
    root = _root_with(tmp_path, {"97_bad.py": HEADER + f"# %%\n{BEGIN}\nx = 1\n"})
    assert main(["--root", str(root), "generate"]) == 2
    assert "97_bad.py" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# Exercise notebooks fail exactly at their stubs
# --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def kernel():
    """One kernel for all the exercise notebooks: each starts with ``%reset -f`` (an empty namespace,
    as in a fresh kernel; the course's modules stay imported), which saves a kernel start and the
    course's imports per notebook. ``execute_notebook`` (a fresh kernel each) is what progress uses,
    and its own tests cover it."""
    from jupyter_client import KernelManager

    km = KernelManager(kernel_name="python3")
    km.start_kernel(cwd=str(REPO / "exercises"), stderr=subprocess.DEVNULL)
    yield km
    km.shutdown_kernel(now=True)


def _run_in(km, notebook: Path) -> list:
    import jupytext
    import nbformat
    from nbclient import NotebookClient

    nb = jupytext.read(notebook)
    nb.cells.insert(0, nbformat.v4.new_code_cell("%reset -f"))
    NotebookClient(nb, km=km, timeout=300, allow_errors=True).execute()
    return [running._outcome(i, cell) for i, cell in enumerate(nb.cells[1:]) if cell.cell_type == "code"]


@pytest.mark.parametrize("notebook", EXERCISES, ids=lambda p: p.name)
def test_exercise_notebook_fails_only_at_its_stub_cells(notebook, kernel):
    outcomes = _run_in(kernel, notebook)
    stub_cells = {o.index for o in outcomes if STUB.search(o.source)}
    failed = {o.index: (o.error_name, o.error_value) for o in outcomes if o.error_name}
    assert stub_cells, f"{notebook.name} has no stubs"
    unexpected = {i: err for i, err in failed.items() if i not in stub_cells}
    assert not unexpected, f"{notebook.name}: cells that are not exercises failed: {unexpected}"
    assert set(failed) == stub_cells, f"{notebook.name}: stub cells that did not fail: {stub_cells - set(failed)}"
    for index, (name, value) in failed.items():
        assert name == "NotImplementedError", f"{notebook.name} cell {index}: {name}: {value}"
        assert value.startswith("exercise "), value


def test_execute_notebook_runs_every_cell_in_a_fresh_kernel_errors_allowed(tmp_path):
    root = _root_with(tmp_path, {"97_sample.py": SAMPLE})
    generate(root, out=quiet)
    outcomes = execute_notebook(root / "exercises" / "97_sample.py", timeout=120)
    assert [o.exercise_ids for o in outcomes if o.exercise_ids] == [("97.1",), ("97.2",)]
    # 97.1's stub raises; the run goes on to 97.2's cell, which fails too (the sample imports no check)
    assert [o.error_name for o in outcomes if o.exercise_ids] == ["NotImplementedError", "NameError"]


# Re-running solution cells out of order (last to first) is checked in the same kernel as nbval's run
# of solutions/ (conftest.py, SolutionNbFile).


# --------------------------------------------------------------------------------------------
# The learner's workspace
# --------------------------------------------------------------------------------------------

@pytest.fixture
def course(tmp_path):
    """A small course: two generated exercise files."""
    root = _root_with(tmp_path, {"97_sample.py": SAMPLE, "96_other.py": SAMPLE.replace("97.", "96.")})
    generate(root, out=quiet)
    return root


def test_workspace_copies_then_leaves_unchanged_files_alone(course, tmp_path):
    dest = tmp_path / "my_work" / "nested"
    entries = make_workspace(dest, course, out=quiet)
    assert {e.action for e in entries} == {"new"}
    for name in ("96_other.py", "97_sample.py"):
        assert (dest / name).read_bytes() == (course / "exercises" / name).read_bytes()
    manifest = json.loads((dest / ex.MANIFEST_NAME).read_text())
    assert set(manifest["files"]) == {"96_other.py", "97_sample.py"}
    assert {e.action for e in make_workspace(dest, course, out=quiet)} == {"unchanged"}


def test_workspace_never_overwrites_a_file_the_learner_changed(course, tmp_path):
    dest = tmp_path / "my_work"
    make_workspace(dest, course, out=quiet)
    mine = (dest / "97_sample.py").read_text().replace('raise NotImplementedError("exercise 97.1',
                                                       'answer = 21  # raise NotImplementedError("')
    (dest / "97_sample.py").write_text(mine)
    # The course moves on: both exercise files change.
    for name in ("96_other.py", "97_sample.py"):
        path = course / "solutions" / name
        path.write_text(path.read_text() + "\n# %% [markdown]\n# A new closing note.\n")
    generate(course, out=quiet)
    messages = []
    entries = {e.name: e for e in make_workspace(dest, course, out=messages.append)}
    assert entries["97_sample.py"].action == "skipped"
    assert "you changed it" in entries["97_sample.py"].reason
    assert (dest / "97_sample.py").read_text() == mine
    assert entries["96_other.py"].action == "updated"            # untouched: safe to refresh
    assert (dest / "96_other.py").read_bytes() == (course / "exercises" / "96_other.py").read_bytes()
    assert any("97_sample.py" in m and "skipped" in m for m in messages)
    # Still kept on a third run.
    assert {e.name: e.action for e in make_workspace(dest, course, out=quiet)}["97_sample.py"] == "skipped"
    assert (dest / "97_sample.py").read_text() == mine


def test_workspace_keeps_a_file_it_did_not_write(course, tmp_path):
    dest = tmp_path / "my_work"
    dest.mkdir()
    (dest / "97_sample.py").write_text("my own notes\n")
    entries = {e.name: e for e in make_workspace(dest, course, out=quiet)}
    assert entries["97_sample.py"].action == "skipped" and "did not write" in entries["97_sample.py"].reason
    assert (dest / "97_sample.py").read_text() == "my own notes\n"
    # A corrupt manifest makes every differing file count as the learner's.
    (dest / ex.MANIFEST_NAME).write_text("{not json")
    entries = {e.name: e for e in make_workspace(dest, course, out=quiet)}
    assert entries["97_sample.py"].action == "skipped"
    assert (dest / "97_sample.py").read_text() == "my own notes\n"


def test_workspace_path_that_is_a_file_is_refused_and_kept(course, tmp_path, capsys):
    path = tmp_path / "my_work"
    path.write_text("an important file\n")
    with pytest.raises(NotADirectoryError, match="is a file"):
        make_workspace(path, course, out=quiet)
    assert main(["--root", str(course), "workspace", str(path)]) == 2
    assert "is a file" in capsys.readouterr().err
    assert path.read_text() == "an important file\n"


def test_workspace_without_exercises_says_how_to_make_them(tmp_path):
    root = _root_with(tmp_path, {})
    with pytest.raises(FileNotFoundError, match="generate"):
        make_workspace(tmp_path / "w", root, out=quiet)


# --------------------------------------------------------------------------------------------
# progress
# --------------------------------------------------------------------------------------------

def test_progress_reports_pass_fail_and_not_attempted(tmp_path):
    dest = tmp_path / "my_work"
    make_workspace(dest, REPO, out=quiet)
    for other in dest.glob("*.py"):
        if other.name != "04_roofline.py":
            other.unlink()                                    # keep the test to one lesson
    path = dest / "04_roofline.py"
    text = path.read_text()
    text = re.sub(r'raise NotImplementedError\("exercise 04\.1: [^\n]*', 'prediction = "memory"', text)
    text = re.sub(r'raise NotImplementedError\("exercise 04\.2: [^\n]*', "t_gemv_us = 1.0", text)
    path.write_text(text)
    messages = []
    statuses = {s.exercise_id: s for s in progress(dest, out=messages.append)}
    assert statuses["04.1"].status == "pass"
    assert statuses["04.2"].status == "fail" and "ExerciseError" in statuses["04.2"].detail
    rest = sorted(set(statuses) - {"04.1", "04.2"})
    assert {"04.3", "04.4", "04.5"} <= set(rest)
    assert {statuses[i].status for i in rest} == {"not attempted"}
    assert f"1 pass, 1 fail, {len(rest)} not attempted" in messages[-1]


def test_progress_on_a_missing_or_empty_folder(tmp_path):
    with pytest.raises(NotADirectoryError, match="workspace"):
        progress(tmp_path / "nowhere", out=quiet)
    with pytest.raises(FileNotFoundError, match="workspace"):
        progress(tmp_path, out=quiet)
