"""Let nbval run jupytext percent-format lessons (``.py``) straight from source.

nbval only collects ``.ipynb``. Here every ``.py`` under notebooks/ and solutions/ is read with
``jupytext.read`` and handed to nbval's own collector, so no ``.ipynb`` is ever written.
exercises/ is tested separately (tests/test_exercises.py): its stubs are meant to raise.
"""

from __future__ import annotations

import types
from pathlib import Path

import jupytext
import nbformat
import pytest

_LESSON_DIRS = {"notebooks", "solutions"}

try:
    from nbval import plugin as _nbval_plugin
except ImportError:  # nbval missing: unit tests still run
    _nbval_plugin = None


def _jupytext_reader():
    """A stand-in for the ``nbformat`` module that reads jupytext sources."""
    shim = types.SimpleNamespace(**{k: getattr(nbformat, k) for k in dir(nbformat) if not k.startswith("__")})
    shim.read = lambda path, as_version=4: jupytext.read(path)
    return shim


if _nbval_plugin is not None:
    class JupytextNbFile(_nbval_plugin.IPyNbFile):
        def collect(self):
            original = _nbval_plugin.nbformat
            _nbval_plugin.nbformat = _jupytext_reader()
            try:
                yield from super().collect()
            finally:
                _nbval_plugin.nbformat = original


def _is_lesson(file_path: Path, config) -> bool:
    return (file_path.suffix == ".py" and file_path.parent.name in _LESSON_DIRS | {"exercises"}
            and file_path.parent.parent == Path(str(config.rootpath)))


class _NotAModule(pytest.File):
    """Placeholder so pytest never imports a lesson named on the command line as a test module."""

    def collect(self):
        return []


def pytest_pycollect_makemodule(module_path: Path, parent):
    if _is_lesson(module_path, parent.config):
        return _NotAModule.from_parent(parent, path=module_path)
    return None


def pytest_collect_file(file_path: Path, parent):
    opt = parent.config.option
    if _nbval_plugin is None or not (opt.nbval or opt.nbval_lax):
        return None
    if _is_lesson(file_path, parent.config) and file_path.parent.name in _LESSON_DIRS:
        return JupytextNbFile.from_parent(parent, path=file_path)
    return None
