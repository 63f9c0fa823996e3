"""The course's files: which are lessons, where the repository is, how a file is written safely.

Every lesson, exercise and solution is committed in the form JupyterLab's jupytext contents
manager writes back when it saves the file (``LAB_HEADER``), so running a lesson and letting
autosave work changes no byte of it.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

__all__ = ["BEGIN", "END", "LESSON_PATTERN", "COURSE_ID", "COURSE_FOLDERS", "LAB_KERNELSPEC", "LAB_HEADER"]

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
#: Lesson files: two digits, an underscore, a topic ("04_roofline.py").
LESSON_PATTERN = re.compile(r"^\d{2}_[A-Za-z0-9_]+\.py$")
_CHECK_CALL = re.compile(r"""\bcheck\(\s*(["'])(\d{2}\.\d+[a-z]?)\1""")
_CELL_START = re.compile(r"^# %%")
_MARKDOWN_CELL = re.compile(r"^# %% \[(markdown|md)\]")
MANIFEST_NAME = ".course_manifest.json"
COURSE_ID = "gpu-ml-course"
#: The folders whose ``NN_topic.py`` files are committed in the form JupyterLab saves them.
COURSE_FOLDERS = ("notebooks", "exercises", "solutions")
#: The kernel JupyterLab runs the course in: ipykernel's own ``python3`` kernelspec. On save,
#: JupyterLab writes the running kernel's spec into the file's header.
LAB_KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
#: What jupytext keeps out of the header on save: ``text_representation`` records jupytext's own
#: version, so each save by a newer jupytext would change the file. The filter sits in the header
#: itself, so it applies wherever the file is opened (a workspace outside the repository too).
LAB_METADATA_FILTER = "-jupytext.text_representation"
#: The header every lesson, exercise and solution carries: exactly what jupytext writes back.
LAB_HEADER = f"""\
# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: {LAB_METADATA_FILTER}
#   kernelspec:
#     display_name: {LAB_KERNELSPEC["display_name"]}
#     language: {LAB_KERNELSPEC["language"]}
#     name: {LAB_KERNELSPEC["name"]}
# ---
"""


# --------------------------------------------------------------------------------------------
# Paths
# --------------------------------------------------------------------------------------------

def _default_root() -> Path:
    """The repository the package sits in (editable install), else the current directory."""
    package_parent = Path(__file__).resolve().parent.parent
    if (package_parent / "solutions").is_dir():
        return package_parent
    return Path.cwd()


def _lesson_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file() and LESSON_PATTERN.match(p.name))


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_mode(path: Path) -> int:
    """The mode ``open(path, "w")`` would give: an existing file's own, else 0o666 less the umask."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _write_atomic(path: Path, data: bytes) -> None:
    """Write through a temporary file in the same folder, so a crash never leaves half a file.

    The file gets the mode a plain write would give (the umask is respected), and an error names
    ``path``, never the temporary file.
    """
    path = Path(path)
    mode = _file_mode(path)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise type(exc)(exc.errno, f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise


