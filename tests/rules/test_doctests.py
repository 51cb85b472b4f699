"""The examples in the rules library's docstrings run and say what they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import goti.rules

MODULES = [
    "goti.rules",
    *sorted(info.name for info in pkgutil.iter_modules(goti.rules.__path__, prefix="goti.rules.")),
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failures == 0
