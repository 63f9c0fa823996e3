"""Tests of the mastery map: concept tags, per-concept counts for a learner and for a class
(from an nbgrader gradebook built with nbgrader's own API), the table, the figure and the CLI."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from course_lib.exercises import cli, mastery
from course_lib.exercises.registry import get_exercise, list_exercises
from course_lib.exercises.lessons import CONCEPTS
from course_lib.exercises.mastery import concept_mastery, concept_table

REPO = Path(__file__).resolve().parent.parent
RNG = np.random.default_rng(1307)


def test_every_exercise_is_tagged_and_every_concept_is_exercised():
    tags = mastery.exercise_concepts()
    assert set(tags) == set(list_exercises())
    for ex_id, concepts in tags.items():
        assert concepts and set(concepts) <= set(CONCEPTS[ex_id[:2]]), ex_id
    for lesson, concepts in CONCEPTS.items():
        for concept in concepts:
            assert any(ex_id.startswith(lesson + ".") and concept in c for ex_id, c in tags.items()), \
                f"lesson {lesson}'s concept {concept} has no exercise"
        assert 2 <= len(concepts) <= 6, f"lesson {lesson}: keep the list short"


def test_counts_per_concept_follow_the_statuses():
    ids = [i for i in list_exercises() if i[:2] in ("04", "07")]
    choices = np.array(["pass", "fail", "not attempted"])
    statuses = {i: str(choices[RNG.integers(3)]) for i in ids}
    rows = concept_mastery(statuses)
    assert {r.lesson for r in rows} == {"04", "07"}
    for row in rows:
        tagged = [i for i in ids if i.startswith(row.lesson) and row.concept in get_exercise(i).concepts]
        assert set(row.exercises) == set(tagged)
        want = Counter(statuses[i] for i in tagged)
        assert (row.passed, row.attempted, row.not_attempted) == (want["pass"], want["fail"],
                                                                  want["not attempted"])
        assert row.state == ("mastered" if want["pass"] == len(tagged) else
                             "not started" if want["not attempted"] == len(tagged) else "in progress")


def test_missing_exercises_count_as_not_attempted_and_bad_input_is_refused():
    rows = concept_mastery({"04.1": "pass"})
    intensity = next(r for r in rows if r.concept == "intensity")
    assert intensity.passed == 1 and intensity.not_attempted == intensity.total - 1
    assert concept_mastery({}, lessons=["4"])[0].lesson == "04"
    with pytest.raises(ValueError, match="statuses"):
        concept_mastery({"04.1": "great"})
    with pytest.raises(ValueError, match="lessons"):
        concept_mastery({}, lessons=["42"])


def test_the_table_has_one_line_per_concept_and_reads_progress_results():
    from course_lib.exercises import ExerciseStatus
    statuses = [ExerciseStatus("04_roofline.py", "04.1", "pass"),
                ExerciseStatus("04_roofline.py", "04.2", "fail")]
    text = concept_table(statuses)
    lines = text.splitlines()
    assert len(lines) == 1 + len(CONCEPTS["04"])
    assert "passed" in lines[0] and "not attempted" in lines[0]
    ridge = [i for i in list_exercises() if i[:2] == "04" and "ridge-point" in get_exercise(i).concepts]
    assert "04.1" in ridge and "04.2" not in ridge                  # 04.1 passed; the rest untouched
    assert re.search(rf"04 ridge-point\s+1\s+0\s+{len(ridge) - 1}", text)
    assert concept_table([]) == "no concepts to show"


def test_the_figure_draws_one_bar_per_concept_and_state():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from course_lib.exercises.mastery_plot import plot_mastery
    rows = concept_mastery({"04.1": "pass", "04.2": "fail", "05.1": "pass"})
    fig = plot_mastery(rows, title="map")
    ax = fig.axes[0]
    assert len(ax.get_yticklabels()) == len(rows)
    assert len(ax.patches) == 3 * len(rows)
    widths = np.array([p.get_width() for p in ax.patches]).reshape(3, len(rows))
    assert np.allclose(widths.sum(axis=0), 1.0)
    with pytest.raises(ValueError, match="rows"):
        plot_mastery([])
    plt.close(fig)


def test_the_learner_log_is_read_and_bad_lines_are_skipped(tmp_path):
    log = tmp_path / "misconceptions.jsonl"
    log.write_text(json.dumps({"exercise": "04.3", "misconception": "sparse-peak"}) + "\n{broken\n"
                   + json.dumps({"exercise": "04.3", "misconception": "sparse-peak"}) + "\n")
    assert mastery.logged_misconceptions(log) == Counter({("04.3", "sparse-peak"): 2})
    assert mastery.logged_misconceptions(tmp_path / "none.jsonl") == Counter()


# --------------------------------------------------------------------------------------------
# A class, from nbgrader's gradebook
# --------------------------------------------------------------------------------------------

STUDENTS = {   # student: {exercise: (score, error name in the autograded notebook or None)}
    "ada": {"04.1": (1, None), "04.3": (1, None), "04.4": (1, None)},
    "grace": {"04.1": (0, "ExerciseError"), "04.3": (0, "ExerciseError"), "04.4": (0, "NotImplementedError")},
    "linus": {"04.1": (1, None), "04.3": (0, "ExerciseError"), "04.4": (0, "ExerciseError")},
}
MISCONCEPTION_OF = {"04.1": "c-write-forgotten", "04.3": "sparse-peak", "04.4": "c-write-forgotten"}


@pytest.fixture(scope="module")
def gradebook(tmp_path_factory):
    """A class of three built once per module (nbgrader's database set-up takes seconds); the tests
    only read it."""
    api = pytest.importorskip("nbgrader.api")
    import warnings
    from nbgrader_inprocess import in_process_alembic

    with in_process_alembic():
        return _build_gradebook(api, warnings, tmp_path_factory.mktemp("class"))


def _build_gradebook(api, warnings, tmp_path):
    path = tmp_path / "gradebook.db"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with api.Gradebook(f"sqlite:///{path}") as gb:
            gb.add_assignment("04_roofline")
            gb.add_notebook("04_roofline", "04_roofline")
            for ex_id in STUDENTS["ada"]:
                gb.add_grade_cell(f"ex-{ex_id.replace('.', '-')}-check", "04_roofline", "04_roofline",
                                  max_score=1, cell_type="code")
            gb.add_grade_cell("something-else", "04_roofline", "04_roofline", max_score=1, cell_type="code")
            for student, grades in STUDENTS.items():
                gb.add_student(student)
                gb.add_submission("04_roofline", student)
                for ex_id, (score, _) in grades.items():
                    grade = gb.find_grade(f"ex-{ex_id.replace('.', '-')}-check", "04_roofline",
                                          "04_roofline", student)
                    grade.auto_score = score
                gb.db.commit()
    for student, grades in STUDENTS.items():            # the autograded notebooks, as nbgrader writes them
        cells = []
        for ex_id, (_, error) in grades.items():
            slug = f"ex-{ex_id.replace('.', '-')}"
            outputs = []
            if error == "ExerciseError":
                outputs = [{"output_type": "error", "ename": error, "evalue": "exercise: wrong",
                            "traceback": [f"\u2717 exercise {ex_id}: wrong",
                                          f"  misconception: ... [misconception: {MISCONCEPTION_OF[ex_id]}]"]}]
            elif error:
                outputs = [{"output_type": "error", "ename": error, "evalue": "", "traceback": []}]
            cells.append({"cell_type": "code", "metadata": {"nbgrader": {"grade_id": f"{slug}-check"}},
                          "outputs": outputs, "source": "", "execution_count": 1})
        folder = tmp_path / "autograded" / student / "04_roofline"
        folder.mkdir(parents=True)
        (folder / "04_roofline.ipynb").write_text(json.dumps({"cells": cells}))
    return path


def test_the_class_view_counts_students_per_concept(gradebook):
    students, hits = mastery.gradebook_statuses(gradebook)
    assert students["ada"] == {"04.1": "pass", "04.3": "pass", "04.4": "pass"}
    assert students["grace"]["04.4"] == "not attempted" and students["grace"]["04.1"] == "fail"
    result = mastery.class_mastery(gradebook)
    rows = {r.concept: r for r in result.concepts}
    assert all(r.unit == "students" and r.total == 3 for r in rows.values())
    # intensity: 04.1, 04.3, 04.4 (04.2 was not given: not attempted for everyone).
    want = Counter()
    for student, grades in STUDENTS.items():
        statuses = {i: ("pass" if s else "fail") for i, (s, _) in grades.items()}
        want[[r for r in concept_mastery(statuses, ["04"]) if r.concept == "intensity"][0].state] += 1
    intensity = rows["intensity"]
    assert (intensity.passed, intensity.attempted, intensity.not_attempted) == (
        want["mastered"], want["in progress"], want["not started"])
    top = {key: (times, n) for key, times, n, _ in result.misconceptions}
    assert result.misconceptions[0][0] == "c-write-forgotten"
    assert top == {"c-write-forgotten": (2, 2), "sparse-peak": (2, 2)}
    text = mastery.class_table(result)
    assert "3 students" in text and "c-write-forgotten: 2 times, 2 students" in text


def test_the_cli_prints_the_class_view_and_saves_the_figure(gradebook, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    figure = tmp_path / "class.png"
    assert cli.main(["mastery", "--gradebook", str(gradebook), "--plot", str(figure)]) == 0
    out = capsys.readouterr().out
    assert "04 intensity" in out and "sparse-peak" in out and figure.stat().st_size > 1000


def test_the_cli_refuses_bad_input(tmp_path, capsys):
    assert cli.main(["mastery"]) == 2
    assert cli.main(["mastery", "--gradebook", str(tmp_path / "nope.db")]) == 2
    junk = tmp_path / "junk.db"
    junk.write_text("not a database")
    assert cli.main(["mastery", "--gradebook", str(junk)]) == 2
    assert "gradebook" in capsys.readouterr().err


def test_the_learner_cli_runs_progress_and_shows_the_map(tmp_path, monkeypatch, capsys):
    from course_lib.exercises import make_workspace
    dest = tmp_path / "my_work"
    make_workspace(dest, REPO, out=lambda *a: None)
    for other in dest.glob("*.py"):
        if other.name != "04_roofline.py":
            other.unlink()
    path = dest / "04_roofline.py"
    path.write_text(re.sub(r'raise NotImplementedError\("exercise 04\.1: [^\n]*', 'prediction = "memory"',
                           path.read_text()))
    home = tmp_path / "home"
    home.mkdir()
    (home / "misconceptions.jsonl").write_text(json.dumps({"exercise": "04.3", "misconception": "sparse-peak"}) + "\n")
    monkeypatch.setenv("COURSE_HOME", str(home))
    assert cli.main(["mastery", str(dest)]) == 0
    out = capsys.readouterr().out
    intensity = [i for i in list_exercises() if i[:2] == "04" and "intensity" in get_exercise(i).concepts]
    assert re.search(rf"04 intensity\s+1\s+0\s+{len(intensity) - 1}", out)   # 04.1 passed; the rest untouched
    assert "04.3: sparse-peak, 1" in out
