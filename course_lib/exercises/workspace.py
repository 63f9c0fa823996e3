"""A learner's workspace: their own copy of the exercises, never overwritten once they change it.

The manifest (``.course_manifest.json``) records each file's cell content, not its bytes, so a
learner's save without edits still counts as "not changed", and an update of the course refreshes
only the files the learner never touched.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from course_lib._validate import check_callable, check_instance, check_path
from course_lib.exercises.files import MANIFEST_NAME, _default_root, _lesson_files, _sha256, _write_atomic

__all__ = ["WorkspaceEntry", "content_hash", "make_workspace"]


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
    check_instance("data", data, (bytes, bytearray))
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
    root = check_path("root", root) if root is not None else _default_root()
    dest = check_path("dest", dest)
    out = check_callable("out", out)
    if dest.exists() and not dest.is_dir():
        raise NotADirectoryError(f"workspace {str(dest)!r} is a file, not a folder: choose another "
                                 f"name (nothing was written, the file is untouched)")
    sources = _lesson_files(root / "exercises")
    if not sources:
        raise FileNotFoundError(f"root: no exercise files under {root / 'exercises'}: run "
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


