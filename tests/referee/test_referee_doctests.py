"""The examples in the referee's docstrings run and say what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("name", ["goti.referee.actions", "goti.referee.consistency"])
def test_docstring_examples(name: str) -> None:
    failures, tried = doctest.testmod(importlib.import_module(name))
    assert tried > 0
    assert failures == 0
