"""Goti's engine as it stood at commit 4e7c73b (2 December 2026), frozen as a baseline.

A copy of the search (``goti.ai``) and of the rules it stands on (``goti.rules``), with only
the imports rewritten to point inside this package, so that changes to Goti's search, its
evaluation or its rules (a compiled kernel included) never reach it.  It runs behind the
line protocol of ``goti engine``; see README.md.
"""
