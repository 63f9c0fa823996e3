"""Loaded first by ``make test`` (``-p pytest_start``), before the plugins that import nbformat.

jsonschema, under nbformat, imports rfc3987_syntax when it is installed, to check the "iri" string
format; that import compiles 38 grammars and costs about a second in each of the suite's three
processes (the controller and two workers). No notebook schema uses "iri" and the suite never
validates one, so the import is skipped here. Nothing else changes.
"""

import sys

sys.modules.setdefault("rfc3987_syntax", None)
