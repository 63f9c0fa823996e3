"""The three calls a learner makes, under the name every exercise file imports them by.

    from course_lib.checks import check, hint, variant
    check("04.1", ridge)        # prints one line with a mark when right; raises ExerciseError when wrong
    hint("04.1")                # the first hint; hint("04.1", 2) the next one
    variant("04.2")             # your own numbers, for an exercise that has variants

The machinery lives in :mod:`course_lib.exercises` (see its floors); this module only names its
learner-facing part, so a learner's own copy of an exercise file keeps working whatever moves
inside the package.
"""

from course_lib.exercises.feedback import AnswerTypeError, AnswerValueError, ExerciseError, Misconception
from course_lib.exercises.registry import check, get_exercise, hint, list_exercises, variant
from course_lib.exercises.types import ChoiceExercise, FunctionExercise, KernelExercise, ValueExercise
from course_lib.exercises.variants import Variant, Variants, learner_identity

__all__ = ["check", "hint", "variant", "get_exercise", "list_exercises", "learner_identity", "ExerciseError",
           "AnswerTypeError", "AnswerValueError", "ValueExercise", "ChoiceExercise", "FunctionExercise",
           "KernelExercise", "Misconception", "Variants", "Variant"]
