"""Where the course under test lives; shared by conftest.py and test_lab.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["REPO", "ROOT", "BUILD_DIR", "LANDING", "FIRST_LESSON", "AUTOSAVE_INTERVAL_S", "lesson_paths",
           "git_status"]

REPO = Path(__file__).resolve().parents[1]
# The course tree the server serves; a scratch copy can be tested with COURSE_E2E_ROOT=<dir>.
ROOT = Path(os.environ.get("COURSE_E2E_ROOT", str(REPO))).resolve()
BUILD_DIR = REPO / "build" / "e2e"
LANDING = "START.md"  # the file `make lab` opens: what to do first, linking to the first lesson
FIRST_LESSON = "notebooks/01_throughput_latency.py"
#: JupyterLab's autosave stays on in the test, as for a learner, but every few seconds, not 120.
AUTOSAVE_INTERVAL_S = 4


def lesson_paths(root: Path = ROOT) -> list[Path]:
    """Every lesson, ``notebooks/NN_<topic>.py``, in course order."""
    return sorted((root / "notebooks").glob("[0-9][0-9]_*.py"))


def git_status(root: Path = ROOT) -> str | None:
    """``git status --porcelain`` of the served tree, or None when it is not a git checkout."""
    try:
        result = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=root,
                                capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout if result.returncode == 0 else None
