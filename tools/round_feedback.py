"""Run every entry of a blind round of wrong answers through its exercise's check.

A round module (``tests/wrong_answers_round_*.py``) holds ``R``, a list of
``(exercise id, mistake, function returning the value)``. For each entry this script computes
the value, calls ``get_exercise(ex).check(value, None)`` with no learner identity (so every
learner gets the course's own numbers) and records whether the check accepted it and the full
feedback message it gave. The result is a JSON list of
``{index, exercise, mistake, value, accepted, message}`` (``index`` is the 0-based position in
``R``), written to ``--out`` or printed.

    python tools/round_feedback.py tests/wrong_answers_round_26e.py --out /tmp/feedback_26e.json
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import traceback
from pathlib import Path

IDENTITY_VARS = ("COURSE_LEARNER_ID", "NBGRADER_STUDENT_ID", "JUPYTERHUB_USER", "NBGRADER_EXECUTION")


def _anonymous_environment() -> str:
    """Drop every learner identity and point COURSE_HOME at a fresh folder; return the folder."""
    for name in IDENTITY_VARS:
        os.environ.pop(name, None)
    home = tempfile.mkdtemp(prefix="round_feedback_")
    os.environ["COURSE_HOME"] = home
    return home


def _load_round(path: Path):
    spec = importlib.util.spec_from_file_location(f"_round_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _jsonable(value):
    """The value as JSON can hold it: numbers, strings, lists; a function by its qualified name."""
    if callable(value):
        return f"<function {getattr(value, '__qualname__', repr(value))}>"
    if isinstance(value, (str, bool)) or value is None:
        return value
    try:
        import numpy as np
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, np.ndarray):
            return value.tolist()
    except ImportError:                                      # pragma: no cover
        pass
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return repr(value)


def run_round(path: Path) -> list[dict]:
    _anonymous_environment()
    repo = Path(__file__).resolve().parents[1]
    if str(repo) not in sys.path:
        sys.path.insert(0, str(repo))
    from course_lib.exercises.feedback import ExerciseError
    from course_lib.exercises.registry import get_exercise

    module = _load_round(path)
    rows = []
    for index, (ex, mistake, make_value) in enumerate(module.R):
        row = {"index": index, "exercise": ex, "mistake": mistake}
        try:
            value = make_value()
        except Exception:                                   # the entry itself failed
            row.update(value=None, accepted=None,
                       message="ENTRY FAILED TO COMPUTE ITS VALUE:\n" + traceback.format_exc())
            rows.append(row)
            continue
        row["value"] = _jsonable(value)
        try:
            get_exercise(ex).check(value, None)
        except ExerciseError as exc:
            row.update(accepted=False, message=str(exc))
        except Exception:                                   # the check crashed on this value
            row.update(accepted=False, message="CHECK RAISED:\n" + traceback.format_exc())
        else:
            row.update(accepted=True, message="")
        rows.append(row)
        print(f"{index:4d} {ex} {'accepted' if row['accepted'] else 'rejected'}", file=sys.stderr, flush=True)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("round", type=Path, help="path of a round module with a list R")
    parser.add_argument("--out", type=Path, default=None, help="JSON file to write (default: stdout)")
    args = parser.parse_args(argv)
    rows = run_round(args.round.resolve())
    text = json.dumps(rows, indent=1, ensure_ascii=False)
    if args.out is None:
        print(text)
    else:
        args.out.write_text(text + "\n")
        print(f"{len(rows)} entries, {sum(1 for r in rows if r['accepted'])} accepted -> {args.out}",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
