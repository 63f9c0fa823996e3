"""Widgets: each connects controls to a compute function and a ``plot_*`` function, nothing more.

Import them from their concept module, e.g. ``from course_lib.widgets.roofline import roofline_explorer``.
"""
