"""What lesson 10 asks of an install: torch and triton required with lower bounds only (so Colab
keeps the ones it has), pinned in the lock to the pair PyPI's Linux torch resolves, with no CPU
build's local label, and a Colab setup cell that upgrades nothing it finds installed."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))


def _deps():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]


def test_torch_and_triton_are_required_with_lower_bounds_only():
    deps = {re.split(r"[<>=!~; ]", d, maxsplit=1)[0]: d for d in _deps()}
    assert deps["torch"].startswith("torch>=") and "<" not in deps["torch"] and "==" not in deps["torch"]
    triton = deps["triton"]
    assert triton.startswith("triton>=") and "<" not in triton.split(";")[0] and "linux" in triton


def test_the_lock_pins_the_pair_pypi_resolves_without_a_local_label():
    lock = (ROOT / "requirements" / "lock.txt").read_text()
    pins = dict(line.split("==") for line in lock.splitlines() if "==" in line and not line.startswith("#"))
    assert pins["torch"] == "2.13.0" and pins["triton"] == "3.7.1"   # torch 2.13.0's Linux wheel: triton==3.7.1
    assert "+cpu" not in lock


def test_the_colab_setup_cell_upgrades_nothing():
    import build_ipynb
    cell = build_ipynb.SETUP
    assert "pip" in cell and "--upgrade" not in cell and " -U" not in cell and "--force" not in cell
