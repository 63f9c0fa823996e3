"""Exercise checks, one module per lesson: ``ex_NN.py`` defines ``EXERCISES``.

``course_lib.checks`` discovers every ``ex_*.py`` here on first use; nothing is imported
or computed before a learner calls ``check`` or ``hint``.
"""

__all__: list[str] = []
