"""``python -m course_lib.exercises ...``: see :mod:`course_lib.exercises.cli`."""

import sys

from course_lib.exercises.cli import main

sys.exit(main())
