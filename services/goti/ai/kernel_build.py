"""Which build of the search kernel this process runs: mypyc's compiled modules or the Python
sources.

The wheels compile the kernel with mypyc where they are built with a C compiler, and fall back
to the Python sources elsewhere (``clients/mypyc_build.py``); both play the same moves, the
compiled build searches two to three times as many nodes a second.  The AI service logs
:func:`describe_kernel_build` at start, so that an operator can tell which one a machine got.
"""

from __future__ import annotations

import importlib
import importlib.machinery
from typing import Final

KERNEL_MODULES: Final = (
    "goti.rules.squares",
    "goti.rules.movegen",
    "goti.rules.position",
    "goti.rules.perft",
    "goti.ai.zobrist",
    "goti.ai.evaluation",
    "goti.ai.search",
)
"""The modules the two distributions' ``[tool.goti.mypyc]`` tables compile, the SDK's first
(``tests/ai/test_compiled_kernel.py`` holds the tables to this)."""

COMPILED: Final = "compiled (mypyc)"
PURE_PYTHON: Final = "pure Python"


def compiled_kernel_modules() -> tuple[str, ...]:
    """The kernel modules that this process imports as compiled extensions."""
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    return tuple(
        name
        for name in KERNEL_MODULES
        if (importlib.import_module(name).__file__ or "").endswith(suffixes)
    )


def describe_kernel_build() -> str:
    """``compiled (mypyc)``, ``pure Python``, or which modules are compiled when only some are
    (a compiled server wheel beside a pure-Python SDK wheel, say)."""
    compiled = compiled_kernel_modules()
    if not compiled:
        return PURE_PYTHON
    if len(compiled) == len(KERNEL_MODULES):
        return COMPILED
    return f"partly {COMPILED}: {', '.join(compiled)}; the rest {PURE_PYTHON}"
