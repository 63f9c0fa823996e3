"""The exercise machinery: every exercise, its check, its feedback, and the tools around them.

    from course_lib.exercises import check, hint, variant   # (course_lib.checks re-exports these)
    check("04.1", ridge)        # one line with a mark when right; ExerciseError when wrong
    hint("04.1", 2)             # the second hint
    variant("04.2")             # your own numbers, for an exercise that has variants

The package is built in floors; a module imports only from the floors below it (the import-linter
contract in ``pyproject.toml`` checks it):

=================  ===========================================================================
``cli``            the command line: ``python -m course_lib.exercises ...`` and ``course``
``nbgrader``,      an nbgrader course source; running a workspace's notebooks (``progress``);
``running``,       the mastery map as a figure
``mastery_plot``
``mastery``,       per concept, passed / attempted / not attempted (a learner or a class);
``workspace``      a learner's own copy of the exercises, never overwritten once changed
``registry``,      ``check``, ``hint``, ``variant`` and the lesson modules found by name;
``authoring``      exercises/ generated from solutions/, headers as JupyterLab saves them
``lessons``        one module per lesson, ``ex_NN.py``, each a list ``EXERCISES``, and ``CONCEPTS``
``decision``,      decision and optimum exercises; the misconceptions several lessons share
``misconceptions``
``types``          the kinds: ValueExercise, ChoiceExercise, FunctionExercise, KernelExercise
``feedback``       the errors, Misconception, and the messages a wrong answer gets
``variants``,      per-learner numbers and the learner's identity; the course's files and how
``files``          they are written
=================  ===========================================================================

The lessons' exercise definitions compute every expected answer from the course's compute modules
(below this package); nothing here is imported by them.
"""

from course_lib.exercises.authoring import (Region, SolutionFormatError, find_regions, generate, lab_saved_text,
                                            make_exercise_text, normalize)
from course_lib.exercises.cli import main
from course_lib.exercises.feedback import AnswerTypeError, AnswerValueError, ExerciseError, Misconception
from course_lib.exercises.files import (BEGIN, COURSE_FOLDERS, COURSE_ID, END, LAB_HEADER, LAB_KERNELSPEC, LESSON_PATTERN,
                                        MANIFEST_NAME)
from course_lib.exercises.nbgrader import build_nbgrader
from course_lib.exercises.registry import check, get_exercise, hint, list_exercises, variant
from course_lib.exercises.running import DEFAULT_TIMEOUT_S, CellOutcome, ExerciseStatus, execute_notebook, progress
from course_lib.exercises.types import ChoiceExercise, FunctionExercise, KernelExercise, ValueExercise
from course_lib.exercises.variants import Variant, Variants, learner_identity
from course_lib.exercises.workspace import WorkspaceEntry, content_hash, make_workspace

__all__ = [
    # a learner's calls
    "check", "hint", "variant", "get_exercise", "list_exercises", "learner_identity",
    # the kinds of exercise and their feedback
    "ValueExercise", "ChoiceExercise", "FunctionExercise", "KernelExercise", "Misconception", "Variants",
    "Variant", "ExerciseError", "AnswerTypeError", "AnswerValueError",
    # the maintainers' and instructors' tools
    "BEGIN", "END", "LESSON_PATTERN", "COURSE_ID", "COURSE_FOLDERS", "MANIFEST_NAME", "Region", "SolutionFormatError", "find_regions",
    "make_exercise_text", "generate", "WorkspaceEntry", "make_workspace", "CellOutcome", "execute_notebook",
    "ExerciseStatus", "progress", "DEFAULT_TIMEOUT_S", "build_nbgrader", "LAB_KERNELSPEC", "LAB_HEADER",
    "lab_saved_text", "normalize", "content_hash", "main",
]
