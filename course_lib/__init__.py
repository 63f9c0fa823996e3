"""course_lib: the tested helper library behind the GPU-for-ML course.

Importing it does nothing global: no styles, no seeds, no downloads. Each concept lives in
its own module (``course_lib.hardware``, ``course_lib.roofline``, ...); compute modules never
import matplotlib, drawing lives in ``course_lib.plots`` and widgets in ``course_lib.widgets``.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
