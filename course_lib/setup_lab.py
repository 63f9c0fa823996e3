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

__all__ = ["overrides_path", "write_overrides", "main"]

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


def main() -> None:
    print(f"JupyterLab: lessons open as notebooks ({write_overrides()})")


if __name__ == "__main__":
    main()
