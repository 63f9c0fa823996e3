"""Where the course under test lives; shared by conftest.py and test_lab.py."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["REPO", "ROOT", "BUILD_DIR", "FIRST_LESSON", "lesson_paths"]

REPO = Path(__file__).resolve().parents[1]
# The course tree the server serves; a scratch copy can be tested with COURSE_E2E_ROOT=<dir>.
ROOT = Path(os.environ.get("COURSE_E2E_ROOT", str(REPO))).resolve()
BUILD_DIR = REPO / "build" / "e2e"
FIRST_LESSON = "notebooks/04_roofline.py"  # the file `make lab` opens


def lesson_paths(root: Path = ROOT) -> list[Path]:
    """Every lesson, ``notebooks/NN_<topic>.py``, in course order."""
    return sorted((root / "notebooks").glob("[0-9][0-9]_*.py"))
