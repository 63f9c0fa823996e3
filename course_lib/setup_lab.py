"""Configure the JupyterLab in this environment for the course. Run by ``make install``.

    python -m course_lib.setup_lab [--classroom] [--show-all-files]

Everything is written inside the environment (``sys.prefix``), so the learner's own
``~/.jupyter`` settings are never touched:

- ``share/jupyter/lab/settings/overrides.json``: Python files open as notebooks (JupyterLab 4
  with jupytext serves ``.py`` files as notebooks but opens them in the text editor unless
  ``defaultViewers`` maps them to "Jupytext Notebook"), Markdown files (the course's START.md)
  open rendered, and no "Jupyter news" toast or update check covers the lessons.
- ``etc/jupyter/jupyter_server_config.json`` (merged, other settings kept; the server reads the
  ``.d`` folders for extensions only): the maintainers' files
  (``course_lib/``, ``tests/``, ``tools/``, build files...) are hidden from the file browser, so
  a learner sees the start page, the lessons, the exercises, the solutions and their workspace.
  The library stays importable and readable (``help()``, ``??``, the website); hidden files still
  open from a link. ``--show-all-files`` lists everything again.
- ``etc/jupyter/labconfig/page_config.json``: nbgrader's instructor tools hidden unless
  ``--classroom``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from course_lib._validate import check_bool, check_path

__all__ = ["overrides_path", "write_overrides", "page_config_path", "write_page_config",
           "server_config_path", "write_server_config", "HIDDEN_FROM_LEARNERS", "main"]

#: JupyterLab extensions hidden from a learner's lab: nbgrader's toolbar, menu and "Create
#: Assignment" panel are for instructors (``--classroom`` keeps them).
INSTRUCTOR_EXTENSIONS = ("@jupyter/nbgrader",)

OVERRIDES = {
    "@jupyterlab/docmanager-extension:plugin": {
        "defaultViewers": {"python": "Jupytext Notebook", "markdown": "Markdown Preview"}
    },
    # The "Would you like to get notified about official Jupyter news?" toast covers plot corners.
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
    # Without the "Modified" column the file browser shows whole lesson names, not "06_tiling_fl...".
    "@jupyterlab/filebrowser-extension:browser": {"showLastModifiedColumn": False},
}

#: Names (globs, matched against each file or folder name) left out of the learner's file
#: browser: the library, its tests and tools, and build and packaging files. jupyter_server's own
#: defaults come first.
HIDDEN_FROM_LEARNERS = (
    "__pycache__", "*.pyc", "*.pyo", ".DS_Store", "*~",
    "course_lib", "tests", "e2e", "tools", "docs", "requirements", "build", "deploy", "*.egg-info",
    "conftest.py", "Makefile", "pyproject.toml", "environment.yml", "postBuild", "LICENSE",
)
SERVER_CONFIG_NAME = "jupyter_server_config.json"


def overrides_path(prefix: str | Path = sys.prefix) -> Path:
    return check_path("prefix", prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"


def _read_json(path: Path) -> dict:
    """The JSON object in ``path`` (its folder made), or {} where there is none or it is unreadable."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError:
        return {}


def write_overrides(prefix: str | Path = sys.prefix) -> Path:
    """Merge the course's settings into ``overrides.json`` under ``prefix``; return its path."""
    path = overrides_path(prefix)
    current = _read_json(path)
    for plugin, settings in OVERRIDES.items():
        current.setdefault(plugin, {}).update(settings)
    path.write_text(json.dumps(current, indent=2) + "\n")
    return path


def page_config_path(prefix: str | Path = sys.prefix) -> Path:
    return check_path("prefix", prefix) / "etc" / "jupyter" / "labconfig" / "page_config.json"


def write_page_config(classroom: bool = False, prefix: str | Path = sys.prefix) -> Path:
    """Hide (or, with ``classroom``, show) the instructor-only lab extensions in this environment."""
    classroom = check_bool("classroom", classroom)
    path = page_config_path(prefix)
    config = _read_json(path)
    disabled = config.setdefault("disabledExtensions", {})
    for name in INSTRUCTOR_EXTENSIONS:
        if classroom:
            disabled.pop(name, None)
        else:
            disabled[name] = True
    path.write_text(json.dumps(config, indent=2) + "\n")
    return path


def server_config_path(prefix: str | Path = sys.prefix) -> Path:
    return check_path("prefix", prefix) / "etc" / "jupyter" / SERVER_CONFIG_NAME


def write_server_config(show_all_files: bool = False, prefix: str | Path = sys.prefix) -> Path:
    """Hide the maintainers' files from the file browser (or, with ``show_all_files``, don't)."""
    show_all_files = check_bool("show_all_files", show_all_files)
    path = server_config_path(prefix)
    config = _read_json(path)
    manager = config.setdefault("ContentsManager", {})
    if show_all_files:
        manager.pop("hide_globs", None)
        if not manager:
            config.pop("ContentsManager")
    else:
        manager["hide_globs"] = list(HIDDEN_FROM_LEARNERS)
    path.write_text(json.dumps(config, indent=2) + "\n")
    return path


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m course_lib.setup_lab",
        description="Configure the JupyterLab of this environment for the course: lessons open as "
                    "notebooks, no news toast, maintainers' files out of the file browser, "
                    "nbgrader's instructor tools hidden. Writes only inside the environment "
                    f"({sys.prefix}).")
    parser.add_argument("--classroom", action="store_true",
                        help="keep nbgrader's instructor tools (menu, Create Assignment panel) visible")
    parser.add_argument("--show-all-files", action="store_true",
                        help="list every file in the file browser, the library and tests included")
    return parser


def main(argv=None) -> None:
    args = _parser().parse_args(sys.argv[1:] if argv is None else list(argv))
    print(f"JupyterLab: lessons open as notebooks, Markdown rendered, no news toast ({write_overrides()})")
    files = "every file listed" if args.show_all_files else \
        "maintainers' files hidden from the file browser (--show-all-files lists them)"
    print(f"JupyterLab: {files} ({write_server_config(args.show_all_files)})")
    state = "shown" if args.classroom else "hidden (run with --classroom to show them)"
    print(f"JupyterLab: nbgrader's instructor tools {state} ({write_page_config(args.classroom)})")


if __name__ == "__main__":
    main()
