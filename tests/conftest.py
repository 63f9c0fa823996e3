"""Fixtures shared by the tests of the checks."""

import pytest

#: Where a learner's identity comes from (variants, nbgrader, the hub); see course_lib/exercises/variants.py.
IDENTITY_VARS = ("COURSE_LEARNER_ID", "NBGRADER_STUDENT_ID", "JUPYTERHUB_USER", "NBGRADER_EXECUTION")


@pytest.fixture
def anonymous_learner(monkeypatch, tmp_path):
    """No learner identity (every learner gets the course's own numbers) and a fresh COURSE_HOME, so
    a check's log and progress never touch the real ones. Used by a module with
    ``pytestmark = pytest.mark.usefixtures("anonymous_learner")``."""
    for name in IDENTITY_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COURSE_HOME", str(tmp_path / "course_home"))
