"""Configure the JupyterLab in this environment so lessons open as notebooks.

JupyterLab 4 with jupytext serves ``.py`` files as notebooks, but opens them in the text editor
unless the document manager's ``defaultViewers`` maps Python files to "Jupytext Notebook".
We write that as an ``overrides.json`` inside the environment (``sys.prefix``), so the
learner's own ``~/.jupyter`` settings are never touched. Run by ``make install``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

__all__ = ["overrides_path", "write_overrides", "page_config_path", "write_page_config", "main"]

#: JupyterLab extensions hidden from a learner's lab: nbgrader's toolbar, menu and "Create
#: Assignment" panel are for instructors (``--classroom`` keeps them).
INSTRUCTOR_EXTENSIONS = ("@jupyter/nbgrader",)

OVERRIDES = {
    "@jupyterlab/docmanager-extension:plugin": {
        "defaultViewers": {"python": "Jupytext Notebook"}
    }
}


def overrides_path(prefix: str | Path = sys.prefix) -> Path:
    return Path(prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"


def write_overrides(prefix: str | Path = sys.prefix) -> Path:
    """Merge the course's settings into ``overrides.json`` under ``prefix``; return its path."""
    path = overrides_path(prefix)
    path.parent.mkdir(parents=True, exist_ok=True)
    current = {}
    if path.exists():
        try:
            current = json.loads(path.read_text())
        except json.JSONDecodeError:
            current = {}
    for plugin, settings in OVERRIDES.items():
        current.setdefault(plugin, {}).update(settings)
    path.write_text(json.dumps(current, indent=2) + "\n")
    return path


def page_config_path(prefix: str | Path = sys.prefix) -> Path:
    return Path(prefix) / "etc" / "jupyter" / "labconfig" / "page_config.json"


def write_page_config(classroom: bool = False, prefix: str | Path = sys.prefix) -> Path:
    """Hide (or, with ``classroom``, show) the instructor-only lab extensions in this environment."""
    path = page_config_path(prefix)
    path.parent.mkdir(parents=True, exist_ok=True)
    config = {}
    if path.exists():
        try:
            config = json.loads(path.read_text())
        except json.JSONDecodeError:
            config = {}
    disabled = config.setdefault("disabledExtensions", {})
    for name in INSTRUCTOR_EXTENSIONS:
        if classroom:
            disabled.pop(name, None)
        else:
            disabled[name] = True
    path.write_text(json.dumps(config, indent=2) + "\n")
    return path


def main(argv=None) -> None:
    args = sys.argv[1:] if argv is None else list(argv)
    unknown = [a for a in args if a != "--classroom"]
    if unknown:
        raise SystemExit(f"setup_lab: unknown argument(s) {unknown}; the only option is --classroom")
    classroom = "--classroom" in args
    print(f"JupyterLab: lessons open as notebooks ({write_overrides()})")
    state = "shown" if classroom else "hidden (run with --classroom to show them)"
    print(f"JupyterLab: nbgrader's instructor tools {state} ({write_page_config(classroom)})")


if __name__ == "__main__":
    main()
