"""The examples in the rules library's docstrings run and say what they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import goti.rules

MODULES = [
    "goti.rules",
    *sorted(
        info.name
        for info in pkgutil.iter_modules(goti.rules.__path__, prefix="goti.rules.")
        # In the compiled run, the C of a compiled module lies beside it: no module of ours.
        if not info.name.endswith("__mypyc")
    ),
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    if not (module.__file__ or "").endswith(".py"):
        pytest.skip("compiled by mypyc, which keeps no docstrings: the run on the sources has them")
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failures == 0
