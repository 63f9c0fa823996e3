"""The floors of course_lib are checked, and the check can fail.

``make lint`` runs import-linter on the contracts in ``pyproject.toml``. These tests run it on a
copy of the library with one deliberately wrong import each, and assert that the contract meant
to catch it is the one that breaks (and that the copy as it is keeps every contract).
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
pytestmark = pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter is not installed")


def _lint(tmp_path, edit=None):
    """Run lint-imports on a copy of course_lib after ``edit(copy_root)``: (exit status, output)."""
    copy = tmp_path / "copy"
    shutil.copytree(REPO / "course_lib", copy / "course_lib",
                    ignore=shutil.ignore_patterns("__pycache__", "*.toml", "*.json"))
    shutil.copy(REPO / "pyproject.toml", copy / "pyproject.toml")
    if edit is not None:
        edit(copy / "course_lib")
    result = subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=copy, capture_output=True, text=True,
                            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(copy)}, timeout=120)
    return result.returncode, result.stdout + result.stderr


def _append(path: Path, line: str):
    path.write_text(path.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")


def test_the_library_as_it_is_keeps_every_contract(tmp_path):
    status, output = _lint(tmp_path)
    assert status == 0, output
    assert "BROKEN" not in output and "0 broken" in output


#: One deliberately wrong import per contract: (module, the line appended, the contract that must
#: break, the import the report must name).
WRONG_IMPORTS = [
    ("roofline.py", "import matplotlib.pyplot", "Compute, the labs and measurement import no drawing",
     "course_lib.roofline -> matplotlib"),
    ("tiling.py", "from course_lib.exercises.registry import check", "The floors:",
     "- course_lib.tiling -> course_lib.exercises.registry"),
    ("hardware.py", "import course_lib.roofline", "No import loop", "No cycles are allowed in course_lib."),
    ("plots/roofline.py", "import ipywidgets", "Drawing imports no widget", "course_lib.plots.roofline -> ipywidgets"),
    ("exercises/feedback.py", "from course_lib.exercises import registry", "The exercise machinery's own floors",
     "- course_lib.exercises.feedback -> course_lib.exercises.registry"),
]


def _report_of(output: str, contract: str) -> str:
    """The part of the 'Broken contracts' report under the heading that starts with ``contract``."""
    report = output.split("Broken contracts", 1)[-1]
    start = report.find(contract)
    assert start >= 0, f"contract {contract!r} not reported broken:\n{output}"
    return report[start:]


def test_each_wrong_import_breaks_the_contract_that_forbids_it(tmp_path):
    def edit(root):
        for module, line, _, _ in WRONG_IMPORTS:
            _append(root / module, line)

    status, output = _lint(tmp_path, edit)
    assert status != 0, output
    assert "Contracts: 0 kept, 5 broken." in output, output
    for _, _, contract, named in WRONG_IMPORTS:
        assert named in _report_of(output, contract), (contract, named, output)
