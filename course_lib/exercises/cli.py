"""Exercises from one source: generate stubs, hand out a workspace, track progress, build nbgrader.

    python -m course_lib.exercises generate [--check]   exercises/ from solutions/
    python -m course_lib.exercises workspace DIR        copy the exercises into DIR, never
                                                        overwriting a file you changed
    python -m course_lib.exercises progress DIR [--timeout S]  run DIR's exercise notebooks; which pass
    python -m course_lib.exercises nbgrader DIR         an nbgrader course source in DIR
    python -m course_lib.exercises normalize [--check]  headers of notebooks/, exercises/ and
                                                        solutions/ as JupyterLab saves them
    python -m course_lib.exercises mastery DIR [--plot F]      a learner's mastery map (runs progress)
    python -m course_lib.exercises mastery --gradebook DB      a class's, from nbgrader's gradebook

The command line of the exercise machinery (also the ``course`` command). Each subcommand is a
function of the package: ``generate``/``normalize`` (:mod:`~course_lib.exercises.authoring`),
``workspace`` (:mod:`~course_lib.exercises.workspace`), ``progress``
(:mod:`~course_lib.exercises.running`), ``nbgrader`` (:mod:`~course_lib.exercises.nbgrader`) and
``mastery`` (:mod:`~course_lib.exercises.mastery`, drawn by :mod:`~course_lib.exercises.mastery_plot`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from course_lib.exercises.authoring import generate, normalize
from course_lib.exercises.mastery import class_mastery, class_table, concept_mastery, logged_misconceptions
from course_lib.exercises.nbgrader import build_nbgrader
from course_lib.exercises.running import DEFAULT_TIMEOUT_S, progress
from course_lib.exercises.workspace import make_workspace

__all__ = ["main"]


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
    mas = sub.add_parser("mastery", help="the mastery map: per concept, exercises passed / attempted / "
                                         "not attempted (a workspace), or students (--gradebook)")
    mas.add_argument("dir", nargs="?", type=Path, help="a learner's workspace (runs its notebooks)")
    mas.add_argument("--gradebook", type=Path, help="an nbgrader gradebook.db: the class view")
    mas.add_argument("--course-dir", type=Path, default=None,
                     help="the nbgrader course folder with autograded/ (default: the gradebook's)")
    mas.add_argument("--plot", type=Path, default=None, help="also save the figure to this file (.png)")
    return parser


def _mastery(parser, args) -> int:
    """The ``mastery`` subcommand: the table, the misconceptions logged, and the figure on request."""
    if (args.dir is None) == (args.gradebook is None):
        parser.print_usage(sys.stderr)
        print("error: mastery needs a workspace folder or --gradebook PATH (one of them)", file=sys.stderr)
        return 2
    if args.gradebook is not None:
        mastery = class_mastery(args.gradebook, args.course_dir)
        print(class_table(mastery))
        rows, title = mastery.concepts, f"Class mastery ({len(mastery.students)} students)"
    else:
        statuses = progress(args.dir)                 # prints statuses and the concept table
        rows, title = concept_mastery(statuses), "Your mastery map"
        logged = logged_misconceptions()
        if logged:
            print("misconceptions your wrong answers matched (exercise: key, times):")
            for (ex_id, key), times in logged.most_common(10):
                print(f"  {ex_id}: {key}, {times}")
    if args.plot is not None:
        import matplotlib                               # drawing only when a figure is asked for
        matplotlib.use("Agg")
        from course_lib.exercises.mastery_plot import plot_mastery
        plot_mastery(rows, title=title).savefig(args.plot, dpi=150, bbox_inches="tight")
        print(f"wrote {args.plot}")
    return 0


def main(argv=None) -> int:
    """Entry point of ``python -m course_lib.exercises``; returns the exit status."""
    if argv is not None and not (isinstance(argv, (list, tuple)) and all(isinstance(a, str) for a in argv)):
        raise TypeError(f"argv must be None or a list of strings (command-line arguments), got {argv!r:.60}")
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "mastery":
            return _mastery(parser, args)
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
