"""Exercises from one source: ``solutions/NN_<topic>.py`` becomes ``exercises/NN_<topic>.py``.

In each exercise cell the code between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` is the
answer; the lines after it call ``check("NN.k", ...)``. ``generate`` replaces each region (markers
included) by one line, indented like the markers, that raises
``NotImplementedError("exercise NN.k: <task>")``; everything else is copied byte for byte, under
the header JupyterLab writes (``LAB_HEADER``). ``normalize`` gives every course file that header.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from course_lib._validate import check_bool, check_callable, check_instance, check_path
from course_lib.exercises.files import (BEGIN, COURSE_FOLDERS, END, LAB_HEADER, LAB_KERNELSPEC, LAB_METADATA_FILTER,
                                       _CELL_START, _CHECK_CALL, _MARKDOWN_CELL, _default_root, _lesson_files,
                                       _write_atomic)

__all__ = ["Region", "SolutionFormatError", "find_regions", "make_exercise_text", "generate", "lab_saved_text",
           "normalize"]


class SolutionFormatError(ValueError):
    """A solution file whose marked regions cannot be turned into exercises."""


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
    check_instance("text", text, str)
    check_instance("name", name, str)
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
    check_instance("text", text, str)
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
    root = check_path("root", root) if root is not None else _default_root()
    check = check_bool("check", check)
    out = check_callable("out", out)
    solutions = root / "solutions"
    if not solutions.is_dir():
        raise FileNotFoundError(f"root: no solutions/ folder under {root}")
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

    check_instance("text", text, str)
    if kernelspec is not None:
        check_instance("kernelspec", kernelspec, dict)
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
    root = check_path("root", root) if root is not None else _default_root()
    check = check_bool("check", check)
    out = check_callable("out", out)
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


