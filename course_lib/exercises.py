"""Exercises from one source: generate stubs, hand out a workspace, track progress, build nbgrader.

    python -m course_lib.exercises generate [--check]   exercises/ from solutions/
    python -m course_lib.exercises workspace DIR        copy the exercises into DIR, never
                                                        overwriting a file you changed
    python -m course_lib.exercises progress DIR [--timeout S]  run DIR's exercise notebooks; which pass
    python -m course_lib.exercises nbgrader DIR         an nbgrader course source in DIR
    python -m course_lib.exercises normalize [--check]  headers of notebooks/, exercises/ and
                                                        solutions/ as JupyterLab saves them

``solutions/NN_<topic>.py`` is the single source. In each exercise cell the code between
``### BEGIN SOLUTION`` and ``### END SOLUTION`` is the answer; the lines after it call
``check("NN.k", ...)``. ``generate`` replaces each region (markers included) by one line,
indented like the markers, that raises ``NotImplementedError("exercise NN.k: <task>")``;
everything else is copied byte for byte, under the header JupyterLab writes (``LAB_HEADER``).

Every lesson, exercise and solution is committed in the form JupyterLab's jupytext contents
manager writes back when it saves the file (``LAB_HEADER``), so running a lesson and letting
autosave work changes no byte of it. The workspace manifest records each file's cell content,
not its bytes, so a learner's save without edits still counts as "not changed".
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "BEGIN",
    "END",
    "LESSON_PATTERN",
    "Region",
    "SolutionFormatError",
    "find_regions",
    "make_exercise_text",
    "generate",
    "WorkspaceEntry",
    "make_workspace",
    "CellOutcome",
    "execute_notebook",
    "ExerciseStatus",
    "progress",
    "DEFAULT_TIMEOUT_S",
    "build_nbgrader",
    "LAB_KERNELSPEC",
    "LAB_HEADER",
    "lab_saved_text",
    "normalize",
    "content_hash",
    "main",
]

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


class SolutionFormatError(ValueError):
    """A solution file whose marked regions cannot be turned into exercises."""


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


# --------------------------------------------------------------------------------------------
# Parsing a solution file
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Region:
    """One solution region: lines ``begin``..``end`` (0-based, inclusive, the markers included)."""

    begin: int
    end: int
    indent: str
    exercise_id: str
    task: str
    cell_start: int


def _cells(lines: list[str]) -> list[tuple[int, int]]:
    """(first, last+1) line ranges of the percent-format cells; the header is not a cell."""
    starts = [i for i, line in enumerate(lines) if _CELL_START.match(line)]
    return [(s, e) for s, e in zip(starts, starts[1:] + [len(lines)])]


def _task_from_markdown(lines: list[str], exercise_id: str) -> str:
    """A one-line task: the first sentence of the markdown cell before the exercise."""
    text = []
    for line in lines:
        line = line[1:] if line.startswith("#") else line
        line = line.strip()
        if not line:
            if text:
                break
            continue
        text.append(line)
    sentence = " ".join(text)
    sentence = re.sub(r"[*_`]|\$+", "", sentence)              # emphasis, code and maths marks
    sentence = re.sub(r"^#+\s*", "", sentence)                 # heading marks
    sentence = re.sub(rf"^(exercise\s*)?{re.escape(exercise_id)}\b\s*(\([^)]*\))?\s*[:.)\u2014\u2013-]*\s*",
                      "", sentence, flags=re.IGNORECASE)
    sentence = re.split(r"(?<=[.!?])\s", sentence, maxsplit=1)[0].rstrip(".").strip()
    sentence = sentence.replace("\\", "").replace('"', "'")
    if len(sentence) > 100:
        sentence = sentence[:97].rstrip() + "..."
    return sentence or "write your answer here (the task is in the cell above)"


def find_regions(text: str, name: str = "<solution>") -> list[Region]:
    """Every solution region of a percent-format source, with its exercise id and task line.

    Raises SolutionFormatError (naming ``name`` and the line) for an unclosed or nested region,
    an END without a BEGIN, a region outside a code cell, or a cell with a region but no
    ``check("NN.k", ...)`` call.
    """
    lines = text.split("\n")
    regions = []
    cells = _cells(lines)
    previous_markdown: list[str] = []
    for start, stop in cells:
        is_markdown = bool(_MARKDOWN_CELL.match(lines[start]))
        body = lines[start + 1:stop]
        if is_markdown:
            if any(BEGIN in line or END in line for line in body):   # nbgrader would trip on it
                raise SolutionFormatError(f"{name}:{start + 1}: a solution marker inside a markdown cell")
            previous_markdown = body
            continue
        begin = None
        cell_regions = []
        for i in range(start + 1, stop):
            stripped = lines[i].strip()
            if stripped == BEGIN:
                if begin is not None:
                    raise SolutionFormatError(f"{name}:{i + 1}: {BEGIN} inside another region "
                                              f"(opened at line {begin + 1})")
                begin = i
            elif stripped == END:
                if begin is None:
                    raise SolutionFormatError(f"{name}:{i + 1}: {END} without a {BEGIN}")
                indent_begin = re.match(r"\s*", lines[begin]).group()
                indent_end = re.match(r"\s*", lines[i]).group()
                if indent_begin != indent_end:
                    raise SolutionFormatError(f"{name}:{i + 1}: {END} is indented differently "
                                              f"from its {BEGIN} (line {begin + 1})")
                cell_regions.append((begin, i, indent_begin))
                begin = None
        if begin is not None:
            raise SolutionFormatError(f"{name}:{begin + 1}: {BEGIN} is never closed in its cell")
        if not cell_regions:
            continue
        ids = [m.group(2) for m in _CHECK_CALL.finditer("\n".join(lines[cell_regions[-1][1] + 1:stop]))]
        if not ids:
            raise SolutionFormatError(f"{name}:{start + 1}: this cell has a solution region but no "
                                      f'check("NN.k", ...) call after {END}')
        if len(set(ids)) > 1:
            raise SolutionFormatError(f"{name}:{start + 1}: one exercise per cell, but this cell "
                                      f"checks {sorted(set(ids))}")
        task = _task_from_markdown(previous_markdown, ids[0])
        regions.extend(Region(b, e, ind, ids[0], task, start) for b, e, ind in cell_regions)
    seen = {}
    for region in regions:
        if region.exercise_id in seen and seen[region.exercise_id] != region.cell_start:
            raise SolutionFormatError(f"{name}:{region.cell_start + 1}: exercise {region.exercise_id} "
                                      f"is checked in two cells")
        seen[region.exercise_id] = region.cell_start
    return regions


def _stub_line(region: Region) -> str:
    return f'{region.indent}raise NotImplementedError("exercise {region.exercise_id}: {region.task}")'


def make_exercise_text(text: str, name: str = "<solution>") -> str:
    """The exercise version of a solution source: each region replaced by its one-line stub."""
    lines = text.split("\n")
    regions = find_regions(text, name)
    out = []
    position = 0
    for region in regions:
        out.extend(lines[position:region.begin])
        out.append(_stub_line(region))
        position = region.end + 1
    out.extend(lines[position:])
    return "\n".join(out)


# --------------------------------------------------------------------------------------------
# generate
# --------------------------------------------------------------------------------------------

def _expected_exercises(root: Path) -> dict[str, bytes]:
    expected = {}
    for path in _lesson_files(root / "solutions"):
        text = path.read_text(encoding="utf-8")
        header, body = _split_header(make_exercise_text(text, f"solutions/{path.name}"))
        # The header JupyterLab writes back, so a learner's save changes nothing.
        expected[path.name] = (LAB_HEADER + (body if header else "\n" + body)).encode("utf-8")
    return expected


def generate(root=None, check: bool = False, out=print) -> list[str]:
    """Write exercises/ from solutions/; with ``check``, write nothing and list what drifted.

    Returns the names of the files that were (or, with ``check``, would be) written or removed.
    """
    root = Path(root) if root is not None else _default_root()
    solutions = root / "solutions"
    if not solutions.is_dir():
        raise FileNotFoundError(f"no solutions/ folder under {root}")
    expected = _expected_exercises(root)
    target = root / "exercises"
    existing = {p.name for p in _lesson_files(target)}
    changed = []
    for name, data in expected.items():
        path = target / name
        if not path.exists() or path.read_bytes() != data:
            changed.append(name)
            if not check:
                target.mkdir(parents=True, exist_ok=True)
                _write_atomic(path, data)
                out(f"wrote exercises/{name}")
    for name in sorted(existing - set(expected)):
        changed.append(name)
        if not check:
            (target / name).unlink()
            out(f"removed exercises/{name} (no solutions/{name})")
    if not check and not changed:
        out(f"exercises/ is up to date ({len(expected)} lessons)")
    return changed


# --------------------------------------------------------------------------------------------
# normalize: the form JupyterLab saves
# --------------------------------------------------------------------------------------------

def _split_header(text: str) -> tuple[str, str]:
    """(header, body) of a percent-format file; the header is empty when there is none."""
    match = re.match(r"# ---\n(?:#.*\n)*?# ---\n", text)
    return (match.group(), text[match.end():]) if match else ("", text)


def lab_saved_text(text: str, kernelspec: dict | None = None) -> str:
    """What JupyterLab's jupytext contents manager writes back when it saves ``text`` unedited.

    The running kernel's spec (``kernelspec``, default ``LAB_KERNELSPEC``) goes into the header,
    the rest is jupytext's percent format with the course's metadata filter.
    """
    import jupytext

    nb = jupytext.reads(text, fmt="py:percent")
    meta = nb.metadata.setdefault("jupytext", {})
    meta.setdefault("formats", "py:percent")
    meta["notebook_metadata_filter"] = LAB_METADATA_FILTER
    nb.metadata["kernelspec"] = dict(kernelspec or LAB_KERNELSPEC)
    return jupytext.writes(nb, fmt="py:percent")


def _course_files(root: Path) -> list[Path]:
    return [path for folder in COURSE_FOLDERS for path in _lesson_files(root / folder)]


def normalize(root=None, check: bool = False, out=print) -> list[str]:
    """Give every lesson, exercise and solution the header JupyterLab writes (``LAB_HEADER``).

    Only header lines change: a body that a save would also rewrite is reported, never edited.
    With ``check``, nothing is written. Returns the files whose header was (or would be) changed.
    """
    root = Path(root) if root is not None else _default_root()
    changed = []
    for path in _course_files(root):
        relative = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        header, body = _split_header(text)
        new_text = LAB_HEADER + body if header else LAB_HEADER + "\n" + body
        if new_text != text:
            changed.append(relative)
            if not check:
                _write_atomic(path, new_text.encode("utf-8"))
                out(f"header: {relative}")
        if lab_saved_text(new_text) != new_text:
            out(f"note: JupyterLab would also rewrite the body of {relative} when saving it; "
                f"compare it with `course_lib.exercises.lab_saved_text` and fix the cells")
    if not changed and not check:
        out(f"every header is as JupyterLab saves it ({len(_course_files(root))} files)")
    return changed


# --------------------------------------------------------------------------------------------
# workspace
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class WorkspaceEntry:
    """What ``make_workspace`` did with one file: 'new', 'updated', 'unchanged' or 'skipped'."""

    name: str
    action: str
    reason: str = ""


def content_hash(data: bytes) -> str:
    """A hash of a notebook's cells (type and source), blind to its header and to saving.

    JupyterLab rewrites the header (kernel name, jupytext metadata) when it saves a file, even
    unedited; the cells are what a learner changes. A file jupytext cannot read as UTF-8 text is
    hashed as raw bytes.
    """
    try:
        import jupytext

        nb = jupytext.reads(data.decode("utf-8"), fmt="py:percent")
    except Exception:  # noqa: BLE001 - anything unreadable is compared byte for byte
        return "bytes:" + _sha256(data)
    cells = [[cell.cell_type, cell.source] for cell in nb.cells]
    return "cells:" + _sha256(json.dumps(cells, ensure_ascii=False).encode("utf-8"))


def _read_manifest(path: Path, out) -> dict:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        files = data["files"]
        if not isinstance(files, dict):
            raise TypeError
        return {str(k): str(v) for k, v in files.items()}
    except (OSError, ValueError, KeyError, TypeError):
        out(f"note: {path} is unreadable; treating every existing file as yours")
        return {}


def make_workspace(dest, root=None, out=print) -> list[WorkspaceEntry]:
    """Copy exercises/ into ``dest``; never overwrite a file the learner changed.

    A manifest (``dest/.course_manifest.json``) records the cell content (``content_hash``) of
    every file this command wrote. A file is replaced only when its cells are still as written
    (you never edited it; saving it unedited in JupyterLab does not count); otherwise it is
    skipped, and the reason is reported. Manifests that recorded raw-byte hashes still work.
    """
    root = Path(root) if root is not None else _default_root()
    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise NotADirectoryError(f"workspace {str(dest)!r} is a file, not a folder: choose another "
                                 f"name (nothing was written, the file is untouched)")
    sources = _lesson_files(root / "exercises")
    if not sources:
        raise FileNotFoundError(f"no exercise files under {root / 'exercises'}: run "
                                f"`python -m course_lib.exercises generate` first")
    dest.mkdir(parents=True, exist_ok=True)
    manifest_path = dest / MANIFEST_NAME
    if manifest_path.exists() and not manifest_path.is_file():
        raise IsADirectoryError(f"{manifest_path} must be a file")
    recorded = _read_manifest(manifest_path, out)
    entries = []
    for source in sources:
        data = source.read_bytes()
        new_hash = content_hash(data)
        target = dest / source.name
        if target.is_symlink() or (target.exists() and not target.is_file()):
            entries.append(WorkspaceEntry(source.name, "skipped", "it is not a plain file"))
            continue
        if not target.exists():
            _write_atomic(target, data)
            recorded[source.name] = new_hash
            entries.append(WorkspaceEntry(source.name, "new"))
            continue
        current = target.read_bytes()
        current_hash = content_hash(current)
        as_written = recorded.get(source.name) in (current_hash, _sha256(current))  # old manifests: bytes
        if current_hash == new_hash:
            recorded[source.name] = new_hash
            entries.append(WorkspaceEntry(source.name, "unchanged"))
        elif as_written:
            _write_atomic(target, data)
            recorded[source.name] = new_hash
            entries.append(WorkspaceEntry(source.name, "updated", "a newer version; you had not edited it"))
        elif source.name in recorded:
            entries.append(WorkspaceEntry(source.name, "skipped",
                                          "you changed it since it was copied; your version is kept"))
        else:
            entries.append(WorkspaceEntry(source.name, "skipped",
                                          "a file of that name was already there and this command did "
                                          "not write it; it is kept"))
    manifest = {"about": "hashes of the cells of the files `course_lib.exercises workspace` wrote "
                         "here; a file whose cells differ was edited and is never overwritten",
                "files": dict(sorted(recorded.items()))}
    _write_atomic(manifest_path, (json.dumps(manifest, indent=2) + "\n").encode("utf-8"))
    for entry in entries:
        reason = f": {entry.reason}" if entry.reason else ""
        out(f"{entry.action:9s} {dest / entry.name}{reason}")
    skipped = [e for e in entries if e.action == "skipped"]
    if skipped:
        out(f"{len(skipped)} file(s) skipped. To get a fresh copy of one, rename or delete yours "
            f"and run this again.")
    return entries


# --------------------------------------------------------------------------------------------
# Executing notebooks: progress
# --------------------------------------------------------------------------------------------

#: Seconds ``progress`` gives each notebook's cells, all together (the kernel's start not counted).
DEFAULT_TIMEOUT_S = 120
MAX_TIMEOUT_S = 24 * 3600


@dataclass(frozen=True)
class CellOutcome:
    """One executed code cell: its index among all cells, the ids it checks, and any error."""

    index: int
    source: str
    exercise_ids: tuple
    error_name: str | None
    error_value: str | None


def _exercise_ids(source: str) -> tuple:
    return tuple(dict.fromkeys(m.group(2) for m in _CHECK_CALL.finditer(source)))


def _outcome(index: int, cell) -> CellOutcome:
    errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    return CellOutcome(index, cell.source, _exercise_ids(cell.source),
                       errors[0]["ename"] if errors else None,
                       errors[0]["evalue"] if errors else None)


def _check_timeout(timeout) -> float:
    from ._validate import check_number

    return check_number("timeout", timeout, min_value=0, allow_min=False, max_value=MAX_TIMEOUT_S)


def _client(nb, path: Path, timeout: float, cwd, started: list):
    """An nbclient that gives the notebook's cells ``timeout`` seconds in all and records, in
    ``started``, the index of each code cell as it starts."""
    import time

    from nbclient import NotebookClient

    deadline = []

    def remaining(cell) -> float:
        if not deadline:                       # the clock starts with the first cell
            deadline.append(time.monotonic() + timeout)
        return max(0.05, deadline[0] - time.monotonic())   # never 0: nbclient reads 0 as "no limit"

    def on_execute(cell, cell_index, **kwargs):
        started.append(cell_index)

    kernel = nb.metadata.get("kernelspec", {}).get("name", "python3")
    return NotebookClient(nb, timeout=max(1, int(timeout)), timeout_func=remaining, kernel_name=kernel,
                          allow_errors=True, shutdown_kernel="immediate", on_cell_execute=on_execute,
                          resources={"metadata": {"path": str(cwd or path.parent)}})


def execute_notebook(path, timeout: float = DEFAULT_TIMEOUT_S, cwd=None) -> list[CellOutcome]:
    """Run every code cell of a jupytext (or .ipynb) notebook in a fresh kernel, errors allowed.

    ``timeout`` (seconds, > 0) bounds all the cells together; running past it raises nbclient's
    ``CellTimeoutError``, and a kernel that dies raises ``DeadKernelError``.
    """
    import jupytext

    timeout = _check_timeout(timeout)
    path = Path(path)
    nb = jupytext.read(path)
    _client(nb, path, timeout, cwd, []).execute(stderr=subprocess.DEVNULL)  # kernel start-up noise
    return [_outcome(i, cell) for i, cell in enumerate(nb.cells) if cell.cell_type == "code"]


@dataclass(frozen=True)
class ExerciseStatus:
    """An exercise's state in a workspace.

    'pass', 'fail', 'not attempted', 'not run' (an earlier cell timed out or crashed the kernel),
    'timed out' or 'crashed' (its own cell did). A notebook that could not be checked at all
    ('unreadable', 'timed out', 'crashed' before any exercise) has one entry with an empty id.
    """

    notebook: str
    exercise_id: str
    status: str
    detail: str = ""


@dataclass(frozen=True)
class _NotebookRun:
    outcomes: list            # CellOutcome of every code cell that finished
    problem: str | None       # None, 'timed out', 'crashed' or 'unreadable'
    message: str = ""
    stopped_cell: int | None = None
    unrun_ids: tuple = ()     # exercises in the cells that never finished
    stopped_ids: tuple = ()   # those of them checked in the cell that was running


def _run_for_progress(path: Path, timeout: float) -> _NotebookRun:
    """Run one notebook, turning every way it can stop into a result; never raises for the file."""
    import jupytext
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        return _NotebookRun([], "unreadable", f"not UTF-8 text (byte 0x{raw[exc.start]:02x} on line {line}); "
                                              f"open it in an editor and save it with UTF-8 encoding")
    except OSError as exc:
        return _NotebookRun([], "unreadable", f"cannot read it ({exc.strerror or exc})")
    try:
        nb = jupytext.reads(text, fmt="py:percent")
    except Exception as exc:  # noqa: BLE001 - any parse failure is reported for this file only
        return _NotebookRun([], "unreadable", f"not a notebook jupytext can read ({_first_line(str(exc))})")
    started: list = []
    problem = message = None
    try:
        _client(nb, path, timeout, None, started).execute(stderr=subprocess.DEVNULL)
    except CellTimeoutError:
        problem = "timed out"
        message = (f"still running after {timeout:g} s (an endless loop, or too much work?); "
                   f"the cells after it did not run")
    except DeadKernelError:
        problem = "crashed"
        message = ("the Python kernel stopped (os._exit, a crash in compiled code, or out of memory); "
                   "the cells after it did not run")
    except Exception as exc:  # noqa: BLE001 - a kernel that cannot start, a lost connection...
        problem = "crashed"
        message = f"could not run it: {_first_line(str(exc)) or type(exc).__name__}"
    code = [(i, cell) for i, cell in enumerate(nb.cells) if cell.cell_type == "code"]
    if problem is None:
        return _NotebookRun([_outcome(i, cell) for i, cell in code], None)
    stopped = started[-1] if started else None
    done = [(i, cell) for i, cell in code if stopped is not None and i < stopped]
    unrun = tuple(dict.fromkeys(x for i, cell in code if stopped is None or i >= stopped
                                for x in _exercise_ids(cell.source)))
    stopped_ids = _exercise_ids(nb.cells[stopped].source) if stopped is not None else ()
    return _NotebookRun([_outcome(i, cell) for i, cell in done], problem, message, stopped, unrun,
                        stopped_ids)


def _first_line(text: str | None, limit: int = 100) -> str:
    line = (text or "").strip().split("\n")[0]
    return line if len(line) <= limit else line[: limit - 3] + "..."


#: Added to a NameError: the file passed in the learner's kernel, where an old cell defined it.
FRESH_KERNEL_NOTE = ("passes in your notebook? progress runs the file top to bottom in a fresh kernel, "
                     "where a name from a deleted or unrun cell does not exist: define it in a cell above")


def _error_detail(name: str, value: str | None) -> str:
    detail = f"{name}: {_first_line(value)}"
    return f"{detail}; {FRESH_KERNEL_NOTE}" if name in ("NameError", "UnboundLocalError") else detail


def _cell_statuses(notebook: str, cell: CellOutcome) -> list[ExerciseStatus]:
    statuses = []
    for ex_id in cell.exercise_ids:
        if cell.error_name is None:
            statuses.append(ExerciseStatus(notebook, ex_id, "pass"))
        elif cell.error_name == "NotImplementedError":
            statuses.append(ExerciseStatus(notebook, ex_id, "not attempted"))
        else:
            statuses.append(ExerciseStatus(notebook, ex_id, "fail",
                                           _error_detail(cell.error_name, cell.error_value)))
    return statuses


def progress(dest, out=print, timeout: float = DEFAULT_TIMEOUT_S) -> list[ExerciseStatus]:
    """Execute each exercise notebook in ``dest`` and report every exercise's state.

    Each notebook runs in a fresh kernel, its cells given ``timeout`` seconds in all (> 0). A
    notebook that runs past it, crashes its kernel or cannot be read is reported, by name, and
    the others are still checked; a summary ends the report.
    """
    timeout = _check_timeout(timeout)
    dest = Path(dest)
    if not dest.is_dir():
        raise NotADirectoryError(f"{str(dest)!r} is not a folder: make one with "
                                 f"`python -m course_lib.exercises workspace {dest}`")
    notebooks = _lesson_files(dest)
    if not notebooks:
        raise FileNotFoundError(f"no exercise notebooks (NN_topic.py) in {dest}: make them with "
                                f"`python -m course_lib.exercises workspace {dest}`")
    out(f"Each file runs top to bottom in a fresh kernel (as Kernel > Restart Kernel and Run All "
        f"Cells does), {timeout:g} s at most per file.")
    statuses = []
    problems = {}
    for number, notebook in enumerate(notebooks, 1):
        out(f"[{number}/{len(notebooks)}] {notebook.name}")     # each notebook takes seconds: show where we are
        run = _run_for_progress(notebook, timeout)
        for cell in run.outcomes:
            if not cell.exercise_ids and cell.error_name:
                out(f"  note: cell {cell.index + 1} (not an exercise) raised "
                    f"{_error_detail(cell.error_name, cell.error_value)}")
            for status in _cell_statuses(notebook.name, cell):
                statuses.append(status)
                detail = f"  ({status.detail})" if status.detail else ""
                out(f"  {status.exercise_id:6s} {status.status}{detail}")
        if run.problem is None:
            continue
        problems[notebook.name] = run.problem
        where = f"cell {run.stopped_cell + 1}: " if run.stopped_cell is not None else ""
        out(f"  {run.problem}: {notebook.name}, {where}{run.message}")
        if not run.unrun_ids:
            statuses.append(ExerciseStatus(notebook.name, "", run.problem, run.message))
        for ex_id in run.unrun_ids:
            # The exercise whose own cell was running when it stopped gets the notebook's status.
            own = ex_id in run.stopped_ids
            status = ExerciseStatus(notebook.name, ex_id, run.problem if own else "not run", run.message)
            statuses.append(status)
            out(f"  {ex_id:6s} {status.status}")
    if problems:
        kinds = {k: sum(1 for v in problems.values() if v == k) for k in ("timed out", "crashed", "unreadable")}
        out(f"{len(notebooks)} notebooks: {len(notebooks) - len(problems)} ran to the end, "
            + ", ".join(f"{n} {k}" for k, n in kinds.items() if n)
            + " (" + ", ".join(f"{name} {kind}" for name, kind in problems.items()) + ")")
    exercises_ = [s for s in statuses if s.exercise_id]
    try:                                  # the mastery map: per concept, passed / attempted / not
        from course_lib.mastery import concept_table
        out(concept_table(exercises_))
    except Exception as exc:  # noqa: BLE001 - the map never hides the statuses
        out(f"(no concept table: {exc})")
    counts = {s: sum(1 for x in exercises_ if x.status == s)
              for s in ("pass", "fail", "not attempted", "not run", "timed out", "crashed")}
    extra = "".join(f", {n} {k}" for k, n in list(counts.items())[3:] if n)
    out(f"{len(exercises_)} exercises: {counts['pass']} pass, {counts['fail']} fail, "
        f"{counts['not attempted']} not attempted{extra}")
    return statuses


# --------------------------------------------------------------------------------------------
# nbgrader course source
# --------------------------------------------------------------------------------------------

def _nbgrader_meta(grade_id: str, *, solution=False, grade=False, locked=False, points=None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution, "task": False}
    if grade:
        meta["points"] = points
    return meta


def _nbgrader_notebook(path: Path):
    """A solutions file as an nbgrader source notebook: exercise cells split, the rest locked."""
    import jupytext
    import nbformat

    text = path.read_text(encoding="utf-8")
    find_regions(text, f"solutions/{path.name}")        # fail early, with a line number
    nb = jupytext.reads(text, fmt="py:percent")
    cells = []
    stem = path.stem
    for index, cell in enumerate(nb.cells):
        lines = cell.source.split("\n")
        ends = [i for i, line in enumerate(lines) if line.strip() == END]
        if cell.cell_type != "code" or not ends:
            new = (nbformat.v4.new_markdown_cell(cell.source) if cell.cell_type == "markdown"
                   else nbformat.v4.new_code_cell(cell.source) if cell.cell_type == "code"
                   else nbformat.v4.new_raw_cell(cell.source))
            new.metadata = {"nbgrader": _nbgrader_meta(f"cell-{index:03d}", locked=True)}
            new.id = f"{stem}-cell-{index:03d}"
            cells.append(new)
            continue
        split = ends[-1] + 1
        solution_src = "\n".join(lines[:split])
        test_src = "\n".join(lines[split:]).strip("\n")
        ex_id = _CHECK_CALL.search(test_src).group(2)
        slug = ex_id.replace(".", "-")
        solution = nbformat.v4.new_code_cell(solution_src)
        solution.metadata = {"nbgrader": _nbgrader_meta(f"ex-{slug}", solution=True)}
        solution.id = f"{stem}-ex-{slug}"
        test = nbformat.v4.new_code_cell(test_src)
        test.metadata = {"nbgrader": _nbgrader_meta(f"ex-{slug}-check", grade=True, locked=True, points=1)}
        test.id = f"{stem}-ex-{slug}-check"
        cells.extend([solution, test])
    out = nbformat.v4.new_notebook(cells=cells)
    out.metadata = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                    "language_info": {"name": "python"}}
    nbformat.validate(out)
    return out


_NBGRADER_CONFIG = '''\
# nbgrader configuration for the course, written by `python -m course_lib.exercises nbgrader`.
# Run nbgrader from this folder (`make release`, `make collect`, `make autograde`, `make feedback`
# from the repository do): see docs/instructors.md.
import os
import warnings

c = get_config()  # noqa: F821 (provided by nbgrader when it reads this file)

# This folder is the course: the gradebook (gradebook.db), source/, release/, submitted/... live here.
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.course_id = "{course_id}"
c.CourseDirectory.source_directory = "source"
# Lessons measure the machine they run on for about a second; allow slow shared servers.
c.Execute.timeout = 300
# The kernel's own start-up warnings (transport encryption) are noise in a grading log.
c.Execute.extra_arguments = ["--IPKernelApp.log_level=ERROR"]
c.ClearSolutions.code_stub = {{"python": "# YOUR CODE HERE\\nraise NotImplementedError()"}}

# nbgrader's gradebook uses SQLAlchemy in ways SQLAlchemy 2 warns about (SAWarning on every
# autograde); the warnings say nothing about the submissions.
try:
    from sqlalchemy.exc import SAWarning
except ImportError:
    pass
else:
    warnings.filterwarnings("ignore", category=SAWarning)
'''


def build_nbgrader(dest, root=None, lessons=None, out=print) -> list[Path]:
    """Write an nbgrader course source under ``dest``: source/<lesson>/<lesson>.ipynb each.

    ``lessons`` limits it to some solution stems (for example ``["04_roofline"]``).
    """
    import nbformat

    root = Path(root) if root is not None else _default_root()
    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise NotADirectoryError(f"{str(dest)!r} is a file, not a folder")
    files = _lesson_files(root / "solutions")
    if lessons is not None:
        wanted = set(lessons)
        unknown = wanted - {p.stem for p in files}
        if unknown:
            raise ValueError(f"no solutions for {sorted(unknown)}; have {[p.stem for p in files]}")
        files = [p for p in files if p.stem in wanted]
    if not files:
        raise FileNotFoundError(f"no solution files under {root / 'solutions'}")
    written = []
    for path in files:
        nb = _nbgrader_notebook(path)
        target = dest / "source" / path.stem / f"{path.stem}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(target, nbformat.writes(nb).encode("utf-8"))
        written.append(target)
        out(f"wrote {target}")
    config = dest / "nbgrader_config.py"
    config.write_text(_NBGRADER_CONFIG.format(course_id=COURSE_ID), encoding="utf-8")
    written.append(config)
    out(f"wrote {config}")
    return written


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m course_lib.exercises",
                                     description="Exercises generated from solutions/, a learner's "
                                                 "workspace, progress, and an nbgrader course.")
    parser.add_argument("--root", type=Path, default=None,
                        help="the course repository (default: the one this package is in, else .)")
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate", help="write exercises/ from solutions/")
    gen.add_argument("--check", action="store_true",
                     help="write nothing; exit 1 and name the files when exercises/ has drifted")
    ws = sub.add_parser("workspace", help="copy the exercises into DIR (never overwrites your edits)")
    ws.add_argument("dir", type=Path)
    ws.add_argument("--quiet", action="store_true", help="name only the files written or skipped")
    pr = sub.add_parser("progress", help="run DIR's exercise notebooks and show which exercises pass")
    pr.add_argument("dir", type=Path)
    pr.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                    help=f"seconds each notebook's cells may take in all (> 0; default "
                         f"{DEFAULT_TIMEOUT_S}); a notebook still running then is reported as "
                         f"timed out and the others are still checked")
    nbg = sub.add_parser("nbgrader", help="write an nbgrader course source into DIR")
    nbg.add_argument("dir", type=Path)
    nbg.add_argument("--lesson", action="append", default=None,
                     help="only this lesson (a solutions stem such as 04_roofline); repeatable")
    norm = sub.add_parser("normalize", help="give notebooks/, exercises/ and solutions/ the header "
                                            "JupyterLab writes when it saves them")
    norm.add_argument("--check", action="store_true",
                      help="write nothing; exit 1 and name the files whose header differs")
    return parser


def main(argv=None) -> int:
    """Entry point of ``python -m course_lib.exercises``; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "generate":
            changed = generate(args.root, check=args.check)
            if args.check:
                if changed:
                    print("exercises/ has drifted from solutions/; run `make exercises`. Files: "
                          + ", ".join(f"exercises/{name}" for name in changed), file=sys.stderr)
                    return 1
                print("exercises/ matches solutions/")
        elif args.command == "workspace":
            quiet = args.quiet
            make_workspace(args.dir, args.root,
                           out=lambda line: None if quiet and line.startswith("unchanged") else print(line))
        elif args.command == "progress":
            progress(args.dir, timeout=args.timeout)
        elif args.command == "nbgrader":
            build_nbgrader(args.dir, args.root, lessons=args.lesson)
        elif args.command == "normalize":
            changed = normalize(args.root, check=args.check)
            if args.check and changed:
                print("headers differ from what JupyterLab saves; run `python -m course_lib.exercises "
                      "normalize`. Files: " + ", ".join(changed), file=sys.stderr)
                return 1
    except (OSError, ValueError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
