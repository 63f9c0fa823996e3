"""Real nbgrader, run in the test's own process: its Python API (``NbGraderAPI``, what nbgrader's
formgrader calls) instead of one ``python -m nbgrader`` process per step, and the gradebook's
schema version read through alembic's Python API instead of the ``alembic heads`` command that
nbgrader starts for every new gradebook. Each process start costs seconds of imports on 2 cores;
the results are the same (the command-line path is what ``make hub-test`` drives end to end).
"""

from __future__ import annotations

import contextlib
import functools
from pathlib import Path

import pytest


@functools.cache
def alembic_head() -> str:
    """The newest gradebook schema version, as ``alembic heads`` prints it for nbgrader."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import _temp_alembic_ini

    with _temp_alembic_ini("sqlite:////tmp/gradebook.db") as ini:
        return ScriptDirectory.from_config(Config(ini)).get_current_head()


@contextlib.contextmanager
def in_process_alembic():
    """While inside, a new nbgrader gradebook is stamped without starting ``alembic``."""
    import nbgrader.api

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(nbgrader.api, "get_alembic_version", alembic_head)
        yield


def nbgrader_api(course: Path):
    """An ``NbGraderAPI`` for the course folder, configured by its ``nbgrader_config.py``."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    config.CourseDirectory.root = str(course)
    return NbGraderAPI(CourseDirectory(config=config), config=config)


def run(result: dict, what: str) -> None:
    """Fail with nbgrader's own log when a step did not succeed."""
    assert result["success"], f"nbgrader {what} failed:\n{result.get('error', '')}\n{result.get('log', '')}"
